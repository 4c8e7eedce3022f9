//! Encoding filters: `b64encode`, `b64decode`, `to_uuid`, `vault`, `unvault`.
//!
//! `b64decode` follows CPython's lenient `binascii.a2b_base64` (characters outside the alphabet
//! are skipped, a complete padding group ends the input) rather than a strict decoder, because
//! ansible accepts what that accepts. Vault encryption goes through `tack_vault`; plaintext and
//! secrets never appear in an error.

use base64::Engine as _;
use minijinja::value::ValueKind;
use minijinja::{State, Value};
use sha1::{Digest, Sha1};
use tack_vault::{VaultSecret, VaultSecrets};

use super::args::{Bound, Sig};
use super::pyval::{self, class_repr, str_of};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new(
        "b64encode",
        Sig::new("b64encode", &["string", "encoding", "urlsafe"], 1),
        b64encode,
    ),
    Entry::new(
        "b64decode",
        Sig::new("b64decode", &["string", "encoding", "urlsafe"], 1),
        b64decode,
    ),
    Entry::new("to_uuid", Sig::new("to_uuid", &["string", "namespace"], 1), to_uuid),
    Entry::new(
        "vault",
        Sig::new("do_vault", &["data", "secret", "salt", "vault_id", "wrap_object"], 2),
        vault,
    ),
    Entry::new("unvault", Sig::new("do_unvault", &["vault", "secret", "vault_id"], 2), unvault)
        .accepting_undefined(),
];

/// `str.encode(encoding)` for the codecs templates name.
pub(super) fn encode(text: &str, encoding: &str) -> Result<Vec<u8>, FilterError> {
    let normal = encoding.to_ascii_lowercase().replace(['-', ' '], "_");
    match normal.as_str() {
        "utf_8" | "utf8" | "u8" => Ok(text.as_bytes().to_vec()),
        "utf_16" | "utf16" => {
            let mut out = vec![0xff, 0xfe];
            out.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
            Ok(out)
        }
        "utf_16_le" | "utf_16le" => Ok(text.encode_utf16().flat_map(u16::to_le_bytes).collect()),
        "utf_16_be" | "utf_16be" => Ok(text.encode_utf16().flat_map(u16::to_be_bytes).collect()),
        "latin_1" | "latin1" | "iso_8859_1" | "iso8859_1" | "l1" | "ascii" | "us_ascii" => {
            let limit = if normal.contains("ascii") { 0x80 } else { 0x100 };
            let codec = if limit == 0x80 { "ascii" } else { "latin-1" };
            text.chars()
                .enumerate()
                .map(|(i, c)| {
                    u8::try_from(c as u32).ok().filter(|&b| u32::from(b) < limit).ok_or_else(|| {
                        FilterError::failed(format!(
                            "'{codec}' codec can't encode character {} in position {i}: ordinal \
                             not in range({limit})",
                            char_repr(c)
                        ))
                    })
                })
                .collect()
        }
        _ => Err(FilterError::failed(format!("unknown encoding: {encoding}"))),
    }
}

fn char_repr(c: char) -> String {
    let u = c as u32;
    if u < 0x100 {
        format!("'\\x{u:02x}'")
    } else if u < 0x10000 {
        format!("'\\u{u:04x}'")
    } else {
        format!("'\\U{u:08x}'")
    }
}

/// `bytes.decode(encoding)`; bytes the codec cannot read are replaced (ansible keeps them as
/// lone surrogates, which no Rust string can hold).
fn decode(bytes: &[u8], encoding: &str) -> Result<String, FilterError> {
    let normal = encoding.to_ascii_lowercase().replace(['-', ' '], "_");
    let units = |be: bool, data: &[u8]| -> Vec<u16> {
        data.chunks(2)
            .map(|c| {
                let pair = [c[0], c.get(1).copied().unwrap_or(0)];
                if be { u16::from_be_bytes(pair) } else { u16::from_le_bytes(pair) }
            })
            .collect()
    };
    match normal.as_str() {
        "utf_8" | "utf8" | "u8" => Ok(String::from_utf8_lossy(bytes).into_owned()),
        "utf_16" | "utf16" => {
            let (be, data) = match bytes {
                [0xfe, 0xff, rest @ ..] => (true, rest),
                [0xff, 0xfe, rest @ ..] => (false, rest),
                _ => (false, bytes),
            };
            Ok(String::from_utf16_lossy(&units(be, data)))
        }
        "utf_16_le" | "utf_16le" => Ok(String::from_utf16_lossy(&units(false, bytes))),
        "utf_16_be" | "utf_16be" => Ok(String::from_utf16_lossy(&units(true, bytes))),
        "latin_1" | "latin1" | "iso_8859_1" | "iso8859_1" | "l1" => {
            Ok(bytes.iter().map(|&b| char::from(b)).collect())
        }
        "ascii" | "us_ascii" => {
            Ok(bytes.iter().map(|&b| if b < 0x80 { char::from(b) } else { '\u{fffd}' }).collect())
        }
        _ => Err(FilterError::failed(format!("unknown encoding: {encoding}"))),
    }
}

fn flag(args: &Bound, i: usize) -> bool {
    args.get(i).is_some_and(pyval::truthy)
}

fn encoding_arg(args: &Bound) -> String {
    args.get(1).map(str_of).unwrap_or_else(|| "utf-8".into())
}

fn b64encode(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    // ansible's `to_bytes` hands `bytes` through as they are.
    let bytes = match args.input().downcast_object_ref::<crate::pybytes::PyBytes>() {
        Some(bytes) => bytes.0.clone(),
        None => encode(&str_of(args.input()), &encoding_arg(args))?,
    };
    let engine = if flag(args, 2) {
        &base64::engine::general_purpose::URL_SAFE
    } else {
        &base64::engine::general_purpose::STANDARD
    };
    Ok(Value::from(engine.encode(bytes)))
}

/// CPython's non-strict `binascii.a2b_base64`.
fn a2b_base64(data: &[u8]) -> Result<Vec<u8>, FilterError> {
    tack_py::binascii::a2b_base64(data).map_err(FilterError::failed)
}

fn b64decode(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let text = str_of(args.input());
    let encoding = encoding_arg(args);
    let mut bytes = text.into_bytes();
    if flag(args, 2) {
        for b in &mut bytes {
            *b = match *b {
                b'-' => b'+',
                b'_' => b'/',
                other => other,
            };
        }
    }
    let raw = a2b_base64(&bytes)?;
    decode(&raw, &encoding).map(Value::from)
}

/// ansible's UUID namespace for `to_uuid`.
const ANSIBLE_NAMESPACE: [u8; 16] = [
    0x36, 0x1e, 0x6d, 0x51, 0xfa, 0xec, 0x44, 0x4a, 0x90, 0x79, 0x34, 0x13, 0x86, 0xda, 0x8e, 0x2e,
];

/// Python's `uuid.UUID(text)`, or its `ValueError` text.
fn parse_uuid(text: &str) -> Result<[u8; 16], String> {
    let hex = text.replace("urn:", "").replace("uuid:", "");
    let hex = hex.trim_matches(['{', '}']).replace('-', "");
    if hex.chars().count() != 32 {
        return Err("badly formed hexadecimal UUID string".into());
    }
    let value = super::math::parse_int(&hex, 16).map(|v| v as u128).ok_or_else(|| {
        format!("invalid literal for int() with base 16: {}", tack_yaml::pyrepr::str_repr(&hex))
    })?;
    Ok(value.to_be_bytes())
}

fn to_uuid(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let namespace = match args.get(1) {
        None => ANSIBLE_NAMESPACE,
        Some(ns) => {
            let parsed = match ns.as_str() {
                Some(s) => parse_uuid(s),
                None => {
                    Err(format!("'{}' object has no attribute 'replace'", pyval::type_name(ns)))
                }
            };
            parsed.map_err(|e| {
                FilterError::failed(format!("Invalid value '{}' for 'namespace': {e}", str_of(ns)))
            })?
        }
    };
    let mut hasher = Sha1::new();
    hasher.update(namespace);
    hasher.update(str_of(args.input()).as_bytes());
    let digest = hasher.finalize();
    let mut b = [0u8; 16];
    b.copy_from_slice(&digest[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(Value::from(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )))
}

fn vault(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let data = args.input();
    let secret = args.get(1).cloned().unwrap_or_default();
    if secret.kind() != ValueKind::String {
        return Err(FilterError::failed(format!(
            "Secret passed is required to be a string, instead we got {}.",
            class_repr(&secret)
        )));
    }
    if data.kind() != ValueKind::String {
        return Err(FilterError::failed(format!(
            "Can only vault strings, instead we got {}.",
            class_repr(data)
        )));
    }
    let vault_id = args.opt(3).map(str_of).unwrap_or_else(|| "filter_default".into());
    let salt = match args.opt(2) {
        None => None,
        Some(s) => {
            let s = str_of(s);
            if s.is_empty() {
                return Err(FilterError::failed("Unable to encrypt."));
            }
            Some(s.into_bytes())
        }
    };
    let password = secret.as_str().unwrap_or_default().as_bytes().to_vec();
    let secrets = VaultSecrets::new(vec![VaultSecret::new(vault_id.clone(), password.clone())])
        .with_encrypt_salt(salt);
    let text = secrets
        .encrypt_with(data.as_str().unwrap_or_default().as_bytes(), &password, Some(&vault_id))
        .map_err(|e| FilterError::caused("Unable to encrypt.", &e.to_string()))?;
    if args.get(4).is_some_and(pyval::truthy) {
        // ansible keeps `str()` of the encrypted bytes as the ciphertext: their repr.
        let ciphertext = tack_py::repr::bytes_repr(text.as_bytes());
        return Ok(Value::from_object(crate::vault_wrapped::VaultWrapped(ciphertext)));
    }
    Ok(Value::from(text))
}

fn unvault(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    if let Some(undefined) = [args.get(0), args.get(1), args.get(2)]
        .into_iter()
        .flatten()
        .find(|v| super::is_undefined(v))
    {
        return Ok(undefined.clone());
    }
    let vaulted = args.input();
    // The ciphertext of a wrapped value (ansible's `VaultedValue` tag) or of an undecryptable
    // one (its marker) is what unvault reads.
    let wrapped = vaulted
        .downcast_object_ref::<crate::vault_wrapped::VaultWrapped>()
        .map(|w| w.0.clone())
        .or_else(|| crate::markers::disarm(vaulted));
    let vaulted = &wrapped.map_or_else(|| vaulted.clone(), Value::from);
    let secret = args.get(1).cloned().unwrap_or_default();
    if secret.kind() != ValueKind::String {
        return Err(FilterError::failed(format!(
            "Secret passed is required to be as string, instead we got {}.",
            class_repr(&secret)
        )));
    }
    let Some(text) = vaulted.as_str() else {
        return Err(FilterError::failed(format!(
            "Vault should be in the form of a string, instead we got {}.",
            class_repr(vaulted)
        )));
    };
    if !tack_vault::is_encrypted(text.as_bytes()) {
        return Ok(Value::from(text));
    }
    let vault_id = args.opt(2).map(str_of).unwrap_or_else(|| "filter_default".into());
    let password = secret.as_str().unwrap_or_default().as_bytes().to_vec();
    let secrets = VaultSecrets::new(vec![VaultSecret::new(vault_id, password)]);
    let plain = secrets
        .decrypt(text.as_bytes())
        .map_err(|e| FilterError::caused("Unable to decrypt.", &e.to_string()))?;
    Ok(Value::from(String::from_utf8_lossy(&plain).into_owned()))
}
