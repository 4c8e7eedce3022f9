//! One play under the `linear` strategy, as ansible-core 2.21 runs it: every host has a
//! position in the play's flat task list (see `iterator`); each round runs the first task,
//! from the lockstep cursor on, that some host is at, on every host at it. A host that fails
//! outside any rescue leaves the play; `flush_handlers` runs the notified handlers in their
//! order; when every host of the play failed, the playbook stops.

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

use crate::actions::Action;
use crate::callback::{Callback, Stats, TaskView};
use crate::handlers::Handlers;
use crate::iterator::HostCursor;
use crate::result::s;
use crate::segments::{Segment, Walk};
use crate::task::TaskRun;
use crate::vars::PlayScope;
use crate::{HostState, RunContext};

/// How a play ended for the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayEnd {
    Continue,
    /// Every host the play started with failed: ansible stops the playbook.
    AllFailed,
}

/// What one play's run shares between its rounds.
pub(crate) struct PlayRun<'r, 'a> {
    pub run: &'r RunContext<'a>,
    pub play: &'r Play,
    pub scope: std::sync::Arc<PlayScope>,
    pub hosts: Vec<String>,
    /// Each role's identity (its name and parameters), for `allow_duplicates`.
    pub identities: Vec<String>,
    /// Each role task's role layers, computed once (they do not depend on the host).
    role_layers: std::cell::RefCell<
        std::collections::HashMap<*const tack_playbook::Task, crate::roles::RoleLayers>,
    >,
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

/// Runs `play`, updating each host's state and the recap.
pub fn run_play(
    run: &RunContext<'_>,
    play: &Play,
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
    let keywords = post_validate_play(play, &vars, templar)?;
    // `Play.get_name`: an empty name shows the hosts pattern.
    let name = if keywords.name.trim().is_empty() {
        keywords.hosts.join(",")
    } else {
        keywords.name.clone()
    };
    let data = run.inventory.data();
    let hosts: Vec<String> = run
        .inventory
        .select_terms(&keywords.hosts)?
        .into_iter()
        .map(|h| data.host(h).name.clone())
        .filter(|h| !states.get(h).is_some_and(|s| s.failed))
        .collect();
    if hosts.is_empty() {
        callback.play_start(&name);
        callback.no_hosts_matched();
        return Ok(PlayEnd::Continue);
    }
    let scope = PlayScope::new(
        run.inventory,
        run.loader,
        &layers.role_defaults,
        &layers.vars,
        run.extra_vars,
        &play_basedir(play),
        &run.facts,
    )?;
    scope.set_play_hosts(&hosts, &hosts);

    let arena: Arena<Vec<CompiledBlock>> = Arena::new();
    let compiled: &[CompiledBlock] = arena.alloc(compile_play(play));
    let play_segment = Segment::new(play, compiled, None, |ctx| {
        Ok((ctx.task.implicit && is_meta(ctx))
            || run.tags.should_run(&task_tags(ctx, &vars, templar)?))
    })?;
    let handler_blocks = handler_blocks(play);
    let mut handlers =
        Handlers::new(play, walk(play, &handler_blocks, Sections::All), templar, &vars);
    let mut walk = Walk::new(play_segment, &hosts);
    let this = PlayRun {
        run,
        play,
        scope,
        hosts: hosts.clone(),
        role_layers: Default::default(),
        identities: (0..play.role_arena.len())
            .map(|i| crate::roles::identity(play, tack_playbook::RoleId(i)))
            .collect(),
    };

    this.check_connections(&walk.segments[0].tasks, &handlers)?;
    // Every host's variables from earlier plays, this play's or not (`hostvars` sees them).
    for (host, state) in states.iter() {
        if let Some(facts) = state.facts.clone() {
            this.scope.set_gathered(host, facts);
        }
        this.scope.carry_in(host, state.set_facts.clone(), state.included_vars.clone());
    }
    callback.play_start(&name);
    if gathers_facts(&keywords) {
        this.gather_facts(&keywords, callback, stats, states, &mut walk.cursors)?;
    }
    let mut completed: BTreeSet<(String, String)> = BTreeSet::new();
    while let Some(mut round) = walk.next_round() {
        let (seg, next) = (round.seg, round.next);
        let ctx = walk.segments[seg].tasks[next].clone();
        let ctx = &ctx;
        // A role that already ran on a host under the same identity is passed over there.
        if let Some(role) = ctx.task.role
            && !play.role(role).allow_duplicates
            && !(ctx.task.implicit && meta_arg(ctx) == "role_complete")
        {
            let identity = &this.identities[role.0];
            let done: Vec<String> = round
                .hosts
                .iter()
                .filter(|h| completed.contains(&(identity.clone(), (*h).clone())))
                .cloned()
                .collect();
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
            };
            this.run_meta(ctx, &round, &mut meta, callback, stats)?;
            this.update_play_hosts(&walk.cursors);
            continue;
        }
        if matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeTasks) {
            this.splice_include(ctx, &round, &mut walk, &arena, &vars, callback, stats)?;
            this.update_play_hosts(&walk.cursors);
            continue;
        }
        let params = walk.segments[seg].params.clone();
        this.run_task(ctx, &round.hosts, params.clone(), callback, false, &mut |host, outcome| {
            let result = &outcome.result;
            if result.flag("failed") && !result.ignored {
                let rescuing = walk.rescuing(host, seg, next);
                stats.count(result, rescuing);
                if rescuing {
                    this.remember_failure(host, ctx, result);
                }
                walk.advance(host, seg, next, true);
            } else {
                if result.flag("changed") {
                    handlers.notify(host, &this.notify_names(ctx, host, params.clone())?)?;
                }
                stats.count(result, false);
                walk.advance(host, seg, next, false);
            }
            Ok(())
        })?;
        this.update_play_hosts(&walk.cursors);
    }

    for host in &hosts {
        let (set_facts, included) = this.scope.carried(host);
        let state = states.entry(host.clone()).or_default();
        state.set_facts = set_facts;
        state.included_vars = included;
    }
    let mut all_failed = true;
    for (host, cursor) in &walk.cursors {
        if cursor.failed {
            states.entry(host.clone()).or_default().failed = true;
        } else {
            all_failed = false;
        }
    }
    Ok(if all_failed { PlayEnd::AllFailed } else { PlayEnd::Continue })
}

impl PlayRun<'_, '_> {
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
                .or_insert_with(|| crate::roles::layers(self.play, ctx))
                .clone(),
            play: self.play,
            check_flag: self.run.facts.check_mode,
            params,
        }
    }

    /// Modules run only on hosts whose connection tack has: refused by name before the play
    /// runs a task.
    fn check_connections(
        &self,
        tasks: &[TaskInContext<'_>],
        handlers: &Handlers<'_>,
    ) -> Result<(), Diagnostic> {
        let all = tasks.iter().chain(handlers.list.iter().map(|h| &h.ctx));
        for ctx in all {
            let Some(Action::Module(_)) = Action::find(&ctx.task.action) else { continue };
            for host in &self.hosts {
                let Some(scope) = self.runner(ctx, Action::Debug, None).scope(host) else {
                    continue;
                };
                let from_var = scope
                    .get("ansible_connection")
                    .map(|b| tack_yaml::pyrepr::str(&b.node().value));
                let keyword =
                    ctx.inherited(Keyword::Connection).map(|n| tack_yaml::pyrepr::str(&n.value));
                let connection = from_var.or(keyword).unwrap_or_else(|| "ssh".into());
                if connection != "local" && connection != "ansible.builtin.local" {
                    return Err(Diagnostic::at(
                        format!(
                            "tack does not support the '{connection}' connection yet (host \
                             '{host}'); modules run only on hosts with ansible_connection=local"
                        ),
                        ctx.task.origin.clone(),
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn view(&self, ctx: &TaskInContext<'_>) -> TaskView {
        let task = ctx.task;
        TaskView {
            // `Task.get_name`: an unnamed task in a role shows `role : action`.
            name: listed_name(self.play, task).unwrap_or_else(|| match task.role {
                Some(role) => format!("{} : {}", self.play.role(role).name, task.action),
                None => task.action.clone(),
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
        handler: bool,
        judge: &mut dyn FnMut(&str, &crate::task::TaskOutcome) -> Result<(), Diagnostic>,
    ) -> Result<(), Diagnostic> {
        let task = ctx.task;
        let Some(action) = Action::resolve(&task.action) else {
            return Err(Diagnostic::at(
                format!("tack does not support the action '{}' yet", task.action),
                task.origin.clone(),
            ));
        };
        let view = self.view(ctx);
        if handler {
            callback.handler_start(&view);
        } else {
            callback.task_start(&view);
        }
        let runner = self.runner(ctx, action, params);
        if callback.wants_params() {
            callback.task_params(&view, &crate::params::collect(&runner, hosts));
        }
        for host in hosts {
            let outcome = runner.run(host);
            for item in &outcome.items {
                callback.item_result(&view, item);
            }
            judge(host, &outcome)?;
            callback.host_result(&view, &outcome.result);
        }
        Ok(())
    }

    /// `ansible_failed_task` and `ansible_failed_result` for the rescue that follows.
    pub(crate) fn remember_failure(
        &self,
        host: &str,
        ctx: &TaskInContext<'_>,
        result: &crate::result::HostResult,
    ) {
        let mut task = Mapping::new();
        let name = ctx.task.name().map(|n| n.value.clone()).unwrap_or(Value::Str(String::new()));
        task.insert(s("name"), Node::bare(name));
        task.insert(s("action"), s(&ctx.task.action));
        task.insert(s("args"), Node::bare(Value::Map(ctx.task.args.clone())));
        self.scope.set_host_var(
            host,
            "ansible_failed_task",
            Node::bare(Value::Map(task)),
            Provenance::Trusted,
        );
        self.scope.set_host_var(
            host,
            "ansible_failed_result",
            Node::bare(Value::Map(result.data.clone())),
            Provenance::ManagedHost,
        );
    }

    pub(crate) fn update_play_hosts(&self, cursors: &[(String, HostCursor)]) {
        let active: Vec<String> =
            cursors.iter().filter(|(_, c)| !c.failed).map(|(h, _)| h.clone()).collect();
        self.scope.set_play_hosts(&self.hosts, &active);
    }
}
