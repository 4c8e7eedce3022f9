//! ansible's own helpers that layers below the loader need: `unquote`
//! (`ansible.parsing.quoting`) and `unfrackpath` (`ansible.utils.path`), compositions of the
//! Python rules in this crate; and the short name a plugin has in ansible-core's own
//! collections (`copy` for `ansible.builtin.copy`), which every layer from the inventory to
//! the agent looks plugins up by.
//!
//! They live here, not in the loader, because the configuration, vault and inventory layers
//! and the agent use them and sit below the loader (the agent depends on nothing else).

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

/// Which of ansible-core's own collection names a lookup takes in front of a short name.
///
/// `ansible.builtin` is the collection ansible-core ships; `ansible.legacy` is the name under
/// which it also finds a user's own plugins of the same short name. Sites differ in which
/// they accept (a `group/` in `module_defaults` or a `become` method is only ever
/// `ansible.builtin.`), so each says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreCollections {
    /// `ansible.builtin.` only.
    Builtin,
    /// `ansible.builtin.` or `ansible.legacy.`.
    BuiltinOrLegacy,
}

const BUILTIN: &str = "ansible.builtin.";
const LEGACY: &str = "ansible.legacy.";

/// The short name `name` gives when it is written in one of `accepted`'s collections (`copy`
/// for `ansible.builtin.copy`); `None` for a short name or any other collection's.
pub fn strip_core_collection(name: &str, accepted: CoreCollections) -> Option<&str> {
    name.strip_prefix(BUILTIN).or_else(|| match accepted {
        CoreCollections::Builtin => None,
        CoreCollections::BuiltinOrLegacy => name.strip_prefix(LEGACY),
    })
}

/// [`strip_core_collection`], or `name` unchanged when it is not in one of `accepted`'s
/// collections.
pub fn short_name(name: &str, accepted: CoreCollections) -> &str {
    strip_core_collection(name, accepted).unwrap_or(name)
}

/// Whether `name` is a short name or one in `ansible.builtin`/`ansible.legacy`: a name only
/// ansible-core's own plugins (or a user's legacy ones) can answer to.
pub fn is_core_spelling(name: &str) -> bool {
    !name.contains('.') || name.starts_with(BUILTIN) || name.starts_with(LEGACY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_only_the_accepted_collections() {
        use CoreCollections::{Builtin, BuiltinOrLegacy};
        assert_eq!(short_name("ansible.builtin.copy", Builtin), "copy");
        assert_eq!(short_name("ansible.legacy.copy", Builtin), "ansible.legacy.copy");
        assert_eq!(short_name("ansible.legacy.copy", BuiltinOrLegacy), "copy");
        assert_eq!(short_name("copy", BuiltinOrLegacy), "copy");
        assert_eq!(short_name("community.general.x", BuiltinOrLegacy), "community.general.x");
        assert_eq!(strip_core_collection("copy", BuiltinOrLegacy), None);
        assert!(is_core_spelling("copy"));
        assert!(is_core_spelling("ansible.legacy.copy"));
        assert!(!is_core_spelling("community.general.x"));
    }

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
