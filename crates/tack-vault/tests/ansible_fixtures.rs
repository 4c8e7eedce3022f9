//! Files and inline strings encrypted by ansible-vault 2.21.5 (recorded by
//! `scripts/record-vault-fixtures.sh`, listed in `fixtures/manifest.txt`) decrypt to the
//! plaintext they were made from, and the secret-selection rules hold on them.

use std::fs;
use std::path::{Path, PathBuf};

use tack_vault::{VaultError, VaultSecret, VaultSecrets, is_encrypted};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The password of a vault id, stripped as ansible strips a password file.
fn password(vault_id: &str) -> Vec<u8> {
    let raw = fs::read(fixtures().join("passwords").join(vault_id)).unwrap();
    tack_py::text::bytes_strip(&raw).to_vec()
}

fn secret(vault_id: &str) -> VaultSecret {
    VaultSecret::new(vault_id, password(vault_id))
}

/// The inline `!vault |` values of `inline.yml`, as a YAML parser delivers a literal block:
/// indentation removed, lines joined with `\n`, one final newline.
fn inline_values() -> Vec<(String, String)> {
    let text = fs::read_to_string(fixtures().join("inline.yml")).unwrap();
    let mut values: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.strip_suffix(": !vault |") {
            values.push((name.to_string(), String::new()));
        } else if let Some(body) = line.strip_prefix("          ") {
            let value = &mut values.last_mut().unwrap().1;
            value.push_str(body);
            value.push('\n');
        }
    }
    values
}

struct Case {
    name: String,
    vaulttext: Vec<u8>,
    vault_id: String,
    plaintext: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let manifest = fs::read_to_string(fixtures().join("manifest.txt")).unwrap();
    let inline = inline_values();
    let mut cases = Vec::new();
    for line in manifest.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut fields = line.split_whitespace();
        let (what, vault_id) = (fields.next().unwrap(), fields.next().unwrap());
        let rest = line[what.len()..].trim_start()[vault_id.len()..].trim();
        let plaintext = match rest.strip_prefix('=') {
            Some(literal) => literal.replace("\\n", "\n").into_bytes(),
            None => fs::read(fixtures().join(rest)).unwrap(),
        };
        let vaulttext = match what.strip_prefix("inline:") {
            Some(name) => inline.iter().find(|(n, _)| n == name).unwrap().1.clone().into_bytes(),
            None => fs::read(fixtures().join(what)).unwrap(),
        };
        cases.push(Case {
            name: what.to_string(),
            vaulttext,
            vault_id: vault_id.to_string(),
            plaintext,
        });
    }
    assert!(cases.len() >= 10, "the manifest lists every fixture");
    cases
}

#[test]
fn every_fixture_decrypts_to_its_recorded_plaintext() {
    for case in cases() {
        assert!(is_encrypted(&case.vaulttext), "{}", case.name);
        let secrets = VaultSecrets::new(vec![secret(&case.vault_id)]);
        let plaintext =
            secrets.decrypt(&case.vaulttext).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(plaintext, case.plaintext, "{}", case.name);
    }
}

#[test]
fn envelopes_name_the_vault_id_they_were_encrypted_under() {
    for case in cases() {
        let envelope = VaultSecrets::default().parse_envelope(&case.vaulttext).unwrap();
        assert_eq!(envelope.vault_id, case.vault_id, "{}", case.name);
        let version = if case.vault_id == "default" { "1.1" } else { "1.2" };
        assert_eq!(envelope.version, version, "{}", case.name);
    }
}

#[test]
fn every_secret_is_tried_in_order_whatever_the_envelope_names() {
    // As measured with ansible-vault -vvvvv: the envelope's vault id does not move its secret
    // first; all secrets are tried in the order given.
    let all = VaultSecrets::new(vec![secret("prod"), secret("default"), secret("dev")]);
    for case in cases() {
        let opened = all.decrypt_and_get_secret(&case.vaulttext).unwrap();
        assert_eq!(all.secrets()[opened.secret].vault_id, case.vault_id, "{}", case.name);
        assert_eq!(&opened.plaintext[..], &case.plaintext[..], "{}", case.name);
    }
    // A password given under another label still opens the file when ids need not match.
    let relabelled = VaultSecrets::new(vec![VaultSecret::new("other", password("dev"))]);
    let dev = fs::read(fixtures().join("v12-dev-yaml.vault")).unwrap();
    assert!(relabelled.decrypt(&dev).is_ok());
}

#[test]
fn vault_id_match_only_tries_the_named_secret() {
    let dev = fs::read(fixtures().join("v12-dev-yaml.vault")).unwrap();
    let relabelled =
        VaultSecrets::new(vec![VaultSecret::new("other", password("dev"))]).with_id_match(true);
    assert_eq!(relabelled.decrypt(&dev), Err(VaultError::NoMatchingSecret));
    let labelled = VaultSecrets::new(vec![secret("dev")]).with_id_match(true);
    assert!(labelled.decrypt(&dev).is_ok());
    // A 1.1 envelope carries the default identity.
    let v11 = fs::read(fixtures().join("v11-yaml.vault")).unwrap();
    let default = VaultSecrets::new(vec![secret("default")]).with_id_match(true);
    assert!(default.decrypt(&v11).is_ok());
    let renamed = default.clone().with_default_identity("site");
    assert_eq!(renamed.decrypt(&v11), Err(VaultError::NoMatchingSecret));
}

#[test]
fn wrong_or_missing_secrets_fail_as_ansible_fails() {
    let v11 = fs::read(fixtures().join("v11-yaml.vault")).unwrap();
    assert_eq!(VaultSecrets::default().decrypt(&v11), Err(VaultError::NoSecrets));
    let wrong = VaultSecrets::new(vec![secret("prod"), secret("dev")]);
    assert_eq!(wrong.decrypt(&v11), Err(VaultError::NoMatchingSecret));
    assert_eq!(wrong.decrypt(b"plain: text\n"), Err(VaultError::NotEncrypted));
}

#[test]
fn tack_encryption_round_trips_through_the_same_secrets() {
    let secrets = VaultSecrets::new(vec![secret("default"), secret("dev")]);
    for case in cases() {
        let text = secrets.encrypt(&case.plaintext, "dev").unwrap();
        assert!(text.starts_with("$ANSIBLE_VAULT;1.2;AES256;dev\n"));
        assert!(text.lines().skip(1).all(|l| l.len() <= 80));
        assert_eq!(secrets.decrypt(text.as_bytes()).unwrap(), case.plaintext, "{}", case.name);
    }
    let text = secrets.encrypt(b"x", "default").unwrap();
    assert!(text.starts_with("$ANSIBLE_VAULT;1.1;AES256\n"));
    assert_eq!(
        secrets.encrypt(b"x", "prod").unwrap_err().to_string(),
        "Did not find a match for --encrypt-vault-id=prod in the known vault-ids ['default', 'dev']"
    );
    assert_eq!(secrets.encrypt(text.as_bytes(), "dev"), Err(VaultError::AlreadyEncrypted));
}

#[test]
fn a_fixed_salt_gives_the_ciphertext_ansible_gives() {
    // ansible-vault 2.21.5 with ANSIBLE_VAULT_ENCRYPT_SALT=fixedsalt and password `secret`
    // encrypts `hello` to exactly this (recorded by the vault/encrypt-string-fixed-salt golden).
    let secrets =
        VaultSecrets::new(vec![secret("default")]).with_encrypt_salt(Some(b"fixedsalt".to_vec()));
    let first = secrets.encrypt(b"hello", "default").unwrap();
    let second = secrets.encrypt(b"hello", "default").unwrap();
    assert_eq!(first, second);
    assert_eq!(secrets.decrypt(first.as_bytes()).unwrap(), b"hello");
}
