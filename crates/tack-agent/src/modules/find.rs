//! `ansible.builtin.find`: lists the paths under the given directories that pass ansible's
//! filters (name patterns or regular expressions, excludes, age, size, content, mode, type),
//! walking them as Python's `os.walk` does (directory order, files before directories,
//! hidden directories still descended). Read-only: it never changes, opens for writing or
//! follows into anything but the directories it walks.

use std::os::unix::fs::MetadataExt;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::argspec::{Elem, Kind, Opt, Params, Spec};
use super::common::{fail, warn};
use super::pyre::{Flags, PyRegex};
use super::{Ctx, Invocation, ModuleResult, digest, fsattr, glob, host, paths, textfile};

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("paths", Kind::List(Some(Elem::Path))).required().aliases(&["name", "path"]),
            Opt::new("patterns", Kind::List(Some(Elem::Str)))
                .default(Value::Array(Vec::new()))
                .aliases(&["pattern"]),
            Opt::new("excludes", Kind::List(Some(Elem::Str))).aliases(&["exclude"]),
            Opt::new("contains", Kind::Str),
            Opt::new("read_whole_file", Kind::Bool).default(false),
            Opt::new("file_type", Kind::Str).default("file").choices(&[
                "any",
                "directory",
                "file",
                "link",
            ]),
            Opt::new("age", Kind::Str),
            Opt::new("age_stamp", Kind::Str).default("mtime").choices(&["atime", "ctime", "mtime"]),
            Opt::new("size", Kind::Str),
            Opt::new("recurse", Kind::Bool).default(false),
            Opt::new("hidden", Kind::Bool).default(false),
            Opt::new("follow", Kind::Bool).default(false),
            Opt::new("get_checksum", Kind::Bool).default(false),
            Opt::new("checksum_algorithm", Kind::Str)
                .default("sha1")
                .choices(&["md5", "sha1", "sha224", "sha256", "sha384", "sha512"])
                .aliases(&["checksum", "checksum_algo"]),
            Opt::new("use_regex", Kind::Bool).default(false),
            Opt::new("depth", Kind::Int),
            Opt::new("mode", Kind::Raw),
            Opt::new("exact_mode", Kind::Bool).default(true),
            Opt::new("encoding", Kind::Str),
            Opt::new("limit", Kind::Int),
        ],
        ..Spec::default()
    }
}

/// A failure that abandons the current search path (Python's exception caught per path).
struct PathError(String);

/// Name patterns, compiled once.
enum Matcher {
    Glob(Vec<String>, Vec<String>),
    Regex(Vec<PyRegex>, Vec<PyRegex>),
}

/// `re.compile(p).match(text)`: anchored at the start only.
fn anchored(pattern: &str) -> Result<PyRegex, PathError> {
    super::host_re::compile(&format!("\\A(?:{pattern})"), Flags::default()).map_err(PathError)
}

impl Matcher {
    fn new(p: &Params) -> Result<Matcher, PathError> {
        let list = |k: &str| -> Vec<String> {
            p.get(k)
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        };
        let (mut pats, excl) = (list("patterns"), list("excludes"));
        let regex = p.bool("use_regex");
        if pats.is_empty() {
            pats.push(if regex { ".*" } else { "*" }.to_string());
        }
        if !regex {
            return Ok(Matcher::Glob(pats, excl));
        }
        let compile = |xs: &[String]| xs.iter().map(|x| anchored(x)).collect::<Result<Vec<_>, _>>();
        Ok(Matcher::Regex(compile(&pats)?, compile(&excl)?))
    }

    /// `pfilter`: some pattern matches and (when it does) no exclude does.
    fn accepts(&self, name: &str) -> bool {
        match self {
            Matcher::Glob(pats, excl) => {
                pats.iter().any(|p| glob::fnmatch(name, p))
                    && !excl.iter().any(|e| glob::fnmatch(name, e))
            }
            Matcher::Regex(pats, excl) => {
                pats.iter().any(|p| p.is_match(name)) && !excl.iter().any(|e| e.is_match(name))
            }
        }
    }
}

/// `^(-?\d+)(unit)?$` on the lowercased text, as a count of base units.
fn parse_amount(text: &str, units: &[(char, i64)]) -> Option<i64> {
    let t = text.to_lowercase();
    let t = t.strip_suffix('\n').unwrap_or(&t);
    let (num, mult) = match t.chars().last() {
        Some(c) if !c.is_ascii_digit() => {
            let mult = units.iter().find(|(u, _)| *u == c)?.1;
            (&t[..t.len() - c.len_utf8()], mult)
        }
        _ => (t, 1),
    };
    let digits = num.strip_prefix('-').unwrap_or(num);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    num.parse::<i64>().ok()?.checked_mul(mult)
}

/// Python's `int(text, 8)`.
fn parse_octal(text: &str) -> Option<u32> {
    let t = text.trim();
    let t = t.strip_prefix('+').unwrap_or(t);
    let t = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")).unwrap_or(t);
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    u32::from_str_radix(&t.replace('_', ""), 8).ok()
}

/// The text encodings `contains` can read files in.
#[derive(Debug, Clone, Copy)]
enum Codec {
    Utf8,
    Latin1,
    Ascii,
}

/// The codec a Python encoding name (any of its usual aliases) stands for.
fn codec_of(name: &str) -> Option<Codec> {
    let n = name.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    match n.as_str() {
        "utf_8" | "utf8" | "u8" | "utf" | "cp65001" => Some(Codec::Utf8),
        "latin_1" | "latin1" | "latin" | "l1" | "iso_8859_1" | "iso8859_1" | "8859" | "cp819"
        | "iso_ir_100" => Some(Codec::Latin1),
        "ascii" | "us_ascii" | "646" => Some(Codec::Ascii),
        _ => None,
    }
}

impl Codec {
    /// The text, or `None` where Python's decoder would raise.
    fn decode(self, bytes: Vec<u8>) -> Option<String> {
        match self {
            Codec::Utf8 => String::from_utf8(bytes).ok(),
            Codec::Latin1 => Some(bytes.iter().map(|b| char::from(*b)).collect()),
            Codec::Ascii => {
                bytes.is_ascii().then(|| bytes.iter().map(|b| char::from(*b)).collect())
            }
        }
    }
}

/// Everything the walk needs, read from the parameters once.
struct Filters {
    matcher: Result<Matcher, String>,
    file_type: String,
    age: Option<i64>,
    age_stamp: String,
    size: Option<i64>,
    contains: Option<String>,
    read_whole_file: bool,
    encoding: Option<String>,
    codec: Codec,
    mode: Option<String>,
    exact_mode: bool,
    get_checksum: bool,
    algorithm: String,
    recurse: bool,
    hidden: bool,
    follow: bool,
    depth: i64,
    limit: Option<i64>,
    now: f64,
}

fn stamp(st: &std::fs::Metadata, which: &str) -> f64 {
    let (s, ns) = match which {
        "atime" => (st.atime(), st.atime_nsec()),
        "ctime" => (st.ctime(), st.ctime_nsec()),
        _ => (st.mtime(), st.mtime_nsec()),
    };
    s as f64 + ns as f64 / 1e9
}

impl Filters {
    fn age_ok(&self, st: &std::fs::Metadata) -> bool {
        let Some(age) = self.age else { return true };
        let elapsed = self.now - stamp(st, &self.age_stamp);
        if age >= 0 { elapsed >= age as f64 } else { elapsed <= age.unsigned_abs() as f64 }
    }

    fn size_ok(&self, st: &std::fs::Metadata) -> bool {
        let Some(size) = self.size else { return true };
        let have = st.size() as i64;
        if size >= 0 { have >= size } else { have <= -size }
    }

    fn mode_ok(&self, st: &std::fs::Metadata) -> Result<bool, PathError> {
        let Some(mode) = self.mode.as_deref().filter(|m| !m.is_empty()) else { return Ok(true) };
        let want = match parse_octal(mode) {
            Some(m) => m,
            None => fsattr::symbolic_mode(0, false, mode).map_err(PathError)?,
        } & 0o7777;
        let have = st.mode() & 0o7777;
        Ok(if self.exact_mode { have == want } else { have & want != 0 })
    }

    /// `contentfilter`: a line (or the whole text) matching `contains`. Unreadable files do
    /// not match; undecodable ones abandon the search path, as in ansible.
    fn content_ok(&self, path: &str) -> Result<bool, PathError> {
        let Some(pattern) = self.contains.as_deref() else { return Ok(true) };
        let re = if self.read_whole_file {
            super::host_re::compile(pattern, Flags::default())
        } else {
            super::host_re::compile(&format!("\\A(?:{pattern})"), Flags::default())
        }
        .map_err(PathError)?;
        let Ok(bytes) = std::fs::read(path) else { return Ok(false) };
        let text = match self.codec.decode(bytes) {
            Some(t) => t.replace("\r\n", "\n").replace('\r', "\n"),
            None => {
                let enc = match &self.encoding {
                    Some(e) => e.clone(),
                    None => "utf-8 (Python default)".into(),
                };
                return Err(PathError(format!(
                    "Failed to decode the file {} with encoding: {enc}",
                    super::pyfmt::py_repr(&Value::from(path))
                )));
            }
        };
        if self.read_whole_file {
            return Ok(re.is_match(&text));
        }
        Ok(textfile::lines_of(&text).iter().any(|l| re.is_match(l)))
    }
}

/// `statinfo`: the keys ansible gives each found path.
/// Owner and group names by id, looked up once per search (a tree mostly has one owner).
#[derive(Default)]
struct Names {
    users: std::collections::HashMap<u32, String>,
    groups: std::collections::HashMap<u32, String>,
}

impl Names {
    fn user(&mut self, uid: u32) -> String {
        self.users.entry(uid).or_insert_with(|| host::user_name(uid).unwrap_or_default()).clone()
    }
    fn group(&mut self, gid: u32) -> String {
        self.groups.entry(gid).or_insert_with(|| host::group_name(gid).unwrap_or_default()).clone()
    }
}

fn statinfo(path: &str, st: &std::fs::Metadata, names: &mut Names) -> Map<String, Value> {
    let mut o = Map::new();
    let mut put = |k: &str, v: Value| {
        o.insert(k.to_string(), v);
    };
    // find names the owner even when the system has no name for it (an empty string),
    // right after the times, as its `statinfo` does.
    super::stat::common_keys_with(&mut put, path, st, &mut |put| {
        put("gr_name", names.group(st.gid()).into());
        put("pw_name", names.user(st.uid()).into());
    });
    o
}

/// What one search accumulates over all its paths.
#[derive(Default)]
struct Found {
    files: Vec<Value>,
    examined: u64,
    skipped: Map<String, Value>,
    warnings: Vec<String>,
    limit_hit: bool,
    names: Names,
}

/// One directory's entries as `os.walk` splits them: names of non-directories and of
/// directories (symlinks to directories counted as directories).
fn list_dir(dir: &str) -> std::io::Result<(Vec<String>, Vec<String>)> {
    let (mut files, mut dirs) = (Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let full = paths::join(dir, &name);
        if std::fs::metadata(&full).is_ok_and(|m| m.is_dir()) {
            dirs.push(name);
        } else {
            files.push(name);
        }
    }
    Ok((files, dirs))
}

fn checksum(f: &Filters, path: &str) -> Result<Value, PathError> {
    match digest::file_digest(&paths::realpath(path), &f.algorithm) {
        Some(Ok(sum)) => Ok(sum.into()),
        Some(Err(e)) => Err(PathError(tack_py::oserror::os_error_bytes(
            &e,
            str::as_bytes(&paths::realpath(path)),
        ))),
        None => Ok(Value::Null),
    }
}

/// Applies the filters to one entry of a walked directory.
fn consider(f: &Filters, fsobj: &str, fsname: &str, out: &mut Found) -> Result<(), PathError> {
    // Python compiles the patterns when the first entry reaches them.
    let matcher = f.matcher.as_ref().map_err(|e| PathError(e.clone()))?;
    let st = match std::fs::symlink_metadata(fsname) {
        Ok(st) => st,
        Err(e) => {
            let msg = tack_py::oserror::os_error(&e, std::path::Path::new(fsname));
            out.warnings.push(format!(
                "Skipped entry {} due to access issue.",
                super::pyfmt::py_repr(&Value::from(fsname))
            ));
            out.skipped.insert(fsname.to_string(), msg.into());
            return Ok(());
        }
    };
    let ft = st.file_type();
    let common = || -> Result<bool, PathError> {
        Ok(matcher.accepts(fsobj) && f.age_ok(&st) && f.mode_ok(&st)?)
    };
    match f.file_type.as_str() {
        "any" if common()? => {
            let mut r = statinfo(fsname, &st, &mut out.names);
            if ft.is_file() && f.get_checksum {
                r.insert("checksum".into(), checksum(f, fsname)?);
            }
            if !ft.is_file() || f.size_ok(&st) {
                out.files.push(Value::Object(r));
            }
        }
        "directory" if ft.is_dir() && common()? => {
            out.files.push(Value::Object(statinfo(fsname, &st, &mut out.names)));
        }
        "file"
            if ft.is_file()
                && matcher.accepts(fsobj)
                && f.age_ok(&st)
                && f.size_ok(&st)
                && f.content_ok(fsname)?
                && f.mode_ok(&st)? =>
        {
            let mut r = statinfo(fsname, &st, &mut out.names);
            if f.get_checksum {
                r.insert("checksum".into(), checksum(f, fsname)?);
            }
            out.files.push(Value::Object(r));
        }
        "link" if ft.is_symlink() && common()? => {
            out.files.push(Value::Object(statinfo(fsname, &st, &mut out.names)));
        }
        _ => {}
    }
    Ok(())
}

fn limit_reached(f: &Filters, out: &Found) -> bool {
    f.limit.is_some_and(|l| out.files.len() as i64 == l)
}

/// Python's `os.path.normpath` (relative paths and a leading `//` kept as Python keeps them).
fn normpath(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let lead = if path.starts_with("//") && !path.starts_with("///") {
        "//"
    } else if path.starts_with('/') {
        "/"
    } else {
        ""
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            ".." if !lead.is_empty() => {}
            p => parts.push(p),
        }
    }
    let joined = format!("{lead}{}", parts.join("/"));
    if joined.is_empty() { ".".into() } else { joined }
}

/// Walks one search path top-down in `os.walk`'s order. `Ok(true)` stops the walk of this
/// search path (the limit was reached); `Err` abandons it.
fn walk(f: &Filters, npath: &str, top: &str, out: &mut Found) -> Result<bool, PathError> {
    let (files, mut dirs) = match list_dir(top) {
        Ok(lists) => lists,
        Err(e) => {
            let code = e.raw_os_error().unwrap_or(0);
            let msg = tack_py::oserror::os_error(&e, std::path::Path::new(top));
            if [libc::EPERM, libc::EACCES, libc::ENOENT].contains(&code) {
                out.skipped.insert(top.to_string(), msg.into());
                return Ok(false);
            }
            return Err(PathError(msg));
        }
    };
    out.examined += (files.len() + dirs.len()) as u64;
    let wpath_seps = format!("{}/", npath.trim_end_matches('/')).matches('/').count() as i64;
    let entries: Vec<String> = files.iter().chain(dirs.iter()).cloned().collect();
    for fsobj in &entries {
        let fsname = normpath(&paths::join(top, fsobj));
        if f.depth != 0 {
            let depth = fsname.matches('/').count() as i64 - wpath_seps + 1;
            if depth > f.depth {
                dirs.clear();
                continue;
            }
        }
        if paths::basename(&fsname).starts_with('.') && !f.hidden {
            continue;
        }
        consider(f, fsobj, &fsname, out)?;
        if limit_reached(f, out) {
            out.limit_hit = true;
            break;
        }
    }
    if limit_reached(f, out) {
        return Ok(true);
    }
    if !f.recurse {
        return Ok(false);
    }
    for d in dirs {
        let sub = paths::join(top, &d);
        if (f.follow || !paths::islink(&sub)) && walk(f, npath, &sub, out)? {
            return Ok(true);
        }
    }
    Ok(false)
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let mode = match p.get("mode") {
        Value::String(s) => Some(s.clone()),
        Value::Null | Value::Bool(false) => None,
        Value::Number(n) if n.as_f64() == Some(0.0) => None,
        Value::Array(a) if a.is_empty() => None,
        Value::Object(o) if o.is_empty() => None,
        other => {
            let class = match other {
                Value::Bool(_) => "bool",
                Value::Number(n) if n.is_f64() => "float",
                Value::Number(_) => "int",
                Value::Array(_) => "list",
                _ => "dict",
            };
            return fail(format!(
                "argument 'mode' is not a string and conversion is not allowed, value is of type {class}"
            ));
        }
    };
    let age = match p.str("age") {
        None => None,
        Some(a) => {
            match parse_amount(a, &[('s', 1), ('m', 60), ('h', 3600), ('d', 86400), ('w', 604800)])
            {
                Some(n) => Some(n),
                None => {
                    let mut r = fail("failed to process age");
                    r.insert("age".into(), a.into());
                    return r;
                }
            }
        }
    };
    let size = match p.str("size") {
        None => None,
        Some(s) => match parse_amount(
            s,
            &[('b', 1), ('k', 1 << 10), ('m', 1 << 20), ('g', 1 << 30), ('t', 1 << 40)],
        ) {
            Some(n) => Some(n),
            None => {
                let mut r = fail("failed to process size");
                r.insert("size".into(), s.into());
                return r;
            }
        },
    };
    let limit = p.get("limit").as_i64();
    if let Some(l) = limit.filter(|l| *l <= 0) {
        return fail(format!("limit cannot be {l} (use None for unlimited)"));
    }
    let encoding = p.str("encoding").map(str::to_string);
    let codec = match encoding.as_deref().map(codec_of) {
        None => Codec::Utf8,
        Some(Some(c)) => c,
        Some(None) if !p.is_set("contains") => Codec::Utf8,
        Some(None) => {
            return fail(format!(
                "tack reads text as UTF-8, Latin-1 or ASCII only: encoding '{}' is not supported",
                encoding.unwrap_or_default()
            ));
        }
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    let f = Filters {
        matcher: Matcher::new(&p).map_err(|e| e.0),
        file_type: p.str("file_type").unwrap_or("file").to_string(),
        age,
        age_stamp: p.str("age_stamp").unwrap_or("mtime").to_string(),
        size,
        contains: p.str("contains").map(str::to_string),
        read_whole_file: p.bool("read_whole_file"),
        encoding,
        codec,
        mode,
        exact_mode: p.bool("exact_mode"),
        get_checksum: p.bool("get_checksum"),
        algorithm: p.str("checksum_algorithm").unwrap_or("sha1").to_string(),
        recurse: p.bool("recurse"),
        hidden: p.bool("hidden"),
        follow: p.bool("follow"),
        depth: p.get("depth").as_i64().unwrap_or(0),
        limit,
        now,
    };
    let mut out = Found::default();
    let mut result = ModuleResult::new();
    let mut has_warnings = false;
    let search: Vec<String> = p
        .get("paths")
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    for npath in &search {
        let outcome = if paths::isdir(npath) {
            walk(&f, npath, npath, &mut out)
        } else {
            Err(PathError(format!("'{npath}' is not a directory")))
        };
        if !out.warnings.is_empty() {
            has_warnings = true;
            for w in std::mem::take(&mut out.warnings) {
                warn(&mut result, &w);
            }
        }
        if let Err(PathError(msg)) = outcome {
            warn(&mut result, &format!("Skipped '{npath}' path due to this access issue: {msg}\n"));
            out.skipped.insert(npath.clone(), msg.into());
            has_warnings = true;
        }
    }
    let msg = if has_warnings {
        "Not all paths examined, check warnings for details"
    } else if out.limit_hit {
        "Limit of matches reached"
    } else {
        "All paths examined"
    };
    let matched = out.files.len();
    result.insert("files".into(), Value::Array(out.files));
    result.insert("changed".into(), false.into());
    result.insert("msg".into(), msg.into());
    result.insert("matched".into(), matched.into());
    result.insert("examined".into(), out.examined.into());
    result.insert("skipped_paths".into(), Value::Object(out.skipped));
    result
}
