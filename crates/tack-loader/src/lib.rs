//! Reading data files the way ansible-core's `DataLoader` does, shared by inventories,
//! playbooks, vars files and roles.
//!
//! ```no_run
//! use std::path::Path;
//! use tack_loader::DataLoader;
//!
//! let loader = DataLoader::new(tack_vault::VaultSecrets::default());
//! let vars = loader.load_file(Path::new("group_vars/all.yml"))?;
//! for file in loader.find_vars_files(Path::new("host_vars"), "web01") {
//!     let _ = loader.load_file(&file)?;
//! }
//! # Ok::<(), tack_loader::LoadError>(())
//! ```
//!
//! The crate owns: whole-file vault decryption, JSON-before-YAML parsing with Python's JSON
//! rules ([`json`]), the per-run parse cache, `path_dwim` ([`paths`]), ansible's search rules
//! for relatively named files (`path_dwim_relative*`, `_is_role`, `find_vars_files`:
//! [`search`]), where a file a managed host named may be read from ([`confine`]), `key=value` splitting ([`kv`]) and combining variable mappings with `-e`
//! extra vars ([`vars`]). It knows nothing of what the data means (inventories, plays) and
//! never decrypts inline `!vault` values: whoever reads such a value decrypts it. Python's own
//! rules (`os.path`, `repr`) come from `tack_py`.

pub mod confine;
pub mod json;
pub mod kv;
mod loader;
pub mod notes;
pub mod paths;
pub mod search;
pub mod vars;

pub use loader::{CacheMode, DEFAULT_YAML_EXTENSIONS, DataLoader, FileText, LoadError};
pub use vars::{
    HashBehaviour, combine_into, combine_vars, hash_behaviour, load_extra_vars, set_hash_behaviour,
};
