//! `include_role` in a play, as ansible's `IncludedFile.process_include_results` and
//! `IncludeRole.get_block_list` run it: the role name and its `*_from` files rendered per host
//! and loop item, each distinct request loaded once for the hosts that share it, the role's
//! own `vars` given the include's `vars` and loop item, `included: ROLE for HOSTS` lines, and
//! the roles it loads joining the play's arena for the rest of the play.
//!
//! Loads roles only under names the playbook chose (seed 002, through `wanted`); runs none of
//! their tasks itself and touches no host's position (`include` splices).

use std::sync::Arc;

use typed_arena::Arena;

use tack_diag::Diagnostic;
use tack_playbook::dynamic::{FromFiles, Included, RoleRequest};
use tack_playbook::walk::TaskInContext;
use tack_playbook::{Play, RoleId, RoleTarget};
use tack_template::Layer;
use tack_yaml::{Mapping, Value};

use crate::callback::{Callback, Stats};
use crate::include::{loop_var, param_layer, stripped_parent};
use crate::play::PlayRun;

impl<'r> PlayRun<'r, '_> {
    /// `include_role` on `hosts`: returns each loaded role's blocks and handlers, its
    /// include parameters and its hosts, in the order ansible runs them.
    #[allow(clippy::type_complexity)]
    pub(crate) fn include_role(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<&Arc<Layer>>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<Vec<(Included, Arc<Layer>, Vec<String>)>, Diagnostic> {
        callback.task_start(&self.banner(ctx, hosts.first(), params.cloned()));
        let names = crate::include::IncludeNames::of(ctx)?;
        let wanted = self.wanted(ctx, hosts, params, callback, stats, &names)?;
        self.load_included_role(ctx, wanted, callback, stats)
    }

    /// The roles `wanted` names for the `include_role` `ctx`, each loaded once for the hosts
    /// that name it with the same parameters, with ansible's `included: ROLE for HOSTS`
    /// lines.
    #[allow(clippy::type_complexity)]
    pub(crate) fn load_included_role(
        &self,
        ctx: &TaskInContext<'_>,
        wanted: Vec<crate::include::Wanted>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<Vec<(Included, Arc<Layer>, Vec<String>)>, Diagnostic> {
        let (parent, include_vars) = stripped_parent(ctx);
        let loop_var = loop_var(ctx);
        let mut out = Vec::new();
        for want in wanted {
            let name = want.names[0].clone().unwrap_or_default();
            let allow_duplicates = want.flag("allow_duplicates").unwrap_or(true);
            let public = want.flag("public").unwrap_or(false);
            let layer = param_layer(&include_vars, &loop_var, &want);
            let mut role_vars = include_vars.clone();
            if let Some(item) = &want.item {
                role_vars.insert(crate::result::s(&loop_var), item.clone());
            }
            let request = RoleRequest {
                include: &parent,
                dep_chain: &ctx.dep_chain,
                name: &name,
                from: FromFiles {
                    tasks: want.names[1].clone(),
                    vars: want.names[2].clone(),
                    defaults: want.names[3].clone(),
                    handlers: want.names[4].clone(),
                    skip_validation: want.flag("rolespec_validate") == Some(false),
                },
                vars: role_vars,
                allow_duplicates,
                rescuable: want.flag("rescuable") != Some(false),
            };
            let loaded =
                self.run.tasks.load_included_role(self.play(), request, &self.scope.play_vars());
            let (included, role) = match loaded {
                Ok(loaded) => loaded,
                // A role that cannot be loaded fails the include on its hosts (a parser error,
                // or any error when not `rescuable`, ends the run).
                Err(e) if e.class == tack_diag::ErrorClass::General => {
                    self.include_failure(ctx, &want.hosts, e, callback, stats);
                    continue;
                }
                Err(e) => return Err(e),
            };
            // A public role's defaults and vars are the play's from here on.
            if public && let Some(roles) = &included.roles {
                self.scope.expose_role(
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
            let label = want.item.as_ref().map(|i| tack_yaml::pyrepr::str(&i.value));
            callback.included(&name, &want.hosts, label.as_deref());
            for host in &want.hosts {
                stats.count(&crate::result::HostResult::new(host, Mapping::new()), false);
            }
            out.push((included, Arc::new(layer), want.hosts));
        }
        Ok(out)
    }

    /// The include `ctx` failed on `hosts` with `error`: each shows it failed and counts a
    /// failure (even inside a rescue, as ansible counts it), and waits in `include_failed`
    /// for the splice to move it on as failed.
    pub(crate) fn include_failure(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        error: Diagnostic,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) {
        use crate::result::{b, s};
        let view = self.view(ctx);
        for host in hosts {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            data.insert(s("failed"), b(true));
            data.insert(s("exception"), s("(traceback unavailable)"));
            data.insert(s("msg"), s(&error.brief()));
            let mut result = crate::result::HostResult::new(host, data);
            result.error = Some(error.clone());
            // A looped include's result is the host's whole loop result (its items shown
            // already): the callback then shows only the error.
            if ctx.task.loop_items.is_some() {
                result.data.insert(s("results"), tack_yaml::Node::bare(Value::Seq(Vec::new())));
            }
            stats.count(&result, false);
            callback.host_result(&view, &result);
            self.include_failed.borrow_mut().insert(host.clone());
        }
    }

    /// The play runs on with `roles` as its role arena from now on (the roles an include
    /// loaded appended to it), each new role with its identity for `allow_duplicates`.
    pub(crate) fn grow_roles(&self, plays: &'r Arena<Play>, roles: Vec<tack_playbook::Role>) {
        let mut play = self.play().clone();
        play.role_arena = roles;
        let play: &'r Play = plays.alloc(play);
        let mut identities = self.identities.borrow_mut();
        for i in identities.len()..play.role_arena.len() {
            identities.push(crate::roles::identity(play, RoleId(i)));
        }
        self.set_play(play);
    }
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

/// The name an unnamed `include_role` shows (`IncludeRole.get_name`): its action and the
/// role name as written.
pub(crate) fn unnamed(action: &str, target: &RoleTarget) -> String {
    let name = target.name.as_ref().map(|n| match &n.value {
        Value::Str(s) => s.clone(),
        other => tack_yaml::pyrepr::str(other),
    });
    format!("{action} : {}", name.unwrap_or_default())
}
