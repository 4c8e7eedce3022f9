//! `ansible.builtin.blockinfile`: a marked block of lines inserted, updated or removed in one
//! file, with ansible's positions, blank-line options, backups, validation, check mode and
//! two-part diff. Writes only the destination file (and its backup).

use serde_json::{Map, Value};

use super::argspec::{Kind, Opt, Params, Spec, file_common};
use super::common::fail;
use super::fsattr::Outcome;
use super::pyre::{Flags, PyRegex, has_inline_flag};
use super::textfile::{backup_local, check_file_attrs};
use super::{Ctx, Invocation, ModuleResult, paths, validate};

pub(crate) fn spec() -> Spec {
    let mut options = vec![
        Opt::new("path", Kind::Path).required().aliases(&["dest", "destfile", "name"]),
        Opt::new("state", Kind::Str).default("present").choices(&["absent", "present"]),
        Opt::new("marker", Kind::Str).default("# {mark} ANSIBLE MANAGED BLOCK"),
        Opt::new("block", Kind::Str).default("").aliases(&["content"]),
        Opt::new("insertafter", Kind::Str),
        Opt::new("insertbefore", Kind::Str),
        Opt::new("create", Kind::Bool).default(false),
        Opt::new("backup", Kind::Bool).default(false),
        Opt::new("validate", Kind::Str),
        Opt::new("marker_begin", Kind::Str).default("BEGIN"),
        Opt::new("marker_end", Kind::Str).default("END"),
        Opt::new("append_newline", Kind::Bool).default(false),
        Opt::new("prepend_newline", Kind::Bool).default(false),
        Opt::new("encoding", Kind::Str).default("utf-8"),
    ];
    options.extend(file_common());
    Spec { options, mutually_exclusive: &[&["insertbefore", "insertafter"]], ..Spec::default() }
}

/// `str.splitlines(keepends=True)`.
pub(super) fn splitlines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        cur.push(c);
        let ends = match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    cur.push('\n');
                    chars.next();
                }
                true
            }
            '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => true,
            _ => false,
        };
        if ends {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn obj(pairs: Vec<(&str, Value)>) -> ModuleResult {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn compile(pattern: &str) -> Outcome<PyRegex> {
    // ansible's module does not catch `re.error`: the module raised it.
    super::host_re::compile(pattern, Flags::default()).map_err(|e| super::common::raised(&e))
}

fn mark(marker: &str, with: &str) -> Outcome<String> {
    let re = compile(r"\{mark\}")?;
    let mut out = String::new();
    let mut last = 0;
    for caps in re.captures_all(marker) {
        let Some(m) = caps.get(0) else { continue };
        out.push_str(&marker[last..m.start()]);
        out.push_str(&re.expand(with, &caps).map_err(fail)?);
        last = m.end();
    }
    out.push_str(&marker[last..]);
    Ok(out)
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    match execute(ctx, &p) {
        Ok(r) | Err(r) => r,
    }
}

fn execute(ctx: Ctx, p: &Params) -> Outcome<ModuleResult> {
    let codec = super::textfile::text_codec(p)?;
    super::fsattr::check_selinux(p)?;
    let path = p.str("path").unwrap_or_default().to_string();
    if paths::isdir(&path) {
        let mut r = obj(vec![("rc", 256.into())]);
        r.extend(fail(format!("Path {path} is a directory !")));
        return Err(r);
    }
    let path_exists = paths::exists(&path);
    let present = p.str("state") == Some("present");
    let (original, mut lines) = if !path_exists {
        if !p.bool("create") {
            let mut r = obj(vec![("rc", 257.into())]);
            r.extend(fail(format!("Path {path} does not exist !")));
            return Err(r);
        }
        let parent = paths::dirname(&path);
        if !parent.is_empty() && !paths::exists(&parent) && !ctx.check_mode {
            std::fs::create_dir_all(&parent).map_err(|e| {
                let code = e.raw_os_error().unwrap_or(0);
                fail(format!(
                    "Error creating {parent} Error code: {code} Error description: {}",
                    tack_py::oserror::strerror_code(code)
                ))
            })?;
        }
        (None, Vec::new())
    } else {
        let bytes = std::fs::read(&path).map_err(|e| fail(e.to_string()))?;
        let text = super::textfile::decode(&codec, &bytes)?;
        let lines = splitlines(&text);
        (Some(text), lines)
    };
    let mut diff = obj(vec![
        ("before", "".into()),
        ("after", "".into()),
        ("before_header", format!("{path} (content)").into()),
        ("after_header", format!("{path} (content)").into()),
    ]);
    if ctx.diff && original.as_deref().is_some_and(|o| !o.is_empty()) {
        diff.insert("before".into(), original.clone().unwrap_or_default().into());
    }
    if !present && !path_exists {
        return Ok(obj(vec![
            ("changed", false.into()),
            ("msg", format!("File {path} not present").into()),
        ]));
    }
    let insertbefore = p.str("insertbefore");
    let mut insertafter = p.str("insertafter");
    if insertbefore.is_none() && insertafter.is_none() {
        insertafter = Some("EOF");
    }
    let insert_pattern = match (insertafter, insertbefore) {
        (Some(a), _) if a != "EOF" => Some(a),
        (_, Some(b)) if b != "BOF" => Some(b),
        _ => None,
    };
    let insertre = insert_pattern.map(compile).transpose()?;
    let marker = p.str("marker").unwrap_or_default();
    let marker0 = format!("{}\n", mark(marker, p.str("marker_begin").unwrap_or_default())?);
    let marker1 = format!("{}\n", mark(marker, p.str("marker_end").unwrap_or_default())?);
    let mut block = p.str("block").unwrap_or_default().to_string();
    let blocklines: Vec<String> = if present && !block.is_empty() {
        if !block.ends_with('\n') {
            block.push('\n');
        }
        let mut v = vec![marker0.clone()];
        v.extend(splitlines(&block));
        v.push(marker1.clone());
        v
    } else {
        Vec::new()
    };
    let (mut n0, mut n1) = (None, None);
    for (i, line) in lines.iter().enumerate() {
        if *line == marker0 {
            n0 = Some(i);
        }
        if *line == marker1 {
            n1 = Some(i);
        }
    }
    let mut at = match (n0, n1) {
        (Some(a), Some(b)) if a < b => {
            lines.drain(a..=b);
            a
        }
        (Some(a), Some(b)) => {
            lines.drain(b..=a);
            b
        }
        _ => {
            if let (Some(re), Some(pattern)) = (&insertre, insert_pattern) {
                let mut found = None;
                if has_inline_flag(pattern, 'm') {
                    let text = original.clone().unwrap_or_default();
                    if let Some(m) =
                        re.search(&text).and_then(|c| c.get(0).map(|m| (m.start(), m.end())))
                    {
                        if insertafter.is_some() {
                            found = Some(text[..m.1].matches('\n').count());
                        } else if insertbefore.is_some() {
                            found = Some(text[..m.0].matches('\n').count());
                        }
                    }
                } else {
                    for (i, line) in lines.iter().enumerate() {
                        if re.is_match(line) {
                            found = Some(i);
                        }
                    }
                }
                match found {
                    None => lines.len(),
                    Some(i) if insertafter.is_some() => i + 1,
                    Some(i) => i,
                }
            } else if insertbefore.is_some() {
                0
            } else {
                lines.len()
            }
        }
    };
    if at > 0 && !lines[at - 1].ends_with('\n') {
        lines[at - 1].push('\n');
    }
    if p.bool("prepend_newline") && present && at != 0 && lines[at - 1] != "\n" {
        lines.insert(at, "\n".into());
        at += 1;
    }
    let count = blocklines.len();
    lines.splice(at..at, blocklines);
    if p.bool("append_newline") && present {
        let after = at + count;
        if after < lines.len() && lines[after] != "\n" {
            lines.insert(after, "\n".into());
        }
    }
    let result = lines.concat();
    if ctx.diff {
        diff.insert("after".into(), result.clone().into());
    }
    let (msg, changed) = if original.as_deref() == Some(result.as_str()) {
        ("", false)
    } else if original.is_none() {
        ("File created", true)
    } else if count == 0 {
        ("Block removed", true)
    } else {
        ("Block inserted", true)
    };
    let mut backup = None;
    if changed && !ctx.check_mode {
        if p.bool("backup") && path_exists {
            backup = Some(backup_local(&path, false)?);
        }
        let encoded = super::textfile::encode(&codec, &result)?;
        validate::write_validated(p, &paths::realpath(&path), &encoded, ctx)?;
    }
    if ctx.check_mode && !path_exists {
        return Ok(obj(vec![
            ("changed", changed.into()),
            ("msg", msg.into()),
            ("diff", Value::Object(diff)),
        ]));
    }
    let mut attr_diff = Map::new();
    let (msg, changed) = check_file_attrs(p, &path, changed, msg, &mut attr_diff, ctx.check_mode)?;
    attr_diff.insert("before_header".into(), format!("{path} (file attributes)").into());
    attr_diff.insert("after_header".into(), format!("{path} (file attributes)").into());
    let mut r = obj(vec![
        ("changed", changed.into()),
        ("msg", msg.into()),
        ("diff", Value::Array(vec![Value::Object(diff), Value::Object(attr_diff)])),
    ]);
    if let Some(b) = backup {
        r.insert("backup_file".into(), b.into());
    }
    Ok(r)
}
