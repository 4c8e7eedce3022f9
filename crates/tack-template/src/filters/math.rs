//! Number filters: Jinja2's `int`, `float`, `round`, `abs`, `filesizeformat`, and ansible's
//! `log`, `pow`, `root`, `human_readable`, `human_to_bytes` (`mathstuff.py`, `formatters.py`).
//!
//! Python's number rules apply: `int('0x1f', 16)`, `round()` rounding half to even on the
//! exact binary value and returning an `int` for an `int`, `math.pow` always a float.

use minijinja::{State, Value};

use super::args::{Bound, Sig};
use super::pyval::{self, Num, int_value, type_name};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("int", Sig::new("do_int", &["value", "default", "base"], 1), int),
    Entry::new("float", Sig::new("do_float", &["value", "default"], 1), float),
    Entry::new("round", Sig::new("do_round", &["value", "precision", "method"], 1), round),
    Entry::new("abs", Sig::builtin_one("abs"), abs),
    Entry::new(
        "filesizeformat",
        Sig::new("do_filesizeformat", &["value", "binary"], 1),
        filesizeformat,
    ),
    Entry::new("log", Sig::new("logarithm", &["x", "base"], 1), log),
    Entry::new("pow", Sig::new("power", &["x", "y"], 2), pow),
    Entry::new("root", Sig::new("inversepower", &["x", "base"], 1), root),
    Entry::new(
        "human_readable",
        Sig::new("human_readable", &["size", "isbits", "unit"], 1),
        human_readable,
    ),
    Entry::new(
        "human_to_bytes",
        Sig::new("human_to_bytes", &["size", "default_unit", "isbits"], 1),
        human_to_bytes,
    ),
];

/// Python's `int(text, base)`, or `None` where Python raises `ValueError`.
pub(super) fn parse_int(text: &str, base: u32) -> Option<i128> {
    let t = text.trim_matches(super::strings::is_py_space);
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let lower = digits.to_ascii_lowercase();
    let (base, digits) = match base {
        0 | 16 if lower.starts_with("0x") => (16, &digits[2..]),
        0 | 8 if lower.starts_with("0o") => (8, &digits[2..]),
        0 | 2 if lower.starts_with("0b") => (2, &digits[2..]),
        0 => {
            if digits.trim_start_matches('0').is_empty() || !digits.starts_with('0') {
                (10, digits)
            } else {
                return None;
            }
        }
        b => (b, digits),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let clean: String = digits.chars().filter(|&c| c != '_').collect();
    let n = i128::from_str_radix(&clean, base).ok()?;
    Some(if negative { -n } else { n })
}

/// Python's `float(text)`, or `None` where Python raises `ValueError`.
pub(super) fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim_matches(super::strings::is_py_space);
    let lower = t.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if matches!(unsigned, "inf" | "infinity" | "nan") {
        return lower.replace("infinity", "inf").parse().ok();
    }
    if t.is_empty() || t.starts_with('_') || t.ends_with('_') || t.contains("__") {
        return None;
    }
    let clean: String = t.chars().filter(|&c| c != '_').collect();
    if clean.chars().any(|c| !(c.is_ascii_digit() || "+-.eE".contains(c))) {
        return None;
    }
    clean.parse().ok()
}

fn int(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    let default = args.get(1).cloned().unwrap_or_else(|| Value::from(0));
    let base = match args.get(2) {
        None => 10,
        Some(b) => match pyval::num(b) {
            Some(Num::Int(i)) => u32::try_from(i).unwrap_or(u32::MAX),
            _ => return Ok(default),
        },
    };
    if let Some(s) = value.as_str() {
        if base != 0 && !(2..=36).contains(&base) {
            return Err(FilterError::failed("int() base must be >= 2 and <= 36, or 0"));
        }
        if let Some(i) = parse_int(s, base) {
            return Ok(int_value(i));
        }
        // Jinja2's fallback: `int(float(value))`, so "42.23" gives 42.
        return Ok(parse_float(s)
            .filter(|f| f.is_finite())
            .map(|f| int_value(f.trunc() as i128))
            .unwrap_or(default));
    }
    if args.get(2).is_some() {
        // `int(x, base)` with a non-string `x` raises TypeError, then `int(float(x))` applies.
        return Ok(match pyval::num(value) {
            Some(n) if n.as_f64().is_finite() => int_value(n.as_f64().trunc() as i128),
            _ => default,
        });
    }
    Ok(match pyval::num(value) {
        Some(Num::Int(i)) => int_value(i),
        Some(Num::Float(f)) if f.is_finite() => int_value(f.trunc() as i128),
        _ => default,
    })
}

fn float(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    let default = args.get(1).cloned().unwrap_or_else(|| Value::from(0.0));
    if let Some(s) = value.as_str() {
        return Ok(parse_float(s).map(Value::from).unwrap_or(default));
    }
    Ok(pyval::num(value).map(|n| Value::from(n.as_f64())).unwrap_or(default))
}

/// Python's `round(x, ndigits)` for a float: the exact binary value rounded half to even.
pub(super) fn round_float(x: f64, ndigits: i64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    if ndigits >= 0 {
        let nd = usize::try_from(ndigits.min(330)).unwrap_or(330);
        // Rust's fixed-precision formatting rounds the exact binary value half to even, as
        // CPython's correctly rounded `round()` does.
        return format!("{:.*}", nd, x).parse().unwrap_or(x);
    }
    let pow = 10f64.powi(i32::try_from(-ndigits).unwrap_or(i32::MAX));
    if !pow.is_finite() {
        return 0.0 * x;
    }
    let y = x / pow;
    let mut z = y.round();
    if (y - y.trunc()).abs() == 0.5 {
        z = 2.0 * (y / 2.0).round();
    }
    z * pow
}

fn round(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let method = args.get(2).map(pyval::str_of).unwrap_or_else(|| "common".into());
    if !matches!(method.as_str(), "common" | "ceil" | "floor") {
        return Err(FilterError::failed("method must be common, ceil or floor"));
    }
    let value = args.input();
    let precision = match args.get(1) {
        None => 0,
        Some(p) => match pyval::num(p) {
            Some(Num::Int(i)) => i64::try_from(i).unwrap_or(0),
            _ => {
                return Err(FilterError::failed(format!(
                    "'{}' object cannot be interpreted as an integer",
                    type_name(p)
                )));
            }
        },
    };
    let Some(n) = pyval::num(value) else {
        return Err(FilterError::failed(format!(
            "type {} doesn't define __round__ method",
            type_name(value)
        )));
    };
    if method == "common" {
        return Ok(match n {
            Num::Int(i) if precision >= 0 => int_value(i),
            Num::Int(i) => {
                let pow = 10i128.checked_pow(u32::try_from(-precision).unwrap_or(40));
                match pow {
                    Some(p) => {
                        let (q, r) = (i.div_euclid(p), i.rem_euclid(p));
                        let up = r * 2 > p || (r * 2 == p && q % 2 != 0);
                        int_value((q + i128::from(up)) * p)
                    }
                    None => int_value(0),
                }
            }
            Num::Float(f) => Value::from(round_float(f, precision)),
        });
    }
    let scale = 10f64.powi(i32::try_from(precision).unwrap_or(0));
    let scaled = n.as_f64() * scale;
    let r = if method == "ceil" { scaled.ceil() } else { scaled.floor() };
    Ok(Value::from(r / scale))
}

fn abs(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    match pyval::num(value) {
        Some(Num::Int(i)) => Ok(int_value(i.abs())),
        Some(Num::Float(f)) => Ok(Value::from(f.abs())),
        None => {
            Err(FilterError::failed(format!("bad operand type for abs(): '{}'", type_name(value))))
        }
    }
}

fn filesizeformat(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let value = args.input();
    let bytes = match value.as_str() {
        Some(s) => parse_float(s).ok_or_else(|| {
            FilterError::failed(format!(
                "could not convert string to float: {}",
                pyval::repr_of(value)
            ))
        })?,
        None => pyval::num(value).map(Num::as_f64).ok_or_else(|| {
            FilterError::failed(format!(
                "float() argument must be a string or a real number, not '{}'",
                type_name(value)
            ))
        })?,
    };
    let binary = args.get(1).is_some_and(pyval::truthy);
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    let prefixes: [&str; 8] = if binary {
        ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"]
    } else {
        ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"]
    };
    if bytes == 1.0 {
        return Ok(Value::from("1 Byte"));
    }
    if bytes < base {
        return Ok(Value::from(format!("{} Bytes", bytes.trunc() as i128)));
    }
    let mut unit = base;
    let mut prefix = prefixes[0];
    for (i, p) in prefixes.iter().enumerate() {
        unit = base.powi(i as i32 + 2);
        prefix = p;
        if bytes < unit {
            break;
        }
    }
    Ok(Value::from(format!("{:.1} {prefix}", base * bytes / unit)))
}

fn number(value: &Value, what: &str) -> Result<f64, FilterError> {
    pyval::num(value).map(Num::as_f64).ok_or_else(|| {
        FilterError::caused(
            &format!("{what}() can only be used on numbers"),
            &format!("must be real number, not {}", type_name(value)),
        )
    })
}

fn log(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let x = number(args.input(), "log")?;
    let base = match args.get(1) {
        None => std::f64::consts::E,
        Some(b) => number(b, "log")?,
    };
    if x <= 0.0 || base <= 0.0 {
        return Err(FilterError::failed("math domain error"));
    }
    if base == 10.0 {
        return Ok(Value::from(x.log10()));
    }
    if base == 1.0 {
        return Err(FilterError::failed("float division by zero"));
    }
    Ok(Value::from(x.ln() / base.ln()))
}

fn pow(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let x = number(args.input(), "pow")?;
    let y = number(args.get(1).unwrap_or(&Value::UNDEFINED), "pow")?;
    let r = x.powf(y);
    if r.is_nan() && !x.is_nan() && !y.is_nan() {
        return Err(FilterError::failed("math domain error"));
    }
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(FilterError::failed("math range error"));
    }
    Ok(Value::from(r))
}

fn root(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let fail = |cause: String| FilterError::caused("root() can only be used on numbers", &cause);
    let real = |v: &Value| format!("must be real number, not {}", type_name(v));
    let x = pyval::num(args.input()).map(Num::as_f64).ok_or_else(|| fail(real(args.input())))?;
    let base = match args.get(1) {
        None => 2.0,
        Some(b) => match b.as_str() {
            Some(s) => parse_float(s).ok_or_else(|| {
                fail(format!("could not convert string to float: {}", pyval::repr_of(b)))
            })?,
            None => pyval::num(b).map(Num::as_f64).ok_or_else(|| {
                fail(format!(
                    "float() argument must be a string or a real number, not '{}'",
                    type_name(b)
                ))
            })?,
        },
    };
    if base == 2.0 {
        if x < 0.0 {
            return Err(fail("math domain error".into()));
        }
        return Ok(Value::from(x.sqrt()));
    }
    if base == 0.0 {
        return Err(FilterError::failed("float division by zero"));
    }
    let r = x.powf(1.0 / base);
    if r.is_nan() && !x.is_nan() {
        return Err(fail("math domain error".into()));
    }
    Ok(Value::from(r))
}

const SIZE_RANGES: [(char, u128); 9] = [
    ('Y', 1 << 80),
    ('Z', 1 << 70),
    ('E', 1 << 60),
    ('P', 1 << 50),
    ('T', 1 << 40),
    ('G', 1 << 30),
    ('M', 1 << 20),
    ('K', 1 << 10),
    ('B', 1),
];

fn human_readable(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let size = args.input();
    let Some(size) = pyval::num(size).map(Num::as_f64) else {
        return Err(FilterError::caused(
            "human_readable() failed on bad input",
            &format!("'>=' not supported between instances of '{}' and 'int'", type_name(size)),
        ));
    };
    let isbits = args.get(1).is_some_and(pyval::truthy);
    let unit = args.opt(2).map(pyval::str_of);
    let base = if isbits { "bits" } else { "Bytes" };
    let mut chosen = SIZE_RANGES[SIZE_RANGES.len() - 1];
    for range in SIZE_RANGES {
        chosen = range;
        let matches = match &unit {
            None => size >= range.1 as f64,
            Some(u) => u.to_uppercase().starts_with(range.0) && !u.is_empty(),
        };
        if matches {
            break;
        }
    }
    let (letter, limit) = chosen;
    let suffix = if limit != 1 { format!("{letter}{}", &base[..1]) } else { base.to_string() };
    Ok(Value::from(format!("{:.2} {suffix}", size / limit as f64)))
}

fn human_to_bytes(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let number = pyval::str_of(args.input());
    let cant =
        |cause: String| FilterError::caused("human_to_bytes() can't interpret the input", &cause);
    let bad_string =
        || cant(format!("human_to_bytes() can't interpret following string: {number}"));
    let isbits = args.get(2).is_some_and(pyval::truthy);
    // `^([0-9]*\.?[0-9]+)(?:\s*([A-Za-z]+))?\s*$`
    let body = number.trim_end_matches(super::strings::is_py_space);
    let num_end = body
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(body.len());
    let (num_text, rest) = body.split_at(num_end);
    let valid_num = {
        let (int_part, frac) = match num_text.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (num_text, None),
        };
        int_part.bytes().all(|b| b.is_ascii_digit())
            && match frac {
                Some(f) => !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()),
                None => !int_part.is_empty(),
            }
    };
    let unit_text = rest.trim_start_matches(super::strings::is_py_space);
    let valid_unit = unit_text.chars().all(|c| c.is_ascii_alphabetic());
    if !valid_num || !valid_unit || (!rest.is_empty() && unit_text.is_empty()) {
        return Err(bad_string());
    }
    let num: f64 = num_text.parse().map_err(|_| bad_string())?;
    let unit = if unit_text.is_empty() {
        args.opt(1).map(pyval::str_of)
    } else {
        Some(unit_text.to_string())
    };
    let Some(unit) = unit else {
        return Ok(int_value(round_float(num, 0) as i128));
    };
    let Some(range_key) = unit.chars().next().map(|c| c.to_ascii_uppercase()) else {
        return Err(bad_string());
    };
    let Some((_, limit)) = SIZE_RANGES.iter().find(|(k, _)| *k == range_key) else {
        return Err(cant(format!(
            "human_to_bytes() failed to convert {number} (unit = {unit}). The suffix must be one \
             of Y, Z, E, P, T, G, M, K, B"
        )));
    };
    if unit.chars().count() > 1 {
        let names = [
            ('B', ("byte", "B"), ("bit", "b")),
            ('K', ("kilobyte", "KB"), ("kilobit", "Kb")),
            ('M', ("megabyte", "MB"), ("megabit", "Mb")),
            ('G', ("gigabyte", "GB"), ("gigabit", "Gb")),
            ('T', ("terabyte", "TB"), ("terabit", "Tb")),
            ('P', ("petabyte", "PB"), ("petabit", "Pb")),
            ('E', ("exabyte", "EB"), ("exabit", "Eb")),
            ('Z', ("zetabyte", "ZB"), ("zetabit", "Zb")),
            ('Y', ("yottabyte", "YB"), ("yottabit", "Yb")),
        ];
        let Some((_, bytes, bits)) = names.iter().find(|(k, _, _)| *k == range_key) else {
            return Err(bad_string());
        };
        let (long, short) = if isbits { bits } else { bytes };
        if unit.to_lowercase() != *long && unit != *short {
            let class = if isbits { 'b' } else { 'B' };
            let expect = if range_key == 'B' {
                format!("expect {class} or {}", if isbits { "bit" } else { "byte" })
            } else {
                format!("expect {range_key}{class} or {range_key}")
            };
            return Err(cant(format!(
                "human_to_bytes() failed to convert {number}. Value is not a valid string ({expect})"
            )));
        }
    }
    let total = num * *limit as f64;
    if !total.is_finite() {
        return Err(cant("cannot convert float infinity to integer".into()));
    }
    Ok(int_value(round_float(total, 0) as i128))
}
