//! How ansible's callbacks turn a result's `diff` into text (`CallbackBase._get_diff`): the
//! binary and size markers, a unified diff (Python's `difflib`, from `tack_py::difflib`) of
//! `before`/`after` with their headers and the `\ No newline at end of file` marker, dicts
//! shown as indented JSON, `prepared` text as is, and a list of diffs one after the other.
//!
//! Only the text: when it is printed (and the banner before it) is the default callback's.

use tack_py::difflib::{UnifiedOptions, unified_diff};
use tack_yaml::{Mapping, Node, Value};

use super::color::{Hue, Palette, paint};
use super::result_style::ResultStyle;

/// Whether ansible sends `v2_on_file_diff` for a result: a result that neither failed nor was
/// skipped and carries a `diff` key (the callback then decides whether it shows anything).
pub fn sent_for(result: &crate::result::HostResult) -> bool {
    let outcome = result.outcome();
    outcome != crate::result::Outcome::Failed
        && outcome != crate::result::Outcome::Skipped
        && result.data.get("diff").is_some()
}

/// The settings diff mode reads, resolved once for the run.
#[derive(Debug, Clone)]
pub struct DiffSettings {
    /// `DIFF_CONTEXT`: lines of context in a unified diff.
    pub context: usize,
    /// `MAX_FILE_SIZE_FOR_DIFF`: files larger are not diffed (0 or less: no limit).
    pub max_size: i64,
    /// `DEFAULT_LOCAL_TMP`: where the controller writes a rendered template.
    pub local_tmp: Option<std::path::PathBuf>,
}

impl Default for DiffSettings {
    /// ansible's defaults.
    fn default() -> DiffSettings {
        DiffSettings { context: 3, max_size: 104448, local_tmp: None }
    }
}

/// `_get_diff(diff)` with the default context.
pub fn render(diff: &Node) -> String {
    render_with(diff, DiffSettings::default().context, None)
}

/// `_get_diff(diff)`: the text for one diff or a list of them ("" when there is nothing to
/// show), with `context` lines around each change, its lines in `palette`'s diff colours
/// when output is coloured.
pub fn render_with(diff: &Node, context: usize, palette: Option<&Palette>) -> String {
    render_styled(diff, context, &ResultStyle::default(), palette)
}

/// [`render_with`] with a dict side written in the callback's result style.
pub fn render_styled(
    diff: &Node,
    context: usize,
    style: &ResultStyle,
    palette: Option<&Palette>,
) -> String {
    let mut out = String::new();
    let shown = Shown { context, style, palette };
    match &diff.value {
        Value::Seq(list) => {
            for item in list {
                if let Some(map) = item.as_map() {
                    one(map, &shown, &mut out);
                }
            }
        }
        Value::Map(map) => one(map, &shown, &mut out),
        _ => {}
    }
    out
}

/// How a diff is shown: the callback's context, result style and colours.
struct Shown<'a> {
    context: usize,
    style: &'a ResultStyle,
    palette: Option<&'a Palette>,
}

/// A unified diff's line as `_get_diff` shows it: added, removed and hunk-header lines in
/// their colours (each piece between newlines wrapped, as `stringc` wraps them), the
/// others as they are.
fn painted(line: &str, palette: Option<&Palette>) -> String {
    let hue = if line.starts_with('+') {
        Hue::DiffAdd
    } else if line.starts_with('-') {
        Hue::DiffRemove
    } else if line.starts_with("@@") {
        Hue::DiffLines
    } else {
        return line.to_string();
    };
    paint(palette, line, hue)
}

/// `Display.display(text)`: Windows line ends become `\n`, and a final newline is not doubled.
pub fn displayed(text: &str) -> String {
    let mut msg = text.replace("\r\n", "\n");
    if !msg.ends_with('\n') {
        msg.push('\n');
    }
    msg
}

fn one(diff: &Mapping, shown: &Shown<'_>, out: &mut String) {
    let (context, style) = (shown.context, shown.style);
    if diff.get("dst_binary").is_some() {
        out.push_str("diff skipped: destination file appears to be binary\n");
    }
    if diff.get("src_binary").is_some() {
        out.push_str("diff skipped: source file appears to be binary\n");
    }
    if let Some(size) = diff.get("dst_larger") {
        out.push_str(&format!(
            "diff skipped: destination file size is greater than {}\n",
            number(size)
        ));
    }
    if let Some(size) = diff.get("src_larger") {
        out.push_str(&format!("diff skipped: source file size is greater than {}\n", number(size)));
    }
    if let (Some(before), Some(after)) = (diff.get("before"), diff.get("after")) {
        let before = side(before, style);
        let after = side(after, style);
        let header = |key: &str, word: &str| match diff.get(key) {
            Some(h) => format!("{word}: {}", tack_yaml::pyrepr::str(&h.value)),
            None => word.to_string(),
        };
        let (from, to) = (header("before_header", "before"), header("after_header", "after"));
        let a = lines(&before);
        let b = lines(&after);
        let options = UnifiedOptions {
            fromfile: &from,
            tofile: &to,
            n: context,
            lineterm: "\n",
            ..Default::default()
        };
        let diff_lines = unified_diff(&a, &b, &options);
        if !diff_lines.is_empty() {
            for line in &diff_lines {
                out.push_str(&painted(line, shown.palette));
            }
            out.push('\n');
        }
    }
    if let Some(prepared) = diff.get("prepared") {
        out.push_str(&tack_yaml::pyrepr::str(&prepared.value));
    }
}

/// `%d` of a size: an integer as is, a float truncated as Python's `%d` does.
fn number(node: &Node) -> String {
    match &node.value {
        Value::Float(f) => format!("{}", f.trunc() as i64),
        Value::Bool(b) => format!("{}", i64::from(*b)),
        other => tack_yaml::pyrepr::str(other),
    }
}

/// One side's text: a dict in the result style (`json.dumps(sort_keys=True, indent=4)` and a
/// newline by default), `None` as nothing.
fn side(node: &Node, style: &ResultStyle) -> String {
    match &node.value {
        Value::Map(_) => style.diff_side(node),
        Value::Null => String::new(),
        other => tack_yaml::pyrepr::str(other),
    }
}

/// `text.splitlines(True)` with the marker ansible appends to a last line without a newline.
fn lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> =
        tack_py::text::splitlines_keepends(text).into_iter().map(str::to_string).collect();
    if let Some(last) = lines.last_mut().filter(|l| !l.ends_with('\n')) {
        last.push_str("\n\\ No newline at end of file\n");
    }
    lines
}
