//! The typed accessors read the settings they claim to: each is compared with the value
//! ansible-core recorded for its setting in the `cwd-config` and `types-bool` fixtures (see
//! `recorded.rs` for how fixtures are recorded), and the user-set list with the settings
//! ansible reported as not coming from their default.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tack_config::{Config, Context, Gathering, HashBehaviour, SettingOrigin, SettingValue};

struct Fixture {
    _dir: tempfile::TempDir,
    root: String,
    config: Config,
    expected: Value,
}

fn load(name: &str) -> Fixture {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("expected.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(name);
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::copy(src.join("ansible.cfg"), root.join("ansible.cfg")).unwrap();
    let root = root.to_str().unwrap().to_string();
    let mut ctx = Context::empty(root.clone());
    ctx.env = HashMap::from([("HOME".to_string(), format!("{root}/home"))]);
    if let Ok(text) = std::fs::read_to_string(src.join("env")) {
        for line in text.lines() {
            let (k, v) = line.split_once('=').unwrap();
            ctx.env.insert(k.into(), v.into());
        }
    }
    ctx.system_config = format!("{root}/etc/ansible/ansible.cfg");
    let config = Config::load(&ctx).unwrap();
    Fixture { _dir: dir, root, config, expected }
}

impl Fixture {
    fn want(&self, name: &str) -> Value {
        let v = self.expected["settings"][name]["value"].clone();
        match v {
            Value::String(s) => Value::String(s.replace("<CASE>", &self.root)),
            Value::Array(items) => Value::Array(
                items
                    .into_iter()
                    .map(|i| match i {
                        Value::String(s) => Value::String(s.replace("<CASE>", &self.root)),
                        other => other,
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    fn want_plugin(&self, plugin: &str, name: &str) -> Value {
        self.expected["plugins"][plugin][name]["value"].clone()
    }
}

fn paths(v: Vec<PathBuf>) -> Value {
    Value::from(v.into_iter().map(|p| p.display().to_string()).collect::<Vec<_>>())
}

fn opt_path(v: Option<PathBuf>) -> Value {
    v.map_or(Value::Null, |p| Value::from(p.display().to_string()))
}

#[test]
fn accessors_read_their_settings() {
    let f = load("cwd-config");
    let c = &f.config;
    assert_eq!(paths(c.inventory()), f.want("DEFAULT_HOST_LIST"));
    assert_eq!(Value::from(c.forks()), f.want("DEFAULT_FORKS"));
    assert_eq!(Value::from(c.remote_user()), f.want("DEFAULT_REMOTE_USER"));
    assert_eq!(Value::from(c.remote_port()), f.want("DEFAULT_REMOTE_PORT"));
    assert_eq!(opt_path(c.private_key_file()), f.want("DEFAULT_PRIVATE_KEY_FILE"));
    assert_eq!(Value::from(c.host_key_checking()), f.want("HOST_KEY_CHECKING"));
    assert_eq!(Value::from(c.timeout()), f.want("DEFAULT_TIMEOUT"));
    assert_eq!(paths(c.roles_path()), f.want("DEFAULT_ROLES_PATH"));
    assert_eq!(paths(c.collections_path()), f.want("COLLECTIONS_PATHS"));
    assert_eq!(opt_path(c.vault_password_file()), f.want("DEFAULT_VAULT_PASSWORD_FILE"));
    assert_eq!(Value::from(c.vault_identity_list()), f.want("DEFAULT_VAULT_IDENTITY_LIST"));
    assert_eq!(Value::from(c.vault_identity()), f.want("DEFAULT_VAULT_IDENTITY"));
    assert_eq!(Value::from(c.vault_encrypt_identity()), f.want("DEFAULT_VAULT_ENCRYPT_IDENTITY"));
    assert_eq!(Value::from(c.become_enabled()), f.want("DEFAULT_BECOME"));
    assert_eq!(Value::from(c.become_method()), f.want("DEFAULT_BECOME_METHOD"));
    assert_eq!(Value::from(c.become_user()), f.want("DEFAULT_BECOME_USER"));
    assert_eq!(Value::from(c.become_ask_pass()), f.want("DEFAULT_BECOME_ASK_PASS"));
    assert_eq!((c.gathering(), f.want("DEFAULT_GATHERING")), (Gathering::Smart, "smart".into()));
    assert_eq!(Value::from(c.retry_files_enabled()), f.want("RETRY_FILES_ENABLED"));
    assert_eq!(opt_path(c.retry_files_save_path()), f.want("RETRY_FILES_SAVE_PATH"));
    assert_eq!(Value::from(c.any_errors_fatal()), f.want("ANY_ERRORS_FATAL"));
    assert_eq!(Value::from(c.interpreter_python()), f.want("INTERPRETER_PYTHON"));
    let hash = (c.hash_behaviour(), f.want("DEFAULT_HASH_BEHAVIOUR"));
    assert_eq!(hash, (HashBehaviour::Merge, "merge".into()));
    assert_eq!(Value::from(c.inventory_enabled_plugins()), f.want("INVENTORY_ENABLED"));
    assert_eq!(Value::from(c.inventory_ignore_extensions()), f.want("INVENTORY_IGNORE_EXTS"));
    assert_eq!(Value::from(c.inventory_ignore_patterns()), f.want("INVENTORY_IGNORE_PATTERNS"));
    assert_eq!(
        Value::from(c.inventory_unparsed_is_failed()),
        f.want("INVENTORY_UNPARSED_IS_FAILED")
    );
    assert_eq!(
        Value::from(c.inventory_any_unparsed_is_failed()),
        f.want("INVENTORY_ANY_UNPARSED_IS_FAILED")
    );
    assert_eq!(Value::from(c.private_role_vars()), f.want("DEFAULT_PRIVATE_ROLE_VARS"));
    assert_eq!(Value::from(c.strategy()), f.want("DEFAULT_STRATEGY"));
    assert_eq!(Value::from(c.stdout_callback()), f.want("DEFAULT_STDOUT_CALLBACK"));
    assert_eq!(Value::from(c.callbacks_enabled()), f.want("CALLBACKS_ENABLED"));
    assert_eq!(Value::from(c.display_skipped_hosts()), f.want("DISPLAY_SKIPPED_HOSTS"));
    assert_eq!(
        Value::from(c.display_ok_hosts().unwrap()),
        f.want_plugin("callback/default", "display_ok_hosts")
    );
    assert_eq!(Value::from(c.show_custom_stats()), f.want("SHOW_CUSTOM_STATS"));
    assert_eq!(Value::from(c.system_warnings()), f.want("SYSTEM_WARNINGS"));
    assert_eq!(Value::from(c.localhost_warning()), f.want("LOCALHOST_WARNING"));
    assert_eq!(
        Value::from(c.invalid_task_attribute_failed()),
        f.want("INVALID_TASK_ATTRIBUTE_FAILED")
    );
    assert_eq!(Value::from(c.max_file_size_for_diff()), f.want("MAX_FILE_SIZE_FOR_DIFF"));
    assert_eq!(opt_path(c.local_tmp()), f.want("DEFAULT_LOCAL_TMP"));
    assert_eq!(Value::from(c.remote_tmp().unwrap()), f.want_plugin("shell/sh", "remote_tmp"));
    assert_eq!(Value::from(c.managed_str()), f.want("DEFAULT_MANAGED_STR"));
    assert_eq!(Value::from(c.jinja2_extensions()), f.want("DEFAULT_JINJA2_EXTENSIONS"));
    assert_eq!(Value::from(c.error_on_undefined_vars()), f.want("DEFAULT_UNDEFINED_VAR_BEHAVIOR"));
    assert_eq!(Value::from(c.deprecation_warnings()), f.want("DEPRECATION_WARNINGS"));
}

#[test]
fn ssh_and_colour_accessors() {
    let f = load("ssh-options");
    let c = &f.config;
    let ssh = |name| f.want_plugin("connection/ssh", name);
    assert_eq!(Value::from(c.ssh_args().unwrap()), ssh("ssh_args"));
    assert_eq!(Value::from(c.ssh_common_args().unwrap()), ssh("ssh_common_args"));
    assert_eq!(Value::from(c.ssh_control_path().unwrap()), ssh("control_path"));
    assert_eq!(Value::from(c.ssh_control_path_dir().unwrap()), ssh("control_path_dir"));
    assert_eq!(Value::from(c.ssh_pipelining().unwrap()), ssh("pipelining"));
    assert_eq!(Value::from(c.pipelining()), f.want("ANSIBLE_PIPELINING"));

    let f = load("types-bool");
    assert_eq!(Value::from(f.config.nocolor()), f.want("ANSIBLE_NOCOLOR"));
    assert_eq!(Value::from(f.config.force_color()), f.want("ANSIBLE_FORCE_COLOR"));
}

#[test]
fn untyped_settings_are_tested_as_python_tests_them() {
    let f = load("untyped-values");
    assert_eq!(f.want("DEFAULT_VAULT_ID_MATCH"), Value::from("False"));
    assert!(f.config.vault_id_match(), "the string 'False' is true to ansible");
}

#[test]
fn user_set_settings_are_the_non_default_ones() {
    let f = load("cwd-config");
    let got: BTreeSet<String> = f
        .config
        .user_set_settings()
        .iter()
        .map(|s| match s.plugin {
            None => s.name.to_string(),
            Some((kind, name)) => format!("{kind}/{name}:{}", s.name),
        })
        .collect();
    let mut want = BTreeSet::new();
    for (name, v) in f.expected["settings"].as_object().unwrap() {
        if v["origin"] != "default" && name != "CONFIG_FILE" {
            want.insert(name.clone());
        }
    }
    for (plugin, options) in f.expected["plugins"].as_object().unwrap() {
        for (name, v) in options.as_object().unwrap() {
            if v["origin"] != "default" {
                want.insert(format!("{plugin}:{name}"));
            }
        }
    }
    assert_eq!(got, want);
}

/// ansible puts command-line options above configuration without passing them through it, so
/// there is nothing to record; the messages follow the recorded ones' wording with a `cli:`
/// origin, which is how ansible labels a setting taken from the command line.
#[test]
fn command_line_layer() {
    let mut f = load("cwd-config");
    f.config.apply_cli("DEFAULT_FORKS", "forks", SettingValue::Str("7".into())).unwrap();
    assert_eq!(f.config.forks(), 7);
    assert_eq!(f.config.origin("DEFAULT_FORKS"), Some(&SettingOrigin::Cli("forks".into())));
    assert_eq!(f.config.origin("DEFAULT_FORKS").map(SettingOrigin::label).unwrap(), "cli: forks");

    let err = f.config.apply_cli("DEFAULT_FORKS", "forks", SettingValue::Str("x".into()));
    assert_eq!(
        err.unwrap_err().to_string(),
        "Config 'DEFAULT_FORKS' from 'cli: forks' has an invalid value: Invalid value provided \
         for 'integer': 'x'"
    );
    let err = f.config.apply_cli("DEFAULT_GATHERING", "gathering", SettingValue::Str("x".into()));
    assert_eq!(
        err.unwrap_err().startup_message(),
        "ERROR: Invalid value 'x' for config 'DEFAULT_GATHERING'. Valid values are: implicit, explicit, smart\n"
    );
    let err = f.config.apply_cli("NO_SUCH", "x", SettingValue::Null);
    assert_eq!(err.unwrap_err().to_string(), "No config definition exists for 'NO_SUCH'.");
}
