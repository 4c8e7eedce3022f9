//! The implicit `Gathering Facts` task of a play: `setup` on every host, the facts kept for
//! the rest of the run, the result hidden from `-v` dumps as ansible hides it.

use std::collections::BTreeMap;

use tack_diag::Diagnostic;
use tack_playbook::tables::Keyword;
use tack_yaml::{Mapping, Node, Value};

use tack_links::link_target::LinkTarget;
use tack_links::{Connection, ConnectionError, Reach, Trace, Traced};

use crate::play::batch::BatchState;
use crate::play::cursor::HostCursor;
use crate::play::env::PlayEnv;

/// A host's link for gathering and the connection it is, or why there is none (a refused
/// setting, a failed open).
type Link = Result<(std::sync::Arc<dyn Connection>, Reach), String>;
use tack_report::callback::{Callback, Stats, TaskView};
use tack_report::result::s;

/// One host's `setup` result, as the strategy then shows and applies it.
#[derive(Clone)]
pub(crate) struct Gathered {
    pub shown: tack_report::result::HostResult,
    /// The lines about reaching the host, each with the `-v` count it shows from (see
    /// `tack_links::trace`).
    pub transport: Vec<(u8, String)>,
    /// What it gathered, as the module returned it (with gathering's mark).
    pub facts: Option<Mapping>,
}

pub(crate) fn gather_view(play: &tack_playbook::Play, check_flag: bool) -> TaskView {
    TaskView {
        name: "Gathering Facts".into(),
        action: "gather_facts".into(),
        looped: false,
        origin: play.origin.clone(),
        check_mode: play_check_mode(play, check_flag),
    }
}

/// A play's `check_mode` as loaded, else `check_flag` (`--check`): what its banner and its
/// implicit tasks' banners mark.
pub(crate) fn play_check_mode(play: &tack_playbook::Play, check_flag: bool) -> bool {
    play.attrs
        .get(tack_playbook::tables::Keyword::CheckMode)
        .map_or(check_flag, |node| node.value.is_truthy())
}

/// The implicit `Gathering Facts` task: the `setup` module on every host, its facts kept for
/// the rest of the run.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_facts(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    keywords: &tack_playbook::post_validate::PlayKeywords,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    cursors: &mut [(String, HostCursor)],
) -> Result<(), Diagnostic> {
    let view = gather_view(env.play(), env.check_flag());
    let hosts: Vec<String> =
        cursors.iter().map(|(h, _)| h.clone()).filter(|h| gathers_on(env, h)).collect();
    for host in &hosts {
        refuse_facts_modules(env, host)?;
        if not_gathering(env, host).is_none() {
            refuse_module_debugging(env, host)?;
        }
    }
    // Under `smart`, hosts that gathered already are given no task: when none is left, the
    // task has no banner either.
    if hosts.is_empty() && !cursors.is_empty() {
        return Ok(());
    }
    if !hosts.is_empty() {
        env.reads.show(callback);
    }
    callback.task_start(&view);
    callback.task_hosts(hosts.len());
    let width = crate::play::forks::width(env.run.facts.forks, 0, hosts.len());
    let origin = env.play().origin.clone();
    // Worked out here: the threads that gather cannot reach the play's state.
    let addresses: BTreeMap<String, String> =
        hosts.iter().map(|h| (h.clone(), gather_address(env, h))).collect();
    let links: BTreeMap<String, Link> =
        hosts.iter().map(|h| (h.clone(), gather_link(env, keywords, h))).collect();
    let interpreters: BTreeMap<String, Interpreter> =
        hosts.iter().map(|h| (h.clone(), interpreter_for(env, h))).collect();
    let environments: BTreeMap<String, Environment> =
        hosts.iter().map(|h| (h.clone(), environment_for(env, h))).collect();
    let skips: BTreeMap<String, Gathered> =
        hosts.iter().filter_map(|h| not_gathering(env, h).map(|g| (h.clone(), g))).collect();
    let ahead = hosts
        .iter()
        .map(|h| {
            let link = links.get(h).and_then(|l| l.as_ref().ok()).map(|(l, _)| l);
            link.filter(|l| !l.is_open()).cloned()
        })
        .collect();
    tack_links::pool::opening_ahead(ahead, width, || {
        crate::play::forks::run_hosts(
            &hosts,
            width,
            |host| {
                if let Some(skipped) = skips.get(host) {
                    return skipped.clone();
                }
                let address = addresses.get(host).map_or(host, String::as_str);
                let link = links.get(host).cloned().unwrap_or_else(|| Err(String::new()));
                let interpreter = interpreters.get(host).cloned().unwrap_or(Interpreter::Set(None));
                let environment =
                    environments.get(host).cloned().unwrap_or_else(|| Ok(Default::default()));
                let asked = (interpreter, environment);
                gather_on(keywords, host, address, origin.clone(), link, asked)
            },
            |host, note| {
                let gathered = match note {
                    crate::play::forks::Note::Done(gathered) => gathered,
                    crate::play::forks::Note::Start => {
                        callback.host_start(&view, host, false);
                        return Ok(());
                    }
                    crate::play::forks::Note::Line(()) => return Ok(()),
                };
                env.reads.before_result(&hosts, host, callback);
                if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) {
                    apply_gathered(env, state, gathered, cursor, stats, callback);
                }
                Ok(())
            },
        )
    })?;
    env.update_play_hosts(state, cursors);
    Ok(())
}

/// Whether the implicit gathering runs on `host` once the play gathers at all: always, but
/// under `gathering = smart` for a host whose facts were gathered already (this run, or
/// read from the fact cache).
pub(crate) fn gathers_on(env: &PlayEnv<'_, '_>, host: &str) -> bool {
    env.run.facts.gathering != crate::context::Gathering::Smart || !env.scope.facts_gathered(host)
}

/// `ansible_facts_modules` set for `host` to anything but `setup`: ansible would gather with
/// those modules, which tack's gathering does not run (the setting of the same name is
/// refused before the run).
fn refuse_facts_modules(env: &PlayEnv<'_, '_>, host: &str) -> Result<(), Diagnostic> {
    let Some(scope) = env.scope.host_scope(host) else { return Ok(()) };
    match tack_actions::gather_facts::other_facts_modules(env.run.templar, &scope) {
        Ok(None) => Ok(()),
        Ok(Some((other, origin))) => Err(Diagnostic::at(
            tack_actions::gather_facts::facts_modules_refusal(&other, host),
            origin,
        )),
        Err(e) => Err(e.to_diagnostic()),
    }
}

/// `keep_remote_files` or an AnsiballZ extension setting for `host`: ansible would keep or
/// debug its `setup` module's file, which tack's gathering does not have.
fn refuse_module_debugging(env: &PlayEnv<'_, '_>, host: &str) -> Result<(), Diagnostic> {
    let Some(scope) = env.scope.host_scope(host) else { return Ok(()) };
    match tack_actions::python_path::debugging::gathering_refusal(env.run.templar, &scope) {
        Some(refusal) => Err(Diagnostic::at(refusal, env.play().origin.clone())),
        None => Ok(()),
    }
}

/// Whether `host` gathers with other fact modules than `setup` (`ansible_facts_modules`).
pub(crate) fn asks_other_fact_modules(
    scope: &std::sync::Arc<crate::vars::PlayScope>,
    templar: &tack_template::Templar,
    host: &str,
) -> bool {
    scope.host_scope(host).is_some_and(|scope| {
        !matches!(tack_actions::gather_facts::other_facts_modules(templar, &scope), Ok(None))
    })
}

/// Runs `setup` on `host`.
pub(crate) fn gather_one(
    env: &PlayEnv<'_, '_>,
    keywords: &tack_playbook::post_validate::PlayKeywords,
    host: &str,
) -> Result<Gathered, Diagnostic> {
    refuse_facts_modules(env, host)?;
    let link = gather_link(env, keywords, host);
    if let Some(skipped) = not_gathering(env, host) {
        return Ok(skipped);
    }
    refuse_module_debugging(env, host)?;
    let asked = (interpreter_for(env, host), environment_for(env, host));
    let origin = env.play().origin.clone();
    Ok(gather_on(keywords, host, &gather_address(env, host), origin, link, asked))
}

/// The `-vvv` address of the fact-gathering task on `host`, in its play scope.
fn gather_address(env: &PlayEnv<'_, '_>, host: &str) -> String {
    match env.scope.host_scope(host) {
        Some(scope) => crate::verbose::address_in(env.run.templar, env.live, host, &scope),
        None => host.to_string(),
    }
}

/// What gathering does about `host`'s Python interpreter (see `tack_links::interpreter`).
fn interpreter_for(env: &PlayEnv<'_, '_>, host: &str) -> Interpreter {
    let Some(scope) = env.scope.host_scope(host) else { return Interpreter::Set(None) };
    let settings =
        tack_links::interpreter::for_host(env.run.templar, &scope, &env.run.facts.interpreter);
    if !settings.discovers() {
        let named =
            tack_links::interpreter::named(env.run.templar, &scope, &env.run.facts.interpreter);
        return Interpreter::Set(named);
    }
    match tack_links::interpreter::known(&scope) {
        Some(known) => Interpreter::Known(known),
        None => Interpreter::Discover(tack_links::interpreter::names(&scope, &settings), settings),
    }
}

/// What stands in for gathering on `host` when the `when` of the `import_playbook` that
/// brought the play in does not hold there (ansible gives the implicit task that `when`): its
/// skip, or the failure of a condition that cannot be evaluated.
fn not_gathering(env: &PlayEnv<'_, '_>, host: &str) -> Option<Gathered> {
    let when = env.play().included_conditional.as_ref()?;
    let scope = env.scope.host_scope(host)?;
    let conditions: Vec<&Node> = match &when.value {
        Value::Seq(items) => items.iter().collect(),
        _ => vec![when],
    };
    let origin = env.play().origin.clone();
    let verdict =
        crate::task::when::evaluate_conditions(&conditions, env.run.templar, &scope, origin);
    let shown = match verdict.false_condition() {
        Ok(None) => return None,
        Ok(Some(condition)) => tack_report::result::skipped(host, &condition),
        Err(error) => {
            let mut data = Mapping::new();
            data.insert(s("failed"), tack_report::result::b(true));
            data.insert(s("msg"), s(&error.brief()));
            let mut shown = tack_report::result::HostResult::new(host, data);
            shown.error = Some(error);
            shown
        }
    };
    Some(Gathered { shown, transport: Vec::new(), facts: None })
}

/// The play's `environment` for `host`'s gathering, rendered in its play scope (`Err`: why
/// it could not be).
///
/// With it, the play's `module_defaults` for `setup` (the default arguments of the
/// `gather_facts` task ansible makes, then the `setup` ones its action applies, each a
/// group's first), rendered the same way: what the play's keywords do not give.
type Environment = Result<(std::collections::BTreeMap<String, String>, DefaultArgs), String>;

/// `setup`'s default arguments (JSON, as the module is handed them).
type DefaultArgs = serde_json::Map<String, serde_json::Value>;

fn environment_for(env: &PlayEnv<'_, '_>, host: &str) -> Environment {
    let Some(scope) = env.scope.host_scope(host) else { return Ok(Default::default()) };
    let environment = match env.play().attrs.get(Keyword::Environment) {
        Some(node) => crate::task::environment::render_layers(&[node], env.run.templar, &scope)
            .map_err(|d| d.brief())?,
        None => Default::default(),
    };
    Ok((environment, default_args(env, &scope)?))
}

fn default_args(
    env: &PlayEnv<'_, '_>,
    scope: &tack_template::Scope,
) -> Result<DefaultArgs, String> {
    let play = env.play();
    let mappings: Vec<&Mapping> = match play.attrs.get(Keyword::ModuleDefaults).map(|n| &n.value) {
        Some(tack_yaml::Value::Seq(items)) => items.iter().filter_map(Node::as_map).collect(),
        Some(tack_yaml::Value::Map(map)) => vec![map],
        _ => return Ok(DefaultArgs::new()),
    };
    let templar = env.run.templar;
    let mut out = DefaultArgs::new();
    // The task's own defaults win over those its action adds for `setup`.
    for fqcn in ["ansible.builtin.setup", "ansible.builtin.gather_facts"] {
        let nodes =
            crate::task::module_defaults::defaults_in(&mappings, Some(&play.action_groups), fqcn);
        let merged = crate::task::module_defaults::merge_defaults(nodes, templar, scope)
            .map_err(|d| d.brief())?;
        let rendered = templar
            .render(&Node::bare(tack_yaml::Value::Map(merged)), scope)
            .map_err(|e| e.to_diagnostic().brief())?;
        if let serde_json::Value::Object(map) = tack_actions::json::to_json(&rendered.value) {
            out.extend(map);
        }
    }
    out.remove("parallel");
    out.retain(|_, v| !v.is_null());
    Ok(out)
}

/// The link `setup` takes to `host`: its play scope's connection settings under the
/// play's keywords.
fn gather_link(
    env: &PlayEnv<'_, '_>,
    keywords: &tack_playbook::post_validate::PlayKeywords,
    host: &str,
) -> Link {
    let Some(scope) = env.scope.host_scope(host) else {
        let local = env.run.links.get(&LinkTarget::Local, None);
        return local.map(|l| (l, Reach::Local)).map_err(|e| e.to_string());
    };
    let vars = |name: &str| scope.get_own(name).map(|b| b.node().clone());
    // `connection`, `port` and `remote_user` are not post-validated with the play (ansible
    // templates them when the connection is made): read as written.
    let play = env.play();
    let keyword = |k| keywords.get(k).or_else(|| play.attrs.get(k)).cloned();
    let origin = play.origin.clone();
    let target = tack_links::link_target::resolve(
        env.run.templar,
        &scope,
        &vars,
        &keyword,
        host,
        origin.clone(),
        &env.run.facts.ssh,
    )
    .map_err(|d| d.brief())?;
    // The become keywords are not post-validated with the play: read as written.
    let become_keyword = |k| keywords.get(k).or_else(|| play.attrs.get(k)).cloned();
    let escalation = tack_links::become_::resolve(
        env.run.templar,
        &scope,
        &vars,
        &become_keyword,
        &target,
        origin,
        &env.run.facts.ssh.become_,
    )
    .map_err(|d| d.brief())?;
    let link = env.run.links.get(&target, escalation.as_ref()).map_err(|e| e.to_string())?;
    Ok((link, target.reach()))
}

/// The implicit task's result when its link failed: unreachable, or failed at the play;
/// ansible places an unreachable host's error nowhere (the implicit task's connection fails
/// before it has a place).
fn link_failed(
    host: &str,
    why: &str,
    unreachable: bool,
    origin: Option<tack_diag::Origin>,
) -> tack_report::result::HostResult {
    let msg = format!("Task failed: {why}");
    let mut data = Mapping::new();
    data.insert(s("changed"), tack_report::result::b(false));
    data.insert(s("msg"), s(&msg));
    data.insert(
        s(if unreachable { "unreachable" } else { "failed" }),
        tack_report::result::b(true),
    );
    let mut shown = tack_report::result::HostResult::new(host, data);
    shown.error = Some(Diagnostic::at(msg, if unreachable { None } else { origin }));
    shown
}

/// Keeps a host's gathered facts (or fails it) and shows its result.
pub(crate) fn apply_gathered(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    mut gathered: Gathered,
    cursor: &mut HostCursor,
    stats: &mut Stats,
    callback: &mut dyn Callback,
) {
    let host = gathered.shown.host.clone();
    for (level, line) in &gathered.transport {
        callback.verbose_line(*level, line);
    }
    // The play's `ignore_unreachable` keeps an unreachable host in it, as its other tasks.
    if gathered.shown.flag("unreachable")
        && play_flag(env, &host, tack_playbook::tables::Keyword::IgnoreUnreachable)
    {
        gathered.shown.ignore_unreachable = true;
    }
    // The implicit task's parent is the play: a play's `ignore_errors` ignores its failure.
    let failed = !gathered.shown.lost() && gathered.shown.flag("failed");
    if failed && play_flag(env, &host, tack_playbook::tables::Keyword::IgnoreErrors) {
        gathered.shown.ignored = true;
    }
    stats.count(&gathered.shown, false);
    if gathered.shown.lost() {
        cursor.pos = None;
        state.lost.insert(host.clone());
    } else if failed {
        // An ignored failure leaves the host in the play, without facts.
        if !gathered.shown.ignored {
            cursor.pos = None;
            cursor.failed = true;
        }
    } else if let Some(facts) = gathered.facts {
        env.scope.merge_module_facts(&host, &facts);
    }
    callback.host_result(&gather_view(env.play(), env.check_flag()), &gathered.shown);
}

/// The play's `ignore_errors` or `ignore_unreachable`, rendered with `host`'s variables.
fn play_flag(env: &PlayEnv<'_, '_>, host: &str, keyword: tack_playbook::tables::Keyword) -> bool {
    let Some(node) = env.play().attrs.get(keyword) else {
        return false;
    };
    let Some(scope) = env.scope.host_scope(host) else { return false };
    env.run.templar.render(node, &scope).is_ok_and(|r| r.value.value.is_truthy())
}

/// What gathering does about a host's Python interpreter: nothing (one is set, or the
/// configuration names one), keep the one its facts hold (the gathered facts replace them),
/// or discover one first with these names.
#[derive(Clone)]
enum Interpreter {
    /// Named by the host's variable or the configuration (the path; `None` when the run has
    /// no configuration of it).
    Set(Option<String>),
    Known(Node),
    /// The names to try, and the host's settings (its own `ansible_python_interpreter` mode).
    Discover(Vec<String>, tack_links::interpreter::InterpreterSettings),
}

/// The interpreter gathering ended with: none asked, the one the facts held, or the one
/// discovery found (with its warnings).
enum Found {
    Nothing,
    Known(Node),
    Discovered(tack_links::interpreter::Discovery),
}

/// Runs `setup` on `host`; a failure is placed at the play (`origin`), as ansible places the
/// implicit task's.
fn gather_on(
    keywords: &tack_playbook::post_validate::PlayKeywords,
    host: &str,
    address: &str,
    origin: Option<tack_diag::Origin>,
    link: Link,
    (interpreter, environment): (Interpreter, Environment),
) -> Gathered {
    let trace = Trace::new();
    let (link, (environment, defaults)) = match environment {
        Ok(prepared) => (link, prepared),
        Err(why) => (Err(why), Default::default()),
    };
    // (unreachable, why) when the host cannot be asked.
    let connected = link.map_err(|why| (false, why)).and_then(|(link, reach)| {
        let link: std::sync::Arc<dyn Connection> =
            std::sync::Arc::new(Traced::new(link, reach, &trace));
        match link.connect() {
            Ok(()) => Ok(link),
            Err(e) => Err((matches!(e, ConnectionError::Unreachable { .. }), e.to_string())),
        }
    });
    // What the connection said while it opened (a retried ssh), whether it opened or not.
    let said = trace.drain_lines(address);
    let link = match connected {
        Ok(link) => link,
        Err((unreachable, why)) => {
            let shown = link_failed(host, &why, unreachable, origin);
            return Gathered { shown, transport: said, facts: None };
        }
    };
    let mut args = serde_json::Map::new();
    for (keyword, arg) in [
        (Keyword::GatherSubset, "gather_subset"),
        (Keyword::GatherTimeout, "gather_timeout"),
        (Keyword::FactPath, "fact_path"),
    ] {
        if let Some(value) = keywords.get(keyword) {
            args.insert(arg.to_string(), tack_actions::json::to_json(value));
        }
    }
    for (arg, value) in defaults {
        args.entry(arg).or_insert(value);
    }
    let (interpreter, python) = match interpreter {
        Interpreter::Set(python) => (Found::Nothing, python),
        Interpreter::Known(node) => {
            let python = node.as_str().map(str::to_string);
            (Found::Known(node), python)
        }
        Interpreter::Discover(names, own) => {
            let found =
                tack_links::interpreter::discover(link.as_ref(), &trace, host, &own, &names);
            let python = Some(found.path.clone());
            (Found::Discovered(found), python)
        }
    };
    // The `python` facts are the interpreter's that runs the module in ansible (tack's own
    // setup asks it).
    if let Some(python) = &python {
        args.insert(
            "_ansible_python_interpreter".into(),
            serde_json::Value::String(python.clone()),
        );
    }
    let named = python;
    let invocation = tack_agent::Invocation {
        args,
        check_mode: false,
        diff: false,
        environment,
        ..Default::default()
    };
    // ansible's setup runs under the interpreter the host's variable (or the configuration)
    // names, so it fails where the host lacks it; tack's does the same, for the same result.
    let missing = match (&interpreter, &named) {
        (Found::Nothing, Some(python)) => {
            tack_actions::interpreter_check::missing_on(link.as_ref(), python)
        }
        _ => None,
    };
    let outcome = match missing {
        Some(failure) => Ok(tack_actions::json::map_to_json(&failure)),
        None => link.run_module("setup", &invocation),
    };
    let mut transport = said;
    transport.extend(trace.drain_lines(address));
    let mut result = match outcome {
        Ok(result) => tack_actions::json::map_from_json(&result),
        // A link that dies under the module (a connection plugin's transfer that fails)
        // makes the host unreachable, placed nowhere as when it could not connect.
        Err(e @ ConnectionError::Unreachable { .. }) => {
            let shown = link_failed(host, &e.to_string(), true, None);
            return Gathered { shown, transport, facts: None };
        }
        Err(e) => {
            let mut data = Mapping::new();
            data.insert(s("failed"), tack_report::result::b(true));
            data.insert(s("msg"), s(&e.to_string()));
            data
        }
    };
    if let Found::Discovered(found) = &interpreter {
        crate::task::add_warnings(&mut result, &found.warnings);
    }
    let mut shown = tack_report::result::HostResult::new(host, result.clone());
    shown.verbose_override = true;
    let mut facts = None;
    if shown.flag("failed") {
        // The play's gathering is ansible's `gather_facts` action, whose failure names the
        // fact modules that failed (the implicit task has no place of its own).
        let mut base = Mapping::new();
        base.insert(s("ansible_facts"), Node::bare(tack_yaml::Value::Map(Mapping::new())));
        base.insert(s("changed"), tack_report::result::b(false));
        let mut failed = Mapping::new();
        failed.insert(s("ansible.legacy.setup"), Node::bare(tack_yaml::Value::Map(result)));
        let out = tack_actions::gather_facts::failed_modules(base, failed, None);
        let mut failure = tack_report::result::HostResult::new(host, out.data);
        failure.verbose_override = true;
        failure.error = out.error;
        return Gathered { shown: failure, transport, facts: None };
    } else if let Some(found) = result.get("ansible_facts").and_then(Node::as_map) {
        // ansible's `gather_facts` action marks the facts it gathered.
        let mut found = found.clone();
        match interpreter {
            Found::Known(node) => {
                found.insert(s(tack_links::interpreter::FACT), node);
            }
            Found::Discovered(d) => {
                found.insert(s(tack_links::interpreter::FACT), s(&d.path));
            }
            Found::Nothing => {}
        }
        found.insert(s("_ansible_facts_gathered"), tack_report::result::b(true));
        facts = Some(found);
    }
    shown.data.remove("ansible_facts");
    Gathered { shown, transport, facts }
}
