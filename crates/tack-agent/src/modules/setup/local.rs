//! The `local` collector: every `*.fact` file under `fact_path`, run when executable, read
//! as JSON or else as an INI file (Python's `configparser` rules), with ansible's warnings.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Map, Value, json};

pub fn collect(fact_path: &str, warnings: &mut Vec<String>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut local = Map::new();
    let Ok(dir) = std::fs::read_dir(fact_path) else {
        out.insert("local".into(), Value::Object(local));
        return out;
    };
    let mut files: Vec<String> = dir
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fact") && !n.starts_with('.'))
        .map(|n| format!("{fact_path}/{n}"))
        .collect();
    files.sort();
    for fn_ in files {
        let base = fn_.rsplit('/').next().unwrap_or("").replace(".fact", "");
        let mode = match std::fs::metadata(&fn_) {
            Ok(m) => m.permissions().mode(),
            Err(e) => {
                let msg = format!("Could not stat fact ({fn_}): {e}");
                warnings.push(msg.clone());
                local.insert(base, json!(msg));
                continue;
            }
        };
        let bytes = if mode & 0o100 != 0 {
            match std::process::Command::new(&fn_).output() {
                Ok(o) if o.status.success() => o.stdout,
                Ok(o) => {
                    let msg = format!(
                        "Failure executing fact script ({fn_}), rc: {}, err: {}",
                        o.status.code().unwrap_or(-1),
                        String::from_utf8_lossy(&o.stderr)
                    );
                    warnings.push(msg.clone());
                    local.insert(base, json!(msg));
                    continue;
                }
                Err(e) => {
                    let msg = format!("Could not execute fact script ({fn_}): {e}");
                    warnings.push(msg.clone());
                    local.insert(base, json!(msg));
                    continue;
                }
            }
        } else {
            // ansible reads a plain fact file stripped.
            std::fs::read(&fn_)
                .map(|b| String::from_utf8_lossy(&b).trim().as_bytes().to_vec())
                .unwrap_or_default()
        };
        let Ok(text) = String::from_utf8(bytes) else {
            let msg = format!("error loading fact - output of running \"{fn_}\" was not utf-8");
            warnings.push(msg.clone());
            local.insert(base, json!(msg));
            continue;
        };
        let fact = match serde_json::from_str::<Value>(&text) {
            Ok(v) => v,
            Err(_) => match parse_ini(&text) {
                Some(v) => v,
                None => {
                    let msg =
                        format!("error loading facts as JSON or ini - please check content: {fn_}");
                    warnings.push(msg.clone());
                    json!(msg)
                }
            },
        };
        local.insert(base, fact);
    }
    out.insert("local".into(), Value::Object(local));
    out
}

/// `configparser.ConfigParser().read_file` then every section's options (defaults merged),
/// keys lowercased; `None` where configparser raises. Values holding `%` other than `%%` are
/// treated as unreadable: configparser's interpolation of them is not ported.
fn parse_ini(text: &str) -> Option<Value> {
    let mut sections: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut defaults: Vec<(String, String)> = Vec::new();
    let mut current: Option<usize> = None;
    let mut in_default = false;
    let mut last_key: Option<String> = None;
    for raw in text.lines() {
        let stripped = raw.trim();
        if stripped.is_empty() || stripped.starts_with('#') || stripped.starts_with(';') {
            last_key = None;
            continue;
        }
        let indented = raw.starts_with(|c: char| c.is_whitespace());
        if indented && last_key.is_some() {
            let key = last_key.clone()?;
            let opts = if in_default { &mut defaults } else { &mut sections[current?].1 };
            let entry = opts.iter_mut().find(|(k, _)| *k == key)?;
            entry.1.push('\n');
            entry.1.push_str(stripped);
            continue;
        }
        if stripped.starts_with('[') && stripped.ends_with(']') {
            let name = stripped[1..stripped.len() - 1].to_string();
            if name == "DEFAULT" {
                in_default = true;
                current = None;
            } else {
                if sections.iter().any(|(n, _)| *n == name) {
                    return None;
                }
                sections.push((name, Vec::new()));
                current = Some(sections.len() - 1);
                in_default = false;
            }
            last_key = None;
            continue;
        }
        let pos = stripped.find(['=', ':'])?;
        let key = stripped[..pos].trim().to_lowercase();
        let value = stripped[pos + 1..].trim().to_string();
        let opts = if in_default { &mut defaults } else { &mut sections[current?].1 };
        if opts.iter().any(|(k, _)| *k == key) {
            return None;
        }
        opts.push((key.clone(), value));
        last_key = Some(key);
    }
    let mut out = Map::new();
    for (name, opts) in sections {
        let mut sect = Map::new();
        let mut all = opts.clone();
        for (k, v) in &defaults {
            if !all.iter().any(|(ok, _)| ok == k) {
                all.push((k.clone(), v.clone()));
            }
        }
        for (k, v) in all {
            if v.replace("%%", "").contains('%') {
                return None;
            }
            sect.insert(k, json!(v.replace("%%", "%")));
        }
        out.insert(name, Value::Object(sect));
    }
    Some(Value::Object(out))
}
