//! YAML 1.1 as ansible-core 2.21 loads and writes it.
//!
//! Events come from `libyaml-safer` (a port of libyaml, the parser ansible-core uses through
//! PyYAML's C extension); this crate composes and constructs them as PyYAML's `CParser` and
//! `SafeConstructor` do under ansible's `AnsibleConstructor`: plain scalars typed by PyYAML's
//! resolver (`yes`/`off` booleans, base-60 and `017` octal integers, `1e3` left a string,
//! timestamps), merge keys with PyYAML 6's precedence, duplicate keys (last value wins, first
//! position kept, ansible's warning), `!unsafe` and `!vault`, and the line and column of every
//! node. Errors read as ansible prints them, help texts included ([`YamlError::to_diagnostic`]).
//! [`dump`] writes values back as ansible's `AnsibleDumper` does; [`to_json`] and
//! [`pyjson::loads`] are Python's `json.dumps` and `json.loads` over the same values.
//!
//! ```
//! let node = tack_yaml::load_one("port: 8080\nenabled: yes\nmode: 0644\n", None).unwrap();
//! let map = node.as_map().unwrap();
//! assert_eq!(map.get("mode").unwrap().value, tack_yaml::Value::Int(420));
//! let text = tack_yaml::dump(&node.value, &tack_yaml::DumpOptions::to_nice_yaml()).unwrap();
//! assert_eq!(text, "enabled: true\nmode: 420\nport: 8080\n");
//! ```
//!
//! Origins: a node's origin is its first character (for an alias, the anchored node's; for a
//! key, the key's), 1-based. Text loaded with a path carries that path; text without one
//! carries line and column under the description `<unknown>` (or [`LoadOptions::description`]),
//! as ansible's `Origin.UNKNOWN` does, so a message can still say where.
//!
//! Where tack knowingly differs from ansible, it refuses by name rather than guessing:
//! `!!set` (no value kind holds sets), an alias inside the node it
//! names (ansible builds a self-referencing object that fails later when used), nesting deeper
//! than 500 levels, and aliases expanding to more than a million nodes. `!!omap`/`!!pairs`
//! load as lists of two-item lists (Python tuples), with ansible's deprecation warning.
//!
//! What this crate does not do: ansible's `from_yaml` first tries the text as JSON and only
//! then as YAML (so `{"a": 1e3}` is a float there); that choice belongs to the caller that reads
//! files. It knows nothing about what the data means: playbooks, inventories and variables are
//! read from the tree by the crates above.

mod binary;
mod compose;
mod construct;
mod dump;
mod error;
mod json;
mod key;
mod mapping;
pub mod pyjson;
pub mod pyrepr;
mod resolve;
mod scalar;
pub mod tagged;
mod value;

use std::path::Path;
use std::sync::Arc;

use tack_diag::{Diagnostic, Origin};

use crate::compose::{Composer, Next};
use crate::construct::{Constructor, OriginBase};
use crate::error::Failure;

pub use dump::{Decryptor, DumpError, DumpOptions, VaultDump, dump};
pub use json::{
    BytesJson, JsonError, JsonOptions, python_float_repr, python_float_repr_bare,
    timestamp_isoformat, to_json,
};
pub use pyrepr::float_repr as py_float_repr;
pub use value::{Mapping, Node, TimeOfDay, Timestamp, Value};

/// A `date`/`datetime` as YAML 1.1 (and Python's `isoformat`) writes it, when it is one.
pub fn parse_timestamp(text: &str) -> Option<Timestamp> {
    scalar::construct_timestamp(text).ok()
}

/// A document that could not be loaded, in the words ansible-core 2.21 uses.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    pub message: String,
    pub origin: Option<Origin>,
    /// ansible's hint printed after the excerpt for some errors ("For example: ...").
    pub help: Option<String>,
}

impl YamlError {
    /// The error as ansible's `AnsibleYAMLParserError` (a parser error: exit code 4).
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut diag = Diagnostic::at(self.message.clone(), self.origin.clone()).parser();
        diag.help = self.help.clone();
        diag
    }
}

impl From<YamlError> for Diagnostic {
    fn from(err: YamlError) -> Diagnostic {
        err.to_diagnostic()
    }
}

/// A non-fatal finding while loading. It has already been shown through
/// [`tack_diag::warn`]/[`tack_diag::deprecate`] when the loader returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlWarning {
    pub message: String,
    pub origin: Option<Origin>,
    pub help: Option<String>,
    pub kind: YamlWarningKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum YamlWarningKind {
    /// A key given twice in one mapping (`DUPLICATE_YAML_DICT_KEY=warn`).
    DuplicateKey,
    /// A deprecated tag (`!!omap`, `!!pairs`, `!vault-encrypted`).
    Deprecated { removed_in: &'static str },
}

/// A loaded stream: its documents and any warnings raised while building them.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub documents: Vec<Node>,
    pub warnings: Vec<YamlWarning>,
}

/// ansible's `DUPLICATE_YAML_DICT_KEY` setting: what a key given twice in a mapping does. The
/// last value wins in every mode; the key keeps its first position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateKeys {
    #[default]
    Warn,
    Error,
    Ignore,
}

/// How to load a stream.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub duplicate_keys: DuplicateKeys,
    /// What the text is when it is not a file (`<CLI option '-e'>`): shown in origins, after the
    /// path when there is one. Text with neither path nor description is `<unknown>`, as in
    /// ansible; its nodes still carry line and column.
    pub description: Option<Arc<str>>,
    /// The text is not trusted as a template (ansible's `trusted_as_template=False`, e.g. a
    /// `from_yaml` result): every string loads as [`Value::Unsafe`]. ansible trusts playbooks,
    /// roles, vars files, inventories and `-e @file`.
    pub untrusted: bool,
}

/// Loads every document of `text`. `path` names the file for origins and errors.
pub fn load_all(text: &str, path: Option<Arc<Path>>) -> Result<Loaded, YamlError> {
    load_all_with(text, path, &LoadOptions::default())
}

/// [`load_all`] with options.
pub fn load_all_with(
    text: &str,
    path: Option<Arc<Path>>,
    options: &LoadOptions,
) -> Result<Loaded, YamlError> {
    let base = origin_base(path, options);
    let fail = |f: Failure| f.into_error(text, &base);
    let mut composer = Composer::new(text);
    let mut loaded = Loaded { documents: Vec::new(), warnings: Vec::new() };
    composer.start().map_err(|e| fail(e.into()))?;
    loop {
        match composer.next_document().map_err(|e| fail(e.into()))? {
            Next::End => return Ok(loaded),
            Next::Document(mut doc) => {
                let node = Constructor::new(&mut doc, &base, options, &mut loaded.warnings)
                    .construct_document()
                    .map_err(|e| fail(e.into()))?;
                loaded.documents.push(node);
            }
        }
    }
}

/// Loads a stream that must hold at most one document, as ansible loads playbooks, vars files
/// and inventories (`yaml.load`). An empty stream (nothing, or only comments) is `null`; a
/// second document is an error at its start.
pub fn load_one(text: &str, path: Option<Arc<Path>>) -> Result<Node, YamlError> {
    load_one_with(text, path, &LoadOptions::default())
}

/// [`load_one`] with options.
pub fn load_one_with(
    text: &str,
    path: Option<Arc<Path>>,
    options: &LoadOptions,
) -> Result<Node, YamlError> {
    let mut loaded = load_single_with(text, path, options)?;
    // `load_single_with` always returns exactly one document.
    Ok(loaded.documents.pop().unwrap_or_else(|| Node::bare(Value::Null)))
}

/// [`load_one_with`], also returning the warnings raised: `documents` holds exactly one node.
pub fn load_single_with(
    text: &str,
    path: Option<Arc<Path>>,
    options: &LoadOptions,
) -> Result<Loaded, YamlError> {
    let base = origin_base(path, options);
    let fail = |f: Failure| f.into_error(text, &base);
    let mut composer = Composer::new(text);
    composer.start().map_err(|e| fail(e.into()))?;
    let mut doc = match composer.next_document().map_err(|e| fail(e.into()))? {
        Next::End => {
            let origin = Origin { line: 0, col: 0, ..base.at(Default::default()) };
            let documents = vec![Node::new(Value::Null, Some(origin))];
            return Ok(Loaded { documents, warnings: Vec::new() });
        }
        Next::Document(doc) => doc,
    };
    // PyYAML looks for the end of the stream before building the first document.
    let (at_end, mark) = composer.peek_stream_end().map_err(|e| fail(e.into()))?;
    if !at_end {
        return Err(fail(Failure::not_single(mark)));
    }
    let mut warnings = Vec::new();
    let node = Constructor::new(&mut doc, &base, options, &mut warnings)
        .construct_document()
        .map_err(|e| fail(e.into()))?;
    Ok(Loaded { documents: vec![node], warnings })
}

/// A file's bytes as the text ansible parses, for a file read from `path`.
///
/// ansible decodes files as UTF-8 (a BOM is kept and skipped by the parser). Invalid bytes are
/// escaped with a deprecation warning, after which the YAML parser itself refuses the escaped
/// characters; tack shows the same warning and the same error.
pub fn source_text<'a>(bytes: &'a [u8], path: &Path) -> Result<&'a str, YamlError> {
    let err = match std::str::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(err) => err,
    };
    let shown_path = path.display().to_string();
    tack_diag::deprecate(
        &Diagnostic::new(format!(
            "File {} could not be decoded as 'utf-8'. Invalid content has been escaped.",
            pyrepr::str_repr(&shown_path)
        ))
        .with_help("This file must be UTF-8 encoded."),
        "2.23",
    );
    // Python's `surrogateescape` turns each undecodable byte into one character; the encoder
    // then reports the first run of them, counted in characters.
    let valid = &bytes[..err.valid_up_to()];
    let position = String::from_utf8_lossy(valid).chars().count();
    let mut escaped = Vec::new();
    let mut rest = &bytes[err.valid_up_to()..];
    loop {
        let bad = match std::str::from_utf8(rest) {
            Ok(_) => 0,
            Err(e) if e.valid_up_to() == 0 => e.error_len().unwrap_or(rest.len()),
            Err(_) => 0,
        };
        if bad == 0 {
            break;
        }
        escaped.extend_from_slice(&rest[..bad]);
        rest = &rest[bad..];
    }
    let message = match escaped.as_slice() {
        [byte] => format!(
            "'utf-8' codec can't encode character '\\udc{byte:02x}' in position {position}: \
             surrogates not allowed"
        ),
        bytes => format!(
            "'utf-8' codec can't encode characters in position {position}-{}: surrogates not \
             allowed",
            position + bytes.len() - 1
        ),
    };
    Err(YamlError {
        message: format!("YAML parsing failed: {message}"),
        origin: Some(Origin::file(Arc::from(path))),
        help: None,
    })
}

fn origin_base(path: Option<Arc<Path>>, options: &LoadOptions) -> OriginBase {
    let description = match (&path, &options.description) {
        (None, None) => Some(Arc::from("<unknown>")),
        (_, d) => d.clone(),
    };
    OriginBase { path, description }
}
