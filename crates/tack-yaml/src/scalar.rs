//! Building typed scalars from text as PyYAML's `SafeConstructor` does: ints (with `_`,
//! `0b`/`0x`/octal prefixes and base 60), floats, booleans and timestamps.
//!
//! Failures carry the message Python itself raised (`invalid literal for int() ...`,
//! `month must be in 1..12`), because ansible prints that text verbatim. This module does not
//! know about nodes, marks or tags.

use std::sync::LazyLock;

use regex::Regex;

use crate::pyrepr::str_repr;
use crate::value::{TimeOfDay, Timestamp, Value};

/// A Python exception raised while constructing a scalar: its `str()`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PyError(pub String);

const INDEX_ERROR: &str = "string index out of range";

/// `SafeConstructor.construct_yaml_int`.
pub(crate) fn construct_int(text: &str) -> Result<Value, PyError> {
    let cleaned = text.replace('_', "");
    let (negative, body) = split_sign(&cleaned)?;
    let magnitude = if body == "0" {
        BigUint::zero()
    } else if let Some(digits) = body.strip_prefix("0b") {
        py_int(digits, 2)?
    } else if let Some(digits) = body.strip_prefix("0x") {
        py_int(digits, 16)?
    } else if body.starts_with('0') {
        py_int(body, 8)?
    } else if body.contains(':') {
        let mut total = BigUint::zero();
        for part in body.split(':') {
            total.mul_add(60, 0);
            let part = py_int(part, 10)?;
            total = total.add(&part);
        }
        total
    } else {
        py_int(body, 10)?
    };
    Ok(int_value(negative, magnitude))
}

fn int_value(negative: bool, magnitude: SignedBig) -> Value {
    let negative = negative != magnitude.negative;
    let digits = magnitude.abs.to_decimal();
    let text = if negative && digits != "0" { format!("-{digits}") } else { digits };
    match text.parse::<i64>() {
        Ok(n) => Value::Int(n),
        Err(_) => Value::BigInt(text),
    }
}

/// Takes a leading `-`/`+` off as PyYAML does: indexing an empty string fails.
fn split_sign(text: &str) -> Result<(bool, &str), PyError> {
    let first = text.chars().next().ok_or_else(|| PyError(INDEX_ERROR.into()))?;
    match first {
        '-' => Ok((true, &text[1..])),
        '+' => Ok((false, &text[1..])),
        _ => Ok((false, text)),
    }
}

/// Python's `int(text, base)` once underscores are gone: optional sign, the base's optional
/// prefix, at least one digit.
fn py_int(text: &str, base: u32) -> Result<SignedBig, PyError> {
    let invalid =
        || PyError(format!("invalid literal for int() with base {base}: {}", str_repr(text)));
    let body = tack_py::text::strip(text);
    let (negative, body) = match body.as_bytes().first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    let prefix = match base {
        2 => Some("0b"),
        8 => Some("0o"),
        16 => Some("0x"),
        _ => None,
    };
    let digits = match prefix {
        Some(p) if body.len() > 2 && body[..2].eq_ignore_ascii_case(p) => &body[2..],
        _ => body,
    };
    if digits.is_empty() {
        return Err(invalid());
    }
    let mut value = BigUint::default();
    for c in digits.chars() {
        let d = c.to_digit(base).ok_or_else(invalid)?;
        value.mul_add(base, d);
    }
    Ok(SignedBig { negative, abs: value })
}

/// `SafeConstructor.construct_yaml_float`.
pub(crate) fn construct_float(text: &str) -> Result<f64, PyError> {
    let cleaned = text.replace('_', "").to_lowercase();
    let (negative, body) = split_sign(&cleaned)?;
    let sign = if negative { -1.0 } else { 1.0 };
    if body == ".inf" {
        return Ok(sign * f64::INFINITY);
    }
    if body == ".nan" {
        return Ok(f64::NAN);
    }
    if body.contains(':') {
        let mut total = 0.0;
        for part in body.split(':') {
            total = total * 60.0 + py_float(part)?;
        }
        return Ok(sign * total);
    }
    Ok(sign * py_float(body)?)
}

/// Python's `float(text)`.
fn py_float(text: &str) -> Result<f64, PyError> {
    tack_py::num::float(text)
        .ok_or_else(|| PyError(format!("could not convert string to float: {}", str_repr(text))))
}

/// `SafeConstructor.construct_yaml_bool`: a lookup that raises `KeyError` on anything else.
pub(crate) fn construct_bool(text: &str) -> Result<bool, PyError> {
    let lower = text.to_lowercase();
    match lower.as_str() {
        "yes" | "true" | "on" => Ok(true),
        "no" | "false" | "off" => Ok(false),
        _ => Err(PyError(str_repr(&lower))),
    }
}

static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern, exercised by the tests below.
    Regex::new(
        r"^(?P<year>[0-9][0-9][0-9][0-9])-(?P<month>[0-9][0-9]?)-(?P<day>[0-9][0-9]?)(?:(?:[Tt]|[ \t]+)(?P<hour>[0-9][0-9]?):(?P<minute>[0-9][0-9]):(?P<second>[0-9][0-9])(?:\.(?P<fraction>[0-9]*))?(?:[ \t]*(?P<tz>Z|(?P<tz_sign>[-+])(?P<tz_hour>[0-9][0-9]?)(?::(?P<tz_minute>[0-9][0-9]))?))?)?$",
    )
    .expect("timestamp pattern is valid")
});

/// `SafeConstructor.construct_yaml_timestamp`, with Python's `date`/`datetime` validation.
pub(crate) fn construct_timestamp(text: &str) -> Result<Timestamp, PyError> {
    let matched = text.strip_suffix('\n').unwrap_or(text);
    let caps = TIMESTAMP
        .captures(matched)
        .ok_or_else(|| PyError("'NoneType' object has no attribute 'groupdict'".into()))?;
    let num = |name: &str| caps.name(name).map_or(0, |m| m.as_str().parse::<u32>().unwrap_or(0));
    let (year, month, day) = (num("year"), num("month"), num("day"));
    if caps.name("hour").is_none() {
        check_date(year, month, day)?;
        return Ok(Timestamp { year: year as i32, month: month as u8, day: day as u8, time: None });
    }
    let (hour, minute, second) = (num("hour"), num("minute"), num("second"));
    let microsecond = match caps.name("fraction").map(|m| m.as_str()) {
        Some(f) if !f.is_empty() => {
            let mut digits: String = f.chars().take(6).collect();
            while digits.len() < 6 {
                digits.push('0');
            }
            digits.parse::<u32>().unwrap_or(0)
        }
        _ => 0,
    };
    let utc_offset_minutes = match caps.name("tz_sign") {
        Some(sign) => {
            let minutes = num("tz_hour") as i32 * 60 + num("tz_minute") as i32;
            let minutes = if sign.as_str() == "-" { -minutes } else { minutes };
            check_offset(minutes)?;
            Some(minutes)
        }
        None if caps.name("tz").is_some() => Some(0),
        None => None,
    };
    check_date(year, month, day)?;
    check_time(hour, minute, second)?;
    Ok(Timestamp {
        year: year as i32,
        month: month as u8,
        day: day as u8,
        time: Some(TimeOfDay {
            hour: hour as u8,
            minute: minute as u8,
            second: second as u8,
            microsecond,
            utc_offset_minutes,
        }),
    })
}

fn check_date(year: u32, month: u32, day: u32) -> Result<(), PyError> {
    if !(1..=9999).contains(&year) {
        return Err(PyError(format!("year {year} is out of range")));
    }
    if !(1..=12).contains(&month) {
        return Err(PyError("month must be in 1..12".into()));
    }
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if !(1..=days).contains(&day) {
        return Err(PyError("day is out of range for month".into()));
    }
    Ok(())
}

fn check_time(hour: u32, minute: u32, second: u32) -> Result<(), PyError> {
    if hour > 23 {
        return Err(PyError("hour must be in 0..23".into()));
    }
    if minute > 59 {
        return Err(PyError("minute must be in 0..59".into()));
    }
    if second > 59 {
        return Err(PyError("second must be in 0..59".into()));
    }
    Ok(())
}

/// `datetime.timezone(delta)` refuses offsets of a day or more.
fn check_offset(minutes: i32) -> Result<(), PyError> {
    if minutes.abs() < 24 * 60 {
        return Ok(());
    }
    let seconds = i64::from(minutes) * 60;
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let mut fields = Vec::new();
    if days != 0 {
        fields.push(format!("days={days}"));
    }
    if rest != 0 {
        fields.push(format!("seconds={rest}"));
    }
    Err(PyError(format!(
        "offset must be a timedelta strictly between -timedelta(hours=24) and \
         timedelta(hours=24), not datetime.timedelta({}).",
        fields.join(", ")
    )))
}

struct SignedBig {
    negative: bool,
    abs: BigUint,
}

impl SignedBig {
    fn zero() -> SignedBig {
        SignedBig { negative: false, abs: BigUint::default() }
    }

    fn mul_add(&mut self, mul: u32, add: u32) {
        self.abs.mul_add(mul, add);
    }

    fn add(self, other: &SignedBig) -> SignedBig {
        // Base-60 parts are each Python ints and may carry their own sign.
        if self.negative == other.negative {
            return SignedBig { negative: self.negative, abs: self.abs.add(&other.abs) };
        }
        match self.abs.cmp_mag(&other.abs) {
            std::cmp::Ordering::Less => {
                SignedBig { negative: other.negative, abs: other.abs.sub(&self.abs) }
            }
            _ => SignedBig { negative: self.negative, abs: self.abs.sub(&other.abs) },
        }
    }
}

/// Unbounded unsigned integer, little-endian base-10^9 limbs. PyYAML's ints are unbounded; the
/// only operations needed are parsing in a base, addition and printing in decimal, too little
/// to pull in a bignum crate for.
#[derive(Default, Clone)]
struct BigUint {
    limbs: Vec<u32>,
}

const LIMB: u64 = 1_000_000_000;

impl BigUint {
    fn zero() -> SignedBig {
        SignedBig::zero()
    }

    fn mul_add(&mut self, mul: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.limbs {
            let v = u64::from(*limb) * u64::from(mul) + carry;
            *limb = (v % LIMB) as u32;
            carry = v / LIMB;
        }
        while carry > 0 {
            self.limbs.push((carry % LIMB) as u32);
            carry /= LIMB;
        }
    }

    fn add(&self, other: &BigUint) -> BigUint {
        let mut limbs = Vec::with_capacity(self.limbs.len().max(other.limbs.len()) + 1);
        let mut carry = 0u64;
        for i in 0..self.limbs.len().max(other.limbs.len()) {
            let v = u64::from(*self.limbs.get(i).unwrap_or(&0))
                + u64::from(*other.limbs.get(i).unwrap_or(&0))
                + carry;
            limbs.push((v % LIMB) as u32);
            carry = v / LIMB;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
        BigUint { limbs }.trimmed()
    }

    /// `self - other`, with `self >= other`.
    fn sub(&self, other: &BigUint) -> BigUint {
        let mut limbs = Vec::with_capacity(self.limbs.len());
        let mut borrow = 0i64;
        for i in 0..self.limbs.len() {
            let mut v =
                i64::from(self.limbs[i]) - i64::from(*other.limbs.get(i).unwrap_or(&0)) - borrow;
            borrow = i64::from(v < 0);
            if v < 0 {
                v += LIMB as i64;
            }
            limbs.push(v as u32);
        }
        BigUint { limbs }.trimmed()
    }

    fn trimmed(mut self) -> BigUint {
        while self.limbs.last() == Some(&0) {
            self.limbs.pop();
        }
        self
    }

    fn cmp_mag(&self, other: &BigUint) -> std::cmp::Ordering {
        let (a, b) = (self.clone().trimmed(), other.clone().trimmed());
        a.limbs
            .len()
            .cmp(&b.limbs.len())
            .then_with(|| a.limbs.iter().rev().cmp(b.limbs.iter().rev()))
    }

    fn to_decimal(&self) -> String {
        let trimmed = self.clone().trimmed();
        let Some((last, rest)) = trimmed.limbs.split_last() else {
            return "0".into();
        };
        let mut out = last.to_string();
        for limb in rest.iter().rev() {
            out.push_str(&format!("{limb:09}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> Value {
        construct_int(s).unwrap()
    }

    #[test]
    fn ints_as_pyyaml_builds_them() {
        assert_eq!(int("190:20:30"), Value::Int(685_230));
        assert_eq!(int("0x_1A"), Value::Int(26));
        assert_eq!(int("-0b101"), Value::Int(-5));
        assert_eq!(int("017"), Value::Int(15));
        assert_eq!(int("0o17"), Value::Int(15));
        assert_eq!(int("+1_000"), Value::Int(1000));
        assert_eq!(int("-0"), Value::Int(0));
        assert_eq!(int("0xFFFFFFFFFFFFFFFFFF"), Value::BigInt("4722366482869645213695".into()));
        assert_eq!(int("-9223372036854775808"), Value::Int(i64::MIN));
        assert_eq!(construct_int("").unwrap_err().0, INDEX_ERROR);
        assert_eq!(
            construct_int("1.5").unwrap_err().0,
            "invalid literal for int() with base 10: '1.5'"
        );
    }

    #[test]
    fn floats_as_pyyaml_builds_them() {
        assert_eq!(construct_float("1_000.5").unwrap(), 1000.5);
        assert_eq!(construct_float("-.Inf").unwrap(), f64::NEG_INFINITY);
        assert!(construct_float(".NaN").unwrap().is_nan());
        assert_eq!(construct_float("1:30.5").unwrap(), 90.5);
        assert_eq!(construct_float("1e3").unwrap(), 1000.0);
        assert_eq!(
            construct_float("abc").unwrap_err().0,
            "could not convert string to float: 'abc'"
        );
    }

    #[test]
    fn timestamps_validate_as_python_does() {
        let t = construct_timestamp("2001-12-14t21:59:43.10-05:00").unwrap();
        let time = t.time.unwrap();
        assert_eq!(
            (time.hour, time.microsecond, time.utc_offset_minutes),
            (21, 100_000, Some(-300))
        );
        assert_eq!(construct_timestamp("2001-13-01").unwrap_err().0, "month must be in 1..12");
        assert_eq!(
            construct_timestamp("2001-02-29").unwrap_err().0,
            "day is out of range for month"
        );
        assert!(construct_timestamp("2000-02-29").is_ok());
    }
}
