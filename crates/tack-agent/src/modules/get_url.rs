//! `ansible.builtin.get_url`: downloads an `http://` or `file://` URL to `dest` (a file, or a
//! directory the file is named into), checked against an optional checksum (given, or read
//! from a checksum file's URL), replacing `dest` only when the content differs, with
//! ansible's backup, `tmp_dest`, file attributes and check mode (a HEAD request). Writes only
//! `dest`, its backup and its own temporary file, which is always removed.

use std::time::Instant;

use serde_json::{Map, Value};

use super::argspec::{Elem, Kind, Opt, Params, Spec, file_common};
use super::common::fail;
use super::fetch::{self, Fetched, ModuleTmp, Options};
use super::{Ctx, Invocation, ModuleResult, digest, file, fsattr, host, paths, textfile};

const ALGORITHMS: &[&str] = &["md5", "sha1", "sha224", "sha256", "sha384", "sha512"];

pub(crate) fn spec() -> Spec {
    let mut options = fetch::url_options();
    for o in &mut options {
        match o.name {
            "url_username" => o.aliases = &["username"],
            "url_password" => o.aliases = &["password"],
            _ => {}
        }
    }
    options.retain(|o| o.name != "url");
    options.extend([
        Opt::new("url", Kind::Str).required(),
        Opt::new("dest", Kind::Path).required(),
        Opt::new("backup", Kind::Bool).default(false),
        Opt::new("checksum", Kind::Str).default(""),
        Opt::new("timeout", Kind::Int).default(10),
        Opt::new("headers", Kind::Dict),
        Opt::new("tmp_dest", Kind::Path),
        Opt::new("unredirected_headers", Kind::List(Some(Elem::Str))).default(Value::Array(vec![])),
        Opt::new("decompress", Kind::Bool).default(true),
        Opt::new("ciphers", Kind::List(Some(Elem::Str))),
        Opt::new("use_netrc", Kind::Bool).default(true),
    ]);
    options.extend(file_common());
    Spec { options, ..Spec::default() }
}

/// `url_filename`: the URL path's last part, or `index.html`.
fn url_filename(url: &str) -> String {
    let after = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    let path = match after.find('/') {
        Some(i) => &after[i..],
        None => "",
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let name = paths::basename(path);
    if name.is_empty() { "index.html".into() } else { name }
}

/// `parse_digest_lines`: (digest, file name) pairs of a checksum file.
fn parse_digest_lines(filename: &str, lines: &[String]) -> Vec<(String, String)> {
    if lines.len() == 1 && lines[0].split_whitespace().count() == 1 {
        return vec![(lines[0].clone(), filename.to_string())];
    }
    let bsd = regex::Regex::new(r"^(\w+) ?\((?P<path>.+)\) ?= (?P<digest>[\w.]+)\n?$");
    let gnu = regex::Regex::new(r"^(?P<digest>[\w.]+)\s+(\*|\./|\.)?(?P<path>.+)\n?$");
    let (Ok(bsd), Ok(gnu)) = (bsd, gnu) else { return Vec::new() };
    let mut out = Vec::new();
    for line in lines {
        if let Some(c) = bsd.captures(line) {
            out.push((c["digest"].to_string(), c["path"].to_string()));
        } else if let Some(c) = gnu.captures(line) {
            out.push((
                c["digest"].to_string(),
                c["path"].trim_start_matches(['.', '/']).to_string(),
            ));
        }
    }
    out
}

fn sha1(path: &str) -> Value {
    match digest::file_digest(path, "sha1") {
        Some(Ok(s)) => s.into(),
        _ => Value::Null,
    }
}

struct Run<'a> {
    p: &'a Params,
    check: bool,
    tmp: ModuleTmp,
    result: ModuleResult,
}

impl Run<'_> {
    fn with(&self, mut extra: ModuleResult) -> ModuleResult {
        for (k, v) in &self.result {
            extra.insert(k.clone(), v.clone());
        }
        extra
    }

    fn fail(&self, msg: String) -> ModuleResult {
        let mut r = self.result.clone();
        r.extend(fail(msg));
        r
    }

    fn exit(&self, msg: &str, extra: &[(&str, Value)]) -> ModuleResult {
        let mut r = Map::new();
        r.insert("msg".into(), msg.into());
        for (k, v) in extra {
            r.insert(k.to_string(), v.clone());
        }
        let mut r = self.with(r);
        host::add_path_info(&mut r);
        r
    }

    /// `url_get`: the download in a private temporary file, and `fetch_url`'s info.
    fn url_get(
        &mut self,
        url: &str,
        dest: &str,
        method: &str,
        last_mod: Option<std::time::SystemTime>,
        force: bool,
    ) -> Result<(String, Fetched), ModuleResult> {
        let p = self.p;
        let start = Instant::now();
        let headers: Vec<(String, String)> = p
            .get("headers")
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.clone(), super::pyfmt::py_str(v)))
            .collect();
        let unredirected = p
            .get("unredirected_headers")
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let mut params = p.clone();
        params.values.insert("force".into(), force.into());
        let fetched = fetch::fetch(
            &params,
            url,
            Options {
                method,
                headers,
                unredirected,
                body: None,
                timeout: p.get("timeout").as_i64().unwrap_or(10),
                follow: fetch::follow_of(p),
                last_mod_time: last_mod,
                decompress: p.bool("decompress"),
            },
        )?;
        let elapsed = Value::from(start.elapsed().as_secs());
        let info = &fetched.info;
        let status = info.get("status").cloned().unwrap_or(Value::Null);
        let msg = info.get("msg").and_then(Value::as_str).unwrap_or_default().to_string();
        let mut base = Map::new();
        base.insert("url".into(), url.into());
        base.insert("dest".into(), dest.into());
        if status.as_i64() == Some(304) {
            base.insert("changed".into(), false.into());
            base.insert("msg".into(), msg.into());
            base.insert("status_code".into(), status);
            base.insert("elapsed".into(), elapsed);
            host::add_path_info(&mut base);
            return Err(base);
        }
        base.insert("elapsed".into(), elapsed.clone());
        if status.as_i64() == Some(-1) {
            base.extend(fail(msg));
            return Err(base);
        }
        if status.as_i64() != Some(200) && !url.starts_with("file:/") {
            base.insert("status_code".into(), status);
            base.insert("response".into(), msg.into());
            base.extend(fail("Request failed"));
            return Err(base);
        }
        let elapsed_only = |msg: String| {
            let mut r = fail(msg);
            r.insert("elapsed".into(), elapsed.clone());
            r
        };
        let dir = match p.str("tmp_dest").filter(|d| !d.is_empty()) {
            Some(d) if paths::isdir(d) => d.to_string(),
            Some(d) if paths::exists(d) => {
                return Err(elapsed_only(format!("{d} is a file but should be a directory.")));
            }
            Some(d) => return Err(elapsed_only(format!("{d} directory does not exist."))),
            None => self.tmp.dir().map_err(|e| {
                elapsed_only(format!("failed to create temporary content file: {e}"))
            })?,
        };
        let body = fetched.body.clone().unwrap_or_default();
        let tempname = fetch::mkstemp(&dir, &body)
            .map_err(|e| elapsed_only(format!("failed to create temporary content file: {e}")))?;
        Ok((tempname, fetched))
    }
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let url = p.str("url").unwrap_or_default().to_string();
    if let Err(r) = fetch::check_supported(&p, &url, true) {
        return r;
    }
    if let Err(r) = fsattr::check_selinux(&p) {
        return r;
    }
    let mut dest = p.str("dest").unwrap_or_default().to_string();
    let mut force = p.bool("force");
    let mut result = ModuleResult::new();
    result.insert("changed".into(), false.into());
    result.insert("checksum_dest".into(), Value::Null);
    result.insert("checksum_src".into(), Value::Null);
    result.insert("dest".into(), dest.clone().into());
    result.insert("elapsed".into(), 0.into());
    result.insert("url".into(), url.clone().into());
    let mut run = Run { p: &p, check: ctx.check_mode, tmp: ModuleTmp::new(), result };
    let dest_is_dir = paths::isdir(&dest);
    let mut last_mod = None;
    let mut checksum = String::new();
    let mut algorithm = String::new();
    let given = p.str("checksum").unwrap_or_default().to_string();
    if !given.is_empty() {
        let Some((algo, sum)) = given.split_once(':') else {
            return run
                .fail("The checksum parameter has to be in format <algorithm>:<checksum>".into());
        };
        if !ALGORITHMS.contains(&algo) {
            return fail(format!(
                "tack computes md5, sha1, sha224, sha256, sha384 and sha512 checksums only: '{algo}' is not supported"
            ));
        }
        algorithm = algo.to_string();
        checksum = sum.to_string();
        let scheme = sum.split_once(':').map(|(s, _)| s).unwrap_or_default();
        if ["http", "https", "ftp", "file"].contains(&scheme) {
            if let Err(r) = fetch::check_supported(&p, sum, true) {
                return r;
            }
            let (tmpsrc, _) = match run.url_get(sum, &dest, "GET", None, force) {
                Ok(v) => v,
                Err(r) => return r,
            };
            let text = textfile::read_text(&tmpsrc).unwrap_or_default();
            let _ = std::fs::remove_file(&tmpsrc);
            let lines: Vec<String> = textfile::lines_of(&text)
                .into_iter()
                .map(|l| l.trim_end_matches('\n').to_string())
                .collect();
            let filename = url_filename(&url);
            match parse_digest_lines(&filename, &lines).into_iter().find(|(_, f)| *f == filename) {
                Some((s, _)) => checksum = s,
                None => {
                    return fail(format!(
                        "Unable to find a checksum for file '{filename}' in '{sum}'"
                    ));
                }
            }
        }
        checksum = checksum
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == '_')
            .collect::<String>()
            .to_lowercase();
        let hex = checksum.strip_prefix("0x").unwrap_or(&checksum).replace('_', "");
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return run.fail("The checksum format is invalid".into());
        }
    }
    if !dest_is_dir && paths::exists(&dest) {
        let mut mismatch = false;
        if !force && !checksum.is_empty() {
            let have = digest::file_digest(&dest, &algorithm).and_then(Result::ok);
            mismatch = have.as_deref() != Some(checksum.as_str());
        }
        if !force && !checksum.is_empty() && !mismatch {
            let args = file::file_args(&p, &dest);
            let changed = match fsattr::set_fs_attributes(&args, false, None, ctx.check_mode) {
                Ok(c) => c,
                Err(r) => return r,
            };
            run.result.insert("changed".into(), changed.into());
            let msg = if changed {
                "file already exists but file attributes changed"
            } else {
                "file already exists"
            };
            return run.exit(msg, &[]);
        }
        last_mod = std::fs::metadata(&dest).and_then(|m| m.modified()).ok();
        if mismatch {
            force = true;
        }
    }
    let start = Instant::now();
    let method = if ctx.check_mode { "HEAD" } else { "GET" };
    let (tmpsrc, info) = match run.url_get(&url, &dest, method, last_mod, force) {
        Ok(v) => v,
        Err(r) => return r,
    };
    run.result.insert("elapsed".into(), start.elapsed().as_secs().into());
    run.result.insert("src".into(), tmpsrc.clone().into());
    let gone = |r: ModuleResult| {
        let _ = std::fs::remove_file(&tmpsrc);
        r
    };
    if dest_is_dir {
        let name = fetch::disposition_filename(&info.headers).unwrap_or_else(|| {
            url_filename(info.info.get("url").and_then(Value::as_str).unwrap_or(&url))
        });
        dest = paths::join(&dest, &name);
        run.result.insert("dest".into(), dest.clone().into());
    }
    let checksum_src = sha1(&tmpsrc);
    run.result.insert("checksum_src".into(), checksum_src.clone());
    if paths::exists(&dest) {
        if !access(&dest, libc::W_OK) {
            return gone(run.fail(format!("Destination {dest} is not writable")));
        }
        if !access(&dest, libc::R_OK) {
            return gone(run.fail(format!("Destination {dest} is not readable")));
        }
        run.result.insert("checksum_dest".into(), sha1(&dest));
    } else {
        let parent = paths::dirname(&dest);
        if !paths::exists(&parent) {
            return gone(run.fail(format!("Destination {parent} does not exist")));
        }
        if !access(&parent, libc::W_OK) {
            return gone(run.fail(format!("Destination {parent} is not writable")));
        }
    }
    let msg = info.info.get("msg").and_then(Value::as_str).unwrap_or_default().to_string();
    if run.check {
        let _ = std::fs::remove_file(&tmpsrc);
        let changed = run.result.get("checksum_dest") != Some(&checksum_src);
        run.result.insert("changed".into(), changed.into());
        return run.exit(&msg, &[]);
    }
    if !checksum.is_empty() {
        let got = digest::file_digest(&tmpsrc, &algorithm).and_then(Result::ok).unwrap_or_default();
        if got != checksum {
            return gone(run.fail(format!(
                "The checksum for {tmpsrc} did not match {checksum}; it was {got}."
            )));
        }
    }
    let mut backup_file = String::new();
    let changed = if run.result.get("checksum_dest") != Some(&checksum_src) {
        if p.bool("backup") && paths::exists(&dest) {
            match textfile::backup_local(&dest, false) {
                Ok(b) => backup_file = b,
                Err(r) => return gone(r),
            }
        }
        let unsafe_writes = p.bool("unsafe_writes");
        let moved =
            std::fs::read(&tmpsrc).and_then(|c| textfile::write_atomic(&dest, &c, unsafe_writes));
        let _ = std::fs::remove_file(&tmpsrc);
        if let Err(e) = moved {
            return run.fail(format!("failed to copy {tmpsrc} to {dest}: {e}"));
        }
        true
    } else {
        let _ = std::fs::remove_file(&tmpsrc);
        false
    };
    let args = file::file_args(&p, &dest);
    let changed = match fsattr::set_fs_attributes(&args, changed, None, false) {
        Ok(c) => c,
        Err(r) => return r,
    };
    run.result.insert("changed".into(), changed.into());
    let md5 = match digest::file_digest(&dest, "md5") {
        Some(Ok(s)) => Value::from(s),
        _ => Value::Null,
    };
    run.result.insert("md5sum".into(), md5);
    if !backup_file.is_empty() {
        run.result.insert("backup_file".into(), backup_file.into());
    }
    let status = info.info.get("status").cloned().unwrap_or(Value::from(""));
    run.exit(&msg, &[("status_code", status)])
}

fn access(path: &str, mode: i32) -> bool {
    let Ok(c) = std::ffi::CString::new(path) else { return false };
    // SAFETY: `c` is a valid NUL-terminated path for the call.
    unsafe { libc::access(c.as_ptr(), mode) == 0 }
}
