//! `tack-agent`: the agent a controller runs on a managed host, speaking the tack protocol
//! over its standard input and output (its standard error is free for diagnostics).
//!
//! Before anything runs, the protocol streams are moved off descriptors 0 and 1: descriptor 1
//! becomes a copy of standard error and descriptor 0 reads `/dev/null`, so nothing a module or
//! a child process prints or reads can touch a frame.
//!
//! Files the controller stages go to `stage-<host>-<pid>/` in the directory the agent's
//! executable is in (the host's `~/.cache/tack`), removed when the link ends.
//!
//! Re-invoked with a hidden first argument it is one half of an `async` job
//! (`tack_agent::jobs`), which the link starts detached.
//!
//! `tack-agent --listen SECS` serves the same link, and first makes sure this host's listener
//! (`tack_agent::listen`) runs, so that the controller's next link can skip the shell;
//! `--listener SECS` is that listener, and `--listened` the agent it starts for each link.
//!
//! `tack-agent --batch` serves a link whose whole input was written before it started (a
//! connection plugin's command with its standard input given at once): the input's end is
//! not the controller gone, so nothing it started is stopped for it.
//!
//! `tack-agent --verify HASH [FILE]` instead checks that FILE (by default the agent's own
//! executable) has the BLAKE3 hash HASH (hex) and exits 0 when it does, 1 when it does not:
//! how a controller checks an upload, and a cached agent, with the agent itself.

// A binary: its answers go to standard output.
#![allow(clippy::print_stdout)]

use std::fs::File;
use std::io::BufReader;
use std::os::fd::FromRawFd;
use std::process::ExitCode;

use tack_agent::listen;
use tack_agent::serve::serve_link;
use tack_agent::stage::Stage;
use tack_protocol::{FrameReader, FrameWriter};

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let words: Vec<Option<&str>> = args.iter().map(|a| a.to_str()).collect();
    let secs = |word: &Option<&str>| word.and_then(|s| s.parse::<u64>().ok());
    // How the link's hello names the host's listener: one to start, or the one this agent
    // was started by; every other argument list is a command of its own.
    let mut batch = false;
    let listen = match words.as_slice() {
        [] => None,
        [Some("--batch")] => {
            batch = true;
            None
        }
        [Some(listen::LISTEN_ARG), idle] if secs(idle).is_some() => secs(idle).map(Listen::Start),
        [Some(listen::LISTENED_ARG)] => Some(Listen::StartedBy),
        [Some(listen::LISTENER_ARG), idle] if secs(idle).is_some() => {
            let idle = std::time::Duration::from_secs(secs(idle).unwrap_or_default());
            return exit_code(listen::run(idle));
        }
        // The detached halves of an `async` job (`tack_agent::jobs`).
        [Some(tack_agent::jobs::JOB_ARG)] => return exit_code(tack_agent::jobs::job_main()),
        [Some(tack_agent::jobs::MODULE_ARG)] => {
            return exit_code(tack_agent::jobs::module_main());
        }
        [Some("--verify"), _] => return verify(&args[1], None),
        [Some("--verify"), _, _] => return verify(&args[1], Some(&args[2])),
        _ => {
            eprintln!("usage: tack-agent [--listen SECS | --batch | --verify HASH [FILE]]");
            return ExitCode::from(64);
        }
    };
    let (input, output) = match take_stdio() {
        Ok(streams) => streams,
        Err(e) => {
            eprintln!("tack-agent: could not set up its streams: {e}");
            return ExitCode::from(3);
        }
    };
    if !batch {
        watch_link(std::os::fd::AsRawFd::as_raw_fd(&input));
    }
    let mut reader = FrameReader::new(BufReader::with_capacity(1 << 16, input));
    let mut writer = FrameWriter::new(output);
    // The cache the agent was installed in is where its staging directory goes.
    let mut stage = Stage::beside_executable();
    // After the streams are moved: the listener starts with its own, from /dev/null.
    let listen = match listen {
        Some(Listen::Start(idle)) => listen::start(idle),
        Some(Listen::StartedBy) => listen::this_socket(),
        None => None,
    };
    match serve_link(&mut reader, &mut writer, &mut stage, listen) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tack-agent: {e}");
            ExitCode::from(2)
        }
    }
}

enum Listen {
    /// `--listen SECS`: make sure the host's listener runs, idle for at most SECS.
    Start(u64),
    /// `--listened`: this agent serves a link the listener took.
    StartedBy,
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// `--verify`: FILE's BLAKE3 hash against `want`; the hash found goes to stdout.
fn verify(want: &std::ffi::OsStr, file: Option<&std::ffi::OsString>) -> ExitCode {
    let path = match file {
        Some(f) => std::path::PathBuf::from(f),
        None => match std::env::current_exe() {
            Ok(p) => p,
            Err(e) => {
                eprintln!("tack-agent: cannot find its own executable: {e}");
                return ExitCode::from(3);
            }
        },
    };
    let mut hasher = blake3::Hasher::new();
    if let Err(e) = File::open(&path).and_then(|mut f| std::io::copy(&mut f, &mut hasher)) {
        eprintln!("tack-agent: cannot read {}: {e}", path.display());
        return ExitCode::from(3);
    }
    let got = hasher.finalize().to_hex();
    println!("{got}");
    if want.to_str() == Some(got.as_str()) { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The protocol's input and output, on private close-on-exec descriptors.
/// When the link's input is closed (the controller ended, was interrupted, or its ssh
/// session dropped), what this agent started stops at once, rather than run on as orphans
/// until a module returns and its answer finds no one (`tack_agent::descendants`; `async`
/// jobs run in sessions of their own and go on). The serving thread then sees the link gone.
fn watch_link(fd: std::os::fd::RawFd) {
    let spawned = std::thread::Builder::new().name("tack-link-watch".into()).spawn(move || {
        let mut poll = libc::pollfd { fd, events: libc::POLLRDHUP, revents: 0 };
        loop {
            // SAFETY: poll reads and writes only the one live pollfd given.
            let rc = unsafe { libc::poll(&mut poll, 1, -1) };
            if rc < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            let gone = libc::POLLHUP | libc::POLLERR | libc::POLLRDHUP | libc::POLLNVAL;
            if rc < 0 || poll.revents & gone != 0 {
                tack_agent::descendants::stop(std::time::Duration::from_secs(2));
                return;
            }
        }
    });
    // Without the watcher a dropped link still ends, only later; nothing else depends on it.
    drop(spawned);
}

fn take_stdio() -> std::io::Result<(File, File)> {
    let check = |rc: libc::c_int| {
        if rc < 0 { Err(std::io::Error::last_os_error()) } else { Ok(rc) }
    };
    // SAFETY: plain descriptor calls on this process's own standard descriptors, made before
    // any other thread exists; each result is checked before use.
    unsafe {
        let output = check(libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3))?;
        let input = check(libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3))?;
        check(libc::dup2(2, 1))?;
        let null = check(libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC))?;
        check(libc::dup2(null, 0))?;
        libc::close(null);
        // The two descriptors were just made and are owned by nothing else.
        Ok((File::from_raw_fd(input), File::from_raw_fd(output)))
    }
}
