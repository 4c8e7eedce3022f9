//! `unarchive`, as ansible-core 2.21's action plugin runs it: `copy` folded into
//! `remote_src` (the two together refused), `src` and `dest` required, `creates` tested on
//! the host first (a test that cannot run reads as "not there"), `~` in `dest` and `creates`
//! expanded on the host, the archive found under `files/` on the controller (the role's
//! first) unless `remote_src` names one on the host, `dest` checked to be an existing
//! directory, then the archive staged for the one sub-task that extracts it: ansible-core's
//! own `unarchive` module, through the Python path (`python_path::action`). The staged copy
//! is gone as soon as that module returns. An archive path a managed host chose is never
//! read (seed 002).
//!
//! Owns the plugin's steps; the extraction is ansible's module's, the staging the link's.

use serde_json::{Map, Value as Json};
use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::copy::{find, raised};
use super::staging::Staged;
use crate::input::ActionInput;
use crate::input::loose_bool;
use crate::output::ActionOutput;
use crate::shell_run;
use tack_report::result::s;

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    if let Some(refused) = input.refuse_invocation("unarchive") {
        return refused;
    }
    let fail = |msg: &str| shell_run::action_fail(input, msg);
    let mut args = input.args.clone();
    let mut remote_src = args.get("remote_src").is_some_and(loose_bool);
    // `copy` is the old spelling of `remote_src`, inverted.
    if let Some(copy) = args.get("copy").cloned() {
        if args.get("remote_src").is_some() {
            return fail("parameters are mutually exclusive: ('copy', 'remote_src')");
        }
        args.remove("copy");
        remote_src = !loose_bool(&copy);
        args.insert(s("remote_src"), Node::bare(Value::Bool(remote_src)));
    }
    // A controller archive a host named is never looked up; with remote_src the src is a
    // path on the host, which the host may name.
    if !remote_src && let Some(refused) = input.refuse_host_named(&["src"], "sent") {
        return refused;
    }
    let (Some(source), Some(dest)) = (input.text("src"), input.text("dest")) else {
        return fail("src (or content) and dest are required");
    };
    if let Some(creates) = input.text("creates").filter(|c| !c.is_empty()) {
        let creates = shell_run::remote_expand_user(input, &creates);
        if shell_run::exists(input, &creates) {
            return shell_run::skipped(&format!("skipped, since {creates} exists"), None);
        }
    }
    let dest = shell_run::remote_expand_user(input, &dest);
    let local = if remote_src {
        None
    } else {
        if source.contains("://") {
            return fail(&format!(
                "Unsupported option, an URI src ({}) is only supported when remote_src is True",
                mask_url(&source)
            ));
        }
        // `os.path.expanduser` on the controller, as ansible's plugin expands it.
        let expanded =
            tack_py::path::expanduser(std::path::Path::new(&source), &tack_py::path::ProcessEnv);
        match find(input.search, "files", &expanded.to_string_lossy()) {
            Ok(path) => Some(path),
            Err(e) => {
                // ansible lets the search's error out of the plugin as it is: the task's
                // message gains `Task failed: `, the cause keeps its help.
                let text = e.brief();
                let mut out = fail(&format!("Task failed: {text}"));
                out.data.remove("exception");
                out.error = Some(Diagnostic::caused_by(
                    "Task failed.",
                    input.task_origin.clone(),
                    e.while_handling(),
                ));
                return out;
            }
        }
    };
    match dest_is_dir(input, &dest) {
        Ok(true) => {}
        Ok(false) => return fail(&format!("dest '{dest}' must be an existing dir")),
        Err(e) => return fail(&e),
    }
    args.remove("decrypt");
    let mut staged = None;
    if let Some(path) = &local {
        if let Some(refusal) = super::staging::too_big(input.conn, path) {
            return fail(&format!("could not stage the archive: {refusal}"));
        }
        let decrypt = input.args.get("decrypt").is_none_or(loose_bool);
        let unreadable = |e: std::io::Error| {
            let cause = Diagnostic::new(format!("Could not read '{}': {e}", path.display()));
            raised(cause, input.task_origin.clone())
        };
        let bytes = match super::copy::real_file(input, path, decrypt, unreadable) {
            Ok(b) => b,
            Err(out) => return out,
        };
        let file = match Staged::put(input.conn, &bytes, "source", false) {
            Ok(file) => file,
            Err(e) if crate::output::link_lost(&e) => {
                return crate::output::link_errored(&e, input.task_origin.clone());
            }
            Err(e) => return fail(&format!("could not stage the archive: {e}")),
        };
        args.insert(s("src"), s(file.path()));
        staged = Some(file);
    }
    args.insert(s("dest"), s(&dest));
    let module_input = ActionInput { args: &args, ..input.clone() };
    let out = crate::python_path::action::run(&module_input, "unarchive");
    // The module has returned: its archive goes now.
    drop(staged);
    out
}

/// Whether `dest` is an existing directory on the host, by the `stat` module (following
/// links), as ansible's `_execute_remote_stat` asks.
fn dest_is_dir(input: &ActionInput<'_>, dest: &str) -> Result<bool, String> {
    let mut stat_args = Map::new();
    stat_args.insert("path".into(), Json::String(dest.to_string()));
    stat_args.insert("follow".into(), Json::Bool(true));
    stat_args.insert("get_checksum".into(), Json::Bool(false));
    let stat = super::copy::run_module("stat", stat_args, input)?;
    if stat.get("failed").is_some_and(|f| f.value.is_truthy()) {
        let why = stat.get("msg").map(|m| tack_yaml::pyrepr::str(&m.value)).unwrap_or_default();
        return Err(format!("Failed to get information on remote file ({dest}): {why}"));
    }
    let info = stat.get("stat").and_then(Node::as_map).cloned().unwrap_or_else(Mapping::new);
    let is = |k: &str| info.get(k).is_some_and(|v| v.value.is_truthy());
    Ok(is("exists") && is("isdir"))
}

/// ansible's `mask_url`: a URL's user and password each shown as `****` (a user alone too).
fn mask_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let masked = if userinfo.contains(':') { "****:****" } else { "****" };
            format!("{scheme}://{masked}@{host}{tail}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_urls_password_is_masked() {
        assert_eq!(mask_url("https://u:pw@h/x.tgz"), "https://****:****@h/x.tgz");
        assert_eq!(mask_url("https://u@h/x.tgz"), "https://****@h/x.tgz");
        assert_eq!(mask_url("https://h/x.tgz"), "https://h/x.tgz");
    }

    #[test]
    fn copy_and_remote_src_read_ansibles_loose_booleans() {
        assert!(loose_bool(&Node::bare(Value::Str("yes".into()))));
        assert!(!loose_bool(&Node::bare(Value::Str("maybe".into()))));
        assert!(loose_bool(&Node::bare(Value::Bool(true))));
    }
}
