//! A run: its playbooks in order, each play of them, the recap after each playbook, and the
//! exit code ansible-playbook gives.

use std::collections::BTreeMap;

use tack_diag::Diagnostic;
use tack_playbook::Playbook;
use tack_report::{Callback, Stats};

use crate::context::{HostState, RunContext, RunStatus};
use crate::play::PlayEnd;

/// Checks every play of `playbooks` against what the engine runs, before anything runs.
pub fn check(playbooks: &[Playbook]) -> Result<(), Diagnostic> {
    for playbook in playbooks {
        for play in &playbook.plays {
            crate::refuse::check_play(play)?;
        }
    }
    Ok(())
}

/// Runs every play of `playbooks` in order, reporting to `callback`. A play that cannot start
/// (its variables or keywords fail to render) ends the run with that error, as in ansible.
pub fn run(
    ctx: &RunContext<'_>,
    playbooks: &[Playbook],
    callback: &mut dyn Callback,
) -> Result<RunStatus, Diagnostic> {
    check(playbooks)?;
    crate::refuse::default_strategy(
        playbooks,
        ctx.facts.default_strategy.as_deref(),
        &ctx.facts.external_strategies,
    )?;
    let mut stats = Stats::default();
    let mut states: BTreeMap<String, HostState> = BTreeMap::new();
    let live = tack_inventory::live::LiveInventory::new(ctx.inventory);
    // ansible's exit code is its last batch's: a play broken by `max_fail_percentage` gives
    // the failed hosts' code, over unreachable ones.
    let mut max_fail = false;
    for (n, playbook) in playbooks.iter().enumerate() {
        // ansible loads each playbook when its turn comes; from -vvv its imports' lines come
        // with the gatherings of `vars_files` (see `read_notes`).
        if crate::verbose::noted(ctx.facts.verbosity) >= 3
            && playbook.plays.iter().any(|p| !p.vars_files.is_empty())
        {
            let lines = crate::vars::read_notes::load_lines(
                playbook,
                ctx.extra_vars,
                ctx.loader,
                ctx.templar,
            )?;
            for (level, line) in lines {
                callback.verbose_line(level, &line);
            }
            let shown = Playbook { imported: Vec::new(), ..playbook.clone() };
            callback.playbook_start(&shown, n == 0);
        } else {
            callback.playbook_start(playbook, n == 0);
        }
        for play in &playbook.plays {
            crate::vars::reserved::warn_loaded(play, ctx.extra_vars);
        }
        for play in &playbook.plays {
            let prompted = crate::vars::prompt::answered(ctx, play, callback)?;
            let play = prompted.as_ref().unwrap_or(play);
            match crate::play::run_play(ctx, play, &live, callback, &mut stats, &mut states)? {
                PlayEnd::Continue => {}
                PlayEnd::AllFailed => break,
                PlayEnd::MaxFail => {
                    max_fail = true;
                    break;
                }
            }
        }
        // A plan changes nothing on the controller either.
        if let Some(dir) = ctx.facts.retry_files.as_ref().filter(|_| !ctx.facts.plan) {
            write_retry_file(playbook, dir.as_deref(), &states, callback);
        }
        // ansible's executor shows the recap (counted over the whole run) after each
        // playbook, and runs no further playbook once one has failed hosts.
        callback.stats(&stats);
        if max_fail || states.values().any(HostState::out) {
            break;
        }
    }
    Ok(if max_fail {
        RunStatus::Failed
    } else if states.values().any(|s| s.unreachable) {
        RunStatus::Unreachable
    } else if states.values().any(|s| s.failed) {
        RunStatus::Failed
    } else {
        RunStatus::Ok
    })
}

/// ansible's retry file: the names of the hosts that failed or could not be reached so far,
/// one per line, sorted, in `<playbook name>.retry` in `dir` (else beside the playbook), and
/// the line that says how to use it. A file that cannot be written is a warning.
fn write_retry_file(
    playbook: &Playbook,
    dir: Option<&std::path::Path>,
    states: &BTreeMap<String, HostState>,
    callback: &mut dyn Callback,
) {
    let hosts: Vec<&str> = states
        .iter()
        .filter(|(_, s)| s.failed || s.unreachable || s.excluded)
        .map(|(host, _)| host.as_str())
        .collect();
    if hosts.is_empty() {
        return;
    }
    let beside = || {
        std::path::absolute(&playbook.path)
            .ok()
            .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
            .unwrap_or_default()
    };
    let dir = dir.map_or_else(beside, std::path::Path::to_path_buf);
    let stem = playbook.path.file_stem().map(|s| s.to_string_lossy().into_owned());
    let file = dir.join(format!("{}.retry", stem.unwrap_or_default()));
    let text: String = hosts.iter().map(|h| format!("{h}\n")).collect();
    let written = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&file, text));
    match written {
        Ok(()) => callback.display(&format!("\tto retry, use: --limit @{}", file.display())),
        Err(e) => tack_diag::warn(&Diagnostic::new(format!(
            "Could not create retry file '{}'.\n\t{e}",
            file.display()
        ))),
    }
}
