//! `delegate_to` / `delegate_facts` / `local_action` for hosts tack reaches (connection
//! `local`): which host a run is delegated to (rendered per host and per loop item, `None`
//! when it names the host itself), the refusal for a delegated host whose connection tack does
//! not have, and where the facts of a delegated run go. The task's variables stay the
//! original host's, as in ansible; only the connection is the delegated host's, and every
//! connection tack has runs on this machine.
//!
//! The `[host -> delegated]` label is the callback's; nothing here prints.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::Scope;

use crate::task::TaskRun;

impl TaskRun<'_> {
    /// The host `scope`'s run of the task on `host` is delegated to, if another one.
    pub(crate) fn delegated(
        &self,
        host: &str,
        scope: &Scope,
    ) -> Result<Option<String>, Diagnostic> {
        let Some(node) = &self.ctx.task.delegate_to else { return Ok(None) };
        let rendered = self.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
        let name = match &rendered.value.value {
            tack_yaml::Value::Null => return Ok(None),
            other => tack_yaml::pyrepr::str(other),
        };
        if name.is_empty() || name == host {
            return Ok(None);
        }
        self.check_delegated_connection(&name, node.origin.clone())?;
        Ok(Some(name))
    }

    /// A delegated host must be one tack reaches: its `ansible_connection` (or the task's
    /// `connection`) is `local`, or it is the implicit `localhost`.
    fn check_delegated_connection(
        &self,
        name: &str,
        origin: Option<tack_diag::Origin>,
    ) -> Result<(), Diagnostic> {
        let from_var = self.scope(name).and_then(|s| {
            s.get("ansible_connection").map(|b| tack_yaml::pyrepr::str(&b.node().value))
        });
        let keyword =
            self.ctx.inherited(Keyword::Connection).map(|n| tack_yaml::pyrepr::str(&n.value));
        let implicit_local = matches!(name, "localhost" | "127.0.0.1" | "::1")
            && self.scope(name).is_none()
            || name == "localhost" && from_var.is_none();
        let connection = match (from_var, keyword) {
            (Some(c), _) => c,
            (None, Some(k)) if !implicit_local => k,
            _ if implicit_local => "local".into(),
            _ => "ssh".into(),
        };
        if connection == "local" || connection == "ansible.builtin.local" {
            return Ok(());
        }
        Err(Diagnostic::at(
            format!(
                "tack does not support the '{connection}' connection yet (host '{name}', \
                 delegated to); tasks are delegated only to hosts with ansible_connection=local"
            ),
            origin,
        ))
    }

    /// The host whose facts a run on `host` sets: the delegated one under `delegate_facts`.
    pub(crate) fn fact_host(&self, host: &str, scope: &Scope) -> String {
        let Some(node) = self.ctx.inherited(Keyword::DelegateFacts) else { return host.into() };
        let on =
            self.templar.render(node, scope).map(|r| r.value.value.is_truthy()).unwrap_or(false);
        if !on {
            return host.into();
        }
        match self.delegated(host, scope) {
            Ok(Some(other)) => other,
            _ => host.into(),
        }
    }
}
