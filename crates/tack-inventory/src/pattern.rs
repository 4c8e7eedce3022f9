//! Host patterns as ansible's `InventoryManager` evaluates them: `all`/`*`, host and group
//! names, shell globs, `~regex`, lists joined by `,` or `:`, `&` intersections and `!`
//! exclusions (applied after the plain terms, in that order), subscripts `g[0]`, `g[1:3]`,
//! `g[-1]`, and `--limit` (including `@file` lists).
//!
//! A term that matches nothing is reported as ansible reports it (a warning by default, see
//! [`PatternMismatch`]). `localhost`, `127.0.0.1` and `::1` match the implicit localhost when
//! no host of that name exists. `~regex` terms use the `regex` crate, which lacks Python's
//! look-arounds and back-references; such a pattern is refused as invalid.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;
use tack_diag::{Diagnostic, ErrorClass};

use crate::address::parse_address;
use crate::data::{HostId, InventoryData, LOCALHOST_NAMES};

/// The `host_pattern_mismatch` setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PatternMismatch {
    #[default]
    Warning,
    Error,
    Ignore,
}

static SUBSCRIPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(.+)\[(?:(-?[0-9]+)|([0-9]+)([:-])([0-9]*))\]$").expect("static regex")
});
static COLON_TERMS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:[^\s:\[\]]|\[[^\]]*\])+").expect("static regex"));

/// `split_host_pattern`: the terms of a pattern. Commas always separate; without a comma,
/// colons do, unless the whole pattern is one host address (an IPv6 address, `host:port`,
/// `web[1:3]`).
pub fn split_host_pattern(pattern: &str) -> Vec<String> {
    let terms: Vec<String> = if pattern.contains(',') {
        pattern.split(',').map(str::to_string).collect()
    } else if parse_address(pattern, true).is_ok() {
        vec![pattern.to_string()]
    } else {
        COLON_TERMS.find_iter(pattern).map(|m| m.as_str().to_string()).collect()
    };
    terms.into_iter().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect()
}

/// `order_patterns`: plain terms first (`all` when there are none), then `&`, then `!`.
pub fn order_patterns(patterns: &[String]) -> Vec<String> {
    let mut regular = Vec::new();
    let mut intersection = Vec::new();
    let mut exclude = Vec::new();
    for p in patterns.iter().filter(|p| !p.is_empty()) {
        match p.chars().next() {
            Some('!') => exclude.push(p.clone()),
            Some('&') => intersection.push(p.clone()),
            _ => regular.push(p.clone()),
        }
    }
    if regular.is_empty() {
        regular.push("all".into());
    }
    regular.into_iter().chain(intersection).chain(exclude).collect()
}

/// `fnmatch.translate`: a shell glob as an anchored regular expression (case-sensitive).
pub fn glob_to_regex(glob: &str) -> String {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::from("^(?s:");
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => {
                while chars.get(i) == Some(&'*') {
                    i += 1;
                }
                out.push_str(".*");
            }
            '?' => out.push('.'),
            '[' => {
                let mut j = i;
                if chars.get(j) == Some(&'!') {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1;
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    out.push_str("\\[");
                    continue;
                }
                let mut class: String = chars[i..j].iter().collect();
                i = j + 1;
                class = class.replace('\\', "\\\\");
                let class = match class.strip_prefix('!') {
                    Some(rest) => format!("^{rest}"),
                    None if class.starts_with('^') || class.starts_with('[') => {
                        format!("\\{class}")
                    }
                    None => class,
                };
                let class =
                    class.replace("[", "\\[").replace("&&", "\\&\\&").replace("~~", "\\~\\~");
                if class.is_empty() {
                    // An empty class never matches; the regex crate has no `(?!)`.
                    out.push_str("[^\\s\\S]");
                } else if class == "^" {
                    out.push('.');
                } else {
                    out.push('[');
                    out.push_str(&class);
                    out.push(']');
                }
            }
            c => out.push_str(&regex::escape(&c.to_string())),
        }
    }
    out.push_str(")$");
    out
}

/// A compiled pattern term: a glob or a `~regex`.
struct Matcher(Regex);

impl Matcher {
    fn new(term: &str) -> Result<Matcher, Diagnostic> {
        let source = match term.strip_prefix('~') {
            Some(re) => format!("^(?:{re})"),
            None => glob_to_regex(term),
        };
        Regex::new(&source)
            .map(Matcher)
            .map_err(|_| Diagnostic::new(format!("Invalid host list pattern: {term}")))
    }

    fn matches(&self, name: &str) -> bool {
        self.0.is_match(name)
    }
}

type Subscript = (i64, Option<i64>);

/// `_split_subscript`: a term and its `[n]` / `[a:b]` subscript.
fn split_subscript(pattern: &str) -> (String, Option<Subscript>) {
    if pattern.starts_with('~') {
        return (pattern.to_string(), None);
    }
    let Some(caps) = SUBSCRIPT.captures(pattern) else { return (pattern.to_string(), None) };
    let base = caps[1].to_string();
    if let Some(idx) = caps.get(2) {
        return (base, Some((idx.as_str().parse().unwrap_or(0), None)));
    }
    let start = caps[3].parse().unwrap_or(0);
    let end = match caps.get(5).map(|m| m.as_str()).filter(|s| !s.is_empty()) {
        Some(e) => e.parse().unwrap_or(-1),
        None => -1,
    };
    if &caps[4] == "-" {
        tack_diag::warn(&Diagnostic::new(
            "Use [x:y] inclusive subscripts instead of [x-y] which has been removed",
        ));
    }
    (base, Some((start, Some(end))))
}

/// `_apply_subscript`, with Python's slicing and indexing rules.
fn apply_subscript(hosts: Vec<HostId>, subscript: Option<Subscript>) -> Option<Vec<HostId>> {
    let Some((start, end)) = subscript else { return Some(hosts) };
    if hosts.is_empty() {
        return Some(hosts);
    }
    let len = hosts.len() as i64;
    match end {
        // `[a:0]` counts as no end in ansible (a zero end is falsy).
        Some(end) if end != 0 => {
            let end = if end == -1 { len - 1 } else { end };
            let from = start.clamp(0, len) as usize;
            let to = (end + 1).clamp(0, len) as usize;
            Some(if from < to { hosts[from..to].to_vec() } else { Vec::new() })
        }
        _ => {
            let idx = if start < 0 { start + len } else { start };
            if idx < 0 || idx >= len {
                return None;
            }
            Some(vec![hosts[idx as usize]])
        }
    }
}

/// Pattern evaluation over an inventory.
pub(crate) struct Evaluator<'a> {
    pub data: &'a InventoryData,
    pub mismatch: PatternMismatch,
}

impl Evaluator<'_> {
    /// `_evaluate_patterns`.
    pub(crate) fn evaluate(&self, patterns: &[String]) -> Result<Vec<HostId>, Diagnostic> {
        let mut hosts: Vec<HostId> = Vec::new();
        for p in order_patterns(patterns) {
            if let Some(h) = self.data.find_host(&p) {
                hosts.push(h);
                continue;
            }
            let that = self.match_one(&p)?;
            match p.chars().next() {
                Some('!') => {
                    let that: HashSet<HostId> = that.into_iter().collect();
                    hosts.retain(|h| !that.contains(h));
                }
                Some('&') => {
                    let that: HashSet<HostId> = that.into_iter().collect();
                    hosts.retain(|h| that.contains(h));
                }
                _ => {
                    let existing: HashSet<&str> =
                        hosts.iter().map(|h| self.data.host(*h).name.as_str()).collect();
                    let new: Vec<HostId> = that
                        .into_iter()
                        .filter(|h| !existing.contains(self.data.host(*h).name.as_str()))
                        .collect();
                    hosts.extend(new);
                }
            }
        }
        Ok(hosts)
    }

    /// `_match_one_pattern`: one term, without its `&`/`!`.
    fn match_one(&self, pattern: &str) -> Result<Vec<HostId>, Diagnostic> {
        let pattern = pattern.strip_prefix(['&', '!']).unwrap_or(pattern);
        let (expr, subscript) = split_subscript(pattern);
        let hosts = self.enumerate(&expr)?;
        apply_subscript(hosts, subscript).ok_or_else(|| {
            Diagnostic::new(format!("No hosts matched the subscripted pattern '{pattern}'"))
        })
    }

    /// `_enumerate_matches`: groups whose name matches contribute all their hosts; hosts match
    /// by name when no group matched or the term is a glob or regex.
    fn enumerate(&self, pattern: &str) -> Result<Vec<HostId>, Diagnostic> {
        let matcher = Matcher::new(pattern)?;
        let mut results = Vec::new();
        let groups: Vec<_> =
            self.data.group_ids().filter(|g| matcher.matches(&self.data.group(*g).name)).collect();
        for g in &groups {
            results.extend(self.data.group_hosts(*g));
        }
        let special = pattern.starts_with('~') || pattern.contains(['.', '?', '*', '[']);
        if groups.is_empty() || special {
            results
                .extend(self.data.host_ids().filter(|h| matcher.matches(&self.data.host(*h).name)));
        }
        if results.is_empty()
            && LOCALHOST_NAMES.contains(&pattern)
            && let Some(h) = self.data.get_host(pattern)
        {
            results.push(h);
        }
        if results.is_empty() && groups.is_empty() && pattern != "all" {
            let msg = format!("Could not match supplied host pattern, ignoring: {pattern}");
            match self.mismatch {
                PatternMismatch::Warning => tack_diag::warn(&Diagnostic::new(msg)),
                PatternMismatch::Error => return Err(Diagnostic::new(msg)),
                PatternMismatch::Ignore => {}
            }
        }
        Ok(results)
    }
}

/// `subset`: the `--limit` terms, `@file` entries replaced by the file's lines.
pub fn limit_terms(limit: &str) -> Result<Vec<String>, Diagnostic> {
    let mut terms = Vec::new();
    for term in split_host_pattern(limit) {
        let Some(file) = term.strip_prefix('@') else {
            terms.push(term);
            continue;
        };
        let path = std::path::Path::new(file);
        let bytes_repr = tack_py::repr::bytes_repr(file.as_bytes());
        if !path.exists() {
            return Err(Diagnostic::new(format!("Unable to find limit file {bytes_repr}")));
        }
        if !path.is_file() {
            return Err(Diagnostic::new(format!(
                "Limit starting with \"@\" must be a file, not a directory: {bytes_repr}"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| {
            Diagnostic::new(format!("Unable to read limit file {bytes_repr}: {e}"))
                .with_class(ErrorClass::General)
        })?;
        terms.extend(text.split('\n').map(|l| l.trim().to_string()));
    }
    Ok(terms)
}

/// Removes repeated hosts, keeping first positions (`deduplicate_list`).
pub(crate) fn dedupe(hosts: Vec<HostId>) -> Vec<HostId> {
    let mut seen = HashSet::new();
    hosts.into_iter().filter(|h| seen.insert(*h)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn splitting() {
        assert_eq!(split_host_pattern("a,b[1], c[2:3] , d"), v(&["a", "b[1]", "c[2:3]", "d"]));
        assert_eq!(split_host_pattern("web:&db:!x"), v(&["web", "&db", "!x"]));
        assert_eq!(split_host_pattern("::1"), v(&["::1"]));
        assert_eq!(split_host_pattern("host:22"), v(&["host:22"]));
        assert_eq!(split_host_pattern("web[1:3]"), v(&["web[1:3]"]));
        assert_eq!(split_host_pattern("~web.*"), v(&["~web.*"]));
        assert_eq!(split_host_pattern(""), Vec::<String>::new());
    }

    #[test]
    fn ordering() {
        assert_eq!(order_patterns(&v(&["!a", "&b", "c", "d"])), v(&["c", "d", "&b", "!a"]));
        assert_eq!(order_patterns(&v(&["!a"])), v(&["all", "!a"]));
    }

    #[test]
    fn globs_like_fnmatch() {
        let m = |g: &str, s: &str| Regex::new(&glob_to_regex(g)).unwrap().is_match(s);
        assert!(m("web*", "web01"));
        assert!(!m("web*", "xweb"));
        assert!(m("db?", "db1"));
        assert!(m("h[0-9]", "h5"));
        assert!(m("h[!0-9]", "hx"));
        assert!(!m("h[!0-9]", "h1"));
        assert!(m("a.b", "a.b"));
        assert!(!m("a.b", "axb"));
        assert!(m("x[", "x["));
        assert!(!m("Web*", "web1"));
    }

    #[test]
    fn subscripts() {
        assert_eq!(split_subscript("g[0]"), ("g".into(), Some((0, None))));
        assert_eq!(split_subscript("g[-1]"), ("g".into(), Some((-1, None))));
        assert_eq!(split_subscript("g[1:3]"), ("g".into(), Some((1, Some(3)))));
        assert_eq!(split_subscript("g[1:]"), ("g".into(), Some((1, Some(-1)))));
        assert_eq!(split_subscript("~g[1]"), ("~g[1]".into(), None));
        let hosts: Vec<HostId> = (0..5).map(HostId).collect();
        assert_eq!(
            apply_subscript(hosts.clone(), Some((1, Some(3)))).unwrap(),
            hosts[1..4].to_vec()
        );
        assert_eq!(apply_subscript(hosts.clone(), Some((-1, None))).unwrap(), vec![HostId(4)]);
        assert_eq!(apply_subscript(hosts.clone(), Some((2, Some(0)))).unwrap(), vec![HostId(2)]);
        assert_eq!(
            apply_subscript(hosts.clone(), Some((3, Some(-1)))).unwrap(),
            hosts[3..].to_vec()
        );
        assert!(apply_subscript(hosts, Some((9, None))).is_none());
    }
}
