//! A task whose action is a template (`action: '{{ m }}'`): the name rendered where the task
//! runs, resolved, and the task run as that action.

use std::sync::Arc;

use tack_actions::{self as actions, Action, ActionOutput};
use tack_diag::Diagnostic;
use tack_template::Scope;
use tack_yaml::{Node, Value};

use super::TaskRun;
use crate::task::args::Renders;

impl TaskRun<'_> {
    /// This task as the action its templated name (`action: '{{ m }}'`) renders to in
    /// `scope`, as ansible's `post_validate` renders and resolves it where the task runs (after
    /// `when`, for each loop item); else the failed output: the name does not render, ansible
    /// cannot resolve it, or tack cannot run what it names (refused by name), with the name
    /// it rendered to where that is the task's action in ansible's callbacks (a name it
    /// cannot resolve: `debug`'s result is then cleaned as `debug`'s).
    pub(super) fn templated(
        &self,
        scope: &Scope,
    ) -> Result<TaskRun<'_>, Box<(ActionOutput, Option<String>)>> {
        let task = self.reading.ctx.task;
        let origin = self.reading.origin();
        let written =
            Node { value: Value::Str(task.action.clone()), origin: task.action_origin.clone() };
        let rendered = match self.reading.templar.render(&written, scope) {
            Ok(rendered) => rendered.value,
            Err(e) if e.kind == tack_template::TemplateErrorKind::Omitted => {
                let cause =
                    Diagnostic::at("Omit is not valid for the `action` keyword.", written.origin);
                return Err(Box::new((
                    actions::errored(Diagnostic::caused_by("Task failed.", origin, cause)),
                    None,
                )));
            }
            Err(e) => {
                let cause = e.to_diagnostic();
                return Err(Box::new((
                    actions::errored(Diagnostic::caused_by("Task failed.", origin, cause)),
                    None,
                )));
            }
        };
        let name = tack_yaml::pyrepr::str(&rendered.value);
        let named_at =
            tack_template::Templar::sole_variable_origin(&written, scope).or(written.origin);
        let refused = |what: String| {
            actions::errored(Diagnostic::at(
                format!("tack does not support {what} yet"),
                origin.clone(),
            ))
        };
        // An include, import or `meta` is a task of its own kind, decided when it loads.
        let kinds = tack_playbook::tables::actions::BUILTIN_TASKS;
        if tack_playbook::tables::actions::is(&name, kinds)
            || tack_playbook::tables::actions::is(
                &name,
                tack_playbook::tables::actions::IMPORT_PLAYBOOK,
            )
        {
            return Err(Box::new((refused(format!("the templated action '{name}'")), None)));
        }
        let action = match Action::rendered(task, &name) {
            Some(Action::Unresolvable) => {
                let cause = Diagnostic::at(
                    format!("Cannot resolve '{name}' to an action or module."),
                    named_at,
                );
                let failed = actions::errored(Diagnostic::caused_by("Task failed.", origin, cause));
                return Err(Box::new((failed, Some(name))));
            }
            Some(action) => action,
            None => return Err(Box::new((refused(format!("the action '{name}'")), None))),
        };
        let mut named = task.clone();
        named.action = name;
        if let Err(refusal) = (self.refuse_action)(&named, action) {
            return Err(Box::new((actions::errored(refusal), None)));
        }
        Ok(self.with_action(action))
    }

    /// This runner with `action` in its place (a templated action, rendered).
    fn with_action(&self, action: Action) -> TaskRun<'_> {
        TaskRun {
            reading: self.reading.clone(),
            action,
            verbosity: self.verbosity,
            check_flag: self.check_flag,
            planning: self.planning,
            plan_handler: self.plan_handler.clone(),
            diff_flag: self.diff_flag,
            diff_settings: self.diff_settings,
            async_dir: self.async_dir,
            rlimit_setting: self.rlimit_setting,
            inject_invocation: self.inject_invocation,
            result_connections: self.result_connections,
            fanout: self.fanout.clone(),
            inventory: self.inventory,
            renders: Renders::default(),
            links: self.links,
            ssh_defaults: self.ssh_defaults,
            reads: self.reads.clone(),
            banner_name: self.banner_name.clone(),
            interpreter: self.interpreter,
            pending: self.pending,
            discovered: Arc::clone(&self.discovered),
            refuse_action: self.refuse_action,
        }
    }
}
