//! A task of the play's setup block run on the batch's hosts through the task machinery,
//! before the play's first task even when `--start-at-task` starts later: the argument-spec
//! check (`validate_argspec`), and fact gathering when a host gathers with modules other
//! than `setup` (the `gather_facts` action then runs them). A host that fails there fails
//! as at any task; the others go on where the batch's walk left them.

use std::collections::BTreeMap;

use tack_diag::Diagnostic;
use tack_report::callback::{Callback, Stats};

use crate::context::HostState;
use crate::handlers::Handlers;
use crate::play::batch::BatchState;
use crate::play::env::PlayEnv;
use crate::play::walk::{Segment, Walk};

/// Runs `check` (the setup task's segment) on the hosts of `walk` still running, and
/// carries its failures into `walk`. True when `max_fail_percentage` or
/// `any_errors_fatal` stopped the play.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_setup_task<'r>(
    env: &PlayEnv<'r, '_>,
    state: &mut BatchState,
    check: Segment<'r>,
    walk: &mut Walk<'r>,
    handlers: &mut Handlers<'r>,
    callback: &mut dyn Callback,
    stats: &mut Stats,
    states: &mut BTreeMap<String, HostState>,
) -> Result<bool, Diagnostic> {
    let hosts: Vec<String> = walk.cursors.iter().map(|(h, _)| h.clone()).collect();
    let mut checking = Walk::new(check, &hosts);
    // A host done already (failed at gathering, say) is done here too, as it was.
    for (host, cursor) in &walk.cursors {
        if cursor.pos.is_none()
            && let Some(c) = checking.cursor_mut(host)
        {
            c.pos = None;
            c.failed = cursor.failed;
        }
    }
    let stop = crate::strategy::linear::run_rounds(
        env,
        state,
        &mut checking,
        handlers,
        callback,
        stats,
        states,
    )?;
    for (host, checked) in &checking.cursors {
        if checked.failed
            && let Some(cursor) = walk.cursor_mut(host)
        {
            cursor.pos = None;
            cursor.failed = true;
        }
    }
    env.update_play_hosts(state, &walk.cursors);
    Ok(stop)
}
