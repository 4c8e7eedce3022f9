//! `vault(wrap_object=true)`'s value. A leaf but for `markers`' opaque-object macro: the
//! filter makes it, the `_protomatter` tag plugins, `unvault` and the value conversions read
//! it, and it names none of them.
//!
//! ansible-core 2.21's filter tags the *secret* it was given with the new ciphertext
//! (`VaultedValue`), and that ciphertext is `str()` of the encrypted bytes (`b'$ANSIBLE...'`,
//! no longer vault text): the value's text is the vault password, `unvault` hands the
//! `b'...'` text back, `vault_encrypted` is false. tack keeps that ciphertext and what reads
//! it (the tag, `unvault`) and refuses every use of the text: a template that shows it would
//! show a secret.

/// What a template gets for a use of the value other than its tag and `unvault`.
pub(crate) const REFUSAL: &str = "tack does not use the value of vault(wrap_object=true) \
     other than through unvault and tag tests: ansible-core 2.21 makes its text the vault \
     secret itself; use the filter without wrap_object for the vault text";

/// The ciphertext `vault(wrap_object=true)` made, as ansible keeps it (`b'...'`).
#[derive(Debug)]
pub(crate) struct VaultWrapped(pub String);

crate::markers::opaque_object!(VaultWrapped);
