//! ansible's `ensure_type`: turning a raw value (a string from the environment or the file, or a
//! default) into the setting's type, with Python's parsing rules for numbers and ansible's for
//! booleans, lists and paths.
//!
//! Owns conversion only; which value is converted, and the error text around a failure, belong
//! to `resolve.rs`.

use tack_py::ansible::unquote;
use tack_py::text::strip;

use crate::context::Context;
use crate::def::ValueType;
use crate::paths::resolve_path;
use crate::value::SettingValue;

/// Why a value could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConvertError {
    /// ansible's `ValueError`: `Invalid value provided for 'integer': 'abc'`.
    Invalid,
    /// An exception ansible does not expect (`int(Decimal('Infinity'))`), with its text.
    Unhandled(String),
    /// An integer ansible would accept but that does not fit tack's 64 bits.
    OutOfRange,
}

/// Converts `value` to `kind`. `basedir` is where relative paths start: the configuration file
/// for values read from it, else `None` for the working directory.
pub(crate) fn ensure_type(
    value: SettingValue,
    kind: ValueType,
    basedir: Option<&str>,
    ctx: &Context,
) -> Result<SettingValue, ConvertError> {
    if value == SettingValue::Null {
        return Ok(value);
    }
    let resolve = |s: &str| SettingValue::Str(resolve_path(s, basedir, ctx));
    let invalid = Err(ConvertError::Invalid);
    match (kind, value) {
        (ValueType::Raw, v) => Ok(v),
        (ValueType::Bool, v) => Ok(SettingValue::Bool(boolean(&v))),
        (ValueType::Int, SettingValue::Int(n)) => Ok(SettingValue::Int(n)),
        (ValueType::Int, SettingValue::Bool(b)) => Ok(SettingValue::Int(i64::from(b))),
        (ValueType::Int, SettingValue::Float(f)) => float_to_int(f),
        (ValueType::Int, SettingValue::Str(s)) => parse_decimal_int(&s),
        (ValueType::Float, SettingValue::Float(f)) => Ok(SettingValue::Float(f)),
        (ValueType::Float, SettingValue::Int(n)) => Ok(SettingValue::Float(n as f64)),
        (ValueType::Float, SettingValue::Bool(b)) => {
            Ok(SettingValue::Float(f64::from(u8::from(b))))
        }
        (ValueType::Float, SettingValue::Str(s)) => {
            tack_py::num::float(&s).map(SettingValue::Float).ok_or(ConvertError::Invalid)
        }
        (ValueType::List, SettingValue::List(items)) => Ok(SettingValue::List(items)),
        (ValueType::List, SettingValue::Str(s)) => Ok(SettingValue::List(
            s.split(',').map(|item| SettingValue::Str(unquote(strip(item)).into())).collect(),
        )),
        (ValueType::NoneType, SettingValue::Str(s)) if s == "None" => Ok(SettingValue::Null),
        (ValueType::Path | ValueType::TmpPath, SettingValue::Str(s)) => Ok(resolve(&s)),
        (ValueType::PathSpec, SettingValue::Str(s)) => {
            Ok(SettingValue::List(s.split(':').map(resolve).collect()))
        }
        (ValueType::PathList, SettingValue::Str(s)) => {
            Ok(SettingValue::List(s.split(',').map(|p| resolve(strip(p))).collect()))
        }
        (ValueType::PathSpec | ValueType::PathList, SettingValue::List(items)) => {
            let paths: Option<Vec<&str>> = items.iter().map(SettingValue::as_str).collect();
            match paths {
                Some(paths) => Ok(SettingValue::List(paths.into_iter().map(resolve).collect())),
                None => invalid,
            }
        }
        (ValueType::Dict, SettingValue::Dict(items)) => Ok(SettingValue::Dict(items)),
        (ValueType::Str, SettingValue::Str(s)) => Ok(SettingValue::Str(s)),
        (
            ValueType::Str,
            v @ (SettingValue::Bool(_) | SettingValue::Int(_) | SettingValue::Float(_)),
        ) => {
            // Python's str() of a bool, int or float is its repr().
            Ok(SettingValue::Str(v.to_string()))
        }
        _ => invalid,
    }
}

/// ansible's `boolean(value, strict=False)`.
fn boolean(value: &SettingValue) -> bool {
    use tack_py::boolean::{Input, loose};
    loose(match value {
        SettingValue::Bool(b) => Input::Bool(*b),
        SettingValue::Str(s) => Input::Text(s),
        SettingValue::Int(n) => Input::Int(*n),
        SettingValue::Float(f) => Input::Float(*f),
        SettingValue::Null | SettingValue::List(_) | SettingValue::Dict(_) => Input::Other,
    })
}

fn float_to_int(f: f64) -> Result<SettingValue, ConvertError> {
    if f.is_nan() {
        return Err(ConvertError::Invalid);
    }
    if f.is_infinite() {
        return Err(ConvertError::Unhandled("cannot convert Infinity to integer".into()));
    }
    if f.fract() != 0.0 {
        return Err(ConvertError::Invalid);
    }
    if f < i64::MIN as f64 || f >= i64::MAX as f64 {
        return Err(ConvertError::OutOfRange);
    }
    Ok(SettingValue::Int(f as i64))
}

/// `int(Decimal(s))` when that equals `Decimal(s)`: Python's decimal syntax (surrounding
/// whitespace and any underscores ignored, an exponent allowed), and only integral values.
/// Decimal digits outside ASCII, which Python also accepts, are refused.
fn parse_decimal_int(s: &str) -> Result<SettingValue, ConvertError> {
    let text: String = strip(s).chars().filter(|&c| c != '_').collect();
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text.as_str()),
    };
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Err(ConvertError::Unhandled("cannot convert Infinity to integer".into()));
    }
    let nan_digits = lower.strip_prefix("nan").or_else(|| lower.strip_prefix("snan"));
    if nan_digits.is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit())) {
        return Err(ConvertError::Invalid);
    }
    let (mantissa, exponent) = match lower.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (lower.as_str(), None),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return Err(ConvertError::Invalid);
    }
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !all_digits(digits) {
                return Err(ConvertError::Invalid);
            }
            e.parse().map_err(|_| ConvertError::OutOfRange)?
        }
    };
    // The value is digits × 10^(exponent - len(frac)); integral when every digit that would
    // fall after the point is zero.
    let digits = format!("{int_part}{frac_part}");
    let shift = exponent - frac_part.len() as i64;
    let digits = digits.trim_start_matches('0');
    let magnitude: i128 = if digits.is_empty() {
        0
    } else if shift >= 0 {
        if digits.len() as i64 + shift > 19 {
            return Err(ConvertError::OutOfRange);
        }
        let base: i128 = digits.parse().map_err(|_| ConvertError::OutOfRange)?;
        base * 10i128.pow(shift as u32)
    } else {
        let cut = -shift;
        if cut as usize >= digits.len() {
            if digits.bytes().all(|b| b == b'0') { 0 } else { return Err(ConvertError::Invalid) }
        } else {
            let (keep, drop) = digits.split_at(digits.len() - cut as usize);
            if drop.bytes().any(|b| b != b'0') {
                return Err(ConvertError::Invalid);
            }
            if keep.len() > 19 {
                return Err(ConvertError::OutOfRange);
            }
            keep.parse().map_err(|_| ConvertError::OutOfRange)?
        }
    };
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).map(SettingValue::Int).map_err(|_| ConvertError::OutOfRange)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> Result<SettingValue, ConvertError> {
        parse_decimal_int(s)
    }

    #[test]
    fn integers_follow_python_decimal() {
        for (s, n) in [("1e1", 10), (" 7 ", 7), ("1_0", 10), ("_1", 1), ("+3", 3), ("-0", 0)] {
            assert_eq!(int(s), Ok(SettingValue::Int(n)), "{s}");
        }
        for (s, n) in [("5.0", 5), ("5.", 5), (".5e1", 5), ("1500e-2", 15), ("-2E+2", -200)] {
            assert_eq!(int(s), Ok(SettingValue::Int(n)), "{s}");
        }
        for s in ["5.5", "abc", "0x10", "", "1 0", "nan", "sNaN12", "1e", "."] {
            assert_eq!(int(s), Err(ConvertError::Invalid), "{s}");
        }
        assert!(matches!(int("-Infinity"), Err(ConvertError::Unhandled(_))));
        assert_eq!(int("1e30"), Err(ConvertError::OutOfRange));
    }

    #[test]
    fn booleans() {
        for s in [" On ", "TRUE"] {
            assert!(boolean(&SettingValue::Str(s.into())), "{s}");
        }
        for s in ["no", "maybe", "\"yes\"", "", "1.0"] {
            assert!(!boolean(&SettingValue::Str(s.into())), "{s}");
        }
    }
}
