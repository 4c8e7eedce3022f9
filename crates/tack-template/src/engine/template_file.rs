//! A template file rendered as ansible's `template` action renders it: the `#jinja2:` header
//! (validated as ansible's `TemplateOverrides`: whitespace flags, delimiters, line statements,
//! newline sequence), the source's newlines read as Jinja2's lexer reads them, the template
//! variables (`template_path`, `template_fullpath`, `template_host`, `template_uid`,
//! `template_mtime`, `template_run_date`, `template_destpath`, `ansible_managed`), native
//! rendering with backslashes processed, a missing include reported with the action's search
//! path, and the text written: a string result with its trailing newlines kept, `None` as
//! nothing, anything else as its `str()`.
//!
//! It reads the template file and, for its owner's name, `/etc/passwd`; it writes nothing.
//! It must not change how templates render in general (that is the engine's): only what the
//! action does around the render. Measured by `tests/template_files.rs` (the corpus).

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
    /// The task's `ansible_search_path` (its roles' directories, then its own file's): an
    /// `{% include %}` looks in each one's `templates/` and then in it, before the working
    /// directory and the template's own. Empty: only those two.
    pub search_path: Vec<PathBuf>,
    /// `template_destpath`.
    pub dest_path: Option<String>,
    /// The `DEFAULT_MANAGED_STR` setting as the configuration gives it: its `{host}`, `{uid}`,
    /// `{file}` fields and `strftime` codes are expanded here, as ansible expands them.
    pub managed_str: String,
    /// The template action's own options (`variable_start_string`, `trim_blocks`, ...),
    /// under which a `#jinja2:` header's settings still win.
    pub overrides: TemplateOverrides,
}

impl Default for TemplateFileOptions {
    fn default() -> Self {
        TemplateFileOptions {
            path_as_given: None,
            search_path: Vec::new(),
            dest_path: None,
            managed_str: "Ansible managed".into(),
            overrides: TemplateOverrides::default(),
        }
    }
}

/// What the template action's options set (ansible's `TemplateOverrides` from task
/// arguments): delimiters and block whitespace. Its `newline_sequence` changes nothing in
/// ansible-core 2.21.5 (measured), so it is not here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateOverrides {
    pub block: (String, String),
    pub variable: (String, String),
    pub comment: (String, String),
    pub trim_blocks: bool,
    pub lstrip_blocks: bool,
}

impl Default for TemplateOverrides {
    fn default() -> Self {
        TemplateOverrides {
            block: ("{%".into(), "%}".into()),
            variable: ("{{".into(), "}}".into()),
            comment: ("{#".into(), "#}".into()),
            trim_blocks: true,
            lstrip_blocks: false,
        }
    }
}

impl TemplateOverrides {
    /// The header these settings make when the file has none of its own.
    fn header(&self) -> Header {
        Header {
            block: self.block.clone(),
            variable: self.variable.clone(),
            comment: self.comment.clone(),
            line_statement_prefix: None,
            line_comment_prefix: None,
            trim_blocks: self.trim_blocks,
            lstrip_blocks: self.lstrip_blocks,
            keep_trailing_newline: false,
            newline_sequence: "\n".into(),
        }
    }
}

/// The `#jinja2:` header's settings, as ansible's `TemplateOverrides` validates them.
#[derive(Clone)]
struct Header {
    block: (String, String),
    variable: (String, String),
    comment: (String, String),
    line_statement_prefix: Option<String>,
    line_comment_prefix: Option<String>,
    trim_blocks: bool,
    lstrip_blocks: bool,
    keep_trailing_newline: bool,
    newline_sequence: String,
}

/// A Python literal as `ast.literal_eval` reads the few kinds a header can hold.
#[derive(Clone, Debug, PartialEq)]
enum Literal {
    Str(String),
    Bool(bool),
    Int(i64),
    Float(f64),
    None,
}

impl Literal {
    fn class(&self) -> &'static str {
        match self {
            Literal::Str(_) => "<class 'str'>",
            Literal::Bool(_) => "<class 'bool'>",
            Literal::Int(_) => "<class 'int'>",
            Literal::Float(_) => "<class 'float'>",
            Literal::None => "<class 'NoneType'>",
        }
    }
}

const OVERRIDE: &str = "#jinja2:";

/// The header's fields in `TemplateOverrides`' declaration order (the order it validates).
const FIELDS: [&str; 12] = [
    "block_start_string",
    "block_end_string",
    "variable_start_string",
    "variable_end_string",
    "comment_start_string",
    "comment_end_string",
    "line_statement_prefix",
    "line_comment_prefix",
    "trim_blocks",
    "lstrip_blocks",
    "newline_sequence",
    "keep_trailing_newline",
];

fn header_error(message: String) -> Error {
    errors::final_error(ErrorKind::SyntaxError, format!("Syntax error in template: {message}"))
}

/// Splits a `#jinja2: key: value, key: value` first line from the body; a malformed header
/// is ansible's syntax error.
fn header<'t>(text: &'t str, base: &TemplateOverrides) -> Result<(Option<Header>, &'t str), Error> {
    let Some(rest) = text.strip_prefix(OVERRIDE) else {
        // The action's own options alone, when they change anything.
        let changed = *base != TemplateOverrides::default();
        if changed {
            check_starts(&base.block, &base.variable, &base.comment)?;
        }
        return Ok((changed.then(|| base.header()), text));
    };
    let Some((line, body)) = rest.split_once('\n') else {
        return Err(header_error(format!("Missing newline after '{OVERRIDE}' override.")));
    };
    let mut given: Vec<(&str, Literal)> = Vec::new();
    for pair in line.split(',') {
        if pair.trim().is_empty() {
            return Err(header_error(format!("Empty '{OVERRIDE}' override pair not allowed.")));
        }
        let Some((key, value)) = pair.split_once(':') else {
            return Err(header_error(format!(
                "Missing key-value separator `:` in '{OVERRIDE}' override pair {}.",
                tack_yaml::pyrepr::str_repr(pair)
            )));
        };
        let key = key.trim();
        let Some(field) = FIELDS.iter().find(|f| **f == key) else {
            return Err(header_error(format!(
                "Invalid '{OVERRIDE}' override key {}.",
                tack_yaml::pyrepr::str_repr(key)
            )));
        };
        let value = literal(value).ok_or_else(|| {
            header_error("malformed node or string on line 1 (not a Python literal)".into())
        })?;
        given.retain(|(k, _)| k != field);
        given.push((field, value));
    }
    let get = |k: &str| given.iter().find(|(key, _)| *key == k).map(|(_, v)| v.clone());
    let string = |k: &str, default: &str| -> Result<String, Error> {
        match get(k) {
            None => Ok(default.to_string()),
            Some(Literal::Str(s)) => Ok(s),
            Some(other) => Err(wrong_type(k, "<class 'str'>", &other)),
        }
    };
    let optional = |k: &str| -> Result<Option<String>, Error> {
        match get(k) {
            None | Some(Literal::None) => Ok(None),
            Some(Literal::Str(s)) => Ok(Some(s)),
            Some(other) => Err(wrong_type(k, "<class 'NoneType'> or <class 'str'>", &other)),
        }
    };
    let boolean = |k: &str, default: bool| -> Result<bool, Error> {
        match get(k) {
            None => Ok(default),
            Some(Literal::Bool(b)) => Ok(b),
            Some(other) => Err(wrong_type(k, "<class 'bool'>", &other)),
        }
    };
    let block = (string(FIELDS[0], &base.block.0)?, string(FIELDS[1], &base.block.1)?);
    let variable = (string(FIELDS[2], &base.variable.0)?, string(FIELDS[3], &base.variable.1)?);
    let comment = (string(FIELDS[4], &base.comment.0)?, string(FIELDS[5], &base.comment.1)?);
    let line_statement_prefix = optional(FIELDS[6])?;
    let line_comment_prefix = optional(FIELDS[7])?;
    let trim_blocks = boolean(FIELDS[8], base.trim_blocks)?;
    let lstrip_blocks = boolean(FIELDS[9], base.lstrip_blocks)?;
    let newline_sequence = match get(FIELDS[10]) {
        None => "\n".to_string(),
        Some(Literal::Str(s)) if matches!(s.as_str(), "\n" | "\r\n" | "\r") => s,
        Some(other) => {
            let shown = match &other {
                Literal::Str(s) => tack_yaml::pyrepr::str_repr(s),
                Literal::Bool(b) => if *b { "True" } else { "False" }.to_string(),
                Literal::Int(i) => i.to_string(),
                Literal::Float(f) => tack_yaml::py_float_repr(*f),
                Literal::None => "None".to_string(),
            };
            return Err(header_error(format!(
                "TemplateOverrides.newline_sequence must be one of ('\\n', '\\r\\n', '\\r') \
                 instead of {shown}"
            )));
        }
    };
    let keep_trailing_newline = boolean(FIELDS[11], false)?;
    check_starts(&block, &variable, &comment)?;
    let h = Header {
        block,
        variable,
        comment,
        line_statement_prefix,
        line_comment_prefix,
        trim_blocks,
        lstrip_blocks,
        keep_trailing_newline,
        newline_sequence,
    };
    Ok((Some(h), body))
}

/// Python's chained `!=` of `TemplateOverrides`: neighbours differ, and the block and
/// comment starts differ.
fn check_starts(
    block: &(String, String),
    variable: &(String, String),
    comment: &(String, String),
) -> Result<(), Error> {
    if block.0 == variable.0 || variable.0 == comment.0 || comment.0 == block.0 {
        return Err(header_error(
            "Block, variable and comment start strings must be different.".into(),
        ));
    }
    Ok(())
}

fn wrong_type(field: &str, wanted: &str, got: &Literal) -> Error {
    header_error(format!("TemplateOverrides.{field} must be {wanted} instead of {}", got.class()))
}

/// `ast.literal_eval` of a header value: `True`/`False`/`None`, integers, floats and (adjacent)
/// quoted strings with their escapes; `None` for anything else.
fn literal(text: &str) -> Option<Literal> {
    let text = text.trim_matches([' ', '\t']);
    match text {
        "True" => return Some(Literal::Bool(true)),
        "False" => return Some(Literal::Bool(false)),
        "None" => return Some(Literal::None),
        _ => {}
    }
    if text.starts_with(['\'', '"']) {
        let mut out = String::new();
        let mut rest = text;
        while let Some(quote) = rest.chars().next().filter(|c| matches!(c, '\'' | '"')) {
            let mut chars = rest[1..].char_indices();
            let mut closed = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => match chars.next()?.1 {
                        'n' => out.push('\n'),
                        'r' => out.push('\r'),
                        't' => out.push('\t'),
                        '0' => out.push('\0'),
                        other @ ('\\' | '\'' | '"') => out.push(other),
                        other => {
                            out.push('\\');
                            out.push(other);
                        }
                    },
                    c if c == quote => {
                        closed = Some(i);
                        break;
                    }
                    '\n' => return None,
                    c => out.push(c),
                }
            }
            rest = rest[1 + closed? + 1..].trim_start_matches([' ', '\t']);
        }
        return rest.is_empty().then_some(Literal::Str(out));
    }
    let digits = text.replace('_', "");
    if let Ok(i) = digits.parse::<i64>() {
        return Some(Literal::Int(i));
    }
    if digits.contains(['.', 'e', 'E']) && !digits.contains(char::is_alphabetic) {
        return digits.parse::<f64>().ok().map(Literal::Float);
    }
    None
}

fn syntax_of(h: &Header) -> Result<SyntaxConfig, Error> {
    let mut builder = SyntaxConfig::builder();
    builder
        .variable_delimiters(h.variable.0.clone(), h.variable.1.clone())
        .block_delimiters(h.block.0.clone(), h.block.1.clone())
        .comment_delimiters(h.comment.0.clone(), h.comment.1.clone())
        .trim_blocks(h.trim_blocks)
        .lstrip_blocks(h.lstrip_blocks)
        .keep_trailing_newline(h.keep_trailing_newline);
    if let Some(prefix) = &h.line_statement_prefix {
        builder.line_statement_prefix(prefix.clone());
    }
    if let Some(prefix) = &h.line_comment_prefix {
        builder.line_comment_prefix(prefix.clone());
    }
    builder.build()
}

/// Jinja2's lexer reads every `\r\n`, `\r` and `\n` of the source as one newline and writes
/// the template's own newlines as the newline sequence (values printed keep theirs). minijinja
/// reads all three as newlines too, so the source with its newlines rewritten renders the same.
pub(super) fn with_newlines(body: &str, sequence: &str) -> Option<String> {
    if !body.contains('\r') && sequence == "\n" {
        return None;
    }
    let normal = body.replace("\r\n", "\n").replace('\r', "\n");
    Some(if sequence == "\n" { normal } else { normal.replace('\n', sequence) })
}

/// Jinja2's line comments: from the prefix to the end of the line, with the blanks before it,
/// but not the newline (minijinja's lexer takes the newline too). Removed here from the
/// template data (never from tags, comments or raw blocks), so minijinja sees none.
fn line_comments(source: &str, h: &Header) -> Option<String> {
    let prefix = h.line_comment_prefix.as_deref().filter(|p| !p.is_empty())?;
    if !source.contains(prefix) {
        return None;
    }
    let plain =
        Header { line_comment_prefix: None, trim_blocks: false, lstrip_blocks: false, ..h.clone() };
    let syntax = syntax_of(&plain).ok()?;
    let mut removed: Vec<(usize, usize)> = Vec::new();
    for item in minijinja::machinery::tokenize(source, false, syntax) {
        let (token, span) = item.ok()?;
        let (start, end) = (span.start_offset as usize, span.end_offset as usize);
        if !matches!(token, minijinja::machinery::Token::TemplateData(_))
            || after_raw(source, start, h)
        {
            continue;
        }
        let data = &source[start..end];
        let mut from = 0;
        while let Some(at) = data[from..].find(prefix) {
            let at = from + at;
            let line_end = data[at..].find('\n').map_or(data.len(), |n| at + n);
            let blanks = data[..at].trim_end_matches(|c: char| c.is_whitespace() && c != '\n');
            removed.push((start + blanks.len(), start + line_end));
            from = line_end;
        }
    }
    if removed.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(source.len());
    let mut pos = 0;
    for (s, e) in removed {
        out.push_str(&source[pos..s]);
        pos = e;
    }
    out.push_str(&source[pos..]);
    Some(out)
}

/// Whether the template data at `at` is a raw block's content (its opening tag right before it).
fn after_raw(source: &str, at: usize, h: &Header) -> bool {
    let Some(tag) = source[..at].strip_suffix(h.block.1.as_str()) else { return false };
    tag.rfind(h.block.0.as_str()).is_some_and(|open| {
        tag[open + h.block.0.len()..]
            .trim_matches(|c: char| c == '-' || c == '+' || c.is_whitespace())
            == "raw"
    })
}

/// The template file's text, decrypted when it is a whole-file vault (as ansible's template
/// action reads it through its loader), and whether it was one.
fn read_template(engine: &Arc<Engine>, path: &Path) -> Result<(String, bool), Error> {
    let not_found = |e: &dyn std::fmt::Display| {
        errors::final_error(
            ErrorKind::TemplateNotFound,
            format!("Could not find or access '{}': {e}", path.display()),
        )
    };
    let bytes = std::fs::read(path).map_err(|e| not_found(&e))?;
    if !tack_vault::is_encrypted(&bytes) {
        let text = String::from_utf8(bytes).map_err(|e| not_found(&e))?;
        return Ok((text, false));
    }
    let plain = engine
        .loader()
        .secrets()
        .decrypt(&bytes)
        .map_err(|e| errors::final_error(ErrorKind::InvalidOperation, e.to_string()))?;
    let text = String::from_utf8(plain).map_err(|e| not_found(&e))?;
    Ok((text, true))
}

/// Renders the template file at `path` (absolute) and returns the text the action writes.
pub(crate) fn render(
    engine: &Arc<Engine>,
    path: &Path,
    scope: &Scope,
    options: &TemplateFileOptions,
) -> Result<String, Error> {
    let (text, vaulted) = read_template(engine, path)?;
    let _include_path = IncludePath::set(&options.search_path, path);
    let scope = scope.with_layer(Arc::new(template_vars(engine, path, scope, options)?));
    let (header, body) = header(&text, &options.overrides)?;
    let name = path.to_string_lossy();
    let sequence = header.as_ref().map_or("\n", |h| h.newline_sequence.as_str());
    // A vaulted file's text exists only here: it is compiled from this string, never
    // through the environment's loader, which reads the file as it is on disk.
    let source = with_newlines(body, sequence).or_else(|| vaulted.then(|| body.to_string()));
    let value = match (&header, source) {
        // The common case: the file as it is, compiled once per engine.
        (None, None) => {
            let template = engine.env.get_template(&name).map_err(|e| compile_error(&e, body))?;
            engine.render_template(&template, &scope)
        }
        (None, Some(source)) => {
            let source = super::tags::rewrite(&source, true).unwrap_or(source);
            let rewritten = super::prepass::rewrite(&source, super::prepass::Mode::File);
            let source = rewritten.unwrap_or(source);
            let template = engine
                .env
                .template_from_named_str(&name, &source)
                .map_err(|e| compile_error(&e, body))?;
            engine.render_template(&template, &scope)
        }
        (Some(h), source) => {
            // A header changes the syntax: compile in an environment of its own (not cached).
            let mut env = super::env::build(engine.plugins());
            env.set_syntax(syntax_of(h)?);
            let source = source.unwrap_or_else(|| body.to_string());
            let source = line_comments(&source, h).unwrap_or(source);
            // The tag rewrites read the default syntax.
            let default_syntax = h.block == ("{%".into(), "%}".into())
                && h.variable == ("{{".into(), "}}".into())
                && h.comment == ("{#".into(), "#}".into());
            let source = match default_syntax.then(|| super::tags::rewrite(&source, h.trim_blocks))
            {
                Some(Some(rewritten)) => rewritten,
                _ => source,
            };
            let rewritten = super::prepass::rewrite(&source, super::prepass::Mode::File);
            let source = rewritten.unwrap_or(source);
            let template = env
                .template_from_named_str(&name, &source)
                .map_err(|e| errors::compile_error(&e, body))?;
            engine.render_template(&template, &scope)
        }
    }
    .map_err(|e| not_found_on_search_path(e, path))?;
    let mut out = match value.as_str() {
        Some(s) => s.to_string(),
        None if value.is_none() => return Ok(String::new()),
        None => return crate::python::repr::str_of(&value),
    };
    // ansible gives back the newlines the file ended with (counting `\n` only, in the whole
    // file) as `\n`, whatever the header or the action says.
    let want = text.len() - text.trim_end_matches('\n').len();
    let have = out.len() - out.trim_end_matches('\n').len();
    for _ in have..want {
        out.push('\n');
    }
    Ok(out)
}

/// A missing `{% include %}`/`{% import %}` in ansible's words: the action's search path is
/// the play's `ansible_search_path` and the loader's base directory (for tack, both the
/// working directory, the playbook's) and the template's directory, each after its
/// `templates/` subdirectory.
fn not_found_on_search_path(err: Error, source: &Path) -> Error {
    const MINIJINJA: &str = "Error rendering template: tried to include non-existing template ";
    if err.kind() != ErrorKind::TemplateNotFound {
        return err;
    }
    let Some(name) = err.detail().and_then(|d| d.split_once(MINIJINJA)).map(|(_, n)| n) else {
        return err;
    };
    let paths: Vec<String> = search_path(source)
        .iter()
        .map(|p| tack_yaml::pyrepr::str_repr(&p.to_string_lossy()))
        .collect();
    errors::final_error(
        ErrorKind::TemplateNotFound,
        format!("Error rendering template: {name} not found in search paths: {}", paths.join(", ")),
    )
}

/// The variables the `template` action adds for the file it renders.
fn template_vars(
    engine: &Arc<Engine>,
    path: &Path,
    scope: &Scope,
    options: &TemplateFileOptions,
) -> Result<Layer, Error> {
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
        let managed = managed_string(engine, &options.managed_str, mtime)?;
        set("ansible_managed", Value::Str(managed));
    }
    Ok(layer)
}

/// `ansible_managed` from the `DEFAULT_MANAGED_STR` setting, as ansible makes it: `{host}`,
/// `{uid}` and `{file}` become templates of the variables (rendered when read, never the
/// values themselves, so nothing in them is rendered), then `time.strftime` with the file's
/// mtime in local time.
fn managed_string(engine: &Arc<Engine>, setting: &str, mtime: SystemTime) -> Result<String, Error> {
    let mut formatted = String::with_capacity(setting.len());
    let mut rest = setting;
    while let Some(at) = rest.find(['{', '}']) {
        formatted.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            formatted.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        let field = tail.strip_prefix('{').and_then(|t| t.split_once('}'));
        let variable = match field {
            Some(("host", _)) => "template_host",
            Some(("uid", _)) => "template_uid",
            Some(("file", _)) => "template_path",
            _ => {
                return Err(errors::final_error(
                    ErrorKind::InvalidOperation,
                    format!(
                        "The ansible_managed setting ({setting:?}) has a format field tack \
                         does not support: only {{host}}, {{uid}} and {{file}} are."
                    ),
                ));
            }
        };
        formatted.push_str(&format!("{{{{ {variable} }}}}"));
        rest = field.map_or("", |(_, after)| after);
    }
    formatted.push_str(rest);
    if !formatted.contains('%') {
        return Ok(formatted);
    }
    // The `strftime` filter is Python's `time.strftime` over local time.
    let seconds = mtime.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let mut layer = Layer::new();
    layer.insert("__tack_format", Node::bare(Value::Unsafe(formatted)), Provenance::Trusted);
    layer.insert("__tack_mtime", Node::bare(Value::Int(seconds as i64)), Provenance::Trusted);
    let scope = Scope::new().with_layer(Arc::new(layer));
    let value = engine.render_nested("{{ __tack_format | strftime(__tack_mtime) }}", &scope)?;
    Ok(value.as_str().unwrap_or_default().to_string())
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
    if let Some(set) = INCLUDE_PATH.with(|p| p.borrow().clone()) {
        return set;
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let dir = parent.parent().map(Path::to_path_buf).unwrap_or_default();
    // ansible's list names the working directory twice (the play's search path, then the
    // loader's base directory).
    [&cwd, &cwd, &dir].iter().flat_map(|p| [p.join("templates"), p.to_path_buf()]).collect()
}

thread_local! {
    /// The `template` action's search path while one of its files renders on this thread
    /// (minijinja's path callback has no other way to learn the task's roles).
    static INCLUDE_PATH: std::cell::RefCell<Option<Vec<PathBuf>>> =
        const { std::cell::RefCell::new(None) };
}

/// [`INCLUDE_PATH`] for one render, put back as it was when dropped.
struct IncludePath(Option<Vec<PathBuf>>);

impl IncludePath {
    /// The action's list for the file at `source`: each of `task` (the task's
    /// `ansible_search_path`), the working directory and the file's directory, each after
    /// its `templates/`.
    fn set(task: &[PathBuf], source: &Path) -> Option<IncludePath> {
        if task.is_empty() {
            return None;
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        let dir = source.parent().map(Path::to_path_buf).unwrap_or_default();
        let list: Vec<PathBuf> = task
            .iter()
            .chain([&cwd, &dir])
            .flat_map(|p| [p.join("templates"), p.to_path_buf()])
            .collect();
        let before = INCLUDE_PATH.with(|p| p.replace(Some(list)));
        Some(IncludePath(before))
    }
}

impl Drop for IncludePath {
    fn drop(&mut self) {
        let before = self.0.take();
        INCLUDE_PATH.with(|p| *p.borrow_mut() = before);
    }
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
    // A vault-encrypted template is rendered from its plaintext, as the `template` action
    // renders one (the environment's loader would read the ciphertext on disk).
    let (text, vaulted) = read_template(engine, path)?;
    let options = TemplateFileOptions {
        path_as_given: Some(given.to_string()),
        ..TemplateFileOptions::default()
    };
    let scope = scope
        .with_layer(Arc::new(template_vars(engine, path, scope, &options)?))
        .with_layer(Arc::new(extra));
    let name = path.to_string_lossy();
    let value = if syntax.is_empty() && !vaulted {
        let template =
            engine.env.get_template(&name).map_err(|e| errors::compile_error(&e, &text))?;
        engine.render_template(&template, &scope)?
    } else if syntax.is_empty() {
        let source = super::tags::rewrite(&text, true).unwrap_or_else(|| text.clone());
        let rewritten = super::prepass::rewrite(&source, super::prepass::Mode::File);
        let source = rewritten.unwrap_or(source);
        let template = engine
            .env
            .template_from_named_str(&name, &source)
            .map_err(|e| errors::compile_error(&e, &text))?;
        engine.render_template(&template, &scope)?
    } else {
        let syntax = lookup_syntax(syntax)?;
        let mut env = super::env::build(engine.plugins());
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

/// The `template` lookup's delimiter and whitespace options (`variable_start_string`, ...,
/// `trim_blocks`, `lstrip_blocks`) as a minijinja syntax.
fn lookup_syntax(settings: &[(String, String)]) -> Result<SyntaxConfig, Error> {
    // The lookup has already read its flags (`lookups::template`) and hands them on as Python's
    // `str()` of a bool.
    let flag = |value: &str| value == "True";
    let get = |k: &str| settings.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let pair = |start: &str, end: &str, default: (&str, &str)| {
        (get(start).unwrap_or(default.0).to_string(), get(end).unwrap_or(default.1).to_string())
    };
    let var = pair("variable_start_string", "variable_end_string", ("{{", "}}"));
    let block = pair("block_start_string", "block_end_string", ("{%", "%}"));
    let comment = pair("comment_start_string", "comment_end_string", ("{#", "#}"));
    SyntaxConfig::builder()
        .variable_delimiters(var.0, var.1)
        .block_delimiters(block.0, block.1)
        .comment_delimiters(comment.0, comment.1)
        .trim_blocks(get("trim_blocks").is_none_or(flag))
        .lstrip_blocks(get("lstrip_blocks").is_some_and(flag))
        .build()
}

/// A file template that did not compile: the error in ansible's words, its line noted for
/// the error's origin (a header's template keeps no line: its lines are not the file's).
fn compile_error(err: &minijinja::Error, body: &str) -> minijinja::Error {
    super::active::compile_failed_at(err.line());
    errors::compile_error(err, body)
}
