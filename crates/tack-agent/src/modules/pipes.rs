//! Reading a child's stdout and stderr until it is done, as ansible's `run_command` decides
//! "done": both pipes at end of file, or the child exited and a second passed with nothing
//! to read. The second rule is what lets `shell: 'daemon &'` return: a background process
//! keeps the pipes open long after the shell that started it has exited, and waiting for
//! end of file would wait for the background process.
//!
//! This module owns only the reading; spawning, time limits and the result are the caller's.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{Child, ExitStatus};

/// How long the pipes may stay silent after the child exited before reading stops
/// (`run_command`'s one-second `select`).
const QUIET_AFTER_EXIT_MS: libc::c_int = 1000;

/// The child's exit status and everything it wrote to its piped stdout and stderr.
pub(super) fn collect(child: &mut Child) -> std::io::Result<(ExitStatus, Vec<u8>, Vec<u8>)> {
    // Both pipe ends as plain files: one type to poll and read.
    let mut pipes: [Option<File>; 2] = [
        child.stdout.take().map(|p| File::from(OwnedFd::from(p))),
        child.stderr.take().map(|p| File::from(OwnedFd::from(p))),
    ];
    let mut bufs = [Vec::new(), Vec::new()];
    let mut chunk = vec![0u8; 64 * 1024];
    let status = loop {
        let open: Vec<usize> = (0..2).filter(|&i| pipes[i].is_some()).collect();
        if open.is_empty() {
            break child.wait()?;
        }
        let mut fds: Vec<libc::pollfd> = open
            .iter()
            .filter_map(|&i| pipes[i].as_ref())
            .map(|p| libc::pollfd { fd: p.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: `fds` is a live, correctly sized array of pollfd for the call.
        let ready =
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, QUIET_AFTER_EXIT_MS) };
        if ready < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if ready == 0 {
            match child.try_wait()? {
                Some(status) => break status,
                None => continue,
            }
        }
        for (slot, fd) in open.iter().zip(&fds) {
            if fd.revents == 0 {
                continue;
            }
            let Some(pipe) = pipes[*slot].as_mut() else { continue };
            match pipe.read(&mut chunk) {
                Ok(0) => pipes[*slot] = None,
                Ok(n) => bufs[*slot].extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    };
    let [out, err] = bufs;
    Ok((status, out, err))
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};

    use super::collect;

    fn run(script: &str) -> (i32, String, String) {
        let mut child = Command::new("sh")
            .args(["-c", script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (status, out, err) = collect(&mut child).unwrap();
        (status.code().unwrap(), String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
    }

    #[test]
    fn reads_both_pipes_to_the_end() {
        // More than a pipe buffer on stdout while stderr waits behind it.
        let (rc, out, err) = run("head -c 200000 /dev/zero | tr '\\0' x; echo oops >&2; exit 3");
        assert_eq!((rc, out.len(), err.as_str()), (3, 200_000, "oops\n"));
    }

    #[test]
    fn a_background_process_holding_the_pipes_does_not_keep_the_reader() {
        // The shell exits at once; `sleep 30` keeps stdout and stderr open.
        let started = std::time::Instant::now();
        let (rc, out, _) = run("echo started; sleep 30 & exit 0");
        assert_eq!((rc, out.as_str()), (0, "started\n"));
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
    }
}
