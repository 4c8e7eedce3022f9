//! What `ansible-playbook` (and `ansible`) prints before its first playbook at `-v` and more: from `-vv` the
//! version block (`opt_help.version`) and from `-v` the configuration file line (each also
//! logged under a `log_verbosity` that reaches it). (The
//! callback loader's notes follow the first playbook's loading; the callback prints them.)
//!
//! The version block describes the program that runs: tack prints its own name, version and
//! executable where ansible prints its install, and names what it does without (no Python
//! package, interpreter, Jinja2 or PyYAML on the controller). The configuration lines are the
//! settings tack resolved, which are ansible's.

use std::io::Write;

use tack_config::Config;
use tack_report::callback::color::{Hue, Palette, paint};

/// The version block, one string per line.
fn version_block(prog: &str, config: &Config) -> Vec<String> {
    let file = config.config_file().map_or("None".to_string(), |p| p.display().to_string());
    let module_path = match config.get("DEFAULT_MODULE_PATH").and_then(|v| v.as_str_list()) {
        Some(list) => tack_py::repr::str_list_repr(&list),
        None => "Default w/o overrides".to_string(),
    };
    let collections: Vec<String> =
        config.collections_path().iter().map(|p| p.display().to_string()).collect();
    let executable = std::env::args().next().unwrap_or_default();
    vec![
        format!("{prog} [tack {}, core 2.21.5 compatible]", env!("CARGO_PKG_VERSION")),
        format!("  config file = {file}"),
        format!("  configured module search path = {module_path}"),
        "  ansible python module location = None (tack is not a Python package)".to_string(),
        format!("  ansible collection location = {}", collections.join(":")),
        format!("  executable location = {executable}"),
        "  python version = None (tack runs no Python on the controller)".to_string(),
        "  jinja version = None (templates are rendered by minijinja)".to_string(),
        "  pyyaml version = None (YAML is loaded by libyaml-safer)".to_string(),
    ]
}

/// The program's name as the version block gives it: ansible's command name (`ansible_name`)
/// when tack runs under it, else tack's own subcommand.
fn prog(ansible_name: &'static str, tack_name: &'static str) -> &'static str {
    let argv0 = std::env::args().next().unwrap_or_default();
    match std::path::Path::new(&argv0).file_name().and_then(|n| n.to_str()) {
        Some(name) if name == ansible_name => ansible_name,
        _ => tack_name,
    }
}

/// Writes `ansible-playbook`'s header lines for `verbosity` (`-v` count), in `palette`'s
/// verbose colour.
pub(crate) fn write(
    out: &mut impl Write,
    config: &Config,
    verbosity: u8,
    palette: Option<&Palette>,
) -> std::io::Result<()> {
    write_for(prog("ansible-playbook", "tack playbook"), out, config, verbosity, palette)
}

/// [`write`] for the ad-hoc command (`ansible`).
pub(crate) fn write_adhoc(
    out: &mut impl Write,
    config: &Config,
    verbosity: u8,
) -> std::io::Result<()> {
    write_for(prog("ansible", "tack adhoc"), out, config, verbosity, None)
}

fn write_for(
    prog: &str,
    out: &mut impl Write,
    config: &Config,
    verbosity: u8,
    palette: Option<&Palette>,
) -> std::io::Result<()> {
    let config_line = match config.config_file() {
        Some(path) => format!("Using {} as config file", path.display()),
        None => "No config file found; using defaults".to_string(),
    };
    // `display.vv` and `display.v`: shown from their level, and logged again when
    // `log_verbosity` reaches it.
    for (level, line) in [(2, version_block(prog, config).join("\n")), (1, config_line)] {
        if tack_diag::display_log::verbose_shown(level, verbosity, &line) {
            writeln!(out, "{}", paint(palette, &line, Hue::Verbose))?;
        }
    }
    Ok(())
}
