//! The run store and what is built over it: every run tack keeps, with its run plan (one
//! params map per task, masked then marked as seed 000 says), each host's result, the event
//! log and the recap.
//!
//! - [`store`] owns the database: SQLite by default, PostgreSQL when several controllers
//!   share the work, through one code path (sqlx's `Any` driver and embedded migrations).
//! - [`ingest`] turns the engine's event lines (`tack_engine::callback::events`, already
//!   masked) into rows, one transaction per event.
//! - [`record`] is the synchronous face `tack playbook --record` uses: a thread that stores
//!   the events while the run goes on.
//!
//! This crate reads only the engine's JSON event lines, never its types: the engine does not
//! know a store exists, and nothing here can unmask a value, because nothing unmasked arrives.

pub mod ingest;
pub mod record;
pub mod store;

pub use store::{Store, StoreError};
