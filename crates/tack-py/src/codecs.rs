//! `str.encode(name)`: CPython's codec lookup and its text encoders, with its error messages.
//!
//! ansible's `template` writes its rendered text with `to_bytes(text, output_encoding)`, so the
//! encoding a playbook names is resolved the way CPython's registry resolves it: the name is
//! normalised, looked up in the alias table, and the codec module found under the `encodings`
//! package. The tables (aliases, the modules and their kind, every single-byte codec's map) are
//! generated from the reference's interpreter by `scripts/gen-py-codecs.py`; the rules that
//! read them are here.
//!
//! What is encoded: the UTF-8/16/32 family, `latin-1`, `ascii`, every charmap codec (`cp1251`,
//! `iso8859-15`, `koi8-r`, `mac-roman`, the EBCDIC code pages ...). What is not: the CJK
//! multi-byte codecs, `utf-7`, `idna`, `punycode` and the escape codecs. [`encode`] answers
//! [`EncodeError::Unsupported`] for those so the caller can refuse them by name rather than
//! write different bytes than ansible would.
//!
//! This module only turns text into bytes; it does not read or write files.

use std::fmt;

use crate::codecs_tables::{ALIASES, MODULES};

/// How a codec module encodes, as recorded from CPython.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Utf8,
    /// UTF-8 behind the byte order mark `EF BB BF`.
    Utf8Sig,
    /// Native (little-endian on every platform tack runs on) behind a byte order mark.
    Utf16,
    Utf16Le,
    Utf16Be,
    Utf32,
    Utf32Le,
    Utf32Be,
    Latin1,
    Ascii,
    /// The `undefined` codec: every use fails.
    Undefined,
    /// A bytes-to-bytes codec (`base64`, `rot13`, `zlib` ...) that `str.encode` refuses.
    NotText,
    /// A codec tack does not implement.
    Other,
    /// A single-byte codec: the character each byte decodes to, `0xFFFE` for none.
    Charmap(&'static [u16; 256]),
}

/// Why text could not be encoded. `Display` is CPython's message, word for word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// `LookupError`: no codec has this name.
    Unknown { name: String },
    /// `LookupError`: the codec turns bytes into bytes, not text into bytes.
    NotText { name: String },
    /// `UnicodeError` of the `undefined` codec.
    Undefined,
    /// `UnicodeEncodeError`: characters `start..end` (code point indices) have no encoding.
    Unencodable {
        codec: &'static str,
        text: String,
        start: usize,
        end: usize,
        reason: &'static str,
    },
    /// A codec CPython has and tack does not implement: `module` is its name in `encodings`.
    Unsupported { module: &'static str },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::Unknown { name } => write!(f, "unknown encoding: {name}"),
            EncodeError::NotText { name } => write!(
                f,
                "'{name}' is not a text encoding; use codecs.encode() to handle arbitrary codecs"
            ),
            EncodeError::Undefined => f.write_str("undefined encoding"),
            EncodeError::Unencodable { codec, text, start, end, reason } => {
                if end - start == 1 {
                    let c = text.chars().nth(*start).map_or(0, u32::from);
                    let escaped = match c {
                        0..=0xff => format!("\\x{c:02x}"),
                        0x100..=0xffff => format!("\\u{c:04x}"),
                        _ => format!("\\U{c:08x}"),
                    };
                    write!(
                        f,
                        "'{codec}' codec can't encode character '{escaped}' in position {start}: \
                         {reason}"
                    )
                } else {
                    write!(
                        f,
                        "'{codec}' codec can't encode characters in position {start}-{}: {reason}",
                        end - 1
                    )
                }
            }
            EncodeError::Unsupported { module } => write!(f, "the {module} codec"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// The name CPython's C layer hands the `encodings` search function: ASCII letters lowered,
/// each run of other characters (any non-ASCII byte included) turned into one `_` between
/// kept characters and dropped at either end. Digits, letters and `.` are kept.
fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut punct = false;
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'.' {
            if punct && !out.is_empty() {
                out.push('_');
            }
            punct = false;
            out.push(char::from(byte.to_ascii_lowercase()));
        } else {
            punct = true;
        }
    }
    out
}

fn alias(name: &str) -> Option<&'static str> {
    ALIASES.binary_search_by(|(a, _)| (*a).cmp(name)).ok().map(|i| ALIASES[i].1)
}

fn module(name: &str) -> Option<(&'static str, Kind)> {
    MODULES.binary_search_by(|(m, _)| (*m).cmp(name)).ok().map(|i| MODULES[i])
}

/// The codec module `name` resolves to, as `encodings.search_function` finds it.
fn lookup(name: &str) -> Option<(&'static str, Kind)> {
    let norm = normalise(name);
    let aliased = alias(&norm).or_else(|| alias(&norm.replace('.', "_")));
    aliased
        .into_iter()
        .chain(std::iter::once(norm.as_str()))
        .filter(|m| !m.is_empty() && !m.contains('.'))
        .find_map(module)
}

/// `text.encode(name)` as CPython 3.13 answers it, or why not.
pub fn encode(name: &str, text: &str) -> Result<Vec<u8>, EncodeError> {
    let Some((module, kind)) = lookup(name) else {
        return Err(EncodeError::Unknown { name: name.to_owned() });
    };
    let units = |bom: &[u8], width: usize, big: bool| {
        let mut out = Vec::with_capacity(bom.len() + text.len() * width);
        out.extend_from_slice(bom);
        let mut push = |unit: u32| {
            let bytes = unit.to_le_bytes();
            let bytes = &bytes[..width];
            if big {
                out.extend(bytes.iter().rev());
            } else {
                out.extend_from_slice(bytes);
            }
        };
        if width == 2 {
            for unit in text.encode_utf16() {
                push(u32::from(unit));
            }
        } else {
            for c in text.chars() {
                push(u32::from(c));
            }
        }
        out
    };
    match kind {
        Kind::Utf8 => Ok(text.as_bytes().to_vec()),
        Kind::Utf8Sig => Ok([b"\xef\xbb\xbf", text.as_bytes()].concat()),
        Kind::Utf16 => Ok(units(b"\xff\xfe", 2, false)),
        Kind::Utf16Le => Ok(units(b"", 2, false)),
        Kind::Utf16Be => Ok(units(b"", 2, true)),
        Kind::Utf32 => Ok(units(b"\xff\xfe\x00\x00", 4, false)),
        Kind::Utf32Le => Ok(units(b"", 4, false)),
        Kind::Utf32Be => Ok(units(b"", 4, true)),
        Kind::Latin1 => by_table(text, "latin-1", "ordinal not in range(256)", |c| {
            u8::try_from(u32::from(c)).ok()
        }),
        Kind::Ascii => by_table(text, "ascii", "ordinal not in range(128)", |c| {
            u8::try_from(u32::from(c)).ok().filter(u8::is_ascii)
        }),
        Kind::Charmap(table) => {
            let mut inverse = std::collections::HashMap::with_capacity(256);
            // Where several bytes decode to one character the last of them encodes it, as
            // CPython's encoding map is built.
            for (byte, &cp) in (0u8..=255).zip(table.iter()) {
                if cp != 0xFFFE {
                    inverse.insert(u32::from(cp), byte);
                }
            }
            by_table(text, "charmap", "character maps to <undefined>", |c| {
                inverse.get(&u32::from(c)).copied()
            })
        }
        Kind::Undefined => Err(EncodeError::Undefined),
        Kind::NotText => Err(EncodeError::NotText { name: name.to_owned() }),
        Kind::Other => Err(EncodeError::Unsupported { module }),
    }
}

/// Why bytes could not be decoded. `Display` is CPython's message, word for word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// `LookupError`: no codec has this name.
    Unknown { name: String },
    /// `LookupError`: the codec turns bytes into bytes, not bytes into text.
    NotText { name: String },
    /// `UnicodeError` of the `undefined` codec.
    Undefined,
    /// `UnicodeDecodeError`: the byte at `position` cannot start (or continue) a character.
    Undecodable { codec: &'static str, byte: u8, position: usize, reason: &'static str },
    /// `UnicodeDecodeError` at the end: the input stops inside a character.
    Truncated { codec: &'static str, start: usize, end: usize },
    /// A codec CPython has and tack does not implement: `module` is its name in `encodings`.
    Unsupported { module: &'static str },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Unknown { name } => write!(f, "unknown encoding: {name}"),
            DecodeError::NotText { name } => write!(
                f,
                "'{name}' is not a text encoding; use codecs.decode() to handle arbitrary codecs"
            ),
            DecodeError::Undefined => f.write_str("undefined encoding"),
            DecodeError::Undecodable { codec, byte, position, reason } => write!(
                f,
                "'{codec}' codec can't decode byte 0x{byte:02x} in position {position}: {reason}"
            ),
            DecodeError::Truncated { codec, start, end } => write!(
                f,
                "'{codec}' codec can't decode bytes in position {start}-{}: unexpected end of data",
                end - 1
            ),
            DecodeError::Unsupported { module } => write!(f, "the {module} codec"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// `data.decode(name)` (strict errors) as CPython 3.13 answers it, or why not. Single-byte
/// codecs and UTF-8 are decoded; the UTF-16 and UTF-32 families are not (yet).
pub fn decode(name: &str, data: &[u8]) -> Result<String, DecodeError> {
    let Some((module, kind)) = lookup(name) else {
        return Err(DecodeError::Unknown { name: name.to_owned() });
    };
    match kind {
        Kind::Utf8 => utf8(data, 0),
        Kind::Utf8Sig => match data.strip_prefix(b"\xef\xbb\xbf") {
            Some(rest) => utf8(rest, 3),
            None => utf8(data, 0),
        },
        Kind::Latin1 => Ok(data.iter().map(|&b| char::from(b)).collect()),
        Kind::Ascii => match data.iter().position(|b| !b.is_ascii()) {
            Some(position) => Err(DecodeError::Undecodable {
                codec: "ascii",
                byte: data[position],
                position,
                reason: "ordinal not in range(128)",
            }),
            None => Ok(data.iter().map(|&b| char::from(b)).collect()),
        },
        Kind::Charmap(table) => {
            let mut out = String::with_capacity(data.len());
            for (position, &byte) in data.iter().enumerate() {
                match char::from_u32(u32::from(table[usize::from(byte)]))
                    .filter(|_| table[usize::from(byte)] != 0xFFFE)
                {
                    Some(c) => out.push(c),
                    None => {
                        return Err(DecodeError::Undecodable {
                            codec: "charmap",
                            byte,
                            position,
                            reason: "character maps to <undefined>",
                        });
                    }
                }
            }
            Ok(out)
        }
        Kind::Undefined => Err(DecodeError::Undefined),
        Kind::NotText => Err(DecodeError::NotText { name: name.to_owned() }),
        Kind::Utf16
        | Kind::Utf16Le
        | Kind::Utf16Be
        | Kind::Utf32
        | Kind::Utf32Le
        | Kind::Utf32Be
        | Kind::Other => Err(DecodeError::Unsupported { module }),
    }
}

/// UTF-8 with CPython's error positions (offset by `skipped`, a byte order mark's length).
fn utf8(data: &[u8], skipped: usize) -> Result<String, DecodeError> {
    match std::str::from_utf8(data) {
        Ok(text) => Ok(text.to_owned()),
        Err(e) => {
            let at = e.valid_up_to();
            let position = at + skipped;
            match e.error_len() {
                None => Err(DecodeError::Truncated {
                    codec: "utf-8",
                    start: position,
                    end: data.len() + skipped,
                }),
                Some(_) => {
                    let byte = data[at];
                    // A byte that can start a sequence failed on what followed it.
                    let reason = if (0xC2..=0xF4).contains(&byte) {
                        "invalid continuation byte"
                    } else {
                        "invalid start byte"
                    };
                    Err(DecodeError::Undecodable { codec: "utf-8", byte, position, reason })
                }
            }
        }
    }
}

/// One byte per character; the first run of characters `byte` has no answer for is the error.
fn by_table(
    text: &str,
    codec: &'static str,
    reason: &'static str,
    byte: impl Fn(char) -> Option<u8>,
) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::with_capacity(text.len());
    let mut chars = text.chars().enumerate().peekable();
    while let Some((at, c)) = chars.next() {
        match byte(c) {
            Some(b) => out.push(b),
            None => {
                let mut end = at + 1;
                while chars.next_if(|&(_, c)| byte(c).is_none()).is_some() {
                    end += 1;
                }
                return Err(EncodeError::Unencodable {
                    codec,
                    text: text.to_owned(),
                    start: at,
                    end,
                    reason,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_as_cpython_does() {
        assert_eq!(decode("iso8859-1", b"\xe9t\xe9").unwrap(), "été");
        assert_eq!(decode("cp273", b"\xc1").unwrap(), "A");
        assert_eq!(decode("utf-8-sig", b"\xef\xbb\xbfok").unwrap(), "ok");
        assert_eq!(
            decode("utf-8", b"ab\xe9z").unwrap_err().to_string(),
            "'utf-8' codec can't decode byte 0xe9 in position 2: invalid continuation byte"
        );
        assert_eq!(
            decode("utf-8", b"ab\xff").unwrap_err().to_string(),
            "'utf-8' codec can't decode byte 0xff in position 2: invalid start byte"
        );
        assert_eq!(
            decode("ascii", b"a\x80").unwrap_err().to_string(),
            "'ascii' codec can't decode byte 0x80 in position 1: ordinal not in range(128)"
        );
        assert_eq!(decode("nope", b"").unwrap_err().to_string(), "unknown encoding: nope");
    }

    #[test]
    fn names_normalise_as_cpython_does() {
        assert_eq!(normalise("  UTF--8 "), "utf_8");
        assert_eq!(normalise("ütf8"), "tf8");
        assert_eq!(normalise("iso8859.15"), "iso8859.15");
        assert_eq!(lookup("Latin-1").map(|m| m.0), Some("latin_1"));
        assert_eq!(lookup("L1").map(|m| m.0), Some("latin_1"));
        assert!(lookup("utf.8").is_none());
    }

    #[test]
    fn the_tables_are_sorted_for_binary_search() {
        assert!(ALIASES.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(MODULES.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
