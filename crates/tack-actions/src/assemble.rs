//! `assemble`, as ansible's action plugin runs it: with `remote_src` (the default) the
//! module runs alone on the host; otherwise the fragments of a controller directory (found
//! under `files/`, the role's first) are joined on the controller, staged privately on the
//! host and put in place by the `copy` module, the staging removed as soon as it returns.
//!
//! As in ansible, the controller's assembled file is always handed to `copy` (ansible
//! compares the destination's checksum with one of the temporary file's *name*, which never
//! matches), so `copy` decides whether anything changed.

use serde_json::{Map, Value as Json};
use tack_diag::Diagnostic;

use super::copy::find;
use super::staging::Staged;
use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

/// The arguments the controller consumes; the rest go to `copy`.
const ACTION_ONLY: &[&str] = &["remote_src", "regexp", "delimiter", "ignore_hidden", "decrypt"];

fn failed(msg: &str, input: &ActionInput<'_>) -> ActionOutput {
    super::shell_run::action_fail(input, msg)
}

/// `boolean(args.get(k, default), strict=False)`: a `null` given is false.
fn flag(input: &ActionInput<'_>, k: &str, default: bool) -> bool {
    input.args.get(k).map_or(default, |n| n.value.boolean_loose())
}

/// A module's result as the task's, failed in ansible's words when the module failed.
fn module_result(
    input: &ActionInput<'_>,
    name: &str,
    args: Map<String, Json>,
) -> Result<ActionOutput, ActionOutput> {
    let invocation = input.invocation(args);
    let result =
        input.conn.run_module(name, &invocation).map_err(|e| failed(&e.to_string(), input))?;
    let mut out = ActionOutput::new(json::map_from_json(&result));
    if out.data.get("changed").is_none() {
        out.data.insert(s("changed"), b(false));
    }
    if out.data.get("failed").is_some_and(|f| f.value.is_truthy()) {
        if out.data.get("exception").is_none() {
            out.data.insert(s("exception"), s("(traceback unavailable)"));
        }
        // The module's message with the causes its `exception` chains, as ansible's line.
        let msg = crate::module_result::error_summary(&out.data);
        out.error = Some(Diagnostic::at(
            format!("Task failed: Module failed: {msg}"),
            input.task_origin.clone(),
        ));
    }
    Ok(out)
}

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    if let Some(refused) = input.refuse_invocation("assemble") {
        return refused;
    }
    let (Some(src), Some(_)) = (input.text("src"), input.text("dest")) else {
        return failed("src and dest are required", input);
    };
    let args = json::map_to_json(input.args);
    if flag(input, "remote_src", true) {
        return module_result(input, "assemble", args).unwrap_or_else(|e| e);
    }
    if let Some(refused) = input.refuse_host_named(&["src"], "read") {
        return refused;
    }
    let dir = match find(input.search, "files", &src) {
        Ok(path) => path,
        Err(e) => {
            return crate::output::raised(Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                e,
            ));
        }
    };
    if !dir.is_dir() {
        return failed(&format!("Source ({}) is not a directory", dir.display()), input);
    }
    // A whole-file vault among the fragments is decrypted, as ansible's loader reads it;
    // measured, ansible-core 2.21 decrypts them even under `decrypt: false`.
    let secrets = input.templar.loader().secrets();
    let vault_error = std::cell::RefCell::new(None);
    let read = |path: &str| -> std::io::Result<Vec<u8>> {
        let bytes = std::fs::read(path)?;
        if !tack_vault::is_encrypted(&bytes) {
            return Ok(bytes);
        }
        let message = if secrets.is_empty() {
            format!("A vault password or secret must be specified to decrypt {path}")
        } else {
            match secrets.decrypt(&bytes) {
                Ok(plain) => return Ok(plain),
                Err(e) => format!("{e} on {path}"),
            }
        };
        *vault_error.borrow_mut() = Some(message.clone());
        Err(std::io::Error::other(message))
    };
    let bytes = match tack_agent::modules::assemble::controller_fragments(
        &dir.to_string_lossy(),
        input.text("delimiter").as_deref(),
        input.text("regexp").as_deref(),
        // ansible tests `ignore_hidden` as given, by Python truthiness, not `boolean()`.
        input.args.get("ignore_hidden").is_some_and(|n| n.value.is_truthy()),
        &read,
    ) {
        Ok(bytes) => bytes,
        Err(e) => match vault_error.borrow_mut().take() {
            Some(message) => return super::copy::raised_through(input, &message),
            None => return failed(&e, input),
        },
    };
    // Diff mode compares the destination with the joined file, named as ansible's is.
    let diff = if input.diff {
        let local_tmp = input.diff_settings.local_tmp.as_deref();
        match super::copy_diff::RenderedFile::write_assembled(local_tmp, &bytes) {
            Ok(file) => {
                let name = file.path.to_string_lossy().into_owned();
                let from = super::copy_diff::Source::File(&file.path);
                let dest = input.text("dest").unwrap_or_default();
                Some(super::copy_diff::diff_data(input, &dest, &bytes, from, &name))
            }
            Err(e) => return failed(&format!("could not write the assembled file: {e}"), input),
        }
    } else {
        None
    };
    let staged = match Staged::put(input.conn, &bytes, "src", false) {
        Ok(staged) => staged,
        Err(e) if crate::output::link_lost(&e) => {
            return crate::output::link_errored(&e, input.task_origin.clone());
        }
        Err(e) => return failed(&format!("could not stage the assembled file: {e}"), input),
    };
    let mut copy_args = args;
    for key in ACTION_ONLY {
        copy_args.remove(*key);
    }
    copy_args.insert("src".into(), Json::String(staged.path().to_string()));
    let mut out = module_result(input, "copy", copy_args).unwrap_or_else(|e| e);
    drop(staged);
    if let Some(diff) = diff.filter(|d| d.as_object().is_some_and(|m| !m.is_empty())) {
        out.data.insert(s("diff"), json::from_json(&diff));
    }
    out
}
