//! `ansible.cfg` read the way ansible reads it: Python's `configparser.ConfigParser` with
//! `inline_comment_prefixes=(';',)` and every other option at its default (Python 3.13).
//!
//! Written here rather than taken from an INI crate because ansible's behaviour hangs on
//! configparser's exact rules and messages: `#` and `;` start a comment line but only `;` after
//! whitespace ends a value; an indented line continues the value above it, blank lines inside a
//! value are kept; keys are lower-cased, sections are not; `[DEFAULT]` feeds every other
//! section; a repeated section or key is an error; and every unparsable line is reported at once
//! as `[line  N]: 'text'`. Values are read raw (ansible asks for `raw=True`), so `%` is literal.
//!
//! Owns parsing only; what a key means is `resolve.rs`'s business.

use std::collections::{HashMap, HashSet};

use tack_py::repr::str_repr;
use tack_py::text::{rstrip, strip};
use tack_py::unicode::is_space;

/// Name configparser gives every error's source: ansible passes it a string, not a file.
const SOURCE: &str = "<string>";
const DEFAULT_SECTION: &str = "DEFAULT";

/// A parsed `ansible.cfg`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IniFile {
    sections: HashMap<String, HashMap<String, String>>,
    defaults: HashMap<String, String>,
}

impl IniFile {
    /// `parser.get(section, key, raw=True, fallback=None)`: the section's value, else the
    /// `[DEFAULT]` section's, but only when `section` itself exists.
    pub fn get(&self, section: &str, key: &str) -> Option<&str> {
        let values = self.sections.get(section)?;
        let key = key.to_lowercase();
        values.get(&key).or_else(|| self.defaults.get(&key)).map(String::as_str)
    }

    /// Parses `text`; the error is configparser's message, verbatim.
    pub fn parse(text: &str) -> Result<IniFile, String> {
        Parser::default().run(text)
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum Added {
    Section(String),
    Option(String, String),
}

#[derive(Default)]
struct Parser {
    file: IniFile,
    /// `None` before the first header; `Some("DEFAULT")` for the defaults section.
    section: Option<String>,
    /// Key whose value continuation lines extend; `Some("")` for a nameless key, which
    /// configparser stores but never continues.
    option: Option<String>,
    /// The value being built, one entry per line.
    lines: Vec<String>,
    indent_level: usize,
    added: HashSet<Added>,
    errors: Vec<(usize, String)>,
}

impl Parser {
    fn run(mut self, text: &str) -> Result<IniFile, String> {
        for (index, raw) in text.split_inclusive('\n').enumerate() {
            self.line(index + 1, raw)?;
        }
        self.flush();
        if self.errors.is_empty() {
            return Ok(self.file);
        }
        let mut msg = format!("Source contains parsing errors: {}", str_repr(SOURCE));
        for (lineno, line) in &self.errors {
            msg.push_str(&format!("\n\t[line {lineno:2}]: {}", str_repr(line)));
        }
        Err(msg)
    }

    fn line(&mut self, lineno: usize, raw: &str) -> Result<(), String> {
        let clean = clean(raw);
        if clean.is_empty() {
            let has_comment = strip(raw) != clean;
            if !has_comment && self.continuable() {
                self.lines.push(String::new());
            }
            return Ok(());
        }
        let indent = raw.chars().position(|c| !is_space(c)).unwrap_or(0);
        if self.continuable() && indent > self.indent_level {
            self.lines.push(clean.to_string());
            return Ok(());
        }
        self.indent_level = indent;
        if let Some(header) = section_header(clean) {
            return self.header(lineno, header);
        }
        if self.section.is_none() {
            return Err(format!(
                "File contains no section headers.\nfile: {}, line: {lineno}\n{}",
                str_repr(SOURCE),
                str_repr(raw)
            ));
        }
        self.option_line(lineno, raw, clean)
    }

    fn continuable(&self) -> bool {
        self.section.is_some() && self.option.as_deref().is_some_and(|o| !o.is_empty())
    }

    fn header(&mut self, lineno: usize, header: &str) -> Result<(), String> {
        self.flush();
        let exists = self.file.sections.contains_key(header);
        if exists && self.added.contains(&Added::Section(header.to_string())) {
            return Err(format!(
                "While reading from {} [line {lineno:2}]: section {} already exists",
                str_repr(SOURCE),
                str_repr(header)
            ));
        }
        if !exists && header != DEFAULT_SECTION {
            self.file.sections.insert(header.to_string(), HashMap::new());
        }
        if header != DEFAULT_SECTION || exists {
            self.added.insert(Added::Section(header.to_string()));
        }
        self.section = Some(header.to_string());
        self.option = None;
        Ok(())
    }

    fn option_line(&mut self, lineno: usize, raw: &str, clean: &str) -> Result<(), String> {
        let Some(delim) = clean.find(['=', ':']) else {
            self.errors.push((lineno, raw.to_string()));
            return Ok(());
        };
        let name = rstrip(&clean[..delim]);
        if name.is_empty() {
            self.errors.push((lineno, raw.to_string()));
        }
        let value = strip(&clean[delim + 1..]);
        self.flush();
        let name = name.to_lowercase();
        let section = self.section.clone().unwrap_or_default();
        if !self.added.insert(Added::Option(section.clone(), name.clone())) {
            return Err(format!(
                "While reading from {} [line {lineno:2}]: option {} in section {} already exists",
                str_repr(SOURCE),
                str_repr(&name),
                str_repr(&section)
            ));
        }
        self.option = Some(name);
        self.lines = vec![value.to_string()];
        Ok(())
    }

    /// Stores the value being built: its lines joined, trailing whitespace dropped.
    fn flush(&mut self) {
        let (Some(section), Some(option)) = (&self.section, &self.option) else { return };
        if self.lines.is_empty() {
            return;
        }
        let value = rstrip(&self.lines.join("\n")).to_string();
        self.lines.clear();
        let values = if section == DEFAULT_SECTION && !self.file.sections.contains_key(section) {
            &mut self.file.defaults
        } else {
            self.file.sections.entry(section.clone()).or_default()
        };
        values.insert(option.clone(), value);
    }
}

/// The line without comments: empty for a comment line, else cut at the first `;` that starts
/// the line or follows whitespace, and stripped.
fn clean(raw: &str) -> &str {
    let stripped = strip(raw);
    if stripped.starts_with('#') || stripped.starts_with(';') {
        return "";
    }
    let mut prev: Option<(usize, char)> = None;
    for (i, c) in raw.char_indices() {
        if c == ';' {
            match prev {
                None => return "",
                Some((at, p)) if is_space(p) => return strip(&raw[..at]),
                _ => {}
            }
        }
        prev = Some((i, c));
    }
    stripped
}

/// `\[(?P<header>.+)\]` matched at the start: the text up to the last `]`, at least one char.
fn section_header(clean: &str) -> Option<&str> {
    let inner = clean.strip_prefix('[')?;
    let end = inner.rfind(']')?;
    (end > 0).then(|| &inner[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_continuations_and_case() {
        let ini = IniFile::parse(
            "# c\n[defaults]\nFORKS = 8 ; note\nuser = a;b\nlist = a,\n  b\n\n  ; dropped\n  c\n\nk: v # kept\n",
        )
        .unwrap();
        assert_eq!(ini.get("defaults", "forks"), Some("8"));
        assert_eq!(ini.get("defaults", "user"), Some("a;b"));
        assert_eq!(ini.get("defaults", "list"), Some("a,\nb\n\nc"));
        assert_eq!(ini.get("defaults", "k"), Some("v # kept"));
        assert_eq!(ini.get("Defaults", "forks"), None);
    }

    #[test]
    fn default_section_feeds_existing_sections_only() {
        let ini = IniFile::parse("[DEFAULT]\nforks = 1\n[inventory]\n").unwrap();
        assert_eq!(ini.get("inventory", "forks"), Some("1"));
        assert_eq!(ini.get("defaults", "forks"), None);
    }

    #[test]
    fn errors_use_configparser_wording() {
        assert_eq!(
            IniFile::parse("[a]\nx = 1\nX = 2\n").unwrap_err(),
            "While reading from '<string>' [line  3]: option 'x' in section 'a' already exists"
        );
        assert_eq!(
            IniFile::parse("[a]\nx\n y\n").unwrap_err(),
            "Source contains parsing errors: '<string>'\n\t[line  2]: 'x\\n'\n\t[line  3]: ' y\\n'"
        );
        assert_eq!(
            IniFile::parse("x = 1").unwrap_err(),
            "File contains no section headers.\nfile: '<string>', line: 1\n'x = 1'"
        );
    }
}
