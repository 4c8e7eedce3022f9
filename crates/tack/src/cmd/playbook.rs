//! `tack playbook` (and `ansible-playbook`): load playbooks and run, list or syntax-check them.

use std::path::PathBuf;
use std::process::ExitCode;

use std::io::Write;

use clap::Args as ClapArgs;
use tack_diag::{Diagnostic, ErrorClass};

use crate::options::{
    BecomeOpts, ConnectionOpts, ExtraVarsOpts, InventoryOpts, VaultOpts, VerbosityOpts,
};

#[derive(ClapArgs, Debug)]
#[command(
    about = "Runs Ansible playbooks, executing the defined tasks on the targeted hosts.",
    infer_long_args = true
)]
pub(crate) struct Args {
    /// Playbook(s)
    #[arg(required = true, value_name = "playbook")]
    pub playbooks: Vec<PathBuf>,

    #[command(flatten)]
    pub inventory: InventoryOpts,
    #[command(flatten)]
    pub vault: VaultOpts,
    #[command(flatten)]
    pub extra_vars: ExtraVarsOpts,
    #[command(flatten)]
    pub verbosity: VerbosityOpts,

    /// Only run plays and tasks tagged with these values.
    #[arg(short = 't', long = "tags", value_name = "TAGS")]
    pub tags: Vec<String>,
    /// Only run plays and tasks whose tags do not match these values.
    #[arg(long = "skip-tags", value_name = "SKIP_TAGS")]
    pub skip_tags: Vec<String>,
    /// Outputs a list of matching hosts; does not execute anything else.
    #[arg(long = "list-hosts")]
    pub list_hosts: bool,
    /// List all tasks that would be executed.
    #[arg(long = "list-tasks")]
    pub list_tasks: bool,
    /// List all available tags.
    #[arg(long = "list-tags")]
    pub list_tags: bool,
    /// Perform a syntax check on the playbook, but do not execute it.
    #[arg(long = "syntax-check")]
    pub syntax_check: bool,
    /// Start the playbook at the task matching this name.
    #[arg(long = "start-at-task", value_name = "START_AT_TASK")]
    pub start_at_task: Option<String>,
    /// One-step-at-a-time: confirm each task before running.
    #[arg(long = "step")]
    pub step: bool,
    /// Run handlers even if a task fails.
    #[arg(long = "force-handlers")]
    pub force_handlers: bool,
    /// The Python with ansible-core that runs the modules tack has no native code for.
    #[arg(long = "ansible-python", value_name = "PATH")]
    pub ansible_python: Option<std::path::PathBuf>,
    /// Specify number of parallel processes to use (default=5).
    #[arg(short = 'f', long = "forks", value_name = "FORKS")]
    pub forks: Option<u32>,
    /// Don't make any changes; instead, try to predict some of the changes that may occur.
    #[arg(short = 'C', long = "check")]
    pub check: bool,
    /// When changing (small) files and templates, show the differences in those files.
    #[arg(short = 'D', long = "diff")]
    pub diff: bool,
    /// Write the run's events to this file as JSON, one object per line (tack's own).
    #[arg(long = "events", value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Keep the run in the run store at this URL (sqlite://PATH or postgres://...), as
    /// `tack serve` keeps the runs it starts (tack's own).
    #[arg(long = "record", value_name = "DB_URL")]
    pub record: Option<String>,
    /// Prepend colon-separated path(s) to module library.
    #[arg(short = 'M', long = "module-path", value_name = "MODULE_PATH")]
    pub module_path: Vec<String>,

    #[command(flatten)]
    pub connection_opts: ConnectionOpts,
    #[command(flatten)]
    pub become_opts: BecomeOpts,
}

/// What the run is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `tack playbook`: run it.
    Apply,
    /// `tack plan`: change nothing, say what would happen.
    Plan(crate::cmd::plan::Format),
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_mode(args, Mode::Apply)
}

pub(crate) fn run_mode(mut args: Args, mode: Mode) -> anyhow::Result<ExitCode> {
    let listing = args.list_hosts || args.list_tasks || args.list_tags || args.syntax_check;
    if args.step {
        return Err(Diagnostic::new("tack does not support --step")
            .with_class(ErrorClass::Options)
            .into());
    }
    // Configuration first, as ansible reads it when it starts: its notices come before a
    // missing playbook's error, and that error is coloured as the settings say.
    let log = match mode {
        Mode::Apply => crate::session::DisplayLog::Keep,
        Mode::Plan(_) => crate::session::DisplayLog::Skip,
    };
    let config = crate::session::load_config(log)?;
    let rejected_modules = crate::plugin_filter::load(&config)?;
    // What every module process started here gets: ansible's workers' session isolation.
    tack_agent::session::set_isolation(
        config.get("WORKER_SESSION_ISOLATION").and_then(|v| v.as_bool()).unwrap_or(true),
    );
    args.verbosity.verbose = crate::session::verbosity(&config, args.verbosity.verbose);
    // `[tags] run`/`skip` are the options' defaults, which `--tags`/`--skip-tags` add to
    // (argparse's `append` onto a default list).
    for (name, given) in [("TAGS_RUN", &mut args.tags), ("TAGS_SKIP", &mut args.skip_tags)] {
        let configured: Vec<String> = config
            .get(name)
            .and_then(|v| v.as_str_list())
            .unwrap_or_default()
            .into_iter()
            .map(str::to_string)
            .collect();
        if !configured.is_empty() {
            let cli = std::mem::take(given);
            *given = configured.into_iter().chain(cli).collect();
        }
    }
    // ansible's CLI prints its header before it checks the playbooks.
    let palette = crate::color::palette(&config)?;
    {
        let mut stdout = std::io::stdout().lock();
        header::write(&mut stdout, &config, args.verbosity.verbose, palette.as_ref())?;
    }
    // A collection's playbook by fully qualified name (`ns.col.pb`), in the configured
    // collections (the loader finds it again when it loads).
    let configured_roots = tack_playbook::CollectionRoots {
        named: config.collections_path(),
        lazy: Default::default(),
    };
    let in_collection = |name: &std::path::Path| {
        name.to_str()
            .and_then(tack_playbook::Fqcr::parse)
            .is_some_and(|fqcr| configured_roots.playbook(&fqcr).is_some())
    };
    for playbook in &args.playbooks {
        if !playbook.exists() && in_collection(playbook) {
            continue;
        }
        if !playbook.exists() {
            return Err(Diagnostic::new(format!(
                "the playbook: {} could not be found",
                playbook.display()
            ))
            .into());
        }
        if !(playbook.is_file() || is_fifo(playbook)) {
            return Err(Diagnostic::new(format!(
                "the playbook: {} does not appear to be a file",
                playbook.display()
            ))
            .into());
        }
    }
    // Options a run does not honour are refused before anything is asked.
    if !listing && let Some(option) = run::refused_options(&args, mode) {
        return Err(Diagnostic::new(format!("tack playbook does not support {option} yet"))
            .with_class(ErrorClass::Options)
            .into());
    }
    // A listing runs nothing, so it has no events to write or run to keep: refused, not
    // ignored.
    if listing
        && let Some(option) =
            [("--events", args.events.is_some()), ("--record", args.record.is_some())]
                .into_iter()
                .find_map(|(name, used)| used.then_some(name))
    {
        return Err(Diagnostic::new(format!(
            "tack playbook does not support {option} with a listing or --syntax-check"
        ))
        .with_class(ErrorClass::Options)
        .into());
    }
    if listing
        && let Some(setting) =
            crate::session::refused_log_verbosity(&config, args.verbosity.verbose)
    {
        return Err(Diagnostic::new(format!("tack playbook does not support {setting} yet"))
            .with_class(ErrorClass::Options)
            .into());
    }
    if !listing && let Some(setting) = crate::links::refused_setting(&config) {
        return Err(Diagnostic::new(format!("tack playbook does not support {setting} yet"))
            .with_class(ErrorClass::Options)
            .into());
    }
    // The passwords ansible asks for (not for a listing), before the vault's and the
    // inventory.
    let passwords = if listing {
        crate::links::Passwords::default()
    } else {
        crate::links::passwords(&config, &args.connection_opts, &args.become_opts)?
    };
    let mut session = crate::session::Session::open(
        config,
        crate::session::SessionArgs {
            inventory: &args.inventory,
            vault: &args.vault,
            extra_vars: &args.extra_vars,
            basedir: None,
            ansible_python: args.ansible_python.as_deref(),
        },
    )?;
    session.rejected_modules = rejected_modules;
    check_host_list(&mut session, args.inventory.limit.as_deref())?;
    if !listing {
        return run::run(&args, &session, passwords, mode);
    }
    let mut stdout = std::io::stdout().lock();
    verbose::inventory_notes(&mut stdout, &session, args.verbosity.verbose, palette.as_ref())?;
    let out = list::run(&args, &session, palette.as_ref())?;
    tack_diag::display_log::record(tack_diag::display_log::Level::Info, &out);
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `CLI.get_host_list`: warns when the inventory has no hosts, applies `--limit`, and refuses
/// a limit that leaves nothing to target (unless only the implicit localhost was there).
fn check_host_list(
    session: &mut crate::session::Session,
    limit: Option<&str>,
) -> Result<(), Diagnostic> {
    let empty = session.inventory.select("all")?.is_empty();
    if empty && session.config.localhost_warning() {
        tack_diag::warn(&Diagnostic::new(
            "provided hosts list is empty, only localhost is available. Note that the implicit \
             localhost does not match 'all'",
        ));
    }
    session.inventory.restrict_to(limit)?;
    if !empty && session.inventory.select("all")?.is_empty() {
        return Err(Diagnostic::new(
            "Specified inventory, host pattern and/or --limit leaves us with no hosts to target.",
        ));
    }
    Ok(())
}

fn is_fifo(path: &std::path::Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

pub(crate) mod callback;
pub(crate) mod cliargs;
mod events;
pub(crate) mod header;
mod list;
mod plugins;
mod run;
pub(crate) mod verbose;
