//! Which link a task's run on a host takes: the connection plugin and the settings it reads,
//! from the host's variables, the task's and play's keywords and the configuration, with
//! ansible's precedence (variable > task keyword > play keyword > configuration; a keyword
//! set on the task is inherited from its play by `TaskInContext::inherited`).
//!
//! A connection plugin other than `local` and `ssh` (ansible-core's others, a collection's,
//! one beside the playbook) runs through ansible-core's own code on the controller: the
//! binary says which variables it reads ([`PluginDescriber`]), and the link keeps their
//! values; where no plugin can be asked about, it is refused by name.
//!
//! Owns the reading and those refusals; opening a link is `crate::pool`'s. Two runs that read
//! the same settings share one link.

use tack_diag::{Diagnostic, Origin};
use tack_playbook::tables::Keyword;
use tack_template::{Scope, Templar};
use tack_yaml::{Node, Value};

/// Where a run goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LinkTarget {
    /// ansible's `local` connection: the controller itself.
    Local,
    Ssh(Box<SshSettings>),
    /// A connection plugin written in Python, run by ansible-core's code on the controller.
    Plugin(Box<PluginSettings>),
}

impl LinkTarget {
    /// The connection ansible would name for a use of this target's links (a become link
    /// is still the login's `local` or `ssh` connection), as `-vvv` announces it.
    pub fn reach(&self) -> crate::trace::Reach {
        match self {
            LinkTarget::Local => crate::trace::Reach::Local,
            LinkTarget::Ssh(settings) => crate::trace::Reach::Ssh { user: settings.user.clone() },
            LinkTarget::Plugin(_) => crate::trace::Reach::Plugin,
        }
    }
}

/// What a connection plugin written in Python reads for one host: its name, the play
/// context's fields ansible hands every plugin, and the values of the variables its options
/// read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PluginSettings {
    /// The connection as the host's settings name it (the plugin's loader resolves it).
    pub name: String,
    pub inventory_host: String,
    /// `ansible_host` (else the host's name): the play context's `remote_addr`.
    pub address: String,
    /// `ansible_user`, the `remote_user` keyword, or the configured one.
    pub user: Option<String>,
    /// The command line's connection password (`-k`), which ansible hands the plugin as
    /// its `password` option.
    pub password: Option<Secret>,
    /// The connection timeout (`-T`, the `timeout` setting).
    pub timeout: Option<u64>,
    pub options: PluginOptions,
    /// ansible's error for a plugin that cannot be loaded (`the connection plugin '...' was
    /// not found`), or why it could not be asked about: the error of every use.
    pub unusable: Option<String>,
    /// ansible-core's deprecation of the plugin, shown for each task that uses it.
    pub deprecation: Option<PluginDeprecation>,
}

/// The rendered values of the variables a plugin's options read, by variable name. Their
/// text is what tells two links apart; `Debug` shows only the names (a password is among
/// them).
#[derive(Clone, PartialEq)]
pub struct PluginOptions(pub Vec<(String, Value)>);

impl Eq for PluginOptions {}

impl std::hash::Hash for PluginOptions {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for (name, value) in &self.0 {
            name.hash(state);
            tack_yaml::pyrepr::repr(value).hash(state);
        }
    }
}

impl std::fmt::Debug for PluginOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.0.iter().map(|(name, _)| name)).finish()
    }
}

/// What ansible-core says of a connection plugin: the variables its options (and its
/// shell's) read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginFacts {
    pub vars: Vec<String>,
    /// ansible-core's deprecation of the plugin (its routing's), which ansible shows, and
    /// keeps in the result, for each task that loads it.
    pub deprecation: Option<PluginDeprecation>,
}

/// A deprecation ansible-core's loader raises for a connection plugin it loads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PluginDeprecation {
    /// The message, without the sentence on when the plugin goes.
    pub message: String,
    /// The ansible-core version that removes it.
    pub removed_in: String,
}

/// How the run asks ansible-core about a connection plugin by name (the binary's, over its
/// Python workers): `Err` is ansible's error for it (`the connection plugin '...' was not
/// found`) or why it could not be asked.
#[derive(Clone)]
pub struct PluginDescriber(pub std::sync::Arc<Describe>);

/// The question [`PluginDescriber`] answers, by plugin name.
pub type Describe = dyn Fn(&str) -> Result<PluginFacts, String> + Send + Sync;

impl std::fmt::Debug for PluginDescriber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PluginDescriber")
    }
}

/// A value that never reaches output (`Debug` shows a mask), its bytes wiped when dropped.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret(pub String);

impl Drop for Secret {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(********)")
    }
}

/// What ansible's `ssh` connection plugin reads for one host, before it builds its command.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct SshSettings {
    /// The inventory host the link is for: two hosts at one address still get a link (and
    /// an agent) each, as ansible gives each its own connection.
    pub inventory_host: String,
    /// `ansible_host` (else the host's name).
    pub address: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub private_key_file: Option<String>,
    /// `ansible_ssh_args` (replacing the configured/default `-C -o ControlMaster=auto ...`).
    pub ssh_args: Option<String>,
    pub common_args: Option<String>,
    pub extra_args: Option<String>,
    /// `ansible_ssh_timeout` / `timeout`, seconds.
    pub timeout: Option<u64>,
    /// `ansible_ssh_retries` / `reconnection_retries`.
    pub retries: Option<u32>,
    /// `ansible_ssh_password_mechanism` / `password_mechanism`.
    pub password_mechanism: Option<String>,
    pub host_key_checking: Option<bool>,
    /// `ansible_password` (and its other spellings), else the run's `-k` password.
    pub password: Option<Secret>,
    /// `ansible_sshpass_prompt` / `[ssh_connection] sshpass_prompt`.
    pub sshpass_prompt: Option<String>,
    /// `ansible_private_key` / `ANSIBLE_PRIVATE_KEY`: key material, which ansible cannot
    /// use under `SSH_AGENT` `none`, the only agent setting tack runs with (see
    /// `SshTarget::private_key`).
    pub private_key: Option<Secret>,
    /// `ansible_ssh_pkcs11_provider` / `[ssh_connection] pkcs11_provider`.
    pub pkcs11_provider: Option<String>,
    /// `ansible_ssh_executable`.
    pub executable: Option<String>,
    /// `ansible_control_path` / `[ssh_connection] control_path`.
    pub control_path: Option<String>,
    /// `ansible_control_path_dir` / `[ssh_connection] control_path_dir`.
    pub control_path_dir: Option<String>,
}

/// The configuration's defaults for what a host's variables leave unset (`remote_user`,
/// `private_key_file`, `[ssh_connection]` options...), as the binary read them.
#[derive(Debug, Clone, Default)]
pub struct SshDefaults {
    /// The connection plugin of a host that names none: `-c`, else the configured
    /// `transport` (`None`: ansible's default, `ssh`).
    pub connection: Option<String>,
    pub user: Option<String>,
    pub port: Option<u16>,
    pub private_key_file: Option<String>,
    pub ssh_args: Option<String>,
    pub common_args: Option<String>,
    pub extra_args: Option<String>,
    pub timeout: Option<u64>,
    pub retries: FromConfig<u32>,
    pub password_mechanism: FromConfig<String>,
    pub host_key_checking: Option<bool>,
    pub executable: Option<String>,
    pub control_path: Option<String>,
    pub control_path_dir: Option<String>,
    /// The connection password of the command line (`-k`, `--connection-password-file`):
    /// ansible's play context password, used where a host sets none.
    pub password: Option<Secret>,
    /// `[ssh_connection] sshpass_prompt` (`ANSIBLE_SSHPASS_PROMPT`).
    pub sshpass_prompt: Option<String>,
    /// The ssh plugin's `private_key` from the configuration (`ANSIBLE_PRIVATE_KEY`).
    pub private_key: Option<Secret>,
    /// `[ssh_connection] pkcs11_provider` (`ANSIBLE_PKCS11_PROVIDER`).
    pub pkcs11_provider: Option<String>,
    /// The run's become defaults (every link's, local ones too).
    pub become_: crate::become_::BecomeDefaults,
    /// How connection plugins written in Python are asked about (`None`: they are refused).
    pub plugins: Option<PluginDescriber>,
}

/// A configuration setting as the binary read it: unset, its value, or ansible's words for
/// what is wrong with it. The error is raised only for a host that uses the setting (one
/// whose own variable does not set it), as ansible reads a plugin's option only for the
/// connection that needs it; never dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromConfig<T>(pub Result<Option<T>, String>);

impl<T> Default for FromConfig<T> {
    fn default() -> Self {
        FromConfig(Ok(None))
    }
}

impl<T: Clone> FromConfig<T> {
    fn get(&self, origin: Option<Origin>) -> Result<Option<T>, Diagnostic> {
        self.0.clone().map_err(|message| Diagnostic::at(message, origin))
    }
}

/// The variables each setting is read from, in the order of ansible's ssh plugin's `vars:`
/// lists, where the last one set wins.
const ADDRESS: &[&str] = &["ansible_host", "ansible_ssh_host"];
const PORT: &[&str] = &["ansible_port", "ansible_ssh_port"];
const USER: &[&str] = &["ansible_user", "ansible_ssh_user"];
const KEY: &[&str] = &["ansible_private_key_file", "ansible_ssh_private_key_file"];
const SSH_ARGS: &[&str] = &["ansible_ssh_args"];
const COMMON_ARGS: &[&str] = &["ansible_ssh_common_args"];
const EXTRA_ARGS: &[&str] = &["ansible_ssh_extra_args"];
const TIMEOUT: &[&str] = &["ansible_ssh_timeout"];
const RETRIES: &[&str] = &["ansible_ssh_retries"];
const PASSWORD_MECHANISM: &[&str] = &["ansible_ssh_password_mechanism"];
/// ansible's choices for `password_mechanism`.
const PASSWORD_MECHANISMS: &[&str] = &["ssh_askpass", "sshpass", "disable"];
const HOST_KEY_CHECKING: &[&str] = &["ansible_host_key_checking", "ansible_ssh_host_key_checking"];
const PASSWORD: &[&str] = &["ansible_password", "ansible_ssh_pass", "ansible_ssh_password"];
const EXECUTABLE: &[&str] = &["ansible_ssh_executable"];
const CONTROL_PATH: &[&str] = &["ansible_control_path"];
const CONTROL_PATH_DIR: &[&str] = &["ansible_control_path_dir"];

const PKCS11_PROVIDER: &[&str] = &["ansible_ssh_pkcs11_provider"];
/// `private_key`: key material ansible adds to the ssh-agent of its `SSH_AGENT` setting.
const PRIVATE_KEY: &[&str] = &["ansible_private_key", "ansible_ssh_private_key"];
const SSHPASS_PROMPT: &[&str] = &["ansible_sshpass_prompt"];
/// Options of ansible's ssh plugin tack's links do not take: refused where a host sets them
/// away from ansible's default (their configured forms are the binary's to refuse).
const USE_TTY: &[&str] = &["ansible_ssh_use_tty"];
const KEY_PASSPHRASE: &[&str] =
    &["ansible_private_key_passphrase", "ansible_ssh_private_key_passphrase"];

/// The link for a run on `host` whose variables are `vars` (the delegated host's when the
/// run is delegated), or why tack cannot open it.
pub fn resolve(
    templar: &Templar,
    scope: &Scope,
    vars: &dyn Fn(&str) -> Option<Node>,
    keyword: &dyn Fn(Keyword) -> Option<Node>,
    host: &str,
    origin: Option<Origin>,
    defaults: &SshDefaults,
) -> Result<LinkTarget, Diagnostic> {
    let render = |node: Node| -> Result<Value, Diagnostic> {
        templar.render(&node, scope).map(|r| r.value.value).map_err(|e| e.to_diagnostic())
    };
    let first = |names: &[&str]| -> Result<Option<Value>, Diagnostic> {
        for name in names.iter().rev() {
            if let Some(node) = vars(name) {
                return render(node).map(Some);
            }
        }
        Ok(None)
    };
    let text = |names: &[&str]| -> Result<Option<String>, Diagnostic> {
        Ok(first(names)?.filter(|v| !matches!(v, Value::Null)).map(|v| tack_yaml::pyrepr::str(&v)))
    };
    let connection = match first(&["ansible_connection"])? {
        Some(v) => tack_yaml::pyrepr::str(&v),
        None => match keyword(Keyword::Connection) {
            Some(node) => tack_yaml::pyrepr::str(&render(node)?),
            None => defaults.connection.clone().unwrap_or_else(|| "ssh".to_string()),
        },
    };
    match connection.as_str() {
        "local" | "ansible.builtin.local" | "ansible.legacy.local" => return Ok(LinkTarget::Local),
        "ssh" | "ansible.builtin.ssh" | "ansible.legacy.ssh" | "smart" => {}
        other => {
            let Some(describer) = &defaults.plugins else {
                return Err(refused(other, host, origin));
            };
            // A plugin that cannot be loaded fails the task that uses it, where ansible's
            // executor fails it (not while the play is checked).
            let (facts, unusable) = match (describer.0)(other) {
                Ok(facts) => (facts, None),
                Err(why) => (PluginFacts::default(), Some(why)),
            };
            let mut options = Vec::new();
            for name in &facts.vars {
                if let Some(node) = vars(name) {
                    options.push((name.clone(), render(node)?));
                }
            }
            let user = match text(USER)? {
                Some(user) => Some(user),
                None => match keyword(Keyword::RemoteUser) {
                    Some(node) => Some(tack_yaml::pyrepr::str(&render(node)?)),
                    None => defaults.user.clone(),
                },
            };
            return Ok(LinkTarget::Plugin(Box::new(PluginSettings {
                name: other.to_string(),
                inventory_host: host.to_string(),
                address: text(ADDRESS)?.unwrap_or_else(|| host.to_string()),
                user,
                password: defaults.password.clone(),
                timeout: defaults.timeout,
                options: PluginOptions(options),
                unusable,
                deprecation: facts.deprecation.clone(),
            })));
        }
    }
    let origin = || origin.clone();
    let unhonoured = |what: &str| {
        Diagnostic::at(
            format!("tack does not support {what} (host '{host}'): its ssh links take none"),
            origin(),
        )
    };
    if matches!(first(USE_TTY)?, Some(v) if !matches!(v, Value::Null) && !v.boolean_loose()) {
        return Err(unhonoured(
            "ansible_ssh_use_tty false (no terminal for commands sent over ssh)",
        ));
    }
    if text(KEY_PASSPHRASE)?.is_some_and(|p| !p.is_empty()) {
        return Err(unhonoured(
            "ansible_private_key_passphrase (a passphrase for the private key)",
        ));
    }
    let private_key = match text(PRIVATE_KEY)? {
        Some(key) => Some(key).filter(|k| !k.is_empty()).map(Secret),
        None => defaults.private_key.clone(),
    };
    let port_value = match first(PORT)? {
        None | Some(Value::Null) => match keyword(Keyword::Port) {
            Some(node) => Some(render(node)?),
            None => None,
        },
        found => found,
    };
    let port = match port_value {
        None | Some(Value::Null) => defaults.port,
        Some(v) => Some(port_number(&v).ok_or_else(|| {
            Diagnostic::at(
                format!(
                    "Invalid value for the ssh port of host '{host}': {} (expected a number \
                     from 1 to 65535)",
                    tack_yaml::pyrepr::repr(&v)
                ),
                origin(),
            )
        })?),
    };
    // A whole number a host variable sets (`what` it counts, for the refusal), if it does.
    let count = |names: &[&str], what: &str| -> Result<Option<u64>, Diagnostic> {
        match first(names)? {
            None | Some(Value::Null) => Ok(None),
            Some(v) => seconds(&v).map(Some).ok_or_else(|| {
                Diagnostic::at(
                    format!(
                        "Invalid value for {} of host '{host}': {} (expected a number of {what})",
                        names[0],
                        tack_yaml::pyrepr::repr(&v)
                    ),
                    origin(),
                )
            }),
        }
    };
    let timeout = count(TIMEOUT, "seconds")?.or(defaults.timeout);
    let retries = count(RETRIES, "retries")?.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let retries = match retries {
        Some(n) => Some(n),
        None => defaults.retries.get(origin())?,
    };
    let password_mechanism = match text(PASSWORD_MECHANISM)? {
        Some(m) if !PASSWORD_MECHANISMS.contains(&m.as_str()) => {
            return Err(Diagnostic::at(
                format!(
                    "Invalid value for ansible_ssh_password_mechanism of host '{host}': '{m}' \
                     (expected one of {})",
                    PASSWORD_MECHANISMS.join(", ")
                ),
                origin(),
            ));
        }
        Some(m) => Some(m),
        None => defaults.password_mechanism.get(origin())?,
    };
    let user = match text(USER)? {
        Some(user) => Some(user),
        None => match keyword(Keyword::RemoteUser) {
            Some(node) => Some(tack_yaml::pyrepr::str(&render(node)?)),
            None => defaults.user.clone(),
        },
    };
    Ok(LinkTarget::Ssh(Box::new(SshSettings {
        inventory_host: host.to_string(),
        address: text(ADDRESS)?.unwrap_or_else(|| host.to_string()),
        port,
        user,
        private_key_file: text(KEY)?.or_else(|| defaults.private_key_file.clone()),
        ssh_args: text(SSH_ARGS)?.or_else(|| defaults.ssh_args.clone()),
        common_args: text(COMMON_ARGS)?.or_else(|| defaults.common_args.clone()),
        extra_args: text(EXTRA_ARGS)?.or_else(|| defaults.extra_args.clone()),
        timeout,
        retries,
        password_mechanism,
        host_key_checking: match first(HOST_KEY_CHECKING)? {
            None | Some(Value::Null) => defaults.host_key_checking,
            // A `type: boolean` option: `boolean(value, strict=False)`.
            Some(v) => Some(v.boolean_loose()),
        },
        // A host's own password replaces the command line's, as ansible's play context
        // takes it; an empty one is none at all.
        password: match text(PASSWORD)? {
            Some(p) => Some(p).filter(|p| !p.is_empty()).map(Secret),
            None => defaults.password.clone(),
        },
        sshpass_prompt: text(SSHPASS_PROMPT)?.or_else(|| defaults.sshpass_prompt.clone()),
        private_key,
        pkcs11_provider: text(PKCS11_PROVIDER)?
            .or_else(|| defaults.pkcs11_provider.clone())
            .filter(|p| !p.is_empty()),
        executable: text(EXECUTABLE)?.or_else(|| defaults.executable.clone()),
        control_path: text(CONTROL_PATH)?.or_else(|| defaults.control_path.clone()),
        control_path_dir: text(CONTROL_PATH_DIR)?.or_else(|| defaults.control_path_dir.clone()),
    })))
}

/// The refusal of a connection plugin tack has not got, named with the host it was for.
pub fn refused(connection: &str, host: &str, origin: Option<Origin>) -> Diagnostic {
    Diagnostic::at(
        format!(
            "tack does not support the '{connection}' connection (host '{host}'); it reaches \
             hosts with 'local' and 'ssh', and with connection plugins written in Python only \
             through ansible-core on the controller, which this run has not got"
        ),
        origin,
    )
}

fn port_number(v: &Value) -> Option<u16> {
    match v {
        Value::Int(i) => u16::try_from(*i).ok().filter(|p| *p > 0),
        Value::Str(s) | Value::Unsafe(s) => s.trim().parse::<u16>().ok().filter(|p| *p > 0),
        _ => None,
    }
}

fn seconds(v: &Value) -> Option<u64> {
    match v {
        Value::Int(i) => u64::try_from(*i).ok(),
        Value::Float(f) if f.is_finite() && *f >= 0.0 => Some(f.trunc() as u64),
        Value::Str(s) | Value::Unsafe(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tack_template::Provenance;

    fn s(text: &str) -> Node {
        Node::bare(Value::Str(text.to_string()))
    }

    fn target(vars: &[(&str, Node)], keywords: &[(Keyword, Node)]) -> Result<LinkTarget, String> {
        let templar = Templar::new();
        let mut scope = Scope::new();
        for (name, value) in vars {
            scope = scope.with_var(name, value.clone(), Provenance::Trusted);
        }
        let lookup = |name: &str| scope.get(name).map(|b| b.node().clone());
        let keyword = |k: Keyword| keywords.iter().find(|(kk, _)| *kk == k).map(|(_, v)| v.clone());
        resolve(&templar, &scope, &lookup, &keyword, "web1", None, &SshDefaults::default())
            .map_err(|d| d.brief())
    }

    fn ssh(t: Result<LinkTarget, String>) -> SshSettings {
        match t {
            Ok(LinkTarget::Ssh(s)) => *s,
            other => panic!("not ssh: {other:?}"),
        }
    }

    #[test]
    fn a_host_variable_wins_over_the_keyword_and_the_default_is_ssh() {
        let local = [("ansible_connection", s("local"))];
        assert_eq!(target(&local, &[(Keyword::Connection, s("ssh"))]), Ok(LinkTarget::Local));
        assert_eq!(target(&[], &[(Keyword::Connection, s("local"))]), Ok(LinkTarget::Local));
        assert_eq!(ssh(target(&[], &[])).address, "web1");
    }

    #[test]
    fn the_last_variable_of_ansibles_list_wins_and_keywords_fill_in() {
        let vars = [
            ("ansible_host", s("10.0.0.1")),
            ("ansible_ssh_host", s("10.0.0.2")),
            ("ansible_port", Node::bare(Value::Int(2200))),
        ];
        let keywords =
            [(Keyword::Port, Node::bare(Value::Int(22))), (Keyword::RemoteUser, s("deploy"))];
        let got = ssh(target(&vars, &keywords));
        assert_eq!(got.address, "10.0.0.2");
        assert_eq!(got.port, Some(2200));
        assert_eq!(got.user.as_deref(), Some("deploy"));
    }

    #[test]
    fn templated_settings_are_rendered_and_bad_ones_refused() {
        let vars = [("target", s("db1")), ("ansible_host", s("{{ target }}.example"))];
        assert_eq!(ssh(target(&vars, &[])).address, "db1.example");
        let bad = [("ansible_port", s("http"))];
        assert!(target(&bad, &[]).unwrap_err().contains("Invalid value for the ssh port"));
        let docker = [("ansible_connection", s("docker"))];
        assert!(target(&docker, &[]).unwrap_err().contains("'docker' connection"));
        let pkcs11 = [("ansible_ssh_pkcs11_provider", s("/usr/lib/p11.so"))];
        assert_eq!(ssh(target(&pkcs11, &[])).pkcs11_provider.as_deref(), Some("/usr/lib/p11.so"));
        assert_eq!(ssh(target(&[("ansible_ssh_retries", s("3"))], &[])).retries, Some(3));
        let retries = [("ansible_ssh_retries", s("often"))];
        assert!(
            target(&retries, &[]).unwrap_err().contains("Invalid value for ansible_ssh_retries")
        );
        let mechanism = [("ansible_ssh_password_mechanism", s("disable"))];
        assert_eq!(ssh(target(&mechanism, &[])).password_mechanism.as_deref(), Some("disable"));
        let mechanism = [("ansible_ssh_password_mechanism", s("expect"))];
        assert!(target(&mechanism, &[]).unwrap_err().contains("(expected one of ssh_askpass,"));
        // Options tack's links do not take: refused away from ansible's default only.
        let tty = [("ansible_ssh_use_tty", s("no"))];
        assert!(target(&tty, &[]).unwrap_err().contains("ansible_ssh_use_tty false"));
        assert!(target(&[("ansible_ssh_use_tty", s("yes"))], &[]).is_ok());
        let passphrase = [("ansible_ssh_private_key_passphrase", s("sesame"))];
        let refused = target(&passphrase, &[]).unwrap_err();
        assert!(refused.contains("ansible_private_key_passphrase") && !refused.contains("sesame"));
    }

    #[test]
    fn a_private_key_is_kept_for_the_link() {
        let templar = Templar::new();
        let scope = Scope::new();
        let vars = [("ansible_private_key", s("KEY MATERIAL"))];
        let lookup = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
        let none = SshDefaults::default();
        let target = resolve(&templar, &scope, &lookup, &|_| None, "web1", None, &none);
        assert_eq!(
            ssh(target.map_err(|d| d.brief())).private_key,
            Some(Secret("KEY MATERIAL".into()))
        );
    }

    #[test]
    fn a_bad_configured_value_is_raised_for_a_host_that_uses_it() {
        let templar = Templar::new();
        let scope = Scope::new();
        let defaults = SshDefaults {
            retries: FromConfig(Err("Config 'reconnection_retries' ... invalid value".into())),
            ..SshDefaults::default()
        };
        let resolve_with = |vars: &[(&str, Node)]| {
            let lookup = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
            resolve(&templar, &scope, &lookup, &|_| None, "web1", None, &defaults)
                .map_err(|d| d.brief())
        };
        assert!(resolve_with(&[]).unwrap_err().contains("'reconnection_retries'"));
        // A host that sets its own never reads the configuration's.
        assert_eq!(ssh(resolve_with(&[("ansible_ssh_retries", s("1"))])).retries, Some(1));
    }

    #[test]
    fn another_plugin_keeps_the_variables_its_options_read_and_never_shows_them() {
        let templar = Templar::new();
        let scope = Scope::new();
        let vars = [
            ("ansible_connection", s("community.docker.docker")),
            ("ansible_password", s("hunter2")),
            ("docker_extra", s("{{ 'rendered' }}")),
            ("unread", s("{{ undefined_here }}")),
        ];
        let lookup = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.clone());
        let defaults = SshDefaults {
            plugins: Some(PluginDescriber(std::sync::Arc::new(|name: &str| {
                if name == "nope" {
                    return Err("the connection plugin 'nope' was not found".into());
                }
                Ok(PluginFacts {
                    vars: vec!["ansible_password".into(), "docker_extra".into()],
                    deprecation: None,
                })
            }))),
            ..SshDefaults::default()
        };
        let got = resolve(&templar, &scope, &lookup, &|_| None, "c1", None, &defaults);
        let Ok(LinkTarget::Plugin(settings)) = got else { panic!("not a plugin: {got:?}") };
        assert_eq!(settings.name, "community.docker.docker");
        assert_eq!(
            settings.options.0,
            vec![
                ("ansible_password".to_string(), Value::Str("hunter2".into())),
                ("docker_extra".to_string(), Value::Str("rendered".into())),
            ]
        );
        assert!(settings.unusable.is_none());
        assert!(!format!("{settings:?}").contains("hunter2"));
        let keyword = |k: Keyword| (k == Keyword::Connection).then(|| s("nope"));
        let none = |_: &str| None;
        let got = resolve(&templar, &scope, &none, &keyword, "c1", None, &defaults);
        let Ok(LinkTarget::Plugin(settings)) = got else { panic!("not a plugin: {got:?}") };
        assert_eq!(
            settings.unusable.as_deref(),
            Some("the connection plugin 'nope' was not found")
        );
    }

    #[test]
    fn a_password_never_shows_in_debug_output() {
        let vars = [("ansible_password", s("hunter2"))];
        let got = ssh(target(&vars, &[]));
        assert!(!format!("{got:?}").contains("hunter2"));
    }
}
