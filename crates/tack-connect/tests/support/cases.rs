//! The recorded module cases of tack-agent (tests/modules/*.json) run through any
//! `Connection`, for comparing a link with `InProcess`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tack_agent::Invocation;
use tack_connect::Connection;

pub(crate) fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tack-agent/tests/modules")
}

fn subst(value: &Value, dir: &str) -> Value {
    match value {
        Value::String(s) => s.replace("%D", dir).into(),
        Value::Array(items) => items.iter().map(|v| subst(v, dir)).collect(),
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), subst(v, dir))).collect(),
        other => other.clone(),
    }
}

/// The files a case starts from (the subset of the recorder's setup forms these cases use).
fn make_setup(dir: &Path, setup: &Value) {
    for entry in setup.as_array().into_iter().flatten() {
        let p = dir.join(entry["path"].as_str().unwrap());
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        if entry["dir"] == true {
            fs::create_dir_all(&p).unwrap();
        } else if let Some(target) = entry["link"].as_str() {
            std::os::unix::fs::symlink(target, &p).unwrap();
        } else if let Some(target) = entry["hard"].as_str() {
            fs::hard_link(dir.join(target), &p).unwrap();
        } else if let Some(b64) = entry["content_base64"].as_str() {
            use base64::Engine;
            fs::write(&p, base64::engine::general_purpose::STANDARD.decode(b64).unwrap()).unwrap();
        } else {
            fs::write(&p, entry["content"].as_str().unwrap_or("")).unwrap();
        }
        if let Some(secs) = entry["mtime"].as_u64() {
            let at = std::time::UNIX_EPOCH + Duration::from_secs(secs);
            let times = fs::FileTimes::new().set_accessed(at).set_modified(at);
            fs::File::options().write(true).open(&p).unwrap().set_times(times).unwrap();
        }
        if let (Some(mode), None) = (entry["mode"].as_str(), entry.get("link")) {
            let mode = u32::from_str_radix(mode, 8).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).unwrap();
        }
    }
}

/// What differs between two runs of one case made a moment apart on fresh copies of its files.
fn normalise(v: &Value, key: &str) -> Value {
    // `version` is lsattr's inode generation, new for every file made.
    const VARY: &[&str] = &["start", "end", "delta", "mtime", "atime", "ctime", "inode", "version"];
    match v {
        Value::String(_) | Value::Number(_) if VARY.contains(&key) => "<varies>".into(),
        Value::Array(items) => items.iter().map(|i| normalise(i, "")).collect(),
        Value::Object(map) => map.iter().map(|(k, i)| (k.clone(), normalise(i, k))).collect(),
        other => other.clone(),
    }
}

/// Modules whose recorded cases run here: results of every shape (facts-like stat dicts,
/// diffs, command output, warnings, argument failures), none needing root, a server or a
/// random name.
pub(crate) const MODULES: &[&str] = &[
    "ping",
    "command",
    "stat",
    "file",
    "lineinfile",
    "replace",
    "slurp",
    "find",
    "blockinfile",
    "copy",
];

/// Runs every recorded case of [`MODULES`] that needs nothing special through `here` and
/// `there` and asserts the same (normalised) outcome; returns (compared, with a result).
/// `there_home` is `$HOME` on `there` when it differs from this process's (a loopback sshd's
/// sessions), written back as this process's in its results.
pub(crate) fn compare_recorded_cases(
    here: &dyn Connection,
    there: &dyn Connection,
    there_home: Option<&str>,
) -> (usize, usize) {
    let home = std::env::var("HOME").unwrap_or_default();
    let scratch = tempfile::tempdir().unwrap();
    let (mut compared, mut with_result) = (0, 0);
    for module in MODULES {
        let text = fs::read_to_string(cases_dir().join(format!("{module}.json"))).unwrap();
        let recorded: Vec<Value> = serde_json::from_str(&text).unwrap();
        for rec in recorded {
            let case = &rec["case"];
            let args_text = case["args"].to_string();
            let special = ["needs_root", "needs", "server", "prepare", "before", "after", "module"];
            if special.iter().any(|k| case.get(k).is_some()) || args_text.contains("backup") {
                continue;
            }
            let name = case["name"].as_str().unwrap();
            let run = |conn: &dyn Connection| {
                let dir = scratch.path().join(name);
                let _ = fs::remove_dir_all(&dir);
                fs::create_dir_all(&dir).unwrap();
                make_setup(&dir, &case["setup"]);
                let args = subst(&case["args"], &dir.to_string_lossy());
                let inv = Invocation {
                    args: args.as_object().cloned().unwrap_or_default(),
                    check_mode: case["check"] == true,
                    diff: case["diff"] == true,
                    ..Invocation::default()
                };
                let got = conn.run_module(module, &inv).map(Value::Object);
                let _ = fs::remove_dir_all(&dir);
                got.map(|v| normalise(&v, "")).map_err(|e| e.to_string())
            };
            let a = run(here);
            let b = run(there).map(|v| match there_home {
                Some(h) => rehome(&v, h, &home),
                None => v,
            });
            assert_eq!(a, b, "{name}");
            compared += 1;
            with_result += usize::from(a.is_ok());
        }
    }
    (compared, with_result)
}

fn rehome(v: &Value, from: &str, to: &str) -> Value {
    match v {
        Value::String(s) => s.replace(from, to).into(),
        Value::Array(items) => items.iter().map(|i| rehome(i, from, to)).collect(),
        Value::Object(map) => map.iter().map(|(k, i)| (k.clone(), rehome(i, from, to))).collect(),
        other => other.clone(),
    }
}
