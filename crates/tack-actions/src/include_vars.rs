//! `include_vars` of one file (found as ansible's action finds it: the role's and the task's
//! `vars/`, then beside them) or of a directory (`dir`, walked as ansible walks it: sorted,
//! `depth`, `files_matching`, `ignore_files`, `extensions`, `ignore_unknown_extensions`),
//! loaded with the run's loader (vaults decrypted), its variables set for the host at the
//! `include_vars` rung (or nested under `name`), merged into the host's own with
//! `hash_behaviour: merge`. Directory walking lives in `include_vars_dir`.

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let origin = input.task_origin.clone();
    let mut dirs = 0;
    let mut files = 0;
    for (key, _) in input.args.iter() {
        let arg = key.as_str().unwrap_or_default();
        if super::include_vars_dir::DIR_ARGS.contains(&arg) {
            dirs += 1;
        } else if ["file", "_raw_params"].contains(&arg) {
            files += 1;
        } else if !["name", "hash_behaviour"].contains(&arg) {
            let cause = Diagnostic::at(
                format!("{arg} is not a valid option in include_vars"),
                key.origin.clone(),
            );
            return crate::output::errored(Diagnostic::caused_by("Task failed.", origin, cause));
        }
    }
    if dirs > 0 && files > 0 {
        let cause = Diagnostic::at(
            "You are mixing file only and dir only arguments, these are incompatible",
            origin.clone(),
        );
        return crate::output::errored(Diagnostic::caused_by("Task failed.", origin, cause));
    }
    if input.args.get("dir").is_some() {
        if input.is_host_named("dir") {
            let dir = input.text("dir").unwrap_or_default();
            let checked = tack_loader::confine::check_name(&dir, &input.confinement());
            if let Err(refused) = input.confine("dir", &dir, checked) {
                return refused;
            }
        }
        return match super::include_vars_dir::load(input) {
            Ok(loaded) => finish(input, loaded.vars, loaded.files),
            Err(super::include_vars_dir::DirError::Failed(message, partial)) => {
                not_loaded(&message, origin, partial.vars, partial.files)
            }
            Err(super::include_vars_dir::DirError::Raised(d)) => crate::output::errored(d),
            Err(super::include_vars_dir::DirError::Refused(refused)) => *refused,
        };
    }
    // A free-form name (`include_vars: >` folds in a newline) loses its trailing newlines,
    // as ansible's `rstrip('\n')` takes them.
    // A `file` that rendered to nothing (`first_found` with `errors=ignore`) is ansible's
    // search for a null name: a warning, and no file.
    if input.args.get("file").is_some_and(|f| f.value == Value::Null) {
        let mut out = not_loaded(
            "Could not find file on the Ansible Controller.",
            origin,
            Mapping::new(),
            Vec::new(),
        );
        let warning = s("Invalid request to find a file that matches a \"null\" value");
        out.data.insert(s("warnings"), Node::bare(Value::Seq(vec![warning])));
        return out;
    }
    let source = match input.args.get("file") {
        Some(file) => Some(tack_yaml::pyrepr::str(&file.value)),
        None => input
            .args
            .get("_raw_params")
            .map(|n| tack_yaml::pyrepr::str(&n.value).trim_end_matches('\n').to_string()),
    };
    let Some(source) = source else {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        return ActionOutput::action_failed(data, s("No file was specified"), origin);
    };
    // A name a managed host chose is found only inside the role's and the playbook's
    // directories (seed 002): checked by its text before the search, and where it led after.
    let arg = if input.args.get("file").is_some() { "file" } else { "_raw_params" };
    let roots = input.is_host_named(arg).then(|| input.confinement());
    if let Some(roots) = &roots
        && let Err(refused) =
            input.confine(arg, &source, tack_loader::confine::check_name(&source, roots))
    {
        return refused;
    }
    let path = match super::copy::find(input.search, "vars", &source) {
        Ok(path) => path,
        Err(e) => return not_loaded(&e.message, origin, Mapping::new(), Vec::new()),
    };
    if let Some(roots) = &roots
        && let Err(refused) =
            input.confine(arg, &source, tack_loader::confine::check_found(&path, roots))
    {
        return refused;
    }
    let loaded = match input.templar.loader().load_file(&path) {
        Ok(node) => node,
        Err(e) => {
            return crate::output::errored(Diagnostic::caused_by(
                "Task failed.",
                origin,
                e.to_diagnostic(),
            ));
        }
    };
    let vars = match loaded.value {
        Value::Map(m) => m,
        Value::Null => Mapping::new(),
        _ => {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            let msg = format!("{} must be stored as a dictionary/hash", path.display());
            return ActionOutput::action_failed(data, s(&msg), origin);
        }
    };
    finish(input, vars, vec![path.to_string_lossy().into_owned()])
}

/// ansible's include_vars reports what it could not load under `message`, with an empty
/// result and a generic failure text of its own.
fn not_loaded(
    message: &str,
    origin: Option<tack_diag::Origin>,
    facts: Mapping,
    files: Vec<String>,
) -> ActionOutput {
    let mut data = Mapping::new();
    data.insert(s("ansible_facts"), Node::bare(Value::Map(facts)));
    data.insert(
        s("ansible_included_var_files"),
        Node::bare(Value::Seq(files.iter().map(|f| s(f)).collect())),
    );
    data.insert(s("changed"), b(false));
    data.insert(s("message"), s(message));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s("Task failed: Action failed: Unknown error."));
    // ansible's result keeps the failure's place for a traceback it does not show.
    data.insert(s("exception"), s("(traceback unavailable)"));
    let mut out = ActionOutput::new(data);
    out.error = Some(Diagnostic::at("Task failed: Action failed: Unknown error.", origin));
    out
}

/// The loaded variables nested under `name` when given, merged into the host's own under
/// `hash_behaviour: merge`, as the task's result and the host's new variables.
fn finish(input: &ActionInput<'_>, vars: Mapping, files: Vec<String>) -> ActionOutput {
    let mut facts = match input.args.get("name").map(|n| tack_yaml::pyrepr::str(&n.value)) {
        Some(name) => {
            let mut nested = Mapping::new();
            nested.insert(s(&name), Node::bare(Value::Map(vars)));
            nested
        }
        None => vars,
    };
    // `replace` is ansible's default: only `merge` changes what is set.
    let behaviour = input.args.get("hash_behaviour").map(|n| tack_yaml::pyrepr::str(&n.value));
    if behaviour.as_deref() == Some("merge") {
        let mut existing = Mapping::new();
        for (k, _) in facts.iter() {
            let name = tack_yaml::pyrepr::str(&k.value);
            if let Some(binding) = input.scope.get(&name) {
                existing.insert(k.clone(), binding.node().clone());
            }
        }
        facts = tack_loader::combine_vars(&existing, &facts, tack_loader::HashBehaviour::Merge);
    }
    tack_loader::vars::warn_if_reserved(&facts);
    let mut data = Mapping::new();
    data.insert(s("ansible_facts"), Node::bare(Value::Map(facts.clone())));
    data.insert(
        s("ansible_included_var_files"),
        Node::bare(Value::Seq(files.iter().map(|f| s(f)).collect())),
    );
    data.insert(s("changed"), b(false));
    let mut out = ActionOutput::new(data);
    out.included =
        facts.iter().map(|(k, v)| (tack_yaml::pyrepr::str(&k.value), v.clone())).collect();
    // ansible hides the whole result when any file it read was a vault (`show_content`).
    out.no_log = files.iter().any(|f| vaulted(std::path::Path::new(f)));
    out
}

/// Whether the file at `path` is a whole-file vault (its header says so).
fn vaulted(path: &std::path::Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let read = std::fs::File::open(path).and_then(|mut f| f.read(&mut head));
    read.is_ok_and(|n| tack_vault::is_encrypted(&head[..n]))
}
