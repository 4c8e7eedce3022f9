//! A fact cache plugin written in Python (`fact_caching` naming one tack has no native code
//! for: a collection's, or one in a `cache_plugins/` directory), run by ansible-core's own
//! cache loader in one worker process of the controller's ansible-core for the whole run. The
//! loader wraps a persistent plugin as ansible's does (schema-prefixed keys, values in the
//! cache-persistence JSON profile), so what the plugin stores is what ansible's run would.
//!
//! Owns the process and the wire format; the facts' profile text is the engine's
//! (`tack_engine`'s fact cache), which calls [`PythonCache`] for each host it reads, merges
//! or forgets.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value as Json, json};
use tack_diag::Diagnostic;

/// Our worker script, after what every worker shares (`python_wire.py`).
const WORKER: &str = concat!(include_str!("../python_wire.py"), include_str!("worker.py"));

/// What the worker is started with.
#[derive(Debug, Clone, Default)]
pub struct CacheSetup {
    /// The plugin's name as configured (`fact_caching`).
    pub plugin: String,
    pub collections: Vec<PathBuf>,
    /// `cache_plugins/` directories beside the playbooks (the configured path is ansible's
    /// own to read).
    pub plugin_dirs: Vec<PathBuf>,
    pub config_file: Option<PathBuf>,
    pub verbosity: u8,
    /// The interpreter with ansible-core to run it with; the run's when `None`.
    pub python: Option<PathBuf>,
}

/// Why the plugin cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// ansible's own words for a plugin it cannot load (it then warns and keeps the facts in
    /// memory).
    #[error("{0}")]
    CannotLoad(String),
    #[error("the '{plugin}' cache plugin needs ansible-core on the controller to run it: {why}")]
    NoAnsibleCore { plugin: String, why: String },
    #[error("could not start {python} for the '{plugin}' cache plugin: {source}")]
    Spawn {
        plugin: String,
        python: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the '{plugin}' cache plugin's worker failed: {why}")]
    Worker { plugin: String, why: String },
}

/// The running plugin.
pub struct PythonCache {
    plugin: String,
    /// One call at a time: the worker answers in order.
    worker: Mutex<crate::python_lines::Lines>,
}

impl PythonCache {
    /// Starts the worker and loads the plugin.
    pub fn start(setup: &CacheSetup) -> Result<PythonCache, CacheError> {
        let plugin = setup.plugin.clone();
        let python = match (&setup.python, crate::python_path::core()) {
            (Some(python), _) => python.clone(),
            (None, Some(core)) => core.python.clone(),
            (None, None) => {
                let why = crate::python_path::why_not();
                return Err(CacheError::NoAnsibleCore { plugin, why });
            }
        };
        let mut command =
            crate::python_path::worker_command(&python, WORKER, setup.config_file.as_deref());
        let grace = std::time::Duration::from_secs(5);
        let mut worker = crate::python_lines::Lines::spawn(&mut command, "the cache worker", grace)
            .map_err(|source| CacheError::Spawn {
                plugin: plugin.clone(),
                python: python.display().to_string(),
                source,
            })?;
        let paths = |dirs: &[PathBuf]| -> Vec<String> {
            dirs.iter().map(|d| d.display().to_string()).collect()
        };
        let request = json!({
            "plugin": setup.plugin,
            "collections": paths(&setup.collections),
            "plugin_dirs": paths(&setup.plugin_dirs),
            "verbosity": setup.verbosity,
        });
        let failed = |why: String| CacheError::Worker { plugin: plugin.clone(), why };
        worker.send(&request).map_err(failed)?;
        let reply = worker.receive().map_err(failed)?;
        let text = |key: &str| reply.get(key).and_then(Json::as_str).map(str::to_string);
        if let Some(message) = text("failed") {
            return Err(CacheError::CannotLoad(message));
        }
        if let Some(fatal) = text("fatal") {
            return Err(failed(format!("ansible-core could not be loaded: {fatal}")));
        }
        Ok(PythonCache { plugin, worker: Mutex::new(worker) })
    }

    /// The host's facts in the cache-persistence profile's text, `None` when it has none.
    pub fn get(&self, host: &str) -> Result<Option<String>, Diagnostic> {
        let reply = self.call(json!({"op": "get", "host": host}))?;
        if reply.get("missing").is_some() {
            return Ok(None);
        }
        match reply.get("facts").and_then(Json::as_str) {
            Some(facts) => Ok(Some(facts.to_string())),
            None => Err(self.unexpected(&reply)),
        }
    }

    pub fn set(&self, host: &str, facts: &str) -> Result<(), Diagnostic> {
        self.call(json!({"op": "set", "host": host, "facts": facts})).map(drop)
    }

    pub fn delete(&self, host: &str) -> Result<(), Diagnostic> {
        self.call(json!({"op": "delete", "host": host})).map(drop)
    }

    /// One call and its answer; what the plugin raised is its error, in ansible's words.
    fn call(&self, request: Json) -> Result<Map<String, Json>, Diagnostic> {
        let mut worker = self.worker.lock().unwrap_or_else(PoisonError::into_inner);
        let reply = worker.send(&request).and_then(|()| worker.receive()).map_err(|why| {
            Diagnostic::new(format!("the '{}' cache plugin's worker failed: {why}", self.plugin))
        })?;
        match reply.get("error").and_then(Json::as_str) {
            Some(error) => Err(Diagnostic::new(error)),
            None => Ok(reply),
        }
    }

    fn unexpected(&self, reply: &Map<String, Json>) -> Diagnostic {
        Diagnostic::new(format!(
            "the '{}' cache plugin's worker answered {}",
            self.plugin,
            Json::Object(reply.clone())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ansible-core as the test command installs it.
    fn setup(plugin: &str) -> CacheSetup {
        let python = PathBuf::from("/opt/ansible-ref/bin/python");
        CacheSetup { plugin: plugin.into(), python: Some(python), ..CacheSetup::default() }
    }

    #[test]
    fn an_unknown_plugin_is_ansibles_load_error() {
        match PythonCache::start(&setup("no_such_cache")) {
            Err(CacheError::CannotLoad(why)) => {
                assert_eq!(why, "Unable to load the cache plugin 'no_such_cache'.");
            }
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("it loaded"),
        }
    }

    #[test]
    fn ansibles_memory_plugin_keeps_what_it_was_given() {
        let cache = match PythonCache::start(&setup("ansible.builtin.memory")) {
            Ok(cache) => cache,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(cache.get("h1").unwrap(), None);
        cache.set("h1", r#"{"a": 1}"#).unwrap();
        assert_eq!(cache.get("h1").unwrap().as_deref(), Some(r#"{"a": 1}"#));
        cache.delete("h1").unwrap();
        assert_eq!(cache.get("h1").unwrap(), None);
    }
}
