//! A module's result dictionary as the task's output, the way ansible's executor reads one:
//! the `stdout_lines`/`stderr_lines` it adds, `changed: false` when the module did not say,
//! and a failure's error line with the causes ansible-core's modules chain.

use tack_diag::Diagnostic;

use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;

/// The task's output for a module's result dictionary: the lines ansible's executor adds,
/// `changed: false` when the module did not say, and the failure when it failed (with the
/// executor's place-holder traceback when `traceback` and the module sent none).
pub(crate) fn from_result(
    input: &ActionInput<'_>,
    result: &tack_agent::ModuleResult,
    traceback: bool,
) -> ActionOutput {
    let mut data = json::map_from_json(result);
    let deprecated_values = crate::module_tags::untag(&mut data);
    add_lines(&mut data);
    let warning_blocks = plain_warnings(&mut data);
    let deprecations = plain_deprecations(&mut data);
    // ansible's executor says `changed: false` for a module that did not say.
    if data.get("changed").is_none() {
        data.insert(tack_report::result::s("changed"), tack_report::result::b(false));
    }
    let failed = data.get("failed").is_some_and(|f| f.value.is_truthy());
    let raised =
        if failed && data.get("msg").is_none() { raised_without_msg(&mut data) } else { None };
    let mut out = ActionOutput::new(data);
    if !warning_blocks.is_empty() || !deprecations.is_empty() || !deprecated_values.is_empty() {
        let notes = out.notes_mut();
        notes.warning_blocks = warning_blocks;
        notes.deprecations = deprecations;
        notes.deprecated_values = deprecated_values;
    }
    if failed {
        // A failed module's result keeps the place of its traceback, which ansible's
        // executor fills with this text when the module sent none.
        if traceback && out.data.get("exception").is_none() {
            out.data.insert(
                tack_report::result::s("exception"),
                tack_report::result::s("(traceback unavailable)"),
            );
        }
        let msg = raised.unwrap_or_else(|| error_summary(&out.data));
        out.error = Some(Diagnostic::at(
            format!("Task failed: Module failed: {msg}"),
            input.task_origin.clone(),
        ));
    }
    out
}

/// A module that raised (an `exception` summary, no `msg`: ansible's `ping: data=crash`) is
/// given ansible's own error line as its `msg`, as ansible's executor does; the summary is
/// returned for that line.
fn raised_without_msg(data: &mut tack_yaml::Mapping) -> Option<String> {
    use tack_report::result::s;
    use tack_yaml::Node;
    let exception = data.get("exception").and_then(Node::as_map).cloned()?;
    let event = exception.get("event").and_then(Node::as_map)?;
    let mut raised = tack_yaml::Mapping::new();
    if let Some(msg) = event.get("msg") {
        raised.insert(s("msg"), msg.clone());
    }
    raised.insert(s("exception"), Node::bare(tack_yaml::Value::Map(exception.clone())));
    let summary = error_summary(&raised);
    data.insert(s("msg"), s(&format!("Task failed: Module failed: {summary}")));
    // The summary stays in the result (a registered `exception` is defined, as ansible's);
    // the callback never shows it.
    Some(summary)
}

/// A module's answer read as an action plugin that ran it by name reads it: its warnings as
/// texts and its deprecations as `register` keeps them.
pub(crate) fn plain_summaries(data: &mut tack_yaml::Mapping) {
    crate::module_tags::untag(data);
    plain_warnings(data);
    plain_deprecations(data);
}

/// ansible's `warnings` of a module result are texts: a summary ansible-core's module code
/// sends (`{"__ansible_type": "WarningSummary", "event": {"msg": ...}}`) becomes its message.
/// Returns how ansible shows a summary whose event chains causes (its message, then each
/// cause), to go with the result.
fn plain_warnings(data: &mut tack_yaml::Mapping) -> Vec<Diagnostic> {
    use tack_yaml::{Node, Value};
    let Some(Value::Seq(items)) = data.get("warnings").map(|n| n.value.clone()) else {
        return Vec::new();
    };
    let mut blocks = Vec::new();
    let texts: Vec<Node> = items
        .into_iter()
        .map(|item| {
            let event = item
                .as_map()
                .filter(|m| {
                    m.get("__ansible_type").and_then(Node::as_str) == Some("WarningSummary")
                })
                .and_then(|m| m.get("event"))
                .and_then(Node::as_map);
            let Some(msg) = event.and_then(|e| e.get("msg")).cloned() else { return item };
            if let Some(block) = event.and_then(chained) {
                blocks.push(block);
            }
            msg
        })
        .collect();
    data.insert(tack_report::result::s("warnings"), Node::bare(Value::Seq(texts)));
    blocks
}

/// An event with the causes it chains and follows, as ansible shows it (`None` without any).
fn chained(event: &tack_yaml::Mapping) -> Option<Diagnostic> {
    use tack_yaml::Node;
    let text = |e: &tack_yaml::Mapping| {
        e.get("msg").map(|m| tack_yaml::pyrepr::str(&m.value)).unwrap_or_default()
    };
    let chain = event.get("chain").and_then(Node::as_map)?;
    if chain.get("follow").is_some_and(|f| !f.value.is_truthy()) {
        return None;
    }
    let cause_event = chain.get("event").and_then(Node::as_map)?;
    let mut cause = chained(cause_event).unwrap_or_else(|| Diagnostic::new(text(cause_event)));
    // ansible's formatter keeps a cause on its own when the cause's own chain (followed or
    // not) gives another reason than the one that leads to it.
    let reason = |c: &tack_yaml::Mapping| c.get("msg_reason").map(|r| r.value.clone());
    if let Some(own) = cause_event.get("chain").and_then(Node::as_map)
        && reason(own) != reason(chain)
    {
        cause.raised_while_handling = true;
    }
    Some(Diagnostic::caused_by(text(event), None, cause))
}

/// ansible's `deprecations` of a module result as `register` keeps them: a summary
/// ansible-core's module code sends (`{"__ansible_type": "DeprecationSummary", "event":
/// {"msg": ..., "help_text": ...}, "deprecator": {"resolved_name": ..., "type": ...},
/// "version"|"date": ...}`) becomes `{msg, collection_name, date|version, deprecator:
/// {resolved_name, type}}` (`deprecation_as_dict`). Returns each of the list's deprecations as
/// it is shown, the summary's help text after its message.
fn plain_deprecations(data: &mut tack_yaml::Mapping) -> Vec<tack_diag::RecordedDeprecation> {
    use tack_yaml::{Node, Value};
    let Some(Value::Seq(items)) = data.get("deprecations").map(|n| n.value.clone()) else {
        return Vec::new();
    };
    let mut shown = Vec::with_capacity(items.len());
    let plain: Vec<Node> = items
        .into_iter()
        .map(|item| {
            let Some(summary) = item.as_map().filter(|m| {
                m.get("__ansible_type").and_then(Node::as_str) == Some("DeprecationSummary")
            }) else {
                // A module of before ansible 2.19 says it as the dict itself.
                let what = item.as_map().map(tack_report::result::deprecation_of);
                let what = what.unwrap_or_else(|| tack_diag::Deprecated {
                    msg: tack_yaml::pyrepr::str(&item.value),
                    help: None,
                    version: None,
                    date: None,
                    deprecator: tack_diag::Deprecator::default(),
                });
                shown.push(recorded(what));
                return item;
            };
            let event = summary.get("event").and_then(Node::as_map);
            let mut fields = tack_yaml::Mapping::new();
            for (key, value) in [
                ("msg", event.and_then(|e| e.get("msg"))),
                ("help_text", event.and_then(|e| e.get("help_text"))),
                ("version", summary.get("version")),
                ("date", summary.get("date")),
                ("deprecator", summary.get("deprecator")),
            ] {
                if let Some(value) = value {
                    fields.insert(tack_report::result::s(key), value.clone());
                }
            }
            let what = crate::module_tags::deprecated(&fields);
            let entry = tack_report::result::deprecation_entry(&what);
            shown.push(recorded(what));
            entry
        })
        .collect();
    data.insert(tack_report::result::s("deprecations"), Node::bare(Value::Seq(plain)));
    shown
}

/// A deprecation a result brought, as the callback shows it.
fn recorded(what: tack_diag::Deprecated) -> tack_diag::RecordedDeprecation {
    let mut shown = Diagnostic::new(what.text());
    shown.help = what.help.clone();
    tack_diag::RecordedDeprecation { what, shown }
}

/// A failed module's message as ansible's error line shows it (`format_event_brief_message`):
/// `msg`, then the message of each cause its `exception` chains and follows (ansible-core's
/// modules send them), each joined after `: ` with the trailing `.` and spaces of the part
/// before it dropped, and a part that already ends with what follows it standing alone.
pub(crate) fn error_summary(result: &tack_yaml::Mapping) -> String {
    use tack_yaml::Node;
    let text = |n: Option<&Node>| n.map(|n| tack_yaml::pyrepr::str(&n.value));
    let mut parts = vec![text(result.get("msg")).unwrap_or_default()];
    let mut event = result
        .get("exception")
        .and_then(Node::as_map)
        .and_then(|e| e.get("event"))
        .and_then(Node::as_map);
    while let Some(chain) = event.and_then(|e| e.get("chain")).and_then(Node::as_map) {
        if chain.get("follow").is_some_and(|f| !f.value.is_truthy()) {
            break;
        }
        let Some(cause) = chain.get("event").and_then(Node::as_map) else { break };
        parts.push(text(cause.get("msg")).unwrap_or_default());
        event = Some(cause);
    }
    let mut parts = parts.into_iter().rev();
    let mut message = parts.next().unwrap_or_default();
    for part in parts {
        message = if part.ends_with(&message) {
            part
        } else {
            format!("{}: {message}", part.trim_end_matches(['.', ' ']))
        };
    }
    message
}

/// ansible's task executor adds `stdout_lines`/`stderr_lines` to any result with `stdout`/
/// `stderr` text that lacks them.
fn add_lines(data: &mut tack_yaml::Mapping) {
    for (text, lines) in [("stdout", "stdout_lines"), ("stderr", "stderr_lines")] {
        if data.get(lines).is_some() {
            continue;
        }
        let Some(tack_yaml::Value::Str(value)) = data.get(text).map(|n| n.value.clone()) else {
            continue;
        };
        let list = tack_py::text::splitlines(&value)
            .into_iter()
            .map(|l| tack_yaml::Node::bare(tack_yaml::Value::Str(l.to_string())))
            .collect();
        data.insert(
            tack_yaml::Node::bare(tack_yaml::Value::Str(lines.to_string())),
            tack_yaml::Node::bare(tack_yaml::Value::Seq(list)),
        );
    }
}
