//! The `become` keywords (`become`, `become_user`, `become_method`, `become_flags`,
//! `become_exe`) and their connection variables (`ansible_become*`, which win over the
//! keywords, as ansible's play context applies them), resolved for one run on a local host.
//!
//! ansible escalates only when the become user differs from the user the connection runs as
//! (`DEFAULT_BECOME_ALLOW_SAME_USER` is off); becoming the user tack already runs as is
//! therefore a no-op, and that is all tack does: escalating to another user is refused by
//! name (naming the missing program when the method's program is not installed), never
//! faked. Controller actions run nothing on the host, so become never concerns them.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_template::Scope;

use crate::actions::Action;
use crate::task::TaskRun;

/// ansible-core's own become methods.
const METHODS: &[&str] = &["sudo", "su", "runas"];

impl TaskRun<'_> {
    fn become_setting(
        &self,
        keyword: Keyword,
        var: &str,
        scope: &Scope,
    ) -> Result<Option<tack_yaml::Value>, Diagnostic> {
        if let Some(binding) = scope.get(var) {
            let node = binding.node();
            let r = self.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
            return Ok(Some(r.value.value));
        }
        match self.ctx.inherited(keyword) {
            Some(node) => {
                let r = self.templar.render(node, scope).map_err(|e| e.to_diagnostic())?;
                Ok(Some(r.value.value))
            }
            None => Ok(None),
        }
    }

    /// Refuses a run that would have to become another user.
    pub(crate) fn check_become(&self, scope: &Scope) -> Result<(), Diagnostic> {
        if !matches!(self.action, Action::Module(_) | Action::Copy | Action::Template) {
            return Ok(());
        }
        let on = self
            .become_setting(Keyword::Become, "ansible_become", scope)?
            .is_some_and(|v| v.is_truthy());
        if !on {
            return Ok(());
        }
        let text = |v: tack_yaml::Value| tack_yaml::pyrepr::str(&v);
        let user = self
            .become_setting(Keyword::BecomeUser, "ansible_become_user", scope)?
            .map(text)
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| "root".into());
        let method = self
            .become_setting(Keyword::BecomeMethod, "ansible_become_method", scope)?
            .map(text)
            .unwrap_or_else(|| "sudo".into());
        let short = method.strip_prefix("ansible.builtin.").unwrap_or(&method);
        let origin = self.ctx.task.origin.clone();
        if !METHODS.contains(&short) {
            return Err(Diagnostic::at(
                format!("tack does not support the become method '{method}' yet"),
                origin,
            ));
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let me = tack_agent::modules::user_name(unsafe { libc::geteuid() });
        if me.as_deref() == Some(user.as_str()) {
            return Ok(());
        }
        let program = match short {
            "runas" => None,
            other => Some(other),
        };
        let missing = program.filter(|p| !on_path(p));
        Err(Diagnostic::at(
            match missing {
                Some(p) => format!(
                    "tack does not support become to the user '{user}' with the method \
                     '{short}': the program '{p}' is not installed"
                ),
                None => format!(
                    "tack does not support become to another user ('{user}', method \
                     '{short}') yet; only becoming the user tack runs as"
                ),
            },
            origin,
        ))
    }
}

/// Whether `program` is an executable on the controller's `PATH` (`which`).
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}
