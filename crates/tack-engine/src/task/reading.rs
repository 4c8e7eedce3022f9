//! A task as one host reads it: the task in its play (`TaskInContext`), the templar, and what
//! the host's variables for it are made of (the play's scope, the role's layers, the include
//! parameters). Every keyword a run renders per host (`ignore_errors`, `check_mode`, `diff`,
//! `no_log`, `timeout`, `async`, `retries`, `delay`...) is read here, with ansible's
//! conversions and errors.
//!
//! Reads only: it never runs an action and never changes a host's variables.

use std::sync::Arc;

use tack_diag::{Diagnostic, Origin};
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_template::{Layer, Scope, Templar, TemplateErrorKind};
use tack_yaml::{Mapping, Node, Value};

use crate::vars::PlayScope;
use crate::vars::roles::RoleLayers;

/// A task with what reading it for a host takes.
#[derive(Clone)]
pub(crate) struct Reading<'a> {
    pub ctx: &'a TaskInContext<'a>,
    pub templar: &'a Templar,
    pub vars: &'a Arc<PlayScope>,
    pub role: RoleLayers,
    pub play: &'a tack_playbook::Play,
    /// The include parameters of the `include_tasks` that brought the task in (its `vars`
    /// and loop variable).
    pub params: Option<Arc<Layer>>,
    /// `no_log` where neither the task nor its parents say (the `no_log` setting).
    pub no_log_default: bool,
    /// `poll` where the task does not say (the `poll_interval` setting, 15 by default).
    pub poll_default: i64,
}

impl Reading<'_> {
    pub(crate) fn origin(&self) -> Option<Origin> {
        self.ctx.task.origin.clone()
    }

    /// `host`'s variables for the task: the play's scope with the role's layers, the task's
    /// and its parents' `vars` (outermost first) and the include parameters. `None` for a
    /// host outside the inventory.
    pub(crate) fn scope(&self, host: &str) -> Option<Scope> {
        self.scope_of(host, true)
    }

    /// [`Reading::scope`] for a host the task is delegated to: its variables as ansible's
    /// variable manager gives them, without the names a play context adds for the host
    /// the task runs as.
    /// A delegated host's variables: an inventory host's (the implicit localhost's for a
    /// local name), else those of ansible's bare `Host(name)`, which has none of its own.
    pub(crate) fn delegated_host_scope(&self, host: &str) -> Option<Scope> {
        self.scope_of(host, false).or_else(|| {
            let local = ["localhost", "127.0.0.1", "::1"].contains(&host);
            (!local).then(|| self.scope_in(host, false, true)).flatten()
        })
    }

    fn scope_of(&self, host: &str, running: bool) -> Option<Scope> {
        self.scope_in(host, running, false)
    }

    fn scope_in(&self, host: &str, running: bool, outside_inventory: bool) -> Option<Scope> {
        let mut layers: Vec<&Mapping> = Vec::new();
        for ancestor in self.ctx.ancestry.iter().rev() {
            match ancestor {
                tack_playbook::walk::Ancestor::Block(block) => layers.push(&block.vars),
                tack_playbook::walk::Ancestor::Import(task) => layers.push(&task.vars),
                _ => {}
            }
        }
        layers.push(&self.ctx.task.vars);
        let task = crate::vars::TaskVars {
            role: self.role.clone(),
            vars: layers,
            params: self.params.clone(),
            running,
            connection: self.ctx.inherited(Keyword::Connection),
            remote_user: self.ctx.inherited(Keyword::RemoteUser),
            outside_inventory,
        };
        self.vars.task_scope(host, &task)
    }

    /// An inherited keyword rendered in `scope`, read as Python's truth.
    pub(crate) fn flag(&self, keyword: Keyword, scope: &Scope) -> Result<bool, Diagnostic> {
        self.flag_or(keyword, scope, false)
    }

    /// [`Reading::flag`] for a keyword whose default is `default` (`any_errors_fatal`'s
    /// is the setting's).
    pub(crate) fn flag_or(
        &self,
        keyword: Keyword,
        scope: &Scope,
        default: bool,
    ) -> Result<bool, Diagnostic> {
        let Some(node) = self.ctx.inherited(keyword) else { return Ok(default) };
        match self.templar.render(node, scope) {
            Ok(rendered) => Ok(rendered.value.value.is_truthy()),
            // An omitted keyword is at its default, as ansible's attribute after templating
            // (`run_once` and `any_errors_fatal`, which ansible's strategy reads before that,
            // fail: their callers say so).
            Err(e)
                if e.kind == TemplateErrorKind::Omitted
                    && !matches!(keyword, Keyword::RunOnce | Keyword::AnyErrorsFatal) =>
            {
                Ok(default)
            }
            Err(e) => Err(e.to_diagnostic()),
        }
    }

    /// The task's own integer keyword (`retries`, `delay`, `async`, `poll`, `timeout`)
    /// rendered in `scope`; `None` when unset or null.
    pub(crate) fn int_keyword(
        &self,
        keyword: Keyword,
        scope: &Scope,
    ) -> Result<Option<i64>, Diagnostic> {
        let Some(node) = self.ctx.task.attrs.get(keyword) else { return Ok(None) };
        let rendered = self.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
        let value = match &rendered.value.value {
            Value::Int(i) => Some(*i),
            Value::Null => None,
            Value::Bool(v) => Some(i64::from(*v)),
            Value::Float(f) => Some(*f as i64),
            Value::Str(text) => tack_py::num::int(text.trim()).ok(),
            _ => None,
        };
        match value {
            Some(v) => Ok(Some(v)),
            None if rendered.value.value == Value::Null => Ok(None),
            None => Err(Diagnostic::at(
                format!(
                    "The field '{}' has an invalid value, which includes an undefined variable.",
                    keyword.as_str()
                ),
                node.origin.clone(),
            )),
        }
    }

    /// The task's effective check mode: its own or an ancestor's `check_mode`, else
    /// `default` (`--check`).
    pub(crate) fn check_mode(&self, scope: &Scope, default: bool) -> bool {
        match self.ctx.inherited(Keyword::CheckMode) {
            Some(node) => match self.templar.render(node, scope) {
                Ok(rendered) => rendered.value.value.is_truthy(),
                // Omitted: the attribute's default, the run's `--check`.
                Err(e) if e.kind == TemplateErrorKind::Omitted => default,
                Err(_) => false,
            },
            None => default,
        }
    }

    /// The connection variables that set a typed field of ansible's play context (`port`,
    /// `pipelining`, `timeout`, `become`), converted as `set_task_and_variable_override`
    /// converts them on every task a host runs (so `ansible_port: not-a-number` fails even a
    /// `debug`, with ansible's `Error processing keyword 'port'.` at the variable's origin);
    /// for each field the first of its names the host has wins. Under `delegate_to` (the
    /// host `delegated`, `scope` the delegated run's) the delegated host's variables count,
    /// as ansible reads them from `ansible_delegated_vars`; the names the play context fills
    /// in afterwards never do.
    pub(crate) fn connection_variables(
        &self,
        scope: &Scope,
        delegated: Option<&str>,
    ) -> Result<(), Diagnostic> {
        use tack_playbook::tables::Isa;
        const FIELDS: [(&str, &[&str], Isa); 4] = [
            ("port", &["ansible_ssh_port", "ansible_port"], Isa::Int),
            ("pipelining", &["ansible_ssh_pipelining", "ansible_pipelining"], Isa::Bool),
            ("timeout", &["ansible_ssh_timeout", "ansible_timeout"], Isa::Int),
            ("become", &["ansible_become"], Isa::Bool),
        ];
        let there = delegated.map(|other| {
            scope
                .get_own("ansible_delegated_vars")
                .and_then(|b| b.node().as_map().and_then(|m| m.get(other)).cloned())
                .and_then(|n| n.as_map().cloned())
                .unwrap_or_default()
        });
        for (field, names, isa) in FIELDS {
            let node = match &there {
                Some(vars) => match names.iter().find_map(|n| vars.get(n)) {
                    Some(node) => node.clone(),
                    None => continue,
                },
                None => {
                    let Some(name) = names.iter().find(|n| scope.get_own(n).is_some()) else {
                        continue;
                    };
                    let reference = Node::bare(Value::Str(format!("{{{{ {name} }}}}")));
                    let origin = Templar::sole_variable_origin(&reference, scope);
                    Node::new(reference.value, origin)
                }
            };
            // ansible's fields take `None` as unset, whatever their type.
            typed_keyword(self.templar, field, isa, &node, scope, self.origin(), true)?;
        }
        Ok(())
    }

    /// The task's effective diff mode: its own or an ancestor's `diff` (templated, then
    /// converted as ansible's bool keywords are), else `default` (`--diff`).
    pub(crate) fn diff_mode(&self, scope: &Scope, default: bool) -> Result<bool, Diagnostic> {
        let Some(node) = self.ctx.inherited(Keyword::Diff) else { return Ok(default) };
        bool_keyword(self.templar, "diff", node, scope, self.origin())
    }

    /// The task's (or its block's, or play's) `no_log`, rendered in `scope`; a value that does
    /// not render hides the result, as ansible masks output it cannot decide about.
    pub(crate) fn no_log(&self, scope: &Scope) -> bool {
        let Some(node) = self.ctx.inherited(Keyword::NoLog) else { return self.no_log_default };
        match self.templar.render(node, scope) {
            Ok(rendered) => rendered.value.value.is_truthy(),
            Err(_) => true,
        }
    }

    /// The task's `async` seconds and `poll` interval, when it runs as a job (`async` above
    /// 0; `poll` is the `poll_interval` setting when unset, as ansible's
    /// `DEFAULT_POLL_INTERVAL`).
    pub(crate) fn async_keywords(&self, scope: &Scope) -> Result<Option<(u64, u64)>, Diagnostic> {
        let limit = self.int_keyword(Keyword::Async, scope)?.unwrap_or(0);
        if limit <= 0 {
            return Ok(None);
        }
        let poll = self.int_keyword(Keyword::Poll, scope)?.unwrap_or(self.poll_default).max(0);
        Ok(Some((limit.unsigned_abs(), poll.unsigned_abs())))
    }

    /// The task's `timeout`, when it has a positive one.
    pub(crate) fn timeout(&self, scope: &Scope) -> Option<u64> {
        let secs = self.int_keyword(Keyword::Timeout, scope).ok().flatten()?;
        u64::try_from(secs).ok().filter(|s| *s > 0)
    }

    /// The task's `register` name, as written (none for a mapping of projections).
    pub(crate) fn register(&self) -> Option<String> {
        let node = self.ctx.task.attrs.get(Keyword::Register)?;
        node.as_map().is_none().then(|| tack_yaml::pyrepr::str(&node.value))
    }

    /// The task's register projections (`register: {name: expression}`), in order; `None`
    /// for a plain `register: name` or none.
    pub(crate) fn projections(&self) -> Option<Vec<(String, Node)>> {
        let map = self.ctx.task.attrs.get(Keyword::Register)?.as_map()?;
        Some(map.iter().map(|(k, v)| (tack_yaml::pyrepr::str(&k.value), v.clone())).collect())
    }

    /// `Task.get_search_path` (`crate::vars::roles::search`).
    pub(crate) fn search_path(&self) -> tack_actions::SearchPath {
        crate::vars::roles::search(self.play, self.ctx)
    }
}

/// A bool keyword as `TaskExecutor`'s `post_validate` reads it for one host: `node`
/// templated with `scope`, then converted (`yes`, `0`, ...), with ansible's three-part error
/// (`Task failed.` / `Error processing keyword 'NAME'.` / the conversion's words) when it
/// cannot be.
pub(crate) fn bool_keyword(
    templar: &Templar,
    name: &str,
    node: &Node,
    scope: &Scope,
    task_origin: Option<Origin>,
) -> Result<bool, Diagnostic> {
    let isa = tack_playbook::tables::Isa::Bool;
    let valid = typed_keyword(templar, name, isa, node, scope, task_origin, false)?;
    Ok(valid.value.is_truthy())
}

/// A keyword of type `isa` read for one host as [`bool_keyword`] reads a bool; with
/// `none_unset`, a value that renders to `None` is left as it is.
fn typed_keyword(
    templar: &Templar,
    name: &str,
    isa: tack_playbook::tables::Isa,
    node: &Node,
    scope: &Scope,
    task_origin: Option<Origin>,
    none_unset: bool,
) -> Result<Node, Diagnostic> {
    let keyword_error = |cause: Diagnostic| {
        let middle = Diagnostic::caused_by(
            format!("Error processing keyword '{name}'."),
            node.origin.clone(),
            cause,
        );
        Diagnostic::caused_by("Task failed.", task_origin.clone(), middle)
    };
    let mut rendered =
        templar.render(node, scope).map_err(|e| keyword_error(e.to_diagnostic()))?.value;
    if none_unset && rendered.value == Value::Null {
        return Ok(rendered);
    }
    rendered.origin = Templar::sole_variable_origin(node, scope).or_else(|| node.origin.clone());
    tack_playbook::post_validate::validated_value(name, isa, &[], false, rendered)
        .map_err(keyword_error)
}

/// Whether `ctx` is a `meta` task.
pub(crate) fn is_meta(ctx: &TaskInContext<'_>) -> bool {
    tack_playbook::tables::actions::is(&ctx.task.action, tack_playbook::tables::actions::META)
}

/// What a `meta` task does (`flush_handlers`, `end_host`, ...), as written.
pub(crate) fn meta_arg(ctx: &TaskInContext<'_>) -> String {
    ctx.task.args.get("_raw_params").map(|n| tack_yaml::pyrepr::str(&n.value)).unwrap_or_default()
}

/// A register projection's expression as a template of that one expression (`{{ expr }}`);
/// a value that is not text is itself.
pub(crate) fn expression_template(expression: &Node) -> Node {
    match &expression.value {
        Value::Str(text) => {
            Node::new(Value::Str(format!("{{{{ {text} }}}}")), expression.origin.clone())
        }
        _ => expression.clone(),
    }
}
