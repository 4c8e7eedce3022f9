//! The vault settings `tack vault` runs with, read from the environment variables ansible-core
//! reads them from (`ANSIBLE_VAULT_*`, `EDITOR`, `PAGER`, ...).
//!
//! `ansible.cfg` is the configuration crate's to read; until `tack vault` is wired to it, a
//! config file that sets one of these keys is refused by name rather than silently ignored.

use std::path::{Path, PathBuf};

use tack_diag::{Diagnostic, ErrorClass};
use tack_vault::files::EditorSettings;
use tack_vault::paths;
use tack_vault::secrets::VaultSettings;

/// The `[defaults]` keys that change what `ansible-vault` does.
const VAULT_KEYS: &[&str] = &[
    "vault_password_file",
    "vault_identity_list",
    "vault_identity",
    "vault_id_match",
    "vault_encrypt_identity",
    "vault_encrypt_salt",
    "ask_vault_pass",
    "editor",
    "pager",
    "local_tmp",
];

/// What the command needs beyond its flags.
pub struct Settings {
    pub vault: VaultSettings,
    pub ask_vault_pass: bool,
    pub editor: EditorSettings,
    /// `pager`: `None` when set to the empty string (ansible then looks for `less`).
    pub pager: Option<String>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The value of the last of `names` that is set: ansible's rule when a setting has several
/// environment variables (so `EDITOR` wins over `ANSIBLE_EDITOR`, as measured).
fn last_env(names: &[&str]) -> Option<String> {
    names.iter().filter_map(|n| env(n)).next_back()
}

/// ansible's `boolean()` of a setting's text.
fn boolean(name: &str, value: &str) -> Result<bool, Diagnostic> {
    match value.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" | "on" | "1" | "true" | "t" | "1.0" => Ok(true),
        "n" | "no" | "off" | "0" | "false" | "f" | "0.0" | "" => Ok(false),
        _ => Err(Diagnostic::new(format!(
            "Invalid type for configuration option {name}: The value {value:?} is not a valid \
             boolean."
        ))
        .with_class(ErrorClass::Options)),
    }
}

/// ansible's search for a config file, first found wins.
fn config_file() -> Option<PathBuf> {
    if let Some(path) = env("ANSIBLE_CONFIG").map(PathBuf::from) {
        let path = if path.is_dir() { path.join("ansible.cfg") } else { path };
        if path.is_file() {
            return Some(path);
        }
    }
    let home = env("HOME").map(|h| Path::new(&h).join(".ansible.cfg"));
    [Some(PathBuf::from("ansible.cfg")), home, Some(PathBuf::from("/etc/ansible/ansible.cfg"))]
        .into_iter()
        .flatten()
        .find(|p| p.is_file())
}

/// Refuses a config file that sets a vault setting tack vault cannot read yet.
fn refuse_config_settings() -> Result<(), Diagnostic> {
    let Some(path) = config_file() else { return Ok(()) };
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(()) };
    for line in text.lines() {
        let key = line.split(['=', ':']).next().unwrap_or("").trim();
        if VAULT_KEYS.contains(&key) {
            return Err(Diagnostic::new(format!(
                "tack vault does not read ansible.cfg yet, and {} sets '{key}'. Set it with its \
                 ANSIBLE_* environment variable or a command-line option instead.",
                path.display()
            ))
            .with_class(ErrorClass::Options));
        }
    }
    Ok(())
}

pub fn load() -> Result<Settings, Diagnostic> {
    refuse_config_settings()?;
    let mut vault = VaultSettings::default();
    if let Some(identity) = env("ANSIBLE_VAULT_IDENTITY") {
        vault.identity = identity;
    }
    if let Some(list) = env("ANSIBLE_VAULT_IDENTITY_LIST") {
        vault.identity_list = list.split(',').map(|s| s.trim().to_string()).collect();
    }
    vault.password_file =
        env("ANSIBLE_VAULT_PASSWORD_FILE").map(|p| paths::unfrack(Path::new(&p), false));
    if let Some(value) = env("ANSIBLE_VAULT_ID_MATCH") {
        vault.id_match = boolean("DEFAULT_VAULT_ID_MATCH", &value)?;
    }
    vault.encrypt_identity = env("ANSIBLE_VAULT_ENCRYPT_IDENTITY");
    vault.encrypt_salt = env("ANSIBLE_VAULT_ENCRYPT_SALT");
    let ask_vault_pass = match env("ANSIBLE_ASK_VAULT_PASS") {
        Some(value) => boolean("DEFAULT_ASK_VAULT_PASS", &value)?,
        None => false,
    };
    let home = env("HOME").unwrap_or_else(|| "/".to_string());
    let local_tmp = env("ANSIBLE_LOCAL_TEMP")
        .map(|p| paths::unfrack(Path::new(&p), false))
        .unwrap_or_else(|| Path::new(&home).join(".ansible").join("tmp"));
    let editor = EditorSettings {
        command: last_env(&["ANSIBLE_EDITOR", "EDITOR"]).unwrap_or_else(|| "vi".to_string()),
        local_tmp,
    };
    let pager = match last_env(&["ANSIBLE_PAGER", "PAGER"]) {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(p),
        None => Some("less".to_string()),
    };
    Ok(Settings { vault, ask_vault_pass, editor, pager })
}
