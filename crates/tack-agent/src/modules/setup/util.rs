//! The helpers every fact file shares, as ansible's `facts.utils` and `AnsibleModule` give
//! them: file content stripped, a command's output, the program search path, `fnmatch`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

/// ansible's `get_file_content`: the file's text, stripped; `None` when it cannot be read.
pub(super) fn file_content(path: &str) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(String::from_utf8_lossy(&bytes).trim().to_string())
}

/// ansible's `get_file_lines`: the stripped content split into lines (empty when unreadable).
pub(super) fn file_lines(path: &str) -> Vec<String> {
    file_content(path).map(|c| c.lines().map(str::to_string).collect()).unwrap_or_default()
}

/// `AnsibleModule.get_bin_path`: PATH, then the sbin directories ansible adds.
pub(super) fn bin_path(name: &str) -> Option<PathBuf> {
    let path = crate::modules::environment::var("PATH").unwrap_or_default();
    let mut dirs: Vec<String> = path.split(':').map(str::to_string).collect();
    for extra in ["/sbin", "/usr/sbin", "/usr/local/sbin"] {
        if !dirs.iter().any(|d| d == extra) {
            dirs.push(extra.to_string());
        }
    }
    dirs.iter()
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// A command's exit code, stdout and stderr (text, invalid UTF-8 replaced), with the C
/// locale ansible's `run_command` forces.
pub(super) fn run(argv: &[&str]) -> Option<(i32, String, String)> {
    let (prog, rest) = argv.split_first()?;
    let out = crate::modules::environment::command(prog)
        .args(rest)
        .env("LANG", "C")
        .env("LC_ALL", "C")
        .env("LC_MESSAGES", "C")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Python's `fnmatch.fnmatch` on POSIX (case-sensitive): `*`, `?`, `[seq]`, `[!seq]`.
pub(super) fn fnmatch(name: &str, pat: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    let p: Vec<char> = pat.chars().collect();
    matches_from(&n, &p)
}

fn matches_from(n: &[char], p: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| matches_from(&n[i..], &p[1..])),
        Some('?') => !n.is_empty() && matches_from(&n[1..], &p[1..]),
        Some('[') => match class(p) {
            Some((set, negate, len)) => {
                let Some(&c) = n.first() else { return false };
                let hit = set.iter().any(|&(lo, hi)| lo <= c && c <= hi);
                hit != negate && matches_from(&n[1..], &p[len..])
            }
            // An unclosed '[' is a literal, as in Python.
            None => n.first() == Some(&'[') && matches_from(&n[1..], &p[1..]),
        },
        Some(&c) => n.first() == Some(&c) && matches_from(&n[1..], &p[1..]),
    }
}

/// A `[...]` class at the start of `p`: its ranges, whether negated, and its length.
/// A bracket class: its character ranges, whether it is negated, and its length in the pattern.
type Class = (Vec<(char, char)>, bool, usize);

fn class(p: &[char]) -> Option<Class> {
    let mut i = 1;
    let negate = p.get(i) == Some(&'!');
    if negate {
        i += 1;
    }
    let start = i;
    let mut ranges = Vec::new();
    while i < p.len() {
        if p[i] == ']' && i > start {
            return Some((ranges, negate, i + 1));
        }
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            ranges.push((p[i], p[i + 2]));
            i += 3;
        } else {
            ranges.push((p[i], p[i]));
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    #[test]
    fn fnmatch_as_python() {
        assert!(fnmatch("ansible_eth0", "ansible_*"));
        assert!(fnmatch("ansible_memtotal_mb", "ansible_?emtotal_mb"));
        assert!(fnmatch("a1", "a[0-9]"));
        assert!(!fnmatch("a1", "a[!0-9]"));
        assert!(fnmatch("a[", "a["));
        assert!(!fnmatch("ansible_lsb", "lsb"));
    }
}
