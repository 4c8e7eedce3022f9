//! Mapping-key identity as a Python `dict` sees it.
//!
//! ansible builds every YAML mapping into a `dict`, so two keys are "the same key" when Python's
//! `==` and `hash` say so: `1`, `1.0` and `true` collide, `"a"` and `!unsafe a` collide, a `date`
//! never equals a `datetime`, and NaN equals nothing. This module owns that one rule; it knows
//! nothing about YAML.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::value::{TimeOfDay, Timestamp, Value};

/// A hashable stand-in for a key [`Value`], equal exactly when Python's dict would merge them.
/// `None` from [`PyKey::of`] means the value is unhashable in Python (a list or a dict).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum PyKey {
    None,
    /// Every integral number (ints, bools, integral floats), as exact decimal digits.
    Integer(IntKey),
    /// A finite float with a fractional part, by its bits (so `0.5 == 0.5`).
    Fraction(u64),
    /// NaN is never equal to another NaN object; each gets a fresh identity.
    Nan(u64),
    Infinity(bool),
    Str(Box<str>),
    Date(i32, u8, u8),
    NaiveDateTime(i32, u8, u8, u8, u8, u8, u32),
    /// An aware datetime, by its instant in microseconds since 0001-01-01 UTC.
    AwareDateTime(i128),
    Vault(Box<str>),
    Bytes(Box<[u8]>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum IntKey {
    Small(i128),
    /// Beyond `i128`: canonical decimal digits with an optional `-`.
    Big(Box<str>),
}

static NAN_IDENTITY: AtomicU64 = AtomicU64::new(0);

impl PyKey {
    pub(crate) fn of(value: &Value) -> Option<PyKey> {
        Some(match value {
            Value::Null => PyKey::None,
            Value::Bool(b) => PyKey::Integer(IntKey::Small(i128::from(*b))),
            Value::Int(i) => PyKey::Integer(IntKey::Small(i128::from(*i))),
            Value::BigInt(digits) => PyKey::Integer(big_int_key(digits)),
            Value::Float(f) => float_key(*f),
            Value::Str(s) | Value::Unsafe(s) => PyKey::Str(s.as_str().into()),
            Value::Timestamp(t) => timestamp_key(t),
            Value::Vault(text) => PyKey::Vault(text.as_str().into()),
            Value::Bytes(data) => PyKey::Bytes(data.as_slice().into()),
            Value::Seq(_) | Value::Map(_) => return None,
        })
    }
}

fn big_int_key(digits: &str) -> IntKey {
    match digits.parse::<i128>() {
        Ok(n) => IntKey::Small(n),
        Err(_) => IntKey::Big(digits.into()),
    }
}

fn float_key(f: f64) -> PyKey {
    if f.is_nan() {
        return PyKey::Nan(NAN_IDENTITY.fetch_add(1, Ordering::Relaxed));
    }
    if f.is_infinite() {
        return PyKey::Infinity(f > 0.0);
    }
    if f.fract() != 0.0 {
        return PyKey::Fraction(f.to_bits());
    }
    // An integral float equals the int with the same value; i128 holds every f64 below 2^127
    // exactly, and above that Rust prints the float's exact integer digits.
    if f.abs() < 1.0e38 {
        return PyKey::Integer(IntKey::Small(f as i128));
    }
    PyKey::Integer(big_int_key(&format!("{f:.0}")))
}

fn timestamp_key(t: &Timestamp) -> PyKey {
    let Some(time) = &t.time else {
        return PyKey::Date(t.year, t.month, t.day);
    };
    let TimeOfDay { hour, minute, second, microsecond, utc_offset_minutes } = time;
    match utc_offset_minutes {
        None => PyKey::NaiveDateTime(t.year, t.month, t.day, *hour, *minute, *second, *microsecond),
        Some(offset) => {
            let days = days_from_civil(t.year, t.month, t.day);
            let seconds = i128::from(days) * 86_400
                + i128::from(*hour) * 3600
                + i128::from(*minute) * 60
                + i128::from(*second)
                - i128::from(*offset) * 60;
            PyKey::AwareDateTime(seconds * 1_000_000 + i128::from(*microsecond))
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub(crate) fn days_from_civil(year: i32, month: u8, day: u8) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_collide_as_in_python() {
        let one = PyKey::of(&Value::Int(1));
        assert_eq!(one, PyKey::of(&Value::Bool(true)));
        assert_eq!(one, PyKey::of(&Value::Float(1.0)));
        assert_ne!(one, PyKey::of(&Value::Float(1.5)));
        assert_eq!(PyKey::of(&Value::Float(-0.0)), PyKey::of(&Value::Int(0)));
        assert_ne!(PyKey::of(&Value::Float(f64::NAN)), PyKey::of(&Value::Float(f64::NAN)));
        let big = PyKey::of(&Value::BigInt("1267650600228229401496703205376".into()));
        assert_eq!(big, PyKey::of(&Value::Float(2f64.powi(100))));
    }

    #[test]
    fn strings_ignore_trust_and_containers_are_unhashable() {
        assert_eq!(PyKey::of(&Value::Str("a".into())), PyKey::of(&Value::Unsafe("a".into())));
        assert_eq!(PyKey::of(&Value::Seq(vec![])), None);
    }

    #[test]
    fn aware_datetimes_compare_by_instant() {
        let at = |hour, off| {
            Value::Timestamp(Timestamp {
                year: 2001,
                month: 1,
                day: 1,
                time: Some(TimeOfDay {
                    hour,
                    minute: 0,
                    second: 0,
                    microsecond: 0,
                    utc_offset_minutes: off,
                }),
            })
        };
        assert_eq!(PyKey::of(&at(5, Some(0))), PyKey::of(&at(6, Some(60))));
        assert_ne!(PyKey::of(&at(5, Some(0))), PyKey::of(&at(5, None)));
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
    }
}
