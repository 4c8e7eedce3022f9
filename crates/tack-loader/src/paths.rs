//! How `DataLoader` spells a path it is given: `path_dwim` (a relative path taken from the
//! loader's base directory) and `basedir` (the directory an inventory or playbook path stands
//! for). Where a name is searched for is [`crate::search`]; the Python rules both build on
//! (`os.path`, `unfrackpath`) are `tack_py`'s.

use std::path::{Path, PathBuf};

use tack_py::ansible::{unfrackpath, unquote};
use tack_py::path::{abspath, getcwd, join};

/// `DataLoader.path_dwim(given)`: one pair of surrounding quotes dropped, a relative path
/// joined onto `basedir` (a path starting with `~` is not relative), then `unfrackpath`
/// without following symbolic links.
pub fn path_dwim(basedir: &Path, given: &str) -> PathBuf {
    let given = unquote(given);
    let path = if given.starts_with('/') || given.starts_with('~') {
        PathBuf::from(given)
    } else {
        join(basedir, Path::new(given))
    };
    unfrackpath(&path, false, None)
}

/// ansible's `basedir(source)`: the directory an inventory or playbook path stands for (the
/// path itself when it is a directory, its `dirname` when it is a file, the current directory
/// for an empty source), made absolute without resolving symbolic links; `None` when the path
/// does not exist. A bare file name's directory is the empty path, which Python leaves empty.
pub fn basedir(source: &str) -> Option<PathBuf> {
    let path = Path::new(source);
    let dir = if path.is_dir() {
        path
    } else if source.is_empty() || source == "." {
        return Some(getcwd());
    } else if path.is_file() {
        tack_py::path::dirname(path)
    } else {
        return None;
    };
    if dir.as_os_str().is_empty() { Some(PathBuf::new()) } else { Some(abspath(dir)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_base() {
        assert_eq!(path_dwim(Path::new("/base/dir"), "../x/y.yml"), PathBuf::from("/base/x/y.yml"));
        assert_eq!(path_dwim(Path::new("/base"), "'/abs'"), PathBuf::from("/abs"));
        // Measured: `ansible-playbook -e @x.yml` run from `/` names `/x.yml`, not `//x.yml`.
        assert_eq!(path_dwim(Path::new("/"), "x.yml"), PathBuf::from("/x.yml"));
    }
}
