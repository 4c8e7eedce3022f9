//! `forks` and `throttle`: a task's hosts run on up to that many threads at once, while the
//! coordinating thread takes their outcomes in the hosts' order and hands each to the
//! strategy and the callback.
//!
//! The transcript is the one `-f 1` gives: ansible prints results as workers finish, so with
//! several forks its order depends on timing; tack picks the one order that is always among
//! ansible's possible ones, the hosts' own. A host's outcome is shown as soon as it and every
//! host before it are done; the lines a host makes on the way (a loop's items) are shown as
//! they are made while it is the first host not done ([`run_hosts_streaming`]).
//!
//! Owns only the scheduling. What a host runs (a task's `TaskRun::run`, or `setup`) and what
//! its outcome does to the play are the caller's. Nothing here prints.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use tack_diag::Diagnostic;

/// How many hosts may run the task at once: `forks`, capped by a positive `throttle`, and
/// never more than there are hosts.
pub(crate) fn width(forks: i64, throttle: i64, hosts: usize) -> usize {
    let forks = usize::try_from(forks).unwrap_or(1).max(1);
    let capped = match usize::try_from(throttle) {
        Ok(t) if t > 0 => forks.min(t),
        _ => forks,
    };
    capped.min(hosts).max(1)
}

/// Runs `work` on every host, `width` at a time, and gives each outcome to `each` in the
/// hosts' order. When `each` fails, no host that has not started yet starts; the ones running
/// finish (a module half-way through its change is never abandoned) and their outcomes are
/// dropped, as the strategy that stopped no longer looks at them.
pub(crate) fn run_hosts<T: Send>(
    hosts: &[String],
    width: usize,
    work: impl Fn(&str) -> T + Sync,
    mut each: impl FnMut(&str, Note<(), T>) -> Result<(), Diagnostic>,
) -> Result<(), Diagnostic> {
    // Work that makes no lines on the way: only its start and outcome reach `each`.
    let work = |host: &str, _: &dyn Fn(())| work(host);
    run_hosts_streaming(hosts, (width, width), work, |host, note| match note {
        Note::Line(()) => Ok(()),
        other => each(host, other),
    })
}

/// What [`run_hosts_streaming`] hands on of one host: that its work was handed to a worker,
/// a line its work made on the way, or its outcome.
pub(crate) enum Note<E, T> {
    /// The host's work was queued, as ansible's strategy queues it to a free worker (its
    /// `v2_runner_on_start`): the first `width` hosts at once, then each as an earlier host's
    /// work ends, after that host's lines and before its outcome (ansible queues the next
    /// host as soon as a worker exits, before it processes that worker's result).
    Start,
    Line(E),
    Done(T),
}

/// [`run_hosts`] for work that makes lines on the way (a loop's items): `work` gets a sink
/// for them, and `each` gets every host's lines and then its outcome, in the hosts' order. A
/// line reaches `each` as soon as its host is the first not done; a later host's lines wait
/// until every host before it is done, and then come in the order they were made.
pub(crate) fn run_hosts_streaming<E: Send, T: Send>(
    hosts: &[String],
    (width, window): (usize, usize),
    work: impl Fn(&str, &dyn Fn(E)) -> T + Sync,
    mut each: impl FnMut(&str, Note<E, T>) -> Result<(), Diagnostic>,
) -> Result<(), Diagnostic> {
    // Starts follow the configured forks (`window`), whatever the work's own width.
    let window = window.max(1);
    if width <= 1 || hosts.len() <= 1 {
        for host in hosts.iter().take(window) {
            each(host, Note::Start)?;
        }
        for (index, host) in hosts.iter().enumerate() {
            // The work runs here: its lines go to `each` at once (the first failure kept,
            // the work itself not cut short).
            let shared = std::cell::RefCell::new((&mut each, None::<Diagnostic>));
            let sink = |line: E| {
                let mut guard = shared.borrow_mut();
                let (each, failed) = &mut *guard;
                if failed.is_none()
                    && let Err(diag) = each(host, Note::Line(line))
                {
                    *failed = Some(diag);
                }
            };
            let outcome = work(host, &sink);
            let (each, failed) = shared.into_inner();
            if let Some(diag) = failed {
                return Err(diag);
            }
            if let Some(next) = hosts.get(index + window) {
                each(next, Note::Start)?;
            }
            each(host, Note::Done(outcome))?;
        }
        return Ok(());
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|threads| {
        let (send, receive) = mpsc::channel::<(usize, Note<E, T>)>();
        for _ in 0..width {
            let send = send.clone();
            let (next, stop, work) = (&next, &stop, &work);
            threads.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    tack_diag::interrupt::hold_if_ending();
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(host) = hosts.get(index) else { break };
                    let lines = send.clone();
                    let sink = move |line: E| {
                        let _ = lines.send((index, Note::Line(line)));
                    };
                    if send.send((index, Note::Done(work(host, &sink)))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        // Starts go out in the hosts' order, as workers free up (see `Note::Start`).
        for host in hosts.iter().take(window) {
            if let Err(diag) = each(host, Note::Start) {
                stop.store(true, Ordering::Relaxed);
                return Err(diag);
            }
        }
        let mut waiting: BTreeMap<usize, Vec<Note<E, T>>> = BTreeMap::new();
        let mut shown = 0;
        for (index, note) in receive {
            waiting.entry(index).or_default().push(note);
            // Everything the first host not done has made goes out, and when that was its
            // outcome, the next host's in turn.
            while let Some(notes) = waiting.remove(&shown) {
                let mut done = false;
                for note in notes {
                    if matches!(note, Note::Done(_)) {
                        done = true;
                        if let Some(next) = hosts.get(shown + window)
                            && let Err(diag) = each(next, Note::Start)
                        {
                            stop.store(true, Ordering::Relaxed);
                            return Err(diag);
                        }
                    }
                    if let Err(diag) = each(&hosts[shown], note) {
                        stop.store(true, Ordering::Relaxed);
                        return Err(diag);
                    }
                }
                if !done {
                    break;
                }
                shown += 1;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::width;

    #[test]
    fn width_is_forks_capped_by_throttle_and_hosts() {
        assert_eq!(width(5, 0, 10), 5);
        assert_eq!(width(5, 2, 10), 2);
        assert_eq!(width(5, 9, 10), 5);
        assert_eq!(width(5, 0, 3), 3);
        assert_eq!(width(0, 0, 3), 1);
        assert_eq!(width(1, 0, 3), 1);
        assert_eq!(width(5, -1, 10), 5);
    }

    #[test]
    fn lines_come_in_the_hosts_order_each_before_its_outcome() {
        use super::{Note, run_hosts_streaming};
        let hosts: Vec<String> = (0..6).map(|i| format!("h{i}")).collect();
        for width in [1, 3] {
            let mut seen = Vec::new();
            run_hosts_streaming(
                &hosts,
                (width, width),
                |host, sink| {
                    // Later hosts finish first.
                    let n: u64 = host[1..].parse().unwrap();
                    for item in 0..3 {
                        std::thread::sleep(std::time::Duration::from_millis(6 - n));
                        sink(format!("{host}:{item}"));
                    }
                    format!("{host} done")
                },
                |host, note| {
                    seen.push(match note {
                        Note::Start => format!("{host} start"),
                        Note::Line(line) => line,
                        Note::Done(outcome) => outcome,
                    });
                    assert!(seen.last().unwrap().starts_with(host));
                    Ok(())
                },
            )
            .unwrap();
            // The first `width` hosts start at once; each later one as an earlier one is done.
            let mut want: Vec<String> =
                hosts.iter().take(width).map(|h| format!("{h} start")).collect();
            for (i, h) in hosts.iter().enumerate() {
                want.extend((0..3).map(|n| format!("{h}:{n}")));
                if let Some(next) = hosts.get(i + width) {
                    want.push(format!("{next} start"));
                }
                want.push(format!("{h} done"));
            }
            assert_eq!(seen, want, "width {width}");
        }
    }
}
