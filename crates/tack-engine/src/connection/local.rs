//! The `local` connection run in-process: the controller itself is the host, and tack's
//! native modules run on the calling thread (`tack_connect::InProcess`). Each use is recorded
//! for `-vvv`'s connection lines (`crate::transport`).
//!
//! Owns nothing but the record; modules and the shell runner are `tack_agent`'s.

use tack_connect::{Decorator, InProcess, Outcome, Request};

use super::{Connection, ConnectionError};
use crate::transport::{Use, record};

pub struct Local;

impl Decorator for Local {
    fn inner(&self) -> Result<&dyn Connection, ConnectionError> {
        Ok(&InProcess)
    }

    fn before(&self, request: &Request<'_>) -> Result<(), ConnectionError> {
        if let Some(used) = Use::before(request) {
            record(used);
        }
        Ok(())
    }

    fn after(&self, request: &Request<'_>, outcome: Outcome<'_>) {
        if let Some(used) = Use::after(request, outcome) {
            record(used);
        }
    }
}
