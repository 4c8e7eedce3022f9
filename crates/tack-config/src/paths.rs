//! Path handling with Python's `posixpath` semantics, which ansible's `unfrackpath` builds on:
//! `$VAR` expansion, `~` expansion, joining onto a base directory and lexical normalisation.
//!
//! Written here rather than taken from a crate because ansible's results depend on Python's
//! exact rules (an unknown `$VAR` is kept, a leading `//` survives normalisation, `..` is
//! folded without looking at the file system). Owns no file reading; the only system lookups are
//! the user database for `~user` and `~` without `$HOME`.

use crate::context::Context;

/// `os.path.isabs`.
pub fn is_abs(path: &str) -> bool {
    path.starts_with('/')
}

/// `os.path.join(base, path)` for two components.
pub fn join(base: &str, path: &str) -> String {
    if is_abs(path) {
        path.to_string()
    } else if base.is_empty() || base.ends_with('/') {
        format!("{base}{path}")
    } else {
        format!("{base}/{path}")
    }
}

/// `os.path.dirname`.
pub fn dirname(path: &str) -> String {
    let i = path.rfind('/').map_or(0, |i| i + 1);
    let head = &path[..i];
    if !head.is_empty() && head.chars().any(|c| c != '/') {
        head.trim_end_matches('/').to_string()
    } else {
        head.to_string()
    }
}

/// `os.path.splitext(path)[1]`: the extension, `""` when the file name has none (a name made
/// only of leading dots and one more part, such as `.ansible`, has none).
pub fn extension(path: &str) -> &str {
    let name_start = path.rfind('/').map_or(0, |i| i + 1);
    let name = &path[name_start..];
    match name.rfind('.') {
        Some(dot) if name[..dot].chars().any(|c| c != '.') => &name[dot..],
        _ => "",
    }
}

/// `os.path.normpath`: folds `.`, `..` and repeated slashes without touching the file system;
/// exactly two leading slashes are kept, as POSIX allows them a meaning of their own.
pub fn normpath(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let initial = if path.starts_with("//") && !path.starts_with("///") {
        2
    } else if path.starts_with('/') {
        1
    } else {
        0
    };
    let mut comps: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        if comp.is_empty() || comp == "." {
            continue;
        }
        if comp != ".." || (initial == 0 && comps.is_empty()) || comps.last() == Some(&"..") {
            comps.push(comp);
        } else if !comps.is_empty() {
            comps.pop();
        }
    }
    let joined = format!("{}{}", "/".repeat(initial), comps.join("/"));
    if joined.is_empty() { ".".into() } else { joined }
}

/// `os.path.expandvars`: `$NAME` (ASCII word characters) and `${...}` are replaced by the
/// variable's value when it is set and left as written when it is not.
pub fn expandvars(path: &str, ctx: &Context) -> String {
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while let Some(offset) = path[i..].find('$') {
        let at = i + offset;
        out.push_str(&path[i..at]);
        let rest = &path[at + 1..];
        let found = if let Some(braced) = rest.strip_prefix('{') {
            braced.find('}').map(|end| (&braced[..end], end + 2))
        } else {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            let end = end.unwrap_or(rest.len());
            (end > 0).then(|| (&rest[..end], end))
        };
        match found {
            Some((name, len)) => {
                match ctx.env.get(name) {
                    Some(value) => out.push_str(value),
                    None => out.push_str(&path[at..at + 1 + len]),
                }
                i = at + 1 + len;
            }
            None => {
                out.push('$');
                i = at + 1;
            }
        }
    }
    out.push_str(&path[i..]);
    out
}

/// `os.path.expanduser`: `~` is `$HOME` (or the user database's home when unset), `~name` is
/// that user's home; a user that does not exist leaves the path as written.
pub fn expanduser(path: &str, ctx: &Context) -> String {
    if !path.starts_with('~') {
        return path.to_string();
    }
    let end = path[1..].find('/').map_or(path.len(), |i| i + 1);
    let home = if end == 1 {
        match ctx.env.get("HOME") {
            Some(home) => Some(home.clone()),
            None => current_user_home(),
        }
    } else {
        user_home(&path[1..end])
    };
    let Some(home) = home else { return path.to_string() };
    let joined = format!("{}{}", home.trim_end_matches('/'), &path[end..]);
    if joined.is_empty() { "/".into() } else { joined }
}

fn current_user_home() -> Option<String> {
    let user = nix::unistd::User::from_uid(nix::unistd::getuid()).ok().flatten()?;
    user.dir.to_str().map(str::to_string)
}

fn user_home(name: &str) -> Option<String> {
    let user = nix::unistd::User::from_name(name).ok().flatten()?;
    user.dir.to_str().map(str::to_string)
}

/// ansible's `resolve_path`: `{{CWD}}` replaced by the working directory, then `unfrackpath`
/// without following symlinks: variables and `~` expanded, a relative path joined onto `basedir`
/// (the working directory when `None`), and the result normalised.
pub fn resolve_path(path: &str, basedir: Option<&str>, ctx: &Context) -> String {
    let path = path.replace("{{CWD}}", &ctx.cwd);
    unfrackpath(&path, basedir, ctx)
}

/// ansible's `unfrackpath(path, follow=False, basedir=...)`. A `basedir` naming a file stands
/// for the directory holding it.
pub fn unfrackpath(path: &str, basedir: Option<&str>, ctx: &Context) -> String {
    let base = match basedir {
        None => ctx.cwd.clone(),
        Some(b) if std::path::Path::new(b).is_file() => dirname(b),
        Some(b) => b.to_string(),
    };
    let expanded = expanduser(&expandvars(path, ctx), ctx);
    let joined = if is_abs(&expanded) { expanded } else { join(&base, &expanded) };
    normpath(&joined)
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
    fn normpath_matches_posixpath() {
        for (input, want) in [
            ("", "."),
            ("a/../..", ".."),
            ("/../x", "/x"),
            ("//a//b/", "//a/b"),
            ("///a", "/a"),
            ("./a/./b/..", "a"),
            ("../../a", "../../a"),
        ] {
            assert_eq!(normpath(input), want, "{input:?}");
        }
    }

    #[test]
    fn expandvars_keeps_what_it_cannot_expand() {
        let c = ctx();
        assert_eq!(expandvars("$PROJ/x", &c), "/srv/p/x");
        assert_eq!(expandvars("${PROJ}x", &c), "/srv/px");
        assert_eq!(expandvars("$UNSET/r", &c), "$UNSET/r");
        assert_eq!(expandvars("a$", &c), "a$");
        assert_eq!(expandvars("${}x${PROJ", &c), "${}x${PROJ");
        assert_eq!(expandvars("$PROJ$PROJ", &c), "/srv/p/srv/p");
    }

    #[test]
    fn expanduser_uses_home() {
        let c = ctx();
        assert_eq!(expanduser("~", &c), "/home/me");
        assert_eq!(expanduser("~/x", &c), "/home/me/x");
        assert_eq!(expanduser("~no-such-user-here/x", &c), "~no-such-user-here/x");
        assert_eq!(expanduser("a/~", &c), "a/~");
    }

    #[test]
    fn extensions_as_splitext() {
        assert_eq!(extension("/a/ansible.cfg"), ".cfg");
        assert_eq!(extension("/a/.ansible.cfg"), ".cfg");
        assert_eq!(extension("/a/.cfg"), "");
        assert_eq!(extension("/a/..cfg"), "");
        assert_eq!(extension("/a.d/cfg"), "");
        assert_eq!(extension("/a/x.tar.gz"), ".gz");
    }

    #[test]
    fn dirname_as_posixpath() {
        assert_eq!(dirname("/a/b"), "/a");
        assert_eq!(dirname("/a"), "/");
        assert_eq!(dirname("//a"), "//");
        assert_eq!(dirname("a"), "");
    }
}
