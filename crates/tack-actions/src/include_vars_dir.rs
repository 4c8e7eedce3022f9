//! `include_vars` of a directory, as ansible's action walks it: the directory found in the
//! role's `vars/` (or beside the task's file), every directory under it (links followed) in
//! sorted order down to `depth`, each one's files sorted, kept by `files_matching` and
//! `ignore_files` (Python regular expressions) and by their extension, loaded in that order
//! with later files overriding earlier ones.
//!
//! Reads only the directory the playbook named (the caller refuses one a managed host named).

use std::path::{Path, PathBuf};

use tack_diag::Diagnostic;
use tack_py::re::{Flags, PyRegex};
use tack_yaml::{Mapping, Value};

use crate::input::ActionInput;

/// The options that make `include_vars` load a directory.
pub(crate) const DIR_ARGS: &[&str] =
    &["dir", "depth", "files_matching", "ignore_files", "extensions", "ignore_unknown_extensions"];

/// Directories deeper than this are a link loop, not a tree.
const MAX_DEPTH: usize = 100;

/// What a directory gave: the variables and the files read, in order.
pub(crate) struct Loaded {
    pub vars: Mapping,
    pub files: Vec<String>,
}

impl Loaded {
    fn empty() -> Loaded {
        Loaded { vars: Mapping::new(), files: Vec::new() }
    }
}

pub(crate) enum DirError {
    /// The result fails with this `message` (ansible's `failed`/`err_msg`), with what the
    /// directories before the failing one gave and every file read.
    Failed(String, Loaded),
    /// The action raised.
    Raised(Diagnostic),
    /// A directory a managed host named led out of the role's and the playbook's directories.
    Refused(Box<crate::output::ActionOutput>),
}

fn text(value: &Value) -> String {
    tack_yaml::pyrepr::str(value)
}

fn strings(input: &ActionInput<'_>, name: &str) -> Result<Option<Vec<String>>, DirError> {
    match input.args.get(name).map(|n| &n.value) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Seq(items)) => Ok(Some(items.iter().map(|i| text(&i.value)).collect())),
        Some(Value::Str(s)) if name == "ignore_files" => {
            tack_diag::deprecate(
                &Diagnostic::at(
                    "Specifying 'ignore_files' as a string is deprecated.",
                    input.args.get(name).and_then(|n| n.origin.clone()),
                )
                .with_help("Use a list of strings instead."),
                "2.24",
            );
            Ok(Some(s.split_whitespace().map(str::to_string).collect()))
        }
        Some(_) => Err(DirError::Raised(Diagnostic::at(
            format!("The '{name}' option must be a list."),
            input.task_origin.clone(),
        ))),
    }
}

/// `_set_root_dir`.
fn root_dir(input: &ActionInput<'_>, dir: &str) -> PathBuf {
    match input.search.roles.first() {
        Some(role) if dir.split('/').next() == Some("vars") => {
            let candidate = role.join(dir);
            if candidate.exists() { candidate } else { PathBuf::from(dir) }
        }
        Some(role) => role.join("vars").join(dir),
        None => input.search.task_dir.join(dir),
    }
}

/// Every directory under `root` (itself first) with its files, links followed.
fn walk(root: &Path, depth: usize, out: &mut Vec<(String, Vec<String>)>) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        match std::fs::metadata(entry.path()) {
            Ok(meta) if meta.is_dir() => dirs.push(entry.path()),
            _ => files.push(name),
        }
    }
    out.push((root.to_string_lossy().into_owned(), files));
    if depth < MAX_DEPTH {
        for dir in dirs {
            walk(&dir, depth + 1, out);
        }
    }
}

pub(crate) fn load(input: &ActionInput<'_>) -> Result<Loaded, DirError> {
    let dir = input.args.get("dir").map(|n| text(&n.value)).unwrap_or_default();
    let depth = match input.args.get("depth").map(|n| &n.value) {
        None | Some(Value::Null) => 0,
        Some(Value::Int(i)) => *i,
        Some(other) => text(other).trim().parse().map_err(|_| {
            DirError::Raised(Diagnostic::at(
                format!("tack does not support the include_vars depth '{}'", text(other)),
                input.task_origin.clone(),
            ))
        })?,
    };
    let compile = |pattern: &str| {
        PyRegex::new(pattern, Flags::default()).map_err(|_| {
            DirError::Raised(Diagnostic::at(
                format!("Invalid regular expression: {}", tack_py::repr::str_repr(pattern)),
                input.task_origin.clone(),
            ))
        })
    };
    let matcher = match input.args.get("files_matching").map(|n| text(&n.value)) {
        Some(pattern) if !pattern.is_empty() => Some(compile(&pattern)?),
        _ => None,
    };
    let ignore: Vec<PyRegex> = strings(input, "ignore_files")?
        .unwrap_or_default()
        .iter()
        .map(|p| compile(&format!("{p}$")))
        .collect::<Result<_, _>>()?;
    let extensions = strings(input, "extensions")?
        .unwrap_or_else(|| vec!["yaml".into(), "yml".into(), "json".into()]);
    let skip_unknown =
        input.args.get("ignore_unknown_extensions").is_some_and(|n| n.value.is_truthy());
    let source = root_dir(input, &dir);
    let shown = source.to_string_lossy().into_owned();
    if !source.exists() {
        return Err(DirError::Failed(format!("{shown} directory does not exist"), Loaded::empty()));
    }
    if !source.is_dir() {
        return Err(DirError::Failed(format!("{shown} is not a directory"), Loaded::empty()));
    }
    // Where a directory a managed host named led, and every file under it, stays inside the
    // role's and the playbook's directories (its name was checked before the search).
    let roots = input.is_host_named("dir").then(|| input.confinement());
    let confined = |path: &Path| match &roots {
        Some(roots) => input
            .confine("dir", &dir, tack_loader::confine::check_found(path, roots))
            .map_err(|refused| DirError::Refused(Box::new(refused))),
        None => Ok(()),
    };
    confined(&source)?;
    let mut tree = Vec::new();
    walk(&source, 0, &mut tree);
    tree.sort_by(|a, b| a.0.cmp(&b.0));
    let valid_ext = |name: &str| {
        // `splitext(name)[-1][1:]`: a file without one has the empty extension, which an
        // `extensions` list naming '' accepts.
        let (_, ext) = tack_py::path::splitext(name);
        let ext = ext.get(1..).unwrap_or("");
        extensions.iter().any(|e| e == ext)
    };
    let mut loaded = Loaded::empty();
    for (root, mut files) in tree {
        // A directory's variables join the result only once all its files loaded.
        let mut dir_vars = Mapping::new();
        let level =
            Path::new(&root).strip_prefix(&source).map(|p| p.components().count()).unwrap_or(0) + 1;
        if depth != 0 && level as i64 > depth {
            continue;
        }
        files.sort();
        for name in files {
            if let Some(role) = input.search.roles.first()
                && role.join(&name) == Path::new(&root).join("vars").join("main.yml")
            {
                continue;
            }
            if matcher.as_ref().is_some_and(|m| !m.is_match(&name)) {
                continue;
            }
            let path = Path::new(&root).join(&name);
            if !path.exists() || ignore.iter().any(|re| re.is_match(&name)) {
                continue;
            }
            let path_text = path.to_string_lossy().into_owned();
            if !valid_ext(&name) {
                if skip_unknown {
                    continue;
                }
                let msg = format!(
                    "{} does not have a valid extension: {}",
                    tack_py::repr::str_repr(&path_text),
                    extensions.join(", ")
                );
                return Err(DirError::Failed(msg, loaded));
            }
            confined(&path)?;
            let data = input.templar.loader().load_file(&path).map_err(|e| {
                DirError::Raised(Diagnostic::caused_by(
                    "Task failed.",
                    input.task_origin.clone(),
                    e.to_diagnostic(),
                ))
            })?;
            match data.value {
                Value::Null => {}
                Value::Map(m) => {
                    for (k, v) in m.iter() {
                        dir_vars.insert(k.clone(), v.clone());
                    }
                }
                _ => {
                    let msg = format!(
                        "{} must be stored as a dictionary/hash",
                        tack_py::repr::str_repr(&path_text)
                    );
                    return Err(DirError::Failed(msg, loaded));
                }
            }
            loaded.files.push(path_text);
        }
        for (k, v) in dir_vars.iter() {
            loaded.vars.insert(k.clone(), v.clone());
        }
    }
    Ok(loaded)
}
