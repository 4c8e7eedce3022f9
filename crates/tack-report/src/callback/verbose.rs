//! What the default callback adds at `-vvvv` (ansible's `display.vvvv` and
//! `verbosity > 3` lines): the note that the callback was loaded, and the command line's
//! arguments after each `PLAYBOOK:` banner; at `-vvvvv`, the callback plugins the loader
//! tries. The command decides their text (it knows where
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
    /// At `-vvvvv`: the callback plugins ansible's loader tries after the stdout one, in its
    /// order (`Attempting to use 'NAME' callback.`); empty below.
    pub attempted_callbacks: Vec<String>,
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
