//! A task's input per host, as seed 000 (steps 1-3) has it: the arguments rendered for every
//! targeted host in that host's context, compared with the first host's (hosts by name), and
//! the one map shown for the task: secrets masked, then differing top-level keys marked.
//!
//! Only the callbacks that show inputs ask for this (`Callback::wants_params`); it renders the
//! arguments apart from the run and never changes what a host receives or what runs.

use tack_playbook::tables::Keyword;
use tack_yaml::{Mapping, Node, Value};

use tack_report::callback::{MASK, PER_HOST, TaskParams};

use crate::task::TaskRun;
use crate::task::args::RenderedArgs;
use crate::task::loop_control::LoopControl;
use crate::task::when::When;

/// One host's input: the arguments of each run of the task (one, or one per loop item), and
/// which keys of each held a secret.
struct HostInput {
    host: String,
    items: Vec<(Mapping, Vec<String>)>,
}

/// Renders `run`'s arguments for each of `hosts` and builds what is shown for the task.
pub(crate) fn collect(run: &TaskRun<'_>, hosts: &[String]) -> TaskParams {
    let mut sorted: Vec<&String> = hosts.iter().collect();
    sorted.sort();
    let no_log = task_no_log(run, &sorted);
    let secret_options = match run.action {
        tack_actions::Action::Module(name) => tack_agent::modules::secret_options(name),
        action if action.is("copy") => tack_agent::modules::secret_options("copy"),
        _ => Vec::new(),
    };
    let inputs: Vec<HostInput> = sorted.iter().filter_map(|h| host_input(run, h)).collect();
    let first = inputs.first();
    let shared = inputs.iter().all(|i| Some(&i.items) == first.map(|f| &f.items));
    let sealed_hosts = inputs
        .iter()
        .filter(|i| no_log || i.items.iter().any(|(_, sealed)| !sealed.is_empty()))
        .map(|i| i.host.clone())
        .collect();
    let shown = match first {
        None => Node::bare(Value::Map(Mapping::new())),
        Some(first) => {
            let items: Vec<Node> = first
                .items
                .iter()
                .enumerate()
                .map(|(index, (args, _))| {
                    let mut map = Mapping::new();
                    for (key, value) in args.iter() {
                        let name = key.as_str().unwrap_or_default();
                        let secret = no_log
                            || secret_options.contains(&name)
                            || inputs.iter().any(|i| {
                                i.items.get(index).is_some_and(|(_, s)| s.iter().any(|k| k == name))
                            });
                        let differs = inputs.iter().any(|i| {
                            i.items.len() != first.items.len()
                                || i.items.get(index).map(|(a, _)| a.get(name)) != Some(Some(value))
                        });
                        let shown = if secret {
                            MASK
                        } else if differs {
                            PER_HOST
                        } else {
                            map.insert(key.clone(), value.clone());
                            continue;
                        };
                        map.insert(key.clone(), Node::bare(Value::Str(shown.into())));
                    }
                    // A key another host has and the first lacks differs too.
                    for other in &inputs {
                        let Some((args, _)) = other.items.get(index) else { continue };
                        for (key, _) in args.iter() {
                            if map.get(key.as_str().unwrap_or_default()).is_none() {
                                map.insert(key.clone(), Node::bare(Value::Str(PER_HOST.into())));
                            }
                        }
                    }
                    Node::bare(Value::Map(map))
                })
                .collect();
            if run.reading.ctx.task.loop_items.is_some() {
                Node::bare(Value::Seq(items))
            } else {
                items.into_iter().next().unwrap_or_else(|| Node::bare(Value::Map(Mapping::new())))
            }
        }
    };
    // Seed 000: where inputs differ, every host's own input is kept (the ones that match the
    // first included), secrets masked; where they agree, nothing per host.
    let looped = run.reading.ctx.task.loop_items.is_some();
    let per_host = if shared {
        Vec::new()
    } else {
        inputs
            .iter()
            .map(|input| {
                let masked = |(args, sealed): &(Mapping, Vec<String>)| {
                    let mut map = Mapping::new();
                    for (key, value) in args.iter() {
                        let name = key.as_str().unwrap_or_default();
                        let secret = no_log
                            || secret_options.contains(&name)
                            || sealed.iter().any(|k| k == name);
                        let value = if secret {
                            Node::bare(Value::Str(MASK.into()))
                        } else {
                            value.clone()
                        };
                        map.insert(key.clone(), value);
                    }
                    Node::bare(Value::Map(map))
                };
                let items: Vec<Node> = input.items.iter().map(masked).collect();
                let node = if looped {
                    Node::bare(Value::Seq(items))
                } else {
                    items
                        .into_iter()
                        .next()
                        .unwrap_or_else(|| Node::bare(Value::Map(Mapping::new())))
                };
                (input.host.clone(), node)
            })
            .collect()
    };
    TaskParams {
        shown,
        shared,
        hosts: inputs.iter().map(|i| i.host.clone()).collect(),
        sealed_hosts,
        per_host,
    }
}

/// `no_log` on the task or its parents, for any host (a template is rendered per host; any
/// true one masks the task's input for all, the safer reading).
fn task_no_log(run: &TaskRun<'_>, hosts: &[&String]) -> bool {
    let reading = &run.reading;
    let Some(node) = reading.ctx.inherited(Keyword::NoLog) else {
        return reading.no_log_default;
    };
    hosts.iter().any(|host| {
        let Some(scope) = reading.scope(host) else { return true };
        reading.templar.render(node, &scope).map(|r| r.value.value.is_truthy()).unwrap_or(true)
    })
}

/// Whether `host` receives input in `scope`: its `when` holds (an unknown verdict is a
/// plan's, which defers the task: no input); `None` when the `when` fails (the run reports
/// it).
fn receives(run: &TaskRun<'_>, scope: &tack_template::Scope) -> Option<bool> {
    match crate::task::when::evaluate(run.reading.ctx, run.reading.templar, scope) {
        When::Holds => Some(true),
        When::False(_) | When::Unknown(_) => Some(false),
        When::Failed(_) => None,
    }
}

/// The host's input, or `None` when it receives none (its `when` is false, its loop or
/// arguments fail to render: the run reports that failure itself). Each render is kept for
/// the host's run (unless it delegates, and so renders in another scope).
fn host_input(run: &TaskRun<'_>, host: &str) -> Option<HostInput> {
    let reading = &run.reading;
    let scope = reading.scope(host)?;
    let keep = reading.ctx.delegate_to().is_none();
    let versions = &reading.vars.versions;
    let render = |scope: &tack_template::Scope| {
        crate::task::args::render(reading.ctx, run.action, reading.templar, scope)
    };
    let mut items = Vec::new();
    match &reading.ctx.task.loop_items {
        None => {
            if !receives(run, &scope)? {
                return None;
            }
            let shown = |r: &RenderedArgs| (r.args.clone(), r.sealed.clone());
            let (args, mut sealed) =
                run.renders.read(versions, (host, None), keep, || render(&scope), shown).ok()?;
            remember_sealed(run, &scope, &args, &mut sealed);
            items.push((args, sealed));
        }
        Some(source) => {
            let (list, read) = crate::task::items::items(reading, source, &scope).ok()?;
            let control = LoopControl::read(reading, &scope).ok()?;
            for index in 0..list.len() {
                let item_scope = control.item_scope(&scope, &list, index, &read, &Vec::new());
                if !receives(run, &item_scope)? {
                    continue;
                }
                let shown = |r: &RenderedArgs| (r.args.clone(), r.sealed.clone());
                let key = (host, Some(index));
                let (args, mut sealed) =
                    run.renders.read(versions, key, keep, || render(&item_scope), shown).ok()?;
                // Items of a sealed loop source are secrets whole.
                if read.is_sealed() {
                    if let Some(item) = list.get(index) {
                        remember_texts(item);
                    }
                    sealed = args.keys().filter_map(|k| k.as_str()).map(String::from).collect();
                }
                remember_sealed(run, &item_scope, &args, &mut sealed);
                items.push((args, sealed));
            }
        }
    }
    Some(HostInput { host: host.to_string(), items })
}

/// Marks what the shown views must treat as secret beyond the arguments' own names, and
/// remembers the secret texts this input made (`tack_vault::sealed`), so that whatever
/// prints or reads them later is masked and sealed too: each sealed argument's text (for an
/// argument written as a mapping or list, only the parts whose own render read a secret),
/// and the environment values that read one (the host then counts as sealed: its output
/// may hold what the environment gave it).
fn remember_sealed(
    run: &TaskRun<'_>,
    scope: &tack_template::Scope,
    args: &Mapping,
    sealed: &mut Vec<String>,
) {
    let reading = &run.reading;
    for name in sealed.iter() {
        let Some(rendered) = args.get(name) else { continue };
        match reading.ctx.task.args.get(name) {
            Some(source) if matches!(source.value, Value::Map(_) | Value::Seq(_)) => {
                remember_sealed_parts(reading.templar, scope, source);
            }
            _ => remember_texts(rendered),
        }
    }
    let environment = crate::task::environment::sealed_values(reading.ctx, reading.templar, scope);
    if !environment.is_empty() {
        environment.iter().for_each(remember_texts);
        sealed.push(ENVIRONMENT.to_string());
    }
}

/// Not an argument: the name under which a host's sealed environment is counted.
const ENVIRONMENT: &str = "<environment>";

fn remember_sealed_parts(
    templar: &tack_template::Templar,
    scope: &tack_template::Scope,
    source: &Node,
) {
    match &source.value {
        Value::Map(map) => map.iter().for_each(|(_, v)| remember_sealed_parts(templar, scope, v)),
        Value::Seq(items) => items.iter().for_each(|v| remember_sealed_parts(templar, scope, v)),
        Value::Str(text) if tack_template::is_possibly_template(text) => {
            if let Ok(r) = templar.render(source, scope)
                && r.provenance.is_sealed()
            {
                remember_texts(&r.value);
            }
        }
        _ => {}
    }
}

/// Remembers every string in `node` as a secret.
fn remember_texts(node: &Node) {
    match &node.value {
        Value::Str(text) => tack_vault::sealed::remember(text),
        Value::Seq(items) => items.iter().for_each(remember_texts),
        Value::Map(map) => map.iter().for_each(|(_, v)| remember_texts(v)),
        _ => {}
    }
}
