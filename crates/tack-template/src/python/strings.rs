//! Methods of Python's `str`: `minijinja-contrib`'s `pycompat` set, plus the ones it lacks
//! that ansible users call (`rsplit`, `zfill`, `partition`, `ljust`, ...).

use minijinja::value::{Value as JValue, from_args};
use minijinja::{Error, ErrorKind, State};

use crate::value::new_list;

/// `s.method(*args)`, or `None` when `str` has no such method.
pub(crate) fn call(
    state: &mut State,
    s: &str,
    method: &str,
    args: &[JValue],
) -> Option<Result<JValue, Error>> {
    if let Some(result) = own(s, method, args) {
        return Some(result);
    }
    if method == "format" {
        return Some(super::format::format(state, s, args));
    }
    if method == "format_map" {
        // `format_map(m)` is `format(**m)`.
        let Some(mapping) = args.first() else {
            return Some(Err(Error::new(
                ErrorKind::MissingArgument,
                "format_map() takes exactly one argument (0 given)",
            )));
        };
        let kwargs: Result<Vec<(String, JValue)>, Error> = mapping
            .try_iter()
            .and_then(|keys| keys.map(|k| Ok((k.to_string(), mapping.get_item(&k)?))).collect());
        let kwargs = match kwargs {
            Ok(kv) => JValue::from(minijinja::value::Kwargs::from_iter(kv)),
            Err(e) => return Some(Err(e)),
        };
        return call(state, s, "format", &[kwargs]);
    }
    match minijinja_contrib::pycompat::unknown_method_callback(
        state,
        &JValue::from(s),
        method,
        args,
    ) {
        Err(e) if e.kind() == ErrorKind::UnknownMethod => None,
        Ok(v) if v.kind() == minijinja::value::ValueKind::Seq => {
            Some(v.try_iter().map(|it| new_list(it.collect())))
        }
        other => Some(other),
    }
}

fn own(s: &str, method: &str, args: &[JValue]) -> Option<Result<JValue, Error>> {
    Some(match method {
        "split" => split(s, args, false),
        "rsplit" => split(s, args, true),
        "zfill" => (|| {
            let (width,): (usize,) = from_args(args)?;
            Ok(JValue::from(zfill(s, width)))
        })(),
        "ljust" | "rjust" | "center" => (|| {
            let (width, fill): (usize, Option<String>) = from_args(args)?;
            let fill = fill.unwrap_or_else(|| " ".into());
            let mut chars = fill.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "The fill character must be exactly one character long",
                ));
            };
            Ok(JValue::from(justify(s, width, c, method)))
        })(),
        "partition" | "rpartition" => (|| {
            let (sep,): (String,) = from_args(args)?;
            let found = if method == "partition" { s.find(&sep) } else { s.rfind(&sep) };
            let parts = match found {
                Some(i) => [&s[..i], sep.as_str(), &s[i + sep.len()..]],
                None if method == "partition" => [s, "", ""],
                None => ["", "", s],
            };
            Ok(new_list(parts.iter().map(|p| JValue::from(*p)).collect()))
        })(),
        "removeprefix" => (|| {
            let (p,): (String,) = from_args(args)?;
            Ok(JValue::from(s.strip_prefix(p.as_str()).unwrap_or(s)))
        })(),
        "removesuffix" => (|| {
            let (p,): (String,) = from_args(args)?;
            Ok(JValue::from(s.strip_suffix(p.as_str()).unwrap_or(s)))
        })(),
        "swapcase" => (|| {
            let () = from_args(args)?;
            let out: String = s
                .chars()
                .flat_map(|c| {
                    if c.is_uppercase() {
                        c.to_lowercase().collect::<Vec<_>>()
                    } else {
                        c.to_uppercase().collect::<Vec<_>>()
                    }
                })
                .collect();
            Ok(JValue::from(out))
        })(),
        "index" | "rindex" => (|| {
            let (sub,): (String,) = from_args(args)?;
            let found = if method == "index" { s.find(&sub) } else { s.rfind(&sub) };
            match found {
                Some(byte) => Ok(JValue::from(s[..byte].chars().count())),
                None => Err(crate::python::methods::py_error("substring not found")),
            }
        })(),
        "expandtabs" => (|| {
            let (size,): (Option<usize>,) = from_args(args)?;
            let size = size.unwrap_or(8);
            let mut out = String::new();
            let mut col = 0;
            for c in s.chars() {
                match c {
                    '\t' if size > 0 => {
                        let pad = size - col % size;
                        out.push_str(&crate::python::memory::repeat(" ", pad));
                        col += pad;
                    }
                    '\t' => {}
                    '\n' | '\r' => {
                        out.push(c);
                        col = 0;
                    }
                    _ => {
                        out.push(c);
                        col += 1;
                    }
                }
            }
            Ok(JValue::from(out))
        })(),
        "casefold" => (|| {
            let () = from_args(args)?;
            Ok(JValue::from(s.to_lowercase()))
        })(),
        _ => return None,
    })
}

/// `str.split(sep=None, maxsplit=-1)` and `str.rsplit`.
fn split(s: &str, args: &[JValue], from_right: bool) -> Result<JValue, Error> {
    let (sep, maxsplit): (Option<JValue>, Option<i64>) = from_args(args)?;
    let sep = sep.filter(|v| !v.is_none()).map(|v| v.to_string());
    let max = maxsplit.filter(|m| *m >= 0).map(|m| m as usize);
    let parts: Vec<String> = match (&sep, from_right) {
        (Some(sep), _) if sep.is_empty() => {
            return Err(Error::new(ErrorKind::InvalidOperation, "empty separator"));
        }
        (Some(sep), false) => match max {
            Some(n) => s.splitn(n + 1, sep.as_str()).map(str::to_string).collect(),
            None => s.split(sep.as_str()).map(str::to_string).collect(),
        },
        (Some(sep), true) => {
            let mut v: Vec<String> = match max {
                Some(n) => s.rsplitn(n + 1, sep.as_str()).map(str::to_string).collect(),
                None => s.rsplit(sep.as_str()).map(str::to_string).collect(),
            };
            v.reverse();
            v
        }
        (None, false) => whitespace_split(s, max),
        (None, true) => {
            let rev: String = s.chars().rev().collect();
            let mut v: Vec<String> = whitespace_split(&rev, max)
                .into_iter()
                .map(|p| p.chars().rev().collect())
                .collect();
            v.reverse();
            v
        }
    };
    Ok(new_list(parts.into_iter().map(JValue::from).collect()))
}

/// Python's whitespace split (whitespace as CPython's `str.isspace`, from `tack_py`): runs of
/// whitespace separate, leading and trailing ignored; after `max` splits the rest
/// (left-trimmed) is the last part.
fn whitespace_split(s: &str, max: Option<usize>) -> Vec<String> {
    let Some(max) = max else {
        return tack_py::text::split(s).into_iter().map(str::to_string).collect();
    };
    let space = tack_py::unicode::is_space;
    let mut out = Vec::new();
    let mut rest = s.trim_start_matches(space);
    while !rest.is_empty() {
        if out.len() == max {
            out.push(rest.to_string());
            break;
        }
        match rest.find(space) {
            Some(i) => {
                out.push(rest[..i].to_string());
                rest = rest[i..].trim_start_matches(space);
            }
            None => {
                out.push(rest.to_string());
                break;
            }
        }
    }
    out
}

fn zfill(s: &str, width: usize) -> String {
    let len = s.chars().count();
    if len >= width {
        return s.to_string();
    }
    let pad = crate::python::memory::repeat("0", width - len);
    match s.chars().next() {
        Some(c @ ('+' | '-')) => format!("{c}{pad}{}", &s[1..]),
        _ => format!("{pad}{s}"),
    }
}

fn justify(s: &str, width: usize, fill: char, how: &str) -> String {
    let len = s.chars().count();
    if len >= width {
        return s.to_string();
    }
    let total = width - len;
    let (left, right) = match how {
        "ljust" => (0, total),
        "rjust" => (total, 0),
        // CPython's center puts the odd space on the left when the width is odd.
        _ => {
            let left = total / 2 + (total & width & 1);
            (left, total - left)
        }
    };
    let f = fill.to_string();
    let mem = crate::python::memory::repeat;
    format!("{}{s}{}", mem(&f, left), mem(&f, right))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_split_follows_python() {
        assert_eq!(whitespace_split("  a b  c ", None), ["a", "b", "c"]);
        assert_eq!(whitespace_split("a b  c", Some(1)), ["a", "b  c"]);
        assert!(whitespace_split("   ", None).is_empty());
    }

    #[test]
    fn zfill_keeps_sign_first() {
        assert_eq!(zfill("-42", 5), "-0042");
        assert_eq!(zfill("7", 3), "007");
        assert_eq!(zfill("1234", 2), "1234");
    }
}
