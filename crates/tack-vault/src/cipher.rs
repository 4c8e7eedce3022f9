//! The `AES256` vault cipher: PBKDF2-HMAC-SHA256 key derivation (10 000 rounds, 80 bytes split
//! into an AES key, an HMAC key and a counter block), AES-256-CTR over PKCS#7-padded plaintext,
//! and an HMAC-SHA256 of the ciphertext checked in constant time before anything is decrypted.
//!
//! Owns the vaulttext *body* only (`hexlify(hexlify(salt) \n hexlify(hmac) \n hexlify(ct))`);
//! the `$ANSIBLE_VAULT` header and the 80-column wrapping belong to `envelope`.

use aes::Aes256;
use ctr::cipher::{KeyIvInit, StreamCipher};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::VaultError;

type Aes256Ctr = ctr::Ctr128BE<Aes256>;
type HmacSha256 = Hmac<Sha256>;

const KEY_LEN: usize = 32;
const IV_LEN: usize = 16;
const ROUNDS: u32 = 10_000;
const BLOCK: usize = 16;
/// ansible-vault's salt length when none is configured.
pub(crate) const SALT_LEN: usize = 32;

/// The three values PBKDF2 yields for one (password, salt).
struct Keys {
    material: Zeroizing<[u8; 2 * KEY_LEN + IV_LEN]>,
}

impl Keys {
    fn derive(password: &[u8], salt: &[u8]) -> Keys {
        let mut material = Zeroizing::new([0u8; 2 * KEY_LEN + IV_LEN]);
        pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, ROUNDS, &mut material[..]);
        Keys { material }
    }

    fn cipher_key(&self) -> &[u8] {
        &self.material[..KEY_LEN]
    }

    fn hmac_key(&self) -> &[u8] {
        &self.material[KEY_LEN..2 * KEY_LEN]
    }

    fn iv(&self) -> &[u8] {
        &self.material[2 * KEY_LEN..]
    }

    fn apply_keystream(&self, data: &mut [u8]) {
        // Both slices come from fixed-size arrays of exactly the lengths AES-256-CTR takes.
        let mut cipher = Aes256Ctr::new(self.cipher_key().into(), self.iv().into());
        cipher.apply_keystream(data);
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC accepts keys of any length, so this cannot fail.
        <HmacSha256 as Mac>::new_from_slice(self.hmac_key()).unwrap_or_else(|_| unreachable!())
    }
}

/// PKCS#7 padding to whole 16-byte blocks; a full block when the input is already aligned.
fn pad(plaintext: &[u8]) -> Zeroizing<Vec<u8>> {
    let n = BLOCK - plaintext.len() % BLOCK;
    let mut padded = Zeroizing::new(Vec::with_capacity(plaintext.len() + n));
    padded.extend_from_slice(plaintext);
    padded.resize(plaintext.len() + n, n as u8);
    padded
}

/// Removes PKCS#7 padding, refusing what `cryptography`'s unpadder refuses.
fn unpad(mut padded: Zeroizing<Vec<u8>>) -> Result<Zeroizing<Vec<u8>>, VaultError> {
    let len = padded.len();
    if len == 0 || !len.is_multiple_of(BLOCK) {
        return Err(VaultError::Padding);
    }
    let n = padded[len - 1] as usize;
    if n == 0 || n > BLOCK || padded[len - n..].iter().any(|&b| b as usize != n) {
        return Err(VaultError::Padding);
    }
    padded.truncate(len - n);
    Ok(padded)
}

/// Encrypts `plaintext` under `password` with `salt`, returning the vaulttext body (not yet
/// wrapped into lines).
pub(crate) fn encrypt(plaintext: &[u8], password: &[u8], salt: &[u8]) -> String {
    let keys = Keys::derive(password, salt);
    let mut data = pad(plaintext);
    keys.apply_keystream(&mut data);
    let mut mac = keys.mac();
    mac.update(&data);
    let tag = mac.finalize().into_bytes();
    let inner = format!("{}\n{}\n{}", hex::encode(salt), hex::encode(tag), hex::encode(&*data));
    hex::encode(inner)
}

/// A vaulttext body split into its parts, checked for format once and then tried against
/// each candidate secret.
pub(crate) struct Body {
    salt: Vec<u8>,
    hmac_hex: Vec<u8>,
    ciphertext: Vec<u8>,
}

fn unhexlify(data: &[u8]) -> Result<Vec<u8>, VaultError> {
    hex::decode(data).map_err(|err| VaultError::Unhexlify {
        detail: match err {
            hex::FromHexError::OddLength => "Odd-length string",
            _ => "Non-hexadecimal digit found",
        },
    })
}

impl Body {
    /// Splits the joined body lines of an envelope, as ansible's `parse_vaulttext` does.
    pub(crate) fn parse(body: &[u8]) -> Result<Body, VaultError> {
        let inner = unhexlify(body)?;
        let mut parts = inner.splitn(3, |&b| b == b'\n');
        let (Some(salt), Some(hmac_hex), Some(ciphertext)) =
            (parts.next(), parts.next(), parts.next())
        else {
            let got = inner.splitn(3, |&b| b == b'\n').count();
            return Err(VaultError::Vaulttext { got });
        };
        Ok(Body {
            salt: unhexlify(salt)?,
            hmac_hex: hmac_hex.to_vec(),
            ciphertext: unhexlify(ciphertext)?,
        })
    }

    /// The plaintext when `password` opens this body, `None` when its HMAC does not match.
    /// A malformed HMAC field is a format error, as in ansible, whatever the password.
    pub(crate) fn open(&self, password: &[u8]) -> Result<Option<Zeroizing<Vec<u8>>>, VaultError> {
        let expected = unhexlify(&self.hmac_hex)?;
        let keys = Keys::derive(password, &self.salt);
        let mut mac = keys.mac();
        mac.update(&self.ciphertext);
        if mac.verify_slice(&expected).is_err() {
            return Ok(None);
        }
        let mut data = Zeroizing::new(self.ciphertext.clone());
        keys.apply_keystream(&mut data);
        unpad(data).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_derivation_matches_pbkdf2_sha256_vector() {
        // Expected value from Python's hashlib.pbkdf2_hmac('sha256', b'secret', b'salt',
        // 10000, 80), the derivation ansible-vault asks `cryptography` for.
        let keys = Keys::derive(b"secret", b"salt");
        assert_eq!(
            hex::encode(&keys.material[..]),
            concat!(
                "2d4df0b3b309b13fa67d356df946489f9ab497d6f73857cbc774c141f0b137ce",
                "f41d82b4d277b1463f1b17e050832c9de3ea56993a0d79cb8f17a6d4b4c5ee24",
                "4d30bb91e47cce1ec3fad918f9714763"
            )
        );
        assert_eq!(hex::encode(keys.iv()), "4d30bb91e47cce1ec3fad918f9714763");
    }

    #[test]
    fn padding_is_pkcs7_with_a_full_block_when_aligned() {
        assert_eq!(&pad(b"")[..], &[16u8; 16][..]);
        assert_eq!(&pad(b"abc")[3..], &[13u8; 13][..]);
        assert_eq!(pad(&[0u8; 16]).len(), 32);
        assert_eq!(&unpad(pad(b"abc")).unwrap()[..], b"abc");
        assert_eq!(&unpad(pad(b"")).unwrap()[..], b"");
    }

    #[test]
    fn bad_padding_is_refused() {
        let z = |v: Vec<u8>| Zeroizing::new(v);
        assert_eq!(unpad(z(vec![])), Err(VaultError::Padding));
        assert_eq!(unpad(z(vec![1u8; 15])), Err(VaultError::Padding));
        assert_eq!(unpad(z(vec![0u8; 16])), Err(VaultError::Padding));
        assert_eq!(unpad(z(vec![17u8; 16])), Err(VaultError::Padding));
        let mut uneven = vec![3u8; 16];
        uneven[13] = 2;
        assert_eq!(unpad(z(uneven)), Err(VaultError::Padding));
    }

    #[test]
    fn round_trip_and_wrong_password() {
        let body = encrypt(b"hello", b"pw", b"0123456789abcdef0123456789abcdef");
        let parsed = Body::parse(body.as_bytes()).unwrap();
        assert_eq!(&parsed.open(b"pw").unwrap().unwrap()[..], b"hello");
        assert!(parsed.open(b"other").unwrap().is_none());
    }

    #[test]
    fn tampered_ciphertext_fails_the_hmac() {
        let body = encrypt(b"hello", b"pw", b"salt");
        let mut parsed = Body::parse(body.as_bytes()).unwrap();
        parsed.ciphertext[0] ^= 1;
        assert!(parsed.open(b"pw").unwrap().is_none());
        // A truncated tag is a mismatch, not a crash.
        let mut parsed = Body::parse(body.as_bytes()).unwrap();
        parsed.hmac_hex.truncate(10);
        assert!(parsed.open(b"pw").unwrap().is_none());
    }

    #[test]
    fn malformed_bodies_are_format_errors() {
        assert_eq!(
            Body::parse(b"abc").err(),
            Some(VaultError::Unhexlify { detail: "Odd-length string" })
        );
        assert_eq!(
            Body::parse(b"zz").err(),
            Some(VaultError::Unhexlify { detail: "Non-hexadecimal digit found" })
        );
        assert_eq!(Body::parse(b"").err(), Some(VaultError::Vaulttext { got: 1 }));
        assert_eq!(
            Body::parse(hex::encode("ab\ncd").as_bytes()).err(),
            Some(VaultError::Vaulttext { got: 2 })
        );
        let bad_hmac = hex::encode("abcd\nxyz\nabcd");
        let body = Body::parse(bad_hmac.as_bytes()).unwrap();
        assert_eq!(
            body.open(b"pw").err(),
            Some(VaultError::Unhexlify { detail: "Odd-length string" })
        );
    }
}
