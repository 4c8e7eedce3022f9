//! The network collectors on Linux: interfaces from `/sys/class/net` and the `ip` command's
//! output read as ansible reads it (addresses, default routes, locally reachable addresses),
//! ethtool features when installed; and the small initiator collectors (fibre channel WWNs,
//! iSCSI IQN, NVMe host NQN).

use std::net::Ipv4Addr;
use std::path::Path;

use regex::Regex;
use serde_json::{Map, Value, json};

use super::util::{bin_path, file_content, file_lines, run};

type Facts = Map<String, Value>;

pub(super) fn fibre_channel_wwn() -> Facts {
    let mut wwns = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/sys/class/fc_host") {
        for e in dir.filter_map(Result::ok) {
            let f = e.path().join("port_name");
            for line in file_lines(&f.to_string_lossy()) {
                let l = line.trim_end();
                wwns.push(json!(l.get(2..).unwrap_or("")));
            }
        }
    }
    let mut f = Facts::new();
    f.insert("fibre_channel_wwn".into(), Value::Array(wwns));
    f
}

fn first_line_value(path: &str, accept: impl Fn(&str) -> Option<String>) -> String {
    for line in file_content(path).unwrap_or_default().lines() {
        if line.starts_with('#') || line.starts_with(';') || line.trim().is_empty() {
            continue;
        }
        if let Some(v) = accept(line) {
            return v;
        }
    }
    String::new()
}

pub(super) fn iscsi() -> Facts {
    let iqn = first_line_value("/etc/iscsi/initiatorname.iscsi", |l| {
        l.strip_prefix("InitiatorName=").map(str::to_string)
    });
    let mut f = Facts::new();
    f.insert("iscsi_iqn".into(), json!(iqn));
    f
}

pub(super) fn nvme() -> Facts {
    let nqn =
        first_line_value("/etc/nvme/hostnqn", |l| l.starts_with("nqn.").then(|| l.to_string()));
    let mut f = Facts::new();
    f.insert("hostnqn".into(), json!(nqn));
    f
}

fn interface_type(t: &str) -> &'static str {
    match t {
        "1" => "ether",
        "32" => "infiniband",
        "512" => "ppp",
        "772" => "loopback",
        "65534" => "tunnel",
        _ => "unknown",
    }
}

/// `ip route get` of a far address: the route's device, source and gateway.
fn default_route(ip: &str, family: &str, target: &str) -> Facts {
    match run(&[ip, family, "route", "get", target]) {
        Some((_, out, _)) => parse_route_get(&out, target),
        None => Facts::new(),
    }
}

/// The first line of `ip route get TARGET`: its `dev`, `src` and `via` words.
pub(crate) fn parse_route_get(out: &str, target: &str) -> Facts {
    let mut d = Facts::new();
    let Some(first) = out.lines().next() else {
        return d;
    };
    let words: Vec<&str> = first.split_whitespace().collect();
    if words.first() != Some(&target) {
        return d;
    }
    for i in 0..words.len().saturating_sub(1) {
        match words[i] {
            "dev" => {
                d.insert("interface".into(), json!(words[i + 1]));
            }
            "src" => {
                d.insert("address".into(), json!(words[i + 1]));
            }
            "via" if words[i + 1] != target => {
                d.insert("gateway".into(), json!(words[i + 1]));
            }
            _ => {}
        }
    }
    d
}

fn locally_reachable(ip: &str) -> Value {
    let mut v4: Vec<String> = Vec::new();
    let mut v6: Vec<String> = Vec::new();
    for family in ["-4", "-6"] {
        let Some((0, out, _)) = run(&[ip, family, "route", "show", "table", "local"]) else {
            continue;
        };
        for line in out.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.len() < 2 || words[0] != "local" {
                continue;
            }
            let list = if words[1].contains(':') { &mut v6 } else { &mut v4 };
            if !list.iter().any(|a| a == words[1]) {
                list.push(words[1].to_string());
            }
        }
    }
    json!({"ipv4": v4, "ipv6": v6})
}

struct Ctx<'a> {
    device: &'a str,
    interfaces: &'a mut Vec<(String, Facts)>,
    default4: &'a mut Facts,
    default6: &'a mut Facts,
    all4: &'a mut Vec<Value>,
    all6: &'a mut Vec<Value>,
    mac: &'a Option<String>,
}

fn iface<'b>(list: &'b mut Vec<(String, Facts)>, name: &str) -> &'b mut Facts {
    if let Some(i) = list.iter().position(|(n, _)| n == name) {
        return &mut list[i].1;
    }
    list.push((name.to_string(), Facts::new()));
    let last = list.len() - 1;
    &mut list[last].1
}

fn parse_ip_output(ctx: &mut Ctx<'_>, output: &str, secondary: bool) {
    for line in output.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        if words[0] == "inet" && words.len() > 1 {
            let mut broadcast = "";
            let (address, len) = match words[1].split_once('/') {
                Some((a, l)) => {
                    if words.len() > 3 && words[2] == "brd" {
                        broadcast = words[3];
                    }
                    (a, l)
                }
                None => (words[1], "32"),
            };
            let Ok(addr) = address.parse::<Ipv4Addr>() else {
                continue;
            };
            let bits: u32 = len.parse().unwrap_or(32).min(32);
            let mask: u32 = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            let netmask = Ipv4Addr::from(mask).to_string();
            let network = Ipv4Addr::from(u32::from(addr) & mask).to_string();
            let entry = json!({"address": address, "broadcast": broadcast, "netmask": netmask,
                               "network": network, "prefix": len});
            let label = *words.last().unwrap_or(&"");
            if label != ctx.device {
                // An address labelled `eth0:1` starts an entry of its own, replaced each time.
                if let Some(i) = ctx.interfaces.iter().position(|(n, _)| n == label) {
                    ctx.interfaces[i].1 = Facts::new();
                } else {
                    ctx.interfaces.push((label.to_string(), Facts::new()));
                }
            }
            let target = iface(ctx.interfaces, label);
            if !secondary && !target.contains_key("ipv4") {
                target.insert("ipv4".into(), entry.clone());
            } else if let Value::Array(a) =
                target.entry("ipv4_secondaries").or_insert_with(|| json!([]))
            {
                a.push(entry.clone());
            }
            if secondary {
                let dev = iface(ctx.interfaces, ctx.device);
                let list = dev.entry("ipv4_secondaries").or_insert_with(|| json!([]));
                if label != ctx.device
                    && let Value::Array(a) = list
                {
                    a.push(entry.clone());
                }
            }
            if ctx.default4.get("address").and_then(Value::as_str) == Some(address) {
                let dev = iface(ctx.interfaces, ctx.device).clone();
                let d = &mut *ctx.default4;
                d.insert("broadcast".into(), json!(broadcast));
                d.insert("netmask".into(), json!(netmask));
                d.insert("network".into(), json!(network));
                d.insert("prefix".into(), json!(len));
                d.insert("macaddress".into(), json!(ctx.mac.clone().unwrap_or_default()));
                d.insert("mtu".into(), dev.get("mtu").cloned().unwrap_or(Value::Null));
                d.insert(
                    "type".into(),
                    dev.get("type").cloned().unwrap_or_else(|| json!("unknown")),
                );
                d.insert("alias".into(), json!(label));
            }
            if !address.starts_with("127.") {
                ctx.all4.push(json!(address));
            }
        } else if words[0] == "inet6" && words.len() > 3 {
            let (address, prefix, scope) = if words[2] == "peer" && words.len() > 5 {
                let p = words[3].split_once('/').map(|x| x.1).unwrap_or("");
                (words[1], p, words[5])
            } else {
                let (a, p) = words[1].split_once('/').unwrap_or((words[1], ""));
                (a, p, words[3])
            };
            let dev = iface(ctx.interfaces, ctx.device);
            if let Value::Array(a) = dev.entry("ipv6").or_insert_with(|| json!([])) {
                a.push(json!({"address": address, "prefix": prefix, "scope": scope}));
            }
            if ctx.default6.get("address").and_then(Value::as_str) == Some(address) {
                let dev = dev.clone();
                let d = &mut *ctx.default6;
                d.insert("prefix".into(), json!(prefix));
                d.insert("scope".into(), json!(scope));
                d.insert("macaddress".into(), json!(ctx.mac.clone().unwrap_or_default()));
                d.insert("mtu".into(), dev.get("mtu").cloned().unwrap_or(Value::Null));
                d.insert(
                    "type".into(),
                    dev.get("type").cloned().unwrap_or_else(|| json!("unknown")),
                );
            }
            if address != "::1" {
                ctx.all6.push(json!(address));
            }
        }
    }
}

/// One interface's `ip addr show primary|secondary dev DEVICE` outputs read into ansible's
/// facts, the device starting from `base` (what /sys gave); for the parser units.
#[cfg(test)]
pub(crate) fn parse_addresses(
    device: &str,
    base: Facts,
    mac: Option<String>,
    outputs: (&str, &str),
    defaults: (Facts, Facts),
) -> Value {
    let (mut default4, mut default6) = defaults;
    let mut interfaces = vec![(device.to_string(), base)];
    let (mut all4, mut all6) = (Vec::new(), Vec::new());
    let mut ctx = Ctx {
        device,
        interfaces: &mut interfaces,
        default4: &mut default4,
        default6: &mut default6,
        all4: &mut all4,
        all6: &mut all6,
        mac: &mac,
    };
    parse_ip_output(&mut ctx, outputs.0, false);
    parse_ip_output(&mut ctx, outputs.1, true);
    let ifaces: Map<String, Value> =
        interfaces.into_iter().map(|(n, d)| (n.replace(':', "_"), Value::Object(d))).collect();
    json!({"interfaces": ifaces, "default_ipv4": default4, "default_ipv6": default6,
           "all_ipv4_addresses": all4, "all_ipv6_addresses": all6})
}

fn ethtool(device: &str) -> Facts {
    let mut data = Facts::new();
    let Some(tool) = bin_path("ethtool") else {
        return data;
    };
    let tool = tool.to_string_lossy().into_owned();
    if let Some((0, out, _)) = run(&[&tool, "-k", device]) {
        let mut features = Facts::new();
        for line in out.trim().lines() {
            if line.is_empty() || line.ends_with(':') {
                continue;
            }
            if let Some((k, v)) = line.split_once(": ")
                && !v.is_empty()
            {
                features.insert(k.trim().replace('-', "_"), json!(v.trim()));
            }
        }
        data.insert("features".into(), Value::Object(features));
    }
    if let Some((0, out, _)) = run(&[&tool, "-T", device]) {
        let find = |re: &str| -> Vec<Value> {
            Regex::new(re)
                .map(|r| r.captures_iter(&out).map(|c| json!(c[1].to_lowercase())).collect())
                .unwrap_or_default()
        };
        data.insert("timestamping".into(), Value::Array(find(r"SOF_TIMESTAMPING_(\w+)")));
        data.insert("hw_timestamp_filters".into(), Value::Array(find(r"HWTSTAMP_FILTER_(\w+)")));
        if let Some(c) =
            Regex::new(r"PTP Hardware Clock: (\d+)").ok().and_then(|r| r.captures(&out))
            && let Ok(n) = c[1].parse::<i64>()
        {
            data.insert("phc_index".into(), json!(n));
        }
    }
    data
}

fn sysfs(path: &Path, name: &str) -> Option<String> {
    let p = path.join(name);
    p.exists().then(|| file_content(&p.to_string_lossy())).flatten()
}

pub(super) fn collect() -> Facts {
    let mut facts = Facts::new();
    let Some(ip) = bin_path("ip") else {
        return facts;
    };
    let ip = ip.to_string_lossy().into_owned();
    let mut default4 = default_route(&ip, "-4", "8.8.8.8");
    let mut default6 = default_route(&ip, "-6", "2404:6800:400a:800::1012");
    let mut interfaces: Vec<(String, Facts)> = Vec::new();
    let mut all4 = Vec::new();
    let mut all6 = Vec::new();
    // ansible's loop variable outlives each interface: a device without an address file
    // reports the previous device's MAC in the default route facts.
    let mut mac: Option<String> = None;
    let entries: Vec<_> = std::fs::read_dir("/sys/class/net")
        .map(|d| d.filter_map(Result::ok).collect())
        .unwrap_or_default();
    for entry in entries {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        let device = entry.file_name().to_string_lossy().into_owned();
        let mut d = Facts::new();
        d.insert("device".into(), json!(device));
        if path.join("address").exists() {
            let m = sysfs(&path, "address").unwrap_or_default();
            if !m.is_empty() && m != "00:00:00:00:00:00" {
                d.insert("macaddress".into(), json!(m));
            }
            mac = Some(m);
        }
        if let Some(mtu) = sysfs(&path, "mtu").and_then(|m| m.parse::<i64>().ok()) {
            d.insert("mtu".into(), json!(mtu));
        }
        if let Some(state) = sysfs(&path, "operstate") {
            d.insert("active".into(), json!(state != "down"));
        }
        let module = path.join("device/driver/module");
        if module.exists()
            && let Ok(real) = std::fs::canonicalize(&module)
        {
            let name = real.file_name().map(|n| n.to_string_lossy().into_owned());
            d.insert("module".into(), json!(name.unwrap_or_default()));
        }
        if let Some(t) = sysfs(&path, "type") {
            d.insert("type".into(), json!(interface_type(&t)));
        }
        if path.join("bridge").exists() {
            d.insert("type".into(), json!("bridge"));
            let members: Vec<Value> = std::fs::read_dir(path.join("brif"))
                .map(|r| {
                    r.filter_map(Result::ok)
                        .map(|e| json!(e.file_name().to_string_lossy()))
                        .collect()
                })
                .unwrap_or_default();
            d.insert("interfaces".into(), Value::Array(members));
            if path.join("bridge/bridge_id").exists() {
                d.insert("id".into(), json!(sysfs(&path, "bridge/bridge_id").unwrap_or_default()));
            }
            if let Some(stp) = sysfs(&path, "bridge/stp_state") {
                d.insert("stp".into(), json!(stp == "1"));
            }
        }
        if path.join("bonding").exists() {
            d.insert("type".into(), json!("bonding"));
            let words = |n: &str| sysfs(&path, n).unwrap_or_default();
            let slaves: Vec<Value> =
                words("bonding/slaves").split_whitespace().map(|s| json!(s)).collect();
            d.insert("slaves".into(), Value::Array(slaves));
            for key in ["mode", "miimon", "lacp_rate"] {
                let v = words(&format!("bonding/{key}"));
                let first = v.split_whitespace().next().unwrap_or("").to_string();
                d.insert(key.into(), json!(first));
            }
            if let Some(primary) = sysfs(&path, "bonding/primary").filter(|p| !p.is_empty()) {
                d.insert("primary".into(), json!(primary));
                if let Some(v) = sysfs(&path, "bonding/all_slaves_active") {
                    d.insert("all_slaves_active".into(), json!(v == "1"));
                }
            }
        }
        if path.join("bonding_slave").exists() {
            d.insert(
                "perm_macaddress".into(),
                json!(sysfs(&path, "bonding_slave/perm_hwaddr").unwrap_or_default()),
            );
        }
        if path.join("device").exists()
            && let Ok(link) = std::fs::read_link(path.join("device"))
        {
            let name = link.file_name().map(|n| n.to_string_lossy().into_owned());
            d.insert("pciid".into(), json!(name.unwrap_or_default()));
        }
        if path.join("speed").exists() {
            // Reading `speed` of a link that is down fails; ansible then leaves it out.
            if let Some(s) = sysfs(&path, "speed").and_then(|s| s.parse::<i64>().ok()) {
                d.insert("speed".into(), json!(s));
            }
        }
        if let Some(flags) = sysfs(&path, "flags") {
            let v = i64::from_str_radix(flags.trim_start_matches("0x"), 16).unwrap_or(0);
            d.insert("promisc".into(), json!(v & 0x0100 > 0));
        }
        if let Some(i) = interfaces.iter().position(|(n, _)| *n == device) {
            interfaces[i].1 = d;
        } else {
            interfaces.push((device.clone(), d));
        }
        let mut ctx = Ctx {
            device: &device,
            interfaces: &mut interfaces,
            default4: &mut default4,
            default6: &mut default6,
            all4: &mut all4,
            all6: &mut all6,
            mac: &mac,
        };
        match run(&[&ip, "addr", "show", "primary", "dev", &device]) {
            Some((0, out, _)) => parse_ip_output(&mut ctx, &out, false),
            _ => {
                if let Some((0, out, _)) = run(&[&ip, "addr", "show", "dev", &device]) {
                    parse_ip_output(&mut ctx, &out, false);
                }
            }
        }
        if let Some((0, out, _)) = run(&[&ip, "addr", "show", "secondary", "dev", &device]) {
            parse_ip_output(&mut ctx, &out, true);
        }
        iface(&mut interfaces, &device).extend(ethtool(&device));
    }
    let names: Vec<Value> = interfaces.iter().map(|(n, _)| json!(n.replace(':', "_"))).collect();
    facts.insert("interfaces".into(), Value::Array(names));
    for (name, d) in interfaces {
        facts.insert(name.replace(':', "_"), Value::Object(d));
    }
    facts.insert("default_ipv4".into(), Value::Object(default4));
    facts.insert("default_ipv6".into(), Value::Object(default6));
    facts.insert("all_ipv4_addresses".into(), Value::Array(all4));
    facts.insert("all_ipv6_addresses".into(), Value::Array(all6));
    facts.insert("locally_reachable_ips".into(), locally_reachable(&ip));
    facts
}
