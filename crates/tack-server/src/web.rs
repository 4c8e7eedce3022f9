//! The web page: server-rendered HTML over the same store the API reads, with a little
//! JavaScript that reloads a live run's page as its events arrive (no build step). Pages: sign
//! in with a token (kept in an HttpOnly, same-site cookie), the incarnations and runs, and a
//! run's detail (header, tasks with a coloured bar per host, a chosen task's parameters with
//! `<per-host>` and masked values as chips, and every host's result).
//!
//! Labels come from [`crate::web_text`], English or Russian: `?lang=` switches (and is
//! remembered), else the browser's `Accept-Language` chooses. Every value shown is escaped.

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::Value;

use crate::api::AppState;
use crate::store::{HostWindow, RunRecord, TaskRecord};
use crate::tokens::{Caller, Role};
use crate::web_text::Lang;

pub const TOKEN_COOKIE: &str = "tack_token";
const LANG_COOKIE: &str = "tack_lang";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { Redirect::to("/ui/") }))
        .route("/ui/login", get(login_page).post(login))
        .route("/ui/logout", axum::routing::post(logout))
        .route("/ui/", get(index))
        .route("/ui/runs/{apply_id}", get(run_page))
}

/// A cookie's value from the request's `Cookie` headers.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn escape(text: &str) -> String {
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
fn time(ms: Option<i64>) -> String {
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
    /// The first of the chosen task's hosts to show (a page of [`HostWindow::PAGE`]).
    from: Option<i64>,
}

/// The language for this request, and the cookie that remembers a switch.
fn lang(headers: &HeaderMap, query: &PageQuery) -> (Lang, Option<String>) {
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
.s-changed{background:#dba617}.s-failed{background:#d63638}.s-unreachable,.s-interrupted{background:#8c1bab}\
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

fn page(l: Lang, title: &str, body: &str, signed_in: bool, extra_head: &str) -> String {
    let other = match l {
        Lang::En => ("ru", "Русский"),
        Lang::Ru => ("en", "English"),
    };
    let out = if signed_in {
        format!(
            "<form method=post action=/ui/logout style=margin:0><button>{}</button></form>",
            l.t("sign_out")
        )
    } else {
        String::new()
    };
    format!(
        "<!doctype html><html lang={code}><head><meta charset=utf-8><meta name=viewport \
         content='width=device-width'><title>{title}</title><style>{STYLE}</style>{extra_head}\
         </head><body><header><strong><a href=/ui/>tack</a></strong><span>{title}</span>\
         <span style=flex:1></span><span class=lang>{lang_label}:<a href='?lang={oc}'>{on}</a>\
         </span>{out}</header><main>{body}</main></body></html>",
        code = l.code(),
        title = escape(title),
        lang_label = l.t("language"),
        oc = other.0,
        on = other.1,
    )
}

fn with_cookie(set: Option<String>, response: impl IntoResponse) -> Response {
    let mut response = response.into_response();
    if let Some(set) = set
        && let Ok(value) = set.parse()
    {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

async fn signed_in(state: &AppState, headers: &HeaderMap) -> Option<Caller> {
    let token = cookie(headers, TOKEN_COOKIE)?;
    state.store.caller(token).await.ok().flatten().filter(|c| c.role >= Role::Viewer)
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
    with_cookie(pair, with_cookie(set, Html(page(l, l.t("login"), &form, false, ""))))
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
        with_cookie(pair, (status, Html(page(l, l.t("login"), &body, false, ""))))
    };
    let paired = cookie(&headers, LOGIN_COOKIE).is_some_and(|c| !c.is_empty() && c == form.form);
    if !paired {
        return again(StatusCode::FORBIDDEN, "form_expired");
    }
    let token = form.token.trim();
    match s.store.caller(token).await {
        Ok(Some(_)) => {
            let set = format!("{TOKEN_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict");
            let used =
                format!("{LOGIN_COOKIE}=; Path=/ui/login; HttpOnly; SameSite=Strict; Max-Age=0");
            with_cookie(Some(used), with_cookie(Some(set), Redirect::to("/ui/")))
        }
        _ => again(StatusCode::UNAUTHORIZED, "bad_token"),
    }
}

async fn logout() -> Response {
    let clear = format!("{TOKEN_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    with_cookie(Some(clear), Redirect::to("/ui/login"))
}

fn badge(status: &str) -> String {
    format!("<span class='badge s-{0}'>{0}</span>", escape(status))
}

fn runs_table(l: Lang, runs: &[RunRecord]) -> String {
    if runs.is_empty() {
        return format!("<p>{}</p>", l.t("no_runs"));
    }
    let mut rows = String::new();
    for r in runs {
        rows.push_str(&format!(
            "<tr><td><a href='/ui/runs/{id}'>{id}</a></td><td>{inc}</td><td>{pb}</td><td>{mode}\
             </td><td>{status}</td><td>{by}</td><td>{queued}</td><td>{recap}</td></tr>",
            id = escape(&r.apply_id),
            inc = escape(r.incarnation.as_deref().unwrap_or("—")),
            pb = escape(&r.playbook),
            mode = escape(&r.mode),
            status = badge(r.status.as_str()),
            by = escape(&r.started_by),
            queued = time(Some(r.queued_at)),
            recap = recap_text(r.recap.as_ref()),
        ));
    }
    format!(
        "<table id=runs><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>\
         <th>{}</th><th>{}</th></tr>{rows}</table>",
        l.t("run"),
        l.t("incarnation"),
        l.t("playbook"),
        l.t("mode"),
        l.t("status"),
        l.t("started_by"),
        l.t("queued"),
        l.t("recap"),
    )
}

fn recap_text(recap: Option<&Value>) -> String {
    let Some(hosts) = recap.and_then(Value::as_object) else { return "—".into() };
    let mut parts = Vec::new();
    for (host, counts) in hosts {
        let n = |k: &str| counts.get(k).and_then(Value::as_i64).unwrap_or(0);
        parts.push(format!(
            "{}: ok={} changed={} failed={} unreachable={}",
            escape(host),
            n("ok"),
            n("changed"),
            n("failed"),
            n("unreachable")
        ));
    }
    parts.join("<br>")
}

async fn index(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<PageQuery>,
) -> Response {
    let (l, set) = lang(&headers, &q);
    if signed_in(&s, &headers).await.is_none() {
        return with_cookie(set, Redirect::to("/ui/login"));
    }
    let (incarnations, runs) = match (s.store.incarnations().await, s.store.runs(None).await) {
        (Ok(i), Ok(r)) => (i, r),
        (Err(e), _) | (_, Err(e)) => {
            let body = format!("<p>{}: {}</p>", l.t("error"), escape(&e.to_string()));
            return with_cookie(set, Html(page(l, l.t("error"), &body, true, "")));
        }
    };
    let mut body = format!("<h2>{}</h2>", l.t("incarnations"));
    if incarnations.is_empty() {
        body.push_str(&format!("<p>{}</p>", l.t("no_incarnations")));
    } else {
        body.push_str(&format!(
            "<table id=incarnations><tr><th>{}</th><th>{}</th><th>{}</th></tr>",
            l.t("name"),
            l.t("playbook"),
            l.t("mode")
        ));
        for i in &incarnations {
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&i.name),
                escape(&i.playbook),
                i.mode.as_str()
            ));
        }
        body.push_str("</table>");
    }
    body.push_str(&format!("<h2>{}</h2>{}", l.t("runs"), runs_table(l, &runs)));
    with_cookie(set, Html(page(l, l.t("title"), &body, true, "")))
}

/// A parameter's value as shown: the marker and the mask as chips, text as is, the rest JSON.
fn param_value(l: Lang, value: &Value) -> String {
    match value {
        Value::String(s) if s == "<per-host>" => {
            format!(
                "<span class='chip per-host' title='&lt;per-host&gt;'>{}</span>",
                l.t("per_host")
            )
        }
        Value::String(s) if s == "********" => {
            format!("<span class='chip masked' title='********'>{}</span>", l.t("masked"))
        }
        Value::String(s) => format!("<code>{}</code>", escape(s)),
        other => format!("<code>{}</code>", escape(&other.to_string())),
    }
}

/// A params map as key/value pairs (`<per-host>` and masked values as chips); `attrs` are the
/// list element's.
fn params_list(l: Lang, attrs: &str, map: &serde_json::Map<String, Value>) -> String {
    let mut out = format!("<dl {attrs}>");
    for (key, value) in map {
        out.push_str(&format!("<dt>{}</dt><dd>{}</dd>", escape(key), param_value(l, value)));
    }
    out.push_str("</dl>");
    out
}

/// A host's own input: its keys and values (a looped task's, item by item), secrets as chips.
fn input_value(l: Lang, input: &Value) -> String {
    match input {
        Value::Object(map) => params_list(l, "class=host-input", map),
        Value::Array(items) => items.iter().map(|item| input_value(l, item)).collect(),
        other => param_value(l, other),
    }
}

fn task_detail(l: Lang, task: &TaskRecord, from: i64) -> String {
    let mut out = format!(
        "<h3 id=task>{} {}: {}</h3><h4>{}</h4>",
        l.t("task"),
        task.index,
        escape(&task.name),
        l.t("params")
    );
    match task.params.as_ref().and_then(Value::as_object) {
        Some(params) if !params.is_empty() => out.push_str(&params_list(l, "id=params", params)),
        _ => out.push_str(&format!("<p>{}</p>", l.t("no_params"))),
    }
    // Where the hosts' inputs differ, each host's own is on its row.
    let inputs = task.hosts.iter().any(|h| h.input.is_some());
    let input_head = if inputs { format!("<th>{}</th>", l.t("input")) } else { String::new() };
    out.push_str(&format!(
        "<h4>{}</h4><table id=results><tr><th>{}</th><th>{}</th>{input_head}<th>{}</th><th>{}</th>\
         <th>{}</th><th>{}</th><th>{}</th></tr>",
        l.t("hosts"),
        l.t("host"),
        l.t("status"),
        l.t("changed"),
        l.t("exit_code"),
        l.t("stdout"),
        l.t("stderr"),
        l.t("msg"),
    ));
    let pre = |t: &Option<String>| format!("<pre>{}</pre>", escape(t.as_deref().unwrap_or("")));
    for h in &task.hosts {
        let input = match (&h.input, inputs) {
            (_, false) => String::new(),
            (Some(input), true) => format!("<td class=input>{}</td>", input_value(l, input)),
            (None, true) => "<td class=input></td>".to_string(),
        };
        out.push_str(&format!(
            "<tr class=host-row data-host='{host}'><td>{host}</td><td>{status}</td>{input}\
             <td>{changed}</td><td>{rc}</td><td>{stdout}</td><td>{stderr}</td><td>{msg}</td></tr>",
            host = escape(&h.host),
            status = badge(&h.status),
            changed = if h.changed { "✓" } else { "" },
            rc = h.exit_code.map(|c| c.to_string()).unwrap_or_default(),
            stdout = pre(&h.stdout),
            stderr = pre(&h.stderr),
            msg = pre(&h.msg),
        ));
    }
    out.push_str("</table>");
    // A task of many hosts is shown a page at a time.
    if task.hosts_total > HostWindow::PAGE || from > 0 {
        let shown = i64::try_from(task.hosts.len()).unwrap_or(0);
        out.push_str(&format!(
            "<p id=host-pages>{} {}–{} {} {}",
            l.t("hosts"),
            if shown == 0 { from } else { from + 1 },
            from + shown,
            l.t("hosts_of"),
            task.hosts_total
        ));
        if from > 0 {
            let earlier = (from - HostWindow::PAGE).max(0);
            out.push_str(&format!(
                " <a href='?task={}&amp;from={earlier}#task'>{}</a>",
                task.index,
                l.t("earlier_hosts")
            ));
        }
        if from + shown < task.hosts_total {
            out.push_str(&format!(
                " <a href='?task={}&amp;from={}#task'>{}</a>",
                task.index,
                from + shown,
                l.t("later_hosts")
            ));
        }
        out.push_str("</p>");
    }
    out
}

async fn run_page(
    State(s): State<AppState>,
    headers: HeaderMap,
    Path(apply_id): Path<String>,
    Query(q): Query<PageQuery>,
) -> Response {
    let (l, set) = lang(&headers, &q);
    if signed_in(&s, &headers).await.is_none() {
        return with_cookie(set, Redirect::to("/ui/login"));
    }
    let run = match s.store.run(&apply_id).await {
        Ok(Some(run)) => run,
        Ok(None) => {
            let body = format!("<p>{}: {}</p>", l.t("error"), escape(&apply_id));
            return with_cookie(
                set,
                (StatusCode::NOT_FOUND, Html(page(l, l.t("run"), &body, true, ""))),
            );
        }
        Err(e) => {
            let body = format!("<p>{}: {}</p>", l.t("error"), escape(&e.to_string()));
            return with_cookie(set, Html(page(l, l.t("run"), &body, true, "")));
        }
    };
    // The task list needs each task's counts only; the chosen task, one page of its hosts.
    let tasks = s.store.tasks(&apply_id, HostWindow::none(), None).await.unwrap_or_default();
    let from = q.from.unwrap_or(0).max(0);
    let chosen = match q.task {
        Some(index) => {
            let window = HostWindow { offset: from, limit: HostWindow::PAGE };
            s.store.tasks(&apply_id, window, Some(index)).await.unwrap_or_default().pop()
        }
        None => None,
    };
    let mut body = format!(
        "<h2>{} <code id=apply-id>{}</code> {}</h2><table id=header><tr><th>{}</th><td>{}</td>\
         <th>{}</th><td>{}</td></tr><tr><th>{}</th><td>{}</td><th>{}</th><td>{}</td></tr><tr>\
         <th>{}</th><td>{}</td><th>{}</th><td>{}</td></tr><tr><th>{}</th><td colspan=3>{}</td>\
         </tr></table>",
        l.t("run"),
        escape(&run.apply_id),
        badge(run.status.as_str()),
        l.t("incarnation"),
        escape(run.incarnation.as_deref().unwrap_or("—")),
        l.t("playbook"),
        escape(&run.playbook),
        l.t("started_by"),
        escape(&run.started_by),
        l.t("queued"),
        time(Some(run.queued_at)),
        l.t("started"),
        time(run.started_at),
        l.t("finished"),
        time(run.finished_at),
        l.t("recap"),
        recap_text(run.recap.as_ref()),
    );
    if let Some(error) = &run.error {
        body.push_str(&format!(
            "<p><strong>{}</strong>: </p><pre>{}</pre>",
            l.t("error"),
            escape(error)
        ));
    }
    let live = !run.status.is_final();
    if live {
        body.push_str(&format!("<p id=live>{}</p>", l.t("live")));
    }
    body.push_str(&format!(
        "<h3>{}</h3><table id=tasks><tr><th>#</th><th>{}</th><th>{}</th><th>{}</th></tr>",
        l.t("tasks"),
        l.t("task"),
        l.t("module"),
        l.t("hosts")
    ));
    for t in &tasks {
        // One segment per status, as wide as its share of the task's hosts.
        let bar: String = t
            .host_counts
            .iter()
            .map(|(status, n)| {
                format!(
                    "<span class='s-{0}' style='flex:{1}' title='{0}: {1}'></span>",
                    escape(status),
                    n
                )
            })
            .collect();
        let chosen = if q.task == Some(t.index) { " class=chosen" } else { "" };
        let handler =
            if t.handler { format!(" <em>({})</em>", l.t("handler")) } else { String::new() };
        body.push_str(&format!(
            "<tr{chosen}><td>{i}</td><td><a href='?task={i}#task'>{name}</a>{handler}</td><td>\
             {module}</td><td><div class=bar>{bar}</div></td></tr>",
            i = t.index,
            name = escape(&t.name),
            module = escape(&t.module),
        ));
    }
    body.push_str("</table>");
    match &chosen {
        Some(task) => body.push_str(&task_detail(l, task, from)),
        None => body.push_str(&format!("<p>{}</p>", l.t("select_task"))),
    }
    let shown = s.store.transcript_tail(&apply_id, TRANSCRIPT_LINES).await.unwrap_or_default();
    let last = shown.last().map_or(0, |(seq, _)| *seq);
    body.push_str(&transcript_section(l, &run, &shown));
    // A live run's page follows its transcript line by line, and shows the whole run again
    // once it has ended (or, should the stream break, a moment later).
    let script = if !live {
        String::new()
    } else if let Some(name) = &run.incarnation {
        let base = format!("/v1/incarnations/{}/runs/{}", js_path(name), js_path(&run.apply_id));
        format!(
            "<script>addEventListener('load',()=>{{const p=document.getElementById(\
             'transcript');const ts=new EventSource('{base}/transcript?after={last}');ts.\
             addEventListener('line',e=>{{const d=JSON.parse(e.data);const s=document.\
             createElement('span');s.className={LINE_CLASS_JS};s.textContent=d+'\\n';p.\
             appendChild(s);p.scrollTop=p.scrollHeight}});ts.addEventListener('end',()=>{{ts.\
             close();location.reload()}});ts.onerror=()=>{{ts.close();setTimeout(()=>location.\
             reload(),2000)}}}})</script>"
        )
    } else {
        "<script>setTimeout(()=>location.reload(),2000)</script>".into()
    };
    with_cookie(
        set,
        Html(page(l, &format!("{} {}", l.t("run"), run.apply_id), &body, true, &script)),
    )
}

/// How many of a run's last transcript lines its page shows (the whole text is served at
/// `.../transcript`): a run of a thousand hosts prints tens of thousands.
const TRANSCRIPT_LINES: i64 = 500;

/// The class a transcript line is shown in, by what it says: the colours `tack playbook`
/// prints it in (ok green, changed yellow, failed and unreachable red, skipped cyan,
/// warnings purple), banners in bold.
fn line_class(line: &str) -> &'static str {
    let starts = |prefixes: &[&str]| prefixes.iter().any(|p| line.starts_with(p));
    if line.contains("UNREACHABLE!") {
        "t-unreachable"
    } else if starts(&["fatal:", "failed:", "[ERROR]"]) {
        "t-failed"
    } else if starts(&["changed:"]) {
        "t-changed"
    } else if starts(&["ok:"]) {
        "t-ok"
    } else if starts(&["skipping:", "...ignoring", "included:"]) {
        "t-skipped"
    } else if starts(&["[WARNING]", "[DEPRECATION WARNING]"]) {
        "t-warn"
    } else if starts(&["PLAY ", "TASK ", "RUNNING HANDLER ", "PLAY RECAP"]) {
        "t-banner"
    } else {
        ""
    }
}

/// [`line_class`] as a JavaScript expression over a line `d`, for lines that arrive while
/// the page is open.
const LINE_CLASS_JS: &str = "((d)=>{const a=x=>x.some(y=>d.startsWith(y));return d.includes(\
'UNREACHABLE!')?'t-unreachable':a(['fatal:','failed:','[ERROR]'])?'t-failed':a(['changed:'])\
?'t-changed':a(['ok:'])?'t-ok':a(['skipping:','...ignoring','included:'])?'t-skipped':a([\
'[WARNING]','[DEPRECATION WARNING]'])?'t-warn':a(['PLAY ','TASK ','RUNNING HANDLER ',\
'PLAY RECAP'])?'t-banner':''})(d)";

/// The run's transcript: its last [`TRANSCRIPT_LINES`] lines, each in its colour, with where
/// the whole text is when lines were left out.
fn transcript_section(l: Lang, run: &RunRecord, lines: &[(i64, String)]) -> String {
    let mut out = format!("<h3>{}</h3>", l.t("transcript"));
    if lines.first().is_some_and(|(seq, _)| *seq > 1) {
        let whole = match &run.incarnation {
            Some(name) => format!(
                " <a href='/v1/incarnations/{}/runs/{}/transcript'>{}</a>",
                escape(name),
                escape(&run.apply_id),
                l.t("whole_transcript")
            ),
            None => String::new(),
        };
        out.push_str(&format!("<p>{}{whole}</p>", l.t("transcript_tail")));
    }
    out.push_str("<pre id=transcript>");
    for (_, line) in lines {
        match line_class(line) {
            "" => out.push_str(&format!("<span>{}\n</span>", escape(line))),
            class => out.push_str(&format!("<span class={class}>{}\n</span>", escape(line))),
        }
    }
    out.push_str("</pre>");
    out
}

/// A path segment fit for a JavaScript string inside HTML: only the characters names and
/// ids are made of survive.
fn js_path(segment: &str) -> String {
    segment.chars().filter(|c| c.is_ascii_alphanumeric() || "._-".contains(*c)).collect()
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
        assert_eq!(js_path("web');alert(1)//"), "webalert1");
    }
}
