//! One play as ansible-core 2.21 runs it: its hosts in `order`, cut into `serial` batches
//! (`batches`), each batch run as one task-queue-manager run (its own PLAY banner, fact
//! gathering, handlers) under the play's strategy. This file runs the `linear` strategy:
//! every host has a position in the play's flat task list (see `iterator`); each round runs
//! the first task, from the lockstep cursor on, that some host is at, on every host at it,
//! then applies `any_errors_fatal`, `run_once` and `max_fail_percentage` (`fatal`). A host
//! that fails outside any rescue leaves the play; `flush_handlers` runs the notified handlers
//! in their order; when every host of a batch failed, the playbook stops. `free` and
//! `host_pinned` live in `strategy_free` and `free_passes`.

use std::collections::{BTreeMap, BTreeSet};

use typed_arena::Arena;

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_playbook::compile::{CompiledBlock, compile_play};
use tack_playbook::listing::{listed_name, task_tags};
use tack_playbook::play_vars::{play_basedir, play_var_layers};
use tack_playbook::post_validate::post_validate_play;
use tack_playbook::tables::Keyword;
use tack_playbook::tables::actions as action_names;
use tack_playbook::walk::{Sections, TaskInContext, walk};
use tack_template::Provenance;
use tack_yaml::{Mapping, Node, Value};

use crate::handlers::Handlers;
use crate::iterator::HostCursor;
use crate::segments::{Segment, Walk};
use crate::task::TaskRun;
use crate::vars::PlayScope;
use crate::{HostState, RunContext};
use tack_actions::Action;
use tack_report::callback::{Callback, Stats, TaskView};
use tack_report::result::s;

/// How a play ended for the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayEnd {
    Continue,
    /// Every host the play started with failed: ansible stops the playbook.
    AllFailed,
    /// `max_fail_percentage` was passed: ansible stops the playbook, and its exit code is the
    /// failed hosts' (2) whatever else happened.
    MaxFail,
}

/// What one play's run shares between its rounds.
pub(crate) struct PlayRun<'r, 'a> {
    pub run: &'r RunContext<'a>,
    /// The play as it stands: an `include_role` replaces it with a copy whose role arena
    /// holds the roles loaded since (earlier roles keep their ids).
    play: std::cell::Cell<&'r Play>,
    /// The run's inventory as `add_host` and `group_by` leave it.
    pub live: &'r tack_inventory::live::LiveInventory,
    pub scope: std::sync::Arc<PlayScope>,
    /// The hosts of the batch being run.
    pub hosts: Vec<String>,
    /// Every host of the play, in its `order` (`ansible_play_hosts_all`).
    pub all_hosts: Vec<String>,
    /// Hosts that failed in an earlier batch of the play (ansible's `_removed_hosts`).
    pub removed: std::rc::Rc<std::cell::RefCell<BTreeSet<String>>>,
    /// Hosts `any_errors_fatal`, `run_once` or `max_fail_percentage` failed in this batch
    /// without a failed result of their own: they end the run failed even if a rescue
    /// catches them, as ansible keeps them in its failed hosts.
    pub forced: std::cell::RefCell<BTreeSet<String>>,
    /// Hosts whose `include_role` failed to load its role (shown failed, not yet moved).
    pub include_failed: std::cell::RefCell<BTreeSet<String>>,
    /// Hosts whose include failed as a task fails (a keyword that would not post-validate):
    /// shown, not yet counted (a rescue counts it as rescued, which only the walk knows)
    /// nor moved.
    pub include_task_failed: std::cell::RefCell<BTreeMap<String, tack_report::result::HostResult>>,
    /// `meta: end_play` ran: no later batch runs.
    pub ended_play: std::cell::Cell<bool>,
    /// Hosts found unreachable in this batch (not ignored): they run nothing more in the run.
    pub lost: std::cell::RefCell<BTreeSet<String>>,
    /// `max_fail_percentage` as a fraction.
    pub max_fail: Option<f64>,
    /// The play runs under `free` or `host_pinned`, which honour neither
    /// `any_errors_fatal` nor `max_fail_percentage`.
    pub free: bool,
    /// A handler passed `max_fail_percentage`: the batch ends and the playbook stops.
    pub stopped: std::cell::Cell<bool>,
    /// Each role's identity (its name and parameters), for `allow_duplicates`.
    pub identities: std::cell::RefCell<Vec<String>>,
    /// Each role task's role layers, computed once (they do not depend on the host).
    role_layers: std::cell::RefCell<
        std::collections::HashMap<*const tack_playbook::Task, crate::roles::RoleLayers>,
    >,
    /// Where the blocks a handler's `include_tasks` loads are kept for the play.
    pub blocks: &'r Arena<Vec<CompiledBlock>>,
    /// The `-vvv` notes of each gathering of the play's variables.
    pub reads: crate::read_notes::ReadNotes,
    /// `tack plan`, while a flush lists a handler: why, for each host.
    pub plan_handler: std::cell::RefCell<Option<crate::plan::HandlerReasons>>,
}

/// The play's `gather_facts` (ansible's default gathering is `implicit`: on).
fn gathers_facts(keywords: &tack_playbook::post_validate::PlayKeywords) -> bool {
    keywords.get(Keyword::GatherFacts).is_none_or(|v| v.value.is_truthy())
}

/// `Play.handlers` with the roles' first (`compile_roles_handlers`), each role's under its
/// dependency chain.
pub fn handler_blocks(play: &Play) -> Vec<CompiledBlock> {
    let mut out = Vec::new();
    for id in &play.roles {
        if play.role(*id).from_include {
            continue;
        }
        for block in tack_playbook::compile::role_handler_blocks(&play.role_arena, *id) {
            out.push(CompiledBlock { block, dep_chain: vec![*id] });
        }
    }
    out.extend(
        play.handlers.iter().map(|b| CompiledBlock { block: b.clone(), dep_chain: Vec::new() }),
    );
    out
}

pub(crate) fn is_meta(ctx: &TaskInContext<'_>) -> bool {
    action_names::is(&ctx.task.action, action_names::META)
}

pub(crate) fn meta_arg(ctx: &TaskInContext<'_>) -> String {
    ctx.task.args.get("_raw_params").map(|n| tack_yaml::pyrepr::str(&n.value)).unwrap_or_default()
}

/// Runs `play`, updating each host's state and the recap: its hosts in `order`, cut into
/// `serial` batches, each batch run as ansible's task queue manager runs one.
pub fn run_play(
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
    crate::reserved::warn_play(play, &layers.role_defaults, &layers.vars);
    let reads =
        crate::read_notes::ReadNotes::new(&layers.read, run.facts.verbosity, run.facts.forks);
    let keywords = post_validate_play(play, &vars, templar)?;
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
    let failed_before: BTreeSet<String> =
        selected.iter().filter(|h| states.get(*h).is_some_and(HostState::out)).cloned().collect();
    let hosts = crate::batches::order_hosts(selected.clone(), keywords.get(Keyword::Order))?;
    if hosts.is_empty() {
        // The playbook executor's two gatherings (vars_prompt, post-validation).
        reads.show_times(callback, 2);
        callback.play_start(&name);
        callback.no_hosts_matched();
        return Ok(PlayEnd::Continue);
    }
    let batches = crate::batches::serialize(&hosts, keywords.get(Keyword::Serial))?;
    let scope = PlayScope::new(
        &inventory,
        run.loader,
        &layers.role_defaults,
        &layers.vars,
        run.extra_vars,
        &play_basedir(play),
        &name,
        &run.facts,
    )?;
    // Tasks change the inventory from here on (`add_host`, `group_by`).
    drop(inventory);

    let arena: Arena<Vec<CompiledBlock>> = Arena::new();
    let plays: Arena<Play> = Arena::new();
    let force =
        keywords.get(Keyword::ForceHandlers).map_or(run.force_handlers, |n| n.value.is_truthy());
    let blocks = compile_play(play);
    let blocks = if force { crate::force_handlers::wrap(blocks) } else { blocks };
    let compiled: &[CompiledBlock] = arena.alloc(blocks);
    let play_segment = Segment::new(play, compiled, None, |ctx| {
        Ok((ctx.task.implicit && is_meta(ctx))
            || run.tags.should_run(&task_tags(ctx, &vars, templar)?))
    })?;
    let handler_blocks = handler_blocks(play);
    let identities: Vec<String> = (0..play.role_arena.len())
        .map(|i| crate::roles::identity(play, tack_playbook::RoleId(i)))
        .collect();
    let removed = std::rc::Rc::new(std::cell::RefCell::new(failed_before.clone()));
    let new_run = |batch: Vec<String>| PlayRun {
        run,
        play: std::cell::Cell::new(play),
        live,
        scope: scope.clone(),
        hosts: batch,
        all_hosts: selected.clone(),
        removed: removed.clone(),
        forced: Default::default(),
        include_failed: Default::default(),
        include_task_failed: Default::default(),
        ended_play: Default::default(),
        lost: Default::default(),
        max_fail: crate::batches::max_fail_fraction(keywords.get(Keyword::MaxFailPercentage)),
        free: keywords.get(Keyword::Strategy).is_some_and(|n| {
            crate::strategy_free::free_kind(&tack_yaml::pyrepr::str(&n.value)).is_some()
        }),
        stopped: Default::default(),
        role_layers: Default::default(),
        identities: std::cell::RefCell::new(identities.clone()),
        blocks: &arena,
        reads: reads.clone(),
        plan_handler: Default::default(),
    };
    {
        let all = new_run(hosts.clone());
        let handlers =
            Handlers::new(play, walk(play, &handler_blocks, Sections::All), templar, &vars);
        all.check_connections(&play_segment.tasks, &handlers)?;
    }
    // Every host's variables from earlier plays, this play's or not (`hostvars` sees them).
    for (host, state) in states.iter() {
        if let Some(facts) = state.facts.clone() {
            scope.set_gathered(host, facts);
        }
        scope.carry_in(host, state.set_facts.clone(), state.included_vars.clone());
    }
    for (n, batch) in batches.into_iter().enumerate() {
        let this = new_run(batch);
        let handlers =
            Handlers::new(play, walk(play, &handler_blocks, Sections::All), templar, &vars);
        let running: Vec<String> =
            this.hosts.iter().filter(|h| !failed_before.contains(*h)).cloned().collect();
        let walk = Walk::new(play_segment.clone(), &running);
        // The task queue manager's gathering for the batch, after the executor's two.
        reads.show_times(callback, if n == 0 { 3 } else { 1 });
        callback.play_start(&name);
        if running.is_empty() {
            continue;
        }
        let end = this.run_batch(
            &keywords,
            walk,
            handlers,
            (&arena, &plays),
            &vars,
            callback,
            stats,
            states,
        )?;
        match end {
            BatchEnd::Done => {}
            BatchEnd::EndPlay => break,
            BatchEnd::Stop => return Ok(PlayEnd::AllFailed),
            BatchEnd::MaxFail => return Ok(PlayEnd::MaxFail),
        }
    }
    Ok(PlayEnd::Continue)
}

/// What `run_task` runs: a task on every host given, a `run_once` task (on the first, its
/// result every host's), or a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunKind {
    Task,
    /// A task whose banner is already the last shown (the free strategies).
    Continued,
    /// A task of the free strategies whose banner comes with its first line: an item or
    /// retry line, else its result (after what processing the result prints).
    Deferred,
    Once,
    Handler,
    /// A `run_once` handler.
    HandlerOnce,
}

/// How one batch ended for the play.
pub(crate) enum BatchEnd {
    Done,
    /// `meta: end_play`: no later batch runs.
    EndPlay,
    /// Every host of the batch failed: the playbook stops.
    Stop,
    /// `max_fail_percentage` was passed: the playbook stops.
    MaxFail,
}

impl<'r, 'a> PlayRun<'r, 'a> {
    /// One batch under the `linear` strategy.
    #[allow(clippy::too_many_arguments)]
    fn run_batch(
        &self,
        keywords: &tack_playbook::post_validate::PlayKeywords,
        mut walk: Walk<'r>,
        mut handlers: Handlers<'r>,
        (arena, plays): (&'r Arena<Vec<CompiledBlock>>, &'r Arena<Play>),
        vars: &Mapping,
        callback: &mut dyn Callback,
        stats: &mut Stats,
        states: &mut BTreeMap<String, HostState>,
    ) -> Result<BatchEnd, Diagnostic> {
        let this = self;
        this.update_play_hosts(&walk.cursors);
        if let Some(start) = self.run.start_at.as_ref().filter(|s| !s.done.get())
            && !start.seek(self.play(), &mut walk)
        {
            return Ok(BatchEnd::Done);
        }
        let strategy = keywords.get(Keyword::Strategy).map(|n| tack_yaml::pyrepr::str(&n.value));
        if let Some(pinned) = strategy.as_deref().and_then(crate::strategy_free::free_kind) {
            let gather = gathers_facts(keywords).then_some(keywords);
            let env = crate::strategy_free::SpliceEnv { arena, plays, vars };
            let end = this.run_batch_free(
                pinned,
                gather,
                env,
                &mut walk,
                &mut handlers,
                callback,
                stats,
                states,
            )?;
            return Ok(this.finish_batch(&walk, states, false).unwrap_or(end));
        }
        if gathers_facts(keywords) {
            this.gather_facts(keywords, callback, stats, states, &mut walk.cursors)?;
        }
        let mut completed: BTreeSet<(String, String)> = BTreeSet::new();
        let mut stop = false;
        loop {
            // Hosts found unreachable (by a task, a handler or gathering) run nothing more.
            for host in self.lost.borrow().iter() {
                walk.finish(host);
            }
            let Some(mut round) = walk.next_round() else { break };
            let (seg, next) = (round.seg, round.next);
            let ctx = walk.segments[seg].tasks[next].clone();
            let ctx = &ctx;
            // A role that already ran on a host under the same identity is passed over there.
            let done: Vec<String> = round
                .hosts
                .iter()
                .filter(|h| this.role_done(ctx, h, &completed))
                .cloned()
                .collect();
            if !done.is_empty() {
                for host in &done {
                    walk.advance(host, seg, next, false);
                }
                round.hosts.retain(|h| !done.contains(h));
                if round.hosts.is_empty() {
                    continue;
                }
            }
            if is_meta(ctx) {
                let mut meta = crate::meta::MetaRound {
                    walk: &mut walk,
                    handlers: &mut handlers,
                    completed: &mut completed,
                    states,
                    free_banner: None,
                };
                this.run_meta(ctx, &round, &mut meta, callback, stats)?;
                if this.stopped.get() {
                    stop = true;
                    break;
                }
                this.update_play_hosts(&walk.cursors);
                continue;
            }
            if matches!(
                ctx.task.kind,
                tack_playbook::TaskKind::IncludeTasks | tack_playbook::TaskKind::IncludeRole(_)
            ) {
                let mut splice = crate::include::Splice {
                    walk: &mut walk,
                    handlers: &mut handlers,
                    arena,
                    plays,
                    vars,
                };
                this.splice_include(ctx, &round, &mut splice, callback, stats)?;
                this.update_play_hosts(&walk.cursors);
                continue;
            }
            let params = walk.segments[seg].params.clone();
            let controls = this.task_controls(ctx, &round.hosts, params.clone())?;
            let mut results: Vec<crate::fatal::RoundResult> = Vec::new();
            let action = Action::find(&ctx.task.action);
            // `add_host` and `pause` bypass the host loop: they run once, on the first host,
            // and the others move on without a result.
            let bypass = matches!(action, Some(Action::AddHost | Action::Pause));
            let run_hosts: Vec<String> = if bypass {
                round.hosts.iter().take(1).cloned().collect()
            } else {
                round.hosts.clone()
            };
            this.run_task(
                ctx,
                &run_hosts,
                params.clone(),
                callback,
                if controls.run_once { RunKind::Once } else { RunKind::Task },
                &mut |host, outcome, cb| {
                    let result = &outcome.result;
                    results.push(crate::fatal::RoundResult::of(host, result, controls.ignore));
                    if result.flag("failed") && !result.ignored {
                        let rescuing = walk.rescuing(host, seg, next);
                        stats.count(result, rescuing);
                        if rescuing {
                            this.remember_failure(host, ctx, outcome);
                        }
                        walk.advance(host, seg, next, true);
                    } else {
                        if result.notifies() {
                            this.notify_from(
                                &mut handlers,
                                ctx,
                                host,
                                outcome,
                                params.clone(),
                                cb,
                            )?;
                        }
                        if let Some(custom) =
                            result.data.get("ansible_stats").and_then(Node::as_map)
                            && action == Some(Action::SetStats)
                        {
                            stats.apply_custom(host, custom);
                        }
                        stats.count(result, false);
                        walk.advance(host, seg, next, false);
                    }
                    Ok(())
                },
            )?;
            if bypass {
                for host in round.hosts.iter().filter(|h| !run_hosts.contains(h)) {
                    walk.advance(host, seg, next, false);
                }
            }
            if matches!(action, Some(Action::AddHost | Action::GroupBy)) {
                this.scope.set_inventory(&this.live.current(), this.run.loader)?;
            }
            if controls.run_once {
                // The other hosts of the round are done with the task too.
                for host in round.hosts.iter().skip(1) {
                    if walk.is_running(host) {
                        walk.advance(host, seg, next, false);
                    }
                }
            }
            if this.after_round(&controls, &results, &round, &mut walk, callback) {
                stop = true;
                break;
            }
            this.update_play_hosts(&walk.cursors);
        }

        Ok(this.finish_batch(&walk, states, stop).unwrap_or(BatchEnd::Done))
    }

    /// Keeps each host's state for later plays; how the batch ended when it ended the
    /// play or the playbook.
    fn finish_batch(
        &self,
        walk: &Walk<'_>,
        states: &mut BTreeMap<String, HostState>,
        stop: bool,
    ) -> Option<BatchEnd> {
        let this = self;
        for host in &this.hosts {
            let (set_facts, included) = this.scope.carried(host);
            let state = states.entry(host.clone()).or_default();
            state.set_facts = set_facts;
            state.included_vars = included;
        }
        // Only this batch's new failures count towards "every host of the batch failed".
        let mut failed = 0;
        for host in this.lost.borrow().iter() {
            states.entry(host.clone()).or_default().unreachable = true;
            this.removed.borrow_mut().insert(host.clone());
            failed += 1;
        }
        for (host, cursor) in &walk.cursors {
            if this.lost.borrow().contains(host) {
                continue;
            }
            if cursor.failed || this.forced.borrow().contains(host) {
                states.entry(host.clone()).or_default().failed = true;
                this.removed.borrow_mut().insert(host.clone());
                failed += 1;
            }
        }
        if stop {
            Some(BatchEnd::MaxFail)
        } else if failed == this.hosts.len() {
            Some(BatchEnd::Stop)
        } else if this.ended_play.get() {
            Some(BatchEnd::EndPlay)
        } else {
            None
        }
    }
}

/// What a task's caller does with each host's result before its line is shown (stats,
/// notifications, the host's next position); it may show lines of its own through the callback.
pub(crate) type Judge<'j> =
    dyn FnMut(&str, &crate::task::TaskOutcome, &mut dyn Callback) -> Result<(), Diagnostic> + 'j;

impl<'r> PlayRun<'r, '_> {
    pub(crate) fn play(&self) -> &'r Play {
        self.play.get()
    }

    pub(crate) fn set_play(&self, play: &'r Play) {
        self.play.set(play);
    }

    /// Whether `ctx` belongs to a role that already ran on `host` under the same identity
    /// (and does not allow duplicates): ansible passes over it there. The role's closing
    /// `role_complete` still runs.
    pub(crate) fn role_done(
        &self,
        ctx: &TaskInContext<'_>,
        host: &str,
        completed: &BTreeSet<(String, String)>,
    ) -> bool {
        let Some(role) = ctx.task.role else { return false };
        if self.play().role(role).allow_duplicates
            || (ctx.task.implicit && meta_arg(ctx) == "role_complete")
        {
            return false;
        }
        let identity = self.identities.borrow()[role.0].clone();
        completed.contains(&(identity, host.to_string()))
    }

    pub(crate) fn runner<'t>(
        &'t self,
        ctx: &'t TaskInContext<'t>,
        action: Action,
        params: Option<std::sync::Arc<tack_template::Layer>>,
    ) -> TaskRun<'t> {
        TaskRun {
            ctx,
            action,
            templar: self.run.templar,
            vars: &self.scope,
            verbosity: self.run.facts.verbosity,
            role: self
                .role_layers
                .borrow_mut()
                .entry(std::ptr::from_ref(ctx.task))
                .or_insert_with(|| crate::roles::layers(self.play(), ctx))
                .clone(),
            play: self.play(),
            check_flag: self.run.facts.check_mode || self.run.facts.plan,
            planning: self.run.facts.plan,
            plan_handler: None,
            diff_flag: self.run.facts.diff_mode,
            diff_settings: &self.run.facts.diff,
            async_dir: &self.run.facts.async_dir,
            params,
            fanout: Vec::new(),
            inventory: self.live,
            rendered: Default::default(),
            links: self.run.links,
            ssh_defaults: &self.run.facts.ssh,
            reads: self.reads.clone(),
            banner_name: String::new(),
            interpreter: &self.run.facts.interpreter,
            pending: &self.run.pending,
            discovered: Default::default(),
        }
    }

    /// Tasks that touch a host run only over links tack has, and only what tack can do over
    /// them: refused by name before the play runs a task.
    fn check_connections(
        &self,
        tasks: &[TaskInContext<'_>],
        handlers: &Handlers<'_>,
    ) -> Result<(), Diagnostic> {
        let all = tasks.iter().chain(handlers.list.iter().map(|h| &h.ctx));
        for ctx in all {
            let resets = is_meta(ctx) && meta_arg(ctx) == "reset_connection";
            let action = Action::find(&ctx.task.action);
            let touches =
                action.is_some_and(|a| a.touches_host() || a == Action::WaitForConnection);
            if !resets && !touches {
                continue;
            }
            for host in &self.hosts {
                let Some(scope) = self.runner(ctx, Action::Debug, None).scope(host) else {
                    continue;
                };
                let vars = |name: &str| scope.get(name).map(|b| b.node().clone());
                let keyword = |k| ctx.inherited(k).cloned();
                let target = tack_links::link_target::resolve(
                    self.run.templar,
                    &scope,
                    &vars,
                    &keyword,
                    host,
                    ctx.task.origin.clone(),
                    &self.run.facts.ssh,
                )?;
                if target == tack_links::link_target::LinkTarget::Local {
                    continue;
                }
                if !self.run.links.reaches_remote() {
                    let message = format!(
                        "tack does not support the 'ssh' connection in this run (host '{host}'); \
                         modules run only on hosts with ansible_connection=local"
                    );
                    return Err(Diagnostic::at(message, ctx.task.origin.clone()));
                }
            }
        }
        Ok(())
    }

    /// [`view`](Self::view) with the name as the task's banner shows it: rendered with the
    /// first host's variables (`host`), as ansible post-validates it before the banner, after
    /// ansible's warning when some of it could not be rendered.
    pub(crate) fn banner(
        &self,
        ctx: &TaskInContext<'_>,
        host: Option<&String>,
        params: Option<std::sync::Arc<tack_template::Layer>>,
    ) -> TaskView {
        let mut view = self.view(ctx);
        let (Some(raw), Some(host)) = (ctx.task.name(), host) else { return view };
        if !tack_template::Templar::is_template(&tack_yaml::pyrepr::str(&raw.value)) {
            return view;
        }
        let Some(scope) = self.runner(ctx, Action::Debug, params).scope(host) else { return view };
        let (name, warning) = crate::task_name::render(self.run.templar, raw, &scope);
        if let Some(warning) = warning {
            tack_diag::warn(&warning);
        }
        if name.is_empty() {
            return view;
        }
        view.name = match (&ctx.task.kind, ctx.task.role) {
            (tack_playbook::TaskKind::IncludeRole(_), _) | (_, None) => name,
            (_, Some(role)) => format!("{} : {name}", self.play().role(role).name),
        };
        view
    }

    pub(crate) fn view(&self, ctx: &TaskInContext<'_>) -> TaskView {
        let task = ctx.task;
        TaskView {
            // `Task.get_name`: an unnamed task in a role shows `role : action`.
            name: listed_name(self.play(), task).unwrap_or_else(|| match (&task.kind, task.role) {
                (tack_playbook::TaskKind::IncludeRole(target), _) => {
                    crate::include_role::unnamed(&task.action, target)
                }
                (_, Some(role)) => format!("{} : {}", self.play().role(role).name, task.action),
                (_, None) => task.action.clone(),
            }),
            action: task.action.clone(),
            looped: task.loop_items.is_some(),
            origin: task.origin.clone(),
        }
    }

    /// Runs one task on `hosts` in order; each host's outcome goes to `judge` (the strategy's
    /// result processing: stats, notifications, the host's next position) before its result
    /// line is shown, as ansible processes a result before its callback.
    pub(crate) fn run_task(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<std::sync::Arc<tack_template::Layer>>,
        callback: &mut dyn Callback,
        kind: RunKind,
        judge: &mut Judge<'_>,
    ) -> Result<(), Diagnostic> {
        let task = ctx.task;
        let Some(action) = Action::resolve(&task.action) else {
            return Err(Diagnostic::at(
                format!("tack does not support the action '{}' yet", task.action),
                task.origin.clone(),
            ));
        };
        let view = if kind == RunKind::Continued {
            self.view(ctx)
        } else {
            self.banner(ctx, hosts.first(), params.clone())
        };
        // The first host's gathering comes before the banner; see `crate::read_notes`.
        if !hosts.is_empty() && kind != RunKind::Continued {
            self.reads.show(callback);
        }
        if matches!(kind, RunKind::Handler | RunKind::HandlerOnce) {
            callback.handler_start(&view);
        } else if !matches!(kind, RunKind::Continued | RunKind::Deferred) {
            callback.task_start(&view);
        }
        let mut banner_due = kind == RunKind::Deferred;
        let mut runner = self.runner(ctx, action, params);
        runner.banner_name = view.name.clone();
        if matches!(kind, RunKind::Handler | RunKind::HandlerOnce) {
            runner.plan_handler = self.plan_handler.borrow().clone().filter(|_| runner.planning);
        }
        if callback.wants_params() {
            callback.task_params(&view, &crate::params::collect(&runner, hosts));
        }
        // `run_once`: the first host runs it; its result is every host's.
        let hosts = if matches!(kind, RunKind::Once | RunKind::HandlerOnce) && !hosts.is_empty() {
            runner.fanout = self.hosts.iter().filter(|h| **h != hosts[0]).cloned().collect();
            &hosts[..1]
        } else {
            hosts
        };
        if action == Action::Pause {
            for host in hosts {
                for line in runner.announce(host) {
                    callback.display(&line);
                }
            }
        }
        let width = self.forks_width(ctx, action, &runner, hosts)?;
        let ahead = if width < hosts.len() && action.touches_host() {
            hosts.iter().map(|h| runner.unopened_link(h)).collect()
        } else {
            Vec::new()
        };
        let runner = &runner;
        tack_links::pool::opening_ahead(ahead, width, || {
            crate::forks::run_hosts(
                hosts,
                width,
                |host| runner.run(host),
                |host, outcome| {
                    self.reads.before_result(hosts, host, callback);
                    if outcome.result.lost() {
                        self.lost.borrow_mut().insert(host.to_string());
                    }
                    let with_lines = outcome.items.iter().any(|e| {
                        matches!(
                            e,
                            crate::task::TaskEvent::Item(_) | crate::task::TaskEvent::Retry(_)
                        )
                    });
                    if banner_due && with_lines {
                        callback.task_start(&view);
                        banner_due = false;
                    }
                    outcome.show_events(&view, callback);
                    judge(host, &outcome, callback)?;
                    if banner_due {
                        callback.task_start(&view);
                        banner_due = false;
                    }
                    // A looped task's diffs went out with its items; ansible's strategy sends one for
                    // the task's own result when `--diff` or the task's `diff` is on.
                    let diff_on = self.run.facts.diff_mode || outcome.diff;
                    if diff_on
                        && !outcome
                            .items
                            .iter()
                            .any(|e| matches!(e, crate::task::TaskEvent::Item(_)))
                        && tack_report::callback::diff::sent_for(&outcome.result)
                    {
                        callback.file_diff(&view, &outcome.result);
                    }
                    callback.host_result(&view, &outcome.result);
                    Ok(())
                },
            )
        })
    }

    /// How many hosts run the task at once: only what runs on the host is worth a thread
    /// (controller actions are quick, and some, like `set_fact` in a loop, read what the
    /// previous host's run wrote).
    fn forks_width(
        &self,
        ctx: &TaskInContext<'_>,
        action: Action,
        runner: &crate::task::TaskRun<'_>,
        hosts: &[String],
    ) -> Result<usize, Diagnostic> {
        if hosts.len() <= 1 || !(action.touches_host() || action == Action::WaitForConnection) {
            return Ok(1);
        }
        let throttle = match runner.scope(&hosts[0]) {
            Some(scope) => self.throttle(ctx, &scope)?,
            None => 0,
        };
        Ok(crate::forks::width(self.run.facts.forks, throttle, hosts.len()))
    }

    /// `ansible_failed_task` and `ansible_failed_result` for the rescue that follows.
    pub(crate) fn remember_failure(
        &self,
        host: &str,
        ctx: &TaskInContext<'_>,
        outcome: &crate::task::TaskOutcome,
    ) {
        let result = &outcome.result;
        // An outcome that failed before its scope existed keeps the task's written basics.
        let mut task = Mapping::new();
        let name = ctx.task.name().map(|n| n.value.clone()).unwrap_or(Value::Str(String::new()));
        task.insert(s("name"), Node::bare(name));
        task.insert(s("action"), s(&ctx.task.action));
        task.insert(s("args"), Node::bare(Value::Map(ctx.task.args.clone())));
        let task = outcome.failed_task.clone().unwrap_or(Node::bare(Value::Map(task)));
        self.scope.set_host_var(host, "ansible_failed_task", task, Provenance::Trusted);
        self.scope.set_host_var(
            host,
            "ansible_failed_result",
            Node::bare(Value::Map(result.data.clone())),
            Provenance::ManagedHost,
        );
    }

    /// `ansible_play_hosts` (the play's hosts not failed) and `ansible_play_batch` (the
    /// batch's).
    pub(crate) fn update_play_hosts(&self, cursors: &[(String, HostCursor)]) {
        let removed = self.removed.borrow();
        let forced = self.forced.borrow();
        let lost = self.lost.borrow();
        let out = |h: &String| {
            removed.contains(h)
                || lost.contains(h)
                || forced.contains(h)
                || cursors.iter().any(|(c, cur)| c == h && cur.failed)
        };
        let play: Vec<String> = self.all_hosts.iter().filter(|h| !out(h)).cloned().collect();
        let batch: Vec<String> = self.hosts.iter().filter(|h| !out(h)).cloned().collect();
        self.scope.set_play_batch(&self.all_hosts, &play, &batch);
    }
}
