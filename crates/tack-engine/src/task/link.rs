//! The link a task's run on a host takes (see `tack_links`): which one its settings name,
//! opened and connected for the run (its uses recorded in the run's trace), or the action's
//! output when it cannot be; opened anew for `wait_for_connection` and `reboot`; and the
//! host's Python interpreter, discovered over it before the host's first module.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use tack_actions::Action;
use tack_connect::Become;
use tack_links::{
    Connection, ConnectionError, InterpreterSettings, LinkTarget, Links, SshDefaults, Trace, Traced,
};
use tack_template::Scope;

use crate::task::delegate::Delegation;

/// The hosts a task has discovered an interpreter for (a loop's first item does it): shared
/// by the task's workers, which run hosts side by side.
#[derive(Default)]
pub(crate) struct Discovered(Mutex<HashSet<String>>);

impl Discovered {
    /// Whether `host` has yet to discover one; from now on it has.
    fn first(&self, host: &str) -> bool {
        // A panic while the set was held leaves it whole (inserts are single calls).
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(host.to_string())
    }

    /// Whether `host` has discovered one already.
    fn has(&self, host: &str) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).contains(host)
    }
}

/// A task's way to its hosts.
pub(crate) struct TaskLinks<'a> {
    pub delegation: Delegation<'a>,
    pub links: &'a Links<'a>,
    pub ssh: &'a SshDefaults,
    pub interpreter: &'a InterpreterSettings,
    pub discovered: &'a Discovered,
}

impl TaskLinks<'_> {
    /// The link a run of this task on `host` (with `scope`, the delegated one when delegated)
    /// takes, connected; an unreachable host or a refused setting is the action's output.
    /// With `announce`, the connection is announced before anything the action notes.
    pub(crate) fn link(
        &self,
        host: &str,
        scope: &Scope,
        trace: &Arc<Trace>,
        announce: bool,
    ) -> Result<Arc<dyn Connection>, tack_actions::ActionOutput> {
        let (target, escalation) = self.link_target(host, scope).map_err(tack_actions::errored)?;
        // ansible's loader deprecates a connection plugin each time a task loads it, pointing
        // at the variable that named it.
        if let LinkTarget::Plugin(settings) = &target
            && let Some(deprecation) = &settings.deprecation
        {
            let named_at = scope.get("ansible_connection").and_then(|b| b.node().origin.clone());
            tack_diag::deprecate(
                &tack_diag::Diagnostic::at(
                    deprecation.message.clone(),
                    named_at.or_else(|| self.delegation.task.origin()),
                ),
                &deprecation.removed_in,
            );
        }
        // What ssh said of a failed connection is the task's to hide under `no_log`, as
        // ansible's ssh plugin hides it.
        let failed = |e: ConnectionError| {
            let hidden = self.delegation.task.no_log(scope);
            self.link_failed(if hidden { censored(e) } else { e })
        };
        let link = self.links.get(&target, escalation.as_ref()).map_err(failed)?;
        let link: Arc<dyn Connection> = Arc::new(Traced::new(link, target.reach(), trace));
        link.connect().map_err(failed)?;
        if announce {
            trace.record(target.reach(), tack_links::trace::Use::Connect);
        }
        Ok(link)
    }

    /// Whether the task's interpreter discovery is the first thing that reaches `host`: it
    /// would discover before its module runs, and with pipelining on nothing else reaches
    /// the host first (without it, ansible makes its remote temporary directory first).
    /// ansible then says it attempts discovery (at `-vvv`) even when the connection fails.
    pub(crate) fn discovers_first(&self, action: Action, host: &str, scope: &Scope) -> bool {
        let templar = self.delegation.task.templar;
        let settings = tack_links::interpreter::for_host(templar, scope, self.interpreter);
        self.may_discover(action, &settings, scope)
            && !self.discovered.has(host)
            && pipelining(templar, scope)
    }

    fn may_discover(
        &self,
        action: Action,
        settings: &tack_links::interpreter::InterpreterSettings,
        scope: &Scope,
    ) -> bool {
        action.traits().discovers_interpreter
            && settings.discovers()
            && self.delegation.task.ctx.delegate_to().is_none()
            && tack_links::interpreter::known(scope).is_none()
    }

    /// The host's links closed and a new one opened, with ssh's `ConnectTimeout` set to
    /// `connect_timeout` when given (`reboot`'s option); `wait_for_connection` takes one for
    /// each attempt, as ansible's action resets its connection before each ping. The error
    /// is the message the attempt failed with.
    pub(crate) fn fresh_link(
        &self,
        host: &str,
        scope: &Scope,
        connect_timeout: Option<u64>,
        trace: &Arc<Trace>,
    ) -> Result<Arc<dyn Connection>, String> {
        let (target, escalation) = self.link_target(host, scope).map_err(|d| d.brief())?;
        let notes = self.links.reset(&target);
        for line in notes.verbose {
            trace.note(line);
        }
        if let Some(warning) = notes.warning {
            tack_diag::warn(&tack_diag::Diagnostic::new(warning));
        }
        let mut open_with = target.clone();
        if let (LinkTarget::Ssh(settings), Some(seconds)) = (&mut open_with, connect_timeout) {
            settings.timeout = Some(seconds);
        }
        let link = self
            .links
            .get_as(&target, &open_with, escalation.as_ref())
            .map_err(|e| e.to_string())?;
        let link: Arc<dyn Connection> = Arc::new(Traced::new(link, target.reach(), trace));
        link.connect().map_err(|e| e.to_string())?;
        Ok(link)
    }

    /// The link `host`'s run of this task will take, when it is not open yet and can be
    /// told before the run (not for a delegated task, whose target the run works out); a
    /// setting the run will refuse gives none here.
    pub(crate) fn unopened_link(&self, host: &str) -> Option<Arc<dyn Connection>> {
        let task = self.delegation.task;
        if task.ctx.delegate_to().is_some() {
            return None;
        }
        let scope = task.scope(host)?;
        let (target, escalation) = self.link_target(host, &scope).ok()?;
        let link = self.links.get(&target, escalation.as_ref()).ok()?;
        (!link.is_open()).then_some(link)
    }

    /// Where a run of the task on `host` goes, and whom it becomes there.
    pub(crate) fn link_target(
        &self,
        host: &str,
        scope: &Scope,
    ) -> Result<(LinkTarget, Option<Become>), tack_diag::Diagnostic> {
        let task = self.delegation.task;
        // A delegated run reads the delegated host's variables (`ansible_delegated_vars`);
        // one delegated outside the inventory is the implicit localhost (the only such host
        // delegation accepts).
        let delegated = scope.get("ansible_delegated_vars").and_then(|b| {
            b.node().as_map().and_then(|m| m.iter().next().map(|(k, v)| (k.clone(), v.clone())))
        });
        let (name, there) = match delegated {
            Some((name, vars)) => (tack_yaml::pyrepr::str(&name.value), Some(vars)),
            None if self.delegation.delegated(host, scope)?.is_some() => (String::new(), None),
            None => (host.to_string(), None),
        };
        let vars = |var: &str| match &there {
            Some(vars) => vars.as_map().and_then(|m| m.get(var)).cloned(),
            // The play context reads the variables before it fills in its own names.
            None => scope.get_own(var).map(|b| b.node().clone()),
        };
        let keyword = |k| task.ctx.inherited(k).cloned();
        let target = if name.is_empty() {
            LinkTarget::Local
        } else {
            tack_links::link_target::resolve(
                task.templar,
                scope,
                &vars,
                &keyword,
                &name,
                task.origin(),
                self.ssh,
            )?
        };
        let escalation = tack_links::become_::resolve(
            task.templar,
            scope,
            &vars,
            &keyword,
            &target,
            task.origin(),
            &self.ssh.become_,
        )?;
        Ok((target, escalation))
    }

    fn link_failed(&self, e: ConnectionError) -> tack_actions::ActionOutput {
        use tack_report::result::{b, s};
        let unreachable = matches!(e, ConnectionError::Unreachable { .. });
        // What the become program said may quote a prompt; the password itself never
        // reaches it (it only travels on the program's stdin).
        let msg = format!("Task failed: {e}");
        let origin = self.delegation.task.origin();
        let mut out = tack_actions::errored(tack_diag::Diagnostic::at(&msg, origin));
        out.data.insert(s("msg"), s(&msg));
        if unreachable {
            out.data.remove("failed");
            out.data.insert(s("unreachable"), b(true));
        }
        out
    }

    /// The interpreter a Python-path module runs with when no `ansible_python_interpreter`
    /// is set: a path `interpreter_python` names, else the one discovered now or before.
    pub(crate) fn python_for(&self, scope: &Scope, discovered: Option<&str>) -> Option<String> {
        let mode = &self.interpreter.mode;
        if !mode.is_empty() && !self.interpreter.discovers() {
            return Some(mode.clone());
        }
        discovered.map(str::to_string).or_else(|| {
            tack_links::interpreter::known(scope).map(|found| tack_yaml::pyrepr::str(&found.value))
        })
    }

    /// Interpreter discovery for `host` before its first module (see
    /// `tack_links::interpreter`): the interpreter found, when this run of the task discovered
    /// one. Not for a delegated task, whose delegated host's facts ansible would keep it in.
    pub(crate) fn discover_interpreter(
        &self,
        action: Action,
        host: &str,
        scope: &Scope,
        conn: &dyn Connection,
        trace: &Trace,
    ) -> Option<tack_links::interpreter::Discovery> {
        let templar = self.delegation.task.templar;
        let settings = tack_links::interpreter::for_host(templar, scope, self.interpreter);
        if !self.may_discover(action, &settings, scope) || !self.discovered.first(host) {
            return None;
        }
        let names = tack_links::interpreter::names(scope, &settings);
        Some(tack_links::interpreter::discover(conn, trace, host, &settings, &names))
    }
}

/// The host's `pipelining` (`ansible_pipelining`, `ansible_ssh_pipelining`, else the
/// setting).
fn pipelining(templar: &tack_template::Templar, scope: &Scope) -> bool {
    for name in ["ansible_pipelining", "ansible_ssh_pipelining"] {
        if let Some(binding) = scope.get_own(name) {
            return templar
                .render(binding.node(), scope)
                .is_ok_and(|r| r.value.value.boolean_loose());
        }
    }
    tack_template::lookups::config::flag("ANSIBLE_PIPELINING")
}

/// ansible's ssh plugin's words for a failed connection under `no_log`: what ssh said is not
/// shown.
fn censored(e: ConnectionError) -> ConnectionError {
    const SSH: &str = "Failed to connect to the host via ssh:";
    match e {
        ConnectionError::Unreachable { message } if message.starts_with(SSH) => {
            ConnectionError::Unreachable {
                message: format!("{SSH} <error censored due to no log>"),
            }
        }
        e => e,
    }
}
