//! How a task's run reaches its host, and nothing of what it does there: which link a run
//! takes ([`link_target`]: the connection plugin and its settings from variables, keywords and
//! configuration, with ansible's precedence; [`become_`]: the become user and method), the
//! run's pool of open links ([`Links`], one per distinct target and become user, opened
//! through the binary's [`Opener`], and opened ahead of a task's later hosts), ansible's Python
//! interpreter discovery over a link ([`interpreter`]), and the `-vvv` record of what a run did
//! over its links ([`trace`]: [`Trace`] and the [`Traced`] decorator).
//!
//! The link types themselves are `tack_connect`'s, re-exported here. This crate never
//! interprets a module's result and never prints: it hands links to the actions and lines to
//! the run loop.

pub mod become_;
pub mod interpreter;
pub mod link_target;
pub mod pool;
pub mod trace;

pub use interpreter::InterpreterSettings;
pub use link_target::{
    LinkTarget, PluginDeprecation, PluginDescriber, PluginFacts, PluginOptions, PluginSettings,
    SshDefaults, SshSettings,
};
pub use pool::{Links, LocalOnly, Opener};
pub use tack_connect::{
    ChildAgent, Connection, ConnectionError, ExecOutput, InProcess, JobSpec, StagedFile,
};
pub use trace::{JobNote, Reach, Trace, Traced, Use};
