//! Tidy checks over the workspace's own source, in the manner of rust-analyzer's
//! `xtask/src/tidy.rs`: rules about where code may live, checked by reading every
//! `crates/*/src/**/*.rs` file.
//!
//! Each rule is a row of [`RULES`]: a name, what a line that breaks it looks like, the one file
//! allowed to hold it (its home), the files holding a look-alike rule of their own (each with
//! which rule that is), and the message a failure prints next to the file and line. A new
//! rule is a new row; a check that is not about single lines (a module cycle, say) can sit
//! beside [`home_rules_hold`] as a test of its own over the same [`sources`].
//!
//! Lines are read as code: comments are dropped and string literals are taken out whole, so a
//! rule can ask which literals a line holds without a comment or a `"//"` fooling it. Test
//! code (`#[cfg(test)] mod … { … }` and `*tests.rs` files) is skipped: tests spell out the
//! words they feed a rule.

use std::path::{Path, PathBuf};

/// A line of code: its number, its text with comments dropped and each string literal
/// replaced by `"<n>"` (`n` indexing `strings`), and the literals' contents.
struct CodeLine {
    number: usize,
    code: String,
    strings: Vec<String>,
}

impl CodeLine {
    fn has(&self, literal: &str) -> bool {
        self.strings.iter().any(|s| s == literal)
    }

    /// The contents of the string literal at the start of `code` (a placeholder), if any.
    fn literal_at(&self, code: &str) -> Option<&str> {
        let rest = code.strip_prefix('"')?;
        let index: usize = rest[..rest.find('"')?].parse().ok()?;
        self.strings.get(index).map(String::as_str)
    }
}

struct Rule {
    name: &'static str,
    /// Whether a line breaks the rule.
    matches: fn(&CodeLine) -> bool,
    /// The one file allowed to hold the rule, relative to the workspace root.
    home: &'static str,
    /// Files that hold a different rule that looks like this one, and which rule it is.
    look_alikes: &'static [(&'static str, &'static str)],
    message: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        name: "boolean-words",
        matches: boolean_words,
        home: "crates/tack-py/src/boolean.rs",
        look_alikes: &[
            ("crates/tack-yaml/src/scalar.rs", "YAML 1.1's bool scalars (PyYAML's resolver)"),
            (
                "crates/tack-template/src/filters/core.rs",
                "the Jinja `bool` filter's own word lists",
            ),
        ],
        message: "ansible's boolean() words spelled out: use tack_py::boolean (through \
                  tack_yaml::Value::boolean_strict/boolean_loose for values), or, for a \
                  different rule, name it and list the file among this rule's look-alikes",
    },
    Rule {
        name: "core-collection-prefix",
        matches: strips_core_collection,
        home: "crates/tack-py/src/ansible.rs",
        look_alikes: &[],
        message: "`ansible.builtin.`/`ansible.legacy.` stripped by hand: use \
                  tack_py::ansible::short_name (or strip_core_collection) with the collections \
                  this site accepts",
    },
];

/// ansible's true or false words side by side: `"yes"` with `"on"`, `"no"` with `"off"`, `"y"`
/// with `"t"`, or `"n"` with `"f"` among one line's string literals.
fn boolean_words(line: &CodeLine) -> bool {
    [("yes", "on"), ("no", "off"), ("y", "t"), ("n", "f")]
        .iter()
        .any(|(a, b)| line.has(a) && line.has(b))
}

/// `strip_prefix` or `trim_start_matches` given `"ansible.builtin."` or `"ansible.legacy."`.
fn strips_core_collection(line: &CodeLine) -> bool {
    ["strip_prefix(", "trim_start_matches("].iter().any(|call| {
        line.code.match_indices(call).any(|(at, _)| {
            let arg = line.code[at + call.len()..].trim_start();
            matches!(line.literal_at(arg), Some("ansible.builtin." | "ansible.legacy."))
        })
    })
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `crates/*/src/**/*.rs` file but test files, relative to the workspace root, sorted.
fn sources() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs")
                && !path.file_name().is_some_and(|n| n.to_string_lossy().ends_with("tests.rs"))
            {
                out.push(path);
            }
        }
    }
    let root = workspace_root();
    let mut out = Vec::new();
    let crates = std::fs::read_dir(root.join("crates")).expect("the workspace's crates directory");
    for krate in crates.flatten() {
        walk(&krate.path().join("src"), &mut out);
    }
    let mut out: Vec<PathBuf> =
        out.into_iter().map(|p| p.strip_prefix(&root).unwrap_or(&p).to_path_buf()).collect();
    out.sort();
    out
}

/// Where the lexer is between characters.
enum State {
    Code,
    LineComment,
    BlockComment(usize),
    Str,
    RawStr(usize),
}

/// `text` as code lines (see [`CodeLine`]), test modules left out.
fn code_lines(text: &str) -> Vec<CodeLine> {
    let mut lines: Vec<CodeLine> = Vec::new();
    let mut line = CodeLine { number: 1, code: String::new(), strings: Vec::new() };
    let mut literal = String::new();
    let mut opened_at = 0;
    let mut state = State::Code;
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            if matches!(state, State::LineComment) {
                state = State::Code;
            }
            if matches!(state, State::Str | State::RawStr(_)) {
                literal.push('\n');
            }
            let number = line.number + 1;
            lines.push(std::mem::replace(
                &mut line,
                CodeLine { number, code: String::new(), strings: Vec::new() },
            ));
            i += 1;
            continue;
        }
        match state {
            State::LineComment => i += 1,
            State::BlockComment(depth) => {
                if c == '*' && next == Some('/') {
                    state = if depth == 1 { State::Code } else { State::BlockComment(depth - 1) };
                    i += 2;
                } else if c == '/' && next == Some('*') {
                    state = State::BlockComment(depth + 1);
                    i += 2;
                } else {
                    i += 1;
                }
            }
            State::Str => {
                if c == '\\' {
                    literal.push(c);
                    if let Some(n) = next {
                        literal.push(n);
                    }
                    i += 2;
                } else if c == '"' {
                    state = State::Code;
                    close_literal(&mut lines, &mut line, opened_at, &mut literal);
                    i += 1;
                } else {
                    literal.push(c);
                    i += 1;
                }
            }
            State::RawStr(hashes) => {
                let closes = c == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#'));
                if closes {
                    state = State::Code;
                    close_literal(&mut lines, &mut line, opened_at, &mut literal);
                    i += 1 + hashes;
                } else {
                    literal.push(c);
                    i += 1;
                }
            }
            State::Code => {
                let prev_is_ident =
                    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
                if c == '/' && next == Some('/') {
                    state = State::LineComment;
                    i += 2;
                } else if c == '/' && next == Some('*') {
                    state = State::BlockComment(1);
                    i += 2;
                } else if c == '"' {
                    state = State::Str;
                    open_literal(&mut line);
                    opened_at = lines.len();
                    i += 1;
                } else if c == 'r' && !prev_is_ident && matches!(next, Some('"' | '#')) {
                    let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        state = State::RawStr(hashes);
                        open_literal(&mut line);
                        opened_at = lines.len();
                        i += 2 + hashes;
                    } else {
                        line.code.push(c);
                        i += 1;
                    }
                } else if c == '\'' {
                    // A char literal (`'"'`, `'\''`) is skipped whole; a lifetime is code.
                    let end = if next == Some('\\') {
                        chars[i + 2..].iter().position(|&q| q == '\'').map(|p| i + 3 + p)
                    } else if chars.get(i + 2) == Some(&'\'') {
                        Some(i + 3)
                    } else {
                        None
                    };
                    match end {
                        Some(end) => {
                            line.code.push_str("' '");
                            i = end;
                        }
                        None => {
                            line.code.push(c);
                            i += 1;
                        }
                    }
                } else {
                    line.code.push(c);
                    i += 1;
                }
            }
        }
    }
    lines.push(line);
    without_test_modules(lines)
}

/// A literal starts on `line`: its placeholder goes into the code.
fn open_literal(line: &mut CodeLine) {
    line.code.push_str(&format!("\"{}\"", line.strings.len()));
}

/// The literal read so far ends; it belongs to the line it started on, the `opened_at`-th
/// (`line` itself, or one already finished when the literal spans lines).
fn close_literal(
    lines: &mut [CodeLine],
    line: &mut CodeLine,
    opened_at: usize,
    literal: &mut String,
) {
    let text = std::mem::take(literal);
    match lines.get_mut(opened_at) {
        Some(owner) => owner.strings.push(text),
        None => line.strings.push(text),
    }
}

/// Drops every `#[cfg(test)]` module with a body (`mod tests { … }`) and the lines inside it.
fn without_test_modules(lines: Vec<CodeLine>) -> Vec<CodeLine> {
    let mut out = Vec::with_capacity(lines.len());
    let mut skipping: Option<i64> = None;
    let mut armed = false;
    for line in lines {
        let code = line.code.trim();
        if let Some(depth) = skipping.as_mut() {
            *depth += brace_balance(&line.code);
            if *depth <= 0 {
                skipping = None;
            }
            continue;
        }
        if code == "#[cfg(test)]" {
            armed = true;
            continue;
        }
        if armed && code.starts_with("mod ") && code.ends_with('{') {
            skipping = Some(brace_balance(&line.code));
            armed = false;
            continue;
        }
        armed = armed && (code.is_empty() || code.starts_with("#["));
        out.push(line);
    }
    out
}

fn brace_balance(code: &str) -> i64 {
    code.chars().map(|c| i64::from(c == '{') - i64::from(c == '}')).sum()
}

/// Every place a rule is broken: `path:line: [rule] message`.
fn violations(path: &Path, text: &str) -> Vec<String> {
    let shown = path.to_string_lossy().replace('\\', "/");
    let mut out = Vec::new();
    let lines = code_lines(text);
    for rule in RULES {
        if shown == rule.home || rule.look_alikes.iter().any(|(p, _)| *p == shown) {
            continue;
        }
        for line in lines.iter().filter(|l| (rule.matches)(l)) {
            out.push(format!("{shown}:{}: [{}] {}", line.number, rule.name, rule.message));
        }
    }
    out
}

#[test]
fn home_rules_hold() {
    let root = workspace_root();
    let files = sources();
    assert!(files.len() > 100, "too few sources found under {}", root.display());
    for rule in RULES {
        for path in std::iter::once(rule.home).chain(rule.look_alikes.iter().map(|(p, _)| *p)) {
            assert!(root.join(path).is_file(), "rule {}: {path} is not a file", rule.name);
        }
    }
    let mut found = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(root.join(&path)).expect("a readable source file");
        found.extend(violations(&path, &text));
    }
    assert!(found.is_empty(), "{} tidy violation(s):\n{}\n", found.len(), found.join("\n"));
}

#[test]
fn planted_copies_are_found() {
    let planted = r#"
// "yes" and "on" in a comment are not code.
fn a(s: &str) -> bool { matches!(s, "yes" | "on") }
fn b(s: &str) -> bool { ["y", "t"].contains(&s) } // "n", "f"
const C: &str = "no // off"; /* "no", "off" */
fn d(name: &str) -> &str { name.strip_prefix("ansible.builtin.").unwrap_or(name) }
fn e(name: &str) -> &str { name.trim_start_matches( "ansible.legacy.") }
fn f(name: &str) -> Option<&str> { name.strip_prefix("ansible.") }
const G: char = '"'; const H: [&str; 2] = ["n", "f"];

#[cfg(test)]
mod tests {
    fn words() -> [&'static str; 2] { ["yes", "on"] }
}
"#;
    let found = violations(Path::new("crates/x/src/planted.rs"), planted);
    let lines: Vec<&str> = found.iter().map(|v| v.split(": ").next().unwrap_or_default()).collect();
    assert_eq!(
        lines,
        [
            "crates/x/src/planted.rs:3",
            "crates/x/src/planted.rs:4",
            "crates/x/src/planted.rs:9",
            "crates/x/src/planted.rs:6",
            "crates/x/src/planted.rs:7",
        ],
        "{found:#?}"
    );
    assert!(violations(Path::new("crates/tack-py/src/boolean.rs"), planted).len() == 2);
}
