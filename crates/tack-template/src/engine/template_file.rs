//! A template file rendered as ansible's `template` action renders it: the `#jinja2:` header
//! (whitespace flags, delimiters, newline sequence), the template variables
//! (`template_path`, `template_fullpath`, `template_host`, `template_uid`, `template_mtime`,
//! `template_run_date`, `template_destpath`, `ansible_managed`), native rendering with
//! backslashes processed, and the text written: a string result with its trailing newlines
//! kept, `None` as nothing, anything else as its `str()`.
//!
//! It reads the template file and, for its owner's name, `/etc/passwd`; it writes nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use minijinja::syntax::SyntaxConfig;
use minijinja::value::Value as JValue;
use minijinja::{Error, ErrorKind};
use tack_yaml::{Node, TimeOfDay, Timestamp, Value};

use super::{Engine, errors};
use crate::vars::{Layer, Provenance, Scope};

/// How the `template` action was asked to render (what the task's arguments and the
/// configuration say).
#[derive(Clone, Debug)]
pub struct TemplateFileOptions {
    /// The `src` as the task gave it (`template_path`); the file's path when `None`.
    pub path_as_given: Option<String>,
    /// `template_destpath`.
    pub dest_path: Option<String>,
    /// The `DEFAULT_MANAGED_STR` setting.
    pub managed_str: String,
}

impl Default for TemplateFileOptions {
    fn default() -> Self {
        TemplateFileOptions {
            path_as_given: None,
            dest_path: None,
            managed_str: "Ansible managed".into(),
        }
    }
}

/// The `#jinja2:` header's settings.
#[derive(Default)]
struct Header {
    syntax: Vec<(String, String)>,
    newline_sequence: Option<String>,
}

/// Splits a `#jinja2: key: value, key: value` first line from the body.
fn header(text: &str) -> (Option<Header>, &str) {
    let Some(rest) = text.strip_prefix("#jinja2:") else { return (None, text) };
    let (line, body) = rest.split_once('\n').unwrap_or((rest, ""));
    let mut h = Header::default();
    for part in line.split(',') {
        let Some((k, v)) = part.split_once(':') else { continue };
        let value = unquote(v.trim());
        match k.trim() {
            "newline_sequence" => h.newline_sequence = Some(value),
            key => h.syntax.push((key.to_string(), value)),
        }
    }
    (Some(h), body)
}

/// A Python literal's text: quotes removed and `\r`/`\n`/`\t` escapes processed.
fn unquote(v: &str) -> String {
    let inner = v
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| v.strip_prefix('"').and_then(|s| s.strip_suffix('"')));
    match inner {
        Some(s) => s.replace("\\r", "\r").replace("\\n", "\n").replace("\\t", "\t"),
        None => v.to_string(),
    }
}

fn flag(value: &str) -> bool {
    matches!(value, "True" | "true" | "yes" | "1")
}

fn syntax_of(settings: &[(String, String)]) -> Result<(SyntaxConfig, bool, bool), Error> {
    let (mut var, mut block, mut comment) = (("{{", "}}"), ("{%", "%}"), ("{#", "#}"));
    let (mut trim, mut lstrip) = (true, false);
    let get = |k: &str| settings.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    if let Some(v) = get("trim_blocks") {
        trim = flag(v);
    }
    if let Some(v) = get("lstrip_blocks") {
        lstrip = flag(v);
    }
    var.0 = get("variable_start_string").unwrap_or(var.0);
    var.1 = get("variable_end_string").unwrap_or(var.1);
    block.0 = get("block_start_string").unwrap_or(block.0);
    block.1 = get("block_end_string").unwrap_or(block.1);
    comment.0 = get("comment_start_string").unwrap_or(comment.0);
    comment.1 = get("comment_end_string").unwrap_or(comment.1);
    let syntax = SyntaxConfig::builder()
        .variable_delimiters(var.0.to_string(), var.1.to_string())
        .block_delimiters(block.0.to_string(), block.1.to_string())
        .comment_delimiters(comment.0.to_string(), comment.1.to_string())
        .trim_blocks(trim)
        .lstrip_blocks(lstrip)
        .build()?;
    Ok((syntax, trim, lstrip))
}

/// Renders the template file at `path` (absolute) and returns the text the action writes.
pub(crate) fn render(
    engine: &Arc<Engine>,
    path: &Path,
    scope: &Scope,
    options: &TemplateFileOptions,
) -> Result<String, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        errors::final_error(
            ErrorKind::TemplateNotFound,
            format!("Could not find or access '{}': {e}", path.display()),
        )
    })?;
    let scope = scope.with_layer(Arc::new(template_vars(path, scope, options)));
    let (header, body) = header(&text);
    let value = match &header {
        None => {
            let name = path.to_string_lossy();
            let template =
                engine.env.get_template(&name).map_err(|e| errors::compile_error(&e, body))?;
            engine.render_template(&template, &scope)?
        }
        Some(h) => {
            // A header changes the syntax: compile in an environment of its own (not cached).
            let (syntax, _, _) = syntax_of(&h.syntax)?;
            let mut env = super::env::build();
            env.set_syntax(syntax);
            let rewritten = super::prepass::rewrite(body, super::prepass::Mode::File);
            let source = rewritten.unwrap_or_else(|| body.to_string());
            let name = path.to_string_lossy();
            let template = env
                .template_from_named_str(&name, &source)
                .map_err(|e| errors::compile_error(&e, body))?;
            engine.render_template(&template, &scope)?
        }
    };
    let mut out = match value.as_str() {
        Some(s) => s.to_string(),
        None if value.is_none() => return Ok(String::new()),
        None => return crate::python::repr::str_of(&value),
    };
    if let Some(seq) = header.as_ref().and_then(|h| h.newline_sequence.as_deref()) {
        out = out.replace('\n', seq);
    }
    let want = body.len() - body.trim_end_matches('\n').len();
    let have = out.len() - out.trim_end_matches('\n').len();
    for _ in have..want {
        out.push('\n');
    }
    Ok(out)
}

/// The variables the `template` action adds for the file it renders.
fn template_vars(path: &Path, scope: &Scope, options: &TemplateFileOptions) -> Layer {
    let meta = std::fs::metadata(path).ok();
    let mtime = meta.as_ref().and_then(|m| m.modified().ok()).unwrap_or(UNIX_EPOCH);
    let uid = meta.as_ref().map(std::os::unix::fs::MetadataExt::uid).unwrap_or(0);
    let given = options.path_as_given.clone().unwrap_or_else(|| path.display().to_string());
    let mut layer = Layer::new();
    let mut set = |k: &str, v: Value| layer.insert(k, Node::bare(v), Provenance::Trusted);
    set("template_host", Value::Str(host_name()));
    set("template_path", Value::Str(given));
    set("template_mtime", Value::Timestamp(timestamp(mtime)));
    set("template_uid", user_name(uid).map_or(Value::Int(i64::from(uid)), Value::Str));
    set("template_run_date", Value::Timestamp(timestamp(SystemTime::now())));
    set("template_destpath", options.dest_path.clone().map_or(Value::Null, Value::Str));
    set("template_fullpath", Value::Str(path.display().to_string()));
    if !scope.contains("ansible_managed") {
        set("ansible_managed", Value::Str(options.managed_str.clone()));
    }
    layer
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn user_name(uid: u32) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        let name = fields.next()?;
        let id: u32 = fields.nth(1)?.parse().ok()?;
        (id == uid).then(|| name.to_string())
    })
}

/// A system time as a naive UTC `datetime` (ansible gives local time; tack's runs set TZ
/// as they please, and UTC is what the recorded runs use).
pub(crate) fn timestamp(t: SystemTime) -> Timestamp {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
    Timestamp {
        year,
        month,
        day,
        time: Some(TimeOfDay {
            hour: (rem / 3600) as u8,
            minute: (rem % 3600 / 60) as u8,
            second: (rem % 60) as u8,
            microsecond: d.subsec_micros(),
            utc_offset_minutes: None,
        }),
    }
}

/// Where `{% include %}`/`{% import %}` in a template file look, as the action's search path:
/// `templates/` and the working directory, then the including file's `templates/` and
/// directory.
pub(crate) fn search_path(parent: &Path) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let dir = parent.parent().map(Path::to_path_buf).unwrap_or_default();
    vec![cwd.join("templates"), cwd, dir.join("templates"), dir]
}

/// Renders the template file at `path` for the `template` lookup: the `template_*` variables
/// (with `template_path` as the lookup's term), then `extra` (its `template_vars`), in the
/// given delimiters and `trim_blocks`; the result keeps its native type.
pub(crate) fn render_for_lookup(
    engine: &Arc<Engine>,
    path: &Path,
    given: &str,
    scope: &Scope,
    syntax: &[(String, String)],
    extra: Layer,
) -> Result<JValue, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        errors::final_error(
            ErrorKind::TemplateNotFound,
            format!("Could not find or access '{}': {e}", path.display()),
        )
    })?;
    let options = TemplateFileOptions {
        path_as_given: Some(given.to_string()),
        ..TemplateFileOptions::default()
    };
    let scope = scope
        .with_layer(Arc::new(template_vars(path, scope, &options)))
        .with_layer(Arc::new(extra));
    let name = path.to_string_lossy();
    let value = if syntax.is_empty() {
        let template =
            engine.env.get_template(&name).map_err(|e| errors::compile_error(&e, &text))?;
        engine.render_template(&template, &scope)?
    } else {
        let (syntax, _, _) = syntax_of(syntax)?;
        let mut env = super::env::build();
        env.set_syntax(syntax);
        let rewritten = super::prepass::rewrite(&text, super::prepass::Mode::File);
        let source = rewritten.unwrap_or_else(|| text.clone());
        let template = env
            .template_from_named_str(&name, &source)
            .map_err(|e| errors::compile_error(&e, &text))?;
        engine.render_template(&template, &scope)?
    };
    let Some(out) = value.as_str() else { return Ok(value) };
    let mut out = out.to_string();
    let want = text.len() - text.trim_end_matches('\n').len();
    let have = out.len() - out.trim_end_matches('\n').len();
    for _ in have..want {
        out.push('\n');
    }
    Ok(JValue::from(out))
}
