//! ansible's fact cache (`fact_caching`): each host's facts as modules returned them (gathered
//! facts, `cacheable` `set_fact` values, what any module put under `ansible_facts`), merged
//! key by key as they come (`VariableManager.set_host_facts`). `memory` keeps them for the run;
//! `jsonfile` also keeps them in `<fact_caching_connection>/<prefix>s1_<host>` between runs,
//! read back while younger than `fact_caching_timeout` seconds, in ansible-core 2.21's format
//! (the plugin's `json.dumps` of `{"__payload__": <the facts as the cache-persistence JSON
//! profile writes them>}`), so tack and ansible can share a cache directory.
//!
//! One deliberate difference: ansible writes a decrypted vault value's plaintext into the file
//! beside its ciphertext; tack writes only the ciphertext (as ansible's `EncryptedString`,
//! which ansible reads back and decrypts where it is used), and reads a value ansible wrote
//! with its ciphertext back as that vault value, so no plaintext secret is kept on disk by
//! tack or reaches a run's output from the cache unsealed.
//!
//! This module owns the store and its files; how facts become variables is
//! `crate::vars::facts_layer`'s (whose layer it keeps beside the facts it was made from, so
//! each play starts from it without making it again), and when they change is the
//! executor's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

/// Where the cache keeps facts, as configured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FactCacheConfig {
    /// `fact_caching = memory` (the default): the run's own.
    #[default]
    Memory,
    /// `fact_caching = jsonfile`.
    JsonFile {
        /// `fact_caching_connection` (`~` and `$VARS` expanded by the caller), if set.
        dir: Option<PathBuf>,
        /// `fact_caching_prefix`.
        prefix: String,
        /// `fact_caching_timeout`: seconds a file stays fresh; 0 keeps it for ever.
        timeout: u64,
    },
}

/// The name ansible's messages give the `jsonfile` plugin.
const JSONFILE: &str = "jsonfile";

/// Characters that make ansible name a host's file by a hash instead (`_PATH_CHARS`).
const PATH_CHARS: [&str; 5] = ["/", "..", "<", ">", "|"];

/// The schema of ansible-core 2.21's cache-persistence profile, in every key (`s1_`).
const SCHEMA_PREFIX: &str = "s1_";

/// The key of the serialized facts in the plugin's file.
const PAYLOAD: &str = "__payload__";

/// A host's facts layer, with the facts it was made from.
type MadeLayer = (Arc<Mapping>, Arc<tack_template::Layer>);

/// The run's fact cache.
#[derive(Debug, Default)]
pub struct FactCache {
    files: Option<Files>,
    /// What was read or set this run; `None` for a host known to have no facts. Once read, a
    /// host's facts stay for the run even if its file expires meanwhile (as ansible's).
    held: Mutex<HashMap<String, Option<Arc<Mapping>>>>,
    /// Each host's facts layer and the facts it was made from.
    layers: Mutex<HashMap<String, MadeLayer>>,
}

#[derive(Debug)]
struct Files {
    dir: PathBuf,
    prefix: String,
    timeout: Duration,
    /// `tack plan` reads the files but changes none: what the run learns stays in memory.
    read_only: bool,
}

impl FactCache {
    /// The `memory` cache.
    pub fn memory() -> FactCache {
        FactCache::default()
    }

    /// The cache `config` asks for. A `jsonfile` cache without a usable directory is
    /// ansible's error, which ansible shows as a warning before it falls back to `memory`
    /// (the caller's to do, with [`FactCache::memory`]).
    pub fn open(config: &FactCacheConfig) -> Result<FactCache, Diagnostic> {
        FactCache::open_as(config, false)
    }

    /// [`FactCache::open`] reading the files but never writing or removing one, nor making
    /// the directory (`tack plan`: a plan changes nothing on the controller either; what it
    /// learns stays in memory).
    pub fn open_read_only(config: &FactCacheConfig) -> Result<FactCache, Diagnostic> {
        FactCache::open_as(config, true)
    }

    fn open_as(config: &FactCacheConfig, read_only: bool) -> Result<FactCache, Diagnostic> {
        let FactCacheConfig::JsonFile { dir, prefix, timeout } = config else {
            return Ok(FactCache::memory());
        };
        let Some(dir) = dir.as_ref().filter(|d| !d.as_os_str().is_empty()) else {
            return Err(Diagnostic::new(format!(
                "Required config '_uri' for '{JSONFILE}' cache plugin not provided."
            )));
        };
        if !dir.exists() && !read_only {
            make_dirs(dir).map_err(|(e, at)| {
                Diagnostic::caused_by(
                    format!(
                        "Error in '{JSONFILE}' cache plugin while trying to create cache dir {}.",
                        tack_py::repr::str_repr(&dir.to_string_lossy())
                    ),
                    None,
                    Diagnostic::new(tack_py::oserror::os_error(&e, &at)),
                )
            })?;
        } else if dir.exists() && !accessible(dir) {
            // ansible quotes the plugin's repr: `''jsonfile'' cache, ...`.
            return Err(Diagnostic::new(format!(
                "''{JSONFILE}'' cache, configured path ({}) does not have necessary \
                 permissions (rwx), disabling plugin",
                dir.display()
            )));
        }
        let files = Files {
            dir: dir.clone(),
            prefix: prefix.clone(),
            timeout: Duration::from_secs(*timeout),
            read_only,
        };
        Ok(FactCache { files: Some(files), held: Mutex::default(), layers: Mutex::default() })
    }

    /// `host`'s facts, if the cache has any (read from its file the first time).
    pub fn get(&self, host: &str) -> Result<Option<Arc<Mapping>>, Diagnostic> {
        if let Some(held) = self.lock().get(host) {
            return Ok(held.clone());
        }
        let read = match &self.files {
            Some(files) => files.read(host)?.map(Arc::new),
            None => None,
        };
        self.lock().insert(host.to_string(), read.clone());
        Ok(read)
    }

    /// Merges `facts` into `host`'s (newer keys win, the rest stay) and keeps the result;
    /// the merged facts are returned. A file that cannot be written is warned about, as
    /// ansible's plugin does, and the run's copy is kept all the same.
    pub fn merge(&self, host: &str, facts: &Mapping) -> Arc<Mapping> {
        let mut merged = match self.get(host) {
            Ok(Some(old)) => (*old).clone(),
            // A corrupt file was reported (and removed) where it was read; start afresh.
            _ => Mapping::new(),
        };
        for (key, value) in facts.iter() {
            merged.insert(key.clone(), value.clone());
        }
        let merged = Arc::new(merged);
        if let Some(files) = self.files.as_ref().filter(|f| !f.read_only) {
            files.write(host, &merged);
        }
        self.lock().insert(host.to_string(), Some(merged.clone()));
        merged
    }

    /// Forgets `host`'s facts, its file included (`meta: clear_facts`, `--flush-cache`).
    pub fn delete(&self, host: &str) {
        self.lock().insert(host.to_string(), None);
        if let Some(files) = self.files.as_ref().filter(|f| !f.read_only) {
            // ansible ignores a file that was not there, or could not be removed.
            let _ = std::fs::remove_file(files.path(host));
        }
    }

    /// The layer `make` makes of `facts` for `host`: the one made before when these very
    /// facts were (a play after the first starts every host from it), else a new one.
    pub(crate) fn layer(
        &self,
        host: &str,
        facts: &Arc<Mapping>,
        make: impl FnOnce(&Mapping) -> tack_template::Layer,
    ) -> Arc<tack_template::Layer> {
        let mut layers = self.layers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((made_from, layer)) = layers.get(host)
            && Arc::ptr_eq(made_from, facts)
        {
            return layer.clone();
        }
        let layer = Arc::new(make(facts));
        layers.insert(host.to_string(), (facts.clone(), layer.clone()));
        layer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<Arc<Mapping>>>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Files {
    /// `_get_cache_file_name`: the prefix and the host's name, or the first characters of
    /// its SHA-256 for a name that is not safe as a file name.
    fn path(&self, host: &str) -> PathBuf {
        let key = format!("{SCHEMA_PREFIX}{host}");
        let safe = if PATH_CHARS.iter().any(|c| key.contains(c)) {
            use sha2::Digest;
            let digest: String =
                sha2::Sha256::digest(key.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
            digest[..key.len().clamp(12, digest.len())].to_string()
        } else {
            key
        };
        self.dir.join(format!("{}{safe}", self.prefix))
    }

    fn read(&self, host: &str) -> Result<Option<Mapping>, Diagnostic> {
        if host.is_empty() {
            return Ok(None);
        }
        let path = self.path(host);
        if self.expired(&path) {
            return Ok(None);
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Diagnostic::caused_by(
                    format!(
                        "Error while accessing the cache file {}.",
                        tack_py::repr::str_repr(&path.to_string_lossy())
                    ),
                    None,
                    Diagnostic::new(tack_py::oserror::os_error(&e, &path)),
                ));
            }
        };
        match decode(&text) {
            Ok(facts) => Ok(Some(facts)),
            Err(why) => {
                tack_diag::warn(&Diagnostic::new(format!(
                    "error in '{JSONFILE}' cache plugin while trying to read {} : {}. Most \
                     likely a corrupt file, so erasing and failing.",
                    path.display(),
                    tack_py::repr::bytes_repr(why.as_bytes())
                )));
                if !self.read_only {
                    let _ = std::fs::remove_file(&path);
                }
                Err(Diagnostic::new(format!(
                    "The cache file {} was corrupt, or did not otherwise contain valid data. It \
                     has been removed, so you can re-run your command now.",
                    path.display()
                )))
            }
        }
    }

    /// Whether the file is older than the timeout (a missing file is not).
    fn expired(&self, path: &Path) -> bool {
        if self.timeout.is_zero() {
            return false;
        }
        let Ok(modified) = std::fs::metadata(path).and_then(|m| m.modified()) else {
            return false;
        };
        SystemTime::now().duration_since(modified).is_ok_and(|age| age > self.timeout)
    }

    /// Writes the host's facts through a temporary file renamed into place (readers never
    /// see half a file), mode 0644 as ansible leaves it.
    fn write(&self, host: &str, facts: &Mapping) {
        let path = self.path(host);
        let text = match encode(facts) {
            Ok(text) => text,
            Err(e) => {
                let what = format!(
                    "Error in '{JSONFILE}' cache plugin while trying to write the facts of {host}: {}",
                    e.0
                );
                tack_diag::warn(&Diagnostic::new(what));
                return;
            }
        };
        let tmp = self.dir.join(format!(".{}{}.{}.tmp", self.prefix, std::process::id(), unique()));
        let written = std::fs::write(&tmp, text)
            .and_then(|()| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o644))
            })
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            tack_diag::warn(&Diagnostic::new(format!(
                "Error in '{JSONFILE}' cache plugin while trying to move {} to {}: {e}",
                tack_py::repr::str_repr(&tmp.to_string_lossy()),
                tack_py::repr::str_repr(&path.to_string_lossy())
            )));
        }
    }
}

/// The file's text for `facts`: `{"__payload__": "<facts>"}`, the facts written as the
/// cache-persistence profile writes untagged values (plain JSON), a vault value as an
/// `EncryptedString` (its ciphertext only) and a date or time as ansible's serializable date.
fn encode(facts: &Mapping) -> Result<String, tack_yaml::JsonError> {
    let payload =
        tack_yaml::to_json(&profiled(&Node::bare(Value::Map(facts.clone()))), &compact())?;
    let mut outer = Mapping::new();
    outer.insert(Node::bare(Value::Str(PAYLOAD.into())), Node::bare(Value::Str(payload)));
    tack_yaml::to_json(&Node::bare(Value::Map(outer)), &compact())
}

fn compact() -> tack_yaml::JsonOptions {
    tack_yaml::JsonOptions::compact()
}

/// `value` with what plain JSON cannot say in the profile's typed objects.
fn profiled(node: &Node) -> Node {
    let typed = |fields: Vec<(&str, Value)>| {
        let mut map = Mapping::new();
        for (key, value) in fields {
            map.insert(Node::bare(Value::Str(key.into())), Node::bare(value));
        }
        Node::bare(Value::Map(map))
    };
    match &node.value {
        Value::Vault(ciphertext) => typed(vec![
            ("value", Value::Str(ciphertext.clone())),
            ("tags", Value::Seq(Vec::new())),
            ("__ansible_type", Value::Str("EncryptedString".into())),
        ]),
        Value::Timestamp(t) => {
            let kind = if t.time.is_some() {
                "AnsibleSerializableDateTime"
            } else {
                "AnsibleSerializableDate"
            };
            typed(vec![
                ("iso8601", Value::Str(tack_yaml::timestamp_isoformat(t))),
                ("__ansible_type", Value::Str(kind.into())),
            ])
        }
        Value::Unsafe(text) => Node::bare(Value::Str(text.clone())),
        Value::Seq(items) => Node::bare(Value::Seq(items.iter().map(profiled).collect())),
        Value::Map(map) => {
            let mut out = Mapping::new();
            for (k, v) in map.iter() {
                out.insert(k.clone(), profiled(v));
            }
            Node::bare(Value::Map(out))
        }
        _ => node.clone(),
    }
}

/// The facts in a cache file's text, or why the file is no good (in Python's words where
/// the JSON is at fault).
fn decode(text: &str) -> Result<Mapping, String> {
    let outer = tack_yaml::pyjson::loads(text, None).map_err(|e| e.to_string())?;
    let payload = match &outer.value {
        Value::Map(map) => match map.get(PAYLOAD).map(|n| &n.value) {
            Some(Value::Str(payload)) => payload.clone(),
            _ => return Err(format!("{PAYLOAD:?} is missing")),
        },
        _ => return Err("the file does not hold a mapping".into()),
    };
    let inner =
        tack_yaml::pyjson::loads_with(&payload, None, typed_value).map_err(|e| match e {
            tack_yaml::pyjson::JsonLoadError::Syntax(e) => e.to_string(),
            tack_yaml::pyjson::JsonLoadError::Hook(e) => e,
        })?;
    match inner.value {
        Value::Map(facts) => Ok(facts),
        _ => Err("the cached facts are not a mapping".into()),
    }
}

/// The profile's typed objects (`{"__ansible_type": ...}`) as values: a tagged value is its
/// value (its origin and trust tags are not kept), a string ansible wrote with its vault
/// ciphertext (`VaultedValue`) and an `EncryptedString` become the vault value again, a
/// serializable date its timestamp.
fn typed_value(map: Mapping) -> Result<Value, String> {
    let Some(kind) = map.get("__ansible_type").and_then(Node::as_str).map(str::to_string) else {
        return Ok(Value::Map(map));
    };
    let field = |name: &str| map.get(name).map(|n| n.value.clone());
    match kind.as_str() {
        "EncryptedString" => match field("value") {
            Some(Value::Str(ciphertext)) => Ok(Value::Vault(ciphertext)),
            _ => Err("an EncryptedString without its ciphertext".into()),
        },
        // A tag, only ever inside `tags`.
        "Origin" | "TrustedAsTemplate" | "SourceWasEncrypted" | "VaultedValue" => {
            Ok(Value::Map(map))
        }
        "AnsibleSerializableDate" | "AnsibleSerializableDateTime" | "AnsibleSerializableTime" => {
            let iso = map.get("iso8601").and_then(Node::as_str).unwrap_or_default();
            Ok(tack_yaml::parse_timestamp(iso)
                .map_or_else(|| Value::Str(iso.to_string()), Value::Timestamp))
        }
        tagged if tagged.starts_with("_AnsibleTagged") => {
            let vaulted = match field("tags") {
                Some(Value::Seq(tags)) => tags.iter().find_map(|tag| {
                    let tag = tag.as_map()?;
                    (tag.get("__ansible_type").and_then(Node::as_str) == Some("VaultedValue"))
                        .then(|| tag.get("ciphertext").and_then(Node::as_str).map(str::to_string))
                        .flatten()
                }),
                _ => None,
            };
            match vaulted {
                Some(ciphertext) => Ok(Value::Vault(ciphertext)),
                None => field("value").ok_or_else(|| format!("a {tagged} without its value")),
            }
        }
        other => Err(format!("an unknown cached type {other:?}")),
    }
}

/// `os.makedirs`: each missing directory from the top down; the error names the one that
/// could not be made.
fn make_dirs(dir: &Path) -> Result<(), (std::io::Error, PathBuf)> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    for d in missing.into_iter().rev().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir(d)
            && e.kind() != std::io::ErrorKind::AlreadyExists
        {
            return Err((e, d.to_path_buf()));
        }
    }
    Ok(())
}

/// A number no other temporary file of this process has used.
fn unique() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Whether the directory can be read, written and entered (`os.access` with each).
fn accessible(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::W_OK | libc::X_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Node {
        Node::bare(Value::Str(text.into()))
    }

    fn jsonfile(dir: &Path, timeout: u64) -> FactCache {
        let config = FactCacheConfig::JsonFile {
            dir: Some(dir.to_path_buf()),
            prefix: "ansible_facts".into(),
            timeout,
        };
        FactCache::open(&config).unwrap()
    }

    #[test]
    fn facts_merge_and_last_between_runs() {
        let dir = tempfile::tempdir().unwrap();
        let cache = jsonfile(dir.path(), 0);
        let mut first = Mapping::new();
        first.insert(s("ansible_hostname"), s("web1"));
        first
            .insert(s("vaulted"), Node::bare(Value::Vault("$ANSIBLE_VAULT;1.1;AES256\nab".into())));
        cache.merge("web1", &first);
        let mut second = Mapping::new();
        second.insert(s("ansible_hostname"), s("web-one"));
        second.insert(s("role"), s("db"));
        cache.merge("web1", &second);
        let file = dir.path().join("ansible_factss1_web1");
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text,
            r#"{"__payload__": "{\"ansible_hostname\": \"web-one\", \"vaulted\": {\"value\": \"$ANSIBLE_VAULT;1.1;AES256\\nab\", \"tags\": [], \"__ansible_type\": \"EncryptedString\"}, \"role\": \"db\"}"}"#
        );
        // A new run reads it back, the vaulted value still vaulted.
        let again = jsonfile(dir.path(), 0).get("web1").unwrap().unwrap();
        assert_eq!(again.get("role").unwrap().value, Value::Str("db".into()));
        assert!(matches!(again.get("vaulted").unwrap().value, Value::Vault(_)));
        cache.delete("web1");
        assert!(!file.exists());
        assert!(cache.get("web1").unwrap().is_none());
    }

    #[test]
    fn unsafe_host_names_are_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = jsonfile(dir.path(), 0);
        let files = cache.files.as_ref().unwrap();
        let path = files.path("a/b");
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("ansible_facts"), "{name}");
        assert_eq!(name.len(), "ansible_facts".len() + 12);
        let plain = files.path("web1");
        assert_eq!(plain.file_name().unwrap(), "ansible_factss1_web1");
    }

    #[test]
    fn a_corrupt_file_is_removed_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ansible_factss1_h1");
        std::fs::write(&file, "{not json").unwrap();
        let err = jsonfile(dir.path(), 0).get("h1").unwrap_err();
        assert!(err.message.starts_with("The cache file "), "{}", err.message);
        assert!(!file.exists());
    }

    #[test]
    fn what_ansible_wrote_is_read_with_its_secrets_sealed() {
        // As ansible-core 2.21.5 writes a `cacheable` `set_fact` (tags shortened).
        let payload = r#"{"n": {"value": 3, "tags": [], "__ansible_type": "_AnsibleTaggedInt"}, "l": {"value": [1, {"value": "a", "tags": [{"__ansible_type": "TrustedAsTemplate"}], "__ansible_type": "_AnsibleTaggedStr"}], "tags": [], "__ansible_type": "_AnsibleTaggedList"}, "v": {"value": "secret", "tags": [{"ciphertext": "$ANSIBLE_VAULT;1.1;AES256\nab", "__ansible_type": "VaultedValue"}], "__ansible_type": "_AnsibleTaggedStr"}, "dt": {"value": {"iso8601": "2024-01-02", "__ansible_type": "AnsibleSerializableDate"}, "tags": [], "__ansible_type": "_AnsibleTaggedDate"}, "z": null}"#;
        let mut outer = Mapping::new();
        outer.insert(s("__payload__"), s(payload));
        let text = tack_yaml::to_json(&Node::bare(Value::Map(outer)), &compact()).unwrap();
        let facts = decode(&text).unwrap();
        assert_eq!(facts.get("n").unwrap().value, Value::Int(3));
        let list = facts.get("l").unwrap().as_seq().unwrap();
        assert_eq!(list[1].value, Value::Str("a".into()));
        assert_eq!(
            facts.get("v").unwrap().value,
            Value::Vault("$ANSIBLE_VAULT;1.1;AES256\nab".into())
        );
        assert!(matches!(facts.get("dt").unwrap().value, Value::Timestamp(_)));
        assert_eq!(facts.get("z").unwrap().value, Value::Null);
    }

    #[test]
    fn a_jsonfile_cache_needs_a_directory() {
        let config = FactCacheConfig::JsonFile { dir: None, prefix: String::new(), timeout: 86400 };
        let err = FactCache::open(&config).unwrap_err();
        assert_eq!(err.message, "Required config '_uri' for 'jsonfile' cache plugin not provided.");
    }
}
