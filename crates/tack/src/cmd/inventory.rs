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
mod toml_out;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use tack_diag::{Diagnostic, ErrorClass};
use tack_inventory::options_error;

use crate::options::{ExtraVarsOpts, InventoryOpts, VaultOpts, VerbosityOpts};
use crate::session::{Session, SessionArgs};

#[derive(ClapArgs, Debug)]
#[command(
    about = "Show Ansible inventory information, by default it uses the inventory script JSON format"
)]
pub(crate) struct Args {
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
    if args.inventory.flush_cache {
        return refuse("--flush-cache", "tack inventory does not empty the fact cache yet");
    }
    if args.verbosity.verbose > 1 {
        return refuse("-vv and above", "only -v is implemented");
    }
    // What a log keeps beyond the screen (`log_verbosity`) is made as for the screen.
    if tack_diag::display_log::noted_verbosity(args.verbosity.verbose) > 1 {
        return refuse("log_verbosity above 1 with a log_path", "only -v is implemented");
    }
    Ok(())
}

pub(crate) fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    let action = action(&args)?;
    refuse_unsupported(&args)?;
    let config = crate::session::load_config(crate::session::DisplayLog::Keep)?;
    // Nothing here runs a module; ansible still reads the file and warns or fails as it does.
    crate::plugin_filter::load(&config)?;
    args.verbosity.verbose = crate::session::verbosity(&config, args.verbosity.verbose);
    // `--playbook-dir`'s default is the `playbook_dir` setting, as ansible's option is.
    args.playbook_dir = crate::session::playbook_dir(&config, args.playbook_dir.take());
    // The `verbosity` setting counts too.
    refuse_unsupported(&args)?;
    let line = match config.config_file() {
        Some(file) => format!("Using {} as config file", file.display()),
        None => "No config file found; using defaults".to_string(),
    };
    // `display.v` (`-vv` and above are refused).
    if tack_diag::display_log::verbose_shown(1, args.verbosity.verbose, &line) {
        println!("{line}");
    }
    let session = Session::open(
        config,
        SessionArgs {
            inventory: &args.inventory,
            vault: &args.vault,
            extra_vars: &args.extra_vars,
            basedir: args.playbook_dir.as_deref(),
            ansible_python: None,
        },
    )?;
    let mut inventory = session.inventory;
    if !matches!(action, Action::Host(_))
        && let Some(limit) = &args.inventory.limit
    {
        inventory.restrict_to(Some(limit))?;
    }
    let view = output::View {
        inventory: &inventory,
        loader: &session.loader,
        extra_vars: &session.extra_vars,
        export: args.export
            || session.config.get("INVENTORY_EXPORT").is_some_and(|v| v.is_truthy()),
        playbook_dir: args.playbook_dir.as_deref().map(tack_py::path::abspath),
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
        // ansible's `tomli-w` raises, which it reports as an unexpected exception (with a
        // traceback and exit code 250; tack gives the same line and exit code 1).
        Action::List if args.toml => toml_out::dumps(&view.toml_inventory()?).map_err(|e| {
            Diagnostic::new(format!("Unexpected Exception, this is probably a bug: {}", e.0))
        })?,
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
            tack_diag::display_log::record(tack_diag::display_log::Level::Info, text);
            let mut stdout = std::io::stdout().lock();
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            let _ = write!(stdout, "{text}{newline}");
            let _ = stdout.flush();
            Ok(())
        }
        Some(path) => std::fs::write(path, text).map_err(|e| {
            let shown = path.display().to_string();
            Diagnostic::caused_by(
                format!("Unable to write to destination file {}.", tack_py::repr::str_repr(&shown)),
                None,
                Diagnostic::new(tack_py::oserror::os_error_bytes(&e, shown.as_bytes())),
            )
        }),
    }
}
