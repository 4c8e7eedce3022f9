//! tack's YAML writer against ansible-core 2.21.5's, byte for byte.
//!
//! `tests/corpus/dump.json` was recorded by `scripts/record-yaml-dump.py`: each value written
//! through PyYAML with ansible's `AnsibleDumper` the ways ansible writes YAML
//! (`ansible-inventory -y`, `to_yaml`, `to_nice_yaml`, and those with `indent`, `width`,
//! `sort_keys`, `default_flow_style`, and vaulted values kept encrypted or redacted).

use std::path::Path;

use serde_json::Value as Json;
use tack_yaml::{DumpOptions, Mapping, Node, TimeOfDay, Timestamp, Value, VaultDump, dump};

fn value(j: &Json) -> Value {
    let text = |k: &str| j[k].as_str().unwrap().to_string();
    let parts = || -> Vec<Option<i64>> {
        j["parts"].as_array().unwrap().iter().map(Json::as_i64).collect()
    };
    match j["type"].as_str().unwrap() {
        "null" => Value::Null,
        "bool" => Value::Bool(j["value"].as_bool().unwrap()),
        "int" => match text("repr").parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::BigInt(text("repr")),
        },
        "float" => Value::Float(text("repr").parse().unwrap()),
        "str" => Value::Str(text("value")),
        "vault" => Value::Vault(text("ciphertext")),
        "date" => {
            let p = parts();
            Value::Timestamp(Timestamp {
                year: p[0].unwrap() as i32,
                month: p[1].unwrap() as u8,
                day: p[2].unwrap() as u8,
                time: None,
            })
        }
        "datetime" => {
            let p = parts();
            Value::Timestamp(Timestamp {
                year: p[0].unwrap() as i32,
                month: p[1].unwrap() as u8,
                day: p[2].unwrap() as u8,
                time: Some(TimeOfDay {
                    hour: p[3].unwrap() as u8,
                    minute: p[4].unwrap() as u8,
                    second: p[5].unwrap() as u8,
                    microsecond: p[6].unwrap() as u32,
                    utc_offset_minutes: p[7].map(|m| m as i32),
                }),
            })
        }
        "list" => Value::Seq(
            j["items"].as_array().unwrap().iter().map(|i| Node::bare(value(i))).collect(),
        ),
        "dict" => {
            let mut map = Mapping::new();
            for pair in j["items"].as_array().unwrap() {
                map.insert(Node::bare(value(&pair[0])), Node::bare(value(&pair[1])));
            }
            Value::Map(map)
        }
        other => panic!("unknown type {other}"),
    }
}

fn options(j: &Json) -> DumpOptions {
    DumpOptions {
        indent: j["indent"].as_i64().map(|i| i as i32),
        width: j["width"].as_i64().map(|i| i as i32),
        default_flow_style: j["flow"].as_bool(),
        sort_keys: j["sort_keys"].as_bool().unwrap(),
        vault: match j["vault"].as_str() {
            Some("redact") => VaultDump::Redact,
            _ => VaultDump::KeepEncrypted,
        },
        block_strings: None,
    }
}

#[test]
fn dumps_match_ansible() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/dump.json");
    let cases: Vec<Json> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(cases.len() >= 60);
    let mut failures = Vec::new();
    for case in &cases {
        let want = case["output"].as_str().unwrap();
        match dump(&value(&case["value"]), &options(&case["options"])) {
            Ok(got) if got == want => {}
            Ok(got) => failures.push(format!(
                "{} {}:\n  want {want:?}\n  got  {got:?}",
                case["mode"], case["value"]
            )),
            Err(err) => failures.push(format!("{} {}: error {err}", case["mode"], case["value"])),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn vault_fail_and_decrypt() {
    let secret = Value::Vault("$ANSIBLE_VAULT;1.1;AES256\n3031\n".into());
    let fail = DumpOptions { vault: VaultDump::Fail, ..DumpOptions::to_yaml() };
    assert_eq!(dump(&secret, &fail).unwrap_err().to_string(), "Attempted to dump a vaulted value");
    let decrypt = DumpOptions {
        vault: VaultDump::Decrypt(std::sync::Arc::new(|_| Ok("plain text".into()))),
        ..DumpOptions::to_yaml()
    };
    assert_eq!(dump(&secret, &decrypt).unwrap(), "plain text\n");
}
