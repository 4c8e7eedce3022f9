//! `include_tasks`, as ansible's `IncludedFile.process_include_results` runs it: its banner,
//! its `when` and loop per host (`crate::include::wanted`), each file loaded once for every
//! host naming it with the same parameters, checked as tack checks a playbook's tasks
//! (a handler's file also as ansible checks handler files), and the `included:` lines.
//!
//! Reads a task file a managed host named only inside the role's and the playbook's
//! directories (seed 002); runs none of their tasks
//! itself and moves no host (`crate::include::splice` does).

use tack_diag::Diagnostic;
use tack_playbook::walk::TaskInContext;
use tack_yaml::Mapping;

use tack_report::callback::{Callback, Stats};

use crate::include::{IncludeNames, Loaded, Wanted, param_layer, stripped_parent};
use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;

/// `include_tasks` on `hosts` (a handler's when `as_handler`): its `when` and loop per host, the file each item names,
/// the files loaded once for every host that names them (with the same parameters), and
/// ansible's `included: FILE for HOSTS` lines. Returns each file's blocks, its include
/// parameters and its hosts, in the order ansible runs them.
#[allow(clippy::too_many_arguments)]
pub(crate) fn include(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'_>,
    hosts: &[String],
    params: Option<&std::sync::Arc<tack_template::Layer>>,
    as_handler: bool,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<Loaded, Diagnostic> {
    let names = IncludeNames::of(ctx)?;
    let view = env.banner(ctx, hosts.first(), params.cloned());
    if !hosts.is_empty() {
        env.reads.show(callback);
    }
    if as_handler {
        callback.handler_start(&view);
    } else {
        callback.task_start(&view);
    }
    // Each host's include is queued to a worker (it shows no line of its own but the
    // `included:` ones after).
    for host in hosts {
        callback.host_start(&view, host, as_handler);
    }
    let wanted = crate::include::wanted(env, state, ctx, hosts, params, callback, stats, &names)?;
    // The strategy gathers each including host's variables once as it reads the results.
    let mut including: Vec<&String> = Vec::new();
    for host in wanted.iter().flat_map(|w| &w.hosts) {
        if !including.contains(&host) {
            including.push(host);
        }
    }
    env.reads.show_times(callback, including.len());
    load_included(env, state, ctx, wanted, as_handler, callback, stats)
}

/// The files `wanted` names for the `include_tasks` `ctx`, each loaded once for the
/// hosts that name it with the same parameters, with ansible's `included: FILE for
/// HOSTS` lines.
pub(crate) fn load_included(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'_>,
    wanted: Vec<Wanted>,
    as_handler: bool,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<Loaded, Diagnostic> {
    let (parent, include_vars) = stripped_parent(ctx);
    let mut out = Vec::new();
    for want in wanted {
        let target = want.names[0].clone().unwrap_or_default();
        let host_named = want.host_named.first().copied();
        let vars = env.scope.play_vars();
        let loaded =
            env.run.tasks.load_included_tasks(env.play(), &parent, &target, &vars, host_named);
        let mut included = match loaded {
            Ok(included) => included,
            // A file that cannot be loaded fails the include on its hosts; a parser error
            // ends the run.
            Err(e) if e.class == tack_diag::ErrorClass::General => {
                crate::include::include_failure(env, state, ctx, &want.hosts, e, callback, stats);
                continue;
            }
            Err(e) => return Err(e),
        };
        for imported in env.run.tasks.take_imported() {
            callback.verbose_line(2, &format!("statically imported: {}", imported.display()));
        }
        for block in &mut included.blocks {
            crate::refuse::check_included(&block.block)?;
            if as_handler {
                crate::handlers::check_handler_file(&block.block)?;
            }
            block.dep_chain = ctx.dep_chain.clone();
        }
        for block in &included.handlers {
            crate::refuse::check_included_handlers(&block.block)?;
        }
        let layer = param_layer(&include_vars, &want);
        let label = want.label.as_ref().map(|i| tack_yaml::pyrepr::str(&i.value));
        // Each block of a task file (not a handler's) gathers once to filter it by tags.
        if !as_handler {
            env.reads.show_times(callback, included.blocks.len());
        }
        callback.included(&included.file.display().to_string(), &want.hosts, label.as_deref());
        crate::include::too_deep(ctx)?;
        for host in &want.hosts {
            stats.count(&tack_report::result::HostResult::new(host, Mapping::new()), false);
        }
        out.push((included, std::sync::Arc::new(layer), want.hosts));
    }
    Ok(out)
}
