//! Python patterns as the host's Python reads them. ansible's modules compile their patterns
//! with the interpreter that runs them: from 3.11 on, a global flags group (`(?i)`) anywhere
//! but at the start is an error; before, it applies to the whole pattern (with a warning
//! nobody sees). Roles written for older hosts rely on the latter (`'^(?i)Option'`), so the
//! host's `python3` decides, asked only when a pattern needs it.

use tack_py::re::{Flags, GLOBAL_FLAGS_NOT_AT_START, PyRegex};

/// `re.compile(pattern, flags)` on the host's Python.
pub(crate) fn compile(pattern: &str, flags: Flags) -> Result<PyRegex, String> {
    match PyRegex::new(pattern, flags) {
        Err(e) if e.starts_with(GLOBAL_FLAGS_NOT_AT_START) && !refuses_global_flags() => {
            PyRegex::new_before_3_11(pattern, flags)
        }
        compiled => compiled,
    }
}

/// Whether the host's Python is 3.11 or later. Without one, the pattern is read as the older
/// Pythons read it: tack's modules need none, and the pattern then still means what its
/// author meant.
fn refuses_global_flags() -> bool {
    let Some(info) = super::setup::system::python_info(None) else { return false };
    let mut parts = info.version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (3, 11)
}
