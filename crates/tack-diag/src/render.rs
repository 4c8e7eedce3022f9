//! Rendering a [`Diagnostic`] and its causes the way ansible-core 2.21's event formatter does:
//! a cause with no position or help of its own folds into its parent's line (`outer: inner`);
//! one that has them gets its own segment after a `<<< caused by >>>` marker, and the block
//! then opens with the whole chain on one line.

use crate::{Diagnostic, excerpt};

const CAUSED_BY: &str = "<<< caused by >>>";

/// `Origin: ...` followed by the excerpt, or nothing when the diagnostic has no origin.
fn source_context(d: &Diagnostic) -> Option<String> {
    let origin = d.origin.as_ref()?;
    let mut text = format!("Origin: {origin}");
    if let Some(value) = &d.value_repr {
        text.push_str("\n\n");
        text.push_str(&tack_py::textwrap::shorten(value, 120));
    } else if let Some(lines) = excerpt(origin) {
        text.push_str("\n\n");
        text.push_str(lines.trim_end_matches('\n'));
    }
    Some(text)
}

/// Joins messages outermost first, dropping an outer message that already ends with the inner
/// one, and trimming `.`/spaces before each `: `.
fn join_messages(messages: &[&str]) -> String {
    let mut parts = messages.iter().rev();
    let Some(first) = parts.next() else { return String::new() };
    let mut joined = first.to_string();
    for part in parts {
        joined = if part.ends_with(joined.as_str()) {
            part.to_string()
        } else {
            format!("{}: {joined}", part.trim_end_matches(['.', ' ']))
        };
    }
    joined
}

pub(crate) fn brief(d: &Diagnostic) -> String {
    let mut messages = vec![d.message.as_str()];
    let mut cur = d;
    while let Some(cause) = &cur.cause {
        messages.push(&cause.message);
        cur = cause;
    }
    join_messages(&messages)
}

fn message_lines(message: &str, help: Option<&str>, context: Option<&str>) -> String {
    if let (Some(help), None) = (help, context)
        && !message.contains('\n')
        && !help.contains('\n')
    {
        return format!("{message} {help}");
    }
    let mut lines = vec![message.to_string()];
    if let Some(context) = context {
        lines.push(context.to_string());
    }
    if let Some(help) = help {
        lines.push(String::new());
        lines.push(help.to_string());
    }
    lines.join("\n")
}

fn verbose(d: &Diagnostic) -> String {
    if let Some(events) = &d.sub_events {
        return group(&d.message, events);
    }
    let mut segments = Vec::new();
    let mut event = Some(d);
    while let Some(cur) = event {
        // A cause that groups errors of its own is its own segment: its message and each of
        // them framed.
        if let Some(events) = &cur.sub_events {
            segments.push(group(&cur.message, events));
            if cur.cause.is_some() {
                segments.push(format!("\n{CAUSED_BY}\n\n"));
            }
            event = cur.cause.as_deref();
            continue;
        }
        let context = source_context(cur);
        let mut messages = vec![cur.message.as_str()];
        let mut next = cur.cause.as_deref();
        // Fold causes that add nothing but their message.
        while let Some(cause) = next {
            if cause.sub_events.is_some() {
                break;
            }
            let cause_context = source_context(cause);
            if (cause_context.is_some() || cause.help.is_some())
                && (cause_context != context || cause.help != cur.help)
            {
                break;
            }
            if cause.raised_while_handling {
                break;
            }
            messages.push(&cause.message);
            next = cause.cause.as_deref();
        }
        let msg = join_messages(&messages);
        segments.push(message_lines(&msg, cur.help.as_deref(), context.as_deref()) + "\n");
        if next.is_some() {
            segments.push(format!("\n{CAUSED_BY}\n\n"));
        }
        event = next;
    }
    if segments.len() > 1 {
        segments.insert(0, format!("{}\n\n", brief(d)));
    }
    segments.concat()
}

/// An exception group: its message, then each error framed as ansible's event formatter
/// frames a sub-event (every line behind `| `).
fn group(message: &str, events: &[Diagnostic]) -> String {
    let total = events.len();
    let mut out = format!("{message}\n\n");
    for (n, sub) in events.iter().enumerate() {
        out.push_str(&format!("+--[ Sub-Event {} of {total} ]---\n| \n", n + 1));
        let body = verbose(sub);
        let body = body.trim_end_matches('\n');
        for line in body.split('\n') {
            out.push_str(&format!("| {line}\n"));
        }
        out.push_str("| \n+--[ End Sub-Event ]---\n");
    }
    out
}

/// What follows `[ERROR]: ` or `[WARNING]: `: the verbose message, then one newline for a
/// one-line message or a blank line after a block.
pub(crate) fn block_body(d: &Diagnostic) -> String {
    let msg = verbose(d);
    let msg = msg.trim();
    if msg.contains('\n') { format!("{msg}\n\n") } else { format!("{msg}\n") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Origin;
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn one_line_error() {
        let d = Diagnostic::new("the playbook: nonexist.yml could not be found");
        assert_eq!(d.render(), "[ERROR]: the playbook: nonexist.yml could not be found\n");
    }

    #[test]
    fn cause_with_its_own_origin_gets_a_segment() {
        // Measured from ansible-core 2.21.5: a vars_files entry that is encrypted, no secrets.
        let path: Arc<Path> = Arc::from(Path::new("/nonexistent/v.yml"));
        let cause = Diagnostic::at(
            "Attempting to decrypt but no vault secrets found.",
            Some(Origin::file(path)),
        );
        let d = Diagnostic::caused_by("Invalid vars_files file '/nonexistent/v.yml'.", None, cause);
        assert_eq!(
            d.render(),
            "[ERROR]: Invalid vars_files file '/nonexistent/v.yml': Attempting to decrypt but no \
             vault secrets found.\n\nInvalid vars_files file '/nonexistent/v.yml'.\n\n\
             <<< caused by >>>\n\nAttempting to decrypt but no vault secrets found.\n\
             Origin: /nonexistent/v.yml\n\n"
        );
    }

    #[test]
    fn plain_causes_fold_into_one_line() {
        let d = Diagnostic::caused_by("outer.", None, Diagnostic::new("inner"));
        assert_eq!(d.render(), "[ERROR]: outer: inner\n");
        let d = Diagnostic::caused_by("failed: inner", None, Diagnostic::new("inner"));
        assert_eq!(d.brief(), "failed: inner");
    }

    #[test]
    fn a_cause_grouping_errors_is_a_segment_with_them_framed() {
        // Measured from ansible-core 2.21.5: a `gather_facts` task whose fact module failed.
        let mut cause = Diagnostic::new("The following modules failed to execute: m.");
        cause.sub_events = Some(Box::new(vec![Diagnostic::new("no facts today")]));
        let d = Diagnostic::caused_by("Task failed: Action failed.", None, cause);
        assert_eq!(
            d.render(),
            "[ERROR]: Task failed: Action failed: The following modules failed to execute: m.\n\n\
             Task failed: Action failed.\n\n<<< caused by >>>\n\n\
             The following modules failed to execute: m.\n\n\
             +--[ Sub-Event 1 of 1 ]---\n| \n| no facts today\n| \n+--[ End Sub-Event ]---\n\n"
        );
    }

    #[test]
    fn help_without_context_joins_the_line() {
        let d = Diagnostic::new("bad thing.").with_help("Do this instead.");
        assert_eq!(d.render(), "[ERROR]: bad thing. Do this instead.\n");
    }

    #[test]
    fn deprecation_block() {
        // Measured from ansible-core 2.21.5 with `jinja2_extensions` set in ansible.cfg.
        let d = Diagnostic::new(
            "DEFAULT_JINJA2_EXTENSIONS option. Reason: Jinja2 extensions have been deprecated\n\
             Alternatives: Ansible-supported Jinja plugins (tests, filters, lookups). This \
             feature will be removed from ansible-core version 2.23.",
        );
        assert_eq!(
            d.render_deprecation(),
            "[DEPRECATION WARNING]: DEFAULT_JINJA2_EXTENSIONS option. Reason: Jinja2 extensions \
             have been deprecated\nAlternatives: Ansible-supported Jinja plugins (tests, filters, \
             lookups). This feature will be removed from ansible-core version 2.23.\n\n"
        );
    }
}
