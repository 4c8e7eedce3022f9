//! ansible's data tags on strings: `TrustedAsTemplate` on a string the user wrote, `Origin`
//! on one read from a file (or made by a template written there, or read from the
//! environment). ansible tags the Python object itself, so a tag follows the very object
//! through variable reads, attribute and item lookups and filters that hand their input
//! back, and is lost by anything that makes a new string.
//!
//! minijinja's strings carry nothing of their own, but a string made from an `Arc<str>` keeps
//! that allocation through every clone, and a new string is a new allocation: the same rule.
//! So a tagged string is one whose allocation's address is in this registry. The registry
//! holds a `Weak` to each allocation, which keeps its memory (not its use) reserved, so no
//! other string can take an address still listed; entries whose strings are gone are swept
//! once the registry has doubled since the last sweep.
//!
//! Only strings are tagged here (ansible also tags numbers and containers); the tags are read
//! by the `ansible._protomatter` filters and tests (`engine::protomatter`), and by nothing
//! else. So a string is tagged as it is read from a variable (the data keeps where it was
//! written), and only once a template naming one of those plugins was seen ([`want`]): a run
//! that never asks pays nothing but the check. This module knows nothing of scopes or
//! templates.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, Weak};

use minijinja::Value as JValue;
use tack_diag::Origin;

/// The tags of one string.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StrTags {
    /// ansible's `TrustedAsTemplate`: written by the user, so it may be rendered.
    pub trusted: bool,
    /// ansible's `Origin`: where it was written, or what it was read from.
    pub origin: Option<Origin>,
}

type Entry = (Weak<str>, usize, StrTags);

struct Registry {
    /// Allocation address -> (the allocation, its length, its tags).
    entries: HashMap<usize, Entry, BuildHasherDefault<AddressHasher>>,
    /// The size at which the next sweep runs.
    sweep_at: usize,
}

const FIRST_SWEEP: usize = 4096;

static REGISTRY: LazyLock<Mutex<Registry>> =
    LazyLock::new(|| Mutex::new(Registry { entries: HashMap::default(), sweep_at: FIRST_SWEEP }));

/// The keys are addresses, distinct by construction and never chosen by anyone: a
/// multiplicative hash spreads them, where the default hasher's resistance to chosen keys
/// would cost a good part of a tagged string's conversion.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, address: usize) {
        // Allocations are at least 8-aligned: the low bits say nothing.
        self.0 = ((address as u64) >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

static WANTED: AtomicBool = AtomicBool::new(false);

/// Strings are tagged from now on (a template that reads tags was compiled; it has not run).
pub(crate) fn want() {
    WANTED.store(true, Ordering::Relaxed);
}

/// Whether strings are tagged as they are read.
pub(crate) fn wanted() -> bool {
    WANTED.load(Ordering::Relaxed)
}

fn registry() -> MutexGuard<'static, Registry> {
    // The registry is plain data, consistent between statements: a panic elsewhere while it
    // was held leaves it usable.
    REGISTRY.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `text` as a string carrying `tags`. A string with no tags at all is a plain value; the
/// empty string is never tagged (it has no allocation of its own to tell it apart).
pub(crate) fn tagged(text: &str, tags: StrTags) -> JValue {
    if text.is_empty() || (!tags.trusted && tags.origin.is_none()) {
        return JValue::from(text);
    }
    tagged_shared(Arc::from(text), tags)
}

/// [`tagged`] for a string already in its own allocation (which a caller may know by
/// address, as `engine::active` knows a decrypted `!vault` value): that allocation is tagged.
pub(crate) fn tagged_shared(shared: Arc<str>, tags: StrTags) -> JValue {
    if shared.is_empty() || (!tags.trusted && tags.origin.is_none()) {
        return JValue::from(shared);
    }
    let address = shared.as_ptr() as usize;
    let mut registry = registry();
    if registry.entries.len() >= registry.sweep_at {
        registry.entries.retain(|_, (weak, _, _)| weak.strong_count() > 0);
        registry.sweep_at = (registry.entries.len() * 2).max(FIRST_SWEEP);
    }
    registry.entries.insert(address, (Arc::downgrade(&shared), shared.len(), tags));
    drop(registry);
    JValue::from(shared)
}

/// A string read from a variable, tagged (the caller checked that tags are [`wanted`]).
/// Out of line, as [`with_template_origin`]: the reads that call it are hot.
#[cold]
#[inline(never)]
pub(crate) fn read(value: &JValue, trusted: bool, origin: Option<&Origin>) -> JValue {
    match value.as_str() {
        Some(text) => tagged(text, StrTags { trusted, origin: origin.cloned() }),
        None => value.clone(),
    }
}

/// The tags of `value`, when it is a tagged string.
pub(crate) fn tags_of(value: &JValue) -> Option<StrTags> {
    let text = value.as_str()?;
    if text.is_empty() {
        return None;
    }
    let registry = registry();
    let (weak, len, tags) = registry.entries.get(&(text.as_ptr() as usize))?;
    // A listed address is reserved by its `Weak`, so a live string there is that one; the
    // checks only guard against a string that has since been dropped.
    (weak.strong_count() > 0 && *len == text.len()).then(|| tags.clone())
}

/// A template's result, its string tagged with where the template was written
/// ([`with_origin_unless_tagged`]; the caller checked that tags are [`wanted`]). Out of line:
/// the reads that call it are hot, and only runs that want tags get here.
#[cold]
#[inline(never)]
pub(crate) fn with_template_origin(
    result: Result<JValue, minijinja::Error>,
    origin: Option<&Origin>,
) -> Result<JValue, minijinja::Error> {
    result.map(|value| with_origin_unless_tagged(value, origin))
}

/// `value` tagged with `origin` (where a template was written), unless it has tags of its
/// own: ansible's templar puts the template's `Origin` on a new value it made, and leaves a
/// value it handed through as it was.
pub(crate) fn with_origin_unless_tagged(value: JValue, origin: Option<&Origin>) -> JValue {
    let Some(origin) = origin.filter(|_| wanted()) else { return value };
    match value.as_str() {
        Some(text) if tags_of(&value).is_none() => {
            tagged(text, StrTags { trusted: false, origin: Some(origin.clone()) })
        }
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin::described("<test>")
    }

    #[test]
    fn a_tag_follows_clones_and_not_copies() {
        let value = tagged("hello", StrTags { trusted: true, origin: Some(origin()) });
        let clone = value.clone();
        assert_eq!(tags_of(&clone).map(|t| t.trusted), Some(true));
        let copy = JValue::from(value.as_str().unwrap_or_default().to_string());
        assert_eq!(tags_of(&copy), None);
        assert_eq!(tags_of(&JValue::from("hello")), None);
    }

    #[test]
    fn a_read_string_is_tagged_and_the_data_is_not() {
        let origin = origin();
        let value = JValue::from("read");
        let read = read(&value, true, Some(&origin));
        assert_eq!(tags_of(&read), Some(StrTags { trusted: true, origin: Some(origin) }));
        assert_eq!(tags_of(&value), None);
    }

    #[test]
    fn untagged_and_empty_strings_stay_plain() {
        assert_eq!(tags_of(&tagged("x", StrTags { trusted: false, origin: None })), None);
        assert_eq!(tags_of(&tagged("", StrTags { trusted: true, origin: None })), None);
    }

    #[test]
    fn a_dropped_string_loses_its_entry_at_a_sweep() {
        for i in 0..(FIRST_SWEEP * 3) {
            drop(tagged(&format!("s{i}"), StrTags { trusted: true, origin: None }));
        }
        let kept = tagged("kept", StrTags { trusted: true, origin: None });
        assert!(registry().entries.len() < FIRST_SWEEP * 3);
        assert!(tags_of(&kept).is_some());
    }

    #[test]
    fn a_template_origin_goes_only_on_untagged_strings() {
        want();
        let mine = Origin::described("<mine>");
        let plain = with_origin_unless_tagged(JValue::from("made"), Some(&mine));
        assert_eq!(tags_of(&plain).and_then(|t| t.origin), Some(mine.clone()));
        let written = tagged("written", StrTags { trusted: true, origin: Some(origin()) });
        let kept = with_origin_unless_tagged(written, Some(&mine));
        assert_eq!(tags_of(&kept).and_then(|t| t.origin), Some(origin()));
        assert_eq!(tags_of(&with_origin_unless_tagged(JValue::from(1), Some(&mine))), None);
    }
}
