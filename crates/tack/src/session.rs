//! What every subcommand that reads a project needs before it starts: the data loader with
//! the run's vault secrets, the extra vars, the inventory and the configured search paths.

use std::path::PathBuf;

use tack_diag::Diagnostic;
use tack_loader::{DataLoader, HashBehaviour, load_extra_vars};
use tack_vault::VaultSecrets;
use tack_yaml::Mapping;

use crate::options::{ExtraVarsOpts, InventoryOpts, VaultOpts};

pub struct Session {
    pub loader: DataLoader,
    pub extra_vars: Mapping,
    pub roles_path: Vec<PathBuf>,
}

impl Session {
    pub fn open(
        inventory: &InventoryOpts,
        vault: &VaultOpts,
        extra: &ExtraVarsOpts,
    ) -> Result<Session, Diagnostic> {
        let _ = (inventory, vault);
        let loader = DataLoader::new(VaultSecrets::default());
        let extra_vars = load_extra_vars(&loader, &extra.extra_vars, HashBehaviour::Replace)?;
        let home = std::env::var("HOME").unwrap_or_default();
        let roles_path = vec![
            PathBuf::from(format!("{home}/.ansible/roles")),
            PathBuf::from("/usr/share/ansible/roles"),
            PathBuf::from("/etc/ansible/roles"),
        ];
        Ok(Session { loader, extra_vars, roles_path })
    }

    /// The hosts a play's patterns select, in inventory order.
    pub fn hosts_for(&self, patterns: &[String]) -> Result<Vec<String>, Diagnostic> {
        let _ = patterns;
        Err(Diagnostic::new("tack: --list-hosts needs the inventory, which is being built"))
    }
}
