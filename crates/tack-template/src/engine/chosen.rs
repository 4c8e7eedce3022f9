//! Whether a lookup's arguments, or the file name a template file includes, were chosen by a
//! managed host: what the lookups (`crate::lookups`) and the include path (`env::join_path`)
//! confine or refuse (seed 002).
//!
//! The prepass puts a mark first in every `lookup(...)`/`query(...)`/`q(...)` call and
//! around every `{% include %}`/`{% import %}`/`{% from %}`/`{% extends %}` name
//! ([`MARK`], [`NAMED`]). minijinja evaluates a call's arguments left to right, so the mark
//! is evaluated before the others: it notes how many managed-host values the render has read,
//! and the call asks whether that count moved while its arguments were evaluated. Reading a
//! variable is what records a host value, so that is exact for arguments made of variables,
//! literals and calls. A template's own names (`{% set %}`, loop and macro variables, and
//! anything a file sees from the file that included it) were computed earlier and record
//! nothing when read: an argument that refers to one (the prepass knows the template's own,
//! and a file other than the one the render started with may see others) is taken as chosen
//! by a host whenever the render has read any host value so far. A call without a mark (the
//! lookup function passed around as a value) is judged the same way.
//!
//! Containers are read lazily (a list's item is rendered when first read), so a call's
//! arguments are read whole ([`touch`]) before the question is asked.
//!
//! This module decides nothing about what is allowed; it only answers the question. Its
//! state is per thread, one watch per top-level render (as `active` keeps the rest), and it
//! depends on nothing else of the engine's, which calls into it.

use std::cell::RefCell;

use minijinja::State;
use minijinja::value::{Object, Value as JValue, ValueKind};

/// What one top-level render has read so far, for the calls inside it.
#[derive(Default)]
struct Watch {
    /// How many managed-host values it has read.
    host_reads: u64,
    /// The count at each marked call whose arguments are being evaluated, by mark id.
    marks: Vec<(u64, u64)>,
    next_mark: u64,
    /// Whether the name the next include joins was chosen by a managed host.
    include_host_named: bool,
}

/// This thread's watches, one per top-level render, and its templates being rendered.
struct Watches {
    watches: Vec<Watch>,
    /// For each render of a template (a top-level one or one nested in it), the identity
    /// (address and length) of the compiled template's name: a template's own `{% set %}`
    /// names are known from its source, while a file it includes may see others. The address
    /// of the compiled template's own name, so no render copies it.
    templates: Vec<(usize, usize)>,
}

thread_local! {
    // One cell for both: every render passes here, and a thread-local access is not free.
    static WATCHES: RefCell<Watches> =
        const { RefCell::new(Watches { watches: Vec::new(), templates: Vec::new() }) };
}

/// Runs the top-level render `f` with a watch of its own.
pub(crate) fn watching<R>(f: impl FnOnce() -> R) -> R {
    WATCHES.with(|w| w.borrow_mut().watches.push(Watch::default()));
    let result = f();
    WATCHES.with(|w| {
        let mut w = w.borrow_mut();
        let inner = w.watches.pop();
        // A render started inside another (a plugin rendering on its own) read for the
        // outer one: its host reads count there too, so a mark around it sees them.
        if let (Some(inner), Some(outer)) = (inner, w.watches.last_mut()) {
            outer.host_reads += inner.host_reads;
        }
    });
    result
}

/// Runs `f`, which renders the template named `name`.
pub(crate) fn rendering<R>(name: &str, f: impl FnOnce() -> R) -> R {
    WATCHES.with(|w| w.borrow_mut().templates.push((name.as_ptr() as usize, name.len())));
    let result = f();
    WATCHES.with(|w| w.borrow_mut().templates.pop());
    result
}

/// Notes that the current render read a managed host's value.
pub(crate) fn host_value_read() {
    with_watch(|w| w.host_reads += 1);
}

fn with_watch<R: Default>(f: impl FnOnce(&mut Watch) -> R) -> R {
    WATCHES.with(|w| w.borrow_mut().watches.last_mut().map(f).unwrap_or_default())
}

/// Whether the current render has read a managed host's value so far (true outside one:
/// nothing is known).
pub(crate) fn read_host_so_far() -> bool {
    WATCHES.with(|w| w.borrow().watches.last().is_none_or(|watch| watch.host_reads > 0))
}

/// Whether `name` is the template the innermost render started with (not a file it
/// included or imported).
fn is_rendered_template(name: &str) -> bool {
    let id = (name.as_ptr() as usize, name.len());
    WATCHES.with(|w| w.borrow().templates.last().is_some_and(|top| *top == id))
}

fn push_mark() -> u64 {
    with_watch(|w| {
        w.next_mark += 1;
        w.marks.push((w.next_mark, w.host_reads));
        w.next_mark
    })
}

/// Whether a managed host's value was read since mark `id` (true when the mark is not this
/// render's), keeping the mark.
fn mark_moved(id: u64) -> bool {
    WATCHES.with(|w| {
        let watches = w.borrow();
        let Some(watch) = watches.watches.last() else { return true };
        watch.marks.iter().rfind(|(m, _)| *m == id).is_none_or(|(_, at)| watch.host_reads > *at)
    })
}

/// [`mark_moved`], dropping the mark and any left inside it.
fn take_mark(id: u64) -> bool {
    let moved = mark_moved(id);
    with_watch(|w| {
        if let Some(index) = w.marks.iter().rposition(|(m, _)| *m == id) {
            w.marks.truncate(index);
        }
    });
    moved
}

/// Whether the name an include is joining was chosen by a managed host ([`named`]).
pub(crate) fn include_host_named() -> bool {
    WATCHES.with(|w| w.borrow().watches.last().is_some_and(|watch| watch.include_host_named))
}

/// The function the prepass puts first in a marked call: `__tack_mark(own_names)`.
pub(crate) const MARK: &str = "__tack_mark";
/// The function the prepass wraps an include's name in: `__tack_named(mark, name)`.
pub(crate) const NAMED: &str = "__tack_named";

/// A call's mark: its place in the render's count of host reads.
#[derive(Debug)]
pub(crate) struct Mark {
    id: u64,
    /// The arguments may read names the template set itself.
    own_names: bool,
}

impl Object for Mark {}

/// `__tack_mark(own_names)`.
pub(crate) fn mark(state: &State, own_names: bool) -> JValue {
    // A file the render included (or imported a macro from) may see names the prepass of
    // its own source cannot know.
    let own_names = own_names || !is_rendered_template(state.name());
    JValue::from_object(Mark { id: push_mark(), own_names })
}

/// Whether the arguments evaluated since `mark` read a managed-host value.
fn read_host(mark: &Mark) -> bool {
    let moved = take_mark(mark.id);
    moved || mark.own_names && read_host_so_far()
}

/// Whether the arguments of a lookup call (its positional arguments, the mark first if the
/// prepass put one, which is taken out, and its keyword arguments) were chosen by a managed
/// host.
pub(crate) fn call_read_host(positional: &mut Vec<JValue>, kwargs: &[(String, JValue)]) -> bool {
    let marked = positional.first().and_then(|v| v.downcast_object::<Mark>());
    if marked.is_some() {
        positional.remove(0);
    }
    // Reading what has been read already is no longer a question (and `hostvars` is big).
    if marked.as_ref().is_none_or(|m| !mark_moved(m.id)) {
        for value in positional.iter().chain(kwargs.iter().map(|(_, v)| v)) {
            touch(value, 0);
        }
    }
    match marked {
        Some(mark) => read_host(&mark),
        None => read_host_so_far(),
    }
}

/// `__tack_named(mark, name)`: `name`, noting for the include path whether a managed host
/// chose it.
pub(crate) fn named(mark: JValue, name: JValue) -> JValue {
    let mark = mark.downcast_object::<Mark>();
    if mark.as_ref().is_none_or(|m| !mark_moved(m.id)) {
        touch(&name, 0);
    }
    let chose = match mark {
        Some(mark) => read_host(&mark),
        None => read_host_so_far(),
    };
    with_watch(|w| w.include_host_named = chose);
    name
}

/// How deep [`touch`] reads into nested containers; deeper than any path-naming argument.
const TOUCH_DEPTH: usize = 16;

/// Reads every item of `value`, so that what its lazily rendered items read is recorded now.
fn touch(value: &JValue, depth: usize) {
    if depth > TOUCH_DEPTH {
        return;
    }
    match value.kind() {
        ValueKind::Seq | ValueKind::Iterable => {
            if let Ok(items) = value.try_iter() {
                for item in items {
                    touch(&item, depth + 1);
                }
            }
        }
        ValueKind::Map => {
            if let Ok(keys) = value.try_iter() {
                for key in keys {
                    if let Ok(item) = value.get_item(&key) {
                        touch(&item, depth + 1);
                    }
                }
            }
        }
        _ => {}
    }
}
