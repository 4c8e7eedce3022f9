//! Every fixture under `tests/fixtures/` resolved by tack-config and compared with what
//! ansible-core 2.21.5 resolved for it, as `scripts/record-config.py` recorded in the
//! fixture's `expected.json`: the file chosen, every core setting's value and origin, every
//! plugin option's value, origin or error, the load error, and the warnings ansible printed.

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Map, Value, json};
use tack_config::{Config, Context, SettingValue};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if entry.file_name() != "expected.json" {
            fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// The fixture staged as the recording script stages it, and the context to resolve it in.
struct Staged {
    _dir: tempfile::TempDir,
    root: String,
    ctx: Context,
}

fn stage(fixture: &Path) -> Result<Staged, Failed> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join(fixture.file_name().ok_or("fixture without a name")?);
    copy_dir(fixture, &root).map_err(|e| e.to_string())?;
    fs::create_dir_all(root.join("home")).map_err(|e| e.to_string())?;
    fs::create_dir_all(root.join("etc/ansible")).map_err(|e| e.to_string())?;
    if let Ok(list) = fs::read_to_string(fixture.join("world-writable")) {
        for rel in list.split_whitespace() {
            fs::set_permissions(root.join(rel), fs::Permissions::from_mode(0o777))
                .map_err(|e| e.to_string())?;
        }
    }
    let root_str = root.to_str().ok_or("temporary path is not UTF-8")?.to_string();
    let cwd = match fs::read_to_string(fixture.join("cwd")) {
        Ok(rel) => format!("{root_str}/{}", rel.trim()),
        Err(_) => root_str.clone(),
    };
    let mut env = HashMap::from([
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ("HOME".to_string(), format!("{root_str}/home")),
        ("LANG".to_string(), "C.UTF-8".to_string()),
    ]);
    if let Ok(text) = fs::read_to_string(fixture.join("env")) {
        for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
            let (name, value) = line.split_once('=').unwrap_or((line, ""));
            env.insert(name.to_string(), value.replace("<CASE>", &root_str));
        }
    }
    let system_config = format!("{root_str}/etc/ansible/ansible.cfg");
    Ok(Staged { _dir: dir, root: root_str, ctx: Context { env, cwd, system_config } })
}

impl Staged {
    /// What the recording normalised: the staged path, and `/etc/ansible` for the fixture's
    /// stand-in for it.
    fn normalise(&self, text: &str) -> String {
        text.replace(&format!("{}/etc/ansible", self.root), "/etc/ansible")
            .replace(&self.root, "<CASE>")
    }

    fn json(&self, value: &SettingValue) -> Value {
        match value {
            SettingValue::Null => Value::Null,
            SettingValue::Bool(b) => json!(b),
            SettingValue::Int(n) => json!(n),
            SettingValue::Float(f) => json!(f),
            SettingValue::Str(s) => json!(self.normalise(s)),
            SettingValue::List(items) => Value::Array(items.iter().map(|v| self.json(v)).collect()),
            SettingValue::Dict(items) => Value::Object(
                items.iter().map(|(k, v)| (k.clone(), self.json(v))).collect::<Map<_, _>>(),
            ),
        }
    }
}

fn check(fixture: &Path) -> Result<(), Failed> {
    let text = fs::read_to_string(fixture.join("expected.json"))
        .map_err(|e| format!("{}: {e} (run scripts/record-config.py)", fixture.display()))?;
    let expected: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let staged = stage(fixture)?;
    let cli = &expected["cli"];
    let mut problems = Vec::new();

    match Config::load(&staged.ctx) {
        Err(err) => {
            let Some(want) = expected["error"].as_object() else {
                return Err(format!("tack failed where ansible did not: {err}").into());
            };
            let got = staged.normalise(&err.to_string());
            if Some(got.as_str()) != want["message"].as_str() {
                problems
                    .push(format!("message:\n  tack:    {got:?}\n  ansible: {}", want["message"]));
            }
            if err.help().as_deref() != want["help"].as_str() {
                problems.push(format!("help: tack {:?}, ansible {}", err.help(), want["help"]));
            }
            let startup = staged.normalise(&err.startup_message());
            if Some(startup.as_str()) != cli["stderr"].as_str() {
                problems
                    .push(format!("stderr:\n  tack:    {startup:?}\n  ansible: {}", cli["stderr"]));
            }
            if Some(i64::from(err.exit_code())) != cli["rc"].as_i64() {
                problems.push(format!(
                    "exit code: tack {}, ansible {}",
                    err.exit_code(),
                    cli["rc"]
                ));
            }
        }
        Ok(config) => {
            if !expected["error"].is_null() {
                return Err(format!("ansible failed ({}), tack did not", expected["error"]).into());
            }
            compare_loaded(&staged, &config, &expected, &mut problems);
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

fn compare_loaded(staged: &Staged, config: &Config, expected: &Value, problems: &mut Vec<String>) {
    let file = config.config_file().map(|p| staged.normalise(&p.display().to_string()));
    if json!(file) != expected["config_file"] {
        problems.push(format!("config file: tack {file:?}, ansible {}", expected["config_file"]));
    }
    let line = format!("  config file = {}", file.as_deref().unwrap_or("None"));
    if Some(line.as_str()) != expected["cli"]["config_file_line"].as_str() {
        problems.push(format!("--version line: tack {line:?}"));
    }
    let settings = expected["settings"].as_object().cloned().unwrap_or_default();
    let mut compared = 0;
    for (name, want) in &settings {
        if name == "CONFIG_FILE" {
            continue;
        }
        compared += 1;
        let Some(got) = config.setting(name) else {
            problems.push(format!("{name}: unknown to tack"));
            continue;
        };
        let value = staged.json(&got.value);
        let origin = staged.normalise(&got.origin.label());
        if value != want["value"] || Some(origin.as_str()) != want["origin"].as_str() {
            problems.push(format!(
                "{name}:\n  tack:    {value} from {origin:?}\n  ansible: {} from {}",
                want["value"], want["origin"]
            ));
        }
    }
    if compared != config.settings().count() {
        problems.push(format!(
            "ansible recorded {compared} settings, tack has {}",
            config.settings().count()
        ));
    }
    for (plugin, options) in expected["plugins"].as_object().cloned().unwrap_or_default() {
        let (kind, name) = plugin.split_once('/').unwrap_or((&plugin, ""));
        for (option, want) in options.as_object().cloned().unwrap_or_default() {
            let got = match config.plugin_option(kind, name, &option) {
                None => json!("unknown to tack"),
                Some(Ok(r)) => json!({
                    "value": staged.json(&r.value),
                    "origin": staged.normalise(&r.origin.label()),
                }),
                Some(Err(err)) => json!({"error": {
                    "message": staged.normalise(&err.to_string()),
                    "help": err.help(),
                }}),
            };
            let mut want = want.clone();
            if let Some(err) = want.get_mut("error").and_then(Value::as_object_mut) {
                err.remove("class");
            }
            if got != want {
                problems.push(format!("{plugin} {option}:\n  tack:    {got}\n  ansible: {want}"));
            }
        }
    }
    let notices = staged.normalise(&config.render_notices());
    if Some(notices.as_str()) != expected["cli"]["stderr"].as_str() {
        problems.push(format!(
            "warnings:\n  tack:    {notices:?}\n  ansible: {}",
            expected["cli"]["stderr"]
        ));
    }
    if expected["cli"]["rc"].as_i64() != Some(0) {
        problems.push(format!("ansible exited {}, tack loaded", expected["cli"]["rc"]));
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut fixtures: Vec<PathBuf> = fs::read_dir(fixtures_dir())
        .map(|dir| dir.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_dir()).collect())
        .unwrap_or_default();
    fixtures.sort();
    assert!(fixtures.len() >= 15, "the fixtures are missing");
    let trials = fixtures
        .into_iter()
        .map(|path| {
            let name =
                path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            Trial::test(name, move || check(&path))
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
