//! Python's `str.format()`: replacement fields (`{}`, `{0}`, `{name}`, `{0.attr}`,
//! `{0[key]}`), conversions (`!r`, `!s`, `!a`) and the `%` presentation type are handled here;
//! the format spec of each field is applied by `minijinja-contrib`'s pycompat `format`, which
//! implements the rest of Python's format-spec mini-language.

use minijinja::value::{Kwargs, Value as JValue};
use minijinja::{Error, ErrorKind, State};

use super::repr::{repr_of, str_of};

fn py_error(message: impl Into<String>) -> Error {
    crate::engine::final_error(
        ErrorKind::InvalidOperation,
        format!("Error rendering template: {}", message.into()),
    )
}

/// `format.format(*args, **kwargs)`.
pub(crate) fn format(state: &mut State, format: &str, args: &[JValue]) -> Result<JValue, Error> {
    let (positional, kwargs): (Vec<JValue>, Option<Kwargs>) = match args.split_last() {
        Some((last, rest)) if last.is_kwargs() => {
            (rest.to_vec(), Some(Kwargs::try_from(last.clone())?))
        }
        _ => (args.to_vec(), None),
    };
    let mut out = String::new();
    let mut auto = 0usize;
    let mut chars = format.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        match c {
            '{' if chars.peek().map(|(_, c)| *c) == Some('{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek().map(|(_, c)| *c) == Some('}') => {
                chars.next();
                out.push('}');
            }
            '}' => return Err(py_error("Single '}' encountered in format string")),
            '{' => {
                let mut field = String::new();
                let mut depth = 0;
                loop {
                    let Some((_, c)) = chars.next() else {
                        return Err(py_error("expected '}' before end of string"));
                    };
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    field.push(c);
                }
                out.push_str(&replace(state, &field, &positional, kwargs.as_ref(), &mut auto)?);
            }
            other => out.push(other),
        }
    }
    Ok(JValue::from(out))
}

/// One replacement field, formatted.
fn replace(
    state: &mut State,
    field: &str,
    positional: &[JValue],
    kwargs: Option<&Kwargs>,
    auto: &mut usize,
) -> Result<String, Error> {
    let (name_conv, spec) = match field.find(':') {
        Some(i) => (&field[..i], &field[i + 1..]),
        None => (field, ""),
    };
    let (name, conversion) = match name_conv.split_once('!') {
        Some((n, c)) => (n, Some(c)),
        None => (name_conv, None),
    };
    let split = name.find(['.', '[']).unwrap_or(name.len());
    let (first, rest) = name.split_at(split);
    let mut value = if first.is_empty() {
        let i = *auto;
        *auto += 1;
        positional.get(i).cloned().ok_or_else(|| {
            py_error(format!("Replacement index {i} out of range for positional args tuple"))
        })?
    } else if let Ok(i) = first.parse::<usize>() {
        positional.get(i).cloned().ok_or_else(|| {
            py_error(format!("Replacement index {i} out of range for positional args tuple"))
        })?
    } else {
        match kwargs.map(|k| k.peek::<JValue>(first)) {
            Some(Ok(v)) => v,
            _ => return Err(py_error(tack_yaml::pyrepr::str_repr(first))),
        }
    };
    let mut rest = rest;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            value = value.get_attr(&after[..end])?;
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']').ok_or_else(|| py_error("Missing ']' in format string"))?;
            let key = &after[..end];
            value = match key.parse::<i64>() {
                Ok(i) => value.get_item(&JValue::from(i))?,
                Err(_) => value.get_item(&JValue::from(key))?,
            };
            rest = &after[end + 1..];
        } else {
            return Err(py_error("Only '.' or '[' may follow ']' in format field specifier"));
        }
    }
    value = match conversion {
        None => value,
        Some("s") => JValue::from(str_of(&value)?),
        Some("r") | Some("a") => JValue::from(repr_of(&value)?),
        Some(other) => {
            return Err(py_error(format!("Unknown conversion specifier {other}")));
        }
    };
    if let Some(number_spec) = spec.strip_suffix('%') {
        // `%`: the number times 100 in fixed-point, then a percent sign.
        let f = f64::try_from(value.clone())? * 100.0;
        let spec = if number_spec.contains('.') {
            format!("{number_spec}f")
        } else {
            format!("{number_spec}.6f")
        };
        return Ok(format!("{}%", one(state, &spec, JValue::from(f))?));
    }
    if spec.is_empty() {
        return str_of(&value);
    }
    one(state, spec, value)
}

/// One value formatted with `spec`, by pycompat's `str.format`.
fn one(state: &mut State, spec: &str, value: JValue) -> Result<String, Error> {
    // A width or precision past any string's size is Python's MemoryError, not an
    // allocation pycompat would attempt.
    for digits in spec.split(|c: char| !c.is_ascii_digit()).filter(|d| !d.is_empty()) {
        crate::python::memory::room_for(digits.parse::<usize>().ok());
    }
    let template = JValue::from(format!("{{:{spec}}}"));
    let result =
        minijinja_contrib::pycompat::unknown_method_callback(state, &template, "format", &[value])?;
    Ok(result.as_str().unwrap_or_default().to_string())
}
