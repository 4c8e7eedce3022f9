//! `tack adhoc` (and `ansible`): one module on the hosts a pattern selects, as ansible's ad-hoc
//! command runs it: a one-task play ("Ansible Ad-Hoc", no fact gathering) built in memory and
//! run by the same engine as playbooks, shown by the `minimal` callback (`oneline` with `-o`).
//!
//! This module owns the flags and the checks ansible makes before the play exists; what the
//! engine does with the task is the engine's. Options the engine does not honour are refused
//! by name before anything runs.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;
use tack_diag::{Diagnostic, ErrorClass, Origin};
use tack_engine::{RunContext, RunFacts};
use tack_playbook::Loader;
use tack_playbook::tags::TagFilter;
use tack_report::callback::minimal::{AdhocOrigin, Layout, MinimalCallback};
use tack_report::callback::tree::TreeWriter;
use tack_template::Templar;
use tack_yaml::{Mapping, Node, Value};

use crate::options::{
    BecomeOpts, ConnectionOpts, ExtraVarsOpts, InventoryOpts, VaultOpts, VerbosityOpts,
};
use crate::session::{Session, SessionArgs};

#[derive(ClapArgs, Debug)]
#[command(
    about = "Define and run a single task 'playbook' against a set of hosts",
    infer_long_args = true
)]
pub(crate) struct Args {
    /// host pattern
    #[arg(value_name = "pattern")]
    pub pattern: String,

    /// The Python with ansible-core that runs the modules tack has no native code for.
    #[arg(long = "ansible-python", value_name = "PATH")]
    pub ansible_python: Option<std::path::PathBuf>,

    /// The action's options in space separated k=v format: -a 'opt1=val1 opt2=val2' or a json
    /// string: -a '{"opt1": "val1", "opt2": "val2"}'
    #[arg(short = 'a', long = "args", value_name = "MODULE_ARGS", allow_hyphen_values = true)]
    pub module_args: Option<String>,
    /// Name of the action to execute (default=command)
    #[arg(short = 'm', long = "module-name", value_name = "MODULE_NAME")]
    pub module_name: Option<String>,

    #[command(flatten)]
    pub inventory: InventoryOpts,
    #[command(flatten)]
    pub vault: VaultOpts,
    #[command(flatten)]
    pub extra_vars: ExtraVarsOpts,
    #[command(flatten)]
    pub verbosity: VerbosityOpts,

    /// Outputs a list of matching hosts; does not execute anything else.
    #[arg(long = "list-hosts")]
    pub list_hosts: bool,
    /// Condense output.
    #[arg(short = 'o', long = "one-line")]
    pub one_line: bool,
    /// Log output to this directory.
    #[arg(short = 't', long = "tree", value_name = "TREE")]
    pub tree: Option<PathBuf>,
    /// Set the poll interval if using -B (default=15).
    #[arg(short = 'P', long = "poll", value_name = "POLL_INTERVAL")]
    pub poll: Option<i64>,
    /// Run asynchronously, failing after X seconds (default=N/A).
    #[arg(short = 'B', long = "background", value_name = "SECONDS")]
    pub background: Option<i64>,
    /// Set task timeout limit in seconds, must be positive integer.
    #[arg(long = "task-timeout", value_name = "TASK_TIMEOUT")]
    pub task_timeout: Option<i64>,
    /// Don't make any changes; instead, try to predict some of the changes that may occur.
    #[arg(short = 'C', long = "check")]
    pub check: bool,
    /// When changing (small) files and templates, show the differences in those files.
    #[arg(short = 'D', long = "diff")]
    pub diff: bool,
    /// Specify number of parallel processes to use (default=5).
    #[arg(short = 'f', long = "forks", value_name = "FORKS")]
    pub forks: Option<u32>,
    /// Prepend colon-separated path(s) to module library.
    #[arg(short = 'M', long = "module-path", value_name = "MODULE_PATH")]
    pub module_path: Vec<String>,
    /// Since this tool does not use playbooks, use this as a substitute playbook directory.
    #[arg(long = "playbook-dir", value_name = "BASEDIR")]
    pub playbook_dir: Option<PathBuf>,

    #[command(flatten)]
    pub connection_opts: ConnectionOpts,
    #[command(flatten)]
    pub become_opts: BecomeOpts,
}

/// `C.MODULE_REQUIRE_ARGS`: the modules that take free-form arguments and need some.
const REQUIRE_ARGS: &[&str] = &["command", "raw", "script", "shell", "win_command", "win_shell"];

/// `C.MODULE_REQUIRE_ARGS`, with the names ansible.builtin/ansible.legacy and the Windows
/// collection give them.
fn requires_args(module: &str) -> bool {
    let short =
        tack_py::ansible::short_name(module, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    if REQUIRE_ARGS.contains(&short) && short == module.rsplit('.').next().unwrap_or(module) {
        return true;
    }
    matches!(module, "ansible.windows.win_command" | "ansible.windows.win_shell")
}

/// Command-line options the engine does not honour yet, by the flag a user typed.
fn refused_options(args: &Args) -> Option<&'static str> {
    args.connection_opts.refused()
}

fn options_error(message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(message).with_class(ErrorClass::Options)
}

pub(crate) fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    if let Some(option) = refused_options(&args) {
        return Err(options_error(format!("tack adhoc does not support {option} yet")).into());
    }
    let config = crate::session::load_config(crate::session::DisplayLog::Keep)?;
    let rejected_modules = crate::plugin_filter::load(&config)?;
    // What every module process started here gets: ansible's workers' session isolation.
    tack_agent::session::set_isolation(
        config.get("WORKER_SESSION_ISOLATION").and_then(|v| v.as_bool()).unwrap_or(true),
    );
    args.verbosity.verbose = crate::session::verbosity(&config, args.verbosity.verbose);
    // `--playbook-dir`'s default is the `playbook_dir` setting, as ansible's option is.
    args.playbook_dir = crate::session::playbook_dir(&config, args.playbook_dir.take());
    if let Some(option) = refused_options(&args) {
        return Err(options_error(format!("tack adhoc does not support {option} yet")).into());
    }
    if let Some(setting) = crate::links::refused_setting(&config) {
        return Err(options_error(format!("tack adhoc does not support {setting} yet")).into());
    }
    if args.one_line {
        tack_diag::deprecate(
            &Diagnostic::new(format!("The '{}' argument is deprecated.", one_line_spelling()))
                .with_help("Use callback configuration to enable the oneline callback instead."),
            "2.23",
        );
    }
    let module =
        args.module_name.clone().unwrap_or_else(|| setting(&config, "DEFAULT_MODULE_NAME"));
    let module_args =
        args.module_args.clone().unwrap_or_else(|| setting(&config, "DEFAULT_MODULE_ARGS"));
    let verbosity = args.verbosity.verbose;
    // Held once an interrupt ends the run (`crate::interrupt`).
    let mut stdout = tack_diag::interrupt::Held(std::io::stdout().lock());
    // As ansible's CLI: its header, then the passwords it asks for, then the vault's and the
    // inventory.
    crate::cmd::playbook::header::write_adhoc(&mut stdout, &config, verbosity)?;
    let passwords = crate::links::passwords(&config, &args.connection_opts, &args.become_opts)?;
    let mut session = Session::open(
        config,
        SessionArgs {
            inventory: &args.inventory,
            vault: &args.vault,
            extra_vars: &args.extra_vars,
            basedir: args.playbook_dir.as_deref(),
            ansible_python: args.ansible_python.as_deref(),
        },
    )?;
    session.rejected_modules = rejected_modules;
    let hosts = host_list(&mut session, args.inventory.limit.as_deref(), &args.pattern)?;
    if args.list_hosts {
        writeln!(stdout, "  hosts ({}):", hosts.len())?;
        for host in &hosts {
            writeln!(stdout, "    {host}")?;
        }
        stdout.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    if requires_args(&module) && module_args.is_empty() {
        let mut err = format!("No argument passed to {module} module");
        if args.pattern.ends_with(".yml") {
            err.push_str(" (did you mean to run ansible-playbook?)");
        }
        return Err(options_error(err).into());
    }
    if tack_playbook::tables::actions::is(&module, tack_playbook::tables::actions::IMPORT_PLAYBOOK)
    {
        return Err(
            options_error(format!("'{module}' is not a valid action for ad-hoc commands")).into()
        );
    }

    let mut adhoc = AdhocTask::new(&module, &module_args, requires_args(&module))?;
    // `-B`/`-P` become the task's `async`/`poll` (ansible adds them when either is set, and
    // the poll interval always is: the `poll_interval` setting, 15 by default).
    adhoc.background = args.background.unwrap_or(0);
    let configured = session.config.get("DEFAULT_POLL_INTERVAL").and_then(|v| v.as_int());
    adhoc.poll = args.poll.or(configured).unwrap_or(DEFAULT_POLL_INTERVAL);
    // `--task-timeout` is the task's `timeout` keyword (0, ansible's default, is none).
    adhoc.timeout = args.task_timeout.unwrap_or(0);
    if args.tree.is_some() {
        tack_diag::deprecate(
            &Diagnostic::new("The '--tree' argument is deprecated.")
                .with_help("Use callback configuration to enable the tree callback instead."),
            "2.23",
        );
    }
    let options = tack_playbook::LoadOptions {
        verbosity: args.verbosity.verbose,
        ..session.load_options(&args.module_path)
    };
    let loader = Loader::new(&session.loader, &options);
    let basedir = match &args.playbook_dir {
        Some(dir) => tack_py::ansible::unfrackpath(dir, false, None),
        None => std::env::current_dir()?,
    };
    // ansible's ad-hoc command searches a directory's `library/` only when named.
    if args.playbook_dir.is_some() {
        loader.add_playbook_dir(&basedir);
    }
    let cache_plugin_dirs: Vec<PathBuf> =
        args.playbook_dir.iter().map(|_| basedir.clone()).collect();
    let playbook = loader.load_play_data(&adhoc.play(&args.pattern), &basedir)?;
    let playbooks = vec![playbook];
    super::python_path::configure(args.ansible_python.as_deref(), &session, false)?;
    tack_engine::check(&playbooks)?;
    if args.tree.is_some() {
        tack_diag::deprecate(
            &Diagnostic::about_value(
                "tree has been deprecated. Use another callback plugin, or vendor and/or move \
                 the tree callback to a collection.",
                "tree",
            ),
            "2.23",
        );
    }
    let layout = stdout_layout(&args, &session.config)?;
    if layout == Layout::OneLine {
        let mut deprecation = Diagnostic::about_value(
            "oneline has been deprecated. Use another callback plugin, or vendor and/or move \
             the oneline callback to a collection.",
            "oneline",
        );
        // Chosen by the configuration, the name carries where it was set.
        if !args.one_line
            && let Some(origin) = session.config.origin("DEFAULT_STDOUT_CALLBACK")
        {
            deprecation.origin =
                Some(tack_diag::Origin::described(format!("<Config {}>", origin.label())));
        }
        tack_diag::deprecate(&deprecation, "2.23");
    }

    // The templar decrypts inline `!vault` values with the run's secrets (its loader is
    // otherwise the default one, as before).
    let templar = Templar::with_loader(std::sync::Arc::new(tack_loader::DataLoader::new(
        session.loader.secrets().clone(),
    )));
    let tags = TagFilter::from_cli(&[], &[]);
    let opener = crate::links::AgentOpener::new(args.verbosity.verbose);
    let links = tack_links::Links::new(&opener);
    let ctx = RunContext {
        inventory: &session.inventory,
        loader: &session.loader,
        templar: &templar,
        extra_vars: &session.extra_vars,
        tags: &tags,
        tasks: &loader,
        facts: RunFacts {
            external_strategies: crate::strategies::external(&session.config, &loader, &playbooks),
            check_mode: args.check,
            // An ad-hoc task notifies no handler.
            warn_on_missing_handler: false,
            play_context_vars: crate::links::play_context_vars(&session.config),
            plan: false,
            diff_mode: args.diff,
            diff: tack_report::callback::diff::DiffSettings {
                context: usize::try_from(session.config.diff_context()).unwrap_or(0),
                max_size: session.config.max_file_size_for_diff(),
                local_tmp: session.config.local_tmp(),
            },
            forks: i64::from(args.forks.unwrap_or(5)),
            verbosity: i64::from(args.verbosity.verbose),
            run_tags: Vec::new(),
            skip_tags: Vec::new(),
            // The ad hoc play says `gather_facts: no`, which every `gathering` mode obeys.
            gathering: tack_engine::Gathering::default(),
            no_log: crate::cmd::playbook::cliargs::setting_flag(&session.config, "DEFAULT_NO_LOG"),
            inventory_sources: session.inventory.sources().to_vec(),
            config_file: session.config.config_file().map(|p| p.to_path_buf()),
            playbook_python: crate::cmd::python_path::playbook_python(
                args.ansible_python.as_deref(),
            ),
            limit: args.inventory.limit.clone(),
            async_dir: session.config.async_dir().unwrap_or_default(),
            python_module_rlimit_nofile: session.config.python_module_rlimit_nofile(),
            inject_invocation: session.config.inject_invocation(),
            result_connections: false,
            default_strategy: session.config.strategy().map(str::to_string),
            any_errors_fatal: session.config.any_errors_fatal(),
            poll_interval: session.config.get("DEFAULT_POLL_INTERVAL").and_then(|v| v.as_int()),
            inject_facts: session.config.inject_facts_as_vars(),
            // ansible writes retry files for playbooks only.
            retry_files: None,
            ssh: crate::links::link_defaults(
                &session.config,
                &args.connection_opts,
                &args.become_opts,
                passwords,
            )?,
            interpreter: crate::links::interpreter_settings(&session.config),
        },
        start_at: None,
        force_handlers: false,
        links: &links,
        pending: Default::default(),
        fact_cache: crate::links::fact_cache(
            &session.config,
            &session.inventory,
            args.inventory.flush_cache,
            false,
            &cache_plugin_dirs,
        )?,
    };
    crate::cmd::playbook::verbose::inventory_notes(&mut stdout, &session, verbosity, None)?;
    // Made for the log too when it keeps more (`log_verbosity`).
    let noted = tack_diag::display_log::noted_verbosity(verbosity);
    if noted >= 2 {
        // `display.vv` and kin: shown (and logged) from their level, logged once more when
        // `log_verbosity` reaches it.
        let mut say = |level: u8, line: String| -> std::io::Result<()> {
            if tack_diag::display_log::verbose_shown(level, verbosity, &line) {
                writeln!(stdout, "{line}")?;
            }
            Ok(())
        };
        // The callback loader's notes: every stdout callback but the one in use, by name.
        let used = if layout == Layout::OneLine { "oneline" } else { "minimal" };
        if verbosity >= 4 {
            // ansible names its Python file; tack names its own binary (see
            // `playbook::verbose::extras`). `CallbackBase.__init__` asks its display's
            // verbosity first: never logged only.
            let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default();
            say(
                4,
                format!(
                    "Loading callback plugin {used} of type stdout, v2.0 from {exe} (built in)"
                ),
            )?;
        }
        // The callback plugins the loader tries (named from `-vvvvv`), passing over the
        // other stdout callbacks.
        let names: Vec<String> = if noted >= 5 {
            let dirs: Vec<PathBuf> = args.playbook_dir.iter().map(|_| basedir.clone()).collect();
            crate::cmd::playbook::callback::attempted_callbacks(&session.config, &dirs, used)
        } else {
            ["default", "minimal", "oneline"].into_iter().map(str::to_string).collect()
        };
        for name in names.iter().filter(|n| *n != used) {
            say(5, format!("Attempting to use '{name}' callback."))?;
            if matches!(name.as_str(), "default" | "minimal" | "oneline") {
                say(
                    2,
                    format!("Skipping callback '{name}', as we already have a stdout callback."),
                )?;
            }
        }
    }
    let mut callback =
        MinimalCallback::new(stdout, layout, args.verbosity.verbose).with_origin(AdhocOrigin {
            description: adhoc.description(),
            module: adhoc.module.clone(),
            repr: adhoc.repr(),
        });
    callback = callback.with_palette(crate::color::palette(&session.config)?);
    if let Some(dir) = &args.tree {
        let dir = tack_py::ansible::unfrackpath(dir, false, None);
        callback = callback.with_tree(TreeWriter::new(dir, args.verbosity.verbose));
    }
    if args.diff {
        callback = callback.with_diffs(usize::try_from(session.config.diff_context()).unwrap_or(0));
    }
    let status = tack_engine::run(&ctx, &playbooks, &mut callback)?;
    tack_actions::python_actions::shutdown();
    tack_actions::python_connection::shutdown();
    Ok(ExitCode::from(status.exit_code()))
}

/// How `-o` was typed: ansible's notice names the option as the command line spelled it.
/// The stdout callback of an ad hoc run, as ansible's `adhoc` picks it: `oneline` for `-o`,
/// else the configured `stdout_callback` when `bin_ansible_callbacks` lets ad hoc runs load
/// callbacks (and it is not `default`), else `minimal`. A callback ansible-core does not ship
/// is ansible's load error; with callbacks loaded, `callbacks_enabled` would run too, and is
/// refused by name.
fn stdout_layout(args: &Args, config: &tack_config::Config) -> Result<Layout, Diagnostic> {
    if args.one_line {
        return Ok(Layout::OneLine);
    }
    let loads = config.get("DEFAULT_LOAD_CALLBACK_PLUGINS").and_then(|v| v.as_bool()) == Some(true);
    if !loads {
        return Ok(Layout::Minimal);
    }
    if let Some(name) = config.callbacks_enabled().first() {
        return Err(options_error(format!(
            "tack adhoc does not support the callback plugin '{name}' (callbacks_enabled) yet"
        )));
    }
    let Some(name) = config.stdout_callback() else { return Ok(Layout::Minimal) };
    match tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::Builtin) {
        "default" | "minimal" => Ok(Layout::Minimal),
        "oneline" => Ok(Layout::OneLine),
        _ => Err(Diagnostic::new(format!("Could not load '{name}' callback plugin."))),
    }
}

fn one_line_spelling() -> &'static str {
    let long =
        std::env::args().skip(1).any(|a| a.len() > 2 && "--one-line".starts_with(a.as_str()));
    if long { "--one-line" } else { "-o" }
}

fn setting(config: &tack_config::Config, name: &str) -> String {
    config.get(name).and_then(|v| v.as_str()).map(str::to_string).unwrap_or_default()
}

/// `CLI.get_host_list` as the ad-hoc command uses it: a pattern that matches nothing (or fails,
/// as `host_pattern_mismatch = error` makes it) is a warning, unless `--limit` was given.
fn host_list(
    session: &mut Session,
    limit: Option<&str>,
    pattern: &str,
) -> Result<Vec<String>, Diagnostic> {
    let empty = session.inventory.select("all")?.is_empty();
    // `C.LOCALHOST`: a pattern naming the implicit localhost itself is not warned about.
    let implicit = ["127.0.0.1", "localhost", "::1"].contains(&pattern);
    if empty && !implicit && session.config.localhost_warning() {
        tack_diag::warn(&Diagnostic::new(
            "provided hosts list is empty, only localhost is available. Note that the implicit \
             localhost does not match 'all'",
        ));
    }
    session.inventory.restrict_to(limit)?;
    let selected = match session.inventory.select(pattern) {
        Ok(selected) => selected,
        // ansible's ad-hoc command catches the pattern's error (`host_pattern_mismatch =
        // error`) unless `--limit` was given: nothing matched, and it goes on.
        Err(_) if limit.is_none() => {
            tack_diag::warn(&Diagnostic::new("No hosts matched, nothing to do"));
            return Ok(Vec::new());
        }
        Err(e) => return Err(e),
    };
    let data = session.inventory.data();
    let hosts: Vec<String> = selected.into_iter().map(|h| data.host(h).name.clone()).collect();
    if hosts.is_empty() && !empty {
        if limit.is_some() {
            return Err(Diagnostic::new(
                "Specified inventory, host pattern and/or --limit leaves us with no hosts to \
                 target.",
            ));
        }
        tack_diag::warn(&Diagnostic::new("No hosts matched, nothing to do"));
    }
    Ok(hosts)
}

/// The one task ansible's `_play_ds` builds: the module and its arguments (a JSON object when
/// `-a` is one, else `k=v` pairs, free-form text kept for the modules that take it).
struct AdhocTask {
    module: String,
    args: Mapping,
    /// `-B`: seconds the job may run in the background (0: not in the background).
    background: i64,
    /// `-P`: seconds between polls of a background job (0: not polled).
    poll: i64,
    /// `--task-timeout`: the task's `timeout` (0: none).
    timeout: i64,
}

/// `C.DEFAULT_POLL_INTERVAL`.
const DEFAULT_POLL_INTERVAL: i64 = 15;

impl AdhocTask {
    fn new(module: &str, raw: &str, check_raw: bool) -> Result<AdhocTask, Diagnostic> {
        let cli_a = Origin::described("<CLI option '-a'>");
        let mut args = Mapping::new();
        if raw.starts_with('{')
            && raw.ends_with('}')
            && let Ok(node) = tack_loader::json::parse(raw, Some(&cli_a))
            && let Value::Map(map) = node.value
        {
            args = map;
        }
        if args.is_empty() {
            let pairs = tack_loader::kv::parse_kv(raw, check_raw)
                .map_err(|e| options_error(e.to_string()))?;
            for (k, v) in pairs {
                args.insert(
                    Node::new(Value::Str(k), Some(cli_a.clone())),
                    Node::new(Value::Str(v), Some(cli_a.clone())),
                );
            }
        }
        Ok(AdhocTask {
            module: module.to_string(),
            args,
            background: 0,
            poll: DEFAULT_POLL_INTERVAL,
            timeout: 0,
        })
    }

    fn description(&self) -> String {
        format!("<adhoc {} task>", tack_py::repr::str_repr(&self.module))
    }

    /// The task's data as Python's `repr()` shows it in error blocks, with what ansible adds
    /// (`timeout`, and `async_val`/`poll` when either is set).
    fn repr(&self) -> String {
        let mut map = Mapping::new();
        let str_node = |s: &str| Node::bare(Value::Str(s.to_string()));
        map.insert(str_node("action"), str_node(&self.module));
        map.insert(str_node("args"), Node::bare(Value::Map(self.args.clone())));
        map.insert(str_node("timeout"), Node::bare(Value::Int(self.timeout)));
        if self.adds_async() {
            map.insert(str_node("async_val"), Node::bare(Value::Int(self.background)));
            map.insert(str_node("poll"), Node::bare(Value::Int(self.poll)));
        }
        tack_yaml::pyrepr::repr(&Value::Map(map))
    }

    /// Whether `_play_ds` gives the task `async_val` and `poll`: not for includes, and only
    /// when one of them is set.
    fn adds_async(&self) -> bool {
        use tack_playbook::tables::actions::{INCLUDE_ROLE, INCLUDE_TASKS, is};
        !is(&self.module, INCLUDE_ROLE)
            && !is(&self.module, INCLUDE_TASKS)
            && (self.background != 0 || self.poll != 0)
    }

    /// The play `_play_ds` builds around the task.
    fn play(&self, pattern: &str) -> Node {
        let origin = Some(Origin::described(self.description()));
        let key = |s: &str| Node::new(Value::Str(s.to_string()), origin.clone());
        let mut task = Mapping::new();
        task.insert(
            key("action"),
            Node::new(
                Value::Str(self.module.clone()),
                Some(Origin::described("<CLI option '-m'>")),
            ),
        );
        task.insert(key("args"), Node::new(Value::Map(self.args.clone()), origin.clone()));
        // Only a job in the background changes how the task runs; a bare `-P` is shown in the
        // task's data but, as in ansible, does nothing.
        if self.adds_async() && self.background != 0 {
            task.insert(key("async"), Node::new(Value::Int(self.background), origin.clone()));
            task.insert(key("poll"), Node::new(Value::Int(self.poll), origin.clone()));
        }
        if self.timeout != 0 {
            task.insert(key("timeout"), Node::new(Value::Int(self.timeout), origin.clone()));
        }
        let mut play = Mapping::new();
        play.insert(key("name"), key("Ansible Ad-Hoc"));
        play.insert(key("hosts"), key(pattern));
        play.insert(key("gather_facts"), key("no"));
        play.insert(
            key("tasks"),
            Node::new(Value::Seq(vec![Node::new(Value::Map(task), origin.clone())]), None),
        );
        Node::new(Value::Map(play), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_that_need_arguments() {
        assert!(requires_args("command"));
        assert!(requires_args("ansible.builtin.shell"));
        assert!(requires_args("ansible.windows.win_shell"));
        assert!(!requires_args("ping"));
        assert!(!requires_args("community.general.shell"));
    }

    #[test]
    fn task_repr_is_pythons() {
        let task = AdhocTask::new("command", "echo 'a b'", true).unwrap();
        assert_eq!(
            task.repr(),
            "{'action': 'command', 'args': {'_raw_params': \"echo 'a b'\"}, 'timeout': 0, \
             'async_val': 0, 'poll': 15}"
        );
        assert_eq!(task.description(), "<adhoc 'command' task>");
    }
}
