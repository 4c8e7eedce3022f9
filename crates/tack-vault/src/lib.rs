//! ansible-vault's formats and secrets.
//!
//! Reads and writes `$ANSIBLE_VAULT;1.1;AES256` and `$ANSIBLE_VAULT;1.2;AES256;<vault-id>`
//! envelopes so files move both ways between tack and ansible-vault, and holds the secrets
//! (passwords with their vault ids) that a run was given. It knows nothing of YAML: callers hand
//! it the envelope text of a whole file or of an inline `!vault` value.

use tack_diag::Diagnostic;

/// One password and the vault id it was given under (`default` when none was named).
#[derive(Clone)]
pub struct VaultSecret {
    pub vault_id: String,
    password: Vec<u8>,
}

impl VaultSecret {
    pub fn new(vault_id: impl Into<String>, password: Vec<u8>) -> VaultSecret {
        VaultSecret { vault_id: vault_id.into(), password }
    }

    pub fn password(&self) -> &[u8] {
        &self.password
    }
}

impl std::fmt::Debug for VaultSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VaultSecret({}, ********)", self.vault_id)
    }
}

/// The secrets a run holds, in the order they were given.
#[derive(Clone, Debug, Default)]
pub struct VaultSecrets {
    secrets: Vec<VaultSecret>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum VaultError {
    #[error("Attempting to decrypt but no vault secrets found.")]
    NoSecrets,
    #[error("the vault format is being built")]
    NotBuilt,
}

impl VaultError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::new(self.to_string())
    }
}

impl VaultSecrets {
    pub fn new(secrets: Vec<VaultSecret>) -> VaultSecrets {
        VaultSecrets { secrets }
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    pub fn secrets(&self) -> &[VaultSecret] {
        &self.secrets
    }

    /// Decrypts a whole vault envelope (file contents or an inline `!vault` value).
    pub fn decrypt(&self, vaulttext: &[u8]) -> Result<Vec<u8>, VaultError> {
        let _ = vaulttext;
        if self.secrets.is_empty() {
            return Err(VaultError::NoSecrets);
        }
        Err(VaultError::NotBuilt)
    }
}

/// Whether `data` starts with a vault envelope header.
pub fn is_encrypted(data: &[u8]) -> bool {
    data.starts_with(b"$ANSIBLE_VAULT;")
}
