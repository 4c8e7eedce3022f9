//! Operating from the page: an incarnation's page (its spec, its runs, and the forms to start
//! a run, edit or delete it), the form that makes a new one, the cancel button's post, and the
//! audit log for admins.
//!
//! Every post is checked in one order before anything changes: a live session (else 401), the
//! session's form token in the form (else 403: a form another site made a browser post
//! carries the cookie but cannot carry the token), then the role the change needs (else 403).
//! The change itself is the API's own code ([`crate::api`]), so the page validates, refuses
//! and records exactly as the API does.

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::index::{drift_mark, drift_section, runs_table};
use super::{PageQuery, Signed, escape, form_token_input, lang, page, signed, time};
use crate::api::{self, ApiError, AppState};
use crate::incarnations::{Incarnation, Mode, RunRequest, Tags};
use crate::tokens::Role;

/// What every form posts besides its own fields.
#[derive(Deserialize, Default)]
pub(super) struct TokenOnly {
    #[serde(default)]
    form_token: String,
}

/// The start form: each field left empty keeps the incarnation's own.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct StartForm {
    form_token: String,
    limit: String,
    tags: String,
    mode: String,
    extra_vars: String,
}

/// The form that makes or edits an incarnation: an empty field is a field not given.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct SpecForm {
    form_token: String,
    name: String,
    project_dir: String,
    playbook: String,
    inventory: String,
    extra_vars: String,
    vault_password_file: String,
    limit: String,
    tags: String,
    mode: String,
    schedules: String,
}

/// A form of the page: it carries its session's form token.
trait Posted {
    fn form_token(&self) -> &str;
}

impl Posted for TokenOnly {
    fn form_token(&self) -> &str {
        &self.form_token
    }
}

impl Posted for StartForm {
    fn form_token(&self) -> &str {
        &self.form_token
    }
}

impl Posted for SpecForm {
    fn form_token(&self) -> &str {
        &self.form_token
    }
}

/// Every post's first step: the form read (else 400), then [`authorised`] for `role`.
async fn admit<T: Posted>(
    s: &AppState,
    headers: &HeaderMap,
    form: Result<Form<T>, FormRejection>,
    role: Role,
) -> Result<(T, Signed), Response> {
    let Form(form) = form.map_err(|e| unreadable(headers, &e))?;
    let signed = authorised(s, headers, form.form_token(), role).await?;
    Ok((form, signed))
}

/// A post's checks (see the module's words); the signed-in request when they pass.
async fn authorised(
    s: &AppState,
    headers: &HeaderMap,
    form_token: &str,
    role: Role,
) -> Result<Signed, Response> {
    let (l, set) = lang(headers, &PageQuery::default());
    let Some(session) = super::session(s, headers).await else {
        let body = format!("<p role=alert>{}</p>", l.t("signed_out"));
        return Err((
            StatusCode::UNAUTHORIZED,
            axum::response::Html(page(l, l.t("error"), &body, None, "")),
        )
            .into_response());
    };
    let signed = Signed { l, set, session };
    if !signed.session.accepts(form_token) {
        let message = l.t("form_foreign");
        return Err(signed.error(StatusCode::FORBIDDEN, message));
    }
    if signed.session.caller.role < role {
        let message = format!("{} ({})", l.t("needs_role"), role.as_str());
        return Err(signed.error(StatusCode::FORBIDDEN, &message));
    }
    Ok(signed)
}

/// A form that could not be read: refused before anything is looked at.
fn unreadable(headers: &HeaderMap, e: &FormRejection) -> Response {
    let (l, _) = lang(headers, &PageQuery::default());
    let body = format!("<p role=alert>{}: {}</p>", l.t("error"), escape(&e.body_text()));
    (StatusCode::BAD_REQUEST, axum::response::Html(page(l, l.t("error"), &body, None, "")))
        .into_response()
}

fn failed(signed: Signed, e: &ApiError) -> Response {
    signed.error(e.status(), e.message())
}

/// A field's text, or nothing when it was left empty.
fn given(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// The extra vars field: a JSON object, as the API takes them.
fn extra_vars(text: &str) -> Result<Option<Map<String, Value>>, String> {
    let Some(text) = given(text) else { return Ok(None) };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(Some(map)),
        Ok(_) => Err("extra vars are a JSON object, such as {\"release\": \"42\"}".into()),
        Err(e) => Err(format!("extra vars: {e}")),
    }
}

fn mode(text: &str) -> Result<Option<Mode>, String> {
    match given(text) {
        None => Ok(None),
        Some(m) => Mode::parse(&m)
            .map(Some)
            .ok_or_else(|| format!("no mode is named '{m}': apply, check or plan")),
    }
}

impl SpecForm {
    fn spec(&self) -> Result<Incarnation, String> {
        Ok(Incarnation {
            name: self.name.trim().to_string(),
            project_dir: self.project_dir.trim().to_string(),
            playbook: self.playbook.trim().to_string(),
            inventory: given(&self.inventory),
            extra_vars: extra_vars(&self.extra_vars)?,
            vault_password_file: given(&self.vault_password_file),
            limit: given(&self.limit),
            tags: given(&self.tags).map(Tags::One),
            mode: mode(&self.mode)?.unwrap_or(Mode::Apply),
            schedules: match given(&self.schedules) {
                None => Vec::new(),
                Some(text) => serde_json::from_str(&text).map_err(|e| {
                    format!(
                        "schedules are a JSON list, such as [{{\"cron\": \"0 3 * * *\", \
                         \"timezone\": \"Europe/Berlin\", \"mode\": \"plan\"}}]: {e}"
                    )
                })?,
            },
        })
    }
}

/// The mode choices; `current` is chosen, and `keep` (the incarnation's own) is offered first
/// when given.
fn mode_select(l: crate::web_text::Lang, current: Option<Mode>, keep: Option<Mode>) -> String {
    let mut out = String::from("<select name=mode>");
    if let Some(keep) = keep {
        out.push_str(&format!(
            "<option value='' selected>{} ({})</option>",
            l.t("as_incarnation"),
            keep.as_str()
        ));
    }
    for m in Mode::ALL {
        let chosen = if current == Some(m) { " selected" } else { "" };
        out.push_str(&format!("<option value={0}{chosen}>{0}</option>", m.as_str()));
    }
    out.push_str("</select>");
    out
}

/// The form that makes (`spec` none) or edits an incarnation.
fn spec_form(signed: &Signed, spec: Option<&Incarnation>) -> String {
    let l = signed.l;
    let text = |f: fn(&Incarnation) -> Option<String>| {
        spec.and_then(f).map(|v| escape(&v)).unwrap_or_default()
    };
    let (action, id, name_field) = match spec {
        Some(spec) => (
            format!("/ui/incarnations/{}", escape(&spec.name)),
            "edit",
            format!(
                "<input type=hidden name=name value='{0}'><code>{0}</code>",
                escape(&spec.name)
            ),
        ),
        None => ("/ui/incarnations".to_string(), "create", "<input name=name required>".into()),
    };
    let vars = text(|s| s.extra_vars.as_ref().and_then(|v| serde_json::to_string_pretty(v).ok()));
    let row = |label: &str, field: String| format!("<dt>{label}</dt><dd>{field}</dd>");
    let input = |name: &str, value: String| format!("<input name={name} value='{value}' size=50>");
    let mut out = format!(
        "<form id={id} method=post action='{action}'>{}<dl>",
        form_token_input(&signed.session)
    );
    out.push_str(&row(l.t("name"), name_field));
    out.push_str(&row(
        l.t("project_dir"),
        input("project_dir", text(|s| Some(s.project_dir.clone()))),
    ));
    out.push_str(&row(l.t("playbook"), input("playbook", text(|s| Some(s.playbook.clone())))));
    out.push_str(&row(l.t("inventory"), input("inventory", text(|s| s.inventory.clone()))));
    out.push_str(&row(l.t("limit"), input("limit", text(|s| s.limit.clone()))));
    out.push_str(&row(l.t("tags"), input("tags", text(|s| s.tags.as_ref().map(Tags::joined)))));
    out.push_str(&row(
        l.t("vault_password_file"),
        input("vault_password_file", text(|s| s.vault_password_file.clone())),
    ));
    out.push_str(&row(
        l.t("mode"),
        mode_select(l, Some(spec.map_or(Mode::Apply, |s| s.mode)), None),
    ));
    out.push_str(&row(
        l.t("extra_vars"),
        format!("<textarea name=extra_vars rows=4 cols=50 placeholder='{{\"release\": \"42\"}}'>{vars}</textarea>"),
    ));
    let schedules = text(|s| {
        (!s.schedules.is_empty()).then(|| serde_json::to_string_pretty(&s.schedules).ok()).flatten()
    });
    out.push_str(&row(
        l.t("schedules"),
        format!(
            "<textarea name=schedules rows=3 cols=50 placeholder='[{{\"cron\": \"0 3 * * *\", \
             \"timezone\": \"Europe/Berlin\", \"mode\": \"plan\"}}]'>{schedules}</textarea>"
        ),
    ));
    out.push_str(&format!(
        "</dl><button>{}</button></form>",
        l.t(if spec.is_some() { "save" } else { "create" })
    ));
    out
}

pub(super) async fn incarnation_page(
    State(s): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
    Query(q): Query<PageQuery>,
) -> Response {
    let signed = match signed(&s, &headers, &q).await {
        Ok(signed) => signed,
        Err(to_login) => return to_login,
    };
    let l = signed.l;
    let role = signed.session.caller.role;
    let spec = match api::incarnation_named(&s.store, &name).await {
        Ok(spec) => spec,
        Err(e) => return failed(signed, &e),
    };
    let runs = match s.store.runs(Some(&name)).await {
        Ok(runs) => runs,
        Err(e) => return signed.error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let drift = match s.store.drift(&name).await {
        Ok(drift) => drift,
        Err(e) => return signed.error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let shown = spec.clone().shown_to(role);
    let dash = || "—".to_string();
    let mut body =
        format!("<h2>{} <code>{}</code></h2><dl id=spec>", l.t("incarnation"), escape(&name));
    for (label, value) in [
        (l.t("project_dir"), shown.project_dir.clone()),
        (l.t("playbook"), shown.playbook.clone()),
        (l.t("inventory"), shown.inventory.clone().unwrap_or_else(dash)),
        (l.t("limit"), shown.limit.clone().unwrap_or_else(dash)),
        (l.t("tags"), shown.tags.as_ref().map_or_else(dash, Tags::joined)),
        (l.t("vault_password_file"), shown.vault_password_file.clone().unwrap_or_else(dash)),
        (l.t("mode"), shown.mode.as_str().to_string()),
        (
            l.t("extra_vars"),
            shown.extra_vars.as_ref().map_or_else(dash, |v| Value::Object(v.clone()).to_string()),
        ),
    ] {
        body.push_str(&format!("<dt>{label}</dt><dd><code>{}</code></dd>", escape(&value)));
    }
    let schedules: Vec<String> = shown
        .schedules
        .iter()
        .map(|s| format!("<code>{}</code>", escape(&s.key().replace('|', " "))))
        .collect();
    body.push_str(&format!(
        "<dt>{}</dt><dd id=schedules>{}</dd><dt>{}</dt><dd>{}</dd></dl>",
        l.t("schedules"),
        if schedules.is_empty() { dash() } else { schedules.join("<br>") },
        l.t("drift"),
        drift_mark(l, drift.as_ref()),
    ));
    body.push_str(&drift_section(l, drift.as_ref()));
    if role >= Role::Operator {
        body.push_str(&format!(
            "<h3>{}</h3><form id=start method=post action='/ui/incarnations/{}/runs'>{}<dl>\
             <dt>{}</dt><dd><input name=limit size=40 placeholder='{}'></dd><dt>{}</dt><dd>\
             <input name=tags size=40 placeholder='{}'></dd><dt>{}</dt><dd>{}</dd><dt>{}</dt><dd>\
             <textarea name=extra_vars rows=3 cols=50 placeholder='{{\"release\": \"42\"}}'>\
             </textarea></dd></dl><button>{}</button></form>",
            l.t("start_run"),
            escape(&name),
            form_token_input(&signed.session),
            l.t("limit"),
            escape(spec.limit.as_deref().unwrap_or("")),
            l.t("tags"),
            escape(&spec.tags.as_ref().map(Tags::joined).unwrap_or_default()),
            l.t("mode"),
            mode_select(l, None, Some(spec.mode)),
            l.t("extra_vars_more"),
            l.t("start"),
        ));
    }
    body.push_str(&format!("<h3>{}</h3>{}", l.t("runs"), runs_table(l, &runs)));
    if role >= Role::Admin {
        body.push_str(&format!(
            "<h3>{}</h3>{}",
            l.t("edit_incarnation"),
            spec_form(&signed, Some(&spec))
        ));
        body.push_str(&format!(
            "<h3>{}</h3><form id=delete method=post action='/ui/incarnations/{}/delete'>{}\
             <button>{}</button></form>",
            l.t("delete_incarnation"),
            escape(&name),
            form_token_input(&signed.session),
            l.t("delete"),
        ));
    }
    let title = format!("{} {name}", l.t("incarnation"));
    signed.page(StatusCode::OK, &title, &body, "")
}

pub(super) async fn new_incarnation(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<PageQuery>,
) -> Response {
    let signed = match signed(&s, &headers, &q).await {
        Ok(signed) => signed,
        Err(to_login) => return to_login,
    };
    let l = signed.l;
    if signed.session.caller.role < Role::Admin {
        let message = format!("{} ({})", l.t("needs_role"), Role::Admin.as_str());
        return signed.error(StatusCode::FORBIDDEN, &message);
    }
    let body = format!("<h2>{}</h2>{}", l.t("new_incarnation"), spec_form(&signed, None));
    signed.page(StatusCode::OK, l.t("new_incarnation"), &body, "")
}

pub(super) async fn create(
    State(s): State<AppState>,
    headers: HeaderMap,
    form: Result<Form<SpecForm>, FormRejection>,
) -> Response {
    let (form, signed) = match admit(&s, &headers, form, Role::Admin).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let spec = match form.spec() {
        Ok(spec) => spec,
        Err(message) => return signed.error(StatusCode::BAD_REQUEST, &message),
    };
    match api::create_spec(&s.store, &signed.session.caller, &spec).await {
        Ok(()) => Redirect::to(&format!("/ui/incarnations/{}", spec.name)).into_response(),
        Err(e) => failed(signed, &e),
    }
}

pub(super) async fn update(
    State(s): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
    form: Result<Form<SpecForm>, FormRejection>,
) -> Response {
    let (form, signed) = match admit(&s, &headers, form, Role::Admin).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let spec = match form.spec() {
        Ok(spec) => spec,
        Err(message) => return signed.error(StatusCode::BAD_REQUEST, &message),
    };
    match api::replace_spec(&s.store, &signed.session.caller, &name, &spec).await {
        Ok(()) => Redirect::to(&format!("/ui/incarnations/{}", spec.name)).into_response(),
        Err(e) => failed(signed, &e),
    }
}

pub(super) async fn delete(
    State(s): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
    form: Result<Form<TokenOnly>, FormRejection>,
) -> Response {
    let (_, signed) = match admit(&s, &headers, form, Role::Admin).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    match api::delete_spec(&s.store, &signed.session.caller, &name).await {
        Ok(()) => Redirect::to("/ui/").into_response(),
        Err(e) => failed(signed, &e),
    }
}

pub(super) async fn start(
    State(s): State<AppState>,
    headers: HeaderMap,
    Path(name): Path<String>,
    form: Result<Form<StartForm>, FormRejection>,
) -> Response {
    let (form, signed) = match admit(&s, &headers, form, Role::Operator).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let request = match (extra_vars(&form.extra_vars), mode(&form.mode)) {
        (Ok(extra_vars), Ok(mode)) => RunRequest {
            limit: given(&form.limit),
            tags: given(&form.tags).map(Tags::One),
            extra_vars,
            mode,
        },
        (Err(message), _) | (_, Err(message)) => {
            return signed.error(StatusCode::BAD_REQUEST, &message);
        }
    };
    match api::queue_run(&s, &signed.session.caller, &name, &request).await {
        Ok(apply_id) => Redirect::to(&format!("/ui/runs/{apply_id}")).into_response(),
        Err(e) => failed(signed, &e),
    }
}

pub(super) async fn cancel(
    State(s): State<AppState>,
    headers: HeaderMap,
    Path(apply_id): Path<String>,
    form: Result<Form<TokenOnly>, FormRejection>,
) -> Response {
    let (_, signed) = match admit(&s, &headers, form, Role::Operator).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let name = match s.store.run(&apply_id).await {
        Ok(Some(run)) => run.incarnation,
        Ok(None) => None,
        Err(e) => return signed.error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    // Only a run the server queued is the server's to cancel.
    let Some(name) = name else {
        let message = format!("no run the server queued is '{apply_id}'");
        return signed.error(StatusCode::NOT_FOUND, &message);
    };
    match api::cancel_and_record(&s.store, &signed.session.caller, &name, &apply_id).await {
        Ok(_) => Redirect::to(&format!("/ui/runs/{apply_id}")).into_response(),
        Err(e) => failed(signed, &e),
    }
}

/// How many audit entries a page shows.
const AUDIT_PAGE: i64 = 100;

pub(super) async fn audit_page(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<PageQuery>,
) -> Response {
    let signed = match signed(&s, &headers, &q).await {
        Ok(signed) => signed,
        Err(to_login) => return to_login,
    };
    let l = signed.l;
    if signed.session.caller.role < Role::Admin {
        let message = format!("{} ({})", l.t("needs_role"), Role::Admin.as_str());
        return signed.error(StatusCode::FORBIDDEN, &message);
    }
    let entries = match s.store.audit_log(q.before, AUDIT_PAGE).await {
        Ok(entries) => entries,
        Err(e) => return signed.error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    };
    let mut body = format!("<h2>{}</h2>", l.t("audit"));
    if entries.is_empty() {
        body.push_str(&format!("<p>{}</p>", l.t("no_audit")));
    } else {
        body.push_str(&format!(
            "<table id=audit><tr><th>#</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>\
             </tr>",
            l.t("when"),
            l.t("actor"),
            l.t("action"),
            l.t("target"),
            l.t("detail")
        ));
        for e in &entries {
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{} <small>{}</small></td><td>{}</td><td>{}</td>\
                 <td><code>{}</code></td></tr>",
                e.seq,
                time(Some(e.at)),
                escape(&e.actor),
                escape(&e.token_id),
                escape(&e.action),
                escape(&e.target),
                escape(&e.detail.to_string()),
            ));
        }
        body.push_str("</table>");
        if let Some(last) = entries.last().filter(|_| entries.len() as i64 == AUDIT_PAGE) {
            body.push_str(&format!(
                "<p><a href='?before={}'>{}</a></p>",
                last.seq,
                l.t("older_entries")
            ));
        }
    }
    signed.page(StatusCode::OK, l.t("audit"), &body, "")
}
