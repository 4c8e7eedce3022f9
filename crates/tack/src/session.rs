//! What every subcommand that reads a project needs before it starts, built the way
//! ansible's `_play_prereqs` builds it: the configuration, the vault secrets, the data loader,
//! the inventory, then the extra vars (in that order, so errors and warnings come in ansible's
//! order).

use std::path::{Path, PathBuf};

use tack_config::{Config, Context, DuplicateKeyPolicy, MismatchPolicy};
use tack_diag::Diagnostic;
use tack_inventory::{Inventory, InventoryOptions, PatternMismatch, TransformGroupChars, VarLayer};
use tack_loader::{DataLoader, HashBehaviour, load_extra_vars};
use tack_py::ansible::unfrackpath;
use tack_vault::TerminalPrompter;
use tack_vault::VaultSecrets;
use tack_vault::secrets::{SecretRequest, load_secrets};
use tack_yaml::Mapping;

use crate::options::{ExtraVarsOpts, InventoryOpts, VaultOpts};

/// A command's loaded project context.
pub(crate) struct Session {
    /// Shared with the `config` lookup, which reads the run's settings as ansible's `C.config`.
    pub config: std::sync::Arc<Config>,
    pub loader: DataLoader,
    pub inventory: Inventory,
    pub extra_vars: Mapping,
    pub roles_path: Vec<PathBuf>,
    /// The modules and actions `plugin_filters_cfg` rejects (`crate::plugin_filter`), read
    /// before the session opens: ansible warns of the file before anything else.
    pub rejected_modules: std::sync::Arc<std::collections::BTreeSet<String>>,
}

impl Session {
    /// What loading playbooks needs from the session; `module_path` is `-M` as given (each a
    /// colon-separated list; a later flag's paths come first, as ansible prepends them).
    pub(crate) fn load_options(&self, module_path: &[String]) -> tack_playbook::LoadOptions {
        let mut module_paths = Vec::new();
        for given in module_path {
            let paths = given.split(':').filter(|p| !p.is_empty());
            let paths: Vec<PathBuf> =
                paths.map(|p| unfrackpath(Path::new(p), true, None)).collect();
            module_paths.splice(0..0, paths);
        }
        tack_playbook::LoadOptions {
            extra_vars: self.extra_vars.clone(),
            roles_path: self.roles_path.clone(),
            module_paths,
            configured_module_paths: self.config.module_path(),
            module_utils_paths: self.config.module_utils_path(),
            action_plugin_paths: self.config.action_plugin_path(),
            lookup_plugin_paths: self.config.lookup_plugin_path(),
            collections_paths: self.config.collections_path(),
            version_mismatch: match self
                .config
                .get("COLLECTIONS_ON_ANSIBLE_VERSION_MISMATCH")
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref()
            {
                Some("error") => tack_playbook::VersionMismatch::Error,
                Some("ignore") => tack_playbook::VersionMismatch::Ignore,
                _ => tack_playbook::VersionMismatch::Warning,
            },
            sys_path_collections: {
                let scan = self
                    .config
                    .get("COLLECTIONS_SCAN_SYS_PATH")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(true);
                tack_playbook::LazyRoots::new(move || {
                    tack_actions::python_path::interpreter_collections(scan)
                })
            },
            ansible_core_package: tack_playbook::LazyRoots::new(
                tack_actions::python_path::ansible_package_dir,
            ),
            invalid_task_attribute_failed: self.config.invalid_task_attribute_failed(),
            private_role_vars: (!matches!(
                self.config.origin("DEFAULT_PRIVATE_ROLE_VARS"),
                None | Some(tack_config::SettingOrigin::Default)
            ))
            .then(|| self.config.private_role_vars()),
            validate_action_group_metadata: self
                .config
                .get("VALIDATE_ACTION_GROUP_METADATA")
                .and_then(|v| v.as_bool())
                .unwrap_or(true),
            rejected_modules: self.rejected_modules.clone(),
            // The command sets its own `-v` count.
            verbosity: 0,
        }
    }
}

/// The command-line options a session is built from.
pub(crate) struct SessionArgs<'a> {
    pub inventory: &'a InventoryOpts,
    pub vault: &'a VaultOpts,
    pub extra_vars: &'a ExtraVarsOpts,
    /// The loader's base directory (`--playbook-dir`); the working directory when `None`.
    pub basedir: Option<&'a Path>,
    /// `--ansible-python`, for the inventory plugins tack runs through ansible-core.
    pub ansible_python: Option<&'a Path>,
}

/// Reads ansible.cfg and the `ANSIBLE_*` environment as ansible does at startup, printing its
/// notices; a bad setting ends the process with ansible's startup error and exit code 5.
pub(crate) fn load_config(log: DisplayLog) -> Result<Config, crate::exit::Startup> {
    let ctx = Context::from_process().map_err(crate::exit::Startup::from)?;
    let config = Config::load(&ctx).map_err(crate::exit::Startup::from)?;
    tack_diag::set_deprecations_enabled(config.deprecation_warnings());
    crate::color::setup_display(&config);
    if log == DisplayLog::Keep {
        open_display_log(&config);
    }
    config.emit_notices();
    Ok(config)
}

/// `-v` as ansible counts it: the `verbosity` setting (`ANSIBLE_VERBOSITY`) is the count's
/// start, and each `-v` adds one. The display log learns the count with `log_verbosity`, to
/// log the verbose lines above it that the setting asks for.
pub(crate) fn verbosity(config: &Config, given: u8) -> u8 {
    let configured = config.get("DEFAULT_VERBOSITY").and_then(|v| v.as_int()).unwrap_or(0);
    let configured = u8::try_from(configured.max(0)).unwrap_or(u8::MAX);
    let count = given.saturating_add(configured);
    tack_diag::display_log::set_verbosity(
        count,
        config.get("LOG_VERBOSITY").and_then(|v| v.as_int()),
    );
    count
}

/// `--playbook-dir` as given, else the `playbook_dir` setting (`ANSIBLE_PLAYBOOK_DIR`), which
/// ansible's option takes as its default.
pub(crate) fn playbook_dir(config: &Config, given: Option<PathBuf>) -> Option<PathBuf> {
    given.or_else(|| {
        config
            .get("PLAYBOOK_DIR")
            .and_then(|v| v.as_str())
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    })
}

/// Whether a command keeps `log_path`'s log of what it displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DisplayLog {
    /// As every ansible command does.
    Keep,
    /// `tack plan`: a plan changes nothing on the controller either, its log included.
    Skip,
}

/// `log_path`: from here on, what the command displays is also appended to that file (see
/// `tack_diag::display_log`), as ansible's `Display` starts logging once its configuration
/// is read. A file that cannot be written is reported on stderr in ansible's words and the
/// command goes on without a log.
fn open_display_log(config: &Config) {
    let Some(path) = configured_log_path(config) else { return };
    let deny: Vec<String> = config
        .get("DEFAULT_LOG_FILTER")
        .and_then(|v| v.as_str_list())
        .unwrap_or_default()
        .into_iter()
        .map(str::to_string)
        .collect();
    // ansible's log filter names the user `getpass.getuser()` gives, else the uid.
    let user = match tack_links::trace::local_user() {
        "" => {
            // SAFETY: getuid has no preconditions and cannot fail.
            let uid = unsafe { libc::getuid() };
            format!("uid={uid}")
        }
        user => user.to_string(),
    };
    if let Err(said) = tack_diag::display_log::open(std::path::Path::new(path), &deny, &user) {
        use std::io::Write;
        let _ = std::io::stderr().write_all(said.as_bytes());
    }
}

fn configured_log_path(config: &Config) -> Option<&str> {
    config.get("DEFAULT_LOG_PATH").and_then(|v| v.as_str()).filter(|p| !p.is_empty())
}

/// `log_verbosity` above the command's own `-v` count in a listing or `--syntax-check`: the
/// listing is logged as one block, so the verbose lines ansible logs between its parts have
/// no place; refused by name while a log is kept. (A run logs them: see
/// `tack_diag::display_log::verbose`.)
pub(crate) fn refused_log_verbosity(config: &Config, verbosity: u8) -> Option<String> {
    configured_log_path(config)?;
    let wanted = config.get("LOG_VERBOSITY").and_then(|v| v.as_int())?;
    (wanted > i64::from(verbosity)).then(|| {
        format!(
            "log_verbosity {wanted} above the run's verbosity ({verbosity}) with a listing or \
             --syntax-check: verbose lines logged but not shown"
        )
    })
}

impl Session {
    pub(crate) fn open(config: Config, args: SessionArgs<'_>) -> Result<Session, Diagnostic> {
        let secrets = vault_secrets(&config, args.vault)?;
        let mut loader = DataLoader::new(secrets);
        if let Some(dir) = args.basedir {
            loader.set_basedir(dir);
        }
        loader.set_duplicate_keys(match config.duplicate_yaml_dict_key() {
            DuplicateKeyPolicy::Warn => tack_yaml::DuplicateKeys::Warn,
            DuplicateKeyPolicy::Error => tack_yaml::DuplicateKeys::Error,
            DuplicateKeyPolicy::Ignore => tack_yaml::DuplicateKeys::Ignore,
        });
        if let Some(exts) = config.get("YAML_FILENAME_EXTENSIONS").and_then(|v| v.as_str_list()) {
            loader.set_yaml_extensions(exts.iter().map(|s| s.to_string()).collect());
        }
        let mut options = inventory_options(&config, &args.extra_vars.extra_vars);
        options.sources.foreign = Some(std::sync::Arc::new(python_inventory(&config, &args)));
        let sources = inventory_sources(&args.inventory.inventory, &config);
        let inventory = Inventory::load(&loader, &sources, options)?;
        let extra_vars = load_extra_vars(
            &loader,
            &args.extra_vars.extra_vars,
            inventory.options().hash_behaviour,
        )?;
        let roles_path = config.roles_path();
        let config = std::sync::Arc::new(config);
        tack_template::lookups::set_config(config.clone());
        Ok(Session {
            config,
            loader,
            inventory,
            extra_vars,
            roles_path,
            rejected_modules: Default::default(),
        })
    }
}

/// The run's vault secrets from `--vault-id`, `--vault-password-file`, `-J` and the vault
/// settings, as `ansible-playbook` and `ansible-inventory` gather them (no prompt unless asked).
pub(crate) fn vault_secrets(config: &Config, opts: &VaultOpts) -> Result<VaultSecrets, Diagnostic> {
    let settings = crate::vault_settings::load(config)?;
    let request = SecretRequest {
        vault_ids: settings.vault.vault_ids_with(&opts.vault_ids),
        password_files: opts
            .vault_password_files
            .iter()
            .map(|p| unfrackpath(p, false, None))
            .collect(),
        ask_vault_pass: opts.ask_vault_pass || settings.ask_vault_pass,
        new_password: false,
        auto_prompt: false,
    };
    load_secrets(&settings.vault, request, &mut TerminalPrompter).map_err(Diagnostic::from)
}

/// The inventory sources: `-i` values, else the `inventory` setting (`ANSIBLE_INVENTORY`,
/// ansible.cfg, ansible's default).
pub(crate) fn inventory_sources(cli: &[String], config: &Config) -> Vec<String> {
    if cli.is_empty() {
        return config.inventory().iter().map(|p| p.to_string_lossy().into_owned()).collect();
    }
    cli.iter()
        .map(|s| {
            if s.contains(',') {
                s.clone()
            } else {
                unfrackpath(Path::new(s), false, None).to_string_lossy().into_owned()
            }
        })
        .collect()
}

/// The interpreter the implicit localhost gets: ansible gives the Python it runs under; tack
/// gives the first `python3` on `PATH`, else `/usr/bin/python3`.
fn localhost_python() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("python3"))
        .find(|candidate| candidate.is_file())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/usr/bin/python3".into())
}

/// ansible-core's own inventory plugins, for the sources tack does not read itself; its
/// interpreter is looked for only when a source needs it (before the inventory is read, so
/// not among its hosts' interpreters).
fn python_inventory(
    config: &Config,
    args: &SessionArgs<'_>,
) -> tack_actions::python_inventory::PythonInventory {
    let cwd = std::env::current_dir().unwrap_or_default();
    let explicit = args.ansible_python.map(Path::to_path_buf).or_else(|| {
        std::env::var_os("TACK_ANSIBLE_PYTHON").filter(|v| !v.is_empty()).map(PathBuf::from)
    });
    let mut candidates: Vec<String> =
        config.interpreter_python().into_iter().map(str::to_string).collect();
    candidates.extend(crate::cmd::python_path::behind_ansible_on_path());
    candidates.push("python3".into());
    tack_actions::python_inventory::PythonInventory {
        config_file: config.config_file().map(PathBuf::from),
        basedir: args.basedir.map(Path::to_path_buf).unwrap_or(cwd),
        collections: config.collections_path(),
        // `--playbook-dir`'s plugin subdirectories come first, as ansible adds them.
        plugin_dirs: args
            .basedir
            .map(|dir| dir.join("inventory_plugins"))
            .into_iter()
            .chain(config.inventory_plugin_path())
            .collect(),
        cache_plugin_dirs: args.basedir.map(|dir| dir.join("cache_plugins")).into_iter().collect(),
        verbosity: verbosity(config, 0),
        extra_vars: args.extra_vars.extra_vars.clone(),
        cache: !args.inventory.flush_cache,
        explicit,
        candidates,
        found: std::sync::OnceLock::new(),
    }
}

/// The inventory settings from the configuration.
pub(crate) fn inventory_options(config: &Config, extra_vars: &[String]) -> InventoryOptions {
    let strings = |name: &str| -> Option<Vec<String>> {
        config
            .get(name)
            .and_then(|v| v.as_str_list())
            .map(|l| l.iter().map(|s| s.to_string()).collect())
    };
    let mut options =
        InventoryOptions { localhost_python: localhost_python(), ..Default::default() };
    options.sources.enabled_plugins = config.inventory_enabled_plugins();
    options.sources.ignore_extensions = config.inventory_ignore_extensions();
    options.sources.ignore_patterns = config.inventory_ignore_patterns();
    options.sources.unparsed_is_failed = config.inventory_unparsed_is_failed();
    options.sources.any_unparsed_is_failed = config.inventory_any_unparsed_is_failed();
    if let Some(v) = config.get("INVENTORY_UNPARSED_WARNING") {
        options.sources.unparsed_warning = v.is_truthy();
    }
    if let Some(exts) = strings("YAML_FILENAME_EXTENSIONS") {
        options.sources.yaml_extensions = exts;
    }
    if let Some(Ok(show)) = config.plugin_option("inventory", "script", "always_show_stderr") {
        options.sources.script_stderr = show.value.is_truthy();
    }
    options.hash_behaviour = match config.hash_behaviour() {
        tack_config::HashBehaviour::Replace => HashBehaviour::Replace,
        tack_config::HashBehaviour::Merge => HashBehaviour::Merge,
    };
    // Every other combination of variable layers the run makes follows it too.
    tack_loader::set_hash_behaviour(options.hash_behaviour);
    tack_template::warn_on_untrusted_templates(
        config.get("_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR").and_then(|v| v.as_str())
            == Some("warning"),
    );
    options.pattern_mismatch = match config.host_pattern_mismatch() {
        MismatchPolicy::Warning => PatternMismatch::Warning,
        MismatchPolicy::Error => PatternMismatch::Error,
        MismatchPolicy::Ignore => PatternMismatch::Ignore,
    };
    options.transform_group_chars =
        match config.get("TRANSFORM_INVALID_GROUP_CHARS").and_then(|v| v.as_str()) {
            Some("always") => TransformGroupChars::Always,
            Some("ignore") => TransformGroupChars::Ignore,
            Some("silently") => TransformGroupChars::Silently,
            _ => TransformGroupChars::Never,
        };
    if let Some(order) = strings("VARIABLE_PRECEDENCE") {
        let layers: Vec<VarLayer> = order
            .iter()
            .filter_map(|name| {
                let layer = VarLayer::DEFAULT_ORDER.iter().find(|l| l.setting_name() == Some(name));
                if layer.is_none() {
                    tack_diag::warn(&Diagnostic::new(format!(
                        "Ignoring unknown variable precedence entry: {name}"
                    )));
                }
                layer.copied()
            })
            .collect();
        options.group_precedence = layers;
    }
    options.sources.extra_vars = extra_vars.to_vec();
    options
}
