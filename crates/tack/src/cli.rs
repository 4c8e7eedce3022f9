//! The command line: `tack <subcommand>`, and the ansible command names that map onto them.

use std::ffi::OsString;
use std::path::Path;

use clap::{Parser, Subcommand};

use crate::cmd;

#[derive(Parser, Debug)]
#[command(
    name = "tack",
    version = version(false),
    about = "An Ansible-compatible automation engine",
    infer_long_args = true,
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// `tack serve`, which runs until it is stopped, and ends as a server does.
    pub(crate) fn is_server(&self) -> bool {
        matches!(self.command, Command::Serve(_))
    }
}

/// What `--version` says after the command's name: tack's version (for an ansible command
/// name, `[tack VERSION]`, as ansible's say `[core VERSION]`), the ansible-core version it is
/// compatible with, and the agent it installs on hosts.
pub(crate) fn version(aliased: bool) -> &'static str {
    static TEXTS: [std::sync::OnceLock<String>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    TEXTS[usize::from(aliased)].get_or_init(|| {
        let agent = match tack_connect::embedded_summary() {
            Some(summary) => format!("agent {summary}"),
            None => "no agent embedded: ssh hosts need a tack-agent beside tack".to_string(),
        };
        let own = env!("CARGO_PKG_VERSION");
        let own = if aliased { format!("[tack {own}]") } else { own.to_string() };
        format!("{own} (compatible with ansible-core {}; {agent})", tack_engine::ANSIBLE_VERSION)
    })
}

// Parsed once per process; boxing the larger variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run (or list, or syntax-check) playbooks, as ansible-playbook does.
    Playbook(cmd::playbook::Args),
    /// Show what a playbook run would do, changing no host; say what cannot be known yet.
    Plan(cmd::plan::Args),
    /// Run one module on the hosts a pattern selects, as ansible's ad-hoc command does.
    Adhoc(cmd::adhoc::Args),
    /// Show the inventory, as ansible-inventory does.
    Inventory(cmd::inventory::Args),
    /// Encrypt and decrypt vault files and strings, as ansible-vault does.
    Vault(cmd::vault::Args),
    /// Render an expression or template with extra vars and print the result as JSON.
    Eval(cmd::eval::Args),
    /// Serve the REST API and web page that keep every run, and run incarnations.
    Serve(cmd::serve::Args),
    /// Create, list and revoke the server's access tokens.
    Token(cmd::serve::TokenArgs),
    /// Print shell completions for tack (or an ansible command name tack answers to).
    Completions(cmd::docs::CompletionsArgs),
    /// Print tack's manual page (or write every page into a directory).
    Man(cmd::docs::ManArgs),
}

/// The ansible command names tack answers to, and the subcommand each one means.
const ALIASES: &[(&str, &str)] = &[
    ("ansible-playbook", "playbook"),
    ("ansible-inventory", "inventory"),
    ("ansible-vault", "vault"),
    ("ansible", "adhoc"),
];

/// The subcommand an argv[0] names, when it is one of ansible's command names.
fn alias_of(argv0: &OsString) -> Option<&'static str> {
    let name = Path::new(argv0).file_name().and_then(|n| n.to_str())?;
    ALIASES.iter().find(|(alias, _)| *alias == name).map(|(_, sub)| *sub)
}

/// One subcommand's flags as a command of its own, named as ansible's command is, so usage
/// lines and `--version` read as they should for `ansible-playbook ...`.
fn command_as<A: clap::Args>(name: &'static str) -> clap::Command {
    A::augment_args(clap::Command::new(name).version(version(true)).infer_long_args(true))
}

fn parse_as<A: clap::Args + clap::FromArgMatches>(name: &'static str, args: Vec<OsString>) -> A {
    let matches = command_as::<A>(name).get_matches_from(args);
    A::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// The command line an ansible command name stands for (for completions and manual pages).
pub(crate) fn alias_command(name: &str) -> Option<clap::Command> {
    Some(match name {
        "ansible-playbook" => command_as::<cmd::playbook::Args>("ansible-playbook"),
        "ansible-inventory" => command_as::<cmd::inventory::Args>("ansible-inventory"),
        "ansible-vault" => command_as::<cmd::vault::Args>("ansible-vault"),
        "ansible" => command_as::<cmd::adhoc::Args>("ansible"),
        _ => return None,
    })
}

/// Parses the process's arguments: `tack <subcommand> ...`, or an ansible command name.
pub(crate) fn parse(args: Vec<OsString>) -> Cli {
    let alias = args.first().and_then(alias_of);
    let command = match alias {
        Some("playbook") => Command::Playbook(parse_as("ansible-playbook", args)),
        Some("inventory") => Command::Inventory(parse_as("ansible-inventory", args)),
        Some("vault") => Command::Vault(parse_as("ansible-vault", args)),
        Some("adhoc") => Command::Adhoc(parse_as("ansible", args)),
        _ => return Cli::parse_from(args),
    };
    Cli { command }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Cli {
        parse(args.iter().map(OsString::from).collect())
    }

    #[test]
    fn ansible_names_become_subcommands() {
        let cli = parse_strs(&["/usr/bin/ansible-playbook", "site.yml", "--list-tasks"]);
        assert!(matches!(cli.command, Command::Playbook(a) if a.list_tasks));
        let cli = parse_strs(&["ansible-inventory", "--graph"]);
        assert!(matches!(cli.command, Command::Inventory(a) if a.graph));
        let cli = parse_strs(&["/usr/bin/ansible", "web", "-m", "ping", "-o"]);
        assert!(matches!(cli.command, Command::Adhoc(a) if a.pattern == "web" && a.one_line));
        let cli = parse_strs(&["tack", "playbook", "x.yml", "--syntax-check"]);
        assert!(matches!(cli.command, Command::Playbook(a) if a.syntax_check));
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
