//! How a failed command ends: the error printed in ansible's `[ERROR]:` form on stderr and the
//! exit code of its ansible error class (1 general, 4 parser, 5 options).

use std::io::Write;
use std::process::ExitCode;

use tack_diag::Diagnostic;

/// Prints `err` and returns the exit code ansible would use for it.
pub(crate) fn report(err: &anyhow::Error) -> ExitCode {
    if let Some(startup) = err.downcast_ref::<Startup>() {
        return report_startup(startup);
    }
    let diag = match err.downcast_ref::<Diagnostic>() {
        Some(diag) => diag.clone(),
        None => Diagnostic::new(format!("{err:#}")),
    };
    let mut stderr = std::io::stderr().lock();
    let rendered = diag.render();
    tack_diag::display_log::record(tack_diag::display_log::Level::Error, &rendered);
    let text = tack_diag::color::paint(&rendered, tack_diag::color::Level::Error);
    let _ = stderr.write_all(text.as_bytes());
    let _ = stderr.flush();
    ExitCode::from(diag.class.exit_code() as u8)
}

/// A configuration that could not be loaded: ansible prints `ERROR: ...` (not the `[ERROR]:`
/// block) and exits with 5 before doing anything else.
#[derive(Debug)]
pub(crate) struct Startup(pub tack_config::ConfigError);

impl From<tack_config::ConfigError> for Startup {
    fn from(err: tack_config::ConfigError) -> Startup {
        Startup(err)
    }
}

impl std::fmt::Display for Startup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.startup_message())
    }
}

impl std::error::Error for Startup {}

/// Prints a startup error and returns its exit code.
pub(crate) fn report_startup(err: &Startup) -> ExitCode {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", err.0.startup_message());
    ExitCode::from(err.0.exit_code() as u8)
}
