//! Playing a bot yourself: the choice of game, colour and clock
//! (`/bots/{name}/play`), then the game's page (`/play/{id}`), whose board
//! is a form with one button per legal square, so it plays with
//! JavaScript off; `play.js` plays the same page over the JSON API.
//!
//! The person who started a game holds its key in a cookie only
//! `/play/{id}` receives (HttpOnly, SameSite=Strict): another tab of the
//! same browser may move. A signed-in person's game also belongs to their
//! account, so any browser they sign in with may resume or resign it (a
//! move then carries the session's CSRF token); a guest's game is claimed
//! by the account they sign in with when its page is next opened with the
//! key. Nobody else can move, and a move made on an old position is
//! refused ([`arbiter_ladder::people::Refused`]). `/games` lists a
//! signed-in person's games and the bots anyone may play.

use super::forms::FormBody;
use super::{Nav, SiteError, Viewer, render};
use crate::extract::ClientIp;
use crate::server::AppState;
use arbiter_games::{Side, Variant};
use arbiter_ladder::people::{Clock, GameView, Holder, NewGame, Refused};
use askama::Template;
use axum::extract::{Path, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum_extra::extract::CookieJar;
use serde::Deserialize;

/// The name of the cookie that holds game `id`'s key.
pub fn key_cookie(id: i64) -> String {
    format!("arbiter_play_{id}")
}

/// The key of game `id` the request carries, if any.
pub fn key_of(headers: &HeaderMap, id: i64) -> Option<String> {
    CookieJar::from_headers(headers)
        .get(&key_cookie(id))
        .map(|c| c.value().to_owned())
}

#[derive(Template)]
#[template(path = "play_new.html", config = "../../web/askama.toml")]
struct NewGamePage {
    nav: Nav,
    title: String,
    bot: String,
    variants: Vec<(String, String)>,
    clocks: Vec<(&'static str, String)>,
    guest: bool,
    allowed: bool,
}

/// `GET /bots/{name}/play`: the choices.
pub async fn new_game(
    State(state): State<AppState>,
    Path(name): Path<String>,
    viewer: Viewer,
) -> Result<Response, SiteError> {
    let playable = arbiter_ladder::people::playable(&state.core, &name)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("bot {name}")))?;
    // Standard Othello first (the form's default), when the bot plays it.
    let mut variants: Vec<(String, String)> = playable
        .variants
        .iter()
        .map(|v| (v.to_string(), super::view::ladder_title(&v.to_string())))
        .collect();
    variants.sort_by_key(|(value, _)| value != "othello:std");
    let page = NewGamePage {
        nav: viewer.nav("play"),
        title: format!("Play {}", playable.bot),
        variants,
        clocks: Clock::ALL
            .iter()
            .map(|c| match c {
                // An untimed game still may not wait for ever: say how long.
                Clock::Untimed => (
                    c.as_str(),
                    format!(
                        "{} (at most {} a move)",
                        c.label(),
                        duration_words(state.core.people.rules().idle_ms)
                    ),
                ),
                _ => (c.as_str(), c.label().to_owned()),
            })
            .collect(),
        guest: viewer.caller.is_none(),
        allowed: playable.allowed && !playable.variants.is_empty(),
        bot: playable.bot,
    };
    Ok(render(&page))
}

/// The form of `POST /bots/{name}/play`.
#[derive(Deserialize)]
pub struct NewGameForm {
    game: String,
    #[serde(default)]
    side: String,
    #[serde(default)]
    clock: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    random_opening: Option<String>,
}

/// Reads a side choice: `first`, `second`, or anything else for random.
pub fn side_choice(text: &str) -> Option<Side> {
    match text {
        "first" => Some(Side::First),
        "second" => Some(Side::Second),
        _ => None,
    }
}

/// `POST /bots/{name}/play`: starts the game, keeps its key in a cookie,
/// and sends the person to its page.
pub async fn start(
    State(state): State<AppState>,
    Path(name): Path<String>,
    viewer: Viewer,
    ClientIp(address): ClientIp,
    FormBody(form): FormBody<NewGameForm>,
) -> Result<Response, SiteError> {
    let back = format!("/bots/{name}/play");
    let bad = |message: String| SiteError::new(StatusCode::BAD_REQUEST, message).back_to(&back);
    let variant: Variant = form
        .game
        .parse()
        .map_err(|e: arbiter_games::UnknownVariant| bad(e.to_string()))?;
    let clock = if form.clock.is_empty() {
        Clock::Untimed
    } else {
        Clock::parse(&form.clock).ok_or_else(|| bad(format!("unknown clock {:?}: untimed, 5m or 1m", form.clock)))?
    };
    let (person, user_id) = match &viewer.caller {
        Some(caller) => (caller.name.clone(), Some(caller.user_id)),
        // The ladder checks a guest's name and marks it " (guest)".
        None => (form.name.clone(), None),
    };
    // A signed-in person is a client of their own, wherever they play
    // from (a classroom behind one address is many clients); a guest is
    // their address.
    let address = user_id.map_or(address, arbiter_ladder::people::account_client);
    let started = state
        .core
        .people
        .start(
            &state.core,
            NewGame {
                bot: name.clone(),
                variant,
                side: side_choice(&form.side),
                clock,
                person,
                user_id,
                address,
                random_opening: form.random_opening.is_some(),
            },
        )
        .await;
    let started = match started {
        Ok(started) => started,
        Err(arbiter_ladder::error::Error::RateLimited { message, retry_after_s }) => {
            // The page says why, and when to come back.
            let mut response = SiteError::new(StatusCode::TOO_MANY_REQUESTS, message)
                .back_to(&back)
                .into_response();
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, retry_after_s.max(1).into());
            return Ok(response);
        }
        Err(error) => return Err(SiteError::from(error).back_to(&back)),
    };
    let cookie = HeaderValue::from_str(&format!(
        "{}={}; Path=/play/{}; HttpOnly; SameSite=Strict; Max-Age=86400{}",
        key_cookie(started.id),
        started.key,
        started.id,
        if state.config.secure_cookies { "; Secure" } else { "" }
    ))
    .map_err(|_| {
        SiteError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the game's key could not be handed over",
        )
    })?;
    Ok(([(SET_COOKIE, cookie)], Redirect::to(&format!("/play/{}", started.id))).into_response())
}

#[derive(Template)]
#[template(path = "play.html", config = "../../web/askama.toml")]
struct GamePage {
    nav: Nav,
    title: String,
    game: GameView,
    mine: bool,
    my_turn: bool,
    /// The per-move limit in words ("15 minutes").
    move_limit: String,
    /// The game's name (`Othello · standard`).
    game_title: String,
    /// The moves, squares in words.
    move_words: Vec<String>,
    /// The games' catalogue for the replay viewer (othello.js).
    games_json: String,
    othello: bool,
    error: Option<String>,
    status_line: String,
    cells: Vec<Vec<Cell>>,
    /// The board's column names (`a`…, or `0`…`2`).
    columns: Vec<String>,
    /// Its row names, top first (`1`…, or `0`…`2`).
    row_labels: Vec<String>,
}

/// One square of the page's board.
struct Cell {
    name: String,
    /// Its name in words (`d3`, `top middle`).
    words: String,
    mark: &'static str,
    /// A button: the person's legal square on their turn.
    legal: bool,
}

/// The games' catalogue as the replay viewer reads it from the page
/// (`<script id="arbiter-games">`, as on match pages): each Othello mode's
/// board, so a finished game's replay is drawn on the right board.
fn catalogue_json() -> String {
    serde_json::to_string(&arbiter_games::catalogue())
        .unwrap_or_else(|_| "[]".into())
        .replace("</", "<\\/")
}

/// A duration in words: `15 minutes`, `1 minute`, `40 seconds`.
pub fn duration_words(ms: u64) -> String {
    let seconds = ms.div_ceil(1000);
    match seconds {
        s if s >= 60 && s % 60 == 0 => format!("{} minute{}", s / 60, if s == 60 { "" } else { "s" }),
        s if s >= 60 => format!("{}:{:02} minutes", s / 60, s % 60),
        1 => "1 second".to_owned(),
        s => format!("{s} seconds"),
    }
}

/// What the page says the game is at, in words, to its person (`mine`) or
/// to anyone else watching (who is never told "Your move").
pub fn status_line(game: &GameView, mine: bool) -> String {
    let clock = match (game.clock_left_ms, game.move_left_ms) {
        (Some(ms), _) => format!(
            " {} clock: {}:{:02}.",
            if mine { "Your" } else { "Their" },
            ms / 60_000,
            (ms / 1000) % 60
        ),
        // Untimed, but a move may not wait for ever: say how long it may.
        (None, Some(left)) => format!(
            " Untimed, but each move must come within {} ({}:{:02} left for this one).",
            duration_words(game.move_limit_ms),
            left / 60_000,
            (left / 1000) % 60
        ),
        (None, None) => String::new(),
    };
    let person = if mine { "You".to_owned() } else { game.person.clone() };
    match (game.status, game.result, game.to_move) {
        ("aborted", _, _) => "Aborted.".to_owned(),
        (_, Some("person"), _) => format!("{person} won ({}).", reason_words(game)),
        (_, Some("bot"), _) => format!("{} won ({}).", game.bot, reason_words(game)),
        (_, Some(_), _) => format!("A draw ({}).", reason_words(game)),
        (_, None, Some("person")) if game.legal.is_empty() => {
            // The person's turn is not open yet (the bot's module loading at
            // the start, or its answer being taken in).
            if game.moves.is_empty() {
                "Starting…".to_owned()
            } else {
                format!("{} is thinking…", game.bot)
            }
        }
        (_, None, Some("person")) => {
            // Said politely to a screen reader: what the bot just played.
            let played = match game.moves.last().map(String::as_str) {
                Some("--") => format!("{} passed. ", game.bot),
                Some(square) => format!("{} played {}. ", game.bot, square_words(&game.variant, square)),
                None => String::new(),
            };
            if mine {
                format!("{played}Your move ({}).{clock}", game.person_colour)
            } else {
                format!("{played}{}'s move ({}).{clock}", game.person, game.person_colour)
            }
        }
        (_, None, Some(_)) => format!("{} is thinking…", game.bot),
        // Over on the board, the result being written.
        _ if !game.moves.is_empty() => "The game is over: writing down the result…".to_owned(),
        _ => "Starting…".to_owned(),
    }
}

/// A square as people name it: Othello's `d3` as it is, tic-tac-toe's
/// `0-1` (row-column) as `top middle`.
pub fn square_words(variant: &str, square: &str) -> String {
    if !variant.starts_with("tictactoe") {
        return square.to_owned();
    }
    let mut parts = square.split('-').map(str::parse::<usize>);
    match (parts.next(), parts.next()) {
        (Some(Ok(row)), Some(Ok(column))) if row < 3 && column < 3 => {
            let rows = ["top", "middle", "bottom"];
            let columns = ["left", "middle", "right"];
            if row == 1 && column == 1 {
                "centre".to_owned()
            } else {
                format!("{} {}", rows[row], columns[column])
            }
        }
        _ => square.to_owned(),
    }
}

fn reason_words(game: &GameView) -> String {
    match game.reason.as_deref() {
        Some("line") => "three in a row".to_owned(),
        Some("draw") => "a full grid".to_owned(),
        Some("discs") => format!("{}–{} discs", game.counts[0], game.counts[1]),
        Some("timeout") => "on time".to_owned(),
        Some("resigned") => "resigned".to_owned(),
        Some(other) => other.replace('_', " "),
        None => String::new(),
    }
}

/// Who the request is, for game `id`: the key its cookie holds and the
/// signed-in account. A guest's game whose key comes with a signed-in
/// session is claimed for the account first.
async fn holder(state: &AppState, id: i64, viewer: &Viewer, headers: &HeaderMap) -> Holder {
    let key = key_of(headers, id);
    let user_id = viewer.user_id();
    if let (Some(key), Some(user)) = (&key, user_id)
        && let Err(error) = state.core.people.claim(&state.core, id, key, user).await
    {
        tracing::warn!(id, %error, "cannot claim a game for its person's account");
    }
    Holder { key, user_id }
}

async fn game_page(
    state: &AppState,
    id: i64,
    viewer: &Viewer,
    headers: &HeaderMap,
    error: Option<String>,
) -> Result<Response, SiteError> {
    let who = holder(state, id, viewer, headers).await;
    let game = state
        .core
        .people
        .view(&state.core, id)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("game {id}")))?;
    let mine = state.core.people.belongs(&state.core, id, &who).await?;
    let my_turn = mine && game.to_move == Some("person") && !game.legal.is_empty();
    let cells = game
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|square| Cell {
                    words: square_words(&game.variant, &square.name),
                    name: square.name.clone(),
                    mark: square.mark,
                    legal: my_turn && game.legal.contains(&square.name),
                })
                .collect()
        })
        .collect();
    let size = game.rows.len();
    let othello = game.variant.starts_with("othello");
    let (columns, row_labels): (Vec<String>, Vec<String>) = if othello {
        (
            (0..size).map(|c| char::from(b'a' + c as u8).to_string()).collect(),
            (1..=size).map(|r| r.to_string()).collect(),
        )
    } else {
        (
            (0..size).map(|c| c.to_string()).collect(),
            (0..size).map(|r| r.to_string()).collect(),
        )
    };
    let page = GamePage {
        cells,
        columns,
        row_labels,
        nav: viewer.nav("play"),
        title: format!("{} against {}", game.person, game.bot),
        othello,
        status_line: status_line(&game, mine),
        move_limit: duration_words(game.move_limit_ms),
        game_title: super::view::ladder_title(&game.variant),
        move_words: game.moves.iter().map(|m| square_words(&game.variant, m)).collect(),
        games_json: catalogue_json(),
        mine,
        my_turn,
        error,
        game,
    };
    let mut response = render(&page);
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `GET /play/{id}`: the game.
pub async fn page(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    viewer: Viewer,
    headers: HeaderMap,
) -> Result<Response, SiteError> {
    game_page(&state, id, &viewer, &headers, None).await
}

/// The form of `POST /play/{id}`.
#[derive(Deserialize)]
pub struct MoveForm {
    #[serde(default)]
    revision: String,
    #[serde(default)]
    square: String,
    #[serde(default)]
    resign: Option<String>,
    /// The session's CSRF token: a move made through the account (not the
    /// browser's key) needs it.
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /play/{id}`: a move (or a resignation) from the board's form,
/// then back to the game (a refused move shows why, with status 409).
pub async fn play_move(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    viewer: Viewer,
    headers: HeaderMap,
    FormBody(form): FormBody<MoveForm>,
) -> Result<Response, SiteError> {
    let mut who = holder(&state, id, &viewer, &headers).await;
    // The account counts only with the session's CSRF token (the form's
    // field, or the header play.js sends): another site cannot move for a
    // signed-in person.
    let sent = form.csrf.as_deref().or_else(|| {
        headers
            .get(arbiter_ladder::auth::CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
    });
    if viewer
        .caller
        .as_ref()
        .is_none_or(|caller| caller.check_csrf(sent).is_err())
    {
        who.user_id = None;
    }
    let people = &state.core.people;
    let outcome = if form.resign.is_some() {
        people.resign(&state.core, id, &who).await
    } else {
        match form.revision.trim().parse::<u32>() {
            Ok(revision) => people
                .play_move(&state.core, id, &who, revision, &form.square)
                .await
                .map(drop),
            Err(_) => Err(Refused::StaleRevision(0)),
        }
    };
    let wants_json = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"));
    if wants_json {
        // The page's script: the answer in JSON, then it reads the state.
        return Ok(match outcome {
            Ok(()) => axum::Json(serde_json::json!({ "ok": true })).into_response(),
            Err(refused) => {
                let status = refused_status(&refused);
                let body = serde_json::json!({ "error": refused.code(), "message": refused_words(&refused) });
                let mut response = (status, axum::Json(body)).into_response();
                retry_soon(&mut response, &refused);
                response
            }
        });
    }
    match outcome {
        Ok(()) => {
            // Give a bot that answers at once the time to do so, so the page
            // the person lands on already shows its move.
            if let Some(mut changes) = people.watch(id) {
                let _ = tokio::time::timeout(std::time::Duration::from_millis(1500), async {
                    // Subscribed before this look: an answer that came first
                    // is seen here, a later one wakes the wait.
                    while let Ok(Some(game)) = people.view(&state.core, id).await
                        && game.to_move == Some("bot")
                    {
                        if changes.changed().await.is_err() {
                            return;
                        }
                    }
                })
                .await;
            }
            Ok(Redirect::to(&format!("/play/{id}")).into_response())
        }
        Err(Refused::NoGame(_)) => Err(SiteError::not_found(format!("game {id}"))),
        Err(refused) => {
            let status = refused_status(&refused);
            let mut response = game_page(&state, id, &viewer, &headers, Some(refused_words(&refused))).await?;
            *response.status_mut() = status;
            retry_soon(&mut response, &refused);
            Ok(response)
        }
    }
}

/// The status a refusal answers with: 404 for no game, 403 for someone
/// else's, 503 while the game cannot take a move in this process (a
/// restart), 409 for a move the game cannot take now.
fn refused_status(refused: &Refused) -> StatusCode {
    match refused {
        Refused::NoGame(_) => StatusCode::NOT_FOUND,
        Refused::NotYourGame => StatusCode::FORBIDDEN,
        Refused::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::CONFLICT,
    }
}

/// A move refused while the game waits for its next process (a restart)
/// says when to try again: in a second.
fn retry_soon(response: &mut Response, refused: &Refused) {
    if matches!(refused, Refused::Unavailable(_)) {
        response
            .headers_mut()
            .insert(axum::http::header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
}

/// A refusal in words for the page.
pub fn refused_words(refused: &Refused) -> String {
    match refused {
        Refused::StaleRevision(_) => "That move was made on an earlier position (a second click or another tab): \
                                      nothing changed. Here is the game as it stands."
            .to_owned(),
        Refused::NotYourTurn => "It is not your turn: nothing changed.".to_owned(),
        Refused::IllegalMove(square) => format!("{square} is not a legal square now: nothing changed."),
        Refused::Over => "The game is over.".to_owned(),
        Refused::NotYourGame => "Only the person playing this game can move in it.".to_owned(),
        Refused::NoGame(id) => format!("There is no game {id}."),
        Refused::Unavailable(why) => format!("Nothing changed: {why}."),
    }
}

/// `GET /play/{id}/replay.json`: the replay of an ended game.
pub async fn replay(State(state): State<AppState>, Path(id): Path<i64>) -> Result<Response, SiteError> {
    let json = arbiter_ladder::people::replay(&state.core, id)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("a replay of game {id}")))?;
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (
                CONTENT_DISPOSITION,
                HeaderValue::from_str(&format!("attachment; filename=\"people-{id}.json\""))
                    .unwrap_or_else(|_| HeaderValue::from_static("attachment")),
            ),
        ],
        json,
    )
        .into_response())
}

/// The query of `GET /play/{id}/state`.
#[derive(Deserialize)]
pub struct StateQuery {
    /// Answer once the game's change counter (`seq`) differs from this
    /// (or after 20 s).
    after: Option<u64>,
}

/// What `GET /play/{id}/state` answers: the game, whether the caller is
/// its person, the status line the page shows, and the game's change
/// counter (it moves on every change, also the start of the person's turn,
/// which leaves the revision as it is).
#[derive(serde::Serialize)]
struct StateAnswer {
    #[serde(flatten)]
    game: GameView,
    mine: bool,
    status_line: String,
    /// The moves, squares in words (`d3`, `top middle`).
    move_words: Vec<String>,
    seq: u64,
}

/// `GET /play/{id}/state[?after=SEQ]`: the game as JSON for the page's
/// script; with `after`, waits (at most 20 s) until the game has changed
/// since the answer that gave that `seq`.
pub async fn state(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    ClientIp(client): ClientIp,
    viewer: Viewer,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<StateQuery>,
) -> Result<Response, crate::error::ApiError> {
    let people = &state.core.people;
    // A signed-in person's waits are counted under the account (a
    // classroom behind one address is many clients), a guest's under the
    // address.
    let client = viewer.user_id().map_or(client, arbiter_ladder::people::account_client);
    let changes = people.watch(id);
    if let (Some(after), Some(mut changes)) = (query.after, changes.clone()) {
        // A wait holds one of the client's few places while it lasts.
        let _place = people.wait_place(&client).map_err(crate::error::ApiError)?;
        let _ = tokio::time::timeout(std::time::Duration::from_secs(20), async {
            while *changes.borrow_and_update() == after {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }
    // Read before the game: a change after it is seen at the next wait.
    let seq = changes.map_or(0, |changes| *changes.borrow());
    let game = people
        .view(&state.core, id)
        .await?
        .ok_or_else(|| crate::error::ApiError(arbiter_ladder::error::Error::not_found(format!("game {id}"))))?;
    let who = holder(&state, id, &viewer, &headers).await;
    let mine = people.belongs(&state.core, id, &who).await?;
    let status_line = status_line(&game, mine);
    let move_words = game.moves.iter().map(|m| square_words(&game.variant, m)).collect();
    let mut response = axum::Json(StateAnswer {
        game,
        mine,
        status_line,
        move_words,
        seq,
    })
    .into_response();
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `GET /play/{id}/log`: what the bot wrote to stderr in game `id`, for
/// the bot's owner only (404 to anyone else, as if there were none).
pub async fn log(State(state): State<AppState>, Path(id): Path<i64>, viewer: Viewer) -> Result<Response, SiteError> {
    let missing = || SiteError::not_found(format!("a log of game {id} for you"));
    let user = viewer.user_id().ok_or_else(missing)?;
    let stderr = arbiter_ladder::people::stderr_for_owner(&state.core, id, user)
        .await?
        .ok_or_else(missing)?;
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8")),
            (CACHE_CONTROL, HeaderValue::from_static("private, no-store")),
        ],
        stderr,
    )
        .into_response())
}

#[derive(Template)]
#[template(path = "games.html", config = "../../web/askama.toml")]
struct GamesPage {
    nav: Nav,
    title: String,
    signed_in: bool,
    running: Vec<GameLine>,
    ended: Vec<GameLine>,
    bots: Vec<BotLine>,
}

/// One of the person's games, as `/games` lists it.
struct GameLine {
    id: i64,
    bot: String,
    game: String,
    result: String,
    when: super::view::When,
}

/// A bot to play, as `/games` lists it.
struct BotLine {
    bot: String,
    games: String,
}

/// The games a bot plays, in short: `Tic-tac-toe`, `Othello, 5 modes`.
fn games_in_short(variants: &[String]) -> String {
    let mut games: Vec<(String, usize)> = Vec::new();
    for variant in variants {
        let title = variant
            .parse::<Variant>()
            .map_or_else(|_| variant.clone(), |v| v.title().to_owned());
        match games.iter_mut().find(|(t, _)| *t == title) {
            Some((_, modes)) => *modes += 1,
            None => games.push((title, 1)),
        }
    }
    games
        .into_iter()
        .map(|(title, modes)| {
            if modes > 1 {
                format!("{title}, {modes} modes")
            } else {
                title
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The games of a signed-in person that `/games` lists.
const GAMES_LISTED: i64 = 100;

/// `GET /games`: the signed-in person's games against bots (running first,
/// then ended, newest first) and the bots anyone may play.
pub async fn games(State(state): State<AppState>, viewer: Viewer) -> Result<Response, SiteError> {
    use arbiter_ladder::people::{Whose, list, playable_bots};
    let rows = match viewer.user_id() {
        Some(user) => list(&state.core.db, Whose::Account(user), GAMES_LISTED).await?,
        None => Vec::new(),
    };
    let (mut running, mut ended) = (Vec::new(), Vec::new());
    for row in rows {
        let result = match (row.status.as_str(), row.winner.as_deref()) {
            ("running", _) => "being played".to_owned(),
            ("aborted", _) => "aborted".to_owned(),
            (_, Some("person")) => "you won".to_owned(),
            (_, Some("bot")) => format!("{} won", row.bot),
            _ => "a draw".to_owned(),
        };
        let line = GameLine {
            id: row.id,
            game: super::view::ladder_title(&row.variant),
            result,
            when: super::view::When::at(row.created_ms),
            bot: row.bot,
        };
        if row.status == "running" {
            running.push(line);
        } else {
            ended.push(line);
        }
    }
    let bots = playable_bots(&state.core)
        .await?
        .into_iter()
        .map(|bot| BotLine {
            games: games_in_short(&bot.variants),
            bot: bot.bot,
        })
        .collect();
    let page = GamesPage {
        nav: viewer.nav("games"),
        title: if viewer.caller.is_some() {
            "My games".to_owned()
        } else {
            "Play a bot".to_owned()
        },
        signed_in: viewer.caller.is_some(),
        running,
        ended,
        bots,
    };
    let mut response = render(&page);
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("private, no-store"));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A running game of tic-tac-toe at `moves`, to move: `to_move`.
    fn game(moves: &[&str], to_move: Option<&'static str>, legal: &[&str], clock_left_ms: Option<u64>) -> GameView {
        GameView {
            id: 1,
            bot: "tictactoe-random".to_owned(),
            variant: "tictactoe:standard".to_owned(),
            person: "Ann".to_owned(),
            person_colour: "X",
            bot_colour: "O",
            person_first: true,
            clock: if clock_left_ms.is_some() { "5m" } else { "untimed" }.to_owned(),
            status: "running",
            revision: moves.len() as u32,
            to_move,
            rows: Vec::new(),
            legal: legal.iter().map(|s| (*s).to_owned()).collect(),
            counts: [0, 0],
            clock_left_ms,
            move_limit_ms: 15 * 60_000,
            move_left_ms: (!legal.is_empty()).then_some(14 * 60_000 + 30_000),
            moves: moves.iter().map(|s| (*s).to_owned()).collect(),
            result: None,
            reason: None,
            notice: None,
        }
    }

    #[test]
    fn only_the_person_is_told_it_is_their_move() {
        let turn = game(&["0-0", "1-1"], Some("person"), &["0-1"], None);
        assert_eq!(
            status_line(&turn, true),
            "tictactoe-random played centre. Your move (X). Untimed, but each move must come within 15 minutes \
             (14:30 left for this one)."
        );
        let watched = status_line(&turn, false);
        assert!(!watched.contains("Your"), "{watched}");
        assert!(
            watched.starts_with("tictactoe-random played centre. Ann's move (X)."),
            "{watched}"
        );
        let timed = game(&[], Some("person"), &["0-1"], Some(61_000));
        assert_eq!(status_line(&timed, true), "Your move (X). Your clock: 1:01.");
        assert_eq!(status_line(&timed, false), "Ann's move (X). Their clock: 1:01.");
    }

    #[test]
    fn a_game_between_turns_or_over_on_the_board_is_never_starting() {
        // The bot's answer being taken in: the person's turn is not open.
        let between = game(&["0-0"], Some("person"), &[], None);
        assert_eq!(status_line(&between, true), "tictactoe-random is thinking…");
        // Over on the board, the result not yet written.
        let over = game(&["0-0", "1-1", "0-1", "2-2", "0-2"], None, &[], None);
        assert_eq!(status_line(&over, true), "The game is over: writing down the result…");
        let fresh = game(&[], Some("person"), &[], None);
        assert_eq!(status_line(&fresh, true), "Starting…");
        let mut won = over.clone();
        won.status = "finished";
        won.result = Some("person");
        won.reason = Some("line".to_owned());
        assert_eq!(status_line(&won, true), "You won (three in a row).");
        assert_eq!(status_line(&won, false), "Ann won (three in a row).");
    }

    #[test]
    fn a_bots_games_in_short() {
        let othello: Vec<String> = ["othello:anti", "othello:std"].map(str::to_owned).to_vec();
        assert_eq!(games_in_short(&othello), "Othello, 2 modes");
        let both: Vec<String> = ["othello:std", "tictactoe:standard"].map(str::to_owned).to_vec();
        assert_eq!(games_in_short(&both), "Othello; Tic-tac-toe");
    }

    #[test]
    fn tictactoe_squares_are_named_in_words() {
        assert_eq!(square_words("tictactoe:standard", "0-1"), "top middle");
        assert_eq!(square_words("tictactoe:standard", "1-1"), "centre");
        assert_eq!(square_words("tictactoe:standard", "2-0"), "bottom left");
        assert_eq!(square_words("othello:std", "d3"), "d3");
        assert_eq!(duration_words(15 * 60_000), "15 minutes");
        assert_eq!(duration_words(60_000), "1 minute");
        assert_eq!(duration_words(90_000), "1:30 minutes");
        assert_eq!(duration_words(1_000), "1 second");
    }
}
