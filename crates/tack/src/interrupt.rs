//! SIGINT and SIGTERM while a command runs, as ansible-core ends on them: SIGINT prints
//! `[ERROR]: User interrupted execution` and exits 99 (no recap); SIGTERM ends the process
//! by that signal. Before either, what the run started on this machine is stopped (module
//! processes and what they started, `tack_agent::descendants`; an ssh host's agent sees its
//! link end and stops its own), and what must be put back is (`tack_diag::interrupt`: a
//! terminal's modes, a recorded run's status, which becomes `interrupted`).
//!
//! Owns catching the two signals and ending the process; what is undone belongs to whoever
//! registered it.

use std::io::Write;
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};

/// How long stopped processes get to end on SIGTERM before they are killed.
const GRACE: Duration = Duration::from_secs(2);

/// Catches SIGINT and SIGTERM from now on, on a thread of their own.
pub(crate) fn install() -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new().name("tack-signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
            end(signal);
        }
    })?;
    Ok(())
}

fn end(signal: i32) -> ! {
    let name = if signal == SIGINT { "SIGINT" } else { "SIGTERM" };
    // The run prints nothing more: a task whose module is stopped below would otherwise
    // fail, and the play go on to its recap, before this thread ends the process.
    tack_diag::interrupt::begin_ending();
    tack_agent::descendants::begin_ending();
    tack_agent::descendants::stop(GRACE);
    tack_diag::interrupt::undo_all(name);
    if signal == SIGINT {
        let mut stderr = std::io::stderr().lock();
        let rendered = tack_diag::Diagnostic::new("User interrupted execution").render();
        tack_diag::display_log::record(tack_diag::display_log::Level::Error, &rendered);
        let text = tack_diag::color::paint(&rendered, tack_diag::color::Level::Error);
        let _ = stderr.write_all(text.as_bytes());
        let _ = stderr.flush();
        std::process::exit(99);
    }
    // Ended by the signal itself, as ansible is: its default action, raised again.
    let _ = signal_hook::low_level::emulate_default_handler(SIGTERM);
    std::process::exit(128 + SIGTERM);
}
