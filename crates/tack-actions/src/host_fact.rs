//! What the plugins that pick a module by the host's manager (`package`, `dnf`, `service`)
//! ask of it: the fact the host already has, or a `setup` filtered to that one fact, run for
//! the task alone (its answer is never kept as a fact).

use serde_json::{Map, Value as Json};
use tack_agent::{Invocation, ModuleResult};
use tack_yaml::Node;

use crate::input::ActionInput;
use tack_links::ConnectionError;

/// The host's `ansible_facts.<name>`, when it has one.
pub(super) fn known(input: &ActionInput<'_>, name: &str) -> Option<Node> {
    input.scope.get("ansible_facts").and_then(|b| b.node().as_map()?.get(name).cloned())
}

/// `setup` with `gather_subset: !all` and `filter: <fact>` on the task's link.
pub(super) fn ask(input: &ActionInput<'_>, fact: &str) -> Result<ModuleResult, ConnectionError> {
    let mut args = Map::new();
    args.insert("filter".into(), Json::String(fact.into()));
    args.insert("gather_subset".into(), Json::String("!all".into()));
    input.conn.run_module("setup", &Invocation { args, ..Default::default() })
}

/// The fact `fact` out of what [`ask`] answered.
pub(super) fn answered<'r>(answer: &'r ModuleResult, fact: &str) -> Option<&'r Json> {
    answer.get("ansible_facts").and_then(|f| f.get(fact))
}
