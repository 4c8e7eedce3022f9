//! Python's `MemoryError` for a string a template asks to be made absurdly large
//! (`'x'.center(10**10)`, `'%10000000000s' % x`, `to_json(indent=10**10)`): ansible's
//! template fails with it ("Error rendering template."), where allocating the string would
//! abort the whole run. A string over [`MAX_STRING`] is refused before it is allocated.
//!
//! The padding and formatting helpers that make such strings are infallible all the way
//! down, as Python's are; the refusal unwinds with [`MemoryError`], as Python raises from
//! wherever its allocation fails, and the engine's boundary around every render
//! (`engine::panicked`) turns it into the template's error.

/// The largest string a template may make (2 GiB): ansible made a 1 GB `to_json` on a
/// machine of this kind; ten times that failed.
pub(crate) const MAX_STRING: usize = 1 << 31;

/// The detail of the engine's error for a refused allocation (`engine::errors` says it as
/// ansible does: the template's error, with nothing after it).
pub(crate) const DETAIL: &str = "<MemoryError>";

/// The unwinding payload of a refused allocation.
pub(crate) struct MemoryError;

/// Unwinds with [`MemoryError`] when a string of `bytes` would be too large.
pub(crate) fn room_for(bytes: Option<usize>) {
    if bytes.is_none_or(|b| b > MAX_STRING) {
        std::panic::resume_unwind(Box::new(MemoryError));
    }
}

/// `s` repeated `n` times, within [`MAX_STRING`].
pub(crate) fn repeat(s: &str, n: usize) -> String {
    room_for(s.len().checked_mul(n));
    s.repeat(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_too_large_unwinds_with_memory_error_before_allocating() {
        assert_eq!(repeat("ab", 3), "ababab");
        let caught = std::panic::catch_unwind(|| repeat("x", MAX_STRING + 1)).unwrap_err();
        assert!(caught.is::<MemoryError>());
        let caught = std::panic::catch_unwind(|| repeat("xy", usize::MAX)).unwrap_err();
        assert!(caught.is::<MemoryError>());
    }
}
