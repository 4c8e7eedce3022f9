//! Python's `textwrap.wrap` with the settings Jinja2's `wordwrap` uses (no tab expansion,
//! whitespace kept, long words broken or not, breaks after hyphens in words).

use super::strings::is_py_space;

/// `textwrap.wrap` with Jinja2's settings (no tab expansion, whitespace kept).
pub(super) fn wrap_line(
    line: &str,
    width: usize,
    break_long: bool,
    on_hyphens: bool,
) -> Vec<String> {
    // Chunks: runs of whitespace, and words (split after hyphens between letters).
    let mut chunks: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut current_space = None;
    for c in line.chars() {
        let space = is_py_space(c);
        if current_space.is_some_and(|s| s != space) {
            chunks.push(std::mem::take(&mut current));
        }
        current_space = Some(space);
        current.push(c);
        if on_hyphens
            && !space
            && c == '-'
            && current.chars().filter(|x| x.is_alphanumeric()).count() > 0
        {
            chunks.push(std::mem::take(&mut current));
            current_space = None;
        }
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks.reverse();
    let mut lines = Vec::new();
    while !chunks.is_empty() {
        let mut cur: Vec<String> = Vec::new();
        let mut cur_len = 0;
        if chunks.last().is_some_and(|c| c.chars().all(is_py_space)) && !lines.is_empty() {
            chunks.pop();
        }
        while let Some(chunk) = chunks.last() {
            let l = chunk.chars().count();
            if cur_len + l <= width {
                cur_len += l;
                cur.push(chunks.pop().unwrap_or_default());
            } else {
                break;
            }
        }
        if let Some(chunk) = chunks.last()
            && chunk.chars().count() > width
        {
            let space_left = if width < 1 { 1 } else { width - cur_len };
            if break_long && space_left > 0 {
                let chunk = chunks.pop().unwrap_or_default();
                let head: String = chunk.chars().take(space_left).collect();
                let tail: String = chunk.chars().skip(space_left).collect();
                cur.push(head);
                chunks.push(tail);
            } else if cur.is_empty() {
                cur.push(chunks.pop().unwrap_or_default());
            }
        }
        if cur.last().is_some_and(|c| c.chars().all(is_py_space)) {
            cur.pop();
        }
        if !cur.is_empty() {
            lines.push(cur.concat());
        }
    }
    lines
}
