//! Python's `%` operator: printf-style string formatting (`'%s-%05.1f' % (a, b)`) and, on
//! numbers, the remainder with the divisor's sign. minijinja's `%` knows only numbers, so the
//! engine's pre-pass turns `a % b` into a call of [`py_mod`].
//!
//! Written here because no crate formats the way CPython's `%` does (its `%g`, `%r` and
//! tuple/mapping argument rules).

use crate::python::memory;
use minijinja::value::{Value as JValue, ValueKind};
use minijinja::{Error, ErrorKind};

use super::repr::{repr_of, str_of, type_name};
use crate::vars::objects::List;

fn py_error(message: impl Into<String>) -> Error {
    crate::engine::final_error(
        ErrorKind::InvalidOperation,
        format!("Error rendering template: {}", message.into()),
    )
}

/// `a % b` as Python evaluates it.
pub(crate) fn py_mod(a: JValue, b: JValue) -> Result<JValue, Error> {
    if let Some(format) = a.as_str() {
        return format_percent(format, &b).map(JValue::from);
    }
    if a.kind() != ValueKind::Number || b.kind() != ValueKind::Number {
        return Err(py_error(format!(
            "unsupported operand type(s) for %: '{}' and '{}'",
            type_name(&a),
            type_name(&b)
        )));
    }
    if a.is_integer() && b.is_integer() {
        let (x, y) = (i128::try_from(a.clone())?, i128::try_from(b.clone())?);
        if y == 0 {
            return Err(py_error("integer modulo by zero"));
        }
        return Ok(JValue::from(
            x.rem_euclid(y) + if y < 0 && x.rem_euclid(y) != 0 { y } else { 0 },
        ));
    }
    let (x, y) = (f64::try_from(a)?, f64::try_from(b)?);
    if y == 0.0 {
        return Err(py_error("float modulo by zero"));
    }
    let mut r = x % y;
    if r != 0.0 && (r < 0.0) != (y < 0.0) {
        r += y;
    }
    Ok(JValue::from(r))
}

/// The arguments of `format % args`: a tuple spreads, a mapping is looked up by name, any
/// other value (a list included) is the single argument.
enum Args<'a> {
    Positional(Vec<JValue>),
    Mapping(&'a JValue),
}

fn args_of(value: &JValue) -> Result<Args<'_>, Error> {
    let is_tuple = value.kind() == ValueKind::Seq && value.downcast_object_ref::<List>().is_none();
    if is_tuple {
        return Ok(Args::Positional(value.try_iter()?.collect()));
    }
    if value.kind() == ValueKind::Map {
        return Ok(Args::Mapping(value));
    }
    Ok(Args::Positional(vec![value.clone()]))
}

/// `format % value`.
pub(crate) fn format_percent(format: &str, value: &JValue) -> Result<String, Error> {
    let args = args_of(value)?;
    let mut positional = match &args {
        Args::Positional(v) => v.clone().into_iter(),
        Args::Mapping(_) => Vec::new().into_iter(),
    };
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    let mut used_mapping = false;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        if chars.peek() == Some(&'(') {
            chars.next();
            let mut name = String::new();
            for c in chars.by_ref() {
                if c == ')' {
                    break;
                }
                name.push(c);
            }
            spec.name = Some(name);
        }
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.left = true,
                '0' => spec.zero = true,
                '+' => spec.plus = true,
                ' ' => spec.space = true,
                '#' => spec.alternate = true,
                _ => break,
            }
            chars.next();
        }
        spec.width = digits(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.precision = Some(digits(&mut chars).unwrap_or(0));
        }
        let Some(conv) = chars.next() else {
            return Err(py_error("incomplete format"));
        };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = match (&spec.name, &args) {
            (Some(name), Args::Mapping(map)) => {
                used_mapping = true;
                let v = map.get_item(&JValue::from(name.as_str()))?;
                if v.is_undefined() {
                    return Err(py_error(tack_yaml::pyrepr::str_repr(name)));
                }
                v
            }
            (Some(_), Args::Positional(_)) => {
                return Err(py_error("format requires a mapping"));
            }
            (None, Args::Mapping(map)) => {
                // A mapping as the only argument of an unnamed conversion.
                if positional.len() == 0 && !used_mapping {
                    used_mapping = true;
                    (*map).clone()
                } else {
                    return Err(py_error("not enough arguments for format string"));
                }
            }
            (None, Args::Positional(_)) => positional
                .next()
                .ok_or_else(|| py_error("not enough arguments for format string"))?,
        };
        out.push_str(&spec.apply(conv, &arg)?);
    }
    if matches!(args, Args::Positional(_)) && positional.next().is_some() {
        return Err(py_error("not all arguments converted during string formatting"));
    }
    Ok(out)
}

fn digits(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<usize> {
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        n = Some(n.unwrap_or(0) * 10 + d as usize);
        chars.next();
    }
    n
}

#[derive(Default)]
struct Spec {
    name: Option<String>,
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alternate: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

impl Spec {
    fn apply(&self, conv: char, arg: &JValue) -> Result<String, Error> {
        let numeric = !matches!(conv, 's' | 'r' | 'a' | 'c');
        let body = match conv {
            's' => truncate(str_of(arg)?, self.precision),
            'r' | 'a' => truncate(repr_of(arg)?, self.precision),
            'c' => match (arg.as_str(), arg.as_i64()) {
                (Some(s), _) if s.chars().count() == 1 => s.to_string(),
                (_, Some(i)) => char::from_u32(i as u32).map(String::from).unwrap_or_default(),
                _ => return Err(py_error("%c requires an int or a unicode character")),
            },
            'd' | 'i' | 'u' => self.signed(integer(arg, conv)?.to_string()),
            'x' | 'X' | 'o' => {
                let i = integer(arg, conv)?;
                let mag = i.unsigned_abs();
                let mut s = match conv {
                    'x' => format!("{mag:x}"),
                    'X' => format!("{mag:X}"),
                    _ => format!("{mag:o}"),
                };
                if self.alternate {
                    // Python writes the prefix in the conversion's case: `0x`, `0X`, `0o`.
                    s = format!("0{conv}{s}");
                }
                self.signed(if i < 0 { format!("-{s}") } else { s })
            }
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                let f = float(arg, conv)?;
                self.signed(format_float(f, conv, self.precision.unwrap_or(6), self.alternate))
            }
            other => {
                return Err(py_error(format!(
                    "unsupported format character '{other}' (0x{:x})",
                    other as u32
                )));
            }
        };
        Ok(self.pad(body, numeric))
    }

    fn signed(&self, s: String) -> String {
        if s.starts_with('-') {
            s
        } else if self.plus {
            format!("+{s}")
        } else if self.space {
            format!(" {s}")
        } else {
            s
        }
    }

    fn pad(&self, body: String, numeric: bool) -> String {
        let width = self.width.unwrap_or(0);
        let len = body.chars().count();
        if len >= width {
            return body;
        }
        let fill = width - len;
        if self.left {
            return format!("{body}{}", memory::repeat(" ", fill));
        }
        if self.zero && numeric {
            let (sign, rest) = match body.chars().next() {
                Some(c @ ('-' | '+' | ' ')) => (c.to_string(), &body[1..]),
                _ => (String::new(), body.as_str()),
            };
            return format!("{sign}{}{rest}", memory::repeat("0", fill));
        }
        format!("{}{body}", memory::repeat(" ", fill))
    }
}

fn truncate(s: String, precision: Option<usize>) -> String {
    match precision {
        Some(p) => s.chars().take(p).collect(),
        None => s,
    }
}

fn integer(arg: &JValue, conv: char) -> Result<i128, Error> {
    match arg.kind() {
        ValueKind::Bool => Ok(i128::from(arg.is_true())),
        ValueKind::Number if arg.is_integer() => Ok(i128::try_from(arg.clone())?),
        ValueKind::Number if matches!(conv, 'd' | 'i' | 'u') => {
            Ok(f64::try_from(arg.clone())?.trunc() as i128)
        }
        ValueKind::Number => {
            Err(py_error(format!("%{conv} format: an integer is required, not float")))
        }
        _ => Err(py_error(format!(
            "%{conv} format: {} is required, not {}",
            if matches!(conv, 'd' | 'i' | 'u') { "a real number" } else { "an integer" },
            type_name(arg)
        ))),
    }
}

fn float(arg: &JValue, conv: char) -> Result<f64, Error> {
    match arg.kind() {
        ValueKind::Bool => Ok(if arg.is_true() { 1.0 } else { 0.0 }),
        ValueKind::Number => Ok(f64::try_from(arg.clone())?),
        _ => Err(py_error(format!(
            "%{conv} format: a real number is required, not {}",
            type_name(arg)
        ))),
    }
}

/// `%e`-style text with Python's exponent form (`e+00`).
/// A double's exact decimal expansion ends within this many digits after the point (1074 for
/// the smallest subnormal), so any digit asked beyond it is a `0`; Rust's formatter takes a
/// precision up to `u16::MAX` only, Python's any.
const EXACT_DIGITS: usize = 1100;

/// `f` with `precision` digits after the point, as Python's `%.Nf` writes it for any `N`.
fn fixed(f: f64, precision: usize) -> String {
    if precision <= EXACT_DIGITS {
        return format!("{f:.precision$}");
    }
    let mut s = format!("{f:.EXACT_DIGITS$}");
    s.push_str(&memory::repeat("0", precision - EXACT_DIGITS));
    s
}

fn exp_form(f: f64, precision: usize, upper: bool) -> String {
    let shown = precision.min(EXACT_DIGITS);
    let mut s = format!("{f:.shown$e}");
    if precision > shown
        && let Some(at) = s.find('e')
    {
        s.insert_str(at, &memory::repeat("0", precision - shown));
    }
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}{e}{sign}{:02}", exp.abs())
}

fn format_float(f: f64, conv: char, precision: usize, alternate: bool) -> String {
    if f.is_nan() {
        return if conv.is_uppercase() { "NAN".into() } else { "nan".into() };
    }
    if f.is_infinite() {
        let s = if f > 0.0 { "inf" } else { "-inf" };
        return if conv.is_uppercase() { s.to_uppercase() } else { s.into() };
    }
    match conv {
        'f' | 'F' => fixed(f, precision),
        'e' | 'E' => exp_form(f, precision, conv == 'E'),
        _ => {
            let p = precision.max(1);
            let probe = exp_form(f, p - 1, false);
            let exp: i32 = probe.rsplit_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0);
            let mut s = if -4 <= exp && i64::from(exp) < i64::try_from(p).unwrap_or(i64::MAX) {
                fixed(
                    f,
                    usize::try_from(i64::try_from(p).unwrap_or(i64::MAX) - 1 - i64::from(exp))
                        .unwrap_or(0),
                )
            } else {
                exp_form(f, p - 1, conv == 'G')
            };
            if !alternate {
                s = strip_zeros(&s);
            }
            s
        }
    }
}

/// `%g` drops trailing zeros of the fraction (and a bare point).
fn strip_zeros(s: &str) -> String {
    let (num, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let num = if num.contains('.') { num.trim_end_matches('0').trim_end_matches('.') } else { num };
    format!("{num}{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(format: &str, args: JValue) -> String {
        format_percent(format, &args).unwrap()
    }

    #[test]
    fn conversions_follow_python() {
        let tuple = JValue::from(vec![JValue::from("a"), JValue::from(2)]);
        assert_eq!(fmt("%s-%d", tuple), "a-2");
        assert_eq!(fmt("%05.1f", JValue::from(4.26)), "004.3");
        assert_eq!(fmt("%x|%X|%#o", JValue::from(vec![255, 255, 8])), "ff|FF|0o10");
        assert_eq!(fmt("%-4s|", JValue::from("ab")), "ab  |");
        assert_eq!(fmt("%+d", JValue::from(5)), "+5");
        assert_eq!(fmt("%e", JValue::from(12345.678)), "1.234568e+04");
        assert_eq!(
            fmt("%g|%g|%g", JValue::from(vec![0.0001, 1234567.0, 2.5])),
            "0.0001|1.23457e+06|2.5"
        );
        assert_eq!(fmt("%.2s", JValue::from("abc")), "ab");
        assert_eq!(fmt("100%%", JValue::from(vec![] as Vec<JValue>)), "100%");
    }

    #[test]
    fn remainder_takes_the_divisor_sign() {
        assert_eq!(py_mod(JValue::from(-7), JValue::from(3)).unwrap(), JValue::from(2));
        assert_eq!(py_mod(JValue::from(7), JValue::from(-3)).unwrap(), JValue::from(-2));
        assert_eq!(py_mod(JValue::from(-7.5), JValue::from(2.0)).unwrap(), JValue::from(0.5));
    }
}
