//! `tack inventory` (and `ansible-inventory`): show the inventory as ansible-inventory does.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args as ClapArgs;

use crate::options::{ExtraVarsOpts, InventoryOpts, VaultOpts, VerbosityOpts};

#[derive(ClapArgs, Debug)]
#[command(
    about = "Show Ansible inventory information, by default it uses the inventory script JSON format"
)]
pub struct Args {
    /// The name of a group in the inventory, relevant when using --graph.
    #[arg(value_name = "group")]
    pub group: Option<String>,

    #[command(flatten)]
    pub inventory: InventoryOpts,
    #[command(flatten)]
    pub vault: VaultOpts,
    #[command(flatten)]
    pub extra_vars: ExtraVarsOpts,
    #[command(flatten)]
    pub verbosity: VerbosityOpts,

    /// Since this tool does not use playbooks, use this as a substitute playbook directory.
    #[arg(long = "playbook-dir", value_name = "BASEDIR")]
    pub playbook_dir: Option<PathBuf>,
    /// Output all hosts info, works as inventory script.
    #[arg(long = "list", group = "action")]
    pub list: bool,
    /// Output specific host info, works as inventory script.
    #[arg(long = "host", value_name = "HOST", group = "action")]
    pub host: Option<String>,
    /// Create inventory graph; if supplying pattern it must be a valid group name.
    #[arg(long = "graph", group = "action")]
    pub graph: bool,
    /// Use YAML format instead of default JSON, ignored for --graph.
    #[arg(short = 'y', long = "yaml")]
    pub yaml: bool,
    /// Use TOML format instead of default JSON, ignored for --graph.
    #[arg(long = "toml")]
    pub toml: bool,
    /// Add vars to graph display, ignored unless used with --graph.
    #[arg(long = "vars")]
    pub show_vars: bool,
    /// When doing --list, represent in a way that is optimized for export.
    #[arg(long = "export")]
    pub export: bool,
    /// When doing --list, send the inventory to a file instead of to the screen.
    #[arg(long = "output", value_name = "OUTPUT_FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = args;
    anyhow::bail!("tack inventory: loading inventories is being built (issue 2)")
}
