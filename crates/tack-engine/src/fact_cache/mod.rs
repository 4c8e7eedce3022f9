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
//! Any other cache plugin (a collection's, one in a `cache_plugins/` directory) is run by
//! ansible-core through a [`CachePlugin`] the binary gives; facts cross to it in the same
//! profile (`profile`), so the plugin stores what ansible's would.
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
use tack_yaml::Mapping;

mod profile;

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

/// A host's facts layer, with the facts it was made from.
type MadeLayer = (Arc<Mapping>, Arc<tack_template::Layer>);

/// A cache plugin tack has no code of its own for (one written in Python, run by
/// ansible-core): it keeps each host's facts as the cache-persistence profile's JSON text.
pub trait CachePlugin: Send + Sync {
    /// The host's facts, `None` when the plugin has none.
    fn get(&self, host: &str) -> Result<Option<String>, Diagnostic>;
    fn set(&self, host: &str, facts: &str) -> Result<(), Diagnostic>;
    fn delete(&self, host: &str) -> Result<(), Diagnostic>;
}

/// Where the run's facts are kept besides its memory.
#[derive(Default)]
enum Store {
    #[default]
    Memory,
    Files(Files),
    /// Never in a plan: loading a plugin runs its code.
    Plugin {
        name: String,
        plugin: Box<dyn CachePlugin>,
    },
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Store::Memory => f.write_str("Memory"),
            Store::Files(files) => files.fmt(f),
            Store::Plugin { name, .. } => write!(f, "Plugin({name})"),
        }
    }
}

/// The run's fact cache.
#[derive(Debug, Default)]
pub struct FactCache {
    store: Store,
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
        Ok(FactCache {
            store: Store::Files(files),
            held: Mutex::default(),
            layers: Mutex::default(),
        })
    }

    /// A cache kept by `plugin` (named `name` in messages), also in memory for the run.
    pub fn with_plugin(name: &str, plugin: Box<dyn CachePlugin>) -> FactCache {
        let store = Store::Plugin { name: name.to_string(), plugin };
        FactCache { store, held: Mutex::default(), layers: Mutex::default() }
    }

    /// `host`'s facts, if the cache has any (read from its file the first time).
    pub fn get(&self, host: &str) -> Result<Option<Arc<Mapping>>, Diagnostic> {
        if let Some(held) = self.lock().get(host) {
            return Ok(held.clone());
        }
        let read = match &self.store {
            Store::Memory => None,
            Store::Files(files) => files.read(host)?.map(Arc::new),
            Store::Plugin { name, plugin, .. } => match plugin.get(host)? {
                Some(text) => Some(Arc::new(profile::decode(&text).map_err(|why| {
                    Diagnostic::new(format!(
                        "The '{name}' cache plugin gave facts for {host} that cannot be read: {why}"
                    ))
                })?)),
                None => None,
            },
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
        match &self.store {
            Store::Files(files) if !files.read_only => files.write(host, &merged),
            Store::Plugin { name, plugin } => {
                let written = profile::encode(&merged)
                    .map_err(|e| {
                        Diagnostic::new(format!(
                            "Error in '{name}' cache plugin while trying to write the facts of \
                             {host}: {}",
                            e.0
                        ))
                    })
                    .and_then(|text| plugin.set(host, &text));
                if let Err(e) = written {
                    tack_diag::warn(&e);
                }
            }
            _ => {}
        }
        self.lock().insert(host.to_string(), Some(merged.clone()));
        merged
    }

    /// Forgets `host`'s facts, its file included (`meta: clear_facts`, `--flush-cache`).
    pub fn delete(&self, host: &str) {
        self.lock().insert(host.to_string(), None);
        match &self.store {
            // ansible ignores a file that was not there, or could not be removed.
            Store::Files(files) if !files.read_only => {
                let _ = std::fs::remove_file(files.path(host));
            }
            Store::Plugin { plugin, .. } => {
                if let Err(e) = plugin.delete(host) {
                    tack_diag::warn(&e);
                }
            }
            _ => {}
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
        match profile::decode_file(&text) {
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
        let text = match profile::encode_file(facts) {
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
    use tack_yaml::{Node, Value};

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
        let Store::Files(files) = &cache.store else { panic!("a jsonfile cache") };
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
    fn a_jsonfile_cache_needs_a_directory() {
        let config = FactCacheConfig::JsonFile { dir: None, prefix: String::new(), timeout: 86400 };
        let err = FactCache::open(&config).unwrap_err();
        assert_eq!(err.message, "Required config '_uri' for 'jsonfile' cache plugin not provided.");
    }
}
