//! ansible-core 2.21's `default` stdout callback with its default options and no colour:
//! banners padded with stars to the display's width, one line per host result, results dumped
//! as JSON (indented when the result asks to be shown, `debug` and `assert`), error blocks
//! before failures, and the PLAY RECAP.
//!
//! `-v` shows every result; `-vv` adds the playbook banner, each task's path and the
//! strategy's `display.vv` lines; `-vvv` indents every dump and shows the connection lines the
//! engine reports; `-vvvv` adds the lines of `callback::verbose`. Colour,
//! when on, comes from a [`Palette`] (see `color`). The options users set in `ansible.cfg`
//! ([`Options`]: `display_ok_hosts`, `display_skipped_hosts`, `display_failed_stderr`,
//! `display_included_hosts`, `show_task_path_on_failure`) work as ansible's do: with either
//! display filter off, a task's banner waits for the first line shown for it. The others
//! (`result_format`, `check_mode_markers`, ...) the binary refuses before a run starts.

use std::io::Write;

use tack_yaml::{JsonOptions, Mapping, Node, Value};

use super::color::{Hue, Palette, colorize, hostcolor, paint};
use super::{Callback, Stats, TaskView};
use crate::result::HostResult;

/// The default callback's options a user sets (`[defaults]` in ansible.cfg or
/// `ANSIBLE_*`), with ansible's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub display_skipped_hosts: bool,
    pub display_ok_hosts: bool,
    /// Failure lines and their error blocks go to stderr.
    pub display_failed_stderr: bool,
    pub display_included_hosts: bool,
    /// Below `-vv`, a failure's `task path:` comes before its `fatal:` line.
    pub show_task_path_on_failure: bool,
    /// `result_format`, `pretty_results`, `result_indentation`, `result_yaml_line_width`.
    pub result_style: super::result_style::ResultStyle,
    /// `check_mode_markers`: `[CHECK MODE]` on the banners of plays and tasks in check mode,
    /// and a `DRY RUN` banner around a `--check` run.
    pub check_mode_markers: bool,
    /// The run is `--check` (for the `DRY RUN` banners).
    pub dry_run: bool,
    /// `show_per_host_start`: ` [started TASK: name on host]` as each host's run is queued.
    pub show_per_host_start: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            display_skipped_hosts: true,
            display_ok_hosts: true,
            display_failed_stderr: false,
            display_included_hosts: true,
            show_task_path_on_failure: false,
            result_style: super::result_style::ResultStyle::default(),
            check_mode_markers: false,
            dry_run: false,
            show_per_host_start: false,
        }
    }
}

/// A banner waiting for its task's first shown line, and the task it names.
struct PendingBanner {
    msg: String,
    task: TaskView,
}

/// Where the callback writes: stdout in a real run, buffers in tests.
pub struct DefaultCallback<W: Write> {
    out: W,
    options: Options,
    /// With a display filter on: the banner of the task under way, not shown yet.
    pending: Option<PendingBanner>,
    /// The last banner shown (its text and task), so a task's banner shows once for a
    /// run of its lines (`_last_task_banner`).
    last_banner: Option<(String, Option<tack_diag::Origin>)>,
    /// `Display.columns`: 79 unless the terminal is wider.
    columns: usize,
    /// Error blocks already shown: ansible's display prints each distinct one once.
    shown_errors: std::collections::HashSet<String>,
    /// `-v` count.
    verbosity: u8,
    /// `DIFF_CONTEXT`.
    diff_context: usize,
    /// The colours, `None` when output is plain.
    palette: Option<Palette>,
    /// `show_custom_stats`: the recap is followed by the `set_stats` data.
    custom_stats: bool,
    /// The `-vvvv` lines the command supplies.
    extras: super::verbose::VerboseExtras,
    /// `tack plan`'s transcript: results in the plan's words (see `plan_lines`).
    pub(super) plan: bool,
    /// The play under way runs in check mode (`play_check_mode`).
    play_check: bool,
}

impl<W: Write> DefaultCallback<W> {
    pub fn new(out: W, columns: usize) -> DefaultCallback<W> {
        DefaultCallback {
            out,
            options: Options::default(),
            play_check: false,
            pending: None,
            last_banner: None,
            columns,
            shown_errors: Default::default(),
            verbosity: 0,
            diff_context: super::diff::DiffSettings::default().context,
            palette: None,
            custom_stats: false,
            extras: Default::default(),
            plan: false,
        }
    }

    /// The callback with the `-vvvv` lines the command supplies.
    pub fn with_verbose_extras(
        mut self,
        extras: super::verbose::VerboseExtras,
    ) -> DefaultCallback<W> {
        self.extras = extras;
        self
    }

    /// The callback writing `tack plan`'s transcript.
    pub fn with_plan(mut self, plan: bool) -> DefaultCallback<W> {
        self.plan = plan;
        self
    }

    /// The callback at `-v` level `verbosity`: every result is shown, indented from `-vvv`.
    pub fn with_verbosity(mut self, verbosity: u8) -> DefaultCallback<W> {
        self.verbosity = verbosity;
        self
    }

    /// The callback showing its lines in `palette`'s colours.
    pub fn with_palette(mut self, palette: Option<Palette>) -> DefaultCallback<W> {
        self.palette = palette;
        self
    }

    /// `Display.display(text, color=hue)`.
    pub(super) fn colored(&mut self, text: &str, hue: Hue) {
        let text = paint(self.palette.as_ref(), text, hue);
        self.line(&text);
    }

    /// ` [CHECK MODE]` after a banner, with `check_mode_markers`, for what runs in check mode.
    fn check_mark(&self, check_mode: bool) -> &'static str {
        if self.options.check_mode_markers && check_mode { " [CHECK MODE]" } else { "" }
    }

    /// `DRY RUN`, as a `--check` run starts and ends, with `check_mode_markers`.
    fn dry_run_banner(&mut self) {
        if self.options.check_mode_markers && self.options.dry_run {
            self.banner("DRY RUN");
        }
    }

    /// `_print_task_path`, shown under a task's banner from `-vv`.
    fn task_path(&mut self, task: &TaskView) {
        if self.verbosity >= 2 {
            self.print_task_path(task);
        }
    }

    /// `_print_task_path` itself.
    fn print_task_path(&mut self, task: &TaskView) {
        if let Some(origin) = &task.origin
            && let Some(path) = &origin.path
        {
            self.colored(&format!("task path: {}:{}", path.display(), origin.line), Hue::Debug);
        }
    }

    /// `_run_is_verbose`.
    pub(super) fn verbose(&self, result: &HostResult) -> bool {
        (result.always_shown() || self.verbosity > 0) && !result.verbose_override
    }

    /// `_dump_results` at this callback's verbosity, in its result style: from `-vvv` the
    /// `diff` and `invocation` keys stay in the dump.
    pub(super) fn dump(&self, data: &Mapping, result: &HostResult) -> String {
        let style = &self.options.result_style;
        let indent = style.indent(result.always_shown(), self.verbosity);
        let mut shown = data.clone();
        // `failed` and `skipped` are moved out of a result before callbacks see it (they
        // learn them from the event itself).
        for key in ["failed", "skipped", "exception", "warnings", "deprecations"] {
            shown.remove(key);
        }
        super::result_style::strip_internal_keys(&mut shown);
        if self.verbosity < 3 {
            shown.remove("invocation");
            shown.remove("diff");
        }
        style.dump(shown, indent)
    }

    /// Diffs shown with `context` lines around each change (`DIFF_CONTEXT`).
    pub fn with_diff_context(mut self, context: usize) -> DefaultCallback<W> {
        self.diff_context = context;
        self
    }

    /// The callback with the options a user set.
    pub fn with_options(mut self, options: Options) -> DefaultCallback<W> {
        self.options = options;
        self
    }

    /// Whether the display filters hide `result` (a skip, or an unchanged ok): it then shows
    /// nothing, its warnings neither (ansible handles them with the result's display).
    fn hidden(&self, result: &HostResult) -> bool {
        match result.outcome() {
            crate::result::Outcome::Skipped => !self.options.display_skipped_hosts,
            crate::result::Outcome::Ok => !self.options.display_ok_hosts,
            _ => false,
        }
    }

    /// Whether a task's banner is shown as it starts: neither display filter is on.
    fn eager_banners(&self) -> bool {
        self.options.display_skipped_hosts && self.options.display_ok_hosts
    }

    /// A task's (or handler's) banner: now, or when its first line is shown.
    fn start(&mut self, msg: String, task: &TaskView) {
        if self.eager_banners() {
            self.banner(&msg);
            self.task_path(task);
            return;
        }
        self.pending = Some(PendingBanner { msg, task: task.clone() });
    }

    /// Shows the waiting banner unless it was the last one shown (`_print_task_banner`
    /// when `_last_task_banner` is another task).
    fn ensure_banner(&mut self) {
        let Some(pending) = self.pending.take() else { return };
        let id = (pending.msg.clone(), pending.task.origin.clone());
        if self.last_banner.as_ref() == Some(&id) {
            return;
        }
        self.banner(&pending.msg);
        self.task_path(&pending.task);
        self.last_banner = Some(id);
    }

    /// A failure's line: stdout, or stderr under `display_failed_stderr`.
    fn failure_line(&mut self, text: &str, hue: Hue) {
        if !self.options.display_failed_stderr {
            self.colored(text, hue);
            return;
        }
        tack_diag::display_log::record(tack_diag::display_log::Level::Info, text);
        let text = paint(self.palette.as_ref(), text, hue);
        let _ = self.out.flush();
        tack_diag::interrupt::hold_if_ending();
        let _ = writeln!(std::io::stderr(), "{}", text.replace("\r\n", "\n"));
    }

    /// The callback with `show_custom_stats` set.
    pub fn with_custom_stats(mut self, show: bool) -> DefaultCallback<W> {
        self.custom_stats = show;
        self
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    pub(super) fn line(&mut self, text: &str) {
        tack_diag::display_log::record(tack_diag::display_log::Level::Info, text);
        self.screen_line(text);
    }

    /// A line ansible displays `screen_only` (never logged under `log_path`).
    pub(super) fn screen_line(&mut self, text: &str) {
        // A closed stdout cannot be reported anywhere better than by the exit status, which
        // the run's own outcome already decides; ansible ignores it the same way.
        // `Display.display` turns Windows line ends into Unix ones in everything it prints.
        let _ = writeln!(self.out, "{}", text.replace("\r\n", "\n"));
    }

    /// `Display.verbose`: a line shown from `level` `-v`s, and logged once more when
    /// `log_verbosity` reaches it (`tack_diag::display_log::verbose`).
    fn verbose_text(&mut self, level: u8, msg: &str) {
        if self.verbosity >= level {
            self.colored(msg, Hue::Verbose);
        }
        tack_diag::display_log::verbose(level, msg);
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
            let text = diag.render().replace("\r\n", "\n");
            if !self.shown_errors.insert(text.clone()) {
                return;
            }
            tack_diag::display_log::record(tack_diag::display_log::Level::Error, &text);
            let code = self.palette.as_ref().map(|p| p.error.as_str());
            let shown = tack_diag::color::display_text(&text, code);
            if self.options.display_failed_stderr {
                let _ = self.out.flush();
                tack_diag::interrupt::hold_if_ending();
                let _ = std::io::stderr().write_all(shown.as_bytes());
            } else {
                let _ = self.out.write_all(shown.as_bytes());
            }
        }
    }
}

/// `_dump_results`: the result without ansible's internal keys, as `json.dumps` with sorted
/// keys, non-ASCII kept, indented by four when the result is always shown.
pub fn dump_result(data: &Mapping, indent: bool, verbosity: u8) -> String {
    let options = if indent {
        JsonOptions::indented(4, true)
    } else {
        let mut o = JsonOptions::compact();
        o.sort_keys = true;
        o
    };
    dump_result_with(data, options, verbosity)
}

/// `_dump_results` with the JSON layout chosen by the caller (the ad-hoc callbacks): from
/// `-vvv` the `invocation` and `diff` keys stay in the dump.
pub fn dump_result_with(data: &Mapping, mut options: JsonOptions, verbosity: u8) -> String {
    options.ensure_ascii = false;
    let mut shown = data.clone();
    // `failed` and `skipped` are moved out of a result before callbacks see it (they learn
    // them from the event itself).
    for key in ["failed", "skipped", "exception", "warnings", "deprecations"] {
        shown.remove(key);
    }
    super::result_style::strip_internal_keys(&mut shown);
    if verbosity < 3 {
        shown.remove("invocation");
        shown.remove("diff");
    }
    // Every value in a result is data the run produced; a failure to serialise one would be a
    // bug in the action that built it, and the dump says so rather than hiding the line.
    tack_yaml::to_json(&Node::bare(Value::Map(shown)), &options)
        .unwrap_or_else(|e| format!("<<result not serialisable: {e}>>"))
}

/// `_handle_warnings`: the warnings a module returned, each shown once on stderr.
pub(crate) fn warnings(result: &HostResult) {
    if let Some(list) = result.data.get("warnings").and_then(Node::as_seq) {
        for warning in list {
            let mut text = tack_yaml::pyrepr::str(&warning.value);
            if let Some(block) = result.warning_blocks.get(&text) {
                tack_diag::warn(block);
                continue;
            }
            if let Some(help) = warning_help(&text) {
                text = format!("{text} {help}");
            }
            tack_diag::warn(&tack_diag::Diagnostic::new(text));
        }
    }
    let Some(list) = result.data.get("deprecations").and_then(Node::as_seq) else { return };
    for (n, deprecation) in list.iter().enumerate().skip(result.shown_deprecations) {
        // Those raised while the task ran, with where they came from.
        if let Some(raised) = result.raised_deprecations.get(n) {
            tack_diag::show_recorded(raised);
        } else if let Some(deprecation) = deprecation.as_map() {
            let text = deprecation_text(deprecation);
            tack_diag::deprecate_formatted(&tack_diag::Diagnostic::new(text));
        }
    }
}

/// The help ansible's display adds after a warning a result carries: interpreter discovery's
/// names the page about it (the result registers the warning without it).
fn warning_help(warning: &str) -> Option<&'static str> {
    let discovered = warning.starts_with("Host ")
        && warning.contains(" is using the discovered Python interpreter at ")
        && warning.ends_with("could cause a different interpreter to be discovered.");
    discovered.then_some(
        "See https://docs.ansible.com/ansible-core/2.21/reference_appendices/interpreter_discovery.html for more information.",
    )
}

/// A module's deprecation as ansible displays it: its message, then when and from what the
/// feature goes (`get_deprecation_message_with_plugin_info`).
fn deprecation_text(deprecation: &Mapping) -> String {
    crate::result::deprecation_of(deprecation).text()
}

fn label(result: &HostResult) -> String {
    if result.no_log {
        return crate::no_log::CENSORED_ITEM.into();
    }
    match &result.item_label {
        Some(node) => tack_yaml::pyrepr::str(&node.value),
        None => "None".into(),
    }
}

/// `_clean_results` for `debug`: a result with `msg` shows only `msg` (and the flags the
/// callback keeps); a `var=` result shows only the variable.
pub(crate) fn clean(task: &TaskView, result: &HostResult, data: &Mapping) -> Mapping {
    let action = result.action.as_deref().unwrap_or(&task.action);
    if !tack_playbook::tables::actions::is(action, &["debug"]) {
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
        // A result's `_ansible_*` keys are ansible's own controls, stripped before any
        // callback sees them (so `debug: var=_ansible_facts_gathered` shows `{}`).
        if keep && !key.starts_with("_ansible") {
            out.insert(k.clone(), v.clone());
        }
    }
    out
}

impl<W: Write> Callback for DefaultCallback<W> {
    fn play_check_mode(&mut self, check_mode: bool) {
        self.play_check = check_mode;
    }

    fn play_start(&mut self, name: &str) {
        let name = name.trim();
        let mark = self.check_mark(self.play_check);
        let msg =
            if name.is_empty() { format!("PLAY{mark}") } else { format!("PLAY [{name}]{mark}") };
        self.banner(&msg);
    }

    fn no_hosts_matched(&mut self) {
        self.colored("skipping: no hosts matched", Hue::Skip);
    }

    fn no_hosts_remaining(&mut self) {
        self.banner("NO MORE HOSTS LEFT");
    }

    fn task_start(&mut self, task: &TaskView) {
        let mark = self.check_mark(task.check_mode);
        self.start(format!("TASK [{}]{mark}", task.name.trim()), task);
    }

    fn included(&mut self, file: &str, hosts: &[String], item: Option<&str>) {
        // An include's own result shows its banner whatever the filters.
        self.ensure_banner();
        if !self.options.display_included_hosts {
            return;
        }
        let mut msg = format!("included: {file} for {}", hosts.join(", "));
        if let Some(item) = item {
            msg.push_str(&format!(" => (item={item})"));
        }
        self.colored(&msg, Hue::Included);
    }

    fn handler_start(&mut self, task: &TaskView) {
        let mark = self.check_mark(task.check_mode);
        self.start(format!("RUNNING HANDLER [{}]{mark}", task.name.trim()), task);
    }

    fn playbook_start(&mut self, playbook: &tack_playbook::Playbook, first: bool) {
        for file in &playbook.imported {
            self.verbose_text(2, &format!("statically imported: {}", file.display()));
        }
        if first && self.verbosity >= 4 {
            // `CallbackBase.__init__` asks its display's verbosity first: never logged only.
            let line = self.extras.loaded_line();
            self.colored(&line, Hue::Verbose);
        }
        if first {
            // The callback plugins the loader tries (named from `-vvvvv`); ansible-core's
            // other stdout callbacks are passed over once the default one is chosen.
            let attempted = self.extras.attempted_callbacks.clone();
            let names = match attempted.is_empty() {
                true => vec!["minimal".to_string(), "oneline".to_string()],
                false => attempted,
            };
            for name in names {
                self.verbose_text(5, &format!("Attempting to use '{name}' callback."));
                if matches!(name.as_str(), "minimal" | "oneline") {
                    let msg = format!(
                        "Skipping callback '{name}', as we already have a stdout callback."
                    );
                    self.verbose_text(2, &msg);
                }
            }
        }
        let (path, plays) = (&playbook.path, playbook.plays.len());
        if self.verbosity >= 2 {
            let base = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            self.banner(&format!("PLAYBOOK: {base}"));
        }
        if self.verbosity >= 4 {
            for line in self.extras.cli_args.clone() {
                self.colored(&line, Hue::Verbose);
            }
        }
        self.dry_run_banner();
        self.verbose_text(2, &format!("{plays} plays in {}", path.display()));
    }

    fn verbose_line(&mut self, level: u8, msg: &str) {
        self.verbose_text(level, msg);
    }

    fn host_result(&mut self, task: &TaskView, result: &HostResult) {
        let hidden = self.hidden(result);
        if hidden && !self.plan {
            return;
        }
        warnings(result);
        if self.plan && self.plan_result(task, result, None) {
            return;
        }
        let host = result.label();
        let data = clean(task, result, &crate::no_log::shown(result));
        let items = task.looped && result.data.get("results").is_some();
        if hidden {
            return;
        }
        self.ensure_banner();
        match result.outcome() {
            crate::result::Outcome::Failed => {
                // The error first, items or not (`_handle_warnings_and_exception`).
                self.error_block(task, result);
                // ansible cleans a failure before looking for its items: a looped `debug`
                // that failed loses `results` and shows the summary line.
                if !(task.looped && data.get("results").is_some()) {
                    if self.verbosity < 2 && self.options.show_task_path_on_failure {
                        self.print_task_path(task);
                    }
                    let dump = self.dump(&data, result);
                    self.failure_line(&format!("fatal: [{host}]: FAILED! => {dump}"), Hue::Error);
                }
                if result.ignored {
                    self.colored("...ignoring", Hue::Skip);
                }
            }
            crate::result::Outcome::Unreachable => {
                self.error_block(task, result);
                let dump = self.dump(&data, result);
                let line = format!("fatal: [{host}]: UNREACHABLE! => {dump}");
                self.failure_line(&line, Hue::Unreachable);
                if result.ignore_unreachable {
                    self.colored("...ignoring", Hue::Skip);
                }
            }
            crate::result::Outcome::Skipped => {
                let mut msg = format!("skipping: [{}]", result.host);
                if self.verbose(result) {
                    let mut shown = data.clone();
                    if items {
                        shown.remove("results");
                    }
                    msg.push_str(&format!(" => {}", self.dump(&shown, result)));
                }
                self.colored(&msg, Hue::Skip);
            }
            outcome => {
                if items {
                    return;
                }
                let (word, hue) = if outcome == crate::result::Outcome::Changed {
                    ("changed", Hue::Changed)
                } else {
                    ("ok", Hue::Ok)
                };
                let mut msg = format!("{word}: [{host}]");
                if self.verbose(result) {
                    msg.push_str(&format!(" => {}", self.dump(&data, result)));
                }
                self.colored(&msg, hue);
            }
        }
    }

    fn file_diff(&mut self, task: &TaskView, result: &HostResult) {
        let _ = task;
        let Some(diff) = result.data.get("diff") else { return };
        if !diff.value.is_truthy() || !result.flag("changed") {
            return;
        }
        let text = super::diff::render_styled(
            diff,
            self.diff_context,
            &self.options.result_style,
            self.palette.as_ref(),
        );
        if !text.is_empty() {
            self.ensure_banner();
            let shown = super::diff::displayed(&text);
            tack_diag::display_log::record(tack_diag::display_log::Level::Info, &shown);
            let _ = self.out.write_all(shown.as_bytes());
        }
    }

    fn item_result(&mut self, task: &TaskView, result: &HostResult) {
        let hidden = self.hidden(result);
        if hidden && !self.plan {
            return;
        }
        warnings(result);
        let host = result.label();
        let data = clean(task, result, &crate::no_log::shown(result));
        let item = label(result);
        if self.plan && self.plan_result(task, result, Some(&item)) {
            return;
        }
        if hidden {
            return;
        }
        self.ensure_banner();
        match result.outcome() {
            crate::result::Outcome::Failed | crate::result::Outcome::Unreachable => {
                self.error_block(task, result);
                let dump = self.dump(&data, result);
                let line = format!("failed: [{host}] (item={item}) => {dump}");
                self.failure_line(&line, Hue::Error);
            }
            crate::result::Outcome::Skipped => {
                let mut msg = format!("skipping: [{}] => (item={item}) ", result.host);
                if self.verbose(result) {
                    msg.push_str(&format!(" => {}", self.dump(&data, result)));
                }
                self.colored(&msg, Hue::Skip);
            }
            outcome => {
                let (word, hue) = if outcome == crate::result::Outcome::Changed {
                    ("changed", Hue::Changed)
                } else {
                    ("ok", Hue::Ok)
                };
                let mut msg = format!("{word}: [{host}] => (item={item})");
                if self.verbose(result) {
                    msg.push_str(&format!(" => {}", self.dump(&data, result)));
                }
                self.colored(&msg, hue);
            }
        }
    }

    fn retry(&mut self, task: &TaskView, result: &HostResult) {
        let count = |key: &str| match result.data.get(key).map(|n| &n.value) {
            Some(Value::Int(i)) => *i,
            _ => 0,
        };
        let mut msg = format!(
            "FAILED - RETRYING: [{}]: {} ({} retries left).",
            result.label(),
            task.name,
            count("retries") - count("attempts")
        );
        // `_run_is_verbose(result, verbosity=2)`: shown from -vvv, or when always shown.
        if (result.always_shown() || self.verbosity > 2) && !result.verbose_override {
            let data = crate::no_log::shown(result);
            msg.push_str(&format!("Result was: {}", self.dump(&data, result)));
        }
        self.line(&msg);
    }

    fn stats(&mut self, stats: &Stats) {
        self.banner("PLAY RECAP");
        let p = self.palette.as_ref();
        let rows: Vec<String> = stats
            .hosts()
            .map(|(host, t)| {
                let failed = t.failures != 0 || t.unreachable != 0;
                let row = format!(
                    "{} : {} {} {} {} {} {} {}",
                    hostcolor(p, host, failed, t.changed != 0),
                    colorize(p, "ok", t.ok, Hue::Ok),
                    colorize(p, "changed", t.changed, Hue::Changed),
                    colorize(p, "unreachable", t.unreachable, Hue::Unreachable),
                    colorize(p, "failed", t.failures, Hue::Error),
                    colorize(p, "skipped", t.skipped, Hue::Skip),
                    colorize(p, "rescued", t.rescued, Hue::Ok),
                    colorize(p, "ignored", t.ignored, Hue::Warn),
                );
                if !self.plan {
                    return row;
                }
                format!(
                    "{row} {} {}",
                    colorize(p, "would_run", t.would_run, Hue::Changed),
                    colorize(p, "deferred", t.deferred, Hue::Skip),
                )
            })
            .collect();
        for row in rows {
            self.line(&row);
        }
        self.screen_line("");
        if self.plan {
            self.plan_end(stats);
        }
        if self.custom_stats && !stats.custom.is_empty() {
            self.banner("CUSTOM STATS: ");
            for line in stats.custom_lines() {
                self.line(&line);
            }
        }
        self.dry_run_banner();
    }

    fn display(&mut self, text: &str) {
        self.line(text);
    }

    fn async_note(&mut self, text: &str) {
        self.colored(text, Hue::Debug);
    }

    fn host_start(&mut self, task: &TaskView, host: &str, handler: bool) {
        // ansible prints the task as its `repr` does, without showing a deferred banner.
        if self.options.show_per_host_start {
            let kind = if handler { "HANDLER" } else { "TASK" };
            self.colored(&format!(" [started {kind}: {} on {host}]", task.name), Hue::Ok);
        }
    }
}
