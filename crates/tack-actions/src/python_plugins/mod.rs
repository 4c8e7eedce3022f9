//! The controller's worker for template plugins written in Python (filter, test and lookup
//! plugins beside a playbook, in a role, or on the configured plugin paths): one process of
//! the run's ansible-core interpreter running our `worker.py`, which finds and calls the
//! plugins with ansible's own loaders. It is started once per run, only when the run's plugin
//! directories hold such plugins (at the run's start when there are filters or tests, whose
//! names the templar needs before it renders anything; at the first call when there are only
//! lookups), and ends with the run.
//!
//! Calls are serialised (one process, one conversation); a lookup reading a variable while
//! it runs is answered from the calling thread, and a plugin that variable's template uses
//! is a nested call on the same thread (the lock is re-entrant for that reason).
//!
//! Owns the process and the wire format; what a call means is the templar's
//! (`tack_template::python_plugins`).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::ReentrantMutex;
use serde_json::{Map, Value as Json, json};
use tack_template::python_plugins::{
    PluginCall, PluginFailure, PluginKind, PluginReply, PythonPlugins, VariableSource,
};
use tack_yaml::{Mapping, Node, Value};

/// Our worker script, after what every worker shares (`python_wire.py`).
const WORKER: &str = concat!(include_str!("../python_wire.py"), include_str!("worker.py"));

/// The plugin subdirectories a playbook or role directory holds, by family.
const SUBDIRS: [(&str, Family); 3] = [
    ("filter_plugins", Family::Jinja),
    ("test_plugins", Family::Jinja),
    ("lookup_plugins", Family::Lookup),
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Jinja,
    Lookup,
}

/// Where a run's Python template plugins are.
#[derive(Debug, Clone, Default)]
pub struct PluginPaths {
    /// Playbook and role directories, in the order ansible adds them: their
    /// `filter_plugins/`, `test_plugins/` and `lookup_plugins/` are searched.
    pub dirs: Vec<PathBuf>,
    /// The configured filter and test plugin paths (`DEFAULT_FILTER_PLUGIN_PATH`,
    /// `DEFAULT_TEST_PLUGIN_PATH`): searched after `dirs`.
    pub jinja: Vec<PathBuf>,
    /// The configured lookup plugin path (`DEFAULT_LOOKUP_PLUGIN_PATH`).
    pub lookup: Vec<PathBuf>,
    /// Where collections are found (`collections/` beside playbooks, `collections_path`):
    /// a collection's filters, tests and lookups are called by fully qualified name.
    pub collections: Vec<PathBuf>,
    /// The first playbook's directory: the base for a lookup's relative paths.
    pub basedir: PathBuf,
    /// The configuration file the run read, so the worker's ansible reads the same.
    pub config_file: Option<PathBuf>,
}

/// Why the run's Python plugins cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error(
        "the filter and test plugins in {dirs} need ansible-core on the controller to run \
         them: {why}"
    )]
    NoAnsibleCore { dirs: String, why: String },
    #[error("could not start {python} for the Python template plugins: {source}")]
    Spawn {
        python: String,
        #[source]
        source: std::io::Error,
    },
    #[error("loading the Python template plugins failed: {0}")]
    Setup(String),
}

/// The run's worker (see the module documentation).
pub struct PluginWorker {
    paths: PluginPaths,
    /// Lookup plugins by short name (their file names, as ansible names them).
    lookups: BTreeSet<String>,
    /// Filter and test names, once the worker has listed them.
    names: parking_lot::Mutex<Option<Names>>,
    process: ReentrantMutex<RefCell<Option<Result<Process, String>>>>,
}

#[derive(Debug, Clone, Default)]
struct Names {
    filter: Vec<String>,
    test: Vec<String>,
}

/// The worker's process (`crate::python_lines`).
type Process = crate::python_lines::Lines;

/// How long a worker gets to end by itself once its input closes.
const GRACE: std::time::Duration = std::time::Duration::from_secs(5);

impl PluginWorker {
    /// The worker for a run whose plugins are on `paths`. When there are filter or test
    /// plugins the worker starts now (the templar registers their
    /// names before it renders); without ansible-core on the controller that is an error.
    pub fn for_run(paths: PluginPaths) -> Result<Arc<PluginWorker>, WorkerError> {
        let mut jinja_files = Vec::new();
        let mut lookups = BTreeSet::new();
        for dir in &paths.dirs {
            for (sub, family) in SUBDIRS {
                let found = python_files(&dir.join(sub));
                match family {
                    Family::Jinja => jinja_files.extend(found),
                    Family::Lookup => lookups.extend(found.iter().filter_map(|p| stem(p))),
                }
            }
        }
        for dir in &paths.jinja {
            jinja_files.extend(python_files(dir));
        }
        for dir in &paths.lookup {
            lookups.extend(python_files(dir).iter().filter_map(|p| stem(p)));
        }
        // Without plugin files the worker still answers for collections' plugins (those the
        // run names and those on the interpreter's `sys.path`) and for names ansible-core
        // routes to them, starting at the first such call.
        let worker = PluginWorker {
            paths,
            lookups,
            names: parking_lot::Mutex::new(None),
            process: ReentrantMutex::new(RefCell::new(None)),
        };
        if !jinja_files.is_empty() {
            let Some(core) = crate::python_path::core() else {
                let mut dirs: Vec<String> = jinja_files
                    .iter()
                    .filter_map(|f| f.parent().map(|d| d.display().to_string()))
                    .collect();
                dirs.dedup();
                return Err(WorkerError::NoAnsibleCore {
                    dirs: dirs.join(", "),
                    why: crate::python_path::why_not(),
                });
            };
            let names = worker.start(&core.python)?;
            *worker.names.lock() = Some(names);
        }
        Ok(Arc::new(worker))
    }

    /// Starts the process, hands it the plugin directories and reads the names it found.
    fn start(&self, python: &Path) -> Result<Names, WorkerError> {
        let guard = self.process.lock();
        let mut command =
            crate::python_path::worker_command(python, WORKER, self.paths.config_file.as_deref());
        let spawn_error =
            |source| WorkerError::Spawn { python: python.display().to_string(), source };
        let mut process =
            Process::spawn(&mut command, "the Python plugin worker", GRACE).map_err(spawn_error)?;
        let dirs: Vec<String> = self.paths.dirs.iter().map(|d| d.display().to_string()).collect();
        let roots: Vec<String> =
            self.paths.collections.iter().map(|d| d.display().to_string()).collect();
        let setup = json!({
            "dirs": dirs,
            "collections": roots,
            "basedir": self.paths.basedir.display().to_string(),
        });
        process.send(&setup).map_err(WorkerError::Setup)?;
        let reply = process.receive().map_err(WorkerError::Setup)?;
        if let Some(fatal) = reply.get("fatal").and_then(Json::as_str) {
            return Err(WorkerError::Setup(fatal.to_string()));
        }
        let list = |kind: &str| -> Vec<String> {
            reply["names"][kind]
                .as_array()
                .map(|names| names.iter().filter_map(Json::as_str).map(str::to_string).collect())
                .unwrap_or_default()
        };
        let names = Names { filter: list("filter"), test: list("test") };
        *guard.borrow_mut() = Some(Ok(process));
        Ok(names)
    }

    /// Makes sure the process runs (a run with only lookups, or only collections, starts it
    /// at the first call).
    fn ensure_started(&self) -> Result<(), String> {
        let guard = self.process.lock();
        if let Some(state) = &*guard.borrow() {
            return state.as_ref().map(|_| ()).map_err(Clone::clone);
        }
        let result = match crate::python_path::core() {
            Some(core) => self.start(&core.python).map(|_| ()).map_err(|e| e.to_string()),
            None => Err(format!(
                "Python template plugins need ansible-core on the controller to run them: {}",
                crate::python_path::why_not()
            )),
        };
        if let Err(why) = &result {
            *guard.borrow_mut() = Some(Err(why.clone()));
        }
        result
    }

    fn exchange(
        &self,
        request: &Json,
        vars: &dyn VariableSource,
    ) -> Result<Map<String, Json>, String> {
        let guard = self.process.lock();
        let with = |f: &mut dyn FnMut(&mut Process) -> Result<(), String>| -> Result<(), String> {
            match &mut *guard.borrow_mut() {
                Some(Ok(process)) => f(process),
                Some(Err(why)) => Err(why.clone()),
                None => Err("the Python plugin worker is not running".to_string()),
            }
        };
        with(&mut |p| p.send(request))?;
        loop {
            let mut message = Map::new();
            with(&mut |p| {
                message = p.receive()?;
                Ok(())
            })?;
            // Answering may render a template that calls a plugin again on this thread: the
            // process is not borrowed meanwhile.
            let answer = match message.get("op").and_then(Json::as_str) {
                Some("var") => {
                    let name = message.get("name").and_then(Json::as_str).unwrap_or_default();
                    match vars.get(name) {
                        None => json!({ "op": "value", "missing": true }),
                        Some(Ok(value)) => {
                            // A user's variable goes with its `!unsafe` strings marked: the
                            // worker trusts the others as templates, as ansible's loaded
                            // values are.
                            let trusted = vars.trusted(name);
                            let wire = if trusted { to_wire_kept(&value) } else { to_wire(&value) };
                            let mut answer = json!({ "op": "value", "value": wire });
                            if trusted {
                                answer["trusted"] = Json::Bool(true);
                            }
                            // The worker tags the value as ansible's is, so that using it
                            // (not only reading it) raises the deprecation.
                            if let Some((message, removed_in, help)) = vars.deprecation(name) {
                                answer["deprecated"] = json!({
                                    "msg": message, "version": removed_in, "help": help,
                                });
                            }
                            answer
                        }
                        Some(Err(why)) => json!({ "op": "value", "error": why }),
                    }
                }
                Some("names") => json!({ "op": "value", "names": vars.names() }),
                _ => return Ok(message),
            };
            with(&mut |p| p.send(&answer))?;
        }
    }
}

impl PythonPlugins for PluginWorker {
    fn jinja_names(&self, kind: PluginKind) -> Vec<String> {
        let names = self.names.lock();
        let Some(names) = &*names else { return Vec::new() };
        match kind {
            PluginKind::Filter => names.filter.clone(),
            PluginKind::Test => names.test.clone(),
            PluginKind::Lookup => Vec::new(),
        }
    }

    fn has_lookup(&self, short_name: &str) -> bool {
        self.lookups.contains(short_name)
    }

    fn call(
        &self,
        call: PluginCall<'_>,
        vars: &dyn VariableSource,
    ) -> Result<PluginReply, PluginFailure> {
        if let Err(why) = self.ensure_started() {
            // A name that is none of the run's own plugin files is, without ansible-core,
            // one no plugin provides (as ansible says when the collection is missing).
            let own = match call.kind {
                PluginKind::Lookup => self.lookups.contains(call.name),
                kind => self.jinja_names(kind).iter().any(|n| n == call.name),
            };
            return Err(if own { PluginFailure::Final(why) } else { PluginFailure::Missing });
        }
        let kwargs: Map<String, Json> =
            call.kwargs.iter().map(|(k, v)| (k.clone(), to_wire(v))).collect();
        let request = json!({
            "op": "call",
            "kind": call.kind.as_str(),
            "name": call.name,
            "args": call.args.iter().map(to_wire).collect::<Vec<_>>(),
            "kwargs": kwargs,
        });
        let reply = self.exchange(&request, vars).map_err(PluginFailure::Final)?;
        let text =
            |key: &str| reply.get(key).and_then(Json::as_str).unwrap_or_default().to_string();
        match reply.get("op").and_then(Json::as_str) {
            Some("result") => {
                let deprecations = reply
                    .get("deprecations")
                    .and_then(Json::as_array)
                    .map(|d| d.iter().filter_map(deprecation).collect())
                    .unwrap_or_default();
                let value = from_wire(reply.get("value").unwrap_or(&Json::Null));
                Ok(PluginReply { value, deprecations })
            }
            Some("error") if reply.get("final").and_then(Json::as_bool) == Some(false) => {
                Err(PluginFailure::Raised(text("message")))
            }
            Some("error") => Err(PluginFailure::Final(text("message"))),
            Some("missing") => Err(PluginFailure::Missing),
            Some("undefined") => Err(PluginFailure::UsedUndefined(
                reply.get("id").and_then(Json::as_i64).unwrap_or(-1),
            )),
            _ => Err(PluginFailure::Final(format!(
                "the Python plugin worker answered {}",
                Json::Object(reply.clone())
            ))),
        }
    }
}

/// The `.py` files under `dir` that ansible would load as plugins (not `_`-prefixed), its
/// subdirectories included as ansible's loader walks them.
fn python_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if name != "__pycache__" {
                out.extend(python_files(&path));
            }
        } else if name.ends_with(".py") && !name.starts_with('_') {
            out.push(path);
        }
    }
    out
}

fn stem(path: &Path) -> Option<String> {
    path.file_stem().and_then(|s| s.to_str()).map(str::to_string)
}

/// A value as the worker reads it: JSON, with what JSON cannot say wrapped.
/// [`to_wire`], with a string's trust and a vaulted value's ciphertext kept: what a worker
/// that trusts plain strings as templates (as ansible trusts what it loaded) reads.
pub(crate) fn to_wire_kept(value: &Value) -> Json {
    match value {
        Value::Unsafe(text) => json!({ "__tack__": "unsafe", "text": text }),
        Value::Vault(ciphertext) => json!({ "__tack__": "vault", "ciphertext": ciphertext }),
        Value::Seq(items) => Json::Array(items.iter().map(|n| to_wire_kept(&n.value)).collect()),
        Value::Map(map) if map.iter().all(|(k, _)| k.as_str().is_some_and(|k| k != "__tack__")) => {
            Json::Object(
                map.iter()
                    .filter_map(|(k, v)| Some((k.as_str()?.to_string(), to_wire_kept(&v.value))))
                    .collect(),
            )
        }
        other => to_wire(other),
    }
}

/// [`to_wire_kept`], with where each string was written (ansible's `Origin` tag, which the
/// worker puts back on it): the arguments an action plugin is handed, whose messages point
/// at them as ansible's do.
pub(crate) fn to_wire_placed(node: &Node) -> Json {
    let origin = |node: &Node| node.origin.as_ref().map(origin_to_wire);
    match &node.value {
        Value::Str(text) => match origin(node) {
            Some(at) => json!({ "__tack__": "str", "text": text, "origin": at }),
            None => Json::String(text.clone()),
        },
        Value::Unsafe(text) => match origin(node) {
            Some(at) => json!({ "__tack__": "unsafe", "text": text, "origin": at }),
            None => json!({ "__tack__": "unsafe", "text": text }),
        },
        Value::Seq(items) => Json::Array(items.iter().map(to_wire_placed).collect()),
        Value::Map(map) if map.iter().all(|(k, _)| k.as_str().is_some_and(|k| k != "__tack__")) => {
            Json::Object(
                map.iter()
                    .filter_map(|(k, v)| Some((k.as_str()?.to_string(), to_wire_placed(v))))
                    .collect(),
            )
        }
        other => to_wire_kept(other),
    }
}

/// An `Origin` as the worker makes ansible's again: its path, line and column (0: unknown),
/// or its description.
fn origin_to_wire(origin: &tack_diag::Origin) -> Json {
    json!({
        "path": origin.path.as_ref().map(|p| p.to_string_lossy().into_owned()),
        "description": origin.description.as_deref(),
        "line": origin.line,
        "col": origin.col,
    })
}

pub(crate) fn to_wire(value: &Value) -> Json {
    if let Some(number) = tack_template::python_plugins::undefined_placeholder(value) {
        return json!({ "__tack__": "undefined", "id": number });
    }
    match value {
        Value::Null => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        Value::BigInt(digits) => json!({ "__tack__": "int", "digits": digits }),
        Value::Float(f) if f.is_finite() => Json::from(*f),
        Value::Float(f) => json!({ "__tack__": "float", "repr": float_repr(*f) }),
        Value::Str(s) | Value::Unsafe(s) | Value::Vault(s) => Json::String(s.clone()),
        Value::Timestamp(t) => timestamp_to_wire(t),
        Value::Bytes(data) => {
            use base64::Engine as _;
            let text = base64::engine::general_purpose::STANDARD.encode(data);
            json!({ "__tack__": "bytes", "base64": text })
        }
        Value::Seq(items) => Json::Array(items.iter().map(|n| to_wire(&n.value)).collect()),
        Value::Map(map) => {
            let text_key = |k: &Node| match &k.value {
                Value::Str(s) | Value::Unsafe(s) if s != "__tack__" => Some(s.clone()),
                _ => None,
            };
            if map.iter().all(|(k, _)| text_key(k).is_some()) {
                Json::Object(
                    map.iter()
                        .filter_map(|(k, v)| Some((text_key(k)?, to_wire(&v.value))))
                        .collect(),
                )
            } else {
                let items: Vec<Json> = map
                    .iter()
                    .map(|(k, v)| json!([to_wire(&k.value), to_wire(&v.value)]))
                    .collect();
                json!({ "__tack__": "map", "items": items })
            }
        }
    }
}

fn float_repr(f: f64) -> &'static str {
    if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// A YAML timestamp as the worker makes it a Python `date` or `datetime` again.
fn timestamp_to_wire(t: &tack_yaml::Timestamp) -> Json {
    match &t.time {
        None => json!({ "__tack__": "date", "year": t.year, "month": t.month, "day": t.day }),
        Some(time) => json!({
            "__tack__": "datetime",
            "year": t.year, "month": t.month, "day": t.day,
            "hour": time.hour, "minute": time.minute, "second": time.second,
            "microsecond": time.microsecond, "utc_offset_minutes": time.utc_offset_minutes,
        }),
    }
}

/// A Python `date` or `datetime` the worker sent, as the YAML timestamp tack keeps.
fn timestamp_from_wire(map: &Map<String, Json>) -> Value {
    let int = |key: &str| map.get(key).and_then(Json::as_i64).unwrap_or(0);
    let small = |key: &str| u8::try_from(int(key)).unwrap_or(0);
    let time = (map.get("__tack__").and_then(Json::as_str) == Some("datetime")).then(|| {
        tack_yaml::TimeOfDay {
            hour: small("hour"),
            minute: small("minute"),
            second: small("second"),
            microsecond: u32::try_from(int("microsecond")).unwrap_or(0),
            utc_offset_minutes: map
                .get("utc_offset_minutes")
                .and_then(Json::as_i64)
                .and_then(|m| i32::try_from(m).ok()),
        }
    });
    Value::Timestamp(tack_yaml::Timestamp {
        year: i32::try_from(int("year")).unwrap_or(1),
        month: small("month"),
        day: small("day"),
        time,
    })
}

/// A value the worker sent back.
pub(crate) fn from_wire(json: &Json) -> Value {
    match json {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::BigInt(u.to_string()),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::Str(s.clone()),
        Json::Array(items) => Value::Seq(items.iter().map(|j| Node::bare(from_wire(j))).collect()),
        Json::Object(map) => match map.get("__tack__").and_then(Json::as_str) {
            Some("int") => {
                Value::BigInt(map.get("digits").and_then(Json::as_str).unwrap_or("0").to_string())
            }
            Some("float") => Value::Float(match map.get("repr").and_then(Json::as_str) {
                Some("inf") => f64::INFINITY,
                Some("-inf") => f64::NEG_INFINITY,
                _ => f64::NAN,
            }),
            Some("date" | "datetime") => timestamp_from_wire(map),
            Some("undefined") => {
                let mut out = Mapping::new();
                let key = tack_template::python_plugins::undefined_placeholder_key().to_string();
                let number = map.get("id").and_then(Json::as_i64).unwrap_or(-1);
                out.insert(Node::bare(Value::Str(key)), Node::bare(Value::Int(number)));
                Value::Map(out)
            }
            Some(_) => {
                let mut out = Mapping::new();
                let pairs = map.get("items").and_then(Json::as_array).into_iter().flatten();
                for pair in pairs.filter_map(Json::as_array) {
                    if let [key, value] = pair.as_slice() {
                        out.insert(Node::bare(from_wire(key)), Node::bare(from_wire(value)));
                    }
                }
                Value::Map(out)
            }
            None => {
                let mut out = Mapping::new();
                for (k, v) in map {
                    out.insert(Node::bare(Value::Str(k.clone())), Node::bare(from_wire(v)));
                }
                Value::Map(out)
            }
        },
    }
}

/// One of ansible-core's deprecations a call raised, as the worker sends it (`{"msg",
/// "version", "help", "context"}`).
fn deprecation(sent: &Json) -> Option<tack_template::python_plugins::RaisedDeprecation> {
    Some(tack_template::python_plugins::RaisedDeprecation {
        message: sent.get("msg")?.as_str()?.to_string(),
        removed_in: sent.get("version")?.as_str()?.to_string(),
        help: sent.get("help").and_then(Json::as_str).map(str::to_string),
        context: sent.get("context").and_then(Json::as_str).map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_what_json_cannot_say() {
        let text = "{1: a, b: [.nan, 123456789012345678901234567890, null, true]}";
        let node = tack_yaml::load_one(text, None).unwrap();
        let wire = to_wire(&node.value);
        assert_eq!(wire["__tack__"], "map");
        let back = from_wire(&wire);
        assert_eq!(tack_yaml::pyrepr::repr(&back), tack_yaml::pyrepr::repr(&node.value));
    }
}
