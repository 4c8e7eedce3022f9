//! An ssh login password, handed to `ssh` the two ways ansible-core 2.21's ssh connection
//! hands it (`password_mechanism`): `ssh_askpass`, its default, where ssh runs an askpass
//! program for each prompt, and `sshpass`, where `sshpass -d<fd>` reads it from a pipe.
//!
//! For `ssh_askpass` the askpass program is the controller's own binary, whose `main` hands
//! over to [`helper_main`] when ssh runs it: it sends ssh's prompt to the [`Askpass`] server
//! of the link that started that ssh, over a Unix socket in a directory only this user can
//! enter, and prints what the server answers. The server answers only a peer of this user,
//! and only prompts that ask for a password (or, with ansible's answer `no`, a host key
//! confirmation). The password is never in an environment variable, a file or an argv.
//!
//! Owns the password's way into ssh; which options ssh gets with it is `ssh.rs`'s.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The variable naming the server's socket to the askpass helper; its presence (with exactly
/// one argument, ssh's prompt) is what makes the controller's binary the helper.
pub const SOCKET_ENV: &str = "TACK_SSH_ASKPASS_SOCKET";

/// ansible's `SSH_ASKPASS_DEFAULT_PROMPT`: the text a prompt must hold to be answered with
/// the password, unless `sshpass_prompt` names another.
pub(crate) const DEFAULT_PROMPT: &str = "assword";

/// ansible's `PKCS11_DEFAULT_PROMPT`: the prompt a PIN answers when a PKCS#11 provider is
/// set and `sshpass_prompt` is not.
pub(crate) const PKCS11_PROMPT: &str = "Enter PIN for ";

/// The longest prompt the server reads (ssh's are one line).
const PROMPT_LIMIT: u64 = 8192;

/// How long the server waits for a helper to send its prompt.
const PROMPT_WAIT: Duration = Duration::from_secs(10);

/// How a link's `ssh` gets the login password, prepared again for every process the link
/// starts (a reopened link, a retry).
pub(crate) enum Login {
    /// `ssh_askpass`: the server the link's ssh processes ask.
    Askpass(Askpass),
    /// `sshpass`: the password, written to a fresh pipe for each process; `prompt` is
    /// `sshpass_prompt` when set (`-P`).
    Sshpass { password: String, prompt: Option<String> },
}

impl Login {
    /// The command running `program` with `args` so that ssh finds the password, and the
    /// controller's end of anything the child must inherit, to be dropped once it is spawned.
    pub(crate) fn command(
        &self,
        program: &OsStr,
        args: &[OsString],
    ) -> std::io::Result<(Command, Option<OwnedFd>)> {
        match self {
            Login::Askpass(server) => {
                let mut cmd = Command::new(program);
                cmd.args(args);
                server.configure(&mut cmd);
                Ok((cmd, None))
            }
            Login::Sshpass { password, prompt } => {
                let read = password_pipe(password)?;
                let fd = read.as_raw_fd();
                let mut cmd = Command::new("sshpass");
                cmd.arg(format!("-d{fd}"));
                if let Some(prompt) = prompt {
                    cmd.arg("-P").arg(prompt);
                }
                cmd.arg(program).args(args);
                inherit(&mut cmd, fd);
                Ok((cmd, Some(read)))
            }
        }
    }
}

impl Login {
    /// A link whose command ended with `code` before the agent's hello, told as ansible
    /// tells it when that says the password was refused: sshpass's 5 ("invalid password")
    /// reaches ansible as the exit status of its first remote command, which its action
    /// reports as `Authentication failure.` of an unreachable host.
    pub(crate) fn refused(&self, code: Option<i32>) -> Option<crate::ConnectionError> {
        match (self, code) {
            (Login::Sshpass { .. }, Some(SSHPASS_WRONG_PASSWORD)) => {
                Some(crate::ConnectionError::Unreachable {
                    message: "Authentication failure.".into(),
                })
            }
            _ => None,
        }
    }
}

/// sshpass's exit status for a password the server refused.
const SSHPASS_WRONG_PASSWORD: i32 = 5;

/// A pipe holding `password` and a newline, as ansible writes it for sshpass; the read end
/// (close-on-exec, so no other child inherits it) is returned.
fn password_pipe(password: &str) -> std::io::Result<OwnedFd> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given, which has room for two.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both are open descriptors that nothing else owns.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut bytes = password.as_bytes().to_vec();
    bytes.push(b'\n');
    // A pipe holds 64 KiB before a write blocks; no reader runs yet, so a longer password
    // would block forever.
    if bytes.len() > 60 * 1024 {
        return Err(std::io::Error::other("the password is too long for sshpass"));
    }
    std::fs::File::from(write).write_all(&bytes)?;
    Ok(read)
}

/// Lets the child (only) inherit `fd`, which is close-on-exec in the controller.
fn inherit(cmd: &mut Command, fd: i32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: fcntl is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The controller's side of `ssh_askpass`: a socket in a private directory and the thread
/// answering it, for as long as the link may start ssh processes.
pub(crate) struct Askpass {
    /// Holds the socket; removed with it when the server is dropped.
    _dir: tempfile::TempDir,
    socket: PathBuf,
    program: PathBuf,
    stop: Arc<AtomicBool>,
}

impl Askpass {
    /// Starts answering `password` to prompts holding `prompt`; ssh is told to run
    /// `program` (the controller's binary) as its askpass program.
    pub(crate) fn start(
        password: String,
        prompt: String,
        program: PathBuf,
    ) -> std::io::Result<Self> {
        // 0700: nobody else can reach the socket in it.
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("tack-askpass-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        let socket = dir.path().join("s");
        let listener = UnixListener::bind(&socket)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        std::thread::Builder::new().name("ssh-askpass".into()).spawn(move || {
            for conn in listener.incoming() {
                if stopped.load(Ordering::Acquire) {
                    break;
                }
                if let Ok(conn) = conn {
                    serve(conn, &password, &prompt);
                }
            }
        })?;
        Ok(Askpass { _dir: dir, socket, program, stop })
    }

    /// What ssh needs to ask this server: ansible's `SSH_ASKPASS_REQUIRE=force` and
    /// `DISPLAY` (when unset), and a session of its own, so ssh never prompts on a terminal.
    fn configure(&self, cmd: &mut Command) {
        cmd.env("SSH_ASKPASS", &self.program)
            .env("SSH_ASKPASS_REQUIRE", "force")
            .env(SOCKET_ENV, &self.socket);
        if std::env::var_os("DISPLAY").is_none() {
            cmd.env("DISPLAY", "-");
        }
        crate::child::new_session(cmd);
    }
}

impl Drop for Askpass {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // Wakes the thread's accept so that it sees the stop; the directory goes with `_dir`.
        let _ = UnixStream::connect(&self.socket);
    }
}

/// One helper's question: the peer must be this user; the answer is a status byte (`1`:
/// answered) and the text to print.
fn serve(mut conn: UnixStream, password: &str, prompt: &str) {
    if !peer_is_us(&conn) {
        return;
    }
    let _ = conn.set_read_timeout(Some(PROMPT_WAIT));
    let mut asked = Vec::new();
    if (&mut conn).take(PROMPT_LIMIT).read_to_end(&mut asked).is_err() {
        return;
    }
    let reply = match answer(&String::from_utf8_lossy(&asked), password, prompt) {
        Some(text) => [b"1", text.as_bytes()].concat(),
        None => b"0".to_vec(),
    };
    let _ = conn.write_all(&reply);
}

/// ansible's `handle_prompt`: `no` to a host key confirmation, the password to a prompt
/// holding `prompt`, nothing to anything else.
fn answer<'a>(asked: &str, password: &'a str, prompt: &str) -> Option<&'a str> {
    if asked.contains("The authenticity of host ")
        || asked.contains("differs from the key for the IP address")
    {
        return Some("no");
    }
    asked.contains(prompt).then_some(password)
}

/// Whether the socket's peer runs as this process's user and descends from this process
/// (ssh's askpass child is its grandchild), by SO_PEERCRED: another program of the same
/// user that found the socket gets nothing.
fn peer_is_us(conn: &UnixStream) -> bool {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `cred`, which is that large.
    let rc = unsafe {
        libc::getsockopt(
            conn.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    // SAFETY: geteuid has no preconditions.
    rc == 0 && cred.uid == unsafe { libc::geteuid() } && descends_from_us(cred.pid)
}

/// Whether `pid`'s chain of parents (from `/proc`) reaches this process.
fn descends_from_us(mut pid: libc::pid_t) -> bool {
    let me = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    // A chain is short (helper, ssh, tack); the bound only guards against a loop.
    for _ in 0..64 {
        if pid == me {
            return true;
        }
        match parent_of(pid) {
            Some(parent) if parent > 1 => pid = parent,
            _ => return false,
        }
    }
    false
}

/// The parent pid in `/proc/<pid>/stat`: the field after the command's closing parenthesis
/// and the state (the command itself may hold spaces and parentheses).
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The askpass helper, when ssh runs the controller's binary as one (see the module docs):
/// `Some(exit code)` then, `None` for an ordinary run of the binary.
pub fn helper_main() -> Option<i32> {
    let socket = std::env::var_os(SOCKET_ENV)?;
    let mut args = std::env::args_os().skip(1);
    let (Some(asked), None) = (args.next(), args.next()) else { return None };
    Some(ask(Path::new(&socket), &asked))
}

/// Sends `asked` to the server at `socket` and prints its answer: 0 when it answered, 1
/// when it would not (ansible's helper exits 1 then too, and ssh gives up on the prompt).
fn ask(socket: &Path, asked: &OsStr) -> i32 {
    use std::os::unix::ffi::OsStrExt;
    let Ok(mut conn) = UnixStream::connect(socket) else { return 1 };
    if conn.write_all(asked.as_bytes()).is_err()
        || conn.shutdown(std::net::Shutdown::Write).is_err()
    {
        return 1;
    }
    let mut reply = Vec::new();
    if conn.read_to_end(&mut reply).is_err() {
        return 1;
    }
    match reply.split_first() {
        Some((b'1', text)) => {
            let mut out = std::io::stdout().lock();
            if out.write_all(text).and_then(|()| out.flush()).is_err() {
                return 1;
            }
            0
        }
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_prompt_gets_the_password_and_others_nothing() {
        assert_eq!(answer("root@h's password: ", "pw", DEFAULT_PROMPT), Some("pw"));
        assert_eq!(answer("Password:", "pw", DEFAULT_PROMPT), Some("pw"));
        assert_eq!(answer("Enter PIN for 'card': ", "pw", DEFAULT_PROMPT), None);
        assert_eq!(answer("Enter PIN for 'card': ", "pw", "PIN"), Some("pw"));
        let host_key = "The authenticity of host '[h]:22' can't be established.\nAre you sure \
                        you want to continue connecting (yes/no/[fingerprint])? ";
        assert_eq!(answer(host_key, "pw", DEFAULT_PROMPT), Some("no"));
    }

    #[test]
    fn the_server_answers_this_user_over_its_socket_and_goes_with_its_directory() {
        let server =
            Askpass::start("s3cret".into(), DEFAULT_PROMPT.into(), "/bin/false".into()).unwrap();
        let dir = server.socket.parent().unwrap().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        let ask_it = |prompt: &str| {
            let mut conn = UnixStream::connect(&server.socket).unwrap();
            conn.write_all(prompt.as_bytes()).unwrap();
            conn.shutdown(std::net::Shutdown::Write).unwrap();
            let mut reply = Vec::new();
            conn.read_to_end(&mut reply).unwrap();
            reply
        };
        assert_eq!(ask_it("u@h's password: "), b"1s3cret");
        // Asked again (a second authentication method), it answers again.
        assert_eq!(ask_it("Password: "), b"1s3cret");
        assert_eq!(ask_it("Verification code: "), b"0");
        drop(server);
        assert!(!dir.exists());
    }

    #[test]
    fn a_peer_must_descend_from_the_controller() {
        let me = libc::pid_t::try_from(std::process::id()).unwrap();
        assert!(descends_from_us(me));
        let child = Command::new("/bin/sleep").arg("5").spawn().unwrap();
        let pid = libc::pid_t::try_from(child.id()).unwrap();
        assert!(descends_from_us(pid));
        assert_eq!(parent_of(pid), Some(me));
        let mut child = child;
        let _ = child.kill();
        let _ = child.wait();
        // init and our own parent are not below us.
        assert!(!descends_from_us(1));
        assert!(!descends_from_us(parent_of(me).unwrap()));
    }

    #[test]
    fn the_sshpass_pipe_holds_the_password_and_a_newline() {
        let read = password_pipe("pw").unwrap();
        let mut text = String::new();
        std::fs::File::from(read).read_to_string(&mut text).unwrap();
        assert_eq!(text, "pw\n");
    }

    #[test]
    fn the_child_alone_inherits_the_pipe() {
        let read = password_pipe("pw").unwrap();
        let fd = read.as_raw_fd();
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c").arg(format!("cat <&{fd}"));
        inherit(&mut cmd, fd);
        let out = cmd.output().unwrap();
        assert_eq!(out.stdout, b"pw\n");
        // Without `inherit`, the descriptor is closed at exec.
        let read = password_pipe("pw").unwrap();
        let out = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("cat <&{}", read.as_raw_fd()))
            .output()
            .unwrap();
        assert!(out.stdout.is_empty());
    }

    #[test]
    fn an_sshpass_command_reads_the_pipe_it_names() {
        let login = Login::Sshpass { password: "pw".into(), prompt: Some("Passcode".into()) };
        let (cmd, read) = login.command(OsStr::new("ssh"), &["-v".into(), "h".into()]).unwrap();
        let fd = read.as_ref().unwrap().as_raw_fd();
        assert_eq!(cmd.get_program(), "sshpass");
        let args: Vec<_> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            args,
            [
                format!("-d{fd}"),
                "-P".into(),
                "Passcode".into(),
                "ssh".into(),
                "-v".into(),
                "h".into()
            ]
        );
    }
}
