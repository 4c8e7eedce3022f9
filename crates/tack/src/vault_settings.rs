//! The vault settings `tack vault` runs with: `ansible.cfg` and the `ANSIBLE_VAULT_*`,
//! `EDITOR`, `PAGER` environment variables, as tack-config resolves them.

use std::path::Path;

use tack_config::Config;
use tack_diag::Diagnostic;
use tack_vault::files::EditorSettings;
use tack_vault::secrets::VaultSettings;

/// What the command needs beyond its flags.
pub(crate) struct Settings {
    pub vault: VaultSettings,
    pub ask_vault_pass: bool,
    pub editor: EditorSettings,
    /// `pager`: `None` when set to the empty string (ansible then looks for `less`).
    pub pager: Option<String>,
}

fn text(config: &Config, name: &str) -> Option<String> {
    config.get(name).and_then(|v| v.as_str()).map(str::to_string)
}

/// The vault, editor and pager settings from ansible.cfg and the environment (already
/// resolved by tack-config with ansible's precedence and types).
pub(crate) fn load(config: &Config) -> Result<Settings, Diagnostic> {
    let mut vault = VaultSettings::default();
    if let Some(identity) = config.vault_identity() {
        vault.identity = identity.to_string();
    }
    vault.identity_list = config.vault_identity_list();
    vault.password_file = config.vault_password_file();
    vault.id_match = config.vault_id_match();
    vault.encrypt_identity = config.vault_encrypt_identity().map(str::to_string);
    vault.encrypt_salt = text(config, "VAULT_ENCRYPT_SALT");
    let ask_vault_pass =
        config.get("DEFAULT_ASK_VAULT_PASS").and_then(|v| v.as_bool()).unwrap_or(false);
    let home = std::env::var("HOME").unwrap_or_else(|_| "/".to_string());
    let local_tmp =
        config.local_tmp().unwrap_or_else(|| Path::new(&home).join(".ansible").join("tmp"));
    let editor = EditorSettings {
        command: text(config, "EDITOR").unwrap_or_else(|| "vi".to_string()),
        local_tmp,
    };
    let pager = match config.get("PAGER") {
        Some(v) => match v.as_str() {
            Some("") => None,
            Some(p) => Some(p.to_string()),
            None => Some("less".to_string()),
        },
        None => Some("less".to_string()),
    };
    Ok(Settings { vault, ask_vault_pass, editor, pager })
}
