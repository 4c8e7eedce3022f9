//! One module per subcommand: each owns its flags (`Args`) and turns them into calls on the
//! library crates.

pub mod adhoc;
pub mod eval;
pub mod inventory;
pub mod plan;
pub mod playbook;
pub mod python_path;
pub mod serve;
pub mod vault;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Playbook(args) => playbook::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Adhoc(args) => adhoc::run(args),
        Command::Inventory(args) => inventory::run(args),
        Command::Vault(args) => vault::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Token(args) => serve::token(args),
    }
}
