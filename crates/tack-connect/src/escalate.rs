//! Privilege escalation (ansible's `become`): the [`Become`] settings of a link, the shell
//! command that runs a script as the become user (ansible-core's `sudo` and `su` become
//! plugins' command lines, with tack's prompt), and the handshake before anything else is
//! read from such a command: its stdout is read up to the line `BECOME-SUCCESS-<random>`
//! (printed by the become user's shell, so only after the escalation succeeded), while its
//! stderr is watched for the password prompt, which is answered once. Nothing the become
//! program prints can therefore be read as a protocol frame, and the password only ever
//! travels on the command's stdin.
//!
//! A failed escalation is told in ansible's words where ansible has them (`Missing sudo
//! password`, `Incorrect sudo password`), else with what the become program said.
//!
//! Owns the become command line and the handshake; where the agent lives for the become
//! user is `become_link`'s, running the processes `child`'s.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};

/// How long the become program may take before it prints the marker or a prompt.
pub(crate) const HANDSHAKE_TIMEOUT_SECS: u64 = 60;

/// The become plugins tack runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BecomeMethod {
    Sudo,
    Su,
}

impl BecomeMethod {
    /// The plugin's name, as ansible's messages say it.
    pub fn name(self) -> &'static str {
        match self {
            BecomeMethod::Sudo => "sudo",
            BecomeMethod::Su => "su",
        }
    }

    /// ansible's `become_flags` default for the method.
    pub fn default_flags(self) -> &'static str {
        match self {
            BecomeMethod::Sudo => "-H -S -n",
            BecomeMethod::Su => "",
        }
    }

    /// What the program prints when the password it was given is wrong (the plugin's `fail`).
    fn fail_texts(self) -> &'static [&'static str] {
        match self {
            BecomeMethod::Sudo => &["Sorry, try again."],
            BecomeMethod::Su => &["Authentication failure"],
        }
    }

    /// What the program prints when it needs a password it was not given (`missing`).
    fn missing_texts(self) -> &'static [&'static str] {
        match self {
            BecomeMethod::Sudo => {
                &["Sorry, a password is required to run sudo", "sudo: a password is required"]
            }
            BecomeMethod::Su => &[],
        }
    }
}

/// Whom a link becomes, and how. Equal values are one link; `Debug` hides the password.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Become {
    pub method: BecomeMethod,
    pub user: String,
    /// `become_flags`; `None` is the method's default.
    pub flags: Option<String>,
    /// `become_exe`; `None` is the method's name.
    pub exe: Option<String>,
    /// `become_password` (`ansible_become_password`, `ansible_become_pass`).
    pub password: Option<String>,
}

impl std::fmt::Debug for Become {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Become")
            .field("method", &self.method)
            .field("user", &self.user)
            .field("flags", &self.flags)
            .field("exe", &self.exe)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// One escalation's handshake: the marker its stdout must show, the prompt its stderr may
/// show, and the answer. `Debug` hides the password.
#[derive(Clone, PartialEq, Eq)]
pub struct Escalation {
    pub method: BecomeMethod,
    pub marker: String,
    pub prompt: Option<Prompt>,
    pub password: Option<String>,
}

/// The password prompt a become program shows on stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// sudo's, which tack names itself (`-p`).
    Text(String),
    /// su's own, in the host's language: ansible's su plugin's `check_password_prompt`, one
    /// of its localized words for "password", then any spaces, then a colon (or a
    /// full-width one), case aside.
    Su,
}

/// ansible's su plugin's `SU_PROMPT_LOCALIZATIONS`.
const SU_PROMPTS: &[&str] = &[
    "Password",
    "암호",
    "パスワード",
    "Adgangskode",
    "Contraseña",
    "Contrasenya",
    "Hasło",
    "Heslo",
    "Jelszó",
    "Lösenord",
    "Mật khẩu",
    "Mot de passe",
    "Parola",
    "Parool",
    "Pasahitza",
    "Passord",
    "Passwort",
    "Salasana",
    "Sandi",
    "Senha",
    "Wachtwoord",
    "ססמה",
    "Лозинка",
    "Парола",
    "Пароль",
    "गुप्तशब्द",
    "शब्दकूट",
    "సంకేతపదము",
    "හස්පදය",
    "密码",
    "密碼",
    "口令",
];

impl Prompt {
    /// How many times the prompt shows in `seen`.
    fn count(&self, seen: &[u8]) -> usize {
        match self {
            Prompt::Text(text) => count_of(seen, text.as_bytes()),
            Prompt::Su => count_su_prompts(&String::from_utf8_lossy(seen)),
        }
    }
}

/// The matches of `(?:<localized words>)\s*[:：]`, case-insensitive, in `text`.
fn count_su_prompts(text: &str) -> usize {
    let lower = text.to_lowercase();
    let words: Vec<String> = SU_PROMPTS.iter().map(|w| w.to_lowercase()).collect();
    let mut count = 0;
    let mut at = 0;
    while at < lower.len() {
        let rest = &lower[at..];
        let hit = words.iter().find_map(|w| {
            let after = rest.strip_prefix(w.as_str())?;
            let colon = after.trim_start();
            let tail = colon.strip_prefix(':').or_else(|| colon.strip_prefix('：'))?;
            Some(rest.len() - tail.len())
        });
        match hit {
            Some(len) => {
                count += 1;
                at += len;
            }
            None => at += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    count
}

impl std::fmt::Debug for Escalation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Escalation")
            .field("method", &self.method)
            .field("marker", &self.marker)
            .field("prompt", &self.prompt)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .finish()
    }
}

/// Why a become setting cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BecomeError {
    #[error("cannot split become_flags ({value:?}): {reason}")]
    Flags { value: String, reason: String },
}

/// 16 random bytes in hex, for the marker and the prompt's key.
fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    let got = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if got.is_err() {
        // Without the random device the marker only has to differ from what sudo prints.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (t ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Become {
    /// The shell command (for the login user's `/bin/sh`) running `script` as the become
    /// user, and its handshake. Each call draws a new marker.
    /// The become program as [`Become::command`] runs it, up to the command it is given
    /// (`sudo -H -S -n -u root`, `su  root -c`): what `-vvv` shows of an escalation.
    pub fn program(&self) -> Result<String, BecomeError> {
        let exe = self.exe.clone().unwrap_or_else(|| self.method.name().to_string());
        let flags = self.flags.clone().unwrap_or_else(|| self.method.default_flags().to_string());
        let user = tack_py::shlex::quote(&self.user);
        let with_password = self.password.as_ref().is_some_and(|p| !p.is_empty());
        Ok(match self.method {
            BecomeMethod::Sudo if with_password => {
                format!(
                    "{exe} {} -p \"[sudo via tack] password:\" -u {user}",
                    sudo_flags_without_n(&flags)?
                )
            }
            BecomeMethod::Sudo => format!("{exe} {flags} -u {user}"),
            BecomeMethod::Su => format!("{exe} {flags} {user} -c"),
        })
    }

    pub fn command(&self, script: &str) -> Result<(String, Escalation), BecomeError> {
        let id = random_hex();
        let marker = format!("BECOME-SUCCESS-{id}");
        let success =
            format!("/bin/sh -c {}", tack_py::shlex::quote(&format!("echo {marker}; {script}")));
        let exe = self.exe.clone().unwrap_or_else(|| self.method.name().to_string());
        let flags = self.flags.clone().unwrap_or_else(|| self.method.default_flags().to_string());
        let user = tack_py::shlex::quote(&self.user);
        let password = self.password.clone().filter(|p| !p.is_empty());
        let (line, prompt) = match self.method {
            BecomeMethod::Sudo => {
                let mut parts = vec![exe];
                let mut prompt = None;
                if password.is_some() {
                    parts.push(sudo_flags_without_n(&flags)?);
                    let text = format!("[sudo via tack, key={id}] password:");
                    parts.push(format!("-p \"{text}\""));
                    prompt = Some(Prompt::Text(text));
                } else {
                    parts.push(flags);
                }
                parts.push(format!("-u {user}"));
                parts.push(success);
                (parts.join(" "), prompt)
            }
            // Without a terminal, su asks on stderr and reads the answer from stdin.
            BecomeMethod::Su => (
                format!("{exe} {flags} {user} -c {}", tack_py::shlex::quote(&success)),
                password.as_ref().map(|_| Prompt::Su),
            ),
        };
        Ok((line, Escalation { method: self.method, marker, prompt, password }))
    }
}

/// ansible's sudo plugin with a password: `-n`/`--non-interactive` dropped, and an `n` taken
/// out of each bundle of short flags.
fn sudo_flags_without_n(flags: &str) -> Result<String, BecomeError> {
    let words = tack_py::shlex::split(flags)
        .map_err(|e| BecomeError::Flags { value: flags.to_string(), reason: e.to_string() })?;
    let kept: Vec<String> = words
        .into_iter()
        .filter(|w| w != "-n" && w != "--non-interactive")
        .map(|w| if w.starts_with("--") { w } else { drop_first_n(&w) })
        .collect();
    Ok(kept.iter().map(|w| tack_py::shlex::quote(w)).collect::<Vec<_>>().join(" "))
}

/// `re.sub(r'^(-\w*)n(\w*.*)', r'\1\2', flag)`: the last `n` of the leading run of word
/// characters after the dash (the regex is greedy), when the flag starts with a dash.
fn drop_first_n(flag: &str) -> String {
    let Some(rest) = flag.strip_prefix('-') else { return flag.to_string() };
    let run = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    match rest[..run].rfind('n') {
        Some(at) => format!("-{}{}", &rest[..at], &rest[at + 1..]),
        None => flag.to_string(),
    }
}

/// What the stderr watcher saw of the become program's prompts.
#[derive(Debug, Default)]
pub(crate) struct PromptState {
    /// How many times the prompt was shown.
    pub prompts: usize,
    /// The marker was seen: later stderr is the payload's, not the become program's.
    pub done: bool,
    /// Everything stderr said before the marker (for matching the prompt across reads).
    seen: Vec<u8>,
    /// The watcher's own handle of the command's stdin, for the answer; dropped once the
    /// marker is seen ([`PromptState::finish`]), so closing the command's stdin ends it.
    answer: Option<std::fs::File>,
}

impl PromptState {
    /// The handshake is over: how many prompts there were; the answer's handle is closed.
    pub(crate) fn finish(state: &Mutex<PromptState>) -> usize {
        let mut s = state.lock().unwrap_or_else(PoisonError::into_inner);
        s.done = true;
        s.answer = None;
        s.prompts
    }
}

/// Watches a become command's stderr for its prompt and answers it once on `stdin`; a second
/// prompt means the password was wrong, and the command is killed so the marker's read ends.
pub(crate) struct Watch {
    pub escalation: Escalation,
    pub pid: u32,
    pub state: Arc<Mutex<PromptState>>,
}

impl Watch {
    pub(crate) fn new(escalation: Escalation, stdin: Option<std::fs::File>, pid: u32) -> Self {
        let state = PromptState { answer: stdin, ..PromptState::default() };
        Watch { escalation, pid, state: Arc::new(Mutex::new(state)) }
    }

    /// Called with each chunk of stderr.
    pub(crate) fn saw(&mut self, chunk: &[u8]) {
        let Some(prompt) = self.escalation.prompt.clone() else { return };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.done {
            return;
        }
        state.seen.extend_from_slice(chunk);
        let count = prompt.count(&state.seen);
        if count <= state.prompts {
            return;
        }
        state.prompts = count;
        if count == 1 {
            if let (Some(stdin), Some(password)) =
                (state.answer.as_mut(), &self.escalation.password)
            {
                let mut line = password.clone().into_bytes();
                line.push(b'\n');
                // A write that fails shows as the program's own failure.
                let _ = stdin.write_all(&line);
                let _ = stdin.flush();
            }
        } else if let Ok(pid) = libc::pid_t::try_from(self.pid) {
            // SAFETY: kill has no memory preconditions; the pid is our own child's, not yet
            // reaped (the reader waits for it only after the marker's read ends).
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn count_of(hay: &[u8], needle: &[u8]) -> usize {
    if needle.is_empty() || hay.len() < needle.len() {
        return 0;
    }
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// Reads `stdout` a byte at a time (nothing past the marker's line is taken from the pipe)
/// until the line that is the marker. `Err` holds what came before, when the stream ended.
pub(crate) fn await_marker(stdout: &mut impl Read, marker: &str) -> Result<(), Vec<u8>> {
    await_markers(stdout, &[marker]).map(|_| ())
}

/// [`await_marker`] for the first line that is one of `markers`: which one, and what came
/// before it.
pub(crate) fn await_markers<R: Read + ?Sized>(
    stdout: &mut R,
    markers: &[&str],
) -> Result<(usize, Vec<u8>), Vec<u8>> {
    let mut line = Vec::new();
    let mut before = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match stdout.read(&mut byte) {
            Ok(0) | Err(_) => {
                before.extend_from_slice(&line);
                return Err(before);
            }
            Ok(_) => {}
        }
        if byte[0] != b'\n' {
            line.push(byte[0]);
            continue;
        }
        let text = line.strip_suffix(b"\r").unwrap_or(&line);
        if let Some(found) = markers.iter().position(|m| m.as_bytes() == text) {
            return Ok((found, before));
        }
        before.append(&mut line);
        before.push(b'\n');
    }
}

/// The failure of an escalation whose marker never came, in ansible's words where it has them.
pub(crate) fn failure(
    escalation: &Escalation,
    prompts: usize,
    stdout: &[u8],
    stderr: &str,
    code: Option<i32>,
) -> crate::ConnectionError {
    let method = escalation.method;
    let said = |texts: &[&str]| texts.iter().any(|t| stderr.contains(t));
    let message = if escalation.password.is_some() && (prompts >= 2 || said(method.fail_texts())) {
        format!("Incorrect {} password", method.name())
    } else if said(method.missing_texts()) {
        format!("Missing {} password", method.name())
    } else {
        let out = String::from_utf8_lossy(stdout);
        let text = [stderr.trim(), out.trim()]
            .iter()
            .filter(|t| !t.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        let how = match code {
            Some(c) => format!("exited with code {c}"),
            None => "was killed".to_string(),
        };
        match text.is_empty() {
            true => format!("privilege escalation with {} failed: it {how}", method.name()),
            false => {
                format!("privilege escalation with {} failed: it {how}: {text}", method.name())
            }
        }
    };
    crate::ConnectionError::Become { message, code, stderr: stderr.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sudo(password: Option<&str>, flags: Option<&str>) -> Become {
        Become {
            method: BecomeMethod::Sudo,
            user: "nobody".into(),
            flags: flags.map(str::to_string),
            exe: None,
            password: password.map(str::to_string),
        }
    }

    #[test]
    fn sudo_commands_are_ansibles_with_tacks_prompt() {
        let (line, esc) = sudo(None, None).command("id -un").unwrap();
        let id = esc.marker.strip_prefix("BECOME-SUCCESS-").unwrap();
        assert_eq!(id.len(), 32);
        assert_eq!(
            line,
            format!("sudo -H -S -n -u nobody /bin/sh -c 'echo BECOME-SUCCESS-{id}; id -un'")
        );
        assert_eq!(esc.prompt, None);
        let (line, esc) = sudo(Some("pw"), None).command("true").unwrap();
        let id = esc.marker.strip_prefix("BECOME-SUCCESS-").unwrap();
        assert_eq!(
            line,
            format!(
                "sudo -H -S -p \"[sudo via tack, key={id}] password:\" -u nobody /bin/sh -c \
                 'echo BECOME-SUCCESS-{id}; true'"
            )
        );
        assert!(!format!("{esc:?}{:?}", sudo(Some("pw"), None)).contains("pw\""));
    }

    #[test]
    fn a_password_takes_the_n_out_of_sudos_flags_as_ansible_does() {
        assert_eq!(sudo_flags_without_n("-H -S -n").unwrap(), "-H -S");
        assert_eq!(sudo_flags_without_n("-HSn --non-interactive -E").unwrap(), "-HS -E");
        assert_eq!(sudo_flags_without_n("-nH --preserve-env=n").unwrap(), "-H --preserve-env=n");
        assert_eq!(drop_first_n("-nan"), "-na");
        assert_eq!(drop_first_n("x-n"), "x-n");
    }

    #[test]
    fn su_commands_are_ansibles() {
        let b = Become {
            method: BecomeMethod::Su,
            user: "nobody".into(),
            flags: Some("-s /bin/sh".into()),
            exe: None,
            password: None,
        };
        let (line, esc) = b.command("id -un").unwrap();
        let m = &esc.marker;
        assert_eq!(
            line,
            format!("su -s /bin/sh nobody -c '/bin/sh -c '\"'\"'echo {m}; id -un'\"'\"''")
        );
        let b = Become { password: Some("x".into()), ..b };
        let (_, esc) = b.command("true").unwrap();
        assert_eq!(esc.prompt, Some(Prompt::Su));
    }

    #[test]
    fn su_prompts_are_found_in_any_of_ansibles_languages() {
        assert_eq!(Prompt::Su.count(b"Password: "), 1);
        assert_eq!(Prompt::Su.count(b"password :"), 1);
        assert_eq!(Prompt::Su.count("Пароль：".as_bytes()), 1);
        assert_eq!(Prompt::Su.count(b"Password: su: Authentication failure\nPassword:"), 2);
        assert_eq!(Prompt::Su.count(b"Passwords are checked"), 0);
        assert_eq!(Prompt::Su.count(b"Password"), 0);
    }

    #[test]
    fn the_marker_line_ends_the_read_and_nothing_after_it_is_taken() {
        let mut input: &[u8] = b"motd\nBECOME-SUCCESS-ab\r\nFRAME";
        assert_eq!(await_marker(&mut input, "BECOME-SUCCESS-ab"), Ok(()));
        assert_eq!(input, b"FRAME");
        let mut input: &[u8] = b"This account is currently not available.\n";
        assert_eq!(
            await_marker(&mut input, "BECOME-SUCCESS-ab"),
            Err(b"This account is currently not available.\n".to_vec())
        );
    }
}
