//! The link a task's run on a host takes (see `tack_links`), connected, or the action's
//! output when it cannot be.

use std::sync::Arc;

use tack_connect::Become;
use tack_links::{Connection, ConnectionError, LinkTarget, Trace, Traced};

impl crate::task::TaskRun<'_> {
    /// The link a run of this task on `host` (with `scope`, the delegated one when delegated)
    /// takes, connected; an unreachable host or a refused setting is the action's output.
    pub(crate) fn link(
        &self,
        host: &str,
        scope: &tack_template::Scope,
        trace: &Arc<Trace>,
    ) -> Result<Arc<dyn Connection>, tack_actions::ActionOutput> {
        let (target, escalation) = self.link_target(host, scope).map_err(tack_actions::errored)?;
        let link = self.links.get(&target, escalation.as_ref()).map_err(|e| self.link_failed(e))?;
        let link: Arc<dyn Connection> = Arc::new(Traced::new(link, target.reach(), trace));
        link.connect().map_err(|e| self.link_failed(e))?;
        Ok(link)
    }

    /// `wait_for_connection`'s link for one attempt: the host's links closed first, as
    /// ansible's action resets its connection before each ping, then opened anew. The error
    /// is the message the attempt failed with.
    /// The host's links closed and a new one opened, with ssh's `ConnectTimeout` set to
    /// `connect_timeout` when given (`reboot`'s option).
    pub(crate) fn fresh_link(
        &self,
        host: &str,
        scope: &tack_template::Scope,
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
        if self.ctx.task.delegate_to.is_some() {
            return None;
        }
        let scope = self.scope(host)?;
        let (target, escalation) = self.link_target(host, &scope).ok()?;
        let link = self.links.get(&target, escalation.as_ref()).ok()?;
        (!link.is_open()).then_some(link)
    }

    pub(crate) fn link_target(
        &self,
        host: &str,
        scope: &tack_template::Scope,
    ) -> Result<(LinkTarget, Option<Become>), tack_diag::Diagnostic> {
        // A delegated run reads the delegated host's variables (`ansible_delegated_vars`);
        // one delegated outside the inventory is the implicit localhost (the only such host
        // delegation accepts).
        let delegated = scope.get("ansible_delegated_vars").and_then(|b| {
            b.node().as_map().and_then(|m| m.iter().next().map(|(k, v)| (k.clone(), v.clone())))
        });
        let (name, there) = match delegated {
            Some((name, vars)) => (tack_yaml::pyrepr::str(&name.value), Some(vars)),
            None if self.delegated(host, scope)?.is_some() => (String::new(), None),
            None => (host.to_string(), None),
        };
        let vars = |var: &str| match &there {
            Some(vars) => vars.as_map().and_then(|m| m.get(var)).cloned(),
            None => scope.get(var).map(|b| b.node().clone()),
        };
        let keyword = |k| self.ctx.inherited(k).cloned();
        let target = if name.is_empty() {
            LinkTarget::Local
        } else {
            tack_links::link_target::resolve(
                self.templar,
                scope,
                &vars,
                &keyword,
                &name,
                self.task_origin(),
                self.ssh_defaults,
            )?
        };
        let escalation = tack_links::become_::resolve(
            self.templar,
            scope,
            &vars,
            &keyword,
            &target,
            self.task_origin(),
            &self.ssh_defaults.become_,
        )?;
        Ok((target, escalation))
    }

    fn link_failed(&self, e: ConnectionError) -> tack_actions::ActionOutput {
        let unreachable = matches!(e, ConnectionError::Unreachable { .. });
        // What the become program said may quote a prompt; the password itself never
        // reaches it (it only travels on the program's stdin).
        let msg = format!("Task failed: {e}");
        let mut out = tack_actions::errored(tack_diag::Diagnostic::at(&msg, self.task_origin()));
        out.data.insert(tack_report::result::s("msg"), tack_report::result::s(&msg));
        if unreachable {
            out.data.remove("failed");
            out.data.insert(tack_report::result::s("unreachable"), tack_report::result::b(true));
        }
        out
    }
}
