//! `uri`, as ansible-core 2.21's action plugin runs it: no check mode; with `remote_src` the
//! module alone; otherwise a `src` is found on the controller (under `files/`), staged on the
//! host for the one module run and handed to the module as its path there. A `src` a
//! managed host named is refused before it is looked up.

use tack_yaml::Mapping;

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    // ansible's action raises its skip, so `until`, retries, `changed_when` and
    // `failed_when` never see the result.
    if input.check_mode {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        data.insert(s("msg"), s("This action (uri) does not support check mode."));
        data.insert(s("skipped"), b(true));
        let mut out = ActionOutput::new(data);
        out.raised = true;
        return out;
    }
    let remote_src = input.args.get("remote_src").is_some_and(crate::input::loose_bool);
    let src = input.args.get("src").filter(|n| n.value.is_truthy());
    if remote_src || src.is_none() {
        return super::module::run(input, "uri");
    }
    if let Some(refused) = input.refuse_host_named(&["src"], "sent") {
        return refused;
    }
    let name = input.text("src").unwrap_or_default();
    let path = match super::copy::find(input.search, "files", &name) {
        Ok(path) => path,
        Err(e) => {
            // ansible's own error, raised through the action (its help kept below).
            let msg = format!("Task failed: {}", e.message);
            let error = tack_diag::Diagnostic::caused_by(
                "Task failed.",
                input.task_origin.clone(),
                e.while_handling(),
            );
            let mut out = crate::output::errored(error);
            out.data.insert(s("msg"), s(&msg));
            return out;
        }
    };
    if let Some(refusal) = super::staging::too_big(input.conn, &path) {
        return super::shell_run::action_fail(
            input,
            &format!("could not stage the file: {refusal}"),
        );
    }
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) => {
            let msg = format!("Could not find or access '{name}': {e}");
            return super::shell_run::action_fail(input, &msg);
        }
    };
    let base = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let staged = match super::staging::Staged::put(input.conn, &bytes, &base, false) {
        Ok(staged) => staged,
        Err(e) => {
            return super::shell_run::action_fail(input, &format!("could not stage the file: {e}"));
        }
    };
    let mut args = input.args.clone();
    args.insert(s("src"), s(staged.path()));
    let out = super::module::run(&input.with_args(&args), "uri");
    // The staged file goes as soon as the module has read it.
    drop(staged);
    out
}
