//! `include_tasks` in a play: the file each host's include names (its `when` and loop per
//! host), each file loaded once for every host naming it with the same parameters, the
//! `included:` lines, and the new segments spliced into the play's lockstep order.
//!
//! Reads task files only under names the playbook chose (seed 002); runs none of their
//! tasks itself.

use std::collections::{BTreeMap, VecDeque};

use typed_arena::Arena;

use tack_diag::Diagnostic;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::listing::task_tags;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_template::Provenance;
use tack_yaml::{Mapping, Node};

use crate::actions::Action;
use crate::callback::{Callback, Stats};
use crate::play::PlayRun;
use crate::segments::{Round, Segment, Walk};

impl<'r> PlayRun<'r, '_> {
    /// Runs the include `ctx` for the hosts of `round`: each host enters the files it
    /// named, or moves on when it named none.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn splice_include<'s>(
        &self,
        ctx: &TaskInContext<'s>,
        round: &Round,
        walk: &mut Walk<'s>,
        arena: &'s Arena<Vec<CompiledBlock>>,
        vars: &Mapping,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<(), Diagnostic>
    where
        'r: 's,
    {
        let (seg, next) = (round.seg, round.next);
        let params = walk.segments[seg].params.clone();
        let included = self.include(ctx, &round.hosts, params.as_ref(), callback, stats)?;
        let mut splice = round.pick + 1;
        let mut queues: BTreeMap<String, VecDeque<usize>> = BTreeMap::new();
        let templar = self.run.templar;
        for (block, params, hosts_of) in included {
            let blocks: &[CompiledBlock] =
                arena.alloc(vec![CompiledBlock { block, dep_chain: ctx.dep_chain.clone() }]);
            let mut segment = Segment::new(self.play, blocks, Some(params), |c| {
                Ok(self.run.tags.should_run(&task_tags(c, vars, templar)?))
            })?;
            // The included tasks inherit what the include inherits (its blocks, role and
            // play), as children of the include.
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
            let (id, after) = walk.splice(splice, segment);
            splice = after;
            for host in hosts_of {
                queues.entry(host).or_default().push_back(id);
            }
        }
        for host in &round.hosts {
            match queues.remove(host) {
                Some(queue) => walk.enter(host, queue, seg, next),
                None => walk.advance(host, seg, next, false),
            }
        }
        Ok(())
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
            for imported in self.run.tasks.take_imported() {
                callback.verbose_line(2, &format!("statically imported: {}", imported.display()));
            }
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
}
