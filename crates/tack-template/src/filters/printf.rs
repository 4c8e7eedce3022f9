//! Python's printf-style formatting (`text % args`), as Jinja2's `format` filter applies it:
//! `%s`, `%r`, `%d`, `%i`, `%f`, `%e`, `%g`, `%x`, `%o`, `%c`, `%%`, with flags, width,
//! precision and `%(name)s` mapping keys, and Python's messages for bad calls.

use minijinja::Value;
use minijinja::value::ValueKind;

use super::FilterError;
use super::pyval::{self, str_of, type_name};

/// Python's `text % args` (printf-style formatting) for the conversions templates use.
pub(crate) fn percent_format(fmt: &str, args: &Value) -> Result<String, FilterError> {
    let (positional, mapping) = match args.kind() {
        ValueKind::Map => (Vec::new(), Some(args)),
        ValueKind::Seq => (pyval::list_of(args).unwrap_or_default(), None),
        _ => (vec![args.clone()], None),
    };
    let mut next = positional.iter();
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut key = None;
        if chars.peek() == Some(&'(') {
            chars.next();
            let mut name = String::new();
            for k in chars.by_ref() {
                if k == ')' {
                    break;
                }
                name.push(k);
            }
            key = Some(name);
        }
        let mut flags = String::new();
        while let Some(&f) = chars.peek() {
            if "-+ #0".contains(f) {
                flags.push(f);
                chars.next();
            } else {
                break;
            }
        }
        let mut width = String::new();
        while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            width.push(d);
            chars.next();
        }
        let mut precision = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = String::new();
            while let Some(&d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                p.push(d);
                chars.next();
            }
            precision = Some(p.parse::<usize>().unwrap_or(0));
        }
        let Some(conv) = chars.next() else {
            return Err(FilterError::failed("incomplete format"));
        };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = match (&key, mapping) {
            (Some(k), Some(m)) => m
                .get_item(&Value::from(k.as_str()))
                .ok()
                .filter(|v| !v.is_undefined())
                .ok_or_else(|| FilterError::failed(tack_yaml::pyrepr::str_repr(k)))?,
            (Some(_), None) => return Err(FilterError::failed("format requires a mapping")),
            (None, Some(m)) if positional.is_empty() => m.clone(),
            (None, _) => next
                .next()
                .cloned()
                .ok_or_else(|| FilterError::failed("not enough arguments for format string"))?,
        };
        let body = match conv {
            's' => {
                let s = str_of(&arg);
                match precision {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            'r' | 'a' => pyval::repr_of(&arg),
            'd' | 'i' | 'u' => match pyval::num(&arg) {
                Some(pyval::Num::Int(i)) => sign(i >= 0, &flags, i.unsigned_abs().to_string()),
                Some(pyval::Num::Float(f)) => {
                    sign(f >= 0.0, &flags, format!("{}", f.trunc().abs()))
                }
                None => {
                    return Err(FilterError::failed(format!(
                        "%{conv} format: a real number is required, not {}",
                        type_name(&arg)
                    )));
                }
            },
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                let Some(n) = pyval::num(&arg) else {
                    return Err(FilterError::failed(format!(
                        "must be real number, not {}",
                        type_name(&arg)
                    )));
                };
                let f = n.as_f64();
                let p = precision.unwrap_or(6);
                let digits = match conv {
                    'f' | 'F' => format!("{:.*}", p, f.abs()),
                    'e' | 'E' => exp_format(f.abs(), p, conv == 'E'),
                    _ => general_format(f.abs(), p, conv == 'G'),
                };
                sign(f >= 0.0 || f.is_nan(), &flags, digits)
            }
            'x' | 'X' | 'o' => match pyval::num(&arg) {
                Some(pyval::Num::Int(i)) => {
                    let digits = match conv {
                        'x' => format!("{:x}", i.unsigned_abs()),
                        'X' => format!("{:X}", i.unsigned_abs()),
                        _ => format!("{:o}", i.unsigned_abs()),
                    };
                    let prefix = if flags.contains('#') {
                        match conv {
                            'x' => "0x",
                            'X' => "0X",
                            _ => "0o",
                        }
                    } else {
                        ""
                    };
                    sign(i >= 0, &flags, format!("{prefix}{digits}"))
                }
                _ => {
                    return Err(FilterError::failed(format!(
                        "%{conv} format: an integer is required, not {}",
                        type_name(&arg)
                    )));
                }
            },
            'c' => match pyval::num(&arg) {
                Some(pyval::Num::Int(i)) => u32::try_from(i)
                    .ok()
                    .and_then(char::from_u32)
                    .map(String::from)
                    .ok_or_else(|| FilterError::failed("%c arg not in range(0x110000)"))?,
                _ => str_of(&arg),
            },
            other => {
                return Err(FilterError::failed(format!(
                    "unsupported format character '{other}' (0x{:x}) at index {}",
                    other as u32,
                    fmt.find(other).unwrap_or(0)
                )));
            }
        };
        let width = width.parse::<usize>().unwrap_or(0);
        let len = body.chars().count();
        if len >= width {
            out.push_str(&body);
        } else if flags.contains('-') {
            out.push_str(&body);
            out.push_str(&crate::python::memory::repeat(" ", width - len));
        } else if flags.contains('0') && !matches!(conv, 's' | 'r' | 'a' | 'c') {
            let (sign_part, digits) = match body.chars().next() {
                Some(c @ ('-' | '+' | ' ')) => (c.to_string(), body[1..].to_string()),
                _ => (String::new(), body.clone()),
            };
            out.push_str(&sign_part);
            out.push_str(&crate::python::memory::repeat("0", width - len));
            out.push_str(&digits);
        } else {
            out.push_str(&crate::python::memory::repeat(" ", width - len));
            out.push_str(&body);
        }
    }
    if next.next().is_some() {
        return Err(FilterError::failed("not all arguments converted during string formatting"));
    }
    Ok(out)
}

fn sign(non_negative: bool, flags: &str, digits: String) -> String {
    if !non_negative {
        format!("-{digits}")
    } else if flags.contains('+') {
        format!("+{digits}")
    } else if flags.contains(' ') {
        format!(" {digits}")
    } else {
        digits
    }
}

/// C's `%.Ne`: mantissa with `precision` digits and an exponent of at least two digits.
fn exp_format(f: f64, precision: usize, upper: bool) -> String {
    let s = format!("{:.*e}", precision, f);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let e = if upper { 'E' } else { 'e' };
    format!("{mantissa}{e}{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// C's `%.Ng`.
fn general_format(f: f64, precision: usize, upper: bool) -> String {
    let p = precision.max(1);
    if f == 0.0 {
        return "0".into();
    }
    let exp = format!("{:.*e}", p - 1, f)
        .split_once('e')
        .and_then(|(_, e)| e.parse::<i32>().ok())
        .unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let s = exp_format(f, p - 1, upper);
        let (m, e) = s.split_at(s.find(['e', 'E']).unwrap_or(s.len()));
        let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
        format!("{m}{e}")
    } else {
        let s = format!("{:.*}", (p as i32 - 1 - exp).max(0) as usize, f);
        if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
    }
}
