//! How a failed command ends: the error printed in ansible's `[ERROR]:` form on stderr and the
//! exit code of its ansible error class (1 general, 4 parser, 5 options).

use std::io::Write;
use std::process::ExitCode;

use tack_diag::Diagnostic;

/// Prints `err` and returns the exit code ansible would use for it.
pub fn report(err: &anyhow::Error) -> ExitCode {
    let diag = match err.downcast_ref::<Diagnostic>() {
        Some(diag) => diag.clone(),
        None => Diagnostic::new(format!("{err:#}")),
    };
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(diag.render().as_bytes());
    let _ = stderr.flush();
    ExitCode::from(diag.class.exit_code() as u8)
}
