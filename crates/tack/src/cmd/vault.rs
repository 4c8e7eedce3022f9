//! `tack vault` (and `ansible-vault`): encrypt, decrypt, view, create, edit, rekey and
//! encrypt_string, reading and writing ansible-vault's formats.

use std::process::ExitCode;

use clap::Args as ClapArgs;

#[derive(ClapArgs, Debug)]
#[command(about = "encryption/decryption utility for Ansible data files")]
pub struct Args {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub rest: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("tack vault: being built (issue 2)")
}
