//! A task's arguments for one host (and loop item), rendered once: `--events` renders them
//! to show the task's input, the plan's gate to see what they read, and the action to run; a
//! render made by one of them is kept for the next, unless a variable it could have read
//! changed in between (an earlier host of the same task registered a result, set a fact,
//! changed the inventory...). A render it cannot vouch for is dropped and made again.
//!
//! Owns the render itself ([`render`]: module defaults filled in, raw arguments kept as
//! written, omitted ones dropped, ansible's error chain), the change counters of a play's
//! variables ([`Versions`], bumped by `vars::PlayScope`) and the per-task store of renders
//! ([`Renders`]). It never decides what runs.

use std::collections::BTreeMap;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use tack_diag::Diagnostic;
use tack_playbook::walk::TaskInContext;
use tack_template::{ProvenanceSet, Scope, Templar, TemplateErrorKind};
use tack_yaml::{Mapping, Node, Value};

use tack_actions::Action;

/// Counters of every change to a play's variables, so a render can tell whether its inputs
/// still hold: changes to what every host sees, changes per host, and reads of `hostvars`
/// (which let one host's render see another's variables).
#[derive(Default)]
pub(crate) struct Versions {
    shared: AtomicU64,
    any_host: AtomicU64,
    per_host: RwLock<BTreeMap<String, u64>>,
    hostvars_reads: AtomicU64,
}

/// The counters as a render started.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    shared: u64,
    any_host: u64,
    host: u64,
}

impl Versions {
    /// Something every host sees changed (play variables, inventory, `groups`, play hosts).
    pub(crate) fn shared_changed(&self) {
        self.shared.fetch_add(1, Ordering::Relaxed);
    }

    /// One host's own variables changed (facts, registered results, `include_vars`).
    pub(crate) fn host_changed(&self, host: &str) {
        self.any_host.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut map) = self.per_host.write() {
            *map.entry(host.to_string()).or_default() += 1;
        }
    }

    /// A template looked at `hostvars`.
    pub(crate) fn hostvars_read(&self) {
        self.hostvars_reads.fetch_add(1, Ordering::Relaxed);
    }

    fn stamp(&self, host: &str) -> Stamp {
        let host = self.per_host.read().ok().and_then(|m| m.get(host).copied()).unwrap_or(0);
        Stamp {
            shared: self.shared.load(Ordering::Relaxed),
            any_host: self.any_host.load(Ordering::Relaxed),
            host,
        }
    }

    fn reads(&self) -> u64 {
        self.hostvars_reads.load(Ordering::Relaxed)
    }
}

/// A task's arguments as rendered for one host (and loop item).
#[derive(Debug, Clone, Default)]
pub(crate) struct RenderedArgs {
    pub args: Mapping,
    pub provenance: ProvenanceSet,
    /// Arguments whose value came from a managed host.
    pub host_named: Vec<String>,
    /// Arguments whose render read a `!vault` value.
    pub sealed: Vec<String>,
    /// Warnings the render gave, which are the result's (an argument splat's).
    pub warnings: Vec<Diagnostic>,
    /// Each string says its own trust (`set_fact`'s while strings carry ansible's tags:
    /// `tack_template::value::marking_trust`).
    pub trust_marked: bool,
}

/// An argument that failed to render: ansible's error chain for the task, and (in a plan)
/// the producer of an unavailable value the failed render read.
#[derive(Debug, Clone)]
pub(crate) struct ArgsFailed {
    pub error: Diagnostic,
    pub unavailable: Option<String>,
    /// Warnings given before the failure, which are the failed result's.
    pub warnings: Vec<Diagnostic>,
}

/// The arguments of `ctx`'s task for `action`, rendered in `scope` (module defaults filled
/// in; those the action takes raw kept as written; omitted ones dropped), with what the
/// renders read.
pub(crate) fn render(
    ctx: &TaskInContext<'_>,
    action: Action,
    templar: &Templar,
    scope: &Scope,
) -> Result<RenderedArgs, ArgsFailed> {
    // ansible's `set_fact` keeps the very objects its arguments rendered to, each string
    // with its own trust; tack can say so only while strings carry tags.
    let written = ctx.task.args.iter().flat_map(|(k, v)| [k, v]);
    if action.is("set_fact") && tack_template::value::track_tags_for(written) {
        let mut out =
            tack_template::value::marking_trust(|| render_all(ctx, action, templar, scope))?;
        out.trust_marked = true;
        return Ok(out);
    }
    render_all(ctx, action, templar, scope)
}

fn render_all(
    ctx: &TaskInContext<'_>,
    action: Action,
    templar: &Templar,
    scope: &Scope,
) -> Result<RenderedArgs, ArgsFailed> {
    let task_origin = ctx.task.origin.clone();
    let raw = action.raw_args();
    let mut out = RenderedArgs::default();
    let defaults = crate::task::module_defaults::default_args(ctx, action, templar, scope)
        .map_err(|d| ArgsFailed {
            error: Diagnostic::caused_by("Task failed.", task_origin.clone(), d),
            unavailable: None,
            warnings: Vec::new(),
        })?;
    let splats = splat_sources(ctx, action);
    if !splats.is_empty() {
        let origins = (task_origin.clone(), ctx.task.action_origin.clone());
        splat(&splats, action, templar, scope, &mut out, &origins).map_err(|mut failed| {
            failed.warnings = out.warnings.clone();
            failed
        })?;
    }
    // ansible 2.21's `TaskArgsChainTemplar` renders the arguments in the sorted order of
    // their names (the first that fails is the one reported) and hands them to the action
    // so (`set_fact` sets its facts in that order).
    let mut written: Vec<(&Node, &Node)> = ctx.task.args.iter().chain(defaults.iter()).collect();
    written.sort_by_cached_key(|(key, _)| tack_yaml::pyrepr::str(&key.value));
    for (key, value) in written {
        let name = key.as_str().unwrap_or_default();
        if splats.iter().any(|(k, _)| *k == name) {
            continue;
        }
        // A splatted argument below one of the task's own defaults does not come back.
        if !splats.is_empty() && out.args.get(name).is_some() && defaults.get(name).is_some() {
            continue;
        }
        if raw.contains(&name) {
            out.args.insert(key.clone(), value.clone());
            continue;
        }
        match templar.render(value, scope) {
            Ok(mut rendered) => {
                if action.expression_args().contains(&name) {
                    Templar::untrust_computed_strings(value, &mut rendered.value, scope);
                }
                out.provenance.extend(&rendered.provenance);
                if rendered.provenance.is_managed_host()
                    && !script_named_by_user(action, name, value)
                {
                    out.host_named.push(name.to_string());
                }
                if rendered.provenance.is_sealed() {
                    out.sealed.push(name.to_string());
                }
                out.args.insert(key.clone(), rendered.value);
            }
            // ansible 2.21's omit takes the argument away, not only this layer's value: what
            // a splat below gave for it goes too.
            Err(e) if e.kind == TemplateErrorKind::Omitted => {
                if ctx.task.args.get(name).is_some() {
                    out.args.remove(name);
                }
            }
            Err(e) => {
                let at = e.origin.clone().or_else(|| value.origin.clone());
                let mut cause = match &e.inner {
                    // The failure happened in a variable's template: shown there, under the
                    // argument's own.
                    Some(_) => Diagnostic::caused_by(
                        format!("Error while resolving value for '{name}'."),
                        at,
                        e.to_diagnostic(),
                    ),
                    None => Diagnostic::at(
                        format!("Error while resolving value for '{name}': {}", e.message),
                        at,
                    ),
                };
                // A value written outside any file (`-a` of the ad-hoc command) is shown
                // as itself under its origin, as ansible shows an untagged source.
                if cause.origin == value.origin
                    && value.origin.as_ref().is_some_and(|o| o.path.is_none())
                    && let Value::Str(text) = &value.value
                {
                    cause.value_repr = Some(text.as_str().into());
                }
                // ansible's error is about the action (`obj=self.action`): where the action
                // was written, which folds into the task's line when it is the same.
                let middle = Diagnostic::caused_by(
                    format!("Finalization of task args for '{}' failed.", action.fqcn()),
                    ctx.task.action_origin.clone(),
                    cause,
                );
                return Err(ArgsFailed {
                    error: Diagnostic::caused_by("Task failed.", task_origin, middle),
                    unavailable: e.unavailable.first().map(|p| p.to_string()),
                    warnings: out.warnings,
                });
            }
        }
    }
    Ok(out)
}

/// The arguments ansible's `TaskArgsFinalizer` takes as templates of whole mappings, lowest
/// first: an `args:` template (`_variable_params`), then free-form text that is all one
/// template for an action that takes no free-form text (`assert: '{{ item }}'`).
fn splat_sources<'t>(ctx: &'t TaskInContext<'_>, action: Action) -> Vec<(&'static str, &'t Node)> {
    let mut out = Vec::new();
    if let Some(node) = ctx.task.args.get("_variable_params") {
        out.push(("_variable_params", node));
    }
    if !action.takes_raw_params()
        && let Some(node) = ctx.task.args.get("_raw_params")
        && node.as_str().is_some_and(tack_playbook::is_all_template)
    {
        out.push(("_raw_params", node));
    }
    out
}

/// `script`'s free form names the script first and then its arguments, which reach the host
/// as its command line and choose no controller file: when the script's own name is written
/// out (no template in the first word), a host's value among the arguments names nothing the
/// controller sends.
fn script_named_by_user(action: Action, name: &str, value: &Node) -> bool {
    if !action.is("script") || !["_raw_params", "cmd"].contains(&name) {
        return false;
    }
    let Some(first) = value.as_str().and_then(|t| t.split_whitespace().next()) else {
        return false;
    };
    !tack_template::is_possibly_template(first)
}

/// Renders each of `splats` to a mapping whose entries become arguments (a later source's
/// win), as ansible's finalizer does, with its warning that the form is unsafe (a managed
/// host's values may name any argument); entries carry the render's provenance.
fn splat(
    splats: &[(&str, &Node)],
    action: Action,
    templar: &Templar,
    scope: &Scope,
    out: &mut RenderedArgs,
    (task_origin, action_origin): &(Option<tack_diag::Origin>, Option<tack_diag::Origin>),
) -> Result<(), ArgsFailed> {
    let failed = |cause: Diagnostic, unavailable: Option<String>| {
        // ansible's finalizer raises at the action, as written.
        let middle = Diagnostic::caused_by(
            format!("Finalization of task args for '{}' failed.", action.fqcn()),
            action_origin.clone(),
            cause,
        );
        ArgsFailed {
            error: Diagnostic::caused_by("Task failed.", task_origin.clone(), middle),
            unavailable,
            warnings: Vec::new(),
        }
    };
    for (_, node) in splats {
        out.warnings.push(Diagnostic::at(
            "Using a template for task args is unsafe in some situations (see \
             https://docs.ansible.com/ansible/devel/reference_appendices/faq.html#argsplat-unsafe).",
            node.origin.clone(),
        ));
        let mut rendered = match templar.render(node, scope) {
            Ok(rendered) => rendered,
            // An omitted source gives no arguments.
            Err(e) if e.kind == TemplateErrorKind::Omitted => continue,
            Err(e) => {
                let unavailable = e.unavailable.first().map(|p| p.to_string());
                return Err(failed(e.to_diagnostic(), unavailable));
            }
        };
        if let Some(var) = Templar::sole_variable(node, scope) {
            Templar::keep_untrusted_of(&var, &mut rendered.value);
        }
        let Value::Map(entries) = &rendered.value.value else {
            let type_name = rendered.value.python_type();
            let cause = Diagnostic::at(
                format!("Task args must resolve to a 'dict' not '{type_name}'."),
                node.origin.clone(),
            );
            return Err(failed(cause, None));
        };
        out.provenance.extend(&rendered.provenance);
        for (key, value) in entries.iter() {
            // An argument the action does not know is the action's to fail on as it runs.
            let name = key.as_str().unwrap_or_default().to_string();
            if rendered.provenance.is_managed_host() && !out.host_named.contains(&name) {
                out.host_named.push(name.clone());
            }
            if rendered.provenance.is_sealed() && !out.sealed.contains(&name) {
                out.sealed.push(name);
            }
            out.args.insert(key.clone(), value.clone());
        }
    }
    Ok(())
}

struct Kept {
    stamp: Stamp,
    /// The render read `hostvars`: any host's change may have changed it.
    read_others: bool,
    rendered: RenderedArgs,
}

/// Which run of a task a render is for: a host, and the loop item's index when it loops.
type RunKey = (String, Option<usize>);

/// One task's renders by host and loop item, each usable once by the next that asks.
#[derive(Default)]
pub(crate) struct Renders {
    // A lock: hosts' runs take their renders from threads of their own (`forks`).
    kept: Mutex<BTreeMap<RunKey, Kept>>,
}

impl Renders {
    /// What `read` makes of the render for `host` (and `item`): the one an earlier reader
    /// kept when nothing it could have read changed since, else a new one made with
    /// `render`. The render stays kept for the next reader when `keep` (it renders in the same
    /// scope: the run does not delegate). For the readers before the action (`--events`,
    /// the plan's gate), which each copy out only what they need.
    pub(crate) fn read<T, E>(
        &self,
        versions: &Versions,
        (host, item): (&str, Option<usize>),
        keep: bool,
        render: impl FnOnce() -> Result<RenderedArgs, E>,
        read: impl FnOnce(&RenderedArgs) -> T,
    ) -> Result<T, E> {
        let key = (host.to_string(), item);
        let kept = match self.take_kept(versions, &key) {
            // Still good now: the next reader checks it against today's counters.
            Some(kept) => Kept { stamp: versions.stamp(host), ..kept },
            None => {
                let stamp = versions.stamp(host);
                let reads = versions.reads();
                let rendered = render()?;
                let read_others = versions.reads() != reads;
                Kept { stamp, read_others, rendered }
            }
        };
        let out = read(&kept.rendered);
        if keep {
            self.kept.lock().unwrap_or_else(PoisonError::into_inner).insert(key, kept);
        }
        Ok(out)
    }

    /// The render for `host` (and `item`) for the action, the last reader: the one kept,
    /// when nothing it could have read changed since, else a new one made with `render`.
    /// Nothing stays kept (a retry renders again, as what it reads may have changed).
    pub(crate) fn take<E>(
        &self,
        versions: &Versions,
        (host, item): (&str, Option<usize>),
        render: impl FnOnce() -> Result<RenderedArgs, E>,
    ) -> Result<RenderedArgs, E> {
        match self.take_kept(versions, &(host.to_string(), item)) {
            Some(kept) => Ok(kept.rendered),
            None => render(),
        }
    }

    /// A new render for `host` (and `item`), the one kept dropped: for a render that reads
    /// what no render made ahead of time could (a loop's earlier items).
    pub(crate) fn take_fresh<E>(
        &self,
        (host, item): (&str, Option<usize>),
        render: impl FnOnce() -> Result<RenderedArgs, E>,
    ) -> Result<RenderedArgs, E> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner).remove(&(host.to_string(), item));
        render()
    }

    /// The render kept for `key`, if nothing it could have read changed since.
    fn take_kept(&self, versions: &Versions, key: &RunKey) -> Option<Kept> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner).remove(key)?;
        let now = versions.stamp(&key.0);
        let still = now.shared == kept.stamp.shared
            && now.host == kept.stamp.host
            && (!kept.read_others || now.any_host == kept.stamp.any_host);
        still.then_some(kept)
    }
}
