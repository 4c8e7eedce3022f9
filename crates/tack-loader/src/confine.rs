//! Where a controller file a managed host named may be read from: only inside the
//! directories the playbook and its roles ship (seed 002, as right-sized for names roles pick by
//! facts).
//!
//! A name whose render read what a host said is checked twice. Before anything on the
//! controller is looked up, [`check_name`] refuses it on its text alone: a `~` name, an absolute
//! name outside the confinement roots, or a relative one whose lexical
//! normalisation climbs above the directory it is joined to
//! (a "not found" would already tell the host what exists). After the search found a
//! candidate, and before it is opened, [`check_found`] refuses a candidate whose real path
//! (symbolic links followed, which reads no file) is outside every confinement root.
//!
//! This module owns the rule only; it opens no file and never creates one.

use std::path::{Component, Path, PathBuf};

/// Why a host-named name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Escape {
    #[error("is an absolute path outside them")]
    Absolute,
    #[error("starts with '~'")]
    Home,
    #[error("climbs out with '..'")]
    Climbs,
    #[error("reaches a symbolic link out of them")]
    Link,
}

impl Escape {
    /// The refusal in seed 002's words, after `subject` (`the 'file' of this include was`):
    /// `<subject> named by a managed host, and a controller file a host chose is read only
    /// inside the role's and the playbook's directories: '<name>' <why>`.
    pub fn message(&self, subject: &str, name: &str) -> String {
        format!(
            "{subject} named by a managed host, and a controller file a host chose is read \
             only inside the role's and the playbook's directories: '{name}' {self}"
        )
    }
}

/// The text-only check of a host-named `name`, before any lookup: not a `~` name; if
/// absolute, inside one of `roots`; if relative, no `..` that climbs above the directory the
/// name is joined to (every directory it is joined to is one of `roots` or below one).
pub fn check_name(name: &str, roots: &[PathBuf]) -> Result<(), Escape> {
    if name.starts_with('~') {
        return Err(Escape::Home);
    }
    let path = Path::new(name);
    if path.is_absolute() {
        return if inside(&tack_py::path::normpath(path), roots) {
            Ok(())
        } else {
            Err(Escape::Absolute)
        };
    }
    let mut depth: usize = 0;
    for component in path.components() {
        match component {
            Component::Normal(_) => depth += 1,
            Component::ParentDir => depth = depth.checked_sub(1).ok_or(Escape::Climbs)?,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return Err(Escape::Absolute),
        }
    }
    Ok(())
}

fn inside(lexical: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|root| lexical.starts_with(tack_py::path::normpath(root)))
}

/// The check of a candidate the search found for a host-named name, before it is opened:
/// lexically and with every symbolic link followed, it is inside one of `roots`. A candidate
/// that does not exist passes (it is then "not found", as for any name).
pub fn check_found(candidate: &Path, roots: &[PathBuf]) -> Result<(), Escape> {
    if !inside(&tack_py::path::normpath(candidate), roots) {
        let climbs = candidate.components().any(|c| c == Component::ParentDir);
        return Err(if climbs { Escape::Climbs } else { Escape::Absolute });
    }
    let Ok(real) = std::fs::canonicalize(candidate) else {
        return Ok(());
    };
    // Roots are seldom behind links themselves: their text is tried before their real path.
    if inside(&real, roots) {
        return Ok(());
    }
    let inside = roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .any(|root| real.starts_with(root));
    if inside { Ok(()) } else { Err(Escape::Link) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_by_their_text() {
        let roots = [PathBuf::from("/srv/play"), PathBuf::from("/srv/roles/web")];
        let check = |name: &str| check_name(name, &roots);
        assert_eq!(check("Debian.yml"), Ok(()));
        assert_eq!(check("os/../Debian.yml"), Ok(()));
        assert_eq!(check("./setup-Ubuntu.yml"), Ok(()));
        assert_eq!(check("/srv/roles/web/vars/Debian.yml"), Ok(()));
        assert_eq!(check("/srv/roles/web/../../etc/shadow"), Err(Escape::Absolute));
        assert_eq!(check("/etc/shadow"), Err(Escape::Absolute));
        assert_eq!(check("~/.ssh/id_ed25519"), Err(Escape::Home));
        assert_eq!(check("../../../../root/.ssh/id_ed25519"), Err(Escape::Climbs));
        assert_eq!(check("a/../../b"), Err(Escape::Climbs));
    }

    #[test]
    fn candidates_stay_inside_their_roots() {
        let dir = tempfile::tempdir().unwrap();
        let role = dir.path().join("role");
        std::fs::create_dir_all(role.join("vars")).unwrap();
        std::fs::write(role.join("vars/Debian.yml"), "a: 1\n").unwrap();
        std::fs::write(dir.path().join("secret"), "s\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), role.join("vars/out.yml")).unwrap();
        std::os::unix::fs::symlink(role.join("vars/Debian.yml"), role.join("vars/in.yml")).unwrap();
        let roots = [role.clone()];
        assert_eq!(check_found(&role.join("vars/Debian.yml"), &roots), Ok(()));
        assert_eq!(check_found(&role.join("vars/in.yml"), &roots), Ok(()));
        assert_eq!(check_found(&role.join("vars/missing.yml"), &roots), Ok(()));
        assert_eq!(check_found(&role.join("vars/out.yml"), &roots), Err(Escape::Link));
        assert_eq!(check_found(&role.join("vars/../../secret"), &roots), Err(Escape::Climbs));
    }
}
