//! The `sequence` lookup: numbers from `start` to `end` (or `count` of them) by `stride`,
//! each formatted with a printf-style `format`, given as `key=value` words, as the shortcut
//! `[start-]end[/stride][:format]` or as keyword arguments.
//!
//! It reads nothing but its terms.

use minijinja::value::Value as JValue;

use super::options::{int, py_repr};
use super::{Call, Entry, LookupError};

pub(super) const LOOKUPS: &[Entry] = &[Entry::new("sequence", sequence)];

const PLUGIN: &str = "sequence";

/// The options, typed as `set_option` types them (integers are checked when set).
struct Options {
    start: i64,
    end: Option<i64>,
    count: Option<i64>,
    stride: i64,
    format: String,
}

impl Options {
    fn from_kwargs(call: &Call) -> Result<Options, LookupError> {
        let mut o = Options { start: 1, end: None, count: None, stride: 1, format: "%d".into() };
        for (key, value) in &call.kwargs {
            o.set(key, value)?;
        }
        Ok(o)
    }

    fn set(&mut self, key: &str, value: &JValue) -> Result<(), LookupError> {
        match key {
            "start" => self.start = int(PLUGIN, key, value)?,
            "end" => self.end = Some(int(PLUGIN, key, value)?),
            "count" => self.count = Some(int(PLUGIN, key, value)?),
            "stride" => self.stride = int(PLUGIN, key, value)?,
            "format" => self.format = super::options::string(value),
            _ => {}
        }
        Ok(())
    }
}

/// The shortcut's start, end, stride and format, as written.
type Shortcut<'a> = (Option<&'a str>, &'a str, Option<&'a str>, Option<&'a str>);

/// `^((0?x?[0-9a-f]+)-)?(0?x?[0-9a-f]+)(/(0?x?[0-9a-f]+))?(:(.+))?$`, case-insensitively:
/// the shortcut's start, end, stride and format.
fn shortcut(term: &str) -> Option<Shortcut<'_>> {
    fn num(s: &str) -> usize {
        let b = s.as_bytes();
        let mut i = 0;
        if b.first() == Some(&b'0') && matches!(b.get(1), Some(b'x' | b'X')) {
            i = 2;
        } else if matches!(b.first(), Some(b'x' | b'X')) {
            i = 1;
        }
        let digits = b[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if digits == 0 {
            // `0?` may give back its zero to `[0-9a-f]+` (`0x` alone is not a number).
            return usize::from(b.first() == Some(&b'0'));
        }
        i + digits
    }
    let (body, format) = match term.split_once(':') {
        Some((b, f)) if !f.is_empty() && !f.contains('\n') => (b, Some(f)),
        Some(_) => return None,
        None => (term, None),
    };
    let (range, stride) = match body.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (body, None),
    };
    let whole = |s: &str| !s.is_empty() && num(s) == s.len();
    if stride.is_some_and(|s| !whole(s)) {
        return None;
    }
    let (start, end) = match range.split_once('-') {
        Some((a, b)) => (Some(a), b),
        None => (None, range),
    };
    if start.is_some_and(|s| !whole(s)) || !whole(end) {
        return None;
    }
    Some((start, end, stride, format))
}

fn parse_kv(term: &str, o: &mut Options) -> Result<(), LookupError> {
    let pairs = tack_loader::kv::parse_kv(term, false).map_err(|e| {
        LookupError::failed(format!(
            "unknown error parsing with_sequence arguments: {}. Error was: {e}",
            tack_yaml::pyrepr::str_repr(term)
        ))
    })?;
    let mut unknown = Vec::new();
    for (key, value) in pairs {
        if ["start", "end", "stride", "count", "format"].contains(&key.as_str()) {
            o.set(&key, &JValue::from(value))?;
        } else {
            unknown.push(tack_yaml::pyrepr::str_repr(&key));
        }
    }
    if !unknown.is_empty() {
        return Err(LookupError::failed(format!(
            "unrecognized arguments to with_sequence: [{}]",
            unknown.join(", ")
        )));
    }
    Ok(())
}

fn sequence(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut terms: Vec<String> = Vec::new();
    for t in &call.terms {
        terms.push(super::options::string(t));
    }
    if !call.kwargs.is_empty() && terms.is_empty() {
        terms.push(String::new());
    }
    let mut out = Vec::new();
    for term in &terms {
        let mut o = Options::from_kwargs(call)?;
        match shortcut(term) {
            Some((start, end, stride, format)) => {
                for (key, value) in [("start", start), ("end", Some(end)), ("stride", stride)] {
                    if let Some(v) = value {
                        o.set(key, &JValue::from(v))?;
                    }
                }
                if let Some(f) = format {
                    o.format = f.to_string();
                }
            }
            None => parse_kv(term, &mut o)?,
        }
        let Some(end) = checked_end(&mut o)? else { continue };
        let adjust = if o.stride >= 0 { 1 } else { -1 };
        let mut i = o.start;
        while (o.stride > 0 && i < end + adjust) || (o.stride < 0 && i > end + adjust) {
            let formatted = crate::python::percent::format_percent(&o.format, &JValue::from(i))
                .map_err(|_| {
                    LookupError::failed(format!(
                        "problem formatting {i} with {}",
                        py_repr(&JValue::from(o.format.as_str()))
                    ))
                })?;
            out.push(JValue::from(formatted));
            i += o.stride;
        }
    }
    Ok(out)
}

/// `sanity_check`: the last number, or `None` for a valid but empty sequence.
fn checked_end(o: &mut Options) -> Result<Option<i64>, LookupError> {
    let end = match (o.count, o.end) {
        (None, None) => {
            return Err(LookupError::failed("must specify count or end in with_sequence"));
        }
        (Some(_), Some(_)) => {
            return Err(LookupError::failed("can't specify both count and end in with_sequence"));
        }
        (Some(0), None) => return Ok(None),
        (Some(count), None) => o.start + count * o.stride - 1,
        (None, Some(end)) => end,
    };
    if o.stride > 0 && end < o.start {
        return Err(LookupError::failed("to count backwards make stride negative"));
    }
    if o.stride < 0 && end > o.start {
        return Err(LookupError::failed("to count forward don't make stride negative"));
    }
    if o.stride == 0 {
        return Ok(None);
    }
    if o.format.matches('%').count() != 1 {
        return Err(LookupError::failed(format!("bad formatting string: {}", o.format)));
    }
    Ok(Some(end))
}
