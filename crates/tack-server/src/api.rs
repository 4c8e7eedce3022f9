//! The REST API under `/v1`: incarnations, their runs, each run's plan with every host's
//! result, its live events (server-sent, resumable with `Last-Event-ID`), cancelling, the
//! tokens (admins make, list and revoke them), and the OpenAPI document that describes it all.
//!
//! Deny by default: every route but the OpenAPI document needs a bearer token, and each
//! route names the least role that may use it. Errors are JSON `{"error": "..."}` with a
//! message a person can act on; bad input is a 4xx and changes nothing.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::audit::{Action, AuditEntry};
use crate::incarnations::{Incarnation, RunRequest};
use crate::queue::Cancel;
use crate::store::{HostWindow, RunRecord, Store, StoreError};
use crate::tokens::{Caller, Role};

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    /// Woken when a run is queued here, so the runner claims it at once.
    pub wake: Arc<Notify>,
}

/// An error as the API answers it.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    fn not_found(what: String) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, what)
    }

    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    pub(crate) fn message(&self) -> &str {
        &self.message
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": self.message}))).into_response()
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// The caller a request's bearer token names.
pub struct Auth(pub Caller);

impl Auth {
    fn require(&self, role: Role) -> ApiResult<&Caller> {
        if self.0.role >= role {
            Ok(&self.0)
        } else {
            Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "the token '{}' is a {} token; this needs the {} role",
                    self.0.name,
                    self.0.role.as_str(),
                    role.as_str()
                ),
            ))
        }
    }
}

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Auth> {
        let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, m);
        let bearer = parts.headers.get(header::AUTHORIZATION).and_then(|h| h.to_str().ok());
        // The web page's session cookie is taken for reads only (the page's own streams): a
        // request that changes something must carry its token itself, so no other site can
        // make a signed-in browser send one. The page writes through its forms instead.
        let read = parts.method == axum::http::Method::GET;
        let cookie = crate::sessions::cookie(&parts.headers, crate::sessions::SESSION_COOKIE)
            .filter(|_| read);
        let token = match (bearer, cookie) {
            // The scheme is case-insensitive (RFC 6750 by way of RFC 7235).
            (Some(header), _) => header
                .split_once(' ')
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| token)
                .ok_or_else(|| unauthorized("the Authorization header must be 'Bearer TOKEN'"))?,
            (None, Some(cookie)) => {
                return match state.store.session(cookie.trim()).await? {
                    Some(session) => Ok(Auth(session.caller)),
                    None => Err(unauthorized("the session ended: sign in again")),
                };
            }
            (None, None) => {
                return Err(unauthorized("this needs a token: send 'Authorization: Bearer TOKEN'"));
            }
        };
        match state.store.caller(token.trim()).await? {
            Some(caller) => Ok(Auth(caller)),
            None => Err(unauthorized("the token is not known or was revoked")),
        }
    }
}

/// The body as `T`, or a 400 naming where the JSON went wrong.
fn body<T: serde::de::DeserializeOwned>(bytes: &Bytes) -> ApiResult<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, format!("the request body: {e}")))
}

/// The API's routes (the page's are [`crate::web::routes`]; [`crate::serve::app`] joins them).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/v1/openapi.json", get(openapi))
        .route("/v1/incarnations", get(list_incarnations).post(create_incarnation))
        .route(
            "/v1/incarnations/{name}",
            get(get_incarnation).put(put_incarnation).delete(delete_incarnation),
        )
        .route("/v1/incarnations/{name}/runs", get(incarnation_runs).post(start_run))
        .route("/v1/incarnations/{name}/runs/{apply_id}", get(get_run))
        .route("/v1/incarnations/{name}/runs/{apply_id}/tasks", get(run_tasks))
        .route("/v1/incarnations/{name}/runs/{apply_id}/events", get(run_events))
        .route("/v1/incarnations/{name}/runs/{apply_id}/transcript", get(run_transcript))
        .route("/v1/incarnations/{name}/runs/{apply_id}/cancel", post(cancel_run))
        .route("/v1/runs", get(all_runs))
        .route("/v1/audit", get(audit_log))
        .route("/v1/drift", get(all_drift))
        .route("/v1/incarnations/{name}/drift", get(incarnation_drift))
        .route("/v1/tokens", get(list_tokens).post(create_token))
        .route("/v1/tokens/{id}", axum::routing::delete(revoke_token))
}

/// What a path no route serves answers.
pub fn no_route() -> ApiError {
    ApiError::not_found("no such route: the API is described at /v1/openapi.json".into())
}

async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

async fn list_incarnations(
    State(s): State<AppState>,
    auth: Auth,
) -> ApiResult<Json<Vec<Incarnation>>> {
    auth.require(Role::Viewer)?;
    let all = s.store.incarnations().await?;
    Ok(Json(all.into_iter().map(|i| i.shown_to(auth.0.role)).collect()))
}

async fn create_incarnation(
    State(s): State<AppState>,
    auth: Auth,
    bytes: Bytes,
) -> ApiResult<(StatusCode, Json<Incarnation>)> {
    let caller = auth.require(Role::Admin)?;
    let spec: Incarnation = body(&bytes)?;
    create_spec(&s.store, caller, &spec).await?;
    Ok((StatusCode::CREATED, Json(spec)))
}

/// Checks, stores and records a new incarnation: what the API and the page both do.
pub(crate) async fn create_spec(
    store: &Store,
    caller: &Caller,
    spec: &Incarnation,
) -> ApiResult<()> {
    spec.validate().map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.0))?;
    if !store.create_incarnation(spec).await? {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("an incarnation named '{}' exists: PUT it to change it", spec.name),
        ));
    }
    audited(store, caller, Action::IncarnationCreate, &spec.name, spec_detail(spec)).await
}

/// Checks, stores and records the new spec of the incarnation `name`.
pub(crate) async fn replace_spec(
    store: &Store,
    caller: &Caller,
    name: &str,
    spec: &Incarnation,
) -> ApiResult<()> {
    if spec.name != name {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "the body names '{}', the URL '{name}': an incarnation keeps its name",
                spec.name
            ),
        ));
    }
    spec.validate().map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.0))?;
    if !store.replace_incarnation(spec).await? {
        return Err(ApiError::not_found(format!("no incarnation is named '{name}'")));
    }
    audited(store, caller, Action::IncarnationUpdate, name, spec_detail(spec)).await
}

/// Deletes and records the incarnation `name` (its runs stay).
pub(crate) async fn delete_spec(store: &Store, caller: &Caller, name: &str) -> ApiResult<()> {
    if !store.delete_incarnation(name).await? {
        return Err(ApiError::not_found(format!("no incarnation is named '{name}'")));
    }
    audited(store, caller, Action::IncarnationDelete, name, json!({})).await
}

pub(crate) async fn incarnation_named(store: &Store, name: &str) -> ApiResult<Incarnation> {
    store
        .incarnation(name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no incarnation is named '{name}'")))
}

async fn get_incarnation(
    State(s): State<AppState>,
    auth: Auth,
    Path(name): Path<String>,
) -> ApiResult<Json<Incarnation>> {
    auth.require(Role::Viewer)?;
    Ok(Json(incarnation_named(&s.store, &name).await?.shown_to(auth.0.role)))
}

async fn put_incarnation(
    State(s): State<AppState>,
    auth: Auth,
    Path(name): Path<String>,
    bytes: Bytes,
) -> ApiResult<Json<Incarnation>> {
    let caller = auth.require(Role::Admin)?;
    let spec: Incarnation = body(&bytes)?;
    replace_spec(&s.store, caller, &name, &spec).await?;
    Ok(Json(spec))
}

async fn delete_incarnation(
    State(s): State<AppState>,
    auth: Auth,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    let caller = auth.require(Role::Admin)?;
    delete_spec(&s.store, caller, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn start_run(
    State(s): State<AppState>,
    auth: Auth,
    Path(name): Path<String>,
    bytes: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let caller = auth.require(Role::Operator)?;
    // No body (or an empty one) runs the incarnation as it is.
    let request: RunRequest = if bytes.iter().all(u8::is_ascii_whitespace) {
        RunRequest::default()
    } else {
        body(&bytes)?
    };
    let apply_id = queue_run(&s, caller, &name, &request).await?;
    Ok((StatusCode::ACCEPTED, Json(json!({"apply_id": apply_id}))))
}

/// Queues a run of the incarnation `name` with `request` laid over it, for `caller`, and
/// records it: what the API's and the page's start both do.
pub(crate) async fn queue_run(
    s: &AppState,
    caller: &Caller,
    name: &str,
    request: &RunRequest,
) -> ApiResult<String> {
    let spec = incarnation_named(&s.store, name).await?;
    let spec = request.apply_to(spec).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.0))?;
    let apply_id = s.store.enqueue(&spec, &caller.name).await?;
    s.wake.notify_one();
    let detail = request.audit_detail(&apply_id, &spec);
    audited(&s.store, caller, Action::RunStart, name, detail).await?;
    Ok(apply_id)
}

/// Records a change already made; should the log refuse it, the answer says the change was
/// made, so nobody makes it twice believing it failed.
pub(crate) async fn audited(
    store: &Store,
    caller: &Caller,
    action: Action,
    target: &str,
    detail: Value,
) -> ApiResult<()> {
    store.audit(caller, action, target, &detail).await.map_err(|e| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "{} of '{target}' was done, but the audit log could not record it: {e}",
                action.as_str()
            ),
        )
    })
}

/// What the audit log says of an incarnation made or changed: its spec, extra vars by name.
fn spec_detail(spec: &Incarnation) -> Value {
    let mut shown = serde_json::to_value(spec).unwrap_or(Value::Null);
    if let Some(vars) = shown.get_mut("extra_vars").and_then(Value::as_object_mut) {
        let names: Vec<Value> = vars.keys().map(|k| Value::String(k.clone())).collect();
        shown["extra_vars"] = Value::Array(names);
    }
    shown
}

async fn incarnation_runs(
    State(s): State<AppState>,
    auth: Auth,
    Path(name): Path<String>,
) -> ApiResult<Json<Vec<RunRecord>>> {
    auth.require(Role::Viewer)?;
    incarnation_named(&s.store, &name).await?;
    Ok(Json(s.store.runs(Some(&name)).await?))
}

async fn all_runs(State(s): State<AppState>, auth: Auth) -> ApiResult<Json<Vec<RunRecord>>> {
    auth.require(Role::Viewer)?;
    Ok(Json(s.store.runs(None).await?))
}

/// Run `apply_id` of incarnation `name`, or a 404 that says which is missing.
pub(crate) async fn run_of(store: &Store, name: &str, apply_id: &str) -> ApiResult<RunRecord> {
    match store.run(apply_id).await? {
        Some(run) if run.incarnation.as_deref() == Some(name) => Ok(run),
        _ => Err(ApiError::not_found(format!("the incarnation '{name}' has no run '{apply_id}'"))),
    }
}

async fn get_run(
    State(s): State<AppState>,
    auth: Auth,
    Path((name, apply_id)): Path<(String, String)>,
) -> ApiResult<Json<RunRecord>> {
    auth.require(Role::Viewer)?;
    Ok(Json(run_of(&s.store, &name, &apply_id).await?))
}

/// Which hosts' results `.../tasks` answers with (`host_offset`, `host_limit`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct HostQuery {
    host_offset: Option<i64>,
    host_limit: Option<i64>,
}

async fn run_tasks(
    State(s): State<AppState>,
    auth: Auth,
    Path((name, apply_id)): Path<(String, String)>,
    query: Result<axum::extract::Query<HostQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Value>> {
    auth.require(Role::Viewer)?;
    let axum::extract::Query(q) = query.map_err(|e| {
        ApiError::new(StatusCode::BAD_REQUEST, format!("the query: {}", e.body_text()))
    })?;
    let window = HostWindow {
        offset: q.host_offset.unwrap_or(0),
        limit: q.host_limit.unwrap_or(HostWindow::PAGE),
    };
    if window.offset < 0 || !(0..=HostWindow::MAX).contains(&window.limit) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "host_offset is 0 or more and host_limit 0 to {}: each task's hosts are read a \
                 page at a time",
                HostWindow::MAX
            ),
        ));
    }
    run_of(&s.store, &name, &apply_id).await?;
    let tasks = s.store.tasks(&apply_id, window, None).await?;
    Ok(Json(json!({
        "apply_id": apply_id,
        "host_offset": window.offset,
        "host_limit": window.limit,
        "tasks": tasks,
    })))
}

async fn cancel_run(
    State(s): State<AppState>,
    auth: Auth,
    Path((name, apply_id)): Path<(String, String)>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let caller = auth.require(Role::Operator)?;
    run_of(&s.store, &name, &apply_id).await?;
    match cancel_and_record(&s.store, caller, &name, &apply_id).await? {
        Cancelled::BeforeItRan => {
            Ok((StatusCode::OK, Json(json!({"apply_id": apply_id, "status": "cancelled"}))))
        }
        Cancelled::Stopping => Ok((
            StatusCode::ACCEPTED,
            Json(json!({"apply_id": apply_id, "status": "running", "cancel_requested": true})),
        )),
    }
}

/// What a cancel that took did.
pub(crate) enum Cancelled {
    /// The run was queued: it never runs.
    BeforeItRan,
    /// The run is running: its controller stops it.
    Stopping,
}

/// Cancels run `apply_id` of incarnation `name` for `caller` and records it: what the API's
/// and the page's cancel both do; a run that ended or does not exist is the error it answers
/// as.
pub(crate) async fn cancel_and_record(
    store: &Store,
    caller: &Caller,
    name: &str,
    apply_id: &str,
) -> ApiResult<Cancelled> {
    let (cancelled, was) = match store.cancel(apply_id).await? {
        Cancel::Cancelled => (Cancelled::BeforeItRan, "queued"),
        Cancel::Requested => (Cancelled::Stopping, "running"),
        Cancel::AlreadyEnded(status) => {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                format!("the run '{apply_id}' has already ended: {}", status.as_str()),
            ));
        }
        Cancel::NotFound => {
            let missing = format!("the incarnation '{name}' has no run '{apply_id}'");
            return Err(ApiError::not_found(missing));
        }
    };
    let detail = json!({"apply_id": apply_id, "was": was});
    audited(store, caller, Action::RunCancel, name, detail).await?;
    Ok(cancelled)
}

/// Every drifted incarnation: what its last scheduled plan or check found would change.
async fn all_drift(
    State(s): State<AppState>,
    auth: Auth,
) -> ApiResult<Json<Vec<crate::drift::Drift>>> {
    auth.require(Role::Viewer)?;
    Ok(Json(s.store.drifts().await?))
}

/// Whether the incarnation `name` is drifted, and with what.
async fn incarnation_drift(
    State(s): State<AppState>,
    auth: Auth,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    auth.require(Role::Viewer)?;
    incarnation_named(&s.store, &name).await?;
    Ok(Json(match s.store.drift(&name).await? {
        Some(drift) => {
            let mut shown = serde_json::to_value(&drift)
                .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
            shown["drifted"] = json!(true);
            shown
        }
        None => json!({"incarnation": name, "drifted": false}),
    }))
}

/// Which entries `GET /v1/audit` answers with.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditQuery {
    before: Option<i64>,
    limit: Option<i64>,
}

/// The audit log, newest first, a page at a time (`?limit=`, `?before=SEQ`).
async fn audit_log(
    State(s): State<AppState>,
    auth: Auth,
    query: Result<axum::extract::Query<AuditQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Json<Vec<AuditEntry>>> {
    auth.require(Role::Admin)?;
    let axum::extract::Query(q) = query.map_err(|e| {
        ApiError::new(StatusCode::BAD_REQUEST, format!("the query: {}", e.body_text()))
    })?;
    let limit = q.limit.unwrap_or(100);
    if !(1..=crate::audit::MAX_PAGE).contains(&limit) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("limit is 1 to {}", crate::audit::MAX_PAGE),
        ));
    }
    Ok(Json(s.store.audit_log(q.before, limit).await?))
}

/// What `.../transcript` takes: the line to follow from, for a stream (its `Last-Event-ID`
/// wins when a client reconnects).
#[derive(serde::Deserialize)]
struct TranscriptQuery {
    after: Option<i64>,
}

/// What the run printed (the default callback's text as `tack playbook` prints it), secrets
/// masked as in its events; as much as it has printed so far while it runs. Asked for as
/// `text/event-stream`, each line is an event (`line`, its number as the id, the text as a
/// JSON string) as it is printed, and `end` (the run's status, as a JSON string) follows the
/// last line of a run that ended.
async fn run_transcript(
    State(s): State<AppState>,
    auth: Auth,
    headers: HeaderMap,
    Path((name, apply_id)): Path<(String, String)>,
    query: Result<axum::extract::Query<TranscriptQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult<Response> {
    auth.require(Role::Viewer)?;
    let axum::extract::Query(q) = query.map_err(|e| {
        ApiError::new(StatusCode::BAD_REQUEST, format!("the query: {}", e.body_text()))
    })?;
    run_of(&s.store, &name, &apply_id).await?;
    let accept = headers.get(header::ACCEPT).and_then(|h| h.to_str().ok()).unwrap_or("");
    if accept.contains("text/event-stream") {
        let after = last_event_id(&headers)?.or(q.after).unwrap_or(0).max(0);
        let cursor = Cursor::new(&s, &auth, apply_id, Feed::Transcript, after);
        let stream = futures_util::stream::unfold(cursor, next_event);
        return Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response());
    }
    let mut text = String::new();
    for (_, line) in s.store.transcript(&apply_id, 0).await? {
        text.push_str(&line);
        text.push('\n');
    }
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
}

/// What `POST /v1/tokens` takes.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NewToken {
    name: String,
    role: String,
}

async fn list_tokens(
    State(s): State<AppState>,
    auth: Auth,
) -> ApiResult<Json<Vec<crate::tokens::TokenInfo>>> {
    auth.require(Role::Admin)?;
    Ok(Json(s.store.tokens().await?))
}

/// Makes a token; the answer holds its secret, which is never shown again.
async fn create_token(
    State(s): State<AppState>,
    auth: Auth,
    bytes: Bytes,
) -> ApiResult<(StatusCode, Json<Value>)> {
    auth.require(Role::Admin)?;
    let new: NewToken = body(&bytes)?;
    let bad = |m: String| ApiError::new(StatusCode::BAD_REQUEST, m);
    let name = new.name.trim();
    if name.is_empty() || name.chars().count() > 100 || name.chars().any(char::is_control) {
        return Err(bad(
            "a token's name is 1 to 100 characters with no control characters".to_string()
        ));
    }
    let role = Role::parse(&new.role).ok_or_else(|| {
        bad(format!("no role is named '{}': viewer, operator or admin", new.role))
    })?;
    let (info, secret) = s.store.create_token(name, role).await?;
    let detail = json!({"id": info.id, "role": role.as_str()});
    audited(&s.store, &auth.0, Action::TokenCreate, name, detail).await?;
    let mut shown = serde_json::to_value(&info)
        .map_err(|e| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
    shown["token"] = json!(secret);
    Ok((StatusCode::CREATED, Json(shown)))
}

async fn revoke_token(
    State(s): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    auth.require(Role::Admin)?;
    if s.store.revoke_token(&id).await? {
        audited(&s.store, &auth.0, Action::TokenRevoke, &id, json!({})).await?;
        return Ok(StatusCode::NO_CONTENT);
    }
    if s.store.tokens().await?.iter().any(|t| t.id == id) {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("the token '{id}' is revoked already"),
        ));
    }
    Err(ApiError::not_found(format!("no token has the id '{id}'")))
}

/// The `Last-Event-ID` a reconnecting client sends: the number of the last event it read.
fn last_event_id(headers: &HeaderMap) -> ApiResult<Option<i64>> {
    match headers.get("last-event-id").map(|h| h.to_str().map(str::parse::<i64>)) {
        None => Ok(None),
        Some(Ok(Ok(n))) if n >= 0 => Ok(Some(n)),
        Some(_) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Last-Event-ID must be the number of an event this stream sent",
        )),
    }
}

/// What a stream of a run follows in the store.
enum Feed {
    /// Its events, each as stored (`kind` the event's name, `body` its data).
    Events,
    /// What it printed: `line` per line, the text as a JSON string (an empty line still has
    /// data, which a browser needs to dispatch an event, and no character of it can end the
    /// field), then `end` with the run's status once it has ended.
    Transcript,
}

/// Where a stream of a run stands.
struct Cursor {
    store: Store,
    /// The token that opened the stream: revoking it ends the stream.
    token_id: String,
    apply_id: String,
    feed: Feed,
    after: i64,
    /// Events read and not yet sent, with the store's number of each (`end` has none).
    pending: std::collections::VecDeque<(Option<i64>, Event)>,
    ended: bool,
}

impl Cursor {
    fn new(s: &AppState, auth: &Auth, apply_id: String, feed: Feed, after: i64) -> Cursor {
        let (store, token_id) = (s.store.clone(), auth.0.token_id.clone());
        Cursor { store, token_id, apply_id, feed, after, pending: Default::default(), ended: false }
    }

    /// What the store holds after the last one sent, as the stream's events.
    async fn read(&self) -> Result<Vec<(Option<i64>, Event)>, StoreError> {
        // The id first, as every event of these streams has always written its fields.
        let numbered = |seq: i64| (Some(seq), Event::default().id(seq.to_string()));
        Ok(match self.feed {
            Feed::Events => {
                let events = self.store.events(&self.apply_id, self.after).await?;
                events
                    .into_iter()
                    .map(|e| {
                        let (seq, event) = numbered(e.seq);
                        (seq, event.event(e.kind).data(e.body))
                    })
                    .collect()
            }
            Feed::Transcript => {
                let lines = self.store.transcript(&self.apply_id, self.after).await?;
                lines
                    .into_iter()
                    .map(|(n, line)| {
                        let (seq, event) = numbered(n);
                        (seq, event.event("line").data(Value::String(line).to_string()))
                    })
                    .collect()
            }
        })
    }
}

async fn next_event(mut c: Cursor) -> Option<(Result<Event, Infallible>, Cursor)> {
    loop {
        if let Some((seq, event)) = c.pending.pop_front() {
            if let Some(seq) = seq {
                c.after = seq;
            }
            return Some((Ok(event), c));
        }
        if c.ended {
            return None;
        }
        if !matches!(c.store.token_active(&c.token_id).await, Ok(true)) {
            return None;
        }
        // Read the status first: what was stored before a run ended is all read below.
        let status = match c.store.status(&c.apply_id).await {
            Ok(Some(status)) if status.is_final() => Some(status),
            _ => None,
        };
        match c.read().await {
            Ok(read) => c.pending.extend(read),
            Err(_) => return None,
        }
        match status {
            Some(status) => {
                c.ended = true;
                if matches!(c.feed, Feed::Transcript) {
                    let data = Value::String(status.as_str().to_string()).to_string();
                    c.pending.push_back((None, Event::default().event("end").data(data)));
                }
            }
            None if c.pending.is_empty() => tokio::time::sleep(Duration::from_millis(200)).await,
            None => {}
        }
    }
}

async fn run_events(
    State(s): State<AppState>,
    auth: Auth,
    headers: HeaderMap,
    Path((name, apply_id)): Path<(String, String)>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    auth.require(Role::Viewer)?;
    run_of(&s.store, &name, &apply_id).await?;
    let after = last_event_id(&headers)?.unwrap_or(0);
    let cursor = Cursor::new(&s, &auth, apply_id, Feed::Events, after);
    let stream = futures_util::stream::unfold(cursor, next_event);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()))
}
