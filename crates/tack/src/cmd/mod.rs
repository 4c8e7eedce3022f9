//! One module per subcommand: each owns its flags (`Args`) and turns them into calls on the
//! library crates.

pub(crate) mod adhoc;
pub(crate) mod docs;
pub(crate) mod eval;
pub(crate) mod inventory;
pub(crate) mod plan;
pub(crate) mod playbook;
pub(crate) mod python_path;
pub(crate) mod serve;
pub(crate) mod vault;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Playbook(args) => playbook::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Adhoc(args) => adhoc::run(args),
        Command::Inventory(args) => inventory::run(args),
        Command::Vault(args) => vault::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Token(args) => serve::token(args),
        Command::Completions(args) => docs::completions(args),
        Command::Man(args) => docs::man(args),
    }
}
