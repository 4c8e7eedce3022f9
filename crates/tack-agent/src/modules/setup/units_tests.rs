//! setup's text parsers against ansible's own functions on the same text
//! (tests/setup/units.yml, outcomes recorded by `scripts/record-setup-facts.py --units` into
//! units.json). Machine-independent: no reference needed.

use serde_json::{Map, Value, json};

use super::{distribution, hardware, matches, network, storage, system};

/// (kind, index, why): units where tack knowingly differs.
const KNOWN_DIVERGENCES: &[(&str, usize, &str)] = &[];

fn units() -> Map<String, Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/setup/units.json");
    let text = std::fs::read_to_string(path).expect("units.json");
    serde_json::from_str(&text).expect("units.json is JSON")
}

fn run(kind: &str, input: &Value) -> Value {
    let text = || input.as_str().unwrap_or("").to_string();
    match kind {
        "cmdline" => {
            let data = text();
            let data = data.trim();
            if data.is_empty() {
                // ansible's collector returns nothing for an empty command line; its parsers
                // (what the unit calls) return empty dicts.
                return json!({"cmdline": {}, "proc_cmdline": {}});
            }
            Value::Object(system::parse_cmdline(data))
        }
        "dns" => Value::Object(system::parse_dns(text().trim())),
        "debian" => {
            let mut guessed = Map::new();
            guessed.insert("distribution_release".into(), json!("bookworm"));
            let (parsed, facts) = distribution::parse_debian_file(
                input["data"].as_str().unwrap_or("").trim(),
                input["path"].as_str().unwrap_or(""),
                &guessed,
            );
            json!({"parsed": parsed, "facts": facts})
        }
        "cpuinfo" => {
            let mut f = hardware::parse_cpu(
                input["text"].as_str().unwrap_or("").trim(),
                input["arch"].as_str().unwrap_or(""),
                false,
            );
            f.remove("processor_nproc");
            Value::Object(f)
        }
        "lsb_release" => Value::Object(system::lsb_facts(Some(&text()), None)),
        "bytes_to_human" => json!(storage::bytes_to_human(input.as_f64().unwrap_or(0.0))),
        "filter" => {
            let filter: Vec<String> = input["filter"]
                .as_array()
                .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            let mut keys: Vec<&str> = input["keys"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            keys.retain(|k| matches(k, &filter));
            keys.sort_unstable();
            json!(keys)
        }
        "addresses" => {
            let device = input["device"].as_str().unwrap_or("");
            let mac = input["mac"].as_str().unwrap_or("").to_string();
            // What the harness stubs /sys with: an address file and an MTU of 1500.
            let mut base = Map::new();
            base.insert("device".into(), json!(device));
            if !mac.is_empty() && mac != "00:00:00:00:00:00" {
                base.insert("macaddress".into(), json!(mac));
            }
            base.insert("mtu".into(), json!(1500));
            let obj = |k: &str| input[k].as_object().cloned().unwrap_or_default();
            network::parse_addresses(
                device,
                base,
                Some(mac),
                (
                    input["primary"].as_str().unwrap_or(""),
                    input["secondary"].as_str().unwrap_or(""),
                ),
                (obj("default_ipv4"), obj("default_ipv6")),
            )
        }
        "route_get" => Value::Object(network::parse_route_get(
            input["out"].as_str().unwrap_or(""),
            input["target"].as_str().unwrap_or(""),
        )),
        other => panic!("unknown unit kind {other}"),
    }
}

#[test]
fn parsers_match_ansible() {
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    let (mut total, mut identical) = (0, 0);
    for (kind, cases) in units() {
        for (i, case) in cases.as_array().expect("unit list").iter().enumerate() {
            total += 1;
            let got = run(&kind, &case["input"]);
            let same = got == case["result"];
            let listed = KNOWN_DIVERGENCES.iter().any(|(k, n, _)| *k == kind && *n == i);
            if same {
                identical += 1;
            }
            match (same, listed) {
                (false, false) => unexpected
                    .push(format!("{kind}[{i}]: tack {got} != ansible {}", case["result"])),
                (true, true) => fixed.push(format!("{kind}[{i}]")),
                _ => {}
            }
        }
    }
    eprintln!("setup units: {total} recorded, {identical} identical");
    assert!(
        unexpected.is_empty() && fixed.is_empty(),
        "unlisted divergences:\n{}\nlisted but matching:\n{}",
        unexpected.join("\n"),
        fixed.join("\n")
    );
}
