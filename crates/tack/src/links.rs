//! How `tack playbook` and `tack adhoc` open links to remote hosts: the engine's `Opener`,
//! backed by `tack_connect::Ssh` with the controller's agent image, and the configuration's
//! ssh settings the engine puts under each host's variables.
//!
//! Owns the translation from the engine's settings to an `SshTarget`; the ssh command line is
//! `tack_connect`'s, the precedence of the settings the engine's.

use std::sync::{Arc, OnceLock};

use tack_config::Config;
use tack_connect::{
    AgentImage, Become, BecomeLink, Connection, ConnectionError, OnDemand, Ssh, SshTarget, Via,
};
use tack_links::become_::BecomeDefaults;
use tack_links::link_target::{
    FromConfig, LinkTarget, PluginDescriber, PluginSettings, SshDefaults, SshSettings,
};

/// Opens ssh links with the controller's own agent, found once per run, and links through
/// connection plugins written in Python, which put that agent on their hosts.
#[derive(Default)]
pub(crate) struct AgentOpener {
    image: OnceLock<Result<AgentImage, String>>,
    /// The run's `-v` count, which a plugin prints for.
    verbosity: u8,
}

impl AgentOpener {
    pub(crate) fn new(verbosity: u8) -> Self {
        AgentOpener { image: OnceLock::new(), verbosity }
    }

    fn image(&self) -> Result<AgentImage, ConnectionError> {
        self.image
            .get_or_init(|| AgentImage::controller().map_err(|e| e.to_string()))
            .clone()
            .map_err(ConnectionError::AgentImage)
    }
}

impl AgentOpener {
    fn target(&self, settings: &SshSettings) -> Result<SshTarget, ConnectionError> {
        let mut target = SshTarget::new(settings.address.clone());
        target.port = settings.port;
        target.user = settings.user.clone();
        target.private_key_file = settings.private_key_file.clone();
        target.password = settings.password.as_ref().map(|p| p.0.clone());
        target.sshpass_prompt = settings.sshpass_prompt.clone();
        target.private_key = settings.private_key.as_ref().map(|k| k.0.clone());
        target.pkcs11_provider = settings.pkcs11_provider.clone();
        if let Some(exe) = &settings.executable {
            target.ssh_executable = exe.clone();
        }
        if let Some(args) = &settings.ssh_args {
            target.ssh_args = args.clone();
        }
        target.ssh_common_args = settings.common_args.clone();
        target.ssh_extra_args = settings.extra_args.clone();
        if let Some(timeout) = settings.timeout {
            target.timeout = u32::try_from(timeout).unwrap_or(u32::MAX);
        }
        if let Some(retries) = settings.retries {
            target.retries = retries;
        }
        if let Some(mechanism) = &settings.password_mechanism {
            target.password_mechanism = mechanism.clone();
        }
        if let Some(check) = settings.host_key_checking {
            target.host_key_checking = check;
        }
        if let Some(dir) = &settings.control_path_dir {
            target.control_path_dir = dir.clone();
        }
        target.control_path = settings.control_path.clone();
        // The command line is checked now, so a bad args string fails before any host is
        // contacted.
        target.command("true")?;
        Ok(target)
    }
}

impl tack_links::Opener for AgentOpener {
    fn ssh(&self, settings: &SshSettings) -> Result<Arc<dyn Connection>, ConnectionError> {
        let image = self.image()?;
        let target = self.target(settings)?;
        let notes = tack_connect::Notes::default();
        let noting = notes.clone();
        let link = OnDemand::new(move || {
            Ssh::connect_noting(&target, &image, &noting)
                .map(|ssh| Box::new(ssh) as Box<dyn Connection>)
        });
        Ok(Arc::new(link.with_notes(notes)))
    }

    fn reset_ssh(&self, settings: &SshSettings) -> Option<tack_connect::MasterReset> {
        // A target that cannot be built, or an ssh that cannot be started, has no master.
        let target = self.target(settings).ok()?;
        tack_connect::reset_master(&target).ok()
    }

    fn plugin(
        &self,
        settings: &PluginSettings,
        escalation: Option<&Become>,
    ) -> Result<Arc<dyn Connection>, ConnectionError> {
        if let Some(why) = &settings.unusable {
            return Err(ConnectionError::Plugin(why.clone()));
        }
        let image = self.image()?;
        Ok(Arc::new(tack_actions::python_connection::PluginLink::new(
            settings.clone(),
            escalation.cloned(),
            Arc::from(image.bytes()),
            self.verbosity,
        )))
    }

    fn become_link(
        &self,
        target: &LinkTarget,
        escalation: &Become,
    ) -> Result<Arc<dyn Connection>, ConnectionError> {
        let image = self.image()?;
        let ssh = match target {
            LinkTarget::Local => None,
            LinkTarget::Ssh(settings) => Some(self.target(settings)?),
            // A plugin escalates itself (`Opener::plugin`).
            LinkTarget::Plugin(settings) => {
                return self.plugin(settings, Some(escalation));
            }
        };
        // The command line is checked now, like the ssh one.
        escalation.command("true")?;
        let escalation = escalation.clone();
        let notes = tack_connect::Notes::default();
        let noting = notes.clone();
        let link = OnDemand::new(move || {
            let via = ssh.as_ref().map_or(Via::Local, Via::Ssh);
            BecomeLink::connect_noting(via, &image, &escalation, &noting)
                .map(|link| Box::new(link) as Box<dyn Connection>)
        });
        Ok(Arc::new(link.with_notes(notes)))
    }
}

/// The connection and become passwords of a run.
#[derive(Debug, Default)]
pub(crate) struct Passwords {
    /// `-k` (or `ask_pass` in the configuration), else `--connection-password-file`: the
    /// login password of every ssh host that sets none of its own.
    pub connection: Option<tack_links::link_target::Secret>,
    /// `-K` (or `become_ask_pass`), else `--become-password-file`.
    pub become_: Option<tack_links::link_target::Secret>,
}

/// The passwords as ansible's `CLI.ask_passwords` gets them, before anything else is read:
/// the connection password asked at the terminal (`-k`, or `ask_pass` in the configuration)
/// or read from `--connection-password-file` (or the configured one); then the become
/// password asked (`-K`, `become_ask_pass`: an empty answer after `-k` is the connection
/// password) or read from `--become-password-file` (or the configured one).
pub(crate) fn passwords(
    config: &Config,
    conn: &crate::options::ConnectionOpts,
    opts: &crate::options::BecomeOpts,
) -> Result<Passwords, tack_diag::Diagnostic> {
    use tack_links::link_target::Secret;
    let options =
        |msg: String| tack_diag::Diagnostic::new(msg).with_class(tack_diag::ErrorClass::Options);
    let ask = |prompt: &str, what: crate::ask_pass::Asked| {
        crate::ask_pass::ask(prompt, what)
            .map_err(|e| options(e.to_string()))
            .map(|typed| typed.map(|t| Secret(t.as_str().to_owned())))
    };
    // ansible's prompts end at end of input (EOFError): nothing more is asked.
    let ask_ssh =
        conn.ask_pass || config.get("DEFAULT_ASK_PASS").and_then(|v| v.as_bool()) == Some(true);
    let mut passwords = Passwords::default();
    let mut ended = false;
    if ask_ssh {
        let flag = if conn.ask_pass { "-k (--ask-pass)" } else { "ask_pass" };
        passwords.connection = ask("SSH password: ", crate::ask_pass::Asked::Connection(flag))?;
        ended = passwords.connection.is_none();
    } else if let Some(path) = connection_password_file(config, conn) {
        passwords.connection =
            Some(Secret(password_file(&path).map_err(tack_diag::Diagnostic::new)?));
    }
    if ended {
        return Ok(passwords);
    }
    let file = become_password_file(config, opts);
    if opts.ask_become_pass || config.become_ask_pass() {
        let agnostic =
            config.get("AGNOSTIC_BECOME_PROMPT").and_then(|v| v.as_bool()).unwrap_or(true);
        let shown = if agnostic {
            "BECOME".to_string()
        } else {
            become_method(config, opts).as_deref().unwrap_or("sudo").to_uppercase()
        };
        let flag = if opts.ask_become_pass { "-K (--ask-become-pass)" } else { "become_ask_pass" };
        let prompt = if ask_ssh {
            format!("{shown} password[defaults to SSH password]: ")
        } else {
            format!("{shown} password: ")
        };
        passwords.become_ = ask(&prompt, crate::ask_pass::Asked::Become(flag))?;
        if ask_ssh && passwords.become_.as_ref().is_some_and(|p| p.0.is_empty()) {
            passwords.become_ = passwords.connection.clone();
        }
    } else if let Some(path) = &file {
        // ansible's own error (exit 1), not an option error.
        passwords.become_ = Some(Secret(password_file(path).map_err(tack_diag::Diagnostic::new)?));
    }
    Ok(passwords)
}

/// A configured setting a run does not honour, named as the refusal says it: `SSH_AGENT`
/// other than `none` (ansible then starts or joins an ssh-agent for every ssh connection of
/// the run, and puts `ansible_private_key`s in it), a `fact_caching` plugin ansible-core does not ship,
/// `display_args_to_stdout`,
/// `verbose_to_stderr`, `allow_unsafe_lookups`, `debug`,
/// `allow_embedded_templates` off, `_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR`
/// `error`, an `executable` other than
/// `/bin/sh`, and the settings `settings_contract` refuses.
pub(crate) fn refused_setting(config: &Config) -> Option<String> {
    // ansible then fails a task that reads an untrusted template; tack warns (`warning`) or
    // says nothing (`ignore`), as ansible's other two choices do.
    if config.get("_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR").and_then(|v| v.as_str()) == Some("error")
    {
        return Some(
            "_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR 'error' (untrusted templates as errors)".into(),
        );
    }
    let agent = config.get("SSH_AGENT").and_then(|v| v.as_str()).unwrap_or("none");
    if agent != "none" {
        return Some(format!(
            "SSH_AGENT '{agent}' (ansible's own ssh-agent for the run's ssh connections; \
             leave it at 'none' and give keys as files, or use your own agent's SSH_AUTH_SOCK)"
        ));
    }
    // The banner then shows each task's arguments.
    if config.get("DISPLAY_ARGS_TO_STDOUT").and_then(|v| v.as_bool()) == Some(true) {
        return Some("display_args_to_stdout (task arguments in each banner)".into());
    }
    // ansible then prints its verbose messages on stderr.
    if config.get("VERBOSE_TO_STDERR").and_then(|v| v.as_bool()) == Some(true) {
        return Some("verbose_to_stderr (verbose messages on stderr)".into());
    }
    // ansible then trusts what lookups return as templates.
    if config.get("DEFAULT_ALLOW_UNSAFE_LOOKUPS").and_then(|v| v.as_bool()) == Some(true) {
        return Some("allow_unsafe_lookups (lookup results rendered as templates)".into());
    }
    // The shell ansible runs commands with; tack's modules use `/bin/sh` unless a task says.
    let shell = config.get("DEFAULT_EXECUTABLE").and_then(|v| v.as_str()).unwrap_or("/bin/sh");
    if shell != "/bin/sh" {
        return Some(format!("executable '{shell}' (the shell commands run with)"));
    }
    // ansible then runs those vars plugins for every host and group; tack reads
    // `host_vars`/`group_vars` itself, as ansible's `host_group_vars` does, and runs no other.
    if let Some(enabled) =
        config.get("VARIABLE_PLUGINS_ENABLED").and_then(tack_config::SettingValue::as_str_list)
        && let Some(other) = enabled.iter().find(|p| {
            !matches!(p.trim(), "host_group_vars" | "ansible.builtin.host_group_vars" | "")
        })
    {
        return Some(format!(
            "vars_plugins_enabled '{}' (vars plugins other than host_group_vars)",
            other.trim()
        ));
    }
    // ansible then refuses templates embedded in a template's text.
    if config.get("ALLOW_EMBEDDED_TEMPLATES").and_then(|v| v.as_bool()) == Some(false) {
        return Some("allow_embedded_templates false (embedded templates refused)".into());
    }
    // ansible then prints its own internal debug messages, which tack has no equivalent of.
    if config.get("DEFAULT_DEBUG").and_then(|v| v.as_bool()) == Some(true) {
        return Some("debug (ansible's internal debug messages)".into());
    }
    // ansible stops at a failed task and waits for a debugger session; tack has none.
    if config.get("ENABLE_TASK_DEBUGGER").and_then(|v| v.as_bool()) == Some(true) {
        return Some("enable_task_debugger (ansible's interactive task debugger)".into());
    }
    crate::settings_contract::refused(config)
}

/// The run's fact cache as configured (`fact_caching` and its options); a `jsonfile` cache
/// that cannot be used is warned about in ansible's words and the run keeps its facts in
/// memory, as ansible's does. `--flush-cache` empties it for every inventory host first.
/// Any other cache plugin (a collection's, one in a playbook directory's `cache_plugins/`)
/// runs through ansible-core (`tack_actions::python_cache`); one that cannot be loaded is
/// warned about and the facts kept in memory, as ansible does. Without ansible-core on the
/// controller the run is refused by name: a run that kept no facts must not look like one
/// that did.
pub(crate) fn fact_cache(
    config: &Config,
    inventory: &tack_inventory::Inventory,
    flush: bool,
    plan: bool,
    playbook_dirs: &[std::path::PathBuf],
) -> Result<std::sync::Arc<tack_engine::FactCache>, tack_diag::Diagnostic> {
    let cache = config.get("CACHE_PLUGIN").and_then(|v| v.as_str()).unwrap_or("memory");
    let short =
        tack_py::ansible::short_name(cache, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    let foreign = !["memory", "jsonfile"].contains(&short);
    if foreign && plan {
        // Loading it runs its code, which may change the controller (a file cache makes its
        // directory): a plan changes nothing, so it reads no cached facts instead.
        tack_diag::warn(&tack_diag::Diagnostic::new(format!(
            "tack plan does not run the '{cache}' cache plugin (its code may change the \
             controller): the plan reads no cached facts"
        )));
    }
    let python = (foreign && !plan).then(|| {
        let setup = tack_actions::python_cache::CacheSetup {
            plugin: cache.to_string(),
            collections: config.collections_path(),
            plugin_dirs: playbook_dirs.iter().map(|d| d.join("cache_plugins")).collect(),
            config_file: config.config_file().map(std::path::PathBuf::from),
            verbosity: 0,
            python: None,
        };
        tack_actions::python_cache::PythonCache::start(&setup)
    });
    let settings = if short == "jsonfile" {
        let env = tack_py::path::ProcessEnv;
        let dir = config.get("CACHE_PLUGIN_CONNECTION").and_then(|v| v.as_str()).map(|d| {
            let expanded = tack_py::path::expandvars(std::path::Path::new(d), &env);
            tack_py::path::expanduser(&expanded, &env)
        });
        // The plugin's own `_prefix` option has no default (the setting's `ansible_facts`
        // is not what it reads): only a prefix the user set counts.
        let set = !matches!(
            config.origin("CACHE_PLUGIN_PREFIX"),
            None | Some(tack_config::SettingOrigin::Default)
        );
        let prefix = match config.get("CACHE_PLUGIN_PREFIX").and_then(|v| v.as_str()) {
            Some(prefix) if set => prefix.to_string(),
            _ => String::new(),
        };
        let timeout = config.get("CACHE_PLUGIN_TIMEOUT").and_then(|v| v.as_int()).unwrap_or(0);
        tack_engine::FactCacheConfig::JsonFile {
            dir,
            prefix,
            timeout: u64::try_from(timeout).unwrap_or(0),
        }
    } else {
        tack_engine::FactCacheConfig::Memory
    };
    // A plan reads the cache (what `gathering = smart` and cached facts decide is real) and
    // keeps what it learns in memory.
    let opened = match python {
        Some(Ok(plugin)) => {
            Ok(tack_engine::FactCache::with_plugin(cache, Box::new(PythonCachePlugin(plugin))))
        }
        Some(Err(tack_actions::python_cache::CacheError::NoAnsibleCore { plugin, why })) => {
            return Err(tack_diag::Diagnostic::new(format!(
                "tack does not support fact_caching '{plugin}' without ansible-core on the \
                 controller to run it: {why}"
            ))
            .with_class(tack_diag::ErrorClass::Options));
        }
        Some(Err(refused)) => Err(tack_diag::Diagnostic::new(refused.to_string())),
        None if foreign => Ok(tack_engine::FactCache::memory()),
        None if plan => tack_engine::FactCache::open_read_only(&settings),
        None => tack_engine::FactCache::open(&settings),
    };
    let cache = opened.unwrap_or_else(|refused| {
        tack_diag::warn(&refused);
        tack_engine::FactCache::memory()
    });
    // `--flush-cache`: every host `all` gives, the implicit localhost when the inventory
    // defines none (as ansible's `list_hosts` gives it then).
    if flush {
        let data = inventory.data();
        for id in data.host_ids() {
            cache.delete(&data.host(id).name);
        }
        if data.host_ids().len() == 0 {
            cache.delete("localhost");
        }
    }
    Ok(std::sync::Arc::new(cache))
}

/// ansible-core running a cache plugin, as the engine's fact cache asks it.
struct PythonCachePlugin(tack_actions::python_cache::PythonCache);

impl tack_engine::CachePlugin for PythonCachePlugin {
    fn get(&self, host: &str) -> Result<Option<String>, tack_diag::Diagnostic> {
        self.0.get(host)
    }

    fn set(&self, host: &str, facts: &str) -> Result<(), tack_diag::Diagnostic> {
        self.0.set(host, facts)
    }

    fn delete(&self, host: &str) -> Result<(), tack_diag::Diagnostic> {
        self.0.delete(host)
    }
}

/// `--connection-password-file`, else the configured `CONNECTION_PASSWORD_FILE`.
pub(crate) fn connection_password_file(
    config: &Config,
    conn: &crate::options::ConnectionOpts,
) -> Option<std::path::PathBuf> {
    given_or_configured(&conn.connection_password_file, config, "CONNECTION_PASSWORD_FILE")
}

/// `--become-password-file`, else the configured `BECOME_PASSWORD_FILE`, as written.
pub(crate) fn become_password_file(
    config: &Config,
    opts: &crate::options::BecomeOpts,
) -> Option<std::path::PathBuf> {
    given_or_configured(&opts.become_password_file, config, "BECOME_PASSWORD_FILE")
}

/// A path option: the command line's, else the setting `name`'s when not empty.
fn given_or_configured(
    given: &Option<std::path::PathBuf>,
    config: &Config,
    name: &str,
) -> Option<std::path::PathBuf> {
    given.clone().or_else(|| {
        config
            .get(name)
            .and_then(|v| v.as_str())
            .filter(|t| !t.is_empty())
            .map(std::path::PathBuf::from)
    })
}

fn become_method(config: &Config, opts: &crate::options::BecomeOpts) -> Option<String> {
    opts.become_method.clone().or_else(|| config.become_method().map(str::to_string))
}

/// The run's link defaults: the configuration's ssh settings under the command line's
/// connection options (`-u`, `--private-key`, `-c`, `-T`, `--ssh-common-args`,
/// `--ssh-extra-args`, the connection password), and become as the command line (over the
/// configuration's `[privilege_escalation]`) sets it.
pub(crate) fn link_defaults(
    config: &Config,
    conn: &crate::options::ConnectionOpts,
    opts: &crate::options::BecomeOpts,
    passwords: Passwords,
) -> Result<SshDefaults, tack_diag::Diagnostic> {
    let text = |name: &str| {
        config.get(name).and_then(|v| v.as_str()).filter(|t| !t.is_empty()).map(str::to_string)
    };
    let method = become_method(config, opts);
    let mut defaults = ssh_defaults(config);
    if let Some(connection) = &conn.connection {
        defaults.connection = Some(connection.clone());
    }
    if let Some(user) = &conn.remote_user {
        defaults.user = Some(user.clone());
    }
    if let Some(key) = &conn.private_key {
        // argparse's `unfrack_path`: absolute, symlinks followed.
        defaults.private_key_file =
            Some(tack_py::ansible::unfrackpath(key, true, None).display().to_string());
    }
    if let Some(timeout) = conn.timeout {
        defaults.timeout = Some(u64::from(timeout));
    }
    if let Some(args) = &conn.ssh_common_args {
        defaults.common_args = Some(args.clone());
    }
    if let Some(args) = &conn.ssh_extra_args {
        defaults.extra_args = Some(args.clone());
    }
    defaults.password = passwords.connection;
    defaults.plugins = Some(PluginDescriber(Arc::new(|name: &str| {
        tack_actions::python_connection::describe(name)
    })));
    let password = passwords.become_;
    defaults.become_ = BecomeDefaults {
        on: opts.become_ || config.become_enabled(),
        method,
        user: opts.become_user.clone().or_else(|| config.become_user().map(str::to_string)),
        flags: text("DEFAULT_BECOME_FLAGS"),
        exe: text("DEFAULT_BECOME_EXE"),
        password,
        allow_same_user: config
            .get("BECOME_ALLOW_SAME_USER")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
    };
    Ok(defaults)
}

/// `--become-password-file`, as ansible's `get_password_from_file` reads it: `-` is stdin;
/// an executable file is run and its stdout taken; any other file's text is taken without
/// its surrounding whitespace. The line ends around it go, and an empty password is an
/// error.
fn password_file(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    // A path option: absolute, from the working directory, as ansible's `unfrackpath`.
    let absolute = if path.as_os_str() == "-" {
        path.to_path_buf()
    } else {
        std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
    };
    let path = absolute.as_path();
    let shown = path.display();
    let secret: Vec<u8> = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("Could not read stdin: {e}"))?;
        bytes
    } else {
        let meta = std::fs::metadata(path)
            .map_err(|_| format!("The password file {shown} was not found"))?;
        if meta.permissions().mode() & 0o111 != 0 {
            let out = std::process::Command::new(path)
                .stdin(std::process::Stdio::inherit())
                .output()
                .map_err(|e| {
                    format!(
                        "Problem occurred when trying to run the password script {shown} ({e}). \
                         If this is not a script, remove the executable bit from the file."
                    )
                })?;
            if !out.status.success() {
                let rc = out.status.code().map_or_else(
                    || {
                        format!(
                            "-{}",
                            std::os::unix::process::ExitStatusExt::signal(&out.status).unwrap_or(0)
                        )
                    },
                    |c| c.to_string(),
                );
                return Err(format!(
                    "The password script {shown} returned an error (rc={rc}): {}",
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            out.stdout
        } else {
            let bytes = std::fs::read(path)
                .map_err(|_| format!("Could not read password file '{shown}'."))?;
            String::from_utf8_lossy(&bytes).trim().as_bytes().to_vec()
        }
    };
    let text = String::from_utf8_lossy(&secret).trim_matches(['\r', '\n']).to_string();
    if text.is_empty() {
        return Err(format!("Empty password was provided from file ({shown})"));
    }
    Ok(text)
}

/// `interpreter_python` and its fallback list: what interpreter discovery reads.
pub(crate) fn interpreter_settings(config: &Config) -> tack_links::InterpreterSettings {
    let mode = config.get("INTERPRETER_PYTHON").and_then(|v| v.as_str()).unwrap_or("auto");
    let fallback = config
        .get("INTERPRETER_PYTHON_FALLBACK")
        .and_then(|v| v.as_str_list())
        .map(|list| list.into_iter().map(str::to_string).collect())
        .unwrap_or_default();
    tack_links::InterpreterSettings { mode: mode.to_string(), fallback }
}

/// The configuration's ssh settings (`remote_user`, `remote_port`, `private_key_file`,
/// `timeout`, `host_key_checking`, `[ssh_connection]`'s args, executable and control path).
pub(crate) fn ssh_defaults(config: &Config) -> SshDefaults {
    let text = |v: Result<Option<&str>, _>| v.ok().flatten().map(str::to_string);
    SshDefaults {
        connection: config
            .get("DEFAULT_TRANSPORT")
            .and_then(|v| v.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        user: config.remote_user().map(str::to_string),
        port: config.remote_port().and_then(|p| u16::try_from(p).ok()),
        private_key_file: config.private_key_file().map(|p| p.display().to_string()),
        ssh_args: text(config.ssh_args()),
        common_args: text(config.ssh_common_args()),
        extra_args: text(config.ssh_extra_args()),
        timeout: u64::try_from(config.timeout()).ok(),
        // A bad value is kept to be raised for the hosts that use it, never dropped.
        retries: FromConfig(
            config
                .ssh_retries()
                // A negative count is no retries.
                .map(|n| n.map(|n| u32::try_from(n).unwrap_or(0)))
                .map_err(|e| e.to_string()),
        ),
        password_mechanism: FromConfig(
            config
                .ssh_password_mechanism()
                .map(|m| m.map(str::to_string))
                .map_err(|e| e.to_string()),
        ),
        host_key_checking: Some(config.host_key_checking()),
        executable: text(config.ssh_executable()),
        control_path: text(config.ssh_control_path()),
        control_path_dir: text(config.ssh_control_path_dir()),
        password: None,
        sshpass_prompt: text(config.ssh_sshpass_prompt()).filter(|p| !p.is_empty()),
        private_key: text(config.ssh_private_key())
            .filter(|k| !k.is_empty())
            .map(tack_links::link_target::Secret),
        pkcs11_provider: text(config.ssh_pkcs11_provider()).filter(|p| !p.is_empty()),
        become_: BecomeDefaults::default(),
        plugins: None,
    }
}

/// The settings ansible's play context adds to a running task's variables where no variable
/// names them (`PlayContext.update_vars`): the module compression, the shell executable and
/// pipelining, each under every name ansible gives it.
pub(crate) fn play_context_vars(config: &Config) -> tack_yaml::Mapping {
    use tack_yaml::{Node, Value};
    let text = |v: &str| Node::bare(Value::Str(v.to_string()));
    let mut vars = tack_yaml::Mapping::new();
    let compression = config.get("DEFAULT_MODULE_COMPRESSION").and_then(|v| v.as_str());
    vars.insert(text("ansible_module_compression"), text(compression.unwrap_or("ZIP_DEFLATED")));
    let executable = config.get("DEFAULT_EXECUTABLE").and_then(|v| v.as_str());
    vars.insert(text("ansible_shell_executable"), text(executable.unwrap_or("/bin/sh")));
    for name in ["ansible_ssh_pipelining", "ansible_pipelining"] {
        vars.insert(text(name), Node::bare(Value::Bool(config.pipelining())));
    }
    vars
}

/// `playbook_vars_root` other than `top`, when it would change what a run reads: ansible then
/// also reads (`all`), or instead reads (`bottom`, `playbook_dir`), the `group_vars` and
/// `host_vars` beside a task's own playbook and roles. tack reads the first playbook's only,
/// which is the same wherever no other of those directories has them.
pub(crate) fn refused_playbook_vars_root(
    config: &Config,
    playbooks: &[tack_playbook::Playbook],
) -> Option<String> {
    let root = config.get("PLAYBOOK_VARS_ROOT").and_then(|v| v.as_str()).unwrap_or("top");
    if root == "top" {
        return None;
    }
    let top = playbooks.first().map(|p| p.basedir.clone())?;
    let plays = playbooks.iter().flat_map(|p| &p.plays);
    let dirs = plays.flat_map(|play| {
        let roles = play.role_arena.iter().map(|r| r.path.clone());
        std::iter::once(play.basedir.clone()).chain(play.included_path.clone()).chain(roles)
    });
    let other = dirs
        .filter(|dir| *dir != top)
        .find(|dir| dir.join("group_vars").is_dir() || dir.join("host_vars").is_dir())?;
    Some(format!(
        "playbook_vars_root '{root}' (group_vars and host_vars beside {})",
        other.display()
    ))
}
