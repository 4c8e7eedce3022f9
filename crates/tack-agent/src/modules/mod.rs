//! The registry of native modules and the one entry point the controller and the agent call.

use serde_json::{Map, Value};

pub mod setup;

/// A module's result dictionary, as ansible's module would print it.
pub type ModuleResult = Map<String, Value>;

/// One module run: its arguments (already rendered on the controller) and the run's modes.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    pub args: Map<String, Value>,
    /// `--check` / `check_mode: true`: report what would change, change nothing.
    pub check_mode: bool,
    /// `--diff` / `diff: true`: include `diff` in the result where the module supports it.
    pub diff: bool,
}

/// Runs the native module `name` (short name, `ansible.builtin.` or `ansible.legacy.`
/// spelling). `None` when tack has no native module of that name.
pub fn run_module(name: &str, invocation: &Invocation) -> Option<ModuleResult> {
    let short = name
        .strip_prefix("ansible.builtin.")
        .or_else(|| name.strip_prefix("ansible.legacy."))
        .unwrap_or(name);
    match short {
        "setup" => Some(setup::run(invocation)),
        _ => None,
    }
}

/// Whether tack has a native module called `name`.
pub fn is_native(name: &str) -> bool {
    let short = name
        .strip_prefix("ansible.builtin.")
        .or_else(|| name.strip_prefix("ansible.legacy."))
        .unwrap_or(name);
    NATIVE.contains(&short)
}

/// Every native module, by short name. A module is added here in the same change that
/// registers it in [`run_module`].
const NATIVE: &[&str] = &["setup"];
