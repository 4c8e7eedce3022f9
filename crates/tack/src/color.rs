//! Whether output is coloured and in which colours, decided once at start-up as
//! `ansible.utils.color` decides it: `nocolor` (or `NO_COLOR`) turns colour off; otherwise it is
//! on only when stdout is a terminal whose terminfo entry has a `colors` capability;
//! `force_color` turns it on whatever else holds. The `COLOR_*` settings name the colours.
//!
//! Owns the terminal probe (stdout, `TERM`, the terminfo database); the SGR codes and the
//! painting itself belong to `tack_diag::color` and the callback's `color` module.

use std::io::IsTerminal;
use std::path::PathBuf;

use tack_config::Config;
use tack_diag::Diagnostic;
use tack_diag::color::{DisplayColors, sgr};
use tack_report::callback::color::Palette;

/// ansible's `ANSIBLE_COLOR`.
pub(crate) fn enabled(config: &Config) -> bool {
    if config.force_color() {
        return true;
    }
    !config.nocolor() && std::io::stdout().is_terminal() && terminal_has_colors()
}

/// `Display.columns`: the terminal's width less one when stdout is a terminal wider than 80
/// columns, else 79.
pub(crate) fn columns() -> usize {
    let width = terminal_size::terminal_size_of(std::io::stdout()).map_or(0, |(w, _)| w.0);
    usize::from(width).saturating_sub(1).max(79)
}

/// `curses.setupterm(); curses.tigetnum('colors') >= 0`: the terminal `TERM` names is known
/// and has a `colors` number (ncurses reports a missing one as -1).
pub(crate) fn terminal_has_colors() -> bool {
    let Some(term) = std::env::var_os("TERM").filter(|t| !t.is_empty()) else { return false };
    let term = term.to_string_lossy().into_owned();
    let Some(first) = term.chars().next() else { return false };
    for dir in terminfo_dirs() {
        for sub in [first.to_string(), format!("{:x}", u32::from(first))] {
            if let Ok(bytes) = std::fs::read(dir.join(&sub).join(&term)) {
                return colors_number(&bytes).is_some_and(|n| n >= 0);
            }
        }
    }
    false
}

/// ncurses' search order for compiled terminfo entries.
fn terminfo_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("TERMINFO") {
        dirs.push(PathBuf::from(dir));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".terminfo"));
    }
    if let Some(list) = std::env::var_os("TERMINFO_DIRS") {
        for d in std::env::split_paths(&list) {
            // An empty entry stands for the compiled-in default.
            dirs.push(if d.as_os_str().is_empty() {
                PathBuf::from("/usr/share/terminfo")
            } else {
                d
            });
        }
    }
    for d in ["/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo"] {
        dirs.push(PathBuf::from(d));
    }
    dirs
}

/// The `colors` number (index 13) of a compiled terminfo entry, in the legacy (16-bit numbers)
/// or extended (32-bit numbers) format; `None` when the entry cannot be read.
fn colors_number(bytes: &[u8]) -> Option<i32> {
    const COLORS: usize = 13;
    let short = |i: usize| -> Option<i32> {
        let b = bytes.get(i * 2..i * 2 + 2)?;
        Some(i32::from(i16::from_le_bytes([b[0], b[1]])))
    };
    let width = match short(0)? {
        0o432 => 2,
        0o1036 => 4,
        _ => return None,
    };
    let names = usize::try_from(short(1)?).ok()?;
    let bools = usize::try_from(short(2)?).ok()?;
    let numbers = usize::try_from(short(3)?).ok()?;
    if COLORS >= numbers {
        return Some(-1);
    }
    let mut at = 12 + names + bools;
    // The numbers section starts on an even byte.
    at += at % 2;
    let at = at + COLORS * width;
    let b = bytes.get(at..at + width)?;
    Some(if width == 2 {
        i32::from(i16::from_le_bytes([b[0], b[1]]))
    } else {
        i32::from_le_bytes([b[0], b[1], b[2], b[3]])
    })
}

/// The SGR code of colour setting `name`; a colour ansible does not know is refused by name
/// before anything runs (ansible would fail each callback that shows it).
fn code(config: &Config, name: &str) -> Result<String, Diagnostic> {
    let value = config.get(name).and_then(|v| v.as_str()).unwrap_or_default();
    sgr(value).map_err(|e| {
        Diagnostic::new(format!("tack does not support the {name} setting value {:?}: {e}", e.0))
            .with_class(tack_diag::ErrorClass::Options)
    })
}

/// Turns colour on or off for the display's own blocks (warnings, deprecations, errors).
/// A colour name that cannot be used leaves that block plain here; [`palette`] refuses it.
pub(crate) fn setup_display(config: &Config) {
    let colors = enabled(config).then(|| DisplayColors {
        warn: code(config, "COLOR_WARN").unwrap_or_default(),
        deprecate: code(config, "COLOR_DEPRECATE").unwrap_or_default(),
        error: code(config, "COLOR_ERROR").unwrap_or_default(),
    });
    tack_diag::color::set_colors(colors);
}

/// The callback's colours, `None` when output is plain.
pub(crate) fn palette(config: &Config) -> Result<Option<Palette>, Diagnostic> {
    if !enabled(config) {
        return Ok(None);
    }
    for name in ["COLOR_WARN", "COLOR_DEPRECATE"] {
        code(config, name)?;
    }
    Ok(Some(Palette {
        ok: code(config, "COLOR_OK")?,
        changed: code(config, "COLOR_CHANGED")?,
        skip: code(config, "COLOR_SKIP")?,
        error: code(config, "COLOR_ERROR")?,
        warn: code(config, "COLOR_WARN")?,
        unreachable: code(config, "COLOR_UNREACHABLE")?,
        included: code(config, "COLOR_INCLUDED")?,
        verbose: code(config, "COLOR_VERBOSE")?,
        debug: code(config, "COLOR_DEBUG")?,
        diff_add: code(config, "COLOR_DIFF_ADD")?,
        diff_remove: code(config, "COLOR_DIFF_REMOVE")?,
        diff_lines: code(config, "COLOR_DIFF_LINES")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(magic: i16, numbers: &[i16]) -> Vec<u8> {
        let mut b = Vec::new();
        for v in [magic, 3, 1, numbers.len() as i16, 0, 0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(b"xx\0");
        b.push(1);
        for n in numbers {
            b.extend_from_slice(&n.to_le_bytes());
        }
        b
    }

    #[test]
    fn reads_colors_number() {
        let mut nums = vec![-1i16; 14];
        nums[13] = 8;
        assert_eq!(colors_number(&entry(0o432, &nums)), Some(8));
        assert_eq!(colors_number(&entry(0o432, &nums[..5])), Some(-1));
        assert_eq!(colors_number(b"junk"), None);
    }
}
