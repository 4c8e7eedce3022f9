//! Strategy plugins that are not ansible-core's: what one is made of, asked of ansible-core's
//! own plugin loader on the controller.
//!
//! tack runs plays with its own `linear`, `free` and `host_pinned` strategies; it cannot run a
//! strategy written in Python. A plugin that only names one of those (a class that inherits
//! ansible's `StrategyModule` and defines nothing of its own, as collections ship to give a
//! strategy a name of theirs) behaves as that strategy, and runs as tack's. Anything that
//! defines a method or attribute of its own is reported with what it defines, for the caller
//! to refuse by name.
//!
//! Owns the question and its answer only; which plays run with the answer is the engine's.

use std::path::PathBuf;

/// Where ansible's loader looks for the plugin.
#[derive(Debug, Clone, Default)]
pub struct StrategySearch {
    /// The playbook and role directories: their `strategy_plugins/` is searched as ansible
    /// adds them (`add_all_plugin_dirs`). The `strategy_plugins` setting's directories are
    /// ansible's loader's own (it reads the configuration).
    pub dirs: Vec<PathBuf>,
    /// The collection roots (`collections_path`, adjacent `collections/`).
    pub collections: Vec<PathBuf>,
    pub config_file: Option<PathBuf>,
}

/// What the plugin a strategy name names is, for tack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StrategyPlugin {
    /// It only inherits ansible-core's strategy of this name (`linear`, `free`,
    /// `host_pinned`).
    Inherits(String),
    /// It has code of its own, or is based on something else: why, in a clause.
    Own(String),
    /// ansible's loader finds no plugin of that name.
    Missing,
}

/// Asks ansible-core (the run's interpreter) what the strategy plugin `name` is. `Err` says
/// why it could not be asked or loaded.
pub fn inspect(name: &str, search: &StrategySearch) -> Result<StrategyPlugin, String> {
    let Some(core) = crate::python_path::core() else {
        return Err(crate::python_path::why_not());
    };
    let request = serde_json::json!({
        "name": name,
        "dirs": search.dirs,
        "collections": search.collections,
    });
    let mut command =
        crate::python_path::worker_command(&core.python, SCRIPT, search.config_file.as_deref());
    command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child =
        command.spawn().map_err(|e| format!("could not start {}: {e}", core.python.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin
            .write_all(request.to_string().as_bytes())
            .map_err(|e| format!("could not ask {}: {e}", core.python.display()))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("could not read {}: {e}", core.python.display()))?;
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|_| {
        let stderr = String::from_utf8_lossy(&output.stderr);
        format!("ansible-core's loader did not answer: {}", stderr.trim())
    })?;
    let text = |key: &str| answer.get(key).and_then(|v| v.as_str()).map(str::to_string);
    if let Some(error) = text("error") {
        return Err(error);
    }
    if let Some(base) = text("base") {
        return Ok(StrategyPlugin::Inherits(base));
    }
    if let Some(own) = text("own") {
        return Ok(StrategyPlugin::Own(own));
    }
    Ok(StrategyPlugin::Missing)
}

/// Loads the class (`class_only`: nothing runs, and the loader's deprecation for a strategy
/// not in ansible.builtin is the run's to say) and walks its MRO to ansible's own strategy.
const SCRIPT: &str = r#"
import json
import sys

request = json.loads(sys.stdin.read())


def answer(**kwargs):
    sys.stdout.write(json.dumps(kwargs))
    sys.exit(0)


try:
    from ansible.plugins.loader import add_all_plugin_dirs, init_plugin_loader, strategy_loader

    init_plugin_loader(request["collections"] or None)
    for directory in request["dirs"]:
        add_all_plugin_dirs(directory)
    from ansible.plugins.strategy import free, host_pinned, linear

    builtin = {linear.StrategyModule: "linear", free.StrategyModule: "free",
               host_pinned.StrategyModule: "host_pinned"}
    found = strategy_loader.get_with_context(request["name"], class_only=True).object
except Exception as ex:
    answer(error="%s: %s" % (type(ex).__name__, ex))
if found is None:
    answer(missing=True)
# What Python gives every class, and what ansible's loader sets on the class it loads.
plain = {"__module__", "__doc__", "__qualname__", "__firstlineno__", "__static_attributes__",
         "__dict__", "__weakref__", "__annotations__", "_load_name", "_original_path",
         "_redirected_names", "ansible_aliases", "ansible_name"}
for klass in found.__mro__:
    if klass in builtin:
        answer(base=builtin[klass])
    own = sorted(set(vars(klass)) - plain)
    if own:
        answer(own="its class %s defines %s" % (klass.__qualname__, ", ".join(own)))
answer(own="it is not based on ansible-core's linear, free or host_pinned strategy")
"#;
