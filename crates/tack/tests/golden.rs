//! Runs every case under `tests/golden/` through tack and compares stdout, stderr and exit code
//! with what ansible-core 2.21.5 printed (recorded by `scripts/record-goldens.py`; the case format
//! is in `tests/golden/README.md`). Each case is one named test, so `cargo test --test golden
//! inventory/` runs a suite.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use libtest_mimic::{Arguments, Failed, Trial};

mod golden_plan;

/// Where cases run; `TACK_GOLDEN_ROOT` moves it so that two checkouts testing at once never
/// share a directory (paths below it are compared as `<CASE>`).
fn run_root() -> std::path::PathBuf {
    std::env::var_os("TACK_GOLDEN_ROOT").map_or_else(|| "/tmp/tack-golden".into(), Into::into)
}
const COMMANDS: &[&str] = &["ansible-playbook", "ansible-inventory", "ansible-vault", "ansible"];

fn golden_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn find_cases(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.join("cmd").is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    for d in dirs {
        if d.file_name().is_some_and(|n| n != "expected") {
            find_cases(&d, out);
        }
    }
}

/// A directory whose `ansible-*` entries are symlinks to the tack binary under test.
fn alias_bin_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden-bin");
    fs::create_dir_all(&dir).unwrap();
    for name in COMMANDS.iter().chain(&["tack"]) {
        let link = dir.join(name);
        let _ = fs::remove_file(&link);
        symlink(env!("CARGO_BIN_EXE_tack"), &link).unwrap();
    }
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "expected" {
            continue;
        }
        let src = entry.path();
        let dst = to.join(&name);
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if kind.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Replaces what differs between any two runs in a result: a command's `start`/`end` times
/// and its `delta`, the name of a staging directory, and an ssh case's port (see
/// tests/golden/README.md).
fn normalise_times(text: &str) -> String {
    static TIMES: std::sync::OnceLock<[(regex::Regex, &str); 11]> = std::sync::OnceLock::new();
    let rules = TIMES.get_or_init(|| {
        [
            (
                regex::Regex::new(r#""(start|end)": "\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}""#)
                    .expect("valid pattern"),
                r#""$1": "<TIME>""#,
            ),
            (
                regex::Regex::new(r#""delta": "\d+:\d\d:\d\d\.\d{6}""#).expect("valid pattern"),
                r#""delta": "<DELTA>""#,
            ),
            // The same in a YAML result (`callback_result_format = yaml`).
            (
                regex::Regex::new(r"\b(start|end): '\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}'")
                    .expect("valid pattern"),
                "$1: '<TIME>'",
            ),
            (
                regex::Regex::new(r"\bdelta: '\d+:\d\d:\d\d\.\d{6}'").expect("valid pattern"),
                "delta: '<DELTA>'",
            ),
            (
                regex::Regex::new(r"ansible-tmp-\d+\.\d+-\d+-\d+").expect("valid pattern"),
                "ansible-tmp-<TMP>",
            ),
            (
                regex::Regex::new(r"ansible-local-\d+[a-z0-9_]{8}/tmp[a-z0-9_]{8}")
                    .expect("valid pattern"),
                "ansible-local-<TMP>/tmp<TMP>",
            ),
            // An async job's id (random digits and the wrapper's pid) and the pid of the
            // module process its timeout killed.
            (regex::Regex::new(r"\bj\d{1,12}\.\d+\b").expect("valid pattern"), "<JID>"),
            (
                regex::Regex::new(r#""child_pid": \d+"#).expect("valid pattern"),
                r#""child_pid": <PID>"#,
            ),
            // apt's summary counts the machine's pending upgrades, which change with its
            // package lists, not with what the task did.
            (
                regex::Regex::new(r"\band \d+ not upgraded\.").expect("valid pattern"),
                "and <N> not upgraded.",
            ),
            // A case's sshd listens on a free port chosen at each start, and the ControlPath
            // ansible (and tack) name is a hash of it: both show in the ssh command lines
            // `-vvv` prints for a connection reset.
            (regex::Regex::new(r"b'Port=\d+'").expect("valid pattern"), "b'Port=<PORT>'"),
            (
                regex::Regex::new(r"/\.ansible/cp/[0-9a-f]{10}\b").expect("valid pattern"),
                "/.ansible/cp/<HASH>",
            ),
        ]
    });
    let mut out = text.to_string();
    for (pattern, with) in rules {
        out = pattern.replace_all(&out, *with).into_owned();
    }
    out
}

/// Replaces the values of `-vv`'s version block that name the program's own install (its
/// version, package location, executable, interpreter, Jinja2 and PyYAML): ansible-core prints
/// its own and tack its own (see tests/golden/README.md). A line may be wrapped in colour codes.
fn normalise_install(text: &str) -> String {
    static RULES: std::sync::OnceLock<[(regex::Regex, &str); 3]> = std::sync::OnceLock::new();
    let rules = RULES.get_or_init(|| {
        [
            (
                regex::Regex::new(
                    r"(?m)^((?:\x1b\[[0-9;]*m)?)(ansible-playbook|ansible) \[(?:core|tack) [^\]\n]*\]((?:\x1b\[0m)?\r?)$",
                )
                .expect("valid pattern"),
                "$1$2 [<VERSION>]$3",
            ),
            (
                regex::Regex::new(
                    r"(?m)^((?:\x1b\[[0-9;]*m)?)  (ansible python module location|executable location|python version|jinja version|pyyaml version) = [^\n]*?((?:\x1b\[0m)?\r?)$",
                )
                .expect("valid pattern"),
                "$1  $2 = <INSTALL>$3",
            ),
            // `-vvvv`: the file the default callback was loaded from (ansible's Python file,
            // tack's own binary).
            (
                regex::Regex::new(
                    r"(?m)^((?:\x1b\[[0-9;]*m)?)(Loading callback plugin \S+ of type \S+, v[0-9.]+ from )[^\n]*?((?:\x1b\[0m)?\r?)$",
                )
                .expect("valid pattern"),
                "$1$2<INSTALL>$3",
            ),
        ]
    });
    let mut out = text.to_string();
    for (pattern, with) in rules {
        out = pattern.replace_all(&out, *with).into_owned();
    }
    out
}

/// In a case with a `traceback` file: what follows ansible's `Unexpected Exception, this is
/// probably a bug` error line and its blank line is written `<TRACEBACK>`: Python's traceback
/// on ansible's side, on tack's what went round (an import or include that never ends).
fn cut_traceback(text: &str) -> String {
    const LINE: &str = "[ERROR]: Unexpected Exception, this is probably a bug: ";
    let Some(at) = text.find(LINE) else { return text.to_string() };
    let end = text[at..].find("\n\n").map_or(text.len(), |n| at + n);
    format!("{}\n\n<TRACEBACK>\n", &text[..end])
}

/// In a case with a `transport` file: drops the `-vvv` lines that describe how each program
/// reaches a host, which differ by design (see tests/golden/README.md): ansible's `EXEC`,
/// `PUT` and `FETCH` lines, `Using module file ...` and (at `-vvvvv`) `Including
/// module_utils file ...` (its Python transport: temporary directories, AnsiballZ builds and
/// uploads), over ssh also its `SSH: EXEC` lines, the `(rc, b'...',
/// b'...')` each command returned, the `ESTABLISH SSH CONNECTION` it prints before each
/// command (tack prints one per task), and what it says of a command that failed (`Failed to
/// connect to the host via ssh: <stderr>`, its own `setfacl` among them) or escalated
/// (`Escalation succeeded`, per command; tack escalates once per link); tack's `NATIVE
/// MODULE`, `PYTHON MODULE`, `EXEC` and `BECOME` lines. `ESTABLISH LOCAL CONNECTION` and everything else stay compared.
/// The command an `ssh_retry` line (`-vv`) names is written `<COMMAND>`: ansible's is the
/// command it was running, tack's the ssh of its link.
fn drop_transport(text: &str) -> String {
    static LINE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let line = LINE.get_or_init(|| {
        regex::Regex::new(
            r#"^(?:\x1b\[[0-9;]*m)?(?:<[^>\n]+> (?:(?:EXEC|PUT|FETCH|NATIVE MODULE|PYTHON MODULE|BECOME|SSH: EXEC|ESTABLISH SSH CONNECTION|Failed to connect to the host via ssh:) |\(-?\d+, b['"]|Escalation succeeded\r?\n)|Using module file |Including (?:module_utils|embed|parent init) file )"#,
        )
        .expect("valid pattern")
    });
    static RETRY: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let retry = RETRY.get_or_init(|| {
        regex::Regex::new(r"(?m)^(<[^>\n]+> ssh_retry: attempt: \d+, ssh return code is 255\. cmd \().*(\.\.\.\), pausing for \d+ seconds)$")
            .expect("valid pattern")
    });
    let kept: String = text.split_inclusive('\n').filter(|l| !line.is_match(l)).collect();
    retry.replace_all(&kept, "$1<COMMAND>$2").into_owned()
}

/// Sorts what ansible prints in Python-set order (see tests/golden/README.md): the host lines
/// after `hosts (N):`, the tags inside a play line's `TAGS: [...]`, the tags of `-vvvv`'s
/// `tags: (...)` and `skip_tags: (...)` lines (ansible keeps the command line's tags in a
/// set), and a flat list the `bool` filter's deprecation shows (a set made a list).
fn normalise_unordered(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.trim_start().strip_prefix("play #")
            && let Some(pos) = rest.find("\tTAGS: [")
        {
            let head = &line[..line.len() - rest.len() + pos];
            let inner = rest[pos + "\tTAGS: [".len()..].trim_end_matches(']');
            let mut tags: Vec<&str> = inner.split(',').filter(|t| !t.is_empty()).collect();
            tags.sort();
            out.push(format!("{head}\tTAGS: [{}]", tags.join(",")));
            i += 1;
            continue;
        }
        if let Some((head, inner)) = ["tags: (", "skip_tags: ("]
            .iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (*p, rest)))
            .and_then(|(p, rest)| rest.strip_suffix(')').map(|inner| (p, inner)))
            && inner.contains("', '")
        {
            let mut tags: Vec<&str> = inner.split(", ").collect();
            tags.sort();
            out.push(format!("{head}{})", tags.join(", ")));
            i += 1;
            continue;
        }
        // A set's elements as a list (`intersect` of two lists of strings) in the `bool`
        // filter's deprecation.
        const COERCED: &str = "filter coerced invalid value [";
        if let Some(start) = line.find(COERCED).map(|p| p + COERCED.len())
            && let Some(len) = line[start..].find("] (list)")
            && !line[start..start + len].contains(['[', '{'])
        {
            let mut items: Vec<&str> = line[start..start + len].split(", ").collect();
            items.sort();
            out.push(format!("{}{}{}", &line[..start], items.join(", "), &line[start + len..]));
            i += 1;
            continue;
        }
        out.push(line.to_string());
        if let Some(count) =
            line.trim_start().strip_prefix("hosts (").and_then(|r| r.strip_suffix("):"))
            && let Ok(n) = count.parse::<usize>()
        {
            let end = (i + 1 + n).min(lines.len());
            let mut hosts: Vec<&str> = lines[i + 1..end].to_vec();
            hosts.sort();
            out.extend(hosts.into_iter().map(str::to_string));
            i = end;
            continue;
        }
        i += 1;
    }
    out.join("\n")
}

/// Held for writing by a case that changes what the whole machine shares (an `exclusive`
/// case), and for reading by a plan trial, which checks that it changed none of it.
static MACHINE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// The plan trial of a case: see `golden_plan`.
fn plan_trial(case: &Path, rel: &str, bin: &Path) -> Result<(), Failed> {
    let _machine = MACHINE.read().unwrap_or_else(std::sync::PoisonError::into_inner);
    let work = run_root().join("plan").join(rel);
    let _sshd = stage(case, &work)?;
    golden_plan::plan_case(case, rel, &work, bin)
}

/// A fresh copy of `case` (without `expected/`) at `work`, with its empty home, and the case's
/// own sshd when it has an `sshd` file (stopped when dropped).
fn stage(case: &Path, work: &Path) -> Result<Option<Sshd>, Failed> {
    let _ = fs::remove_dir_all(work);
    copy_tree(case, work);
    fs::create_dir_all(work.join(".home")).unwrap();
    if !case.join("sshd").is_file() {
        return Ok(None);
    }
    let password = fs::read_to_string(case.join("sshd")).is_ok_and(|t| t.trim() == "password");
    Sshd::start(work, password).map(Some)
}

fn run_case(case: &Path, rel: &str, bin: &Path) -> Result<(), Failed> {
    let expected = case.join("expected");
    let cmdtext = fs::read_to_string(case.join("cmd")).unwrap();
    let lines: Vec<&str> =
        cmdtext.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect();
    // Cases that change what the whole machine shares (its installed packages) never run at
    // the same time as one another: one installing `sl` while another proves it absent is a
    // race, and two apt runs at once fight over dpkg's lock.
    let _machine = case
        .join("exclusive")
        .is_file()
        .then(|| MACHINE.write().unwrap_or_else(std::sync::PoisonError::into_inner));
    let work = run_root().join(rel);
    let sshd = stage(case, &work)?;
    let work_str = work.display().to_string();
    let stdin = fs::read(case.join("stdin")).unwrap_or_default();
    let transport = case.join("transport").is_file();
    let traceback = case.join("traceback").is_file();

    let mut problems = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let dir =
            if lines.len() == 1 { expected.clone() } else { expected.join((n + 1).to_string()) };
        if !dir.join("rc").exists() {
            return Err(format!("{rel}: not recorded; run scripts/record-goldens.py").into());
        }
        // The recorder splits with Python's `shlex.split`; so does the replay.
        let argv = tack_py::shlex::split(line).map_err(|e| format!("{rel}/cmd: {e}"))?;
        let tty = fs::read_to_string(case.join("tty")).ok();
        let cmd = case_command(case, rel, &work, bin, &argv, tty.as_deref())?;
        // A case's `stdin` file is piped in, as scripts/record-goldens.py pipes it; without one,
        // stdin is empty. Written from a thread so a command that prints before reading cannot
        // deadlock.
        let out = run_answering(cmd, &stdin, &answers(&work)).map_err(|e| format!("{rel}: {e}"))?;
        // A login password reaches no output (ansible's neither: its transcript was recorded
        // with the same password in the inventory).
        if let Some(password) = sshd.as_ref().and_then(|s| s.password.as_deref()) {
            for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
                if String::from_utf8_lossy(bytes).contains(password) {
                    problems.push(format!("{rel}: the ssh password is in {name}"));
                }
            }
        }

        // Compared as bytes: a decrypted binary payload is not UTF-8, and a lossy comparison
        // would call two different invalid bytes equal. Lines ansible prints in set order are
        // compared sorted, on text only.
        let normalise = |bytes: &[u8]| -> Vec<u8> {
            let replaced = replace_bytes(bytes, work_str.as_bytes(), b"<CASE>");
            match String::from_utf8(replaced) {
                Ok(text) => {
                    let text = if transport { drop_transport(&text) } else { text };
                    let text = if traceback { cut_traceback(&text) } else { text };
                    normalise_install(&normalise_times(&normalise_unordered(&text))).into_bytes()
                }
                Err(e) => e.into_bytes(),
            }
        };
        let label = if lines.len() == 1 { String::new() } else { format!("[{}] ", n + 1) };
        // Where ansible prints its traceback, tack says what went round.
        let stderr = String::from_utf8_lossy(&out.stderr);
        if traceback
            && stderr.contains("Unexpected Exception")
            && !stderr.contains("tack stopped at this")
        {
            problems.push(format!("{label}{line}\nno account of what went round in:\n{stderr}"));
        }
        for (name, actual) in
            [("stdout", normalise(&out.stdout)), ("stderr", normalise(&out.stderr))]
        {
            let want = normalise(&fs::read(dir.join(name)).unwrap_or_default());
            if want != actual {
                let (want, actual) =
                    (String::from_utf8_lossy(&want), String::from_utf8_lossy(&actual));
                let diff = similar::TextDiff::from_lines(want.as_ref(), actual.as_ref());
                problems.push(format!(
                    "{label}{line}\n{name} differs (- ansible-core, + tack):\n{}",
                    diff.unified_diff().context_radius(3)
                ));
            }
        }
        let want_rc: i32 = fs::read_to_string(dir.join("rc")).unwrap().trim().parse().unwrap();
        let rc = out.status.code().unwrap_or(-1);
        if want_rc != rc {
            problems.push(format!("{label}{line}\nexit code: ansible-core {want_rc}, tack {rc}"));
        }
    }
    if let Ok(listed) = fs::read_to_string(case.join("check-files")) {
        let want = fs::read_to_string(expected.join("files")).unwrap_or_default();
        let got: String = listed
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|rel| file_state(&work, rel) + "\n")
            .collect();
        if want != got {
            let diff = similar::TextDiff::from_lines(want.as_str(), got.as_str());
            problems.push(format!(
                "files left behind differ (- ansible-core, + tack):\n{}",
                diff.unified_diff().context_radius(3)
            ));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

/// The command for one `cmd` line of a case staged in `work`, in the environment both
/// programs run with (see tests/golden/README.md); `tty` is the case's `tty` file.
fn case_command(
    case: &Path,
    rel: &str,
    work: &Path,
    bin: &Path,
    argv: &[String],
    tty: Option<&str>,
) -> Result<Command, Failed> {
    let work_str = work.display().to_string();
    let mut cmd = match tty {
        // On a pseudo-terminal through util-linux `script`, as the recorder runs it.
        Some(tty) => {
            let joined: Vec<String> = argv.iter().map(|a| tack_py::shlex::quote(a)).collect();
            // The program replaces the shell, as the recorder runs it: a Ctrl+C typed at the
            // terminal reaches only the program, and its own exit code is compared.
            let mut line = format!("exec {}", joined.join(" "));
            // A second word in `tty` is the terminal's width.
            if let Some(cols) = tty.split_whitespace().nth(1) {
                let cols: u32 = cols.parse().map_err(|e| format!("{rel}/tty: {e}"))?;
                line = format!("stty cols {cols} rows 40 && {line}");
            }
            let mut c = Command::new("script");
            c.args(["-qec", &line, "/dev/null"]);
            c
        }
        None => {
            // The ansible command names are tack's aliases; any other program is the system's.
            let own = bin.join(&argv[0]);
            let mut c = Command::new(if own.exists() { own } else { PathBuf::from(&argv[0]) });
            c.args(&argv[1..]);
            c
        }
    };
    cmd.current_dir(work)
        .env_clear()
        .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()))
        .env("HOME", work.join(".home"))
        .env("LANG", "C.UTF-8")
        .env("ANSIBLE_NOCOLOR", "1")
        .envs(tty.and_then(|t| t.split_whitespace().next()).map(|term| ("TERM", term)))
        // On a terminal tack draws a status line ansible has not (its own test is
        // tests/progress.rs): the recorded transcript is compared without it.
        .envs(tty.map(|_| ("TACK_PROGRESS", "0")))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Ok(text) = fs::read_to_string(case.join("env")) {
        for l in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
            let (name, value) = l.split_once('=').unwrap_or((l, ""));
            cmd.env(name, value.replace("<CASE>", &work_str));
        }
    }
    Ok(cmd)
}

/// A case's `answers`, as `scripts/record-goldens.py` reads them: `PROMPT<TAB>ANSWER` types
/// the answer and a newline; `PROMPT<TAB><TAB>KEYS` types only the keys, where `\xHH` is one
/// byte (`\x03` is Ctrl+C at a terminal in raw mode).
fn answers(case: &Path) -> Vec<(String, Vec<u8>)> {
    let text = fs::read_to_string(case.join("answers")).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(p, a)| {
            let typed = match a.strip_prefix('\t') {
                Some(keys) => unescape(keys),
                None => format!("{a}\n").into_bytes(),
            };
            (p.to_string(), typed)
        })
        .collect()
}

/// `\xHH` escapes decoded; every other character as its UTF-8 bytes.
fn unescape(keys: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let mut rest = keys;
    while let Some(at) = rest.find("\\x") {
        out.extend_from_slice(&rest.as_bytes()[..at]);
        let hex = rest.get(at + 2..at + 4).unwrap_or_default();
        out.push(u8::from_str_radix(hex, 16).expect("a \\xHH escape in answers"));
        rest = &rest[at + 4..];
    }
    out.extend_from_slice(rest.as_bytes());
    out
}

/// Runs `cmd` with `stdin` piped in, then types each answer once its prompt
/// has been printed since the last one, as the recorder does: typed ahead, a terminal would
/// echo it and a password prompt would drop it. Output is read on threads of its own, so a
/// command that prints before reading cannot deadlock.
fn run_answering(
    mut cmd: Command,
    stdin: &[u8],
    prompts: &[(String, Vec<u8>)],
) -> Result<std::process::Output, String> {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    let mut child = cmd.spawn().map_err(|e| format!("cannot run tack: {e}"))?;
    let mut pipe = child.stdin.take().ok_or("stdin is piped")?;
    let drain = |stream: Option<Box<dyn Read + Send>>| {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&seen);
        let reader = std::thread::spawn(move || {
            let Some(mut stream) = stream else { return };
            let mut buf = [0u8; 65536];
            while let Ok(n @ 1..) = stream.read(&mut buf) {
                into.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        (seen, reader)
    };
    let (stdout, out_reader) =
        drain(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let (stderr, err_reader) =
        drain(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
    let input = stdin.to_vec();
    let prompts = prompts.to_vec();
    let ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let typist = {
        let stdout = Arc::clone(&stdout);
        let ended = Arc::clone(&ended);
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
            let mut from = 0;
            for (prompt, answer) in prompts {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                loop {
                    let text = stdout.lock().unwrap();
                    let found = text.get(from..).and_then(|rest| {
                        rest.windows(prompt.len()).position(|w| w == prompt.as_bytes())
                    });
                    if let Some(at) = found {
                        from += at + prompt.len();
                        break;
                    }
                    drop(text);
                    // A command that ended, or never asks, gets no answer.
                    if ended.load(std::sync::atomic::Ordering::Relaxed)
                        || std::time::Instant::now() > deadline
                    {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                let _ = pipe.write_all(&answer);
                let _ = pipe.flush();
            }
        })
    };
    let status = child.wait().map_err(|e| e.to_string())?;
    ended.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = typist.join();
    let _ = out_reader.join();
    let _ = err_reader.join();
    let take = |m: Arc<Mutex<Vec<u8>>>| std::mem::take(&mut *m.lock().unwrap());
    Ok(std::process::Output { status, stdout: take(stdout), stderr: take(stderr) })
}

/// A case's own loopback sshd (`scripts/sshd-loopback.sh`, in `<CASE>/.sshd`), stopped when
/// dropped. Starting it replaces `@SSHD_PORT@`, `@SSHD_KEY@`, `@SSHD_USER@` and
/// `@SSHD_KNOWN_HOSTS@` in the staged files, as `scripts/record-goldens.py` does; a case
/// whose `sshd` file says `password` gets a server that also takes password logins, and
/// `@SSHD_PASSWORD@` and `@SSHD_PASSWORD_USER@` replaced too.
struct Sshd {
    dir: PathBuf,
    /// The password of its password logins, when it takes them.
    password: Option<String>,
}

impl Sshd {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/sshd-loopback.sh")
    }

    fn start(work: &Path, password: bool) -> Result<Sshd, Failed> {
        let dir = work.join(".sshd");
        let out = Command::new("sh")
            .arg(Self::script())
            .arg("start")
            .arg(&dir)
            .args(password.then_some("password"))
            .output()
            .map_err(|e| format!("cannot start sshd: {e}"))?;
        if !out.status.success() {
            return Err(
                format!("sshd did not start: {}", String::from_utf8_lossy(&out.stderr)).into()
            );
        }
        // Made first, so that the server is stopped whatever happens next.
        let mut sshd = Sshd { dir: dir.clone(), password: None };
        let port = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let user = fs::read_to_string(dir.join("user")).unwrap_or_default().trim().to_string();
        let read =
            |name: &str| fs::read_to_string(dir.join(name)).unwrap_or_default().trim().to_string();
        let values = [
            ("@SSHD_PORT@", port),
            ("@SSHD_KEY@", dir.join("client_key").display().to_string()),
            ("@SSHD_USER@", user),
            ("@SSHD_KNOWN_HOSTS@", dir.join("known_hosts").display().to_string()),
            ("@SSHD_PASSWORD_USER@", read("password_user")),
            ("@SSHD_PASSWORD@", read("password")),
        ];
        substitute(work, &dir, &values);
        sshd.password = password.then(|| read("password"));
        Ok(sshd)
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = Command::new("sh").arg(Self::script()).arg("stop").arg(&self.dir).status();
    }
}

fn substitute(dir: &Path, skip: &Path, values: &[(&str, String)]) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if path == skip || kind.is_symlink() {
            continue;
        }
        if kind.is_dir() {
            substitute(&path, skip, values);
        } else if let Ok(text) = fs::read_to_string(&path) {
            let mut replaced = text.clone();
            for (key, value) in values {
                replaced = replaced.replace(key, value);
            }
            if replaced != text {
                fs::write(&path, replaced).unwrap();
            }
        }
    }
}

/// One line of `expected/files`, as `scripts/record-goldens.py` writes it: the path, its
/// kind, its permission bits and, for a regular file, the SHA-1 of its bytes.
fn file_state(work: &Path, rel: &str) -> String {
    use sha1::Digest;
    use std::os::unix::fs::PermissionsExt;
    let path = work.join(rel);
    let Ok(meta) = fs::symlink_metadata(&path) else { return format!("{rel} absent") };
    let mode = format!("{:04o}", meta.permissions().mode() & 0o7777);
    if meta.file_type().is_symlink() {
        let target = fs::read_link(&path).map(|t| t.display().to_string()).unwrap_or_default();
        return format!("{rel} link {mode} {target}");
    }
    if meta.is_dir() {
        return format!("{rel} directory {mode}");
    }
    let digest = sha1::Sha1::digest(fs::read(&path).unwrap_or_default());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{rel} file {mode} {hex}")
}

fn replace_bytes(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if !from.is_empty() && haystack[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

fn main() {
    let args = Arguments::from_args();
    let root = golden_root();
    let mut cases = Vec::new();
    find_cases(&root, &mut cases);
    let bin = alias_bin_dir();
    let mut trials = Vec::new();
    for case in cases {
        let rel = case.strip_prefix(&root).unwrap().display().to_string();
        if golden_plan::plannable(&case) {
            let (case, rel, bin) = (case.clone(), rel.clone(), bin.clone());
            trials.push(Trial::test(format!("plan/{rel}"), move || plan_trial(&case, &rel, &bin)));
        }
        let bin = bin.clone();
        trials.push(Trial::test(rel.clone(), move || run_case(&case, &rel, &bin)));
    }
    libtest_mimic::run(&args, trials).exit();
}
