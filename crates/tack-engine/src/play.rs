//! One play under the `linear` strategy, as ansible-core 2.21 runs it: every host has a
//! position in the play's flat task list (see `iterator`); each round runs the first task,
//! from the lockstep cursor on, that some host is at, on every host at it. A host that fails
//! outside any rescue leaves the play; `flush_handlers` runs the notified handlers in their
//! order; when every host of the play failed, the playbook stops.

use std::collections::BTreeMap;

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_playbook::compile::{CompiledBlock, compile_play};
use tack_playbook::listing::{listed_name, task_tags};
use tack_playbook::play_vars::{play_basedir, play_var_layers};
use tack_playbook::post_validate::post_validate_play;
use tack_playbook::tables::Keyword;
use tack_playbook::tables::actions as action_names;
use tack_playbook::walk::{Sections, TaskInContext, walk, walk_spans};
use tack_template::Provenance;
use tack_yaml::{Mapping, Node, Value};

use crate::actions::Action;
use crate::callback::{Callback, Stats, TaskView};
use crate::handlers::Handlers;
use crate::iterator::{HostCursor, Layout};
use crate::result::s;
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

    let compiled = compile_play(play);
    let (tasks, spans, innermost) = walk_spans(play, &compiled);
    let mut selected = Vec::with_capacity(tasks.len());
    for ctx in &tasks {
        let keep = (ctx.task.implicit && is_meta(ctx))
            || run.tags.should_run(&task_tags(ctx, &vars, templar)?);
        selected.push(keep);
    }
    let handler_blocks = handler_blocks(play);
    let mut handlers =
        Handlers::new(play, walk(play, &handler_blocks, Sections::All), templar, &vars);
    let layout = Layout { spans: &spans, innermost: &innermost, selected: &selected };
    let mut cursors: Vec<(String, HostCursor)> =
        hosts.iter().map(|h| (h.clone(), layout.start())).collect();
    let this = PlayRun { run, play, scope, hosts: hosts.clone() };

    this.check_connections(&tasks, &handlers)?;
    for host in &hosts {
        if let Some(facts) = states.get(host).and_then(|s| s.facts.clone()) {
            this.scope.set_gathered(host, facts);
        }
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
    loop {
        let positions: Vec<usize> = cursors.iter().filter_map(|(_, c)| c.pos).collect();
        let Some(&lowest) = positions.iter().min() else { break };
        let next = positions.iter().copied().filter(|p| *p >= lockstep).min().unwrap_or(lowest);
        lockstep = next + 1;
        let mut at: Vec<String> =
            cursors.iter().filter(|(_, c)| c.pos == Some(next)).map(|(h, _)| h.clone()).collect();
        let ctx = &tasks[next];
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
                for (host, cursor) in cursors.iter_mut() {
                    if done.contains(host) {
                        layout.succeeded(cursor, next);
                    }
                }
                at.retain(|h| !done.contains(h));
                if at.is_empty() {
                    continue;
                }
            }
        }
        if is_meta(ctx) {
            if !ctx.task.implicit {
                // Measured: an explicit meta task shows its banner once per host it runs on.
                let view = this.view(ctx);
                for _ in &at {
                    callback.task_start(&view);
                }
            }
            match meta_arg(ctx).as_str() {
                "flush_handlers" => {
                    this.flush(&mut handlers, &at, callback, stats, &mut cursors)?
                }
                "role_complete" => {
                    if let Some(role) = ctx.task.role {
                        for host in &at {
                            completed.insert((identities[role.0].clone(), host.clone()));
                        }
                    }
                }
                _ => {}
            }
            for (host, cursor) in cursors.iter_mut() {
                if at.contains(host) && cursor.pos == Some(next) {
                    layout.succeeded(cursor, next);
                }
            }
            continue;
        }
        this.run_task(ctx, &at, callback, false, &mut |host, outcome| {
            let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) else {
                return Ok(());
            };
            let result = &outcome.result;
            if result.flag("failed") && !result.ignored {
                let rescuing = layout.rescuing(next);
                stats.count(result, rescuing);
                if rescuing {
                    this.remember_failure(host, ctx, result);
                }
                layout.failed(cursor, next);
            } else {
                if result.flag("changed") {
                    handlers.notify(host, &this.notify_names(ctx, host)?)?;
                }
                stats.count(result, false);
                layout.succeeded(cursor, next);
            }
            Ok(())
        })?;
        this.update_play_hosts(&cursors);
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
    fn runner<'t>(&'t self, ctx: &'t TaskInContext<'t>, action: Action) -> TaskRun<'t> {
        TaskRun {
            ctx,
            action,
            templar: self.run.templar,
            vars: &self.scope,
            verbosity: self.run.facts.verbosity,
            role: crate::roles::layers(self.play, ctx),
            play: self.play,
            check_flag: self.run.facts.check_mode,
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
                let Some(scope) = self.runner(ctx, Action::Debug).scope(host) else { continue };
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
            name: listed_name(self.play, task).unwrap_or_else(|| task.action.clone()),
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
        let runner = self.runner(ctx, action);
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

    /// The handler names a task's `notify` gives on `host` (rendered with its variables).
    fn notify_names(&self, ctx: &TaskInContext<'_>, host: &str) -> Result<Vec<String>, Diagnostic> {
        let Some(node) = ctx.task.attrs.get(Keyword::Notify) else { return Ok(Vec::new()) };
        let Some(action) = Action::find(&ctx.task.action) else { return Ok(Vec::new()) };
        let Some(scope) = self.runner(ctx, action).scope(host) else { return Ok(Vec::new()) };
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
                    handlers.notify(host, &self.notify_names(&ctx, host)?)?;
                }
                stats.count(result, false);
                Ok(())
            };
            self.run_task(&ctx, &notified, callback, true, &mut judge)?;
            self.update_play_hosts(cursors);
        }
        Ok(())
    }
}
