//! Module argument handling as ansible's `AnsibleModule` does it: an argument spec per module,
//! alias resolution, defaults, type conversion, choices and the cross-option checks, failing
//! with ansible's own messages in ansible's order (the first error found is the one reported).
//!
//! This owns only the validation of the argument dictionary; what a module does with its
//! options, and the result dictionary, are the module's.

use serde_json::{Map, Value};

use super::pyfmt::{py_repr, py_str};

/// The types `AnsibleModule` converts option values to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Str,
    Bool,
    Int,
    Float,
    Path,
    /// A list, a string being split on commas; elements converted to the inner kind.
    List(Option<Elem>),
    Dict,
    Raw,
}

/// Element types of `type='list'` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    Str,
    Path,
    Int,
    Bool,
    Float,
    Dict,
    Raw,
}

impl Elem {
    fn kind(self) -> Kind {
        match self {
            Elem::Str => Kind::Str,
            Elem::Path => Kind::Path,
            Elem::Int => Kind::Int,
            Elem::Bool => Kind::Bool,
            Elem::Float => Kind::Float,
            Elem::Dict => Kind::Dict,
            Elem::Raw => Kind::Raw,
        }
    }
}

/// One option of a module's argument spec.
#[derive(Debug, Clone)]
pub struct Opt {
    pub name: &'static str,
    pub kind: Kind,
    pub aliases: &'static [&'static str],
    pub default: Option<Value>,
    pub required: bool,
    pub choices: Vec<Value>,
    pub no_log: bool,
    /// `fallback=(env_fallback, [...])`: environment variables read when the option is absent.
    pub env_fallback: &'static [&'static str],
}

impl Opt {
    pub fn new(name: &'static str, kind: Kind) -> Self {
        Opt {
            name,
            kind,
            aliases: &[],
            default: None,
            required: false,
            choices: Vec::new(),
            no_log: false,
            env_fallback: &[],
        }
    }
    pub fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
    pub fn default(mut self, value: impl Into<Value>) -> Self {
        self.default = Some(value.into());
        self
    }
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }
    pub fn choices(mut self, choices: &[&str]) -> Self {
        self.choices = choices.iter().map(|c| Value::from(*c)).collect();
        self
    }
    /// Choices that are not all strings (as a spec written in JSON may give).
    pub fn choice_values(mut self, choices: Vec<Value>) -> Self {
        self.choices = choices;
        self
    }
    pub fn env_fallback(mut self, vars: &'static [&'static str]) -> Self {
        self.env_fallback = vars;
        self
    }
    pub fn no_log(mut self) -> Self {
        self.no_log = true;
        self
    }
}

/// `required_if` rule: when `key` equals `value`, `needs` must be present (any one of them
/// when `any`).
#[derive(Debug, Clone)]
pub struct RequiredIf {
    pub key: &'static str,
    pub value: Value,
    pub needs: &'static [&'static str],
    pub any: bool,
}

/// A module's whole argument spec.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    pub options: Vec<Opt>,
    pub mutually_exclusive: &'static [&'static [&'static str]],
    pub required_one_of: &'static [&'static [&'static str]],
    pub required_together: &'static [&'static [&'static str]],
    pub required_if: Vec<RequiredIf>,
}

/// The file options every file-handling module shares (`add_file_common_args=True`).
pub fn file_common() -> Vec<Opt> {
    vec![
        Opt::new("mode", Kind::Raw),
        Opt::new("owner", Kind::Str),
        Opt::new("group", Kind::Str),
        Opt::new("seuser", Kind::Str),
        Opt::new("serole", Kind::Str),
        Opt::new("selevel", Kind::Str),
        Opt::new("setype", Kind::Str),
        Opt::new("attributes", Kind::Str).aliases(&["attr"]),
        Opt::new("unsafe_writes", Kind::Bool)
            .default(false)
            .env_fallback(&["ANSIBLE_UNSAFE_WRITES"]),
    ]
}

/// Validated parameters: every spec option present (absent ones as `null`), converted.
#[derive(Debug, Clone, Default)]
pub struct Params {
    pub values: Map<String, Value>,
    /// Values of `no_log` options, to be masked wherever they would appear in a result.
    pub no_log_values: Vec<String>,
}

impl Params {
    pub fn get(&self, name: &str) -> &Value {
        self.values.get(name).unwrap_or(&Value::Null)
    }
    pub fn str(&self, name: &str) -> Option<&str> {
        self.values.get(name).and_then(Value::as_str)
    }
    pub fn bool(&self, name: &str) -> bool {
        self.values.get(name).and_then(Value::as_bool).unwrap_or(false)
    }
    pub fn is_set(&self, name: &str) -> bool {
        !self.get(name).is_null()
    }
}

/// ansible's `check_type_bool`: `boolean(value, strict=True)` for a string or number.
pub fn to_bool(value: &Value) -> Result<bool, String> {
    if let Value::Array(_) | Value::Object(_) | Value::Null = value {
        return Err(format!("{} cannot be converted to a bool", class_name(value)));
    }
    tack_py::boolean::strict(super::pyfmt::boolean_input(value))
        .ok_or_else(|| tack_py::boolean::invalid_message(&py_str(value)))
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

fn class_name(value: &Value) -> String {
    format!("<class '{}'>", type_name(value))
}

fn to_str(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        other => py_str(other),
    }
}

/// `os.path.expanduser(os.path.expandvars(value))`, with the one copy of Python's rules
/// (`tack_py::path`) against the running task's environment over this process's.
pub fn expand_path(value: &str) -> String {
    let env = super::environment::current();
    expand_path_in(value, &super::environment::TaskEnv(&env))
}

/// [`expand_path`] against `env` (a task's environment over the agent's).
pub fn expand_path_in(value: &str, env: &dyn tack_py::path::Environ) -> String {
    use tack_py::path::{expanduser, expandvars};
    let vars = expandvars(std::path::Path::new(value), env);
    expanduser(&vars, env).to_string_lossy().into_owned()
}

fn to_int(value: &Value) -> Result<Value, String> {
    let fail = || format!("\"{}\" cannot be converted to an int", py_repr(value));
    match value {
        Value::Bool(_) => Ok(value.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(value.clone()),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.0e18 => Ok(Value::from(f as i64)),
            _ => Err(fail()),
        },
        Value::String(s) => {
            let t = s.trim();
            if let Ok(i) = t.replace('_', "").parse::<i64>()
                && !t.starts_with('_')
                && !t.ends_with('_')
            {
                return Ok(Value::from(i));
            }
            match t.parse::<f64>() {
                Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e18 => {
                    Ok(Value::from(f as i64))
                }
                _ => Err(fail()),
            }
        }
        _ => Err(fail()),
    }
}

fn to_float(value: &Value) -> Result<Value, String> {
    match value {
        Value::Number(n) if n.is_f64() => Ok(value.clone()),
        Value::Number(n) => Ok(Value::from(n.as_f64().unwrap_or(0.0))),
        Value::Bool(b) => Ok(Value::from(if *b { 1.0 } else { 0.0 })),
        Value::String(s) => s
            .trim()
            .parse::<f64>()
            .map(Value::from)
            .map_err(|_| format!("{} cannot be converted to a float", class_name(value))),
        _ => Err(format!("{} cannot be converted to a float", class_name(value))),
    }
}

/// `check_type_dict`'s `key=value` splitting of an already stripped text: fields separated by
/// commas or spaces outside quotes, backslash escaping the next character, quotes dropped.
pub fn kv_fields(text: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut buf = String::new();
    let mut quote: Option<char> = None;
    let mut escape = false;
    for c in text.chars() {
        if escape {
            buf.push(c);
            escape = false;
        } else if c == '\\' {
            escape = true;
        } else if quote.is_none() && (c == '\'' || c == '"') {
            quote = Some(c);
        } else if quote == Some(c) {
            quote = None;
        } else if quote.is_none() && (c == ',' || c == ' ') {
            if !buf.is_empty() {
                fields.push(std::mem::take(&mut buf));
            }
        } else {
            buf.push(c);
        }
    }
    if !buf.is_empty() {
        fields.push(buf);
    }
    fields
}

fn to_dict(value: &Value) -> Result<Value, String> {
    match value {
        Value::Object(_) => Ok(value.clone()),
        Value::String(s) if s.starts_with('{') => serde_json::from_str::<Value>(s)
            .ok()
            .or_else(|| super::pylit::literal_eval(s))
            .filter(Value::is_object)
            .ok_or_else(|| "unable to evaluate string as dictionary".to_string()),
        Value::String(s) if s.contains('=') => {
            let fields = kv_fields(s.trim());
            let mut map = Map::new();
            for field in fields {
                let Some((k, v)) = field.split_once('=') else {
                    return Err(
                        "unable to evaluate string in the \"key=value\" format as dictionary"
                            .to_string(),
                    );
                };
                map.insert(k.to_string(), Value::from(v));
            }
            Ok(Value::Object(map))
        }
        Value::String(_) => Err("dictionary requested, could not parse JSON or key=value".into()),
        _ => Err(format!("{} cannot be converted to a dict", class_name(value))),
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Str => "str",
        Kind::Bool => "bool",
        Kind::Int => "int",
        Kind::Float => "float",
        Kind::Path => "path",
        Kind::List(_) => "list",
        Kind::Dict => "dict",
        Kind::Raw => "raw",
    }
}

fn convert(kind: Kind, value: &Value) -> Result<Value, String> {
    match kind {
        Kind::Str => Ok(Value::from(to_str(value))),
        Kind::Path => Ok(Value::from(expand_path(&to_str(value)))),
        Kind::Bool => to_bool(value).map(Value::from),
        Kind::Int => to_int(value),
        Kind::Float => to_float(value),
        Kind::Dict => to_dict(value),
        Kind::Raw => Ok(value.clone()),
        Kind::List(_) => match value {
            Value::Array(_) => Ok(value.clone()),
            Value::String(s) => Ok(Value::Array(s.split(',').map(Value::from).collect())),
            Value::Number(_) => Ok(Value::Array(vec![Value::from(py_str(value))])),
            _ => Err(format!("{} cannot be converted to a list", class_name(value))),
        },
    }
}

fn sorted_join(mut names: Vec<&str>) -> String {
    names.sort_unstable();
    names.join(", ")
}

/// Validates `args` against `spec` as `AnsibleModule(...)` would; `Err` is the `msg` of the
/// failure result. `module` is the name the unsupported-parameters message shows. Warnings
/// (an option given with its alias too) and `no_log` values are kept for [`finish`].
pub fn validate(module: &str, spec: &Spec, args: &Map<String, Value>) -> Result<Params, String> {
    let mut params: Map<String, Value> = args
        .iter()
        .filter(|(k, _)| !k.starts_with("_ansible_"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut errors: Vec<String> = Vec::new();
    let mut unsupported_error = None;
    let mut warnings = Vec::new();

    for opt in spec.options.iter().filter(|o| !o.env_fallback.is_empty()) {
        if params.contains_key(opt.name) {
            continue;
        }
        if let Some(v) = opt.env_fallback.iter().find_map(|var| super::environment::var(var)) {
            params.insert(opt.name.to_string(), Value::from(v));
        }
    }
    for opt in &spec.options {
        for alias in opt.aliases {
            if let Some(v) = params.get(*alias).cloned() {
                if params.contains_key(opt.name) {
                    warnings
                        .push(format!("Both option {} and its alias {alias} are set.", opt.name));
                }
                params.insert(opt.name.to_string(), v);
            }
        }
    }
    let mut no_log_values = Vec::new();
    for opt in spec.options.iter().filter(|o| o.no_log) {
        if let Some(v) = params.get(opt.name) {
            datastructure_strings(v, &mut no_log_values);
        }
    }
    let legal = |k: &str| spec.options.iter().any(|o| o.name == k || o.aliases.contains(&k));
    // ansible's `_ansible_ignore_unknown_opts` (an action plugin's `ignore_unknown_opts`):
    // what the module does not know is left out instead of refused.
    if args.get("_ansible_ignore_unknown_opts").is_some_and(|v| v.as_bool() == Some(true)) {
        params.retain(|k, _| legal(k));
    }
    let mut unsupported: Vec<&str> =
        params.keys().map(String::as_str).filter(|k| !legal(k)).collect();
    if !unsupported.is_empty() {
        unsupported.sort_unstable();
        let mut supported = sorted_join(spec.options.iter().map(|o| o.name).collect());
        let aliases: Vec<&str> =
            spec.options.iter().flat_map(|o| o.aliases.iter().copied()).collect();
        if !aliases.is_empty() {
            supported.push_str(&format!(" ({})", sorted_join(aliases)));
        }
        unsupported_error =
            Some(format!("{}. Supported parameters include: {supported}.", unsupported.join(", ")));
    }
    let exclusive: Vec<String> = spec
        .mutually_exclusive
        .iter()
        .filter(|group| group.iter().filter(|k| params.contains_key(**k)).count() > 1)
        .map(|group| group.join("|"))
        .collect();
    if !exclusive.is_empty() {
        errors.push(format!("parameters are mutually exclusive: {}", exclusive.join(", ")));
    }
    for opt in &spec.options {
        if let Some(d) = &opt.default
            && !params.contains_key(opt.name)
            && !d.is_null()
        {
            if opt.no_log {
                datastructure_strings(d, &mut no_log_values);
            }
            params.insert(opt.name.to_string(), d.clone());
        }
    }
    let missing: Vec<&str> = spec
        .options
        .iter()
        .filter(|o| o.required && !params.contains_key(o.name))
        .map(|o| o.name)
        .collect();
    if !missing.is_empty() {
        errors.push(format!("missing required arguments: {}", sorted_join(missing)));
    }
    for opt in &spec.options {
        let Some(value) = params.get(opt.name).cloned() else { continue };
        if value.is_null() && !opt.required && opt.default.is_none() {
            continue;
        }
        match convert(opt.kind, &value) {
            Ok(converted) => {
                let converted = match (opt.kind, converted) {
                    (Kind::List(Some(elem)), Value::Array(items)) => {
                        let mut out = Vec::new();
                        for item in &items {
                            match convert(elem.kind(), item) {
                                Ok(v) => out.push(v),
                                Err(e) => {
                                    errors.push(format!(
                                        "Elements value for option '{}' is of type {} and we were unable to convert to {}: {e}",
                                        opt.name,
                                        type_name(item),
                                        kind_name(elem.kind())
                                    ));
                                }
                            }
                        }
                        Value::Array(out)
                    }
                    (_, c) => c,
                };
                params.insert(opt.name.to_string(), converted);
            }
            Err(e) => errors.push(format!(
                "argument '{}' is of type {} and we were unable to convert to {}: {e}",
                opt.name,
                type_name(&value),
                kind_name(opt.kind)
            )),
        }
    }
    for opt in spec.options.iter().filter(|o| !o.choices.is_empty()) {
        let Some(value) = params.get(opt.name).cloned() else { continue };
        let choices = opt.choices.iter().map(py_str).collect::<Vec<_>>().join(", ");
        let has = |v: &Value| opt.choices.iter().any(|c| py_eq(c, v));
        match &value {
            Value::Array(items) => {
                let bad: Vec<String> = items.iter().filter(|i| !has(i)).map(py_str).collect();
                if !bad.is_empty() {
                    errors.push(format!(
                        "value of {} must be one or more of: {choices}. Got no match for: {}",
                        opt.name,
                        bad.join(", ")
                    ));
                }
            }
            other if !has(other) => {
                // PyYAML turned `yes`/`no` into booleans; ansible maps them back when only one
                // of the choices can be meant.
                let truth = match other.as_str() {
                    Some("False") => Some(false),
                    Some("True") => Some(true),
                    _ => None,
                };
                let overlap: Vec<&Value> = match truth {
                    Some(truth) => opt
                        .choices
                        .iter()
                        .filter(|c| {
                            tack_py::boolean::is_member(super::pyfmt::boolean_input(c), truth)
                        })
                        .collect(),
                    None => Vec::new(),
                };
                if overlap.len() == 1 {
                    params.insert(opt.name.to_string(), overlap[0].clone());
                } else {
                    errors.push(format!(
                        "value of {} must be one of: {choices}, got: {}",
                        opt.name,
                        py_str(other)
                    ));
                }
            }
            _ => {}
        }
    }
    for group in spec.required_together {
        let n = group.iter().filter(|k| params.contains_key(**k)).count();
        if n > 0 && n < group.len() {
            errors.push(format!("parameters are required together: {}", group.join(", ")));
            break;
        }
    }
    for group in spec.required_one_of {
        if !group.iter().any(|k| params.contains_key(*k)) {
            errors.push(format!("one of the following is required: {}", group.join(", ")));
            break;
        }
    }
    for rule in &spec.required_if {
        if !params.get(rule.key).is_some_and(|v| py_eq(v, &rule.value)) {
            continue;
        }
        let missing: Vec<&str> =
            rule.needs.iter().copied().filter(|k| !params.contains_key(*k)).collect();
        let threshold = if rule.any { rule.needs.len() } else { 1 };
        if !missing.is_empty() && missing.len() >= threshold {
            errors.push(format!(
                "{} is {} but {} of the following are missing: {}",
                rule.key,
                py_str(&rule.value),
                if rule.any { "any" } else { "all" },
                missing.join(", ")
            ));
            break;
        }
    }
    // ansible's validator goes on past an error, so what a failed module reports as its
    // `invocation` has every option too.
    for opt in &spec.options {
        if !params.contains_key(opt.name) {
            params.insert(opt.name.to_string(), opt.default.clone().unwrap_or(Value::Null));
        }
    }
    RUN.with(|r| {
        let mut r = r.borrow_mut();
        r.params = Some(params.clone());
        r.no_log.extend(no_log_values.iter().cloned());
    });
    if let Some(first) = errors.into_iter().next() {
        return Err(first);
    }
    if let Some(msg) = unsupported_error {
        return Err(format!("Unsupported parameters for ({module}) module: {msg}"));
    }
    RUN.with(|r| r.borrow_mut().warnings.extend(warnings));
    Ok(Params { values: params, no_log_values })
}

/// Python `==` between JSON values (numbers compare by value, `True == 1`).
fn py_eq(a: &Value, b: &Value) -> bool {
    let num = |v: &Value| match v {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    };
    match (num(a), num(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// `_return_datastructure_name`: every string (and number) inside a `no_log` value.
fn datastructure_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Number(_) => out.push(py_str(v)),
        Value::Array(items) => items.iter().for_each(|i| datastructure_strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| datastructure_strings(i, out)),
        _ => {}
    }
}

/// What validation leaves for the end of a module run.
#[derive(Default)]
struct RunState {
    warnings: Vec<String>,
    no_log: Vec<String>,
    /// ansible's `_ansible_inject_invocation`: the result gains `invocation`.
    inject_invocation: bool,
    /// The module's options as validated: its `invocation`'s `module_args`.
    params: Option<Map<String, Value>>,
}

thread_local! {
    // One module run at a time per thread: `run_module` clears this before the module and
    // consumes it after, so nothing leaks between runs.
    static RUN: std::cell::RefCell<RunState> = std::cell::RefCell::new(RunState::default());
}

/// Forgets what an earlier run left (called before a module runs with `args`).
pub fn begin(args: &Map<String, Value>) {
    let inject_invocation =
        args.get("_ansible_inject_invocation").is_some_and(|v| v.as_bool() == Some(true));
    RUN.with(|r| *r.borrow_mut() = RunState { inject_invocation, ..RunState::default() });
}

/// Finishes a result as `_return_formatted` does: validation warnings first among the
/// warnings, and every `no_log` value masked (booleans and nulls at the top kept).
pub fn finish(mut result: Map<String, Value>) -> Map<String, Value> {
    let state = RUN.with(|r| std::mem::take(&mut *r.borrow_mut()));
    // `_return_formatted`: the options as validated, unless the module said otherwise; a
    // module's own `invocation` is dropped when none was asked for. Masked below as the rest.
    if !state.inject_invocation {
        result.shift_remove("invocation");
    } else if !result.contains_key("invocation")
        && let Some(params) = state.params
    {
        let mut invocation = Map::new();
        invocation.insert("module_args".into(), Value::Object(params));
        result.insert("invocation".into(), Value::Object(invocation));
    }
    if !state.warnings.is_empty() {
        let mut list: Vec<Value> = state
            .warnings
            .iter()
            .map(|w| {
                serde_json::json!({"event": {"msg": w, "__ansible_type": "Event"}, "__ansible_type": "WarningSummary"})
            })
            .collect();
        if let Some(Value::Array(existing)) = result.shift_remove("warnings") {
            list.extend(existing);
        }
        result.insert("warnings".into(), Value::Array(list));
    }
    if state.no_log.is_empty() {
        return result;
    }
    result
        .into_iter()
        .map(|(k, v)| {
            let masked =
                if v.is_boolean() || v.is_null() { v } else { remove_values(&v, &state.no_log) };
            (k, masked)
        })
        .collect()
}

/// `remove_values`: a value equal to a secret becomes a placeholder, a secret inside a
/// string becomes `********`.
pub fn remove_values(v: &Value, secrets: &[String]) -> Value {
    match v {
        Value::String(s) => {
            if secrets.iter().any(|x| x == s) {
                return Value::from("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER");
            }
            let mut out = s.clone();
            for x in secrets {
                out = out.replace(x.as_str(), "********");
            }
            Value::from(out)
        }
        Value::Number(_) => {
            let text = py_str(v);
            if secrets.iter().any(|x| text.contains(x.as_str())) {
                Value::from("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER")
            } else {
                v.clone()
            }
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| remove_values(i, secrets)).collect())
        }
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, i)| (k.clone(), remove_values(i, secrets))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comma_strings_split_into_lists() {
        let spec =
            Spec { options: vec![Opt::new("xs", Kind::List(Some(Elem::Str)))], ..Spec::default() };
        let mut args = Map::new();
        args.insert("xs".into(), Value::from("a,b"));
        let params = validate("t", &spec, &args).map_err(|e| e.to_string());
        assert_eq!(params.map(|p| p.get("xs").clone()), Ok(serde_json::json!(["a", "b"])));
    }
}
