//! How a task reaches a host: the link types are `tack_connect`'s; [`Local`] runs tack's native
//! modules in this process (what runs playbooks on `local` hosts) and records each use for
//! `-vvv` (`crate::transport`), which is why it lives here rather than beside them.

mod local;

pub use local::Local;
pub use tack_connect::{ChildAgent, Connection, ConnectionError, ExecOutput, StagedFile};
