//! Playing a bot yourself: the choice of game, colour and clock
//! (`/bots/{name}/play`), then the game's page (`/play/{id}`), whose board
//! is a form with one button per legal square, so it plays with
//! JavaScript off; `play.js` plays the same page over the JSON API.
//!
//! The person who started a game holds its key in a cookie only
//! `/play/{id}` receives (HttpOnly, SameSite=Strict): another tab of the
//! same browser may move, nobody else can, and a move made on an old
//! position is refused ([`arbiter_ladder::people::Refused`]).

use super::forms::FormBody;
use super::{Nav, SiteError, Viewer, render};
use crate::extract::ClientIp;
use crate::server::AppState;
use arbiter_games::{Side, Variant};
use arbiter_ladder::people::{Clock, GameView, NewGame, Refused};
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
    clocks: Vec<(&'static str, &'static str)>,
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
    let page = NewGamePage {
        nav: viewer.nav("ladders"),
        title: format!("Play {}", playable.bot),
        variants: playable
            .variants
            .iter()
            .map(|v| (v.to_string(), super::view::ladder_title(&v.to_string())))
            .collect(),
        clocks: Clock::ALL.iter().map(|c| (c.as_str(), c.label())).collect(),
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
    mark: &'static str,
    /// A button: the person's legal square on their turn.
    legal: bool,
}

/// What the page says the game is at, in words.
pub fn status_line(game: &GameView) -> String {
    let clock = game
        .clock_left_ms
        .map(|ms| format!(" Your clock: {}:{:02}.", ms / 60_000, (ms / 1000) % 60))
        .unwrap_or_default();
    match (game.status, game.result, game.to_move) {
        ("aborted", _, _) => "Aborted.".to_owned(),
        (_, Some("person"), _) => format!("You won ({}).", reason_words(game)),
        (_, Some("bot"), _) => format!("{} won ({}).", game.bot, reason_words(game)),
        (_, Some(_), _) => format!("A draw ({}).", reason_words(game)),
        (_, None, Some("person")) => {
            // Said politely to a screen reader: what the bot just played.
            let played = match game.moves.last().map(String::as_str) {
                Some("--") => format!("{} passed. ", game.bot),
                Some(square) => format!("{} played {square}. ", game.bot),
                None => String::new(),
            };
            format!("{played}Your move ({}).{clock}", game.person_colour)
        }
        (_, None, Some(_)) => format!("{} is thinking…{clock}", game.bot),
        _ => "Starting…".to_owned(),
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

async fn game_page(
    state: &AppState,
    id: i64,
    viewer: &Viewer,
    headers: &HeaderMap,
    error: Option<String>,
) -> Result<Response, SiteError> {
    let game = state
        .core
        .people
        .view(&state.core, id)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("game {id}")))?;
    let mine = key_of(headers, id).is_some_and(|key| state.core.people.is_person(id, &key));
    let my_turn = mine && game.to_move == Some("person") && !game.legal.is_empty();
    let cells = game
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|square| Cell {
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
        nav: viewer.nav("ladders"),
        title: format!("{} against {}", game.person, game.bot),
        othello,
        status_line: status_line(&game),
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
    let key = key_of(&headers, id).unwrap_or_default();
    let people = &state.core.people;
    let outcome = if form.resign.is_some() {
        people.resign(id, &key)
    } else {
        match form.revision.trim().parse::<u32>() {
            Ok(revision) => people.play_move(id, &key, revision, &form.square).map(drop),
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
                (status, axum::Json(body)).into_response()
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
            Ok(response)
        }
    }
}

/// The status a refusal answers with: 404 for no game, 403 for someone
/// else's, 409 for a move the game cannot take now.
fn refused_status(refused: &Refused) -> StatusCode {
    match refused {
        Refused::NoGame(_) => StatusCode::NOT_FOUND,
        Refused::NotYourGame => StatusCode::FORBIDDEN,
        _ => StatusCode::CONFLICT,
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
    seq: u64,
}

/// `GET /play/{id}/state[?after=SEQ]`: the game as JSON for the page's
/// script; with `after`, waits (at most 20 s) until the game has changed
/// since the answer that gave that `seq`.
pub async fn state(
    State(state): State<AppState>,
    Path(id): Path<i64>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    axum::extract::Query(query): axum::extract::Query<StateQuery>,
) -> Result<Response, crate::error::ApiError> {
    let people = &state.core.people;
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
    let mine = key_of(&headers, id).is_some_and(|key| people.is_person(id, &key));
    let status_line = status_line(&game);
    let mut response = axum::Json(StateAnswer {
        game,
        mine,
        status_line,
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
