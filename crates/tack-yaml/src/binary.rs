//! `!!binary` scalars: base64 text to bytes as PyYAML's `construct_yaml_binary` reads it
//! (`base64.decodebytes`, which skips characters outside the alphabet and stops at a
//! completed pad), with its errors in its words, and bytes back to the base64 lines PyYAML's
//! representer writes.
//!
//! The decoding is `tack_py::binascii`'s (CPython's lenient reading, not the `base64`
//! crate's strict one).

use base64::Engine as _;

/// The bytes `text` (a `!!binary` scalar) stands for, or PyYAML's problem with it.
pub(crate) fn decode(text: &str) -> Result<Vec<u8>, String> {
    if let Some(first) = text.chars().position(|c| !c.is_ascii()) {
        let run = text.chars().skip(first).take_while(|c| !c.is_ascii()).count();
        let what = match run {
            1 => {
                let c = text.chars().nth(first).unwrap_or_default();
                format!("character '{}' in position {first}", escaped(c))
            }
            _ => format!("characters in position {first}-{}", first + run - 1),
        };
        return Err(format!(
            "failed to convert base64 data into ascii: 'ascii' codec can't encode {what}: \
             ordinal not in range(128)"
        ));
    }
    tack_py::binascii::a2b_base64(text.as_bytes())
        .map_err(|e| format!("failed to decode base64 data: {e}"))
}

/// How Python's codec errors name a character: `\xe9`, `\u20ac`, `\U0001f600`.
fn escaped(c: char) -> String {
    match c as u32 {
        n if n < 0x100 => format!("\\x{n:02x}"),
        n if n < 0x10000 => format!("\\u{n:04x}"),
        n => format!("\\U{n:08x}"),
    }
}

/// `base64.encodebytes(data)`: lines of at most 76 characters, each ending in a newline
/// (nothing at all for no data).
pub(crate) fn encode_lines(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(57) {
        out.push_str(&base64::engine::general_purpose::STANDARD.encode(chunk));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values are CPython 3.13's `base64.decodebytes` / `encodebytes`.
    #[test]
    fn decodes_as_python_does() {
        assert_eq!(decode("aGVsbG8="), Ok(b"hello".to_vec()));
        assert_eq!(decode("aGVs\n bG8g d29y bGQ="), Ok(b"hello world".to_vec()));
        assert_eq!(decode("aGVsbG8=trailing"), Ok(b"hello".to_vec()));
        assert_eq!(decode("aG!Vs#bG8="), Ok(b"hello".to_vec()));
        assert_eq!(decode(""), Ok(Vec::new()));
        assert_eq!(
            decode("aGVsbG8").unwrap_err(),
            "failed to decode base64 data: Incorrect padding"
        );
        assert_eq!(
            decode("aGVsb").unwrap_err(),
            "failed to decode base64 data: Invalid base64-encoded string: number of data \
             characters (5) cannot be 1 more than a multiple of 4"
        );
        assert_eq!(
            decode("aGé").unwrap_err(),
            "failed to convert base64 data into ascii: 'ascii' codec can't encode character \
             '\\xe9' in position 2: ordinal not in range(128)"
        );
        assert_eq!(
            decode("aGéé").unwrap_err(),
            "failed to convert base64 data into ascii: 'ascii' codec can't encode characters \
             in position 2-3: ordinal not in range(128)"
        );
    }

    #[test]
    fn encodes_in_lines_of_76() {
        assert_eq!(encode_lines(b"hello"), "aGVsbG8=\n");
        assert_eq!(encode_lines(b""), "");
        let long = encode_lines(&[0u8; 60]);
        assert_eq!(long.lines().map(str::len).collect::<Vec<_>>(), vec![76, 4]);
    }
}
