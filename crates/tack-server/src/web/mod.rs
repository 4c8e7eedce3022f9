//! The web page: server-rendered HTML over the same store the API reads, with a little
//! JavaScript that follows a live run's transcript (no build step). Pages: sign in with a
//! token (which makes a session: [`crate::sessions`]), the incarnations and runs, an
//! incarnation (its spec, its runs, and the forms to start a run, edit or delete it), a run's
//! detail (header, tasks with a coloured bar per host, a chosen task's parameters with
//! `<per-host>` and masked values as chips, every host's result, the transcript, and a cancel
//! button while it runs), and the audit log for admins.
//!
//! Every write is a form carrying the session's form token, checked before anything else
//! ([`operate`]); the page's cookie alone never changes anything.
//!
//! Labels come from [`crate::web_text`], English or Russian: `?lang=` switches (and is
//! remembered), else the browser's `Accept-Language` chooses. Every value shown is escaped.

mod index;
mod operate;
mod run_page;

use axum::Router;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::api::AppState;
use crate::sessions::{SESSION_COOKIE, Session, cookie};
use crate::tokens::Role;
use crate::web_text::Lang;

const LANG_COOKIE: &str = "tack_lang";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/ui/") }))
        .route("/ui/login", get(login_page).post(login))
        .route("/ui/logout", post(logout))
        .route("/ui/", get(index::index))
        .route("/ui/runs/{apply_id}", get(run_page::run_page))
        .route("/ui/runs/{apply_id}/cancel", post(operate::cancel))
        .route("/ui/new-incarnation", get(operate::new_incarnation))
        .route("/ui/incarnations", post(operate::create))
        .route("/ui/incarnations/{name}", get(operate::incarnation_page).post(operate::update))
        .route("/ui/incarnations/{name}/delete", post(operate::delete))
        .route("/ui/incarnations/{name}/runs", post(operate::start))
        .route("/ui/audit", get(operate::audit_page))
}

pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM:SS UTC`.
pub(crate) fn time(ms: Option<i64>) -> String {
    let Some(ms) = ms else { return "—".into() };
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date, counting in 400-year eras from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[derive(Deserialize, Default)]
pub struct PageQuery {
    lang: Option<String>,
    task: Option<i64>,
    /// The first of the chosen task's hosts to show (a page of [`crate::store::HostWindow::PAGE`]).
    from: Option<i64>,
    /// The audit log's entries before this one.
    before: Option<i64>,
}

/// The language for this request, and the cookie that remembers a switch.
pub(crate) fn lang(headers: &HeaderMap, query: &PageQuery) -> (Lang, Option<String>) {
    if let Some(l) = query.lang.as_deref().and_then(Lang::parse) {
        let set = format!("{LANG_COOKIE}={}; Path=/; SameSite=Strict; Max-Age=31536000", l.code());
        return (l, Some(set));
    }
    if let Some(l) = cookie(headers, LANG_COOKIE).and_then(Lang::parse) {
        return (l, None);
    }
    let accept = headers.get(header::ACCEPT_LANGUAGE).and_then(|h| h.to_str().ok()).unwrap_or("");
    (Lang::from_accept(accept), None)
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;color:#1d2327;background:#f6f7f7}\
header{background:#1d2327;color:#fff;padding:.6em 1.2em;display:flex;gap:1em;align-items:center}\
header a{color:#fff}main{padding:1em 1.2em}table{border-collapse:collapse;width:100%;background:#fff}\
td,th{border:1px solid #dcdcde;padding:.3em .5em;text-align:left;vertical-align:top}\
pre{margin:0;white-space:pre-wrap;max-height:20em;overflow:auto}.s-ok,.s-success{background:#00a32a}\
.s-changed{background:#dba617}.s-drifted{background:#b32d2e}.s-failed{background:#d63638}.s-unreachable,.s-interrupted{background:#8c1bab}\
.s-skipped,.s-cancelled{background:#2271b1}.s-running,.s-queued{background:#787c82}\
.badge{color:#fff;padding:.1em .5em;border-radius:.3em}.bar{display:flex;gap:2px;min-width:6em}\
.bar span{flex:1;height:1em;border-radius:2px}.chip{display:inline-block;padding:.05em .6em;\
border-radius:1em;font-size:.9em}.chip.per-host{background:#dfe9f5;color:#0a4b78;border:1px solid #72aee6}\
.chip.masked{background:#fcf0f1;color:#8a2424;border:1px solid #e65054}tr.chosen{background:#f0f6fc}\
dl{display:grid;grid-template-columns:max-content auto;gap:.3em 1em;background:#fff;padding:.6em}\
dt{font-weight:600}dd{margin:0}.lang a{margin-left:.4em}#transcript{max-height:30em;\
background:#1d2327;color:#dcdcde;padding:.6em}.t-ok{color:#68de7c}.t-changed{color:#f2d675}\
.t-failed,.t-unreachable{color:#ff8085}.t-skipped{color:#72aee6}.t-warn{color:#c3a5e0}\
.t-banner{font-weight:600}";

/// A whole page; `session` is the signed-in browser's, whose form token the sign-out form
/// carries and whose role decides the links shown.
pub(crate) fn page(
    l: Lang,
    title: &str,
    body: &str,
    session: Option<&Session>,
    extra_head: &str,
) -> String {
    let other = match l {
        Lang::En => ("ru", "Русский"),
        Lang::Ru => ("en", "English"),
    };
    let (nav, out) = match session {
        Some(session) => {
            let audit = if session.caller.role >= Role::Admin {
                format!("<a href=/ui/audit>{}</a>", l.t("audit"))
            } else {
                String::new()
            };
            let out = format!(
                "<span>{} ({})</span><form method=post action=/ui/logout style=margin:0>{}<button>                 {}</button></form>",
                escape(&session.caller.name),
                session.caller.role.as_str(),
                form_token_input(session),
                l.t("sign_out")
            );
            (audit, out)
        }
        None => (String::new(), String::new()),
    };
    format!(
        "<!doctype html><html lang={code}><head><meta charset=utf-8><meta name=viewport \
         content='width=device-width'><title>{title}</title><style>{STYLE}</style>{extra_head}\
         </head><body><header><strong><a href=/ui/>tack</a></strong><span>{title}</span>{nav}\
         <span style=flex:1></span><span class=lang>{lang_label}:<a href='?lang={oc}'>{on}</a>\
         </span>{out}</header><main>{body}</main></body></html>",
        code = l.code(),
        title = escape(title),
        lang_label = l.t("language"),
        oc = other.0,
        on = other.1,
    )
}

/// The hidden field every form of a session carries (see [`crate::sessions`]).
pub(crate) fn form_token_input(session: &Session) -> String {
    format!("<input type=hidden name=form_token value={}>", escape(&session.form_token))
}

pub(crate) fn with_cookie(set: Option<String>, response: impl IntoResponse) -> Response {
    let mut response = response.into_response();
    if let Some(set) = set
        && let Ok(value) = set.parse()
    {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

/// The signed-in browser's session, if its cookie names a live one.
pub(crate) async fn session(state: &AppState, headers: &HeaderMap) -> Option<Session> {
    let secret = cookie(headers, SESSION_COOKIE)?;
    state.store.session(secret).await.ok().flatten()
}

/// A page request from a signed-in browser: its language (and the cookie that remembers a
/// switch) and its session; else the answer that sends it to sign in.
pub(crate) struct Signed {
    pub l: Lang,
    pub set: Option<String>,
    pub session: Session,
}

pub(crate) async fn signed(
    state: &AppState,
    headers: &HeaderMap,
    query: &PageQuery,
) -> Result<Signed, Response> {
    let (l, set) = lang(headers, query);
    match session(state, headers).await {
        Some(session) => Ok(Signed { l, set, session }),
        None => Err(with_cookie(set, Redirect::to("/ui/login"))),
    }
}

impl Signed {
    /// `body` as a whole page titled `title`, with the language cookie if switched.
    pub(crate) fn page(self, status: StatusCode, title: &str, body: &str, head: &str) -> Response {
        let html = page(self.l, title, body, Some(&self.session), head);
        with_cookie(self.set, (status, Html(html)))
    }

    /// A page that says what went wrong.
    pub(crate) fn error(self, status: StatusCode, message: &str) -> Response {
        let l = self.l;
        let body = format!("<p role=alert>{}: {}</p>", l.t("error"), escape(message));
        self.page(status, l.t("error"), &body, "")
    }
}

/// The sign-in form's own cookie: the form posts its value back, so a form another site
/// posts (signing this browser in under the other site's token) is refused.
const LOGIN_COOKIE: &str = "tack_login";

/// A fresh sign-in form and the cookie that pairs with it.
fn login_form(l: Lang, error: Option<&str>) -> (String, Option<String>) {
    let mut raw = [0u8; 16];
    let nonce = match getrandom::fill(&mut raw) {
        Ok(()) => raw.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        // No form can be checked without one: the form is shown, and no post will pass.
        Err(_) => String::new(),
    };
    let error = error.map(|key| format!("<p role=alert>{}</p>", l.t(key))).unwrap_or_default();
    let form = format!(
        "<h1>{}</h1>{error}<form method=post action=/ui/login><input type=hidden name=form \
         value={nonce}><label>{} <input type=password name=token autocomplete=off size=50 \
         autofocus></label> <button type=submit>{}</button></form>",
        l.t("login"),
        l.t("token"),
        l.t("sign_in")
    );
    let cookie = (!nonce.is_empty())
        .then(|| format!("{LOGIN_COOKIE}={nonce}; Path=/ui/login; HttpOnly; SameSite=Strict"));
    (form, cookie)
}

async fn login_page(headers: HeaderMap, Query(q): Query<PageQuery>) -> Response {
    let (l, set) = lang(&headers, &q);
    let (form, pair) = login_form(l, None);
    with_cookie(pair, with_cookie(set, Html(page(l, l.t("login"), &form, None, ""))))
}

#[derive(Deserialize)]
struct LoginForm {
    token: String,
    #[serde(default)]
    form: String,
}

async fn login(
    State(s): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let (l, _) = lang(&headers, &PageQuery::default());
    let again = |status: StatusCode, key: &str| {
        let (body, pair) = login_form(l, Some(key));
        with_cookie(pair, (status, Html(page(l, l.t("login"), &body, None, ""))))
    };
    let paired = cookie(&headers, LOGIN_COOKIE).is_some_and(|c| !c.is_empty() && c == form.form);
    if !paired {
        return again(StatusCode::FORBIDDEN, "form_expired");
    }
    let token = form.token.trim();
    let caller = match s.store.caller(token).await {
        Ok(Some(caller)) => caller,
        Ok(None) => return again(StatusCode::UNAUTHORIZED, "bad_token"),
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    // The browser keeps the session's secret, never the token.
    let secret = match s.store.create_session(&caller.token_id).await {
        Ok(secret) => secret,
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    let set = format!("{SESSION_COOKIE}={secret}; Path=/; HttpOnly; SameSite=Strict");
    let used = format!("{LOGIN_COOKIE}=; Path=/ui/login; HttpOnly; SameSite=Strict; Max-Age=0");
    with_cookie(Some(used), with_cookie(Some(set), Redirect::to("/ui/")))
}

/// What the sign-out form posts.
#[derive(Deserialize)]
struct LogoutForm {
    #[serde(default)]
    form_token: String,
}

/// Ends the session (when the form is its own: another site cannot sign a browser out).
async fn logout(State(s): State<AppState>, headers: HeaderMap, form: Form<LogoutForm>) -> Response {
    if let Some(current) = session(&s, &headers).await {
        if !current.accepts(&form.form_token) {
            let (l, _) = lang(&headers, &PageQuery::default());
            let body = format!("<p role=alert>{}</p>", l.t("form_foreign"));
            let html = page(l, l.t("error"), &body, Some(&current), "");
            return (StatusCode::FORBIDDEN, Html(html)).into_response();
        }
        if let Some(secret) = cookie(&headers, SESSION_COOKIE)
            && let Err(e) = s.store.end_session(secret).await
        {
            return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response();
        }
    }
    let clear = format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    with_cookie(Some(clear), Redirect::to("/ui/login"))
}

pub(crate) fn badge(status: &str) -> String {
    format!("<span class='badge s-{0}'>{0}</span>", escape(status))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc() {
        assert_eq!(time(Some(0)), "1970-01-01 00:00:00 UTC");
        assert_eq!(time(Some(1_796_325_601_000)), "2026-12-03 19:20:01 UTC");
        assert_eq!(time(Some(951_782_400_000)), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn values_are_escaped() {
        assert_eq!(escape("<b a='x'>&"), "&lt;b a=&#39;x&#39;&gt;&amp;");
    }
}
