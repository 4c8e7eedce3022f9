//! Option groups shared by several subcommands, spelled as ansible's commands spell them
//! (ansible's `cli/arguments/option_helpers.py` groups), so `tack playbook` and
//! `ansible-playbook` accept the same flags.

use std::path::PathBuf;

use clap::Args;

/// `-i` and `-l`: where hosts come from and which of them to touch.
#[derive(Args, Debug, Default, Clone)]
pub struct InventoryOpts {
    /// Specify inventory host path or comma separated host list. This argument may be
    /// specified multiple times.
    #[arg(
        short = 'i',
        long = "inventory",
        visible_alias = "inventory-file",
        value_name = "INVENTORY"
    )]
    pub inventory: Vec<String>,
    /// Further limit selected hosts to an additional pattern.
    #[arg(short = 'l', long = "limit", value_name = "SUBSET")]
    pub limit: Option<String>,
    /// Clear the fact cache for every host in inventory.
    #[arg(long = "flush-cache")]
    pub flush_cache: bool,
}

/// How vault secrets are supplied.
#[derive(Args, Debug, Default, Clone)]
pub struct VaultOpts {
    /// The vault identity to use. This argument may be specified multiple times.
    #[arg(long = "vault-id", value_name = "VAULT_IDS")]
    pub vault_ids: Vec<String>,
    /// Vault password file.
    #[arg(
        long = "vault-password-file",
        visible_alias = "vault-pass-file",
        value_name = "VAULT_PASSWORD_FILES",
        conflicts_with = "ask_vault_pass"
    )]
    pub vault_password_files: Vec<PathBuf>,
    /// Ask for vault password.
    #[arg(short = 'J', long = "ask-vault-password", visible_alias = "ask-vault-pass")]
    pub ask_vault_pass: bool,
}

/// `-e`: extra variables, in every form ansible takes (`k=v`, YAML/JSON, `@file`).
#[derive(Args, Debug, Default, Clone)]
pub struct ExtraVarsOpts {
    /// Set additional variables as key=value or YAML/JSON, if filename prepend with @. This
    /// argument may be specified multiple times.
    #[arg(short = 'e', long = "extra-vars", value_name = "EXTRA_VARS")]
    pub extra_vars: Vec<String>,
}

/// `-v`, repeated.
#[derive(Args, Debug, Default, Clone)]
pub struct VerbosityOpts {
    /// Causes tack to print more debug messages. Adding multiple -v will increase the verbosity.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}
