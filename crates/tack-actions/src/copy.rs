//! `copy` and `template` as ansible's action plugins run them: the bytes are found (or
//! rendered) on the controller, the destination is stat'ed with its SHA-1; equal bytes only
//! get the `file` module's attributes, different bytes are staged on the host over its
//! connection (`staging`) and moved into place by the `copy` module, and the staged file is
//! removed as soon as the module returns.
//!
//! A whole-file vault among the sources is sent decrypted (`decrypt: false` sends it as it
//! is); `remote_src` hands the host's own file to the module. A controller directory is
//! copied entry by entry (`copy_tree`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};
use sha1::Digest;
use tack_diag::{Diagnostic, Origin};
use tack_yaml::{Mapping, Node, Value};

use super::staging::Staged;
use crate::copy_diff;
use crate::input::{ActionInput, SearchPath};
use crate::json;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

/// Arguments the action consumes itself; the rest go to the modules.
const ACTION_ONLY: &[&str] = &["src", "content", "remote_src", "local_follow", "decrypt"];
const TEMPLATE_ONLY: &[&str] = &[
    "src",
    "newline_sequence",
    "variable_start_string",
    "variable_end_string",
    "block_start_string",
    "block_end_string",
    "comment_start_string",
    "comment_end_string",
    "trim_blocks",
    "lstrip_blocks",
    "output_encoding",
];

fn failed(msg: String, origin: Option<Origin>) -> ActionOutput {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    ActionOutput::action_failed(data, Node::bare(Value::Str(msg)), origin)
}

#[allow(clippy::needless_lifetimes)]
fn arg<'a>(input: &'a ActionInput<'_>, name: &str) -> Option<&'a Node> {
    input.args.get(name)
}

/// `_find_needle`: the file in the task's search path, or ansible's error naming every place
/// it looked.
pub(super) fn find(search: &SearchPath, dir: &str, name: &str) -> Result<PathBuf, Diagnostic> {
    let mut paths = search.roles.clone();
    if !paths.contains(&search.task_dir) {
        paths.push(search.task_dir.clone());
    }
    tack_loader::search::path_dwim_relative_stack(&search.basedir, &paths, Some(dir), name).map_err(
        |searched| {
            let list: Vec<String> = searched.iter().map(|p| p.display().to_string()).collect();
            Diagnostic::new(format!(
                "Could not find or access '{name}'\nSearched in:\n\t{} on the Ansible Controller.",
                list.join("\n\t")
            ))
            .with_help("If you are using a module and expect the file to exist on the remote, see the remote_src option.")
        },
    )
}

/// A controller file's bytes as ansible's `get_real_file` gives them: a whole-file vault
/// decrypted with the run's secrets unless `decrypt` is false. `Err` is the task's output:
/// ansible's own error when there are no secrets, else what decryption said, or why the
/// file could not be read (`unreadable`'s words).
pub(super) fn real_file(
    input: &ActionInput<'_>,
    path: &Path,
    decrypt: bool,
    unreadable: impl FnOnce(std::io::Error) -> ActionOutput,
) -> Result<Vec<u8>, ActionOutput> {
    let bytes = std::fs::read(path).map_err(unreadable)?;
    if !decrypt || !tack_vault::is_encrypted(&bytes) {
        return Ok(bytes);
    }
    let secrets = input.templar.loader().secrets();
    let message = if secrets.is_empty() {
        format!("A vault password or secret must be specified to decrypt {}", path.display())
    } else {
        match secrets.decrypt(&bytes) {
            Ok(plain) => return Ok(plain),
            Err(e) => format!("{e} on {}", path.display()),
        }
    };
    Err(raised_through(input, &message))
}

/// The task's output for an ansible error raised through the action (a controller file that
/// could not be decrypted, a bad template option): its message gains `Task failed: `.
pub(super) fn raised_through(input: &ActionInput<'_>, message: &str) -> ActionOutput {
    let text = format!("Task failed: {message}");
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(&text));
    let mut out = ActionOutput::new(data);
    out.error = Some(Diagnostic::at(text, input.task_origin.clone()));
    out
}

/// An `AnsibleActionFail` raised inside the action: the task fails with the error's chain.
pub(super) fn raised(cause: Diagnostic, origin: Option<Origin>) -> ActionOutput {
    let middle = Diagnostic::caused_by("Unexpected AnsibleActionFail error.", None, cause);
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(&middle.brief()));
    let mut out = ActionOutput::new(data);
    out.error = Some(Diagnostic::caused_by("Task failed.", origin, middle));
    out.raised = true;
    out
}

/// `copy`.
pub fn copy(input: &ActionInput<'_>, search: &SearchPath) -> ActionOutput {
    if let Some(refused) = input.refuse_invocation("copy") {
        return refused;
    }
    let remote_src = arg(input, "remote_src").is_some_and(crate::input::loose_bool);
    // With remote_src the src is a path on the host, which the host may name; a controller
    // file a host named is never looked up.
    if !remote_src && let Some(refused) = input.refuse_host_named(&["src"], "sent") {
        return refused;
    }
    let content = arg(input, "content").filter(|n| !matches!(n.value, Value::Null));
    let src =
        arg(input, "src").filter(|n| n.value.is_truthy()).map(|n| tack_yaml::pyrepr::str(&n.value));
    // ansible's checks, in its order, before anything is looked up or asked.
    let truthy = |n: Option<&Node>| n.is_some_and(|n| n.value.is_truthy());
    let dest = input.text("dest");
    let refusal = if !truthy(arg(input, "src")) && content.is_none() {
        Some("src (or content) is required")
    } else if !truthy(arg(input, "dest")) {
        Some("dest is required")
    } else if truthy(arg(input, "src")) && content.is_some() {
        Some("src and content are mutually exclusive")
    } else if content.is_some() && dest.as_deref().is_some_and(|d| d.ends_with('/')) {
        Some("can not use content with a dir as dest")
    } else {
        None
    };
    if let Some(msg) = refusal {
        return failed(msg.into(), input.task_origin.clone());
    }
    if remote_src && content.is_none() {
        return super::module::run(input, "copy");
    }
    // The checks above leave content alone, or a src.
    let (bytes, basename, source) = match (content, &src) {
        // `bytes` (a `!!binary` value) are written as they are, as ansible's `to_bytes` keeps them.
        (Some(Node { value: Value::Bytes(data), .. }), _) => {
            (data.clone(), None, DiffSource::Content)
        }
        (Some(node), _) => {
            let text = match &node.value {
                Value::Str(t) | Value::Unsafe(t) => t.clone(),
                other => tack_yaml::to_json(
                    &Node::bare(other.clone()),
                    &tack_yaml::JsonOptions::compact(),
                )
                .unwrap_or_default(),
            };
            (text.into_bytes(), None, DiffSource::Content)
        }
        (None, Some(name)) => {
            let path = match find(search, "files", name) {
                Ok(path) => path,
                Err(e) => return raised(e, input.task_origin.clone()),
            };
            if path.is_dir() {
                if input.text("dest").is_none_or(|d| d.is_empty()) {
                    return failed("dest is required".into(), input.task_origin.clone());
                }
                return super::copy_tree::run(input, &path, name);
            }
            if let Some(refusal) = super::staging::too_big(input.conn, &path) {
                return failed(
                    format!("could not stage the file: {refusal}"),
                    input.task_origin.clone(),
                );
            }
            let decrypt = arg(input, "decrypt").is_none_or(crate::input::loose_bool);
            let unreadable = |e: std::io::Error| {
                failed(format!("Could not find or access '{name}': {e}"), input.task_origin.clone())
            };
            match real_file(input, &path, decrypt, unreadable) {
                Ok(bytes) => {
                    let base = path.file_name().map(|n| n.to_string_lossy().into_owned());
                    (bytes, base, DiffSource::File(path))
                }
                Err(out) => return out,
            }
        }
        (None, None) => {
            return failed("src (or content) is required".into(), input.task_origin.clone());
        }
    };
    transfer(input, bytes, basename, ACTION_ONLY, source)
}

/// The template action's own options as ansible's reads them: the six delimiters,
/// `trim_blocks` and `lstrip_blocks`; `newline_sequence` checked (`\\n`-style spellings
/// unescaped); `state` and equal start strings refused in ansible's words; an
/// `output_encoding` tack has no encoder for (the CJK multi-byte codecs, `utf-7`, `idna`, the
/// escape codecs) refused by name.
fn template_overrides(
    input: &ActionInput<'_>,
) -> Result<tack_template::TemplateOverrides, ActionOutput> {
    let fail = |msg: &str| Err(super::shell_run::action_fail(input, msg));
    let mut o = tack_template::TemplateOverrides::default();
    let text = |k: &str| input.text(k);
    for (key, slot) in [
        ("block_start_string", &mut o.block.0),
        ("block_end_string", &mut o.block.1),
        ("variable_start_string", &mut o.variable.0),
        ("variable_end_string", &mut o.variable.1),
        ("comment_start_string", &mut o.comment.0),
        ("comment_end_string", &mut o.comment.1),
    ] {
        if let Some(value) = text(key) {
            *slot = value;
        }
    }
    if let Some(flag) = arg(input, "trim_blocks") {
        o.trim_blocks = crate::input::loose_bool(flag);
    }
    if let Some(flag) = arg(input, "lstrip_blocks") {
        o.lstrip_blocks = crate::input::loose_bool(flag);
    }
    // An unknown or unusable encoding fails only once the template has rendered, as ansible's
    // does; one tack has no encoder for is refused before any work.
    if let Some(encoding) = output_encoding(input)
        && let Err(tack_py::codecs::EncodeError::Unsupported { .. }) =
            tack_py::codecs::encode(&encoding, "")
    {
        return Err(failed(
            format!("tack does not support the template option 'output_encoding: {encoding}' yet"),
            input.task_origin.clone(),
        ));
    }
    // Checked as ansible checks it, and then, measured on ansible-core 2.21.5, without effect
    // on what is written (the file keeps its own newlines).
    let sequence = text("newline_sequence").map(|s| match s.as_str() {
        "\\n" => "\n".to_string(),
        "\\r" => "\r".to_string(),
        "\\r\\n" => "\r\n".to_string(),
        _ => s,
    });
    if arg(input, "state").is_some_and(|n| !matches!(n.value, Value::Null)) {
        return fail("'state' cannot be specified on a template");
    }
    if sequence.is_some_and(|s| !matches!(s.as_str(), "\n" | "\r" | "\r\n")) {
        // ansible's message loses its trailing `\r\n` on the way out.
        return fail("newline_sequence needs to be one of: \n, \r or");
    }
    if o.block.0 == o.variable.0 || o.variable.0 == o.comment.0 || o.comment.0 == o.block.0 {
        return Err(raised_through(
            input,
            "Block, variable and comment start strings must be different.",
        ));
    }
    Ok(o)
}

/// `template`.
pub fn template(input: &ActionInput<'_>, search: &SearchPath) -> ActionOutput {
    if let Some(refused) = input.refuse_invocation("template") {
        return refused;
    }
    if let Some(refused) = input.refuse_host_named(&["src"], "sent") {
        return refused;
    }
    let overrides = match template_overrides(input) {
        Ok(overrides) => overrides,
        Err(out) => return out,
    };
    let Some(src) = arg(input, "src").map(|n| tack_yaml::pyrepr::str(&n.value)) else {
        return super::shell_run::action_fail(input, "src and dest are required");
    };
    let path = match find(search, "templates", &src) {
        Ok(path) => path,
        // ansible's own error, not wrapped as copy's is, and without its help.
        Err(e) => {
            let cause = Diagnostic::new(e.message.clone()).while_handling();
            let error = Diagnostic::caused_by("Task failed.", input.task_origin.clone(), cause);
            let mut out = crate::output::errored(error);
            out.data.insert(s("msg"), s(&e.message));
            return out;
        }
    };
    let dest = arg(input, "dest").map(|n| tack_yaml::pyrepr::str(&n.value));
    let mut search_path = search.roles.clone();
    if !search_path.contains(&search.task_dir) {
        search_path.push(search.task_dir.clone());
    }
    let options = tack_template::TemplateFileOptions {
        path_as_given: Some(src.clone()),
        search_path,
        dest_path: dest,
        overrides,
        ..Default::default()
    };
    let text = match input.templar.render_file_with(&path, input.scope, &options) {
        // A plan's unavailable value rendered as text is no content: nothing is sent.
        Ok(rendered) if rendered.provenance.unavailable().next().is_some() => {
            let mut out = ActionOutput::new(Mapping::new());
            out.unavailable = rendered
                .provenance
                .unavailable()
                .next()
                .map(|p| std::sync::Arc::new(p.to_string()));
            return out;
        }
        Ok(rendered) => tack_yaml::pyrepr::str(&rendered.value.value),
        Err(e) => {
            let mut out = crate::output::errored(Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                e.to_diagnostic(),
            ));
            out.unavailable =
                e.unavailable.into_iter().next().map(|p| std::sync::Arc::new(p.to_string()));
            return out;
        }
    };
    // `to_bytes(text, encoding=output_encoding)`: CPython's codec, and its error as the task's.
    let bytes = match output_encoding(input) {
        None => text.into_bytes(),
        Some(encoding) => match tack_py::codecs::encode(&encoding, &text) {
            Ok(bytes) => bytes,
            Err(e) => return raised_through(input, &e.to_string()),
        },
    };
    let base = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    transfer(input, bytes, None, TEMPLATE_ONLY, DiffSource::Template(base))
}

/// `output_encoding`, where it names one: ansible reads an empty one as `utf-8`.
fn output_encoding(input: &ActionInput<'_>) -> Option<String> {
    input.text("output_encoding").filter(|e| !e.is_empty())
}

/// Where `copy`/`template` content came from, for the diff's `after` side.
enum DiffSource {
    Content,
    File(PathBuf),
    /// Rendered from a template of this base name.
    Template(String),
}

/// `run` for the diff's peek and read back.
pub(super) fn run_module(
    module: &str,
    args: Map<String, Json>,
    input: &ActionInput<'_>,
) -> Result<Mapping, String> {
    run_on(module, args, input).map_err(|e| e.to_string())
}

fn run_on(
    module: &str,
    args: Map<String, Json>,
    input: &ActionInput<'_>,
) -> Result<Mapping, tack_connect::ConnectionError> {
    let invocation = input.invocation(args);
    input.conn.run_module(module, &invocation).map(|r| json::map_from_json(&r))
}

/// A module the action ran failed on the link: the host is unreachable when the link is
/// gone (as ansible's connection failure is), else the action fails with the error.
fn module_errored(
    e: &tack_connect::ConnectionError,
    input: &ActionInput<'_>,
    origin: Option<Origin>,
) -> ActionOutput {
    if crate::output::link_lost(e) {
        return crate::output::link_errored(e, input.task_origin.clone());
    }
    failed(e.to_string(), origin)
}

/// The common half: compare with the destination, then set attributes or stage and copy.
fn transfer(
    input: &ActionInput<'_>,
    bytes: Vec<u8>,
    basename: Option<String>,
    own: &[&str],
    source: DiffSource,
) -> ActionOutput {
    let origin = input.task_origin.clone();
    let Some(mut dest) = arg(input, "dest").map(|n| tack_yaml::pyrepr::str(&n.value)) else {
        return failed("dest is required".into(), origin);
    };
    let checksum: String = sha1::Sha1::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let mut module_args: Map<String, Json> = json::map_to_json(input.args);
    for key in own {
        module_args.remove(*key);
    }
    // Under `force: false` an existing destination stays whatever it holds: its checksum is
    // not asked for.
    let force = input.args.get("force").is_none_or(crate::input::loose_bool);
    let mut stat_args = Map::new();
    stat_args.insert("path".into(), Json::String(dest.clone()));
    stat_args.insert("get_checksum".into(), Json::Bool(force));
    stat_args.insert("checksum_algorithm".into(), Json::String("sha1".into()));
    let stat = match run_on("stat", stat_args, input) {
        Ok(r) => r,
        Err(e) => return module_errored(&e, input, origin),
    };
    let mut info = stat.get("stat").and_then(Node::as_map).cloned().unwrap_or_default();
    let is = |info: &Mapping, k: &str| info.get(k).is_some_and(|v| v.value.is_truthy());
    if is(&info, "exists") && is(&info, "isdir") {
        // Into a directory: the file keeps its name, and that path is what is compared.
        let Some(base) = &basename else {
            return failed("can not use content with a dir as dest".into(), origin);
        };
        dest = Path::new(&dest).join(base).to_string_lossy().into_owned();
        module_args.insert("dest".into(), Json::String(dest.clone()));
        let mut again = Map::new();
        again.insert("path".into(), Json::String(dest.clone()));
        again.insert("get_checksum".into(), Json::Bool(force));
        again.insert("checksum_algorithm".into(), Json::String("sha1".into()));
        info = match run_on("stat", again, input) {
            Ok(r) => r.get("stat").and_then(Node::as_map).cloned().unwrap_or_default(),
            Err(e) => return module_errored(&e, input, origin),
        };
    }
    let flag = |k: &str| is(&info, k);
    let same = flag("exists")
        && info.get("checksum").map(|c| tack_yaml::pyrepr::str(&c.value)) == Some(checksum.clone());
    if flag("exists") && !force {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        data.insert(s("dest"), s(&dest));
        data.insert(s("src"), s(&dest));
        return ActionOutput::new(data);
    }
    let mut diff = None;
    let mut result = if same {
        let mut file_args = module_args.clone();
        file_args.remove("dest");
        for key in ["backup", "force", "validate", "checksum", "directory_mode"] {
            file_args.remove(key);
        }
        file_args.insert("path".into(), Json::String(dest.clone()));
        match run_on("file", file_args, input) {
            Ok(r) => r,
            Err(e) => return module_errored(&e, input, origin),
        }
    } else {
        if input.diff {
            diff = Some(match &source {
                DiffSource::Content => {
                    copy_diff::diff_data(input, &dest, &bytes, copy_diff::Source::Content, "")
                }
                DiffSource::File(path) => {
                    let name = path.to_string_lossy();
                    copy_diff::diff_data(input, &dest, &bytes, copy_diff::Source::File(path), &name)
                }
                DiffSource::Template(base) => match copy_diff::RenderedFile::write(
                    input.diff_settings.local_tmp.as_deref(),
                    base,
                    &bytes,
                ) {
                    Ok(file) => {
                        let name = file.path.to_string_lossy().into_owned();
                        let from = copy_diff::Source::File(&file.path);
                        copy_diff::diff_data(input, &dest, &bytes, from, &name)
                    }
                    Err(e) => {
                        return failed(
                            format!("could not write the rendered template: {e}"),
                            origin,
                        );
                    }
                },
            });
        }
        if input.check_mode {
            // ansible's copy action stops here in check mode, its diff made: nothing is
            // staged or sent, and the result says only that the file would change.
            let mut data = Mapping::new();
            data.insert(s("changed"), b(true));
            let list = diff.map(|d| vec![json::from_json(&d)]).unwrap_or_default();
            data.insert(s("diff"), Node::bare(Value::Seq(list)));
            return ActionOutput::new(data);
        }
        // ansible names the staged file `.source` with the destination's extension.
        let ext = Path::new(&dest).extension().map(|e| format!(".{}", e.to_string_lossy()));
        let name = format!(".source{}", ext.unwrap_or_default());
        let staged = match Staged::put(input.conn, &bytes, &name, false) {
            Ok(staged) => staged,
            Err(e) if crate::output::link_lost(&e) => {
                return crate::output::link_errored(&e, input.task_origin.clone());
            }
            Err(e) => return failed(format!("could not stage the file: {e}"), origin),
        };
        module_args.insert("src".into(), Json::String(staged.path().to_string()));
        module_args.insert("checksum".into(), Json::String(checksum.clone()));
        if let Some(base) = &basename {
            module_args.insert("_original_basename".into(), Json::String(base.clone()));
        }
        let out = run_on("copy", module_args, input);
        // The staged bytes are removed as soon as the module has them in place.
        drop(staged);
        match out {
            Ok(r) => r,
            Err(e) => return module_errored(&e, input, origin),
        }
    };
    if result.get("failed").is_some_and(|f| f.value.is_truthy()) {
        // A failed module's result is passed on as it came, with the local checksum ansible's
        // action adds.
        if result.get("checksum").is_none() {
            result.insert(s("checksum"), s(&checksum));
        }
        if result.get("changed").is_none() {
            result.insert(s("changed"), b(false));
        }
    } else if result.get("dest").is_none() {
        // The module's own `dest` stands (the copy module says `./name` for a bare name);
        // the file module's `path` is taken for it, as ansible's action takes it.
        let path = result.get("path").cloned();
        result.insert(s("dest"), path.unwrap_or_else(|| s(&dest)));
    }
    if same {
        result.insert(s("checksum"), s(&checksum));
    }
    if !input.diff {
        result.insert(s("diff"), Node::bare(Value::Seq(Vec::new())));
    } else if let Some(diff) = diff.filter(|_| result.get("diff").is_none()) {
        // The action's own diff, unless the module that wrote the file returned one.
        result.insert(s("diff"), Node::bare(Value::Seq(vec![json::from_json(&diff)])));
    }
    let mut out = ActionOutput::new(result);
    if out.data.get("failed").is_some_and(|f| f.value.is_truthy()) {
        let msg = out.data.get("msg").map(|m| tack_yaml::pyrepr::str(&m.value)).unwrap_or_default();
        out.error = Some(Diagnostic::at(
            format!("Task failed: Module failed: {msg}"),
            input.task_origin.clone(),
        ));
    }
    out
}
