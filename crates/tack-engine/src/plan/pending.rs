//! The paths on each host that a plan's earlier task would change (or might: it would run,
//! or was deferred). A later task that edits or reads one of them, or a path below one, acts
//! on a file whose apply-time state the check-mode run cannot see: `lineinfile` on a file a
//! `copy` before it would rewrite says "matched" of today's bytes. Such a task is deferred on
//! the task that would change the path, as a task reading an unavailable register is.
//!
//! Owns the record and the path comparison; what counts as a task's path is read from its
//! rendered arguments by `crate::plan`. Paths are compared lexically (the plan never asks a
//! host to resolve one), and only absolute ones: a relative `name` is a package or a user.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use tack_yaml::{Mapping, Value};

/// The arguments that name a path a file module changes (`path` and its aliases `dest`,
/// `destfile` and `name` in the line-editing modules).
const WRITES: &[&str] = &["path", "dest", "destfile", "name"];

/// Per host: each path a task of the plan would (or might) change, with that task's name.
#[derive(Debug, Default)]
pub struct Pending(Mutex<BTreeMap<String, Vec<(String, String)>>>);

impl Pending {
    /// Records that `producer` would (or might) change `paths` on `host`.
    pub(crate) fn record(&self, host: &str, paths: Vec<String>, producer: &str) {
        if paths.is_empty() {
            return;
        }
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let list = map.entry(host.to_string()).or_default();
        for path in paths {
            if !list.iter().any(|(p, _)| *p == path) {
                list.push((path, producer.to_string()));
            }
        }
    }

    /// The task that would change a path `paths` name on `host`: the path itself or a
    /// directory above it, and for a task that walks a tree (`walks`) anything below it.
    pub(crate) fn producer(&self, host: &str, paths: &[String], walks: bool) -> Option<String> {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let list = map.get(host)?;
        paths.iter().find_map(|path| {
            list.iter()
                .find(|(pending, _)| within(path, pending) || (walks && within(pending, path)))
                .map(|(_, producer)| producer.clone())
        })
    }
}

/// Whether `path` is `dir` or lies below it.
fn within(path: &str, dir: &str) -> bool {
    path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/')) || dir == "/"
}

/// The paths a task with these rendered arguments changes.
pub(crate) fn written(args: &Mapping) -> Vec<String> {
    WRITES.iter().filter_map(|key| args.get(key)).filter_map(|n| absolute(&n.value)).collect()
}

/// The paths a task with these rendered arguments reads or changes: what it writes, a
/// `src` on the host (`slurp`, `stat`-like reads with `remote_src`), and `find`'s `paths`.
pub(crate) fn touched(args: &Mapping, remote_src: bool) -> Vec<String> {
    let mut paths = written(args);
    if remote_src && let Some(src) = args.get("src").and_then(|n| absolute(&n.value)) {
        paths.push(src);
    }
    if let Some(list) = args.get("paths") {
        match &list.value {
            Value::Seq(items) => paths.extend(items.iter().filter_map(|n| absolute(&n.value))),
            other => paths
                .extend(tack_yaml::pyrepr::str(other).split(',').filter_map(|p| clean(p.trim()))),
        }
    }
    paths
}

fn absolute(value: &Value) -> Option<String> {
    match value {
        Value::Str(text) => clean(text),
        _ => None,
    }
}

/// An absolute path as `os.path.normpath` folds it (lexically: the plan never asks a host);
/// `None` for a relative one.
fn clean(path: &str) -> Option<String> {
    path.starts_with('/')
        .then(|| tack_py::path::normpath(std::path::Path::new(path)).to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_below_a_pending_one_are_its_producers() {
        let pending = Pending::default();
        pending.record("h1", vec!["/srv/app".into()], "make app dir");
        pending.record("h1", vec!["/srv/app.conf".into()], "write conf");
        let ask = |path: &str, walks: bool| pending.producer("h1", &[path.to_string()], walks);
        assert_eq!(ask("/srv/app/x", false).as_deref(), Some("make app dir"));
        assert_eq!(ask("/srv/app.conf", false).as_deref(), Some("write conf"));
        assert_eq!(ask("/srv/app.con", false), None);
        assert_eq!(ask("/srv", false), None);
        assert_eq!(ask("/srv", true).as_deref(), Some("make app dir"));
        assert_eq!(pending.producer("h2", &["/srv/app".to_string()], false), None);
    }

    #[test]
    fn paths_are_compared_lexically_and_only_when_absolute() {
        assert_eq!(clean("/a//b/./c/../d/").as_deref(), Some("/a/b/d"));
        assert_eq!(clean("sl"), None);
        let mut args = Mapping::new();
        args.insert(tack_report::result::s("name"), tack_report::result::s("hello"));
        args.insert(tack_report::result::s("dest"), tack_report::result::s("/etc/motd"));
        assert_eq!(written(&args), ["/etc/motd"]);
    }
}
