//! The site's own form posts, so every form works with JavaScript off:
//! each takes an ordinary form body, calls the same ladder step as the JSON
//! API, and answers `303 See Other` to the page that shows the result (or
//! the page again, with the error, when it failed).
//!
//! | form | posts to | then |
//! |---|---|---|
//! | sign up, sign in | `POST /signup`, `POST /signin` | the `next` page, signed in |
//! | sign out | `POST /signout` | `/` |
//! | new API token | `POST /account/token` | `/account`, showing it once |
//! | change password | `POST /account/password` | `/account?saved=password`, with a new session |
//! | delete account | `POST /account/delete` | `/?saved=deleted`, signed out |
//! | retire, un-retire a bot | `POST /bots/{name}/retire`, `/unretire` | the bot's page, `?saved=retired` / `unretired` |
//! | bot profile | `POST /bots/{name}/profile` | the bot's page, `?saved=profile` |
//! | upload | `POST /upload` (multipart) | the bot's page, version `checking` |
//! | challenge | `POST /challenge` | the match's page |
//! | tournament | `POST /tournaments` | the tournament's page |
//!
//! A page reached with `?saved=KEY` shows a fixed confirmation at its top
//! (`role=status`), so every save is confirmed without JavaScript.
//!
//! A refused upload or challenge shows its form again (same URL, the
//! error's status) with the message and what was sent, rather than a bare
//! error page.
//!
//! CSRF: a signed-in form carries the session's token in a hidden `csrf`
//! field. The sign-up and sign-in forms come before any session, so their
//! `csrf` field must equal a random [`FormToken`] the page set as a
//! `SameSite=Strict` cookie (a double-submit token). On top of both, the
//! application refuses unsafe requests a browser marks as cross-site.

use super::account::{AccountForm, account_page, challenge_page, sign_in_first, sign_page, upload_page};
use super::bots::{ProfileDraft, bot_page};
use super::{SiteError, SiteResult, Viewer};
use crate::error::ApiError;
use crate::extract::{ClientIp, SessionCookie, session_secret};
use crate::server::AppState;
use crate::upload_form::{UploadForm, read_upload};
use arbiter_ladder::accounts::{self, Credentials};
use arbiter_ladder::auth::{self, Caller, end_session, issue_api_token, same_secret};
use arbiter_ladder::challenges::{self, ChallengeRequest};
use arbiter_ladder::error::Error;
use arbiter_ladder::profile::{self, MAX_PHOTO_BYTES};
use arbiter_ladder::tournaments::{self, TournamentRequest};
use arbiter_ladder::uploads;
use axum::extract::rejection::FormRejection;
use axum::extract::{FromRequest, FromRequestParts, Multipart, Path, Request, State};
use axum::http::header::{CACHE_CONTROL, RETRY_AFTER, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, IntoResponseParts, Redirect, Response, ResponseParts};
use axum_extra::extract::CookieJar;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::convert::Infallible;

/// The cookie that holds the sign-in and sign-up forms' token.
pub const FORM_COOKIE: &str = "arbiter_form";

/// How long a form token lives, in seconds.
const FORM_TOKEN_SECONDS: u64 = 24 * 60 * 60;

/// The double-submit token of the forms that come before a session: the
/// browser's `arbiter_form` cookie, or a new one (then set by the page that
/// shows the form).
#[derive(Clone, Debug)]
pub struct FormToken {
    value: String,
    /// Set-Cookie this answer must carry (`Secure` when the site is HTTPS).
    set: Option<bool>,
}

impl FormToken {
    /// The token, for the form's hidden `csrf` field.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether a posted form's `csrf` field proves it came from a page this
    /// browser got: it equals the token of the browser's cookie (a token
    /// made just now, without a cookie, proves nothing).
    fn sent_back(&self, csrf: Option<&str>) -> bool {
        self.set.is_none() && csrf.is_some_and(|sent| same_secret(&self.value, sent))
    }
}

impl FromRequestParts<AppState> for FormToken {
    type Rejection = SiteError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<FormToken, SiteError> {
        if let Some(value) = form_cookie(&parts.headers) {
            return Ok(FormToken { value, set: None });
        }
        Ok(FormToken {
            value: auth::new_secret()?,
            set: Some(state.config.secure_cookies),
        })
    }
}

impl IntoResponseParts for FormToken {
    type Error = Infallible;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, Infallible> {
        if let Some(secure) = self.set {
            let secure = if secure { "; Secure" } else { "" };
            let cookie = format!(
                "{FORM_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={FORM_TOKEN_SECONDS}{secure}",
                self.value
            );
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                parts.headers_mut().append(SET_COOKIE, value);
            }
        }
        Ok(parts)
    }
}

/// The `arbiter_form` cookie's value, if the request has one.
fn form_cookie(headers: &HeaderMap) -> Option<String> {
    CookieJar::from_headers(headers)
        .get(FORM_COOKIE)
        .map(|cookie| cookie.value().to_owned())
        .filter(|value| !value.is_empty())
}

/// An `application/x-www-form-urlencoded` body whose refusal is an HTML
/// error page (400, or 413 over the body limit) saying what was wrong.
pub struct FormBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for FormBody<T> {
    type Rejection = SiteError;

    async fn from_request(request: Request, state: &S) -> Result<FormBody<T>, SiteError> {
        match axum::Form::<T>::from_request(request, state).await {
            Ok(axum::Form(value)) => Ok(FormBody(value)),
            Err(rejection) => Err(form_rejection(&rejection)),
        }
    }
}

fn form_rejection(rejection: &FormRejection) -> SiteError {
    let status = rejection.status();
    let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
        "the form is larger than this site accepts".to_owned()
    } else {
        format!("the form could not be read: {}", rejection.body_text())
    };
    SiteError::new(status, message)
}

/// 303 to `path`.
fn see_other(path: &str) -> Response {
    Redirect::to(path).into_response()
}

/// Why a signed-in form was not taken.
pub enum Refusal {
    /// Nobody is signed in: sign in, then come back to this form.
    SignInFirst { back: String },
    /// The form's CSRF field is not the session's token.
    Expired { back: String },
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::SignInFirst { back } => {
                let viewer = Viewer { caller: None, path: back };
                match sign_in_first(&viewer) {
                    Ok(response) => response,
                    Err(error) => error.into_response(),
                }
            }
            Refusal::Expired { back } => SiteError::new(
                StatusCode::FORBIDDEN,
                "this form has expired (its security token does not match your session): go back, reload the page and send it again",
            )
            .back_to(&back)
            .into_response(),
        }
    }
}

/// Why a form handler stops: a refusal before anything was done, or a step
/// that failed (an error page leading back to the form).
pub enum Stop {
    /// Sign in first, or the form expired.
    Refused(Refusal),
    /// A step failed.
    Failed(SiteError),
}

impl From<Refusal> for Stop {
    fn from(refusal: Refusal) -> Stop {
        Stop::Refused(refusal)
    }
}

impl From<SiteError> for Stop {
    fn from(error: SiteError) -> Stop {
        Stop::Failed(error)
    }
}

impl IntoResponse for Stop {
    fn into_response(self) -> Response {
        match self {
            Stop::Refused(refusal) => refusal.into_response(),
            Stop::Failed(error) => error.into_response(),
        }
    }
}

/// What the signed-in forms' handlers return.
pub type FormResult = Result<Response, Stop>;

/// The signed-in caller whose session sent `csrf`, or why not (`back`: the
/// form's page).
fn session_caller(viewer: &Viewer, csrf: Option<&str>, back: &str) -> Result<Caller, Refusal> {
    let Some(caller) = viewer.caller.clone() else {
        return Err(Refusal::SignInFirst { back: back.to_owned() });
    };
    match caller.check_csrf(csrf) {
        Ok(()) => Ok(caller),
        Err(_) => Err(Refusal::Expired { back: back.to_owned() }),
    }
}

/// The sign-up and sign-in forms.
#[derive(Deserialize)]
pub struct SignForm {
    name: String,
    password: String,
    #[serde(default)]
    next: Option<String>,
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /signup`.
pub async fn sign_up(
    State(state): State<AppState>,
    viewer: Viewer,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    token: FormToken,
    FormBody(form): FormBody<SignForm>,
) -> Response {
    sign(state, viewer, ip, headers, token, form, true).await
}

/// `POST /signin`.
pub async fn sign_in(
    State(state): State<AppState>,
    viewer: Viewer,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    token: FormToken,
    FormBody(form): FormBody<SignForm>,
) -> Response {
    sign(state, viewer, ip, headers, token, form, false).await
}

/// Signs up or in; on success 303 to the form's `next` with the session
/// cookie, else the form again with the error and the status of the
/// failure.
async fn sign(
    state: AppState,
    viewer: Viewer,
    ip: String,
    headers: HeaderMap,
    token: FormToken,
    form: SignForm,
    signup: bool,
) -> Response {
    let next = super::account::safe_next(form.next.as_deref());
    if !token.sent_back(form.csrf.as_deref()) {
        let message = "this form has expired (its security token is missing or does not match): send it again";
        let mut answer = sign_page(&viewer, signup, &next, token, &form.name, Some(message.into()));
        *answer.status_mut() = StatusCode::FORBIDDEN;
        return answer;
    }
    let credentials = Credentials {
        name: form.name.trim().to_owned(),
        password: form.password,
    };
    let old_session = session_secret(&headers);
    let signed_in = if signup {
        accounts::sign_up(&state.core, &ip, &credentials, old_session).await
    } else {
        accounts::sign_in(&state.core, &ip, &credentials, old_session).await
    };
    match signed_in {
        Ok(signed_in) => {
            let cookie = SessionCookie::set(signed_in.secret, state.config.secure_cookies);
            (cookie, no_store(), Redirect::to(&next)).into_response()
        }
        Err(error) => {
            let error = ApiError(error);
            let status = error.status();
            let message = SiteError::from(error).message().to_owned();
            let mut answer = sign_page(&viewer, signup, &next, token, &credentials.name, Some(message));
            *answer.status_mut() = status;
            answer
        }
    }
}

/// `Cache-Control: no-store`, for answers that set or show secrets.
fn no_store() -> [(axum::http::HeaderName, HeaderValue); 1] {
    [(CACHE_CONTROL, HeaderValue::from_static("no-store"))]
}

/// A form with only the session's CSRF token.
#[derive(Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /signout`: ends the session, 303 to `/`.
pub async fn sign_out(
    State(state): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    FormBody(form): FormBody<CsrfForm>,
) -> Response {
    if let Err(refusal) = session_caller(&viewer, form.csrf.as_deref(), "/account") {
        return refusal.into_response();
    }
    if let Some(secret) = session_secret(&headers)
        && let Err(error) = end_session(&state.core.db, &secret).await
    {
        return SiteError::from(error).into_response();
    }
    (SessionCookie::clear(state.config.secure_cookies), see_other("/")).into_response()
}

/// The cookie that carries a token just issued from `POST /account/token`
/// to the account page, which shows it once and clears it.
pub const NEW_TOKEN_COOKIE: &str = "arbiter_new_token";

/// How long the account page may take to pick a new token up, in seconds.
const NEW_TOKEN_SECONDS: u64 = 300;

/// `Set-Cookie` for [`NEW_TOKEN_COOKIE`]: `value` for `max_age` seconds
/// (0 clears it), only ever sent back to `/account`.
pub(super) fn new_token_cookie(value: &str, max_age: u64, secure: bool) -> Option<HeaderValue> {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{NEW_TOKEN_COOKIE}={value}; Path=/account; HttpOnly; SameSite=Strict; Max-Age={max_age}{secure}"
    ))
    .ok()
}

/// `POST /account/token`: a new API token, then `303 See Other` to the
/// account page (POST-redirect-GET), which shows it once. The token travels
/// in a short-lived cookie only `/account` receives, never in a URL, so a
/// reload of the account page neither shows it again nor issues another.
pub async fn issue_token(
    State(state): State<AppState>,
    viewer: Viewer,
    FormBody(form): FormBody<CsrfForm>,
) -> FormResult {
    let caller = session_caller(&viewer, form.csrf.as_deref(), "/account")?;
    let token = issue_api_token(&state.core.db, caller.user_id)
        .await
        .map_err(SiteError::from)?;
    let cookie = new_token_cookie(&token, NEW_TOKEN_SECONDS, state.config.secure_cookies).ok_or_else(|| {
        SiteError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the new token could not be handed over",
        )
    })?;
    Ok(([(SET_COOKIE, cookie)], no_store(), see_other("/account")).into_response())
}

/// `POST /upload` (multipart, as the API's): 303 to the bot's page, where
/// the new version shows as `checking` until its check ends. A refused
/// upload (no ladder ticked, a bad name or module) shows the upload form
/// again with the message, the name and the ladders as they were sent (a
/// browser never lets a page fill in a file field: the file is chosen again).
pub async fn upload(State(state): State<AppState>, viewer: Viewer, form: Multipart) -> FormResult {
    let back = "/upload";
    let form = match read_upload(form, state.core.max_module_bytes()).await {
        Ok(form) => form,
        Err(error) => {
            let error = SiteError::from(error);
            return Ok(upload_again(&state, &viewer, &UploadForm::default(), error).await?);
        }
    };
    let caller = session_caller(&viewer, form.csrf.as_deref(), back)?;
    let sent = UploadForm {
        upload: arbiter_ladder::uploads::Upload {
            name: form.upload.name.clone(),
            ladders: form.upload.ladders.clone(),
            module: None,
            url: form.upload.url.clone(),
            agent: form.upload.agent,
        },
        csrf: None,
    };
    match uploads::upload(&state.core, caller.user_id, form.upload).await {
        Ok(uploaded) => Ok(see_other(&format!("/bots/{}", uploaded.name))),
        Err(error) => Ok(upload_again(&state, &viewer, &sent, SiteError::from(error)).await?),
    }
}

/// The upload form again, with `error`'s message and status, filled in as
/// `sent`; a server error stays an error page.
async fn upload_again(state: &AppState, viewer: &Viewer, sent: &UploadForm, error: SiteError) -> SiteResult {
    if error.status().is_server_error() || viewer.caller.is_none() {
        return Err(error.back_to("/upload"));
    }
    let name = sent.upload.name.clone().unwrap_or_default();
    let url = match &sent.upload.url {
        _ if sent.upload.agent => Some(super::account::AGENT),
        url => url.as_deref(),
    };
    if let Some(url) = url {
        let mut page = super::account::remote_upload_page(
            state,
            viewer,
            &name,
            url,
            &sent.upload.ladders,
            Some(error.message().to_owned()),
        )
        .await?;
        *page.status_mut() = error.status();
        return Ok(page);
    }
    let mut page = upload_page(
        state,
        viewer,
        &name,
        Some(&sent.upload.ladders),
        Some(error.message().to_owned()),
    )
    .await?;
    *page.status_mut() = error.status();
    Ok(page)
}

/// The challenge form.
#[derive(Deserialize)]
pub struct ChallengeForm {
    #[serde(flatten)]
    request: ChallengeRequest,
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /challenge`: 303 to the match's page, to watch it live. A refused
/// challenge (an unknown opponent, a ladder the bots do not share) shows
/// the form again with the message and what was chosen.
pub async fn challenge(
    State(state): State<AppState>,
    viewer: Viewer,
    FormBody(form): FormBody<ChallengeForm>,
) -> FormResult {
    let back = "/challenge";
    let caller = session_caller(&viewer, form.csrf.as_deref(), back)?;
    let created = match not_played(&state, caller.user_id, &form.request).await {
        Ok(None) => challenges::create(&state.core, caller.user_id, &form.request).await,
        Ok(Some(refusal)) => Err(refusal),
        Err(error) => Err(error),
    };
    match created {
        Ok(id) => Ok(see_other(&format!("/matches/{id}"))),
        Err(error) => {
            let error = SiteError::from(error);
            if error.status().is_server_error() {
                return Err(error.back_to(back).into());
            }
            let mut page = challenge_page(&state, &viewer, &form.request, Some(error.message().to_owned())).await?;
            *page.status_mut() = error.status();
            Ok(page)
        }
    }
}

/// The refusal of a challenge whose ladder the caller's bot does not play
/// (the form lists each bot's ladders, and `site.js` narrows the list to
/// the chosen bot's; without JavaScript any may be sent): 400 naming the
/// bot, the ladder and the ladders it does play.
async fn not_played(state: &AppState, user_id: i64, request: &ChallengeRequest) -> Result<Option<Error>, Error> {
    let Ok(ladder) = arbiter_ladder::ladders::canonical(&request.ladder) else {
        return Ok(None);
    };
    let challengers = challenges::challengers(&state.core, user_id).await?;
    let Some(bot) = challengers
        .iter()
        .find(|bot| bot.name.eq_ignore_ascii_case(&request.bot))
    else {
        return Ok(None);
    };
    if bot.ladders.contains(&ladder) {
        return Ok(None);
    }
    Ok(Some(Error::Invalid(format!(
        "{} does not play {ladder}: choose one of its ladders ({})",
        bot.name,
        bot.ladders.join(", ")
    ))))
}

/// The tournament form: `bots` is one field of names separated by commas
/// or spaces.
#[derive(Deserialize)]
pub struct TournamentForm {
    name: String,
    ladder: String,
    bots: String,
    #[serde(default)]
    matches_per_pair: Option<String>,
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /tournaments`: 303 to the tournament's page.
pub async fn tournament(
    State(state): State<AppState>,
    viewer: Viewer,
    FormBody(form): FormBody<TournamentForm>,
) -> FormResult {
    let back = "/tournaments";
    let caller = session_caller(&viewer, form.csrf.as_deref(), back)?;
    let matches_per_pair = match form.matches_per_pair.as_deref().map(str::trim) {
        None | Some("") => 1,
        Some(text) => text.parse().map_err(|_| {
            SiteError::new(StatusCode::BAD_REQUEST, "matches per pair must be a whole number").back_to(back)
        })?,
    };
    let request = TournamentRequest {
        name: form.name,
        ladder: form.ladder,
        bots: form
            .bots
            .split([',', ' ', '\n', '\t'])
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(String::from)
            .collect(),
        matches_per_pair,
    };
    let created = tournaments::create(&state.core, caller.user_id, &request)
        .await
        .map_err(|e| SiteError::from(e).back_to(back))?;
    Ok(see_other(&format!("/tournaments/{}", created.id)))
}

/// `POST /bots/{name}/profile` (multipart: `bio`, `auto_match`,
/// `people_play`, `concurrent_matches`, `photo`, `csrf`): the owner's
/// profile form, without JavaScript too. 303 back to the bot's page. A
/// refusal (a photo over [`MAX_PHOTO_BYTES`] or that is not an acceptable
/// image, a bio too long, every photo decoder busy) shows the bot's page
/// again with the form open, the reason on it and what was sent kept
/// (the photo must be chosen again), with the refusal's status (413, 400,
/// 503 with `Retry-After`); nothing is changed then. The photo is read as
/// it streams in and refused once over the limit: the form sends it last,
/// so every other field has been read by then.
pub async fn profile(
    State(state): State<AppState>,
    Path(name): Path<String>,
    viewer: Viewer,
    mut form: Multipart,
) -> FormResult {
    let back = format!("/bots/{name}");
    let mut csrf = None;
    let mut draft = ProfileDraft::default();
    let mut photo: Option<Vec<u8>> = None;
    let mut refused = None;
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(error) => {
                refused = Some(profile_form_error(&error));
                break;
            }
        };
        let field_name = field.name().unwrap_or("").to_owned();
        if field_name == "photo" {
            match read_photo(field).await {
                // No file chosen: an empty part.
                Ok(bytes) if bytes.is_empty() => {}
                Ok(bytes) => photo = Some(bytes),
                Err(error) => {
                    refused = Some(error);
                    break;
                }
            }
            continue;
        }
        let text = match field.text().await {
            Ok(text) => text,
            Err(error) => {
                refused = Some(profile_form_error(&error));
                break;
            }
        };
        match field_name.as_str() {
            "csrf" => csrf = Some(text),
            "bio" => draft.bio = text,
            "auto_match" => draft.auto_match = true,
            "people_play" => draft.people_play = true,
            "concurrent_matches" => draft.concurrent_matches = text,
            other => {
                refused = Some(Error::Invalid(format!("unexpected form field {other:?}")));
                break;
            }
        }
    }
    let caller = session_caller(&viewer, csrf.as_deref(), &back)?;
    let saved = match refused {
        Some(error) => Err(error),
        None => save_profile(&state, caller.user_id, &name, &draft, photo).await,
    };
    match saved {
        Ok(bot) => Ok(see_other(&format!("/bots/{}?saved=profile", bot.name))),
        // Refusals of what was sent: the form again, as it was sent.
        Err(error @ (Error::Invalid(_) | Error::TooLarge(_) | Error::Conflict(_) | Error::Busy { .. })) => {
            let retry_after = match &error {
                Error::Busy { retry_after_s, .. } => Some((*retry_after_s).max(1)),
                _ => None,
            };
            draft.error = Some(error.public_message());
            let status = ApiError(error).status();
            let mut page = bot_page(&state, &name, &viewer, Some(draft)).await?;
            *page.status_mut() = status;
            if let Some(seconds) = retry_after {
                page.headers_mut().insert(RETRY_AFTER, seconds.into());
            }
            Ok(page)
        }
        Err(error) => Err(SiteError::from(ApiError(error)).back_to(&back).into()),
    }
}

/// The refusal of a profile form that cannot be read: 413 for one over
/// the route's limit (a photo far over [`MAX_PHOTO_BYTES`]), else 400.
fn profile_form_error(error: &axum::extract::multipart::MultipartError) -> Error {
    if error.status() == StatusCode::PAYLOAD_TOO_LARGE {
        photo_too_large()
    } else {
        Error::Invalid(format!("malformed form: {}", error.body_text()))
    }
}

/// The 413 of a photo over [`MAX_PHOTO_BYTES`].
fn photo_too_large() -> Error {
    Error::TooLarge(format!(
        "the photo is larger than 512 KiB ({MAX_PHOTO_BYTES} bytes): choose a smaller one"
    ))
}

/// The photo field's bytes as they stream in, refused
/// ([`photo_too_large`]) as soon as they pass [`MAX_PHOTO_BYTES`].
async fn read_photo(mut field: axum::extract::multipart::Field<'_>) -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(|e| profile_form_error(&e))? {
        if bytes.len() + chunk.len() > MAX_PHOTO_BYTES {
            return Err(photo_too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// Saves a profile form: everything checked that can be before the photo
/// is decoded, so a refusal changes nothing.
async fn save_profile(
    state: &AppState,
    user_id: i64,
    name: &str,
    draft: &ProfileDraft,
    photo: Option<Vec<u8>>,
) -> Result<arbiter_ladder::bots::Bot, Error> {
    let text = draft.concurrent_matches.trim();
    let concurrent_matches = if text.is_empty() {
        None
    } else {
        Some(
            text.parse::<i64>()
                .map_err(|_| Error::Invalid(format!("matches at once must be a whole number, not {text:?}")))?,
        )
    };
    profile::check_bio(&draft.bio).map_err(|e| Error::Invalid(e.to_string()))?;
    let change = profile::ProfileChange {
        bio: Some(draft.bio.clone()),
        auto_match: Some(draft.auto_match),
        people_play: Some(draft.people_play),
        concurrent_matches,
        ..Default::default()
    };
    if let Some(photo) = photo {
        profile::set_photo(&state.core, user_id, name, photo).await?;
    }
    profile::update(&state.core, user_id, name, change).await
}

/// A bot token just issued on the site.
#[derive(askama::Template)]
#[template(path = "bot_token.html", config = "../../web/askama.toml")]
struct BotTokenPage {
    nav: super::Nav,
    title: String,
    name: String,
    token: String,
    /// This site's address, for the connector's `--api`.
    site_url: String,
}

/// `POST /bots/{name}/token`: issues a bot token for the caller's agent bot
/// and shows it, once, on a page that is not stored (its previous token
/// stops working at once).
pub async fn issue_bot_token(
    State(state): State<AppState>,
    Path(name): Path<String>,
    viewer: Viewer,
    headers: HeaderMap,
    FormBody(form): FormBody<CsrfForm>,
) -> FormResult {
    let back = format!("/bots/{name}");
    let caller = session_caller(&viewer, form.csrf.as_deref(), &back)?;
    let token = state
        .core
        .agents
        .issue_token(&state.core.db, caller.user_id, &name)
        .await
        .map_err(|error| SiteError::from(error).back_to(&back))?;
    let page = super::render(&BotTokenPage {
        nav: viewer.nav("bots"),
        title: format!("Bot token of {name}"),
        name,
        token,
        site_url: super::account::site_url(&state, &headers),
    });
    Ok((no_store(), page).into_response())
}

/// The password form.
#[derive(Deserialize)]
pub struct PasswordForm {
    current_password: String,
    new_password: String,
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /account/password`: changes the password (every session and the
/// API token revoked), then 303 to `/account?saved=password` with a new
/// session cookie. A refusal (a wrong current password, a new one that is
/// too short or the same) shows the account page again with the message
/// on the form and the refusal's status.
pub async fn change_password(
    State(state): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    FormBody(form): FormBody<PasswordForm>,
) -> FormResult {
    let back = "/account";
    let caller = session_caller(&viewer, form.csrf.as_deref(), back)?;
    let change = accounts::PasswordChange {
        current_password: form.current_password,
        new_password: form.new_password,
    };
    match accounts::change_password(&state.core, caller.user_id, &change, true).await {
        Ok(Some(signed_in)) => {
            let cookie = SessionCookie::set(signed_in.secret, state.config.secure_cookies);
            Ok((cookie, no_store(), see_other("/account?saved=password")).into_response())
        }
        Ok(None) => Ok(see_other("/signin?next=/account")),
        Err(error) => account_again(&state, &viewer, &headers, AccountForm::Password, error).await,
    }
}

/// The account page again with `error` on `which` form, and its status
/// (with `Retry-After` for a rate limit); a server error is an error page.
async fn account_again(
    state: &AppState,
    viewer: &Viewer,
    headers: &HeaderMap,
    which: AccountForm,
    error: Error,
) -> FormResult {
    let retry_after = match &error {
        Error::RateLimited { retry_after_s, .. } => Some(*retry_after_s),
        _ => None,
    };
    let error = SiteError::from(ApiError(error));
    if error.status().is_server_error() {
        return Err(error.back_to("/account").into());
    }
    let refused = Some((which, error.message().to_owned()));
    let mut page = account_page(state, viewer, headers, None, refused).await?;
    *page.status_mut() = error.status();
    if let Some(seconds) = retry_after {
        page.headers_mut().insert(RETRY_AFTER, seconds.into());
    }
    Ok(page)
}

/// The account deletion form.
#[derive(Deserialize)]
pub struct DeleteForm {
    password: String,
    confirm: String,
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /account/delete`: deletes the account (see
/// `arbiter_ladder::accounts`), then 303 to `/?saved=deleted`, signed out.
/// A refusal (the name not typed, a wrong password) shows the account page
/// again with the message on the form.
pub async fn delete_account(
    State(state): State<AppState>,
    viewer: Viewer,
    headers: HeaderMap,
    FormBody(form): FormBody<DeleteForm>,
) -> FormResult {
    let caller = session_caller(&viewer, form.csrf.as_deref(), "/account")?;
    let deletion = accounts::Deletion {
        password: form.password,
        confirm: form.confirm,
    };
    match accounts::delete_account(&state.core, caller.user_id, &deletion).await {
        Ok(_) => Ok((
            SessionCookie::clear(state.config.secure_cookies),
            no_store(),
            see_other("/?saved=deleted"),
        )
            .into_response()),
        Err(error) => account_again(&state, &viewer, &headers, AccountForm::Delete, error).await,
    }
}

/// `POST /bots/{name}/retire`: the owner retires the bot (as
/// `POST /api/bots/{name}/retire`), then 303 to its page, `?saved=retired`.
pub async fn retire(
    State(state): State<AppState>,
    Path(name): Path<String>,
    viewer: Viewer,
    FormBody(form): FormBody<CsrfForm>,
) -> FormResult {
    let back = format!("/bots/{name}");
    let caller = session_caller(&viewer, form.csrf.as_deref(), &back)?;
    uploads::retire(&state.core, caller.user_id, &name)
        .await
        .map_err(|error| SiteError::from(error).back_to(&back))?;
    Ok(see_other(&format!("/bots/{name}?saved=retired")))
}

/// `POST /bots/{name}/unretire`: the owner brings a retired bot back (as
/// `POST /api/bots/{name}/unretire`), then 303 to its page,
/// `?saved=unretired`; a refusal (nothing to bring back) is an error page
/// leading back to the bot.
pub async fn unretire(
    State(state): State<AppState>,
    Path(name): Path<String>,
    viewer: Viewer,
    FormBody(form): FormBody<CsrfForm>,
) -> FormResult {
    let back = format!("/bots/{name}");
    let caller = session_caller(&viewer, form.csrf.as_deref(), &back)?;
    uploads::unretire(&state.core, caller.user_id, &name)
        .await
        .map_err(|error| SiteError::from(error).back_to(&back))?;
    Ok(see_other(&format!("/bots/{name}?saved=unretired")))
}
