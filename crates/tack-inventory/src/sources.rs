//! Reading `-i` sources into an [`InventoryData`], as ansible's `InventoryManager` does: a
//! directory is read entry by entry (sorted, skipping hidden files, `group_vars`, `host_vars`
//! and ignored extensions), anything else is offered to each enabled plugin in order until one
//! parses it. When none does, every plugin's failure is shown as a warning, then
//! `Unable to parse SOURCE as an inventory source`.
//!
//! Plugins tack implements: `host_list`, `advanced_host_list`, `script`, `auto`, `yaml`, `ini`,
//! `toml`. Any other (`constructed`, `generator`, a collection's, one in an
//! `inventory_plugins/` directory) goes to the run's [`ForeignPlugins`] (ansible-core's own
//! plugin), and is refused by name when there is none.

use std::path::Path;

use regex::Regex;
use tack_diag::{Diagnostic, ErrorClass, Origin};
use tack_loader::DataLoader;

use crate::address::{expand_hostpattern, parse_address};
use crate::data::InventoryData;
use crate::foreign::{ForeignOutcome, ForeignPlugins};
use crate::{ini, script, toml_source, yaml_source};
use tack_py::repr::str_repr as repr_str;

/// Where ansible looks when no inventory is configured; its absence is not worth a warning.
pub const DEFAULT_HOST_LIST: &str = "/etc/ansible/hosts";

/// The settings that shape how sources are read (ansible's `INVENTORY_*` settings).
#[derive(Clone, Debug)]
pub struct SourceOptions {
    /// `INVENTORY_ENABLED`: plugin names, in the order they are tried.
    pub enabled_plugins: Vec<String>,
    /// `INVENTORY_IGNORE_EXTS`: directory entries ending in these are skipped.
    pub ignore_extensions: Vec<String>,
    /// `INVENTORY_IGNORE_PATTERNS`: directory entries matching these regexes are skipped.
    pub ignore_patterns: Vec<String>,
    /// `INVENTORY_UNPARSED_IS_FAILED`.
    pub unparsed_is_failed: bool,
    /// `INVENTORY_UNPARSED_WARNING`.
    pub unparsed_warning: bool,
    /// `INVENTORY_ANY_UNPARSED_IS_FAILED`.
    pub any_unparsed_is_failed: bool,
    /// The `yaml` plugin's `yaml_extensions`.
    pub yaml_extensions: Vec<String>,
    /// The `script` plugin's `always_show_stderr`.
    pub script_stderr: bool,
    /// The `-e` values: every plugin but `auto` loads them before parsing, so a bad one makes
    /// each plugin fail on each source, as in ansible.
    pub extra_vars: Vec<String>,
    /// Who runs the plugins tack has no native code for, if anyone.
    pub foreign: Option<std::sync::Arc<dyn ForeignPlugins>>,
}

impl Default for SourceOptions {
    fn default() -> Self {
        let strs = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        SourceOptions {
            enabled_plugins: strs(&["host_list", "script", "auto", "yaml", "ini", "toml"]),
            ignore_extensions: strs(&[
                ".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst", ".orig",
                ".cfg", ".retry",
            ]),
            ignore_patterns: Vec::new(),
            unparsed_is_failed: false,
            unparsed_warning: true,
            any_unparsed_is_failed: false,
            yaml_extensions: strs(&[".yaml", ".yml", ".json"]),
            script_stderr: true,
            extra_vars: Vec::new(),
            foreign: None,
        }
    }
}

/// The inventory plugins ansible-core ships (a `plugin:` file may name them with or without
/// the `ansible.builtin.` prefix).
const CORE_PLUGINS: &[&str] = &[
    "advanced_host_list",
    "auto",
    "constructed",
    "generator",
    "host_list",
    "ini",
    "script",
    "toml",
    "yaml",
];

/// The plugins tack runs natively; any other is foreign.
const NATIVE_PLUGINS: &[&str] =
    &["advanced_host_list", "auto", "host_list", "ini", "script", "toml", "yaml"];

fn core_name(name: &str) -> Option<&'static str> {
    let short =
        tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
    CORE_PLUGINS.iter().copied().find(|p| *p == short)
}

fn refuse(plugin: &str, source: &str) -> Diagnostic {
    Diagnostic::new(format!(
        "The '{plugin}' inventory plugin (needed for {source}) is not implemented by tack."
    ))
}

/// The outcome of one plugin on one source.
enum Attempt {
    Declined,
    Parsed,
    Failed(Diagnostic),
}

pub(crate) struct SourceReader<'a> {
    pub data: &'a mut InventoryData,
    pub loader: &'a DataLoader,
    pub options: &'a SourceOptions,
    ignored: Regex,
    /// The sources parsed so far (ansible's `processed_sources`).
    processed: Vec<String>,
}

impl<'a> SourceReader<'a> {
    pub(crate) fn new(
        data: &'a mut InventoryData,
        loader: &'a DataLoader,
        options: &'a SourceOptions,
    ) -> Result<Self, Diagnostic> {
        let mut parts: Vec<String> = vec![
            r"^\.".into(),
            "^host_vars$".into(),
            "^group_vars$".into(),
            "^vars_plugins$".into(),
        ];
        parts.extend(options.ignore_patterns.iter().cloned());
        parts.extend(options.ignore_extensions.iter().map(|e| format!("{}$", regex::escape(e))));
        let ignored = Regex::new(&parts.join("|")).map_err(|e| {
            Diagnostic::new(format!("Invalid inventory ignore pattern: {e}"))
                .with_class(ErrorClass::General)
        })?;
        Ok(SourceReader { data, loader, options, ignored, processed: Vec::new() })
    }

    /// `parse_sources`: reads every source, then reconciles when anything was parsed.
    pub(crate) fn parse_sources(&mut self, sources: &[String]) -> Result<(), Diagnostic> {
        let mut parsed = false;
        for source in sources.iter().filter(|s| !s.is_empty()) {
            let source = if source.contains(',') {
                source.clone()
            } else {
                tack_py::ansible::unfrackpath(Path::new(source), false, None)
                    .to_string_lossy()
                    .into_owned()
            };
            if self.parse_source(&source)? {
                parsed = true;
            }
        }
        if parsed {
            self.data.reconcile().map_err(|e| Diagnostic::new(e.0))?;
        } else if self.options.unparsed_is_failed {
            return Err(Diagnostic::new(
                "No inventory was parsed, please check your configuration and options.",
            ));
        } else if self.options.unparsed_warning {
            tack_diag::warn(&Diagnostic::new(
                "No inventory was parsed, only implicit localhost is available",
            ));
        }
        Ok(())
    }

    fn parse_source(&mut self, source: &str) -> Result<bool, Diagnostic> {
        let path = Path::new(source);
        if path.is_dir() {
            let mut names: Vec<Vec<u8>> = match std::fs::read_dir(path) {
                Ok(entries) => entries
                    .filter_map(|e| e.ok())
                    .map(|e| {
                        use std::os::unix::ffi::OsStrExt;
                        e.file_name().as_bytes().to_vec()
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
            names.sort();
            let mut parsed = false;
            for name in names {
                let name = String::from_utf8_lossy(&name).into_owned();
                if self.ignored.is_match(&name) {
                    continue;
                }
                let full = format!("{}/{}", source.trim_end_matches('/'), name);
                let full = if source == "/" { format!("/{name}") } else { full };
                if self.parse_source(&full)? {
                    parsed = true;
                }
            }
            return Ok(parsed);
        }

        self.data.current_source = Some(source.to_string());
        let mut parsed = false;
        let mut failures: Vec<(String, Diagnostic)> = Vec::new();
        self.note(4, "setting up inventory plugins".into());
        if !self.data.notes.iter().any(|(_, n)| n.starts_with("Loading collection ")) {
            // ansible's collection loader announces ansible.builtin (which has no path) when
            // the first plugin is loaded from it.
            self.note(4, "Loading collection ansible.builtin from ".into());
        }
        for plugin in self.plugins()? {
            match self.attempt(&plugin, source)? {
                Attempt::Declined => self.note(
                    3,
                    format!(
                        "{plugin} declined parsing {source} as it did not pass its verify_file() method"
                    ),
                ),
                Attempt::Parsed => {
                    self.note(3, format!("Parsed {source} inventory source with {plugin} plugin"));
                    self.processed.push(source.to_string());
                    parsed = true;
                    break;
                }
                Attempt::Failed(mut diag) => {
                    if diag.origin.is_none() {
                        diag.origin = Some(plugin_origin(&plugin, source));
                    }
                    failures.push((plugin, diag));
                }
            }
        }
        if !parsed && (source != DEFAULT_HOST_LIST || path.exists()) {
            for (plugin, diag) in failures {
                tack_diag::warn(&Diagnostic::caused_by(
                    format!("Failed to parse inventory with '{plugin}' plugin."),
                    None,
                    diag,
                ));
            }
            if self.options.any_unparsed_is_failed {
                return Err(Diagnostic::new(format!(
                    "Completely failed to parse inventory source {source}"
                )));
            }
            tack_diag::warn(&Diagnostic::new(format!(
                "Unable to parse {source} as an inventory source"
            )));
        }
        self.data.current_source = None;
        Ok(parsed)
    }

    /// `_fetch_inventory_plugins`: the enabled plugins, warning about unknown names.
    fn plugins(&self) -> Result<Vec<String>, Diagnostic> {
        let mut plugins = Vec::new();
        for name in &self.options.enabled_plugins {
            match core_name(name) {
                Some(p) if NATIVE_PLUGINS.contains(&p) => plugins.push(p.to_string()),
                // ansible-core's own plugin runs it, named as configured.
                _ if self.options.foreign.is_some() => plugins.push(name.clone()),
                Some(p) => {
                    return Err(Diagnostic::new(format!(
                        "The '{p}' inventory plugin (enabled in INVENTORY_ENABLED) is not \
                         implemented by tack."
                    )));
                }
                None => tack_diag::warn(&Diagnostic::new(format!(
                    "Failed to load inventory plugin, skipping {name}"
                ))),
            }
        }
        if plugins.is_empty() {
            return Err(Diagnostic::new(
                "No inventory plugins available to generate inventory, make sure you have at least \
                 one enabled.",
            ));
        }
        Ok(plugins)
    }

    fn readable_file(path: &Path) -> bool {
        path.exists() && std::fs::File::open(path).is_ok()
    }

    fn note(&mut self, level: u8, text: String) {
        self.data.notes.push((level, text));
    }

    /// `BaseFileInventoryPlugin.verify_file`, which says why it declines.
    fn readable_source(&mut self, path: &Path) -> bool {
        let readable = Self::readable_file(path);
        if !readable {
            self.note(
                3,
                "Skipping due to inventory source not existing or not being readable by the \
                 current user"
                    .into(),
            );
        }
        readable
    }

    /// `verify_file` of each plugin, with the note the file plugins give when the source is
    /// missing (`auto` looks at the extension first).
    fn verify_noted(&mut self, plugin: &str, source: &str) -> bool {
        let path = Path::new(source);
        let ext = tack_py::path::splitext(source).1;
        match plugin {
            "script" => self.readable_source(path) && is_executable(path),
            "auto" => {
                (source.ends_with(".yml") || source.ends_with(".yaml"))
                    && self.readable_source(path)
            }
            "yaml" => {
                self.readable_source(path)
                    && (ext.is_empty() || self.options.yaml_extensions.iter().any(|e| e == ext))
            }
            "ini" => self.readable_source(path) && ext != ".toml",
            "toml" => self.readable_source(path) && ext == ".toml",
            _ => self.verify(plugin, source),
        }
    }

    fn verify(&self, plugin: &str, source: &str) -> bool {
        let path = Path::new(source);
        let ext = tack_py::path::splitext(source).1;
        match plugin {
            "host_list" | "advanced_host_list" => !path.exists() && source.contains(','),
            "script" => Self::readable_file(path) && is_executable(path),
            "auto" => {
                (source.ends_with(".yml") || source.ends_with(".yaml")) && Self::readable_file(path)
            }
            "yaml" => {
                Self::readable_file(path)
                    && (ext.is_empty() || self.options.yaml_extensions.iter().any(|e| e == ext))
            }
            "ini" => Self::readable_file(path) && ext != ".toml",
            "toml" => Self::readable_file(path) && ext == ".toml",
            _ => false,
        }
    }

    /// Offers `source` to `plugin`. An `Err` is a refusal that ends the whole run.
    fn attempt(&mut self, plugin: &str, source: &str) -> Result<Attempt, Diagnostic> {
        if !NATIVE_PLUGINS.contains(&plugin) {
            return self.foreign(plugin, source);
        }
        if !self.verify_noted(plugin, source) {
            return Ok(Attempt::Declined);
        }
        let path = Path::new(source);
        if plugin != "auto"
            && let Err(diag) = tack_loader::load_extra_vars(
                self.loader,
                &self.options.extra_vars,
                self.data.hash_behaviour,
            )
        {
            return Ok(Attempt::Failed(diag));
        }
        let result = match plugin {
            "host_list" => host_list(self.data, source, false),
            "advanced_host_list" => host_list(self.data, source, true),
            "script" => script::parse(self.data, path, self.options.script_stderr),
            "yaml" => yaml_source::parse(self.data, self.loader, path),
            "ini" => ini::parse(self.data, self.loader, path),
            "toml" => toml_source::parse(self.data, self.loader, path),
            "auto" => return self.auto(source),
            _ => return Ok(Attempt::Declined),
        };
        Ok(match result {
            Ok(()) => Attempt::Parsed,
            Err(diag) => Attempt::Failed(diag),
        })
    }

    /// The `auto` plugin: hands a `plugin:` file to the plugin it names.
    fn auto(&mut self, source: &str) -> Result<Attempt, Diagnostic> {
        let path = Path::new(source);
        let name = match yaml_source::auto_plugin_name(self.loader, path) {
            Ok(name) => name,
            Err(diag) => return Ok(Attempt::Failed(diag)),
        };
        let plugin = match core_name(&name) {
            Some(plugin) if NATIVE_PLUGINS.contains(&plugin) => plugin,
            // ansible-core's own plugin (or a collection's) reads the source.
            _ if self.options.foreign.is_some() => return self.foreign(&name, source),
            Some(plugin) => return Err(refuse(plugin, source)),
            None => {
                return Ok(Attempt::Failed(
                    Diagnostic::new(format!(
                        "inventory config '{source}' specifies unknown plugin '{name}'"
                    ))
                    .parser(),
                ));
            }
        };
        if plugin == "auto" || !self.verify(plugin, source) {
            return Ok(Attempt::Failed(
                Diagnostic::new(format!(
                    "inventory source '{source}' could not be verified by inventory plugin '{name}'"
                ))
                .parser(),
            ));
        }
        self.attempt(plugin, source)
    }
}

impl SourceReader<'_> {
    /// A plugin tack has no native code for, run by the run's [`ForeignPlugins`].
    fn foreign(&mut self, plugin: &str, source: &str) -> Result<Attempt, Diagnostic> {
        let Some(foreign) = self.options.foreign.clone() else {
            let name = core_name(plugin).unwrap_or(plugin);
            return Err(refuse(name, source));
        };
        if let Err(diag) = tack_loader::load_extra_vars(
            self.loader,
            &self.options.extra_vars,
            self.data.hash_behaviour,
        ) {
            return Ok(Attempt::Failed(diag));
        }
        let snapshot = self.data.snapshot();
        Ok(match foreign.parse(plugin, source, &snapshot, &self.processed) {
            ForeignOutcome::Declined => Attempt::Declined,
            ForeignOutcome::Failed(diag) => Attempt::Failed(diag),
            ForeignOutcome::Parsed(after) => match self.data.apply(&after) {
                Ok(()) => Attempt::Parsed,
                Err(e) => Attempt::Failed(Diagnostic::new(e.0)),
            },
        })
    }
}

fn plugin_origin(plugin: &str, source: &str) -> Origin {
    Origin::described(format!("<inventory plugin '{plugin}' with source {}>", repr_str(source)))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

/// The `host_list` plugin (`advanced_host_list` when `ranges`): `a,b:2222,[::1]:22`.
fn host_list(data: &mut InventoryData, source: &str, ranges: bool) -> Result<(), Diagnostic> {
    let fail = |msg: String| {
        Diagnostic::new(format!("Invalid data from string, could not parse: {msg}")).parser()
    };
    let ungrouped = Some(data.ungrouped());
    for item in source.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (names, port) = if ranges {
            match expand_hostpattern(item) {
                Ok(found) => found,
                Err(e) if e.is_ansibles() => {
                    data.notes.push((
                        3,
                        format!("Unable to parse address from hostname, leaving unchanged: {e}"),
                    ));
                    (vec![item.to_string()], None)
                }
                Err(e) => return Err(fail(e.0)),
            }
        } else {
            match parse_address(item, false) {
                Ok((host, port)) => (vec![host], port),
                Err(_) => (vec![item.to_string()], None),
            }
        };
        for name in names {
            if data.find_host(&name).is_none() {
                data.add_host(&name, ungrouped, port).map_err(|e| fail(e.0))?;
            }
        }
    }
    Ok(())
}
