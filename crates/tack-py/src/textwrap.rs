//! `textwrap.shorten(text, width)`: how ansible cuts the value it shows under an `Origin:`
//! line that has no file to quote from.
//!
//! `shorten` is more than "cut at a space": `TextWrapper` splits words after the hyphens of
//! hyphenated words and cuts a word longer than the whole width, and every length is counted
//! in code points. Written here because no crate reproduces `TextWrapper`'s chunking.

use crate::text::split;
use crate::unicode::{is_decimal, is_word};

const PLACEHOLDER: &str = " [...]";

/// The whitespace `TextWrapper` knows (ASCII only, unlike `str.split`).
fn is_wrap_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ')
}

/// `[^\d\W]`: a word character that is not a decimal digit.
fn is_letter(c: char) -> bool {
    is_word(c) && !is_decimal(c)
}

/// `[\w!"'&.,?]`: what may stand before an em-dash.
fn is_word_punct(c: char) -> bool {
    is_word(c) || "!\"'&.,?".contains(c)
}

/// `textwrap.shorten(text, width)`: whitespace collapsed, then as many chunks as fit with
/// ` [...]` appended when anything was dropped. `width` below 6 is not meaningful here (Python
/// raises); the result is then the bare `[...]`.
pub fn shorten(text: &str, width: usize) -> String {
    let collapsed = split(text).join(" ");
    let chars: Vec<char> = collapsed.chars().collect();
    if chars.len() <= width {
        return collapsed;
    }
    let mut chunks: Vec<Vec<char>> = chunk_bounds(&chars).map(|r| chars[r].to_vec()).collect();
    chunks.reverse();
    let mut line: Vec<Vec<char>> = Vec::new();
    let mut len = 0;
    while let Some(next) = chunks.last() {
        if len + next.len() > width {
            break;
        }
        len += next.len();
        line.extend(chunks.pop());
    }
    if let Some(next) = chunks.last()
        && next.len() > width
    {
        // Python gives a zero-width line one character, and a full line none.
        let space_left = if width == 0 { 1 } else { width - len };
        line.push(long_word_head(next, space_left));
        len = line.iter().map(Vec::len).sum();
    }
    if line.last().is_some_and(|c| is_blank(c)) {
        len -= line.pop().map_or(0, |c| c.len());
    }
    let placeholder_len = PLACEHOLDER.chars().count();
    while let Some(last) = line.last() {
        if !is_blank(last) && len + placeholder_len <= width {
            let mut out: String = line.iter().flatten().collect();
            out.push_str(PLACEHOLDER);
            return out;
        }
        len -= last.len();
        line.pop();
    }
    PLACEHOLDER.trim_start().to_string()
}

fn is_blank(chunk: &[char]) -> bool {
    chunk.iter().all(|&c| crate::unicode::is_space(c))
}

/// What `_handle_long_word` puts on the line from a chunk wider than the line: as much as
/// fits, or up to the last hyphen that fits when something other than hyphens precedes it.
fn long_word_head(chunk: &[char], space_left: usize) -> Vec<char> {
    let mut end = space_left;
    if chunk.len() > space_left {
        let hyphen = chunk[..space_left.min(chunk.len())].iter().rposition(|&c| c == '-');
        if let Some(h) = hyphen
            && h > 0
            && chunk[..h].iter().any(|&c| c != '-')
        {
            end = h + 1;
        }
    }
    chunk[..end.min(chunk.len())].to_vec()
}

/// The chunks `TextWrapper._split` cuts (`wordsep_re`): runs of whitespace, em-dashes between
/// words, and words, a hyphenated word ending after each hyphen that joins two letters.
fn chunk_bounds(chars: &[char]) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= chars.len() {
            return None;
        }
        let start = at;
        at = if is_wrap_space(chars[at]) {
            start + chars[start..].iter().take_while(|&&c| is_wrap_space(c)).count()
        } else if start > 0 && is_word_punct(chars[start - 1]) && em_dash_len(chars, start) > 0 {
            start + em_dash_len(chars, start)
        } else {
            word_end(chars, start)
        };
        Some(start..at)
    })
}

/// The length of `-{2,}` at `at` when a word character follows it, else 0.
fn em_dash_len(chars: &[char], at: usize) -> usize {
    let dashes = chars[at..].iter().take_while(|&&c| c == '-').count();
    let followed = chars.get(at + dashes).is_some_and(|&c| is_word(c));
    if dashes >= 2 && followed { dashes } else { 0 }
}

/// Where the word starting at `start` ends: the shortest run of non-whitespace after which
/// comes a breaking hyphen (kept in the word), whitespace or the end, or an em-dash.
fn word_end(chars: &[char], start: usize) -> usize {
    let letter = |i: usize| chars.get(i).is_some_and(|&c| is_letter(c));
    let mut p = start + 1;
    while p < chars.len() {
        if is_wrap_space(chars[p]) {
            return p;
        }
        if chars[p] == '-' {
            let behind = (p >= 2 && letter(p - 2) && letter(p - 1))
                || (p >= 3 && letter(p - 3) && chars[p - 2] == '-' && letter(p - 1));
            let ahead = letter(p + 1)
                && (letter(p + 2) || (chars.get(p + 2) == Some(&'-') && letter(p + 3)));
            if behind && ahead {
                return p + 1;
            }
            if is_word_punct(chars[p - 1]) && em_dash_len(chars, p) > 0 {
                return p;
            }
        }
        p += 1;
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    // Broader cases, recorded from CPython, are in `tests/corpus/textwrap.json`.

    #[test]
    fn shortens_as_textwrap() {
        assert_eq!(shorten("Hello  world!", 12), "Hello world!");
        assert_eq!(shorten("Hello  world!", 11), "Hello [...]");
        assert_eq!(shorten(&"a".repeat(200), 120), "[...]");
    }
}
