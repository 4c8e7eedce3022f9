//! What tack does with each of ansible-core's settings that no other part of tack reads by
//! name: either it changes nothing tack does ([`UNREAD`], each with why), or tack does not do
//! what it asks and refuses a run that sets it away from ansible's default ([`refused`]).
//!
//! Every setting of ansible's table is named somewhere in tack's source, here or where it is
//! honoured (the tidy test `every_setting_is_named` holds that), so a setting can never be
//! parsed and then silently ignored. Owns no behaviour of its own beyond those refusals.

use tack_config::{Config, SettingValue};

/// Settings tack reads nowhere, and why reading them would change nothing it does: the
/// record the tidy test and this module's tests read (nothing at run time needs it).
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "a record read by tests: the tidy test's names, the checks below")
)]
const UNREAD: &[(&str, &str)] = &[
    ("ACTION_WARNINGS", "ansible-core 2.21 reads it nowhere"),
    ("DEFAULT_JINJA2_NATIVE", "ansible-core 2.21 reads it nowhere"),
    ("DEFAULT_NULL_REPRESENTATION", "ansible-core 2.21 reads it nowhere"),
    ("STRING_TYPE_FILTERS", "ansible-core 2.21 reads it nowhere"),
    ("DEFAULT_SU", "ansible-core 2.21 reads it nowhere"),
    ("DEVEL_WARNING", "ansible-core warns with it only from a development build"),
    ("ANSIBLE_COW_SELECTION", "which cow draws the banners, which tack refuses (nocows off)"),
    ("ANSIBLE_COW_ACCEPTLIST", "which cows may draw the banners, which tack refuses (nocows off)"),
    ("_Z_TEST_ENTRY", "a test entry of ansible's own table"),
    ("_Z_TEST_ENTRY_2", "a test entry of ansible's own table"),
    ("_Z_TEST_ENTRY_3", "a test entry of ansible's own table"),
    ("ANSIBLE_HOME", "read through the defaults it gives other settings"),
    ("COLOR_CONSOLE_PROMPT", "ansible-console's; tack has no console"),
    ("COLOR_HIGHLIGHT", "ansible-console's; tack has no console"),
    ("COLOR_DOC_MODULE", "ansible-doc's; tack has no doc command"),
    ("COLOR_DOC_REFERENCE", "ansible-doc's; tack has no doc command"),
    ("COLOR_DOC_LINK", "ansible-doc's; tack has no doc command"),
    ("COLOR_DOC_DEPRECATED", "ansible-doc's; tack has no doc command"),
    ("COLOR_DOC_CONSTANT", "ansible-doc's; tack has no doc command"),
    ("COLOR_DOC_PLUGIN", "ansible-doc's; tack has no doc command"),
    ("DOC_FRAGMENT_PLUGIN_PATH", "ansible-doc's; tack has no doc command"),
    ("DOCSITE_ROOT_URL", "ansible-doc's; tack has no doc command"),
    ("GALAXY_IGNORE_CERTS", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_SERVER_TIMEOUT", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_ROLE_SKELETON", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_ROLE_SKELETON_IGNORE", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_COLLECTION_SKELETON", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_COLLECTION_SKELETON_IGNORE", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_COLLECTIONS_PATH_WARNING", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_SERVER", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_SERVER_LIST", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_TOKEN_PATH", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_DISPLAY_PROGRESS", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_CACHE_DIR", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_DISABLE_GPG_VERIFY", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_GPG_KEYRING", "ansible-galaxy's; tack has no galaxy command"),
    (
        "GALAXY_IGNORE_INVALID_SIGNATURE_STATUS_CODES",
        "ansible-galaxy's; tack has no galaxy command",
    ),
    ("GALAXY_REQUIRED_VALID_SIGNATURE_COUNT", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_COLLECTION_IMPORT_POLL_INTERVAL", "ansible-galaxy's; tack has no galaxy command"),
    ("GALAXY_COLLECTION_IMPORT_POLL_FACTOR", "ansible-galaxy's; tack has no galaxy command"),
    (
        "DEFAULT_INTERNAL_POLL_INTERVAL",
        "the pause of ansible's worker processes between looks at their queues; tack has none",
    ),
    ("WORKER_SHUTDOWN_POLL_COUNT", "how ansible waits for its worker processes; tack has none"),
    ("WORKER_SHUTDOWN_POLL_DELAY", "how ansible waits for its worker processes; tack has none"),
    (
        "OLD_PLUGIN_CACHE_CLEARING",
        "how ansible's plugin loader clears its cache between plays; tack's plugins are \
         loaded once per run by ansible-core's own loader",
    ),
    ("TASK_DEBUGGER_IGNORE_ERRORS", "the task debugger's, which tack refuses"),
    (
        "DEFAULT_VARS_PLUGIN_PATH",
        "where vars plugins are found; a plugin found there is refused by name",
    ),
    ("SSH_AGENT_EXECUTABLE", "the run's own ssh-agent's, which tack refuses (SSH_AGENT)"),
    ("SSH_AGENT_KEY_LIFETIME", "the run's own ssh-agent's, which tack refuses (SSH_AGENT)"),
    ("WIN_ASYNC_STARTUP_TIMEOUT", "Windows hosts'; tack reaches POSIX hosts"),
    (
        "ANSIBLE_CONNECTION_PATH",
        "where ansible-connection lives, for persistent connections, which tack refuses",
    ),
    (
        "_ANSIBLE_CONNECTION_PATH",
        "where ansible-connection lives, for persistent connections, which tack refuses",
    ),
    (
        "PERSISTENT_CONTROL_PATH_DIR",
        "persistent connections', which tack refuses (the 'persistent' connection)",
    ),
    (
        "PERSISTENT_CONNECT_TIMEOUT",
        "persistent connections', which tack refuses (the 'persistent' connection)",
    ),
    (
        "PERSISTENT_CONNECT_RETRY_TIMEOUT",
        "persistent connections', which tack refuses (the 'persistent' connection)",
    ),
    (
        "PERSISTENT_COMMAND_TIMEOUT",
        "persistent connections', which tack refuses (the 'persistent' connection)",
    ),
    (
        "NETWORK_GROUP_MODULES",
        "which modules run through a network platform's action plugin; tack has none, and a \
         collection's runs through ansible-core's own code",
    ),
    (
        "DEFAULT_CONNECTION_PLUGIN_PATH",
        "read by ansible-core's own loader, which finds a connection plugin written in Python \
         for tack",
    ),
    (
        "DEFAULT_CLICONF_PLUGIN_PATH",
        "read by ansible-core's own loader, for the network connection plugins it runs for tack",
    ),
    (
        "DEFAULT_HTTPAPI_PLUGIN_PATH",
        "read by ansible-core's own loader, for the network connection plugins it runs for tack",
    ),
    (
        "DEFAULT_NETCONF_PLUGIN_PATH",
        "read by ansible-core's own loader, for the network connection plugins it runs for tack",
    ),
    (
        "DEFAULT_TERMINAL_PLUGIN_PATH",
        "read by ansible-core's own loader, for the network connection plugins it runs for tack",
    ),
    (
        "NETCONF_SSH_CONFIG",
        "read by ansible-core's own netconf connection plugin, which it runs for tack",
    ),
    (
        "DEFAULT_LIBVIRT_LXC_NOSECLABEL",
        "read by the libvirt_lxc connection plugin, which ansible-core runs for tack",
    ),
    (
        "DEFAULT_STRATEGY_PLUGIN_PATH",
        "read by ansible-core's own loader, which finds a strategy plugin for tack",
    ),
    (
        "BECOME_PLUGIN_PATH",
        "a become method tack does not run itself is refused by name wherever it is found",
    ),
    (
        "DEFAULT_CACHE_PLUGIN_PATH",
        "a cache plugin other than memory and jsonfile is refused by name wherever it is found",
    ),
];

/// A setting tack does not honour, refused when the run sets it away from ansible's default:
/// its name and what it would ask of tack (the refusal says both).
const REFUSED: &[(&str, &str)] = &[
    ("RUN_VARS_PLUGINS", "vars plugins run at another stage than on demand"),
    ("MODULE_STRICT_UTF8_RESPONSE", "module responses with invalid UTF-8 kept"),
    ("MODULE_IGNORE_EXTS", "module file endings skipped other than ansible's"),
    ("CONNECTION_FACTS_MODULES", "fact modules chosen per network platform"),
    ("USE_PERSISTENT_CONNECTIONS", "every connection through ansible-connection"),
    ("DEFAULT_NO_TARGET_SYSLOG", "module syslog on the host turned off"),
    ("DEFAULT_SYSLOG_FACILITY", "the syslog facility modules log to"),
    ("TARGET_LOG_INFO", "extra text in modules' syslog lines"),
    ("DEFAULT_SELINUX_SPECIAL_FS", "file systems with special SELinux contexts"),
    ("COVERAGE_REMOTE_OUTPUT", "coverage of module code on the host"),
    ("COVERAGE_REMOTE_PATHS", "coverage of module code on the host"),
    ("_MODULE_METADATA", "module metadata"),
    ("_CALLBACK_DISPATCH_ERROR_BEHAVIOR", "callback plugin failures other than as warnings"),
    ("_TEMPLAR_SANDBOX_MODE", "templating's sandbox mode"),
    ("_TEMPLAR_UNKNOWN_TYPE_CONVERSION", "templating's handling of unknown types"),
    ("_TEMPLAR_UNKNOWN_TYPE_ENCOUNTERED", "templating's handling of unknown types"),
];

/// The options of ansible-core's plugins in ansible's table (the ssh connection, the sh shell,
/// the default callback) that tack reads nowhere: plugin type, plugin, option, why.
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "a record read by tests: the tidy test's names, the checks below")
)]
const PLUGIN_UNREAD: &[(&str, &str, &str, &str)] = &[
    (
        "callback",
        "default",
        "show_custom_stats",
        "read as the setting SHOW_CUSTOM_STATS, from the same places",
    ),
    ("connection", "ssh", "ssh_transfer_method", COPIES),
    ("connection", "ssh", "scp_executable", COPIES),
    ("connection", "ssh", "sftp_executable", COPIES),
    ("connection", "ssh", "sftp_batch_mode", COPIES),
    ("shell", "sh", "admin_users", BECOME_FILES),
    ("shell", "sh", "common_remote_group", BECOME_FILES),
    ("shell", "sh", "system_tmpdirs", BECOME_FILES),
    ("shell", "sh", "world_readable_temp", BECOME_FILES),
];

const COPIES: &str = "how ansible's ssh plugin copies files (sftp, scp or a piped dd); tack \
                      sends them through its agent's own session";

const BECOME_FILES: &str = "how ansible lets a become user read a module file another user \
                            wrote; tack's become user runs its own agent, which is sent the \
                            files itself";

/// Plugin options tack does not honour, refused when set away from ansible's default.
const PLUGIN_REFUSED: &[(&str, &str, &str, &str)] = &[
    ("connection", "ssh", "use_tty", "no terminal for commands sent over ssh"),
    ("connection", "ssh", "private_key_passphrase", "a passphrase for the private key"),
];

/// Where ansible looks for `cowsay` when `ANSIBLE_COW_PATH` does not say.
const COW_PATHS: &[&str] =
    &["/usr/bin/cowsay", "/usr/games/cowsay", "/usr/local/bin/cowsay", "/opt/local/bin/cowsay"];

/// The first of [`REFUSED`] the run sets away from ansible's default, named as the refusal
/// names it (`name 'value' (what)`); and ansible's cowsay banners, which it draws whenever a
/// `cowsay` is installed and `nocows` is off.
pub(crate) fn refused(config: &Config) -> Option<String> {
    for (name, what) in REFUSED {
        let Some(setting) = config.setting(name) else { continue };
        if !setting.origin.is_user_set() || is_default(name, &setting.value) {
            continue;
        }
        return Some(format!("{} {} ({what})", spelled(name), shown(&setting.value)));
    }
    for (kind, plugin, option, what) in PLUGIN_REFUSED {
        let Some(Ok(setting)) = config.plugin_option(kind, plugin, option) else { continue };
        let default = Config::plugin_definition(kind, plugin, option).map(|def| &def.default);
        if !setting.origin.is_user_set() || literal_is(default, &setting.value) {
            continue;
        }
        let value = if *option == "private_key_passphrase" {
            "(set)".to_string()
        } else {
            shown(&setting.value)
        };
        return Some(format!("the ssh option {option} {value} ({what})"));
    }
    if let Some(plugin) = vars_plugin_on_path(config) {
        return Some(format!(
            "vars plugins on the vars_plugins path ({}: ansible runs it for every host and \
             group; tack runs host_group_vars alone)",
            plugin.display()
        ));
    }
    let nocows = config.get("ANSIBLE_NOCOWS").and_then(SettingValue::as_bool).unwrap_or(false);
    if !nocows {
        let configured = config.get("ANSIBLE_COW_PATH").and_then(SettingValue::as_str);
        let cowsay = match configured {
            Some(path) => Some(path.to_string()),
            None => {
                COW_PATHS.iter().find(|p| std::path::Path::new(p).exists()).map(|p| p.to_string())
            }
        };
        if let Some(path) = cowsay {
            return Some(format!(
                "nocows false with cowsay at {path} (cowsay banners; set nocows = 1, or \
                 ANSIBLE_NOCOWS=1)"
            ));
        }
    }
    None
}

/// Whether `value` is what ansible's default for `name` gives.
fn is_default(name: &str, value: &SettingValue) -> bool {
    literal_is(Config::definition(name).map(|def| &def.default), value)
}

fn literal_is(default: Option<&tack_config::def::DefaultValue>, value: &SettingValue) -> bool {
    match default {
        Some(tack_config::def::DefaultValue::Literal(literal)) => {
            &SettingValue::from_literal(literal) == value
        }
        _ => false,
    }
}

/// A vars plugin ansible would load from the `vars_plugins` setting's directories
/// (`DEFAULT_VARS_PLUGIN_PATH`): any Python file there but a package's `__init__.py`.
fn vars_plugin_on_path(config: &Config) -> Option<std::path::PathBuf> {
    let dirs = config.get("DEFAULT_VARS_PLUGIN_PATH").and_then(SettingValue::as_str_list)?;
    dirs.iter().find_map(|dir| {
        let mut found: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "py")
                    && p.file_name().is_some_and(|n| n != "__init__.py")
            })
            .collect();
        found.sort();
        found.into_iter().next()
    })
}

/// The name a user writes: the `ansible.cfg` key when there is one, else the environment
/// variable.
fn spelled(name: &str) -> String {
    let Some(def) = Config::definition(name) else { return name.to_string() };
    if let Some(ini) = def.ini.first() {
        return ini.key.to_string();
    }
    def.env.first().map_or_else(|| name.to_string(), |env| env.name.to_string())
}

/// A value as the refusal shows it.
fn shown(value: &SettingValue) -> String {
    match value {
        SettingValue::Str(s) => format!("'{s}'"),
        SettingValue::Bool(b) => b.to_string(),
        SettingValue::Int(n) => n.to_string(),
        SettingValue::Float(f) => f.to_string(),
        SettingValue::Null => "none".into(),
        SettingValue::List(items) => {
            format!("[{}]", items.iter().map(shown).collect::<Vec<_>>().join(", "))
        }
        SettingValue::Dict(entries) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{k}: {}", shown(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_is_a_setting_of_ansible_named_once() {
        let mut seen = std::collections::BTreeSet::new();
        for (name, why) in UNREAD.iter().chain(REFUSED) {
            assert!(Config::definition(name).is_some(), "{name} is no setting of ansible's");
            assert!(!why.is_empty(), "{name} says nothing");
            assert!(seen.insert(*name), "{name} listed twice");
        }
        for (kind, plugin, option, why) in PLUGIN_UNREAD.iter().chain(PLUGIN_REFUSED) {
            let def = Config::plugin_definition(kind, plugin, option);
            assert!(def.is_some(), "{kind} {plugin} has no option {option}");
            assert!(!why.is_empty(), "{option} says nothing");
            assert!(seen.insert(*option), "{option} listed twice");
        }
    }

    #[test]
    fn a_default_is_no_refusal() {
        for (name, _) in REFUSED {
            let def = Config::definition(name).expect("a setting");
            if let tack_config::def::DefaultValue::Literal(literal) = &def.default {
                assert!(is_default(name, &SettingValue::from_literal(literal)), "{name}");
            }
        }
    }
}
