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
use tack_yaml::{Node, Value};

use tack_report::result::s;

use tack_links::SshDefaults;

use crate::task::reading::Reading;

/// Where a task's runs are delegated to, read with the run's ssh defaults.
pub(crate) struct Delegation<'a> {
    pub task: &'a Reading<'a>,
    pub ssh: &'a SshDefaults,
}

impl Delegation<'_> {
    /// The host `scope`'s run of the task on `host` is delegated to, if another one.
    pub(crate) fn delegated(
        &self,
        host: &str,
        scope: &Scope,
    ) -> Result<Option<String>, Diagnostic> {
        let Some(node) = self.task.ctx.delegate_to() else { return Ok(None) };
        let rendered = self.task.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
        let name = match &rendered.value.value {
            tack_yaml::Value::Null => return Ok(None),
            other => tack_yaml::pyrepr::str(other),
        };
        if name.is_empty() {
            return Err(Diagnostic::at(
                format!(
                    "Empty hostname produced from delegate_to: \"{}\"",
                    tack_yaml::pyrepr::str(&node.value)
                ),
                node.origin.clone(),
            ));
        }
        if name == host {
            return Ok(None);
        }
        self.check_delegated_connection(&name, node.origin.clone())?;
        Ok(Some(name))
    }

    /// How a result names the host it was delegated to (`host_label`): its name, and, when
    /// its link is one with an address (ssh; ansible's `local` has none to report), that
    /// address in parentheses when it differs from the name.
    pub(crate) fn delegated_label(&self, other: &str) -> String {
        let Some(scope) = self.task.delegated_host_scope(other) else { return other.to_string() };
        let vars = |name: &str| scope.get_own(name).map(|b| b.node().clone());
        let keyword = |k| self.task.ctx.inherited(k).cloned();
        let target = tack_links::link_target::resolve(
            self.task.templar,
            &scope,
            &vars,
            &keyword,
            other,
            None,
            self.ssh,
        );
        match target {
            Ok(tack_links::link_target::LinkTarget::Ssh(ssh)) if ssh.address != other => {
                format!("{other}({})", ssh.address)
            }
            _ => other.to_string(),
        }
    }

    /// Whether ansible gathers the delegated host's variables for this run: the task names
    /// a host to delegate to, itself included.
    pub(crate) fn gathers_delegated(
        &self,
        host: &str,
        scope: &Scope,
        delegated: &Result<Option<String>, Diagnostic>,
    ) -> bool {
        match delegated {
            Ok(Some(_)) => true,
            Ok(None) => self.task.ctx.delegate_to().is_some_and(|node| {
                self.task
                    .templar
                    .render(node, scope)
                    .is_ok_and(|r| tack_yaml::pyrepr::str(&r.value.value) == host)
            }),
            Err(_) => false,
        }
    }

    /// A delegated host must be one tack reaches: its `ansible_connection` (or the task's
    /// `connection`) is `local`, `ssh` or a plugin ansible-core runs, or it is the implicit
    /// `localhost`.
    fn check_delegated_connection(
        &self,
        name: &str,
        origin: Option<tack_diag::Origin>,
    ) -> Result<(), Diagnostic> {
        let connection = self.delegated_connection(name);
        match connection.as_str() {
            "local" | "ansible.builtin.local" | "ansible.legacy.local" => Ok(()),
            "ssh" | "ansible.builtin.ssh" | "ansible.legacy.ssh" | "smart" => {
                if self.task.ctx.task.attrs.get(Keyword::Async).is_some() {
                    return Err(Diagnostic::at(
                        format!(
                            "tack does not support delegating an 'async' '{}' task to a host \
                             of the 'ssh' connection yet (host '{name}')",
                            self.task.ctx.task.action
                        ),
                        origin,
                    ));
                }
                Ok(())
            }
            other if self.ssh.plugins.is_none() => {
                Err(tack_links::link_target::refused(other, name, origin))
            }
            // A connection plugin written in Python: its link starts no `async` job.
            other if self.task.ctx.task.attrs.get(Keyword::Async).is_some() => Err(Diagnostic::at(
                format!(
                    "tack does not support delegating an 'async' '{}' task to a host of \
                         the '{other}' connection yet (host '{name}')",
                    self.task.ctx.task.action
                ),
                origin,
            )),
            _ => Ok(()),
        }
    }

    /// The connection a delegated host is reached by: its `ansible_connection`, else the
    /// task's `connection` keyword, else `local` for the implicit `localhost`, else the
    /// run's default (`-c`, the configured `transport`, `ssh`).
    fn delegated_connection(&self, name: &str) -> String {
        let from_var = self.task.scope(name).and_then(|s| {
            s.get_own("ansible_connection").map(|b| tack_yaml::pyrepr::str(&b.node().value))
        });
        let keyword =
            self.task.ctx.inherited(Keyword::Connection).map(|n| tack_yaml::pyrepr::str(&n.value));
        let implicit_local = matches!(name, "localhost" | "127.0.0.1" | "::1")
            && self.task.scope(name).is_none()
            || name == "localhost" && from_var.is_none();
        match (from_var, keyword) {
            (Some(c), _) => c,
            (None, Some(k)) if !implicit_local => k,
            _ if implicit_local => "local".into(),
            _ => self.ssh.connection.clone().unwrap_or_else(|| "ssh".into()),
        }
    }

    /// `scope` for a run delegated to `other`: with `ansible_delegated_vars`, the delegated
    /// host's variables (as this task would see them there) under its name, its
    /// `inventory_hostname` the original host's, as ansible's variable manager builds it.
    /// A host outside the inventory (the implicit `localhost`) has no variables of its own
    /// tack could give, so the variable is left undefined there.
    pub(crate) fn delegated_scope(&self, scope: &Scope, host: &str, other: &str) -> Scope {
        let Some(there) = self.task.delegated_host_scope(other) else { return scope.clone() };
        let mut vars = tack_yaml::Mapping::new();
        let mut provenance = tack_template::ProvenanceSet::new();
        for name in there.names() {
            if let Some(binding) = there.get(name) {
                provenance.add(binding.provenance());
                vars.insert(s(name), binding.node().clone());
            }
        }
        vars.insert(s("inventory_hostname"), s(host));
        // The play context's defaults for a delegated host's address, port and user, named
        // per its transport (ansible's `DEFAULT_TRANSPORT`, ssh, when it sets none).
        let transport = vars
            .get("ansible_connection")
            .map(|n| tack_yaml::pyrepr::str(&n.value))
            .unwrap_or_else(|| "ssh".into());
        let has = |vars: &tack_yaml::Mapping, names: &[String], truthy: bool| {
            names.iter().any(|n| vars.get(n).is_some_and(|v| !truthy || v.value.is_truthy()))
        };
        let named = |what: &str, extra: &[&str]| {
            let mut names = vec![format!("ansible_{transport}_{what}")];
            names.extend(extra.iter().map(|n| n.to_string()));
            names
        };
        if !has(&vars, &named("host", &["ansible_host", "ansible_ssh_host"]), false) {
            vars.insert(s("ansible_host"), s(other));
        }
        if !has(&vars, &named("port", &["ansible_port", "ansible_ssh_port"]), false) {
            vars.insert(s("ansible_port"), Node::bare(Value::Null));
        }
        if !has(&vars, &named("user", &["ansible_user", "ansible_ssh_user"]), true) {
            vars.insert(s("ansible_user"), Node::bare(Value::Null));
        }
        // The play context's address is the delegated host's now.
        let address = vars.get("ansible_host").or_else(|| vars.get("ansible_ssh_host")).cloned();
        let mut connection = tack_template::Layer::new();
        if let Some(address) = address {
            connection.insert("ansible_host", address.clone(), provenance.derived());
            connection.insert("ansible_ssh_host", address, provenance.derived());
        }
        let mut outer = tack_yaml::Mapping::new();
        outer.insert(s(other), Node::bare(Value::Map(vars)));
        scope.with_fallback(std::sync::Arc::new(connection)).with_var(
            "ansible_delegated_vars",
            Node::bare(Value::Map(outer)),
            provenance.derived(),
        )
    }

    /// The host whose facts a run on `host` sets: the delegated one under `delegate_facts`.
    pub(crate) fn fact_host(&self, host: &str, scope: &Scope) -> String {
        let Some(node) = self.task.ctx.inherited(Keyword::DelegateFacts) else {
            return host.into();
        };
        let on = self
            .task
            .templar
            .render(node, scope)
            .map(|r| r.value.value.is_truthy())
            .unwrap_or(false);
        if !on {
            return host.into();
        }
        match self.delegated(host, scope) {
            Ok(Some(other)) => other,
            _ => host.into(),
        }
    }
}
