//! Two of ansible's own helpers that are nothing but compositions of the Python rules in this
//! crate: `unquote` (`ansible.parsing.quoting`) and `unfrackpath` (`ansible.utils.path`).
//!
//! They live here, not in the loader, because the configuration and vault layers resolve
//! paths and values with them and sit below the loader.

use std::path::{Path, PathBuf};

use crate::path::{
    Environ, ProcessEnv, dirname, expanduser, expandvars, isabs, join, normpath, realpath,
};

/// `unquote`: drops one pair of matching outer quotes (`'` or `"`) unless the closing one is
/// escaped with a backslash.
pub fn unquote(s: &str) -> &str {
    let b = s.as_bytes();
    let quoted = b.len() > 1
        && b[0] == b[b.len() - 1]
        && (b[0] == b'"' || b[0] == b'\'')
        && b[b.len() - 2] != b'\\';
    if quoted { &s[1..s.len() - 1] } else { s }
}

/// `unfrackpath(path, follow, basedir)`: `$VAR` then `~` expanded, a relative path joined
/// onto `basedir` (the working directory when `None`, the directory holding it when it names
/// a file), symbolic links resolved when `follow`, and the result normalised.
pub fn unfrackpath(path: &Path, follow: bool, basedir: Option<&Path>) -> PathBuf {
    unfrackpath_in(path, follow, basedir, &ProcessEnv)
}

/// [`unfrackpath`] against `env`'s variables and working directory.
pub fn unfrackpath_in(
    path: &Path,
    follow: bool,
    basedir: Option<&Path>,
    env: &dyn Environ,
) -> PathBuf {
    let base = match basedir {
        None => env.cwd(),
        Some(b) if b.is_file() => dirname(b).to_path_buf(),
        Some(b) => b.to_path_buf(),
    };
    let expanded = expanduser(&expandvars(path, env), env);
    let joined = if isabs(&expanded) { expanded } else { join(&base, &expanded) };
    let joined = if follow { realpath(&joined) } else { joined };
    normpath(&joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquote_drops_one_matching_pair() {
        // Each expectation is ansible.parsing.quoting.unquote's answer.
        for (given, want) in [
            ("'a b'", "a b"),
            ("\"a\"", "a"),
            ("''", ""),
            ("'a\"", "'a\""),
            ("'a\\'", "'a\\'"),
            ("'", "'"),
            ("\"'a'\"", "'a'"),
        ] {
            assert_eq!(unquote(given), want, "{given}");
        }
    }
}
