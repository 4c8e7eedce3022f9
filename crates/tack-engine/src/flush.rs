//! Running a play's handlers: the names a task's `notify` gives, and `flush_handlers`,
//! which runs every notified handler in definition order on the hosts still running.

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_yaml::Value;

use tack_playbook::compile::CompiledBlock;
use tack_playbook::walk::{Sections, walk};

use crate::handlers::Handlers;
use crate::iterator::HostCursor;
use crate::play::PlayRun;
use tack_actions::Action;
use tack_report::callback::{Callback, Stats};

impl<'r> PlayRun<'r, '_> {
    /// The handler names a task's `notify` gives on `host` (rendered with its variables).
    pub(crate) fn notify_names(
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

    /// The notifications of a changed task's result on `host`, saved for the next flush.
    /// ansible processes them once per loop result that was not skipped (each says so from
    /// `-vv`), else once.
    pub(crate) fn notify_from(
        &self,
        handlers: &mut Handlers<'_>,
        ctx: &TaskInContext<'_>,
        host: &str,
        outcome: &crate::task::TaskOutcome,
        params: Option<std::sync::Arc<tack_template::Layer>>,
        callback: &mut dyn Callback,
    ) -> Result<(), Diagnostic> {
        let names = self.notify_names(ctx, host, params)?;
        // A looped task notifies once per item that was not skipped (each item is a result
        // in ansible); retries are not results.
        let items: Vec<&tack_report::result::HostResult> = outcome
            .items
            .iter()
            .filter_map(|e| match e {
                crate::task::TaskEvent::Item(i) => Some(i),
                crate::task::TaskEvent::Retry(_)
                | crate::task::TaskEvent::Async(_)
                | crate::task::TaskEvent::Transport(..) => None,
            })
            .collect();
        let times = if items.is_empty() {
            1
        } else {
            let skipped = tack_report::result::Outcome::Skipped;
            items.iter().filter(|i| i.outcome() != skipped).count()
        };
        // A plan lists a handler that a task of unknown outcome notified as deferred on it.
        let unknown = (!outcome.result.flag("changed"))
            .then(|| self.view(ctx).name)
            .filter(|_| tack_report::plan_mark::PlanMark::unknown_in(&outcome.result));
        for _ in 0..times {
            handlers.notify(host, &names, unknown.as_deref(), callback)?;
        }
        Ok(())
    }

    /// `meta: flush_handlers` for `hosts`: every handler in order, on the hosts notified for it
    /// (and still running).
    pub(crate) fn flush(
        &self,
        handlers: &mut Handlers<'r>,
        hosts: &[String],
        callback: &mut dyn Callback,
        stats: &mut Stats,
        cursors: &mut [(String, HostCursor)],
    ) -> Result<(), Diagnostic> {
        let mut index = 0;
        while index < handlers.list.len() {
            index += 1;
            let index = index - 1;
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
            let params = handlers.list[index].params.clone();
            if matches!(ctx.task.kind, tack_playbook::TaskKind::IncludeTasks) {
                self.include_handler(&ctx, index, &notified, handlers, callback, stats)?;
                // A host whose file could not be loaded has failed.
                for host in std::mem::take(&mut *self.include_failed.borrow_mut()) {
                    self.forced.borrow_mut().insert(host.clone());
                    if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| *h == host) {
                        cursor.pos = None;
                        cursor.failed = true;
                    }
                }
                continue;
            }
            let controls = self.task_controls(&ctx, &notified, params.clone())?;
            *self.plan_handler.borrow_mut() = Some(handlers.plan_reasons(index, &notified));
            let mut results: Vec<crate::fatal::RoundResult> = Vec::new();
            let mut judge =
                |host: &str, outcome: &crate::task::TaskOutcome, cb: &mut dyn Callback| {
                    let result = &outcome.result;
                    results.push(crate::fatal::RoundResult::of(host, result, controls.ignore));
                    if result.flag("failed") && !result.ignored {
                        if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) {
                            cursor.pos = None;
                            cursor.failed = true;
                        }
                    } else if result.notifies() {
                        let names = self.notify_names(&ctx, host, params.clone())?;
                        // A plan lists what a listed handler notifies: deferred on it when
                        // what it does is unknown.
                        let unknown = (!result.flag("changed"))
                            .then(|| self.view(&ctx).name)
                            .filter(|_| tack_report::plan_mark::PlanMark::unknown_in(result));
                        handlers.plan_reason(host, &names, unknown.as_deref());
                        for i in handlers.notify_now(host, &names)? {
                            let name = self.view(&handlers.list[i].ctx).name;
                            cb.verbose_line(2, &format!("NOTIFIED HANDLER {name} for {host}"));
                        }
                    }
                    stats.count(result, false);
                    Ok(())
                };
            self.run_task(
                &ctx,
                &notified,
                params.clone(),
                callback,
                if controls.run_once {
                    crate::play::RunKind::HandlerOnce
                } else {
                    crate::play::RunKind::Handler
                },
                &mut judge,
            )?;
            *self.plan_handler.borrow_mut() = None;
            if self.after_handler(&controls, &results, cursors, callback) {
                handlers.forget_plan_reasons(hosts);
                handlers.drop_included();
                return Ok(());
            }
            self.update_play_hosts(cursors);
        }
        handlers.forget_plan_reasons(hosts);
        handlers.drop_included();
        Ok(())
    }

    /// A handler that is an `include_tasks`: the file each host names is loaded, and its
    /// tasks run next in this flush as handlers, for the hosts that included them (ansible
    /// neither filters them by tags nor lets a notification name them).
    fn include_handler(
        &self,
        ctx: &TaskInContext<'r>,
        index: usize,
        hosts: &[String],
        handlers: &mut Handlers<'r>,
        callback: &mut dyn Callback,
        stats: &mut Stats,
    ) -> Result<(), Diagnostic> {
        let params = handlers.list[index].params.clone();
        let included = self.include(ctx, hosts, params.as_ref(), true, callback, stats)?;
        let apply: Option<&'r tack_playbook::Block> =
            match self.run.tasks.load_apply(self.play(), ctx.task)? {
                Some(block) => {
                    let held =
                        self.blocks.alloc(vec![CompiledBlock { block, dep_chain: Vec::new() }]);
                    held.first().map(|c| &c.block)
                }
                None => None,
            };
        let mut at = index + 1;
        for (included, layer, hosts_of) in included {
            let blocks: &'r [CompiledBlock] = self.blocks.alloc(included.blocks);
            let mut tasks = walk(self.play(), blocks, Sections::BlockOnly);
            for task in &mut tasks {
                crate::include::adopt(task, ctx, apply, true);
            }
            let count = tasks.len();
            handlers.insert_included(at, tasks, layer, &hosts_of);
            at += count;
        }
        Ok(())
    }
}

/// ansible runs the tasks of a file a handler includes one by one, as handlers: the tasks
/// of each of the file's blocks, without their `rescue`/`always` (ansible passes over those
/// there too), and so for the files it imports; a block nested deeper, and an
/// `include_role` or `import_role`, are ansible's parser errors.
pub(crate) fn check_handler_file(file: &tack_playbook::Block) -> Result<(), Diagnostic> {
    use tack_playbook::TaskEntry;
    for entry in &file.block {
        if let TaskEntry::Block(block) = entry {
            check_handler_block(block)?;
        }
    }
    Ok(())
}

/// One top-level block of a file a handler includes (or of a file that one imports).
fn check_handler_block(block: &tack_playbook::Block) -> Result<(), Diagnostic> {
    use tack_playbook::{BlockOrigin, TaskEntry, TaskKind};
    let not_handler = |task: &tack_playbook::Task| {
        Diagnostic::at(
            format!("Using '{}' as a handler is not supported.", task.action),
            task.origin.clone(),
        )
        .parser()
    };
    for inner in &block.block {
        match inner {
            TaskEntry::Block(nested) => match &nested.from {
                BlockOrigin::ImportRole(task) => return Err(not_handler(task)),
                // An imported file's blocks give their tasks as the file's own would.
                BlockOrigin::ImportTasks(_) => {
                    for entry in &nested.block {
                        match entry {
                            TaskEntry::Block(top) => check_handler_block(top)?,
                            TaskEntry::Task(task)
                                if matches!(task.kind, TaskKind::IncludeRole(_)) =>
                            {
                                return Err(not_handler(task));
                            }
                            TaskEntry::Task(_) => {}
                        }
                    }
                }
                _ => {
                    return Err(Diagnostic::at(
                        "Using a block as a handler is not supported.",
                        nested.origin.clone(),
                    )
                    .parser());
                }
            },
            TaskEntry::Task(task) if matches!(task.kind, TaskKind::IncludeRole(_)) => {
                return Err(not_handler(task));
            }
            TaskEntry::Task(_) => {}
        }
    }
    Ok(())
}
