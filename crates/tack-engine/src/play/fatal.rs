//! What the `linear` strategy does after a task's results are in, beyond each host's own
//! result: `any_errors_fatal` and `run_once` failing every other host of the batch (each
//! going to its rescue if it is in one), and `max_fail_percentage` ending the play.
//! (The task's `run_once` and `any_errors_fatal` are read once per round, for the first
//! host, by `crate::play::env`.)
//!
//! Moves hosts only through the play's [`Walk`]; prints only the `NO MORE HOSTS LEFT`
//! banner.

use tack_report::callback::Callback;
use tack_report::result::HostResult;

use crate::play::batch::BatchState;
use crate::play::cursor::HostCursor;
use crate::play::env::{Controls, PlayEnv};
use crate::play::walk::{Round, Walk};

/// What the strategy needs of one host's result.
pub(crate) struct RoundResult {
    pub host: String,
    /// Failed, ignored or not (ansible's `failed_hosts` list counts ignored failures).
    pub failed: bool,
    /// Unreachable, not ignored (it arms `any_errors_fatal` as a failure does).
    pub unreachable: bool,
    pub ignore_errors: bool,
}

impl RoundResult {
    pub(crate) fn of(host: &str, result: &HostResult, task_ignores: bool) -> RoundResult {
        RoundResult {
            host: host.to_string(),
            failed: result.flag("failed"),
            unreachable: result.lost(),
            ignore_errors: result.ignored || task_ignores,
        }
    }
}

/// Fails `host` where it stands without a result of its own (ansible's `mark_host_failed`):
/// into the rescue of the block it is in (unless `past_rescue`: ansible's removed hosts,
/// which run `always` sections but no rescue), else out of the play. A host that just ran
/// the round's task still stands in that task's block (ansible's iterator moves on to the
/// next block only when asked for the next task).
fn fail_where_it_stands(
    state: &mut BatchState,
    host: &str,
    round: &Round,
    walk: &mut Walk<'_>,
    past_rescue: bool,
) {
    // A host that failed before the play is not in the walk and stays as it is.
    if walk.cursor(host).is_none() {
        return;
    }
    state.forced.insert(host.to_string());
    if !walk.is_running(host) {
        return;
    }
    let at = if round.hosts.iter().any(|h| h == host) {
        Some((round.seg, round.next))
    } else {
        walk.at(host)
    };
    match at {
        Some((seg, next)) if past_rescue => walk.fail_past_rescue(host, seg, next),
        Some((seg, next)) => walk.advance(host, seg, next, true),
        None => {}
    }
}

/// The checks ansible's linear strategy makes once a round's results are in; `true` when the
/// play must stop (`max_fail_percentage` was passed).
pub(crate) fn after_round(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    controls: &Controls,
    results: &[RoundResult],
    round: &Round,
    walk: &mut Walk<'_>,
    callback: &mut dyn Callback,
) -> bool {
    // Unreachable hosts leave the play where they stand: no rescue, no always.
    let lost = state.lost.clone();
    for host in &lost {
        walk.finish(host);
    }
    let failed: Vec<&str> = results.iter().filter(|r| r.failed).map(|r| r.host.as_str()).collect();
    // As in ansible, any result not ignoring errors arms the check, and any failed or
    // unreachable result (even an ignored failure) fires it.
    let armed = (controls.any_errors_fatal || controls.run_once)
        && results.iter().any(|r| !r.ignore_errors);
    if armed && (!failed.is_empty() || results.iter().any(|r| r.unreachable)) {
        // A failed `run_once` result fails every other host: ansible marks them failed and
        // leaves them among its removed hosts, which run `always` sections but no rescue
        // (only the host that ran it may be rescued).
        let remove = controls.run_once && !controls.any_errors_fatal;
        for host in &env.hosts {
            if failed.contains(&host.as_str()) || lost.contains(host) {
                continue;
            }
            fail_where_it_stands(state, host, round, walk, remove);
        }
    }
    let Some(fraction) = env.max_fail else { return false };
    if results.is_empty() {
        return false;
    }
    let count = env
        .hosts
        .iter()
        .filter(|h| {
            // This round's failures count though `force_handlers` kept them going (ignored
            // ones never count: ansible's failed hosts leave them out).
            results.iter().any(|r| r.host == **h && r.failed && !r.ignore_errors)
                || state.forced.contains(*h)
                || state.excluded.contains(*h)
                || walk.cursor(h).is_some_and(|c| c.failed)
        })
        .count();
    if !crate::play::batches::over_max_fail(count, env.hosts.len(), fraction) {
        return false;
    }
    for host in &env.hosts {
        if !failed.contains(&host.as_str()) {
            fail_where_it_stands(state, host, round, walk, false);
        }
    }
    // ansible sends the banner when the percentage is passed, and again when it then
    // finds every host failed.
    callback.no_hosts_remaining();
    callback.no_hosts_remaining();
    true
}

/// The same checks after a handler ran in a flush (the hosts then are only positions: a host
/// failed there leaves the play, as a failed handler does). `true` when the play must stop.
pub(crate) fn after_handler(
    env: &PlayEnv<'_, '_>,
    state: &mut BatchState,
    controls: &Controls,
    results: &[RoundResult],
    cursors: &mut [(String, HostCursor)],
    callback: &mut dyn Callback,
) -> bool {
    if env.free {
        return false;
    }
    let failed: Vec<&str> = results.iter().filter(|r| r.failed).map(|r| r.host.as_str()).collect();
    let fail_others = |forced: &mut std::collections::BTreeSet<String>,
                       cursors: &mut [(String, HostCursor)]| {
        for (host, cursor) in cursors.iter_mut() {
            if !failed.contains(&host.as_str()) {
                forced.insert(host.clone());
                if !cursor.failed {
                    cursor.pos = None;
                    cursor.failed = true;
                }
            }
        }
    };
    let armed = (controls.any_errors_fatal || controls.run_once)
        && results.iter().any(|r| !r.ignore_errors);
    if armed && !failed.is_empty() {
        fail_others(&mut state.forced, cursors);
    }
    let Some(fraction) = env.max_fail else { return false };
    if results.is_empty() {
        return false;
    }
    let count = env
        .hosts
        .iter()
        .filter(|h| {
            state.forced.contains(*h)
                || state.excluded.contains(*h)
                || cursors.iter().any(|(c, cur)| c == *h && cur.failed)
        })
        .count();
    if !crate::play::batches::over_max_fail(count, env.hosts.len(), fraction) {
        return false;
    }
    fail_others(&mut state.forced, cursors);
    callback.no_hosts_remaining();
    callback.no_hosts_remaining();
    state.stopped = true;
    true
}
