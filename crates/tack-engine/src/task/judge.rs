//! Judging what an action returned on a host: its facts made the host's, `changed_when` and
//! `failed_when` evaluated (with `attempts` in view), the result as the callbacks and
//! `register` see it, and the warnings a result carries.
//!
//! Part of the task's run (`TaskRun`); it never runs an action itself.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::{Provenance, Scope};
use tack_yaml::{Mapping, Node, Value};

use tack_actions::{Action, ActionOutput, Facts};
use tack_report::result::{HostResult, b, s};

use super::TaskRun;

impl TaskRun<'_> {
    /// The facts and variables an action set, made the host's.
    pub(super) fn apply_facts(
        &self,
        host: &str,
        facts: &[(String, Node, Provenance)],
        trust_marked: bool,
        included: &[(String, Node)],
    ) {
        // `run_once`: the facts are every host's of the batch.
        for (name, value, provenance) in facts {
            match trust_marked {
                true => self.set_marked_everywhere(host, name, value, provenance),
                false => self.set_everywhere(host, name, value.clone(), provenance.clone()),
            }
        }
        for (name, value) in included {
            self.reading.vars.set_included_var(host, name, value.clone());
        }
    }

    /// Applies the action's facts (unless `apply` is false: the retry loop applies those of
    /// the run it keeps), then `changed_when` and `failed_when`, which see `attempts`.
    pub(super) fn judge(
        &self,
        host: &str,
        scope: &Scope,
        mut output: ActionOutput,
        attempt: Option<i64>,
        apply: bool,
    ) -> HostResult {
        let vars = self.reading.vars;
        if apply {
            let fact_host = self.delegation().fact_host(host, scope);
            let marked = output.facts_trust_marked;
            self.apply_facts(&fact_host, &output.facts, marked, &output.included);
            // What a module or action plugin returned as facts (`setup`, `gather_facts`, the
            // Python path's modules, `dnf`'s `pkg_mgr`); `set_fact` and `include_vars` set
            // host variables instead.
            // `cacheable` facts join the host's facts too, below the `set_fact` layer.
            if output.cacheable && !output.facts.is_empty() {
                let mut cached = Mapping::new();
                for (name, value, _) in &output.facts {
                    cached.insert(s(name), value.clone());
                }
                vars.merge_module_facts(&fact_host, &cached);
            }
            let facts = output.data.get("ansible_facts").and_then(Node::as_map);
            let kind = self.action.traits().facts;
            if let (true, Some(facts)) = (kind != Facts::Variables, facts)
                && !output.data.get("failed").is_some_and(|f| f.value.is_truthy())
            {
                let mut facts = facts.clone();
                let restricted: Vec<String> = facts
                    .iter()
                    .map(|(k, _)| tack_yaml::pyrepr::str(&k.value))
                    .filter(|k| crate::vars::restricted_facts::is_restricted(k))
                    .collect();
                if !restricted.is_empty() {
                    let warnings =
                        restricted.iter().map(|k| crate::vars::restricted_facts::warning(k));
                    append_warnings(&mut output.data, warnings);
                }
                if kind == Facts::Gathered {
                    // ansible's action marks what it gathered (`gather_facts: smart` reads it).
                    facts.insert(s("_ansible_facts_gathered"), b(true));
                }
                vars.merge_module_facts(&fact_host, &facts);
            } else if let Some(path) = facts.and_then(|f| f.get(tack_links::interpreter::FACT)) {
                // The interpreter discovery found is the host's fact, failed task or not.
                let mut only = Mapping::new();
                only.insert(s(tack_links::interpreter::FACT), path.clone());
                vars.merge_module_facts(&fact_host, &only);
            }
        }
        // A render of the action's own that read unavailable output: the plan cannot know.
        if self.planning
            && let Some(producer) = &output.unavailable
        {
            return tack_report::plan_mark::deferred(host, producer);
        }
        let raised = output.raised;
        let mut result = self.finish(host, output);
        // A module that declined check mode did not run: in a plan, it would.
        if self.planning && tack_report::plan_mark::declined_check_mode(&result) {
            return tack_report::plan_mark::would_run(host);
        }
        if let Some(attempt) = attempt {
            result.data.insert(s("attempts"), Node::bare(Value::Int(attempt)));
        }
        if raised {
            return result;
        }
        // Each expression sees the result as it stands then: `failed_when` the one
        // `changed_when` left (ansible's `_task.result` is the live result). The scope is made
        // only for a task that has them: every result passes here.
        let attrs = &self.reading.ctx.task.attrs;
        if let Some(cond) = attrs.get(Keyword::ChangedWhen) {
            let judged_scope = self.reading.with_registered(scope, &result.data);
            match self.all_true(cond, &judged_scope) {
                Ok(changed) => {
                    result.data.insert(s("changed"), b(changed));
                    result.data.insert(s("changed_when_result"), b(changed));
                }
                // The result stays the module's, failed by the expression (and `failed_when`
                // is not judged), as ansible's `set_changed_when_result` makes it.
                Err(e) => {
                    self.expression_failed(&mut result, "changed_when", e);
                    return result;
                }
            }
        }
        if let Some(cond) = attrs.get(Keyword::FailedWhen) {
            let judged_scope = self.reading.with_registered(scope, &result.data);
            match self.all_true(cond, &judged_scope) {
                Ok(failed) => {
                    let module_failed =
                        matches!(self.action, Action::Module(_)) && result.flag("failed");
                    let error = crate::task::failed_task::failed_when_judged(
                        &mut result,
                        module_failed,
                        failed,
                    );
                    // A true `failed_when` replaces whatever error the action raised.
                    result.error = error.map(|text| Diagnostic::at(text, self.reading.origin()));
                }
                Err(e) => {
                    if let Some((_, exception)) = result.data.remove("exception") {
                        let shown = shown_exception(exception);
                        result.data.insert(s("failed_when_suppressed_exception"), shown);
                    }
                    self.expression_failed(&mut result, "failed_when", e);
                }
            }
        }
        result
    }

    /// A `changed_when`/`failed_when` (`keyword`) that could not be evaluated: the result
    /// fails with ansible's `A '<keyword>' expression failed` under the action's failure, the
    /// error's text as `<keyword>_result`.
    pub(super) fn expression_failed(
        &self,
        result: &mut HostResult,
        keyword: &str,
        error: tack_template::TemplateError,
    ) {
        let cause = error.to_diagnostic();
        let text = cause.message.clone();
        if keyword == "changed_when"
            && let Some((_, exception)) = result.data.remove("exception")
        {
            result.data.insert(s("changed_when_suppressed_exception"), shown_exception(exception));
        }
        result.data.insert(s(&format!("{keyword}_result")), s(&text));
        // A module that failed by itself is named so, as ansible's error for its result is.
        let module_failed =
            matches!(self.action, Action::Module(_) | Action::Python(_)) && result.flag("failed");
        let whose = if module_failed { "Module" } else { "Action" };
        result.data.insert(s("failed"), b(true));
        // The expression's own exception is the result's now; tack keeps no Python traceback.
        result.data.insert(s("exception"), s("(traceback unavailable)"));
        let summary = format!("A '{keyword}' expression failed: {text}");
        result.data.insert(s("msg"), s(&format!("Task failed: {whose} failed: {summary}")));
        let cause = Diagnostic::caused_by(
            format!("A '{keyword}' expression failed."),
            cause.origin.clone(),
            cause,
        );
        result.error = Some(Diagnostic::caused_by(
            format!("Task failed: {whose} failed."),
            self.reading.origin(),
            cause,
        ));
    }

    /// Whether every condition of `cond` (one, or a list) holds in `scope`.
    pub(super) fn all_true(
        &self,
        cond: &Node,
        scope: &Scope,
    ) -> Result<bool, tack_template::TemplateError> {
        let items: Vec<&Node> = match &cond.value {
            Value::Seq(items) => items.iter().collect(),
            _ => vec![cond],
        };
        for item in items {
            let r = self.reading.templar.evaluate_conditional(item, scope)?;
            if !r.value {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The host's result from the action's output: every result says whether it failed, and
    /// a fact-gathering one is never shown.
    pub(super) fn finish(&self, host: &str, output: ActionOutput) -> HostResult {
        let mut data = output.data;
        crate::task::result_order::drop_unset(&mut data);
        // Every result ansible registers says whether it failed.
        if data.get("failed").is_none() {
            data.insert(s("failed"), b(false));
        }
        let mut result = HostResult::new(host, data);
        result.verbose_always = output.verbose_always;
        // An action that hides its own result (`include_vars` of a vaulted file).
        result.no_log = output.no_log;
        // A result carrying facts is not shown, as ansible marks fact-gathering results.
        result.verbose_override = self.action.hides_result();
        result.error = output.error;
        result.written_by_user = self.action.is("set_fact")
            && !output.facts.is_empty()
            && output.facts.iter().all(|(_, _, provenance)| *provenance == Provenance::Trusted);
        if let Some(notes) = output.notes {
            for block in notes.warning_blocks {
                result.warning_blocks.insert(block.message.clone(), block);
            }
            result.raised_deprecations = notes.deprecations;
            result.deprecated_values = notes.deprecated_values;
        }
        result
    }
}

/// An exception summary a suppressed result keeps, as ansible shows it without a traceback:
/// its traceback's place-holder (a text an action gave stays as it is).
fn shown_exception(exception: Node) -> Node {
    match exception.value {
        Value::Map(_) => s("(traceback unavailable)"),
        _ => exception,
    }
}

/// Puts `warnings` before the output's own (what the task gave before its action ran).
pub(crate) fn prepend_warnings(output: &mut ActionOutput, warnings: Vec<Diagnostic>) {
    let mut all: Vec<Node> = warnings.iter().map(|w| s(&w.message)).collect();
    if let Some(Value::Seq(own)) = output.data.get("warnings").map(|n| &n.value) {
        all.extend(own.iter().cloned());
    }
    output.data.insert(s("warnings"), Node::bare(Value::Seq(all)));
    output.notes_mut().warning_blocks.extend(warnings);
}

/// Adds `warnings` after the result's own.
pub(crate) fn append_warnings(data: &mut Mapping, warnings: impl Iterator<Item = String>) {
    let mut all: Vec<Node> = match data.get("warnings").map(|n| &n.value) {
        Some(Value::Seq(own)) => own.clone(),
        _ => Vec::new(),
    };
    all.extend(warnings.map(|w| s(&w)));
    data.insert(s("warnings"), Node::bare(Value::Seq(all)));
}

/// Puts `warnings` ahead of a result's own (ansible adds discovery's before the module's).
pub(crate) fn add_warnings(data: &mut Mapping, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    let mut all: Vec<Node> = warnings.iter().map(|w| s(w)).collect();
    if let Some(Value::Seq(own)) = data.get("warnings").map(|n| n.value.clone()) {
        all.extend(own);
    }
    data.insert(s("warnings"), Node::bare(Value::Seq(all)));
}
