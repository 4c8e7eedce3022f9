//! `tack plan`: every `tack playbook` option, and a run that never changes a host (see
//! `tack_engine::plan`): the transcript in the plan's words, or `--format json`.

use std::process::ExitCode;

use clap::Args as ClapArgs;

/// How the plan is written.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// The transcript, with a `deferred=` column and a line saying whether the plan is
    /// complete.
    Text,
    /// One JSON document: per play, task and host, the outcome.
    Json,
}

#[derive(ClapArgs, Debug)]
#[group(id = "plan_args")]
#[command(
    about = "Shows what a playbook run would do without changing any host: what matches, what \
             would change, what would run, and what cannot be known until apply.",
    infer_long_args = true
)]
pub(crate) struct Args {
    #[command(flatten)]
    pub playbook: super::playbook::Args,
    /// How the plan is written.
    #[arg(long = "format", value_enum, default_value = "text")]
    pub format: Format,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::playbook::run_mode(args.playbook, super::playbook::Mode::Plan(args.format))
}
