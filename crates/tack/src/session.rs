//! What every subcommand that reads a project needs before it starts: the data loader with
//! the run's vault secrets, the extra vars, the inventory and the configured search paths.

use std::path::PathBuf;

use tack_config::{Config, Context};
use tack_diag::Diagnostic;
use tack_loader::{DataLoader, HashBehaviour, load_extra_vars};
use tack_vault::VaultSecrets;
use tack_yaml::Mapping;

use crate::options::{ExtraVarsOpts, InventoryOpts, VaultOpts};

pub struct Session {
    pub config: Config,
    pub loader: DataLoader,
    pub extra_vars: Mapping,
    pub roles_path: Vec<PathBuf>,
}

/// Reads ansible.cfg and the `ANSIBLE_*` environment as ansible does at startup, printing its
/// notices; a bad setting ends the process with ansible's startup error and exit code 5.
pub fn load_config() -> Result<Config, crate::exit::Startup> {
    let ctx = Context::from_process().map_err(crate::exit::Startup::from)?;
    let config = Config::load(&ctx).map_err(crate::exit::Startup::from)?;
    tack_diag::set_deprecations_enabled(config.deprecation_warnings());
    config.emit_notices();
    Ok(config)
}

impl Session {
    pub fn open(
        config: Config,
        inventory: &InventoryOpts,
        vault: &VaultOpts,
        extra: &ExtraVarsOpts,
    ) -> Result<Session, Diagnostic> {
        let _ = (inventory, vault);
        let loader = DataLoader::new(VaultSecrets::default());
        let behaviour = match config.hash_behaviour() {
            tack_config::HashBehaviour::Merge => HashBehaviour::Merge,
            tack_config::HashBehaviour::Replace => HashBehaviour::Replace,
        };
        let extra_vars = load_extra_vars(&loader, &extra.extra_vars, behaviour)?;
        let roles_path = config.roles_path();
        Ok(Session { config, loader, extra_vars, roles_path })
    }

    /// The hosts a play's patterns select, in inventory order.
    pub fn hosts_for(&self, patterns: &[String]) -> Result<Vec<String>, Diagnostic> {
        let _ = patterns;
        Err(Diagnostic::new("tack: --list-hosts needs the inventory, which is being built"))
    }
}
