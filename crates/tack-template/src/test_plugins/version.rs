//! The version schemes ansible's `version` test compares with: Python's `LooseVersion` and
//! `StrictVersion` (ansible's copy of distutils'), ansible's `SemanticVersion` (SemVer 2.0.0)
//! and `packaging`'s PEP 440 `Version`, with their parse errors in their own words.
//!
//! Numbers are compared by their digits, so components of any size order as Python's integers
//! do. This module knows nothing about templates; it parses and orders strings.

use std::cmp::Ordering;

/// A version scheme, as `version_type` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Loose,
    Strict,
    Semantic,
    Pep440,
}

impl Scheme {
    /// The scheme `version_type` names, if any.
    pub fn named(name: &str) -> Option<Scheme> {
        Some(match name {
            "loose" => Scheme::Loose,
            "strict" => Scheme::Strict,
            "semver" | "semantic" => Scheme::Semantic,
            "pep440" => Scheme::Pep440,
            _ => return None,
        })
    }
}

/// Compares `a` with `b` in `scheme`; `Err` is the text of the exception Python raises (an
/// invalid version, or a `LooseVersion` comparison between a number and a word).
pub fn compare(scheme: Scheme, a: &str, b: &str) -> Result<Ordering, String> {
    match scheme {
        Scheme::Loose => loose_cmp(&loose(a), &loose(b)),
        Scheme::Strict => Ok(strict(a)?.cmp(&strict(b)?)),
        Scheme::Semantic => Ok(semantic(a)?.cmp(&semantic(b)?)),
        Scheme::Pep440 => Ok(pep440(a)?.cmp(&pep440(b)?)),
    }
}

/// Two runs of decimal digits compared as the integers they spell.
fn digits_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// An integer component, ordered by value.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Num(String);

impl Num {
    fn new(digits: &str) -> Num {
        let trimmed = digits.trim_start_matches('0');
        Num(if trimmed.is_empty() { "0".to_string() } else { trimmed.to_string() })
    }

    fn is_zero(&self) -> bool {
        self.0 == "0"
    }
}

impl Ord for Num {
    fn cmp(&self, other: &Num) -> Ordering {
        digits_cmp(&self.0, &other.0)
    }
}

impl PartialOrd for Num {
    fn partial_cmp(&self, other: &Num) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Python's `$`: the end of the text, or just before a final newline.
fn strip_final_newline(s: &str) -> &str {
    s.strip_suffix('\n').unwrap_or(s)
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Int(Num),
    Str(String),
}

/// `LooseVersion.parse`: runs of digits, runs of lowercase letters and whatever lies between
/// them, without the dots.
fn loose(s: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut between = String::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    let flush = |between: &mut String, parts: &mut Vec<Part>| {
        if !between.is_empty() {
            parts.push(Part::Str(std::mem::take(between)));
        }
    };
    while i < chars.len() {
        let c = chars[i];
        let run = |pred: fn(&char) -> bool, i: usize| {
            chars[i..].iter().take_while(|c| pred(c)).collect::<String>()
        };
        if c.is_ascii_digit() {
            flush(&mut between, &mut parts);
            let digits = run(char::is_ascii_digit, i);
            i += digits.chars().count();
            parts.push(Part::Int(Num::new(&digits)));
        } else if c.is_ascii_lowercase() {
            flush(&mut between, &mut parts);
            let word = run(char::is_ascii_lowercase, i);
            i += word.chars().count();
            parts.push(Part::Str(word));
        } else if c == '.' {
            flush(&mut between, &mut parts);
            i += 1;
        } else {
            between.push(c);
            i += 1;
        }
    }
    flush(&mut between, &mut parts);
    parts
}

/// Python's comparison of two `LooseVersion` component lists (`==`, then `<`), failing as
/// Python does where a number meets a word.
fn loose_cmp(a: &[Part], b: &[Part]) -> Result<Ordering, String> {
    for (x, y) in a.iter().zip(b) {
        if x == y {
            continue;
        }
        return match (x, y) {
            (Part::Int(p), Part::Int(q)) => Ok(p.cmp(q)),
            (Part::Str(p), Part::Str(q)) => Ok(p.cmp(q)),
            (Part::Int(_), Part::Str(_)) => {
                Err("'<' not supported between instances of 'int' and 'str'".to_string())
            }
            (Part::Str(_), Part::Int(_)) => {
                Err("'<' not supported between instances of 'str' and 'int'".to_string())
            }
        };
    }
    Ok(a.len().cmp(&b.len()))
}

/// A `StrictVersion`: three numbers and an optional `a`/`b` pre-release, which sorts first.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Strict {
    version: [Num; 3],
    /// `None` (a release) sorts after every pre-release.
    release_rank: u8,
    prerelease: Option<(char, Num)>,
}

fn take_digits(s: &str) -> (&str, &str) {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    s.split_at(end)
}

fn strict(s: &str) -> Result<Strict, String> {
    let invalid = || format!("invalid version number '{s}'");
    let text = strip_final_newline(s);
    let mut numbers = Vec::new();
    let mut rest = text;
    loop {
        let (digits, after) = take_digits(rest);
        if digits.is_empty() {
            return Err(invalid());
        }
        numbers.push(Num::new(digits));
        rest = after;
        if numbers.len() == 3 {
            break;
        }
        match rest.strip_prefix('.') {
            Some(after) => rest = after,
            None if numbers.len() == 2 => break,
            None => return Err(invalid()),
        }
    }
    let prerelease = match rest.chars().next() {
        None => None,
        Some(letter @ ('a' | 'b')) => {
            let (digits, after) = take_digits(&rest[1..]);
            if digits.is_empty() || !after.is_empty() {
                return Err(invalid());
            }
            Some((letter, Num::new(digits)))
        }
        Some(_) => return Err(invalid()),
    };
    let mut it = numbers.into_iter();
    let mut next = || it.next().unwrap_or_else(|| Num::new("0"));
    Ok(Strict {
        version: [next(), next(), next()],
        release_rank: u8::from(prerelease.is_none()),
        prerelease,
    })
}

/// A SemVer pre-release identifier: numbers sort before words.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ident {
    Numeric(Num),
    Alpha(String),
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Semantic {
    core: [Num; 3],
    /// A release (no pre-release) sorts after its pre-releases.
    release_rank: u8,
    prerelease: Vec<Ident>,
}

fn is_semver_number(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

fn semantic(s: &str) -> Result<Semantic, String> {
    let invalid = || format!("invalid semantic version '{s}'");
    let text = strip_final_newline(s);
    let (text, build) = match text.split_once('+') {
        Some((t, b)) => (t, Some(b)),
        None => (text, None),
    };
    if let Some(build) = build
        && !build.split('.').all(is_ident)
    {
        return Err(invalid());
    }
    let (core, pre) = match text.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (text, None),
    };
    let numbers: Vec<&str> = core.split('.').collect();
    if numbers.len() != 3 || !numbers.iter().all(|n| is_semver_number(n)) {
        return Err(invalid());
    }
    let mut prerelease = Vec::new();
    if let Some(pre) = pre {
        for ident in pre.split('.') {
            let numeric = !ident.is_empty() && ident.chars().all(|c| c.is_ascii_digit());
            if !is_ident(ident) || (numeric && !is_semver_number(ident)) {
                return Err(invalid());
            }
            prerelease.push(if numeric {
                Ident::Numeric(Num::new(ident))
            } else {
                Ident::Alpha(ident.to_string())
            });
        }
    }
    Ok(Semantic {
        core: [Num::new(numbers[0]), Num::new(numbers[1]), Num::new(numbers[2])],
        release_rank: u8::from(prerelease.is_empty()),
        prerelease,
    })
}

/// A PEP 440 local-version segment: words sort before numbers.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Local {
    Str(String),
    Int(Num),
}

/// `packaging.version.Version`'s sort key.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Pep440 {
    epoch: Num,
    release: Vec<Num>,
    /// dev-only -1, a 0, b 1, rc 2, none 3; then its number.
    pre: (i8, Num),
    /// none 0, post 1; then its number.
    post: (u8, Num),
    /// dev 0, none 1; then its number.
    dev: (u8, Num),
    local: Option<Vec<Local>>,
}

/// A cursor over a lowercased version string, for PEP 440's grammar (whose quantifiers are
/// possessive: an optional part either matches whole or leaves the cursor where it was).
struct Cursor<'a> {
    s: &'a str,
}

impl<'a> Cursor<'a> {
    fn digits(&mut self) -> Option<&'a str> {
        let (d, rest) = take_digits(self.s);
        if d.is_empty() {
            return None;
        }
        self.s = rest;
        Some(d)
    }

    fn sep(&mut self) {
        if let Some(rest) = self.s.strip_prefix(['.', '_', '-']) {
            self.s = rest;
        }
    }

    fn word(&mut self, words: &[&'static str]) -> Option<&'static str> {
        let found = words.iter().find(|w| self.s.starts_with(**w))?;
        self.s = &self.s[found.len()..];
        Some(found)
    }

    /// `[._-]? WORD [._-]? N?`, or nothing (the cursor unmoved).
    fn lettered(&mut self, words: &[&'static str]) -> Option<(&'static str, Num)> {
        let start = self.s;
        self.sep();
        let Some(word) = self.word(words) else {
            self.s = start;
            return None;
        };
        // Possessive: a separator after the word stays taken even when no number follows.
        self.sep();
        let n = self.digits().map_or_else(|| Num::new("0"), Num::new);
        Some((word, n))
    }
}

fn pep440(s: &str) -> Result<Pep440, String> {
    let invalid = || format!("Invalid version: '{s}'");
    let lowered = s.trim().to_ascii_lowercase();
    let mut c = Cursor { s: lowered.strip_prefix('v').unwrap_or(&lowered) };
    let first = c.digits().ok_or_else(invalid)?;
    let (epoch, first) = match c.s.strip_prefix('!') {
        Some(rest) => {
            c.s = rest;
            (Num::new(first), c.digits().ok_or_else(invalid)?)
        }
        None => (Num::new("0"), first),
    };
    let mut release = vec![Num::new(first)];
    while let Some(rest) = c.s.strip_prefix('.') {
        let (d, after) = take_digits(rest);
        if d.is_empty() {
            break;
        }
        release.push(Num::new(d));
        c.s = after;
    }
    // `1.0.0 == 1`: trailing zeros do not count.
    while release.last().is_some_and(Num::is_zero) {
        release.pop();
    }
    let pre = c.lettered(&["alpha", "a", "beta", "b", "preview", "pre", "c", "rc"]);
    let post = match c.s.strip_prefix('-').and_then(|r| {
        let (d, after) = take_digits(r);
        (!d.is_empty()).then_some((d, after))
    }) {
        Some((d, after)) => {
            c.s = after;
            Some(Num::new(d))
        }
        None => c.lettered(&["post", "rev", "r"]).map(|(_, n)| n),
    };
    let dev = c.lettered(&["dev"]).map(|(_, n)| n);
    let local = match c.s.strip_prefix('+') {
        Some(rest) => {
            let parts: Vec<&str> = rest.split(['.', '_', '-']).collect();
            if parts.iter().any(|p| p.is_empty() || !p.chars().all(|ch| ch.is_ascii_alphanumeric()))
            {
                return Err(invalid());
            }
            c.s = "";
            Some(
                parts
                    .into_iter()
                    .map(|p| {
                        if p.chars().all(|ch| ch.is_ascii_digit()) {
                            Local::Int(Num::new(p))
                        } else {
                            Local::Str(p.to_string())
                        }
                    })
                    .collect(),
            )
        }
        None => None,
    };
    if !c.s.is_empty() {
        return Err(invalid());
    }
    let pre = match (&pre, &post, &dev) {
        (None, None, Some(_)) => (-1, Num::new("0")),
        (None, _, _) => (3, Num::new("0")),
        (Some((word, n)), _, _) => {
            let rank = match *word {
                "alpha" | "a" => 0,
                "beta" | "b" => 1,
                _ => 2,
            };
            (rank, n.clone())
        }
    };
    Ok(Pep440 {
        epoch,
        release,
        pre,
        post: post.map_or((0, Num::new("0")), |n| (1, n)),
        dev: dev.map_or((1, Num::new("0")), |n| (0, n)),
        local,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmp(scheme: Scheme, a: &str, b: &str) -> Result<Ordering, String> {
        compare(scheme, a, b)
    }

    // Orders from the schemes' own documentation (distutils' docstrings, semver.org §11,
    // PEP 440's examples).
    #[test]
    fn documented_orders() {
        assert_eq!(cmp(Scheme::Strict, "0.4", "0.4.0"), Ok(Ordering::Equal));
        assert_eq!(cmp(Scheme::Strict, "0.5a1", "0.5b3"), Ok(Ordering::Less));
        assert_eq!(cmp(Scheme::Strict, "1.0.4b1", "1.0.4"), Ok(Ordering::Less));
        let semver = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        for pair in semver.windows(2) {
            assert_eq!(cmp(Scheme::Semantic, pair[0], pair[1]), Ok(Ordering::Less), "{pair:?}");
        }
        let pep = [
            "1.0.dev456",
            "1.0a1",
            "1.0a2.dev456",
            "1.0a12",
            "1.0b1.dev456",
            "1.0rc1",
            "1.0",
            "1.0+abc.5",
            "1.0+5",
            "1.0.post456.dev34",
            "1.0.post456",
            "1.1.dev1",
        ];
        for pair in pep.windows(2) {
            assert_eq!(cmp(Scheme::Pep440, pair[0], pair[1]), Ok(Ordering::Less), "{pair:?}");
        }
        assert_eq!(cmp(Scheme::Loose, "1.10", "1.9"), Ok(Ordering::Greater));
    }
}
