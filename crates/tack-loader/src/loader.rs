//! [`DataLoader`]: data files read the way ansible's `DataLoader` reads them.
//!
//! A file is read as bytes, decrypted when it is a whole-file vault, decoded as UTF-8, then
//! parsed as JSON first and as YAML when that fails (ansible's order: `1e5` in a `.json` file is
//! a float, in a YAML file a string). An empty document is `null`. Parsed files are cached by
//! path for the loader's lifetime, as ansible caches them for a run.
//!
//! Inline `!vault` values are left encrypted: whoever reads such a value decrypts it with
//! [`DataLoader::secrets`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tack_diag::{Diagnostic, Origin};
use tack_vault::{VaultError, VaultSecrets};
use tack_yaml::{DuplicateKeys, LoadOptions, Node, YamlError};

use crate::{json, paths, search};

/// The extensions ansible tries after a bare name (`C.YAML_FILENAME_EXTENSIONS`).
pub const DEFAULT_YAML_EXTENSIONS: &[&str] = &[".yml", ".yaml", ".json"];

/// Which parsed files are kept for the next load of the same path (ansible's `cache=` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Read and parse again every time (inventory sources, so a refresh sees edits).
    None,
    /// Keep every parsed file.
    All,
    /// Keep only files that were vault-encrypted (the expensive ones).
    Vaulted,
}

/// A file's text after decryption.
#[derive(Clone, Debug)]
pub struct FileText {
    pub path: Arc<Path>,
    pub text: String,
    /// The file was a whole-file vault.
    pub was_encrypted: bool,
}

/// A data file that could not be loaded, in ansible's words.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LoadError {
    #[error(
        "Unable to retrieve file contents. Could not find or access '{}' on the Ansible Controller.",
        .path.display()
    )]
    NotFound { path: PathBuf },
    /// Any other read failure; `reason` is Python's `OSError` text (`[Errno 13] ...`).
    #[error(
        "An error occurred while trying to read the file {}.",
        tack_py::repr::str_repr(&.path.to_string_lossy())
    )]
    Read { path: PathBuf, reason: String },
    #[error("{error}")]
    Vault { path: Arc<Path>, error: VaultError },
    #[error("{0}")]
    Yaml(YamlError),
}

impl LoadError {
    pub fn to_diagnostic(&self) -> Diagnostic {
        match self {
            LoadError::NotFound { path } => {
                let cause = format!(
                    "[Errno 2] No such file or directory: {}",
                    tack_yaml::pyrepr::str_repr(&path.to_string_lossy())
                );
                Diagnostic::caused_by(self.to_string(), None, Diagnostic::new(cause)).with_help(
                    "If you are using a module and expect the file to exist on the remote, see \
                     the remote_src option.",
                )
            }
            LoadError::Read { reason, .. } => {
                Diagnostic::caused_by(self.to_string(), None, Diagnostic::new(reason.clone()))
                    .parser()
            }
            LoadError::Vault { path, error } => {
                let mut diag = error.to_diagnostic();
                diag.origin = Some(Origin::file(path.clone()));
                diag
            }
            LoadError::Yaml(err) => err.to_diagnostic(),
        }
    }
}

/// Reads data files as ansible's `DataLoader` does. Shared by inventories, playbooks, vars
/// files and roles; safe to use from several threads.
pub struct DataLoader {
    secrets: VaultSecrets,
    basedir: PathBuf,
    yaml_extensions: Vec<String>,
    yaml_options: LoadOptions,
    cache: Mutex<HashMap<PathBuf, Node>>,
}

impl DataLoader {
    /// A loader holding `secrets`, resolving relative paths from the current directory.
    pub fn new(secrets: VaultSecrets) -> DataLoader {
        DataLoader {
            secrets,
            basedir: tack_py::path::abspath(Path::new(".")),
            yaml_extensions: DEFAULT_YAML_EXTENSIONS.iter().map(|s| s.to_string()).collect(),
            yaml_options: LoadOptions::default(),
            cache: Mutex::new(HashMap::new()),
        }
    }

    pub fn secrets(&self) -> &VaultSecrets {
        &self.secrets
    }

    /// The directory relative paths are taken from (the playbook's directory during a run).
    pub fn basedir(&self) -> &Path {
        &self.basedir
    }

    pub fn set_basedir(&mut self, basedir: &Path) {
        self.basedir = tack_py::path::abspath(basedir);
    }

    /// The extensions [`DataLoader::find_vars_files`] tries (the `yaml_valid_extensions`
    /// setting).
    pub fn set_yaml_extensions(&mut self, extensions: Vec<String>) {
        self.yaml_extensions = extensions;
    }

    /// What a key given twice in a YAML mapping does (`DUPLICATE_YAML_DICT_KEY`).
    pub fn set_duplicate_keys(&mut self, policy: DuplicateKeys) {
        self.yaml_options.duplicate_keys = policy;
    }

    pub fn yaml_extensions(&self) -> &[String] {
        &self.yaml_extensions
    }

    /// A path as the user meant it: relative to [`DataLoader::basedir`], `~` expanded.
    pub fn path_dwim(&self, given: &str) -> PathBuf {
        paths::path_dwim(&self.basedir, given)
    }

    /// Loads and parses a file, caching the result.
    pub fn load_file(&self, path: &Path) -> Result<Node, LoadError> {
        self.load_file_with(path, CacheMode::All)
    }

    /// Loads and parses a file with an explicit cache policy.
    pub fn load_file_with(&self, path: &Path, cache: CacheMode) -> Result<Node, LoadError> {
        let path = self.path_dwim(&path.to_string_lossy());
        if cache != CacheMode::None
            && let Some(node) = self.cache_lock().get(&path)
        {
            return Ok(node.clone());
        }
        let (bytes, was_encrypted) = self.file_bytes(&path)?;
        let text = tack_yaml::source_text(&bytes, &path).map_err(LoadError::Yaml)?;
        let node = self.load_text(text, Some(Arc::from(path.as_path())))?;
        if was_encrypted {
            // Every value of a whole-file vault is a secret, as an inline `!vault` value is.
            tack_vault::sealed::remember_file(&path);
            remember_values(&node);
        }
        if cache == CacheMode::All || (cache == CacheMode::Vaulted && was_encrypted) {
            self.cache_lock().insert(path, node.clone());
        }
        Ok(node)
    }

    fn cache_lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Node>> {
        // A panic elsewhere cannot leave a half-inserted entry behind.
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Parses text as ansible's `DataLoader.load` does: JSON first, YAML when that fails.
    pub fn load_text(&self, text: &str, path: Option<Arc<Path>>) -> Result<Node, LoadError> {
        let origin = path.clone().map(Origin::file);
        if let Ok(node) = json::parse(text, origin.as_ref()) {
            return Ok(node);
        }
        tack_yaml::load_one_with(text, path, &self.yaml_options).map_err(LoadError::Yaml)
    }

    /// The file's bytes, decrypted when it is a whole-file vault, and whether it was one.
    pub fn file_bytes(&self, path: &Path) -> Result<(Vec<u8>, bool), LoadError> {
        let path = self.path_dwim(&path.to_string_lossy());
        let data = std::fs::read(&path).map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => LoadError::NotFound { path: path.clone() },
            _ => LoadError::Read {
                path: path.clone(),
                reason: tack_py::oserror::os_error(&err, &path),
            },
        })?;
        if !tack_vault::is_encrypted(&data) {
            return Ok((data, false));
        }
        let plain = self
            .secrets
            .decrypt(&data)
            .map_err(|error| LoadError::Vault { path: Arc::from(path.as_path()), error })?;
        Ok((plain, true))
    }

    /// The file's text (`get_text_file_contents`), decrypted when it is a whole-file vault.
    /// Bytes that are not UTF-8 become U+FFFD, where ansible keeps them as surrogate escapes.
    pub fn file_text(&self, path: &Path) -> Result<FileText, LoadError> {
        let (bytes, was_encrypted) = self.file_bytes(path)?;
        let path: Arc<Path> = Arc::from(self.path_dwim(&path.to_string_lossy()).as_path());
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        };
        Ok(FileText { path, text, was_encrypted })
    }

    /// `find_vars_files(dir, name)`: the vars files for `name` under `dir`. The first of
    /// `name`, `name.yml`, `name.yaml`, `name.json` (the configured extensions) that exists
    /// wins; a directory yields every file below it with no or a known extension, in sorted
    /// order, skipping hidden entries and `~` backups.
    pub fn find_vars_files(&self, dir: &Path, name: &str) -> Vec<PathBuf> {
        let mut extensions = vec![""];
        extensions.extend(self.yaml_extensions.iter().map(String::as_str));
        search::find_vars_files(&self.basedir, dir, name, &extensions, true)
    }
}

/// Remembers every scalar value in `node` (not the keys: they name the secrets) as a secret.
fn remember_values(node: &Node) {
    match &node.value {
        tack_yaml::Value::Str(text) | tack_yaml::Value::BigInt(text) => {
            tack_vault::sealed::remember(text)
        }
        tack_yaml::Value::Int(n) => tack_vault::sealed::remember(&n.to_string()),
        tack_yaml::Value::Seq(items) => items.iter().for_each(remember_values),
        tack_yaml::Value::Map(map) => map.iter().for_each(|(_, v)| remember_values(v)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use tack_yaml::Value;

    fn loader() -> DataLoader {
        DataLoader::new(VaultSecrets::default())
    }

    #[test]
    fn json_is_tried_first() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v.json");
        fs::write(&file, "{\"e\": 1e5}").unwrap();
        let node = loader().load_file(&file).unwrap();
        assert_eq!(node.as_map().unwrap().get("e").unwrap().value, Value::Float(100000.0));
        assert_eq!(node.origin, Some(Origin::file(Arc::from(file.as_path()))));
    }

    #[test]
    fn missing_file_is_worded_as_ansible() {
        let err = loader().load_file(Path::new("/nonexistent/x.yml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Unable to retrieve file contents. Could not find or access '/nonexistent/x.yml' on \
             the Ansible Controller."
        );
    }

    #[test]
    fn vaulted_file_without_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v.yml");
        fs::write(&file, "$ANSIBLE_VAULT;1.1;AES256\n6162\n").unwrap();
        let err = loader().load_file(&file).unwrap_err();
        let diag = err.to_diagnostic();
        assert_eq!(diag.message, "Attempting to decrypt but no vault secrets found.");
        assert_eq!(diag.origin, Some(Origin::file(Arc::from(file.as_path()))));
    }
}
