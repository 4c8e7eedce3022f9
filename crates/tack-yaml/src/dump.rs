//! Writing values as YAML exactly as ansible-core 2.21 does: PyYAML's `SafeRepresenter` (under
//! ansible's `AnsibleDumper`) decides tags, scalar text, key order and block or flow style, and
//! libyaml's emitter (here its port in `libyaml-safer`, as ansible uses libyaml through
//! `CSafeDumper`) decides quoting, folding at `width` and indentation.
//!
//! The input is a [`Value`] tree: what the loader returns and what the templating layer builds
//! from its own results, so `ansible-inventory -y`, `to_yaml` and `to_nice_yaml` share one path.
//! A `Value` has no object identity, so the anchors (`&id001`) PyYAML writes for one Python
//! object reached twice are never written.
//!
//! This module does not decrypt: a vaulted value is written encrypted, redacted, refused, or
//! handed to the caller's decryptor, as [`VaultDump`] says.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use libyaml_safer::{Emitter, Encoding, Event, MappingStyle, ScalarStyle, SequenceStyle};

use crate::pyrepr::float_repr;
use crate::resolve::{YAML_PREFIX, resolve_scalar};
use crate::value::{Mapping, Value};

/// Turns `!vault` ciphertext into its plaintext; supplied by the caller, which holds the secrets.
pub type Decryptor = Arc<dyn Fn(&str) -> Result<String, DumpError> + Send + Sync>;

/// What to write for a `!vault` value (ansible's `vault_behavior`).
#[derive(Clone, Default)]
pub enum VaultDump {
    /// `!vault |` and the ciphertext (ansible-inventory; `to_yaml(vault_behavior='keep_encrypted')`).
    #[default]
    KeepEncrypted,
    /// The plaintext, from the caller's decryptor (the filters' default).
    Decrypt(Decryptor),
    /// `<redacted>`.
    Redact,
    /// Refuse with ansible's "Attempted to dump a vaulted value".
    Fail,
}

impl fmt::Debug for VaultDump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VaultDump::KeepEncrypted => "KeepEncrypted",
            VaultDump::Decrypt(_) => "Decrypt",
            VaultDump::Redact => "Redact",
            VaultDump::Fail => "Fail",
        })
    }
}

/// `yaml.dump`'s arguments as ansible passes them (`allow_unicode=True` always).
#[derive(Clone, Debug)]
pub struct DumpOptions {
    /// Spaces per level (PyYAML's `indent`); `None` is libyaml's 2. Values outside 2..=9 mean 2.
    pub indent: Option<i32>,
    /// Preferred line width (PyYAML's `width`); `None` is libyaml's 80, a negative width never
    /// folds.
    pub width: Option<i32>,
    /// `Some(false)`: every collection in block style; `Some(true)`: all in flow style; `None`:
    /// flow style for collections holding only plain scalars (what `to_yaml` does).
    pub default_flow_style: Option<bool>,
    pub sort_keys: bool,
    pub vault: VaultDump,
    /// The default callback's dumper (`_AnsibleCallbackDumper`): a string holding a line
    /// break is written as a literal block; `Some(true)` (its `lossy` mode) first strips what
    /// would stop libyaml from writing it so (trailing spaces, tabs, special characters,
    /// spaces before a break).
    pub block_strings: Option<bool>,
}

impl DumpOptions {
    /// `ansible-inventory --yaml`.
    pub fn inventory() -> DumpOptions {
        DumpOptions {
            indent: None,
            width: None,
            default_flow_style: Some(false),
            sort_keys: true,
            vault: VaultDump::KeepEncrypted,
            block_strings: None,
        }
    }

    /// The `to_yaml` filter with no arguments (pass [`VaultDump::Decrypt`] to match its default
    /// `vault_behavior`).
    pub fn to_yaml() -> DumpOptions {
        DumpOptions { default_flow_style: None, ..DumpOptions::inventory() }
    }

    /// The `to_nice_yaml` filter with no arguments.
    pub fn to_nice_yaml() -> DumpOptions {
        DumpOptions { indent: Some(4), ..DumpOptions::inventory() }
    }
}

impl Default for DumpOptions {
    fn default() -> DumpOptions {
        DumpOptions::to_yaml()
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum DumpError {
    /// ansible's `vault_behavior='fail'`.
    #[error("Attempted to dump a vaulted value")]
    Vaulted,
    /// The caller's decryptor failed; its message, which must not contain the plaintext.
    #[error("{0}")]
    Decrypt(String),
    /// libyaml's emitter refused the events (it never should for events built here).
    #[error("YAML emitter error: {0}")]
    Emitter(String),
}

/// Writes `value` as a YAML document, byte for byte what `yaml.dump(value, Dumper=AnsibleDumper,
/// allow_unicode=True, ...)` writes with the same options.
pub fn dump(value: &Value, options: &DumpOptions) -> Result<String, DumpError> {
    let node = Representer { options }.represent(value)?;
    let mut out = Vec::new();
    {
        let mut emitter = Emitter::new();
        emitter.set_output_string(&mut out);
        emitter.set_unicode(true);
        if let Some(indent) = options.indent {
            emitter.set_indent(indent);
        }
        if let Some(width) = options.width {
            emitter.set_width(width);
        }
        let emit_err = |e: libyaml_safer::Error| DumpError::Emitter(e.to_string());
        emitter.emit(Event::stream_start(Encoding::Utf8)).map_err(emit_err)?;
        emitter.emit(Event::document_start(None, &[], true)).map_err(emit_err)?;
        serialize(&mut emitter, &node).map_err(emit_err)?;
        emitter.emit(Event::document_end(true)).map_err(emit_err)?;
        emitter.emit(Event::stream_end()).map_err(emit_err)?;
        emitter.flush().map_err(emit_err)?;
    }
    // The emitter writes only the UTF-8 of the `&str`s it is given.
    let text = String::from_utf8(out).map_err(|e| DumpError::Emitter(e.to_string()))?;
    Ok(escape_astral(text))
}

/// libyaml's printable-character test (C) stops at three-byte UTF-8 sequences, so it writes
/// any character beyond U+FFFF as `\UXXXXXXXX` in a double-quoted scalar; libyaml-safer
/// treats them as printable. Scalars holding one are requested double-quoted (see
/// `serialize`), and the characters are escaped here, the only place they can appear.
/// (Where such a scalar is long enough to fold, libyaml counts the escape's ten columns and
/// this counts one; that corner is not reproduced.)
fn escape_astral(text: String) -> String {
    if !text.chars().any(is_astral) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_astral(c) {
            out.push_str(&format!("\\U{:08X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn is_astral(c: char) -> bool {
    c as u32 > 0xFFFF
}

/// PyYAML's representation graph: a tag, text or children, and a style.
enum Rep {
    Scalar { tag: String, value: String, literal: bool },
    Seq { items: Vec<Rep>, flow: bool },
    Map { pairs: Vec<(Rep, Rep)>, flow: bool },
}

impl Rep {
    /// A scalar with no explicit style: what keeps a parent eligible for flow style.
    fn is_plain_scalar(&self) -> bool {
        matches!(self, Rep::Scalar { literal: false, .. })
    }
}

struct Representer<'o> {
    options: &'o DumpOptions,
}

fn core_tag(name: &str) -> String {
    format!("{YAML_PREFIX}{name}")
}

fn scalar(tag: &str, value: impl Into<String>) -> Rep {
    Rep::Scalar { tag: core_tag(tag), value: value.into(), literal: false }
}

impl Representer<'_> {
    fn represent(&self, value: &Value) -> Result<Rep, DumpError> {
        Ok(match value {
            Value::Null => scalar("null", "null"),
            Value::Bool(b) => scalar("bool", if *b { "true" } else { "false" }),
            Value::Int(i) => scalar("int", i.to_string()),
            Value::BigInt(digits) => scalar("int", digits.as_str()),
            Value::Float(f) => scalar("float", float_text(*f)),
            Value::Str(s) | Value::Unsafe(s) => match self.options.block_strings {
                Some(lossy) if s.contains(YAML_BREAK_CHARS) => {
                    let value = if lossy { lossy_block(s) } else { s.clone() };
                    Rep::Scalar { tag: core_tag("str"), value, literal: true }
                }
                _ => scalar("str", s.as_str()),
            },
            Value::Timestamp(t) => scalar("timestamp", t.python_str()),
            Value::Bytes(data) => Rep::Scalar {
                tag: core_tag("binary"),
                value: crate::binary::encode_lines(data),
                literal: true,
            },
            Value::Vault(ciphertext) => match &self.options.vault {
                VaultDump::KeepEncrypted => {
                    Rep::Scalar { tag: "!vault".into(), value: ciphertext.clone(), literal: true }
                }
                VaultDump::Redact => scalar("str", "<redacted>"),
                VaultDump::Decrypt(decrypt) => scalar("str", decrypt(ciphertext)?),
                VaultDump::Fail => return Err(DumpError::Vaulted),
            },
            Value::Seq(items) => {
                let items = items
                    .iter()
                    .map(|n| self.represent(&n.value))
                    .collect::<Result<Vec<_>, _>>()?;
                let best = items.iter().all(Rep::is_plain_scalar);
                Rep::Seq { items, flow: self.options.default_flow_style.unwrap_or(best) }
            }
            Value::Map(map) => {
                let mut pairs = Vec::with_capacity(map.len());
                for (k, v) in self.ordered(map) {
                    pairs.push((self.represent(k)?, self.represent(v)?));
                }
                let best = pairs.iter().all(|(k, v)| k.is_plain_scalar() && v.is_plain_scalar());
                Rep::Map { pairs, flow: self.options.default_flow_style.unwrap_or(best) }
            }
        })
    }

    /// `sorted(mapping.items())` when asked and possible: keys of types Python cannot order
    /// against each other (`str` and `int`, `None` with anything) leave document order.
    fn ordered<'m>(&self, map: &'m Mapping) -> Vec<(&'m Value, &'m Value)> {
        let mut pairs: Vec<_> = map.iter().map(|(k, v)| (&k.value, &v.value)).collect();
        if !self.options.sort_keys {
            return pairs;
        }
        let comparable = pairs.windows(2).all(|w| py_cmp(w[0].0, w[1].0).is_some())
            && pairs.iter().all(|(k, _)| !matches!(k, Value::Null) || map.len() == 1);
        if comparable {
            pairs.sort_by(|a, b| py_cmp(a.0, b.0).unwrap_or(Ordering::Equal));
        }
        pairs
    }
}

/// What ends a line to YAML (ansible's `_YAML_BREAK_CHARS`: NL, NEL, LS, PS).
const YAML_BREAK_CHARS: [char; 4] = ['\n', '\u{85}', '\u{2028}', '\u{2029}'];

/// ansible's `_munge_data_for_lossy_yaml`: readability over accuracy, so that libyaml lets
/// the string be a literal block.
fn lossy_block(text: &str) -> String {
    let trimmed = tack_py::text::rstrip(text);
    let expanded = expand_tabs(trimmed);
    // libyaml's "special characters", which only a double-quoted scalar may hold.
    let kept: String = expanded
        .chars()
        .filter(|c| {
            let c = u32::from(*c);
            (c == 10
                || (32..=126).contains(&c)
                || c == 133
                || (160..=55295).contains(&c)
                || (57344..=65533).contains(&c)
                || (65536..1_114_111).contains(&c))
                && c != 65279
        })
        .collect();
    // Spaces before a break only a double-quoted scalar may hold either.
    let mut out = String::with_capacity(kept.len());
    let mut spaces = 0usize;
    for c in kept.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        if !YAML_BREAK_CHARS.contains(&c) {
            out.extend(std::iter::repeat_n(' ', spaces));
        }
        spaces = 0;
        out.push(c);
    }
    out.extend(std::iter::repeat_n(' ', spaces));
    out
}

/// Python's `str.expandtabs()` (tab stops every 8 columns, counted from each line's start).
fn expand_tabs(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut column = 0usize;
    for c in text.chars() {
        match c {
            '\t' => {
                let width = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', width));
                column += width;
            }
            '\n' | '\r' => {
                out.push(c);
                column = 0;
            }
            _ => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// `SafeRepresenter.represent_float`.
fn float_text(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf".into() } else { "-.inf".into() };
    }
    let text = float_repr(f).to_lowercase();
    if !text.contains('.') && text.contains('e') {
        return text.replacen('e', ".0e", 1);
    }
    text
}

/// Which values Python's `<` relates: numbers with numbers, strings with strings, dates with
/// dates, naive datetimes with naive ones and aware with aware.
fn py_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Str(x) | Value::Unsafe(x), Value::Str(y) | Value::Unsafe(y)) => Some(x.cmp(y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => {
            let key = |t: &crate::value::Timestamp| {
                let time = t.time.as_ref();
                let offset = time.and_then(|t| t.utc_offset_minutes);
                let days = crate::key::days_from_civil(t.year, t.month, t.day);
                let micros = time.map_or(0, |t| {
                    (i64::from(t.hour) * 3600 + i64::from(t.minute) * 60 + i64::from(t.second))
                        * 1_000_000
                        + i64::from(t.microsecond)
                });
                let shift = i64::from(offset.unwrap_or(0)) * 60_000_000;
                (
                    time.is_some(),
                    offset.is_some(),
                    days as i128 * 86_400_000_000 + (micros - shift) as i128,
                )
            };
            let (kx, ky) = (key(x), key(y));
            if (kx.0, kx.1) != (ky.0, ky.1) {
                return None;
            }
            Some(kx.2.cmp(&ky.2))
        }
        _ => {
            let (x, y) = (number(a)?, number(b)?);
            x.partial_cmp(&y)
        }
    }
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Int(i) => Some(*i as f64),
        Value::BigInt(digits) => digits.parse().ok(),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// PyYAML's serializer: tags left implicit where the resolver would find them again.
fn serialize(emitter: &mut Emitter<'_>, node: &Rep) -> libyaml_safer::Result<()> {
    match node {
        Rep::Scalar { tag, value, literal } => {
            let plain_implicit = resolve_scalar(value).name() == *tag;
            let quoted_implicit = *tag == core_tag("str");
            let style = if *literal {
                ScalarStyle::Literal
            } else if value.chars().any(is_astral) {
                ScalarStyle::DoubleQuoted
            } else {
                ScalarStyle::Plain
            };
            emitter.emit(Event::scalar(
                None,
                Some(tag),
                value,
                plain_implicit,
                quoted_implicit,
                style,
            ))
        }
        Rep::Seq { items, flow } => {
            let style = if *flow { SequenceStyle::Flow } else { SequenceStyle::Block };
            emitter.emit(Event::sequence_start(None, Some(&core_tag("seq")), true, style))?;
            for item in items {
                serialize(emitter, item)?;
            }
            emitter.emit(Event::sequence_end())
        }
        Rep::Map { pairs, flow } => {
            let style = if *flow { MappingStyle::Flow } else { MappingStyle::Block };
            emitter.emit(Event::mapping_start(None, Some(&core_tag("map")), true, style))?;
            for (k, v) in pairs {
                serialize(emitter, k)?;
                serialize(emitter, v)?;
            }
            emitter.emit(Event::mapping_end())
        }
    }
}
