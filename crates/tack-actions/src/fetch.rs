//! `fetch`, as ansible's action plugin runs it: `stat` on the host's file (SHA-1, symlinks
//! followed), then, when the local copy differs, `slurp`, and the bytes written on the
//! controller at `dest/<inventory_hostname>/<src>` (or `dest` itself with `flat`).
//!
//! Unlike ansible, every destination is built and normalised without touching the file
//! system and refused unless it lies under `dest`, before any directory is made; a symbolic
//! link below `dest` is refused rather than followed; an `inventory_hostname` that is not one
//! path component, and a `dest` a managed host named, are refused. The fetched bytes are never
//! rendered or put in a variable.

use std::path::{Path, PathBuf};

use base64::Engine;
use md5::Digest as _;
use serde_json::{Map, Value as Json};
use tack_agent::Invocation;
use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

fn action_failed(data: Mapping, msg: &str, input: &ActionInput<'_>) -> ActionOutput {
    ActionOutput::action_failed(data, s(msg), input.task_origin.clone())
}

fn failed(msg: &str, input: &ActionInput<'_>) -> ActionOutput {
    super::shell_run::action_fail(input, msg)
}

/// `boolean(args.get(key, default), strict=False)`: a `null` given is false.
fn flag(input: &ActionInput<'_>, key: &str, default: bool) -> bool {
    input.args.get(key).map_or(default, |n| n.value.boolean_loose())
}

fn module(input: &ActionInput<'_>, name: &str, args: Map<String, Json>) -> Result<Mapping, String> {
    // ansible's fetch reads the file whatever the task's modes.
    let invocation = Invocation { check_mode: false, diff: false, ..input.invocation(args) };
    input
        .conn
        .run_module(name, &invocation)
        .map(|r| json::map_from_json(&r))
        .map_err(|e| e.to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha1_of(bytes: &[u8]) -> String {
    hex(&sha1::Sha1::digest(bytes))
}

/// The SHA-1 of a local file, or `None` when there is none to read (ansible's `checksum`).
fn local_sha1(path: &Path) -> Option<String> {
    std::fs::read(path).ok().filter(|_| path.is_file()).map(|b| sha1_of(&b))
}

fn normpath(p: &str) -> String {
    tack_py::path::normpath(Path::new(p)).to_string_lossy().into_owned()
}

fn text_of(node: Option<&Node>) -> Option<String> {
    node.map(|n| tack_yaml::pyrepr::str(&n.value))
}

/// The first symbolic link between `root` (excluded) and `path`, found without following any.
fn link_below(root: &Path, path: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(root).ok()?;
    let mut cur = root.to_path_buf();
    for part in rest.components() {
        cur.push(part);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Some(cur),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

/// The stat before the slurp: the host file's SHA-1 (`"1"` when it is missing), or the
/// task's output when the stat failed or found a directory.
fn remote_stat(
    input: &ActionInput<'_>,
    source: &str,
    fail_on_missing: bool,
) -> Result<Option<String>, Box<ActionOutput>> {
    let mut data = Mapping::new();
    let mut stat_args = Map::new();
    stat_args.insert("path".into(), Json::String(source.to_string()));
    stat_args.insert("follow".into(), Json::Bool(true));
    stat_args.insert("get_checksum".into(), Json::Bool(true));
    stat_args.insert("checksum_algorithm".into(), Json::String("sha1".into()));
    let stat = match module(input, "stat", stat_args) {
        Ok(r) => r,
        Err(e) => return Err(Box::new(failed(&e, input))),
    };
    if stat.get("failed").is_some_and(|f| f.value.is_truthy()) {
        let why = text_of(stat.get("msg")).unwrap_or_default();
        let text = format!("Failed to get information on remote file ({source}): {why}");
        data.insert(s("changed"), b(false));
        data.insert(s("file"), s(source));
        if fail_on_missing {
            return Err(Box::new(action_failed(data, &text, input)));
        }
        data.insert(s("msg"), s(&format!("{text}, ignored")));
        return Err(Box::new(ActionOutput::new(data)));
    }
    let info = stat.get("stat").and_then(Node::as_map).cloned().unwrap_or_default();
    let is = |k: &str| info.get(k).is_some_and(|v| v.value.is_truthy());
    if is("exists") && is("isdir") {
        let msg = "remote file is a directory, fetch cannot work on directories";
        if !fail_on_missing {
            data.insert(s("msg"), s(&format!("{msg}, not transferring, ignored")));
            return Err(Box::new(ActionOutput::new(data)));
        }
        data.insert(s("changed"), b(false));
        return Err(Box::new(action_failed(data, msg, input)));
    }
    Ok(Some(if is("exists") {
        text_of(info.get("checksum")).unwrap_or_default()
    } else {
        "1".to_string()
    }))
}

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    if input.check_mode {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        data.insert(s("skipped"), b(true));
        data.insert(s("msg"), s("check mode not (yet) supported for this module"));
        // ansible's action raises the skip: nothing after the action sees the result.
        let mut out = ActionOutput::new(data);
        out.raised = true;
        return out;
    }
    if let Some(refused) = input.refuse_host_named(&["dest"], "written") {
        return refused;
    }
    let (src_node, dest_node) = (input.args.get("src"), input.args.get("dest"));
    let is_str = |n: Option<&Node>| n.is_some_and(|n| matches!(n.value, Value::Str(_)));
    let mut msg = "";
    if !is_str(src_node) {
        msg = "Invalid type supplied for source option, it must be a string";
    }
    if !is_str(dest_node) {
        msg = "Invalid type supplied for dest option, it must be a string";
    }
    let absent = |n: Option<&Node>| n.is_none_or(|n| matches!(n.value, Value::Null));
    if absent(src_node) || absent(dest_node) {
        msg = "src and dest are required";
    }
    if !msg.is_empty() {
        return failed(msg, input);
    }
    let mut source = text_of(src_node).unwrap_or_default();
    let original_dest = text_of(dest_node).unwrap_or_default();
    let flat = flag(input, "flat", false);
    let fail_on_missing = flag(input, "fail_on_missing", true);
    let validate_checksum = flag(input, "validate_checksum", true);
    // On the host, as ansible's `_remote_expand_user` expands it.
    source = super::shell_run::remote_expand_user(input, &source);

    let mut data = Mapping::new();
    // Under become ansible does not stat: slurp (which it takes anyway) says what is there.
    let mut remote_checksum = None;
    if !input.becomes {
        match remote_stat(input, &source, fail_on_missing) {
            Ok(checksum) => remote_checksum = checksum,
            Err(out) => return *out,
        }
    }
    let mut remote_data = None;
    if matches!(remote_checksum.as_deref(), None | Some("1") | Some("")) {
        let mut slurp_args = Map::new();
        slurp_args.insert("src".into(), Json::String(source.clone()));
        let slurped = match module(input, "slurp", slurp_args) {
            Ok(r) => r,
            Err(e) => return failed(&e, input),
        };
        if slurped.get("failed").is_some_and(|f| f.value.is_truthy()) {
            let error = crate::module_result::error_summary(&slurped);
            let said = text_of(slurped.get("msg")).unwrap_or_default();
            if fail_on_missing {
                data = slurped.clone();
                if data.get("changed").is_none() {
                    data.insert(s("changed"), b(false));
                }
            } else {
                data.insert(s("file"), s(&source));
                data.insert(s("changed"), b(false));
            }
            if said.contains("not found") {
                data.insert(
                    s("msg"),
                    s("the remote file does not exist, not transferring, ignored"),
                );
            } else if said.to_lowercase().starts_with("source is a directory") {
                data.insert(
                    s("msg"),
                    s("remote file is a directory, fetch cannot work on directories"),
                );
            }
            let mut out = ActionOutput::new(data);
            if fail_on_missing {
                out.error = Some(Diagnostic::at(
                    format!("Task failed: Module failed: {error}"),
                    input.task_origin.clone(),
                ));
            }
            return out;
        }
        let content = text_of(slurped.get("content")).unwrap_or_default();
        match base64::engine::general_purpose::STANDARD.decode(content.as_bytes()) {
            Ok(bytes) => {
                remote_checksum = Some(sha1_of(&bytes));
                remote_data = Some(bytes);
            }
            Err(e) => return failed(&format!("slurp's content is not base64: {e}"), input),
        }
    }

    // Every path below is text until it has been checked: nothing is looked up or made
    // before the destination is known to lie under `dest`.
    let root = normpath(
        &tack_loader::paths::path_dwim(&input.search.basedir, &original_dest).to_string_lossy(),
    );
    let mut dest = original_dest.clone();
    if flat {
        if Path::new(&dest).is_dir() && !dest.ends_with('/') {
            return failed(
                "dest is an existing directory, use a trailing slash if you want to fetch src into that directory",
                input,
            );
        }
        if dest.ends_with('/') {
            let base = tack_py::path::basename(Path::new(&source)).to_owned();
            dest = tack_py::path::join(Path::new(&dest), Path::new(&base))
                .to_string_lossy()
                .into_owned();
            if Path::new(&dest).is_dir() {
                return failed(
                    &format!(
                        "calculated dest '{dest}' is an existing directory, use another path that does not point to an existing directory"
                    ),
                    input,
                );
            }
        }
        if !dest.starts_with('/') {
            dest = tack_loader::paths::path_dwim(&input.search.basedir, &dest)
                .to_string_lossy()
                .into_owned();
        }
    } else {
        let host = input
            .scope
            .get("inventory_hostname")
            .map(|b| tack_yaml::pyrepr::str(&b.node().value))
            .unwrap_or_default();
        if host.is_empty() || host.contains('/') || host == "." || host == ".." {
            return failed(
                &format!(
                    "the inventory_hostname '{host}' is not one path component, and fetch files what it fetches under it"
                ),
                input,
            );
        }
        dest = format!("{root}/{host}/{source}");
    }
    let dest = normpath(&dest);
    let under = dest == root || dest.starts_with(&format!("{}/", root.trim_end_matches('/')));
    if !under {
        return failed(&format!("the fetched path {dest} is outside '{original_dest}'"), input);
    }
    let dest_path = PathBuf::from(&dest);
    if let Some(link) = link_below(Path::new(&root), &dest_path) {
        return failed(
            &format!(
                "the fetched path {dest} passes through the symbolic link {} under '{original_dest}', which fetch does not follow",
                link.display()
            ),
            input,
        );
    }

    let local_checksum = local_sha1(&dest_path);
    if remote_checksum != local_checksum {
        let bytes = match remote_data {
            Some(bytes) => bytes,
            None => {
                let mut slurp_args = Map::new();
                slurp_args.insert("src".into(), Json::String(source.clone()));
                let slurped = match module(input, "slurp", slurp_args) {
                    Ok(r) => r,
                    Err(e) => return failed(&e, input),
                };
                if slurped.get("failed").is_some_and(|f| f.value.is_truthy()) {
                    return failed(&crate::module_result::error_summary(&slurped), input);
                }
                let content = text_of(slurped.get("content")).unwrap_or_default();
                match base64::engine::general_purpose::STANDARD.decode(content.as_bytes()) {
                    Ok(bytes) => bytes,
                    Err(e) => return failed(&format!("slurp's content is not base64: {e}"), input),
                }
            }
        };
        // Written below `dest` without following a link there even if one appears now (the
        // check above is a moment old); the user's own `dest` path is followed as given. An
        // existing file keeps its mode, as ansible's write keeps it.
        let (base, rest) = match dest_path.strip_prefix(&root) {
            Ok(rest) if !rest.as_os_str().is_empty() => (PathBuf::from(&root), rest.to_path_buf()),
            _ => (
                dest_path.parent().map(Path::to_path_buf).unwrap_or_default(),
                PathBuf::from(dest_path.file_name().unwrap_or_default()),
            ),
        };
        match crate::fetch_write::write_under(&base, &rest, &bytes) {
            Ok(()) => {}
            Err(crate::fetch_write::WriteError::Link(link)) => {
                return failed(
                    &format!(
                        "the fetched path {dest} passes through the symbolic link {link} under '{original_dest}', which fetch does not follow"
                    ),
                    input,
                );
            }
            Err(_) => return failed("Failed to fetch the file.", input),
        }
        let new_checksum = sha1_of(&bytes);
        let new_md5 = hex(&md5::Md5::digest(&bytes));
        data.insert(s("md5sum"), s(&new_md5));
        data.insert(s("file"), s(&source));
        data.insert(s("dest"), s(&dest));
        data.insert(s("remote_md5sum"), Node::bare(Value::Null));
        data.insert(s("checksum"), s(&new_checksum));
        let remote = remote_checksum.clone().map(|c| s(&c)).unwrap_or(Node::bare(Value::Null));
        data.insert(s("remote_checksum"), remote);
        if validate_checksum && Some(&new_checksum) != remote_checksum.as_ref() {
            // Unlike ansible, what does not match the host's file is not left behind.
            let _ = std::fs::remove_file(&dest_path);
            return action_failed(data, "checksum mismatch", input);
        }
        data.insert(s("changed"), b(true));
    } else {
        let md5 = std::fs::read(&dest_path).map(|b| hex(&md5::Md5::digest(&b))).unwrap_or_default();
        data.insert(s("changed"), b(false));
        data.insert(s("md5sum"), s(&md5));
        data.insert(s("file"), s(&source));
        data.insert(s("dest"), s(&dest));
        let local = local_checksum.map(|c| s(&c)).unwrap_or(Node::bare(Value::Null));
        data.insert(s("checksum"), local);
    }
    ActionOutput::new(data)
}
