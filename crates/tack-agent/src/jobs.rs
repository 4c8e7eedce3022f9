//! The host side of an `async` task, as ansible's `async_wrapper` runs it: a job process,
//! detached from the controller in its own session, that keeps the job file under the async
//! directory (`{"started": ..}` first, the module's result or a timeout last) and kills the
//! module's process group when the task's `async` seconds pass; and the module process it
//! supervises, which runs one native module and prints its result, or runs a module through
//! the Python path and prints what the module printed (read as ansible's wrapper reads it).
//!
//! Both are the running executable re-invoked with a hidden argument ([`JOB_ARG`],
//! [`MODULE_ARG`]), reading their orders as JSON on standard input: `tack` itself for a local
//! host, the `tack-agent` on a managed one. [`start`] spawns the job process from the link's
//! side and waits only until its module runs. Nothing here knows about tasks, results shown
//! to the user, or polling: that is the controller's `async_job`.

// The job and module processes are this executable run as a program of its own: what they
// print on standard output is their answer to the process that started them.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tack_protocol::JobSpec;

/// The hidden first argument that makes `tack` a job process.
pub const JOB_ARG: &str = "__tack-async-job";
/// The hidden first argument that makes `tack` the module process of a job.
pub const MODULE_ARG: &str = "__tack-async-module";

/// What a job process is told: its id and the job.
#[derive(serde::Serialize, serde::Deserialize)]
struct JobOrder {
    jid: String,
    #[serde(flatten)]
    job: JobSpec,
}

/// Spawns `exe` (this process's own executable) as the job process of `job`, in a session
/// of its own so it outlives the link and its terminal, and waits only until its module
/// runs. The result is the one ansible's wrapper prints then (`started`, `ansible_job_id`,
/// `results_file`) or its failure (`msg`).
pub fn start(exe: &Path, job: &JobSpec) -> Map<String, Value> {
    match spawn_job(exe, job) {
        Ok(result) => result,
        Err(msg) => {
            let mut failed = Map::new();
            failed.insert("failed".into(), Value::Bool(true));
            failed.insert("msg".into(), Value::from(msg));
            failed
        }
    }
}

fn spawn_job(exe: &Path, job: &JobSpec) -> Result<Map<String, Value>, String> {
    let mut command = Command::new(exe);
    command.arg(JOB_ARG).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches nothing of the parent's; a new session
    // keeps the job out of the link's terminal and process group, so it outlives both.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| format!("FATAL ERROR: {e}"))?;
    // ansible's job ids: `j` and up to twelve random digits, then the wrapper's pid.
    let jid = format!("j{}.{}", random_u64() % 1_000_000_000_000, child.id());
    let order = JobOrder { jid: jid.clone(), job: job.clone() };
    let text = serde_json::to_string(&order).map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(text.as_bytes()).map_err(|e| format!("FATAL ERROR: {e}"))?;
    }
    let mut line = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
    }
    // The job lives on; a thread reaps it when it ends so it leaves no zombie behind.
    std::thread::spawn(move || child.wait());
    let said = match serde_json::from_str::<Value>(line.trim()) {
        Ok(Value::Object(map)) => map,
        _ => return Err("async_wrapper exited prematurely".into()),
    };
    if said.get("started") != Some(&Value::Bool(true)) {
        return Ok(said);
    }
    let mut result = Map::new();
    result.insert("failed".into(), Value::Bool(false));
    result.insert("started".into(), Value::Bool(true));
    result.insert("finished".into(), Value::Bool(false));
    result.insert("ansible_job_id".into(), Value::from(jid));
    let results_file = said.get("results_file").cloned().unwrap_or(Value::Null);
    result.insert("results_file".into(), results_file);
    Ok(result)
}

/// Eight bytes from the kernel's random source (a job id only needs to be unlikely to
/// repeat; the clock and pid stand in if the source cannot be read).
fn random_u64() -> u64 {
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default();
        return now ^ u64::from(std::process::id());
    }
    u64::from_le_bytes(bytes)
}

/// `~` and `~/...` under `$HOME` (the password database's home when it is unset).
fn expand_home(dir: &str) -> PathBuf {
    let home = std::env::var("HOME")
        .ok()
        .or_else(|| {
            // SAFETY: getuid cannot fail and touches no memory.
            crate::modules::user_home(unsafe { libc::getuid() }).map(|h| h.display().to_string())
        })
        .unwrap_or_default();
    match dir.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => PathBuf::from(home + rest),
        _ => PathBuf::from(dir),
    }
}

/// Writes `value` to `path` whole: a reader sees the old file or the new one, never half.
fn write_job_file(path: &Path, value: &Value) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(value.to_string().as_bytes())?;
    drop(file);
    std::fs::rename(&tmp, path)
}

/// When ansible's wrapper kills a job: it looks every `step` seconds (five, or half the
/// limit when that is shorter) and kills at the first look past the limit.
fn kill_after(limit: u64) -> Duration {
    let limit = limit as f64;
    let step = if limit != 0.0 && 5.0 >= limit { limit / 2.0 } else { 5.0 };
    let looks = (limit / step).ceil().max(1.0);
    Duration::from_secs_f64(looks * step)
}

/// The job process: `Ok(code)` once the job ended; what went wrong before the job started
/// is printed for the controller as a failed result.
pub fn job_main() -> i32 {
    let (mut order, mut text) = match read_order() {
        Ok(read) => read,
        Err(e) => return say_failed(&format!("bad job order: {e}")),
    };
    // A Python module's payload is the link's staged file, removed once the job answers: the
    // job keeps a private copy for its module, removed when the job ends.
    let mut payload_dir = None;
    if let Some(python) = order.job.python.as_mut() {
        let copied = private_copy(&[(Path::new(&python.payload), "payload.zip", 0o600)]);
        let (dir, copies) = match copied {
            Ok(copied) => copied,
            Err(e) => return say_failed(&format!("could not copy the module's payload: {e}")),
        };
        python.payload = copies[0].display().to_string();
        payload_dir = Some(dir);
    }
    // A program module's file and arguments likewise (the program executable: a binary
    // module runs as it is).
    if let Some(program) = order.job.program.as_mut() {
        let files = [
            (Path::new(&program.program), "module", 0o700),
            (Path::new(&program.arguments), "args", 0o600),
        ];
        let (dir, copies) = match private_copy(&files) {
            Ok(copied) => copied,
            Err(e) => return say_failed(&format!("could not copy the module: {e}")),
        };
        program.program = copies[0].display().to_string();
        program.arguments = copies[1].display().to_string();
        payload_dir = Some(dir);
    }
    if payload_dir.is_some() {
        text = match serde_json::to_string(&order) {
            Ok(text) => text,
            Err(e) => return say_failed(&format!("bad job order: {e}")),
        };
    }
    let code = run_job(&order, &text);
    if let Some(dir) = payload_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    code
}

/// Copies of `files` (each with its name and mode) in a new private directory (0700): the
/// directory and the copies.
fn private_copy(files: &[(&Path, &str, u32)]) -> std::io::Result<(PathBuf, Vec<PathBuf>)> {
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let dir = base.join(format!("tack-job-{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {
                let mut copies = Vec::new();
                for (file, name, mode) in files {
                    let bytes = std::fs::read(file)?;
                    let copy = dir.join(name);
                    let mut out = std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .mode(*mode)
                        .open(&copy)?;
                    out.write_all(&bytes)?;
                    copies.push(copy);
                }
                return Ok((dir, copies));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("could not make a private directory for the module"))
}

fn run_job(order: &JobOrder, text: &str) -> i32 {
    let dir = expand_home(&order.job.dir);
    if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir) {
        return say_failed(&format!("could not create directory: {} - {e}", dir.display()));
    }
    let job_path = dir.join(&order.jid);
    let started = json!({"started": true, "finished": false, "ansible_job_id": order.jid});
    if let Err(e) = write_job_file(&job_path, &started) {
        return say_failed(&format!("could not write {}: {e}", job_path.display()));
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return say_failed(&format!("FATAL ERROR: {e}")),
    };
    let mut command = Command::new(&exe);
    command.arg(MODULE_ARG).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // Its own process group, so a timeout kills whatever the module started too.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => return say_failed(&format!("FATAL ERROR: {e}")),
    };
    if let Some(mut stdin) = child.stdin.take() {
        // A module that exits before reading its order fails on its own; nothing to add.
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    // What ansible's wrapper prints once its module runs (the controller adds the rest).
    println!("{}", json!({"started": true, "results_file": job_path.display().to_string()}));
    let _ = std::io::stdout().flush();
    detach_stdio();

    let deadline = Instant::now() + kill_after(order.job.limit);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() >= deadline => {
                let pid = child.id();
                // SAFETY: killpg only sends a signal to the group this process made above.
                unsafe { libc::killpg(pid as libc::pid_t, libc::SIGKILL) };
                let _ = child.wait();
                std::thread::sleep(Duration::from_secs(1));
                let res = json!({"msg": "Timeout exceeded", "failed": true, "child_pid": pid});
                let _ = write_job_file(&job_path, &res);
                return 0;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => break,
        }
    }
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    if order.job.python.is_some() || order.job.program.is_some() {
        let result = wrapped_result(&stdout, &stderr, &order.jid, &exe);
        let _ = write_job_file(&job_path, &result);
        return 0;
    }
    let result = match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(Value::Object(mut map)) => {
            if !stderr.is_empty() {
                map.insert("stderr".into(), Value::from(stderr));
            }
            Value::Object(map)
        }
        _ => json!({
            "failed": true,
            "cmd": format!("{} {MODULE_ARG}", exe.display()),
            "data": stdout,
            "stderr": stderr,
            "msg": "the module printed no result",
            "ansible_job_id": order.jid,
        }),
    };
    let _ = write_job_file(&job_path, &result);
    0
}

/// A Python module's result as ansible's `async_wrapper` reads it: its output from the
/// first line that starts with `{` to the last that ends with `}`, a warning for anything
/// printed after, and what it printed on stderr; a failure with what it did print when
/// that is no JSON object.
fn wrapped_result(stdout: &str, stderr: &str, jid: &str, exe: &Path) -> Value {
    let failed = |msg: String| {
        json!({
            "failed": true,
            "cmd": format!("{} {MODULE_ARG}", exe.display()),
            "data": stdout,
            "stderr": stderr,
            "msg": msg,
            "ansible_job_id": jid,
        })
    };
    let lines: Vec<&str> = stdout.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim().starts_with('{')) else {
        return failed("No start of json char found".into());
    };
    let lines = &lines[start..];
    let Some(from_end) = lines.iter().rev().position(|l| l.trim().ends_with('}')) else {
        return failed("No end of json char found".into());
    };
    let (json_lines, junk) = lines.split_at(lines.len() - from_end);
    let mut result = match serde_json::from_str::<Value>(&json_lines.join("\n")) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return failed("the module's result is not a JSON object".into()),
        Err(e) => return failed(e.to_string()),
    };
    if junk.iter().any(|l| !l.trim().is_empty()) {
        let warning =
            format!("Module invocation had junk after the JSON data: {}", junk.join("\n"));
        let mut warnings = match result.remove("warnings") {
            Some(Value::Array(list)) => list,
            Some(other) => vec![other],
            None => Vec::new(),
        };
        warnings.push(Value::from(warning));
        result.insert("warnings".into(), Value::Array(warnings));
    }
    if !stderr.is_empty() {
        result.insert("stderr".into(), Value::from(stderr));
    }
    Value::Object(result)
}

fn reader(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// The controller stops reading once the job started; nothing may reach its pipes after.
fn detach_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors, which this process owns.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
}

/// The order on standard input, and its text (which the job passes on to its module).
fn read_order() -> Result<(JobOrder, String), String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|e| e.to_string())?;
    let order = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    Ok((order, text))
}

fn say_failed(msg: &str) -> i32 {
    println!("{}", json!({"failed": true, "msg": msg}));
    1
}

/// The module process: runs the order's module and prints its result.
pub fn module_main() -> i32 {
    let order = match read_order() {
        Ok((order, _)) => order,
        Err(e) => return say_failed(&format!("bad module order: {e}")),
    };
    let job = order.job;
    if let Some(python) = job.python {
        return run_python_module(*python, job.environment, job.rlimit_nofile);
    }
    if let Some(program) = job.program {
        return run_program_module(&program, &job.environment, job.rlimit_nofile);
    }
    let invocation = crate::Invocation {
        args: job.args,
        check_mode: job.check_mode,
        diff: job.diff,
        environment: job.environment,
        timeout: None,
        rlimit_nofile: job.rlimit_nofile,
    };
    match crate::run_module(&job.module, &invocation) {
        Some(result) => {
            println!("{}", Value::Object(result));
            0
        }
        None => say_failed(&format!("tack has no native module '{}'", job.module)),
    }
}

/// A module through the Python path in the module process: what it printed, as it printed
/// it, and its exit code.
fn run_python_module(
    python: tack_protocol::PythonJob,
    environment: std::collections::BTreeMap<String, String>,
    rlimit_nofile: Option<u64>,
) -> i32 {
    let bytes = match std::fs::read(&python.payload) {
        Ok(bytes) => bytes,
        Err(e) => return say_failed(&format!("could not read the module's payload: {e}")),
    };
    let hash = crate::python::payload_name(&bytes);
    let mut host = crate::python::PythonHost::new();
    if let Err(e) = host.put_payload(&hash, &bytes) {
        return say_failed(&e.to_string());
    }
    let run = crate::python::PythonRun {
        hash,
        fqn: python.fqn,
        profile: python.profile,
        interpreter: python.interpreter,
        params: python.params,
        environment,
        rlimit_nofile,
    };
    match host.run(&run) {
        Ok(out) => {
            print!("{}", out.stdout);
            eprint!("{}", out.stderr);
            out.rc
        }
        Err(e) => say_failed(&e.to_string()),
    }
}

/// A program module in the module process, as the controller runs one outside a job: `sh -c
/// '<interpreter> <program> <arguments file>'` with the task's environment; what it printed,
/// as it printed it, and its exit code.
fn run_program_module(
    program: &tack_protocol::ProgramJob,
    environment: &std::collections::BTreeMap<String, String>,
    rlimit_nofile: Option<u64>,
) -> i32 {
    let mut words = Vec::new();
    words.extend(program.interpreter.clone());
    words.push(tack_py::shlex::quote(&program.program));
    words.push(tack_py::shlex::quote(&program.arguments));
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(words.join(" ")).envs(environment);
    let _task = crate::modules::environment::enter(environment, rlimit_nofile);
    crate::modules::environment::limit(&mut command);
    crate::session::detach(&mut command);
    match command.output() {
        Ok(out) => {
            let _ = std::io::stdout().write_all(&out.stdout);
            let _ = std::io::stderr().write_all(&out.stderr);
            out.status.code().unwrap_or(1)
        }
        Err(e) => say_failed(&format!("could not run the module: {e}")),
    }
}
