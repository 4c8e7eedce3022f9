//! CPython's `binascii.a2b_base64` in its default (non-strict) mode, which
//! `base64.b64decode` and `base64.decodebytes` use: characters outside the alphabet are
//! skipped, a completed pad ends the data, and its errors are Python's words.
//!
//! Our own: the `base64` crate is strict where CPython is lenient, and its errors differ.

/// The bytes `ascii` stands for, or `binascii.Error`'s message.
pub fn a2b_base64(ascii: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(ascii.len() / 4 * 3);
    let (mut quad_pos, mut pads, mut left) = (0u8, 0u8, 0u8);
    for &c in ascii {
        if c == b'=' {
            if quad_pos >= 2 {
                pads += 1;
                if quad_pos + pads >= 4 {
                    // A completed pad ends the data; what follows is not read.
                    return Ok(out);
                }
            }
            continue;
        }
        let Some(v) = sextet(c) else { continue };
        pads = 0;
        match quad_pos {
            0 => left = v,
            1 => {
                out.push((left << 2) | (v >> 4));
                left = v & 0x0f;
            }
            2 => {
                out.push((left << 4) | (v >> 2));
                left = v & 0x03;
            }
            _ => out.push((left << 6) | v),
        }
        quad_pos = (quad_pos + 1) % 4;
    }
    match quad_pos {
        0 => Ok(out),
        1 => Err(format!(
            "Invalid base64-encoded string: number of data characters ({}) cannot be 1 more \
             than a multiple of 4",
            out.len() / 3 * 4 + 1
        )),
        _ => Err("Incorrect padding".into()),
    }
}

fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values are CPython 3.13's `base64.decodebytes`.
    #[test]
    fn reads_as_python_does() {
        assert_eq!(a2b_base64(b"aGVsbG8="), Ok(b"hello".to_vec()));
        assert_eq!(a2b_base64(b"aGVs\n bG8g d29y bGQ="), Ok(b"hello world".to_vec()));
        assert_eq!(a2b_base64(b"aGVsbG8=trailing"), Ok(b"hello".to_vec()));
        assert_eq!(a2b_base64(b"aG!Vs#bG8="), Ok(b"hello".to_vec()));
        assert_eq!(a2b_base64(b""), Ok(Vec::new()));
        assert_eq!(a2b_base64(b"aGVsbG8").unwrap_err(), "Incorrect padding");
        assert_eq!(
            a2b_base64(b"aGVsb").unwrap_err(),
            "Invalid base64-encoded string: number of data characters (5) cannot be 1 more \
             than a multiple of 4"
        );
    }
}
