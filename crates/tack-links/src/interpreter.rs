//! ansible's Python interpreter discovery (`interpreter_python: auto`, its default): before
//! the first module a host runs without `ansible_python_interpreter` (and whenever its facts
//! no longer hold `discovered_interpreter_python`), the host is asked which of the
//! `INTERPRETER_PYTHON_FALLBACK` names it has, and the first found is its interpreter.
//!
//! tack's native modules need no interpreter; discovery runs for what ansible shows of it:
//! the warning naming the interpreter (carried by the result that discovered it, as
//! ansible's is), the `discovered_interpreter_python` fact added to the result that
//! discovered it, and the interpreter the Python path then runs modules with. The probe is
//! ansible's own shell line, over the host's link.
//!
//! Owns the probe and its reading; where a result's facts go is the executor's.

use tack_connect::Connection;

use crate::trace::{Trace, Use};

/// The fact ansible keeps the discovered interpreter in.
pub const FACT: &str = "discovered_interpreter_python";

/// ansible's answer when nothing is found, or the probe cannot be read.
const FALLBACK: &str = "/usr/bin/python3";

/// What the configuration says about discovery.
#[derive(Debug, Clone, Default)]
pub struct InterpreterSettings {
    /// `INTERPRETER_PYTHON`: `auto` (the default), `auto_silent`, ... or a path. Empty:
    /// no discovery at all (a run the binary did not configure, as in tests).
    pub mode: String,
    /// `INTERPRETER_PYTHON_FALLBACK`: the names tried, in order.
    pub fallback: Vec<String>,
}

impl InterpreterSettings {
    /// Whether the configuration asks for discovery (rather than naming a path).
    pub fn discovers(&self) -> bool {
        self.mode.starts_with("auto")
    }

    fn silent(&self) -> bool {
        self.mode.ends_with("_silent")
    }
}

/// The values of `ansible_python_interpreter` (or `interpreter_python`) that ask for
/// discovery rather than name a path.
const DISCOVERY_MODES: &[&str] = &["auto", "auto_legacy", "auto_silent", "auto_legacy_silent"];

/// The settings for `scope`'s host: its `ansible_python_interpreter` is the setting's
/// variable, so a host that sets it to `auto_silent` discovers silently and one that names a
/// path discovers nothing. The variable is rendered first (`"{{ 'auto' }}"` discovers; one
/// that renders to `omit` is unset).
pub fn for_host(
    templar: &tack_template::Templar,
    scope: &tack_template::Scope,
    settings: &InterpreterSettings,
) -> InterpreterSettings {
    let Some(binding) = scope.get("ansible_python_interpreter") else { return settings.clone() };
    let rendered = match templar.render(binding.node(), scope) {
        Ok(rendered) => Some(rendered.value.value),
        Err(e) if e.is_omitted() => return settings.clone(),
        // A template that fails is the module's error to report where the path is used.
        Err(_) => None,
    };
    let mode = match rendered {
        Some(tack_yaml::Value::Str(text)) if DISCOVERY_MODES.contains(&text.as_str()) => text,
        // A path: nothing to discover (the mode only has to be one that does not).
        _ => "/".to_string(),
    };
    InterpreterSettings { mode, fallback: settings.fallback.clone() }
}

/// The interpreter `scope`'s host names when it discovers none ([`for_host`] says whether):
/// its `ansible_python_interpreter` rendered, else the configured `interpreter_python` path;
/// `None` when neither names one (a template that fails, a run the binary did not configure).
pub fn named(
    templar: &tack_template::Templar,
    scope: &tack_template::Scope,
    settings: &InterpreterSettings,
) -> Option<String> {
    if let Some(binding) = scope.get("ansible_python_interpreter") {
        return match templar.render(binding.node(), scope) {
            Ok(rendered) => match rendered.value.value {
                tack_yaml::Value::Str(text) if !is_discovery_mode(&text) => Some(text),
                _ => None,
            },
            Err(e) if e.is_omitted() => named_by(settings),
            Err(_) => None,
        };
    }
    named_by(settings)
}

fn named_by(settings: &InterpreterSettings) -> Option<String> {
    (!settings.discovers() && !settings.mode.is_empty()).then(|| settings.mode.clone())
}

/// Whether `value` (an `ansible_python_interpreter`) asks for discovery.
pub fn is_discovery_mode(value: &str) -> bool {
    DISCOVERY_MODES.contains(&value)
}

/// The interpreter `scope`'s host has discovered before, as its facts hold it.
pub fn known(scope: &tack_template::Scope) -> Option<tack_yaml::Node> {
    let facts = scope.get("ansible_facts")?;
    facts.node().as_map()?.get(FACT).cloned()
}

/// The names discovery tries for `scope`'s host: `ansible_interpreter_python_fallback`, else
/// the configured list.
pub fn names(scope: &tack_template::Scope, settings: &InterpreterSettings) -> Vec<String> {
    match scope.get("ansible_interpreter_python_fallback") {
        Some(binding) => match &binding.node().value {
            tack_yaml::Value::Seq(items) => {
                items.iter().map(|n| tack_yaml::pyrepr::str(&n.value)).collect()
            }
            other => vec![tack_yaml::pyrepr::str(other)],
        },
        None => settings.fallback.clone(),
    }
}

/// ansible's `discover_interpreter`: the first interpreter `conn`'s host has of `names`
/// (`command -v` for each, between `FOUND` and `ENDFOUND`), else `/usr/bin/python3`, with
/// ansible's warnings unless the mode is silent. `host` is the inventory name the warnings
/// and the `-vvv` note give.
pub fn discover(
    conn: &dyn Connection,
    trace: &Trace,
    host: &str,
    settings: &InterpreterSettings,
    names: &[String],
) -> Discovery {
    let mut warnings = Vec::new();
    trace.record(
        crate::trace::Reach::Local,
        Use::Step(format!("<{host}> Attempting python interpreter discovery.")),
    );
    let probes: Vec<String> = names.iter().map(|n| format!("command -v '{n}'")).collect();
    let script = format!("echo FOUND; {}; echo ENDFOUND", probes.join("; "));
    let read = conn.exec_command(&script, std::path::Path::new("/")).map_err(|e| e.to_string());
    let found = read.and_then(|out| {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let inner = text
            .strip_prefix("FOUND")
            .and_then(|rest| rest.find("ENDFOUND").map(|end| rest[..end].to_string()))
            .ok_or_else(|| "unexpected output from Python interpreter discovery".to_string())?;
        Ok(inner.lines().filter(|l| l.starts_with('/')).map(|l| l.trim().to_string()).collect())
    });
    let path = match found {
        Ok(found) => {
            let found: Vec<String> = found;
            match found.into_iter().next() {
                Some(first) => first,
                None => {
                    if !settings.silent() {
                        let tried = tack_py::repr::str_list_repr(names);
                        warnings.push(format!(
                            "No python interpreters found for host {} (tried {tried}).",
                            tack_py::repr::str_repr(host)
                        ));
                    }
                    return Discovery { path: FALLBACK.to_string(), warnings };
                }
            }
        }
        Err(why) => {
            if !settings.silent() {
                warnings.push(format!(
                    "Unhandled error in Python interpreter discovery for host {}: {why}",
                    tack_py::repr::str_repr(host)
                ));
            }
            FALLBACK.to_string()
        }
    };
    if !settings.silent() {
        warnings.push(format!(
            "Host {} is using the discovered Python interpreter at {}, but future installation \
             of another Python interpreter could cause a different interpreter to be \
             discovered.",
            tack_py::repr::str_repr(host),
            tack_py::repr::str_repr(&path)
        ));
    }
    Discovery { path, warnings }
}

/// What discovery found: the interpreter, and ansible's warnings about it, which the result
/// that discovered it carries (shown with it, registered with it).
#[derive(Debug, Clone)]
pub struct Discovery {
    pub path: String,
    pub warnings: Vec<String>,
}
