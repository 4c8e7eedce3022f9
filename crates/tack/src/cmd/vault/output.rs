//! How `tack vault` shows text: `view`'s pager or plain stdout, ansible's replacement of
//! undecodable bytes, and the `!vault |` block `encrypt_string` prints.

use std::io::{IsTerminal, Write};
use std::process::{Command, Stdio};

use tack_diag::Diagnostic;

/// ansible's `less` options: quit if one screen, raw colours, chop lines, no termcap init.
const LESS_OPTS: &str = "FRSX";

/// Text as ansible's display writes it: invalid UTF-8 runs become one `?` each (with a warning
/// once), `\r\n` becomes `\n`, and a final newline is added when missing.
pub(super) fn display_text(data: &[u8]) -> String {
    let mut text = String::with_capacity(data.len() + 1);
    let mut replaced = false;
    let mut in_invalid = false;
    for chunk in data.utf8_chunks() {
        if !chunk.valid().is_empty() {
            text.push_str(chunk.valid());
            in_invalid = false;
        }
        if !chunk.invalid().is_empty() {
            if !in_invalid {
                text.push('?');
            }
            in_invalid = true;
            replaced = true;
        }
    }
    if replaced {
        tack_diag::warn(&Diagnostic::new(
            "Non UTF-8 encoded data replaced with \"?\" while displaying text to stdout/stderr.",
        ));
    }
    let mut text = text.replace("\r\n", "\n");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// `view`'s output: through the pager on a terminal, plain on stdout otherwise.
pub(super) fn page(plaintext: &[u8], pager: Option<&str>) {
    if !std::io::stdout().is_terminal() {
        let text = display_text(plaintext);
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        return;
    }
    let pager = match pager {
        Some(p) => p.to_string(),
        None if less_available() => "less".to_string(),
        None => {
            print!("{}", display_text(plaintext));
            return;
        }
    };
    let mut command = Command::new("/bin/sh");
    command.arg("-c").arg(&pager).stdin(Stdio::piped());
    if pager.contains("less") {
        command.env("LESS", LESS_OPTS);
    }
    // ansible ignores a pager that cannot be started or is interrupted; so does tack.
    if let Ok(mut child) = command.spawn() {
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(plaintext);
        }
        let _ = child.wait();
    }
}

fn less_available() -> bool {
    Command::new("/bin/sh")
        .args(["-c", "less --version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `name: !vault |` (or `!vault |`) followed by the envelope indented ten spaces.
pub(super) fn vault_block(ciphertext: &str, name: Option<&str>) -> String {
    let mut lines = vec![match name {
        Some(name) => format!("{name}: !vault |"),
        None => "!vault |".to_string(),
    }];
    lines.extend(ciphertext.lines().map(|l| format!("{:10}{l}", "")));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecodable_runs_become_one_question_mark() {
        assert_eq!(display_text(b"\xff\xfe\x00bin\r\nx"), "?\0bin\nx\n");
        assert_eq!(display_text(b"a\xffb\xfe"), "a?b?\n");
        assert_eq!(display_text(b""), "\n");
        assert_eq!(display_text(b"x\n"), "x\n");
    }
}
