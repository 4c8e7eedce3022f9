//! What `tack playbook` prints itself at `-vvv` and `-vvvv`: the inventory's notes (the
//! plugins that declined or parsed each source) after the header, and the `-vvvv` text the
//! default callback shows (where the callback comes from, the command line's arguments).
//!
//! The callback-plugin line names tack's own binary where ansible names its Python file (the
//! golden harness writes that value `<INSTALL>`, as for the `-vv` version block).

use std::io::Write;

use tack_report::callback::color::{Hue, Palette, paint};
use tack_report::callback::verbose::VerboseExtras;

use super::Args;
use crate::session::Session;

/// Writes the inventory's notes that `verbosity` shows.
pub(crate) fn inventory_notes(
    out: &mut impl Write,
    session: &Session,
    verbosity: u8,
    palette: Option<&Palette>,
) -> std::io::Result<()> {
    for (level, note) in session.inventory.verbose_notes() {
        if tack_diag::display_log::verbose_shown(*level, verbosity, note) {
            writeln!(out, "{}", paint(palette, note, Hue::Verbose))?;
        }
    }
    Ok(())
}

/// The `-vvvv` text for the callback.
/// Made for the log's verbosity too when it is higher (`log_verbosity`): the callback logs
/// what it does not show.
pub(crate) fn extras(args: &Args, session: &Session) -> VerboseExtras {
    let noted = tack_diag::display_log::noted_verbosity(args.verbosity.verbose);
    if noted < 4 {
        return VerboseExtras::default();
    }
    let cli_args = super::cliargs::lines(args, &session.config, session.inventory.sources());
    let exe = std::env::current_exe().map(|p| p.display().to_string()).unwrap_or_default();
    let attempted_callbacks = if noted >= 5 {
        let cwd = std::env::current_dir().unwrap_or_default();
        let dirs: Vec<std::path::PathBuf> = args
            .playbooks
            .iter()
            .filter_map(|p| {
                tack_py::path::normpath(&cwd.join(p)).parent().map(std::path::Path::to_path_buf)
            })
            .collect();
        super::callback::attempted_callbacks(&session.config, &dirs, "default")
    } else {
        Vec::new()
    };
    VerboseExtras { callback_origin: format!("{exe} (built in)"), cli_args, attempted_callbacks }
}
