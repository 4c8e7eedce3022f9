//! Playbooks as ansible-core 2.21.5 loads them: plays, blocks, tasks, handlers and roles, with
//! `import_*` expanded, keywords validated against ansible's own tables, and every node keeping
//! its source position.
//!
//! This crate reads files (through a [`FileLoader`] the caller provides) and templates only what
//! ansible templates while loading (role names, static import paths, play keywords at
//! post-validation). It never runs anything and never touches a host.

pub mod action_groups;
pub mod ast;
pub mod compile;
pub mod listing;
mod load;
pub mod play_argspec;
pub mod play_vars;
pub mod post_validate;
pub mod setup_block;
pub mod tables;
pub mod tags;
pub mod walk;

pub use action_groups::ActionGroups;
pub use ast::*;
pub use load::collections::{CollectionRoots, Fqcr, LazyRoots, VersionMismatch};
pub use load::dynamic;
pub use load::modargs::ModuleSearch;
pub use load::{
    FileLoader, LoadOptions, Loader, builtin_resolves, is_all_template, validate_variable_name,
};
