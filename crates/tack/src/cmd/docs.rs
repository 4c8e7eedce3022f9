//! `tack completions SHELL` and `tack man`: shell completions and manual pages made from the
//! command line's own definition (clap's), so they never drift from it, for `tack` and for
//! each ansible command name tack answers to (`--for ansible-playbook`, ...).
//!
//! Writes only to stdout, or into the directory `--dir` names.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::{Cli, alias_command};

#[derive(clap::Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
    /// Complete this command name instead of `tack`: ansible-playbook, ansible,
    /// ansible-inventory or ansible-vault.
    #[arg(long = "for", value_name = "NAME")]
    name: Option<String>,
}

#[derive(clap::Args, Debug)]
pub(crate) struct ManArgs {
    /// The page of this command name instead of `tack`'s: ansible-playbook, ansible,
    /// ansible-inventory or ansible-vault.
    #[arg(long = "for", value_name = "NAME")]
    name: Option<String>,
    /// Write every page (tack, its subcommands, the ansible names) into this directory as
    /// NAME.1 instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "name")]
    dir: Option<PathBuf>,
}

/// The command definition `name` stands for: tack's, or an ansible name's.
fn command(name: Option<&str>) -> anyhow::Result<clap::Command> {
    match name {
        None | Some("tack") => Ok(Cli::command()),
        Some(name) => alias_command(name).with_context(|| {
            format!(
                "{name} is not a command tack answers to (tack, ansible-playbook, ansible, \
                 ansible-inventory, ansible-vault)"
            )
        }),
    }
}

pub(crate) fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = command(args.name.as_deref())?;
    let name = command.get_name().to_string();
    // Made in memory, then written: a closed pipe is the write's error, not a panic.
    let mut text = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut text);
    let mut out = std::io::stdout().lock();
    out.write_all(&text)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn man(args: ManArgs) -> anyhow::Result<ExitCode> {
    let Some(dir) = args.dir else {
        let mut out = std::io::stdout().lock();
        clap_mangen::Man::new(command(args.name.as_deref())?).render(&mut out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    let mut pages = vec![Cli::command()];
    for name in ["ansible-playbook", "ansible", "ansible-inventory", "ansible-vault"] {
        pages.push(command(Some(name))?);
    }
    for page in pages {
        write_pages(&dir, page)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `page`'s manual as NAME.1 in `dir`, and each subcommand's as NAME-SUB.1.
fn write_pages(dir: &std::path::Path, page: clap::Command) -> anyhow::Result<()> {
    let name = page.get_name().to_string();
    let path = dir.join(format!("{name}.1"));
    let mut text = Vec::new();
    clap_mangen::Man::new(page.clone()).render(&mut text)?;
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    for sub in page.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        let sub = sub.clone().name(format!("{name}-{}", sub.get_name()));
        write_pages(dir, sub)?;
    }
    Ok(())
}
