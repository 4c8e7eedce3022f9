//! Python's `configparser.ConfigParser` as ansible's local facts use it (default options:
//! `=`/`:` delimiters, `#`/`;` full-line comments, lowercased option names, strict duplicate
//! checks, indented continuation lines, a `DEFAULT` section, `BasicInterpolation` on read).

use tack_py::repr::str_repr as repr;

/// A parsed file: sections in order, each with its options in order.
pub(super) struct Parser {
    sections: Vec<(String, Vec<(String, String)>)>,
    defaults: Vec<(String, String)>,
}

const MAX_DEPTH: usize = 10;

/// `read_file`: `Err` where configparser raises (missing section header, duplicate section
/// or option, a line that is not an option).
pub(super) fn read(text: &str) -> Result<Parser, ()> {
    let mut p = Parser { sections: Vec::new(), defaults: Vec::new() };
    // Where options go: None before any header, Some(None) for DEFAULT, Some(Some(i)).
    let mut cur: Option<Option<usize>> = None;
    // The option being read, its indent, and its lines (blank lines kept, as configparser
    // keeps them inside a value).
    let mut open: Option<(String, usize, Vec<String>)> = None;
    let header = regex::Regex::new(r"^\[(.+)\]").map_err(|_| ())?;
    let flush = |p: &mut Parser,
                 cur: Option<Option<usize>>,
                 open: &mut Option<(String, usize, Vec<String>)>| {
        if let Some((key, _, lines)) = open.take() {
            let value = lines.join("\n").trim_end().to_string();
            let opts = match cur {
                Some(None) => &mut p.defaults,
                Some(Some(i)) => &mut p.sections[i].1,
                None => return,
            };
            if let Some(e) = opts.iter_mut().find(|(k, _)| *k == key) {
                e.1 = value;
            }
        }
    };
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let stripped = raw.trim();
        if stripped.starts_with('#') || stripped.starts_with(';') {
            continue;
        }
        if stripped.is_empty() {
            if let Some((_, _, lines)) = &mut open {
                lines.push(String::new());
            }
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        if let Some((_, level, lines)) = &mut open
            && indent > *level
        {
            lines.push(stripped.to_string());
            continue;
        }
        flush(&mut p, cur, &mut open);
        if let Some(c) = header.captures(stripped) {
            let name = c[1].to_string();
            if name == "DEFAULT" {
                cur = Some(None);
            } else {
                if p.sections.iter().any(|(n, _)| *n == name) {
                    return Err(());
                }
                p.sections.push((name, Vec::new()));
                cur = Some(Some(p.sections.len() - 1));
            }
            continue;
        }
        let Some(target) = cur else { return Err(()) };
        let pos = stripped.find(['=', ':']).ok_or(())?;
        let key = stripped[..pos].trim_end().to_lowercase();
        if key.is_empty() {
            return Err(());
        }
        let value = stripped[pos + 1..].trim_start().to_string();
        let opts = match target {
            None => &mut p.defaults,
            Some(i) => &mut p.sections[i].1,
        };
        if opts.iter().any(|(k, _)| *k == key) {
            return Err(());
        }
        opts.push((key.clone(), value.clone()));
        open = Some((key, indent, vec![value]));
    }
    flush(&mut p, cur, &mut open);
    Ok(p)
}

impl Parser {
    pub(super) fn sections(&self) -> impl Iterator<Item = &str> {
        self.sections.iter().map(|(n, _)| n.as_str())
    }

    fn section(&self, name: &str) -> &[(String, String)] {
        self.sections.iter().find(|(n, _)| n == name).map(|(_, o)| o.as_slice()).unwrap_or(&[])
    }

    /// The section's options, then the defaults it does not override.
    pub(super) fn options(&self, sect: &str) -> Vec<String> {
        let mut out: Vec<String> = self.section(sect).iter().map(|(k, _)| k.clone()).collect();
        for (k, _) in &self.defaults {
            if !out.contains(k) {
                out.push(k.clone());
            }
        }
        out
    }

    fn raw(&self, sect: &str, opt: &str) -> Option<&str> {
        self.section(sect)
            .iter()
            .chain(self.defaults.iter())
            .find(|(k, _)| k == opt)
            .map(|(_, v)| v.as_str())
    }

    /// `get(section, option)` with BasicInterpolation; `Err` holds the exception's text.
    pub(super) fn get(&self, sect: &str, opt: &str) -> Result<String, String> {
        let raw = self.raw(sect, opt).unwrap_or("").to_string();
        let mut acc = String::new();
        self.interpolate(sect, opt, &raw, &raw, 1, &mut acc)?;
        Ok(acc)
    }

    fn interpolate(
        &self,
        sect: &str,
        opt: &str,
        rawval: &str,
        rest: &str,
        depth: usize,
        acc: &mut String,
    ) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "Recursion limit exceeded in value substitution: option {} in section {} contains an interpolation key which cannot be substituted in {MAX_DEPTH} steps. Raw value: {}",
                repr(opt),
                repr(sect),
                repr(rawval)
            ));
        }
        let mut rest = rest;
        while !rest.is_empty() {
            let Some(p) = rest.find('%') else {
                acc.push_str(rest);
                return Ok(());
            };
            acc.push_str(&rest[..p]);
            rest = &rest[p..];
            match rest[1..].chars().next() {
                Some('%') => {
                    acc.push('%');
                    rest = &rest[2..];
                }
                Some('(') => {
                    let close = rest.find(")s").filter(|&i| i > 2 && !rest[2..i].contains(')'));
                    let Some(close) = close else {
                        return Err(format!("bad interpolation variable reference {}", repr(rest)));
                    };
                    let var = rest[2..close].to_lowercase();
                    rest = &rest[close + 2..];
                    let Some(v) = self.raw(sect, &var) else {
                        return Err(format!(
                            "Bad value substitution: option {} in section {} contains an interpolation key {} which is not a valid option name. Raw value: {}",
                            repr(opt),
                            repr(sect),
                            repr(&var),
                            repr(rawval)
                        ));
                    };
                    if v.contains('%') {
                        // configparser names the inner option by the outer one's raw value.
                        self.interpolate(sect, opt, rawval, v, depth + 1, acc)?;
                    } else {
                        acc.push_str(v);
                    }
                }
                _ => {
                    return Err(format!(
                        "'%' must be followed by '%' or '(', found: {}",
                        repr(rest)
                    ));
                }
            }
        }
        Ok(())
    }
}
