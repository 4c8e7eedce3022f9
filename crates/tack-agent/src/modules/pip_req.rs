//! The `pip` module's view of a package name: the requirement grammar (name, extras, version
//! specifiers) as the `packaging` library reads and prints it, PEP 440 versions and the
//! specifier tests check mode uses to decide whether an installed version satisfies a name.
//! Owns parsing and comparison only; running pip is `pip.rs`'s job.

use std::cmp::Ordering;

/// A requirement as ansible's `Package` wraps it: parsed, or (when the requirement grammar
/// rejects it: a URL, a path) kept as the text given.
#[derive(Debug, Clone)]
pub(super) struct Package {
    /// The canonical project name when parsed, else the text as given.
    pub package_name: String,
    req: Option<Requirement>,
}

#[derive(Debug, Clone)]
struct Requirement {
    name: String,
    extras: Vec<String>,
    specs: Vec<Spec>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Spec {
    op: String,
    version: String,
}

/// Why a name is refused before pip runs: grammar tack does not parse.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unsupported {
    #[error(
        "pip: tack does not parse environment markers or direct URL references (`;`, `@`) in \
         name {0:?}"
    )]
    MarkerOrUrl(String),
}

const OPS: &[&str] = &["~=", "==", "!=", "<=", ">=", "<", ">", "==="];

impl Package {
    /// `Package(name_string, version_string)`.
    pub(super) fn new(name: &str, version: Option<&str>) -> Result<Package, Unsupported> {
        let mut text = name.to_string();
        if let Some(v) = version {
            let v = v.trim_start();
            let sep = if v.chars().next().is_some_and(|c| c.is_ascii_digit()) { "==" } else { " " };
            text = format!("{name}{sep}{v}");
        }
        let req = parse_requirement(&text);
        if req.is_none() && (text.contains(';') || text.contains(" @") || text.contains("@ ")) {
            let head = text.split([';', '@']).next().unwrap_or_default();
            if parse_requirement(head.trim()).is_some() {
                return Err(Unsupported::MarkerOrUrl(text));
            }
        }
        Ok(match req {
            Some(r) => {
                let canon = canonicalize(&r.name);
                let package_name = if canon == "distribute" && text.contains("setuptools") {
                    "setuptools".to_string()
                } else {
                    canon
                };
                Package { package_name, req: Some(r) }
            }
            None => Package { package_name: name.to_string(), req: None },
        })
    }

    pub(super) fn has_version_specifier(&self) -> bool {
        self.req.as_ref().is_some_and(|r| !r.specs.is_empty())
    }

    pub(super) fn has_requirement(&self) -> bool {
        self.req.is_some()
    }

    /// `specifier.contains(version, prereleases=True)`.
    pub(super) fn is_satisfied_by(&self, version: &str) -> bool {
        let Some(req) = &self.req else { return false };
        let Some(v) = Version::parse(version) else { return false };
        req.specs.iter().all(|s| s.contains(&v, version))
    }

    /// `str(Package)`: the requirement as `packaging` prints it, or the text as given.
    pub(super) fn render(&self) -> String {
        let Some(r) = &self.req else { return self.package_name.clone() };
        let mut out = r.name.clone();
        if !r.extras.is_empty() {
            let mut extras = r.extras.clone();
            extras.sort();
            extras.dedup();
            out.push_str(&format!("[{}]", extras.join(",")));
        }
        let mut specs: Vec<String> =
            r.specs.iter().map(|s| format!("{}{}", s.op, s.version)).collect();
        specs.sort();
        specs.dedup();
        out.push_str(&specs.join(","));
        out
    }
}

/// `Package.canonicalize_name`: runs of `-_.` become one `-`, lower case.
pub(super) fn canonicalize(name: &str) -> String {
    let mut out = String::new();
    let mut in_sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !in_sep {
                out.push('-');
            }
            in_sep = true;
        } else {
            out.extend(c.to_lowercase());
            in_sep = false;
        }
    }
    out
}

/// `_recover_package_name`: rejoins version specifiers a list split at commas.
pub(super) fn recover_package_names(names: &[String]) -> Vec<String> {
    let parts: Vec<&str> = names.iter().flat_map(|n| n.split(',')).collect();
    let is_name = |s: &str| !OPS.iter().any(|op| s.trim_start().starts_with(op));
    let mut out = Vec::new();
    let mut cur: Vec<&str> = Vec::new();
    let mut in_brackets = false;
    for part in parts {
        if is_name(part) && !in_brackets {
            if !cur.is_empty() {
                out.push(cur.join(","));
            }
            cur.clear();
        }
        if part.contains('[') {
            in_brackets = true;
        }
        if in_brackets && part.contains(']') {
            in_brackets = false;
        }
        cur.push(part);
    }
    out.push(cur.join(","));
    out
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// The requirement grammar without markers and URLs: `name [extras] specifiers`, specifiers
/// optionally in parentheses. `None` where `packaging` raises.
fn parse_requirement(text: &str) -> Option<Requirement> {
    let s = text.trim();
    let end = s.find(|c: char| !is_name_char(c)).unwrap_or(s.len());
    let name = &s[..end];
    if name.is_empty()
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !name.ends_with(|c: char| c.is_ascii_alphanumeric())
    {
        return None;
    }
    let mut rest = s[end..].trim_start();
    let mut extras = Vec::new();
    if let Some(after) = rest.strip_prefix('[') {
        let close = after.find(']')?;
        for e in after[..close].split(',').map(str::trim) {
            if e.is_empty() || !e.chars().all(is_name_char) {
                if e.is_empty() && after[..close].trim().is_empty() {
                    continue;
                }
                return None;
            }
            extras.push(e.to_string());
        }
        rest = after[close + 1..].trim_start();
    }
    let mut inner = rest;
    if let Some(p) = rest.strip_prefix('(') {
        inner = p.strip_suffix(')')?;
    }
    let mut specs = Vec::new();
    if !inner.trim().is_empty() {
        for item in inner.split(',') {
            specs.push(parse_spec(item.trim())?);
        }
    }
    Some(Requirement { name: name.to_string(), extras, specs })
}

fn parse_spec(item: &str) -> Option<Spec> {
    let op = ["===", "~=", "==", "!=", "<=", ">=", "<", ">"]
        .into_iter()
        .find(|op| item.starts_with(op))?;
    let version = item[op.len()..].trim();
    if version.is_empty() || version.contains(char::is_whitespace) {
        return None;
    }
    if op != "===" {
        let (base, wild) = match version.strip_suffix(".*") {
            Some(b) => (b, true),
            None => (version, false),
        };
        if wild && !matches!(op, "==" | "!=") {
            return None;
        }
        let v = Version::parse(base)?;
        if op == "~=" && (v.release.len() < 2 || v.local.is_some()) {
            return None;
        }
        if wild && (v.dev.is_some() || v.local.is_some()) {
            return None;
        }
    }
    Some(Spec { op: op.to_string(), version: version.to_string() })
}

/// [`Version::key`]: epoch, release, pre, post, dev, local segments.
type VersionKey = (u64, Vec<u64>, (i8, u8, u64), (i8, u64), (i8, u64), Vec<(i8, u64, String)>);

/// A PEP 440 version.
#[derive(Debug, Clone)]
struct Version {
    epoch: u64,
    release: Vec<u64>,
    pre: Option<(u8, u64)>,
    post: Option<u64>,
    dev: Option<u64>,
    local: Option<String>,
}

impl Version {
    fn parse(text: &str) -> Option<Version> {
        let s = text.trim().to_ascii_lowercase();
        let s = s.strip_prefix('v').unwrap_or(&s);
        let (public, local) = match s.split_once('+') {
            Some((p, l))
                if !l.is_empty()
                    && l.chars().all(|c| c.is_ascii_alphanumeric() || ".-_".contains(c)) =>
            {
                (p, Some(l.replace(['-', '_'], ".")))
            }
            Some(_) => return None,
            None => (s, None),
        };
        let (epoch, rest) = match public.split_once('!') {
            Some((e, r)) => (e.parse().ok()?, r),
            None => (0, public),
        };
        let rel_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let rel_text = rest[..rel_end].trim_end_matches('.');
        let mut tail = &rest[rel_text.len()..];
        let release: Vec<u64> =
            rel_text.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
        let take_num = |t: &mut &str| -> u64 {
            let t2 = t.trim_start_matches(['.', '-', '_']);
            let end = t2.find(|c: char| !c.is_ascii_digit()).unwrap_or(t2.len());
            let n = t2[..end].parse().unwrap_or(0);
            *t = &t2[end..];
            n
        };
        let mut pre = None;
        let t = tail.trim_start_matches(['.', '-', '_']);
        for (word, kind) in [
            ("alpha", 0),
            ("beta", 1),
            ("preview", 2),
            ("pre", 2),
            ("rc", 2),
            ("a", 0),
            ("b", 1),
            ("c", 2),
        ] {
            if let Some(r) = t.strip_prefix(word) {
                let mut r = r;
                pre = Some((kind, take_num(&mut r)));
                tail = r;
                break;
            }
        }
        let mut post = None;
        let t = tail.trim_start_matches(['.', '_', '-']);
        if let Some(r) = ["post", "rev", "r"].iter().find_map(|w| t.strip_prefix(w)) {
            let mut r = r;
            post = Some(take_num(&mut r));
            tail = r;
        } else if let Some(r) = tail.strip_prefix('-')
            && r.starts_with(|c: char| c.is_ascii_digit())
        {
            let mut r = r;
            post = Some(take_num(&mut r));
            tail = r;
        }
        let mut dev = None;
        let t = tail.trim_start_matches(['.', '-', '_']);
        if let Some(r) = t.strip_prefix("dev") {
            let mut r = r;
            dev = Some(take_num(&mut r));
            tail = r;
        }
        if !tail.is_empty() {
            return None;
        }
        Some(Version { epoch, release, pre, post, dev, local })
    }

    fn is_pre(&self) -> bool {
        self.pre.is_some() || self.dev.is_some()
    }

    fn base(&self) -> Version {
        Version {
            epoch: self.epoch,
            release: self.release.clone(),
            pre: None,
            post: None,
            dev: None,
            local: None,
        }
    }

    fn public(&self) -> Version {
        Version { local: None, ..self.clone() }
    }

    /// packaging's ordering key: trailing zeros dropped; a dev release alone sorts before
    /// pre-releases; a missing post before any post.
    fn key(&self) -> VersionKey {
        let mut rel = self.release.clone();
        while rel.len() > 1 && rel.last() == Some(&0) {
            rel.pop();
        }
        let pre = match (self.pre, self.post, self.dev) {
            (None, None, Some(_)) => (-1, 0, 0),
            (None, _, _) => (1, 0, 0),
            (Some((k, n)), _, _) => (0, k, n),
        };
        let post = self.post.map_or((-1, 0), |n| (0, n));
        let dev = self.dev.map_or((1, 0), |n| (0, n));
        let local = self
            .local
            .iter()
            .flat_map(|l| l.split('.'))
            .map(|p| match p.parse::<u64>() {
                Ok(n) => (1, n, String::new()),
                Err(_) => (0, 0, p.to_string()),
            })
            .collect();
        (self.epoch, rel, pre, post, dev, local)
    }

    fn cmp(&self, other: &Version) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl Spec {
    fn contains(&self, v: &Version, raw: &str) -> bool {
        let op = self.op.as_str();
        if op == "===" {
            return raw.eq_ignore_ascii_case(&self.version);
        }
        if let Some(prefix) = self.version.strip_suffix(".*") {
            let Some(p) = Version::parse(prefix) else { return false };
            let hit = prefix_match(v, &p);
            return if op == "==" { hit } else { !hit };
        }
        let Some(s) = Version::parse(&self.version) else { return false };
        match op {
            "==" | "!=" => {
                let cand = if s.local.is_none() { v.public() } else { v.clone() };
                let eq = cand.cmp(&s) == Ordering::Equal;
                if op == "==" { eq } else { !eq }
            }
            "<=" => v.public().cmp(&s) != Ordering::Greater,
            ">=" => v.public().cmp(&s) != Ordering::Less,
            "<" => {
                v.cmp(&s) == Ordering::Less
                    && !(!s.is_pre() && v.is_pre() && v.base().cmp(&s.base()) == Ordering::Equal)
            }
            ">" => {
                v.cmp(&s) == Ordering::Greater
                    && !(s.post.is_none()
                        && v.post.is_some()
                        && v.base().cmp(&s.base()) == Ordering::Equal)
                    && !(v.local.is_some() && v.base().cmp(&s.base()) == Ordering::Equal)
            }
            "~=" => {
                let mut rel = s.release.clone();
                rel.pop();
                let p = Version {
                    epoch: s.epoch,
                    release: rel,
                    pre: None,
                    post: None,
                    dev: None,
                    local: None,
                };
                v.public().cmp(&s) != Ordering::Less && prefix_match(v, &p)
            }
            _ => false,
        }
    }
}

/// `==X.*`: the candidate's release (zero-padded) starts with the prefix's.
fn prefix_match(v: &Version, p: &Version) -> bool {
    if v.epoch != p.epoch {
        return false;
    }
    let mut rel = v.release.clone();
    while rel.len() < p.release.len() {
        rel.push(0);
    }
    let pre_ok = p.pre.is_none() && p.post.is_none();
    if !pre_ok {
        return v.public().cmp(p) == Ordering::Equal;
    }
    rel[..p.release.len()] == p.release[..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Every case `scripts/record-pip-requirements.py` recorded from ansible's own `Package`.
    #[test]
    fn requirements_read_as_ansible_reads_them() {
        let recorded: Vec<Value> =
            serde_json::from_str(include_str!("../../tests/pip/requirements.json")).unwrap();
        let mut failures = Vec::new();
        for rec in &recorded {
            let case = &rec["case"];
            let names: Vec<String> = case["names"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            let recovered = recover_package_names(&names);
            let mut packages: Vec<Package> =
                recovered.iter().map(|n| Package::new(n, None).unwrap()).collect();
            if let Some(v) = case["version"].as_str() {
                packages[0] = Package::new(&packages[0].render(), Some(v)).unwrap();
            }
            let got: Vec<Value> = packages
                .iter()
                .map(|p| {
                    let satisfied: serde_json::Map<String, Value> = rec["packages"][0]["satisfied"]
                        .as_object()
                        .unwrap()
                        .keys()
                        .map(|v| (v.clone(), Value::Bool(p.is_satisfied_by(v))))
                        .collect();
                    serde_json::json!({
                        "package_name": p.package_name,
                        "str": p.render(),
                        "has_version_specifier": p.has_version_specifier(),
                        "has_requirement": p.has_requirement(),
                        "satisfied": satisfied,
                    })
                })
                .collect();
            let got = serde_json::json!({"recovered": recovered, "packages": got});
            let want =
                serde_json::json!({"recovered": rec["recovered"], "packages": rec["packages"]});
            if got != want {
                failures.push(format!("{case}\n  want {want}\n  got  {got}"));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} differ:\n{}",
            failures.len(),
            recorded.len(),
            failures.join("\n")
        );
    }
}
