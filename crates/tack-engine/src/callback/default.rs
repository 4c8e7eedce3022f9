//! ansible-core 2.21's `default` stdout callback with its default options and no colour:
//! banners padded with stars to the display's width, one line per host result, results dumped
//! as JSON (indented when the result asks to be shown, `debug` and `assert`), error blocks
//! before failures, and the PLAY RECAP.
//!
//! `-v` shows every result (`-vv` and more are refused by the command line for now). Colour
//! and the non-default options (`display_ok_hosts`, `display_skipped_hosts`,
//! `show_task_path_on_failure`, `result_format`, ...) are not written yet; the run refuses them
//! before it starts (see `crate::refuse`).

use std::io::Write;

use tack_yaml::{JsonOptions, Mapping, Node, Value};

use super::{Callback, Stats, TaskView};
use crate::result::HostResult;

/// Where the callback writes: stdout in a real run, buffers in tests.
pub struct DefaultCallback<W: Write> {
    out: W,
    /// `Display.columns`: 79 unless the terminal is wider.
    columns: usize,
    /// Error blocks already shown: ansible's display prints each distinct one once.
    shown_errors: std::collections::HashSet<String>,
    /// `-v` count.
    verbosity: u8,
}

impl<W: Write> DefaultCallback<W> {
    pub fn new(out: W, columns: usize) -> DefaultCallback<W> {
        DefaultCallback { out, columns, shown_errors: Default::default(), verbosity: 0 }
    }

    /// The callback at `-v` level `verbosity`: every result is shown, indented from `-vvv`.
    pub fn with_verbosity(mut self, verbosity: u8) -> DefaultCallback<W> {
        self.verbosity = verbosity;
        self
    }

    /// `_run_is_verbose`.
    fn verbose(&self, result: &HostResult) -> bool {
        (result.verbose_always || self.verbosity > 0) && !result.verbose_override
    }

    /// `_dump_results`' indentation rule.
    fn indent(&self, result: &HostResult) -> bool {
        result.verbose_always || self.verbosity > 2
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn line(&mut self, text: &str) {
        // A closed stdout cannot be reported anywhere better than by the exit status, which
        // the run's own outcome already decides; ansible ignores it the same way.
        let _ = writeln!(self.out, "{text}");
    }

    /// `Display.banner`: the message, a space and stars up to the width (at least three).
    fn banner(&mut self, msg: &str) {
        let msg = msg.trim();
        // ansible measures with the C library's wcswidth; unicode-width implements the same
        // East Asian width tables.
        let width = unicode_width::UnicodeWidthStr::width(msg);
        let stars = self.columns.saturating_sub(width).max(3);
        let text = format!("\n{msg} {}", "*".repeat(stars));
        self.line(&text);
    }

    fn error_block(&mut self, task: &TaskView, result: &HostResult) {
        let _ = task;
        if let Some(diag) = &result.error {
            let text = diag.render();
            if !self.shown_errors.insert(text.clone()) {
                return;
            }
            let _ = self.out.write_all(text.as_bytes());
            if !text.ends_with('\n') {
                let _ = self.out.write_all(b"\n");
            }
        }
    }
}

/// `_dump_results`: the result without ansible's internal keys, as `json.dumps` with sorted
/// keys, non-ASCII kept, indented by four when the result is always shown.
pub fn dump_result(data: &Mapping, indent: bool) -> String {
    let options = if indent {
        JsonOptions::indented(4, true)
    } else {
        let mut o = JsonOptions::compact();
        o.sort_keys = true;
        o
    };
    dump_result_with(data, options)
}

/// `_dump_results` with the JSON layout chosen by the caller (the ad-hoc callbacks).
pub fn dump_result_with(data: &Mapping, mut options: JsonOptions) -> String {
    options.ensure_ascii = false;
    let mut shown = data.clone();
    // `failed` and `skipped` are moved out of a result before callbacks see it (they learn
    // them from the event itself).
    for key in ["failed", "skipped", "exception", "warnings", "deprecations", "invocation", "diff"]
    {
        shown.remove(key);
    }
    // Every value in a result is data the run produced; a failure to serialise one would be a
    // bug in the action that built it, and the dump says so rather than hiding the line.
    tack_yaml::to_json(&Node::bare(Value::Map(shown)), &options)
        .unwrap_or_else(|e| format!("<<result not serialisable: {e}>>"))
}

/// `_handle_warnings`: the warnings a module returned, each shown once on stderr.
pub(crate) fn warnings(result: &HostResult) {
    let Some(list) = result.data.get("warnings").and_then(Node::as_seq) else { return };
    for warning in list {
        tack_diag::warn(&tack_diag::Diagnostic::new(tack_yaml::pyrepr::str(&warning.value)));
    }
}

fn label(result: &HostResult) -> String {
    match &result.item_label {
        Some(node) => tack_yaml::pyrepr::str(&node.value),
        None => "None".into(),
    }
}

/// `_clean_results` for `debug`: a result with `msg` shows only `msg` (and the flags the
/// callback keeps); a `var=` result shows only the variable.
pub(crate) fn clean(task: &TaskView, data: &Mapping) -> Mapping {
    if !tack_playbook::tables::actions::is(&task.action, &["debug"]) {
        return data.clone();
    }
    let mut out = Mapping::new();
    let hidden: &[&str] = if data.get("msg").is_some() {
        &[]
    } else {
        &[
            "changed",
            "failed",
            "skipped",
            "invocation",
            "skip_reason",
            "ansible_loop_var",
            "ansible_index_var",
            "ansible_loop",
        ]
    };
    for (k, v) in data.iter() {
        let key = k.as_str().unwrap_or_default();
        let keep = if data.get("msg").is_some() {
            matches!(key, "msg" | "exception" | "warnings" | "deprecations")
        } else {
            !hidden.contains(&key)
        };
        if keep {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

impl<W: Write> Callback for DefaultCallback<W> {
    fn play_start(&mut self, name: &str) {
        let name = name.trim();
        let msg = if name.is_empty() { "PLAY".to_string() } else { format!("PLAY [{name}]") };
        self.banner(&msg);
    }

    fn no_hosts_matched(&mut self) {
        self.line("skipping: no hosts matched");
    }

    fn task_start(&mut self, task: &TaskView) {
        self.banner(&format!("TASK [{}]", task.name.trim()));
    }

    fn included(&mut self, file: &str, hosts: &[String], item: Option<&str>) {
        let mut msg = format!("included: {file} for {}", hosts.join(", "));
        if let Some(item) = item {
            msg.push_str(&format!(" => (item={item})"));
        }
        self.line(&msg);
    }

    fn handler_start(&mut self, task: &TaskView) {
        self.banner(&format!("RUNNING HANDLER [{}]", task.name.trim()));
    }

    fn host_result(&mut self, task: &TaskView, result: &HostResult) {
        warnings(result);
        let host = result.host.clone();
        let data = clean(task, &result.data);
        let items = task.looped && result.data.get("results").is_some();
        match result.outcome() {
            crate::result::Outcome::Failed => {
                if !items {
                    self.error_block(task, result);
                    let dump = dump_result(&data, self.indent(result));
                    self.line(&format!("fatal: [{host}]: FAILED! => {dump}"));
                }
                if result.ignored {
                    self.line("...ignoring");
                }
            }
            crate::result::Outcome::Skipped => {
                let mut msg = format!("skipping: [{host}]");
                if self.verbose(result) {
                    let mut shown = data.clone();
                    if items {
                        shown.remove("results");
                    }
                    msg.push_str(&format!(" => {}", dump_result(&shown, self.indent(result))));
                }
                self.line(&msg);
            }
            outcome => {
                if items {
                    return;
                }
                let word =
                    if outcome == crate::result::Outcome::Changed { "changed" } else { "ok" };
                let mut msg = format!("{word}: [{host}]");
                if self.verbose(result) {
                    msg.push_str(&format!(" => {}", dump_result(&data, self.indent(result))));
                }
                self.line(&msg);
            }
        }
    }

    fn item_result(&mut self, task: &TaskView, result: &HostResult) {
        warnings(result);
        let host = result.host.clone();
        let data = clean(task, &result.data);
        let item = label(result);
        match result.outcome() {
            crate::result::Outcome::Failed => {
                self.error_block(task, result);
                let dump = dump_result(&data, self.indent(result));
                self.line(&format!("failed: [{host}] (item={item}) => {dump}"));
            }
            crate::result::Outcome::Skipped => {
                let mut msg = format!("skipping: [{host}] => (item={item}) ");
                if self.verbose(result) {
                    msg.push_str(&format!(" => {}", dump_result(&data, self.indent(result))));
                }
                self.line(&msg);
            }
            outcome => {
                let word =
                    if outcome == crate::result::Outcome::Changed { "changed" } else { "ok" };
                let mut msg = format!("{word}: [{host}] => (item={item})");
                if self.verbose(result) {
                    msg.push_str(&format!(" => {}", dump_result(&data, self.indent(result))));
                }
                self.line(&msg);
            }
        }
    }

    fn stats(&mut self, stats: &Stats) {
        self.banner("PLAY RECAP");
        let rows: Vec<String> = stats
            .hosts()
            .map(|(host, t)| {
                format!(
                    "{host:<26} : ok={:<4} changed={:<4} unreachable={:<4} failed={:<4} \
                     skipped={:<4} rescued={:<4} ignored={:<4}",
                    t.ok, t.changed, t.unreachable, t.failures, t.skipped, t.rescued, t.ignored
                )
            })
            .collect();
        for row in rows {
            self.line(&row);
        }
        self.line("");
    }
}
