//! ansible's terminal colours: colour names to SGR codes (`parsecolor`), text wrapped in them
//! line by line (`stringc`), and the process-wide choice of whether output is coloured and in
//! which colours `[WARNING]`, `[DEPRECATION WARNING]` and `[ERROR]` blocks are shown.
//!
//! The choice is global because ansible's is (`ansible.utils.color.ANSIBLE_COLOR`, decided
//! once at start-up) and because warnings are raised deep inside layers that print nothing
//! else. Deciding it (settings, terminal) is the binary's job; this module never looks at the
//! environment or the terminal itself.

use std::sync::{PoisonError, RwLock};

/// A colour name ansible does not know (`C.COLOR_CODES` has no such key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown colour {0:?}")]
pub struct UnknownColor(pub String);

/// `C.COLOR_CODES`.
const CODES: &[(&str, &str)] = &[
    ("black", "0;30"),
    ("bright gray", "0;37"),
    ("blue", "0;34"),
    ("white", "1;37"),
    ("green", "0;32"),
    ("bright blue", "1;34"),
    ("cyan", "0;36"),
    ("bright green", "1;32"),
    ("red", "0;31"),
    ("bright cyan", "1;36"),
    ("purple", "0;35"),
    ("bright red", "1;31"),
    ("yellow", "0;33"),
    ("bright purple", "1;35"),
    ("dark gray", "1;30"),
    ("bright yellow", "1;33"),
    ("magenta", "0;35"),
    ("bright magenta", "1;35"),
    ("normal", "0"),
];

/// The leading run of ASCII digits of `s` (Python's `[0-9]+`, anchored at the start only).
fn digits(s: &str) -> &str {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    &s[..end]
}

/// `parsecolor`: `colorN`, `rgbRGB` (each 0-5) and `grayN` name 256-colour codes (matched at
/// the start of the name, as `re.match` does); anything else must be one of ansible's names.
pub fn sgr(name: &str) -> Result<String, UnknownColor> {
    if let Some(rest) = name.strip_prefix("color") {
        let n = digits(rest);
        if !n.is_empty() {
            return Ok(format!("38;5;{}", big_int(n)));
        }
    }
    if let Some(rest) = name.strip_prefix("rgb") {
        let b = rest.as_bytes();
        if b.len() >= 3 && b[..3].iter().all(|c| (b'0'..=b'5').contains(c)) {
            let v = |i: usize| u32::from(b[i] - b'0');
            return Ok(format!("38;5;{}", 16 + 36 * v(0) + 6 * v(1) + v(2)));
        }
    }
    if let Some(rest) = name.strip_prefix("gray") {
        let n = digits(rest);
        if !n.is_empty() {
            return Ok(format!("38;5;{}", add_decimal(n, 232)));
        }
    }
    CODES
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, code)| (*code).to_string())
        .ok_or_else(|| UnknownColor(name.to_string()))
}

/// `int(digits)` printed back: Python drops leading zeros and has no upper bound.
fn big_int(n: &str) -> String {
    let trimmed = n.trim_start_matches('0');
    if trimmed.is_empty() { "0".into() } else { trimmed.into() }
}

/// `232 + int(digits)` for a decimal string of any length.
fn add_decimal(n: &str, add: u32) -> String {
    let n = big_int(n);
    let mut out: Vec<u8> = Vec::with_capacity(n.len() + 1);
    let mut carry = add;
    for d in n.bytes().rev() {
        let sum = u32::from(d - b'0') + carry % 10;
        carry = carry / 10 + sum / 10;
        out.push(b'0' + (sum % 10) as u8);
    }
    while carry > 0 {
        out.push(b'0' + (carry % 10) as u8);
        carry /= 10;
    }
    out.reverse();
    String::from_utf8_lossy(&out).into_owned()
}

/// `stringc` with colour on: every line of `text` wrapped in `code` and a reset.
pub fn wrap(text: &str, code: &str) -> String {
    text.split('\n').map(|line| format!("\x1b[{code}m{line}\x1b[0m")).collect::<Vec<_>>().join("\n")
}

/// What `Display.display(msg, color=...)` writes: one trailing newline is taken off before the
/// text is coloured and a newline always ends it; Windows line ends become `\n` first.
pub fn display_text(msg: &str, code: Option<&str>) -> String {
    let msg = msg.replace("\r\n", "\n");
    let body = msg.strip_suffix('\n').unwrap_or(&msg);
    match code {
        Some(code) => format!("{}\n", wrap(body, code)),
        None => format!("{body}\n"),
    }
}

/// The SGR codes of the display's own blocks, when output is coloured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisplayColors {
    /// `COLOR_WARN`.
    pub warn: String,
    /// `COLOR_DEPRECATE`.
    pub deprecate: String,
    /// `COLOR_ERROR`.
    pub error: String,
}

static COLORS: RwLock<Option<DisplayColors>> = RwLock::new(None);

/// Turns colour on with `colors`, or off with `None` (the default).
pub fn set_colors(colors: Option<DisplayColors>) {
    *COLORS.write().unwrap_or_else(PoisonError::into_inner) = colors;
}

/// The display's colours, `None` when output is not coloured.
pub fn colors() -> Option<DisplayColors> {
    COLORS.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Which of the display's blocks a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Warn,
    Deprecate,
    Error,
}

/// `text` as `Display` writes a block of `level`: coloured when colour is on, always ending
/// in one newline.
pub fn paint(text: &str, level: Level) -> String {
    let colors = colors();
    let code = colors.as_ref().map(|c| match level {
        Level::Warn => c.warn.as_str(),
        Level::Deprecate => c.deprecate.as_str(),
        Level::Error => c.error.as_str(),
    });
    display_text(text, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbered_colours() {
        assert_eq!(sgr("bright purple").unwrap(), "1;35");
        assert_eq!(sgr("color012x").unwrap(), "38;5;12");
        assert_eq!(sgr("rgb5019").unwrap(), "38;5;197");
        assert_eq!(sgr("gray7").unwrap(), "38;5;239");
        assert_eq!(sgr("gray99999999999999999999").unwrap(), "38;5;100000000000000000231");
        assert!(sgr("rgb6").is_err());
        assert!(sgr("Green").is_err());
    }

    #[test]
    fn every_line_wrapped() {
        assert_eq!(
            wrap("a\n\nb", "0;31"),
            "\x1b[0;31ma\x1b[0m\n\x1b[0;31m\x1b[0m\n\x1b[0;31mb\x1b[0m"
        );
        assert_eq!(display_text("x\n", Some("0")), "\x1b[0mx\x1b[0m\n");
        assert_eq!(display_text("x\n\n", None), "x\n\n");
    }
}
