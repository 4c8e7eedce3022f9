//! Combining variable mappings as ansible's `combine_vars` does, and the `-e` extra variables
//! it builds from the command line.
//!
//! `hash_behaviour = replace` (the default) lets a later mapping replace a whole top-level
//! value; `merge` merges nested mappings recursively (lists are still replaced). Either way a
//! key that already exists keeps its place and a new key is appended, as Python's dicts do.

use tack_diag::{Diagnostic, ErrorClass, Origin};
use tack_yaml::{Mapping, Node, Value};

use crate::{DataLoader, kv};

/// The `hash_behaviour` setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HashBehaviour {
    #[default]
    Replace,
    Merge,
}

/// The run's `hash_behaviour`, which every layer of variables the run combines obeys (set
/// once as the command starts, as ansible reads its constant).
static RUN_HASH_BEHAVIOUR: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Sets the run's `hash_behaviour` (see [`combine_into`]).
pub fn set_hash_behaviour(behaviour: HashBehaviour) {
    RUN_HASH_BEHAVIOUR
        .store(behaviour == HashBehaviour::Merge, std::sync::atomic::Ordering::Relaxed);
}

/// The run's `hash_behaviour`.
pub fn hash_behaviour() -> HashBehaviour {
    if RUN_HASH_BEHAVIOUR.load(std::sync::atomic::Ordering::Relaxed) {
        HashBehaviour::Merge
    } else {
        HashBehaviour::Replace
    }
}

/// Gives every value of `node` (keys and items included) `origin`.
fn stamp(node: &mut Node, origin: &Origin) {
    node.origin = Some(origin.clone());
    match &mut node.value {
        Value::Seq(items) => items.iter_mut().for_each(|n| stamp(n, origin)),
        Value::Map(map) => {
            let entries: Vec<(Node, Node)> =
                map.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let mut out = tack_yaml::Mapping::new();
            for (mut k, mut v) in entries {
                stamp(&mut k, origin);
                stamp(&mut v, origin);
                out.insert(k, v);
            }
            *map = out;
        }
        _ => {}
    }
}

/// `from` combined over `into` as the run's `hash_behaviour` says (`combine_vars`).
pub fn combine_into(into: &mut Mapping, from: &Mapping) {
    match hash_behaviour() {
        HashBehaviour::Replace => {
            for (k, v) in from.iter() {
                into.insert(k.clone(), v.clone());
            }
        }
        HashBehaviour::Merge => *into = merge_hash(into, from),
    }
}

/// `combine_vars(a, b)`: `b` over `a`.
pub fn combine_vars(a: &Mapping, b: &Mapping, behaviour: HashBehaviour) -> Mapping {
    match behaviour {
        HashBehaviour::Replace => {
            let mut out = a.clone();
            for (k, v) in b.iter() {
                out.insert(k.clone(), v.clone());
            }
            out
        }
        HashBehaviour::Merge => merge_hash(a, b),
    }
}

/// `merge_hash(a, b)` with ansible's defaults (recursive, lists replaced).
pub fn merge_hash(a: &Mapping, b: &Mapping) -> Mapping {
    if a.is_empty() {
        return b.clone();
    }
    let mut out = a.clone();
    for (key, b_value) in b.iter() {
        let key_text = key.as_str();
        let merged = match (key_text.and_then(|k| out.get(k)), &b_value.value) {
            (Some(Node { value: Value::Map(a_map), .. }), Value::Map(b_map)) => {
                Some(Node::new(Value::Map(merge_hash(a_map, b_map)), b_value.origin.clone()))
            }
            _ => None,
        };
        out.insert(key.clone(), merged.unwrap_or_else(|| b_value.clone()));
    }
    out
}

/// Names ansible reserves for play keywords and template globals (`get_reserved_names`).
pub const RESERVED_NAMES: &[&str] = &[
    "action",
    "always",
    "any_errors_fatal",
    "args",
    "async",
    "async_val",
    "become",
    "become_exe",
    "become_flags",
    "become_method",
    "become_user",
    "block",
    "changed_when",
    "check_mode",
    "collections",
    "connection",
    "cycler",
    "debugger",
    "delay",
    "delegate_facts",
    "delegate_to",
    "dict",
    "diff",
    "environment",
    "fact_path",
    "failed_when",
    "force_handlers",
    "gather_facts",
    "gather_timeout",
    "handlers",
    "hosts",
    "ignore_errors",
    "ignore_unreachable",
    "joiner",
    "lipsum",
    "local_action",
    "lookup",
    "loop",
    "loop_control",
    "loop_with",
    "max_fail_percentage",
    "module_defaults",
    "name",
    "namespace",
    "no_log",
    "notify",
    "now",
    "omit",
    "order",
    "poll",
    "port",
    "post_tasks",
    "pre_tasks",
    "q",
    "query",
    "range",
    "register",
    "remote_user",
    "rescue",
    "retries",
    "roles",
    "run_once",
    "serial",
    "strategy",
    "tags",
    "tasks",
    "throttle",
    "timeout",
    "undef",
    "until",
    "validate_argspec",
    "vars",
    "vars_files",
    "vars_prompt",
    "when",
    "with_",
];

/// `warn_if_reserved`: a warning for each variable named like a play keyword or template
/// global (`vars` excepted, ansible sets it itself), pointing at where the name was written.
pub fn warn_if_reserved(vars: &Mapping) {
    for key in vars.keys() {
        let Some(name) = key.as_str() else { continue };
        if name != "vars" && RESERVED_NAMES.contains(&name) {
            let message = format!(
                "Found variable using reserved name {}.",
                tack_yaml::pyrepr::str_repr(name)
            );
            tack_diag::warn(&value_warning(message, key));
        }
    }
}

/// A warning about a value, as ansible shows one: with the source excerpt when the value was
/// read from a file, otherwise with its origin's description (or `<unknown>`) followed by the
/// value itself, which tack-diag prints in the help position.
fn value_warning(message: String, value: &Node) -> Diagnostic {
    match &value.origin {
        Some(origin) if origin.path.is_some() => Diagnostic::at(message, Some(origin.clone())),
        origin => {
            let origin =
                origin.clone().unwrap_or(Origin { path: None, description: None, line: 0, col: 0 });
            let shown =
                value.as_str().map(str::to_string).unwrap_or_else(|| format!("{:?}", value));
            Diagnostic::at(message, Some(origin)).with_help(shown)
        }
    }
}

/// `load_extra_vars`: every `-e` value combined in order. `@file` loads a file, text starting
/// with `{` or `[` is YAML/JSON, anything else is `key=value` pairs (values stay strings).
pub fn load_extra_vars(
    loader: &DataLoader,
    options: &[String],
    behaviour: HashBehaviour,
) -> Result<Mapping, Diagnostic> {
    let mut extra = Mapping::new();
    for option in options {
        if option.is_empty() {
            continue;
        }
        let data = if let Some(file) = option.strip_prefix('@') {
            let path = loader.path_dwim(file);
            loader.load_file(&path).map_err(|e| e.to_diagnostic())?
        } else if option.starts_with('/') || option.starts_with('.') {
            return Err(Diagnostic::new(format!(
                "Please prepend extra_vars filename '{option}' with '@'"
            ))
            .with_class(ErrorClass::Options));
        } else if option.starts_with('{') || option.starts_with('[') {
            // Every value of it was written on the command line, as ansible tags them.
            let mut data = loader.load_text(option, None).map_err(|e| e.to_diagnostic())?;
            stamp(&mut data, &Origin::described("<CLI option '-e'>"));
            data
        } else {
            let origin = Some(Origin::described("<CLI option '-e'>"));
            let pairs =
                kv::parse_kv(option, false).map_err(|e| Diagnostic::new(e.to_string()).parser())?;
            let map = pairs
                .into_iter()
                .map(|(k, v)| {
                    (
                        Node::new(Value::Str(k), origin.clone()),
                        Node::new(Value::Str(v), origin.clone()),
                    )
                })
                .collect();
            Node::new(Value::Map(map), origin)
        };
        match &data.value {
            Value::Map(map) => extra = combine_vars(&extra, map, behaviour),
            _ => {
                return Err(Diagnostic::new(format!(
                    "Invalid extra vars data supplied. '{option}' could not be made into a \
                     dictionary"
                ))
                .with_class(ErrorClass::Options));
            }
        }
    }
    Ok(extra)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        Node::bare(Value::Str(text.into()))
    }

    fn i(n: i64) -> Node {
        Node::bare(Value::Int(n))
    }

    fn map(entries: Vec<(&str, Node)>) -> Mapping {
        entries.into_iter().map(|(k, v)| (s(k), v)).collect()
    }

    fn node(m: Mapping) -> Node {
        Node::bare(Value::Map(m))
    }

    #[test]
    fn replace_keeps_positions_and_replaces_whole_values() {
        let a = map(vec![("x", i(1)), ("d", node(map(vec![("k", i(1)), ("j", i(2))])))]);
        let b = map(vec![("d", node(map(vec![("k", i(9))]))), ("y", i(2))]);
        let out = combine_vars(&a, &b, HashBehaviour::Replace);
        let keys: Vec<_> = out.keys().map(|k| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["x", "d", "y"]);
        assert_eq!(out.get("d").unwrap().as_map().unwrap().len(), 1);
    }

    #[test]
    fn merge_recurses_into_mappings_only() {
        let a = map(vec![
            ("d", node(map(vec![("k", i(1)), ("j", i(2))]))),
            ("l", Node::bare(Value::Seq(vec![i(1)]))),
        ]);
        let b = map(vec![
            ("d", node(map(vec![("k", i(9))]))),
            ("l", Node::bare(Value::Seq(vec![i(2)]))),
        ]);
        let out = combine_vars(&a, &b, HashBehaviour::Merge);
        let d = out.get("d").unwrap().as_map().unwrap();
        assert_eq!(d.get("k").unwrap().value, Value::Int(9));
        assert_eq!(d.get("j").unwrap().value, Value::Int(2));
        assert_eq!(out.get("l").unwrap().as_seq().unwrap().len(), 1);
    }

    #[test]
    fn extra_vars_forms() {
        let loader = DataLoader::new(Default::default());
        let opts = vec!["a=1 b='x y'".to_string(), "{\"a\": [1]}".to_string()];
        let vars = load_extra_vars(&loader, &opts, HashBehaviour::Replace).unwrap();
        assert!(matches!(vars.get("a").unwrap().value, Value::Seq(_)));
        assert_eq!(vars.get("b").unwrap().value, Value::Str("x y".into()));
        let err = load_extra_vars(&loader, &["./f.yml".into()], HashBehaviour::Replace);
        assert_eq!(
            err.unwrap_err().message,
            "Please prepend extra_vars filename './f.yml' with '@'"
        );
    }
}
