//! What the default callback adds at `-vvvv` (ansible's `display.vvvv` and
//! `verbosity > 3` lines): the note that the callback was loaded, and the command line's
//! arguments after each `PLAYBOOK:` banner. The command decides their text (it knows where
//! the callback comes from and what was typed); this module only holds it for the callback.
//!
//! The `-vvv` lines (inventory plugins, connections) are not the callback's: the command
//! prints the inventory's notes and the engine reports connections through
//! [`Callback::verbose_line`](super::Callback::verbose_line).

/// The `-vvvv` text the command gives the default callback.
#[derive(Debug, Clone, Default)]
pub struct VerboseExtras {
    /// Where the callback comes from, for `Loading callback plugin default of type stdout,
    /// v2.0 from ...` (ansible names its Python file; tack names its own binary).
    pub callback_origin: String,
    /// `Positional arguments: ...` and one `name: value` line per set option, in ansible's
    /// `CLIARGS` order.
    pub cli_args: Vec<String>,
}

impl VerboseExtras {
    /// `CallbackBase.__init__`'s note, shown once, before the callback loader's own.
    pub fn loaded_line(&self) -> String {
        format!(
            "Loading callback plugin default of type stdout, v2.0 from {}",
            self.callback_origin
        )
    }
}

/// `_dump_results` from `-vvv`, which keeps `diff` and `invocation` (only `failed`,
/// `skipped`, `exception`, `warnings` and `deprecations` are taken out before callbacks see
/// a result).
pub(crate) fn dump_keeping_diff(
    data: &tack_yaml::Mapping,
    options: tack_yaml::JsonOptions,
) -> String {
    let mut shown = data.clone();
    for key in ["failed", "skipped", "exception", "warnings", "deprecations"] {
        shown.remove(key);
    }
    tack_yaml::to_json(&tack_yaml::Node::bare(tack_yaml::Value::Map(shown)), &options)
        .unwrap_or_else(|e| format!("<<result not serialisable: {e}>>"))
}
