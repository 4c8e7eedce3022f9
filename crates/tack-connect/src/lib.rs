//! How the controller reaches a host (DESIGN.md layer 5): a [`Connection`] runs a module or a
//! command there and returns what came back. [`ChildAgent`] runs a command whose stdin/stdout
//! carry `tack_protocol` frames (a local `tack-agent`, or `ssh` running one); [`Ssh`] is the
//! `ssh` connection: [`SshTarget`] (ansible's settings, and the `ssh` command line ansible
//! builds from them, in `ssh`), first contact installing the [`AgentImage`] once per host and
//! version (`install`), then a `ChildAgent` whose command is `ssh` (`ssh_link`). [`InProcess`]
//! is the engine's `local` connection. [`BecomeLink`] is a link whose agent runs as another
//! user (`become`), through the become program's handshake (`escalate`). A link that wraps
//! another ([`OnDemand`], [`Ssh`] and `BecomeLink` over their agent, the engine's recording
//! and deadline links) is a [`Decorator`], whose one forwarding of every method is
//! `decorate`'s.
//!
//! A connection also stages the files a sub-task needs ([`Connection::stage`], handing back a
//! [`StagedFile`] for [`Connection::unstage`]): an agent keeps them in its private
//! `stage-<host>-<pid>/` (`tack_agent::stage`), `InProcess` in a private directory of
//! their own on this machine (`staged`).
//!
//! A connection carries arguments and results; it never decides anything about the task, and
//! it knows nothing of playbooks, variables or output.

mod askpass;
pub mod batch;
mod become_link;
mod child;
mod connection;
mod decorate;
mod escalate;
mod forward;
mod in_process;
mod install;
mod notes;
mod on_demand;
mod ssh;
mod ssh_link;
mod staged;

pub use askpass::{SOCKET_ENV as ASKPASS_SOCKET_ENV, helper_main as askpass_main};
pub use become_link::{BecomeLink, Via};
pub use child::{AgentCommand, ChildAgent};
pub use connection::{Connection, ConnectionError, ExecOutput};
pub use decorate::{Decorator, Held, Outcome, Request};
pub use escalate::{Become, BecomeError, BecomeMethod, Escalation};
pub use in_process::InProcess;
pub use install::{AgentImage, embedded_summary};
pub use notes::Notes;
pub use on_demand::OnDemand;
pub use ssh::{DEFAULT_CONTROL_PATH_DIR, DEFAULT_SSH_ARGS, SshError, SshTarget, control_path_name};
pub use ssh_link::{MasterReset, Ssh, reset_master};
pub use staged::{STAGE_LIMIT, StagedFile, too_big};
pub use tack_protocol::{JobSpec, ProgramJob, PythonJob};
