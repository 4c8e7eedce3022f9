//! Rendering loaded data (a task's arguments, a keyword's value) and ansible's native typing
//! of one template's output.

use minijinja::value::Value as JValue;
use tack_yaml::{Mapping, Node, Value};

use super::active::Emits;
use crate::vars::ProvenanceSet;

/// A rendered value and what it was computed from.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub value: Node,
    /// The provenances of every variable the render read (trusted reads add nothing).
    pub provenance: ProvenanceSet,
}

/// ansible's `concat` over one render's output: `out` is the text written, `emits` what its
/// `{{ }}` blocks produced (`None` results write nothing and are not nodes).
pub(super) fn native(out: String, emits: Emits) -> Result<JValue, minijinja::Error> {
    if emits.count == 0 {
        if !out.is_empty() {
            return Ok(JValue::from(out));
        }
        return Ok(if emits.omit { super::omit() } else { JValue::from(()) });
    }
    if emits.count == 1
        && let Some((value, written)) = emits.first
        && written == out.len()
    {
        // Nothing but that one result was written: no literal text, so it is the only node.
        return Ok(value);
    }
    let mut out = out;
    for (index, value) in emits.deferred.iter().enumerate() {
        let text = crate::python::repr::str_of(value)?;
        out = out.replacen(&super::active::deferred_marker(index), &text, 1);
    }
    Ok(JValue::from(out))
}

/// What a render of a value gives before finalization: a value, or nothing (the value was
/// `omit`, and its key or item disappears).
pub(crate) enum Piece {
    Value(Value),
    Omitted,
}

/// Renders every template string in `node` with `render_str`, leaving other strings (and
/// `!unsafe` ones) as they are; keys and items that render to `omit` disappear.
pub(crate) fn walk<E>(
    node: &Node,
    render_str: &mut impl FnMut(&str, &Node) -> Result<Piece, E>,
    decrypt: &mut impl FnMut(&str, &Node) -> Result<Value, E>,
) -> Result<Piece, E> {
    let value = match &node.value {
        Value::Str(s) if crate::is_possibly_template(s) => return render_str(s, node),
        Value::Vault(text) => decrypt(text, node)?,
        Value::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if let Piece::Value(v) = walk(item, render_str, decrypt)? {
                    out.push(Node::new(v, item.origin.clone()));
                }
            }
            Value::Seq(out)
        }
        Value::Map(m) => {
            let mut out = Mapping::new();
            for (k, v) in m.iter() {
                let Piece::Value(key) = walk(k, render_str, decrypt)? else { continue };
                if let Piece::Value(val) = walk(v, render_str, decrypt)? {
                    out.insert(Node::new(key, k.origin.clone()), Node::new(val, v.origin.clone()));
                }
            }
            Value::Map(out)
        }
        other => other.clone(),
    };
    Ok(Piece::Value(value))
}
