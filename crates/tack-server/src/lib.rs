//! The run store and what is built over it: every run tack keeps, with its run plan (one
//! params map per task, masked then marked as seed 000 says), each host's result, the event
//! log and the recap.
//!
//! - [`store`] owns the database: SQLite by default, PostgreSQL when several controllers
//!   share the work, through one code path (sqlx's `Any` driver and embedded migrations).
//! - [`ingest`] turns the engine's event lines (`tack_report::callback::events`, already
//!   masked) into rows, one transaction per event.
//! - [`record`] is the synchronous face `tack playbook --record` uses: a thread that stores
//!   the events while the run goes on.
//! - [`incarnations`], [`queue`], [`tokens`], [`sessions`] and [`audit`] are what `tack serve`
//!   keeps besides runs: the specs it runs, the queue several servers share, who may do what,
//!   the page's signed-in browsers, and who changed what; [`schedule`] queues the plan and
//!   check runs an incarnation's schedules ask for, and [`drift`] marks what they find.
//! - [`runner`] runs claimed runs as child `tack playbook` processes; [`api`] is the REST API
//!   under `/v1`; [`serve`] puts them together.
//!
//! This crate reads only the engine's JSON event lines, never its types: the engine does not
//! know a store exists, and nothing here can unmask a value, because nothing unmasked arrives.

pub mod api;
pub mod audit;
pub mod drift;
mod headers;
pub mod incarnations;
pub mod ingest;
mod openapi;
pub mod queue;
pub mod record;
pub mod runner;
pub mod schedule;
pub mod serve;
pub mod sessions;
pub mod store;
pub mod tokens;
pub mod web;
mod web_text;

pub use store::{Store, StoreError};
