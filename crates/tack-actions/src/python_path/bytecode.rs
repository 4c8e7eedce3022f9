//! Compiled code inside a payload, for the hosts' interpreters: a host's Python server spends
//! a third of its start compiling ansible's module_utils, on every run, since what it
//! compiles goes with the link. The controller compiles it once instead, with an interpreter
//! of the host's own version, and keeps it with the payloads.
//!
//! A host only names its bytecode tag (`cpython-311`, checked to be one), which picks among
//! the interpreters on the controller's `PATH`; compiled code never comes from a host, so no
//! host can choose code another host runs. The first run that meets a tag only learns it.
//!
//! Owns the tags the hosts named (`tags` in the payload cache) and the compiled payloads
//! (`<payload hash>.<tag>.zip` there); it never changes a payload's sources.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use super::payload::{Payload, Style};
use super::payload_cache;

const COMPILER: &str = include_str!("compile_payload.py");

/// The tags met in this run, so that a host's every answer does not touch the file.
static SEEN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Whether `tag` is a CPython 3 bytecode tag, and its `python3.N` program name.
fn program_for(tag: &str) -> Option<String> {
    let minor = tag.strip_prefix("cpython-3")?;
    (!minor.is_empty() && minor.len() <= 2 && minor.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("python3.{minor}"))
}

/// Notes the bytecode tag a host's server named, for later runs.
pub(super) fn host_named(tag: &str) {
    if program_for(tag).is_none() {
        return;
    }
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    if seen.insert(tag.to_string())
        && let Some(dir) = payload_cache::user_dir()
    {
        payload_cache::remember_tag(&dir, tag);
    }
}

/// `payload` with compiled code for every tag the hosts named in earlier runs that an
/// interpreter on the controller can compile for; `payload` itself when there is none.
pub(super) fn with_bytecode(payload: Arc<Payload>) -> Arc<Payload> {
    if payload.style != Style::Python {
        return payload;
    }
    let Some(dir) = payload_cache::user_dir() else { return payload };
    let mut zip = payload.zip.clone();
    let mut changed = false;
    for tag in payload_cache::tags(&dir) {
        let Some(program) = program_for(&tag) else { continue };
        let hash = blake3::hash(&zip).to_hex().to_string();
        let name = format!("{hash}.{tag}.zip");
        if let Some(kept) = payload_cache::load_bytes(&dir, &name) {
            zip = kept;
            changed = true;
        } else if let Some(compiled) = compile(&program, &tag, &zip) {
            payload_cache::store_bytes(&dir, &name, &compiled);
            zip = compiled;
            changed = true;
        }
    }
    if !changed {
        return payload;
    }
    Arc::new(Payload {
        hash: blake3::hash(&zip).to_hex().to_string(),
        fqn: payload.fqn.clone(),
        profile: payload.profile.clone(),
        zip,
        internal: payload.internal.clone(),
        style: payload.style,
    })
}

/// `zip` with compiled code for `tag`, made by the first `program` on `PATH` that has that
/// tag; `None` when none can.
fn compile(program: &str, tag: &str, zip: &[u8]) -> Option<Vec<u8>> {
    for python in candidates(program) {
        let Ok(mut child) = Command::new(&python)
            .args(["-c", COMPILER, tag])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        else {
            continue;
        };
        if let Some(mut stdin) = child.stdin.take() {
            // A compiler that stops reading fails below.
            let _ = stdin.write_all(zip);
        }
        match child.wait_with_output() {
            Ok(out) if out.status.success() && !out.stdout.is_empty() => return Some(out.stdout),
            _ => continue,
        }
    }
    None
}

/// `program` in each directory of `PATH`, then the usual system places.
fn candidates(program: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(["/usr/local/bin", "/usr/bin"].map(PathBuf::from));
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_absolute()) {
        let path = dir.join(program);
        if is_executable(&path) && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cpython_3_tags_name_a_program() {
        assert_eq!(program_for("cpython-311").as_deref(), Some("python3.11"));
        assert_eq!(program_for("cpython-39").as_deref(), Some("python3.9"));
        for bad in ["cpython-3", "cpython-3/11", "pypy-311", "cpython-3111", "cpython-3a", ""] {
            assert_eq!(program_for(bad), None, "{bad}");
        }
    }

    #[test]
    fn compiled_code_lands_beside_each_source_and_runs_unchanged() {
        let python = Path::new("/usr/bin/python3.11");
        if !python.exists() {
            eprintln!("no {}: not run", python.display());
            return;
        }
        let script = "import io, sys, zipfile\n\
                      b = io.BytesIO()\n\
                      with zipfile.ZipFile(b, 'w') as z:\n    z.writestr('pkg/mod.py', 'X = 41 + 1\\n')\n\
                      sys.stdout.buffer.write(b.getvalue())";
        let zip = Command::new(python).args(["-c", script]).output().unwrap().stdout;
        let compiled = compile("python3.11", "cpython-311", &zip).unwrap();
        let list = "import io, sys, zipfile\n\
                    print('\\n'.join(zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read())).namelist()))";
        let mut child = Command::new(python)
            .args(["-c", list])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&compiled).unwrap();
        let names = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
        assert_eq!(names.trim(), "pkg/mod.py\npkg/__pycache__/mod.cpython-311.pyc");
        // An interpreter of another version refuses to compile for this tag.
        assert!(compile("python3.11", "cpython-399", &zip).is_none());
    }
}
