//! The lookups that read tables from controller files: `ini` (Python's `configparser`, with
//! `type=properties` for Java properties files) and `csvfile` (Python's `csv` module, excel
//! dialect).
//!
//! Files are found as every file lookup finds them (`files::find_file`) and only read.

use std::collections::HashMap;
use std::path::Path;

use minijinja::value::Value as JValue;

use super::files::find_file;
use super::options::{boolean, choice, int, py_str, string};
use super::{Call, Entry, LookupError};

pub(super) const LOOKUPS: &[Entry] =
    &[Entry::new("ini", ini).reading_files(), Entry::new("csvfile", csvfile).reading_files()];

const INI_OPTIONS: &[&str] = &[
    "type",
    "file",
    "section",
    "re",
    "encoding",
    "default",
    "case_sensitive",
    "allow_no_value",
    "allow_none",
    "interpolation",
];

struct IniOptions {
    kind: String,
    file: String,
    section: String,
    re: bool,
    encoding: String,
    default: JValue,
    case_sensitive: bool,
    allow_no_value: bool,
    interpolation: bool,
}

impl IniOptions {
    fn set(&mut self, key: &str, value: &JValue) -> Result<(), LookupError> {
        match key {
            "type" => {
                let v = string(value);
                choice("ini", "type", &v, &["ini", "properties"])?;
                self.kind = v;
            }
            "file" => self.file = string(value),
            "section" => self.section = string(value),
            "re" => self.re = boolean(value, false),
            "encoding" => self.encoding = string(value),
            "default" => self.default = value.clone(),
            // Untyped in ansible's documentation: any true value.
            "case_sensitive" => self.case_sensitive = value.is_true(),
            "allow_no_value" | "allow_none" => {
                self.allow_no_value = boolean(value, false);
            }
            "interpolation" => self.interpolation = boolean(value, true),
            _ => {}
        }
        Ok(())
    }
}

/// `_parse_params`: a term's words grouped under the option each `key=` starts.
fn parse_params(term: &str) -> Vec<String> {
    let mut params: HashMap<&str, String> = HashMap::new();
    let mut keys: Vec<&str> = Vec::new();
    let mut this = "key";
    for (i, phrase) in tack_py::text::split(term).into_iter().enumerate() {
        if phrase.contains('=') {
            for k in INI_OPTIONS {
                if phrase.contains(&format!("{k}=")) {
                    this = k;
                }
            }
        }
        let current = params.entry(this).or_default();
        if i == 0 || current.is_empty() {
            *current = phrase.to_string();
            keys.push(this);
        } else {
            current.push(' ');
            current.push_str(phrase);
        }
    }
    keys.iter().map(|k| params.get(k).cloned().unwrap_or_default()).collect()
}

/// The file's bytes as text in `encoding`, as Python's `open(..., encoding=...)` reads them
/// (`tack_py::codecs`); a codec tack does not implement is refused by name.
fn decode(bytes: Vec<u8>, encoding: &str) -> Result<String, LookupError> {
    tack_py::codecs::decode(encoding, &bytes).map_err(|e| match e {
        tack_py::codecs::DecodeError::Unsupported { .. } => LookupError::failed(format!(
            "tack's file lookups do not support the encoding {}",
            tack_yaml::pyrepr::str_repr(encoding)
        )),
        other => LookupError::failed(other.to_string()),
    })
}

fn read(call: &Call, path: Option<&Path>, encoding: &str) -> Result<String, LookupError> {
    let Some(path) = path else { return Err(LookupError::failed("Invalid filename None.")) };
    let (bytes, was_encrypted) =
        call.env.loader().file_bytes(path).map_err(|e| LookupError::failed(e.to_string()))?;
    if was_encrypted {
        crate::engine::active::seal();
    }
    decode(bytes, encoding)
}

/// A parsed configparser file: sections in order, each with its options in order.
type Sections = Vec<(String, Vec<(String, Option<String>)>)>;

fn parse_ini(text: &str, o: &IniOptions, file: &str) -> Result<Sections, LookupError> {
    let mut sections: Sections = vec![("DEFAULT".to_string(), Vec::new())];
    let mut current: Option<usize> = None;
    let mut last_key: Option<(usize, usize)> = None;
    for line in text.lines() {
        let stripped = line.trim();
        if stripped.is_empty() || stripped.starts_with(['#', ';']) {
            last_key = None;
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        if indented && let Some((s, k)) = last_key {
            if let Some(v) = sections[s].1[k].1.as_mut() {
                v.push('\n');
                v.push_str(stripped);
            }
            continue;
        }
        if stripped.starts_with('[') && stripped.ends_with(']') {
            let name = &stripped[1..stripped.len() - 1];
            current = Some(match sections.iter().position(|(n, _)| n == name) {
                Some(i) => i,
                None => {
                    sections.push((name.to_string(), Vec::new()));
                    sections.len() - 1
                }
            });
            last_key = None;
            continue;
        }
        let Some(s) = current else {
            return Err(LookupError::failed(format!(
                "File contains no section headers.\nfile: '<???>', line: 1\n{}",
                tack_yaml::pyrepr::str_repr(&format!("{line}\n"))
            )));
        };
        let split = stripped.find(['=', ':']);
        let (key, value) = match split {
            Some(i) => (stripped[..i].trim(), Some(stripped[i + 1..].trim().to_string())),
            None if o.allow_no_value => (stripped, None),
            None => {
                return Err(LookupError::failed(format!(
                    "Source contains parsing errors: '<???>'\n\t[line  ?]: {}",
                    tack_yaml::pyrepr::str_repr(&format!("{line}\n"))
                )));
            }
        };
        let key = if o.case_sensitive { key.to_string() } else { key.to_lowercase() };
        let options = &mut sections[s].1;
        if options.iter().any(|(k, _)| *k == key) {
            return Err(LookupError::failed(format!(
                "Duplicate option in {}.",
                tack_yaml::pyrepr::str_repr(file)
            )));
        }
        options.push((key, value));
        last_key = Some((s, options.len() - 1));
    }
    Ok(sections)
}

/// BasicInterpolation's `%(name)s` and `%%`, names looked up in the section then DEFAULT.
fn interpolate(value: &str, lookup: &dyn Fn(&str) -> Option<String>, depth: usize) -> String {
    if depth > 10 {
        return value.to_string();
    }
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('%') {
            out.push('%');
            rest = r;
        } else if let Some(r) = after.strip_prefix('(')
            && let Some(end) = r.find(")s")
        {
            let name = r[..end].to_lowercase();
            let v = lookup(&name).unwrap_or_default();
            out.push_str(&interpolate(&v, lookup, depth + 1));
            rest = &r[end + 2..];
        } else {
            out.push('%');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn ini(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut o = IniOptions {
        kind: "ini".into(),
        file: "ansible.ini".into(),
        section: "global".into(),
        re: false,
        encoding: "utf-8".into(),
        default: JValue::from(""),
        case_sensitive: false,
        allow_no_value: false,
        interpolation: true,
    };
    for (k, v) in &call.kwargs {
        o.set(k, v)?;
    }
    let mut out = Vec::new();
    for term in &call.terms {
        let term = py_str(term);
        let mut key = term.clone();
        if term.contains('=') || tack_py::text::strip(&term).contains(' ') {
            let params = parse_params(&term);
            let mut updated_key = false;
            for param in &params {
                if param.contains('=') {
                    let parts: Vec<&str> = param.split('=').collect();
                    let [name, value] = parts[..] else {
                        return Err(LookupError::failed(format!(
                            "Could not use {} from {}.",
                            tack_yaml::pyrepr::str_repr(param),
                            super::options::py_repr(&JValue::from(
                                params.iter().map(|p| JValue::from(p.as_str())).collect::<Vec<_>>()
                            ))
                        )));
                    };
                    if !INI_OPTIONS.contains(&name) {
                        return Err(LookupError::failed(format!(
                            "{} is not a valid option.",
                            tack_yaml::pyrepr::str_repr(name)
                        )));
                    }
                    o.set(name, &JValue::from(value))?;
                } else if key == term {
                    key = param.clone();
                    updated_key = true;
                }
            }
            if !updated_key {
                return Err(LookupError::failed(format!(
                    "No key to look up was provided as first term within string inline options: {term}"
                )));
            }
        }
        let path = find_file(call, "files", &o.file, true)?;
        let mut text = read(call, path.as_deref(), &o.encoding)?;
        if o.kind == "properties" {
            text = format!("[java_properties]\n{text}");
            o.section = "java_properties".into();
        }
        let sections = parse_ini(&text, &o, &o.file)?;
        let Some((_, options)) = sections.iter().find(|(n, _)| *n == o.section) else {
            return Err(LookupError::failed(format!(
                "No section {} in {}.",
                tack_yaml::pyrepr::str_repr(&o.section),
                tack_yaml::pyrepr::str_repr(&o.file)
            )));
        };
        let defaults = &sections[0].1;
        let raw = |name: &str| -> Option<Option<String>> {
            options.iter().chain(defaults.iter()).find(|(k, _)| k == name).map(|(_, v)| v.clone())
        };
        let resolve = |v: Option<String>| -> JValue {
            match v {
                None => JValue::from(()),
                Some(v) if o.interpolation => {
                    JValue::from(interpolate(&v, &|n| raw(n).flatten(), 0))
                }
                Some(v) => JValue::from(v),
            }
        };
        if o.re {
            let re = crate::filters::regex::compile_python(&key).map_err(LookupError::failed)?;
            let mut names: Vec<&String> = options.iter().map(|(k, _)| k).collect();
            for (k, _) in defaults {
                if !names.contains(&k) {
                    names.push(k);
                }
            }
            for name in names {
                if re.find(name).ok().flatten().is_some_and(|m| m.start() == 0) {
                    out.push(resolve(raw(name).flatten()));
                }
            }
            continue;
        }
        let lookup_key = if o.case_sensitive { key.clone() } else { key.to_lowercase() };
        match raw(&lookup_key) {
            Some(v) => {
                let value = resolve(v);
                if !value.is_none() {
                    out.push(value);
                }
            }
            None if o.default.is_none() => {}
            None => out.push(o.default.clone()),
        }
    }
    Ok(out)
}

/// One row of an excel-dialect CSV line (quotes `"`, doubled to escape).
fn csv_row(line: &str, delimiter: char) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut at_start = true;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    quoted = false;
                }
            } else {
                field.push(c);
            }
        } else if c == '"' && at_start {
            quoted = true;
            at_start = false;
        } else if c == delimiter {
            fields.push(std::mem::take(&mut field));
            at_start = true;
        } else {
            field.push(c);
            at_start = false;
        }
    }
    fields.push(field);
    fields
}

fn csvfile(call: &Call) -> Result<Vec<JValue>, LookupError> {
    const OPTIONS: &[&str] = &["col", "keycol", "default", "delimiter", "file", "encoding"];
    let mut o = CsvOptions {
        col: 1,
        keycol: 0,
        default: JValue::from(()),
        delimiter: "TAB".into(),
        file: "ansible.csv".into(),
        encoding: "utf-8".into(),
    };
    for (k, v) in &call.kwargs {
        o.set(k, v)?;
    }
    if call.terms.is_empty() {
        return Err(LookupError::failed("Search key is required but was not found"));
    }
    let mut out = Vec::new();
    for term in &call.terms {
        let pairs = tack_loader::kv::parse_kv(&py_str(term), false)
            .map_err(|e| LookupError::failed(e.to_string()))?;
        let Some(key) = pairs.iter().find(|(k, _)| k == "_raw_params").map(|(_, v)| v.clone())
        else {
            return Err(LookupError::failed("Search key is required but was not found"));
        };
        for (name, value) in &pairs {
            if name == "_raw_params" {
                continue;
            }
            if !OPTIONS.contains(&name.as_str()) {
                return Err(LookupError::failed(format!(
                    "{} is not a valid option",
                    tack_yaml::pyrepr::str_repr(name)
                )));
            }
            o.set(name, &JValue::from(value.as_str()))?;
        }
        let delim = if o.delimiter == "TAB" { "\t".to_string() } else { o.delimiter.clone() };
        let mut chars = delim.chars();
        let (Some(d), None) = (chars.next(), chars.next()) else {
            return Err(LookupError::failed("\"delimiter\" must be a 1-character string"));
        };
        let Some(path) = find_file(call, "files", &o.file, true)? else {
            return Err(LookupError::failed(
                "expected str, bytes or os.PathLike object, not NoneType",
            ));
        };
        let text = read(call, Some(&path), &o.encoding)?;
        let index = |i: i64, len: usize| -> Result<usize, LookupError> {
            let i = if i < 0 { i + len as i64 } else { i };
            if i < 0 || i as usize >= len {
                return Err(LookupError::failed("list index out of range"));
            }
            Ok(i as usize)
        };
        let mut found = None;
        for line in text.lines() {
            let row = csv_row(line, d);
            if line.is_empty() {
                continue;
            }
            if row[index(o.keycol, row.len())?] == key {
                found = Some(JValue::from(row[index(o.col, row.len())?].as_str()));
                break;
            }
        }
        match found {
            Some(v) => out.push(v),
            None if o.default.is_none() => {}
            // A list default gives its items, as ansible's `ret.extend` does.
            None if o.default.kind() == minijinja::value::ValueKind::Seq => {
                out.extend(o.default.try_iter().map_err(|e| LookupError::failed(e.to_string()))?)
            }
            None => out.push(o.default.clone()),
        }
    }
    Ok(out)
}

struct CsvOptions {
    col: i64,
    keycol: i64,
    default: JValue,
    delimiter: String,
    file: String,
    encoding: String,
}

impl CsvOptions {
    fn set(&mut self, k: &str, v: &JValue) -> Result<(), LookupError> {
        match k {
            "col" => self.col = int("csvfile", "col", v)?,
            "keycol" => self.keycol = int("csvfile", "keycol", v)?,
            "default" => self.default = v.clone(),
            "delimiter" => self.delimiter = string(v),
            "file" => self.file = string(v),
            "encoding" => self.encoding = string(v),
            _ => {}
        }
        Ok(())
    }
}
