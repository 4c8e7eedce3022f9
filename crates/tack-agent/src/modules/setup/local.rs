//! The `local` collector: every `*.fact` file under `fact_path`, run when executable, read
//! as JSON or else as an INI file (Python's `configparser` rules), with ansible's warnings.

use std::os::unix::fs::PermissionsExt;

use serde_json::{Map, Value, json};

use super::ini;

pub(super) fn collect(fact_path: &str, warnings: &mut Vec<String>) -> Map<String, Value> {
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
            match crate::modules::environment::command(&fn_).output() {
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
        // ansible decodes a script's output keeping undecodable bytes as surrogates and reads
        // on; tack replaces them, which only shows in a value that keeps such bytes.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let fact = match serde_json::from_str::<Value>(&text) {
            Ok(v) => v,
            Err(_) => match ini::read(&text) {
                Err(()) => {
                    let msg =
                        format!("error loading facts as JSON or ini - please check content: {fn_}");
                    warnings.push(msg.clone());
                    json!(msg)
                }
                Ok(parser) => match ini_fact(&parser, &fn_, warnings) {
                    Some(v) => v,
                    // ansible's collector raises here and setup drops every local fact.
                    None => return Map::new(),
                },
            },
        };
        local.insert(base, fact);
    }
    out.insert("local".into(), Value::Object(local));
    out
}

/// ansible's loop over a parsed INI fact: each section's options as interpolated strings.
/// An option that fails to interpolate turns the whole fact into the error text, after which
/// ansible keeps indexing into that text; where Python would raise there, `None`.
fn ini_fact(parser: &ini::Parser, fn_: &str, warnings: &mut Vec<String>) -> Option<Value> {
    let mut fact: Result<Map<String, Value>, String> = Ok(Map::new());
    for sect in parser.sections() {
        match &mut fact {
            Ok(m) => {
                m.entry(sect.to_string()).or_insert_with(|| json!({}));
            }
            // `sect not in fact` on a str is a substring test; assigning into it raises.
            Err(text) if !text.contains(sect) => return None,
            Err(_) => {}
        }
        for opt in parser.options(sect) {
            match parser.get(sect, &opt) {
                Err(ex) => {
                    let msg =
                        format!("error loading facts as ini - please check content: {fn_} ({ex})");
                    warnings.push(msg.clone());
                    fact = Err(msg);
                }
                Ok(val) => match &mut fact {
                    Ok(m) => {
                        if let Some(Value::Object(s)) = m.get_mut(sect) {
                            s.insert(opt, json!(val));
                        }
                    }
                    Err(_) => return None,
                },
            }
        }
    }
    Some(match fact {
        Ok(m) => Value::Object(m),
        Err(text) => json!(text),
    })
}
