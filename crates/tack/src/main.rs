//! The `tack` command: parses the command line and hands each subcommand to the library crates.
//!
//! This crate is the only place that knows about processes: argv, exit codes, stdout/stderr.
//! When the binary is invoked under one of ansible's command names (`ansible-playbook`,
//! `ansible-inventory`, `ansible-vault`, through a symlink or a copy) it behaves as the matching
//! subcommand, taking the same flags ansible's command takes.

// The binary is where tack prints (the workspace lints forbid it elsewhere).
#![allow(clippy::print_stdout)]

mod ask_pass;
mod cli;
mod cmd;
mod color;
mod exit;
mod interrupt;
mod links;
mod options;
mod plugin_filter;
mod progress;
mod session;
mod settings_contract;
mod strategies;
mod vault_settings;

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    // ssh running this binary as its askpass program, for a link's password
    // (`tack_connect::askpass_main`): answered before anything else is read.
    if let Some(code) = tack_connect::askpass_main() {
        return exit_code(code);
    }
    // The detached halves of a local host's `async` job (`tack_agent::jobs`): not commands
    // a user types, so they bypass the command line.
    match std::env::args_os().nth(1).as_deref().and_then(|a| a.to_str()) {
        Some(tack_agent::jobs::JOB_ARG) => {
            return exit_code(tack_agent::jobs::job_main());
        }
        Some(tack_agent::jobs::MODULE_ARG) => {
            return exit_code(tack_agent::jobs::module_main());
        }
        _ => {}
    }
    let cli = cli::parse(std::env::args_os().collect::<Vec<OsString>>());
    // The server ends as a server does; every other command as ansible's do on SIGINT and
    // SIGTERM, stopping what it started.
    if !cli.is_server()
        && let Err(e) = interrupt::install()
    {
        return exit::report(&anyhow::anyhow!("cannot catch SIGINT and SIGTERM: {e}"));
    }
    let code = match cmd::run(cli) {
        Ok(code) => code,
        Err(err) => exit::report(&err),
    };
    // Local hosts' Python servers and their private payload directory go with the run.
    tack_agent::python::PythonHost::end_shared();
    code
}

fn exit_code(code: i32) -> ExitCode {
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
