//! `ansible.builtin.lineinfile`: ensures one line is present (replacing a matching line, or
//! inserting it at a position) or removes matching lines, with backups, validation, check
//! mode and ansible's two-part diff. Writes only the destination file (and its backup).

use serde_json::{Map, Value};

use super::argspec::{Kind, Opt, Params, Spec, file_common};
use super::common::{fail, warn};
use super::fsattr::Outcome;
use super::pyre::{Flags, PyRegex};
use super::textfile::{backup_local, check_file_attrs, lines_of};
use super::{Ctx, Invocation, ModuleResult, paths, validate};

pub(crate) fn spec() -> Spec {
    let mut options = vec![
        Opt::new("path", Kind::Path).required().aliases(&["dest", "destfile", "name"]),
        Opt::new("state", Kind::Str).default("present").choices(&["absent", "present"]),
        Opt::new("regexp", Kind::Str).aliases(&["regex"]),
        Opt::new("search_string", Kind::Str),
        Opt::new("line", Kind::Str).aliases(&["value"]),
        Opt::new("encoding", Kind::Str).default("utf-8"),
        Opt::new("insertafter", Kind::Str),
        Opt::new("insertbefore", Kind::Str),
        Opt::new("backrefs", Kind::Bool).default(false),
        Opt::new("create", Kind::Bool).default(false),
        Opt::new("backup", Kind::Bool).default(false),
        Opt::new("firstmatch", Kind::Bool).default(false),
        Opt::new("validate", Kind::Str),
    ];
    options.extend(file_common());
    Spec {
        options,
        mutually_exclusive: &[
            &["insertbefore", "insertafter"],
            &["regexp", "search_string"],
            &["backrefs", "search_string"],
        ],
        ..Spec::default()
    }
}

fn compile(pattern: &str) -> Outcome<PyRegex> {
    // ansible's module does not catch `re.error`: the module raised it.
    super::host_re::compile(pattern, Flags::default()).map_err(|e| super::common::raised(&e))
}

fn obj(pairs: Vec<(&str, Value)>) -> ModuleResult {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
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
    super::textfile::text_codec(p)?;
    super::fsattr::check_selinux(p)?;
    let mut warnings = ModuleResult::new();
    let regexp = p.str("regexp");
    let search = p.str("search_string");
    if regexp == Some("") || search == Some("") {
        let mut msg = format!(
            "The {} is an empty string, which will match every line in the file. This may have unintended consequences, such as replacing the last line in the file rather than appending.",
            if regexp == Some("") { "regular expression" } else { "search string" }
        );
        if regexp == Some("") {
            msg.push_str(" If this is desired, use '^' to match every line in the file and avoid this warning.");
        }
        warn(&mut warnings, &msg);
    }
    let path = p.str("path").unwrap_or_default().to_string();
    if paths::isdir(&path) {
        let mut r = obj(vec![("rc", 256.into())]);
        r.extend(fail(format!("Path {path} is a directory !")));
        return Err(r);
    }
    let mut result = if p.str("state") == Some("present") {
        if p.bool("backrefs") && regexp.is_none() {
            return Err(fail("regexp is required with backrefs=true"));
        }
        let Some(line) = p.str("line") else {
            return Err(fail("line is required with state=present"));
        };
        let (mut before, mut after) = (p.str("insertbefore"), p.str("insertafter"));
        if before.is_none() && after.is_none() {
            after = Some("EOF");
        }
        if before.is_some() {
            after = after.filter(|_| false);
        } else {
            before = None;
        }
        present(ctx, p, &path, regexp, search, line, after, before)?
    } else {
        if regexp.is_none() && search.is_none() && p.str("line").is_none() {
            return Err(fail(
                "one of line, search_string, or regexp is required with state=absent",
            ));
        }
        absent(ctx, p, &path, regexp, search, p.str("line"))?
    };
    result.extend(warnings);
    Ok(result)
}

fn content_diff(dest: &str) -> Map<String, Value> {
    obj(vec![
        ("before", "".into()),
        ("after", "".into()),
        ("before_header", format!("{dest} (content)").into()),
        ("after_header", format!("{dest} (content)").into()),
    ])
}

#[allow(clippy::too_many_arguments)]
fn finish(
    ctx: Ctx,
    p: &Params,
    dest: &str,
    changed: bool,
    msg: &str,
    backup: String,
    diff: Map<String, Value>,
    found: Option<usize>,
) -> Outcome<ModuleResult> {
    let mut attr_diff = Map::new();
    let (msg, changed) = check_file_attrs(p, dest, changed, msg, &mut attr_diff, ctx.check_mode)?;
    attr_diff.insert("before_header".into(), format!("{dest} (file attributes)").into());
    attr_diff.insert("after_header".into(), format!("{dest} (file attributes)").into());
    let mut r = obj(vec![("changed", changed.into())]);
    if let Some(n) = found {
        r.insert("found".into(), n.into());
    }
    r.insert("msg".into(), msg.into());
    r.insert("backup".into(), backup.into());
    r.insert("diff".into(), Value::Array(vec![Value::Object(diff), Value::Object(attr_diff)]));
    Ok(r)
}

/// `dest` read as text in the module's `encoding` (Python's text mode: `\r\n` and `\r` become
/// `\n`); a byte it cannot decode raises, as ansible's read does.
fn read_in(p: &Params, dest: &str) -> Outcome<String> {
    let bytes = std::fs::read(dest).map_err(|e| fail(e.to_string()))?;
    let text = super::textfile::decode(&super::textfile::text_codec(p)?, &bytes)?;
    Ok(text.replace("\r\n", "\n").replace('\r', "\n"))
}

fn write(ctx: Ctx, p: &Params, dest: &str, lines: &[String]) -> Outcome<()> {
    let encoded = super::textfile::encode(&super::textfile::text_codec(p)?, &lines.concat())?;
    validate::write_validated(p, dest, &encoded, ctx)
}

#[allow(clippy::too_many_arguments)]
fn present(
    ctx: Ctx,
    p: &Params,
    dest: &str,
    regexp: Option<&str>,
    search: Option<&str>,
    line: &str,
    insertafter: Option<&str>,
    insertbefore: Option<&str>,
) -> Outcome<ModuleResult> {
    let mut diff = content_diff(dest);
    let firstmatch = p.bool("firstmatch");
    let backrefs = p.bool("backrefs");
    let mut lines = if !paths::exists(dest) {
        if !p.bool("create") {
            let mut r = obj(vec![("rc", 257.into())]);
            r.extend(fail(format!("Destination {dest} does not exist !")));
            return Err(r);
        }
        let parent = paths::dirname(dest);
        if !parent.is_empty() && !paths::exists(&parent) && !ctx.check_mode {
            std::fs::create_dir_all(&parent).map_err(|e| {
                fail(format!(
                    "Error creating {parent} ({})",
                    tack_py::oserror::os_error(&e, std::path::Path::new(&parent))
                ))
            })?;
        }
        Vec::new()
    } else {
        lines_of(&read_in(p, dest)?)
    };
    if ctx.diff {
        diff.insert("before".into(), lines.concat().into());
    }
    let re_m = regexp.map(compile).transpose()?;
    let re_ins = match (insertafter, insertbefore) {
        (Some(a), _) if a != "BOF" && a != "EOF" => Some(compile(a)?),
        (_, Some(b)) if b != "BOF" => Some(compile(b)?),
        _ => None,
    };
    let mut index = [-1i64, -1i64];
    let mut matched: Option<String> = None;
    let mut expanded: Option<Result<String, String>> = None;
    if let Some(re) = &re_m {
        for (n, cur) in lines.iter().enumerate() {
            if let Some(caps) = re.search(cur) {
                index[0] = n as i64;
                matched = Some(cur.clone());
                expanded = Some(re.expand(line, &caps));
                if firstmatch {
                    break;
                }
            }
        }
    }
    if let Some(s) = search {
        for (n, cur) in lines.iter().enumerate() {
            if cur.contains(s) {
                index[0] = n as i64;
                matched = Some(cur.clone());
                if firstmatch {
                    break;
                }
            }
        }
    }
    if matched.is_none() {
        for (n, cur) in lines.iter().enumerate() {
            if line == cur.trim_end_matches(['\r', '\n']) {
                index[0] = n as i64;
            } else if let Some(re) = &re_ins
                && re.is_match(cur)
            {
                if insertafter.is_some() {
                    index[1] = n as i64 + 1;
                    if firstmatch {
                        break;
                    }
                }
                if insertbefore.is_some() {
                    index[1] = n as i64;
                    if firstmatch {
                        break;
                    }
                }
            }
        }
    }
    let mut msg = "";
    let mut changed = false;
    let strip = |s: &str| s.trim_end_matches(['\r', '\n']).to_string();
    let with_nl = |s: &str| format!("{s}\n");
    if index[0] != -1 {
        let mut new_line = if backrefs && matched.is_some() {
            expanded
                .unwrap_or(Ok(line.to_string()))
                .map_err(|e| fail(format!("invalid backreference template: {e}")))?
        } else {
            line.to_string()
        };
        if !new_line.ends_with('\n') {
            new_line.push('\n');
        }
        // ansible's separate insertion branch for an index found without any match cannot be
        // reached: without regexp or search_string the index comes from an exact line.
        if lines[index[0] as usize] != new_line {
            lines[index[0] as usize] = new_line;
            msg = "line replaced";
            changed = true;
        }
    } else if backrefs {
    } else if insertbefore == Some("BOF") || insertafter == Some("BOF") {
        lines.insert(0, with_nl(line));
        msg = "line added";
        changed = true;
    } else if insertafter == Some("EOF") || index[1] == -1 {
        if lines.last().is_some_and(|l| !l.ends_with(['\n', '\r'])) {
            lines.push("\n".into());
        }
        lines.push(with_nl(line));
        msg = "line added";
        changed = true;
    } else if insertafter.is_some() && index[1] != -1 {
        let at = index[1] as usize;
        if lines.len() == at {
            if strip(&lines[at - 1]) != line {
                lines.push(with_nl(line));
                msg = "line added";
                changed = true;
            }
        } else if line != strip(&lines[at]) {
            lines.insert(at, with_nl(line));
            msg = "line added";
            changed = true;
        }
    } else {
        lines.insert(index[1] as usize, with_nl(line));
        msg = "line added";
        changed = true;
    }
    if ctx.diff {
        diff.insert("after".into(), lines.concat().into());
    }
    let mut backup = String::new();
    if changed && !ctx.check_mode {
        if p.bool("backup") && paths::exists(dest) {
            backup = backup_local(dest, false)?;
        }
        write(ctx, p, dest, &lines)?;
    }
    if ctx.check_mode && !paths::exists(dest) {
        let mut r =
            obj(vec![("changed", changed.into()), ("msg", msg.into()), ("backup", backup.into())]);
        r.insert("diff".into(), Value::Object(diff));
        return Ok(r);
    }
    finish(ctx, p, dest, changed, msg, backup, diff, None)
}

fn absent(
    ctx: Ctx,
    p: &Params,
    dest: &str,
    regexp: Option<&str>,
    search: Option<&str>,
    line: Option<&str>,
) -> Outcome<ModuleResult> {
    if !paths::exists(dest) {
        return Ok(obj(vec![("changed", false.into()), ("msg", "file not present".into())]));
    }
    let mut diff = content_diff(dest);
    let lines = lines_of(&read_in(p, dest)?);
    if ctx.diff {
        diff.insert("before".into(), lines.concat().into());
    }
    let re = regexp.map(compile).transpose()?;
    let (kept, found): (Vec<String>, Vec<String>) = lines.into_iter().partition(|cur| {
        let hit = match (&re, search) {
            (Some(re), _) => re.is_match(cur),
            (None, Some(s)) => cur.contains(s),
            (None, None) => line == Some(cur.trim_end_matches(['\r', '\n'])),
        };
        !hit
    });
    let changed = !found.is_empty();
    if ctx.diff {
        diff.insert("after".into(), kept.concat().into());
    }
    let mut backup = String::new();
    if changed && !ctx.check_mode {
        if p.bool("backup") {
            backup = backup_local(dest, false)?;
        }
        write(ctx, p, dest, &kept)?;
    }
    let msg = if changed { format!("{} line(s) removed", found.len()) } else { String::new() };
    finish(ctx, p, dest, changed, &msg, backup, diff, Some(found.len()))
}
