//! Vault secrets from `--vault-password-file` and `--vault-id [label@]file`, read as ansible
//! reads them: a plain file's contents stripped of surrounding whitespace, an executable
//! file's standard output likewise. Prompting (`--ask-vault-pass`, `label@prompt`) is refused
//! by name. Passwords never appear in messages.

use std::path::Path;
use std::process::Command;

use tack_diag::{Diagnostic, ErrorClass};
use tack_vault::{VaultSecret, VaultSecrets};

use crate::options::VaultOpts;

fn refuse(what: &str) -> Diagnostic {
    Diagnostic::new(format!(
        "tack inventory does not support {what}: prompting for vault passwords is not implemented"
    ))
    .with_class(ErrorClass::Options)
}

/// The password in `path`, or the output of `path` when it is executable.
fn read_password(path: &Path) -> Result<Vec<u8>, Diagnostic> {
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display();
    let meta = std::fs::metadata(path)
        .map_err(|_| Diagnostic::new(format!("The vault password file {shown} was not found")))?;
    let raw = if meta.permissions().mode() & 0o111 != 0 && meta.is_file() {
        let out = Command::new(path).output().map_err(|e| {
            Diagnostic::new(format!("Problem running vault password script {shown} ({e}). If this is not a script, remove the executable bit from the file."))
        })?;
        if !out.status.success() {
            return Err(Diagnostic::new(format!(
                "Vault password script {shown} returned non-zero ({}): {}",
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
        out.stdout
    } else {
        std::fs::read(path).map_err(|e| {
            Diagnostic::new(format!("Could not read vault password file {shown}: {e}"))
        })?
    };
    let text = String::from_utf8_lossy(&raw);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(Diagnostic::new(format!(
            "Invalid vault password was provided from file ({shown})"
        )));
    }
    Ok(trimmed.as_bytes().to_vec())
}

/// The secrets the vault options name, in ansible's order (`--vault-id` values, then password
/// files under the default id).
pub fn setup(opts: &VaultOpts) -> Result<VaultSecrets, Diagnostic> {
    if opts.ask_vault_pass {
        return Err(refuse("--ask-vault-pass"));
    }
    let mut secrets = Vec::new();
    for id in &opts.vault_ids {
        let (label, source) = match id.split_once('@') {
            Some((label, source)) => (label.to_string(), source.to_string()),
            None => ("default".to_string(), id.clone()),
        };
        if source == "prompt" || source == "prompt_ask_vault_pass" {
            return Err(refuse("--vault-id ...@prompt"));
        }
        secrets.push(VaultSecret::new(label, read_password(Path::new(&source))?));
    }
    for file in &opts.vault_password_files {
        secrets.push(VaultSecret::new("default", read_password(file)?));
    }
    Ok(VaultSecrets::new(secrets))
}
