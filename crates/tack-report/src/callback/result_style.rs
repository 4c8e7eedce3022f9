//! How the default callback writes a result and a diff's dict sides (`_dump_results`,
//! `_serialize_diff`): JSON or YAML (`result_format`), indented or not (`pretty_results`,
//! `result_indentation`, and ansible's rule for when results are indented), YAML folded at
//! `result_yaml_line_width`.
//!
//! Owns only the text of a dump; which keys a result loses first is the callers'.

use tack_yaml::{DumpOptions, JsonOptions, Mapping, Node, Value};

/// `result_format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultFormat {
    #[default]
    Json,
    Yaml,
}

/// The default callback's result options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultStyle {
    pub format: ResultFormat,
    /// `pretty_results`: `None` is ansible's default (indent YAML always, JSON when the
    /// result is always shown or from `-vvv`).
    pub pretty: Option<bool>,
    /// `result_indentation`.
    pub indentation: usize,
    /// `result_yaml_line_width`: `None` is PyYAML's default (80).
    pub yaml_width: Option<i32>,
}

impl Default for ResultStyle {
    fn default() -> ResultStyle {
        ResultStyle { format: ResultFormat::Json, pretty: None, indentation: 4, yaml_width: None }
    }
}

impl ResultStyle {
    /// `_dump_results`' indentation: `None` for a one-line dump.
    pub fn indent(&self, always_shown: bool, verbosity: u8) -> Option<usize> {
        if self.pretty == Some(false) {
            return None;
        }
        let indented = always_shown
            || (self.pretty.is_none() && self.format != ResultFormat::Json)
            || self.pretty == Some(true)
            || verbosity > 2;
        indented.then_some(self.indentation)
    }

    /// `_dump_results` of what is left of a result once the caller took its keys out.
    pub fn dump(&self, mut shown: Mapping, indent: Option<usize>) -> String {
        match self.format {
            ResultFormat::Json => {
                let mut options = match indent {
                    Some(n) => JsonOptions::indented(n, true),
                    None => {
                        let mut o = JsonOptions::compact();
                        o.sort_keys = true;
                        o
                    }
                };
                options.ensure_ascii = false;
                // Every value in a result is data the run produced; a failure to serialise
                // one would be a bug in the action that built it, and the dump says so.
                tack_yaml::to_json(&Node::bare(Value::Map(shown)), &options)
                    .unwrap_or_else(|e| format!("<<result not serialisable: {e}>>"))
            }
            ResultFormat::Yaml => {
                let lossy = self.pretty != Some(false);
                if lossy {
                    // With `stdout` there, `stdout_lines` says nothing more.
                    for (text, lines) in [("stdout", "stdout_lines"), ("stderr", "stderr_lines")] {
                        if shown.get(text).is_some() && shown.get(lines).is_some() {
                            shown.insert(
                                Node::bare(Value::Str(lines.into())),
                                Node::bare(Value::Str("<omitted>".into())),
                            );
                        }
                    }
                }
                let text = self.yaml(&Value::Map(shown), indent);
                let prefix = " ".repeat(indent.unwrap_or(4));
                // The dump's last newline is the line's own (ansible's display adds none to a
                // message that ends with one; the callbacks here end every line themselves).
                let indented = indent_lines(&text, &prefix);
                format!("\n{}", indented.strip_suffix('\n').unwrap_or(&indented))
            }
        }
    }

    /// `_serialize_diff`: one dict side of a diff.
    pub fn diff_side(&self, node: &Node) -> String {
        match self.format {
            ResultFormat::Json => {
                let mut options = JsonOptions::indented(self.indentation, true);
                options.ensure_ascii = true;
                // A diff dict is data a module returned as JSON; it always serialises again.
                let text = tack_yaml::to_json(node, &options).unwrap_or_default();
                format!("{text}\n")
            }
            ResultFormat::Yaml => {
                let text = self.yaml(&node.value, Some(self.indentation));
                format!("{}\n", indent_lines(&text, "    "))
            }
        }
    }

    fn yaml(&self, value: &Value, indent: Option<usize>) -> String {
        let options = DumpOptions {
            indent: indent.and_then(|i| i32::try_from(i).ok()),
            width: self.yaml_width,
            default_flow_style: Some(false),
            sort_keys: true,
            vault: tack_yaml::VaultDump::KeepEncrypted,
            block_strings: Some(self.pretty != Some(false)),
        };
        tack_yaml::dump(value, &options)
            .unwrap_or_else(|e| format!("<<result not serialisable: {e}>>\n"))
    }
}

/// Python's `textwrap.indent(text, prefix)`: every line holding more than whitespace.
fn indent_lines(text: &str, prefix: &str) -> String {
    let mut out = String::with_capacity(text.len() + prefix.len() * 8);
    for line in tack_py::text::splitlines_keepends(text) {
        if !line.trim().is_empty() {
            out.push_str(prefix);
        }
        out.push_str(line);
    }
    out
}

/// ansible's `strip_internal_keys` on what a dump shows: its own controls (`_ansible_*`, such
/// as a loop item's `_ansible_item_label`) never reach the screen.
pub(crate) fn strip_internal_keys(shown: &mut Mapping) {
    let internal: Vec<String> = shown
        .keys()
        .filter_map(|k| k.as_str().filter(|k| k.starts_with("_ansible_")).map(str::to_string))
        .collect();
    for key in internal {
        shown.remove(&key);
    }
}
