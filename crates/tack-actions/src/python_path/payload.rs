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

use super::AnsibleCore;

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
}

static CACHE: Mutex<Option<HashMap<String, Arc<Payload>>>> = Mutex::new(None);

/// The payload for builtin module `name`, built on first use in the run.
pub(super) fn get(core: &AnsibleCore, name: &str) -> Result<Arc<Payload>, PayloadError> {
    // Holding the lock while building keeps two forks from building one module twice.
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = cache.get_or_insert_with(HashMap::new);
    if let Some(p) = cache.get(name) {
        return Ok(Arc::clone(p));
    }
    let payload = Arc::new(build(core, name)?);
    cache.insert(name.to_string(), Arc::clone(&payload));
    Ok(payload)
}

/// Builds `name`'s payload with `core`'s interpreter.
pub(super) fn build(core: &AnsibleCore, name: &str) -> Result<Payload, PayloadError> {
    let python = core.python.display().to_string();
    let mut child = Command::new(&core.python)
        .arg("-c")
        .arg(BUILDER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| PayloadError::Run { python: python.clone(), source })?;
    let names = Value::Array(vec![Value::String(name.to_string())]).to_string();
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(names.as_bytes())
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
    let answer: Value =
        serde_json::from_slice(&out.stdout).map_err(|e| PayloadError::Answer(e.to_string()))?;
    if let Some(why) = answer["errors"][name].as_str() {
        return Err(PayloadError::NoModule(why.to_string()));
    }
    let module = &answer["modules"][name];
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
        internal: answer["internal"].as_object().cloned().unwrap_or_default(),
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
        let one = build(&core, "getent").unwrap();
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
        let again = build(&core, "getent").unwrap();
        assert_eq!(again.hash, one.hash);
    }

    #[test]
    fn a_name_ansible_core_lacks_is_an_error() {
        let Some(core) = reference() else { return };
        let err = build(&core, "no_such_module").unwrap_err();
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
