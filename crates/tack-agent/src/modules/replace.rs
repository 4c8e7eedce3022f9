//! `ansible.builtin.replace`: every match of a Python regular expression (multiline mode)
//! replaced in one file, optionally only between `after` and `before`. Writes only that file
//! (and its backup).

use serde_json::Value;

use super::argspec::{Kind, Opt, Params, Spec, file_common};
use super::common::fail;
use super::fsattr::Outcome;
use super::pyre::{Flags, PyRegex};
use super::textfile::{backup_local, check_file_attrs};
use super::{Ctx, Invocation, ModuleResult, paths, validate};

pub(crate) fn spec() -> Spec {
    let mut options = vec![
        Opt::new("path", Kind::Path).required().aliases(&["dest", "destfile", "name"]),
        Opt::new("regexp", Kind::Str).required(),
        Opt::new("replace", Kind::Str).default(""),
        Opt::new("after", Kind::Str),
        Opt::new("before", Kind::Str),
        Opt::new("backup", Kind::Bool).default(false),
        Opt::new("validate", Kind::Str),
        Opt::new("encoding", Kind::Str).default("utf-8"),
    ];
    options.extend(file_common());
    Spec { options, ..Spec::default() }
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

fn with_rc(rc: i64, msg: String) -> ModuleResult {
    let mut r = ModuleResult::new();
    r.insert("rc".into(), rc.into());
    r.extend(fail(msg));
    r
}

fn compile(pattern: &str, flags: Flags) -> Outcome<PyRegex> {
    // ansible's module does not catch `re.error`: the module raised it.
    super::host_re::compile(pattern, flags).map_err(|e| super::common::raised(&e))
}

fn execute(ctx: Ctx, p: &Params) -> Outcome<ModuleResult> {
    let codec = super::textfile::text_codec(p)?;
    super::fsattr::check_selinux(p)?;
    let path = p.str("path").unwrap_or_default().to_string();
    if paths::isdir(&path) {
        return Err(with_rc(256, format!("Path {path} is a directory !")));
    }
    if !paths::exists(&path) {
        return Err(with_rc(257, format!("Path {path} does not exist !")));
    }
    let bytes = std::fs::read(&path)
        .map_err(|_| fail(format!("Unable to read the contents of '{path}'.")))?;
    // Python's text-mode read in the module's encoding (`newline=None`); a byte the encoding
    // cannot decode raises, as ansible's read does.
    let contents =
        super::textfile::decode(&codec, &bytes)?.replace("\r\n", "\n").replace('\r', "\n");
    let mut res = ModuleResult::new();
    res.insert("rc".into(), 0.into());
    let after = p.str("after").filter(|s| !s.is_empty());
    let before = p.str("before").filter(|s| !s.is_empty());
    let pattern = match (after, before) {
        (Some(a), Some(b)) => format!("{a}(?P<subsection>.*?){b}"),
        (Some(a), None) => format!("{a}(?P<subsection>.*)"),
        (None, Some(b)) => format!("(?P<subsection>.*){b}"),
        (None, None) => String::new(),
    };
    let (section, span) = if pattern.is_empty() {
        (contents.clone(), None)
    } else {
        let re = compile(&pattern, Flags { multiline: false, dotall: true })?;
        match re.search(&contents).and_then(|c| c.name("subsection").map(|m| (m.start(), m.end())))
        {
            Some((s, e)) => (contents[s..e].to_string(), Some((s, e))),
            None => {
                res.insert(
                    "msg".into(),
                    format!(
                        "Pattern for before/after params did not match the given file: {pattern}"
                    )
                    .into(),
                );
                res.insert("changed".into(), false.into());
                return Ok(res);
            }
        }
    };
    let re =
        compile(p.str("regexp").unwrap_or_default(), Flags { multiline: true, dotall: false })?;
    let template = p.str("replace").unwrap_or_default();
    // ansible's module catches `re.error` only: an unknown group name escapes it.
    match re.check_template(template) {
        Ok(()) => {}
        Err(tack_py::re::TemplateError::Re(e)) => {
            return Err(fail(format!("Unable to process replace due to error: {e}")));
        }
        Err(tack_py::re::TemplateError::Index(e)) => return Err(super::common::raised(&e)),
    }
    let mut replaced = String::new();
    let mut last = 0;
    let mut count = 0;
    for caps in re.captures_all(&section) {
        let Some(m) = caps.get(0) else { continue };
        replaced.push_str(&section[last..m.start()]);
        let text = re
            .expand(template, &caps)
            .map_err(|e| fail(format!("Unable to process replace due to error: {e}")))?;
        replaced.push_str(&text);
        last = m.end();
        count += 1;
    }
    replaced.push_str(&section[last..]);
    let mut msg = String::new();
    let mut changed = false;
    let mut result = replaced.clone();
    if count > 0 && section != replaced {
        if let Some((s, e)) = span {
            result = format!("{}{replaced}{}", &contents[..s], &contents[e..]);
        }
        msg = format!("{count} replacements made");
        changed = true;
        if ctx.diff {
            let mut diff = serde_json::Map::new();
            diff.insert("before_header".into(), path.clone().into());
            diff.insert("before".into(), contents.clone().into());
            diff.insert("after_header".into(), path.clone().into());
            diff.insert("after".into(), result.clone().into());
            res.insert("diff".into(), Value::Object(diff));
        }
    }
    if changed && !ctx.check_mode {
        if p.bool("backup") && paths::exists(&path) {
            res.insert("backup_file".into(), backup_local(&path, false)?.into());
        }
        let encoded = super::textfile::encode(&codec, &result)?;
        validate::write_validated(p, &paths::realpath(&path), &encoded, ctx)?;
    }
    let mut ignored = serde_json::Map::new();
    let (msg, changed) = check_file_attrs(p, &path, changed, &msg, &mut ignored, ctx.check_mode)?;
    res.insert("msg".into(), msg.into());
    res.insert("changed".into(), changed.into());
    Ok(res)
}
