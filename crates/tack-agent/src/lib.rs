//! The agent side of tack: the native modules a managed host runs (`command`, `file`,
//! `setup`, ...), each taking ansible's module arguments and returning ansible's result
//! dictionary as JSON. The controller calls them in-process for local hosts; the agent binary
//! (issue 5) runs the same code on remote ones.
//!
//! This crate knows nothing of playbooks, templates or the controller: a module sees only its
//! arguments and the host it runs on, and its result is plain JSON. It must stay small enough
//! to build as a static binary.

pub mod modules;

pub use modules::{Invocation, ModuleResult, run_module};
