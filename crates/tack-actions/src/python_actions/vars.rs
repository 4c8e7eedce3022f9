//! The task's variables as an action plugin reads them (`task_vars`): as they were loaded,
//! templates inside not rendered (ansible hands its plugins the same), vaulted values
//! decrypted as ansible's encrypted strings are when read.

use serde_json::{Value as Json, json};
use tack_template::{Scope, Templar};

use crate::python_plugins::to_wire;

pub(super) struct ScopeVars<'a> {
    pub(super) scope: &'a Scope,
    pub(super) templar: &'a Templar,
}

impl ScopeVars<'_> {
    pub(super) fn names(&self) -> Vec<String> {
        self.scope.names().into_iter().map(str::to_string).collect()
    }

    /// The answer to the worker's `var` request.
    pub(super) fn answer(&self, name: Option<&str>) -> Json {
        let Some(binding) = name.and_then(|n| self.scope.get(n)) else {
            return json!({ "op": "value", "missing": true });
        };
        match tack_template::value::decrypted_as_loaded(
            self.templar,
            self.scope,
            &binding.node().value,
        ) {
            Ok(value) => json!({ "op": "value", "value": to_wire(&value) }),
            Err(why) => json!({ "op": "value", "error": why }),
        }
    }
}
