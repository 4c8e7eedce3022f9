//! The stdout callbacks ansible's ad-hoc command uses: `minimal` (its default: one
//! `host | STATE => {json}` block per host, or `host | STATE | rc=N >>` and the command's
//! output for the command-like modules) and `oneline` (`-o`: the same on one line per host).
//!
//! Both show only results: no banners, no recap. They never decide anything about a result;
//! the outcome comes from the engine as it does for the default callback.

use std::io::Write;

use tack_diag::Diagnostic;
use tack_yaml::{JsonOptions, Mapping};

use super::color::{Hue, Palette};
use super::default::{clean, dump_result_with, warnings};
use super::{Callback, Stats, TaskView};
use crate::result::{HostResult, Outcome};

/// `C.MODULE_NO_JSON`: modules whose result is shown as their output rather than as JSON.
const NO_JSON: &[&str] = &["command", "shell", "raw", "win_command", "win_shell"];

/// Which of the two layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Minimal,
    OneLine,
}

/// The task ansible's ad-hoc command builds has no file: its errors show a description
/// (`<adhoc 'command' task>`) and the task's data as Python shows it.
#[derive(Debug, Clone)]
pub struct AdhocOrigin {
    pub description: String,
    /// The module as `-m` named it.
    pub module: String,
    pub repr: String,
}

pub struct MinimalCallback<W: Write> {
    out: W,
    layout: Layout,
    verbosity: u8,
    origin: Option<AdhocOrigin>,
    shown_errors: std::collections::HashSet<String>,
    /// `--tree`: ansible's `tree` callback beside this one.
    tree: Option<super::tree::TreeWriter>,
    /// `-D`: the diff context, when diffs are shown.
    diff_context: Option<usize>,
    /// The colours, `None` when output is plain.
    palette: Option<Palette>,
}

impl<W: Write> MinimalCallback<W> {
    pub fn new(out: W, layout: Layout, verbosity: u8) -> MinimalCallback<W> {
        MinimalCallback {
            out,
            layout,
            verbosity,
            origin: None,
            shown_errors: Default::default(),
            tree: None,
            diff_context: None,
            palette: None,
        }
    }

    /// The callback showing its lines in `palette`'s colours.
    pub fn with_palette(mut self, palette: Option<Palette>) -> MinimalCallback<W> {
        self.palette = palette;
        self
    }

    pub fn with_tree(mut self, tree: super::tree::TreeWriter) -> MinimalCallback<W> {
        self.tree = Some(tree);
        self
    }

    /// Shows file diffs (`-D`) with `context` lines around each change.
    pub fn with_diffs(mut self, context: usize) -> MinimalCallback<W> {
        self.diff_context = Some(context);
        self
    }

    pub fn with_origin(mut self, origin: AdhocOrigin) -> MinimalCallback<W> {
        self.origin = Some(origin);
        self
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    /// `Display.display(text, color=...)`: one trailing newline taken off, the rest in
    /// `hue`'s colour (if any) when output is coloured, a newline after.
    fn line(&mut self, text: &str, hue: Option<Hue>) {
        // As in the default callback: a closed stdout is the exit status's business.
        tack_diag::display_log::record(tack_diag::display_log::Level::Info, text);
        let code = self.palette.as_ref().zip(hue).map(|(p, hue)| p.code(hue));
        let _ = self.out.write_all(tack_diag::color::display_text(text, code).as_bytes());
    }

    /// `_handle_warnings_and_exception`: the module's warnings, then the error block.
    fn warnings_and_error(&mut self, result: &HostResult) {
        warnings(result);
        let Some(diag) = &result.error else { return };
        let mut diag = diag.clone();
        if let Some(origin) = &self.origin {
            fill_value_repr(&mut diag, origin);
        }
        let text = diag.render();
        if !self.shown_errors.insert(text.clone()) {
            return;
        }
        tack_diag::display_log::record(tack_diag::display_log::Level::Error, &text);
        let code = self.palette.as_ref().map(|p| p.error.as_str());
        let _ = self.out.write_all(tack_diag::color::display_text(&text, code).as_bytes());
    }

    /// `_dump_results`: `indent` as the callback asks, four when the result is always shown
    /// or from `-vvv`; the one-line layout then drops the newlines.
    fn dump(&self, data: &Mapping, result: &HostResult, indent: usize) -> String {
        let indent =
            if indent == 0 && (result.verbose_always || self.verbosity > 2) { 4 } else { indent };
        let text = dump_result_with(data, JsonOptions::indented(indent, true), self.verbosity);
        match self.layout {
            Layout::Minimal => text,
            Layout::OneLine => text.replace('\n', ""),
        }
    }

    /// `_command_generic_msg` of each layout.
    fn command_msg(&self, host: &str, data: &Mapping, caption: &str) -> String {
        let rc = data.get("rc").map(|v| tack_yaml::pyrepr::str(&v.value)).unwrap_or("-1".into());
        let text = |key: &str| data.get(key).map(|v| tack_yaml::pyrepr::str(&v.value));
        match self.layout {
            Layout::Minimal => {
                let mut buf = format!("{host} | {caption} | rc={rc} >>\n");
                for key in ["stdout", "stderr", "msg"] {
                    buf.push_str(&text(key).unwrap_or_default());
                }
                buf
            }
            Layout::OneLine => {
                let flat = |s: String| s.replace('\n', "\\n").replace('\r', "\\r");
                let stdout = flat(text("stdout").unwrap_or_default());
                match text("stderr").filter(|s| !s.is_empty()) {
                    Some(stderr) => format!(
                        "{host} | {caption} | rc={rc} | (stdout) {stdout} (stderr) {}",
                        flat(stderr)
                    ),
                    None => format!("{host} | {caption} | rc={rc} | (stdout) {stdout}"),
                }
            }
        }
    }

    fn failed(&mut self, task: &TaskView, result: &HostResult) {
        let host = result.host.clone();
        let no_json = is_no_json(task);
        match self.layout {
            Layout::Minimal => {
                self.warnings_and_error(result);
                let msg = if no_json && result.data.get("module_stderr").is_none() {
                    self.command_msg(&host, &result.data, "FAILED")
                } else {
                    format!("{host} | FAILED! => {}", self.dump(&result.data, result, 4))
                };
                self.line(&msg, Some(Hue::Error));
            }
            Layout::OneLine => {
                // tack's failures that carry an error are the ones ansible's results carry an
                // `exception` for; the traceback itself is never available.
                if result.error.is_some() {
                    let msg = if no_json && result.data.get("module_stderr").is_none() {
                        self.command_msg(&host, &result.data, "FAILED")
                    } else {
                        "An exception occurred during task execution. To see the full \
                         traceback, use -vvv. The error was: (traceback unavailable)"
                            .to_string()
                    };
                    self.line(&msg, Some(Hue::Error));
                }
                let dump = self.dump(&result.data, result, 0);
                self.line(&format!("{host} | FAILED! => {dump}"), Some(Hue::Error));
            }
        }
    }

    fn ok(&mut self, task: &TaskView, result: &HostResult) {
        let host = result.host.clone();
        let data = match self.layout {
            Layout::Minimal => {
                self.warnings_and_error(result);
                clean(task, result, &result.data)
            }
            Layout::OneLine => result.data.clone(),
        };
        let (state, hue) =
            if result.flag("changed") { ("CHANGED", Hue::Changed) } else { ("SUCCESS", Hue::Ok) };
        let msg = if is_no_json(task) && data.get("ansible_job_id").is_none() {
            self.command_msg(&host, &data, state)
        } else {
            let indent = if self.layout == Layout::Minimal { 4 } else { 0 };
            format!("{host} | {state} => {}", self.dump(&data, result, indent))
        };
        self.line(&msg, Some(hue));
    }
}

fn is_no_json(task: &TaskView) -> bool {
    tack_playbook::tables::actions::is(&task.action, NO_JSON)
}

/// The origin ansible gives the ad-hoc task's action name.
const CLI_M: &str = "<CLI option '-m'>";

/// Gives every error in the chain that points at the ad-hoc task the task's data to show.
fn fill_value_repr(diag: &mut Diagnostic, origin: &AdhocOrigin) {
    let mut cur = Some(diag);
    while let Some(d) = cur {
        let at_task = d.origin.as_ref().is_some_and(|o| {
            o.path.is_none() && o.description.as_deref() == Some(origin.description.as_str())
        });
        if at_task && d.value_repr.is_none() {
            d.value_repr = Some(origin.repr.as_str().into());
        }
        // ansible positions the argument-finalization step at the action's name, which for
        // this task came from `-m`; the engine's chain leaves that step unpositioned.
        if d.origin.is_none() && d.message.starts_with("Finalization of task args for ") {
            d.origin = Some(tack_diag::Origin::described(CLI_M));
        }
        let at_module = d
            .origin
            .as_ref()
            .is_some_and(|o| o.path.is_none() && o.description.as_deref() == Some(CLI_M));
        if at_module && d.value_repr.is_none() {
            d.value_repr = Some(origin.module.as_str().into());
        }
        cur = d.cause.as_deref_mut();
    }
}

impl<W: Write> Callback for MinimalCallback<W> {
    fn play_start(&mut self, _name: &str) {}
    fn no_hosts_matched(&mut self) {}
    // ansible's minimal callback shows neither retries nor the end of hosts.
    fn no_hosts_remaining(&mut self) {}
    fn retry(&mut self, _task: &TaskView, _result: &HostResult) {}
    fn playbook_start(&mut self, _playbook: &tack_playbook::Playbook, _first: bool) {}
    // The executor's own lines (`display.vv`) and actions' announcements are shown whatever
    // the callback.
    fn verbose_line(&mut self, level: u8, msg: &str) {
        if self.verbosity >= level {
            self.line(msg, Some(Hue::Verbose));
        }
        tack_diag::display_log::verbose(level, msg);
    }
    fn display(&mut self, text: &str) {
        self.line(text, None);
    }
    fn task_start(&mut self, _task: &TaskView) {}
    fn included(&mut self, _file: &str, _hosts: &[String], _item: Option<&str>) {}
    fn handler_start(&mut self, _task: &TaskView) {}

    fn host_result(&mut self, task: &TaskView, result: &HostResult) {
        // A hidden result shows only what `no_log` keeps (`include_vars` of a vault).
        let censored;
        let result = if result.no_log {
            let mut hidden = result.clone();
            hidden.data = crate::no_log::shown(result);
            censored = hidden;
            &censored
        } else {
            result
        };
        match result.outcome() {
            Outcome::Failed => self.failed(task, result),
            Outcome::Unreachable => {
                if self.layout == Layout::Minimal {
                    self.warnings_and_error(result);
                }
                let text = match self.layout {
                    Layout::Minimal => {
                        let dump = self.dump(&result.data, result, 4);
                        format!("{} | UNREACHABLE! => {dump}", result.host)
                    }
                    // The one-line callback shows only the message.
                    Layout::OneLine => {
                        let msg = result.data.get("msg").map(|m| tack_yaml::pyrepr::str(&m.value));
                        format!("{} | UNREACHABLE!: {}", result.host, msg.unwrap_or_default())
                    }
                };
                self.line(&text, Some(Hue::Unreachable));
            }
            Outcome::Skipped => {
                if self.layout == Layout::Minimal {
                    self.warnings_and_error(result);
                }
                let msg = format!("{} | SKIPPED", result.host);
                self.line(&msg, Some(Hue::Skip));
            }
            Outcome::Ok | Outcome::Changed => self.ok(task, result),
        }
        if let Some(tree) = &self.tree
            && result.outcome() != Outcome::Skipped
        {
            tree.write(task, result);
        }
    }

    /// `minimal`'s `v2_on_file_diff`: any result with a diff shows it, changed or not (the
    /// one-line callback shows none).
    fn file_diff(&mut self, _task: &TaskView, result: &HostResult) {
        let Some(context) = self.diff_context.filter(|_| self.layout == Layout::Minimal) else {
            return;
        };
        let Some(diff) = result.data.get("diff").filter(|d| d.value.is_truthy()) else {
            return;
        };
        let text = super::diff::render_with(diff, context, self.palette.as_ref());
        let shown = super::diff::displayed(&text);
        tack_diag::display_log::record(tack_diag::display_log::Level::Info, &shown);
        let _ = self.out.write_all(shown.as_bytes());
    }

    // Neither callback shows loop items (ansible's base callback ignores them).
    fn item_result(&mut self, _task: &TaskView, _result: &HostResult) {}
    fn stats(&mut self, _stats: &Stats) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{b, s};
    use tack_yaml::Node;

    fn view(action: &str) -> TaskView {
        TaskView {
            name: action.into(),
            action: action.into(),
            looped: false,
            origin: None,
            check_mode: false,
        }
    }

    fn result(pairs: &[(&str, Node)]) -> HostResult {
        let mut data = Mapping::new();
        for (k, v) in pairs {
            data.insert(s(k), v.clone());
        }
        HostResult::new("web1", data)
    }

    fn shown(layout: Layout, task: &TaskView, r: &HostResult) -> String {
        let mut cb = MinimalCallback::new(Vec::new(), layout, 0);
        cb.host_result(task, r);
        String::from_utf8(cb.into_inner()).unwrap()
    }

    #[test]
    fn command_output_replaces_json() {
        let r = result(&[
            ("changed", b(true)),
            ("rc", Node::bare(tack_yaml::Value::Int(0))),
            ("stdout", s("a\nb")),
            ("stderr", s("")),
        ]);
        assert_eq!(
            shown(Layout::Minimal, &view("command"), &r),
            "web1 | CHANGED | rc=0 >>\na\nb\n"
        );
        assert_eq!(
            shown(Layout::OneLine, &view("ansible.builtin.shell"), &r),
            "web1 | CHANGED | rc=0 | (stdout) a\\nb\n"
        );
    }

    #[test]
    fn other_modules_dump_json() {
        let r = result(&[("changed", b(false)), ("ping", s("pong"))]);
        assert_eq!(
            shown(Layout::Minimal, &view("ping"), &r),
            "web1 | SUCCESS => {\n    \"changed\": false,\n    \"ping\": \"pong\"\n}\n"
        );
        assert_eq!(
            shown(Layout::OneLine, &view("ping"), &r),
            "web1 | SUCCESS => {\"changed\": false,\"ping\": \"pong\"}\n"
        );
    }

    #[test]
    fn invocation_is_dumped_from_three_vs() {
        let mut args = Mapping::new();
        args.insert(s("data"), s("pong"));
        let mut invocation = Mapping::new();
        invocation.insert(s("module_args"), Node::bare(tack_yaml::Value::Map(args)));
        let invocation = Node::bare(tack_yaml::Value::Map(invocation));
        let r = result(&[("changed", b(false)), ("invocation", invocation)]);
        let at = |verbosity| {
            let mut cb = MinimalCallback::new(Vec::new(), Layout::OneLine, verbosity);
            cb.host_result(&view("ping"), &r);
            String::from_utf8(cb.into_inner()).unwrap()
        };
        assert_eq!(at(2), "web1 | SUCCESS => {\"changed\": false}\n");
        assert!(at(3).contains("\"invocation\": {        \"module_args\""), "{}", at(3));
    }
}
