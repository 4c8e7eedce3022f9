//! Serialisation filters: `to_json`, `to_nice_json`, `from_json`, `to_yaml`, `to_nice_yaml`,
//! `from_yaml`, `from_yaml_all`, and Jinja2's `tojson`.
//!
//! JSON text comes from `tack_yaml::to_json` and YAML text from `tack_yaml::dump`, the one
//! home of each format; this module maps the filters' keyword arguments onto their options and
//! refuses, by name, the `json.dumps`/`yaml.dump` arguments those do not model.

use minijinja::value::ValueKind;
use minijinja::{State, Value};
use tack_yaml::{DumpOptions, JsonOptions, Node};

use super::args::{Bound, Sig};
use super::pyval::{self, from_node, str_of, to_node, type_name};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new(
        "to_json",
        Sig::new("to_json", &["a", "profile", "vault_to_text", "preprocess_unsafe"], 1).varkw(),
        to_json,
    ),
    Entry::new(
        "to_nice_json",
        Sig::new("to_nice_json", &["a", "indent", "sort_keys"], 1).varkw(),
        to_nice_json,
    ),
    Entry::new("from_json", Sig::new("from_json", &["a", "profile"], 1).varkw(), from_json),
    Entry::new("to_yaml", Sig::new("to_yaml", &["a"], 1).varargs().varkw(), to_yaml),
    Entry::new(
        "to_nice_yaml",
        Sig::new("to_nice_yaml", &["a", "indent"], 1).varargs().varkw(),
        to_nice_yaml,
    ),
    Entry::new("from_yaml", Sig::new("from_yaml", &["data"], 1), from_yaml),
    Entry::new("from_yaml_all", Sig::new("from_yaml_all", &["data"], 1), from_yaml_all),
    Entry::new("tojson", Sig::new("do_tojson", &["value", "indent"], 1), tojson),
];

fn int_option(value: &Value, name: &str) -> Result<Option<usize>, FilterError> {
    if value.is_none() {
        return Ok(None);
    }
    match pyval::num(value) {
        Some(pyval::Num::Int(i)) => Ok(Some(usize::try_from(i).unwrap_or(0))),
        _ => Err(FilterError::failed(format!(
            "tack supports only an integer {name} for JSON, not {}",
            type_name(value)
        ))),
    }
}

fn apply_json_kwargs(
    options: &mut JsonOptions,
    kwargs: &[(String, Value)],
    separators_given: &mut bool,
) -> Result<(), FilterError> {
    for (key, value) in kwargs {
        match key.as_str() {
            "indent" => {
                options.indent = int_option(value, "indent")?;
                if options.indent.is_some() && !*separators_given {
                    options.item_separator = ",".into();
                }
            }
            "sort_keys" => options.sort_keys = pyval::truthy(value),
            "ensure_ascii" => options.ensure_ascii = pyval::truthy(value),
            "separators" => {
                let parts = pyval::list_of(value).unwrap_or_default();
                let [item, key_sep] = parts.as_slice() else {
                    return Err(FilterError::failed(
                        "separators must be a pair of strings (item, key)",
                    ));
                };
                options.item_separator = str_of(item);
                options.key_separator = str_of(key_sep);
                *separators_given = true;
            }
            other => {
                return Err(FilterError::failed(format!(
                    "tack does not support the json.dumps argument '{other}'"
                )));
            }
        }
    }
    Ok(())
}

fn json_text(value: &Value, options: &JsonOptions) -> Result<String, FilterError> {
    // A value inside that fails when read (an undecryptable `!vault` one) fails the dump.
    if let Some(e) = super::pyval::first_failure(value) {
        return Err(FilterError::Template(e));
    }
    let node = Node::bare(to_node(value));
    // The filters' profile refuses bytes, which callbacks write as text; a value from a file
    // is tagged, and only a file makes bytes.
    let bytes =
        tack_yaml::BytesJson::Refused { type_name: "_AnsibleTaggedBytes", profile: "tagless" };
    let options = &JsonOptions { bytes, ..options.clone() };
    // Every line of indented JSON is indented by its depth: a bound on the text before it
    // is written, so an absurd `indent` is Python's MemoryError rather than an abort.
    if let Some(indent) = options.indent.filter(|i| *i > 0) {
        let (lines, depth) = shape(&node.value, 1);
        crate::python::memory::room_for(
            indent.checked_mul(lines).and_then(|n| n.checked_mul(depth)),
        );
    }
    tack_yaml::to_json(&node, options).map_err(|e| FilterError::failed(e.0))
}

/// How many values `value` holds (each one line of indented JSON) and its deepest level.
fn shape(value: &tack_yaml::Value, level: usize) -> (usize, usize) {
    let children: Box<dyn Iterator<Item = &tack_yaml::Value>> = match value {
        tack_yaml::Value::Seq(items) => Box::new(items.iter().map(|n| &n.value)),
        tack_yaml::Value::Map(map) => Box::new(map.iter().map(|(_, v)| &v.value)),
        _ => return (1, level),
    };
    children.fold((1, level), |(lines, depth), child| {
        let (l, d) = shape(child, level + 1);
        (lines.saturating_add(l), depth.max(d))
    })
}

fn check_profile(args: &Bound) -> Result<(), FilterError> {
    if let Some(profile) = args.opt(1) {
        if args.get(2).is_some() {
            return Err(FilterError::failed(
                "Only one of `vault_to_text` or `profile` can be specified.",
            ));
        }
        if args.get(3).is_some() {
            return Err(FilterError::failed(
                "Only one of `preprocess_unsafe` or `profile` can be specified.",
            ));
        }
        profile_name(profile)?;
    }
    // Both only matter for vaulted and `!unsafe` values, which reach filters already decrypted
    // and unmarked; honouring them is not possible, so they are refused rather than ignored.
    for (i, name) in [(2, "vault_to_text"), (3, "preprocess_unsafe")] {
        if args.get(i).is_some() {
            return Err(FilterError::failed(format!("tack does not support to_json's {name}")));
        }
    }
    Ok(())
}

/// The JSON profiles ansible knows; tack writes the default (`tagless`) one only.
fn profile_name(profile: &Value) -> Result<(), FilterError> {
    let name = str_of(profile);
    match name.as_str() {
        "tagless" => Ok(()),
        _ if decodes_plain(&name) => Err(FilterError::failed(format!(
            "tack does not support the JSON profile {}",
            tack_yaml::pyrepr::str_repr(&name)
        ))),
        _ => Err(FilterError::failed(format!(
            "Unknown profile name {}.",
            tack_yaml::pyrepr::str_repr(&name)
        ))),
    }
}

fn to_json(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    check_profile(args)?;
    let mut options = JsonOptions::compact();
    let mut separators_given = false;
    apply_json_kwargs(&mut options, &args.extra_kw, &mut separators_given)?;
    json_text(args.input(), &options).map(Value::from)
}

fn to_nice_json(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let indent = match args.get(1) {
        None => Some(4),
        Some(v) => int_option(v, "indent")?,
    };
    let sort_keys = args.get(2).is_none_or(pyval::truthy);
    let mut options = JsonOptions::indented(indent.unwrap_or(0), sort_keys);
    options.indent = indent;
    let kwargs: Vec<(String, Value)> =
        args.extra_kw.iter().filter(|(k, _)| k != "separators").cloned().collect();
    let mut separators_given = true;
    apply_json_kwargs(&mut options, &kwargs, &mut separators_given)?;
    options.item_separator = ",".into();
    options.key_separator = ": ".into();
    json_text(args.input(), &options).map(Value::from)
}

fn from_json(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    // A profile other than the default changes only how ansible's tagged objects
    // (`{"__ansible_vault": ...}`, `{"__ansible_unsafe": ...}`, ...) decode: JSON without
    // them reads the same under every profile, and JSON with them is refused below.
    let profile = match args.opt(1) {
        Some(profile) => match profile_name(profile) {
            Ok(()) => None,
            Err(_) if decodes_plain(&str_of(profile)) => Some(str_of(profile)),
            Err(e) => return Err(e),
        },
        None => None,
    };
    if let Some((key, _)) = args.extra_kw.first() {
        return Err(FilterError::failed(format!(
            "tack does not support the json.loads argument '{key}'"
        )));
    }
    let input = args.input();
    let Some(text) = input.as_str() else {
        return Err(FilterError::failed(format!(
            "the JSON object must be str, bytes or bytearray, not {}",
            pyval::class_name(input)
        )));
    };
    if tack_yaml::pyjson::nesting_depth(text) > PYTHON_DEPTH {
        return Err(FilterError::failed(too_deep(text)));
    }
    let mut node =
        tack_yaml::pyjson::loads(text, None).map_err(|e| FilterError::failed(e.to_string()))?;
    if let Some(profile @ ("legacy" | "inventory_legacy")) = profile.as_deref() {
        legacy_tags(&mut node.value).map_err(FilterError::failed)?;
        let tags = crate::vars::str_tags::wanted().then(|| LegacyTags {
            source: crate::vars::str_tags::tags_of(input),
            inventory: profile == "inventory_legacy",
        });
        return Ok(legacy_value(&node.value, tags.as_ref(), &mut Vec::new()));
    }
    if profile.is_none()
        && let Some(kind) = tagless_refusal(&node.value)
    {
        return Err(FilterError::failed(format!(
            "Object of type {kind} is not JSON deserializable by the 'tagless' profile."
        )));
    }
    if let Some(profile) = profile
        && let Some(key) = tagged_key(&node.value)
    {
        return Err(FilterError::failed(format!(
            "tack does not support decoding ansible's tagged value '{key}' with the JSON profile {}",
            tack_yaml::pyrepr::str_repr(&profile)
        )));
    }
    Ok(super::pyval::from_node(&node.value))
}

/// The deepest nesting ansible's `from_json` returns from a task argument's template: Python's
/// own recursion limit, reached while it handles the decoded value (measured: 959 levels pass,
/// 960 fail), whereas its C decoder reads up to `tack_yaml::pyjson::MAX_DEPTH`.
const PYTHON_DEPTH: usize = 959;

/// Why ansible's `from_json` fails on `text`, nested deeper than [`PYTHON_DEPTH`]: the
/// decoder's syntax or recursion error, read on a thread whose stack holds the decoder's
/// depth, else Python's recursion error once decoded.
fn too_deep(text: &str) -> String {
    let owned = text.to_string();
    let read = std::thread::Builder::new()
        // A reserve, not an allocation: pages are used only as deep as the text goes.
        .stack_size(1 << 30)
        .spawn(move || tack_yaml::pyjson::loads(&owned, None).err().map(|e| e.to_string()));
    match read.map(std::thread::JoinHandle::join) {
        Ok(Ok(Some(error))) => error,
        _ => "maximum recursion depth exceeded".to_string(),
    }
}

/// ansible's JSON profiles besides `tagless` (its controller's and its modules'): their
/// decoding of JSON without ansible's tagged objects is plain JSON's.
fn decodes_plain(profile: &str) -> bool {
    matches!(
        profile,
        "legacy"
            | "inventory_legacy"
            | "cache_persistence"
            | "fallback_to_str"
            | "module_legacy_c2m"
            | "module_legacy_m2c"
            | "module_modern_c2m"
            | "module_modern_m2c"
    )
}

/// The `legacy` profiles' decoding of ansible's tagged objects, innermost first as its object
/// hook sees them: a mapping holding `__ansible_unsafe` is that untrusted string, else one
/// holding `__ansible_vault` is that vaulted text; either must be a string.
fn legacy_tags(value: &mut tack_yaml::Value) -> Result<(), String> {
    use tack_yaml::Value as Y;
    match value {
        Y::Seq(items) => items.iter_mut().try_for_each(|i| legacy_tags(&mut i.value)),
        Y::Map(map) => {
            let mut decoded = tack_yaml::Mapping::new();
            for (k, v) in map.iter() {
                let mut v = v.clone();
                legacy_tags(&mut v.value)?;
                decoded.insert(k.clone(), v);
            }
            for (key, make) in [
                ("__ansible_unsafe", Y::Unsafe as fn(String) -> Y),
                ("__ansible_vault", Y::Vault as fn(String) -> Y),
            ] {
                if let Some(inner) = decoded.get(key) {
                    let Y::Str(text) = &inner.value else {
                        let class = tack_yaml::Node::bare(inner.value.clone()).python_type();
                        return Err(format!("{key} is <class '{class}'> not <class 'str'>"));
                    };
                    *value = make(text.clone());
                    return Ok(());
                }
            }
            *map = decoded;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What the `legacy` profiles put on the strings they decode (only when tags are wanted):
/// the `Origin` of the text decoded, and its `TrustedAsTemplate` where the profile lets
/// trust through.
struct LegacyTags {
    source: Option<crate::vars::str_tags::StrTags>,
    /// `inventory_legacy`: trust only on variables (`_meta.hostvars.HOST.*`, `GROUP.vars.*`),
    /// never on host or group names.
    inventory: bool,
}

impl LegacyTags {
    fn trusts(&self, path: &[String]) -> bool {
        if !self.source.as_ref().is_some_and(|tags| tags.trusted) {
            return false;
        }
        !self.inventory
            || (path.len() >= 4 && path[0] == "_meta" && path[1] == "hostvars")
            || (path.len() >= 3 && path[1] == "vars")
    }
}

/// A decoded value for the template: a vaulted text is decrypted with the run's secrets
/// (the render's result is then sealed); one that cannot be stays vaulted
/// (`EncryptedText`), failing only where it is used, as ansible's encrypted string does.
/// `path` is the keys (and indices) from the top to `value`.
fn legacy_value(
    value: &tack_yaml::Value,
    tags: Option<&LegacyTags>,
    path: &mut Vec<String>,
) -> Value {
    use crate::vars::str_tags::{StrTags, tagged};
    use tack_yaml::Value as Y;
    match value {
        Y::Vault(text) => super::vaulted(text),
        Y::Seq(items) => Value::from(
            items
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    path.push(i.to_string());
                    let item = legacy_value(&n.value, tags, path);
                    path.pop();
                    item
                })
                .collect::<Vec<_>>(),
        ),
        Y::Map(m) => Value::from_pairs(m.iter().map(|(k, v)| {
            path.push(tack_yaml::pyrepr::str(&k.value));
            let item = legacy_value(&v.value, tags, path);
            path.pop();
            (super::pyval::from_node(&k.value), item)
        })),
        Y::Unsafe(text) | Y::Str(text) => match tags {
            Some(tags) => {
                // An `__ansible_unsafe` string is never trusted, yet comes from the same text.
                let trusted = matches!(value, Y::Str(_)) && tags.trusts(path);
                let origin = tags.source.as_ref().and_then(|s| s.origin.clone());
                tagged(text, StrTags { trusted, origin })
            }
            None => Value::from(text.as_str()),
        },
        other => super::pyval::from_node(other),
    }
}

/// What the default (`tagless`) profile refuses to decode, as its object hook meets it
/// (innermost first): a mapping holding `__ansible_unsafe`, else `__ansible_vault` (named by
/// the key), else `__ansible_type` (named by its value), each as Python's `repr`.
fn tagless_refusal(value: &tack_yaml::Value) -> Option<String> {
    use tack_yaml::Value as Y;
    match value {
        Y::Seq(items) => items.iter().find_map(|i| tagless_refusal(&i.value)),
        Y::Map(map) => {
            if let Some(inner) = map.iter().find_map(|(_, v)| tagless_refusal(&v.value)) {
                return Some(inner);
            }
            for key in ["__ansible_unsafe", "__ansible_vault"] {
                if map.get(key).is_some() {
                    return Some(tack_yaml::pyrepr::str_repr(key));
                }
            }
            map.get("__ansible_type").map(|kind| tack_yaml::pyrepr::repr(&kind.value))
        }
        _ => None,
    }
}

/// The first key naming one of ansible's tagged objects (`__ansible_...`) in `value`.
fn tagged_key(value: &tack_yaml::Value) -> Option<String> {
    match value {
        tack_yaml::Value::Map(map) => map.iter().find_map(|(k, v)| {
            let key = tack_yaml::pyrepr::str(&k.value);
            if key.starts_with("__ansible_") { Some(key) } else { tagged_key(&v.value) }
        }),
        tack_yaml::Value::Seq(items) => items.iter().find_map(|i| tagged_key(&i.value)),
        _ => None,
    }
}

fn yaml_options(
    mut options: DumpOptions,
    kwargs: &[(String, Value)],
) -> Result<DumpOptions, FilterError> {
    for (key, value) in kwargs {
        match key.as_str() {
            "indent" => {
                options.indent = pyval::num(value).and_then(|n| match n {
                    pyval::Num::Int(i) => i32::try_from(i).ok(),
                    pyval::Num::Float(_) => None,
                })
            }
            "width" => {
                options.width = match pyval::num(value) {
                    Some(pyval::Num::Int(i)) => i32::try_from(i).ok(),
                    Some(pyval::Num::Float(f)) if f.is_infinite() => Some(-1),
                    _ => None,
                }
            }
            "sort_keys" => options.sort_keys = pyval::truthy(value),
            "default_flow_style" => {
                options.default_flow_style =
                    if value.is_none() { None } else { Some(pyval::truthy(value)) }
            }
            "vault_behavior" => {
                let behavior = str_of(value);
                if !value.is_none()
                    && !matches!(
                        behavior.as_str(),
                        "decrypt" | "redact" | "fail" | "keep_encrypted"
                    )
                {
                    return Err(FilterError::failed(
                        "The vault parameter must be one of decrypt, keep_encrypted, redact, fail",
                    ));
                }
                // Vaulted values reach filters decrypted and unmarked, so only the default
                // (`decrypt`) can be honoured; the others would dump plaintext where ansible
                // redacts, keeps ciphertext or fails.
                if !value.is_none() && behavior != "decrypt" {
                    return Err(FilterError::failed(format!(
                        "tack does not support vault_behavior={}",
                        tack_yaml::pyrepr::str_repr(&behavior)
                    )));
                }
            }
            "allow_unicode" if pyval::truthy(value) => {}
            other => {
                return Err(FilterError::failed(format!(
                    "tack does not support the yaml.dump argument '{other}'"
                )));
            }
        }
    }
    Ok(options)
}

fn dump(value: &Value, options: &DumpOptions) -> Result<Value, FilterError> {
    if let Some(e) = super::pyval::first_failure(value) {
        return Err(FilterError::Template(e));
    }
    tack_yaml::dump(&to_node(value), options)
        .map(Value::from)
        .map_err(|e| FilterError::failed(e.to_string()))
}

fn extra_positional(args: &Bound) -> Result<(), FilterError> {
    if !args.extra.is_empty() {
        return Err(FilterError::failed(
            "tack does not support extra positional arguments to to_yaml/to_nice_yaml",
        ));
    }
    Ok(())
}

fn to_yaml(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    extra_positional(args)?;
    dump(args.input(), &yaml_options(DumpOptions::to_yaml(), &args.extra_kw)?)
}

fn to_nice_yaml(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    extra_positional(args)?;
    let mut options = DumpOptions::to_nice_yaml();
    if let Some(indent) = args.get(1) {
        options = yaml_options(options, &[("indent".into(), indent.clone())])?;
    }
    dump(args.input(), &yaml_options(options, &args.extra_kw)?)
}

fn yaml_error(e: tack_yaml::YamlError) -> FilterError {
    FilterError::failed(e.message)
}

fn from_yaml(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let data = args.input();
    match data.kind() {
        ValueKind::None => Ok(Value::from(())),
        ValueKind::String => {
            let node =
                tack_yaml::load_one(data.as_str().unwrap_or_default(), None).map_err(yaml_error)?;
            Ok(from_node(&node.value))
        }
        _ => Ok(data.clone()),
    }
}

fn from_yaml_all(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let data = args.input();
    match data.kind() {
        ValueKind::None => Ok(Value::from(Vec::<Value>::new())),
        ValueKind::String => {
            let loaded =
                tack_yaml::load_all(data.as_str().unwrap_or_default(), None).map_err(yaml_error)?;
            Ok(Value::from(
                loaded.documents.iter().map(|n| from_node(&n.value)).collect::<Vec<_>>(),
            ))
        }
        _ => Ok(data.clone()),
    }
}

fn tojson(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let mut options = JsonOptions::compact();
    options.sort_keys = true;
    if let Some(indent) = args.opt(1) {
        options.indent = int_option(indent, "indent")?;
        options.item_separator = ",".into();
    }
    let text = json_text(args.input(), &options)?;
    let safe = text
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\'', "\\u0027");
    Ok(Value::from_safe_string(safe))
}
