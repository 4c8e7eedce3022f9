//! The `$ANSIBLE_VAULT;<version>;<cipher>[;<vault-id>]` header and the body lines under it.
//!
//! Parsing follows ansible-core's rules exactly, including what it tolerates: any of `\n`,
//! `\r\n`, `\r` between lines, spaces around the header fields, and no stripping of the body
//! lines (so an inline `!vault` value works as YAML delivers it: a literal block has its
//! indentation removed by the YAML parser, not here). Writing produces what ansible-vault
//! writes: 1.1 without a vault id or with `default`, 1.2 with any other id, 80-column lines,
//! a final newline.

use tack_py::text::{bytes_splitlines, bytes_strip};

use crate::VaultError;

pub const HEADER: &str = "$ANSIBLE_VAULT";
/// The only cipher ansible-core reads or writes.
pub const CIPHER: &str = "AES256";
const LINE: usize = 80;

/// A parsed envelope: its header fields and the joined body lines.
#[derive(Debug, PartialEq, Eq)]
pub struct Envelope {
    pub version: String,
    pub cipher: String,
    /// The 1.2 header's vault id, or the caller's default identity when the header has none.
    pub vault_id: String,
    pub body: Vec<u8>,
}

fn field(parts: &[&[u8]], i: usize) -> Result<String, VaultError> {
    let raw = parts.get(i).ok_or(VaultError::Envelope)?;
    // The caller checked the whole text is ASCII.
    Ok(String::from_utf8_lossy(bytes_strip(raw)).into_owned())
}

/// Splits `text` (already known to start with the header and to be ASCII) into its parts.
pub(crate) fn parse(text: &[u8], default_vault_id: &str) -> Result<Envelope, VaultError> {
    let lines = bytes_splitlines(text);
    let first = lines.first().ok_or(VaultError::Envelope)?;
    let parts: Vec<&[u8]> = bytes_strip(first).split(|&b| b == b';').collect();
    let version = field(&parts, 1)?;
    let cipher = field(&parts, 2)?;
    let vault_id = if parts.len() >= 4 { field(&parts, 3)? } else { default_vault_id.to_string() };
    Ok(Envelope { version, cipher, vault_id, body: lines[1..].concat() })
}

/// Wraps a body under its header. `vault_id` other than `default` makes it a 1.2 envelope.
pub(crate) fn format(body: &str, vault_id: Option<&str>) -> String {
    let mut out = String::with_capacity(body.len() + body.len() / LINE + 64);
    out.push_str(HEADER);
    match vault_id {
        Some(id) if !id.is_empty() && id != "default" => {
            out.push_str(";1.2;");
            out.push_str(CIPHER);
            out.push(';');
            out.push_str(id);
        }
        _ => {
            out.push_str(";1.1;");
            out.push_str(CIPHER);
        }
    }
    out.push('\n');
    // The body is hex, so every 80-byte slice falls on a character boundary.
    for chunk in body.as_bytes().chunks(LINE) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_parse_as_ansible_parses_them() {
        let env = parse(b"$ANSIBLE_VAULT;1.1;AES256\nab\ncd\n", "default").unwrap();
        assert_eq!((env.version.as_str(), env.cipher.as_str()), ("1.1", "AES256"));
        assert_eq!(env.vault_id, "default");
        assert_eq!(env.body, b"abcd");
        let env = parse(b" $ANSIBLE_VAULT;1.2 ; AES256;dev \r\nab\r\ncd", "default").unwrap();
        assert_eq!((env.vault_id.as_str(), env.body.as_slice()), ("dev", &b"abcd"[..]));
        // Body lines are not stripped: indentation is the YAML parser's to remove.
        let env = parse(b"$ANSIBLE_VAULT;1.1;AES256\n  ab\n", "default").unwrap();
        assert_eq!(env.body, b"  ab");
        assert_eq!(parse(b"$ANSIBLE_VAULT;1.1\nab", "default"), Err(VaultError::Envelope));
    }

    #[test]
    fn writing_wraps_at_80_columns_and_picks_the_version() {
        let body = "a".repeat(170);
        let text = format(&body, None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "$ANSIBLE_VAULT;1.1;AES256");
        assert_eq!(lines[1].len(), 80);
        assert_eq!(lines[3].len(), 10);
        assert!(text.ends_with("aaa\n"));
        assert!(format("ab", Some("default")).starts_with("$ANSIBLE_VAULT;1.1;AES256\n"));
        assert!(format("ab", Some("dev")).starts_with("$ANSIBLE_VAULT;1.2;AES256;dev\n"));
        assert_eq!(format("", None), "$ANSIBLE_VAULT;1.1;AES256\n");
    }
}
