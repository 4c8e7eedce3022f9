//! What the renders running on this thread have in common: the provenances read so far, the
//! template variables being rendered (to detect recursion), and each render's emitted nodes.
//!
//! minijinja calls back into tack from places that carry no context of ours (an object's
//! `get_value`, the formatter), and rendering is synchronous on one thread, so this state is a
//! thread-local stack, as ansible keeps its own in a context variable. It holds no variables and
//! no secrets; it must not outlive the top-level render that created it.

use std::cell::RefCell;

use minijinja::{Error, Value as JValue};
use std::sync::Arc;

use crate::vars::{Provenance, ProvenanceSet};

/// Nesting deeper than this is taken as a recursive loop; ansible hits Python's recursion
/// limit at a similar depth of template-valued variables.
const MAX_NESTING: usize = 200;

#[derive(Default)]
struct Top {
    provenance: ProvenanceSet,
    /// Identity (address) of each template string currently being rendered.
    resolving: Vec<usize>,
    /// The strings decrypted from `!vault` values so far (kept alive, so their addresses
    /// identify them), for the `vault_encrypted` test.
    decrypted: Vec<JValue>,
    /// The deprecations of variables this render has shown: ansible shows each once per
    /// templating operation, where it was first read.
    deprecations: Vec<String>,
}

thread_local! {
    static TOPS: RefCell<Vec<Top>> = const { RefCell::new(Vec::new()) };
    static EMITS: RefCell<Vec<Emits>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` as a top-level render: provenance starts empty and is returned with the result.
pub(crate) fn top_level<R>(f: impl FnOnce() -> R) -> (R, ProvenanceSet) {
    TOPS.with(|t| t.borrow_mut().push(Top::default()));
    LAST_MISS.with(|m| *m.borrow_mut() = None);
    // An `undef()` of an earlier render explains nothing in this one.
    crate::undef_hint::clear();
    let result = super::chosen::watching(f);
    let top = TOPS.with(|t| {
        let mut tops = t.borrow_mut();
        let top = tops.pop().unwrap_or_default();
        // A render inside another (a lookup's, a variable's) hands on that it read a secret,
        // so the outer result is known to hold one too.
        if (!top.decrypted.is_empty() || top.provenance.is_sealed())
            && let Some(outer) = tops.last_mut()
        {
            outer.provenance.mark_sealed();
        }
        top
    });
    let mut provenance = top.provenance;
    if !top.decrypted.is_empty() {
        provenance.mark_sealed();
    }
    (result, provenance)
}

/// Notes that the current render read a value of this provenance.
pub(crate) fn record(provenance: &Provenance) {
    if matches!(provenance, Provenance::Trusted) {
        return;
    }
    if matches!(provenance, Provenance::ManagedHost) {
        super::chosen::host_value_read();
    }
    TOPS.with(|t| {
        if let Some(top) = t.borrow_mut().last_mut() {
            top.provenance.add(provenance);
        }
    });
}

/// Notes that the current render read a secret that is not a `!vault` value of its own (a
/// whole-file vault's value, a vaulted file, a value derived from a secret): what it makes
/// is sealed.
pub(crate) fn seal() {
    TOPS.with(|t| {
        if let Some(top) = t.borrow_mut().last_mut() {
            top.provenance.mark_sealed();
        }
    });
}

/// Notes that `value` (a string in its own allocation) is the plaintext of a `!vault` value.
pub(crate) fn decrypted(value: &JValue) {
    TOPS.with(|t| {
        if let Some(top) = t.borrow_mut().last_mut() {
            top.decrypted.push(value.clone());
        }
    });
}

/// Whether `value` is a `!vault` value's plaintext as it was read (not a copy or a string
/// computed from it): ansible's vault values keep their tag only while passed along as such.
pub(crate) fn is_decrypted(value: &JValue) -> bool {
    let Some(text) = value.as_str() else { return false };
    TOPS.with(|t| {
        t.borrow().last().is_some_and(|top| {
            top.decrypted.iter().any(|d| {
                d.as_str().is_some_and(|s| {
                    std::ptr::eq(s.as_ptr(), text.as_ptr()) && s.len() == text.len()
                })
            })
        })
    })
}

/// The error ansible reports when a variable's template refers back to itself.
pub(crate) const RECURSION_MESSAGE: &str =
    "Recursive loop detected in template: maximum recursion depth exceeded";

/// Runs `f` while the template string with identity `id` is being rendered; `Err` if it
/// already is (a variable whose value refers back to itself) or nesting is too deep.
pub(crate) fn resolving<R>(id: usize, f: impl FnOnce() -> R) -> Result<R, &'static str> {
    let entered = TOPS.with(|t| {
        let mut tops = t.borrow_mut();
        let Some(top) = tops.last_mut() else { return true };
        if top.resolving.contains(&id) || top.resolving.len() >= MAX_NESTING {
            return false;
        }
        top.resolving.push(id);
        true
    });
    if !entered {
        return Err(RECURSION_MESSAGE);
    }
    let result = f();
    TOPS.with(|t| {
        if let Some(top) = t.borrow_mut().last_mut() {
            top.resolving.retain(|x| *x != id);
        }
    });
    Ok(result)
}

/// The nodes one render emitted, as far as native typing needs them.
#[derive(Default, Debug)]
pub(crate) struct Emits {
    /// Expression results other than `None` and `omit`.
    pub count: usize,
    /// The first such result and the length of the text written for it.
    pub first: Option<(JValue, usize)>,
    /// Whether any expression yielded `omit`.
    pub omit: bool,
    /// Results whose text was left for later (`hostvars` and its hosts' views, which stay
    /// lazy as a whole value): each is written as [`deferred_marker`] of its index, and
    /// turned into text only if the render's text is what it gives.
    pub deferred: Vec<JValue>,
}

/// What stands in a render's text for deferred result `index` until its text is wanted.
pub(crate) fn deferred_marker(index: usize) -> String {
    format!("\u{1a}tack-deferred:{index}\u{1a}")
}

/// Runs one render, collecting what its `{{ }}` blocks emit.
pub(crate) fn collecting<R>(f: impl FnOnce() -> R) -> (R, Emits) {
    EMITS.with(|e| e.borrow_mut().push(Emits::default()));
    let result = f();
    let emits = EMITS.with(|e| e.borrow_mut().pop()).unwrap_or_default();
    (result, emits)
}

/// Called by the formatter for each expression result written.
pub(crate) fn emitted(value: &JValue, written: usize) {
    EMITS.with(|e| {
        if let Some(top) = e.borrow_mut().last_mut() {
            top.count += 1;
            if top.first.is_none() {
                top.first = Some((value.clone(), written));
            }
        }
    });
}

/// A result whose text is left for later; the marker to write in its place.
pub(crate) fn emitted_deferred(value: &JValue) -> String {
    EMITS.with(|e| {
        let mut stack = e.borrow_mut();
        let Some(top) = stack.last_mut() else { return String::new() };
        let marker = deferred_marker(top.deferred.len());
        top.deferred.push(value.clone());
        top.count += 1;
        if top.first.is_none() {
            top.first = Some((value.clone(), marker.len()));
        }
        marker
    })
}

thread_local! {
    /// The line of the template file whose compilation failed last on this thread (a
    /// syntax error's), for the error's origin: the message the engine makes of the error
    /// no longer carries it.
    static COMPILE_LINE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Notes where a template file failed to compile (see [`take_compile_line`]).
pub(crate) fn compile_failed_at(line: Option<usize>) {
    COMPILE_LINE.with(|l| l.set(line));
}

/// The line [`compile_failed_at`] noted, forgotten once taken.
pub(crate) fn take_compile_line() -> Option<usize> {
    COMPILE_LINE.with(std::cell::Cell::take)
}

pub(crate) fn undef_made(hint: Option<String>) {
    let message = hint.unwrap_or_else(|| crate::undef_hint::BARE_UNDEF.into());
    crate::undef_hint::set(message);
}

/// The message of the last `undef()`, if one was made on this thread.
pub(crate) fn undef_message() -> Option<String> {
    crate::undef_hint::get()
}

pub(crate) fn emitted_omit() {
    EMITS.with(|e| {
        if let Some(top) = e.borrow_mut().last_mut() {
            top.omit = true;
        }
    });
}

thread_local! {
    static CTXS: RefCell<Vec<crate::vars::objects::Ctx>> = const { RefCell::new(Vec::new()) };
    /// For each render in `CTXS`, whether its variables are hidden (an import running
    /// without context).
    static HIDDEN: RefCell<Vec<bool>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with `ctx` as the render plugins see ([`current_ctx`]), rendering the template
/// named `name`.
pub(crate) fn with_ctx<R>(ctx: crate::vars::objects::Ctx, name: &str, f: impl FnOnce() -> R) -> R {
    CTXS.with(|c| c.borrow_mut().push(ctx));
    HIDDEN.with(|h| h.borrow_mut().push(false));
    let result = super::chosen::rendering(name, f);
    HIDDEN.with(|h| h.borrow_mut().pop());
    CTXS.with(|c| c.borrow_mut().pop());
    result
}

/// Hides (or shows again) the innermost render's variables from its template.
pub(crate) fn hide_context(hidden: bool) {
    HIDDEN.with(|h| {
        if let Some(top) = h.borrow_mut().last_mut() {
            *top = hidden;
        }
    });
}

/// Whether the innermost render's variables are hidden.
pub(crate) fn context_hidden() -> bool {
    HIDDEN.with(|h| h.borrow().last().copied().unwrap_or(false))
}

/// The innermost render running on this thread.
pub(crate) fn current_ctx() -> Option<crate::vars::objects::Ctx> {
    CTXS.with(|c| c.borrow().last().cloned())
}

thread_local! {
    static ORIGINS: RefCell<Vec<Option<tack_diag::Origin>>> = const { RefCell::new(Vec::new()) };
    /// The innermost variable's template whose render failed during the current top-level
    /// render, with the failure's message (see [`note_nested_failure`]).
    static NESTED_FAILURE: RefCell<Option<NestedFailure>> = const { RefCell::new(None) };
}

/// A variable's template that failed while another rendered it.
pub(crate) struct NestedFailure {
    pub origin: tack_diag::Origin,
    /// The template's text.
    pub source: String,
    pub message: String,
}

/// Notes that a variable's template failed while another rendered it. The first
/// (innermost) such failure stands while the ones around it fail with the same words: an
/// error of the whole render with those words happened there, which is where ansible
/// points (`'x' is undefined` at the variable's own template).
pub(crate) fn note_nested_failure(failure: NestedFailure) {
    NESTED_FAILURE.with(|n| {
        let mut noted = n.borrow_mut();
        // A failure whose words end with the noted one's is that one, raised again around it.
        if noted.as_ref().is_none_or(|f| !failure.message.ends_with(f.message.as_str())) {
            *noted = Some(failure);
        }
    });
}

/// Takes what [`note_nested_failure`] noted (clearing it for the next render).
pub(crate) fn take_nested_failure() -> Option<NestedFailure> {
    NESTED_FAILURE.with(|n| n.borrow_mut().take())
}

/// The failure [`note_nested_failure`] noted, when a render at `origin` failed with
/// `message` because of it (clearing it for the next render).
pub(crate) fn inner_failure(
    message: &str,
    origin: &Option<tack_diag::Origin>,
) -> Option<crate::InnerFailure> {
    let failure = take_nested_failure()?;
    // A render that failed on it says so before its words (a `!vault` value's failure).
    let prefaced = message.strip_prefix(super::RENDER_FAILED) == Some(&failure.message);
    if (failure.message != message && !prefaced) || Some(&failure.origin) == origin.as_ref() {
        return None;
    }
    Some(crate::InnerFailure {
        origin: failure.origin,
        source: failure.source,
        message: failure.message,
    })
}

/// Runs `f` while the template written at `origin` renders (deprecations point there).
pub(crate) fn at_origin<R>(origin: Option<tack_diag::Origin>, f: impl FnOnce() -> R) -> R {
    ORIGINS.with(|o| o.borrow_mut().push(origin));
    let result = f();
    ORIGINS.with(|o| o.borrow_mut().pop());
    result
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` without the deprecations reading a deprecated variable prints (ansible renders an
/// include's name in its strategy, where they are not shown).
pub(crate) fn quietly<R>(f: impl FnOnce() -> R) -> R {
    let before = QUIET.with(|q| q.replace(true));
    let result = f();
    QUIET.with(|q| q.set(before));
    result
}

/// Whether the deprecation `message` of a variable read is to be shown now: not inside
/// [`quietly`], and not already shown by this render.
pub(crate) fn first_deprecation(message: &str) -> bool {
    if QUIET.with(std::cell::Cell::get) {
        return false;
    }
    TOPS.with(|t| {
        let mut tops = t.borrow_mut();
        let Some(top) = tops.last_mut() else { return true };
        if top.deprecations.iter().any(|m| m == message) {
            return false;
        }
        top.deprecations.push(message.to_string());
        true
    })
}

/// Where the template being rendered was written, when known.
pub(crate) fn current_origin() -> Option<tack_diag::Origin> {
    ORIGINS.with(|o| o.borrow().last().cloned().flatten())
}

thread_local! {
    static LAST_MISS: RefCell<Option<(&'static str, JValue)>> = const { RefCell::new(None) };
}

/// Notes that a key was missing from one of tack's containers (of Python type `type_name`),
/// so that an undefined value produced from a template's own names (a loop variable) can
/// still be explained.
pub(crate) fn missed(type_name: &'static str, key: &JValue) {
    LAST_MISS.with(|m| *m.borrow_mut() = Some((type_name, key.clone())));
}

/// The container type of the last missing key, if that key was `key`.
pub(crate) fn last_miss(key: &JValue) -> Option<&'static str> {
    LAST_MISS.with(|m| m.borrow().as_ref().filter(|(_, k)| k == key).map(|(t, _)| *t))
}

/// Why a container a template made fails where the undefined value inside it is read: the
/// words the render would have failed with had it read it then, and where that template was
/// written (ansible's lazy markers carry both).
#[derive(Debug)]
pub(crate) struct LazyFailure {
    pub message: String,
    pub origin: Option<tack_diag::Origin>,
    /// The template's text.
    pub source: String,
}

impl LazyFailure {
    /// The error for reading the undefined value: its words, and (when the template was
    /// written elsewhere) a note of that template for the `caused by` ansible prints.
    pub(crate) fn error(&self) -> Error {
        if let Some(origin) = &self.origin {
            note_nested_failure(NestedFailure {
                origin: origin.clone(),
                source: self.source.clone(),
                message: self.message.clone(),
            });
        }
        super::final_error(minijinja::ErrorKind::UndefinedError, self.message.clone())
    }
}

/// One render's stand on containers holding an undefined value (see [`lazy_render`]).
struct LazyLevel {
    /// Set on the second attempt: containers are kept, marked with this.
    marker: Option<Arc<LazyFailure>>,
    /// The first attempt printed a container whose text failed on an undefined value.
    tripped: bool,
}

thread_local! {
    static LAZY: RefCell<Vec<LazyLevel>> = const { RefCell::new(Vec::new()) };
    /// How many callers on this thread take containers holding undefined values.
    static ACCEPTING: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `f` (the render of a lookup's terms, for a lookup that takes undefined values
/// inside them: ansible's `accept_lazy_markers`) with containers holding an undefined value
/// kept (see [`lazy_render`]). Everywhere else such a container fails where it is printed,
/// as before: tack's filters and `~` would read the undefined value inside as nothing, where
/// ansible's marker fails.
pub(crate) fn accepting_lazy<R>(f: impl FnOnce() -> R) -> R {
    ACCEPTING.with(|a| a.set(a.get() + 1));
    let result = f();
    ACCEPTING.with(|a| a.set(a.get().saturating_sub(1)));
    result
}

/// Renders with `attempt` as ansible's lazy containers behave where a caller takes them
/// ([`accepting_lazy`]): a container holding an undefined value is a value until the
/// undefined value is read. The first attempt reads every container it prints, as before; if
/// one failed on an undefined value, the failure is put in ansible's words (`explain`) and
/// the render runs again with containers kept, marked with those words, for whoever reads
/// them later. Renders without such a container run once.
pub(crate) fn lazy_render(
    mut attempt: impl FnMut() -> Result<JValue, Error>,
    explain: impl FnOnce(&Error) -> String,
    source: &str,
) -> Result<JValue, Error> {
    if ACCEPTING.with(std::cell::Cell::get) == 0 {
        return attempt();
    }
    LAZY.with(|l| l.borrow_mut().push(LazyLevel { marker: None, tripped: false }));
    let first = attempt();
    let tripped = LAZY.with(|l| l.borrow_mut().pop()).is_some_and(|level| level.tripped);
    let Err(error) = &first else { return first };
    if !tripped {
        return first;
    }
    let marker = Arc::new(LazyFailure {
        message: explain(error),
        origin: current_origin(),
        source: source.to_string(),
    });
    LAZY.with(|l| l.borrow_mut().push(LazyLevel { marker: Some(marker), tripped: false }));
    let second = attempt();
    LAZY.with(|l| l.borrow_mut().pop());
    second
}

/// What the innermost render does with a container whose text failed on an undefined
/// value: `Some(marker)` keeps it, marked; `None` fails (and notes it, for a second attempt).
pub(crate) fn lazy_container() -> Option<Arc<LazyFailure>> {
    if ACCEPTING.with(std::cell::Cell::get) == 0 {
        return None;
    }
    LAZY.with(|l| {
        let mut levels = l.borrow_mut();
        let level = levels.last_mut()?;
        if level.marker.is_none() {
            level.tripped = true;
        }
        level.marker.clone()
    })
}
