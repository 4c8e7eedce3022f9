//! Python's `glob.glob` truthiness: whether any path matches a shell pattern (`*`, `?`,
//! `[...]`; hidden names only by an explicit leading dot). Read-only.

use std::path::{Path, PathBuf};

fn has_magic(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// `fnmatch.fnmatchcase(name, pattern)`.
pub fn fnmatch(name: &str, pattern: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    let p: Vec<char> = pattern.chars().collect();
    matches(&n, &p)
}

fn matches(n: &[char], p: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| matches(&n[i..], &p[1..])),
        Some('?') => !n.is_empty() && matches(&n[1..], &p[1..]),
        Some('[') => {
            let Some(close) = p.iter().skip(2).position(|c| *c == ']').map(|i| i + 2) else {
                return n.first() == Some(&'[') && matches(&n[1..], &p[1..]);
            };
            let Some(c) = n.first() else { return false };
            let mut set = &p[1..close];
            let negate = matches!(set.first(), Some('!'));
            if negate {
                set = &set[1..];
            }
            let mut hit = false;
            let mut i = 0;
            while i < set.len() {
                if i + 2 < set.len() && set[i + 1] == '-' {
                    hit |= set[i] <= *c && *c <= set[i + 2];
                    i += 3;
                } else {
                    hit |= set[i] == *c;
                    i += 1;
                }
            }
            hit != negate && matches(&n[1..], &p[close + 1..])
        }
        Some(c) => n.first() == Some(c) && matches(&n[1..], &p[1..]),
    }
}

/// Whether `glob.glob(pattern)` would return anything.
pub fn any_match(pattern: &str) -> bool {
    if !has_magic(pattern) {
        return Path::new(pattern).symlink_metadata().is_ok();
    }
    let absolute = pattern.starts_with('/');
    let mut candidates = vec![if absolute { PathBuf::from("/") } else { PathBuf::new() }];
    let parts: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for base in &candidates {
            if !has_magic(part) {
                let p = base.join(part);
                if (last && p.symlink_metadata().is_ok()) || (!last && p.is_dir()) {
                    next.push(p);
                }
                continue;
            }
            let dir = if base.as_os_str().is_empty() { Path::new(".") } else { base.as_path() };
            let Ok(entries) = std::fs::read_dir(dir) else { continue };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && !part.starts_with('.') {
                    continue;
                }
                if fnmatch(&name, part) {
                    let p = base.join(&name);
                    if last || p.is_dir() {
                        next.push(p);
                    }
                }
            }
        }
        candidates = next;
        if candidates.is_empty() {
            return false;
        }
    }
    !candidates.is_empty()
}
