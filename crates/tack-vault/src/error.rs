//! What can go wrong reading or writing a vault envelope, worded as ansible-core 2.21 words it.
//!
//! `Display` gives ansible's one-line form (a message with its cause appended, as `str(ex)` does
//! in ansible); [`VaultError::to_diagnostic`] gives the chained form that the `[ERROR]:` block
//! prints. No variant carries a password or plaintext: only envelope metadata (vault ids, cipher
//! names) ever reaches a message.

use tack_diag::{Diagnostic, Origin};

use tack_py::repr::{str_list_repr, str_repr};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    /// The header line has fewer than three `;`-separated fields.
    #[error("Vault envelope format error: list index out of range")]
    Envelope,
    /// Hex text that does not decode; `detail` is Python's `binascii` message.
    #[error("Vault format unhexlify error: {detail}")]
    Unhexlify { detail: &'static str },
    /// The decoded body is not `salt\nhmac\nciphertext`.
    #[error("Vault vaulttext format error: not enough values to unpack (expected 3, got {got})")]
    Vaulttext { got: usize },
    /// The HMAC matched but the padding did not: the envelope was written by a broken encoder.
    /// ansible stops with a Python traceback here; tack names the problem.
    #[error("Invalid padding bytes.")]
    Padding,
    #[error("Input is not vault encrypted data.")]
    NotEncrypted,
    #[error("Cipher {} could not be found.", str_repr(.0))]
    UnknownCipher(String),
    #[error("Attempting to decrypt but no vault secrets found.")]
    NoSecrets,
    /// Decrypting before any secret was set up (a vaulted password file read before any other
    /// source loaded).
    #[error("A vault password must be specified to decrypt data.")]
    SecretsNotSetUp,
    #[error("Decryption failed (no vault secrets were found that could decrypt).")]
    NoMatchingSecret,
    #[error("input is already encrypted")]
    AlreadyEncrypted,
    #[error("A vault password must be specified to encrypt data")]
    NoEncryptSecret,
    #[error(
        "Did not find a match for --encrypt-vault-id={vault_id} in the known vault-ids {}",
        str_list_repr(known)
    )]
    EncryptIdNotFound { vault_id: String, known: Vec<String> },
    /// The operating system's random source failed while making a salt.
    #[error("Unable to read random bytes for a salt: {0}")]
    Random(String),
}

impl VaultError {
    /// Whether the envelope itself is malformed. ansible stops at such an error instead of
    /// trying the next secret.
    pub fn is_format_error(&self) -> bool {
        matches!(
            self,
            VaultError::Envelope
                | VaultError::Unhexlify { .. }
                | VaultError::Vaulttext { .. }
                | VaultError::Padding
        )
    }

    pub fn to_diagnostic(&self) -> Diagnostic {
        self.to_diagnostic_at(None)
    }

    /// The error as raised on the vaulted value found at `origin` (a file, or the position of
    /// an inline `!vault` scalar).
    pub fn to_diagnostic_at(&self, origin: Option<Origin>) -> Diagnostic {
        let (message, cause) = match self {
            VaultError::Envelope => ("Vault envelope format error.", "list index out of range"),
            VaultError::Unhexlify { detail } => ("Vault format unhexlify error.", *detail),
            VaultError::Vaulttext { .. } => {
                let text = self.to_string();
                let cause = text.trim_start_matches("Vault vaulttext format error: ").to_string();
                return Diagnostic::caused_by(
                    "Vault vaulttext format error.",
                    origin,
                    Diagnostic::new(cause),
                );
            }
            other => return Diagnostic::at(other.to_string(), origin),
        };
        Diagnostic::caused_by(message, origin, Diagnostic::new(cause))
    }
}

impl From<VaultError> for Diagnostic {
    fn from(err: VaultError) -> Diagnostic {
        err.to_diagnostic()
    }
}

/// ansible's `textwrap.shorten(str(value), 120)` of a bytes value: the excerpt it prints under
/// an origin that has no file to quote from.
pub(crate) fn value_excerpt(data: &[u8]) -> String {
    tack_py::textwrap::shorten(&tack_py::repr::bytes_repr(data), 120)
}
