//! Option groups shared by several subcommands, spelled as ansible's commands spell them
//! (ansible's `cli/arguments/option_helpers.py` groups), so `tack playbook` and
//! `ansible-playbook` accept the same flags.

use std::path::PathBuf;

use clap::Args;

/// `-i` and `-l`: where hosts come from and which of them to touch.
#[derive(Args, Debug, Default, Clone)]
pub(crate) struct InventoryOpts {
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
pub(crate) struct VaultOpts {
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
pub(crate) struct ExtraVarsOpts {
    /// Set additional variables as key=value or YAML/JSON, if filename prepend with @. This
    /// argument may be specified multiple times.
    #[arg(short = 'e', long = "extra-vars", value_name = "EXTRA_VARS")]
    pub extra_vars: Vec<String>,
}

/// `-v`, repeated.
#[derive(Args, Debug, Default, Clone)]
pub(crate) struct VerbosityOpts {
    /// Causes tack to print more debug messages. Adding multiple -v will increase the verbosity.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// Connection options (`ansible-playbook` and `ansible` share them): the defaults of every
/// host's link (`crate::links::link_defaults`). scp's and sftp's extra arguments are refused
/// by name (`refused`): tack moves files over its agent's link, never with scp or sftp.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ConnectionOpts {
    /// Use this file to authenticate the connection.
    #[arg(long = "private-key", visible_alias = "key-file", value_name = "PRIVATE_KEY_FILE")]
    pub private_key: Option<PathBuf>,
    /// Connect as this user.
    #[arg(short = 'u', long = "user", value_name = "REMOTE_USER")]
    pub remote_user: Option<String>,
    /// Connection type to use (default=ssh).
    #[arg(short = 'c', long = "connection", value_name = "CONNECTION")]
    pub connection: Option<String>,
    /// Override the connection timeout in seconds.
    #[arg(short = 'T', long = "timeout", value_name = "TIMEOUT")]
    pub timeout: Option<u32>,
    /// Specify common arguments to pass to sftp/scp/ssh (e.g. ProxyCommand).
    #[arg(long = "ssh-common-args", value_name = "SSH_COMMON_ARGS", allow_hyphen_values = true)]
    pub ssh_common_args: Option<String>,
    /// Specify extra arguments to pass to sftp only.
    #[arg(long = "sftp-extra-args", value_name = "SFTP_EXTRA_ARGS", allow_hyphen_values = true)]
    pub sftp_extra_args: Option<String>,
    /// Specify extra arguments to pass to scp only.
    #[arg(long = "scp-extra-args", value_name = "SCP_EXTRA_ARGS", allow_hyphen_values = true)]
    pub scp_extra_args: Option<String>,
    /// Specify extra arguments to pass to ssh only.
    #[arg(long = "ssh-extra-args", value_name = "SSH_EXTRA_ARGS", allow_hyphen_values = true)]
    pub ssh_extra_args: Option<String>,
    /// Ask for connection password.
    #[arg(short = 'k', long = "ask-pass", conflicts_with = "connection_password_file")]
    pub ask_pass: bool,
    /// Connection password file.
    #[arg(long = "connection-password-file", visible_alias = "conn-pass-file")]
    pub connection_password_file: Option<PathBuf>,
}

impl ConnectionOpts {
    /// The first option given that tack does not honour, by the flag a user typed.
    pub(crate) fn refused(&self) -> Option<&'static str> {
        if self.scp_extra_args.is_some() {
            return Some("--scp-extra-args (tack copies files over its agent's link, not scp)");
        }
        if self.sftp_extra_args.is_some() {
            return Some("--sftp-extra-args (tack copies files over its agent's link, not sftp)");
        }
        None
    }
}

/// Privilege escalation options.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct BecomeOpts {
    /// Run operations with become (does not imply password prompting).
    #[arg(short = 'b', long = "become")]
    pub become_: bool,
    /// Privilege escalation method to use (default=sudo).
    #[arg(long = "become-method", value_name = "BECOME_METHOD")]
    pub become_method: Option<String>,
    /// Run operations as this user (default=root).
    #[arg(long = "become-user", value_name = "BECOME_USER")]
    pub become_user: Option<String>,
    /// Ask for privilege escalation password.
    #[arg(short = 'K', long = "ask-become-pass", conflicts_with = "become_password_file")]
    pub ask_become_pass: bool,
    /// Become password file.
    #[arg(long = "become-password-file", visible_alias = "become-pass-file")]
    pub become_password_file: Option<PathBuf>,
}
