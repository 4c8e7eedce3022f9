//! Host names as inventories write them: `host:port`, `[v6::addr]:port`, and ranges such as
//! `web[01:10]`, `db-[a:f]` or `n[1:10:2]` (ansible's `parse_address` and
//! `expand_hostname_range`).
//!
//! The regular expressions follow ansible's `parsing/utils/addresses.py`; its hostname label
//! uses a look-behind (a label may not end in `-` or `_`), which the `regex` crate lacks, so the
//! label here is spelled as "optional body, then a last character that is not `-` or `_`",
//! which matches the same strings.

use std::sync::LazyLock;

use regex::Regex;

const NUMERIC_RANGE: &str = r"\[(?:[0-9]+:[0-9]+)(?::[0-9]+)?\]";
const HEX_RANGE: &str = r"\[(?:[0-9a-f]+:[0-9a-f]+)(?::[0-9]+)?\]";
const ALNUM_RANGE: &str = r"\[(?:[a-z]:[a-z]|[0-9]+:[0-9]+)(?::[0-9]+)?\]";

static BRACKETED_HOSTPORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[(.+)\]:([0-9]+)$").expect("static regex"));
static HOSTPORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^((?:[^:\[\]]|\[[^\]]*\])*):([0-9]+)$").expect("static regex"));
static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    let part = format!(r"(?:[01]?[0-9]{{1,2}}|2[0-4][0-9]|25[0-5]|{NUMERIC_RANGE})");
    Regex::new(&format!(r"(?i)^(?:{part}\.){{3}}{part}$")).expect("static regex")
});
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    let c = format!(r"(?:[0-9a-f]{{1,4}}|{HEX_RANGE})");
    let alternatives = [
        format!(r"(?:{c}:){{7}}{c}"),
        format!(r"(?:{c}:){{1,6}}:"),
        format!(r"(?:{c}:)(?::{c}){{1,6}}"),
        format!(r"(?:{c}:){{2}}(?::{c}){{1,5}}"),
        format!(r"(?:{c}:){{3}}(?::{c}){{1,4}}"),
        format!(r"(?:{c}:){{4}}(?::{c}){{1,3}}"),
        format!(r"(?:{c}:){{5}}(?::{c}){{1,2}}"),
        format!(r"(?:{c}:){{6}}(?::{c})"),
        format!(r":(?::{c}){{1,6}}"),
        format!(r"{c}?::"),
        format!(r"(?:0:){{6}}(?:{c}\.){{3}}{c}"),
        format!(r"::(?:ffff:)?(?:{c}\.){{3}}{c}"),
        format!(r"(?:0:){{5}}ffff:(?:{c}\.){{3}}{c}"),
    ];
    Regex::new(&format!("(?i)^(?:{})$", alternatives.join("|"))).expect("static regex")
});
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    let r = ALNUM_RANGE;
    let label = format!(r"(?:(?:\w|{r})(?:[\w-]|{r})*)?(?:[^\W_]|{r})");
    Regex::new(&format!(r"(?i)^{label}(?:\.{label})*$")).expect("static regex")
});

/// A host identifier ansible refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AddressError {
    #[error("Not a valid network hostname: {0}")]
    NotAHostname(String),
    #[error("Detected range in host but was asked to ignore ranges")]
    RangeNotAllowed,
}

/// `parse_address`: the host part and the port of `address`.
pub fn parse_address(
    address: &str,
    allow_ranges: bool,
) -> Result<(String, Option<u64>), AddressError> {
    let mut address = address.to_string();
    let mut port = None;
    for pattern in [&*BRACKETED_HOSTPORT, &*HOSTPORT] {
        if let Some(caps) = pattern.captures(&address) {
            let host = caps[1].to_string();
            port = caps[2].parse::<u64>().ok();
            address = host;
        }
    }
    let is_host = [&*IPV4, &*IPV6, &*HOSTNAME].iter().any(|re| re.is_match(&address));
    if !is_host {
        return Err(AddressError::NotAHostname(address));
    }
    if !allow_ranges && address.contains('[') {
        return Err(AddressError::RangeNotAllowed);
    }
    Ok((address, port))
}

/// A host range ansible refuses, in its words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct RangeError(pub String);

impl RangeError {
    /// Whether ansible raises this as its own error (`host range must ...`), which its
    /// `advanced_host_list` plugin survives by taking the entry as written; any other (a bound
    /// that is no number, a bad step) is a Python error that fails the whole source.
    pub fn is_ansibles(&self) -> bool {
        self.0.starts_with("host range must")
    }
}

const ASCII_LETTERS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Python's `int(text)` for a range bound.
fn python_int(text: &str) -> Result<i64, RangeError> {
    tack_py::num::int(text).map_err(|e| match e {
        tack_py::num::IntError::Invalid(message) => RangeError(message),
        tack_py::num::IntError::TooLarge => {
            RangeError(format!("tack cannot count a host range past 64-bit integers: {text}"))
        }
    })
}

/// The most host names one pattern may stand for. ansible builds every name in memory, so a
/// pattern of a few hundred bytes (`h[1:3]b[1:3]b[1:3]...`, each range multiplying) exhausts
/// the controller's memory and hangs the run; tack refuses it by name instead.
pub(crate) const MAX_RANGE_HOSTS: usize = 1_000_000;

/// `expand_hostname_range`: every host name a pattern with `[begin:end(:step)]` ranges stands
/// for, in order (at most [`MAX_RANGE_HOSTS`]).
pub fn expand_hostname_range(line: &str) -> Result<Vec<String>, RangeError> {
    let too_many = || {
        RangeError(format!(
            "tack refuses a host range of more than {MAX_RANGE_HOSTS} hosts: {line}"
        ))
    };
    // Counted first: building the names of a pattern of many ranges copies the whole line
    // for every partial name, long before the count is reached.
    if estimate(line) > MAX_RANGE_HOSTS as f64 {
        return Err(too_many());
    }
    let mut names = Vec::new();
    expand_into(line, &mut names).map_err(|e| match e {
        Expand::Range(e) => e,
        Expand::TooMany => too_many(),
    })?;
    Ok(names)
}

/// How many names expanding `line` goes through, as the product of its ranges' sizes (each
/// range's names share the text after it, so the ranges multiply; an empty range still
/// costs every partial name before it, so it counts one). A range this cannot read counts
/// one: [`expand_into`] reports it, and still stops at the limit.
fn estimate(line: &str) -> f64 {
    let mut total = 1.0;
    let mut rest = line;
    while let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) {
        if close < open {
            break;
        }
        let bounds: Vec<&str> = rest[open + 1..close].split(':').collect();
        total *= range_size(&bounds).unwrap_or(1.0).max(1.0);
        rest = &rest[close + 1..];
    }
    total
}

fn range_size(bounds: &[&str]) -> Option<f64> {
    let (beg, end) = (*bounds.first()?, *bounds.get(1)?);
    let beg = if beg.is_empty() { "0" } else { beg };
    let step: f64 = bounds.get(2).map_or(Some(1.0), |s| s.trim().parse().ok())?;
    if step <= 0.0 {
        return None;
    }
    let (b, e) = match (beg.trim().parse::<f64>(), end.trim().parse::<f64>()) {
        (Ok(b), Ok(e)) => (b, e),
        _ => (ASCII_LETTERS.find(beg)? as f64, ASCII_LETTERS.find(end)? as f64),
    };
    Some(((e - b) / step).floor().max(-1.0) + 1.0)
}

enum Expand {
    Range(RangeError),
    TooMany,
}

impl From<RangeError> for Expand {
    fn from(e: RangeError) -> Expand {
        Expand::Range(e)
    }
}

fn expand_into(line: &str, names: &mut Vec<String>) -> Result<(), Expand> {
    // ansible swaps the first `[` and the first `]` for `|` and splits on `|`.
    let replaced = line.replacen('[', "|", 1).replacen(']', "|", 1);
    let parts: Vec<&str> = replaced.split('|').collect();
    let (head, nrange, tail) = match parts.as_slice() {
        [h, r, t] => (*h, *r, *t),
        more if more.len() > 3 => {
            return Err(RangeError("too many values to unpack (expected 3)".into()).into());
        }
        fewer => {
            return Err(RangeError(format!(
                "not enough values to unpack (expected 3, got {})",
                fewer.len()
            ))
            .into());
        }
    };
    let bounds: Vec<&str> = nrange.split(':').collect();
    if bounds.len() != 2 && bounds.len() != 3 {
        return Err(RangeError("host range must be begin:end or begin:end:step".into()).into());
    }
    let beg = if bounds[0].is_empty() { "0" } else { bounds[0] };
    let end = bounds[1];
    let step = bounds.get(2).copied().unwrap_or("1");
    if end.is_empty() {
        return Err(RangeError("host range must specify end value".into()).into());
    }
    let width = if beg.starts_with('0') && beg.len() > 1 {
        if beg.len() != end.len() {
            return Err(RangeError(
                "host range must specify equal-length begin and end formats".into(),
            )
            .into());
        }
        Some(beg.len())
    } else {
        None
    };
    let fill = |text: String| match width {
        Some(w) => zfill(&text, w),
        None => text,
    };

    let mut push = |name: String| -> Result<(), Expand> {
        if name.contains('[') {
            expand_into(&name, names)?;
        } else if names.len() >= MAX_RANGE_HOSTS {
            return Err(Expand::TooMany);
        } else {
            names.push(name);
        }
        Ok(())
    };

    // Python's `str.index` finds substrings, so any run of letters from the alphabet counts.
    if let (Some(i_beg), Some(i_end)) = (ASCII_LETTERS.find(beg), ASCII_LETTERS.find(end)) {
        if i_beg > i_end {
            return Err(RangeError("host range must have begin <= end".into()).into());
        }
        if let Ok(step) = python_int(step)
            && step != 0
        {
            if step > 0 {
                for (idx, c) in ASCII_LETTERS.char_indices() {
                    if idx >= i_beg && idx <= i_end && (idx - i_beg) % step as usize == 0 {
                        push(format!("{head}{}{tail}", fill(c.to_string())))?;
                    }
                }
            }
            return Ok(());
        }
    }
    let (b, e, s) = (python_int(beg)?, python_int(end)?, python_int(step)?);
    if s == 0 {
        return Err(RangeError("range() arg 3 must not be zero".into()).into());
    }
    let mut n = b;
    while (s > 0 && n <= e) || (s < 0 && n > e + 1) {
        push(format!("{head}{}{tail}", fill(n.to_string())))?;
        n += s;
    }
    Ok(())
}

/// Python's `str.zfill`.
fn zfill(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        return text.to_string();
    }
    let pad = "0".repeat(width - len);
    match text.strip_prefix(['-', '+']) {
        Some(rest) => format!("{}{pad}{rest}", &text[..1]),
        None => format!("{pad}{text}"),
    }
}

/// `_expand_hostpattern`: the host names and port of an inventory host entry. A pattern
/// `parse_address` does not understand is taken as written.
pub(crate) fn expand_hostpattern(pattern: &str) -> Result<(Vec<String>, Option<u64>), RangeError> {
    let (host, port) = parse_address(pattern, true).unwrap_or_else(|_| (pattern.to_string(), None));
    let names = if host.contains('[') { expand_hostname_range(&host)? } else { vec![host] };
    Ok((names, port))
}

/// Whether a name is an IPv4 or IPv6 address (ranges allowed), as `inventory_hostname_short`
/// needs to know.
pub fn is_ip_address(name: &str) -> bool {
    IPV4.is_match(name) || IPV6.is_match(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(p: &str) -> Vec<String> {
        expand_hostname_range(p).unwrap()
    }

    #[test]
    fn a_range_past_the_limit_is_refused_not_built() {
        // Found by the fuzz harness (seed 4): 24 ranges of 3 each, 3^24 names.
        let line = format!("web{}", "[01:03]b".repeat(24));
        let err = expand_hostname_range(&line).unwrap_err();
        assert!(err.0.starts_with("tack refuses a host range of more than 1000000 hosts"));
        assert!(!err.is_ansibles());
        assert!(expand_hostname_range("h[0:2000000]").is_err());
        // An empty range at the end builds nothing, but every name before it.
        let empty_last = format!("web{}[05:03]", "[01:03]b".repeat(24));
        assert!(expand_hostname_range(&empty_last).is_err());
    }

    #[test]
    fn addresses_and_ports() {
        assert_eq!(parse_address("host:2222", false).unwrap(), ("host".into(), Some(2222)));
        assert_eq!(parse_address("[::1]:99", false).unwrap(), ("::1".into(), Some(99)));
        assert_eq!(parse_address("::1", false).unwrap(), ("::1".into(), None));
        assert_eq!(parse_address("10.0.0.1:22", false).unwrap(), ("10.0.0.1".into(), Some(22)));
        assert_eq!(parse_address("web[01:03]:22", true).unwrap(), ("web[01:03]".into(), Some(22)));
        assert_eq!(parse_address("web[1:3]", false), Err(AddressError::RangeNotAllowed));
        assert!(parse_address("bad-", false).is_err());
        assert!(parse_address("under_", false).is_err());
        assert!(parse_address("a_b.c-d", false).is_ok());
        assert!(parse_address("all:", false).is_err());
    }

    #[test]
    fn ranges_expand_like_ansible() {
        assert_eq!(
            expand("web[01:03].example.com"),
            ["web01.example.com", "web02.example.com", "web03.example.com"]
        );
        assert_eq!(expand("db-[a:c]"), ["db-a", "db-b", "db-c"]);
        assert_eq!(expand("odd[1:10:3]"), ["odd1", "odd4", "odd7", "odd10"]);
        assert_eq!(expand("n[:2]"), ["n0", "n1", "n2"]);
        assert_eq!(expand("r[1:2]c[a:b]"), ["r1ca", "r1cb", "r2ca", "r2cb"]);
        assert_eq!(expand("w[5:1:-1]"), ["w5", "w4", "w3"]);
        assert_eq!(expand("x[y:B]"), ["xy", "xz", "xA", "xB"]);
        assert_eq!(
            expand_hostname_range("w[1:2:3:4]").unwrap_err().0,
            "host range must be begin:end or begin:end:step"
        );
        assert_eq!(
            expand_hostname_range("w[1:]").unwrap_err().0,
            "host range must specify end value"
        );
        assert_eq!(
            expand_hostname_range("w[01:100]").unwrap_err().0,
            "host range must specify equal-length begin and end formats"
        );
        assert_eq!(
            expand_hostname_range("w[c:a]").unwrap_err().0,
            "host range must have begin <= end"
        );
        assert_eq!(
            expand_hostname_range("w[1:x]").unwrap_err().0,
            "invalid literal for int() with base 10: 'x'"
        );
    }
}
