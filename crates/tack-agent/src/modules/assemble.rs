//! `ansible.builtin.assemble`, the module side: the fragments of a directory on the host
//! (sorted by name, filtered by `regexp` and `ignore_hidden`, joined with `delimiter`) written
//! to `dest` when their SHA-1 differs, after `validate` and `backup`, then the file options.
//! The assembled bytes go to a private temporary file in the module's own temporary
//! directory, which is removed before the module returns. Fragments from the controller
//! (`remote_src: false`) are the controller action's job.

use serde_json::Value;

use super::argspec::{Kind, Opt, Params, Spec, file_common};
use super::common::fail;
use super::fetch::{ModuleTmp, mkstemp};
use super::fsattr::{FileArgs, Outcome, set_fs_attributes};
use super::paths::{exists, isdir, join};
use super::pyre::{Flags, PyRegex};
use super::textfile::backup_local;
use super::{Ctx, Invocation, ModuleResult, digest, host};

pub(crate) fn spec() -> Spec {
    let mut options = vec![
        Opt::new("src", Kind::Path).required(),
        Opt::new("delimiter", Kind::Str),
        Opt::new("dest", Kind::Path).required(),
        Opt::new("backup", Kind::Bool).default(false),
        Opt::new("remote_src", Kind::Bool).default(true),
        Opt::new("regexp", Kind::Str),
        Opt::new("ignore_hidden", Kind::Bool).default(false),
        Opt::new("validate", Kind::Str),
        Opt::new("decrypt", Kind::Bool).default(true),
    ];
    options.extend(file_common());
    Spec { options, ..Spec::default() }
}

pub fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let mut result = match execute(ctx, &p) {
        Ok(r) | Err(r) => r,
    };
    host::add_path_info(&mut result);
    result
}

/// Python's `codecs.escape_decode`: backslash escapes of a bytes literal; an unknown escape
/// keeps its backslash.
pub fn escape_decode(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        let c = input[i];
        if c != b'\\' || i + 1 >= input.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = input[i + 1];
        i += 2;
        match e {
            b'\n' => {}
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match input.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let hex = input.get(i..i + 2).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => {
                        out.extend_from_slice(b"\\x");
                    }
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    out
}

/// `assemble_from_fragments`: the bytes of `src`'s regular files in name order. Like
/// ansible's module, the delimiter is decoded again before every use.
pub fn assemble(
    src: &str,
    delimiter: Option<&str>,
    regexp: Option<&PyRegex>,
    ignore_hidden: bool,
) -> std::io::Result<Vec<u8>> {
    assemble_reading(src, delimiter, regexp, ignore_hidden, &|path| std::fs::read(path))
}

/// [`assemble`] with each fragment's bytes from `read` (the controller's decrypts vaults).
fn assemble_reading(
    src: &str,
    delimiter: Option<&str>,
    regexp: Option<&PyRegex>,
    ignore_hidden: bool,
    read: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
) -> std::io::Result<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(src)?
        .map(|e| {
            e.map(|e| std::os::unix::ffi::OsStrExt::as_bytes(e.file_name().as_os_str()).to_vec())
        })
        .collect::<Result<_, _>>()?;
    names.sort();
    let mut out = Vec::new();
    let mut delimiter: Option<Vec<u8>> = delimiter.map(|d| d.as_bytes().to_vec());
    let (mut delimit_me, mut add_newline) = (false, false);
    for raw in names {
        let name = String::from_utf8_lossy(&raw).into_owned();
        if regexp.is_some_and(|re| re.search(&name).is_none()) {
            continue;
        }
        let fragment = join(src, &name);
        let is_file = std::fs::metadata(&fragment).is_ok_and(|m| m.is_file());
        if !is_file || (ignore_hidden && name.starts_with('.')) {
            continue;
        }
        let content = read(&fragment)?;
        if add_newline {
            out.push(b'\n');
        }
        if delimit_me && let Some(d) = delimiter.as_mut().filter(|d| !d.is_empty()) {
            *d = escape_decode(d);
            out.extend_from_slice(d);
            if !d.ends_with(b"\n") {
                out.push(b'\n');
            }
        }
        out.extend_from_slice(&content);
        delimit_me = true;
        add_newline = !content.ends_with(b"\n");
    }
    Ok(out)
}

/// The controller's half (`remote_src: false`): the fragments of a controller directory, with
/// the regexp compiled as Python's `re` compiles it, each fragment's bytes from `read` (the
/// engine's decrypts a vault-encrypted one, as ansible's loader does).
pub fn controller_fragments(
    src: &str,
    delimiter: Option<&str>,
    regexp: Option<&str>,
    ignore_hidden: bool,
    read: &dyn Fn(&str) -> std::io::Result<Vec<u8>>,
) -> Result<Vec<u8>, String> {
    let re = match regexp {
        Some(pattern) => Some(super::host_re::compile(pattern, Flags::default())?),
        None => None,
    };
    assemble_reading(src, delimiter, re.as_ref(), ignore_hidden, read).map_err(|e| e.to_string())
}

fn execute(ctx: Ctx, p: &Params) -> Outcome<ModuleResult> {
    super::fsattr::check_selinux(p)?;
    let src = p.str("src").unwrap_or_default().to_string();
    let dest = p.str("dest").unwrap_or_default().to_string();
    let mut result = ModuleResult::new();
    result.insert("src".into(), src.clone().into());
    result.insert("dest".into(), dest.clone().into());
    if !exists(&src) {
        return Err(fail(format!("Source ({src}) does not exist")));
    }
    if !isdir(&src) {
        return Err(fail(format!("Source ({src}) is not a directory")));
    }
    let regexp = match p.str("regexp") {
        Some(pattern) => Some(
            super::host_re::compile(pattern, Flags::default())
                .map_err(|e| fail(format!("Invalid Regexp ({e}) in \"{pattern}\"")))?,
        ),
        None => None,
    };
    let validate = p.str("validate").filter(|v| !v.is_empty());
    if let Some(v) = validate
        && !v.contains("%s")
    {
        return Err(fail(format!("validate must contain %s: {v}")));
    }
    let bytes = assemble(&src, p.str("delimiter"), regexp.as_ref(), p.bool("ignore_hidden"))
        .map_err(|e| fail(format!("could not assemble the fragments of {src}: {e}")))?;
    let mut tmp = ModuleTmp::new();
    let path = tmp
        .dir()
        .and_then(|d| mkstemp(&d, &bytes))
        .map_err(|e| fail(format!("could not write the assembled file: {e}")))?;
    let path_hash = digest::file_digest(&path, "sha1").and_then(Result::ok);
    let path_md5 = digest::file_digest(&path, "md5").and_then(Result::ok);
    result.insert("checksum".into(), path_hash.clone().map(Value::from).unwrap_or(Value::Null));
    result.insert("md5sum".into(), path_md5.map(Value::from).unwrap_or(Value::Null));
    let dest_hash =
        if exists(&dest) { digest::file_digest(&dest, "sha1").and_then(Result::ok) } else { None };
    let mut changed = false;
    if path_hash != dest_hash {
        if let Some(v) = validate {
            let line = v.replace("%s", &path);
            let (rc, out, err) = match run_command(&line) {
                Ok(ran) => ran,
                Err(cause) => {
                    let msg = "Invalid command syntax in run_command";
                    return Err(super::common::fail_with_cause(ModuleResult::new(), msg, &cause));
                }
            };
            let mut validation = serde_json::Map::new();
            validation.insert("rc".into(), rc.into());
            validation.insert("stdout".into(), out.into());
            validation.insert("stderr".into(), err.clone().into());
            result.insert("validation".into(), Value::Object(validation));
            if rc != 0 {
                return Err(fail(format!("failed to validate: rc:{rc} error:{err}")));
            }
        }
        if p.bool("backup") && dest_hash.is_some() {
            result.insert("backup_file".into(), backup_local(&dest, false)?.into());
        }
        if !ctx.check_mode {
            super::copy::place(&path, &dest, false).map_err(|e| {
                fail(format!(
                    "Unable to make {path} into to {dest}, failed final rename from {path}: {e}"
                ))
            })?;
        }
        changed = true;
    }
    drop(tmp);
    let args = FileArgs {
        path: dest.clone(),
        mode: p.get("mode").clone(),
        owner: p.str("owner").map(str::to_string),
        group: p.str("group").map(str::to_string),
        attributes: p.str("attributes").map(str::to_string),
    };
    let changed = set_fs_attributes(&args, changed, None, ctx.check_mode)?;
    result.insert("changed".into(), changed.into());
    result.insert("msg".into(), "OK".into());
    Ok(result)
}

/// `run_command` of a validate line: split as shlex splits, run without a shell. A line
/// shlex cannot split is `Err` with its words (`No closing quotation`).
fn run_command(line: &str) -> Result<(i64, String, String), String> {
    let argv = tack_py::shlex::split(line).map_err(|e| e.to_string())?;
    let Some((program, args)) = argv.split_first() else {
        return Ok((2, String::new(), String::new()));
    };
    Ok(match super::environment::command(program).args(args).output() {
        Ok(out) => (
            i64::from(out.status.code().unwrap_or(-1)),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ),
        Err(e) => (i64::from(e.raw_os_error().unwrap_or(2)), String::new(), e.to_string()),
    })
}
