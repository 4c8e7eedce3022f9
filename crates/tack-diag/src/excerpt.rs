//! The source excerpt under an `Origin:` line: up to two lines of context, the target line, and
//! a caret under the column, laid out as ansible-core 2.21 lays it out (line labels right-aligned
//! to the target line's width, tabs shown as one space, lines cut at 120 columns).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::Origin;

const CONTEXT_LINES: u32 = 2;
const MAX_LINE_WIDTH: usize = 120;
const TRUNCATION_MARKER: &str = "...";

/// The excerpt for `origin`, each line ending in a newline; `None` when the origin has no line.
///
/// A file that cannot be read, is vault-encrypted, or is shorter than the origin says yields
/// ansible's one-line `(source not shown: ...)` notice instead of source text.
pub fn excerpt(origin: &Origin) -> Option<String> {
    if origin.line == 0 {
        return None;
    }
    let path = origin.path.as_deref()?;
    let target = origin.line;
    let first = target.saturating_sub(CONTEXT_LINES).max(1);
    let lines = match read_lines(path, first, target) {
        Ok(lines) => lines,
        Err(reason) => return Some(format!("(source not shown: {reason})\n")),
    };

    let label_width = target.to_string().len();
    let max_src_len = MAX_LINE_WIDTH - label_width - 1;
    let mut usable_len = max_src_len;
    let mut out = String::new();
    for (number, line) in (first..=target).zip(lines) {
        let mut line: String = line.replace('\t', " ");
        let len = line.chars().count();
        if len > max_src_len {
            let keep = max_src_len - TRUNCATION_MARKER.len();
            line = line.chars().take(keep).collect::<String>() + TRUNCATION_MARKER;
            usable_len = keep;
        }
        let sep = if line.is_empty() { "" } else { " " };
        out.push_str(&format!("{number:>label_width$}{sep}{line}\n"));
    }

    let col = origin.col as usize;
    if col == 0 {
        // No column known: ansible underlines the whole target line.
        let last_len = out.lines().last().map_or(0, |l| l.chars().count());
        let underline = last_len.saturating_sub(label_width + 1);
        out.push_str(&format!("{} {}\n", " ".repeat(label_width), "^".repeat(underline)));
    } else if col <= usable_len {
        let marker = format!("column {col}");
        let idx = col - 1;
        let marker = if idx + 2 + marker.len() > max_src_len {
            format!("{}{marker} ^", " ".repeat(idx.saturating_sub(marker.len() + 1)))
        } else {
            format!("{}^ {marker}", " ".repeat(idx))
        };
        out.push_str(&format!("{} {marker}\n", " ".repeat(label_width)));
    }
    Some(out)
}

/// Lines `first..=last` (1-based) of the file, without their line ends.
fn read_lines(path: &Path, first: u32, last: u32) -> Result<Vec<String>, &'static str> {
    let file = File::open(path).map_err(io_reason)?;
    let mut reader = BufReader::new(file);
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    for number in 1..=last {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io_reason)?;
        if n == 0 {
            return Err("file truncated");
        }
        if number == 1 && buf.starts_with(b"$ANSIBLE_VAULT;") {
            return Err("content encrypted");
        }
        if number >= first {
            let text = String::from_utf8_lossy(&buf);
            // Python's universal newlines: `\r\n` and a lone `\r` both end a line.
            lines.push(text.trim_end_matches(['\n', '\r']).to_string());
        }
    }
    Ok(lines)
}

fn io_reason(err: std::io::Error) -> &'static str {
    match err.kind() {
        std::io::ErrorKind::NotFound => "FileNotFoundError",
        std::io::ErrorKind::PermissionDenied => "PermissionError",
        _ => "OSError",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn origin_in(text: &str, line: u32, col: u32) -> (tempfile::NamedTempFile, Origin) {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
        let path: Arc<Path> = Arc::from(file.path());
        (file, Origin::new(path, line, col))
    }

    #[test]
    fn context_and_caret() {
        let (_f, o) = origin_in("- name: first play\n  hosts: all\n  serail: 1\n", 3, 3);
        assert_eq!(
            excerpt(&o).unwrap(),
            "1 - name: first play\n2   hosts: all\n3   serail: 1\n    ^ column 3\n"
        );
    }

    #[test]
    fn labels_align_to_target_width() {
        let text: String = (1..=10).map(|i| format!("line{i}\n")).collect();
        let (_f, o) = origin_in(&text, 10, 1);
        assert_eq!(excerpt(&o).unwrap(), " 8 line8\n 9 line9\n10 line10\n   ^ column 1\n");
    }

    #[test]
    fn tabs_become_spaces_and_blank_lines_have_no_separator() {
        let (_f, o) = origin_in("a:\n\n\t\tb: 1\n", 3, 1);
        assert_eq!(excerpt(&o).unwrap(), "1 a:\n2\n3   b: 1\n  ^ column 1\n");
    }

    #[test]
    fn a_line_without_column_is_underlined() {
        // Measured: an INI variable's origin has a line and no column.
        let (_f, o) = origin_in("[g]\nh1 my-var=1 ok=2\n", 2, 0);
        assert_eq!(excerpt(&o).unwrap(), "1 [g]\n2 h1 my-var=1 ok=2\n  ^^^^^^^^^^^^^^^^\n");
    }

    #[test]
    fn encrypted_and_missing_sources() {
        let (_f, o) = origin_in("$ANSIBLE_VAULT;1.1;AES256\n3031\n", 2, 1);
        assert_eq!(excerpt(&o).unwrap(), "(source not shown: content encrypted)\n");
        let gone = Origin::new(Arc::from(Path::new("/nonexistent/x.yml")), 1, 1);
        assert_eq!(excerpt(&gone).unwrap(), "(source not shown: FileNotFoundError)\n");
    }
}
