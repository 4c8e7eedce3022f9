//! The command line: `tack <subcommand>`, and the ansible command names that map onto them.

use std::ffi::OsString;
use std::path::Path;

use clap::{Parser, Subcommand};

use crate::cmd;

#[derive(Parser, Debug)]
#[command(
    name = "tack",
    version,
    about = "An Ansible-compatible automation engine",
    infer_long_args = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once per process; boxing the larger variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run (or list, or syntax-check) playbooks, as ansible-playbook does.
    Playbook(cmd::playbook::Args),
    /// Show the inventory, as ansible-inventory does.
    Inventory(cmd::inventory::Args),
    /// Encrypt and decrypt vault files and strings, as ansible-vault does.
    Vault(cmd::vault::Args),
}

/// The ansible command names tack answers to, and the subcommand each one means.
const ALIASES: &[(&str, &str)] = &[
    ("ansible-playbook", "playbook"),
    ("ansible-inventory", "inventory"),
    ("ansible-vault", "vault"),
];

/// Rewrites `ansible-playbook ARGS...` into `tack playbook ARGS...` when the binary was invoked
/// under one of ansible's names; any other name leaves the arguments as they are.
pub fn argv_for_invocation(mut args: Vec<OsString>) -> Vec<OsString> {
    let Some(argv0) = args.first() else { return args };
    let name = Path::new(argv0).file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if let Some((alias, sub)) = ALIASES.iter().find(|(alias, _)| *alias == name) {
        args[0] = OsString::from(format!("tack {alias}"));
        args.insert(1, OsString::from(*sub));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(args: &[&str]) -> Vec<String> {
        let args = args.iter().map(OsString::from).collect();
        argv_for_invocation(args).into_iter().map(|a| a.into_string().unwrap()).collect()
    }

    #[test]
    fn ansible_names_become_subcommands() {
        assert_eq!(
            rewrite(&["/usr/bin/ansible-playbook", "site.yml"])[1..],
            ["playbook", "site.yml"]
        );
        assert_eq!(rewrite(&["ansible-vault", "view", "x"])[1..], ["vault", "view", "x"]);
        assert_eq!(rewrite(&["tack", "inventory", "--list"]), ["tack", "inventory", "--list"]);
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
