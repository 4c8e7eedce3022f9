//! Typed accessors for the settings tack uses, named after what they mean rather than after
//! ansible's constants. Each reads a resolved value; none resolves anything.
//!
//! Values are read the way ansible's code reads them: a setting without a declared type is
//! tested for truth as Python would (`vault_id_match = False` in a file is the non-empty
//! string `"False"`, so it is on), and a setting with choices has already been checked.

use std::path::PathBuf;

use crate::Config;
use crate::def::{DefaultValue, Literal};
use crate::error::ConfigError;
use crate::value::SettingValue;

static NULL: SettingValue = SettingValue::Null;

/// What `gathering` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gathering {
    Implicit,
    Explicit,
    Smart,
}

/// `hash_behaviour`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashBehaviour {
    Replace,
    Merge,
}

/// What to do about a duplicate YAML key (`duplicate_dict_key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicateKeyPolicy {
    Error,
    Warn,
    Ignore,
}

/// What to do when a host pattern matches nothing (`host_pattern_mismatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MismatchPolicy {
    Error,
    Warning,
    Ignore,
}

/// Where `playbook_vars_root` looks for `group_vars`/`host_vars` next to playbooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlaybookVarsRoot {
    Top,
    Bottom,
    All,
}

impl Config {
    fn value(&self, name: &str) -> &SettingValue {
        self.get(name).unwrap_or(&NULL)
    }

    fn flag(&self, name: &str) -> bool {
        self.value(name).is_truthy()
    }

    fn int(&self, name: &str) -> Option<i64> {
        self.value(name).as_int()
    }

    fn text(&self, name: &str) -> Option<&str> {
        self.value(name).as_str()
    }

    fn path(&self, name: &str) -> Option<PathBuf> {
        self.text(name).map(PathBuf::from)
    }

    fn strings(&self, name: &str) -> Vec<String> {
        match self.value(name) {
            SettingValue::List(items) => items
                .iter()
                .map(|item| item.as_str().map_or_else(|| item.to_string(), str::to_string))
                .collect(),
            SettingValue::Null => Vec::new(),
            other => vec![other.as_str().map_or_else(|| other.to_string(), str::to_string)],
        }
    }

    fn paths(&self, name: &str) -> Vec<PathBuf> {
        self.strings(name).into_iter().map(PathBuf::from).collect()
    }

    /// One of a setting's choices. The value was checked against them when resolved, so the
    /// fallback (ansible's default) is never taken for a loaded configuration.
    fn choice<T: Copy>(&self, name: &str, default: T, options: &[(&str, T)]) -> T {
        let value = self.text(name);
        options.iter().find(|(text, _)| Some(*text) == value).map_or(default, |(_, v)| *v)
    }

    /// An integer setting. Its type guarantees an integer once resolved; the table's default
    /// covers a setting that could only be null if ansible's definition changed.
    fn int_or_default(&self, name: &str) -> i64 {
        let default = || {
            Config::definition(name).and_then(|def| match def.default {
                DefaultValue::Literal(Literal::Int(n)) => Some(n),
                _ => None,
            })
        };
        self.int(name).or_else(default).unwrap_or(0)
    }

    fn plugin_value(
        &self,
        plugin_type: &str,
        plugin: &str,
        name: &str,
    ) -> Result<&SettingValue, &ConfigError> {
        match self.plugin_option(plugin_type, plugin, name) {
            Some(resolved) => resolved.map(|r| &r.value),
            None => Ok(&NULL),
        }
    }

    fn ssh(&self, name: &str) -> Result<Option<&str>, &ConfigError> {
        Ok(self.plugin_value("connection", "ssh", name)?.as_str())
    }

    /// `inventory` (DEFAULT_HOST_LIST): the inventory sources, resolved.
    pub fn inventory(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_HOST_LIST")
    }

    pub fn forks(&self) -> i64 {
        self.int_or_default("DEFAULT_FORKS")
    }

    pub fn remote_user(&self) -> Option<&str> {
        self.text("DEFAULT_REMOTE_USER")
    }

    pub fn remote_port(&self) -> Option<i64> {
        self.int("DEFAULT_REMOTE_PORT")
    }

    pub fn private_key_file(&self) -> Option<PathBuf> {
        self.path("DEFAULT_PRIVATE_KEY_FILE")
    }

    pub fn host_key_checking(&self) -> bool {
        self.flag("HOST_KEY_CHECKING")
    }

    /// `timeout` (DEFAULT_TIMEOUT), in seconds.
    pub fn timeout(&self) -> i64 {
        self.int_or_default("DEFAULT_TIMEOUT")
    }

    pub fn roles_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_ROLES_PATH")
    }

    /// `library` (`DEFAULT_MODULE_PATH`): where modules are looked for after the
    /// directories a run adds.
    pub fn module_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_MODULE_PATH")
    }

    /// `filter_plugins` (`DEFAULT_FILTER_PLUGIN_PATH`): Python filter plugins, searched after
    /// the directories a run adds.
    pub fn filter_plugin_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_FILTER_PLUGIN_PATH")
    }

    /// `action_plugins` (`DEFAULT_ACTION_PLUGIN_PATH`): Python action plugins, searched after
    /// the `action_plugins/` beside playbooks and roles.
    pub fn action_plugin_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_ACTION_PLUGIN_PATH")
    }

    /// `inventory_plugins` (`DEFAULT_INVENTORY_PLUGIN_PATH`): Python inventory plugins, run
    /// through ansible-core.
    pub fn inventory_plugin_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_INVENTORY_PLUGIN_PATH")
    }

    /// `callback_plugins` (`DEFAULT_CALLBACK_PLUGIN_PATH`): Python callback plugins, run
    /// through ansible-core.
    pub fn callback_plugin_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_CALLBACK_PLUGIN_PATH")
    }

    /// `test_plugins` (`DEFAULT_TEST_PLUGIN_PATH`).
    pub fn test_plugin_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_TEST_PLUGIN_PATH")
    }

    /// `lookup_plugins` (`DEFAULT_LOOKUP_PLUGIN_PATH`).
    pub fn lookup_plugin_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_LOOKUP_PLUGIN_PATH")
    }

    /// `module_utils` (`DEFAULT_MODULE_UTILS_PATH`).
    pub fn module_utils_path(&self) -> Vec<PathBuf> {
        self.paths("DEFAULT_MODULE_UTILS_PATH")
    }

    /// `collections_path` (`COLLECTIONS_PATHS`): where collections are looked for after the
    /// `collections/` beside each playbook.
    pub fn collections_path(&self) -> Vec<PathBuf> {
        self.paths("COLLECTIONS_PATHS")
    }

    pub fn vault_password_file(&self) -> Option<PathBuf> {
        self.path("DEFAULT_VAULT_PASSWORD_FILE")
    }

    pub fn vault_identity_list(&self) -> Vec<String> {
        self.strings("DEFAULT_VAULT_IDENTITY_LIST")
    }

    pub fn vault_identity(&self) -> Option<&str> {
        self.text("DEFAULT_VAULT_IDENTITY")
    }

    /// `vault_id_match` has no type in ansible: any non-empty text turns it on, `False`
    /// included.
    pub fn vault_id_match(&self) -> bool {
        self.flag("DEFAULT_VAULT_ID_MATCH")
    }

    pub fn vault_encrypt_identity(&self) -> Option<&str> {
        self.text("DEFAULT_VAULT_ENCRYPT_IDENTITY")
    }

    /// `become` in `[privilege_escalation]` (DEFAULT_BECOME).
    pub fn become_enabled(&self) -> bool {
        self.flag("DEFAULT_BECOME")
    }

    pub fn become_method(&self) -> Option<&str> {
        self.text("DEFAULT_BECOME_METHOD")
    }

    pub fn become_user(&self) -> Option<&str> {
        self.text("DEFAULT_BECOME_USER")
    }

    pub fn become_ask_pass(&self) -> bool {
        self.flag("DEFAULT_BECOME_ASK_PASS")
    }

    pub fn gathering(&self) -> Gathering {
        self.choice(
            "DEFAULT_GATHERING",
            Gathering::Implicit,
            &[
                ("implicit", Gathering::Implicit),
                ("explicit", Gathering::Explicit),
                ("smart", Gathering::Smart),
            ],
        )
    }

    pub fn retry_files_enabled(&self) -> bool {
        self.flag("RETRY_FILES_ENABLED")
    }

    pub fn retry_files_save_path(&self) -> Option<PathBuf> {
        self.path("RETRY_FILES_SAVE_PATH")
    }

    /// `nocolor`, also set by `NO_COLOR` (which wins over `ANSIBLE_NOCOLOR` when both are set).
    pub fn nocolor(&self) -> bool {
        self.flag("ANSIBLE_NOCOLOR")
    }

    pub fn force_color(&self) -> bool {
        self.flag("ANSIBLE_FORCE_COLOR")
    }

    pub fn any_errors_fatal(&self) -> bool {
        self.flag("ANY_ERRORS_FATAL")
    }

    pub fn interpreter_python(&self) -> Option<&str> {
        self.text("INTERPRETER_PYTHON")
    }

    /// The core `pipelining` setting (ANSIBLE_PIPELINING).
    pub fn pipelining(&self) -> bool {
        self.flag("ANSIBLE_PIPELINING")
    }

    /// The ssh connection's `ssh_args`.
    pub fn ssh_args(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("ssh_args")
    }

    pub fn ssh_common_args(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("ssh_common_args")
    }

    pub fn ssh_extra_args(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("ssh_extra_args")
    }

    /// The ssh connection's `ssh_executable` (`ANSIBLE_SSH_EXECUTABLE`, `[ssh_connection]`).
    pub fn ssh_executable(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("ssh_executable")
    }

    pub fn ssh_control_path(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("control_path")
    }

    /// The ssh connection's `control_path_dir`, as written (`~` is expanded on use).
    pub fn ssh_control_path_dir(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("control_path_dir")
    }

    /// The ssh connection's `password_mechanism` (`ANSIBLE_SSH_PASSWORD_MECHANISM`), one of
    /// its choices.
    pub fn ssh_password_mechanism(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("password_mechanism")
    }

    /// The ssh connection's `private_key` (`ANSIBLE_PRIVATE_KEY`): key material.
    pub fn ssh_private_key(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("private_key")
    }

    /// The ssh connection's `pkcs11_provider` (`ANSIBLE_PKCS11_PROVIDER`).
    pub fn ssh_pkcs11_provider(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("pkcs11_provider")
    }

    /// The ssh connection's `sshpass_prompt` (`ANSIBLE_SSHPASS_PROMPT`).
    pub fn ssh_sshpass_prompt(&self) -> Result<Option<&str>, &ConfigError> {
        self.ssh("sshpass_prompt")
    }

    /// The ssh connection's `reconnection_retries` (`[ssh_connection] retries`,
    /// `ANSIBLE_SSH_RETRIES`).
    pub fn ssh_retries(&self) -> Result<Option<i64>, &ConfigError> {
        Ok(self.plugin_value("connection", "ssh", "reconnection_retries")?.as_int())
    }

    /// The ssh connection's `pipelining`, which also reads `[ssh_connection]` and
    /// `ANSIBLE_SSH_PIPELINING`.
    pub fn ssh_pipelining(&self) -> Result<bool, &ConfigError> {
        Ok(self.plugin_value("connection", "ssh", "pipelining")?.is_truthy())
    }

    pub fn duplicate_yaml_dict_key(&self) -> DuplicateKeyPolicy {
        self.choice(
            "DUPLICATE_YAML_DICT_KEY",
            DuplicateKeyPolicy::Warn,
            &[
                ("warn", DuplicateKeyPolicy::Warn),
                ("error", DuplicateKeyPolicy::Error),
                ("ignore", DuplicateKeyPolicy::Ignore),
            ],
        )
    }

    pub fn hash_behaviour(&self) -> HashBehaviour {
        self.choice(
            "DEFAULT_HASH_BEHAVIOUR",
            HashBehaviour::Replace,
            &[("replace", HashBehaviour::Replace), ("merge", HashBehaviour::Merge)],
        )
    }

    /// `[inventory] enable_plugins`.
    pub fn inventory_enabled_plugins(&self) -> Vec<String> {
        self.strings("INVENTORY_ENABLED")
    }

    pub fn inventory_ignore_extensions(&self) -> Vec<String> {
        self.strings("INVENTORY_IGNORE_EXTS")
    }

    pub fn inventory_ignore_patterns(&self) -> Vec<String> {
        self.strings("INVENTORY_IGNORE_PATTERNS")
    }

    pub fn inventory_unparsed_is_failed(&self) -> bool {
        self.flag("INVENTORY_UNPARSED_IS_FAILED")
    }

    pub fn inventory_any_unparsed_is_failed(&self) -> bool {
        self.flag("INVENTORY_ANY_UNPARSED_IS_FAILED")
    }

    pub fn host_pattern_mismatch(&self) -> MismatchPolicy {
        self.choice(
            "HOST_PATTERN_MISMATCH",
            MismatchPolicy::Warning,
            &[
                ("warning", MismatchPolicy::Warning),
                ("error", MismatchPolicy::Error),
                ("ignore", MismatchPolicy::Ignore),
            ],
        )
    }

    pub fn playbook_vars_root(&self) -> PlaybookVarsRoot {
        self.choice(
            "PLAYBOOK_VARS_ROOT",
            PlaybookVarsRoot::Top,
            &[
                ("top", PlaybookVarsRoot::Top),
                ("bottom", PlaybookVarsRoot::Bottom),
                ("all", PlaybookVarsRoot::All),
            ],
        )
    }

    pub fn private_role_vars(&self) -> bool {
        self.flag("DEFAULT_PRIVATE_ROLE_VARS")
    }

    /// The default strategy plugin's name (`linear`).
    pub fn strategy(&self) -> Option<&str> {
        self.text("DEFAULT_STRATEGY")
    }

    pub fn stdout_callback(&self) -> Option<&str> {
        self.text("DEFAULT_STDOUT_CALLBACK")
    }

    pub fn callbacks_enabled(&self) -> Vec<String> {
        self.strings("CALLBACKS_ENABLED")
    }

    pub fn display_skipped_hosts(&self) -> bool {
        self.flag("DISPLAY_SKIPPED_HOSTS")
    }

    /// The default callback's `display_ok_hosts`.
    pub fn display_ok_hosts(&self) -> Result<bool, &ConfigError> {
        Ok(self.plugin_value("callback", "default", "display_ok_hosts")?.is_truthy())
    }

    /// An option of the default stdout callback (`display_failed_stderr`, `result_format`,
    /// ...), resolved from ansible.cfg and the environment; null when it has no value.
    pub fn default_callback_option(&self, name: &str) -> Result<&SettingValue, &ConfigError> {
        self.plugin_value("callback", "default", name)
    }

    pub fn show_custom_stats(&self) -> bool {
        self.flag("SHOW_CUSTOM_STATS")
    }

    pub fn deprecation_warnings(&self) -> bool {
        self.flag("DEPRECATION_WARNINGS")
    }

    pub fn system_warnings(&self) -> bool {
        self.flag("SYSTEM_WARNINGS")
    }

    pub fn localhost_warning(&self) -> bool {
        self.flag("LOCALHOST_WARNING")
    }

    pub fn invalid_task_attribute_failed(&self) -> bool {
        self.flag("INVALID_TASK_ATTRIBUTE_FAILED")
    }

    /// `error_on_undefined_vars` (DEFAULT_UNDEFINED_VAR_BEHAVIOR); ansible 2.21 no longer
    /// consults it and deprecates setting it.
    pub fn error_on_undefined_vars(&self) -> bool {
        self.flag("DEFAULT_UNDEFINED_VAR_BEHAVIOR")
    }

    /// `[diff] always` (DIFF_ALWAYS): diff mode without `--diff`.
    pub fn diff_always(&self) -> bool {
        self.flag("DIFF_ALWAYS")
    }

    /// `[diff] context` (DIFF_CONTEXT): lines of context around each change.
    pub fn diff_context(&self) -> i64 {
        self.int_or_default("DIFF_CONTEXT")
    }

    /// `max_diff_size` (MAX_FILE_SIZE_FOR_DIFF), in bytes.
    pub fn max_file_size_for_diff(&self) -> i64 {
        self.int_or_default("MAX_FILE_SIZE_FOR_DIFF")
    }

    /// `local_tmp`: the directory under which ansible makes its private
    /// `ansible-local-<pid>...` directory at start-up. tack resolves it without creating
    /// anything; making the private directory is the caller's job when it needs one.
    pub fn local_tmp(&self) -> Option<PathBuf> {
        self.path("DEFAULT_LOCAL_TMP")
    }

    /// The sh shell's `async_dir`, as written (expanded where the job runs).
    /// `inject_facts_as_vars`: `None` when left at its default (facts are injected, with
    /// ansible's deprecation when one is read so), else as set.
    pub fn inject_facts_as_vars(&self) -> Option<bool> {
        if matches!(self.origin("INJECT_FACTS_AS_VARS"), Some(crate::SettingOrigin::Default) | None)
        {
            return None;
        }
        Some(self.flag("INJECT_FACTS_AS_VARS"))
    }

    /// `inject_invocation`: every module's result gains its arguments as `invocation`
    /// (where a host's `ansible_inject_invocation` does not say otherwise).
    pub fn inject_invocation(&self) -> bool {
        self.flag("INJECT_INVOCATION")
    }

    pub fn python_module_rlimit_nofile(&self) -> Option<u64> {
        // The setting has no type in ansible's table: an environment value is text, which
        // ansible then turns into an integer (0, or what is none, asks for nothing).
        let value = self.get("PYTHON_MODULE_RLIMIT_NOFILE")?;
        let n = value.as_int().or_else(|| value.as_str()?.trim().parse().ok())?;
        u64::try_from(n).ok().filter(|n| *n > 0)
    }

    pub fn async_dir(&self) -> Option<String> {
        self.plugin_value("shell", "sh", "async_dir").ok()?.as_str().map(str::to_string)
    }

    /// The sh shell's `remote_tmp`, as written (expanded on the managed host).
    pub fn remote_tmp(&self) -> Result<Option<&str>, &ConfigError> {
        Ok(self.plugin_value("shell", "sh", "remote_tmp")?.as_str())
    }

    /// `ansible_managed` (DEFAULT_MANAGED_STR).
    pub fn managed_str(&self) -> Option<&str> {
        self.text("DEFAULT_MANAGED_STR")
    }

    pub fn jinja2_extensions(&self) -> Vec<String> {
        self.strings("DEFAULT_JINJA2_EXTENSIONS")
    }
}
