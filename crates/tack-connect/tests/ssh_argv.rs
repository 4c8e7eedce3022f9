//! `SshTarget::options` against the `ssh` command line ansible-core 2.21.5 prints at -vvv for
//! the same inventory variables (tests/ssh/argv.json, recorded by
//! scripts/record-ssh-argv.py from tests/ssh/argv-cases.yaml). `%H` in a recording is the
//! recorder's `$HOME`, put back as this process's.

use serde_json::Value;
use tack_connect::SshTarget;

/// Cases tack's command line does not match yet, with the reason. None.
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[];

fn target(vars: &serde_json::Map<String, Value>) -> SshTarget {
    let mut t = SshTarget::new("127.0.0.1");
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    for (k, v) in vars {
        match k.as_str() {
            "ansible_port" => t.port = Some(v.as_u64().unwrap().try_into().unwrap()),
            "ansible_user" => t.user = Some(text(v)),
            "ansible_ssh_private_key_file" => t.private_key_file = Some(text(v)),
            "ansible_host_key_checking" => t.host_key_checking = v.as_bool().unwrap(),
            "ansible_ssh_timeout" => t.timeout = v.as_u64().unwrap().try_into().unwrap(),
            "ansible_ssh_args" => t.ssh_args = text(v),
            "ansible_ssh_common_args" => t.ssh_common_args = Some(text(v)),
            "ansible_ssh_extra_args" => t.ssh_extra_args = Some(text(v)),
            "ansible_control_path_dir" => t.control_path_dir = text(v),
            "ansible_control_path" => t.control_path = Some(text(v)),
            "ansible_ssh_password_mechanism" => t.password_mechanism = text(v),
            "ansible_password" => t.password = Some(text(v)),
            "ansible_ssh_pkcs11_provider" => t.pkcs11_provider = Some(text(v)),
            other => panic!("the test does not map {other}"),
        }
    }
    t
}

#[test]
fn the_ssh_command_line_is_ansibles() {
    let home = std::env::var("HOME").unwrap();
    let text = include_str!("ssh/argv.json");
    let cases: Vec<Value> = serde_json::from_str(text).unwrap();
    let (mut same, mut diverging) = (0, Vec::new());
    for rec in &cases {
        let name = rec["case"]["name"].as_str().unwrap();
        let want: Vec<String> = rec["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().replace("%H", &home))
            .collect();
        let got = target(rec["case"]["vars"].as_object().unwrap()).options().unwrap();
        let known = KNOWN_DIVERGENCES.iter().any(|(n, _)| *n == name);
        match (got == want, known) {
            (true, false) => same += 1,
            (false, true) => diverging.push(name),
            (true, true) => panic!("{name} now matches: take it off KNOWN_DIVERGENCES"),
            (false, false) => panic!("{name}:\n tack:    {got:?}\n ansible: {want:?}"),
        }
    }
    eprintln!("{} recorded, {same} identical, {} known divergences", cases.len(), diverging.len());
    assert!(same >= 15);
}

#[test]
fn a_password_never_shows_in_the_command_line_or_debug_output() {
    let mut t = SshTarget::new("h");
    t.password = Some("secret".into());
    let argv = t.options().unwrap();
    assert!(!argv.iter().any(|a| a.contains("secret")), "{argv:?}");
    let shown = format!("{t:?}");
    assert!(shown.contains("password: Some(\"<hidden>\")") && !shown.contains("secret"), "{shown}");
}

#[test]
fn an_args_string_shlex_rejects_is_named() {
    let mut t = SshTarget::new("h");
    t.ssh_extra_args = Some("-o 'Unclosed".into());
    let err = t.options().unwrap_err().to_string();
    assert_eq!(err, "cannot split ssh_extra_args (\"-o 'Unclosed\"): No closing quotation");
}

#[test]
fn a_control_path_python_cannot_format_is_named() {
    let mut t = SshTarget::new("h");
    t.control_path = Some("%(directory)s/%h".into());
    let err = t.options().unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot format control_path (\"%(directory)s/%h\"): only %(directory)s and %% may \
         follow a %, as in %(directory)s/%%h-%%p-%%r"
    );
}
