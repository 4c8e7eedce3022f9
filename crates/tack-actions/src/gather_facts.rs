//! `gather_facts` as a task, as ansible-core 2.21's action plugin runs it: each fact module
//! the host's `ansible_facts_modules` names (else the `FACTS_MODULES` setting: `smart` by
//! default, which is `setup` for tack's connections) in turn, `setup` with the task's arguments (`parallel` taken out, unset
//! ones dropped), any other module without `setup`'s own (`gather_subset`, `gather_timeout`,
//! `filter`: warned about when set) and run by name as a task would run it. What the
//! modules gathered is merged (dictionaries deeply, lists appended without repeats), their
//! warnings and deprecations kept; the modules that failed or were skipped are named in
//! ansible's words. The facts are marked gathered (the mark is internal) and the result is
//! hidden from `-v`, as ansible hides it.
//!
//! `parallel` changes only when the modules run in ansible (as jobs side by side); tack runs
//! them one after the other, which gives the same facts.

use tack_agent::Invocation;
use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::json;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

/// ansible's names for `setup` (`C._ACTION_SETUP`).
const SETUP: &[&str] = &["setup", "ansible.builtin.setup", "ansible.legacy.setup"];

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let modules = match fact_modules(input) {
        Ok(modules) => modules,
        Err(out) => return *out,
    };
    let mut args = input.args.clone();
    args.remove("parallel");
    let mut merged = Mapping::new();
    merged.insert(s("ansible_facts"), Node::bare(Value::Map(Mapping::new())));
    let mut failed = Mapping::new();
    let mut skipped = Mapping::new();
    for module in &modules {
        // A host that cannot be reached is unreachable, whichever module found it so.
        let answer = match run_module(input, module, &args) {
            Ok(answer) => answer,
            Err(lost) => return *lost,
        };
        if answer.get("failed").is_some_and(|f| f.value.is_truthy()) {
            failed.insert(s(module), Node::bare(Value::Map(answer)));
        } else if answer.get("skipped").is_some_and(|f| f.value.is_truthy()) {
            skipped.insert(s(module), Node::bare(Value::Map(answer)));
        } else {
            let mut gathered = Mapping::new();
            for key in ["ansible_facts", "warnings", "deprecations"] {
                let empty = if key == "ansible_facts" {
                    Value::Map(Mapping::new())
                } else {
                    Value::Seq(Vec::new())
                };
                let value = answer.get(key).cloned().unwrap_or_else(|| Node::bare(empty));
                gathered.insert(s(key), value);
            }
            merged = merge(&merged, &gathered);
        }
    }
    let mut data = Mapping::new();
    let facts = merged.get("ansible_facts").cloned();
    data.insert(
        s("ansible_facts"),
        facts.unwrap_or_else(|| Node::bare(Value::Map(Mapping::new()))),
    );
    for key in ["warnings", "deprecations"] {
        if let Some(list) = merged.get(key).filter(|l| l.as_seq().is_some_and(|l| !l.is_empty())) {
            data.insert(s(key), list.clone());
        }
    }
    if !skipped.is_empty() {
        let names: Vec<String> = skipped.keys().map(|k| tack_yaml::pyrepr::str(&k.value)).collect();
        let all = skipped.len() == modules.len();
        data.insert(
            s("msg"),
            s(&format!("The following modules were skipped: {}.", names.join(", "))),
        );
        data.insert(s("skipped_modules"), Node::bare(Value::Map(skipped)));
        if all {
            data.insert(s("skipped"), b(true));
        }
    }
    data.insert(s("changed"), b(false));
    if !failed.is_empty() {
        return failed_modules(data, failed, input.task_origin.clone());
    }
    ActionOutput::new(data)
}

/// The fact gathering's failure when fact modules failed (`failed`: each module's answer by
/// its name), as ansible's `gather_facts` action gives it: each answer as ansible's executor
/// keeps a failed module's (its `deprecations` and `warnings`, the traceback's place-holder),
/// under `failed_modules`, and each module's message a sub-event of the task's error.
/// `origin` is the task's (none for the play's implicit gathering, as ansible's has none).
pub fn failed_modules(
    mut data: Mapping,
    failed: Mapping,
    origin: Option<tack_diag::Origin>,
) -> ActionOutput {
    let mut kept = Mapping::new();
    for (name, answer) in failed.iter() {
        let mut answer = answer.clone();
        if let Value::Map(fields) = &mut answer.value {
            for (key, empty) in [
                ("deprecations", Value::Seq(Vec::new())),
                ("warnings", Value::Seq(Vec::new())),
                ("exception", Value::Str("(traceback unavailable)".into())),
            ] {
                if fields.get(key).is_none() {
                    fields.insert(s(key), Node::bare(empty));
                }
            }
        }
        kept.insert(name.clone(), answer);
    }
    let names: Vec<String> = kept.keys().map(|k| tack_yaml::pyrepr::str(&k.value)).collect();
    // Each module's failure is a sub-event of the task's error, as ansible groups them.
    let causes: Vec<Diagnostic> = kept
        .iter()
        .map(|(_, answer)| {
            let msg = answer.as_map().and_then(|m| m.get("msg"));
            let msg = msg.map(|m| tack_yaml::pyrepr::str(&m.value)).unwrap_or_default();
            crate::interpreter_check::with_help(Diagnostic::new(msg))
        })
        .collect();
    data.insert(s("failed_modules"), Node::bare(Value::Map(kept)));
    let msg = format!("The following modules failed to execute: {}.", names.join(", "));
    let mut out = ActionOutput::action_failed(data, s(&msg), origin.clone());
    let mut cause = Diagnostic::new(msg);
    cause.sub_events = Some(Box::new(causes));
    out.error = Some(Diagnostic::caused_by("Task failed: Action failed.", origin, cause));
    out
}

/// The fact modules the host names: its `ansible_facts_modules`, else the `FACTS_MODULES`
/// setting; with where the variable was written.
fn named_modules(
    templar: &tack_template::Templar,
    scope: &tack_template::Scope,
) -> Result<(Vec<String>, Option<tack_diag::Origin>), tack_template::TemplateError> {
    let Some(binding) = scope.get("ansible_facts_modules") else {
        return Ok((configured_modules(), None));
    };
    let rendered = templar.render(binding.node(), scope)?;
    let names = match &rendered.value.value {
        Value::Seq(items) => items.iter().map(|i| tack_yaml::pyrepr::str(&i.value)).collect(),
        other => vec![tack_yaml::pyrepr::str(other)],
    };
    Ok((names, binding.node().origin.clone()))
}

/// The `FACTS_MODULES` setting (`smart` unless configured).
fn configured_modules() -> Vec<String> {
    tack_template::lookups::config::string_list("FACTS_MODULES")
        .filter(|list| !list.is_empty())
        .unwrap_or_else(|| vec!["smart".to_string()])
}

/// The fact modules for the host: `ansible_facts_modules`, else the `FACTS_MODULES` setting; `smart` is `setup`
/// (added last) unless the list names `setup` already. A network OS would choose another
/// module in ansible, which tack has none of: refused by name.
fn fact_modules(input: &ActionInput<'_>) -> Result<Vec<String>, Box<ActionOutput>> {
    let failed = |diag: Diagnostic| Box::new(crate::output::errored(diag));
    let (mut modules, _) =
        named_modules(input.templar, input.scope).map_err(|e| failed(e.to_diagnostic()))?;
    if let Some(at) = modules.iter().position(|m| m == "smart") {
        modules.remove(at);
        if input.args.get("network_os").is_some() || input.scope.get("ansible_network_os").is_some()
        {
            return Err(failed(Diagnostic::at(
                "tack does not support gathering facts for a network OS (network_os) yet",
                input.task_origin.clone(),
            )));
        }
        if !modules.iter().any(|m| SETUP.contains(&m.as_str())) {
            modules.push("ansible.legacy.setup".to_string());
        }
    }
    Ok(modules)
}

/// One fact module's result (its failure, when it could not run).
/// The name a fact module resolves to, which its `module_defaults` entries name.
fn resolved_fact_module(input: &ActionInput<'_>, module: &str) -> String {
    if SETUP.contains(&module) {
        return "ansible.builtin.setup".into();
    }
    if let Some(found) = input.modules.and_then(|search| search.find(module)) {
        return match &found.collection {
            Some(c) => c.fqcn.clone(),
            None => format!("ansible.legacy.{}", found.name),
        };
    }
    let short =
        tack_py::ansible::short_name(module, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    format!("ansible.builtin.{short}")
}

fn run_module(
    input: &ActionInput<'_>,
    module: &str,
    args: &Mapping,
) -> Result<Mapping, Box<ActionOutput>> {
    let lost = |e: &tack_connect::ConnectionError| {
        Box::new(crate::output::link_errored(e, input.task_origin.clone()))
    };
    let mut args = args.clone();
    if !SETUP.contains(&module) {
        let subset = args.remove("gather_subset").map(|(_, v)| v);
        let all = |v: &Node| match &v.value {
            Value::Str(t) => t == "all",
            Value::Seq(items) => items.len() == 1 && items[0].value == Value::Str("all".into()),
            Value::Null => true,
            _ => false,
        };
        if let Some(subset) = subset.filter(|v| !all(v)) {
            let shown = tack_yaml::pyrepr::str(&subset.value);
            tack_diag::warn(&Diagnostic::new(format!("Not passing subset({shown}) to {module}")));
        }
        for (option, word) in [("gather_timeout", "timeout"), ("filter", "filter")] {
            if let Some((_, value)) = args.remove(option).filter(|(_, v)| !v.is_null()) {
                let shown = tack_yaml::pyrepr::str(&value.value);
                tack_diag::warn(&Diagnostic::new(format!(
                    "Not passing {word}({shown}) to {module}"
                )));
            }
        }
    }
    let nulls: Vec<Node> =
        args.iter().filter(|(_, v)| v.is_null()).map(|(k, _)| k.clone()).collect();
    for key in nulls {
        if let Some(k) = key.as_str() {
            args.remove(k);
        }
    }
    // The task's `module_defaults` for the fact module fill what the task did not give.
    match (input.module_defaults)(&resolved_fact_module(input, module)) {
        Ok(defaults) => {
            for (k, v) in defaults.iter() {
                if args.get_value(&k.value).is_none() {
                    args.insert(k.clone(), v.clone());
                }
            }
        }
        Err(e) => return Ok(failure(&e.brief())),
    }
    if SETUP.contains(&module) {
        // ansible's setup runs under the host's interpreter, so it fails where the host lacks
        // the one its variable names; tack's does the same, for the same result.
        if let Some(failed) = crate::interpreter_check::missing_named(input) {
            return Ok(failed.data);
        }
        let mut args = json::map_to_json(&args);
        crate::module::name_interpreter(input, &mut args);
        let invocation = Invocation { diff: false, ..input.invocation(args) };
        let mut answer = match input.conn.run_module("setup", &invocation) {
            Ok(answer) => json::map_from_json(&answer),
            Err(e) if crate::output::link_lost(&e) => return Err(lost(&e)),
            Err(e) => failure(&e.to_string()),
        };
        crate::module_result::plain_summaries(&mut answer);
        return Ok(answer);
    }
    // Found as a task finds a module: `library/` and the configured paths first, then a
    // native module, then ansible-core's own through its module code.
    let input = input.with_args(&args);
    let answered = if let Some(found) = input.modules.and_then(|search| search.find(module)) {
        crate::python_path::action::library_answer(&input, &found)
    } else if let Some(native) = tack_agent::modules::native_name(module) {
        let invocation = input.invocation(json::map_to_json(&args));
        Ok(match input.conn.run_module(native, &invocation) {
            Ok(answer) => answer,
            Err(e) if crate::output::link_lost(&e) => return Err(lost(&e)),
            Err(e) => json::map_to_json(&failure(&e.to_string())),
        })
    } else if let Some(builtin) = crate::python_path::module_name(module) {
        crate::python_path::action::builtin_answer(&input, builtin)
    } else {
        return Ok(failure(&format!(
            "tack does not support the fact module '{module}': it is not a module tack can run"
        )));
    };
    let mut answer = match answered {
        Ok(answer) => json::map_from_json(&answer),
        Err(output) => {
            let mut data = output.data;
            if let Some(error) = output.error
                && data.get("msg").is_none()
            {
                data.insert(s("msg"), s(&error.brief()));
            }
            data
        }
    };
    crate::module_result::plain_summaries(&mut answer);
    // What ansible's result of a module always says.
    for (key, default) in [
        ("changed", b(false)),
        ("deprecations", Node::bare(Value::Seq(Vec::new()))),
        ("failed", b(false)),
        ("warnings", Node::bare(Value::Seq(Vec::new()))),
    ] {
        if answer.get(key).is_none() {
            answer.insert(s(key), default);
        }
    }
    Ok(answer)
}

fn failure(msg: &str) -> Mapping {
    let mut failed = Mapping::new();
    failed.insert(s("failed"), b(true));
    failed.insert(s("msg"), s(msg));
    failed
}

/// ansible's `merge_hash(a, b, list_merge='append_rp')`: mappings merged deeply, a list
/// followed by the other's items without the ones it repeats, anything else replaced.
fn merge(a: &Mapping, b: &Mapping) -> Mapping {
    let mut out = a.clone();
    for (key, b_value) in b.iter() {
        let existing = key.as_str().and_then(|k| out.get(k)).map(|n| &n.value);
        let merged = match (existing, &b_value.value) {
            (Some(Value::Map(a_map)), Value::Map(b_map)) => {
                Node::new(Value::Map(merge(a_map, b_map)), b_value.origin.clone())
            }
            (Some(Value::Seq(a_items)), Value::Seq(b_items)) => {
                let kept = a_items.iter().filter(|x| !b_items.iter().any(|y| y.value == x.value));
                let items = kept.chain(b_items.iter()).cloned().collect();
                Node::new(Value::Seq(items), b_value.origin.clone())
            }
            _ => b_value.clone(),
        };
        out.insert(key.clone(), merged);
    }
    out
}

/// Fact modules a host asks for that the implicit gathering does not run, and where they
/// were named.
pub type OtherFactsModules = (Vec<String>, Option<tack_diag::Origin>);

/// The modules an `ansible_facts_modules` variable (else the `FACTS_MODULES` setting) names
/// that are not `setup` (or `smart`):
/// the implicit fact gathering runs `setup` only (the `gather_facts` task runs them all).
pub fn other_facts_modules(
    templar: &tack_template::Templar,
    scope: &tack_template::Scope,
) -> Result<Option<OtherFactsModules>, tack_template::TemplateError> {
    let (names, origin) = named_modules(templar, scope)?;
    let other: Vec<String> =
        names.into_iter().filter(|m| m != "smart" && !SETUP.contains(&m.as_str())).collect();
    Ok((!other.is_empty()).then_some((other, origin)))
}

/// tack's words for [`other_facts_modules`]' refusal on `host`.
pub fn facts_modules_refusal(other: &[String], host: &str) -> String {
    format!(
        "tack does not support ansible_facts_modules {other:?} (host '{host}') in a play's \
         implicit fact gathering yet: it gathers facts with setup (a gather_facts task runs them)"
    )
}
