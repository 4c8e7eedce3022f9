//! The filters and tests of ansible-core's internal `ansible._protomatter` collection that
//! read or set a value's data tags: the `tagged` and `tagged_with` tests, the `tag_names`,
//! `origin`, `apply_trust` and `dump_object` filters. They answer from the tags tack keeps (`vars::str_tags`
//! for strings, the place a list or dict read from a variable was written), so they need no
//! Python (a tag set in a Python worker could not come back with its value, nor a failure's
//! marker go there); the collection's other plugins (`unmask`, `true_type`, ...) still go to
//! the controller's ansible-core as any collection's plugin does.
//!
//! tack tags strings (`Origin`, `TrustedAsTemplate`, and `VaultedValue` on a `!vault`
//! value's plaintext as read or `vault(wrap_object=true)`'s value) and containers
//! (`Origin`); ansible also
//! tags numbers with their `Origin`, which tack's numbers cannot carry: a number reads as
//! untagged here.

use minijinja::value::Value as JValue;

use crate::filters::FilterError;
use crate::filters::args::{Sig, bind};
use crate::vars::str_tags::{StrTags, tags_of};

/// Where a list or dict read from a variable was written (`vars::objects` answers; passed in
/// so this module stays a leaf of the engine).
pub(super) type ContainerOrigin = fn(&JValue) -> Option<tack_diag::Origin>;

/// What this module asks the rest of the engine, passed in so that it stays a leaf.
pub(super) struct Readers {
    /// Where a list or dict read from a variable was written (`vars::objects` answers).
    pub container_origin: ContainerOrigin,
    /// Whether a string is a `!vault` value's plaintext as read (`active` answers).
    pub is_decrypted: fn(&JValue) -> bool,
    /// `dump_object` of the failure a value stands for (a marker, or a variable that
    /// failed): `{"exception": ...}` (`env` makes it).
    pub failure_dump: fn(&JValue) -> Option<JValue>,
}

const COLLECTION: &str = "ansible._protomatter.";

/// ansible's known tag types, by name (`_datatag._known_tag_type_map`).
const KNOWN_TAGS: &[&str] = &[
    "Deprecated",
    "Origin",
    "SourceWasEncrypted",
    "TrustedAsTemplate",
    "VaultedValue",
    "_JinjaConstTemplate",
];

/// Whether this module answers the fully qualified filter (`test` false) or test `name`.
pub(super) fn handles(name: &str, test: bool) -> bool {
    match name.strip_prefix(COLLECTION) {
        Some("tagged" | "tagged_with") => test,
        Some("tag_names" | "origin" | "apply_trust" | "dump_object") => !test,
        _ => false,
    }
}

/// Calls the plugin [`handles`] said it answers. An undefined argument is the result, as
/// ansible's plugin intercept makes it. A failure is ansible's message for it.
pub(super) fn call(
    name: &str,
    positional: &[JValue],
    keywords: &[(String, JValue)],
    readers: &Readers,
) -> Result<JValue, String> {
    if let Some(undefined) =
        positional.iter().chain(keywords.iter().map(|(_, v)| v)).find(|v| v.is_undefined())
    {
        return Ok(undefined.clone());
    }
    let short = name.strip_prefix(COLLECTION).unwrap_or(name);
    let (kind, sig) = match short {
        "tagged_with" => ("test", Sig::new("tagged_with", &["value", "tag_name"], 2)),
        "tagged" => ("test", Sig::new("tagged", &["value"], 1)),
        "origin" => ("filter", Sig::new("origin", &["value"], 1)),
        "tag_names" => ("filter", Sig::new("tag_names", &["value"], 1)),
        "apply_trust" => ("filter", Sig::new("apply_trust", &["value"], 1)),
        "dump_object" => ("filter", Sig::new("dump_object", &["value"], 1)),
        _ => return Err(failed("filter", name, format!("no plugin named {short}"))),
    };
    let bound = bind(&sig, positional.to_vec(), keywords.to_vec()).map_err(|e| match e {
        FilterError::Failed(message) => failed(kind, name, message),
        FilterError::Template(e) => e.to_string(),
    })?;
    let args: Vec<JValue> = (0..sig.params.len()).filter_map(|i| bound.get(i).cloned()).collect();
    if short == "apply_trust" {
        return Ok(apply_trust(&args[0]));
    }
    if short == "dump_object" {
        return Ok(dump_object(&args[0], readers));
    }
    let names = tag_names(&args[0], readers);
    Ok(match short {
        "tagged" => JValue::from(!names.is_empty()),
        "tagged_with" => {
            let wanted = args[1].as_str().unwrap_or_default();
            if !KNOWN_TAGS.contains(&wanted) {
                let repr = match args[1].as_str() {
                    Some(text) => tack_py::repr::str_repr(text),
                    None => args[1].to_string(),
                };
                return Err(failed(kind, name, format!("Unknown tag name {repr}.")));
            }
            JValue::from(names.contains(&wanted))
        }
        "tag_names" => JValue::from(names),
        _ => match origin_of(&args[0], readers.container_origin) {
            Some(origin) => JValue::from(origin.to_string()),
            None => JValue::from(()),
        },
    })
}

/// A string tagged `TrustedAsTemplate`, its other tags kept; anything else as it came
/// (ansible's filter tags strings only).
fn apply_trust(value: &JValue) -> JValue {
    match value.as_str() {
        Some(text) => {
            let origin = tags_of(value).and_then(|tags| tags.origin);
            crate::vars::str_tags::tagged(text, StrTags { trusted: true, origin })
        }
        None => value.clone(),
    }
}

/// ansible's `dump_object` for what tack's values can be: a failure's marker becomes
/// `{"exception": <its exception>}`, whose `message` is all a template can read; anything
/// else is handed back.
fn dump_object(value: &JValue, readers: &Readers) -> JValue {
    (readers.failure_dump)(value).unwrap_or_else(|| value.clone())
}

fn failed(kind: &str, name: &str, message: String) -> String {
    format!("The {kind} plugin '{name}' failed: {message}")
}

/// The names of the tags on `value`, sorted as ansible's `tag_names` sorts them.
fn tag_names(value: &JValue, readers: &Readers) -> Vec<&'static str> {
    let mut names = Vec::new();
    if origin_of(value, readers.container_origin).is_some() {
        names.push("Origin");
    }
    if tags_of(value).is_some_and(|tags| tags.trusted) {
        names.push("TrustedAsTemplate");
    }
    if (readers.is_decrypted)(value)
        || value.downcast_object_ref::<crate::vault_wrapped::VaultWrapped>().is_some()
    {
        names.push("VaultedValue");
    }
    names
}

fn origin_of(value: &JValue, container_origin: ContainerOrigin) -> Option<tack_diag::Origin> {
    match tags_of(value) {
        Some(tags) => tags.origin,
        None => container_origin(value),
    }
}
