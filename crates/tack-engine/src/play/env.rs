//! What one batch of a play shares between its rounds and never changes while it runs: the
//! run's settings and links, the play's variables and hosts, where loaded blocks are kept, and
//! the play as it grows (an `include_role` appends roles to its arena). Everything a batch
//! changes as it runs is its [`BatchState`](crate::play::batch::BatchState), passed beside it.
//!
//! Also how a task is seen in the play: its banner and view for the callback, the runner and
//! the reading of one task for a host, the keywords the strategy reads once per round
//! (`run_once`, `any_errors_fatal`, `ignore_errors`, `throttle`) and the names a `notify`
//! gives. Nothing here runs a task or moves a host.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use typed_arena::Arena;

use tack_diag::Diagnostic;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::listing::listed_name;
use tack_playbook::tables::Keyword;
use tack_playbook::walk::TaskInContext;
use tack_playbook::{Play, RoleId};
use tack_template::{Layer, Provenance};
use tack_yaml::{Mapping, Node, Value};

use tack_actions::Action;
use tack_report::callback::TaskView;
use tack_report::result::s;

use crate::context::RunContext;
use crate::play::batch::BatchState;
use crate::play::cursor::HostCursor;
use crate::task::TaskRun;
use crate::task::outcome::TaskOutcome;
use crate::task::reading::{Reading, meta_arg};
use crate::vars::PlayScope;

/// The task keywords the strategy reads once for the round.
pub(crate) struct Controls {
    pub run_once: bool,
    pub any_errors_fatal: bool,
    /// The task's `ignore_errors` (ansible tests it on every result, failed or not).
    pub ignore: bool,
}

/// What one batch's rounds share.
pub(crate) struct PlayEnv<'r, 'a> {
    pub run: &'r RunContext<'a>,
    /// The run's inventory as `add_host` and `group_by` leave it.
    pub live: &'r tack_inventory::live::LiveInventory,
    pub scope: Arc<PlayScope>,
    /// The play's variables (the tags of included tasks render with them).
    pub vars: &'r Mapping,
    /// The hosts of the batch being run.
    pub hosts: Vec<String>,
    /// Every host of the play, in its `order` (`ansible_play_hosts_all`).
    pub all_hosts: Vec<String>,
    /// `max_fail_percentage` as a fraction.
    pub max_fail: Option<f64>,
    /// The play runs under `free` or `host_pinned`, which honour neither
    /// `any_errors_fatal` nor `max_fail_percentage`.
    pub free: bool,
    /// Where the blocks includes load are kept for the play.
    pub blocks: &'r Arena<Vec<CompiledBlock>>,
    /// Where the plays an `include_role` grows are kept.
    pub plays: &'r Arena<Play>,
    /// The `-vvv` notes of each gathering of the play's variables.
    pub reads: crate::vars::read_notes::ReadNotes,
    /// The play as it stands: an `include_role` replaces it with a copy whose role arena
    /// holds the roles loaded since (earlier roles keep their ids). Only ever grows.
    play: Cell<&'r Play>,
    /// Each role's identity (its name and parameters), for `allow_duplicates`; grows with
    /// the play.
    identities: RefCell<Vec<String>>,
    /// Each role task's role layers, computed once (they do not depend on the host).
    role_layers: RefCell<HashMap<*const tack_playbook::Task, crate::vars::roles::RoleLayers>>,
    /// The roles (by identity) that had a task run on a host, ok or failed (ansible's
    /// `_had_task_run`): only such a role completes there (`role_complete`).
    role_ran: RefCell<BTreeSet<(String, String)>>,
}

/// What a batch starts from besides its hosts.
pub(crate) struct PlayShared<'r, 'a> {
    pub run: &'r RunContext<'a>,
    pub live: &'r tack_inventory::live::LiveInventory,
    pub scope: Arc<PlayScope>,
    pub vars: &'r Mapping,
    pub play: &'r Play,
    pub all_hosts: Vec<String>,
    pub max_fail: Option<f64>,
    pub free: bool,
    pub blocks: &'r Arena<Vec<CompiledBlock>>,
    pub plays: &'r Arena<Play>,
    pub reads: crate::vars::read_notes::ReadNotes,
}

impl<'r, 'a> PlayEnv<'r, 'a> {
    /// The batch of `hosts` of the play `shared` describes.
    pub(crate) fn new(shared: &PlayShared<'r, 'a>, hosts: Vec<String>) -> PlayEnv<'r, 'a> {
        let play = shared.play;
        let identities = (0..play.role_arena.len())
            .map(|i| crate::vars::roles::identity(play, RoleId(i)))
            .collect();
        PlayEnv {
            run: shared.run,
            live: shared.live,
            scope: shared.scope.clone(),
            vars: shared.vars,
            hosts,
            all_hosts: shared.all_hosts.clone(),
            max_fail: shared.max_fail,
            free: shared.free,
            blocks: shared.blocks,
            plays: shared.plays,
            reads: shared.reads.clone(),
            play: Cell::new(play),
            identities: RefCell::new(identities),
            role_layers: RefCell::default(),
            role_ran: RefCell::default(),
        }
    }

    pub(crate) fn play(&self) -> &'r Play {
        self.play.get()
    }

    /// The play runs on with `roles` as its role arena from now on (the roles an include
    /// loaded appended to it), each new role with its identity for `allow_duplicates`.
    pub(crate) fn grow_roles(&self, roles: Vec<tack_playbook::Role>) {
        let mut play = self.play().clone();
        play.role_arena = roles;
        let play: &'r Play = self.plays.alloc(play);
        let mut identities = self.identities.borrow_mut();
        for i in identities.len()..play.role_arena.len() {
            identities.push(crate::vars::roles::identity(play, RoleId(i)));
        }
        self.play.set(play);
    }

    /// The identity of `role` (its name and parameters).
    pub(crate) fn identity(&self, role: RoleId) -> String {
        self.identities.borrow()[role.0].clone()
    }

    /// Notes that `ctx`'s role had a task run on `host` when `result` says it ran (not
    /// skipped, not unreachable), as ansible's strategy marks `_had_task_run`.
    pub(crate) fn note_role_ran(
        &self,
        ctx: &TaskInContext<'_>,
        host: &str,
        result: &tack_report::result::HostResult,
    ) {
        let Some(role) = ctx.task.role else { return };
        if result.flag("skipped") || result.flag("unreachable") {
            return;
        }
        self.role_ran.borrow_mut().insert((self.identity(role), host.to_string()));
    }

    /// Whether `role` had a task run on `host` (see [`PlayEnv::note_role_ran`]).
    pub(crate) fn role_ran(&self, role: tack_playbook::RoleId, host: &str) -> bool {
        self.role_ran.borrow().contains(&(self.identity(role), host.to_string()))
    }

    /// Whether `ctx` belongs to a role that already ran on `host` under the same identity
    /// (and does not allow duplicates): ansible passes over it there. The role's closing
    /// `role_complete` still runs.
    pub(crate) fn role_done(
        &self,
        ctx: &TaskInContext<'_>,
        host: &str,
        completed: &BTreeSet<(String, String)>,
    ) -> bool {
        let Some(role) = ctx.task.role else { return false };
        if self.play().role(role).allow_duplicates
            || (ctx.task.implicit && meta_arg(ctx) == "role_complete")
        {
            return false;
        }
        completed.contains(&(self.identity(role), host.to_string()))
    }

    /// `ctx` as its hosts read it (with the include parameters `params`).
    pub(crate) fn reading<'t>(
        &'t self,
        ctx: &'t TaskInContext<'t>,
        params: Option<Arc<Layer>>,
    ) -> Reading<'t> {
        let mut role = self
            .role_layers
            .borrow_mut()
            .entry(std::ptr::from_ref(ctx.task))
            .or_insert_with(|| crate::vars::roles::layers(self.play(), ctx))
            .clone();
        // An `import_role` inside a role an `include_role` brought in: its parents are the
        // importing roles, then the include's (its parameters hold those).
        if let (Some(magic), Some(params)) = (&role.magic, &params) {
            role.magic = crate::vars::roles::with_included_parents(magic, params);
        }
        Reading {
            ctx,
            templar: self.run.templar,
            vars: &self.scope,
            role,
            play: self.play(),
            params,
            no_log_default: self.run.facts.no_log,
            poll_default: self.run.facts.poll_interval.unwrap_or(15),
        }
    }

    /// The runner of `ctx` (action `action`) on this batch's hosts.
    pub(crate) fn runner<'t>(
        &'t self,
        ctx: &'t TaskInContext<'t>,
        action: Action,
        params: Option<Arc<Layer>>,
    ) -> TaskRun<'t> {
        let facts = &self.run.facts;
        TaskRun {
            reading: self.reading(ctx, params),
            action,
            verbosity: facts.verbosity,
            check_flag: facts.check_mode || facts.plan,
            planning: facts.plan,
            plan_handler: None,
            diff_flag: facts.diff_mode,
            diff_settings: &facts.diff,
            async_dir: &facts.async_dir,
            rlimit_setting: facts.python_module_rlimit_nofile,
            inject_invocation: facts.inject_invocation,
            result_connections: facts.result_connections,
            fanout: Vec::new(),
            inventory: self.live,
            renders: Default::default(),
            links: self.run.links,
            ssh_defaults: &facts.ssh,
            reads: self.reads.clone(),
            banner_name: String::new(),
            interpreter: &facts.interpreter,
            pending: &self.run.pending,
            discovered: Default::default(),
            refuse_action: crate::refuse::check_action,
        }
    }

    /// Where a run of `ctx` on `host` goes (`meta: reset_connection` resets it); `None` when
    /// its settings do not resolve.
    pub(crate) fn link_target(
        &self,
        ctx: &TaskInContext<'_>,
        params: Option<Arc<Layer>>,
        host: &str,
    ) -> Option<tack_links::LinkTarget> {
        let reading = self.reading(ctx, params);
        let scope = reading.scope(host)?;
        let discovered = Default::default();
        let links = crate::task::link::TaskLinks {
            delegation: crate::task::delegate::Delegation {
                task: &reading,
                ssh: &self.run.facts.ssh,
            },
            links: self.run.links,
            ssh: &self.run.facts.ssh,
            interpreter: &self.run.facts.interpreter,
            discovered: &discovered,
        };
        links.link_target(host, &scope).ok().map(|(target, _)| target)
    }

    /// Tasks that touch a host run only over links tack has, and only what tack can do over
    /// them: refused by name before the play runs a task.
    pub(crate) fn check_connections<'t>(
        &self,
        tasks: impl Iterator<Item = &'t TaskInContext<'t>>,
    ) -> Result<(), Diagnostic> {
        for ctx in tasks {
            let resets = crate::task::reading::is_meta(ctx) && meta_arg(ctx) == "reset_connection";
            let uses_link = Action::of(ctx.task).is_some_and(Action::uses_link);
            if !resets && !uses_link {
                continue;
            }
            for host in &self.hosts {
                let Some(scope) = self.reading(ctx, None).scope(host) else { continue };
                let vars = |name: &str| scope.get_own(name).map(|b| b.node().clone());
                let keyword = |k| ctx.inherited(k).cloned();
                let target = tack_links::link_target::resolve(
                    self.run.templar,
                    &scope,
                    &vars,
                    &keyword,
                    host,
                    ctx.task.origin.clone(),
                    &self.run.facts.ssh,
                )?;
                if target == tack_links::LinkTarget::Local {
                    continue;
                }
                if !self.run.links.reaches_remote() {
                    let message = format!(
                        "tack does not support the 'ssh' connection in this run (host '{host}'); \
                         modules run only on hosts with ansible_connection=local"
                    );
                    return Err(Diagnostic::at(message, ctx.task.origin.clone()));
                }
            }
        }
        Ok(())
    }

    /// [`view`](Self::view) with the name as the task's banner shows it: rendered with the
    /// first host's variables (`host`), as ansible post-validates it before the banner, after
    /// ansible's warning when some of it could not be rendered.
    pub(crate) fn banner(
        &self,
        ctx: &TaskInContext<'_>,
        host: Option<&String>,
        params: Option<Arc<Layer>>,
    ) -> TaskView {
        let mut view = self.view(ctx);
        let (Some(raw), Some(host)) = (ctx.task.name(), host) else { return view };
        if !tack_template::Templar::is_template(&tack_yaml::pyrepr::str(&raw.value)) {
            return view;
        }
        let Some(scope) = self.reading(ctx, params).scope(host) else { return view };
        let (name, warning) = crate::task::name::render(self.run.templar, raw, &scope);
        if let Some(warning) = warning {
            tack_diag::warn(&warning);
        }
        if name.is_empty() {
            return view;
        }
        view.name = match (&ctx.task.kind, ctx.task.role) {
            (tack_playbook::TaskKind::IncludeRole(_), _) | (_, None) => name,
            (_, Some(role)) => format!("{} : {name}", self.play().role(role).name),
        };
        view
    }

    pub(crate) fn view(&self, ctx: &TaskInContext<'_>) -> TaskView {
        let task = ctx.task;
        TaskView {
            // `Task.get_name`: an unnamed task in a role shows `role : action`.
            name: listed_name(self.play(), task).unwrap_or_else(|| match (&task.kind, task.role) {
                (tack_playbook::TaskKind::IncludeRole(target), _) => {
                    unnamed_include_role(&task.action, target)
                }
                (_, Some(role)) => format!("{} : {}", self.play().role(role).name, task.action),
                (_, None) => task.action.clone(),
            }),
            action: task.action.clone(),
            looped: task.loop_items.is_some(),
            origin: task.origin.clone(),
            // As the task was loaded (ansible's banner reads the attribute before any host
            // renders it).
            check_mode: ctx
                .inherited(tack_playbook::tables::Keyword::CheckMode)
                .map_or_else(|| self.check_flag(), |node| node.value.is_truthy()),
        }
    }

    /// `--check` (a plan runs as one).
    pub(crate) fn check_flag(&self) -> bool {
        self.run.facts.check_mode || self.run.facts.plan
    }

    /// `ansible_failed_task` and `ansible_failed_result` for the rescue that follows.
    pub(crate) fn remember_failure(
        &self,
        host: &str,
        ctx: &TaskInContext<'_>,
        outcome: &TaskOutcome,
    ) {
        let result = &outcome.result;
        // An outcome that failed before its scope existed keeps the task's written basics.
        let mut task = Mapping::new();
        let name = ctx.task.name().map(|n| n.value.clone()).unwrap_or(Value::Str(String::new()));
        task.insert(s("name"), Node::bare(name));
        task.insert(s("action"), s(&ctx.task.action));
        task.insert(s("args"), Node::bare(Value::Map(ctx.task.args.clone())));
        let task = outcome.failed_task.clone().unwrap_or(Node::bare(Value::Map(task)));
        self.scope.set_host_var(host, "ansible_failed_task", task, Provenance::Trusted);
        self.scope.set_host_var(
            host,
            "ansible_failed_result",
            Node::bare(Value::Map(result.data.clone())),
            Provenance::ManagedHost,
        );
    }

    /// `ansible_play_hosts` (the play's hosts not failed) and `ansible_play_batch` (the
    /// batch's).
    pub(crate) fn update_play_hosts(&self, state: &BatchState, cursors: &[(String, HostCursor)]) {
        let out = |h: &String| {
            state.removed.contains(h)
                || state.lost.contains(h)
                || state.forced.contains(h)
                || state.excluded.contains(h)
                || cursors.iter().any(|(c, cur)| c == h && (cur.failed || cur.failing))
        };
        let play: Vec<String> = self.all_hosts.iter().filter(|h| !out(h)).cloned().collect();
        let batch: Vec<String> = self.hosts.iter().filter(|h| !out(h)).cloned().collect();
        self.scope.set_play_batch(&self.all_hosts, &play, &batch);
    }

    /// `run_once`, `any_errors_fatal` and `ignore_errors` rendered for the first host of the
    /// round.
    pub(crate) fn task_controls(
        &self,
        ctx: &TaskInContext<'_>,
        hosts: &[String],
        params: Option<Arc<Layer>>,
    ) -> Result<Controls, Diagnostic> {
        let none = Controls { run_once: false, any_errors_fatal: false, ignore: false };
        let Some(first) = hosts.first() else { return Ok(none) };
        let include = matches!(
            ctx.task.kind,
            tack_playbook::TaskKind::IncludeTasks | tack_playbook::TaskKind::IncludeRole(_)
        );
        if Action::of(ctx.task).is_none() && !include {
            return Ok(none);
        }
        let reading = self.reading(ctx, params);
        let Some(scope) = reading.scope(first) else { return Ok(none) };
        Ok(Controls {
            run_once: reading.flag(Keyword::RunOnce, &scope)?,
            // The `any_errors_fatal` setting where no task, block, role or play says.
            any_errors_fatal: reading.flag_or(
                Keyword::AnyErrorsFatal,
                &scope,
                self.run.facts.any_errors_fatal,
            )?,
            ignore: reading.flag(Keyword::IgnoreErrors, &scope).unwrap_or(false),
        })
    }

    /// `throttle` for `ctx` on `host` (0 when unset or the host is unknown): how many hosts
    /// may run the task at once, capping `forks`. ansible renders it as it queues the task,
    /// after the task's banner; an invalid one stops the play there.
    pub(crate) fn throttle_for(
        &self,
        ctx: &TaskInContext<'_>,
        host: &str,
        params: Option<Arc<Layer>>,
    ) -> Result<i64, Diagnostic> {
        if ctx.inherited(Keyword::Throttle).is_none() {
            return Ok(0);
        }
        match self.reading(ctx, params).scope(host) {
            Some(scope) => self.throttle(ctx, &scope),
            None => Ok(0),
        }
    }

    /// `int(throttle)` rendered, with ansible's error when it is not a number.
    pub(crate) fn throttle(
        &self,
        ctx: &TaskInContext<'_>,
        scope: &tack_template::Scope,
    ) -> Result<i64, Diagnostic> {
        let Some(node) = ctx.inherited(Keyword::Throttle) else { return Ok(0) };
        // ansible's message carries why `int(...)` failed (`'nope' is undefined`,
        // `invalid literal for int() ...`) on the same line.
        let failed = |cause: Diagnostic| {
            Diagnostic::caused_by(
                "Failed to convert the throttle value to an integer.",
                node.origin.clone(),
                cause,
            )
        };
        let rendered = self
            .run
            .templar
            .render(node, scope)
            .map_err(|e| failed(Diagnostic::new(e.to_diagnostic().brief())))?;
        let value = &rendered.value.value;
        match value {
            Value::Int(i) => Ok(*i),
            Value::Bool(b) => Ok(i64::from(*b)),
            Value::Float(f) if f.is_finite() => Ok(f.trunc() as i64),
            Value::Str(s) | Value::Unsafe(s) => tack_py::num::int(s).map_err(|e| {
                let why = match e {
                    tack_py::num::IntError::Invalid(why) => why,
                    tack_py::num::IntError::TooLarge => "the value is too large".into(),
                };
                failed(Diagnostic::new(why))
            }),
            _ => Err(failed(Diagnostic::new(format!(
                "int() argument must be a string, a bytes-like object or a real number, not '{}'",
                value.python_type()
            )))),
        }
    }

    /// The handler names a task's `notify` (its own, else its blocks', as ansible's
    /// `Notifiable` inherits it) gives on `host` (rendered with its variables).
    pub(crate) fn notify_names(
        &self,
        ctx: &TaskInContext<'_>,
        host: &str,
        params: Option<Arc<Layer>>,
    ) -> Result<Vec<String>, Diagnostic> {
        let Some(node) = ctx.inherited(Keyword::Notify) else { return Ok(Vec::new()) };
        if Action::of(ctx.task).is_none() {
            return Ok(Vec::new());
        }
        let Some(scope) = self.reading(ctx, params).scope(host) else {
            return Ok(Vec::new());
        };
        let rendered = self.run.templar.render(node, &scope).map_err(|e| e.to_diagnostic())?;
        Ok(match &rendered.value.value {
            Value::Seq(items) => items.iter().map(|i| tack_yaml::pyrepr::str(&i.value)).collect(),
            Value::Null => Vec::new(),
            other => vec![tack_yaml::pyrepr::str(other)],
        })
    }
}

/// The name an unnamed `include_role` shows (`IncludeRole.get_name`): its action and the
/// role name as written.
fn unnamed_include_role(action: &str, target: &tack_playbook::RoleTarget) -> String {
    let name = target.name.as_ref().map(|n| match &n.value {
        Value::Str(s) => s.clone(),
        other => tack_yaml::pyrepr::str(other),
    });
    format!("{action} : {}", name.unwrap_or_default())
}
