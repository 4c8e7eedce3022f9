//! The payloads of a run: per module, the zip of its source and the closure of module_utils it
//! imports, built once per run by our `build_payload.py` (run with the run's ansible-core,
//! which walks the imports with ansible's own dependency finder) and named by the BLAKE3 hash
//! of its bytes. Also the `_ansible_*` argument defaults ansible's configuration gives, read
//! by the same script.
//!
//! Owns the run's payload cache; it never sees a task's arguments.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use base64::Engine;
use serde_json::{Map, Value};

use tack_playbook::ast::LibraryModule;

use super::{AnsibleCore, payload_cache};

const BUILDER: &str = include_str!("build_payload.py");

/// One module's payload.
#[derive(Debug)]
pub(super) struct Payload {
    /// BLAKE3 of `zip`, hex.
    pub hash: String,
    /// The module's import name inside the zip (`ansible.modules.getent`).
    pub fqn: String,
    /// ansible's serialization profile for the module.
    pub profile: String,
    pub zip: Vec<u8>,
    /// The `_ansible_*` arguments ansible's configuration sets the same for every task.
    pub internal: Map<String, Value>,
    /// How the host runs it.
    pub style: Style,
}

/// ansible's module styles, as far as tack runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    /// New-style Python: the zip, run by the host's Python server.
    Python,
    /// A program given its arguments as `key=value` words in a file (ansible's `old`).
    Old,
    /// A program given its arguments as JSON in a file (`WANT_JSON`).
    WantJson,
    /// A compiled program given its arguments as JSON in a file.
    Binary,
}

#[derive(Debug, thiserror::Error)]
pub(super) enum PayloadError {
    #[error("could not run {python} to build the payload: {source}")]
    Run {
        python: String,
        #[source]
        source: std::io::Error,
    },
    #[error("building the payload with {python} failed: {stderr}")]
    Failed { python: String, stderr: String },
    #[error("the payload builder's answer could not be read: {0}")]
    Answer(String),
    #[error("{0}")]
    NoModule(String),
    /// A library module that is not a new-style Python module (ansible's module styles).
    #[error("tack does not run a module of ansible's '{style}' style yet: {path}")]
    Style { path: String, style: String },
}

/// Which module a payload is for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source<'a> {
    /// ansible-core's module of this short name.
    Builtin(&'a str),
    Library(&'a LibraryModule),
}

impl Source<'_> {
    /// What the cache knows it by: a library module by its file and module_utils search.
    fn key(self) -> String {
        match self {
            Source::Builtin(name) => name.to_string(),
            Source::Library(m) => {
                let mut key = m.path.display().to_string();
                for dir in &m.utils {
                    key.push('\0');
                    key.push_str(&dir.display().to_string());
                }
                for root in m.collection.iter().flat_map(|c| &c.roots) {
                    key.push('\u{1}');
                    key.push_str(&root.display().to_string());
                }
                key
            }
        }
    }

    fn request(self) -> Value {
        match self {
            Source::Builtin(name) => serde_json::json!({ "name": name }),
            Source::Library(m) => serde_json::json!({
                "name": m.name,
                "path": m.path.display().to_string(),
                "utils": m.utils.iter().map(|d| d.display().to_string()).collect::<Vec<_>>(),
                "collections": m.collection.iter().flat_map(|c| &c.roots)
                    .map(|d| d.display().to_string()).collect::<Vec<_>>(),
            }),
        }
    }
}

static CACHE: Mutex<Option<HashMap<String, Arc<Payload>>>> = Mutex::new(None);

/// The payload for `source`, built on first use in the run.
pub(super) fn get(core: &AnsibleCore, source: Source<'_>) -> Result<Arc<Payload>, PayloadError> {
    // Holding the lock while building keeps two forks from building one module twice.
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    let key = source.key();
    if let Some(p) = cache.get(&key) {
        return Ok(Arc::clone(p));
    }
    let payload = super::bytecode::with_bytecode(Arc::new(build(core, source)?));
    cache.insert(key, Arc::clone(&payload));
    Ok(payload)
}

/// `source`'s payload: kept from an earlier run when nothing it was made from changed, else
/// built with `core`'s interpreter (and kept for the next run).
pub(super) fn build(core: &AnsibleCore, source: Source<'_>) -> Result<Payload, PayloadError> {
    build_kept_in(core, source, payload_cache::user_dir().as_deref())
}

/// [`build`] with the cache in `cache` (none: always built).
fn build_kept_in(
    core: &AnsibleCore,
    source: Source<'_>,
    cache: Option<&std::path::Path>,
) -> Result<Payload, PayloadError> {
    let request = source.request();
    let key = payload_cache::key(BUILDER, &core.python, &core.version, &request);
    if let Some(entry) = cache.and_then(|dir| payload_cache::load(dir, &key)) {
        let internal = entry["internal"].as_object().cloned().unwrap_or_default();
        // An entry that no longer reads as a payload is built afresh.
        if let Ok(payload) = from_answer(source, &entry["module"], internal) {
            return Ok(payload);
        }
    }
    let started = std::time::SystemTime::now();
    let answer = run_builder(core, &request)?;
    let module = &answer["modules"][0];
    let internal = answer["internal"].as_object().cloned().unwrap_or_default();
    let payload = from_answer(source, module, internal.clone())?;
    if let Some(dir) = cache {
        payload_cache::store(dir, &key, module, &internal, started);
    }
    Ok(payload)
}

/// ansible's whole AnsiballZ file of one task for `source` (its arguments and the builder's
/// `wrapper` inputs in `spec`), and the file's name: built every time, never kept.
pub(super) fn wrapper(
    core: &AnsibleCore,
    source: Source<'_>,
    spec: Value,
) -> Result<(Vec<u8>, String), PayloadError> {
    let mut request = source.request();
    request["wrapper"] = spec;
    let answer = run_builder(core, &request)?;
    let module = &answer["modules"][0];
    if let Some(why) = module["error"].as_str() {
        return Err(PayloadError::NoModule(why.to_string()));
    }
    let text =
        |key: &str| module[key].as_str().ok_or_else(|| PayloadError::Answer(format!("no {key}")));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text("wrapper")?)
        .map_err(|e| PayloadError::Answer(e.to_string()))?;
    Ok((bytes, text("file")?.to_string()))
}

/// Runs our builder with `core`'s interpreter for one request.
fn run_builder(core: &AnsibleCore, request: &Value) -> Result<Value, PayloadError> {
    let python = core.python.display().to_string();
    let mut child = Command::new(&core.python)
        .arg("-c")
        .arg(BUILDER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| PayloadError::Run { python: python.clone(), source })?;
    let requests = Value::Array(vec![request.clone()]).to_string();
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(requests.as_bytes())
            .map_err(|source| PayloadError::Run { python: python.clone(), source })?;
    }
    let out = child
        .wait_with_output()
        .map_err(|source| PayloadError::Run { python: python.clone(), source })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail = stderr.lines().rev().take(3).collect::<Vec<_>>();
        let stderr = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        return Err(PayloadError::Failed { python, stderr });
    }
    serde_json::from_slice(&out.stdout).map_err(|e| PayloadError::Answer(e.to_string()))
}

/// The payload the builder's answer for one module describes.
fn from_answer(
    source: Source<'_>,
    module: &Value,
    internal: Map<String, Value>,
) -> Result<Payload, PayloadError> {
    if let Some(why) = module["error"].as_str() {
        return Err(PayloadError::NoModule(why.to_string()));
    }
    if let Some(style) = module["style"].as_str() {
        let style = match style {
            "old" => Style::Old,
            "non_native_want_json" => Style::WantJson,
            "binary" => Style::Binary,
            other => {
                let path = match source {
                    Source::Library(m) => m.path.display().to_string(),
                    Source::Builtin(name) => name.to_string(),
                };
                return Err(PayloadError::Style { path, style: other.to_string() });
            }
        };
        // The program itself is what the host runs; it is read when the task runs.
        return Ok(Payload {
            hash: String::new(),
            fqn: String::new(),
            profile: "legacy".into(),
            zip: Vec::new(),
            internal,
            style,
        });
    }
    let text = |v: &Value, what: &str| {
        v.as_str().map(str::to_string).ok_or_else(|| PayloadError::Answer(format!("no {what}")))
    };
    let zip = base64::engine::general_purpose::STANDARD
        .decode(text(&module["zip"], "zip")?)
        .map_err(|e| PayloadError::Answer(e.to_string()))?;
    Ok(Payload {
        hash: blake3::hash(&zip).to_hex().to_string(),
        fqn: text(&module["fqn"], "fqn")?,
        profile: text(&module["profile"], "profile")?,
        zip,
        internal,
        style: Style::Python,
    })
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn reference() -> Option<AnsibleCore> {
        let python = std::path::PathBuf::from("/opt/ansible-ref/bin/python");
        if !python.exists() {
            eprintln!("no ansible-core at {}: not run", python.display());
            return None;
        }
        Some(AnsibleCore { python, version: "2.21.5".into() })
    }

    #[test]
    fn a_payload_holds_the_module_and_its_module_utils_and_is_named_by_its_bytes() {
        let Some(core) = reference() else { return };
        let one = build(&core, Source::Builtin("getent")).unwrap();
        assert_eq!(one.fqn, "ansible.modules.getent");
        assert_eq!(one.profile, "legacy");
        assert_eq!(one.hash, blake3::hash(&one.zip).to_hex().to_string());
        let names = zip_names(&one.zip);
        for want in [
            "ansible/modules/getent.py",
            "ansible/module_utils/basic.py",
            "ansible/module_utils/_internal/_ansiballz/_loader.py",
        ] {
            assert!(names.iter().any(|n| n == want), "{want} missing from {names:?}");
        }
        assert_eq!(one.internal["_ansible_syslog_facility"], "LOG_USER");
        // Built again, the same bytes: the name is stable across runs.
        let again = build(&core, Source::Builtin("getent")).unwrap();
        assert_eq!(again.hash, one.hash);
    }

    #[test]
    fn a_kept_payload_is_used_until_its_module_changes() {
        let Some(core) = reference() else { return };
        let tmp = tempfile::tempdir().unwrap();
        let cache = tmp.path().join("cache");
        let library = tmp.path().join("library");
        std::fs::create_dir(&library).unwrap();
        let path = library.join("hello.py");
        // Written in the past: a file younger than the settling time is never trusted.
        let write = |text: &str, age: u64| {
            std::fs::write(&path, text).unwrap();
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(age);
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(when).unwrap();
            // Its directory too: a file added next to it would have changed it.
            std::fs::File::open(&library).unwrap().set_modified(when).unwrap();
        };
        write(
            "from ansible.module_utils.basic import AnsibleModule\nAnsibleModule({}).exit_json(msg=1)\n",
            600,
        );
        let module = LibraryModule {
            name: "hello".into(),
            path: path.clone(),
            utils: Vec::new(),
            collection: None,
        };
        let first = build_kept_in(&core, Source::Library(&module), Some(&cache)).unwrap();
        let entries: Vec<_> =
            std::fs::read_dir(&cache).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(entries.len(), 1, "{entries:?}");
        // The entry is what the next build answers: marked here to show it was used.
        let mut entry: Value =
            serde_json::from_slice(&std::fs::read(&entries[0]).unwrap()).unwrap();
        entry["module"]["fqn"] = "kept.marker".into();
        std::fs::write(&entries[0], entry.to_string()).unwrap();
        let kept = build_kept_in(&core, Source::Library(&module), Some(&cache)).unwrap();
        assert_eq!((kept.fqn.as_str(), &kept.hash), ("kept.marker", &first.hash));
        // The module edited: built afresh, with the new source.
        write(
            "from ansible.module_utils.basic import AnsibleModule\nAnsibleModule({}).exit_json(msg=2)\n",
            300,
        );
        let edited = build_kept_in(&core, Source::Library(&module), Some(&cache)).unwrap();
        assert_ne!(edited.fqn, "kept.marker");
        assert_ne!(edited.hash, first.hash);
    }

    #[test]
    fn a_name_ansible_core_lacks_is_an_error() {
        let Some(core) = reference() else { return };
        let err = build(&core, Source::Builtin("no_such_module")).unwrap_err();
        assert!(matches!(err, PayloadError::NoModule(_)), "{err}");
    }

    /// The file names in a zip, read from its central directory.
    fn zip_names(zip: &[u8]) -> Vec<String> {
        let script = "import sys, zipfile, io\n\
                      z = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read()))\n\
                      print('\\n'.join(z.namelist()))";
        let mut child = Command::new("/opt/ansible-ref/bin/python")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(zip).unwrap();
        let mut text = String::new();
        child.stdout.take().unwrap().read_to_string(&mut text).unwrap();
        child.wait().unwrap();
        text.lines().map(str::to_string).collect()
    }
}
