//! `setup`: the facts ansible-core 2.21.5's setup module gathers on a Linux host, with its
//! `gather_subset`, `filter`, `gather_timeout` and `fact_path` arguments.
//!
//! Owns the whole module: argument checking (`args`), which collectors a subset selects
//! (`collectors`), and one file per family of facts (`system`, `managers`, `distribution`,
//! `hardware` and `storage`, `network`, `virt`, `local` with its INI reader `ini`). Facts are read from the host it runs on (`/proc`, `/sys`,
//! `/etc`, a few commands as ansible runs them) and never written; the only process it starts
//! besides those commands is `python3` once, for the python facts, and executable `.fact`
//! files under `fact_path`, as ansible does.
//!
//! Must not know the controller: the result is the task result ansible records
//! (`ansible_facts` with `ansible_`-prefixed keys, `changed: false`, `warnings`).

mod args;
mod collectors;
mod distribution;
mod hardware;
mod ini;
mod local;
mod managers;
mod network;
mod storage;
pub(crate) mod system;
#[cfg(test)]
mod units_tests;
mod util;
mod virt;

use serde_json::{Map, Value};

use super::{Invocation, ModuleResult};
pub use args::ArgError;

/// Collected facts (unprefixed names, as one collector returns them) plus the warnings the
/// module emits.
#[derive(Default)]
pub(crate) struct Gathered {
    /// Every fact collected so far, prefixed, as ansible passes them to later collectors.
    pub facts: Map<String, Value>,
    pub warnings: Vec<String>,
}

/// Runs `setup` with the invocation's arguments.
pub fn run(invocation: &Invocation) -> ModuleResult {
    let mut result = match gather(invocation) {
        Ok(result) => result,
        Err(err) => failure(&err.to_string()),
    };
    if invocation.args.get("_ansible_inject_invocation").and_then(Value::as_bool) == Some(true) {
        let mut wrapped = Map::new();
        wrapped.insert("module_args".into(), Value::Object(module_args(&invocation.args)));
        result.insert("invocation".into(), Value::Object(wrapped));
    }
    result
}

/// The options as `AnsibleModule` validated them (`invocation`): the defaults filled in,
/// what could not be converted as given.
fn module_args(given: &Map<String, Value>) -> Map<String, Value> {
    let mut out: Map<String, Value> = given
        .iter()
        .filter(|(k, _)| !k.starts_with("_ansible_"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let parsed = args::parse(given).ok();
    let strings = |list: &[String]| Value::Array(list.iter().cloned().map(Value::String).collect());
    let fields = [
        ("fact_path", parsed.as_ref().map(|p| Value::String(p.fact_path.clone()))),
        ("filter", parsed.as_ref().map(|p| strings(&p.filter))),
        ("gather_subset", parsed.as_ref().map(|p| strings(&p.gather_subset))),
        ("gather_timeout", parsed.as_ref().map(|p| Value::from(p.gather_timeout))),
    ];
    for (name, value) in fields {
        if let Some(value) = value {
            out.insert(name.into(), value);
        }
    }
    out
}

fn failure(msg: &str) -> ModuleResult {
    let mut result = Map::new();
    result.insert("failed".into(), Value::Bool(true));
    result.insert("msg".into(), Value::String(msg.into()));
    result.insert("changed".into(), Value::Bool(false));
    result
}

fn gather(invocation: &Invocation) -> Result<ModuleResult, ArgError> {
    let mut params = args::parse(&invocation.args)?;
    if params.gather_subset.is_empty() {
        params.gather_subset = vec!["all".to_string()];
    }
    let selected = collectors::select(&params.gather_subset)?;
    let mut state = Gathered::default();
    let mut out = Map::new();
    for name in selected {
        let facts = collectors::collect(name, &params, &mut state)?;
        for (key, value) in facts {
            let key = format!("ansible_{}", key.replace('-', "_"));
            state.facts.insert(key.clone(), value.clone());
            if matches(&key, &params.filter) {
                out.insert(key, value);
            }
        }
    }
    let meta = [
        (
            "gather_subset".to_string(),
            Value::Array(params.gather_subset.iter().map(|s| Value::String(s.clone())).collect()),
        ),
        ("module_setup".to_string(), Value::Bool(true)),
    ];
    for (key, value) in meta {
        if matches(&key, &params.filter) {
            out.insert(key, value);
        }
    }
    let mut result = Map::new();
    result.insert("ansible_facts".into(), Value::Object(out));
    result.insert("changed".into(), Value::Bool(false));
    if !state.warnings.is_empty() {
        let warnings = state.warnings.into_iter().map(Value::String).collect();
        result.insert("warnings".into(), Value::Array(warnings));
    }
    Ok(result)
}

/// ansible's filter: an empty list (or `*`) keeps everything; a pattern also matches with
/// `ansible_` put in front unless it already names a namespace.
pub(crate) fn matches(key: &str, filter: &[String]) -> bool {
    if filter.is_empty() || (filter.len() == 1 && filter[0] == "*") {
        return true;
    }
    filter.iter().any(|f| {
        f.is_empty()
            || util::fnmatch(key, f)
            || (!(f.starts_with("ansible_") || f.starts_with("facter") || f.starts_with("ohai"))
                && util::fnmatch(key, &format!("ansible_{f}")))
    })
}
