//! Paths as configuration resolves them: ansible's `resolve_path` (`{{CWD}}`, then
//! `unfrackpath`) against a [`Context`] rather than the process, so recorded fixtures resolve
//! the same anywhere.
//!
//! The Python rules underneath (`os.path`, `unfrackpath`) are `tack_py`'s; this module only
//! binds them to the context and keeps configuration's string form (settings are `str` in
//! ansible).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use tack_py::path::Environ;

use crate::context::Context;

impl Environ for Context {
    fn var(&self, name: &OsStr) -> Option<OsString> {
        self.env.get(name.to_str()?).map(OsString::from)
    }

    fn cwd(&self) -> PathBuf {
        PathBuf::from(&self.cwd)
    }
}

/// A path as configuration text. Every input is UTF-8 and the rules only split and join at
/// `/`, so only a home directory from the user database that is not UTF-8 is shown lossily.
fn text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `os.path.join(base, path)` of two configuration paths.
pub(crate) fn join(base: &str, path: &str) -> String {
    text(&tack_py::path::join(Path::new(base), Path::new(path)))
}

/// ansible's `unfrackpath(path, follow=False, basedir=...)` in `ctx`.
pub(crate) fn unfrackpath(path: &str, basedir: Option<&str>, ctx: &Context) -> String {
    text(&tack_py::ansible::unfrackpath_in(Path::new(path), false, basedir.map(Path::new), ctx))
}

/// ansible's `resolve_path`: `{{CWD}}` replaced by the working directory, then `unfrackpath`
/// without following symlinks: variables and `~` expanded, a relative path joined onto `basedir`
/// (the working directory when `None`), and the result normalised.
pub(crate) fn resolve_path(path: &str, basedir: Option<&str>, ctx: &Context) -> String {
    unfrackpath(&path.replace("{{CWD}}", &ctx.cwd), basedir, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Context {
        let mut ctx = Context::empty("/work/dir");
        ctx.env.insert("HOME".into(), "/home/me/".into());
        ctx.env.insert("PROJ".into(), "/srv/p".into());
        ctx
    }

    #[test]
    fn paths_resolve_against_the_context() {
        let c = ctx();
        assert_eq!(resolve_path("$PROJ/x/../y", None, &c), "/srv/p/y");
        assert_eq!(resolve_path("~/.ansible/tmp", None, &c), "/home/me/.ansible/tmp");
        assert_eq!(resolve_path("{{CWD}}/lib", None, &c), "/work/dir/lib");
        assert_eq!(resolve_path("rel", Some("/etc/ansible"), &c), "/etc/ansible/rel");
        assert_eq!(resolve_path("$UNSET/r", None, &c), "/work/dir/$UNSET/r");
    }
}
