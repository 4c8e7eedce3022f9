//! The index page: every incarnation (each a link to its own page) and every run.

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::Value;

use super::{PageQuery, badge, escape, signed, time};
use crate::api::AppState;
use crate::drift::Drift;
use crate::store::RunRecord;
use crate::tokens::Role;
use crate::web_text::Lang;

pub(super) fn runs_table(l: Lang, runs: &[RunRecord]) -> String {
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

pub(super) fn recap_text(recap: Option<&Value>) -> String {
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

pub(super) async fn index(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<PageQuery>,
) -> Response {
    let signed = match signed(&s, &headers, &q).await {
        Ok(signed) => signed,
        Err(to_login) => return to_login,
    };
    let l = signed.l;
    let read = (s.store.incarnations().await, s.store.runs(None).await, s.store.drifts().await);
    let (incarnations, runs, drifts) = match read {
        (Ok(i), Ok(r), Ok(d)) => (i, r, d),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            return signed.error(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string());
        }
    };
    let mut body = format!("<h2>{}</h2>", l.t("incarnations"));
    if incarnations.is_empty() {
        body.push_str(&format!("<p>{}</p>", l.t("no_incarnations")));
    } else {
        body.push_str(&format!(
            "<table id=incarnations><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>",
            l.t("name"),
            l.t("playbook"),
            l.t("mode"),
            l.t("drift"),
        ));
        for i in &incarnations {
            let drift = drifts.iter().find(|d| d.incarnation == i.name);
            body.push_str(&format!(
                "<tr data-incarnation='{name}'><td><a href='/ui/incarnations/{name}'>{name}</a>\
                 </td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&i.playbook),
                i.mode.as_str(),
                drift_mark(l, drift),
                name = escape(&i.name),
            ));
        }
        body.push_str("</table>");
    }
    if signed.session.caller.role >= Role::Admin {
        body.push_str(&format!(
            "<p><a id=new-incarnation href=/ui/new-incarnation>{}</a></p>",
            l.t("new_incarnation")
        ));
    }
    body.push_str(&format!("<h2>{}</h2>{}", l.t("runs"), runs_table(l, &runs)));
    signed.page(StatusCode::OK, l.t("title"), &body, "")
}

/// An incarnation's drift at a glance: the mark and how many host and task pairs would change.
pub(super) fn drift_mark(l: Lang, drift: Option<&Drift>) -> String {
    match drift {
        Some(d) => format!(
            "<span class='badge s-drifted' title='{}'>{}: {}</span>",
            escape(&d.apply_id),
            l.t("drifted"),
            d.changes.len()
        ),
        None => "—".to_string(),
    }
}

/// What the scheduled run that found the drift would change, host by host and task by task.
pub(super) fn drift_section(l: Lang, drift: Option<&Drift>) -> String {
    let Some(d) = drift else { return String::new() };
    let mut out = format!(
        "<h3>{}</h3><p id=drifted>{} <a href='/ui/runs/{id}'>{id}</a> ({})</p><table id=drift>\
         <tr><th>{}</th><th>{}</th><th>{}</th></tr>",
        l.t("drift"),
        l.t("drift_found_by"),
        time(Some(d.detected_at)),
        l.t("host"),
        l.t("task"),
        l.t("outcome"),
        id = escape(&d.apply_id),
    );
    for c in &d.changes {
        out.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&c.host),
            escape(&c.task),
            escape(&c.outcome)
        ));
    }
    out.push_str("</table>");
    out
}
