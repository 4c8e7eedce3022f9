//! A run's page: its header, its tasks (a coloured bar of results per task), a chosen task's
//! parameters and every host's result and own input, its transcript (followed live while it
//! runs), and, for operators, the button that cancels it.

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::index::recap_text;
use super::{PageQuery, badge, escape, form_token_input, signed, time};
use crate::api::AppState;
use crate::store::{HostWindow, RunRecord, TaskRecord};
use crate::tokens::Role;
use crate::web_text::Lang;

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

pub(super) async fn run_page(
    State(s): State<AppState>,
    headers: HeaderMap,
    Path(apply_id): Path<String>,
    Query(q): Query<PageQuery>,
) -> Response {
    let signed = match signed(&s, &headers, &q).await {
        Ok(signed) => signed,
        Err(to_login) => return to_login,
    };
    let l = signed.l;
    let run = match s.store.run(&apply_id).await {
        Ok(Some(run)) => run,
        Ok(None) => return signed.error(StatusCode::NOT_FOUND, &apply_id),
        Err(e) => return signed.error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
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
        // A run the server queued can be cancelled from here (a command-line run is its
        // process's to stop).
        if signed.session.caller.role >= Role::Operator && run.incarnation.is_some() {
            body.push_str(&format!(
                "<form id=cancel method=post action='/ui/runs/{}/cancel'>{}<button>{}</button>\
                 </form>",
                escape(&run.apply_id),
                form_token_input(&signed.session),
                l.t("cancel_run")
            ));
        }
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
    signed.page(StatusCode::OK, &format!("{} {}", l.t("run"), run.apply_id), &body, &script)
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
    fn path_segments_keep_only_name_characters() {
        assert_eq!(js_path("web');alert(1)//"), "webalert1");
    }
}
