//! Python's `bytes` as a template value (a `!!binary` value read from a variable). A leaf:
//! the filters, the variable views and the value conversions all name it, and it names none
//! of them.

use std::fmt;
use std::sync::Arc;

use minijinja::value::{Enumerator, Object, ObjectRepr, Value as JValue};

/// A Python `bytes` (a `!!binary` value). Its text in a template is Python's `str()` of it,
/// `b'...'`; it has a length, and its items and indices are ints, as Python's; it equals only
/// bytes.
#[derive(Debug)]
pub(crate) struct PyBytes(pub Vec<u8>);

impl Object for PyBytes {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn render(self: &Arc<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&tack_yaml::pyrepr::bytes_repr(&self.0))
    }

    fn get_value(self: &Arc<Self>, key: &JValue) -> Option<JValue> {
        let index = i64::try_from(key.clone()).ok()?;
        let len = i64::try_from(self.0.len()).ok()?;
        let at = if index < 0 { index + len } else { index };
        usize::try_from(at).ok().and_then(|i| self.0.get(i)).map(|b| JValue::from(*b))
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::Values(self.0.iter().map(|b| JValue::from(*b)).collect())
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        Some(self.0.len())
    }

    fn custom_cmp(
        self: &Arc<Self>,
        other: &minijinja::value::DynObject,
    ) -> Option<std::cmp::Ordering> {
        Some(self.0.cmp(&other.downcast_ref::<PyBytes>()?.0))
    }
}
