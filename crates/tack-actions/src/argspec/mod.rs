//! ansible's `ArgumentSpecValidator(spec).validate(parameters)` for specs known only at run
//! time (a role's `meta/argument_specs.yml`, a `validate_argument_spec` task): aliases,
//! defaults, `required`, every type of `DEFAULT_TYPE_VALIDATORS` with `elements`, `choices`,
//! nested `options` (with `apply_defaults`) and their `mutually_exclusive`/`required_*`
//! rules, unsupported parameters. Unlike `AnsibleModule` (tack-agent's `modules::argspec`,
//! which stops at the first error and holds `&'static` specs), every error is kept, in
//! ansible's order and words.
//!
//! Owns only the validation of one parameter dictionary against one spec; the action that
//! gathers the parameters and shapes the task result is `actions::validate_argument_spec`.
//! Deprecations (`removed_in_version`, `deprecated_aliases`) and the top level's "option and
//! alias both set" warnings are not produced: the validator ansible's action uses keeps them
//! in its result, which the action never shows; a sub-option's such warning ansible prints at
//! once, so it is in [`Outcome::warnings`]. No-log values are not collected either (the
//! action masks nothing); only the errors their collection raises are kept.

mod checks;
mod types;

use tack_diag::Origin;
use tack_yaml::{Mapping, Node, Value};

use checks::found_in;
use types::{Checker, class_name, py_str};

/// What validation found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Every error message, in ansible's order.
    pub errors: Vec<String>,
    /// What ansible's validator prints as warnings while it validates: a sub-option given
    /// together with its alias (`Both option a.b and its alias a.c are set.`).
    pub warnings: Vec<String>,
    /// The parameters as validated: converted, with defaults (`None` for options without).
    pub parameters: Mapping,
}

/// A spec tack cannot validate as ansible would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("the argument spec of option '{0}' is not a dictionary")]
    OptionNotMapping(String),
    #[error("the 'options' of option '{0}' are not a dictionary")]
    OptionsNotMapping(String),
    /// What ansible's validator raises instead of reporting (Python's own `TypeError`s on
    /// values it never expected, such as a number where sub-options were due).
    #[error("{0}")]
    Raised(String),
}

/// The names of the sub-options being validated, outermost first (`options_context`).
pub(crate) type Ctx = Vec<String>;

/// One option of a spec: its name and its attributes.
pub(crate) struct Opt<'a> {
    pub(crate) name: String,
    spec: &'a Mapping,
}

impl Opt<'_> {
    /// The attribute, `None` when absent or null (ansible's `.get(key)` then `is None`).
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.spec.get(key).map(|n| &n.value).filter(|v| !matches!(v, Value::Null))
    }

    fn type_name(&self) -> Option<String> {
        self.get("type").map(py_str)
    }
}

fn options(spec: &Mapping) -> Vec<Opt<'_>> {
    spec.iter()
        .filter_map(|(k, v)| match &v.value {
            Value::Map(m) => Some(Opt { name: py_str(&k.value), spec: m }),
            _ => None,
        })
        .collect()
}

/// Refuses, before anything is validated, a spec whose shape ansible would crash on.
fn check_spec(spec: &Mapping) -> Result<(), SpecError> {
    for (k, v) in spec.iter() {
        let name = py_str(&k.value);
        let Value::Map(m) = &v.value else { return Err(SpecError::OptionNotMapping(name)) };
        match m.get("options").map(|o| &o.value) {
            None | Some(Value::Null) => {}
            Some(Value::Map(sub)) => check_spec(sub)?,
            Some(_) => return Err(SpecError::OptionsNotMapping(name)),
        }
    }
    Ok(())
}

/// Python truthiness of an optional attribute.
pub(crate) fn truthy(value: Option<&Value>) -> bool {
    value.is_some_and(Value::is_truthy)
}

pub(crate) fn lookup<'a>(params: &'a Mapping, name: &str) -> Option<&'a Node> {
    params.iter().find(|(k, _)| py_str(&k.value) == name).map(|(_, v)| v)
}

/// `name in parameters`.
pub(crate) fn has(params: &Mapping, name: &str) -> bool {
    lookup(params, name).is_some()
}

/// `name in parameters and parameters[name] is not None`.
pub(crate) fn is_set(params: &Mapping, name: &str) -> bool {
    lookup(params, name).is_some_and(|v| !matches!(v.value, Value::Null))
}

fn set(params: &mut Mapping, name: &str, value: Node) {
    params.insert(Node::bare(Value::Str(name.to_string())), value);
}

/// Gives every node of an input an origin: what came in is "tagged" (see `types`).
fn tag(node: &Node, marker: &Origin) -> Node {
    let value = match &node.value {
        Value::Seq(items) => Value::Seq(items.iter().map(|i| tag(i, marker)).collect()),
        Value::Map(m) => {
            let mut out = Mapping::new();
            for (k, v) in m.iter() {
                out.insert(k.clone(), tag(v, marker));
            }
            Value::Map(out)
        }
        other => other.clone(),
    };
    Node::new(value, node.origin.clone().or_else(|| Some(marker.clone())))
}

/// The unsupported parameters found, each with the names supported where it was.
#[derive(Default)]
struct Unsupported {
    /// `(flattened name, supported options, supported aliases)`, in the order found.
    found: Vec<(String, Vec<String>, Vec<String>)>,
}

impl Unsupported {
    /// ansible's closing error: names sorted, and the supported names of the last one its set
    /// iterates (tack: the last found; they differ only for names at different levels).
    fn message(&self) -> Option<String> {
        let (_, supported, aliases) = self.found.last()?;
        let mut names: Vec<&str> = self.found.iter().map(|f| f.0.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let mut text = supported.join(", ");
        if !aliases.is_empty() {
            text.push_str(&format!(" ({})", aliases.join(", ")));
        }
        Some(format!("{}. Supported parameters include: {text}.", names.join(", ")))
    }
}

/// `_handle_aliases`: copies each alias's value to its option; the alias → option pairs. An
/// `Err` (ansible's `internal error`s) leaves the options before the bad one handled.
/// Each `(option, alias)` given together is added to `both`.
fn handle_aliases(
    spec: &[Opt<'_>],
    params: &mut Mapping,
    both: &mut Vec<(String, String)>,
) -> Result<Vec<(String, String)>, String> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for opt in spec {
        if opt.get("default").is_some() && truthy(opt.get("required")) {
            return Err(format!(
                "internal error: required and default are mutually exclusive for {}",
                opt.name
            ));
        }
        let Some(aliases) = opt.get("aliases") else { continue };
        let aliases = match aliases {
            Value::Seq(_) | Value::Map(_) => checks::py_iter(aliases).unwrap_or_default(),
            _ => return Err("internal error: aliases must be a list or tuple".into()),
        };
        for alias in aliases {
            let alias = py_str(&alias.value);
            match pairs.iter_mut().find(|(a, _)| *a == alias) {
                Some(pair) => pair.1 = opt.name.clone(),
                None => pairs.push((alias.clone(), opt.name.clone())),
            }
            if let Some(v) = lookup(params, &alias).cloned() {
                if has(params, &opt.name) {
                    both.push((opt.name.clone(), alias.clone()));
                }
                set(params, &opt.name, v);
            }
        }
    }
    Ok(pairs)
}

/// `_get_unsupported_parameters` with `store_supported`.
fn unsupported(
    spec: &[Opt<'_>],
    params: &mut Mapping,
    aliases: &[(String, String)],
    ctx: &Ctx,
    out: &mut Unsupported,
) -> Result<(), String> {
    let legal: Vec<&str> = aliases
        .iter()
        .map(|(a, _)| a.as_str())
        .chain(spec.iter().map(|o| o.name.as_str()))
        .collect();
    let names: Vec<String> = params.keys().map(|k| py_str(&k.value)).collect();
    let mut found = Vec::new();
    for name in names.iter().filter(|n| !legal.contains(&n.as_str())) {
        let again = handle_aliases(spec, params, &mut Vec::new())?;
        let mut supported: Vec<String> = legal
            .iter()
            .filter(|l| !again.iter().any(|(a, _)| a == *l))
            .map(|l| l.to_string())
            .collect();
        supported.sort();
        let mut alias_names: Vec<String> = again.into_iter().map(|(a, _)| a).collect();
        alias_names.sort();
        let flat = if ctx.is_empty() { name.clone() } else { format!("{}.{name}", ctx.join(".")) };
        found.push((flat, supported, alias_names));
    }
    out.found.extend(found);
    Ok(())
}

/// `_list_no_log_values`, kept only for the errors it raises on sub-option values.
fn no_log_errors(spec: &[Opt<'_>], params: &Mapping) -> Result<(), String> {
    for opt in spec {
        let Some(Value::Map(sub_spec)) = opt.get("options") else { continue };
        let Some(value) = lookup(params, &opt.name).filter(|v| !matches!(v.value, Value::Null))
        else {
            continue;
        };
        let wanted = opt.type_name();
        let dicts = wanted.as_deref() == Some("dict")
            || (wanted.as_deref() == Some("list")
                && opt.get("elements").map(py_str).as_deref() == Some("dict"));
        if !dicts {
            continue;
        }
        let items = match &value.value {
            Value::Seq(items) => items.clone(),
            _ => vec![value.clone()],
        };
        for item in items {
            let item = match &item.value {
                Value::Str(_) | Value::Unsafe(_) => Checker::Dict.check(&item)?,
                _ => item,
            };
            let Value::Map(m) = &item.value else {
                return Err(format!(
                    "Value '{}' in the sub parameter field '{}' must be a {}, not '{}'",
                    py_str(&item.value),
                    opt.name,
                    wanted.as_deref().unwrap_or_default(),
                    class_name(&item)
                ));
            };
            no_log_errors(&options(sub_spec), m)?;
        }
    }
    Ok(())
}

/// `_set_defaults`: absent options take their default (with `all`, `None` when they have
/// none).
fn set_defaults(spec: &[Opt<'_>], params: &mut Mapping, all: bool, marker: &Origin) {
    for opt in spec {
        if has(params, &opt.name) {
            continue;
        }
        match opt.spec.get("default").filter(|d| !matches!(d.value, Value::Null)) {
            Some(d) => set(params, &opt.name, tag(d, marker)),
            None if all => set(params, &opt.name, Node::bare(Value::Null)),
            None => {}
        }
    }
}

/// `' found in a -> b.'` as the type errors write it.
fn type_context(ctx: &Ctx) -> String {
    if ctx.is_empty() { String::new() } else { format!(" found in '{}'.", ctx.join(" -> ")) }
}

/// `_validate_argument_types` (with `_validate_elements`).
fn validate_types(spec: &[Opt<'_>], params: &mut Mapping, ctx: &Ctx, errors: &mut Vec<String>) {
    for opt in spec {
        let Some(value) = lookup(params, &opt.name).cloned() else { continue };
        if matches!(value.value, Value::Null)
            && !truthy(opt.get("required"))
            && opt.get("default").is_none()
        {
            continue;
        }
        let wanted = opt.type_name().unwrap_or_else(|| "str".into());
        let result = match Checker::named(&wanted) {
            Some(checker) => checker.check(&value),
            None => Err("'NoneType' object is not callable".into()),
        }
        .and_then(|converted| {
            set(params, &opt.name, converted.clone());
            let Some(elements) = opt.get("elements").filter(|e| e.is_truthy()) else {
                return Ok(());
            };
            if !matches!(converted.value, Value::Seq(_)) {
                errors.push(format!(
                    "Invalid type {wanted} for option '{}'{}, elements value check is supported \
                     only with 'list' type",
                    py_str(&converted.value),
                    type_context(ctx)
                ));
            }
            let items = checks::py_iter(&converted.value)
                .map_err(|_| format!("'{}' object is not iterable", class_name(&converted)))?;
            let elem_name = py_str(elements);
            let checker = Checker::named(&elem_name);
            let mut kept = Vec::new();
            for item in &items {
                let checked = match checker {
                    Some(c) => c.check(item),
                    None => Err("'NoneType' object is not callable".into()),
                };
                match checked {
                    Ok(v) => kept.push(v),
                    Err(e) => {
                        let at = if ctx.is_empty() {
                            String::new()
                        } else {
                            format!(" found in '{}'", ctx.join(" -> "))
                        };
                        errors.push(format!(
                            "Elements value for option '{}'{at} is of type {} and we were unable \
                             to convert to {elem_name}: {e}",
                            opt.name,
                            item.value.python_type()
                        ));
                    }
                }
            }
            set(params, &opt.name, Node::bare(Value::Seq(kept)));
            Ok(())
        });
        if let Err(e) = result {
            errors.push(format!(
                "argument '{}' is of type {}{} and we were unable to convert to {wanted}: {e}",
                opt.name,
                value.value.python_type(),
                type_context(ctx)
            ));
        }
    }
}

/// `_validate_argument_values`: `choices`.
fn validate_values(spec: &[Opt<'_>], params: &mut Mapping, ctx: &Ctx, errors: &mut Vec<String>) {
    for opt in spec {
        let Some(choices) = opt.get("choices") else { continue };
        let Value::Seq(choices) = choices else {
            errors.push(found_in(
                format!(
                    "internal error: choices for argument {} are not iterable: {}",
                    opt.name,
                    py_str(choices)
                ),
                ctx,
            ));
            continue;
        };
        let Some(value) = lookup(params, &opt.name).cloned() else { continue };
        let listed = choices.iter().map(|c| py_str(&c.value)).collect::<Vec<_>>().join(", ");
        let within = |v: &Value| choices.iter().any(|c| checks::py_eq(&c.value, v));
        if let Value::Seq(items) = &value.value {
            let bad: Vec<String> =
                items.iter().filter(|i| !within(&i.value)).map(|i| py_str(&i.value)).collect();
            if !bad.is_empty() {
                errors.push(found_in(
                    format!(
                        "value of {} must be one or more of: {listed}. Got no match for: {}",
                        opt.name,
                        bad.join(", ")
                    ),
                    ctx,
                ));
            }
            continue;
        }
        if within(&value.value) {
            continue;
        }
        let mut current = value;
        for (spelled, truth) in [("False", false), ("True", true)] {
            if !matches!(&current.value, Value::Str(s) if s == spelled) {
                continue;
            }
            let mut overlap: Vec<&Node> = Vec::new();
            for c in choices
                .iter()
                .filter(|c| tack_py::boolean::is_member(c.value.boolean_input(), truth))
            {
                if !overlap.iter().any(|o| checks::py_eq(&o.value, &c.value)) {
                    overlap.push(c);
                }
            }
            if let [only] = overlap.as_slice() {
                current = (*only).clone();
                set(params, &opt.name, current.clone());
            }
        }
        if !within(&current.value) {
            errors.push(found_in(
                format!(
                    "value of {} must be one of: {listed}, got: {}",
                    opt.name,
                    py_str(&current.value)
                ),
                ctx,
            ));
        }
    }
}

/// The rules a dict option sets for its sub-options, in ansible's `_ADDITIONAL_CHECKS` order.
fn additional_checks(opt: &Opt<'_>, params: &Mapping, ctx: &Ctx, errors: &mut Vec<String>) {
    let results = [
        checks::required_together(opt.get("required_together"), params, ctx),
        checks::required_one_of(opt.get("required_one_of"), params, ctx),
        checks::required_if(opt.get("required_if"), params, ctx),
        checks::required_by(opt.get("required_by"), params, ctx),
    ];
    errors.extend(results.into_iter().filter_map(Result::err));
}

struct Walk<'m> {
    errors: Vec<String>,
    warnings: Vec<String>,
    unsupported: Unsupported,
    marker: &'m Origin,
}

impl Walk<'_> {
    /// `_validate_sub_spec`.
    fn sub_specs(
        &mut self,
        spec: &[Opt<'_>],
        params: &mut Mapping,
        ctx: &mut Ctx,
        prefix: &str,
    ) -> Result<(), SpecError> {
        for opt in spec {
            let wanted = opt.type_name();
            let dicts = wanted.as_deref() == Some("dict")
                || (wanted.as_deref() == Some("list")
                    && opt.get("elements").map(py_str).as_deref() == Some("dict"));
            if !dicts {
                continue;
            }
            let sub_spec = match opt.get("options") {
                Some(Value::Map(m)) => Some(m),
                _ => None,
            };
            if truthy(opt.get("apply_defaults")) {
                if sub_spec.is_none() {
                    continue;
                }
                if !is_set(params, &opt.name) {
                    set(params, &opt.name, Node::bare(Value::Map(Mapping::new())));
                }
            } else if sub_spec.is_none() || !is_set(params, &opt.name) {
                continue;
            }
            let Some(sub_spec) = sub_spec else { continue };
            let sub = options(sub_spec);
            ctx.push(opt.name.clone());
            let value =
                lookup(params, &opt.name).cloned().unwrap_or_else(|| Node::bare(Value::Null));
            let (mut elements, is_list) = match value.value {
                Value::Seq(items) => (items, true),
                other => (vec![Node::new(other, value.origin)], false),
            };
            for (idx, element) in elements.iter_mut().enumerate() {
                set_fallbacks(&sub, element)?;
                let Value::Map(sub_params) = &mut element.value else {
                    self.errors.push(format!(
                        "value of '{}' must be of type dict or list of dicts",
                        opt.name
                    ));
                    continue;
                };
                let index = if is_list { format!("[{idx}]") } else { String::new() };
                let prefix = format!("{prefix}{}{index}.", opt.name);
                self.one(opt, &sub, sub_params, ctx, &prefix)?;
            }
            let rebuilt = if is_list {
                Value::Seq(elements)
            } else {
                elements.pop().map(|n| n.value).unwrap_or(Value::Null)
            };
            set(params, &opt.name, Node::new(rebuilt, value_origin(params, &opt.name)));
            ctx.pop();
        }
        Ok(())
    }

    /// One dictionary of sub-options, as the loop body of `_validate_sub_spec` checks it.
    fn one(
        &mut self,
        opt: &Opt<'_>,
        sub: &[Opt<'_>],
        params: &mut Mapping,
        ctx: &mut Ctx,
        prefix: &str,
    ) -> Result<(), SpecError> {
        let mut both = Vec::new();
        let aliases = match handle_aliases(sub, params, &mut both) {
            Ok(a) => a,
            Err(e) => {
                self.errors.push(e);
                Vec::new()
            }
        };
        for (option, alias) in both {
            self.warnings.push(format!(
                "Both option {prefix}{option} and its alias {prefix}{alias} are set."
            ));
        }
        if let Err(e) = no_log_errors(sub, params) {
            self.errors.push(e);
        }
        if let Err(e) = unsupported(sub, params, &aliases, ctx, &mut self.unsupported) {
            self.errors.push(e);
        }
        if let Err(e) = checks::mutually_exclusive(opt.get("mutually_exclusive"), params, ctx) {
            self.errors.push(e);
        }
        set_defaults(sub, params, false, self.marker);
        if let Err(e) = checks::required_arguments(sub, params, ctx) {
            self.errors.push(e);
        }
        validate_types(sub, params, ctx, &mut self.errors);
        validate_values(sub, params, ctx, &mut self.errors);
        additional_checks(opt, params, ctx, &mut self.errors);
        set_defaults(sub, params, true, self.marker);
        self.sub_specs(sub, params, ctx, prefix)
    }
}

fn value_origin(params: &Mapping, name: &str) -> Option<Origin> {
    lookup(params, name).and_then(|n| n.origin.clone())
}

/// What `ArgumentSpecValidator.__init__` raises while it lists the valid names: each
/// top-level option's truthy `aliases`, in sorted option order, is sorted and joined, which a
/// non-iterable value, or items that are no strings, cannot be.
fn alias_names(spec: &[Opt<'_>]) -> Result<(), SpecError> {
    let mut sorted: Vec<&Opt<'_>> = spec.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    for opt in sorted {
        let Some(aliases) = opt.spec.get("aliases") else { continue };
        if !aliases.value.is_truthy() {
            continue;
        }
        let items: Vec<&Node> = match &aliases.value {
            Value::Seq(items) => items.iter().collect(),
            Value::Map(m) => m.iter().map(|(k, _)| k).collect(),
            Value::Str(_) | Value::Unsafe(_) => continue,
            _ => {
                let class = class_name(aliases);
                return Err(SpecError::Raised(format!("'{class}' object is not iterable")));
            }
        };
        // Numbers of one kind sort, and the join fails on the first; mixed kinds fail in
        // the sort itself, at a pair that depends on the sort's order (not followed).
        let kind = |n: &Node| std::mem::discriminant(&n.value);
        if let Some(first) = items.first()
            && matches!(first.value, Value::Int(_) | Value::Float(_))
            && items.iter().all(|n| kind(n) == kind(first))
        {
            let class = class_name(first);
            return Err(SpecError::Raised(format!(
                "sequence item 0: expected str instance, {class} found"
            )));
        }
    }
    Ok(())
}

/// `set_fallbacks(spec, parameters)`: for each option, `fallback[0]` of its `fallback`
/// (`(None,)` when unset), then, when the option is not `in` the parameters, the strategy
/// called with the rest. Only Python code is callable, and a spec is data, so every strategy
/// that is reached raises; this finds Python's error in ansible's order (`parameters` may be
/// any value a sub-option's element holds: `in` on a string is a substring test).
fn set_fallbacks(spec: &[Opt<'_>], parameters: &Node) -> Result<(), SpecError> {
    let raised = |msg: String| Err(SpecError::Raised(msg));
    for opt in spec {
        let strategy: Option<(Node, Option<Node>)> = match opt.spec.get("fallback") {
            None => None,
            Some(fallback) => match &fallback.value {
                Value::Null => return raised("'NoneType' object is not subscriptable".into()),
                Value::Seq(items) => match items.first() {
                    None => return raised("list index out of range".into()),
                    Some(first) => {
                        let args = items[1..].iter().rfind(|i| !matches!(i.value, Value::Map(_)));
                        Some((first.clone(), args.cloned()))
                    }
                },
                Value::Str(text) | Value::Unsafe(text) => {
                    let mut chars = text.chars();
                    let Some(first) = chars.next() else {
                        return raised("string index out of range".into());
                    };
                    // A string's items are its characters, plain `str`s.
                    let first = Node::bare(Value::Str(first.to_string()));
                    let args = chars.last().map(|c| Node::bare(Value::Str(c.to_string())));
                    Some((first, args))
                }
                Value::Map(m) => {
                    let zero = m.iter().find(|(k, _)| {
                        matches!(k.value, Value::Int(0) | Value::Bool(false))
                            || matches!(k.value, Value::Float(f) if f == 0.0)
                    });
                    match zero {
                        None => return raised("0".into()),
                        // Python 3.12's slices are hashable: `fallback[1:]` is a `KeyError`.
                        Some((_, first)) => Some((first.clone(), None)),
                    }
                }
                _ => {
                    let class = class_name(fallback);
                    return raised(format!("'{class}' object is not subscriptable"));
                }
            },
        };
        let present = match &parameters.value {
            Value::Map(m) => has(m, &opt.name),
            Value::Seq(items) => items.iter().any(|i| match &i.value {
                Value::Str(s) | Value::Unsafe(s) => *s == opt.name,
                _ => false,
            }),
            Value::Str(s) | Value::Unsafe(s) => s.contains(opt.name.as_str()),
            _ => {
                let class = class_name(parameters);
                return raised(format!("argument of type '{class}' is not iterable"));
            }
        };
        let Some((strategy, args)) = strategy else { continue };
        if present || matches!(strategy.value, Value::Null) {
            continue;
        }
        if matches!(opt.spec.get("fallback").map(|f| &f.value), Some(Value::Map(_))) {
            return raised("slice(1, None, None)".into());
        }
        if let Some(args) = args
            && !matches!(
                args.value,
                Value::Seq(_) | Value::Map(_) | Value::Str(_) | Value::Unsafe(_)
            )
        {
            return raised(format!(
                "{} argument after * must be an iterable, not {}",
                py_str(&strategy.value),
                class_name(&args)
            ));
        }
        return raised(format!("'{}' object is not callable", class_name(&strategy)));
    }
    Ok(())
}

/// Validates `parameters` against `spec` as `ArgumentSpecValidator(spec).validate(parameters)`
/// does (no top-level `mutually_exclusive`/`required_*` rules: ansible's action passes only
/// the options).
pub fn validate(spec: &Mapping, parameters: &Mapping) -> Result<Outcome, SpecError> {
    check_spec(spec)?;
    let marker = Origin::described("<validated input>");
    let mut params = match tag(&Node::bare(Value::Map(parameters.clone())), &marker).value {
        Value::Map(m) => m,
        _ => Mapping::new(),
    };
    let opts = options(spec);
    alias_names(&opts)?;
    set_fallbacks(&opts, &Node::bare(Value::Map(params.clone())))?;
    let mut walk = Walk {
        errors: Vec::new(),
        warnings: Vec::new(),
        unsupported: Unsupported::default(),
        marker: &marker,
    };
    // The top level's warnings stay in ansible's validation result, which nothing shows.
    let aliases = match handle_aliases(&opts, &mut params, &mut Vec::new()) {
        Ok(a) => a,
        Err(e) => {
            walk.errors.push(e);
            Vec::new()
        }
    };
    if let Err(e) = no_log_errors(&opts, &params) {
        walk.errors.push(e);
    }
    if let Err(e) = unsupported(&opts, &mut params, &aliases, &Vec::new(), &mut walk.unsupported) {
        walk.errors.push(e);
    }
    set_defaults(&opts, &mut params, false, &marker);
    if let Err(e) = checks::required_arguments(&opts, &params, &Vec::new()) {
        walk.errors.push(e);
    }
    validate_types(&opts, &mut params, &Vec::new(), &mut walk.errors);
    validate_values(&opts, &mut params, &Vec::new(), &mut walk.errors);
    set_defaults(&opts, &mut params, true, &marker);
    walk.sub_specs(&opts, &mut params, &mut Vec::new(), "")?;
    if let Some(msg) = walk.unsupported.message() {
        walk.errors.push(msg);
    }
    Ok(Outcome { errors: walk.errors, warnings: walk.warnings, parameters: params })
}
