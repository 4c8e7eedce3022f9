//! One play as ansible-core 2.21 runs it: its hosts in `order`, cut into `serial` batches
//! (`batches`), each batch run as one task-queue-manager run (its own PLAY banner, fact
//! gathering, handlers) under the play's strategy (`linear`, or `free` and `host_pinned` in
//! `strategy_free`), then what the batch leaves for later plays and batches. When every
//! host of a batch failed, the playbook stops.

pub(crate) mod batch;
pub(crate) mod batches;
pub(crate) mod cursor;
pub(crate) mod env;
pub(crate) mod fanout;
pub(crate) mod fatal;
pub(crate) mod force_handlers;
pub(crate) mod forks;
pub(crate) mod gather;
pub(crate) mod setup_task;
pub(crate) mod start_at;
pub(crate) mod walk;

use std::collections::{BTreeMap, BTreeSet};

use typed_arena::Arena;

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_playbook::compile::{CompiledBlock, compile_play};
use tack_playbook::listing::task_tags;
use tack_playbook::play_vars::{play_basedir, play_var_layers};
use tack_playbook::post_validate::{PlayKeywords, post_validate_play};
use tack_playbook::tables::Keyword;
use tack_playbook::walk::{Sections, walk};

use tack_report::callback::{Callback, Stats};

use crate::context::{HostState, RunContext};
use crate::handlers::{Handlers, handler_blocks};
use crate::play::batch::{BatchEnd, BatchState};
use crate::play::env::{PlayEnv, PlayShared};
use crate::play::walk::{Segment, Walk};
use crate::strategy::Strategy;
use crate::task::reading::is_meta;
use crate::vars::PlayScope;

/// How a play ended for the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlayEnd {
    Continue,
    /// Every host the play started with failed: ansible stops the playbook.
    AllFailed,
    /// `max_fail_percentage` was passed: ansible stops the playbook, and its exit code is the
    /// failed hosts' (2) whatever else happened.
    MaxFail,
}

/// Whether the play's implicit fact gathering may run at all, as the `gathering` setting
/// reads the play's `gather_facts` (`PlayIterator`'s setup state); under `smart`, each host
/// is then asked whether it gathered already (`gather::gathers_on`).
fn gathers_facts(run: &RunContext<'_>, keywords: &PlayKeywords) -> bool {
    let written = keywords.get(Keyword::GatherFacts).map(|v| v.value.is_truthy());
    match run.facts.gathering {
        crate::context::Gathering::Implicit | crate::context::Gathering::Smart => {
            written.unwrap_or(true)
        }
        crate::context::Gathering::Explicit => written.unwrap_or(false),
    }
}

/// Runs `play`, updating each host's state and the recap: its hosts in `order`, cut into
/// `serial` batches, each batch run as ansible's task queue manager runs one.
pub(crate) fn run_play(
    run: &RunContext<'_>,
    play: &Play,
    live: &tack_inventory::live::LiveInventory,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    states: &mut BTreeMap<String, HostState>,
) -> Result<PlayEnd, Diagnostic> {
    let templar = run.templar;
    let layers = play_var_layers(play, run.extra_vars, run.loader, templar)?;
    let mut vars = layers.role_defaults.clone();
    for (k, v) in layers.vars.iter() {
        vars.insert(k.clone(), v.clone());
    }
    crate::vars::reserved::warn_play(play, &layers.role_defaults, &layers.vars);
    let reads = crate::vars::read_notes::ReadNotes::new(
        &layers.read_notes,
        crate::verbose::noted(run.facts.verbosity),
        run.facts.forks,
    );
    let keywords = post_validate_play(play, &vars, templar, run.loader)?;
    if let Some(refused) = crate::refuse::unknown_strategy(
        play,
        keywords.get(Keyword::Strategy),
        &run.facts.external_strategies,
    ) {
        return Err(refused);
    }
    // `Play.get_name`: an empty name shows the hosts pattern.
    let name = if keywords.name.trim().is_empty() {
        keywords.hosts.join(",")
    } else {
        keywords.name.clone()
    };
    let inventory = live.current();
    let data = inventory.data();
    // `get_hosts` splits each entry of the play's list (`web:db`, `a,b`).
    let terms: Vec<String> = keywords
        .hosts
        .iter()
        .flat_map(|h| tack_inventory::pattern::split_host_pattern(h))
        .collect();
    // Hosts that failed in earlier plays stay in the play's lists and batches (ansible
    // counts them there), but run nothing.
    let selected: Vec<String> =
        inventory.select_terms(&terms)?.into_iter().map(|h| data.host(h).name.clone()).collect();
    // What a `clear_host_errors` cleared of an earlier play's unreachable host lasted to the
    // end of its play.
    for state in states.values_mut() {
        state.unreachable |= state.unreachable_before;
    }
    let failed_before: BTreeSet<String> =
        selected.iter().filter(|h| states.get(*h).is_some_and(HostState::out)).cloned().collect();
    // A host a rescued include failure left among ansible's failed hosts is failed in every
    // later play that runs (its iterator marks it so): the run ends failed once such a play
    // has hosts to run.
    if failed_before.len() < selected.len() {
        for host in &failed_before {
            if let Some(state) = states.get_mut(host)
                && state.excluded
            {
                state.failed = true;
            }
        }
    }
    let hosts = crate::play::batches::order_hosts(selected.clone(), keywords.get(Keyword::Order))?;
    if hosts.is_empty() {
        // The playbook executor's two gatherings (vars_prompt, post-validation).
        reads.show_times(callback, 2);
        callback.play_check_mode(crate::play::gather::play_check_mode(
            play,
            run.facts.check_mode || run.facts.plan,
        ));
        callback.play_start(&name);
        callback.no_hosts_matched();
        return Ok(PlayEnd::Continue);
    }
    let batches = crate::play::batches::serialize(&hosts, keywords.get(Keyword::Serial))?;
    let scope = PlayScope::new(
        &inventory,
        run.loader,
        &layers.role_defaults,
        &layers.vars,
        run.extra_vars,
        &play_basedir(play),
        &name,
        &run.facts,
        run.fact_cache.clone(),
    )?;
    scope.defer_vars_files(layers.deferred.clone(), play_basedir(play), templar);
    // Tasks change the inventory from here on (`add_host`, `group_by`).
    drop(inventory);

    let arena: Arena<Vec<CompiledBlock>> = Arena::new();
    let plays: Arena<Play> = Arena::new();
    let force =
        keywords.get(Keyword::ForceHandlers).map_or(run.force_handlers, |n| n.value.is_truthy());
    let blocks = compile_play(play);
    let blocks = if force { crate::play::force_handlers::wrap(blocks) } else { blocks };
    let compiled: &[CompiledBlock] = arena.alloc(blocks);
    let play_segment = Segment::new(play, compiled, None, |ctx| {
        Ok((ctx.task.implicit && is_meta(ctx))
            || run.tags.should_run(&task_tags(ctx, &vars, templar)?))
    })?;
    // `validate_argspec`: its task, under the same tag selection as the play's own.
    let check = match &keywords.argspec {
        Some(spec) => {
            let block = tack_playbook::play_argspec::validation_block(spec, play);
            let blocks: &[CompiledBlock] = arena.alloc(vec![block]);
            Some(Segment::new(play, blocks, None, |ctx| {
                Ok(run.tags.should_run(&task_tags(ctx, &vars, templar)?))
            })?)
        }
        None => None,
    };
    // The implicit gathering runs under the tag selection too (tagged `always`, or the
    // play's own tags).
    let gather = gathers_facts(run, &keywords)
        && run.tags.should_run(&tack_playbook::listing::setup_tags(play, &vars, templar)?);
    // A host that gathers with modules other than `setup` (`ansible_facts_modules`): the
    // play gathers through the `gather_facts` action, as a task.
    let gathering = if gather
        && hosts.iter().any(|h| crate::play::gather::asks_other_fact_modules(&scope, templar, h))
    {
        let mut args = tack_yaml::Mapping::new();
        for keyword in [Keyword::GatherSubset, Keyword::GatherTimeout, Keyword::FactPath] {
            if let Some(value) = keywords.get(keyword) {
                args.insert(tack_report::result::s(keyword.as_str()), value.clone());
            }
        }
        let block = tack_playbook::setup_block::setup_task_block(
            play,
            "Gathering Facts",
            "ansible.builtin.gather_facts",
            args,
        );
        let blocks: &[CompiledBlock] = arena.alloc(vec![block]);
        Some(Segment::new(play, blocks, None, |_| Ok(true))?)
    } else {
        None
    };
    let handler_blocks = handler_blocks(play);
    let shared = PlayShared {
        run,
        live,
        scope: scope.clone(),
        vars: &vars,
        play,
        all_hosts: selected.clone(),
        max_fail: crate::play::batches::max_fail_fraction(keywords.get(Keyword::MaxFailPercentage)),
        free: Strategy::of(&keywords, &run.facts).is_free(),
        blocks: &arena,
        plays: &plays,
        reads: reads.clone(),
    };
    {
        let all = PlayEnv::new(&shared, hosts.clone());
        let handlers =
            Handlers::new(play, walk(play, &handler_blocks, Sections::All), templar, &vars);
        let tasks = play_segment.tasks.iter().chain(handlers.list.iter().map(|h| &h.ctx));
        all.check_connections(tasks)?;
    }
    // Every host's variables from earlier plays, this play's or not (`hostvars` sees them),
    // and the facts the cache holds.
    scope.load_cached_facts(&hosts)?;
    for (host, state) in states.iter() {
        scope.carry_in(host, state.set_facts.clone(), state.included_vars.clone());
    }
    let mut removed = failed_before.clone();
    let batch_count = batches.len();
    for (n, batch) in batches.into_iter().enumerate() {
        let env = PlayEnv::new(&shared, batch);
        let mut handlers =
            Handlers::new(play, walk(play, &handler_blocks, Sections::All), templar, &vars);
        handlers.warn_on_missing = run.facts.warn_on_missing_handler;
        let running: Vec<String> =
            env.hosts.iter().filter(|h| !failed_before.contains(*h)).cloned().collect();
        let walk = Walk::new(play_segment.clone(), &running);
        // The task queue manager's gathering for the batch, after the executor's two.
        reads.show_times(callback, if n == 0 { 3 } else { 1 });
        callback.batch_start(n + 1, batch_count);
        callback.play_check_mode(crate::play::gather::play_check_mode(
            play,
            run.facts.check_mode || run.facts.plan,
        ));
        callback.play_start(&name);
        Strategy::deprecate_plugin(&keywords, &run.facts);
        if running.is_empty() {
            continue;
        }
        let mut state = BatchState::new(removed);
        let setup = Setup { gather, gathering: gathering.clone(), check: check.clone() };
        let batch = Batch { walk, handlers, setup };
        let end = run_batch(&env, &mut state, &keywords, batch, callback, stats, states);
        removed = state.removed;
        match end? {
            BatchEnd::Done => {}
            BatchEnd::EndPlay => break,
            BatchEnd::Stop => return Ok(PlayEnd::AllFailed),
            BatchEnd::MaxFail => return Ok(PlayEnd::MaxFail),
        }
    }
    Ok(PlayEnd::Continue)
}

/// One batch under the play's strategy: from `--start-at-task`'s task when it has not been
/// reached yet, its facts gathered, its rounds, and what it leaves behind.
fn run_batch<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    keywords: &PlayKeywords,
    batch: Batch<'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    states: &mut BTreeMap<String, HostState>,
) -> Result<BatchEnd, Diagnostic> {
    let Batch { mut walk, mut handlers, setup } = batch;
    let Setup { gather, gathering, check } = setup;
    env.update_play_hosts(state, &walk.cursors);
    if let Some(start) = env.run.start_at.as_ref().filter(|s| !s.found())
        && !start.seek(env.play(), &mut walk)
    {
        return Ok(BatchEnd::Done);
    }
    let strategy = Strategy::of(keywords, &env.run.facts);
    if strategy.is_free() {
        if check.is_some() {
            return Err(Diagnostic::at(
                "tack does not support 'validate_argspec' with the 'free' or 'host_pinned' \
                 strategy yet",
                env.play().origin.clone(),
            ));
        }
        let pinned = strategy == Strategy::HostPinned;
        let gather = gather.then_some(keywords);
        let end = crate::strategy::free::run_batch_free(
            env,
            state,
            pinned,
            gather,
            &mut walk,
            &mut handlers,
            callback,
            stats,
            states,
        )?;
        return Ok(finish_batch(env, state, &walk, states, false).unwrap_or(end));
    }
    // The setup tasks in `PlayIterator`'s order: the gathering (native unless a host
    // gathers with other fact modules), then the argument-spec check.
    if gather && gathering.is_none() {
        crate::play::gather::gather_facts(
            env,
            state,
            keywords,
            callback,
            stats,
            &mut walk.cursors,
        )?;
    }
    for task in [gathering.filter(|_| gather), check].into_iter().flatten() {
        let stopped = crate::play::setup_task::run_setup_task(
            env,
            state,
            task,
            &mut walk,
            &mut handlers,
            callback,
            stats,
            states,
        )?;
        if stopped {
            return Ok(finish_batch(env, state, &walk, states, true).unwrap_or(BatchEnd::Done));
        }
    }
    let stop = crate::strategy::linear::run_rounds(
        env,
        state,
        &mut walk,
        &mut handlers,
        callback,
        stats,
        states,
    )?;
    Ok(finish_batch(env, state, &walk, states, stop).unwrap_or(BatchEnd::Done))
}

/// What one batch runs: the play's walk over its hosts, its handlers, and the play's setup.
struct Batch<'r> {
    walk: Walk<'r>,
    handlers: Handlers<'r>,
    setup: Setup<'r>,
}

/// What a batch runs before the play's tasks.
struct Setup<'r> {
    /// Whether the play gathers facts for its hosts (`gathering`, `gather_facts`, tags).
    gather: bool,
    /// The gathering as a `gather_facts` task, when a host gathers with other modules than
    /// `setup`.
    gathering: Option<Segment<'r>>,
    /// The argument-spec check, when the play has one.
    check: Option<Segment<'r>>,
}

/// Keeps each host's state for later plays; how the batch ended when it ended the play or
/// the playbook.
fn finish_batch(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    walk: &Walk<'_>,
    states: &mut BTreeMap<String, HostState>,
    stop: bool,
) -> Option<BatchEnd> {
    for host in &env.hosts {
        let carried = env.scope.carried(host);
        let host_state = states.entry(host.clone()).or_default();
        host_state.set_facts = carried.set_facts;
        host_state.included_vars = carried.included;
    }
    // Only this batch's new failures count towards "every host of the batch failed".
    let mut failed = 0;
    for host in &state.lost {
        let host_state = states.entry(host.clone()).or_default();
        host_state.unreachable = true;
        host_state.unreachable_before = true;
        state.removed.insert(host.clone());
        failed += 1;
    }
    for (host, cursor) in &walk.cursors {
        if state.lost.contains(host) {
            continue;
        }
        if cursor.failed || state.forced.contains(host) {
            states.entry(host.clone()).or_default().failed = true;
            state.removed.insert(host.clone());
            failed += 1;
        } else if state.excluded.contains(host) {
            states.entry(host.clone()).or_default().excluded = true;
            state.removed.insert(host.clone());
            failed += 1;
        }
    }
    if stop {
        Some(BatchEnd::MaxFail)
    } else if failed == env.hosts.len() {
        Some(BatchEnd::Stop)
    } else if state.ended_play {
        Some(BatchEnd::EndPlay)
    } else {
        None
    }
}
