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

use std::collections::{BTreeMap, BTreeSet};
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

// ---- Import cycles --------------------------------------------------------------------------
//
// A crate's files name each other's items; files that need each other round a loop are one
// room a reader must take in whole. The rule: no import cycle spans more than
// [`LARGEST_CYCLE`] files. Crates built before the rule carry the size of their largest
// cycle in [`CYCLE_DEBT`], which may shrink and never grow.

/// The most files one import cycle inside a crate may span.
const LARGEST_CYCLE: usize = 4;

/// Crates whose largest cycle was larger than [`LARGEST_CYCLE`] when the rule came in: each
/// with that size, as a ceiling. Mostly one pattern: a `mod.rs` (or `lib.rs`) that both
/// defines what its modules share and dispatches to them (tack-actions was split out of it
/// that way: `input.rs`/`output.rs` below the modules, `lib.rs` above them).
const CYCLE_DEBT: &[(&str, usize)] =
    &[("tack-agent", 35), ("tack-template", 39), ("tack-connect", 6), ("tack", 6)];

type ModPath = Vec<String>;

/// A crate's module files, by module path (`[]` for `lib.rs`/`main.rs`, `["a", "b"]` for
/// `a/b.rs` or `a/b/mod.rs`); `src/bin` holds crate roots of their own and is left out.
fn crate_modules(src: &Path, files: &[PathBuf]) -> BTreeMap<ModPath, PathBuf> {
    let mut out = BTreeMap::new();
    for file in files {
        let Ok(rel) = file.strip_prefix(src) else { continue };
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        let last = parts.pop().unwrap_or_default();
        let stem = last.trim_end_matches(".rs");
        if !(parts.is_empty() && matches!(stem, "lib" | "main")) && stem != "mod" {
            parts.push(stem.to_string());
        }
        out.insert(parts, file.clone());
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier at `chars[i..]`, if one starts there.
fn ident_at(chars: &[char], i: usize) -> Option<String> {
    let len = chars[i..].iter().take_while(|c| is_ident(**c)).count();
    (len > 0).then(|| chars[i..i + len].iter().collect())
}

fn skip_space(chars: &[char], mut i: usize) -> usize {
    while chars.get(i).is_some_and(|c| c.is_whitespace()) {
        i += 1;
    }
    i
}

/// A path or `use` tree at `chars[i..]` (`a::b`, `a::{b, c::d as e}`, `{a, b}`): each path
/// with the name it is known by (its last segment, or its `as` name), and where it ends.
fn parse_tree(chars: &[char], mut i: usize, prefix: ModPath) -> (Vec<(ModPath, String)>, usize) {
    let mut prefix = prefix;
    loop {
        i = skip_space(chars, i);
        if chars.get(i) == Some(&'{') {
            let mut out = Vec::new();
            i += 1;
            loop {
                let (inner, end) = parse_tree(chars, i, prefix.clone());
                out.extend(inner);
                i = skip_space(chars, end);
                match chars.get(i) {
                    Some(',') => i += 1,
                    Some('}') => return (out, i + 1),
                    _ => return (out, i),
                }
            }
        }
        let Some(word) = ident_at(chars, i) else {
            let name = prefix.last().cloned().unwrap_or_default();
            return (vec![(prefix, name)], i);
        };
        i += word.chars().count();
        if word != "self" {
            prefix.push(word);
        }
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            continue;
        }
        let mut name = prefix.last().cloned().unwrap_or_default();
        let after = skip_space(chars, i);
        if ident_at(chars, after).as_deref() == Some("as") {
            let alias_at = skip_space(chars, after + 2);
            if let Some(alias) = ident_at(chars, alias_at) {
                i = alias_at + alias.chars().count();
                name = alias;
            }
        }
        return (vec![(prefix, name)], i);
    }
}

/// Where a path written in module `at` starts from: `crate::`, `super::` (as often as
/// written), `self::`, or a child module of `at` named bare; `None` for anything else.
fn path_base(
    chars: &[char],
    i: usize,
    at: &[String],
    modules: &BTreeMap<ModPath, PathBuf>,
) -> Option<(ModPath, usize)> {
    let word = ident_at(chars, i)?;
    let after = i + word.chars().count();
    if chars.get(after) != Some(&':') || chars.get(after + 1) != Some(&':') {
        return None;
    }
    match word.as_str() {
        "crate" => Some((Vec::new(), after + 2)),
        "self" => Some((at.to_vec(), after + 2)),
        "super" => {
            let mut base = at.to_vec();
            base.pop();
            let mut j = after + 2;
            while ident_at(chars, j).as_deref() == Some("super")
                && chars.get(j + 5) == Some(&':')
                && chars.get(j + 6) == Some(&':')
            {
                base.pop();
                j += 7;
            }
            Some((base, j))
        }
        _ => {
            let mut child = at.to_vec();
            child.push(word);
            modules.contains_key(&child).then_some((at.to_vec(), i))
        }
    }
}

/// Every path a file's code names from within its crate: (where it starts, what follows).
fn named_paths(
    code: &str,
    at: &[String],
    modules: &BTreeMap<ModPath, PathBuf>,
) -> Vec<(ModPath, String)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':')) && is_ident(chars[i]);
        if !starts {
            i += 1;
            continue;
        }
        match path_base(&chars, i, at, modules) {
            Some((base, from)) => {
                let (paths, end) = parse_tree(&chars, from, base);
                out.extend(paths);
                i = end.max(i + 1);
            }
            None => i += chars[i..].iter().take_while(|c| is_ident(**c)).count().max(1),
        }
    }
    out
}

/// What each `use` in the crate makes a name stand for: `(module, name)` → the path it names,
/// so `crate::Value`, re-exported by `lib.rs` from `value.rs`, is read as `value.rs`'s.
fn use_aliases(
    codes: &BTreeMap<ModPath, String>,
    modules: &BTreeMap<ModPath, PathBuf>,
) -> BTreeMap<ModPath, ModPath> {
    let mut out = BTreeMap::new();
    for (at, code) in codes {
        let chars: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let at_use = ident_at(&chars, i).as_deref() == Some("use")
                && (i == 0 || !is_ident(chars[i - 1]))
                && chars.get(i + 3).is_some_and(|c| c.is_whitespace());
            if !at_use {
                i += 1;
                continue;
            }
            let from = skip_space(&chars, i + 3);
            if let Some((base, start)) = path_base(&chars, from, at, modules) {
                let (paths, end) = parse_tree(&chars, start, base);
                for (path, name) in paths {
                    let mut alias = at.clone();
                    alias.push(name);
                    if alias != path {
                        out.insert(alias, path);
                    }
                }
                i = end.max(i + 1);
            } else {
                i += 3;
            }
        }
    }
    out
}

/// `path` with the names `use` gave along it replaced by what they stand for.
fn resolve(mut path: ModPath, aliases: &BTreeMap<ModPath, ModPath>) -> ModPath {
    for _ in 0..16 {
        let hit = (1..=path.len()).rev().find_map(|n| aliases.get(&path[..n]).map(|to| (n, to)));
        let Some((n, to)) = hit else { break };
        let mut next = to.clone();
        next.extend_from_slice(&path[n..]);
        path = next;
    }
    path
}

/// Which of a crate's files uses which: an edge for every item a file names, to the file of
/// the longest module path it (seen through `use` re-exports) starts with.
fn module_graph(src: &Path, files: &[PathBuf]) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let modules = crate_modules(src, files);
    let codes: BTreeMap<ModPath, String> = modules
        .iter()
        .map(|(at, file)| {
            let text = std::fs::read_to_string(file).expect("a readable source file");
            let code: Vec<String> = code_lines(&text).into_iter().map(|l| l.code).collect();
            (at.clone(), code.join("\n"))
        })
        .collect();
    let aliases = use_aliases(&codes, &modules);
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (at, code) in &codes {
        let file = &modules[at];
        let uses = graph.entry(file.clone()).or_default();
        for (path, _) in named_paths(code, at, &modules) {
            let path = resolve(path, &aliases);
            let target = (0..=path.len()).rev().find_map(|n| modules.get(&path[..n]));
            if let Some(target) = target.filter(|t| *t != file) {
                uses.insert(target.clone());
            }
        }
    }
    graph
}

/// The graph's cycles: every strongly connected set of more than one file (Tarjan's).
fn cycles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Search<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'g> Search<'g> {
        fn visit(&mut self, node: &'g PathBuf) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flatten() {
                let Some((next, _)) = self.graph.get_key_value(next) else { continue };
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut set = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    set.push(top.clone());
                    if top == node {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.found.push(set);
                }
            }
        }
    }
    let mut search = Search {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !search.index.contains_key(node) {
            search.visit(node);
        }
    }
    search.found
}

#[test]
fn import_cycles_stay_small() {
    let root = workspace_root();
    let files: Vec<PathBuf> = sources().into_iter().map(|p| root.join(p)).collect();
    let mut report = Vec::new();
    let mut checked = 0;
    let crates = std::fs::read_dir(root.join("crates")).expect("the workspace's crates directory");
    for krate in crates.flatten() {
        let name = krate.file_name().to_string_lossy().into_owned();
        let src = krate.path().join("src");
        let own: Vec<PathBuf> = files.iter().filter(|f| f.starts_with(&src)).cloned().collect();
        checked += own.len();
        let limit = CYCLE_DEBT.iter().find(|(c, _)| *c == name).map_or(LARGEST_CYCLE, |d| d.1);
        for cycle in cycles(&module_graph(&src, &own)) {
            if cycle.len() > limit {
                let names: Vec<String> = cycle
                    .iter()
                    .map(|p| p.strip_prefix(&root).unwrap_or(p).display().to_string())
                    .collect();
                report.push(format!(
                    "{name}: an import cycle of {} files (at most {limit}): {}",
                    cycle.len(),
                    names.join(", ")
                ));
            }
        }
    }
    assert!(checked > 100, "too few sources found under {}", root.display());
    assert!(report.is_empty(), "{}\n", report.join("\n"));
}

#[test]
fn a_planted_cycle_is_found() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("b")).expect("the planted crate's directories");
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::A;\n"),
        ("a.rs", "use crate::b::{c::C, d as dee};\npub struct A(dee::D);\n"),
        ("b/mod.rs", "pub mod c;\npub mod d;\n"),
        ("b/c.rs", "pub struct C(super::d::D);\n"),
        (
            "b/d.rs",
            "// crate::c is only a comment here; \"crate::c\" a string\npub struct D(crate::A);\n",
        ),
        ("c.rs", "pub struct E(crate::b::d::D);\n"),
    ];
    let mut paths = Vec::new();
    for (name, text) in files {
        std::fs::write(src.join(name), text).expect("a planted file");
        paths.push(src.join(name));
    }
    let found = cycles(&module_graph(&src, &paths));
    let names: Vec<Vec<String>> = found
        .iter()
        .map(|c| {
            c.iter().map(|p| p.strip_prefix(&src).unwrap_or(p).display().to_string()).collect()
        })
        .collect();
    // `crate::A` is `a.rs`'s (re-exported by `lib.rs`), so `lib.rs` is not in the cycle, nor
    // is `c.rs`, which only names `b/d.rs`.
    assert_eq!(names, [vec!["a.rs", "b/c.rs", "b/d.rs"]], "{found:?}");
}

/// Every setting of ansible's table (`tack-config`'s `table.rs`) is named, as a string
/// literal in code, somewhere else in tack's source: where it is honoured, or in
/// `settings_contract.rs`, which says why it changes nothing or refuses it. A setting parsed
/// and then ignored is a bug; this keeps a new one from slipping in unseen.
#[test]
fn every_setting_is_named() {
    let root = workspace_root();
    let table = std::fs::read_to_string(root.join("crates/tack-config/src/table.rs"))
        .expect("the settings table");
    let mut settings = BTreeSet::new();
    let mut rest = table.as_str();
    while let Some(at) = rest.find("SettingDef {") {
        rest = &rest[at + "SettingDef {".len()..];
        let Some(start) = rest.find("name: \"") else { break };
        let name = &rest[start + "name: \"".len()..];
        let Some(end) = name.find('"') else { break };
        settings.insert(name[..end].to_string());
    }
    assert!(settings.len() > 200, "too few settings read from the table: {}", settings.len());
    let mut named = BTreeSet::new();
    for path in sources() {
        if path.ends_with("tack-config/src/table.rs") {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&path)).expect("a source file");
        for line in code_lines(&text) {
            named.extend(line.strings.iter().filter(|s| settings.contains(*s)).cloned());
        }
    }
    let unnamed: Vec<&String> = settings.difference(&named).collect();
    assert!(
        unnamed.is_empty(),
        "settings named nowhere in tack's code (honour each, or list it in \
         crates/tack/src/settings_contract.rs): {unnamed:?}"
    );
}
