//! The module cases recorded from ansible-core 2.21.5's own modules by
//! `scripts/record-module-results.py` (`tests/modules/*.json`), run through
//! `tack_agent::run_module` in the same fixed scratch directories.
//!
//! The whole result dictionary is compared (its key set included) and so is the scratch
//! directory afterwards. Only what varies between runs is normalised: run times
//! (`start`/`end`/`delta`, file times), inode and device numbers and lsattr's file version, backup-file timestamps and
//! the random part of temporary names (and the URL modules' private download file), the port
//! of a case's server (`tests/modules/server.rs`, the same one the recorder runs), the host's
//! own name in `hostname` results, numbers a case marks as host-chosen (`vary`), an `elapsed`
//! one second longer on a loaded machine, and `find`'s file order (the file system's own).
//! When the test does not run as root (the user the recordings were made as), root's uid,
//! gid and names in expected results stand for the current user's, and cases marked
//! `needs_root` (they change ownership) or that change the user database are skipped; cases
//! may name programs they need. A case's `prepare` commands (a virtualenv to work in) run on
//! any host, and the contents of its `opaque` paths are not compared (a virtualenv's byte-
//! compiled files and install records differ run to run). apt cases (`before`/`after` set
//! and restore the packages, so root only) normalise `cache_update_time` (the package lists'
//! mtime, moved by any `apt-get update`), apt-get's `Fetched <size> in <time> (<speed>)`
//! line, its `and <N> not upgraded.` count (the machine's pending upgrades) and dpkg's
//! `<N> files and directories currently installed.` (the machine's package set); the rest of apt-get's output (`Get:` lines included) is compared exactly. pip runs with
//! `PIP_NO_CACHE_DIR=1` and `PIP_DISABLE_PIP_VERSION_CHECK=1` and no other `PIP_*` setting,
//! as in the recorder: so its `stdout`/`stderr` (always "Downloading", never "Using cached",
//! no "new release" notice) are compared exactly, not normalised. A case tack knowingly answers differently is listed in
//! `tests/modules/known-divergences.txt` with its reason, and must still differ.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use regex::Regex;
use serde_json::{Map, Value};
use sha1_smol_free::sha1_hex;
use tack_agent::modules::argspec::{self, Elem, Kind, Opt, RequiredIf, Spec};
use tack_agent::{Invocation, run_module};

mod sha1_smol_free {
    /// SHA-1 of a file's content, as the recorder stores it.
    pub(crate) fn sha1_hex(data: &[u8]) -> String {
        use sha1::{Digest, Sha1};
        let mut h = Sha1::new();
        h.update(data);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[path = "modules/server.rs"]
mod server;

const SCRATCH: &str = "/tmp/tack-modules";

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("modules")
}

fn subst(value: &Value, dir: &str) -> Value {
    match value {
        Value::String(s) => Value::from(s.replace("%D", dir)),
        Value::Array(items) => Value::Array(items.iter().map(|v| subst(v, dir)).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), subst(v, dir))).collect())
        }
        other => other.clone(),
    }
}

fn subst_port(value: &Value, port: u16) -> Value {
    match value {
        Value::String(s) => Value::from(s.replace("%P", &port.to_string())),
        Value::Array(items) => Value::Array(items.iter().map(|v| subst_port(v, port)).collect()),
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), subst_port(v, port))).collect())
        }
        other => other.clone(),
    }
}

fn subst_text(value: &Value, from: &str, to: &str) -> Value {
    match value {
        Value::String(s) => Value::from(s.replace(from, to)),
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| subst_text(v, from, to)).collect())
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), subst_text(v, from, to))).collect())
        }
        other => other.clone(),
    }
}

/// This host's name and `socket.getfqdn()`, as Python reports them.
fn host_names() -> (String, String) {
    let out = std::process::Command::new("python3")
        .args(["-c", "import socket; print(socket.gethostname()); print(socket.getfqdn())"])
        .output();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    let mut lines = text.lines();
    (lines.next().unwrap_or_default().to_string(), lines.next().unwrap_or_default().to_string())
}

/// The host's own names in a hostname result, as placeholders (they differ between hosts).
fn host_placeholders(v: &Value, (host, fqdn): &(String, String)) -> Value {
    let domain = fqdn.split('.').skip(1).collect::<Vec<_>>().join(".");
    match v {
        Value::String(s) if s == fqdn => "<fqdn>".into(),
        Value::String(s) if s == host => "<hostname>".into(),
        Value::String(s) if !domain.is_empty() && *s == domain => "<domain>".into(),
        Value::String(s) => {
            s.replace(&format!("hostname = {host}\n"), "hostname = <hostname>\n").into()
        }
        Value::Array(items) => Value::Array(
            items.iter().map(|i| host_placeholders(i, &(host.clone(), fqdn.clone()))).collect(),
        ),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, i)| (k.clone(), host_placeholders(i, &(host.clone(), fqdn.clone()))))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn make_setup(scratch: &Path, setup: Option<&Value>) {
    for entry in setup.and_then(Value::as_array).into_iter().flatten() {
        let p = scratch.join(entry["path"].as_str().expect("setup path"));
        fs::create_dir_all(p.parent().expect("parent")).expect("mkdir parent");
        if entry.get("dir").and_then(Value::as_bool) == Some(true) {
            fs::create_dir_all(&p).expect("mkdir");
        } else if let Some(target) = entry.get("link").and_then(Value::as_str) {
            std::os::unix::fs::symlink(target, &p).expect("symlink");
        } else if let Some(target) = entry.get("hard").and_then(Value::as_str) {
            fs::hard_link(scratch.join(target), &p).expect("hard link");
        } else if let Some(b64) = entry.get("content_base64").and_then(Value::as_str) {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
            fs::write(&p, bytes).expect("write");
        } else {
            fs::write(&p, entry.get("content").and_then(Value::as_str).unwrap_or(""))
                .expect("write");
        }
        if let Some(secs) = entry.get("mtime").and_then(Value::as_u64) {
            let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
            let times = fs::FileTimes::new().set_accessed(at).set_modified(at);
            fs::File::options()
                .write(true)
                .open(&p)
                .expect("open")
                .set_times(times)
                .expect("utime");
        }
        if let Some(mode) = entry.get("mode").and_then(Value::as_str)
            && entry.get("link").is_none()
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = u32::from_str_radix(mode, 8).expect("octal mode");
            fs::set_permissions(&p, fs::Permissions::from_mode(mode)).expect("chmod");
        }
    }
}

fn file_state(scratch: &Path) -> Value {
    let mut out = BTreeMap::new();
    let mut stack = vec![scratch.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).expect("read_dir").flatten() {
            let p = entry.path();
            let rel =
                p.strip_prefix(scratch).expect("under scratch").to_string_lossy().into_owned();
            let st = fs::symlink_metadata(&p).expect("lstat");
            let mut e = Map::new();
            if st.file_type().is_symlink() {
                e.insert("type".into(), "link".into());
                e.insert(
                    "target".into(),
                    fs::read_link(&p).expect("readlink").to_string_lossy().into_owned().into(),
                );
            } else {
                e.insert("mode".into(), format!("{:04o}", st.mode() & 0o7777).into());
                if st.is_dir() {
                    e.insert("type".into(), "directory".into());
                    stack.push(p.clone());
                } else {
                    e.insert("type".into(), "file".into());
                    e.insert("sha1".into(), sha1_hex(&fs::read(&p).expect("read")).into());
                    e.insert("nlink".into(), st.nlink().into());
                }
            }
            out.insert(rel, Value::Object(e));
        }
    }
    Value::Object(out.into_iter().collect())
}

struct Normaliser {
    backup: Regex,
    temp: Option<Regex>,
    /// The URL modules' download file in the module's private temporary directory.
    download: Option<Regex>,
    /// apt-get's download summary (`Fetched 26.7 kB in 0s (712 kB/s)`): size, time, speed.
    fetched: Option<Regex>,
    /// The port of the case's server in this run (the recorder's or the test's).
    port: Option<u64>,
    /// Result keys whose numbers the host chooses (the case's `vary`: a GID groupadd
    /// picked, which depends on the groups the machine already has).
    vary: Vec<String>,
    /// When not run as root (the recordings' user): the current user's uid, gid and names,
    /// standing in for root's in expected results.
    me: Option<(u32, u32, String, String)>,
}

fn current_identity() -> Option<(u32, u32, String, String)> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        return None;
    }
    let name = |cmd: &str| {
        std::process::Command::new("id")
            .arg(cmd)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default()
    };
    Some((uid, gid, name("-un"), name("-gn")))
}

impl Normaliser {
    fn with_port(case: &Value, port: Option<u64>) -> Self {
        Normaliser { port, ..Normaliser::new(case) }
    }

    fn new(case: &Value) -> Self {
        let temp = (case["module"].as_str() == Some("tempfile")).then(|| {
            let args = &case["args"];
            let prefix = args.get("prefix").and_then(Value::as_str).unwrap_or("ansible.");
            let suffix = args.get("suffix").and_then(Value::as_str).unwrap_or("");
            Regex::new(&format!("{}[a-z0-9_]{{8}}{}", regex::escape(prefix), regex::escape(suffix)))
                .expect("re")
        });
        let download = matches!(case["module"].as_str(), Some("get_url" | "uri")).then(|| {
            Regex::new(r"(?:/tmp/ansible-moduletmp-[0-9.]+-[a-z0-9_]{8})?/tmp[a-z0-9_]{8}\b")
                .expect("re")
        });
        // What apt fetched, its count of the machine's pending upgrades and dpkg's count of
        // installed files: all change with the machine's package set, not with what the case
        // did.
        let fetched = (case["module"].as_str() == Some("apt")).then(|| {
            Regex::new(
                r"Fetched [0-9.,]+ [kMG]?B in [0-9hms]+ \([0-9.,]+ [kMG]?B/s\)|and [0-9]+ not upgraded\.|\.\.\. [0-9]+ files and directories currently installed\.",
            )
            .expect("re")
        });
        Normaliser {
            backup: Regex::new(r"\.\d+\.\d{4}-\d\d-\d\d@\d\d:\d\d:\d\d~").expect("re"),
            temp,
            me: current_identity(),
            download,
            fetched,
            port: None,
            vary: case
                .get("vary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect(),
        }
    }

    fn text(&self, s: &str) -> String {
        let mut s = self.backup.replace_all(s, ".<pid>.<time>~").into_owned();
        if let Some(re) = &self.download {
            s = re.replace_all(&s, "/<tmpfile>").into_owned();
        }
        if let Some(re) = &self.fetched {
            s = re
                .replace_all(&s, |c: &regex::Captures<'_>| {
                    if c[0].starts_with("Fetched") {
                        "Fetched <size> in <time> (<speed>)".to_string()
                    } else if c[0].starts_with("...") {
                        "... <N> files and directories currently installed.".to_string()
                    } else {
                        "and <N> not upgraded.".to_string()
                    }
                })
                .into_owned();
        }
        if let Some(port) = self.port {
            s = s.replace(&format!("127.0.0.1:{port}"), "127.0.0.1:<port>");
        }
        match &self.temp {
            Some(re) => re.replace_all(&s, "<tempname>").into_owned(),
            None => s,
        }
    }

    fn value(&self, key: &str, v: &Value) -> Value {
        const TIMES: &[&str] =
            &["start", "end", "delta", "mtime", "atime", "ctime", "cache_update_time"];
        const NUMBERS: &[&str] = &["inode", "dev"];
        // lsattr's file version (inode generation) is new for every file made.
        if key == "version" && v.as_str().is_some_and(|s| s.chars().all(|c| c.is_ascii_digit())) {
            return "<n>".into();
        }
        if v.is_number() && self.vary.iter().any(|k| k == key) {
            return "<n>".into();
        }
        if key == "port" && v.as_u64().is_some() && v.as_u64() == self.port {
            return "<port>".into();
        }
        if let Some((uid, gid, user, group)) = &self.me {
            match (key, v) {
                ("uid", Value::Number(n)) if n.as_u64() == Some(0) => return Value::from(*uid),
                ("gid", Value::Number(n)) if n.as_u64() == Some(0) => return Value::from(*gid),
                ("owner" | "pw_name", Value::String(s)) if s == "root" => {
                    return Value::from(user.clone());
                }
                ("group" | "gr_name", Value::String(s)) if s == "root" => {
                    return Value::from(group.clone());
                }
                _ => {}
            }
        }
        match v {
            Value::String(_) | Value::Number(_) if TIMES.contains(&key) => "<time>".into(),
            Value::Number(_) if NUMBERS.contains(&key) => "<n>".into(),
            Value::String(s) => self.text(s).into(),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.value("", i)).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (self.text(k), self.value(k, v))).collect())
            }
            other => other.clone(),
        }
    }
}

fn on_path(program: &str) -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/sbin", "/sbin"])
        .any(|d| !d.is_empty() && Path::new(d).join(program).is_file())
}

fn run_all(commands: &[Vec<String>]) {
    for argv in commands {
        run_command(argv);
    }
}

/// Runs one `before`/`after` command, true when it succeeded. An `apt-get purge` of
/// packages dpkg holds nothing of (not installed, no configuration files left) is not run:
/// it would change nothing, and the apt cases purge before and after every case, at seconds
/// an apt-get.
fn run_command(argv: &[String]) -> bool {
    if let Some(at) = argv.iter().position(|a| a == "purge")
        && argv.iter().any(|a| a == "apt-get")
        && argv[at + 1..].iter().all(|package| !dpkg_holds(package))
    {
        return true;
    }
    std::process::Command::new(&argv[0]).args(&argv[1..]).output().is_ok_and(|o| o.status.success())
}

/// Whether dpkg has anything of `package` on the machine: its abbreviated status's second
/// letter is `n` (not installed) for a package it holds nothing of, and the query fails for
/// one it never heard of.
fn dpkg_holds(package: &str) -> bool {
    std::process::Command::new("dpkg-query")
        .args(["-W", "-f", "${db:Status-Abbrev}", package])
        .output()
        .is_ok_and(|o| o.status.success() && o.stdout.get(1).is_some_and(|&status| status != b'n'))
}

fn sort_by_path(result: &mut Value) {
    if let Some(Value::Array(files)) = result.get_mut("files") {
        files.sort_by(|a, b| a["path"].as_str().cmp(&b["path"].as_str()));
    }
}

fn leak(s: &str) -> &'static str {
    // Specs hold static names; a test process may keep these few strings for its lifetime.
    Box::leak(s.to_string().into_boxed_str())
}

fn leak_list(v: &Value) -> &'static [&'static str] {
    let names: Vec<&'static str> =
        v.as_array().into_iter().flatten().filter_map(Value::as_str).map(leak).collect();
    Box::leak(names.into_boxed_slice())
}

fn leak_groups(v: Option<&Value>) -> &'static [&'static [&'static str]] {
    let groups: Vec<&'static [&'static str]> =
        v.and_then(Value::as_array).into_iter().flatten().map(leak_list).collect();
    Box::leak(groups.into_boxed_slice())
}

fn kind_of(name: Option<&str>, elements: Option<&str>) -> Kind {
    let elem = elements.map(|e| match e {
        "str" => Elem::Str,
        "path" => Elem::Path,
        "int" => Elem::Int,
        "bool" => Elem::Bool,
        "float" => Elem::Float,
        "dict" => Elem::Dict,
        _ => Elem::Raw,
    });
    match name.unwrap_or("str") {
        "bool" => Kind::Bool,
        "int" => Kind::Int,
        "float" => Kind::Float,
        "path" => Kind::Path,
        "list" => Kind::List(elem),
        "dict" => Kind::Dict,
        "raw" => Kind::Raw,
        _ => Kind::Str,
    }
}

/// A case's spec, written as ansible's `argument_spec`, as tack's [`Spec`].
fn spec_of(case: &Value) -> Spec {
    let spec = &case["spec"];
    let mut options = Vec::new();
    for (name, o) in spec["options"].as_object().into_iter().flatten() {
        let mut opt = Opt::new(
            leak(name),
            kind_of(
                o.get("type").and_then(Value::as_str),
                o.get("elements").and_then(Value::as_str),
            ),
        )
        .aliases(leak_list(o.get("aliases").unwrap_or(&Value::Null)));
        if let Some(d) = o.get("default") {
            opt = opt.default(d.clone());
        }
        if o.get("required").and_then(Value::as_bool) == Some(true) {
            opt = opt.required();
        }
        if let Some(c) = o.get("choices").and_then(Value::as_array) {
            opt = opt.choice_values(c.clone());
        }
        if o.get("no_log").and_then(Value::as_bool) == Some(true) {
            opt = opt.no_log();
        }
        options.push(opt);
    }
    let required_if = spec
        .get("required_if")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| RequiredIf {
            key: leak(r[0].as_str().unwrap_or_default()),
            value: r[1].clone(),
            needs: leak_list(&r[2]),
            any: r.get(3).and_then(Value::as_bool).unwrap_or(false),
        })
        .collect();
    Spec {
        options,
        mutually_exclusive: leak_groups(spec.get("mutually_exclusive")),
        required_one_of: leak_groups(spec.get("required_one_of")),
        required_together: leak_groups(spec.get("required_together")),
        required_if,
    }
}

/// What the recorder's probe module returns for a case: the validated parameters or the
/// failure.
fn run_probe(case: &Value) -> Value {
    let spec = spec_of(case);
    let args = case.get("args").and_then(Value::as_object).cloned().unwrap_or_default();
    argspec::begin(&args);
    let mut result = Map::new();
    match argspec::validate("probe", &spec, &args) {
        Ok(params) => {
            result.insert("params".into(), Value::Object(params.values));
        }
        Err(msg) => {
            result.insert("failed".into(), true.into());
            result.insert("msg".into(), msg.into());
        }
    }
    Value::Object(argspec::finish(result))
}

/// The scratch paths are fixed (recorded results name them), so concurrent runs of this test
/// (another worktree's) and of the recorder take turns on one lock, held until dropped.
fn scratch_lock() -> fs::File {
    use std::os::fd::AsRawFd;
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open("/tmp/tack-modules.lock")
        .expect("lock file");
    // SAFETY: the descriptor is open for the call; flock only blocks until the lock is free.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
    assert_eq!(rc, 0, "could not lock /tmp/tack-modules.lock");
    file
}

fn known_divergences() -> BTreeMap<String, String> {
    let text = fs::read_to_string(cases_dir().join("known-divergences.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            l.split_once(':').map(|(n, r)| (n.trim().to_string(), r.trim().to_string()))
        })
        .collect()
}

/// What one thread's module cases came to.
#[derive(Default)]
struct Tally {
    total: usize,
    same: usize,
    skipped: usize,
    failures: Vec<String>,
}

/// Runs the recorded cases of one module (`file`) and counts them in `tally`.
fn run_file(
    file: &Path,
    known: &BTreeMap<String, String>,
    this_host: &(String, String),
    tally: &mut Tally,
) {
    let module = file.file_stem().expect("stem").to_string_lossy().into_owned();
    // Each module's time is printed so the slow ones stand out in CI's log.
    let started = std::time::Instant::now();
    let recorded: Vec<Value> =
        serde_json::from_str(&fs::read_to_string(file).expect("read")).expect("json");
    for rec in recorded {
        let mut case = rec["case"].clone();
        let name = case["name"].as_str().expect("name").to_string();
        // SAFETY: geteuid has no preconditions.
        if case.get("needs_root").and_then(Value::as_bool) == Some(true)
            && unsafe { libc::geteuid() } != 0
        {
            tally.skipped += 1;
            continue;
        }
        if case.get("module").is_none() {
            case["module"] = Value::from(module.clone());
        }
        let missing: Vec<&str> = case
            .get("needs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|prog| !on_path(prog))
            .collect();
        if !missing.is_empty() {
            eprintln!("{name}: skipped (needs {missing:?} on this host)");
            tally.skipped += 1;
            tally.total += 1;
            continue;
        }
        let scratch = Path::new(SCRATCH).join(&name);
        let _ = fs::remove_dir_all(&scratch);
        fs::create_dir_all(&scratch).expect("scratch");
        make_setup(&scratch, case.get("setup"));
        let commands = |key: &str| -> Vec<Vec<String>> {
            case.get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|argv| {
                    argv.as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| {
                            let dir = Path::new(SCRATCH).join(&name);
                            a.as_str().expect("argv").replace("%D", &dir.to_string_lossy())
                        })
                        .collect()
                })
                .collect()
        };
        let (before, after) = (commands("before"), commands("after"));
        for argv in commands("prepare") {
            let st = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .current_dir(&scratch)
                .output();
            assert!(st.is_ok_and(|o| o.status.success()), "{name}: prepare {argv:?}");
        }
        if !(before.is_empty() && after.is_empty()) {
            // SAFETY: geteuid has no preconditions.
            if unsafe { libc::geteuid() } != 0 {
                eprintln!("{name}: skipped (changes the user database; needs root)");
                let _ = fs::remove_dir_all(&scratch);
                tally.skipped += 1;
                tally.total += 1;
                continue;
            }
            run_all(&after);
            for argv in &before {
                assert!(run_command(argv), "{name}: before {argv:?}");
            }
        }
        let dir = scratch.to_string_lossy().into_owned();
        let server = case.get("server").map(server::Server::start);
        let mut args = subst(case.get("args").unwrap_or(&Value::Null), &dir);
        if let Some(s) = &server {
            args = subst_port(&args, s.port);
        }
        // `%H` (the host's name) is a placeholder of the hostname cases only: elsewhere it
        // is ordinary text (`strftime`'s hour).
        if case["module"].as_str() == Some("hostname") {
            args = subst_text(&args, "%H", &this_host.0);
        }
        let inv = Invocation {
            args: args.as_object().cloned().unwrap_or_default(),
            check_mode: case.get("check").and_then(Value::as_bool).unwrap_or(false),
            diff: case.get("diff").and_then(Value::as_bool).unwrap_or(false),
            ..Invocation::default()
        };
        let module_name = case["module"].as_str().expect("module").to_string();
        let got = if module_name == "argspec" {
            run_probe(&case)
        } else {
            run_module(&module_name, &inv).map(Value::Object).unwrap_or(Value::Null)
        };
        run_all(&after);
        let mut got_files = file_state(&scratch);
        for hidden in case.get("opaque").and_then(Value::as_array).into_iter().flatten() {
            let prefix = format!("{}/", hidden.as_str().unwrap_or_default());
            if let Value::Object(map) = &mut got_files {
                map.retain(|k, _| !k.starts_with(&prefix));
            }
        }
        let _ = fs::remove_dir_all(&scratch);
        let norm = Normaliser::new(&case);
        let want_norm = Normaliser::with_port(&case, rec.get("port").and_then(Value::as_u64));
        let got_norm = Normaliser::with_port(&case, server.as_ref().map(|s| u64::from(s.port)));
        drop(server);
        let (mut want, mut got) = (want_norm.value("", &rec["result"]), got_norm.value("", &got));
        // A run's `elapsed` seconds may round one higher on a loaded machine.
        if let (Some(w), Some(g)) = (want["elapsed"].as_u64(), got["elapsed"].as_u64())
            && (g == w || g == w + 1)
        {
            got["elapsed"] = w.into();
        }
        if module_name == "hostname" {
            let theirs = (
                rec["hostname"].as_str().unwrap_or_default().to_string(),
                rec["fqdn"].as_str().unwrap_or_default().to_string(),
            );
            want = host_placeholders(&want, &theirs);
            got = host_placeholders(&got, this_host);
        }
        if module_name == "find" || module_name.ends_with(".find") {
            // find lists entries in directory order, which is the file system's own.
            sort_by_path(&mut want);
            sort_by_path(&mut got);
        }
        let no_files = Value::Object(Map::new());
        let want_files = norm.value("", rec.get("files").unwrap_or(&no_files));
        let got_files = norm.value("", &got_files);
        let matches = want == got && want_files == got_files;
        tally.total += 1;
        match (matches, known.contains_key(&name)) {
            (true, false) => tally.same += 1,
            (false, true) => {}
            (true, true) => tally.failures.push(format!("{name}: listed as a known divergence but now matches")),
            (false, false) => tally.failures.push(format!(
                "{name}:\n  want {want}\n  got  {got}\n  want files {want_files}\n  got files  {got_files}"
            )),
        }
    }
    eprintln!("module cases of {module}: {:.1} s", started.elapsed().as_secs_f64());
}

#[test]
fn module_cases_match_ansible() {
    // SAFETY: this is the test binary's only test, so no other thread reads the environment
    // while it is changed; the recorder ran each module with the same HOME.
    unsafe { std::env::set_var("HOME", "/nonexistent-home/tack") };
    // pip reads its settings from the environment; the recorder ran it with only these.
    for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("PIP_")) {
        // SAFETY: as above, no other thread reads the environment.
        unsafe { std::env::remove_var(key) };
    }
    for key in ["PIP_NO_CACHE_DIR", "PIP_DISABLE_PIP_VERSION_CHECK"] {
        // SAFETY: as above.
        unsafe { std::env::set_var(key, "1") };
    }
    let _lock = scratch_lock();
    let known = known_divergences();
    let mut files: Vec<PathBuf> = fs::read_dir(cases_dir())
        .expect("cases dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    // TACK_MODULE_CASES=MODULE runs one module's cases only (the slow pip ones, say).
    if let Ok(only) = std::env::var("TACK_MODULE_CASES") {
        files.retain(|f| f.file_stem().is_some_and(|s| s.to_string_lossy() == only));
    }
    let this_host = host_names();
    // apt's and pip's cases wait on dpkg and the network, not on the CPU: each runs on a
    // thread of its own beside the rest. They share no scratch path, and no other case
    // touches the packages apt's cases install or pip's virtualenvs.
    let (slow, rest): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|f| f.file_stem().is_some_and(|s| s == "apt" || s == "pip"));
    let groups: Vec<Vec<PathBuf>> =
        slow.into_iter().map(|f| vec![f]).chain(std::iter::once(rest)).collect();
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let running: Vec<_> = groups
            .iter()
            .map(|group| {
                let (known, this_host) = (&known, &this_host);
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    for file in group {
                        run_file(file, known, this_host, &mut tally);
                    }
                    tally
                })
            })
            .collect();
        running.into_iter().map(|t| t.join().expect("a module cases thread")).collect()
    });
    let (mut total, mut same, mut skipped, mut failures) = (0, 0, 0, Vec::new());
    for tally in tallies {
        total += tally.total;
        same += tally.same;
        skipped += tally.skipped;
        failures.extend(tally.failures);
    }
    let _ = fs::remove_dir(SCRATCH);
    eprintln!(
        "module cases: {total} recorded, {same} identical, {} known divergences, {skipped} skipped (not root, or a program they need is missing)",
        known.len()
    );
    assert!(
        failures.is_empty(),
        "{} module cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
