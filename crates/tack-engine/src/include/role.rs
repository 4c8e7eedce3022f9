//! `include_role` in a play, as ansible's `IncludedFile.process_include_results` and
//! `IncludeRole.get_block_list` run it: the role name and its `*_from` files rendered per host
//! and loop item (`crate::include::wanted`), each distinct request loaded once for the hosts
//! that share it, the role's own `vars` given the include's `vars` and loop item, `included:
//! ROLE for HOSTS` lines; a public role's defaults and vars become the play's.
//!
//! Loads a role or file a managed host named only inside the role search path and the
//! role's directory (seed 002); runs none of their tasks itself
//! and touches no host's position (`crate::include::splice` does, and grows the play's role arena).

use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::dynamic::{FromFiles, RoleRequest};
use tack_playbook::walk::TaskInContext;
use tack_template::Layer;
use tack_yaml::Mapping;

use tack_report::callback::{Callback, Stats};

use crate::include::{IncludeNames, Loaded, Wanted, loop_var, param_layer, stripped_parent};
use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;

/// `include_role` on `hosts`: returns each loaded role's blocks and handlers, its
/// include parameters and its hosts, in the order ansible runs them.
pub(crate) fn include_role(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'_>,
    hosts: &[String],
    params: Option<&Arc<Layer>>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<Loaded, Diagnostic> {
    let view = env.banner(ctx, hosts.first(), params.cloned());
    callback.task_start(&view);
    for host in hosts {
        callback.host_start(&view, host, false);
    }
    let names = IncludeNames::of(ctx)?;
    let wanted = crate::include::wanted(env, state, ctx, hosts, params, callback, stats, &names)?;
    load_included_role(env, state, ctx, wanted, callback, stats)
}

/// The roles `wanted` names for the `include_role` `ctx`, each loaded once for the hosts
/// that name it with the same parameters, with ansible's `included: ROLE for HOSTS`
/// lines.
pub(crate) fn load_included_role(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    ctx: &TaskInContext<'_>,
    wanted: Vec<Wanted>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
) -> Result<Loaded, Diagnostic> {
    let (parent, include_vars) = stripped_parent(ctx);
    let loop_var = loop_var(ctx);
    let mut out = Vec::new();
    for want in wanted {
        let name = want.names[0].clone().unwrap_or_default();
        let allow_duplicates = want.flag("allow_duplicates").unwrap_or(true);
        let public =
            want.flag("public").unwrap_or_else(|| env.run.tasks.options().dynamic_role_public());
        let mut layer = param_layer(&include_vars, &want);
        // The include's own role, then the roles above it, are the included role's parents.
        if let Some(parent) = ctx.task.role {
            let mut parents = vec![parent];
            parents.extend(crate::vars::roles::parent_roles(env.play(), ctx));
            let mut names = Mapping::new();
            crate::vars::roles::insert_parent_roles(&mut names, env.play(), &parents);
            for (k, v) in names.iter() {
                let name = tack_yaml::pyrepr::str(&k.value);
                // An include inside an included role: the outer include's parents follow.
                let outer = layer.get(&name).and_then(|b| b.node().as_seq().map(<[_]>::to_vec));
                let value = match (v.as_seq(), outer) {
                    (Some(own), Some(outer)) => {
                        let all = own.iter().cloned().chain(outer).collect();
                        tack_yaml::Node::bare(tack_yaml::Value::Seq(all))
                    }
                    _ => v.clone(),
                };
                layer.insert(name, value, tack_template::Provenance::Trusted);
            }
        }
        let mut role_vars = include_vars.clone();
        if let Some(item) = &want.item {
            role_vars.insert(tack_report::result::s(&loop_var), item.clone());
        }
        let request = RoleRequest {
            include: &parent,
            dep_chain: &ctx.dep_chain,
            name: &name,
            name_host_named: want.host_named.contains(&"name"),
            from: FromFiles {
                tasks: want.names[1].clone(),
                vars: want.names[2].clone(),
                defaults: want.names[3].clone(),
                handlers: want.names[4].clone(),
                skip_validation: want.flag("rolespec_validate") == Some(false),
                host_named: want.host_named.iter().copied().filter(|a| *a != "name").collect(),
            },
            vars: role_vars,
            allow_duplicates,
            rescuable: want.flag("rescuable") != Some(false),
        };
        let loaded = env.run.tasks.load_included_role(env.play(), request, &env.scope.play_vars());
        let (included, role) = match loaded {
            Ok(loaded) => loaded,
            // A role that cannot be loaded fails the include on its hosts (a parser error,
            // or any error when not `rescuable`, ends the run).
            Err(e) if e.class == tack_diag::ErrorClass::General => {
                crate::include::include_failure(env, state, ctx, &want.hosts, e, callback, stats);
                continue;
            }
            Err(e) => return Err(e),
        };
        // The next group of hosts loads its role into this arena, not beside it: each
        // load appends to a copy of the play's roles, and two copies would give their roles
        // the same ids (hosts naming different `vars_from` would share one role's vars).
        if let Some(roles) = &included.roles {
            env.grow_roles(roles.clone());
        }
        // The play's roles list it from here on (ansible appends every included role).
        if let Some(roles) = &included.roles {
            let mut dependencies = Vec::new();
            let mut pending = roles[role.0].dependencies.clone();
            while let Some(id) = pending.pop() {
                dependencies.push(roles[id.0].name.clone());
                pending.extend(roles[id.0].dependencies.iter().copied());
            }
            env.scope.role_appended(&roles[role.0].name, &dependencies);
        }
        // A public role's defaults and vars are the play's from here on.
        if public && let Some(roles) = &included.roles {
            env.scope.expose_role(
                &tack_playbook::play_vars::role_defaults(roles, role),
                &tack_playbook::play_vars::role_exports(roles, role),
            );
        }
        for block in &included.blocks {
            crate::refuse::check_included(&block.block)?;
        }
        for block in &included.handlers {
            crate::refuse::check_included_handlers(&block.block)?;
        }
        let label = want.label.as_ref().map(|i| tack_yaml::pyrepr::str(&i.value));
        callback.included(&name, &want.hosts, label.as_deref());
        crate::include::too_deep(ctx)?;
        for host in &want.hosts {
            stats.count(&tack_report::result::HostResult::new(host, Mapping::new()), false);
        }
        out.push((included, Arc::new(layer), want.hosts));
    }
    Ok(out)
}
