//! The diff `copy` and `template` report in diff mode, as ansible's `ActionBase._get_diff_data`
//! builds it: the destination peeked at with the file module (`_diff_peek`) and read back with
//! `slurp`, the source read on the controller, each side replaced by a marker when it looks
//! binary or is larger than `MAX_FILE_SIZE_FOR_DIFF`.
//!
//! Also the controller-side file `template` renders into before copying (its path is the diff's
//! `after` header, as ansible's is): written private, removed as soon as the diff is read.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{Map, Value as Json};

use crate::input::ActionInput;

/// Where the new content came from, which names the diff's `after` side.
pub(super) enum Source<'a> {
    /// `content:`: the header is the destination.
    Content,
    /// A file on the controller: its path.
    File(&'a Path),
}

/// `_get_diff_data(destination, source, task_vars, content)`. A failed peek gives an empty
/// diff and the warning ansible prints.
pub(super) fn diff_data(
    input: &ActionInput<'_>,
    dest: &str,
    bytes: &[u8],
    source: Source<'_>,
    source_name: &str,
) -> Json {
    let limit = input.diff_settings.max_size;
    let too_large = |size: i64| limit > 0 && size > limit;
    let mut diff = Map::new();
    let mut peek_args = Map::new();
    peek_args.insert("path".into(), Json::String(dest.into()));
    peek_args.insert("_diff_peek".into(), Json::Bool(true));
    let peek = match super::copy::run_module("file", peek_args, input) {
        Ok(r) => r,
        Err(e) => return peek_failed(source_name, dest, &e, diff),
    };
    let flag = |k: &str| peek.get(k).is_some_and(|v| v.value.is_truthy());
    if flag("failed") {
        let msg = peek.get("msg").map(|m| tack_yaml::pyrepr::str(&m.value)).unwrap_or_default();
        return peek_failed(source_name, dest, &msg, diff);
    }
    let int = |k: &str| match peek.get(k).map(|n| &n.value) {
        Some(tack_yaml::Value::Int(i)) => *i,
        _ => 0,
    };
    let rc = int("rc");
    if rc != 0 {
        return Json::Object(diff);
    }
    let state = peek.get("state").map(|s| tack_yaml::pyrepr::str(&s.value));
    let size = int("size");
    if state.is_none() || state.as_deref() == Some("absent") {
        diff.insert("before".into(), Json::String(String::new()));
    } else if flag("appears_binary") {
        diff.insert("dst_binary".into(), Json::from(1));
    } else if size > 0 && too_large(size) {
        diff.insert("dst_larger".into(), Json::from(limit));
    } else {
        let mut slurp_args = Map::new();
        slurp_args.insert("path".into(), Json::String(dest.into()));
        let slurped = super::copy::run_module("slurp", slurp_args, input).ok();
        if let Some(content) = slurped.as_ref().and_then(|r| r.get("content")) {
            let text = tack_yaml::pyrepr::str(&content.value);
            let data = base64::engine::general_purpose::STANDARD.decode(text).unwrap_or_default();
            diff.insert("before_header".into(), Json::String(dest.into()));
            diff.insert("before".into(), Json::String(shown(&data)));
        }
    }
    if too_large(i64::try_from(bytes.len()).unwrap_or(i64::MAX)) {
        diff.insert("src_larger".into(), Json::from(limit));
    } else if bytes.contains(&0) {
        diff.insert("src_binary".into(), Json::from(1));
    } else {
        let header = match source {
            Source::Content => dest.to_string(),
            Source::File(path) => path.to_string_lossy().into_owned(),
        };
        diff.insert("after_header".into(), Json::String(header));
        diff.insert("after".into(), Json::String(shown(bytes)));
    }
    Json::Object(diff)
}

/// A side of the diff as ansible's terminal shows it: read as UTF-8 with every byte that is not
/// (ansible keeps each as a lone surrogate), then each of those printed as `?` under a warning
/// given once. A file written in `latin-1` or `cp1251` diffs this way.
fn shown(data: &[u8]) -> String {
    let mut text = String::with_capacity(data.len());
    let mut replaced = false;
    for chunk in data.utf8_chunks() {
        text.push_str(chunk.valid());
        text.extend(std::iter::repeat_n('?', chunk.invalid().len()));
        replaced |= !chunk.invalid().is_empty();
    }
    if replaced {
        tack_diag::warn(&tack_diag::Diagnostic::new(
            "Non UTF-8 encoded data replaced with \"?\" while displaying text to stdout/stderr.",
        ));
    }
    text
}

fn peek_failed(source_name: &str, dest: &str, msg: &str, diff: Map<String, Json>) -> Json {
    let base = Path::new(source_name).file_name().map(|n| n.to_string_lossy().into_owned());
    tack_diag::warn(&tack_diag::Diagnostic::new(format!(
        "Failed to get diff between '{}' and '{dest}': {msg}",
        base.unwrap_or_default()
    )));
    Json::Object(diff)
}

/// The rendered template as ansible writes it before copying: `<basename>` inside a fresh
/// `tmp*` directory under an `ansible-local-<pid>*` directory in `DEFAULT_LOCAL_TMP`
/// (`~/.ansible/tmp`, with `~` from `$HOME` as the controller expands it, when unresolved).
pub(super) struct RenderedFile {
    run_dir: PathBuf,
    pub path: PathBuf,
}

impl RenderedFile {
    pub(super) fn write(
        local_tmp: Option<&Path>,
        basename: &str,
        bytes: &[u8],
    ) -> std::io::Result<RenderedFile> {
        RenderedFile::write_in(local_tmp, Some(basename), bytes)
    }

    /// `assemble`'s joined fragments as ansible writes them: a `tmp*` file (no directory of
    /// its own) in the `ansible-local-<pid>*` directory.
    pub(super) fn write_assembled(
        local_tmp: Option<&Path>,
        bytes: &[u8],
    ) -> std::io::Result<RenderedFile> {
        RenderedFile::write_in(local_tmp, None, bytes)
    }

    fn write_in(
        local_tmp: Option<&Path>,
        basename: Option<&str>,
        bytes: &[u8],
    ) -> std::io::Result<RenderedFile> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let root = local_tmp.map_or_else(|| home.join(".ansible").join("tmp"), Path::to_path_buf);
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&root)?;
        let run_dir = root.join(format!("ansible-local-{}{}", std::process::id(), random_name()?));
        std::fs::DirBuilder::new().mode(0o700).create(&run_dir)?;
        let tmp = run_dir.join(format!("tmp{}", random_name()?));
        let path = match basename {
            Some(basename) => {
                std::fs::DirBuilder::new().mode(0o700).create(&tmp)?;
                tmp.join(basename)
            }
            None => tmp,
        };
        let mut file =
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
        file.write_all(bytes)?;
        Ok(RenderedFile { run_dir, path })
    }
}

impl Drop for RenderedFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.run_dir);
    }
}

/// Eight characters as Python's `tempfile` names directories.
fn random_name() -> std::io::Result<String> {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_";
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(random.iter().map(|b| CHARS[usize::from(*b) % CHARS.len()] as char).collect())
}
