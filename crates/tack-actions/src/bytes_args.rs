//! `bytes` (a `!!binary` value) in a task's arguments: ansible's profile for module arguments
//! refuses them, so a task whose arguments go to a module fails before it runs, in ansible's
//! words where the task calls a module itself.

use crate::action::Action;
use crate::input::ActionInput;

/// Why the task's arguments cannot go to its module: a `bytes` value (a `!!binary` one) in
/// them, which ansible's profile for module arguments refuses. An action plugin run on the
/// controller reads its arguments itself (`copy` writes bytes `content` as they are); one
/// whose arguments go to a module of its own is refused by name, ansible's failure being
/// that module's serialization.
pub(crate) fn refused(action: Action, input: &ActionInput<'_>) -> Option<String> {
    let holding =
        |skip: &str| input.args.iter().any(|(k, v)| k.as_str() != Some(skip) && holds_bytes(v));
    match action {
        Action::Module(name) | Action::Python(name) => holding("").then(|| module_refusal(name)),
        Action::Library(module) => holding("").then(|| module_refusal(&module.name)),
        Action::Plugin(plugin) if plugin.touches_host => {
            let skip = if plugin.name == "copy" { "content" } else { "" };
            holding(skip).then(|| {
                format!(
                    "tack does not support bytes (a `!!binary` value) in the arguments of '{}': \
                     they go to a module, whose arguments cannot carry bytes",
                    plugin.name
                )
            })
        }
        _ => None,
    }
}

fn module_refusal(module: &str) -> String {
    format!(
        "Task failed: Failed to serialize arguments for the '{module}' module: Object of type \
         'bytes' is not JSON serializable by the 'module_legacy_c2m' profile."
    )
}

/// Whether `node` is or holds `bytes`.
fn holds_bytes(node: &tack_yaml::Node) -> bool {
    match &node.value {
        tack_yaml::Value::Bytes(_) => true,
        tack_yaml::Value::Seq(items) => items.iter().any(holds_bytes),
        tack_yaml::Value::Map(map) => map.iter().any(|(k, v)| holds_bytes(k) || holds_bytes(v)),
        _ => false,
    }
}
