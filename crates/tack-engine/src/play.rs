//! One play under the `linear` strategy, as ansible-core 2.21 runs it: every host has a
//! position in the play's flat task list (see `iterator`); each round runs the first task,
//! from the lockstep cursor on, that some host is at, on every host at it. A host that fails
//! outside any rescue leaves the play; `flush_handlers` runs the notified handlers in their
//! order; when every host of the play failed, the playbook stops.

use std::collections::{BTreeMap, VecDeque};

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
use crate::segments::{Frame, Segment, enter, rescuing, step};
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
struct PlayRun<'r, 'a> {
    run: &'r RunContext<'a>,
    play: &'r Play,
    scope: std::sync::Arc<PlayScope>,
    hosts: Vec<String>,
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

fn is_meta(ctx: &TaskInContext<'_>) -> bool {
    action_names::is(&ctx.task.action, action_names::META)
}

fn meta_arg(ctx: &TaskInContext<'_>) -> String {
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
    let mut segments = vec![Segment::new(play, compiled, None, |ctx| {
        Ok((ctx.task.implicit && is_meta(ctx))
            || run.tags.should_run(&task_tags(ctx, &vars, templar)?))
    })?];
    let handler_blocks = handler_blocks(play);
    let mut handlers =
        Handlers::new(play, walk(play, &handler_blocks, Sections::All), templar, &vars);
    let mut cursors: Vec<(String, HostCursor)> =
        hosts.iter().map(|h| (h.clone(), segments[0].layout().start())).collect();
    // Hosts inside included files: the segments they run, innermost last.
    let mut frames: BTreeMap<String, Vec<Frame>> = BTreeMap::new();
    let mut order: Vec<(usize, usize)> = (0..segments[0].tasks.len()).map(|i| (0, i)).collect();
    let this = PlayRun { run, play, scope, hosts: hosts.clone(), role_layers: Default::default() };

    this.check_connections(&segments[0].tasks, &handlers)?;
    // Every host's variables from earlier plays, this play's or not (`hostvars` sees them).
    for (host, state) in states.iter() {
        if let Some(facts) = state.facts.clone() {
            this.scope.set_gathered(host, facts);
        }
        this.scope.carry_in(host, state.set_facts.clone(), state.included_vars.clone());
    }
    callback.play_start(&name);
    if gathers_facts(&keywords) {
        this.gather_facts(&keywords, callback, stats, states, &mut cursors)?;
    }
    let identities: Vec<String> = (0..play.role_arena.len())
        .map(|i| crate::roles::identity(play, tack_playbook::RoleId(i)))
        .collect();
    let mut completed: std::collections::BTreeSet<(String, String)> = Default::default();
    let mut lockstep = 0;
    // Where each task stands in the lockstep order; rebuilt only when an include splices.
    let order_index =
        |order: &[(usize, usize)]| -> std::collections::HashMap<(usize, usize), usize> {
            order.iter().enumerate().map(|(i, at)| (*at, i)).collect()
        };
    let mut index = order_index(&order);
    loop {
        // Each host's position: its innermost included file's, else the play's.
        let position = |host: &str, base: &HostCursor| -> Option<(usize, usize)> {
            match frames.get(host).and_then(|f| f.last()) {
                Some(frame) => frame.cursor.pos.map(|p| (frame.seg, p)),
                None => base.pos.map(|p| (0, p)),
            }
        };
        let placed: Vec<usize> = cursors
            .iter()
            .filter_map(|(h, c)| position(h, c).and_then(|at| index.get(&at).copied()))
            .collect();
        let Some(&lowest) = placed.iter().min() else { break };
        let pick = placed.iter().copied().filter(|p| *p >= lockstep).min().unwrap_or(lowest);
        lockstep = pick + 1;
        let (seg, next) = order[pick];
        let mut at: Vec<String> = cursors
            .iter()
            .filter(|(h, c)| position(h, c) == Some((seg, next)))
            .map(|(h, _)| h.clone())
            .collect();
        let ctx = segments[seg].tasks[next].clone();
        let ctx = &ctx;
        let advance = |host: &str,
                       failed: bool,
                       cursors: &mut Vec<(String, HostCursor)>,
                       frames: &mut BTreeMap<String, Vec<Frame>>,
                       segments: &[Segment<'_>]| {
            step(host, seg, next, failed, cursors, frames, segments);
        };
        // A role that already ran on a host under the same identity is passed over there.
        if let Some(role) = ctx.task.role
            && !play.role(role).allow_duplicates
        {
            let done: Vec<String> = at
                .iter()
                .filter(|h| completed.contains(&(identities[role.0].clone(), (*h).clone())))
                .cloned()
                .collect();
            let finishing = ctx.task.implicit && meta_arg(ctx) == "role_complete";
            if !finishing {
                for host in &done {
                    advance(host, false, &mut cursors, &mut frames, &segments);
                }
                at.retain(|h| !done.contains(h));
                if at.is_empty() {
                    continue;
                }
            }
        }
        if is_meta(ctx) {
            let kind = meta_arg(ctx);
            // ansible runs these once per host; the others once for the whole play (on the
            // first host at them).
            let per_host =
                matches!(kind.as_str(), "noop" | "end_host" | "role_complete" | "flush_handlers");
            let targets: Vec<String> =
                if per_host { at.clone() } else { at.iter().take(1).cloned().collect() };
            let params = segments[seg].params.clone();
            let view = this.view(ctx);
            let mut flushing = Vec::new();
            let mut ended: Vec<String> = Vec::new();
            for host in &targets {
                if !ctx.task.implicit {
                    callback.task_start(&view);
                }
                let conditional = !matches!(kind.as_str(), "noop" | "role_complete");
                if conditional
                    && let Some(skip) = this.meta_skip(ctx, host, &kind, params.clone())?
                {
                    // Shown, never counted in the recap.
                    callback.host_result(&view, &skip);
                    continue;
                }
                match kind.as_str() {
                    "flush_handlers" => flushing.push(host.clone()),
                    "role_complete" => {
                        if let Some(role) = ctx.task.role {
                            completed.insert((identities[role.0].clone(), host.clone()));
                        }
                    }
                    "end_host" => ended.push(host.clone()),
                    "end_play" | "end_batch" => ended.extend(this.hosts.iter().cloned()),
                    "clear_facts" => {
                        for h in &this.hosts {
                            this.scope
                                .set_gathered(h, std::sync::Arc::new(tack_template::Layer::new()));
                            states.entry(h.clone()).or_default().facts = None;
                        }
                    }
                    "clear_host_errors" => {
                        for (h, cursor) in cursors.iter_mut() {
                            cursor.failed = false;
                            states.entry(h.clone()).or_default().failed = false;
                        }
                    }
                    _ => {}
                }
            }
            if !flushing.is_empty() {
                this.flush(&mut handlers, &flushing, callback, stats, &mut cursors)?;
                frames.retain(|h, _| cursors.iter().any(|(c, cur)| c == h && !cur.failed));
            }
            for host in &at {
                if ended.contains(host) {
                    // The host is done with the play, not failed.
                    frames.remove(host);
                    if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) {
                        cursor.pos = None;
                    }
                } else if cursors.iter().any(|(h, c)| h == host && !c.failed) {
                    advance(host, false, &mut cursors, &mut frames, &segments);
                }
            }
            for host in &ended {
                frames.remove(host);
                if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) {
                    cursor.pos = None;
                }
            }
            this.update_play_hosts(&cursors);
            continue;
        }
        if matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeTasks) {
            let params = segments[seg].params.clone();
            let included = this.include(ctx, &at, params.as_ref(), callback, stats)?;
            let mut splice = pick + 1;
            let mut queues: BTreeMap<String, VecDeque<usize>> = BTreeMap::new();
            for (block, params, hosts_of) in included {
                let blocks: &[CompiledBlock] =
                    arena.alloc(vec![CompiledBlock { block, dep_chain: ctx.dep_chain.clone() }]);
                let mut segment = Segment::new(play, blocks, Some(params), |c| {
                    Ok(run.tags.should_run(&task_tags(c, &vars, templar)?))
                })?;
                // The included tasks inherit what the include inherits (its blocks, role
                // and play), as children of the include.
                for task in &mut segment.tasks {
                    let mut ancestry: Vec<_> = task
                        .ancestry
                        .iter()
                        .copied()
                        .filter(|a| !matches!(a, tack_playbook::walk::Ancestor::Play(_)))
                        .collect();
                    ancestry.extend(ctx.ancestry.iter().copied());
                    task.ancestry = ancestry;
                }
                let id = segments.len();
                let count = segment.tasks.len();
                segments.push(segment);
                for (i, entry) in (0..count).map(|i| (id, i)).enumerate() {
                    order.insert(splice + i, entry);
                }
                splice += count;
                index = order_index(&order);
                for host in hosts_of {
                    queues.entry(host).or_default().push_back(id);
                }
            }
            for host in &at {
                match queues.remove(host) {
                    Some(queue) => {
                        enter(host, queue, &mut cursors, &mut frames, &segments, seg, next)
                    }
                    None => advance(host, false, &mut cursors, &mut frames, &segments),
                }
            }
            this.update_play_hosts(&cursors);
            continue;
        }
        let params = segments[seg].params.clone();
        let segs = &segments;
        this.run_task(ctx, &at, params.clone(), callback, false, &mut |host, outcome| {
            let result = &outcome.result;
            if result.flag("failed") && !result.ignored {
                let base = cursors.iter().find(|(h, _)| h == host).and_then(|(_, c)| c.pos);
                let rescuing = rescuing(host, seg, next, base, &frames, segs);
                stats.count(result, rescuing);
                if rescuing {
                    this.remember_failure(host, ctx, result);
                }
                step(host, seg, next, true, &mut cursors, &mut frames, segs);
            } else {
                if result.flag("changed") {
                    handlers.notify(host, &this.notify_names(ctx, host, params.clone())?)?;
                }
                stats.count(result, false);
                step(host, seg, next, false, &mut cursors, &mut frames, segs);
            }
            Ok(())
        })?;
        this.update_play_hosts(&cursors);
    }

    for host in &hosts {
        let (set_facts, included) = this.scope.carried(host);
        let state = states.entry(host.clone()).or_default();
        state.set_facts = set_facts;
        state.included_vars = included;
    }
    let mut all_failed = true;
    for (host, cursor) in &cursors {
        if cursor.failed {
            states.entry(host.clone()).or_default().failed = true;
        } else {
            all_failed = false;
        }
    }
    Ok(if all_failed { PlayEnd::AllFailed } else { PlayEnd::Continue })
}

impl PlayRun<'_, '_> {
    fn runner<'t>(
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

    /// The implicit `Gathering Facts` task: the `setup` module on every host, its facts kept
    /// for the rest of the run.
    fn gather_facts(
        &self,
        keywords: &tack_playbook::post_validate::PlayKeywords,
        callback: &mut dyn Callback,
        stats: &mut Stats,
        states: &mut BTreeMap<String, HostState>,
        cursors: &mut [(String, HostCursor)],
    ) -> Result<(), Diagnostic> {
        let view = TaskView {
            name: "Gathering Facts".into(),
            action: "gather_facts".into(),
            looped: false,
            origin: self.play.origin.clone(),
        };
        callback.task_start(&view);
        let mut args = serde_json::Map::new();
        for (keyword, arg) in [
            (Keyword::GatherSubset, "gather_subset"),
            (Keyword::GatherTimeout, "gather_timeout"),
            (Keyword::FactPath, "fact_path"),
        ] {
            if let Some(value) = keywords.get(keyword) {
                args.insert(arg.to_string(), crate::json::to_json(value));
            }
        }
        let invocation = tack_agent::Invocation { args, check_mode: false, diff: false };
        for (host, cursor) in cursors.iter_mut() {
            use crate::connection::Connection;
            let result = match crate::connection::Local.run_module("setup", &invocation) {
                Ok(result) => crate::json::map_from_json(&result),
                Err(e) => {
                    let mut data = Mapping::new();
                    data.insert(s("failed"), crate::result::b(true));
                    data.insert(s("msg"), s(&e.to_string()));
                    data
                }
            };
            let mut shown = crate::result::HostResult::new(host, result.clone());
            shown.verbose_override = true;
            if shown.flag("failed") {
                let msg =
                    result.get("msg").map(|m| tack_yaml::pyrepr::str(&m.value)).unwrap_or_default();
                shown.error = Some(Diagnostic::at(
                    format!("Task failed: Module failed: {msg}"),
                    self.play.origin.clone(),
                ));
                stats.count(&shown, false);
                cursor.pos = None;
                cursor.failed = true;
            } else {
                if let Some(facts) = result.get("ansible_facts").and_then(Node::as_map) {
                    let layer = std::sync::Arc::new(crate::vars::facts_layer(facts));
                    self.scope.set_gathered(host, layer.clone());
                    states.entry(host.clone()).or_default().facts = Some(layer);
                }
                stats.count(&shown, false);
            }
            shown.data.remove("ansible_facts");
            callback.host_result(&view, &shown);
        }
        self.update_play_hosts(cursors);
        Ok(())
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

    fn view(&self, ctx: &TaskInContext<'_>) -> TaskView {
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
    fn run_task(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<std::sync::Arc<tack_template::Layer>>,
        callback: &mut dyn Callback,
        handler: bool,
        judge: &mut dyn FnMut(&str, &crate::task::TaskOutcome) -> Result<(), Diagnostic>,
    ) -> Result<(), Diagnostic> {
        let task = ctx.task;
        let Some(action) = Action::find(&task.action) else {
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

    /// A meta task's `when` on `host`: `None` when it holds, else the skipped result
    /// ansible shows (with its wording for each meta action).
    fn meta_skip(
        &self,
        ctx: &TaskInContext<'_>,
        host: &str,
        kind: &str,
        params: Option<std::sync::Arc<tack_template::Layer>>,
    ) -> Result<Option<crate::result::HostResult>, Diagnostic> {
        let runner = self.runner(ctx, Action::Debug, params);
        let Some(scope) = runner.scope(host) else { return Ok(None) };
        if runner.false_condition(&scope)?.is_none() {
            return Ok(None);
        }
        let tail = match kind {
            "flush_handlers" => format!(", not running handlers for {host}"),
            "clear_facts" => format!(", not clearing facts and fact cache for {host}"),
            "clear_host_errors" => format!(", not clearing host error state for {host}"),
            "end_batch" => ", continuing current batch".into(),
            "end_play" => ", continuing play".into(),
            "end_host" => format!(", continuing execution for {host}"),
            _ => String::new(),
        };
        let msg = if kind == "end_host" {
            format!("end_host conditional evaluated to false, continuing execution for {host}")
        } else {
            kind.to_string()
        };
        let mut data = Mapping::new();
        data.insert(s("changed"), crate::result::b(false));
        data.insert(s("msg"), s(&msg));
        data.insert(s("skip_reason"), s(&format!("{kind} conditional evaluated to False{tail}")));
        data.insert(s("skipped"), crate::result::b(true));
        Ok(Some(crate::result::HostResult::new(host, data)))
    }

    /// `include_tasks` on `hosts`: its `when` and loop per host, the file each item names,
    /// the files loaded once for every host that names them (with the same parameters), and
    /// ansible's `included: FILE for HOSTS` lines. Returns each file's block, its include
    /// parameters and its hosts, in the order ansible runs them.
    #[allow(clippy::type_complexity)]
    fn include(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<&std::sync::Arc<tack_template::Layer>>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<
        Vec<(tack_playbook::Block, std::sync::Arc<tack_template::Layer>, Vec<String>)>,
        Diagnostic,
    > {
        let view = self.view(ctx);
        callback.task_start(&view);
        let runner = self.runner(ctx, Action::Debug, params.cloned());
        let loop_var = ctx
            .task
            .attrs
            .get(Keyword::LoopControl)
            .and_then(Node::as_map)
            .and_then(|m| m.get("loop_var"))
            .map(|n| tack_yaml::pyrepr::str(&n.value))
            .unwrap_or_else(|| "item".into());
        // (target, item) → hosts, in first-seen order.
        let mut wanted: Vec<(String, Option<Node>, Vec<String>, Provenance)> = Vec::new();
        for host in hosts {
            let Some(scope) = runner.scope(host) else { continue };
            if let Some(cond) = runner.false_condition(&scope)? {
                let result = crate::result::skipped(host, &cond);
                stats.count(&result, false);
                callback.host_result(&view, &result);
                continue;
            }
            // The items keep the provenance of what their loop read.
            let (items, read): (Vec<Option<Node>>, tack_template::ProvenanceSet) =
                match (&ctx.task.loop_items, &ctx.task.loop_with) {
                    (Some(items), Some(lookup)) => {
                        let (list, read) = runner.with_items(lookup, items, &scope)?;
                        (list.into_iter().map(Some).collect(), read)
                    }
                    (Some(items), None) => {
                        let (list, read) = runner.loop_items(items, &scope)?;
                        (list.into_iter().map(Some).collect(), read)
                    }
                    (None, _) => (vec![None], Default::default()),
                };
            for item in items {
                let item_scope = match &item {
                    Some(value) => scope.with_var(&loop_var, value.clone(), read.derived()),
                    None => scope.clone(),
                };
                let raw = ctx.task.args.get("_raw_params").or_else(|| ctx.task.args.get("file"));
                let Some(raw) = raw else {
                    return Err(Diagnostic::at(
                        "No file specified for include_tasks",
                        ctx.task.origin.clone(),
                    ));
                };
                let target =
                    self.run.templar.render(raw, &item_scope).map_err(|e| e.to_diagnostic())?;
                // A task file is read on the controller: a name a managed host chose is never
                // looked up (seed 002).
                if target.provenance.is_managed_host() {
                    return Err(Diagnostic::at(
                        "the 'file' of this include was named by a managed host, and a \
                         controller file a host chose is never read",
                        ctx.task.origin.clone(),
                    ));
                }
                let target = tack_yaml::pyrepr::str(&target.value.value);
                match wanted.iter_mut().find(|(t, i, _, _)| *t == target && *i == item) {
                    Some((_, _, list, _)) => list.push(host.clone()),
                    None => wanted.push((target, item, vec![host.clone()], read.derived())),
                }
            }
        }
        // The include's own keywords stay with it: its condition, loop and tags were for the
        // include; its vars become the included tasks' include parameters.
        let mut parent = ctx.task.clone();
        for keyword in
            [Keyword::When, Keyword::Tags, Keyword::Loop, Keyword::LoopControl, Keyword::Name]
        {
            parent.attrs.remove(keyword);
        }
        parent.loop_items = None;
        parent.loop_with = None;
        let include_vars = std::mem::take(&mut parent.vars);
        let mut out = Vec::new();
        for (target, item, list, item_provenance) in wanted {
            let (file, block) = self.run.tasks.load_included_tasks(
                self.play,
                &parent,
                &target,
                &self.scope.play_vars(),
            )?;
            crate::refuse::check_included(&block)?;
            let mut layer = tack_template::Layer::from_mapping(&include_vars, Provenance::Trusted);
            if let Some(value) = &item {
                layer.insert(loop_var.clone(), value.clone(), item_provenance);
            }
            let label = item.as_ref().map(|i| tack_yaml::pyrepr::str(&i.value));
            callback.included(&file.display().to_string(), &list, label.as_deref());
            for host in &list {
                stats.count(&crate::result::HostResult::new(host, Mapping::new()), false);
            }
            out.push((block, std::sync::Arc::new(layer), list));
        }
        Ok(out)
    }

    /// The handler names a task's `notify` gives on `host` (rendered with its variables).
    fn notify_names(
        &self,
        ctx: &TaskInContext<'_>,
        host: &str,
        params: Option<std::sync::Arc<tack_template::Layer>>,
    ) -> Result<Vec<String>, Diagnostic> {
        let Some(node) = ctx.task.attrs.get(Keyword::Notify) else { return Ok(Vec::new()) };
        let Some(action) = Action::find(&ctx.task.action) else { return Ok(Vec::new()) };
        let Some(scope) = self.runner(ctx, action, params).scope(host) else {
            return Ok(Vec::new());
        };
        let rendered = self.run.templar.render(node, &scope).map_err(|e| e.to_diagnostic())?;
        Ok(match &rendered.value.value {
            Value::Seq(items) => items.iter().map(|i| tack_yaml::pyrepr::str(&i.value)).collect(),
            Value::Null => Vec::new(),
            other => vec![tack_yaml::pyrepr::str(other)],
        })
    }

    /// `ansible_failed_task` and `ansible_failed_result` for the rescue that follows.
    fn remember_failure(
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

    fn update_play_hosts(&self, cursors: &[(String, HostCursor)]) {
        let active: Vec<String> =
            cursors.iter().filter(|(_, c)| !c.failed).map(|(h, _)| h.clone()).collect();
        self.scope.set_play_hosts(&self.hosts, &active);
    }

    /// `meta: flush_handlers` for `hosts`: every handler in order, on the hosts notified for it
    /// (and still running).
    fn flush(
        &self,
        handlers: &mut Handlers<'_>,
        hosts: &[String],
        callback: &mut dyn Callback,
        stats: &mut Stats,
        cursors: &mut [(String, HostCursor)],
    ) -> Result<(), Diagnostic> {
        for index in 0..handlers.list.len() {
            let running: Vec<String> = hosts
                .iter()
                .filter(|h| cursors.iter().any(|(c, cur)| c == *h && !cur.failed))
                .cloned()
                .collect();
            let notified = handlers.take(index, &running);
            if notified.is_empty() {
                continue;
            }
            let ctx = handlers.list[index].ctx.clone();
            let mut judge = |host: &str, outcome: &crate::task::TaskOutcome| {
                let result = &outcome.result;
                if result.flag("failed") && !result.ignored {
                    if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) {
                        cursor.pos = None;
                        cursor.failed = true;
                    }
                } else if result.flag("changed") {
                    handlers.notify(host, &self.notify_names(&ctx, host, None)?)?;
                }
                stats.count(result, false);
                Ok(())
            };
            self.run_task(&ctx, &notified, None, callback, true, &mut judge)?;
            self.update_play_hosts(cursors);
        }
        Ok(())
    }
}
