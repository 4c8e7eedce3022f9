//! A play's handlers: which handlers a notification names (the last defined of that name,
//! and every handler listening to it), which hosts each is notified for, and the
//! order they run in at a flush (definition order, each once per notified host).
//!
//! Handler names are rendered once with the play's variables, as ansible does; a name that
//! cannot be rendered makes a handler reachable only through its `listen` topics (one without
//! topics is warned of as unusable when a search passes it).

pub(crate) mod flush;

use std::collections::{BTreeMap, BTreeSet};

use tack_diag::Diagnostic;
use tack_playbook::TaskKind;
use tack_playbook::walk::TaskInContext;
use tack_template::Templar;
use tack_yaml::{Mapping, Node, Value};

/// One handler and the hosts it is notified for.
pub(crate) struct Handler<'a> {
    pub ctx: TaskInContext<'a>,
    name: Option<String>,
    /// `role : name` for a role's handler (the role fully qualified and short).
    role_name: Vec<String>,
    listen: Vec<String>,
    notified: BTreeSet<String>,
    /// The include parameters of a task a handler's `include_tasks` brought in.
    pub params: Option<std::sync::Arc<tack_template::Layer>>,
    /// Brought in by a handler's `include_tasks`: it runs in this flush only, for the hosts
    /// that included it, and no notification names it.
    included: bool,
    /// The handler block it was written in (its outermost block's address): a name is
    /// looked for block by block, the last block first and each block in its own order.
    block: usize,
    /// ansible's warning for a handler whose name could not be rendered and that has no
    /// topics: shown when a search passes it.
    unusable: Option<String>,
}

/// Every handler of a play, in definition order.
pub(crate) struct Handlers<'a> {
    pub list: Vec<Handler<'a>>,
    /// Each host's notifications since its last flush, in the order first made: a flush
    /// announces the handlers they name in this order.
    saved: BTreeMap<String, Vec<String>>,
    /// `tack plan`: per host and notification, the task of unknown outcome that made it
    /// (`None` once a known change made it too).
    plan_reasons: BTreeMap<(String, String), Option<String>>,
    /// `error_on_missing_handler = False`: a notification nothing answers is a warning.
    pub warn_on_missing: bool,
}

fn strings(node: &Node) -> Vec<String> {
    match &node.value {
        Value::Seq(items) => items.iter().map(|i| tack_yaml::pyrepr::str(&i.value)).collect(),
        Value::Null => Vec::new(),
        other => vec![tack_yaml::pyrepr::str(other)],
    }
}

impl<'a> Handlers<'a> {
    pub(crate) fn new(
        play: &tack_playbook::Play,
        tasks: Vec<TaskInContext<'a>>,
        templar: &Templar,
        vars: &Mapping,
    ) -> Handlers<'a> {
        let mut handlers = Handlers {
            list: Vec::new(),
            saved: BTreeMap::new(),
            plan_reasons: BTreeMap::new(),
            warn_on_missing: false,
        };
        handlers.extend(play, tasks, templar, vars);
        handlers
    }

    /// Adds `tasks` after the handlers already known (an `include_role` brings its role's,
    /// as ansible adds them to the play's handlers).
    pub(crate) fn extend(
        &mut self,
        play: &tack_playbook::Play,
        tasks: Vec<TaskInContext<'a>>,
        templar: &Templar,
        vars: &Mapping,
    ) {
        self.list.extend(tasks.into_iter().map(|ctx| {
            let rendered = ctx.task.name().map(|n| templar.render_with_vars(n, vars));
            let name = match &rendered {
                Some(Ok(r)) => Some(tack_yaml::pyrepr::str(&r.value)).filter(|s| !s.is_empty()),
                _ => None,
            };
            let mut listen: Vec<String> = match &ctx.task.kind {
                TaskKind::Handler { listen } => listen.iter().flat_map(strings).collect(),
                // An `include_tasks` handler keeps its topics among its keywords.
                TaskKind::IncludeTasks => ctx
                    .task
                    .attrs
                    .get(tack_playbook::tables::Keyword::Listen)
                    .map(strings)
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            // Ancestry runs from the nearest ancestor out: the last block is the outermost.
            let block = ctx
                .ancestry
                .iter()
                .rev()
                .find_map(|a| match a {
                    tack_playbook::walk::Ancestor::Block(b) => {
                        Some(std::ptr::from_ref(*b) as usize)
                    }
                    _ => None,
                })
                .unwrap_or(0);
            // A role's handler also answers to `role : name`, and its topics to
            // `role : topic`, the role named fully qualified or short (ansible's handler
            // `get_name` and `_validate_listen`).
            let role_names: Vec<String> = match ctx.task.role {
                Some(r) => {
                    let role = play.role(r);
                    let mut names = vec![role.name.clone()];
                    if role.short_name() != role.name {
                        names.push(role.short_name().to_string());
                    }
                    names
                }
                None => Vec::new(),
            };
            let topics = listen.clone();
            for role in &role_names {
                listen.extend(topics.iter().map(|t| format!("{role} : {t}")));
            }
            let role_name: Vec<String> = match &name {
                Some(n) => role_names.iter().map(|r| format!("{r} : {n}")).collect(),
                None => Vec::new(),
            };
            let unusable = match (&rendered, ctx.task.name()) {
                (Some(Err(e)), Some(raw)) if listen.is_empty() => Some(format!(
                    "Handler '{}' is unusable because it has no listen topics and the name \
                     could not be templated (host-specific variables are not supported in \
                     handler names). The error: {}",
                    tack_yaml::pyrepr::str(&raw.value),
                    e.message
                )),
                _ => None,
            };
            Handler {
                ctx,
                name,
                role_name,
                listen,
                notified: BTreeSet::new(),
                params: None,
                included: false,
                block,
                unusable,
            }
        }));
    }

    /// Puts the tasks a handler's `include_tasks` brought in right after it (`at`), notified
    /// for `hosts`, as ansible inserts them into the flush under way.
    pub(crate) fn insert_included(
        &mut self,
        at: usize,
        tasks: Vec<TaskInContext<'a>>,
        params: std::sync::Arc<tack_template::Layer>,
        hosts: &[String],
    ) {
        let brought = tasks.into_iter().map(|ctx| Handler {
            ctx,
            name: None,
            role_name: Vec::new(),
            listen: Vec::new(),
            notified: hosts.iter().cloned().collect(),
            params: Some(params.clone()),
            included: true,
            block: 0,
            unusable: None,
        });
        self.list.splice(at..at, brought);
    }

    /// Forgets what handlers' includes brought in, once their flush is over.
    pub(crate) fn drop_included(&mut self) {
        self.list.retain(|h| !h.included);
    }

    /// The handlers `notification` names, as ansible's `search_handlers_by_notification`
    /// finds them, going through the handler blocks last to first and each block's handlers
    /// in order: the first one found with that name, and every handler listening to it (the
    /// first found of each name).
    fn find(&self, notification: &str) -> Vec<usize> {
        let named = |h: &Handler<'_>| {
            !h.included
                && (h.name.as_deref() == Some(notification)
                    || h.role_name.iter().any(|n| n == notification))
        };
        let mut blocks: Vec<usize> = Vec::new();
        for h in &self.list {
            if !blocks.contains(&h.block) {
                blocks.push(h.block);
            }
        }
        let order: Vec<usize> = blocks
            .iter()
            .rev()
            .flat_map(|b| (0..self.list.len()).filter(move |i| self.list[*i].block == *b))
            .collect();
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        // Each handler the search passes before the one named: one whose name could not be
        // rendered is skipped with ansible's warning.
        for i in order.iter().copied() {
            if named(&self.list[i]) {
                out.push(i);
                break;
            }
            if let Some(warning) = &self.list[i].unusable {
                tack_diag::warn(&Diagnostic::new(warning.clone()));
            }
        }
        for i in order {
            let h = &self.list[i];
            if h.listen.iter().any(|l| l == notification) {
                if let Some(name) = &h.name
                    && !seen.insert(name.clone())
                {
                    continue;
                }
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The handlers `notification` names, or ansible's error when there are none.
    fn find_some(&self, notification: &str) -> Result<Vec<usize>, Diagnostic> {
        let found = self.find(notification);
        if found.is_empty() {
            let missing = Diagnostic::new(format!(
                "The requested handler '{notification}' was not found in either the main \
                 handlers list nor in the listening handlers list"
            ));
            if self.warn_on_missing {
                tack_diag::warn(&missing);
                return Ok(Vec::new());
            }
            return Err(missing);
        }
        Ok(found)
    }

    /// Records that `host` notified each of `notifications` from a task, saving each
    /// notification for the next flush as ansible does (and says from `-vv`).
    /// `unknown` names the task when its outcome is not known (a plan's `would run` or
    /// `deferred`): the handler is then listed as deferred on it, unless a known change
    /// notified it too.
    pub(crate) fn notify(
        &mut self,
        host: &str,
        notifications: &[String],
        unknown: Option<&str>,
        callback: &mut dyn tack_report::callback::Callback,
    ) -> Result<(), Diagnostic> {
        for notification in notifications {
            // Named handlers must exist now; which one a name means is decided at the flush
            // (the last defined then), as ansible resolves saved notifications there. One
            // nothing answers (only warned about) is not saved.
            if self.find_some(notification)?.is_empty() {
                continue;
            }
            self.plan_reason(host, std::slice::from_ref(notification), unknown);
            let saved = self.saved.entry(host.to_string()).or_default();
            if !saved.contains(notification) {
                saved.push(notification.clone());
            }
            callback.verbose_line(
                2,
                &format!("Notification for handler {notification} has been saved."),
            );
        }
        Ok(())
    }

    /// `tack plan`: why `host` notified `notifications`: `unknown` names the task of unknown
    /// outcome that did, `None` a known change (which outweighs any unknown one).
    pub(crate) fn plan_reason(
        &mut self,
        host: &str,
        notifications: &[String],
        unknown: Option<&str>,
    ) {
        for notification in notifications {
            let reason = self
                .plan_reasons
                .entry((host.to_string(), notification.clone()))
                .or_insert_with(|| unknown.map(str::to_string));
            if unknown.is_none() {
                *reason = None;
            }
        }
    }

    /// Records notifications made by a running handler: they take effect at once, and the
    /// handlers newly notified for `host` are returned (in notification order) to be announced.
    pub(crate) fn notify_now(
        &mut self,
        host: &str,
        notifications: &[String],
    ) -> Result<Vec<usize>, Diagnostic> {
        let mut fresh = Vec::new();
        for notification in notifications {
            for i in self.find_some(notification)? {
                if self.list[i].notified.insert(host.to_string()) {
                    fresh.push(i);
                }
            }
        }
        Ok(fresh)
    }

    /// At a flush for `host`: the handlers its saved notifications name now, each once, in
    /// the order the notifications were made (ansible's `NOTIFIED HANDLER` lines), notified
    /// for it. Forgets the notifications.
    /// Whether the play iterator passes over an implicit `flush_handlers` for `host`: the
    /// host has no saved notification and no handler is notified for any host.
    pub(crate) fn implicit_flush_skipped(&self, host: &str) -> bool {
        self.saved.get(host).is_none_or(|n| n.is_empty())
            && self.list.iter().all(|h| h.notified.is_empty())
    }

    pub(crate) fn announce(&mut self, host: &str) -> Vec<usize> {
        let mut out = Vec::new();
        for notification in self.saved.remove(host).unwrap_or_default() {
            for i in self.find(&notification) {
                self.list[i].notified.insert(host.to_string());
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
        out
    }

    /// `tack plan`: why handler `index` is listed for each of `hosts` (`None`: a known
    /// change notified it; else the task of unknown outcome that did).
    pub(crate) fn plan_reasons(
        &self,
        index: usize,
        hosts: &[String],
    ) -> crate::plan::HandlerReasons {
        let mut out = crate::plan::HandlerReasons::new();
        for ((host, notification), reason) in &self.plan_reasons {
            if !hosts.contains(host) || !self.find(notification).contains(&index) {
                continue;
            }
            let known = out.get(host).is_some_and(Option::is_none);
            if !known {
                out.insert(host.clone(), reason.clone());
            }
        }
        out
    }

    /// Forgets why handlers were notified for `hosts`, once their flush is over.
    pub(crate) fn forget_plan_reasons(&mut self, hosts: &[String]) {
        self.plan_reasons.retain(|(host, _), _| !hosts.contains(host));
    }

    /// Whether `host` is notified for handler `index`.
    pub(crate) fn is_notified(&self, index: usize, host: &str) -> bool {
        self.list[index].notified.contains(host)
    }

    /// The hosts of `among` notified for handler `index`, in `among`'s order, now no longer
    /// notified.
    pub(crate) fn take(&mut self, index: usize, among: &[String]) -> Vec<String> {
        let handler = &mut self.list[index];
        let hosts: Vec<String> =
            among.iter().filter(|h| handler.notified.contains(*h)).cloned().collect();
        for h in &hosts {
            handler.notified.remove(h);
        }
        hosts
    }
}

/// `Play.handlers` with the roles' first (`compile_roles_handlers`), each role's under its
/// dependency chain.
pub(crate) fn handler_blocks(
    play: &tack_playbook::Play,
) -> Vec<tack_playbook::compile::CompiledBlock> {
    use tack_playbook::compile::CompiledBlock;
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
