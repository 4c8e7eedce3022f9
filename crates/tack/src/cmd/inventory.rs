//! `tack inventory` (and `ansible-inventory`): show the inventory as ansible-inventory does.
//!
//! The inventory itself is read by `tack-inventory`; this module owns the command's flags, the
//! order ansible does things in (actions checked, vault secrets set up, inventory read, extra
//! vars loaded, limit applied), and printing: `--list` JSON, `--host`, `--graph [--vars]`.
//!
//! Differences from ansible-inventory, each refused or documented rather than guessed:
//! `--toml` and `--flush-cache` are refused by name,
//! and `--graph --vars` prints vault values as `********` where ansible prints the plaintext.

mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use tack_config::{Config, Context, DuplicateKeyPolicy, MismatchPolicy};
use tack_diag::{Diagnostic, ErrorClass};
use tack_inventory::{
    Inventory, InventoryOptions, PatternMismatch, TransformGroupChars, VarLayer, options_error,
};
use tack_loader::{DataLoader, HashBehaviour, load_extra_vars, paths};
use tack_vault::TerminalPrompter;
use tack_vault::secrets::{SecretRequest, VaultSettings, load_secrets};

use crate::options::{ExtraVarsOpts, InventoryOpts, VaultOpts, VerbosityOpts};

#[derive(ClapArgs, Debug)]
#[command(
    about = "Show Ansible inventory information, by default it uses the inventory script JSON format"
)]
pub struct Args {
    /// The name of a group in the inventory, relevant when using --graph.
    #[arg(value_name = "group")]
    pub group: Option<String>,

    #[command(flatten)]
    pub inventory: InventoryOpts,
    #[command(flatten)]
    pub vault: VaultOpts,
    #[command(flatten)]
    pub extra_vars: ExtraVarsOpts,
    #[command(flatten)]
    pub verbosity: VerbosityOpts,

    /// Since this tool does not use playbooks, use this as a substitute playbook directory.
    #[arg(long = "playbook-dir", value_name = "BASEDIR")]
    pub playbook_dir: Option<PathBuf>,
    /// Output all hosts info, works as inventory script.
    #[arg(long = "list")]
    pub list: bool,
    /// Output specific host info, works as inventory script. It will ignore limit.
    #[arg(long = "host", value_name = "HOST")]
    pub host: Option<String>,
    /// Create inventory graph; if supplying pattern it must be a valid group name. It will
    /// ignore limit.
    #[arg(long = "graph")]
    pub graph: bool,
    /// Use YAML format instead of default JSON, ignored for --graph.
    #[arg(short = 'y', long = "yaml")]
    pub yaml: bool,
    /// Use TOML format instead of default JSON, ignored for --graph.
    #[arg(long = "toml")]
    pub toml: bool,
    /// Add vars to graph display, ignored unless used with --graph.
    #[arg(long = "vars")]
    pub show_vars: bool,
    /// When doing --list, represent in a way that is optimized for export.
    #[arg(long = "export")]
    pub export: bool,
    /// When doing --list, send the inventory to a file instead of to the screen.
    #[arg(long = "output", value_name = "OUTPUT_FILE")]
    pub output: Option<PathBuf>,
}

/// The action the command was asked for.
enum Action {
    List,
    Host(String),
    Graph,
}

/// `post_process_args`: exactly one of `--list`, `--host`, `--graph`.
fn action(args: &Args) -> Result<Action, Diagnostic> {
    let used = [args.list, args.host.as_deref().is_some_and(|h| !h.is_empty()), args.graph];
    match used.iter().filter(|u| **u).count() {
        0 => Err(options_error(
            "No action selected, at least one of --host, --graph or --list needs to be specified.",
        )),
        1 if args.list => Ok(Action::List),
        1 if args.graph => Ok(Action::Graph),
        1 => Ok(Action::Host(args.host.clone().unwrap_or_default())),
        _ => Err(options_error(
            "Conflicting options used, only one of --host, --graph or --list can be used at the same time.",
        )),
    }
}

/// Flags tack does not honour, refused by name before anything is read.
fn refuse_unsupported(args: &Args) -> Result<(), Diagnostic> {
    let refuse = |flag: &str, why: &str| {
        Err(Diagnostic::new(format!("tack inventory does not support {flag}: {why}"))
            .with_class(ErrorClass::Options))
    };
    if args.toml {
        return refuse("--toml", "TOML output is not implemented");
    }
    if args.inventory.flush_cache {
        return refuse("--flush-cache", "tack keeps no fact cache to flush");
    }
    if args.verbosity.verbose > 1 {
        return refuse("-vv and above", "only -v is implemented");
    }
    Ok(())
}

/// The inventory sources: `-i` values, else the `inventory` setting (`ANSIBLE_INVENTORY`,
/// ansible.cfg, ansible's default).
fn sources(args: &Args, config: &Config) -> Vec<String> {
    if args.inventory.inventory.is_empty() {
        return config.inventory().iter().map(|p| p.to_string_lossy().into_owned()).collect();
    }
    args.inventory
        .inventory
        .iter()
        .map(|s| {
            if s.contains(',') {
                s.clone()
            } else {
                paths::unfrackpath(s, None, false).to_string_lossy().into_owned()
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

/// The inventory settings from the configuration.
fn inventory_options(args: &Args, config: &Config) -> InventoryOptions {
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
    options.hash_behaviour = match config.hash_behaviour() {
        tack_config::HashBehaviour::Replace => HashBehaviour::Replace,
        tack_config::HashBehaviour::Merge => HashBehaviour::Merge,
    };
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
    tack_diag::set_deprecations_enabled(config.deprecation_warnings());
    options.sources.extra_vars = args.extra_vars.extra_vars.clone();
    options
}

/// The vault secrets the options and settings name (prompting only when asked to).
fn vault_secrets(args: &Args, config: &Config) -> Result<tack_vault::VaultSecrets, Diagnostic> {
    let mut settings = VaultSettings::default();
    if let Some(identity) = config.vault_identity() {
        settings.identity = identity.to_string();
    }
    settings.identity_list = config.vault_identity_list();
    settings.password_file = config.vault_password_file();
    settings.id_match = config.vault_id_match();
    let mut vault_ids = settings.identity_list.clone();
    vault_ids.extend(args.vault.vault_ids.iter().cloned());
    let request = SecretRequest {
        vault_ids,
        password_files: args.vault.vault_password_files.clone(),
        ask_vault_pass: args.vault.ask_vault_pass
            || config.get("DEFAULT_ASK_VAULT_PASS").is_some_and(|v| v.is_truthy()),
        ..Default::default()
    };
    load_secrets(&settings, request, &mut TerminalPrompter).map_err(|e| e.to_diagnostic())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let action = action(&args)?;
    refuse_unsupported(&args)?;
    let config = Config::load(&Context::from_process()?)?;
    config.emit_notices();
    if args.verbosity.verbose == 1 {
        match config.config_file() {
            Some(file) => println!("Using {} as config file", file.display()),
            None => println!("No config file found; using defaults"),
        }
    }
    let options = inventory_options(&args, &config);
    let secrets = vault_secrets(&args, &config)?;
    let mut loader = DataLoader::new(secrets);
    if let Some(dir) = &args.playbook_dir {
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
    let mut inventory = Inventory::load(&loader, &sources(&args, &config), options)?;
    let extra_vars =
        load_extra_vars(&loader, &args.extra_vars.extra_vars, inventory.options().hash_behaviour)?;

    if !matches!(action, Action::Host(_))
        && let Some(limit) = &args.inventory.limit
    {
        inventory.restrict_to(Some(limit))?;
    }
    let view = output::View {
        inventory: &inventory,
        loader: &loader,
        extra_vars: &extra_vars,
        export: args.export || config.get("INVENTORY_EXPORT").is_some_and(|v| v.is_truthy()),
        playbook_dir: args.playbook_dir.as_deref().map(paths::abspath),
    };
    let text = match action {
        Action::Host(pattern) => {
            let hosts = inventory.select(&pattern)?;
            let [host] = hosts.as_slice() else {
                return Err(
                    options_error("You must pass a single valid host to --host parameter").into()
                );
            };
            output::dump(&view.host_variables(*host)?, args.yaml, false)?
        }
        Action::Graph => view.graph(args.group.as_deref().unwrap_or("all"), args.show_vars)?,
        Action::List if args.yaml => output::dump(&view.yaml_inventory()?, true, false)?,
        Action::List => output::dump(&view.json_inventory()?, false, true)?,
    };
    write_result(&text, args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// Prints the result (a newline added unless it ends with one), or writes it as is to
/// `--output`.
fn write_result(text: &str, output: Option<&std::path::Path>) -> Result<(), Diagnostic> {
    use std::io::Write;
    match output {
        None => {
            let mut stdout = std::io::stdout().lock();
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            let _ = write!(stdout, "{text}{newline}");
            let _ = stdout.flush();
            Ok(())
        }
        Some(path) => std::fs::write(path, text).map_err(|e| {
            let reason = e.to_string();
            let reason = reason.split(" (os error").next().unwrap_or(&reason).to_string();
            let errno = e.raw_os_error().unwrap_or(0);
            let shown = path.display().to_string();
            Diagnostic::caused_by(
                format!("Unable to write to destination file '{shown}'."),
                None,
                Diagnostic::new(format!("[Errno {errno}] {reason}: b'{shown}'")),
            )
        }),
    }
}
