//! The agent side of tack: the native modules a managed host runs (`command`, `file`,
//! `setup`, ...), each taking ansible's module arguments and returning ansible's result
//! dictionary as JSON. The controller calls them in-process for local hosts; the agent binary
//! (`src/bin/tack-agent.rs`, speaking `tack_protocol` over its stdin/stdout through [`serve`])
//! runs the same code on remote ones. [`shell`] is the one `/bin/sh -c` runner both use for
//! the controller's command lines.
//!
//! Native modules: `ping`, `command`, `shell`, `stat`, `file`, `slurp`, `tempfile`,
//! `lineinfile`, `replace`, `blockinfile`, `assemble`, `service`, `systemd`, `pip`, `apt`, and the
//! host side of `copy`. Each validates its
//! arguments through [`modules::argspec`] (ansible's `AnsibleModule` rules and messages) and
//! returns exactly the dictionary ansible's module prints; what the controller adds around it
//! (`invocation`, `stdout_lines`/`stderr_lines` from `stdout`/`stderr`, `_ansible_*` keys, how
//! `diff` is shown) is the controller's. Compatibility is measured by `tests/modules.rs` against
//! results recorded from ansible-core's own modules by `scripts/record-module-results.py`.
//!
//! This crate knows nothing of playbooks, templates or the controller: a module sees only its
//! arguments and the host it runs on, and its result is plain JSON. It must stay small enough
//! to build as a static binary.

pub mod descendants;
pub mod jobs;
pub mod listen;
pub mod modules;
pub mod python;
pub mod serve;
pub mod session;
pub mod shell;
pub mod stage;

pub use modules::{Invocation, ModuleResult, run_module};
