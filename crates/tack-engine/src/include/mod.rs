//! What every dynamic include shares (`include_tasks` and `include_role`, in any strategy):
//! what it renders per host and item ([`IncludeNames`]), its `when` and loop per host and what
//! each item names ([`wanted`], with the skipped and failed results ansible shows), the
//! include as the parent of what it brings ([`adopt`], [`stripped_parent`], its `apply`
//! block) and the include parameters the included tasks see, and an include that failed to
//! load ([`include_failure`]).
//!
//! What a host's include names is read on the controller; a name a managed host chose is
//! found only inside the role's and the playbook's directories (seed 002), which the
//! loading (`tack_playbook`'s) enforces. Loading is `include_tasks`' and
//! `include_role`'s; placing what was loaded is `splice`'s.

pub(crate) mod role;
pub(crate) mod splice;
pub(crate) mod tasks;

use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::RoleTarget;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::dynamic::Included;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_template::{Layer, Provenance};
use tack_yaml::{Mapping, Node, Value};

use tack_report::callback::{Callback, Stats};

use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;

/// What includes loaded: each file's or role's blocks, its include parameters and its hosts,
/// in the order ansible runs them.
pub(crate) type Loaded = Vec<(Included, Arc<Layer>, Vec<String>)>;

/// The include's `apply` block, kept for the play: it stands in the include's place as the
/// parent of what it brings.
pub(crate) fn apply_block<'r>(
    env: &PlayEnv<'r, '_>,
    ctx: &TaskInContext<'_>,
) -> Result<Option<&'r tack_playbook::Block>, Diagnostic> {
    Ok(match env.run.tasks.load_apply(env.play(), ctx.task)? {
        Some(block) => {
            let held = env.blocks.alloc(vec![CompiledBlock { block, dep_chain: Vec::new() }]);
            held.first().map(|c| &c.block)
        }
        None => None,
    })
}

/// An include's `when` and loop on each of `hosts` (after its banner, the caller's; a
/// false `when` shows the host skipped), and what each item names: `nodes` rendered with the host's variables and
/// the item. Hosts naming the same things with the same item share one entry, in
/// first-seen order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn wanted(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'_>,
    hosts: &[String],
    params: Option<&std::sync::Arc<tack_template::Layer>>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    names: &IncludeNames<'_>,
) -> Result<Vec<Wanted>, Diagnostic> {
    let (nodes, keywords) = (&names.args, &names.keywords);
    // `run_once` on an include makes it the first host's alone: the others include nothing
    // and move on (it does not reach the included tasks, as ansible documents).
    let hosts = match env.task_controls(ctx, hosts, params.cloned())?.run_once {
        true => &hosts[..hosts.len().min(1)],
        false => hosts,
    };
    let view = env.view(ctx);
    let reading = env.reading(ctx, params.cloned());
    let templar = env.run.templar;
    let loop_var = loop_var(ctx);
    let register = reading.register();
    let keep =
        |host: &str, data: &Mapping| register_result(env, ctx, register.as_deref(), host, data);
    let mut wanted: Vec<Wanted> = Vec::new();
    for host in hosts {
        env.reads.before_result(hosts, host, callback);
        let Some(scope) = reading.scope(host) else { continue };
        // A plan does not include what it cannot name yet, nor what it cannot know runs.
        let planning = env.run.facts.plan;
        if let Some(result) = crate::plan::include_gate(&reading, planning, host, &scope, nodes) {
            stats.count(&result, false);
            callback.host_result(&view, &result);
            continue;
        }
        // Without a loop the `when` is the include's; with one it is each item's. One that
        // cannot be evaluated fails the include on this host, as a task's does.
        // What the `when` raised shows with a skip or a failure, as a task's result shows
        // it; an include that runs shows nothing of it (ansible's include result goes to no
        // callback but the include's).
        if ctx.task.loop_items.is_none() {
            let (evaluated, raised) = tack_diag::recording_deprecations(|| {
                crate::task::when::evaluate(ctx, templar, &scope).false_condition()
            });
            match evaluated {
                Ok(None) => {}
                Ok(Some(cond)) => {
                    let mut result = tack_report::result::skipped(host, &cond);
                    result.add_raised_deprecations(raised);
                    keep(host, &result.data);
                    stats.count(&result, false);
                    callback.host_result(&view, &result);
                    continue;
                }
                Err(error) => {
                    let mut result = failed_include(host, error);
                    result.add_raised_deprecations(raised);
                    result.data.insert(
                        tack_report::result::s("exception"),
                        tack_report::result::s("(traceback unavailable)"),
                    );
                    keep(host, &result.data);
                    let ignore = reading.flag(Keyword::IgnoreErrors, &scope).unwrap_or(false);
                    failed_on(state, host, result, ignore, &view, callback, stats);
                    continue;
                }
            }
        }
        // The items keep the provenance of what their loop read.
        let (items, read): (Vec<Option<Node>>, tack_template::ProvenanceSet) =
            match &ctx.task.loop_items {
                Some(source) => {
                    let (list, read) = match crate::task::items::items(&reading, source, &scope) {
                        Ok(found) => found,
                        Err(failed) => {
                            let cond = crate::task::items::when_before_loop_error(
                                ctx, templar, &scope, failed,
                            )?;
                            let result = tack_report::result::skipped(host, &cond);
                            keep(host, &result.data);
                            stats.count(&result, false);
                            callback.host_result(&view, &result);
                            continue;
                        }
                    };
                    (list.into_iter().map(Some).collect(), read)
                }
                None => (vec![None], Default::default()),
            };
        let looped = ctx.task.loop_items.is_some();
        let control = crate::task::loop_control::LoopControl::read(&reading, &scope)?;
        let listed: Vec<Node> = items.iter().flatten().cloned().collect();
        let mut skipped_items: Vec<Node> = Vec::new();
        let mut failed_items: Vec<Node> = Vec::new();
        // Every item's result in order, for `register`.
        let mut item_results: Vec<Node> = Vec::new();
        let mut count = 0;
        for (index, item) in items.into_iter().enumerate() {
            control.pause_before(index);
            count += 1;
            // The loop's variables for this item: the include's `when` and names see them,
            // and so do the tasks it brings in (ansible's include parameters).
            let loop_vars = match &item {
                Some(_) => control.item_vars(&listed, index, &read),
                None => Vec::new(),
            };
            let item_scope = loop_vars.iter().fold(scope.clone(), |scope, (name, value, prov)| {
                scope.with_var(name, value.clone(), prov.clone())
            });
            // What the item is shown as: `loop_control.label`, rendered for it, else itself.
            let label = match (&item, &control.label) {
                (Some(_), Some(label)) => {
                    Some(templar.render(label, &item_scope).map_err(|e| e.to_diagnostic())?.value)
                }
                (item, _) => item.clone(),
            };
            // `break_when` is judged after every item, skipped or not.
            use crate::task::loop_control::ItemBreak;
            let breaks = match &item {
                Some(value) => {
                    match crate::task::loop_control::include_break(ctx, templar, &item_scope) {
                        ItemBreak::Unset => None,
                        ItemBreak::Verdict(verdict) => Some(verdict),
                        ItemBreak::Failed { message, error } => {
                            // The item fails, includes nothing, and ends the loop.
                            let result = failed_break(host, &loop_var, value, message, error);
                            callback.item_result(&view, &result);
                            item_results
                                .push(Node::bare(tack_yaml::Value::Map(result.data.clone())));
                            failed_items.push(Node::bare(tack_yaml::Value::Map(result.data)));
                            break;
                        }
                    }
                }
                None => None,
            };
            let (evaluated, raised) = match (looped, &item) {
                (true, Some(_)) => tack_diag::recording_deprecations(|| {
                    crate::task::when::evaluate(ctx, templar, &item_scope).false_condition()
                }),
                _ => (Ok(None), Vec::new()),
            };
            if let Some(value) = &item
                && let Some(cond) = evaluated?
            {
                let mut result = tack_report::result::skipped(host, &cond);
                result.add_raised_deprecations(raised);
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
                result.item_label = label.clone().or_else(|| Some(value.clone()));
                callback.item_result(&view, &result);
                item_results.push(Node::bare(tack_yaml::Value::Map(result.data.clone())));
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
            // The connection's variables first, as ansible's play context converts them.
            let mut bad = reading.connection_variables(&item_scope, None).err();
            for (name, node) in keywords {
                if bad.is_some() {
                    break;
                }
                let Some(node) = node else { continue };
                let origin = ctx.task.origin.clone();
                match crate::task::reading::bool_keyword(templar, name, node, &item_scope, origin) {
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
                        item_results.push(Node::bare(tack_yaml::Value::Map(result.data.clone())));
                        failed_items.push(Node::bare(tack_yaml::Value::Map(result.data)));
                    }
                    None => {
                        let result = failed_include(host, error);
                        keep(host, &result.data);
                        let ignore = reading.flag(Keyword::IgnoreErrors, &scope).unwrap_or(false);
                        failed_on(state, host, result, ignore, &view, callback, stats);
                    }
                }
                if breaks == Some(true) {
                    break;
                }
                continue;
            }
            let mut names = Vec::with_capacity(nodes.len());
            let mut host_named = Vec::new();
            for (position, (arg, node)) in nodes.iter().enumerate() {
                let Some(node) = node else {
                    names.push(None);
                    continue;
                };
                // ansible renders the names in its strategy, which shows no deprecation. An
                // option (`tasks_from`, ...) that renders to `omit` is one not given; the file
                // or role itself cannot be omitted.
                let rendered = match templar.render_quietly(node, &item_scope) {
                    Ok(rendered) => rendered,
                    Err(e) if position > 0 && e.is_omitted() => {
                        names.push(None);
                        continue;
                    }
                    Err(e) => return Err(e.to_diagnostic()),
                };
                // What an include names is read on the controller: a name a managed host
                // chose is confined when it is loaded.
                if rendered.provenance.is_managed_host() {
                    host_named.push(*arg);
                }
                names.push(Some(tack_yaml::pyrepr::str(&rendered.value.value)));
            }
            let same = |w: &&mut Wanted| {
                w.names == names
                    && w.flags == flags
                    && w.item == item
                    && w.host_named == host_named
                    && w.loop_vars == loop_vars
            };
            // An include that ran is a task of its role that ran (`role_complete`).
            env.note_role_ran(
                ctx,
                host,
                &tack_report::result::HostResult::new(host, Mapping::new()),
            );
            // What `register` keeps of an include that loaded: nothing of the file.
            let mut done = Mapping::new();
            done.insert(tack_report::result::s("changed"), tack_report::result::b(false));
            done.insert(tack_report::result::s("failed"), tack_report::result::b(false));
            match &item {
                Some(_) => {
                    control.result_keys(&mut done, &listed, index);
                    item_results.push(Node::bare(tack_yaml::Value::Map(done)));
                }
                None => {
                    keep(host, &done);
                    let data = include_result_data(ctx, names.first().cloned().flatten(), |n| {
                        templar.render_quietly(n, &item_scope).ok().map(|r| r.value)
                    });
                    let shown = tack_report::result::HostResult::new(host, data);
                    callback.include_result(&view, &shown);
                }
            }
            match wanted.iter_mut().find(same) {
                Some(w) => w.hosts.push(host.clone()),
                None => wanted.push(Wanted {
                    names,
                    flags,
                    item,
                    label,
                    loop_vars,
                    outer: params.cloned(),
                    hosts: vec![host.clone()],
                    host_named,
                }),
            }
            if breaks == Some(true) {
                break;
            }
        }
        if !failed_items.is_empty() {
            // The loop failed: its result says so without an error of its own (each
            // failed item showed its), and the host goes on as an include that failed.
            keep(host, &failed_loop(host, item_results).data);
            let result = failed_loop(host, failed_items);
            let ignore = reading.flag(Keyword::IgnoreErrors, &scope).unwrap_or(false);
            failed_on(state, host, result, ignore, &view, callback, stats);
        } else if looped && (count == 0 || skipped_items.len() == count) {
            let result = all_skipped(host, skipped_items);
            keep(host, &result.data);
            stats.count(&result, false);
            callback.host_result(&view, &result);
        } else if looped {
            use tack_report::result::{b, s};
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            data.insert(s("failed"), b(false));
            data.insert(s("msg"), s("All items completed"));
            data.insert(s("results"), Node::bare(tack_yaml::Value::Seq(item_results)));
            keep(host, &data);
        }
    }
    Ok(wanted)
}

/// What ansible's executor returns for an include on a host (its callbacks' `v2_runner_on_ok`):
/// `include_tasks`' file and its other arguments, `include_role`'s arguments, rendered.
fn include_result_data(
    ctx: &TaskInContext<'_>,
    file: Option<String>,
    render: impl Fn(&Node) -> Option<Node>,
) -> Mapping {
    use tack_report::result::{b, s};
    let role = matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeRole(_));
    let mut args = Mapping::new();
    for (key, value) in ctx.task.args.iter() {
        let name = key.as_str().unwrap_or_default();
        if !role && matches!(name, "_raw_params" | "file") {
            continue;
        }
        if let Some(rendered) = render(value) {
            args.insert(key.clone(), rendered);
        }
    }
    let mut data = Mapping::new();
    if !role && let Some(file) = file {
        data.insert(s("include"), s(&file));
    }
    data.insert(s("include_args"), Node::bare(tack_yaml::Value::Map(args)));
    data.insert(s("changed"), b(false));
    data
}

/// The include `ctx` failed on `hosts` with `error`: each shows it failed and counts a
/// failure (even inside a rescue, as ansible counts it), and waits in `include_failed`
/// for the splice to move it on as failed.
pub(crate) fn include_failure(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'_>,
    hosts: &[String],
    error: Diagnostic,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) {
    use tack_report::result::{b, s};
    let view = env.view(ctx);
    for host in hosts {
        let mut data = Mapping::new();
        data.insert(s("changed"), b(false));
        data.insert(s("failed"), b(true));
        data.insert(s("exception"), s("(traceback unavailable)"));
        data.insert(s("msg"), s(&error.brief()));
        let mut result = tack_report::result::HostResult::new(host, data);
        result.error = Some(error.clone());
        // A looped include's result is the host's whole loop result (its items shown
        // already): the callback then shows only the error.
        if ctx.task.loop_items.is_some() {
            result.data.insert(s("results"), tack_yaml::Node::bare(Value::Seq(Vec::new())));
        }
        // A file or role that cannot be loaded fails the host whatever `ignore_errors`
        // says, and nothing is registered: ansible's strategy reports it, not the task.
        stats.count(&result, false);
        callback.host_result(&view, &result);
        state.include_failed.insert(host.clone());
    }
}

/// The include failed on `host` with `result` (shown here): under `ignore_errors` it is
/// shown ignored, counted, and the host goes on; otherwise it waits in
/// `include_task_failed` for the splice to move the host on as failed.
fn failed_on(
    state: &mut BatchState,
    host: &str,
    mut result: tack_report::result::HostResult,
    ignore: bool,
    view: &tack_report::callback::TaskView,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) {
    result.ignored = ignore;
    callback.host_result(view, &result);
    if ignore {
        stats.count(&result, false);
    } else {
        state.include_task_failed.insert(host.to_string(), result);
    }
}

/// `register` on an include: the host's result of the include (or of its loop) under the
/// name, as a task's would be.
fn register_result(
    env: &PlayEnv<'_, '_>,
    ctx: &TaskInContext<'_>,
    name: Option<&str>,
    host: &str,
    data: &Mapping,
) {
    let Some(name) = name else { return };
    let origin = ctx.task.attrs.get(Keyword::Register).and_then(|n| n.origin.clone());
    crate::vars::reserved::warn_name(name, origin.as_ref());
    let mut data = data.clone();
    if data.get("failed").is_none() {
        data.insert(tack_report::result::s("failed"), tack_report::result::b(false));
    }
    env.scope.set_host_var(host, name, Node::bare(Value::Map(data)), Provenance::Trusted);
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
    task.includes = include.includes + 1;
}

/// Dynamic includes nested this deep end the run: where ansible-core's recursion limit
/// stops a task file that includes itself (its 248th `included:` line is its last).
const MAX_INCLUDE_NESTING: usize = 248;

/// The include `ctx` nests one include too many: ansible-core's recursion error (exit code
/// 250), naming the include where ansible prints Python's traceback.
pub(crate) fn too_deep(ctx: &TaskInContext<'_>) -> Result<(), Diagnostic> {
    if ctx.includes + 1 < MAX_INCLUDE_NESTING {
        return Ok(());
    }
    Err(Diagnostic::recursion(
        ctx.task.origin.clone(),
        format!(
            "tack stopped at this include: it is the {MAX_INCLUDE_NESTING}th dynamic include \
             nested in the ones before it, where ansible-core runs out of recursion (a task \
             file or role that includes itself without a condition that ends it)."
        ),
    ))
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
                args: role_nodes(target).to_vec(),
                keywords: role_keywords(ctx).to_vec(),
            });
        }
        let raw = ctx.task.args.get("_raw_params").map(|n| ("_raw_params", n));
        match raw.or_else(|| ctx.task.args.get("file").map(|n| ("file", n))) {
            Some((arg, raw)) => {
                Ok(IncludeNames { args: vec![(arg, Some(raw))], keywords: Vec::new() })
            }
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
    /// How the item is shown (`loop_control.label`, else the item).
    pub label: Option<Node>,
    /// The loop's variables for `item` (the loop variable, `ansible_loop_var`, the index
    /// variable, `ansible_loop`), each with its provenance.
    pub loop_vars: Vec<(String, Node, Provenance)>,
    /// The include parameters the include itself ran with (an include inside an included
    /// file): what it brings in sees them under its own.
    pub outer: Option<Arc<Layer>>,
    pub hosts: Vec<String>,
    /// The arguments among `names` whose render read what a managed host said: what they
    /// name is found only inside the role's and the playbook's directories (seed 002).
    pub host_named: Vec<&'static str>,
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

/// The include parameters the included tasks see: the include's `vars` and its loop's
/// variables for the item.
pub(crate) fn param_layer(vars: &Mapping, want: &Wanted) -> tack_template::Layer {
    // ansible's `get_include_params`: every enclosing include's, the nearest winning.
    let mut layer = tack_template::Layer::new();
    if let Some(outer) = &want.outer {
        for (name, binding) in outer.bindings() {
            layer.insert_binding(name, binding.clone());
        }
    }
    for (name, binding) in tack_template::Layer::from_mapping(vars, Provenance::Trusted).bindings()
    {
        layer.insert_binding(name, binding.clone());
    }
    for (name, value, provenance) in &want.loop_vars {
        layer.insert(name.clone(), value.clone(), provenance.clone());
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
    let mut result = tack_report::result::HostResult::new(host, data);
    if result.data.get("skipped_reason").is_some() {
        result.deprecated_values.push(crate::task::items::skipped_reason_deprecated());
    }
    result
}

/// The `include_role` options that are bool keywords of `IncludeRole`, post-validated per
/// host and item (`Wanted::flag`), in the order ansible validates them (the order
/// `IncludeRole` declares them: measured, the first that fails is the one reported).
pub(crate) fn role_keywords<'t>(
    ctx: &'t TaskInContext<'_>,
) -> [(&'static str, Option<&'t tack_yaml::Node>); 4] {
    [
        ("public", ctx.task.args.get("public")),
        ("allow_duplicates", ctx.task.args.get("allow_duplicates")),
        ("rolespec_validate", ctx.task.args.get("rolespec_validate")),
        ("rescuable", ctx.task.args.get("rescuable")),
    ]
}

/// What an `include_role` renders per host and item, in the order `load_included_role`
/// reads them.
pub(crate) fn role_nodes(target: &RoleTarget) -> [(&'static str, Option<&tack_yaml::Node>); 5] {
    [
        ("name", target.name.as_ref()),
        ("tasks_from", target.tasks_from.as_ref()),
        ("vars_from", target.vars_from.as_ref()),
        ("defaults_from", target.defaults_from.as_ref()),
        ("handlers_from", target.handlers_from.as_ref()),
    ]
}
