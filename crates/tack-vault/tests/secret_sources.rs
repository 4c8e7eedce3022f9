//! Where secrets come from: the order `load_secrets` builds, how each source is read and
//! stripped, prompts and their confirmation, and which failures are fatal. Messages are
//! ansible-core 2.21's (the golden cases under tests/golden/vault/ pin them end to end).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tack_vault::secrets::{SecretError, SecretRequest, VaultSettings, load_secrets};
use tack_vault::{ScriptedPrompter, VaultSecret, VaultSecrets};

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = write(dir, name, &format!("#!/bin/sh\n{body}\n"));
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn load(
    request: SecretRequest,
    answers: &[&str],
) -> (Result<VaultSecrets, SecretError>, Vec<String>) {
    let mut prompter = ScriptedPrompter::new(answers.iter().copied());
    let result = load_secrets(&VaultSettings::default(), request, &mut prompter);
    (result, prompter.shown)
}

fn ids_and_passwords(secrets: &VaultSecrets) -> Vec<(String, String)> {
    secrets
        .secrets()
        .iter()
        .map(|s| (s.vault_id.clone(), String::from_utf8_lossy(s.password()).into_owned()))
        .collect()
}

#[test]
fn vault_ids_come_first_then_password_files_then_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a", "pw-a\n");
    let b = write(dir.path(), "b", "pw-b\n");
    let request = SecretRequest {
        vault_ids: vec![format!("dev@{}", a.display())],
        password_files: vec![b],
        ask_vault_pass: true,
        ..Default::default()
    };
    let (secrets, shown) = load(request, &["typed"]);
    assert_eq!(
        ids_and_passwords(&secrets.unwrap()),
        [("dev", "pw-a"), ("default", "pw-b"), ("default", "typed")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert_eq!(shown, ["Vault password: "]);
}

#[test]
fn files_are_stripped_of_whitespace_and_scripts_of_line_breaks_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "file", " \t pw with inner space \x0b\r\n");
    let plain = script(dir.path(), "plain.sh", "printf '  spaced  \\r\\n\\n'");
    let request = SecretRequest {
        vault_ids: vec![format!("f@{}", file.display()), format!("s@{}", plain.display())],
        ..Default::default()
    };
    let secrets = load(request, &[]).0.unwrap();
    assert_eq!(secrets.secrets()[0].password(), b"pw with inner space");
    assert_eq!(secrets.secrets()[1].password(), b"  spaced  ");
}

#[test]
fn client_scripts_get_the_vault_id() {
    let dir = tempfile::tempdir().unwrap();
    let client = script(dir.path(), "pass-client.sh", "echo \"pw-for-$2\"");
    let request = SecretRequest {
        vault_ids: vec![format!("prod@{}", client.display())],
        ..Default::default()
    };
    let secrets = load(request, &[]).0.unwrap();
    assert_eq!(ids_and_passwords(&secrets), [("prod".to_string(), "pw-for-prod".to_string())]);
}

#[test]
fn a_failing_file_is_fatal_only_when_nothing_else_loads() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good", "pw\n");
    let missing = dir.path().join("missing");
    let request = SecretRequest {
        vault_ids: vec![missing.display().to_string(), good.display().to_string()],
        ..Default::default()
    };
    assert_eq!(load(request, &[]).0.unwrap().secrets().len(), 1);

    let request =
        SecretRequest { vault_ids: vec![missing.display().to_string()], ..Default::default() };
    let err = load(request, &[]).0.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("The vault password file {} was not found", missing.display())
    );
}

#[test]
fn new_passwords_are_asked_twice_and_must_match() {
    let request = SecretRequest {
        vault_ids: vec!["dev@prompt".to_string()],
        new_password: true,
        ..Default::default()
    };
    let (secrets, shown) = load(request.clone(), &["same ", " same"]);
    assert_eq!(secrets.unwrap().secrets()[0].password(), b"same");
    assert_eq!(shown, ["New vault password (dev): ", "Confirm new vault password (dev): "]);

    let err = load(request.clone(), &["one", "two"]).0.unwrap_err();
    assert_eq!(err.to_string(), "Passwords do not match");
    let err = load(request.clone(), &["", ""]).0.unwrap_err();
    assert_eq!(err.to_string(), "Invalid vault password was provided");
    let err = load(request, &["only one"]).0.unwrap_err();
    assert_eq!(err.to_string(), "EOFError (ctrl-d) on prompt for (dev)");
}

#[test]
fn ask_vault_pass_uses_the_old_prompt_wording() {
    let request = SecretRequest { ask_vault_pass: true, new_password: true, ..Default::default() };
    let (_, shown) = load(request, &["x", "x"]);
    assert_eq!(shown, ["New Vault password: ", "Confirm New Vault password: "]);
}

#[test]
fn nothing_given_prompts_only_when_auto_prompt() {
    let (secrets, shown) = load(SecretRequest::default(), &[]);
    assert!(secrets.unwrap().is_empty());
    assert!(shown.is_empty());
    let request = SecretRequest { auto_prompt: true, ..Default::default() };
    let (secrets, shown) = load(request, &["pw"]);
    assert_eq!(secrets.unwrap().secrets().len(), 1);
    assert_eq!(shown, ["Vault password: "]);
}

#[test]
fn a_vaulted_password_file_opens_with_an_earlier_secret() {
    let dir = tempfile::tempdir().unwrap();
    let outer = VaultSecrets::new(vec![VaultSecret::new("default", b"outer".to_vec())]);
    let vaulted = outer.encrypt(b"inner-password\n", "default").unwrap();
    let first = write(dir.path(), "first", "outer");
    let second = write(dir.path(), "second", &vaulted);
    let request = SecretRequest {
        vault_ids: vec![format!("a@{}", first.display()), format!("b@{}", second.display())],
        ..Default::default()
    };
    let secrets = load(request, &[]).0.unwrap();
    assert_eq!(secrets.secrets()[1].password(), b"inner-password");

    // Read first, it has nothing to open it with.
    let request =
        SecretRequest { vault_ids: vec![second.display().to_string()], ..Default::default() };
    let err = load(request, &[]).0.unwrap_err();
    assert_eq!(err.to_string(), "A vault password must be specified to decrypt data.");
}

#[test]
fn settings_add_the_configured_password_file_and_identity() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "pw", "configured\n");
    let settings = VaultSettings {
        identity: "site".to_string(),
        password_file: Some(file),
        id_match: true,
        ..Default::default()
    };
    let mut prompter = ScriptedPrompter::new(Vec::<String>::new());
    let secrets = load_secrets(&settings, SecretRequest::default(), &mut prompter).unwrap();
    assert_eq!(ids_and_passwords(&secrets), [("site".to_string(), "configured".to_string())]);
    // The identity also names what a 1.1 envelope carries, so vault_id_match still opens it.
    let text = secrets.encrypt(b"x", "site").unwrap();
    assert!(text.starts_with("$ANSIBLE_VAULT;1.2;AES256;site\n"));
    let v11 = secrets.encrypt_with(b"y", secrets.secrets()[0].password(), None).unwrap();
    assert_eq!(secrets.decrypt(v11.as_bytes()).unwrap(), b"y");
}

#[test]
fn secrets_never_show_in_debug_output() {
    let secret = VaultSecret::new("dev", b"hunter2".to_vec());
    assert_eq!(format!("{secret:?}"), "VaultSecret(dev, ********)");
    let secrets = VaultSecrets::new(vec![secret]);
    assert!(!format!("{secrets:?}").contains("hunter2"));
}
