//! The run's strategy plugins that are not ansible-core's (`tack_actions::python_strategy`):
//! the `strategy` setting's and each play's literal `strategy:` that tack has no strategy of
//! that name for. Those that only inherit ansible-core's `linear`, `free` or `host_pinned`
//! run as tack's own (the engine deprecates them as ansible's loader does); the others stay
//! unknown to the engine, which refuses them by name before anything runs.

use std::path::PathBuf;

use tack_actions::python_strategy::{StrategyPlugin, StrategySearch, inspect};
use tack_config::Config;
use tack_engine::ExternalStrategy;
use tack_playbook::Loader;
use tack_playbook::tables::Keyword;

/// ansible-core's own strategies, by every name ansible gives them: tack runs them, or
/// refuses `debug` by name, without asking.
fn builtin(name: &str) -> bool {
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    matches!(short, "linear" | "free" | "host_pinned" | "debug")
}

/// The names the run may load a strategy plugin by: the setting's, and each play's own
/// when it is written out (a templated one is known only as the play runs, and refused then).
fn names(config: &Config, playbooks: &[tack_playbook::Playbook]) -> Vec<String> {
    let mut names: Vec<String> = config.strategy().map(str::to_string).into_iter().collect();
    for play in playbooks.iter().flat_map(|p| &p.plays) {
        if let Some(node) = play.attrs.get(Keyword::Strategy) {
            let name = tack_yaml::pyrepr::str(&node.value);
            if !name.contains("{{") && !name.contains("{%") {
                names.push(name);
            }
        }
    }
    names.retain(|n| !builtin(n));
    names.sort();
    names.dedup();
    names
}

/// The strategy plugins the run names, each with what tack runs it as, or why it cannot.
pub(crate) fn external(
    config: &Config,
    loader: &Loader<'_>,
    playbooks: &[tack_playbook::Playbook],
) -> Vec<ExternalStrategy> {
    let names = names(config, playbooks);
    if names.is_empty() {
        return Vec::new();
    }
    let search = StrategySearch {
        dirs: loader.plugin_dirs(),
        collections: loader.collection_roots().named().to_vec(),
        config_file: config.config_file().map(PathBuf::from),
    };
    // A plugin that inherits nothing tack has, or cannot be asked about, is refused by the
    // engine with why, where a play would run with it.
    names
        .into_iter()
        .map(|name| {
            let runs_as = match inspect(&name, &search) {
                Ok(StrategyPlugin::Inherits(base)) => Ok(base),
                Ok(StrategyPlugin::Own(why)) => Err(format!(
                    "a strategy written in Python: {why}; tack runs only the plugins that \
                     inherit ansible-core's linear, free or host_pinned and change nothing"
                )),
                // ansible's own error comes where the play loads it, as the engine's refusal.
                Ok(StrategyPlugin::Missing) => Err("no such strategy plugin was found".into()),
                Err(why) => Err(format!("could not ask ansible-core about it: {why}")),
            };
            ExternalStrategy { name, runs_as }
        })
        .collect()
}
