//! Where vault secrets come from: `--vault-id label@source`, `--vault-password-file`,
//! `--ask-vault-pass`, and the settings `vault_password_file`, `vault_identity_list`,
//! `vault_identity`, `vault_id_match`, `vault_encrypt_identity`, `vault_encrypt_salt`.
//!
//! A source is a prompt (`prompt`), a plain file (its contents, whitespace-stripped, decrypted
//! first if the file is itself vaulted with a secret loaded before it), an executable (run, its
//! stdout is the password) or an executable named `*-client*` (run with `--vault-id <label>`).
//! The order, the warnings printed for sources that fail, and which failure is fatal follow
//! ansible-core 2.21's `CLI.setup_vault_secrets`: a failing file only warns while another
//! source works; a failing prompt is fatal at once.
//!
//! The settings arrive as plain values in [`VaultSettings`]: reading `ansible.cfg` and the
//! environment is the configuration layer's job, not this module's.

use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tack_diag::Diagnostic;
use tack_py::oserror::os_error as oserror;
use tack_py::repr::{bytes_repr, str_repr};
use tack_py::text::{bytes_strip, bytes_strip_chars};
use zeroize::Zeroizing;

use crate::error::value_excerpt;
use crate::{DEFAULT_IDENTITY, Prompter, VaultError, VaultSecret, VaultSecrets};

/// The vault settings of ansible's configuration, as plain values.
#[derive(Clone, Debug)]
pub struct VaultSettings {
    /// `vault_identity` (`ANSIBLE_VAULT_IDENTITY`): the label of secrets given without one.
    pub identity: String,
    /// `vault_identity_list` (`ANSIBLE_VAULT_IDENTITY_LIST`): `--vault-id` values used first.
    pub identity_list: Vec<String>,
    /// `vault_password_file` (`ANSIBLE_VAULT_PASSWORD_FILE`), already resolved to a path.
    pub password_file: Option<PathBuf>,
    /// `vault_id_match` (`ANSIBLE_VAULT_ID_MATCH`): only the secret labelled as the envelope
    /// says may open it.
    pub id_match: bool,
    /// `vault_encrypt_identity` (`ANSIBLE_VAULT_ENCRYPT_IDENTITY`): the label to encrypt with
    /// when `--encrypt-vault-id` is not given.
    pub encrypt_identity: Option<String>,
    /// `vault_encrypt_salt` (`ANSIBLE_VAULT_ENCRYPT_SALT`): a fixed salt instead of a random one.
    pub encrypt_salt: Option<String>,
}

impl Default for VaultSettings {
    fn default() -> VaultSettings {
        VaultSettings {
            identity: DEFAULT_IDENTITY.to_string(),
            identity_list: Vec::new(),
            password_file: None,
            id_match: false,
            encrypt_identity: None,
            encrypt_salt: None,
        }
    }
}

impl VaultSettings {
    /// The `label@source` list a command starts from: `identity_list` first, then the
    /// command line's `--vault-id` values, as every ansible command builds it.
    pub fn vault_ids_with(&self, cli_vault_ids: &[String]) -> Vec<String> {
        self.identity_list.iter().chain(cli_vault_ids).cloned().collect()
    }

    /// An empty secret set carrying these settings.
    pub fn empty_secrets(&self) -> VaultSecrets {
        VaultSecrets::new(Vec::new())
            .with_id_match(self.id_match)
            .with_default_identity(self.identity.clone())
            .with_encrypt_salt(self.encrypt_salt.as_ref().map(|s| s.as_bytes().to_vec()))
    }
}

/// What one command asks for.
#[derive(Clone, Debug, Default)]
pub struct SecretRequest {
    /// `label@source` or `source` values, in order (the caller prepends `identity_list` where
    /// ansible does).
    pub vault_ids: Vec<String>,
    /// `--vault-password-file` values; `vault_password_file` from the settings is added after.
    pub password_files: Vec<PathBuf>,
    /// `--ask-vault-pass` / `-J`.
    pub ask_vault_pass: bool,
    /// Prompts ask for a new password and its confirmation (`encrypt`, `create`, rekey's new
    /// password).
    pub new_password: bool,
    /// Prompt when no source at all was given (`ansible-vault` does; `ansible-playbook` not).
    pub auto_prompt: bool,
}

/// A secret source that could not give a password, worded as ansible words it.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("The vault password file {} was not found", .0.display())]
    NotFound(PathBuf),
    #[error("The vault password file provided '{}' can not be a directory", .0.display())]
    IsDirectory(PathBuf),
    #[error(
        "Could not read vault password file {}: {}",
        str_repr(&.path.display().to_string()),
        oserror(.source, .path)
    )]
    Unreadable { path: PathBuf, source: io::Error },
    #[error("Invalid vault password was provided from file ({})", .0.display())]
    EmptyFile(PathBuf),
    #[error("Invalid vault password was provided from script ({})", .0.display())]
    EmptyScript(PathBuf),
    #[error(
        "Problem running vault password {}script {} ({}). If this is not a script, remove the \
         executable bit from the file.",
        if *.client { "client " } else { "" },
        .path.display(),
        oserror(.source, .path)
    )]
    Spawn { path: PathBuf, client: bool, source: io::Error },
    /// A plain script's stderr is not captured, so ansible prints Python's `None` for it.
    #[error("Vault password script {} returned non-zero ({code}): None", .path.display())]
    ScriptFailed { path: PathBuf, code: i32 },
    #[error(
        "Vault password client script {} did not find a secret for vault-id={}: {}",
        .path.display(),
        py_opt(.vault_id),
        bytes_repr(.stderr)
    )]
    ClientUnknownId { path: PathBuf, vault_id: Option<String>, stderr: Vec<u8> },
    #[error(
        "Vault password client script {} returned non-zero ({code}) when getting secret for \
         vault-id={}: {}",
        .path.display(),
        py_opt(.vault_id),
        bytes_repr(.stderr)
    )]
    ClientFailed { path: PathBuf, code: i32, vault_id: Option<String>, stderr: Vec<u8> },
    #[error("EOFError (ctrl-d) on prompt for ({0})")]
    PromptEof(String),
    #[error("Invalid vault password was provided")]
    PromptEmpty,
    #[error("Passwords do not match")]
    PasswordsDiffer,
    #[error("Unable to read from the terminal: {0}")]
    Terminal(io::Error),
    /// The password file is itself vaulted and no earlier secret opens it; `excerpt` is how
    /// ansible quotes the vaulted text, which has no origin of its own.
    #[error("{source}")]
    Vault { source: VaultError, excerpt: String },
}

impl SecretError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            SecretError::Unreadable { path, source } => Diagnostic::caused_by(
                format!(
                    "Could not read vault password file {}.",
                    str_repr(&path.display().to_string())
                ),
                None,
                Diagnostic::new(oserror(source, path)),
            ),
            SecretError::Vault { source, excerpt } => source.to_diagnostic_at(Some(
                tack_diag::Origin::described(format!("<unknown>\n\n{excerpt}")),
            )),
            other => Diagnostic::new(other.to_string()),
        }
    }
}

impl From<SecretError> for Diagnostic {
    fn from(err: SecretError) -> Diagnostic {
        err.to_diagnostic()
    }
}

/// Python's `str(None)` or the text.
fn py_opt(value: &Option<String>) -> &str {
    value.as_deref().unwrap_or("None")
}

/// Splits `label@source` at the first `@`; no `@` means no label.
fn split_vault_id(slug: &str) -> (Option<&str>, &str) {
    match slug.split_once('@') {
        Some((label, source)) => (Some(label), source),
        None => (None, slug),
    }
}

/// Loads every secret `request` names, in ansible's order: the `vault_ids`, then the password
/// files, then a prompt when asked for (or when nothing was given and `auto_prompt`).
pub fn load_secrets(
    settings: &VaultSettings,
    request: SecretRequest,
    prompter: &mut dyn Prompter,
) -> Result<VaultSecrets, SecretError> {
    let mut slugs = request.vault_ids;
    let mut files = request.password_files;
    files.extend(settings.password_file.clone());
    for file in &files {
        slugs.push(format!("{}@{}", settings.identity, file.display()));
    }
    if request.ask_vault_pass || (slugs.is_empty() && request.auto_prompt) {
        slugs.push(format!("{}@prompt_ask_vault_pass", settings.identity));
    }

    let mut secrets = settings.empty_secrets();
    let mut last_error = None;
    let mut found = false;
    for slug in &slugs {
        let (label, source) = split_vault_id(slug);
        let label_text = label.unwrap_or("None");
        if source == "prompt" || source == "prompt_ask_vault_pass" {
            let vault_id = label.filter(|l| !l.is_empty()).unwrap_or(&settings.identity);
            let prompts = prompt_formats(source, request.new_password, vault_id);
            let password = ask(prompter, &prompts, vault_id).inspect_err(|err| {
                warn(format!("Error in vault password prompt ({label_text}): {err}"));
            })?;
            secrets.push(VaultSecret::new(vault_id, password.to_vec()));
            found = true;
            continue;
        }
        let source = match FileSource::locate(source, label) {
            Ok(source) => source,
            Err(err) => {
                warn(format!("Error getting vault password file ({label_text}): {err}"));
                last_error = Some(err);
                continue;
            }
        };
        match source.load(found.then_some(&secrets)) {
            Ok(password) => {
                let vault_id = label.filter(|l| !l.is_empty()).unwrap_or(&settings.identity);
                secrets.push(VaultSecret::new(vault_id, password.to_vec()));
                found = true;
            }
            Err(err) => {
                warn(format!("Error in vault password file loading ({label_text}): {err}"));
                last_error = Some(err);
            }
        }
    }
    match last_error {
        Some(err) if !found => Err(err),
        _ => Ok(secrets),
    }
}

fn warn(message: String) {
    tack_diag::warn(&Diagnostic::new(message));
}

fn prompt_formats(source: &str, new_password: bool, vault_id: &str) -> Vec<String> {
    match (source, new_password) {
        ("prompt", false) => vec![format!("Vault password ({vault_id}): ")],
        ("prompt", true) => vec![
            format!("New vault password ({vault_id}): "),
            format!("Confirm new vault password ({vault_id}): "),
        ],
        (_, false) => vec!["Vault password: ".to_string()],
        (_, true) => {
            vec!["New Vault password: ".to_string(), "Confirm New Vault password: ".to_string()]
        }
    }
}

/// Asks every prompt in turn, then checks the answers agree.
fn ask(
    prompter: &mut dyn Prompter,
    prompts: &[String],
    vault_id: &str,
) -> Result<Zeroizing<Vec<u8>>, SecretError> {
    let mut answers: Vec<Zeroizing<Vec<u8>>> = Vec::new();
    for prompt in prompts {
        let answer = prompter
            .prompt_secret(prompt)
            .map_err(SecretError::Terminal)?
            .ok_or_else(|| SecretError::PromptEof(vault_id.to_string()))?;
        // ansible checks for emptiness before stripping, so "  " passes and becomes "".
        if answer.is_empty() {
            return Err(SecretError::PromptEmpty);
        }
        answers.push(Zeroizing::new(bytes_strip(answer.as_bytes()).to_vec()));
    }
    let mut answers = answers.into_iter();
    let first = answers.next().unwrap_or_default();
    if answers.any(|other| other != first) {
        return Err(SecretError::PasswordsDiffer);
    }
    Ok(first)
}

/// A password file or script, located but not yet read.
#[derive(Debug)]
enum FileSource {
    File(PathBuf),
    Script(PathBuf),
    Client { path: PathBuf, vault_id: Option<String> },
}

/// ansible's `script_is_client`: the name without its extension ends in `-client`.
fn is_client_name(name: &str) -> bool {
    let base_start = name.rfind('/').map_or(0, |i| i + 1);
    let base = &name[base_start..];
    let stem_len = match base.trim_start_matches('.').rfind('.') {
        Some(dot) => base.len() - base.trim_start_matches('.').len() + dot,
        None => base.len(),
    };
    base[..stem_len].ends_with("-client")
}

impl FileSource {
    fn locate(name: &str, label: Option<&str>) -> Result<FileSource, SecretError> {
        let path = tack_py::ansible::unfrackpath(Path::new(name), false, None);
        let meta = std::fs::metadata(&path).map_err(|_| SecretError::NotFound(path.clone()))?;
        if meta.is_dir() {
            return Err(SecretError::IsDirectory(path));
        }
        if meta.permissions().mode() & 0o111 == 0 {
            return Ok(FileSource::File(path));
        }
        if is_client_name(name) {
            return Ok(FileSource::Client { path, vault_id: label.map(str::to_string) });
        }
        Ok(FileSource::Script(path))
    }

    /// `known` is `None` until a first secret has loaded (ansible's loader then has no secret
    /// list at all, which words its error differently).
    fn load(&self, known: Option<&VaultSecrets>) -> Result<Zeroizing<Vec<u8>>, SecretError> {
        match self {
            FileSource::File(path) => read_password_file(path, known),
            FileSource::Script(path) => run_script(path, None),
            FileSource::Client { path, vault_id } => run_script(path, Some(vault_id)),
        }
    }
}

fn read_password_file(
    path: &Path,
    known: Option<&VaultSecrets>,
) -> Result<Zeroizing<Vec<u8>>, SecretError> {
    let mut raw = Zeroizing::new(Vec::new());
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut raw))
        .map_err(|source| SecretError::Unreadable { path: path.to_path_buf(), source })?;
    let stripped = bytes_strip(&raw);
    let data = if crate::is_encrypted(stripped) {
        let opened = match known {
            Some(known) => known.decrypt_and_get_secret(stripped),
            None => Err(VaultError::SecretsNotSetUp),
        };
        opened
            .map_err(|source| SecretError::Vault { source, excerpt: value_excerpt(stripped) })?
            .plaintext
    } else {
        Zeroizing::new(stripped.to_vec())
    };
    let password = bytes_strip_chars(&data, b"\r\n");
    if password.is_empty() {
        return Err(SecretError::EmptyFile(path.to_path_buf()));
    }
    Ok(Zeroizing::new(password.to_vec()))
}

/// Python's `Popen.returncode`: the exit code, or minus the signal that ended the process.
fn returncode(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().or_else(|| status.signal().map(|s| -s)).unwrap_or(-1)
}

/// Runs a password script. A client script (`client` is `Some(label)`) gets `--vault-id
/// <label>` and has its stderr captured for the error message; a plain one shares our stderr
/// so it can prompt.
fn run_script(
    path: &Path,
    client: Option<&Option<String>>,
) -> Result<Zeroizing<Vec<u8>>, SecretError> {
    let mut command = Command::new(path);
    command.stdout(Stdio::piped());
    if let Some(label) = client {
        if let Some(vault_id) = label.as_deref().filter(|id| !id.is_empty()) {
            command.args(["--vault-id", vault_id]);
        }
        command.stderr(Stdio::piped());
    }
    let spawn_error =
        |source| SecretError::Spawn { path: path.to_path_buf(), client: client.is_some(), source };
    let output = command.spawn().and_then(|child| child.wait_with_output()).map_err(spawn_error)?;
    let stdout = Zeroizing::new(output.stdout);
    let code = returncode(output.status);
    match client {
        Some(label) if code == 2 => {
            return Err(SecretError::ClientUnknownId {
                path: path.to_path_buf(),
                vault_id: label.clone(),
                stderr: output.stderr,
            });
        }
        Some(label) if code != 0 => {
            return Err(SecretError::ClientFailed {
                path: path.to_path_buf(),
                code,
                vault_id: label.clone(),
                stderr: output.stderr,
            });
        }
        None if code != 0 => {
            return Err(SecretError::ScriptFailed { path: path.to_path_buf(), code });
        }
        _ => {}
    }
    let password = bytes_strip_chars(&stdout, b"\r\n");
    if password.is_empty() {
        return Err(SecretError::EmptyScript(path.to_path_buf()));
    }
    Ok(Zeroizing::new(password.to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_scripts_are_recognised_by_name() {
        assert!(is_client_name("/x/vault-client"));
        assert!(is_client_name("vault-client.py"));
        assert!(is_client_name("a.b/my-client.sh"));
        assert!(!is_client_name("vault-client-x"));
        assert!(!is_client_name("/x-client/pass.sh"));
        assert!(is_client_name(".-client"));
        assert!(is_client_name("x/.a-client"));
    }

    #[test]
    fn vault_ids_split_at_the_first_at() {
        assert_eq!(split_vault_id("dev@a@b"), (Some("dev"), "a@b"));
        assert_eq!(split_vault_id("pw"), (None, "pw"));
        assert_eq!(split_vault_id("@pw"), (Some(""), "pw"));
    }
}
