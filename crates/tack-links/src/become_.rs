//! The `become` keywords (`become`, `become_user`, `become_method`, `become_flags`,
//! `become_exe`) and their connection variables (`ansible_become*` and the method's own
//! `ansible_sudo_*`/`ansible_su_*`, which win over the keywords, as ansible's play context
//! applies them), resolved for one run into the [`Become`] part of its link.
//!
//! ansible escalates only when the become user differs from the user the link runs as
//! (`DEFAULT_BECOME_ALLOW_SAME_USER` is off): the controller's user on a local link, the
//! remote user on an ssh link (ansible escalates when no remote user is set at all), unless
//! `become_allow_same_user` is on. The
//! methods run are `sudo` and `su`; `runas` and other plugins are refused by name. Controller
//! actions run nothing on the host, so become never concerns them.
//!
//! Owns reading the settings; the link under the become user is `crate::pool`'s, the
//! become command line `tack_connect::escalate`'s.

use tack_connect::{Become, BecomeMethod};
use tack_diag::{Diagnostic, Origin};
use tack_playbook::tables::Keyword;
use tack_template::{Scope, Templar};
use tack_yaml::{Node, Value};

use crate::link_target::LinkTarget;

/// ansible-core's become plugins tack does not run.
const NOT_RUN: &[&str] =
    &["runas", "doas", "dzdo", "ksu", "machinectl", "pbrun", "pfexec", "pmrun", "sesu", "sudosu"];

/// The variables each setting is read from (the last one set wins, as ansible's plugin
/// `vars:` lists), for the method's plugin.
fn names(method: BecomeMethod, setting: &str) -> Vec<String> {
    let own = method.name();
    match setting {
        "user" => vec!["ansible_become_user".into(), format!("ansible_{own}_user")],
        "exe" => vec!["ansible_become_exe".into(), format!("ansible_{own}_exe")],
        "flags" => vec!["ansible_become_flags".into(), format!("ansible_{own}_flags")],
        _ => vec![
            "ansible_become_password".into(),
            "ansible_become_pass".into(),
            format!("ansible_{own}_pass"),
        ],
    }
}

/// What the command line (`-b`, `--become-method`, `--become-user`,
/// `--become-password-file`) and the configuration (`[privilege_escalation]`) set, below
/// every keyword and variable (ansible's play context defaults).
#[derive(Debug, Clone, Default)]
pub struct BecomeDefaults {
    pub on: bool,
    pub method: Option<String>,
    pub user: Option<String>,
    pub flags: Option<String>,
    pub exe: Option<String>,
    pub password: Option<crate::link_target::Secret>,
    /// `become_allow_same_user`: escalate even to the user the link already runs as.
    pub allow_same_user: bool,
}

/// The become part of a run's link to `target`, or `None` when the run does not escalate.
pub fn resolve(
    templar: &Templar,
    scope: &Scope,
    vars: &dyn Fn(&str) -> Option<Node>,
    keyword: &dyn Fn(Keyword) -> Option<Node>,
    target: &LinkTarget,
    origin: Option<Origin>,
    defaults: &BecomeDefaults,
) -> Result<Option<Become>, Diagnostic> {
    let render = |node: Node| -> Result<Value, Diagnostic> {
        templar.render(&node, scope).map(|r| r.value.value).map_err(|e| e.to_diagnostic())
    };
    let var = |names: &[String]| -> Result<Option<Value>, Diagnostic> {
        for name in names.iter().rev() {
            if let Some(node) = vars(name) {
                return render(node).map(Some);
            }
        }
        Ok(None)
    };
    let setting = |names: &[String], kw: Option<Keyword>| -> Result<Option<Value>, Diagnostic> {
        match var(names)? {
            Some(v) => Ok(Some(v)),
            None => match kw.and_then(keyword) {
                Some(node) => render(node).map(Some),
                None => Ok(None),
            },
        }
    };
    let text = |v: Option<Value>| {
        v.filter(|v| !matches!(v, Value::Null)).map(|v| tack_yaml::pyrepr::str(&v))
    };
    // ansible reads it with `boolean()`: an inventory's `ansible_become=no` is off.
    let on = setting(&["ansible_become".into()], Some(Keyword::Become))?
        .map_or(defaults.on, |v| v.boolean_loose());
    if !on {
        return Ok(None);
    }
    let method_text =
        text(setting(&["ansible_become_method".into()], Some(Keyword::BecomeMethod))?)
            .or_else(|| defaults.method.clone())
            .unwrap_or_else(|| "sudo".into());
    let short =
        tack_py::ansible::short_name(&method_text, tack_py::ansible::CoreCollections::Builtin);
    let method = match short {
        "sudo" => BecomeMethod::Sudo,
        "su" => BecomeMethod::Su,
        other => {
            let what = if NOT_RUN.contains(&other) {
                "yet"
            } else if other.contains('.') {
                "(become plugins from collections are not run) yet"
            } else {
                "(no such become plugin)"
            };
            return Err(Diagnostic::at(
                format!(
                    "tack does not support the become method '{method_text}' {what}; it runs 'sudo' and 'su'"
                ),
                origin,
            ));
        }
    };
    let user = text(setting(&names(method, "user"), Some(Keyword::BecomeUser))?)
        .or_else(|| defaults.user.clone())
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "root".into());
    let login = match target {
        // SAFETY: geteuid has no preconditions and cannot fail.
        LinkTarget::Local => tack_agent::modules::user_name(unsafe { libc::geteuid() }),
        LinkTarget::Ssh(settings) => settings.user.clone(),
        LinkTarget::Plugin(settings) => settings.user.clone(),
    };
    if login.as_deref() == Some(user.as_str()) && !defaults.allow_same_user {
        return Ok(None);
    }
    let flags = text(setting(&names(method, "flags"), Some(Keyword::BecomeFlags))?)
        .or_else(|| defaults.flags.clone());
    let exe = text(setting(&names(method, "exe"), Some(Keyword::BecomeExe))?)
        .or_else(|| defaults.exe.clone());
    let password = text(var(&names(method, "password"))?)
        .or_else(|| defaults.password.as_ref().map(|p| p.0.clone()))
        .filter(|p| !p.is_empty());
    // su's prompt is matched in ansible's own list of languages; a list of the user's own
    // is not read yet.
    if method == BecomeMethod::Su && var(&["ansible_su_prompt_l10n".to_string()])?.is_some() {
        return Err(Diagnostic::at(
            "tack does not support 'ansible_su_prompt_l10n' yet: su's prompt is matched in \
             ansible's default languages",
            origin,
        ));
    }
    Ok(Some(Become { method, user, flags, exe, password }))
}
