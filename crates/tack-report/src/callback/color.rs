//! The default callback's colours: which colour each kind of line is shown in (the
//! `COLOR_*` settings, already resolved to SGR codes by the caller) and ansible's recap helpers
//! `colorize` and `hostcolor`.
//!
//! Only decides the bytes of a coloured line; whether colour is on at all is decided once by
//! the binary (see `tack_diag::color`), and a [`Palette`] of `None` means plain output.

use tack_diag::color::wrap;

/// The SGR code of each kind of line the callback shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    /// `COLOR_OK`.
    pub ok: String,
    /// `COLOR_CHANGED`.
    pub changed: String,
    /// `COLOR_SKIP`.
    pub skip: String,
    /// `COLOR_ERROR`.
    pub error: String,
    /// `COLOR_WARN`.
    pub warn: String,
    /// `COLOR_UNREACHABLE`.
    pub unreachable: String,
    /// `COLOR_INCLUDED`.
    pub included: String,
    /// `COLOR_VERBOSE`.
    pub verbose: String,
    /// `COLOR_DEBUG`.
    pub debug: String,
    /// `COLOR_DIFF_ADD`: a diff's added lines (and its `+++` header).
    pub diff_add: String,
    /// `COLOR_DIFF_REMOVE`: a diff's removed lines (and its `---` header).
    pub diff_remove: String,
    /// `COLOR_DIFF_LINES`: a diff's `@@` hunk headers.
    pub diff_lines: String,
}

/// A kind of line, named for the setting that colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hue {
    Ok,
    Changed,
    Skip,
    Error,
    Warn,
    Unreachable,
    Included,
    Verbose,
    Debug,
    DiffAdd,
    DiffRemove,
    DiffLines,
}

impl Palette {
    /// The SGR code `hue` is shown in.
    pub fn code(&self, hue: Hue) -> &str {
        match hue {
            Hue::Ok => &self.ok,
            Hue::Changed => &self.changed,
            Hue::Skip => &self.skip,
            Hue::Error => &self.error,
            Hue::Warn => &self.warn,
            Hue::Unreachable => &self.unreachable,
            Hue::Included => &self.included,
            Hue::Verbose => &self.verbose,
            Hue::Debug => &self.debug,
            Hue::DiffAdd => &self.diff_add,
            Hue::DiffRemove => &self.diff_remove,
            Hue::DiffLines => &self.diff_lines,
        }
    }
}

/// `stringc(text, color)`: `text` unchanged when colour is off.
pub fn paint(palette: Option<&Palette>, text: &str, hue: Hue) -> String {
    match palette {
        Some(p) => wrap(text, p.code(hue)),
        None => text.to_string(),
    }
}

/// `colorize(lead, num, color)`: `lead=num` padded to four, coloured only when not zero.
pub fn colorize(palette: Option<&Palette>, lead: &str, num: u32, hue: Hue) -> String {
    let text = format!("{lead}={num:<4}");
    if num != 0 { paint(palette, &text, hue) } else { text }
}

/// `hostcolor`: the recap's host column. Coloured, it is padded to 37 characters counting the
/// escape codes (so a plain 26 plus the eleven of a short code), as ansible pads it.
pub fn hostcolor(palette: Option<&Palette>, host: &str, failed: bool, changed: bool) -> String {
    match palette {
        Some(_) => {
            let hue = if failed {
                Hue::Error
            } else if changed {
                Hue::Changed
            } else {
                Hue::Ok
            };
            let text = paint(palette, host, hue);
            // Python pads by code points, and so does this (the codes are ASCII).
            let width = text.chars().count();
            format!("{text}{}", " ".repeat(37usize.saturating_sub(width)))
        }
        None => format!("{host:<26}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn palette() -> Palette {
        let s = |c: &str| c.to_string();
        Palette {
            ok: s("0;32"),
            changed: s("0;33"),
            skip: s("0;36"),
            error: s("0;31"),
            warn: s("1;35"),
            unreachable: s("1;31"),
            included: s("0;36"),
            verbose: s("0;34"),
            debug: s("1;30"),
            diff_add: s("0;32"),
            diff_remove: s("0;31"),
            diff_lines: s("0;36"),
        }
    }

    #[test]
    fn recap_cells() {
        let p = palette();
        assert_eq!(colorize(Some(&p), "ok", 0, Hue::Ok), "ok=0   ");
        assert_eq!(colorize(Some(&p), "ok", 12, Hue::Ok), "\x1b[0;32mok=12  \x1b[0m");
        assert_eq!(hostcolor(Some(&p), "h1", false, true).len(), 37);
        assert_eq!(hostcolor(None, "h1", true, false).len(), 26);
    }
}
