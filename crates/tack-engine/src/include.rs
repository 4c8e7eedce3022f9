//! `include_tasks` and `include_role` in a play: what each host's include names (its `when`
//! and loop per host), each file or role loaded once for every host naming it with the same
//! parameters, the `included:` lines, and the new segments spliced into the play's lockstep
//! order (with the handlers and roles they bring).
//!
//! Reads task files only under names the playbook chose (seed 002); runs none of their
//! tasks itself.

use std::collections::{BTreeMap, VecDeque};

use typed_arena::Arena;

use tack_diag::Diagnostic;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::dynamic::Included;
use tack_playbook::listing::task_tags;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::{Sections, TaskInContext, walk};
use tack_template::Provenance;
use tack_yaml::{Mapping, Node};

use crate::handlers::Handlers;
use crate::play::PlayRun;
use crate::segments::{Round, Segment, Walk};
use tack_actions::Action;
use tack_report::callback::{Callback, Stats};

/// What splicing an include changes besides the callback and the recap: the hosts'
/// positions, the play's handlers and (through `plays`) its role arena.
pub(crate) struct Splice<'m, 's> {
    pub walk: &'m mut Walk<'s>,
    pub handlers: &'m mut Handlers<'s>,
    pub arena: &'s Arena<Vec<CompiledBlock>>,
    pub plays: &'s Arena<tack_playbook::Play>,
    pub vars: &'m Mapping,
}

impl<'r> PlayRun<'r, '_> {
    /// Runs the include (`include_tasks` or `include_role`) `ctx` for the hosts of `round`:
    /// each host enters what it included, or moves on when it included nothing.
    pub(crate) fn splice_include(
        &self,
        ctx: &TaskInContext<'r>,
        round: &Round,
        state: &mut Splice<'_, 'r>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<(), Diagnostic> {
        let (seg, next) = (round.seg, round.next);
        let params = state.walk.segments[seg].params.clone();
        let included = match &ctx.task.kind {
            tack_playbook::TaskKind::IncludeRole(_) => {
                self.include_role(ctx, &round.hosts, params.as_ref(), callback, stats)?
            }
            _ => self.include(ctx, &round.hosts, params.as_ref(), false, callback, stats)?,
        };
        self.count_task_failures(ctx, &round.hosts, state.walk, (seg, next), stats);
        self.splice_loaded(ctx, (seg, next), &round.hosts, included, round.pick + 1, state)
    }

    /// Counts those of `hosts` whose include failed as a task fails, each as rescued when
    /// the walk has a rescue for it there (and the rescue sees the failure, as after any
    /// task).
    pub(crate) fn count_task_failures(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        walk: &crate::segments::Walk<'_>,
        (seg, next): (usize, usize),
        stats: &mut Stats,
    ) {
        let failed = self.include_task_failed.borrow();
        for (host, result) in hosts.iter().filter_map(|h| failed.get_key_value(h)) {
            let rescuing = walk.rescuing(host, seg, next);
            stats.count(result, rescuing);
            if rescuing {
                let outcome = crate::task::TaskOutcome {
                    items: Vec::new(),
                    result: result.clone(),
                    diff: false,
                    failed_task: None,
                };
                self.remember_failure(host, ctx, &outcome);
            }
        }
    }

    /// Splices what the include `ctx` at `at` (segment, task) loaded (`included`: each
    /// file's or role's blocks, its parameters and its hosts) into the walk, the new tasks
    /// placed at `splice` in the lockstep order; each of `hosts` enters what it included, or
    /// moves on when it included nothing.
    pub(crate) fn splice_loaded(
        &self,
        ctx: &TaskInContext<'r>,
        (seg, next): (usize, usize),
        hosts: &[String],
        included: Vec<(Included, std::sync::Arc<tack_template::Layer>, Vec<String>)>,
        mut splice: usize,
        state: &mut Splice<'_, 'r>,
    ) -> Result<(), Diagnostic> {
        let is_tasks = matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeTasks);
        let mut queues: BTreeMap<String, VecDeque<usize>> = BTreeMap::new();
        let templar = self.run.templar;
        let apply: Option<&'r tack_playbook::Block> =
            match self.run.tasks.load_apply(self.play(), ctx.task)? {
                Some(block) => {
                    let held =
                        state.arena.alloc(vec![CompiledBlock { block, dep_chain: Vec::new() }]);
                    held.first().map(|c| &c.block)
                }
                None => None,
            };
        for (included, params, hosts_of) in included {
            if let Some(roles) = included.roles {
                self.grow_roles(state.plays, roles);
            }
            let play = self.play();
            if !included.handlers.is_empty() {
                let blocks: &[CompiledBlock] = state.arena.alloc(included.handlers);
                state.handlers.extend(play, walk(play, blocks, Sections::All), templar, state.vars);
            }
            let blocks: &[CompiledBlock] = state.arena.alloc(included.blocks);
            // The included tasks inherit what the include inherits (its blocks, role and
            // play) but nothing of the include itself, which is dynamic (ansible passes over
            // a parent that was not loaded statically); its `apply` block stands in its place.
            let adjust = |task: &mut TaskInContext<'r>| adopt(task, ctx, apply, is_tasks);
            let segment = Segment::adjusted(play, blocks, Some(params), adjust, |c| {
                Ok(self.run.tags.should_run(&task_tags(c, state.vars, templar)?))
            })?;
            let (id, after) = state.walk.splice(splice, segment);
            splice = after;
            for host in hosts_of {
                queues.entry(host).or_default().push_back(id);
            }
        }
        for host in hosts {
            // A host whose include failed to load goes on as failed (to a rescue or an
            // `always`, if any), after the files of it that loaded when one follows (ansible
            // puts those at its start; without one the host runs none of them), and stays
            // among the failed hosts as ansible's `_failed_hosts` keeps it.
            let failed_task = self.include_task_failed.borrow_mut().remove(host).is_some();
            let failed_load = self.include_failed.borrow_mut().remove(host);
            let fails = failed_task || failed_load;
            if failed_load {
                self.forced.borrow_mut().insert(host.clone());
            }
            if fails && !state.walk.runs_on_after_failing(host, seg, next) {
                queues.remove(host);
            }
            match queues.remove(host) {
                Some(queue) => state.walk.enter(host, queue, fails, seg, next),
                None => state.walk.advance(host, seg, next, fails),
            }
        }
        Ok(())
    }

    /// `include_tasks` on `hosts` (a handler's when `as_handler`): its `when` and loop per host, the file each item names,
    /// the files loaded once for every host that names them (with the same parameters), and
    /// ansible's `included: FILE for HOSTS` lines. Returns each file's blocks, its include
    /// parameters and its hosts, in the order ansible runs them.
    #[allow(clippy::type_complexity)]
    pub(crate) fn include(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<&std::sync::Arc<tack_template::Layer>>,
        as_handler: bool,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<Vec<(Included, std::sync::Arc<tack_template::Layer>, Vec<String>)>, Diagnostic>
    {
        let names = IncludeNames::of(ctx)?;
        let view = self.banner(ctx, hosts.first(), params.cloned());
        if !hosts.is_empty() {
            self.reads.show(callback);
        }
        if as_handler {
            callback.handler_start(&view);
        } else {
            callback.task_start(&view);
        }
        let wanted = self.wanted(ctx, hosts, params, callback, stats, &names)?;
        // The strategy gathers each including host's variables once as it reads the results.
        let mut including: Vec<&String> = Vec::new();
        for host in wanted.iter().flat_map(|w| &w.hosts) {
            if !including.contains(&host) {
                including.push(host);
            }
        }
        self.reads.show_times(callback, including.len());
        self.load_included(ctx, wanted, as_handler, callback, stats)
    }

    /// The files `wanted` names for the `include_tasks` `ctx`, each loaded once for the
    /// hosts that name it with the same parameters, with ansible's `included: FILE for
    /// HOSTS` lines.
    #[allow(clippy::type_complexity)]
    pub(crate) fn load_included(
        &self,
        ctx: &TaskInContext<'_>,
        wanted: Vec<Wanted>,
        as_handler: bool,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<Vec<(Included, std::sync::Arc<tack_template::Layer>, Vec<String>)>, Diagnostic>
    {
        let (parent, include_vars) = stripped_parent(ctx);
        let loop_var = loop_var(ctx);
        let mut out = Vec::new();
        for want in wanted {
            let target = want.names[0].clone().unwrap_or_default();
            let loaded = self.run.tasks.load_included_tasks(
                self.play(),
                &parent,
                &target,
                &self.scope.play_vars(),
            );
            let mut included = match loaded {
                Ok(included) => included,
                // A file that cannot be loaded fails the include on its hosts; a parser error
                // ends the run.
                Err(e) if e.class == tack_diag::ErrorClass::General => {
                    self.include_failure(ctx, &want.hosts, e, callback, stats);
                    continue;
                }
                Err(e) => return Err(e),
            };
            for imported in self.run.tasks.take_imported() {
                callback.verbose_line(2, &format!("statically imported: {}", imported.display()));
            }
            for block in &mut included.blocks {
                crate::refuse::check_included(&block.block)?;
                if as_handler {
                    crate::flush::check_handler_file(&block.block)?;
                }
                block.dep_chain = ctx.dep_chain.clone();
            }
            for block in &included.handlers {
                crate::refuse::check_included_handlers(&block.block)?;
            }
            let layer = param_layer(&include_vars, &loop_var, &want);
            let label = want.item.as_ref().map(|i| tack_yaml::pyrepr::str(&i.value));
            // Each block of a task file (not a handler's) gathers once to filter it by tags.
            if !as_handler {
                self.reads.show_times(callback, included.blocks.len());
            }
            callback.included(&included.file.display().to_string(), &want.hosts, label.as_deref());
            for host in &want.hosts {
                stats.count(&tack_report::result::HostResult::new(host, Mapping::new()), false);
            }
            out.push((included, std::sync::Arc::new(layer), want.hosts));
        }
        Ok(out)
    }

    /// An include's `when` and loop on each of `hosts` (after its banner, the caller's; a
    /// false `when` shows the host skipped), and what each item names: `nodes` rendered with the host's variables and
    /// the item. Hosts naming the same things with the same item share one entry, in
    /// first-seen order.
    pub(crate) fn wanted(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<&std::sync::Arc<tack_template::Layer>>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
        names: &IncludeNames<'_>,
    ) -> Result<Vec<Wanted>, Diagnostic> {
        let (nodes, keywords) = (&names.args, &names.keywords);
        let view = self.view(ctx);
        let runner = self.runner(ctx, Action::Debug, params.cloned());
        let loop_var = loop_var(ctx);
        let mut wanted: Vec<Wanted> = Vec::new();
        for host in hosts {
            self.reads.before_result(hosts, host, callback);
            let Some(scope) = runner.scope(host) else { continue };
            // A plan does not include what it cannot name yet, nor what it cannot know runs.
            if let Some(result) = runner.plan_include_gate(host, &scope, nodes) {
                stats.count(&result, false);
                callback.host_result(&view, &result);
                continue;
            }
            // Without a loop the `when` is the include's; with one it is each item's.
            if ctx.task.loop_items.is_none()
                && let Some(cond) = runner.false_condition(&scope)?
            {
                let result = tack_report::result::skipped(host, &cond);
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
            let looped = ctx.task.loop_items.is_some();
            let mut skipped_items: Vec<Node> = Vec::new();
            let mut failed_items: Vec<Node> = Vec::new();
            let mut count = 0;
            for item in items {
                count += 1;
                let item_scope = match &item {
                    Some(value) => scope.with_var(&loop_var, value.clone(), read.derived()),
                    None => scope.clone(),
                };
                // `break_when` is judged after every item, skipped or not.
                use crate::loop_control::ItemBreak;
                let breaks = match &item {
                    Some(value) => {
                        match crate::loop_control::include_break(ctx, self.run.templar, &item_scope)
                        {
                            ItemBreak::Unset => None,
                            ItemBreak::Verdict(verdict) => Some(verdict),
                            ItemBreak::Failed { message, error } => {
                                // The item fails, includes nothing, and ends the loop.
                                let result = failed_break(host, &loop_var, value, message, error);
                                callback.item_result(&view, &result);
                                failed_items.push(Node::bare(tack_yaml::Value::Map(result.data)));
                                break;
                            }
                        }
                    }
                    None => None,
                };
                if looped
                    && let Some(value) = &item
                    && let Some(cond) = runner.false_condition(&item_scope)?
                {
                    let mut result = tack_report::result::skipped(host, &cond);
                    result.data.insert(tack_report::result::s(&loop_var), value.clone());
                    result.data.insert(
                        tack_report::result::s("ansible_loop_var"),
                        tack_report::result::s(&loop_var),
                    );
                    if let Some(verdict) = breaks {
                        result.data.insert(
                            tack_report::result::s("break_when_result"),
                            tack_report::result::b(verdict),
                        );
                    }
                    result.item_label = Some(value.clone());
                    callback.item_result(&view, &result);
                    skipped_items.push(Node::bare(tack_yaml::Value::Map(result.data)));
                    if breaks == Some(true) {
                        break;
                    }
                    continue;
                }
                // The include's bool keywords, post-validated for this host and item as
                // `TaskExecutor` does before it hands the include back: one that cannot be
                // converted fails the item (or the host).
                let mut flags = Vec::with_capacity(keywords.len());
                let mut bad = None;
                for (name, node) in keywords {
                    let Some(node) = node else { continue };
                    let origin = ctx.task.origin.clone();
                    match crate::task::bool_keyword(
                        self.run.templar,
                        name,
                        node,
                        &item_scope,
                        origin,
                    ) {
                        Ok(flag) => flags.push((*name, flag)),
                        Err(e) => {
                            bad = Some(e);
                            break;
                        }
                    }
                }
                if let Some(error) = bad {
                    match &item {
                        Some(value) => {
                            let result = failed_item(host, &loop_var, value, error);
                            callback.item_result(&view, &result);
                            failed_items.push(Node::bare(tack_yaml::Value::Map(result.data)));
                        }
                        None => {
                            let result = failed_include(host, error);
                            callback.host_result(&view, &result);
                            self.include_task_failed.borrow_mut().insert(host.clone(), result);
                        }
                    }
                    if breaks == Some(true) {
                        break;
                    }
                    continue;
                }
                let mut names = Vec::with_capacity(nodes.len());
                for (arg, node) in nodes {
                    let Some(node) = node else {
                        names.push(None);
                        continue;
                    };
                    let rendered = self
                        .run
                        .templar
                        .render(node, &item_scope)
                        .map_err(|e| e.to_diagnostic())?;
                    // What an include names is read on the controller: a name a managed host
                    // chose is never looked up (seed 002).
                    if rendered.provenance.is_managed_host() {
                        return Err(Diagnostic::at(
                            format!(
                                "the '{arg}' of this include was named by a managed host, and \
                                 a controller file a host chose is never read"
                            ),
                            ctx.task.origin.clone(),
                        ));
                    }
                    names.push(Some(tack_yaml::pyrepr::str(&rendered.value.value)));
                }
                match wanted
                    .iter_mut()
                    .find(|w| w.names == names && w.flags == flags && w.item == item)
                {
                    Some(w) => w.hosts.push(host.clone()),
                    None => wanted.push(Wanted {
                        names,
                        flags,
                        item,
                        hosts: vec![host.clone()],
                        provenance: read.derived(),
                    }),
                }
                if breaks == Some(true) {
                    break;
                }
            }
            if !failed_items.is_empty() {
                // The loop failed: its result says so without an error of its own (each
                // failed item showed its), and the host goes on as an include that failed.
                let result = failed_loop(host, failed_items);
                callback.host_result(&view, &result);
                self.include_task_failed.borrow_mut().insert(host.clone(), result);
            } else if looped && (count == 0 || skipped_items.len() == count) {
                let result = all_skipped(host, skipped_items);
                stats.count(&result, false);
                callback.host_result(&view, &result);
            }
        }
        Ok(wanted)
    }
}

/// Gives a task an include brought in the include's place: it inherits what the include
/// inherits (its blocks, role and play) but nothing of the include itself, which is dynamic
/// (ansible passes over a parent that was not loaded statically); the include's `apply`
/// block stands in its place.
pub(crate) fn adopt<'r>(
    task: &mut TaskInContext<'r>,
    include: &TaskInContext<'r>,
    apply: Option<&'r tack_playbook::Block>,
    is_tasks: bool,
) {
    use tack_playbook::walk::Ancestor;
    let mut ancestry: Vec<_> =
        task.ancestry.iter().copied().filter(|a| !matches!(a, Ancestor::Play(_))).collect();
    // The file's own tasks list the include last among the imports.
    let at = match ancestry.iter().rposition(|a| matches!(a, Ancestor::Import(_))) {
        Some(at) if is_tasks => {
            ancestry.remove(at);
            at
        }
        _ => ancestry.len(),
    };
    if let Some(apply) = apply {
        ancestry.insert(at, Ancestor::Block(apply));
    }
    ancestry.extend(include.ancestry.iter().copied());
    task.ancestry = ancestry;
}

impl Wanted {
    /// The bool keyword `name` as these hosts post-validated it, `None` when unset.
    pub(crate) fn flag(&self, name: &str) -> Option<bool> {
        self.flags.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
}

/// What an include renders per host and item: its file, or its role's name and options
/// (`args`), and the bool keywords post-validated with them (`keywords`).
pub(crate) struct IncludeNames<'t> {
    pub args: Vec<(&'static str, Option<&'t Node>)>,
    pub keywords: Vec<(&'static str, Option<&'t Node>)>,
}

impl<'t> IncludeNames<'t> {
    pub(crate) fn of(ctx: &'t TaskInContext<'_>) -> Result<IncludeNames<'t>, Diagnostic> {
        if let tack_playbook::TaskKind::IncludeRole(target) = &ctx.task.kind {
            return Ok(IncludeNames {
                args: crate::include_role::role_nodes(target).to_vec(),
                keywords: crate::include_role::role_keywords(ctx).to_vec(),
            });
        }
        match ctx.task.args.get("_raw_params").or_else(|| ctx.task.args.get("file")) {
            Some(raw) => Ok(IncludeNames { args: vec![("file", Some(raw))], keywords: Vec::new() }),
            None => {
                Err(Diagnostic::at("No file specified for include_tasks", ctx.task.origin.clone()))
            }
        }
    }
}

/// What an include names for some hosts with one loop item.
pub(crate) struct Wanted {
    pub names: Vec<Option<String>>,
    /// The include's bool keywords that are set, as post-validated for these hosts.
    pub flags: Vec<(&'static str, bool)>,
    pub item: Option<Node>,
    pub hosts: Vec<String>,
    /// The loop item's provenance.
    pub provenance: Provenance,
}

/// The include's `loop_control.loop_var` (`item` by default).
pub(crate) fn loop_var(ctx: &TaskInContext<'_>) -> String {
    ctx.task
        .attrs
        .get(Keyword::LoopControl)
        .and_then(Node::as_map)
        .and_then(|m| m.get("loop_var"))
        .map(|n| tack_yaml::pyrepr::str(&n.value))
        .unwrap_or_else(|| "item".into())
}

/// The include as the parent of what it brings in: its condition, loop and tags were for
/// the include; its `vars` (returned apart) become the included tasks' include parameters.
pub(crate) fn stripped_parent(ctx: &TaskInContext<'_>) -> (tack_playbook::Task, Mapping) {
    let mut parent = ctx.task.clone();
    for keyword in
        [Keyword::When, Keyword::Tags, Keyword::Loop, Keyword::LoopControl, Keyword::Name]
    {
        parent.attrs.remove(keyword);
    }
    parent.loop_items = None;
    parent.loop_with = None;
    let vars = std::mem::take(&mut parent.vars);
    (parent, vars)
}

/// The include parameters the included tasks see: the include's `vars` and its loop item.
pub(crate) fn param_layer(vars: &Mapping, loop_var: &str, want: &Wanted) -> tack_template::Layer {
    let mut layer = tack_template::Layer::from_mapping(vars, Provenance::Trusted);
    if let Some(value) = &want.item {
        layer.insert(loop_var.to_string(), value.clone(), want.provenance.clone());
    }
    layer
}

/// An include (without a loop) that could not be post-validated: ansible's failed result.
fn failed_include(host: &str, error: Diagnostic) -> tack_report::result::HostResult {
    use tack_report::result::{b, s};
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(&error.brief()));
    let mut result = tack_report::result::HostResult::new(host, data);
    result.error = Some(error);
    result
}

/// A loop item whose include could not be post-validated: ansible's failed item result.
fn failed_item(
    host: &str,
    loop_var: &str,
    item: &Node,
    error: Diagnostic,
) -> tack_report::result::HostResult {
    of_item(failed_include(host, error), loop_var, item)
}

/// A loop item whose `break_when` could not be evaluated: ansible's failed item result.
fn failed_break(
    host: &str,
    loop_var: &str,
    item: &Node,
    message: String,
    error: Diagnostic,
) -> tack_report::result::HostResult {
    use tack_report::result::{b, s};
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("break_when_result"), s(&message));
    data.insert(s("exception"), s("(traceback unavailable)"));
    data.insert(s("failed"), b(true));
    let mut result = tack_report::result::HostResult::new(host, data);
    result.error = Some(error);
    of_item(result, loop_var, item)
}

/// `result` as loop item `item`'s: the loop variable's keys and the item's label.
fn of_item(
    mut result: tack_report::result::HostResult,
    loop_var: &str,
    item: &Node,
) -> tack_report::result::HostResult {
    use tack_report::result::s;
    result.data.insert(s(loop_var), item.clone());
    result.data.insert(s("ansible_loop_var"), s(loop_var));
    result.item_label = Some(item.clone());
    result
}

/// A looped include with failed items: the loop's own result, as `_run_loop` builds it.
fn failed_loop(host: &str, items: Vec<Node>) -> tack_report::result::HostResult {
    use tack_report::result::{b, s};
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s("One or more items failed"));
    data.insert(s("results"), Node::bare(tack_yaml::Value::Seq(items)));
    tack_report::result::HostResult::new(host, data)
}

/// A looped include's result on a host where every item was skipped (or there were none),
/// as ansible's loop result says it.
fn all_skipped(host: &str, items: Vec<Node>) -> tack_report::result::HostResult {
    use tack_report::result::{b, s};
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    if items.is_empty() {
        data.insert(s("results"), Node::bare(tack_yaml::Value::Seq(Vec::new())));
        data.insert(s("skip_reason"), s("No items in the list"));
        data.insert(s("skipped"), b(true));
        data.insert(s("skipped_reason"), s("No items in the list"));
        data.insert(s("failed"), b(false));
    } else {
        data.insert(s("failed"), b(false));
        data.insert(s("msg"), s("All items skipped"));
        data.insert(s("results"), Node::bare(tack_yaml::Value::Seq(items)));
        data.insert(s("skipped"), b(true));
    }
    tack_report::result::HostResult::new(host, data)
}
