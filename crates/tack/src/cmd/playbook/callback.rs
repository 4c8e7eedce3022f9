//! Which stdout callback a playbook run shows, and with what options: ansible's `default`
//! callback with the options users set in ansible.cfg or `ANSIBLE_*`
//! (`tack_report::callback::default::Options`); a default callback option tack does not
//! honour is refused by name before anything runs. Any other `stdout_callback` and the other
//! callback plugins (`callbacks_enabled`, `callback_plugins/`) run through ansible-core
//! (`tack_actions::python_callbacks`).
//!
//! Owns only the reading and the refusals; the transcript is the callback's.

use tack_config::Config;
use tack_diag::Diagnostic;
use tack_report::callback::default::Options;
use tack_report::callback::result_style::{ResultFormat, ResultStyle};

/// The default callback's options for this run, or why the configured output cannot be
/// given.
pub(super) fn options(config: &Config) -> Result<Options, Diagnostic> {
    let flag = |name: &str| -> Result<bool, Diagnostic> {
        let value = config.default_callback_option(name).map_err(Diagnostic::from)?;
        Ok(value.is_truthy())
    };
    let text = |name: &str| -> Result<Option<String>, Diagnostic> {
        let value = config.default_callback_option(name).map_err(Diagnostic::from)?;
        Ok(value.as_str().map(str::to_string).or_else(|| value.as_int().map(|i| i.to_string())))
    };
    let format = match text("result_format")?.as_deref() {
        None | Some("json") => ResultFormat::Json,
        Some("yaml") => ResultFormat::Yaml,
        Some(other) => {
            return Err(refused(&format!("the default callback's result_format '{other}'")));
        }
    };
    let indentation = match text("result_indentation")? {
        None => 4,
        Some(text) => text.parse::<usize>().map_err(|_| {
            Diagnostic::new(format!(
                "the default callback's result_indentation '{text}' is no number"
            ))
        })?,
    };
    let pretty = match config.default_callback_option("pretty_results").map_err(Diagnostic::from)? {
        tack_config::SettingValue::Null => None,
        value => Some(value.is_truthy()),
    };
    let yaml_width = match text("result_yaml_line_width")?.as_deref() {
        None | Some("default") => None,
        Some("no-break") => Some(0x7FFF_FFFF),
        Some("terminal-width") => i32::try_from(crate::color::columns()).ok(),
        Some(other) => {
            tack_diag::warn(&Diagnostic::new(format!(
                "Invalid value '{other}' for result_yaml_line_width"
            )));
            None
        }
    };
    let result_style = ResultStyle { format, pretty, indentation, yaml_width };
    Ok(Options {
        display_skipped_hosts: flag("display_skipped_hosts")?,
        display_ok_hosts: flag("display_ok_hosts")?,
        display_failed_stderr: flag("display_failed_stderr")?,
        display_included_hosts: flag("display_included_hosts")?,
        show_task_path_on_failure: flag("show_task_path_on_failure")?,
        result_style,
        check_mode_markers: flag("check_mode_markers")?,
        dry_run: false,
        show_per_host_start: flag("show_per_host_start")?,
    })
}

/// The default callback's options ansible also reads from the extra vars (an option's
/// `vars:` entries, templated with the extra vars alone, as its task queue manager does):
/// `ansible_display_skipped_hosts`. One that renders to `omit` leaves the configured value.
pub(super) fn options_from_extra_vars(
    options: &mut Options,
    extra_vars: &tack_yaml::Mapping,
    templar: &tack_template::Templar,
) -> Result<(), Diagnostic> {
    let Some(node) = extra_vars.get("ansible_display_skipped_hosts") else { return Ok(()) };
    let scope = tack_template::Scope::from_mapping(extra_vars);
    match templar.render(node, &scope) {
        Ok(rendered) => options.display_skipped_hosts = rendered.value.value.boolean_loose(),
        Err(e) if e.is_omitted() => {}
        Err(e) => return Err(e.to_diagnostic()),
    }
    Ok(())
}

fn refused(what: &str) -> Diagnostic {
    Diagnostic::new(format!("tack does not support {what} yet"))
}

/// Where the run's Python callback plugins may be, when it may have any: `callbacks_enabled`
/// names some, or a playbook's directory or the configured path holds a `callback_plugins`
/// file. `None`: nothing to look for, and no worker is started.
pub(super) fn python_callbacks(
    config: &Config,
    playbooks: &[std::path::PathBuf],
    verbosity: u8,
    extra_vars: &tack_yaml::Mapping,
) -> Option<tack_actions::python_callbacks::CallbackSetup> {
    use std::path::{Path, PathBuf};
    let cwd = std::env::current_dir().unwrap_or_default();
    let dirs: Vec<PathBuf> = playbooks
        .iter()
        .filter_map(|p| tack_py::path::normpath(&cwd.join(p)).parent().map(Path::to_path_buf))
        .collect();
    let has_python = |dir: &Path| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == "py"))
        })
    };
    let configured = config.callback_plugin_path();
    let stdout = python_stdout(config);
    let any = stdout.is_some()
        || !config.callbacks_enabled().is_empty()
        || dirs.iter().any(|d| has_python(&d.join("callback_plugins")))
        || configured.iter().any(|d| has_python(d));
    any.then(|| tack_actions::python_callbacks::CallbackSetup {
        basedir: dirs.first().cloned().unwrap_or(cwd),
        dirs,
        collections: config.collections_path(),
        config_file: config.config_file().map(PathBuf::from),
        verbosity,
        extra_vars: extra_vars.clone(),
        stdout,
    })
}

/// The `stdout_callback` when it is not `default` (which tack prints itself): ansible-core's
/// `minimal` or `oneline`, a collection's, one in `callback_plugins/`. It prints the
/// transcript through ansible-core's own code, or fails to load as ansible's does.
fn python_stdout(config: &Config) -> Option<String> {
    let name = config.stdout_callback()?;
    let short = tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::Builtin);
    (short != "default").then(|| name.to_string())
}

/// The callback plugins ansible's task queue manager tries, in its order, for `-vvvvv`'s
/// `Attempting to use 'NAME' callback.`: every `.py` file of the `callback_plugins/` beside
/// the playbooks, then of the configured path (each directory's sorted by name, the first
/// of a name winning), then ansible-core's own, then the `callbacks_enabled` entries not
/// among them; without `stdout`, the stdout callback in use.
pub(crate) fn attempted_callbacks(
    config: &Config,
    playbook_dirs: &[std::path::PathBuf],
    stdout: &str,
) -> Vec<String> {
    const CORE: [&str; 5] = ["default", "junit", "minimal", "oneline", "tree"];
    let mut names: Vec<String> = Vec::new();
    let dirs = playbook_dirs
        .iter()
        .map(|d| d.join("callback_plugins"))
        .chain(config.callback_plugin_path());
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut found: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_suffix(".py").map(str::to_string)
            })
            .filter(|n| n != "__init__")
            .collect();
        found.sort();
        for name in found {
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    for name in CORE {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    for enabled in config.callbacks_enabled() {
        let short =
            tack_py::ansible::short_name(&enabled, tack_py::ansible::CoreCollections::Builtin);
        if !names.iter().any(|n| n == short || *n == enabled) {
            names.push(enabled.clone());
        }
    }
    names.retain(|n| n != stdout);
    names
}
