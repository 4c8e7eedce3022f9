//! `include_tasks` and `include_role` under the `free` and `host_pinned` strategies, as
//! ansible's free strategy runs them: an include is one step of one host like any task; when
//! its result is processed its banner is shown (as for any result) and its `when` and loop
//! are read for that host; after the pass's results, the files and roles those results name
//! are loaded, once for the hosts that name them alike and in first-seen order (as
//! `IncludedFile.process_include_results` groups them), and each host enters its own.
//!
//! Runs none of the included tasks and moves hosts only through the [`Walk`] (`include`'s
//! splice).

use std::sync::Arc;

use tack_diag::Diagnostic;
use tack_playbook::TaskKind;
use tack_playbook::dynamic::Included;
use tack_playbook::walk::TaskInContext;
use tack_template::Layer;
use tack_yaml::Node;

use crate::callback::{Callback, Stats};
use crate::include::{Splice, Wanted};
use crate::play::PlayRun;
use crate::segments::Walk;

/// What one include result of a pass names: the include (segment, task) and one request.
pub(crate) struct Pending {
    at: (usize, usize),
    want: Wanted,
}

/// What an include renders per host and item: its file, or its role's name and options.
fn include_nodes<'t>(
    ctx: &'t TaskInContext<'_>,
) -> Result<Vec<(&'static str, Option<&'t Node>)>, Diagnostic> {
    if let TaskKind::IncludeRole(target) = &ctx.task.kind {
        return Ok(crate::include_role::role_nodes(target).to_vec());
    }
    match ctx.task.args.get("_raw_params").or_else(|| ctx.task.args.get("file")) {
        Some(raw) => Ok(vec![("file", Some(raw))]),
        None => Err(Diagnostic::at("No file specified for include_tasks", ctx.task.origin.clone())),
    }
}

/// Whether `ctx` is an include these strategies expand per host.
pub(crate) fn is_include(ctx: &TaskInContext<'_>) -> bool {
    matches!(ctx.task.kind, TaskKind::IncludeTasks | TaskKind::IncludeRole(_))
}

impl<'r> PlayRun<'r, '_> {
    /// The include at `at` processed for `host` (its banner already shown): its `when` and
    /// loop (skipped lines shown now), what it names joining `pending`; a host that included
    /// nothing moves on at once.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn free_include_result(
        &self,
        at: (usize, usize),
        host: &str,
        pending: &mut Vec<Pending>,
        walk: &mut Walk<'r>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<(), Diagnostic> {
        let ctx = walk.segments[at.0].tasks[at.1].clone();
        let params = walk.segments[at.0].params.clone();
        let nodes = include_nodes(&ctx)?;
        let hosts = [host.to_string()];
        let wanted = self.wanted(&ctx, &hosts, params.as_ref(), callback, stats, &nodes)?;
        if wanted.is_empty() {
            walk.advance(host, at.0, at.1, false);
            return Ok(());
        }
        for want in wanted {
            let same = pending
                .iter_mut()
                .find(|p| p.at == at && p.want.names == want.names && p.want.item == want.item);
            match same {
                Some(p) => p.want.hosts.extend(want.hosts),
                None => pending.push(Pending { at, want }),
            }
        }
        Ok(())
    }

    /// Loads what the pass's include results named (the `included:` lines, in first-seen
    /// order) and puts each host into its own.
    pub(crate) fn free_include_splice(
        &self,
        pending: Vec<Pending>,
        state: &mut Splice<'_, 'r>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<(), Diagnostic> {
        type Loaded = Vec<(Included, Arc<Layer>, Vec<String>)>;
        let mut loaded: Vec<((usize, usize), Loaded)> = Vec::new();
        for Pending { at, want } in pending {
            let ctx = state.walk.segments[at.0].tasks[at.1].clone();
            let out = match &ctx.task.kind {
                TaskKind::IncludeRole(target) => {
                    self.load_included_role(&ctx, target, vec![want], callback, stats)?
                }
                _ => self.load_included(&ctx, vec![want], false, callback, stats)?,
            };
            match loaded.iter_mut().find(|(a, _)| *a == at) {
                Some((_, all)) => all.extend(out),
                None => loaded.push((at, out)),
            }
        }
        for (at, included) in loaded {
            let ctx = state.walk.segments[at.0].tasks[at.1].clone();
            let mut hosts: Vec<String> = Vec::new();
            for (_, _, of) in &included {
                for host in of {
                    if !hosts.contains(host) {
                        hosts.push(host.clone());
                    }
                }
            }
            // These strategies follow no lockstep order: the new tasks go at its end.
            let end = state.walk.order_len();
            self.splice_loaded(&ctx, at, &hosts, included, end, state)?;
        }
        Ok(())
    }
}
