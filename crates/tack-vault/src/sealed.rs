//! The secrets this process has seen in clear, kept so that whoever writes a run somewhere
//! lasting (the events file, and through it the run store, the API and the run page) can mask
//! them wherever they ended up, and so that a value holding one is known to hold a secret when
//! a template reads it.
//!
//! What enters: the plaintext of every inline `!vault` value decrypted, every string of a
//! whole-file vault loaded as variables (and the file itself, as a path), the text of a
//! vaulted file read whole (`file` and `unvault` lookups, `copy` and `template` sources), and
//! what callers derive from those (a value a sealed render made, the output of a task whose
//! input held one). A multi-line text enters line by line as well, so a line of it printed
//! alone is masked too.
//!
//! The masking rule, chosen so that masking never becomes an oracle: a secret of at least
//! [`EMBEDDED_MIN`] characters is masked wherever it occurs inside a text; a shorter one only
//! where a whole text equals it (masking `ab` inside `absolutely` would both reveal the secret
//! and mangle the word). For the same reason only the longer ones mark a value that contains
//! them as sealed: a short text is too likely to be ordinary.
//!
//! Kept only in memory, for the life of the process; nothing here is ever written out.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use aho_corasick::{AhoCorasick, MatchKind};

/// The mask written in place of a secret.
pub const MASK: &str = "********";

/// Secrets shorter than this (in characters) are masked only as whole texts.
pub const EMBEDDED_MIN: usize = 6;

#[derive(Default)]
struct Registry {
    texts: HashSet<Arc<str>>,
    /// The texts to look for inside others: at least [`EMBEDDED_MIN`] characters.
    embedded: Vec<Arc<str>>,
    /// One automaton over `embedded` (leftmost-longest: a longer secret is masked whole
    /// before a shorter one inside it), built when first needed after a change: a text is
    /// searched once for every secret together, however many the run holds.
    automaton: Option<AhoCorasick>,
    files: HashSet<PathBuf>,
}

impl Registry {
    fn automaton(&mut self) -> Option<&AhoCorasick> {
        if self.automaton.is_none() && !self.embedded.is_empty() {
            let built = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(self.embedded.iter().map(|t| t.as_bytes()));
            // Building fails only past the automaton's size limits; the secrets are then
            // searched one by one (`search_each`).
            self.automaton = built.ok();
        }
        self.automaton.as_ref()
    }
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

/// Bumped on every addition: a cached answer made at an older generation is asked again.
static GENERATION: AtomicU64 = AtomicU64::new(0);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    // A poisoned lock still holds a usable registry: a panic elsewhere must not stop masking.
    REGISTRY.lock().unwrap_or_else(PoisonError::into_inner)
}

fn is_long(text: &str) -> bool {
    text.chars().nth(EMBEDDED_MIN - 1).is_some()
}

/// Adds `text`; whether that changed what [`holds_secret`] answers (a long text: a short one
/// only masks whole texts, so values read before need not be asked again).
fn add(registry: &mut Registry, text: &str) -> bool {
    if text.trim().is_empty() || registry.texts.contains(text) {
        return false;
    }
    let text: Arc<str> = Arc::from(text);
    registry.texts.insert(text.clone());
    // A secret the mask itself contains is masked whole only (searching for it inside
    // texts would find it again in every mask written).
    if !is_long(&text) || MASK.contains(&*text) {
        return false;
    }
    registry.embedded.push(text);
    registry.automaton = None;
    true
}

/// Remembers `text` as a secret, and each of its lines when it has several (with and
/// without surrounding blanks, as a line is printed either way).
pub fn remember(text: &str) {
    let mut guard = registry();
    let registry = guard.get_or_insert_with(Registry::default);
    let mut added = add(registry, text);
    added |= add(registry, text.trim());
    // A short secret still makes the registry non-empty.
    if GENERATION.load(Ordering::Acquire) == 0 {
        added = true;
    }
    if text.trim().contains('\n') {
        for line in text.lines() {
            added |= add(registry, line);
            added |= add(registry, line.trim());
        }
    }
    if added {
        GENERATION.fetch_add(1, Ordering::Release);
    }
}

/// Remembers a decrypted plaintext: the text itself, and its base64 form (what `slurp`
/// reads back of a copy of it).
pub fn remember_file_text(text: &str) {
    remember(text);
    remember(&base64(text.as_bytes()));
}

/// Remembers that the variables loaded from `path` came from a whole-file vault: any value
/// carrying that file as its origin is a secret, however short.
pub fn remember_file(path: &Path) {
    let mut guard = registry();
    let registry = guard.get_or_insert_with(Registry::default);
    if registry.files.insert(path.to_path_buf()) {
        GENERATION.fetch_add(1, Ordering::Release);
    }
}

/// Whether anything has been remembered yet (the common case, a run without vault, is
/// answered without a lock).
pub fn is_empty() -> bool {
    GENERATION.load(Ordering::Acquire) == 0
}

/// The registry's generation: it changes whenever something is remembered.
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Whether `text` holds a secret long enough to tell apart from ordinary text (see the
/// module's rule): a value holding it is sealed when read.
pub fn holds_secret(text: &str) -> bool {
    if is_empty() || text.len() < EMBEDDED_MIN {
        return false;
    }
    let mut guard = registry();
    let Some(registry) = guard.as_mut() else { return false };
    if registry.texts.contains(text) {
        return true;
    }
    match registry.automaton() {
        Some(automaton) => automaton.is_match(text),
        None => search_each(&registry.embedded, text).is_some(),
    }
}

/// The longest of `secrets` in `text`, searched one by one (when no automaton was built).
fn search_each<'a>(secrets: &'a [Arc<str>], text: &str) -> Option<&'a Arc<str>> {
    secrets.iter().filter(|s| text.contains(&***s)).max_by_key(|s| s.len())
}

/// Whether `path` is a whole-file vault whose variables were loaded.
pub fn is_vaulted_file(path: &Path) -> bool {
    if is_empty() {
        return false;
    }
    registry().as_ref().is_some_and(|r| r.files.contains(path))
}

/// `text` with every secret in it masked by the module's rule; `None` when nothing was.
pub fn mask(text: &str) -> Option<String> {
    if is_empty() {
        return None;
    }
    let mut guard = registry();
    let registry = guard.as_mut()?;
    if registry.texts.contains(text) || registry.texts.contains(text.trim()) {
        return Some(MASK.to_string());
    }
    if let Some(automaton) = registry.automaton() {
        if !automaton.is_match(text) {
            return None;
        }
        let masks = vec![MASK; automaton.patterns_len()];
        return Some(automaton.replace_all(text, &masks));
    }
    let mut out: Option<String> = None;
    while let Some(secret) = search_each(&registry.embedded, out.as_deref().unwrap_or(text)) {
        out = Some(out.as_deref().unwrap_or(text).replace(&**secret, MASK));
    }
    out
}

/// A line of a run's printed transcript with every secret in it masked: as [`mask`] does,
/// and a short secret also where the line shows it as a whole value (`"ab"`, `'ab'`,
/// `(item=ab)`), the forms a printed result gives a value of its own; never inside a word.
pub fn mask_printed(line: &str) -> Option<String> {
    if is_empty() {
        return None;
    }
    let mut out = mask(line);
    let shorts: Vec<Arc<str>> = {
        let guard = registry();
        let Some(registry) = guard.as_ref() else { return out };
        registry
            .texts
            .iter()
            .filter(|t| !t.is_empty() && t.chars().count() < EMBEDDED_MIN)
            .filter(|t| !t.contains(['"', '\'', '\\', '(', ')', '\n']))
            .cloned()
            .collect()
    };
    for short in shorts {
        let current = out.as_deref().unwrap_or(line);
        let mut changed = current.to_string();
        for (open, close, masked) in [
            ("\"", "\"", format!("\"{MASK}\"")),
            ("'", "'", format!("'{MASK}'")),
            ("(item=", ")", format!("(item={MASK})")),
        ] {
            changed = changed.replace(&format!("{open}{short}{close}"), &masked);
        }
        if changed != current {
            out = Some(changed);
        }
    }
    out
}

/// Standard base64 with padding, as Python's `base64.b64encode` writes it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // One process-wide registry: each test uses texts of its own.

    #[test]
    fn long_secrets_are_masked_inside_texts_and_short_ones_only_whole() {
        remember("long-secret-one");
        remember("ab");
        assert_eq!(mask("x long-secret-one y").as_deref(), Some("x ******** y"));
        assert_eq!(mask("absolutely"), None);
        assert_eq!(mask("ab").as_deref(), Some(MASK));
        assert!(holds_secret("say long-secret-one"));
        assert!(!holds_secret("ab"));
    }

    #[test]
    fn a_printed_line_masks_a_short_secret_shown_as_a_value_of_its_own() {
        remember("zq");
        remember("printed-secret-123");
        assert_eq!(
            mask_printed("    \"msg\": \"zq\"\n").as_deref(),
            Some("    \"msg\": \"********\"\n")
        );
        assert_eq!(
            mask_printed("ok: [h1] => (item=zq)\n").as_deref(),
            Some("ok: [h1] => (item=********)\n")
        );
        assert_eq!(mask_printed("    \"msg\": \"zqx zq\"\n"), None);
        assert_eq!(
            mask_printed("x printed-secret-123 'zq'").as_deref(),
            Some("x ******** '********'")
        );
    }

    #[test]
    fn the_lines_of_a_multi_line_secret_are_secrets() {
        remember("first-line-xyz\nsecond-line-xyz\n");
        assert_eq!(mask("  second-line-xyz").as_deref(), Some(MASK));
        assert_eq!(mask("got second-line-xyz!").as_deref(), Some("got ********!"));
    }

    #[test]
    fn the_longest_secret_is_masked_whole() {
        remember("outer-secret-inner-part");
        remember("inner-part");
        assert_eq!(
            mask("[outer-secret-inner-part] inner-part").as_deref(),
            Some("[********] ********")
        );
    }

    #[test]
    fn a_file_text_is_known_in_base64_too() {
        remember_file_text("file-secret-123\n");
        assert_eq!(base64(b"file-secret-123\n"), "ZmlsZS1zZWNyZXQtMTIzCg==");
        assert_eq!(mask("ZmlsZS1zZWNyZXQtMTIzCg==").as_deref(), Some(MASK));
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
    }
}
