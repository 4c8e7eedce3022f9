//! Resolving one setting as ansible's `ConfigManager.get_config_value_and_origin` does for the
//! sources tack-config owns: the environment (last variable set wins), then `ansible.cfg` (last
//! entry present wins), then the default, rendered from `ANSIBLE_HOME` when it is a template;
//! then type conversion, the choices check, and the deprecations using a source implies.
//!
//! Host variables, play keywords and command-line options sit above these in ansible and are
//! applied by their owners; this module never looks at them.

use std::collections::HashMap;
use std::path::Path;

use tack_py::ansible::unquote;
use tack_py::repr::str_repr;

use crate::context::Context;
use crate::convert::{ConvertError, ensure_type};
use crate::def::{DefaultValue, SettingDef, ValueType};
use crate::error::ConfigError;
use crate::ini::IniFile;
use crate::notices::Notice;
use crate::table;
use crate::value::{Resolved, SettingOrigin, SettingValue};

/// The configuration file in use, parsed.
pub(crate) struct Source<'a> {
    pub path: &'a str,
    pub ini: &'a IniFile,
}

/// Resolves settings in order, remembering the values later templates refer to.
pub(crate) struct Resolver<'a> {
    pub ctx: &'a Context,
    pub file: Option<Source<'a>>,
    /// Core settings resolved so far, for `{{ ANSIBLE_HOME ~ ... }}` defaults.
    pub done: HashMap<&'static str, SettingValue>,
    pub notices: Vec<Notice>,
}

/// How ansible names a setting in messages: `'DEFAULT_FORKS'`, or
/// `'timeout' for 'ssh' connection plugin`.
pub(crate) fn label(def: &SettingDef, plugin: Option<(&str, &str)>) -> String {
    match plugin {
        None => str_repr(def.name),
        Some((kind, name)) => {
            format!("{} for {} {kind} plugin", str_repr(def.name), str_repr(name))
        }
    }
}

impl Resolver<'_> {
    pub(crate) fn resolve(
        &mut self,
        def: &'static SettingDef,
        plugin: Option<(&str, &str)>,
    ) -> Result<Resolved, ConfigError> {
        let (raw, origin) = self.lookup(def)?;
        let basedir = match &origin {
            SettingOrigin::Ini { path, .. } => path.to_str().filter(|p| is_existing_abs(p)),
            _ => None,
        };
        let converted = match ensure_type(raw.clone(), def.value_type, basedir, self.ctx) {
            Ok(value) => Ok((value, origin)),
            // An empty variable for a type that cannot be empty means "use the default", taken
            // as written. Only int, float, none and dict conversions fail, and the generator
            // checks that no setting of those types has a templated default.
            Err(ConvertError::Invalid)
                if matches!(origin, SettingOrigin::Env(_))
                    && raw == SettingValue::Str("".into()) =>
            {
                let default = match def.default {
                    DefaultValue::Literal(lit) => SettingValue::from_literal(&lit),
                    DefaultValue::Template { .. } => SettingValue::Null,
                };
                ensure_type(default, def.value_type, None, self.ctx)
                    .map(|v| (v, SettingOrigin::Default))
                    .map_err(|err| conversion_error(def, plugin, &origin, &raw, err))
            }
            Err(err) => Err(conversion_error(def, plugin, &origin, &raw, err)),
        };
        let (mut value, origin) = converted?;
        if let (SettingValue::Str(s), SettingOrigin::Ini { .. }) = (&value, &origin) {
            let unquoted = unquote(s);
            if unquoted.len() != s.len() {
                value = SettingValue::Str(unquoted.to_string());
            }
        }
        check_choices(def, plugin, &value)?;
        if let (Some(dep), true) = (def.deprecated, origin.is_user_set()) {
            self.notices.push(Notice::Deprecation { subject: def.name.into(), deprecation: dep });
        }
        if plugin.is_none() {
            self.done.insert(def.name, value.clone());
        }
        Ok(Resolved { value, origin })
    }

    /// The raw value: environment, then file, then default.
    fn lookup(&mut self, def: &SettingDef) -> Result<(SettingValue, SettingOrigin), ConfigError> {
        let mut found = None;
        for entry in def.env {
            if let Some(value) = self.ctx.env.get(entry.name) {
                found =
                    Some((SettingValue::Str(value.clone()), SettingOrigin::Env(entry.name.into())));
                if let Some(dep) = entry.deprecated {
                    self.notices
                        .push(Notice::Deprecation { subject: entry.name.into(), deprecation: dep });
                }
            }
        }
        if found.is_none()
            && let Some(file) = &self.file
        {
            for entry in def.ini {
                if let Some(value) = file.ini.get(entry.section, entry.key) {
                    let origin = SettingOrigin::Ini {
                        path: file.path.into(),
                        section: entry.section.into(),
                        key: entry.key.into(),
                    };
                    found = Some((SettingValue::Str(value.into()), origin));
                    if let Some(dep) = entry.deprecated {
                        let subject = format!("[{}]{}", entry.section, entry.key);
                        self.notices.push(Notice::Deprecation { subject, deprecation: dep });
                    }
                }
            }
        }
        Ok(match found {
            Some(found) => found,
            None => (self.default(def), SettingOrigin::Default),
        })
    }

    fn default(&self, def: &SettingDef) -> SettingValue {
        match def.default {
            DefaultValue::Literal(lit) => SettingValue::from_literal(&lit),
            // The rendered text is a path starting with `/` (ANSIBLE_HOME is resolved), which
            // Jinja2's native mode cannot read as a Python literal, so it stays a string.
            DefaultValue::Template { setting, suffix } => match self.done.get(setting) {
                Some(SettingValue::Str(base)) => SettingValue::Str(format!("{base}{suffix}")),
                Some(other) => SettingValue::Str(format!("{other}{suffix}")),
                None => SettingValue::Str(suffix.to_string()),
            },
        }
    }
}

/// The error for a value that failed conversion, worded as ansible words it.
pub(crate) fn conversion_error(
    def: &SettingDef,
    plugin: Option<(&str, &str)>,
    origin: &SettingOrigin,
    raw: &SettingValue,
    err: ConvertError,
) -> ConfigError {
    match err {
        ConvertError::Invalid => ConfigError::InvalidValue {
            label: label(def, plugin),
            origin: origin.label(),
            type_name: def.type_name.into(),
            raw: raw.to_string(),
        },
        // ansible's `get_config_value` names only the setting here, even for a plugin's.
        ConvertError::Unhandled(reason) => {
            ConfigError::Unhandled { label: str_repr(def.name), reason }
        }
        ConvertError::OutOfRange => ConfigError::OutOfRange {
            label: label(def, plugin),
            origin: origin.label(),
            raw: raw.to_string(),
        },
    }
}

fn is_existing_abs(path: &str) -> bool {
    path.starts_with('/') && Path::new(path).exists()
}

/// A list must hold only allowed items; anything else must be one of the choices itself.
pub(crate) fn check_choices(
    def: &SettingDef,
    plugin: Option<(&str, &str)>,
    value: &SettingValue,
) -> Result<(), ConfigError> {
    let Some(choices) = def.choices else { return Ok(()) };
    if *value == SettingValue::Null {
        return Ok(());
    }
    let allowed = |v: &SettingValue| v.as_str().is_some_and(|s| choices.contains(&s));
    let ok = match (def.value_type, value) {
        (ValueType::List, SettingValue::List(items)) => items.iter().all(allowed),
        _ => allowed(value),
    };
    if ok {
        return Ok(());
    }
    Err(ConfigError::InvalidChoice {
        label: label(def, plugin),
        value: value.to_string(),
        valid: choices.join(", "),
    })
}

/// Whether ansible reads the environment variable `name` (for refusing undecodable ones).
pub(crate) fn is_read_by_ansible(name: &str) -> bool {
    name.starts_with("ANSIBLE_")
        || table::BASE
            .iter()
            .chain(table::PLUGINS.iter().flat_map(|p| p.options))
            .any(|def| def.env.iter().any(|e| e.name == name))
}
