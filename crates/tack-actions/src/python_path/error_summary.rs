//! A module's `exception` as ansible's controller shows it: ansible-core's module code sends
//! an error summary (`{"__ansible_type": "ErrorSummary", "event": {...}}`), which ansible
//! turns into text for the result (its `error_summary` projection): the event's tracebacks,
//! children and causes included, when error tracebacks are on (`DISPLAY_TRACEBACK`, which
//! the module is told as `_ansible_tracebacks_for`), else `(traceback unavailable)`.
//!
//! Owns that text only; the result's other keys are `action`'s.

use serde_json::{Map, Value};
use tack_yaml::Mapping;

/// Replaces an error summary in `result["exception"]` by ansible's text for it.
pub(crate) fn project(result: &mut Mapping, tracebacks: bool) {
    let Some(exception) = result.get("exception") else { return };
    let Value::Object(summary) = crate::json::to_json(exception) else { return };
    if summary.get("__ansible_type").and_then(Value::as_str) != Some("ErrorSummary") {
        return;
    }
    let text = match (tracebacks, summary.get("event")) {
        (true, Some(Value::Object(event))) => traceback(event),
        _ => "(traceback unavailable)".to_string(),
    };
    result.insert(tack_report::result::s("exception"), tack_report::result::s(&text));
}

/// ansible's `format_event_traceback`: the event's traceback after those of the events it
/// was caused by, each with its sub-events' tracebacks boxed below it.
fn traceback(event: &Map<String, Value>) -> String {
    let mut segments: Vec<String> = Vec::new();
    let mut current = Some(event);
    while let Some(event) = current {
        let mut segment = event
            .get("formatted_traceback")
            .and_then(Value::as_str)
            .unwrap_or("(traceback missing)\n")
            .to_string();
        if let Some(Value::Array(children)) = event.get("events")
            && !children.is_empty()
        {
            let texts: Vec<String> =
                children.iter().filter_map(Value::as_object).map(traceback).collect();
            segment.push_str(&boxed("Sub-Traceback", &texts));
        }
        segments.push(segment);
        current = match event.get("chain") {
            Some(Value::Object(chain)) => {
                let reason = chain.get("traceback_reason").and_then(Value::as_str).unwrap_or("");
                segments.push(format!("\n{reason}\n\n"));
                chain.get("event").and_then(Value::as_object)
            }
            _ => None,
        };
    }
    segments.iter().rev().map(String::as_str).collect()
}

/// ansible's `_format_event_children`: each child's text in a numbered box.
fn boxed(label: &str, children: &[String]) -> String {
    let count = children.len();
    let mut out = String::from("\n");
    for (i, child) in children.iter().enumerate() {
        out.push_str(&format!("+--[ {label} {} of {count} ]---\n", i + 1));
        // `textwrap.indent` with a predicate that takes every line, blank ones included.
        for line in format!("\n{child}\n").split_inclusive('\n') {
            out.push_str("| ");
            out.push_str(line);
        }
    }
    out.push_str(&format!("+--[ End {label} ]---\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn projected(exception: Value, tracebacks: bool) -> Value {
        let mut result = Mapping::new();
        result.insert(tack_report::result::s("exception"), crate::json::from_json(&exception));
        project(&mut result, tracebacks);
        crate::json::to_json(result.get("exception").unwrap())
    }

    #[test]
    fn without_tracebacks_the_summary_is_unavailable() {
        let summary = json!({"__ansible_type": "ErrorSummary", "event": {"msg": "boom"}});
        assert_eq!(projected(summary, false), "(traceback unavailable)");
    }

    #[test]
    fn a_text_exception_stays_as_the_module_sent_it() {
        assert_eq!(projected(json!("Traceback ..."), true), "Traceback ...");
    }

    #[test]
    fn causes_come_first_and_children_are_boxed() {
        let summary = json!({"__ansible_type": "ErrorSummary", "event": {
            "msg": "outer",
            "formatted_traceback": "TB outer\n",
            "events": [{"msg": "child", "formatted_traceback": "TB child\n"}],
            "chain": {"traceback_reason": "The above was the cause:", "event": {"msg": "inner"}},
        }});
        assert_eq!(
            projected(summary, true),
            "(traceback missing)\n\nThe above was the cause:\n\nTB outer\n\n\
             +--[ Sub-Traceback 1 of 1 ]---\n| \n| TB child\n| \n+--[ End Sub-Traceback ]---\n"
        );
    }
}
