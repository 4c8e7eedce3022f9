//! The loaded configuration: every core setting and every option of the plugins tack reads,
//! resolved once at start-up as ansible resolves them when `ansible.constants` is imported.
//!
//! Owns loading (search, read, parse, resolve), generic access by name, origins, the
//! notices raised on the way, and the command-line layer the binary puts on top. The typed
//! accessors live in `accessors.rs`.

use std::collections::HashMap;
use std::path::Path;

use crate::context::Context;
use crate::convert::ensure_type;
use crate::def::{PluginDef, SettingDef};
use crate::discover::find_config_file;
use crate::error::ConfigError;
use crate::ini::IniFile;
use crate::notices::{self, Notice};
use crate::resolve::{Resolver, Source, check_choices, conversion_error};
use crate::table;
use crate::value::{Resolved, SettingOrigin, SettingValue};

/// Why [`Config::resolve_with_vars`] has no value: the configured one is invalid (as it was
/// when the configuration loaded), or the variable's cannot be the setting's type.
#[derive(Debug, thiserror::Error)]
pub enum WithVarsError<'a> {
    #[error("{0}")]
    Configured(&'a ConfigError),
    #[error("{0}")]
    Variable(ConfigError),
}

/// ansible's configuration, resolved.
#[derive(Debug)]
pub struct Config {
    /// What the settings were resolved against; the command-line layer resolves paths with it.
    ctx: Context,
    file: Option<String>,
    /// Parallel to `table::BASE`.
    settings: Vec<Resolved>,
    index: HashMap<&'static str, usize>,
    /// Parallel to `table::PLUGINS`, each parallel to its options. ansible resolves plugin
    /// options when the plugin is used, so an invalid one is an error only then: it is kept
    /// here and returned by the accessor.
    plugins: Vec<Vec<Result<Resolved, ConfigError>>>,
    notices: Vec<Notice>,
}

/// A setting the user chose, with where they chose it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserSetting<'a> {
    /// The core setting's name (`DEFAULT_FORKS`) or the plugin option's (`ssh_args`).
    pub name: &'static str,
    /// `(plugin type, plugin name)` for a plugin option, e.g. `("connection", "ssh")`.
    pub plugin: Option<(&'static str, &'static str)>,
    pub origin: &'a SettingOrigin,
}

impl Config {
    /// Finds the configuration file and resolves every setting, as ansible does at start-up.
    pub fn load(ctx: &Context) -> Result<Config, ConfigError> {
        let found = find_config_file(ctx);
        let notices = found.warning.map(Notice::Warning).into_iter().collect();
        Config::build(ctx, found.path, notices)
    }

    /// Resolves every setting reading `file` (or no file), without searching.
    pub fn load_file(ctx: &Context, file: Option<&Path>) -> Result<Config, ConfigError> {
        let file = match file {
            None => None,
            Some(path) => Some(
                path.to_str()
                    .map(str::to_string)
                    .ok_or_else(|| ConfigError::NonUtf8Path { path: path.to_path_buf() })?,
            ),
        };
        Config::build(ctx, file, Vec::new())
    }

    fn build(
        ctx: &Context,
        file: Option<String>,
        notices: Vec<Notice>,
    ) -> Result<Config, ConfigError> {
        let ini = match &file {
            Some(path) => Some(read_ini(path)?),
            None => None,
        };
        let source = file.as_deref().zip(ini.as_ref()).map(|(path, ini)| Source { path, ini });
        let mut resolver = Resolver { ctx, file: source, done: HashMap::new(), notices };
        let mut settings = Vec::with_capacity(table::BASE.len());
        for def in table::BASE {
            settings.push(resolver.resolve(def, None)?);
        }
        let plugins = table::PLUGINS
            .iter()
            .map(|plugin| {
                let id = Some((plugin.plugin_type, plugin.name));
                plugin.options.iter().map(|def| resolver.resolve(def, id)).collect()
            })
            .collect();
        let index = table::BASE.iter().enumerate().map(|(i, def)| (def.name, i)).collect();
        let notices = resolver.notices;
        Ok(Config { ctx: ctx.clone(), file, settings, index, plugins, notices })
    }

    /// The configuration file in use (`None`: defaults and environment only).
    pub fn config_file(&self) -> Option<&Path> {
        self.file.as_deref().map(Path::new)
    }

    /// A core setting's value, by ansible's name (`DEFAULT_FORKS`); `None` for no such setting.
    pub fn get(&self, name: &str) -> Option<&SettingValue> {
        self.setting(name).map(|r| &r.value)
    }

    /// Where a core setting's value came from.
    pub fn origin(&self, name: &str) -> Option<&SettingOrigin> {
        self.setting(name).map(|r| &r.origin)
    }

    /// A core setting's value and origin.
    pub fn setting(&self, name: &str) -> Option<&Resolved> {
        self.index.get(name).and_then(|&i| self.settings.get(i))
    }

    /// Every core setting, in ansible's order.
    pub fn settings(&self) -> impl Iterator<Item = (&'static SettingDef, &Resolved)> {
        table::BASE.iter().zip(&self.settings)
    }

    /// A core setting's definition.
    pub fn definition(name: &str) -> Option<&'static SettingDef> {
        table::BASE.iter().find(|def| def.name == name)
    }

    /// A plugin option's definition (`("connection", "ssh", "use_tty")`).
    pub fn plugin_definition(
        plugin_type: &str,
        plugin: &str,
        name: &str,
    ) -> Option<&'static SettingDef> {
        find_plugin(plugin_type, plugin)?.1.options.iter().find(|o| o.name == name)
    }

    /// A plugin option (`("connection", "ssh", "ssh_args")`) as the environment and the file
    /// set it; `None` when tack does not know the option, `Err` when its value is invalid.
    /// Host variables and keywords, which ansible puts above these, are the engine's to apply.
    pub fn plugin_option(
        &self,
        plugin_type: &str,
        plugin: &str,
        name: &str,
    ) -> Option<Result<&Resolved, &ConfigError>> {
        let (p, def) = find_plugin(plugin_type, plugin)?;
        let i = def.options.iter().position(|o| o.name == name)?;
        self.plugins.get(p)?.get(i).map(Result::as_ref)
    }

    /// ansible's `get_config_value_and_origin` given variables: a core setting (`plugin`
    /// `None`) or a plugin's option as configured, unless one of its `vars:` entries names a
    /// variable `var` finds (the last such entry wins), converted to the setting's type with
    /// the origin `var: name`. `None`: no such setting.
    pub fn resolve_with_vars(
        &self,
        plugin: Option<(&str, &str)>,
        name: &str,
        var: impl Fn(&str) -> Option<SettingValue>,
    ) -> Option<Result<Resolved, WithVarsError<'_>>> {
        let (def, configured) = match plugin {
            None => {
                let &i = self.index.get(name)?;
                (&table::BASE[i], Ok(self.settings.get(i)?))
            }
            Some((kind, plugin_name)) => {
                let (p, def) = find_plugin(kind, plugin_name)?;
                let i = def.options.iter().position(|o| o.name == name)?;
                (&def.options[i], self.plugins.get(p)?.get(i)?.as_ref())
            }
        };
        let chosen = def.vars.iter().filter_map(|v| var(v).map(|value| (*v, value))).last();
        let Some((var_name, raw)) = chosen else {
            return Some(configured.cloned().map_err(WithVarsError::Configured));
        };
        let origin = SettingOrigin::Var(var_name.to_string());
        let converted = ensure_type(raw.clone(), def.value_type, None, &self.ctx)
            .map_err(|err| conversion_error(def, plugin, &origin, &raw, err))
            .and_then(|value| check_choices(def, plugin, &value).map(|()| value));
        Some(converted.map(|value| Resolved { value, origin }).map_err(WithVarsError::Variable))
    }

    /// The deprecations ansible's configuration raises again each time `name` (a setting, or
    /// `plugin`'s option) is read, as the `config` lookup reads it: each deprecated
    /// environment variable of it that is set and the deprecated file key it was read from,
    /// then the setting's own deprecation when the user set it. (ansible keeps them until the
    /// next plugin sets its options, and reports them as that plugin's.)
    pub fn deprecations_on_read(&self, plugin: Option<(&str, &str)>, name: &str) -> Vec<Notice> {
        let (def, resolved) = match plugin {
            None => {
                let Some(&i) = self.index.get(name) else { return Vec::new() };
                (&table::BASE[i], self.settings.get(i))
            }
            Some((kind, plugin_name)) => {
                let Some((p, def)) = find_plugin(kind, plugin_name) else { return Vec::new() };
                let Some(i) = def.options.iter().position(|o| o.name == name) else {
                    return Vec::new();
                };
                let resolved = self.plugins.get(p).and_then(|o| o.get(i)?.as_ref().ok());
                (&def.options[i], resolved)
            }
        };
        let Some(resolved) = resolved else { return Vec::new() };
        let mut out = Vec::new();
        for entry in def.env {
            if let (Some(dep), true) = (entry.deprecated, self.ctx.env.contains_key(entry.name)) {
                out.push(Notice::Deprecation { subject: entry.name.into(), deprecation: dep });
            }
        }
        if let SettingOrigin::Ini { section, key, .. } = &resolved.origin
            && let Some(entry) = def.ini.iter().find(|e| e.section == &**section && e.key == &**key)
            && let Some(dep) = entry.deprecated
        {
            let subject = format!("[{section}]{key}");
            out.push(Notice::Deprecation { subject, deprecation: dep });
        }
        if let (Some(dep), true) = (def.deprecated, resolved.origin.is_user_set()) {
            out.push(Notice::Deprecation { subject: def.name.into(), deprecation: dep });
        }
        out
    }

    /// Every setting and plugin option the user set, in the environment or the file (or on
    /// the command line, once applied). Other parts of tack refuse, by name, the ones they
    /// do not honour.
    pub fn user_set_settings(&self) -> Vec<UserSetting<'_>> {
        let core = self
            .settings()
            .filter(|(_, r)| r.origin.is_user_set())
            .map(|(def, r)| UserSetting { name: def.name, plugin: None, origin: &r.origin });
        let plugins = table::PLUGINS.iter().zip(&self.plugins).flat_map(|(plugin, options)| {
            plugin.options.iter().zip(options).filter_map(move |(def, r)| match r {
                Ok(r) if r.origin.is_user_set() => Some(UserSetting {
                    name: def.name,
                    plugin: Some((plugin.plugin_type, plugin.name)),
                    origin: &r.origin,
                }),
                _ => None,
            })
        });
        core.chain(plugins).collect()
    }

    /// The warnings and deprecations raised while loading, in ansible's order.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    /// Shows the notices on tack-diag's warning channel; deprecations only while
    /// `deprecation_warnings` is on.
    pub fn emit_notices(&self) {
        notices::emit(&self.notices, self.deprecation_warnings());
    }

    /// The text [`Config::emit_notices`] prints in a process that has shown nothing yet.
    pub fn render_notices(&self) -> String {
        notices::render(&self.notices, self.deprecation_warnings())
    }

    /// Sets a core setting from a command-line option (`option` as ansible names it in
    /// origins, e.g. `forks`), converted and checked like any other source.
    pub fn apply_cli(
        &mut self,
        name: &str,
        option: &str,
        value: SettingValue,
    ) -> Result<(), ConfigError> {
        let Some(&i) = self.index.get(name) else {
            return Err(ConfigError::UnknownSetting { name: name.into() });
        };
        let def = &table::BASE[i];
        let origin = SettingOrigin::Cli(option.into());
        // Relative paths on the command line start from the working directory.
        let converted = ensure_type(value.clone(), def.value_type, None, &self.ctx);
        let value = converted.map_err(|err| conversion_error(def, None, &origin, &value, err))?;
        check_choices(def, None, &value)?;
        self.settings[i] = Resolved { value, origin };
        Ok(())
    }
}

fn find_plugin(plugin_type: &str, name: &str) -> Option<(usize, &'static PluginDef)> {
    table::PLUGINS.iter().enumerate().find(|(_, p)| p.plugin_type == plugin_type && p.name == name)
}

/// Reads and parses the file; only `.ini` and `.cfg` files are configuration, as in ansible.
fn read_ini(path: &str) -> Result<IniFile, ConfigError> {
    match tack_py::path::splitext(path).1 {
        ".ini" | ".cfg" => {}
        ".yaml" | ".yml" => {
            return Err(ConfigError::UnsupportedType { path: path.into(), kind: "yaml".into() });
        }
        ext => {
            return Err(ConfigError::UnsupportedExtension { path: path.into(), ext: ext.into() });
        }
    }
    let bytes =
        std::fs::read(path).map_err(|source| ConfigError::Read { path: path.into(), source })?;
    let text = String::from_utf8(bytes).map_err(|err| ConfigError::NotUtf8 {
        path: path.into(),
        offset: err.utf8_error().valid_up_to(),
    })?;
    IniFile::parse(&text).map_err(|message| ConfigError::Parse { path: path.into(), message })
}
