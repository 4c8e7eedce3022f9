//! The lookups that read controller files: `file`, `fileglob`, `first_found`, `unvault`, and
//! the search every file lookup shares (`LookupBase.find_file_in_search_path`: the
//! `ansible_search_path` variable, else the role's or the loader's base directory, through
//! `tack_loader::search::path_dwim_relative_stack`).
//!
//! Files are only read, never written; their contents are trusted data.

use std::path::{Path, PathBuf};

use minijinja::value::{Value as JValue, ValueKind};

use super::options::{boolean, py_repr, py_str};
use super::{Call, Entry, LookupError};
use crate::value::RenderEnv;

pub(super) const LOOKUPS: &[Entry] = &[
    Entry::new("file", file).reading_files(),
    Entry::new("fileglob", fileglob).reading_files(),
    Entry::new("first_found", first_found).accepting_undefined().lazy().reading_files(),
    Entry::new("unvault", unvault).reading_files(),
];

fn strings_of(value: &JValue) -> Vec<String> {
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable => {
            value.try_iter().map(|it| it.map(|v| py_str(&v)).collect()).unwrap_or_default()
        }
        _ => vec![py_str(value)],
    }
}

/// `LookupBase.get_basedir`: the role's directory, else the loader's.
pub(super) fn basedir(env: &RenderEnv) -> PathBuf {
    match env.read("role_path") {
        Some(v) if !v.is_undefined() => PathBuf::from(py_str(&v)),
        _ => env.loader().basedir().to_path_buf(),
    }
}

/// The directories a file lookup searches, in order.
pub(super) fn search_paths(env: &RenderEnv) -> Vec<PathBuf> {
    match env.read("ansible_search_path") {
        Some(v) if !v.is_undefined() => strings_of(&v).into_iter().map(PathBuf::from).collect(),
        _ => vec![basedir(env)],
    }
}

/// `find_file_in_search_path(variables, subdir, needle)`; with `warn`, ansible's warning
/// when it is not found. A needle a managed host chose is found only inside the role's and
/// the playbook's directories ([`confine`]).
pub(super) fn find_file(
    call: &Call,
    subdir: &str,
    needle: &str,
    warn: bool,
) -> Result<Option<PathBuf>, LookupError> {
    let env = call.env;
    let roots = call.host_named.then(|| confinement(env));
    if let Some(roots) = &roots {
        confine(call, needle, tack_loader::confine::check_name(needle, roots))?;
    }
    let paths = search_paths(env);
    let found = tack_loader::search::path_dwim_relative_stack(
        env.loader().basedir(),
        &paths,
        Some(subdir),
        needle,
    )
    .ok();
    if let (Some(roots), Some(path)) = (&roots, &found) {
        confine(call, needle, tack_loader::confine::check_found(path, roots))?;
    }
    if found.is_none() && warn {
        tack_diag::warn(&tack_diag::Diagnostic::new(format!(
            "Unable to find '{needle}' in expected paths (use -vvvvv to see paths)"
        )));
    }
    Ok(found)
}

/// Where a file lookup whose terms a managed host chose may read: the directories it
/// searches, the role's and the playbook's.
pub(super) fn confinement(env: &RenderEnv) -> Vec<PathBuf> {
    let mut roots = search_paths(env);
    roots.push(basedir(env));
    roots.push(env.loader().basedir().to_path_buf());
    roots
}

/// The lookup's refusal of `name` when `checked` found it leaves the confinement.
pub(super) fn confine(
    call: &Call,
    name: &str,
    checked: Result<(), tack_loader::confine::Escape>,
) -> Result<(), LookupError> {
    checked.map_err(|escape| {
        let subject = format!("the terms of the {} lookup were", py_repr(&JValue::from(call.name)));
        LookupError::Refused(escape.message(&subject, name))
    })
}

/// A lookup's `-vvvv` note of the file it found (`None` as Python prints a missing one).
pub(super) fn note_found(before: &str, found: Option<&Path>, after: &str) {
    if !tack_loader::notes::observed() {
        return;
    }
    let path = found.map_or_else(|| "None".to_string(), |p| p.display().to_string());
    let text = if after.is_empty() {
        format!("{before} {path}")
    } else {
        format!("{before} {path} {after}")
    };
    tack_loader::notes::note(4, text);
}

/// `DataLoader.get_text_file_contents`, its failure in ansible's words.
pub(super) fn read_text(env: &RenderEnv, path: &Path) -> Result<String, String> {
    match env.loader().file_text(path) {
        Ok(text) => {
            // A vaulted file's text is a secret: what the render makes of it is sealed.
            if text.was_encrypted {
                crate::engine::active::seal();
            }
            Ok(text.text)
        }
        Err(tack_loader::LoadError::Read { path, reason }) => Err(format!(
            "An error occurred while trying to read the file {}: {reason}",
            tack_yaml::pyrepr::str_repr(&path.to_string_lossy())
        )),
        Err(e) => Err(e.to_string()),
    }
}

fn file(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let lstrip = call.kwarg("lstrip").is_some_and(|v| boolean(v, false));
    let rstrip = call.kwarg("rstrip").is_none_or(|v| boolean(v, true));
    let mut out = Vec::new();
    for term in &call.terms {
        let name = py_str(term);
        let fail = |why: String| {
            LookupError::failed(format!("Unable to access the file {}: {why}", py_repr(term)))
        };
        let found = find_file(call, "files", &name, false)?;
        note_found("File lookup using", found.as_deref(), "as file");
        let Some(path) = found else {
            return Err(fail("File not found. Use -vvvvv to see paths searched.".into()));
        };
        let mut text = read_text(call.env, &path).map_err(fail)?;
        if lstrip {
            text = tack_py::text::lstrip(&text).to_string();
        }
        if rstrip {
            text = tack_py::text::rstrip(&text).to_string();
        }
        out.push(JValue::from(text));
    }
    Ok(out)
}

fn unvault(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut out = Vec::new();
    for term in &call.terms {
        let name = py_str(term);
        let found = find_file(call, "files", &name, true)?;
        note_found("Unvault lookup found", found.as_deref(), "");
        let Some(path) = found else {
            return Err(LookupError::failed(format!("Unable to find file matching \"{name}\"")));
        };
        out.push(JValue::from(read_text(call.env, &path).map_err(LookupError::failed)?));
    }
    Ok(out)
}

fn has_magic(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// `glob.glob(join(dir, pattern))` for a pattern without `/`: the files only, in the
/// directory's own order (Python's `os.scandir`).
fn glob_files(dir: &Path, pattern: &str) -> Vec<String> {
    let join = |name: &str| tack_py::path::join(dir, Path::new(name));
    if !has_magic(pattern) {
        let p = join(pattern);
        return if p.is_file() { vec![p.to_string_lossy().into_owned()] } else { Vec::new() };
    }
    let Ok(compiled) = glob::Pattern::new(pattern) else { return Vec::new() };
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let Ok(entries) =
        std::fs::read_dir(if dir.as_os_str().is_empty() { Path::new(".") } else { dir })
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if compiled.matches_with(&name, options) {
            let p = join(&name);
            if p.is_file() {
                out.push(p.to_string_lossy().into_owned());
            }
        }
    }
    out
}

fn fileglob(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut out = Vec::new();
    for term in &call.terms {
        let term = py_str(term);
        let (dir, file) = match term.rsplit_once('/') {
            Some((d, f)) => (Some(d), f),
            None => (None, term.as_str()),
        };
        let mut dirs = Vec::new();
        match dir {
            Some(d) => {
                dirs.extend(find_file(call, "files", if d.is_empty() { "/" } else { d }, true)?)
            }
            None => {
                for p in search_paths(call.env) {
                    dirs.push(p.join("files"));
                    dirs.push(p);
                }
            }
        }
        for dir in dirs {
            let found = glob_files(&dir, file);
            if call.host_named {
                let roots = confinement(call.env);
                for path in &found {
                    let checked = tack_loader::confine::check_found(Path::new(path), &roots);
                    confine(call, path, checked)?;
                }
            }
            if !found.is_empty() {
                out.extend(found.into_iter().map(JValue::from));
                break;
            }
        }
    }
    Ok(out)
}

/// first_found's options while its terms are processed (a dictionary term resets them).
struct FirstFound {
    files: Vec<String>,
    paths: Vec<String>,
    skip: bool,
}

impl FirstFound {
    fn set(pairs: &[(String, JValue)]) -> Result<FirstFound, LookupError> {
        let mut o = FirstFound { files: Vec::new(), paths: Vec::new(), skip: false };
        for (key, value) in pairs {
            match key.as_str() {
                "files" => o.files = list_option(value),
                "paths" => o.paths = list_option(value),
                "skip" => o.skip = boolean(value, false),
                _ => {}
            }
        }
        Ok(o)
    }
}

/// An option of type `list`: a string is split on commas, as ansible's `ensure_type` does.
fn list_option(value: &JValue) -> Vec<String> {
    match value.kind() {
        ValueKind::String => {
            value.as_str().unwrap_or_default().split(',').map(|s| s.trim().to_string()).collect()
        }
        ValueKind::None => Vec::new(),
        _ => strings_of(value),
    }
}

/// `_split_on`: each entry split on any of `splitters`, with ansible's deprecation when one
/// was split.
fn split_on(target: &str, items: &[String], splitters: &str) -> Vec<String> {
    let mut out = Vec::new();
    for item in items {
        let parts: Vec<String> =
            item.split(|c| splitters.contains(c)).map(str::to_string).collect();
        if parts.len() > 1 {
            let diag = tack_diag::Diagnostic::new(format!(
                "Automatic splitting of {target} on {} is deprecated.",
                tack_yaml::pyrepr::str_repr(splitters)
            ))
            .with_help(format!("Provide a list of paths for {target} instead."));
            tack_diag::deprecate(&diag, "2.23");
        }
        out.extend(parts);
    }
    out
}

fn first_found_terms(
    terms: &[JValue],
    options: &mut FirstFound,
    out: &mut Vec<String>,
) -> Result<(), LookupError> {
    for term in terms {
        let (files, target) = match term.kind() {
            ValueKind::Map => {
                let mut pairs = Vec::new();
                for key in term.try_iter()? {
                    let value = term.get_item(&key)?;
                    pairs.push((py_str(&key), value));
                }
                *options = FirstFound::set(&pairs)?;
                (options.files.clone(), "the 'files' option")
            }
            ValueKind::String => (vec![py_str(term)], "files"),
            ValueKind::Seq | ValueKind::Iterable => {
                let items: Vec<JValue> = term.try_iter()?.collect();
                first_found_terms(&items, options, out)?;
                continue;
            }
            _ => {
                return Err(LookupError::failed(format!(
                    "Invalid term supplied. A string, dict or list is required, not {}).",
                    tack_yaml::pyrepr::str_repr(crate::filters::pyval::type_name(term))
                )));
            }
        };
        let files = split_on(target, &files, ",;");
        let paths = split_on("the \"paths\" option", &options.paths, ",:;");
        if paths.is_empty() {
            out.extend(files);
        } else {
            for path in &paths {
                for f in &files {
                    out.push(
                        tack_py::path::join(Path::new(path), Path::new(f))
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Drops undefined values inside the terms of a `with_first_found` loop; elsewhere an
/// undefined value anywhere in the terms is the error.
fn defined_terms(value: &JValue, as_with: bool) -> Result<Option<JValue>, LookupError> {
    if value.is_undefined() {
        if as_with {
            return Ok(None);
        }
        return Err(LookupError::Template(crate::value::undefined_error(value)));
    }
    match value.kind() {
        // A term whose template failed otherwise (read lazily): that failure.
        ValueKind::Invalid => Err(LookupError::Template(crate::value::invalid_error(value))),
        ValueKind::Seq | ValueKind::Iterable => {
            let mut items = Vec::new();
            for item in value.try_iter()? {
                items.extend(defined_terms(&item, as_with)?);
            }
            Ok(Some(crate::value::new_list(items)))
        }
        ValueKind::Map => {
            let mut entries = indexmap::IndexMap::new();
            for key in value.try_iter()? {
                let item = value.get_item(&key)?;
                if let Some(item) = defined_terms(&item, as_with)? {
                    entries.insert(key, item);
                }
            }
            Ok(Some(crate::value::new_dict(entries)))
        }
        _ => Ok(Some(value.clone())),
    }
}

fn first_found(call: &Call) -> Result<Vec<JValue>, LookupError> {
    if let Some((_, undefined)) = call.kwargs.iter().find(|(_, v)| v.is_undefined()) {
        return Err(LookupError::Template(crate::value::undefined_error(undefined)));
    }
    let mut terms = Vec::new();
    for term in &call.terms {
        terms.extend(defined_terms(term, call.as_with)?);
    }
    // The running task's action, whether called from its `with_` loop or its arguments.
    let action = call.action.map(str::to_string).or_else(crate::task_context::task_action);
    let subdir = match action.as_deref() {
        Some(action) => {
            ["template", "var", "file"].into_iter().find(|s| action.contains(s)).unwrap_or("file")
        }
        None => "file",
    };
    let mut options = FirstFound::set(&call.kwargs)?;
    if terms.is_empty() {
        terms = options.files.iter().map(|f| JValue::from(f.as_str())).collect();
    }
    let mut search = Vec::new();
    first_found_terms(&terms, &mut options, &mut search)?;
    let subdir = format!("{subdir}s");
    // Every name a host chose is checked before the first is looked for.
    if call.host_named {
        let roots = confinement(call.env);
        for name in &search {
            confine(call, name, tack_loader::confine::check_name(name, &roots))?;
        }
    }
    for name in &search {
        if let Some(path) = find_file(call, &subdir, name, false)? {
            let found = tack_py::ansible::unfrackpath(&path, false, None);
            return Ok(vec![JValue::from(found.to_string_lossy().into_owned())]);
        }
    }
    if options.skip {
        return Ok(Vec::new());
    }
    Err(LookupError::failed("No file was found when using first_found."))
}
