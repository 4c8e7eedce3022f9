//! Date filters: `strftime` (Python's `datetime.strftime`: `%f`, `%z`, `%:z` and `%Z` by
//! Python, everything else by the C library's `strftime`, as CPython does) and `to_datetime`
//! (Python's `datetime.strptime`, whose matching rules are its own regular expressions,
//! reproduced here). A parsed date is a [`DateTime`] object whose `str()` and `repr()` are
//! Python's.

use std::ffi::CString;
use std::sync::Arc;

use fancy_regex::RegexBuilder;
use minijinja::value::{Enumerator, Object, ObjectRepr};
use minijinja::{State, Value};
use tack_yaml::{TimeOfDay, Timestamp};

use super::args::{Bound, Sig};
use super::pyval::{self, Num, str_of};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("strftime", Sig::new("strftime", &["string_format", "second", "utc"], 1), strftime),
    Entry::new("to_datetime", Sig::new("to_datetime", &["string", "format"], 1), to_datetime),
];

/// A Python `datetime` made by a filter.
#[derive(Debug, Clone)]
pub struct DateTime(pub Timestamp);

impl DateTime {
    fn time(&self) -> TimeOfDay {
        self.0.time.clone().unwrap_or(TimeOfDay {
            hour: 0,
            minute: 0,
            second: 0,
            microsecond: 0,
            utc_offset_minutes: None,
        })
    }
}

/// `datetime.strftime(fmt)` of `t` (its own UTC offset, if it has one).
pub(crate) fn strftime_of(t: &Timestamp, fmt: &str) -> Result<String, minijinja::Error> {
    let offset = DateTime(t.clone()).time().utc_offset_minutes;
    format_datetime(fmt, t, offset)
        .map_err(|e| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string()))
}

impl std::fmt::Display for DateTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&tack_yaml::pyrepr::timestamp_str(&self.0))
    }
}

impl Object for DateTime {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Plain
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let t = self.time();
        Some(match key.as_str()? {
            "year" => Value::from(self.0.year),
            "month" => Value::from(self.0.month),
            "day" => Value::from(self.0.day),
            "hour" => Value::from(t.hour),
            "minute" => Value::from(t.minute),
            "second" => Value::from(t.second),
            "microsecond" => Value::from(t.microsecond),
            _ => return None,
        })
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        Enumerator::NonEnumerable
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &mut State,
        method: &str,
        args: &[Value],
    ) -> Result<Value, minijinja::Error> {
        let fail = |m: String| minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, m);
        match method {
            "strftime" => {
                let fmt = args.first().map(str_of).unwrap_or_default();
                let t = self.time();
                let offset = t.utc_offset_minutes;
                format_datetime(&fmt, &self.0, offset)
                    .map(Value::from)
                    .map_err(|e| fail(e.to_string()))
            }
            "isoformat" => Ok(Value::from(tack_yaml::timestamp_isoformat(&self.0))),
            "weekday" => Ok(Value::from(weekday(&self.0))),
            "isoweekday" => Ok(Value::from(weekday(&self.0) + 1)),
            _ => Err(minijinja::Error::from(minijinja::ErrorKind::UnknownMethod)),
        }
    }

    fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self.as_ref(), f)
    }
}

/// Days from 1970-01-01 to the date (proleptic Gregorian).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, u8, u8) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Monday is 0, as Python's `weekday()`.
fn weekday(t: &Timestamp) -> i64 {
    (days_from_civil(i64::from(t.year), i64::from(t.month), i64::from(t.day)) + 3).rem_euclid(7)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u8) -> u8 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `datetime.strftime(fmt)` for a datetime with an optional UTC offset.
fn format_datetime(fmt: &str, t: &Timestamp, offset: Option<i32>) -> Result<String, FilterError> {
    let time = t.time.clone().unwrap_or(TimeOfDay {
        hour: 0,
        minute: 0,
        second: 0,
        microsecond: 0,
        utc_offset_minutes: None,
    });
    let zone = |colon: bool| match offset {
        None => String::new(),
        Some(m) => {
            let sign = if m < 0 { '-' } else { '+' };
            let sep = if colon { ":" } else { "" };
            format!("{sign}{:02}{sep}{:02}", m.abs() / 60, m.abs() % 60)
        }
    };
    // Python expands its own directives first, then hands the rest to the C library.
    let mut pre = String::with_capacity(fmt.len());
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            pre.push(c);
            continue;
        }
        match chars.next() {
            None => pre.push('%'),
            Some('f') => pre.push_str(&format!("{:06}", time.microsecond)),
            Some('z') => pre.push_str(&zone(false).replace('%', "%%")),
            Some('Z') => pre.push_str(match offset {
                Some(0) => "UTC",
                Some(_) => "",
                None => "",
            }),
            Some(':') if chars.peek() == Some(&'z') => {
                chars.next();
                pre.push_str(&zone(true));
            }
            Some(other) => {
                pre.push('%');
                pre.push(other);
            }
        }
    }
    let days = days_from_civil(i64::from(t.year), i64::from(t.month), i64::from(t.day));
    let yday = days - days_from_civil(i64::from(t.year), 1, 1);
    // SAFETY: `tm` is plain data; zeroed is a valid value for every field.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = t.year - 1900;
    tm.tm_mon = i32::from(t.month) - 1;
    tm.tm_mday = i32::from(t.day);
    tm.tm_hour = i32::from(time.hour);
    tm.tm_min = i32::from(time.minute);
    tm.tm_sec = i32::from(time.second);
    tm.tm_wday = ((days + 4).rem_euclid(7)) as i32;
    tm.tm_yday = yday as i32;
    tm.tm_isdst = -1;
    c_strftime(&pre, &tm)
}

fn c_strftime(fmt: &str, tm: &libc::tm) -> Result<String, FilterError> {
    if fmt.is_empty() {
        return Ok(String::new());
    }
    let cfmt = CString::new(fmt).map_err(|_| FilterError::failed("embedded null character"))?;
    let mut size = 256usize.max(fmt.len() * 8);
    loop {
        let mut buf = vec![0u8; size];
        // SAFETY: the buffer is `size` bytes long and strftime writes at most that many.
        let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), size, cfmt.as_ptr(), tm) };
        if n > 0 || size > 65_536 {
            buf.truncate(n);
            return Ok(String::from_utf8_lossy(&buf).into_owned());
        }
        size *= 4;
    }
}

fn strftime(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let fmt = str_of(args.input());
    let second = match args.opt(1) {
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
        Some(v) => {
            let parsed = match v.as_str() {
                Some(s) => super::math::parse_float(s),
                None => pyval::num(v).map(Num::as_f64),
            };
            parsed.ok_or_else(|| {
                FilterError::failed(format!("Invalid value for epoch value ({})", str_of(v)))
            })?
        }
    };
    let utc = args.get(2).is_some_and(pyval::truthy);
    let (stamp, offset) = from_timestamp(second, utc)?;
    format_datetime(&fmt, &stamp, offset).map(Value::from)
}

unsafe extern "C" {
    /// POSIX `tzset`: re-reads `TZ` so local times follow the environment as Python's do.
    fn tzset();
}

/// `datetime.fromtimestamp(second[, tz=utc])`.
fn from_timestamp(second: f64, utc: bool) -> Result<(Timestamp, Option<i32>), FilterError> {
    if !second.is_finite() {
        return Err(FilterError::failed("cannot convert float NaN to integer"));
    }
    let mut whole = second.floor();
    let mut micros = ((second - whole) * 1e6).round_ties_even() as i64;
    if micros >= 1_000_000 {
        whole += 1.0;
        micros -= 1_000_000;
    }
    let secs = whole as i64;
    let (days, rest, offset) = if utc {
        (secs.div_euclid(86_400), secs.rem_euclid(86_400), Some(0))
    } else {
        let t: libc::time_t = secs as libc::time_t;
        // SAFETY: `tm` is plain data, and localtime_r fills it from `t`.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        let ok = unsafe {
            tzset();
            !libc::localtime_r(&t, &mut tm).is_null()
        };
        if !ok {
            return Err(FilterError::failed(
                "timestamp out of range for platform localtime() function",
            ));
        }
        let local = secs + tm.tm_gmtoff;
        (local.div_euclid(86_400), local.rem_euclid(86_400), None)
    };
    let (y, m, d) = civil_from_days(days);
    let stamp = Timestamp {
        year: y as i32,
        month: m,
        day: d,
        time: Some(TimeOfDay {
            hour: (rest / 3600) as u8,
            minute: (rest % 3600 / 60) as u8,
            second: (rest % 60) as u8,
            microsecond: micros as u32,
            utc_offset_minutes: offset,
        }),
    };
    Ok((stamp, offset))
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const DAYS: [&str; 7] =
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"];

fn directive_regex(c: char) -> Option<String> {
    let names = |list: &[&str], short: bool| -> String {
        let mut v: Vec<String> =
            list.iter().map(|n| if short { n[..3].to_string() } else { n.to_string() }).collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.len()));
        v.join("|")
    };
    Some(match c {
        'd' => r"(?P<d>3[01]|[12]\d|0[1-9]|[1-9]| [1-9])".into(),
        'f' => r"(?P<f>[0-9]{1,6})".into(),
        'H' => r"(?P<H>2[0-3]|[0-1]\d|\d)".into(),
        'I' => r"(?P<I>1[0-2]|0[1-9]|[1-9]| [1-9])".into(),
        'j' => r"(?P<j>36[0-6]|3[0-5]\d|[12]\d\d|0[1-9]\d|00[1-9]|[1-9]\d|0[1-9]|[1-9])".into(),
        'm' => r"(?P<m>1[0-2]|0[1-9]|[1-9])".into(),
        'M' => r"(?P<M>[0-5]\d|\d)".into(),
        'S' => r"(?P<S>6[0-1]|[0-5]\d|\d)".into(),
        'y' => r"(?P<y>\d\d)".into(),
        'Y' => r"(?P<Y>\d\d\d\d)".into(),
        'z' => r"(?P<z>[+-]\d\d:?[0-5]\d(:?[0-5]\d(\.\d{1,6})?)?|(?-i:Z))".into(),
        'p' => r"(?P<p>am|pm)".into(),
        'b' => format!("(?P<b>{})", names(&MONTHS, true)),
        'B' => format!("(?P<B>{})", names(&MONTHS, false)),
        'a' => format!("(?P<a>{})", names(&DAYS, true)),
        'A' => format!("(?P<A>{})", names(&DAYS, false)),
        _ => return None,
    })
}

/// `datetime.strptime(text, fmt)`.
fn strptime(text: &str, fmt: &str) -> Result<Timestamp, FilterError> {
    let mut pattern = String::from("(?i)^");
    let mut chars = fmt.chars().peekable();
    let mut seen = Vec::new();
    while let Some(c) = chars.next() {
        if c == '%' {
            let Some(d) = chars.next() else {
                return Err(FilterError::failed(format!("stray % in format '{fmt}'")));
            };
            if d == '%' {
                pattern.push('%');
                continue;
            }
            let Some(re) = directive_regex(d) else {
                return Err(FilterError::failed(format!(
                    "'{d}' is a bad directive in format '{}'",
                    fmt.replace('\'', "\\'")
                )));
            };
            if seen.contains(&d) {
                return Err(FilterError::failed(format!(
                    "redefinition of group name '{d}' as group"
                )));
            }
            seen.push(d);
            pattern.push_str(&re);
        } else if c.is_whitespace() {
            while chars.peek().is_some_and(|n| n.is_whitespace()) {
                chars.next();
            }
            pattern.push_str(r"\s+");
        } else {
            pattern.push_str(&fancy_regex::escape(&c.to_string()));
        }
    }
    let re = RegexBuilder::new(&pattern)
        .build()
        .map_err(|e| FilterError::failed(format!("tack cannot read the format: {e}")))?;
    let no_match = || {
        FilterError::failed(format!(
            "time data {} does not match format {}",
            tack_yaml::pyrepr::str_repr(text),
            tack_yaml::pyrepr::str_repr(fmt)
        ))
    };
    let caps = re.captures(text).map_err(|_| no_match())?.ok_or_else(no_match)?;
    let end = caps.get(0).map(|m| m.end()).unwrap_or(0);
    if end != text.len() {
        return Err(FilterError::failed(format!("unconverted data remains: {}", &text[end..])));
    }
    let get = |n: &str| caps.name(n).map(|m| m.as_str().trim().to_string());
    let num = |n: &str| get(n).and_then(|s| s.parse::<i64>().ok());
    let mut year = num("Y").unwrap_or(1900);
    if let Some(y) = num("y") {
        year = if y <= 68 { 2000 + y } else { 1900 + y };
    }
    let mut month = num("m");
    if let Some(b) = get("b").or_else(|| get("B")) {
        let b = b.to_lowercase();
        month =
            MONTHS.iter().position(|m| m.starts_with(&b[..3.min(b.len())])).map(|i| i as i64 + 1);
    }
    let mut day = num("d");
    let mut hour = num("H").unwrap_or(0);
    if let Some(h) = num("I") {
        let pm = get("p").is_some_and(|p| p.eq_ignore_ascii_case("pm"));
        hour = match (h, pm) {
            (12, false) => 0,
            (h, false) => h,
            (12, true) => 12,
            (h, true) => h + 12,
        };
    }
    let minute = num("M").unwrap_or(0);
    let second = num("S").unwrap_or(0);
    let micro = get("f").map(|f| format!("{f:0<6}").parse::<u32>().unwrap_or(0)).unwrap_or(0);
    if let (Some(j), None) = (num("j"), month) {
        let start = days_from_civil(year, 1, 1);
        let (_, m, d) = civil_from_days(start + j - 1);
        month = Some(i64::from(m));
        day = Some(i64::from(d));
    }
    let month = month.unwrap_or(1);
    let day = day.unwrap_or(1);
    if !(1..=12).contains(&month) {
        return Err(FilterError::failed("month must be in 1..12"));
    }
    if day < 1 || day > i64::from(days_in_month(year, month as u8)) {
        return Err(FilterError::failed("day is out of range for month"));
    }
    if second > 59 {
        return Err(FilterError::failed("second must be in 0..59"));
    }
    let offset = match get("z") {
        None => None,
        Some(z) if z.eq_ignore_ascii_case("z") => Some(0),
        Some(z) => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let digits: String = z[1..].chars().filter(char::is_ascii_digit).collect();
            let hours: i32 = digits.get(0..2).and_then(|s| s.parse().ok()).unwrap_or(0);
            let minutes: i32 = digits.get(2..4).and_then(|s| s.parse().ok()).unwrap_or(0);
            Some(sign * (hours * 60 + minutes))
        }
    };
    Ok(Timestamp {
        year: year as i32,
        month: month as u8,
        day: day as u8,
        time: Some(TimeOfDay {
            hour: hour as u8,
            minute: minute as u8,
            second: second as u8,
            microsecond: micro,
            utc_offset_minutes: offset,
        }),
    })
}

fn to_datetime(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let input = args.input();
    let Some(text) = input.as_str() else {
        return Err(FilterError::failed(format!(
            "strptime() argument 1 must be str, not {}",
            pyval::type_name(input)
        )));
    };
    let fmt = args.get(1).map(str_of).unwrap_or_else(|| "%Y-%m-%d %H:%M:%S".into());
    strptime(text, &fmt).map(|t| Value::from_object(DateTime(t)))
}
