//! ansible's `tree` callback (`ansible --tree DIR`): each host's last result written as JSON
//! to `DIR/<host>`, beside the stdout callback.
//!
//! The file name is the inventory name, which a run can take from a managed host's answer
//! (`add_host` with a registered value); a name that is not one plain path component is
//! never joined to the directory (seed 002: a managed host never picks a controller path), and
//! the run warns instead.

use std::path::PathBuf;

use tack_diag::Diagnostic;

use super::TaskView;
use super::default::{clean, dump_result};
use crate::result::HostResult;

pub struct TreeWriter {
    dir: PathBuf,
    verbosity: u8,
}

impl TreeWriter {
    pub fn new(dir: PathBuf, verbosity: u8) -> TreeWriter {
        TreeWriter { dir, verbosity }
    }

    /// `result_to_tree` for an ok, changed, failed or unreachable result (skipped ones are not
    /// written, as ansible's callback has no hook for them).
    pub fn write(&self, task: &TaskView, result: &HostResult) {
        let host = &result.host;
        let plain = !host.is_empty() && host != "." && host != ".." && !host.contains('/');
        if !plain {
            tack_diag::warn(&Diagnostic::new(format!(
                "Not writing the tree file of host {host:?}: its name is not one path component."
            )));
            return;
        }
        let shown = crate::no_log::shown(result);
        let data = clean(task, result, &shown);
        let indent = result.verbose_always || self.verbosity > 2;
        let text = dump_result(&data, indent, self.verbosity);
        if let Err(e) = std::fs::create_dir_all(&self.dir) {
            tack_diag::warn(&Diagnostic::new(format!(
                "Unable to access or create the configured directory '{}': {e}",
                self.dir.display()
            )));
        }
        let path = self.dir.join(host);
        if let Err(e) = std::fs::write(&path, text) {
            tack_diag::warn(&Diagnostic::new(format!(
                "Unable to write to {host}'s file: {}: {e}",
                path.display()
            )));
        }
    }
}
