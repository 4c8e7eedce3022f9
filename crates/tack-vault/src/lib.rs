//! ansible-vault's formats and secrets.
//!
//! Reads and writes `$ANSIBLE_VAULT;1.1;AES256` and `$ANSIBLE_VAULT;1.2;AES256;<vault-id>`
//! envelopes so files move both ways between tack and ansible-vault, and holds the secrets
//! (passwords with their vault ids) that a run was given. It knows nothing of YAML: callers hand
//! it the envelope text of a whole file or of an inline `!vault` value.
//!
//! ```
//! use tack_vault::{VaultSecret, VaultSecrets, is_encrypted};
//!
//! let secrets = VaultSecrets::new(vec![VaultSecret::new("default", b"hunter2".to_vec())]);
//! let text = secrets.encrypt(b"db_password: s3cret\n", "default").unwrap();
//! assert!(is_encrypted(text.as_bytes()));
//! assert_eq!(secrets.decrypt(text.as_bytes()).unwrap(), b"db_password: s3cret\n");
//! ```
//!
//! Which secret opens an envelope follows ansible-core 2.21 as measured: every secret is tried
//! in the order given, whatever vault id the envelope names; the vault id only narrows the
//! candidates when `vault_id_match` is set, and then only secrets with that id are tried. A
//! malformed envelope stops the search at the first candidate, as in ansible.
//!
//! # Decrypting what a loader finds
//!
//! A whole file: read its bytes, and when [`is_encrypted`] says so, `secrets.decrypt(&bytes)`.
//! An inline `!vault` scalar: hand its text exactly as the YAML parser delivers it (a literal
//! block arrives de-indented, lines joined with `\n`), `secrets.decrypt(text.as_bytes())`.
//! On failure, [`VaultError::to_diagnostic_at`] with the file's [`tack_diag::Origin`] (or the
//! scalar's line and column) gives ansible's error block; ansible wraps it further by context
//! (measured with ansible-playbook 2.21.5): a `vars_files` file fails the run with
//! `Invalid vars_files file '<path>'.` caused by the vault error (exit 1), while an inline
//! value is decrypted lazily and only a task that uses it fails, with `Attempt to use
//! undecryptable variable: <vault error>` at the scalar's origin (the `!vault` tag's column).
//!
//! Where the secrets come from (files, scripts, prompts, settings) is the [`secrets`] module;
//! the file operations behind `ansible-vault` (safe writes, the editor round trip) are [`files`].
//! Passwords and decrypted plaintext live in zeroizing buffers and never enter an error.
//! Python's byte and path rules (`bytes.strip`, `repr`, `os.path`) are `tack_py`'s.

mod cipher;
mod envelope;
mod error;
pub mod files;
mod prompt;
pub mod sealed;
pub mod secrets;

use zeroize::Zeroizing;

pub use envelope::{CIPHER, Envelope, HEADER};
pub use error::VaultError;
pub use prompt::{Prompter, ScriptedPrompter, TerminalPrompter};

/// The vault id used when none is named (ansible's `vault_identity` setting default).
pub const DEFAULT_IDENTITY: &str = "default";

/// One password and the vault id it was given under (`default` when none was named).
#[derive(Clone)]
pub struct VaultSecret {
    pub vault_id: String,
    password: Zeroizing<Vec<u8>>,
}

impl VaultSecret {
    pub fn new(vault_id: impl Into<String>, password: Vec<u8>) -> VaultSecret {
        VaultSecret { vault_id: vault_id.into(), password: Zeroizing::new(password) }
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

/// The secrets a run holds, in the order they were given, and the settings that steer how
/// they are used.
#[derive(Clone, Debug)]
pub struct VaultSecrets {
    secrets: Vec<VaultSecret>,
    /// `vault_id_match`: only try secrets whose id equals the envelope's.
    id_match: bool,
    /// `vault_identity`: the id a 1.1 envelope is taken to carry.
    default_identity: String,
    /// `vault_encrypt_salt`: a fixed salt for encryption instead of 32 random bytes.
    encrypt_salt: Option<Zeroizing<Vec<u8>>>,
}

impl Default for VaultSecrets {
    fn default() -> VaultSecrets {
        VaultSecrets::new(Vec::new())
    }
}

/// A decrypted value and the secret that opened it.
pub struct Decrypted {
    pub plaintext: Zeroizing<Vec<u8>>,
    /// Index into [`VaultSecrets::secrets`] of the secret that worked.
    pub secret: usize,
}

impl VaultSecrets {
    pub fn new(secrets: Vec<VaultSecret>) -> VaultSecrets {
        VaultSecrets {
            secrets,
            id_match: false,
            default_identity: DEFAULT_IDENTITY.to_string(),
            encrypt_salt: None,
        }
    }

    /// Sets `vault_id_match` (ansible's `DEFAULT_VAULT_ID_MATCH`).
    pub fn with_id_match(mut self, id_match: bool) -> VaultSecrets {
        self.id_match = id_match;
        self
    }

    /// Sets `vault_identity` (ansible's `DEFAULT_VAULT_IDENTITY`), the id 1.1 envelopes carry.
    pub fn with_default_identity(mut self, identity: impl Into<String>) -> VaultSecrets {
        self.default_identity = identity.into();
        self
    }

    /// Sets `vault_encrypt_salt`: every encryption uses these bytes as its salt.
    pub fn with_encrypt_salt(mut self, salt: Option<Vec<u8>>) -> VaultSecrets {
        self.encrypt_salt = salt.filter(|s| !s.is_empty()).map(Zeroizing::new);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    pub fn secrets(&self) -> &[VaultSecret] {
        &self.secrets
    }

    pub fn push(&mut self, secret: VaultSecret) {
        self.secrets.push(secret);
    }

    /// Decrypts a whole vault envelope (file contents or an inline `!vault` value).
    pub fn decrypt(&self, vaulttext: &[u8]) -> Result<Vec<u8>, VaultError> {
        let Decrypted { plaintext, .. } = self.decrypt_and_get_secret(vaulttext)?;
        // Whatever a run decrypts is a secret from here on, wherever it goes: the run's
        // stored views mask it ([`sealed`]).
        if let Ok(text) = std::str::from_utf8(&plaintext) {
            sealed::remember_file_text(text);
        }
        Ok(plaintext.to_vec())
    }

    /// Decrypts like [`VaultSecrets::decrypt`], keeping the plaintext in a zeroizing buffer and
    /// saying which secret opened it (`edit` re-encrypts with that one).
    pub fn decrypt_and_get_secret(&self, vaulttext: &[u8]) -> Result<Decrypted, VaultError> {
        if !is_encrypted(vaulttext) {
            return Err(VaultError::NotEncrypted);
        }
        let envelope = envelope::parse(vaulttext, &self.default_identity)?;
        if envelope.cipher != CIPHER {
            return Err(VaultError::UnknownCipher(envelope.cipher));
        }
        if self.secrets.is_empty() {
            return Err(VaultError::NoSecrets);
        }
        let mut body = None;
        for (index, secret) in self.candidates(&envelope.vault_id) {
            let parsed = match &body {
                Some(parsed) => parsed,
                None => body.insert(cipher::Body::parse(&envelope.body)?),
            };
            if let Some(plaintext) = parsed.open(secret.password())? {
                return Ok(Decrypted { plaintext, secret: index });
            }
        }
        Err(VaultError::NoMatchingSecret)
    }

    /// The secrets to try for an envelope naming `vault_id`, in the order to try them.
    fn candidates<'a>(
        &'a self,
        vault_id: &'a str,
    ) -> impl Iterator<Item = (usize, &'a VaultSecret)> + 'a {
        self.secrets.iter().enumerate().filter(move |(_, s)| {
            !self.id_match || (!vault_id.is_empty() && s.vault_id == vault_id)
        })
    }

    /// Parses an envelope's header with this set's default identity (`edit` keeps the vault
    /// id it names).
    pub fn parse_envelope(&self, vaulttext: &[u8]) -> Result<Envelope, VaultError> {
        parse_envelope(vaulttext, &self.default_identity)
    }

    /// Encrypts `plaintext` with the first secret whose id is `vault_id`, into an envelope that
    /// names `vault_id` (1.1 for `default`, 1.2 otherwise), as `ansible-vault encrypt
    /// --encrypt-vault-id` does.
    pub fn encrypt(&self, plaintext: &[u8], vault_id: &str) -> Result<String, VaultError> {
        if self.secrets.is_empty() {
            return Err(VaultError::NoEncryptSecret);
        }
        let secret = self.secrets.iter().find(|s| s.vault_id == vault_id).ok_or_else(|| {
            VaultError::EncryptIdNotFound {
                vault_id: vault_id.to_string(),
                known: self.secrets.iter().map(|s| s.vault_id.clone()).collect(),
            }
        })?;
        self.encrypt_with(plaintext, secret.password(), Some(vault_id))
    }

    /// Encrypts `plaintext` with `password` under an envelope naming `vault_id`, using this
    /// set's salt setting. `rekey` and `edit` use it with a secret chosen elsewhere.
    pub fn encrypt_with(
        &self,
        plaintext: &[u8],
        password: &[u8],
        vault_id: Option<&str>,
    ) -> Result<String, VaultError> {
        if is_encrypted(plaintext) {
            return Err(VaultError::AlreadyEncrypted);
        }
        let random_salt;
        let salt: &[u8] = match &self.encrypt_salt {
            Some(salt) => salt,
            None => {
                random_salt = random_salt_bytes()?;
                &random_salt[..]
            }
        };
        let body = cipher::encrypt(plaintext, password, salt);
        Ok(envelope::format(&body, vault_id))
    }
}

fn random_salt_bytes() -> Result<[u8; cipher::SALT_LEN], VaultError> {
    let mut salt = [0u8; cipher::SALT_LEN];
    getrandom::fill(&mut salt).map_err(|err| VaultError::Random(err.to_string()))?;
    Ok(salt)
}

/// Parses an envelope's header (for `edit` and `rekey`, which keep or report the vault id).
pub fn parse_envelope(vaulttext: &[u8], default_identity: &str) -> Result<Envelope, VaultError> {
    if !is_encrypted(vaulttext) {
        return Err(VaultError::NotEncrypted);
    }
    envelope::parse(vaulttext, default_identity)
}

/// Whether `data` is vault text as ansible-core decides it: pure ASCII, starting with
/// `$ANSIBLE_VAULT`.
pub fn is_encrypted(data: &[u8]) -> bool {
    data.starts_with(HEADER.as_bytes()) && data.is_ascii()
}
