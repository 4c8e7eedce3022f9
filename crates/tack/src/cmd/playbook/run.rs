//! Running plays: loads every playbook, refuses what the engine does not run yet (options
//! here, keywords and actions in `tack_engine::check`) before any play starts, then runs them
//! with the default callback on stdout.

use std::process::ExitCode;

use tack_actions::python_callbacks::WithPythonCallbacks;
use tack_diag::Diagnostic;
use tack_engine::{RunContext, RunFacts};
use tack_playbook::Loader;
use tack_playbook::tags::TagFilter;
use tack_report::callback::default::DefaultCallback;
use tack_template::Templar;

use super::Args;
use crate::session::Session;

/// Command-line options the engine does not honour yet, by the flag a user typed.
pub(super) fn refused_options(args: &Args, mode: super::Mode) -> Option<&'static str> {
    let json = mode == super::Mode::Plan(crate::cmd::plan::Format::Json);
    let checks: [(bool, &'static str); 2] = [
        (json && args.events.is_some(), "--events with --format json"),
        (json && args.record.is_some(), "--record with --format json"),
    ];
    checks
        .into_iter()
        .find(|(used, _)| *used)
        .map(|(_, name)| name)
        .or_else(|| args.connection_opts.refused())
}

pub(super) fn run(
    args: &Args,
    session: &Session,
    passwords: crate::links::Passwords,
    mode: super::Mode,
) -> anyhow::Result<ExitCode> {
    let plan = matches!(mode, super::Mode::Plan(_));
    let options = tack_playbook::LoadOptions {
        verbosity: args.verbosity.verbose,
        ..session.load_options(&args.module_path)
    };
    // The controller's ansible-core is named before loading (found only when first needed):
    // a collection the loader does not find elsewhere is looked for on its `sys.path`.
    crate::cmd::python_path::configure(args.ansible_python.as_deref(), session, plan)?;
    tack_actions::python_path::keep_new_payloads(!plan);
    let loader = Loader::new(&session.loader, &options);
    // The playbooks' own directories, whose plugin subdirectories ansible searches.
    let mut playbook_dirs = Vec::new();
    for path in &args.playbooks {
        // A collection's playbook (`ns.col.pb`) adds no directory of its own.
        if loader.collection_playbook(path).is_some() {
            continue;
        }
        let cwd = std::env::current_dir()?;
        let dir =
            tack_py::path::normpath(&cwd.join(path)).parent().map(std::path::Path::to_path_buf);
        if let Some(dir) = dir {
            loader.add_playbook_dir(&dir);
            playbook_dirs.push(dir);
        }
    }
    let mut playbooks = Vec::new();
    for path in &args.playbooks {
        playbooks.push(loader.load_playbook(path)?);
    }
    if let Some(setting) = crate::links::refused_playbook_vars_root(&session.config, &playbooks) {
        return Err(Diagnostic::new(format!("tack playbook does not support {setting} yet")).into());
    }
    // ansible loads its callbacks once the playbooks are loaded, before anything runs.
    let mut callback_options = super::callback::options(&session.config)?;
    callback_options.dry_run = args.check;
    // A plan reports with tack's own callbacks alone.
    let python_callbacks = (!plan)
        .then(|| {
            super::callback::python_callbacks(
                &session.config,
                &args.playbooks,
                args.verbosity.verbose,
                &session.extra_vars,
            )
        })
        .flatten();
    tack_engine::check(&playbooks)?;
    // What the display log keeps counts too (`log_verbosity`).
    let noted = tack_diag::display_log::noted_verbosity(args.verbosity.verbose);
    tack_engine::check_verbosity(&playbooks, noted, session.config.strategy())?;
    let extras = super::verbose::extras(args, session);

    // The templar decrypts inline `!vault` values with the run's secrets (its loader is
    // otherwise the default one, as before).
    let data_loader =
        std::sync::Arc::new(tack_loader::DataLoader::new(session.loader.secrets().clone()));
    let templar = Templar::with_plugins(
        data_loader,
        super::plugins::worker(&loader, session, &args.playbooks)?,
    );
    super::callback::options_from_extra_vars(&mut callback_options, &session.extra_vars, &templar)?;
    let tags = TagFilter::from_cli(&args.tags, &args.skip_tags);
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
            check_mode: args.check || plan,
            play_context_vars: crate::links::play_context_vars(&session.config),
            warn_on_missing_handler: session
                .config
                .get("ERROR_ON_MISSING_HANDLER")
                .and_then(|v| v.as_bool())
                == Some(false),
            plan,
            diff_mode: args.diff || session.config.diff_always(),
            diff: tack_report::callback::diff::DiffSettings {
                context: usize::try_from(session.config.diff_context()).unwrap_or(0),
                max_size: session.config.max_file_size_for_diff(),
                local_tmp: session.config.local_tmp(),
            },
            forks: i64::from(args.forks.unwrap_or(5)),
            verbosity: i64::from(args.verbosity.verbose),
            run_tags: args.tags.clone(),
            skip_tags: args.skip_tags.clone(),
            inventory_sources: session.inventory.sources().to_vec(),
            config_file: session.config.config_file().map(|p| p.to_path_buf()),
            playbook_python: crate::cmd::python_path::playbook_python(
                args.ansible_python.as_deref(),
            ),
            limit: args.inventory.limit.clone(),
            no_log: super::cliargs::setting_flag(&session.config, "DEFAULT_NO_LOG"),
            gathering: match session.config.gathering() {
                tack_config::Gathering::Implicit => tack_engine::Gathering::Implicit,
                tack_config::Gathering::Explicit => tack_engine::Gathering::Explicit,
                tack_config::Gathering::Smart => tack_engine::Gathering::Smart,
            },
            async_dir: session.config.async_dir().unwrap_or_default(),
            python_module_rlimit_nofile: session.config.python_module_rlimit_nofile(),
            inject_invocation: session.config.inject_invocation(),
            result_connections: python_callbacks.is_some(),
            default_strategy: session.config.strategy().map(str::to_string),
            any_errors_fatal: session.config.any_errors_fatal(),
            poll_interval: session.config.get("DEFAULT_POLL_INTERVAL").and_then(|v| v.as_int()),
            inject_facts: session.config.inject_facts_as_vars(),
            retry_files: session
                .config
                .retry_files_enabled()
                .then(|| session.config.retry_files_save_path()),
            ssh: crate::links::link_defaults(
                &session.config,
                &args.connection_opts,
                &args.become_opts,
                passwords,
            )?,
            interpreter: crate::links::interpreter_settings(&session.config),
        },
        start_at: args.start_at_task.as_deref().map(tack_engine::StartAt::new),
        // `ANSIBLE_FORCE_HANDLERS` and `[defaults] force_handlers` are the flag's default.
        force_handlers: args.force_handlers
            || super::cliargs::setting_flag(&session.config, "DEFAULT_FORCE_HANDLERS"),
        links: &links,
        pending: Default::default(),
        fact_cache: crate::links::fact_cache(
            &session.config,
            &session.inventory,
            args.inventory.flush_cache,
            plan,
            &playbook_dirs,
        )?,
    };
    let palette = crate::color::palette(&session.config)?;
    // Held once an interrupt ends the run (`crate::interrupt`).
    let mut stdout = tack_diag::interrupt::Held(std::io::stdout().lock());
    if mode == super::Mode::Plan(crate::cmd::plan::Format::Json) {
        let mut callback = tack_report::callback::plan_json::PlanJson::new();
        let status = tack_engine::run(&ctx, &playbooks, &mut callback)?;
        use std::io::Write;
        stdout.write_all(callback.document_text().as_bytes())?;
        return Ok(ExitCode::from(status.exit_code()));
    }
    super::verbose::inventory_notes(
        &mut stdout,
        session,
        args.verbosity.verbose,
        palette.as_ref(),
    )?;
    let context = usize::try_from(session.config.diff_context()).unwrap_or(0);
    let served = std::env::var_os(tack_server::runner::RUN_ENV).is_some();
    let sinks = if args.events.is_none() && args.record.is_none() && !served {
        None
    } else {
        let mode = if plan {
            "plan"
        } else if args.check {
            "check"
        } else {
            "apply"
        };
        Some(super::events::Sinks::open(
            args.events.as_deref(),
            args.record.as_deref(),
            mode,
            &args.playbooks,
        )?)
    };
    // A recorded run keeps what it prints (`Sinks::transcript`).
    let printed = super::events::Printed {
        out: stdout,
        copy: sinks.as_ref().and_then(super::events::Sinks::transcript),
    };
    let callback = DefaultCallback::new(printed, crate::color::columns())
        .with_options(callback_options)
        .with_verbosity(args.verbosity.verbose)
        .with_palette(palette)
        .with_diff_context(context)
        .with_custom_stats(session.config.show_custom_stats())
        .with_verbose_extras(extras)
        .with_plan(plan);
    let callback =
        crate::progress::Progress::new(callback, crate::progress::enabled(&session.config));
    // The other callback plugins run after the stdout callback, for every event.
    let callback = match python_callbacks {
        Some(setup) => WithPythonCallbacks::new(callback, &setup)
            .map_err(|e| Diagnostic::new(e.to_string()))?,
        None => WithPythonCallbacks::none(callback),
    };
    let status = match sinks {
        None => tack_engine::run(&ctx, &playbooks, &mut { callback })?,
        Some(sinks) => sinks.run(&ctx, &playbooks, callback)?,
    };
    // Nothing the run started outlives it: its action plugin workers end now.
    tack_actions::python_actions::shutdown();
    tack_actions::python_connection::shutdown();
    if let Some(start) = ctx.start_at.as_ref().filter(|s| !s.found() && !s.pattern.is_empty()) {
        // ansible reports it after the recap, and the exit code stays the run's.
        use std::io::Write;
        let diag = Diagnostic::new(format!(
            "No matching task \"{}\" found. Note: --start-at-task can only follow static includes.",
            start.pattern
        ));
        let mut stderr = std::io::stderr().lock();
        let text = diag.render();
        tack_diag::display_log::record(tack_diag::display_log::Level::Error, &text);
        stderr.write_all(text.as_bytes())?;
    }
    Ok(ExitCode::from(status.exit_code()))
}
