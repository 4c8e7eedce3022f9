//! The `config` lookup: a setting's resolved value (and, with `show_origin`, where it came
//! from), from the run's configuration.
//!
//! The configuration is tack-config's [`tack_config::Config`] (tack-config depends on no crate
//! that depends on this one, so there is no cycle). The binary installs the run's with
//! [`set_config`], as ansible's lookup reads its process-wide `C.config`; until one is
//! installed, the first `config` lookup resolves the configuration from the process's own
//! environment and working directory, as ansible would at start-up.

use std::sync::{Arc, OnceLock, RwLock};

use minijinja::value::Value as JValue;
use tack_config::{Config, Context, SettingValue};

use super::options::{boolean, choice, py_repr, py_str, string};
use super::{Call, Entry, LookupError};

pub(super) const LOOKUPS: &[Entry] = &[Entry::new("config", config)];

static INSTALLED: OnceLock<RwLock<Option<Arc<Config>>>> = OnceLock::new();

thread_local! {
    /// The deprecations reading settings raised, not reported yet (see
    /// [`take_pending_deprecations`]).
    static PENDING: std::cell::RefCell<Vec<tack_diag::Deprecated>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The deprecations the `config` lookup raised on this thread since the last call: reading a
/// deprecated setting the user set raises its deprecation again. ansible keeps them until the
/// next plugin sets its options and reports them as that plugin's (in a task, its connection
/// plugin, after the task's templates): the caller does the same.
pub fn take_pending_deprecations() -> Vec<tack_diag::Deprecated> {
    PENDING.with(|pending| std::mem::take(&mut *pending.borrow_mut()))
}

/// Installs the run's configuration for the `config` lookup.
pub fn set_config(config: Arc<Config>) {
    let slot = INSTALLED.get_or_init(|| RwLock::new(None));
    if let Ok(mut guard) = slot.write() {
        *guard = Some(config);
    }
}

/// A boolean setting of the run's configuration (false when it cannot be read): for the few
/// settings that change how templates are evaluated (`ALLOW_BROKEN_CONDITIONALS`).
pub fn flag(name: &str) -> bool {
    installed().ok().and_then(|c| c.get(name).and_then(|v| v.as_bool())).unwrap_or(false)
}

/// A list setting of the run's configuration, when it can be read (`FACTS_MODULES`, which
/// an action reads as its default).
pub fn string_list(name: &str) -> Option<Vec<String>> {
    let config = installed().ok()?;
    let list = config.get(name)?.as_str_list()?;
    Some(list.into_iter().map(str::to_string).collect())
}

pub(super) fn installed() -> Result<Arc<Config>, LookupError> {
    let slot = INSTALLED.get_or_init(|| RwLock::new(None));
    if let Some(config) = slot.read().ok().and_then(|g| g.clone()) {
        return Ok(config);
    }
    let ctx = Context::from_process().map_err(|e| LookupError::failed(e.to_string()))?;
    let config = Arc::new(Config::load(&ctx).map_err(|e| LookupError::failed(e.to_string()))?);
    set_config(config.clone());
    Ok(config)
}

/// A variable's value as a setting reads it (before its type's conversion); `None` for an
/// undefined one. Other kinds of value (a date, a vaulted string) are their text.
fn from_jinja(value: &JValue) -> Option<SettingValue> {
    use minijinja::value::ValueKind;
    Some(match value.kind() {
        ValueKind::Undefined => return None,
        ValueKind::None => SettingValue::Null,
        ValueKind::Bool => SettingValue::Bool(value.is_true()),
        ValueKind::Number => match i64::try_from(value.clone()) {
            Ok(i) => SettingValue::Int(i),
            Err(_) => SettingValue::Float(f64::try_from(value.clone()).unwrap_or(f64::NAN)),
        },
        ValueKind::Seq | ValueKind::Iterable => {
            let items = value.try_iter().ok()?;
            SettingValue::List(items.filter_map(|v| from_jinja(&v)).collect())
        }
        ValueKind::Map => {
            let keys = value.try_iter().ok()?;
            let mut out = Vec::new();
            for key in keys {
                let item = value.get_item(&key).ok()?;
                out.push((py_str(&key), from_jinja(&item)?));
            }
            SettingValue::Dict(out)
        }
        _ => SettingValue::Str(py_str(value)),
    })
}

fn to_jinja(value: &SettingValue) -> JValue {
    match value {
        SettingValue::Null => JValue::from(()),
        SettingValue::Bool(b) => JValue::from(*b),
        SettingValue::Int(i) => JValue::from(*i),
        SettingValue::Float(f) => JValue::from(*f),
        SettingValue::Str(s) => JValue::from(s.as_str()),
        SettingValue::List(items) => crate::value::new_list(items.iter().map(to_jinja).collect()),
        SettingValue::Dict(items) => crate::value::new_dict(
            items.iter().map(|(k, v)| (JValue::from(k.as_str()), to_jinja(v))).collect(),
        ),
    }
}

fn config(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let on_missing = call.kwarg("on_missing").map(string).unwrap_or_else(|| "error".into());
    choice("config", "on_missing", &on_missing, &["error", "warn", "skip"])?;
    let plugin_type = call.kwarg("plugin_type").filter(|v| !v.is_none()).map(string);
    let plugin_name = call.kwarg("plugin_name").filter(|v| !v.is_none()).map(string);
    let show_origin = call.kwarg("show_origin").is_some_and(|v| boolean(v, false));
    if plugin_type.is_some() != plugin_name.is_some() {
        return Err(LookupError::failed(
            "Both plugin_type and plugin_name are required, cannot use one without the other.",
        ));
    }
    // A lookup no plugin provides cannot be asked for its options (ansible loads it first).
    if let (Some("lookup"), Some(name)) = (plugin_type.as_deref(), plugin_name.as_deref())
        && super::find(name).is_none()
    {
        return Err(LookupError::failed(format!("Unable to load lookup plugin '{name}'.")));
    }
    let settings = installed()?;
    let mut out = Vec::new();
    for term in &call.terms {
        let Some(name) = term.as_str() else {
            return Err(LookupError::failed(format!(
                "Invalid setting identifier, {} is not a <class 'str'>, its a {}.",
                py_repr(term),
                crate::filters::pyval::class_repr(term)
            )));
        };
        // The task's variables override a setting one of its `vars:` entries names.
        let var = |var_name: &str| call.env.read(var_name).and_then(|v| from_jinja(&v));
        let plugin = plugin_type.as_deref().zip(plugin_name.as_deref());
        let found = match settings.resolve_with_vars(plugin, name, var) {
            Some(Ok(resolved)) => Some((resolved.value, resolved.origin.label())),
            Some(Err(e)) => return Err(LookupError::failed(e.to_string())),
            None => None,
        };
        let Some((value, origin)) = found else {
            let message =
                format!("No config definition exists for {}.", tack_yaml::pyrepr::str_repr(name));
            match on_missing.as_str() {
                "skip" => continue,
                "warn" => {
                    tack_diag::warn(&tack_diag::Diagnostic::new(format!(
                        "Skipping {name}: {message}"
                    )));
                    continue;
                }
                _ => return Err(LookupError::failed(message)),
            }
        };
        let plugin = plugin_type.as_deref().zip(plugin_name.as_deref());
        PENDING.with(|pending| {
            let raised = settings.deprecations_on_read(plugin, name);
            pending.borrow_mut().extend(raised.iter().filter_map(|n| n.deprecated()));
        });
        if show_origin {
            out.push(JValue::from(vec![to_jinja(&value), JValue::from(origin)]));
        } else {
            out.push(to_jinja(&value));
        }
    }
    Ok(out)
}
