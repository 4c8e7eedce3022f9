//! The hardware collector on Linux, second half: block devices and partitions from
//! `/sys/block` with their `/dev/disk/by-*` links, and mounts from `/etc/mtab` (or
//! `/proc/mounts`) with statvfs sizes and UUIDs, each mount's details bounded by
//! `gather_timeout` as ansible bounds them.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::{Map, Value, json};

use super::util::{bin_path, file_content, run};

type Facts = Map<String, Value>;

/// ansible's `bytes_to_human`.
pub(crate) fn bytes_to_human(size: f64) -> String {
    let ranges: [(&str, f64); 9] = [
        ("Y", 2f64.powi(80)),
        ("Z", 2f64.powi(70)),
        ("E", 2f64.powi(60)),
        ("P", 2f64.powi(50)),
        ("T", 2f64.powi(40)),
        ("G", 2f64.powi(30)),
        ("M", 2f64.powi(20)),
        ("K", 2f64.powi(10)),
        ("B", 1.0),
    ];
    let (suffix, limit) = ranges.iter().find(|(_, l)| size >= *l).copied().unwrap_or(("B", 1.0));
    let suffix = if limit != 1.0 { format!("{suffix}B") } else { "Bytes".to_string() };
    format!("{:.2} {suffix}", size / limit)
}

fn list_dir(path: &str) -> Option<Vec<String>> {
    std::fs::read_dir(path).ok().map(|d| {
        d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
    })
}

/// Link targets' names to the sorted link names pointing at them.
fn device_links(dir: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in list_dir(dir).unwrap_or_default() {
        let Ok(target) = std::fs::read_link(format!("{dir}/{entry}")) else {
            continue;
        };
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let v = out.entry(name).or_default();
        if !v.contains(&entry) {
            v.push(entry);
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

fn owners() -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for dev in list_dir("/sys/block").unwrap_or_default() {
        for slave in list_dir(&format!("/sys/block/{dev}/slaves")).unwrap_or_default() {
            let v = out.entry(slave).or_default();
            if !v.contains(&dev) {
                v.push(dev.clone());
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    out
}

fn to_json(m: &BTreeMap<String, Vec<String>>) -> Value {
    Value::Object(m.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

fn holders(sysdir: &str) -> Value {
    let mut out = Vec::new();
    for folder in list_dir(&format!("{sysdir}/holders")).unwrap_or_default() {
        if !folder.starts_with("dm-") {
            continue;
        }
        match file_content(&format!("{sysdir}/holders/{folder}/dm/name")).filter(|n| !n.is_empty())
        {
            Some(n) => out.push(json!(n)),
            None => out.push(json!(folder)),
        }
    }
    Value::Array(out)
}

fn opt(v: Option<String>) -> Value {
    v.map(Value::String).unwrap_or(Value::Null)
}

fn sector_size(sysdir: &str) -> (Value, i64) {
    match file_content(&format!("{sysdir}/queue/logical_block_size")).filter(|s| !s.is_empty()) {
        Some(s) => {
            let n = s.parse().unwrap_or(512);
            (json!(s), n)
        }
        None => match file_content(&format!("{sysdir}/queue/hw_sector_size")) {
            Some(s) if !s.is_empty() => {
                let n = s.parse().unwrap_or(512);
                (json!(s), n)
            }
            _ => (json!(512), 512),
        },
    }
}

fn partition_uuid(part: &str) -> Value {
    let Some(uuids) = list_dir("/dev/disk/by-uuid") else {
        return Value::Null;
    };
    for u in uuids {
        if let Ok(real) = std::fs::canonicalize(format!("/dev/disk/by-uuid/{u}"))
            && real.to_string_lossy() == format!("/dev/{part}")
        {
            return json!(u);
        }
    }
    Value::Null
}

pub(super) fn devices() -> Facts {
    let mut f = Facts::new();
    let mut devices = Map::new();
    let pcidata = bin_path("lspci").and_then(|p| run(&[&p.to_string_lossy(), "-D"]).map(|r| r.1));
    let Some(blocks) = list_dir("/sys/block") else {
        f.insert("devices".into(), Value::Object(devices));
        return f;
    };
    let mut wwn: BTreeMap<String, String> = BTreeMap::new();
    for link in list_dir("/dev/disk/by-id").unwrap_or_default() {
        if let Some(id) = link.strip_prefix("wwn-")
            && let Ok(t) = std::fs::read_link(format!("/dev/disk/by-id/{link}"))
        {
            let name = t.file_name().map(|n| n.to_string_lossy().into_owned());
            wwn.insert(name.unwrap_or_default(), id.to_string());
        }
    }
    let links: [(&str, BTreeMap<String, Vec<String>>); 4] = [
        ("ids", device_links("/dev/disk/by-id")),
        ("uuids", device_links("/dev/disk/by-uuid")),
        ("labels", device_links("/dev/disk/by-label")),
        ("masters", owners()),
    ];
    let links_json: Map<String, Value> =
        links.iter().map(|(k, m)| ((*k).to_string(), to_json(m))).collect();
    f.insert("device_links".into(), Value::Object(links_json));
    let links_for = |name: &str| -> Value {
        Value::Object(
            links
                .iter()
                .map(|(k, m)| ((*k).to_string(), json!(m.get(name).cloned().unwrap_or_default())))
                .collect(),
        )
    };
    let sg_inq = bin_path("sg_inq").map(|p| p.to_string_lossy().into_owned());
    let pci_re = Regex::new(r".+/([a-f0-9]{4}:[a-f0-9]{2}:[0|1][a-f0-9]\.[0-7])/").ok();
    let serial_re = Regex::new(r"(?:Unit serial|Serial) number:\s+(\w+)").ok();
    let sched_re = Regex::new(r"^.*?(\[(.*)\])").ok();
    for block in blocks {
        let mut virtual_ = 1;
        let path = match std::fs::read_link(format!("/sys/block/{block}")) {
            Ok(p) => p.to_string_lossy().into_owned(),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                let sysdir = format!("/sys/block/{block}");
                if list_dir(&sysdir).unwrap_or_default().iter().any(|d| d.contains("device")) {
                    virtual_ = 0;
                }
                block.clone()
            }
            Err(_) => continue,
        };
        let sysdir = format!("/sys/block/{path}");
        let mut d = Map::new();
        d.insert("virtual".into(), json!(virtual_));
        d.insert("links".into(), links_for(&block));
        let diskname = sysdir.rsplit('/').next().unwrap_or("").to_string();
        for key in ["vendor", "model", "sas_address", "sas_device_handle"] {
            d.insert(key.into(), opt(file_content(&format!("{sysdir}/device/{key}"))));
        }
        let serial = match &sg_inq {
            Some(sg) => run(&[sg, &format!("/dev/{block}")])
                .filter(|r| r.0 == 0)
                .and_then(|r| serial_re.as_ref()?.captures(&r.1).map(|c| c[1].to_string())),
            None => file_content(&format!("/sys/block/{block}/device/serial")),
        };
        if let Some(s) = serial.filter(|s| !s.is_empty()) {
            d.insert("serial".into(), json!(s));
        }
        d.insert("removable".into(), opt(file_content(&format!("{sysdir}/removable"))));
        let discard = if file_content(&format!("{sysdir}/queue/discard_max_hw_bytes")).as_deref()
            == Some("0")
        {
            json!("0")
        } else {
            opt(file_content(&format!("{sysdir}/queue/discard_granularity")))
        };
        d.insert("support_discard".into(), discard);
        if let Some(w) = wwn.get(&diskname) {
            d.insert("wwn".into(), json!(w));
        }
        let mut parts = Map::new();
        let part_re = Regex::new(&format!("({}[p]?\\d+)", diskname)).ok();
        for folder in list_dir(&sysdir).unwrap_or_default() {
            let Some(m) = part_re.as_ref().and_then(|r| r.captures(&folder)) else {
                continue;
            };
            let partname = m[1].to_string();
            let part_sysdir = format!("{sysdir}/{partname}");
            let mut p = Map::new();
            p.insert("links".into(), links_for(&partname));
            p.insert(
                "start".into(),
                file_content(&format!("{part_sysdir}/start")).map_or(json!(0), Value::String),
            );
            let (ss_json, ss) = sector_size(&part_sysdir);
            p.insert("sectorsize".into(), ss_json);
            let size: i64 = file_content(&format!("{part_sysdir}/size"))
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let sectors = size * 512 / ss.max(1);
            p.insert("sectors".into(), json!(sectors));
            p.insert("size".into(), json!(bytes_to_human(sectors as f64 * ss as f64)));
            p.insert("uuid".into(), partition_uuid(&partname));
            p.insert("holders".into(), holders(&part_sysdir));
            parts.insert(partname, Value::Object(p));
        }
        d.insert("partitions".into(), Value::Object(parts));
        d.insert("rotational".into(), opt(file_content(&format!("{sysdir}/queue/rotational"))));
        let sched = file_content(&format!("{sysdir}/queue/scheduler"))
            .and_then(|s| sched_re.as_ref()?.captures(&s).map(|c| c[2].to_string()))
            .unwrap_or_default();
        d.insert("scheduler_mode".into(), json!(sched));
        let (ss_json, ss) = sector_size(&sysdir);
        d.insert("sectorsize".into(), ss_json);
        let size: i64 =
            file_content(&format!("{sysdir}/size")).and_then(|s| s.parse().ok()).unwrap_or(0);
        let sectors = size * 512 / ss.max(1);
        d.insert("sectors".into(), json!(sectors));
        d.insert("size".into(), json!(bytes_to_human(sectors as f64 * ss as f64)));
        let mut host = String::new();
        if let (Some(re), Some(pci)) = (&pci_re, &pcidata)
            && let Some(c) = re.captures(&sysdir)
        {
            let line_re = Regex::new(&format!(r"(?m)^{}\s(.*)$", regex::escape(&c[1]))).ok();
            if let Some(m) = line_re.and_then(|r| r.captures(pci)) {
                host = m[1].to_string();
            }
        }
        d.insert("host".into(), json!(host));
        d.insert("holders".into(), holders(&sysdir));
        devices.insert(diskname, Value::Object(d));
    }
    f.insert("devices".into(), Value::Object(devices));
    f
}

/// `\NNN` octal escapes of mtab fields, decoded.
fn unescape(field: &str) -> String {
    let Ok(re) = Regex::new(r"\\[0-9]{3}") else {
        return field.to_string();
    };
    re.replace_all(field, |c: &regex::Captures<'_>| {
        u32::from_str_radix(&c[0][1..], 8)
            .ok()
            .and_then(char::from_u32)
            .map(String::from)
            .unwrap_or_default()
    })
    .into_owned()
}

fn statvfs(mount: &str) -> Option<Map<String, Value>> {
    let c = CString::new(mount).ok()?;
    // SAFETY: statvfs fills the zeroed struct for a NUL-terminated path.
    let s = unsafe {
        let mut s: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut s) != 0 {
            return None;
        }
        s
    };
    let (frsize, blocks, bavail) = (s.f_frsize as u64, s.f_blocks as u64, s.f_bavail as u64);
    let (files, favail) = (s.f_files as u64, s.f_favail as u64);
    let mut m = Map::new();
    m.insert("size_total".into(), json!(frsize * blocks));
    m.insert("size_available".into(), json!(frsize * bavail));
    m.insert("block_size".into(), json!(s.f_bsize as u64));
    m.insert("block_total".into(), json!(blocks));
    m.insert("block_available".into(), json!(bavail));
    m.insert("block_used".into(), json!(blocks as i64 - bavail as i64));
    m.insert("inode_total".into(), json!(files));
    m.insert("inode_available".into(), json!(favail));
    m.insert("inode_used".into(), json!(files as i64 - favail as i64));
    Some(m)
}

fn udevadm_uuid(device: &str) -> String {
    let Some(u) = bin_path("udevadm") else {
        return "N/A".into();
    };
    let u = u.to_string_lossy().into_owned();
    match run(&[&u, "info", "--query", "property", "--name", device]) {
        Some((0, out, _)) => Regex::new("ID_FS_UUID=(.*)\n")
            .ok()
            .and_then(|r| r.captures(&out).map(|c| c[1].to_string()))
            .unwrap_or_else(|| "N/A".into()),
        _ => "N/A".into(),
    }
}

pub(super) fn mounts(gather_timeout: i64, warnings: &mut Vec<String>) -> Facts {
    let mut bind_mounts: Vec<String> = Vec::new();
    if let Some(fm) = bin_path("findmnt")
        && let Some((0, out, _)) =
            run(&[&fm.to_string_lossy(), "--list", "--noheadings", "--notruncate"])
    {
        for line in out.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() >= 2 && fields[1].contains(']') {
                bind_mounts.push(fields[0].to_string());
            }
        }
    }
    let mut uuids: BTreeMap<String, String> = BTreeMap::new();
    if let Some(lsblk) = bin_path("lsblk") {
        let args = ["--list", "--noheadings", "--paths", "--output", "NAME,UUID", "--exclude", "2"];
        let prog = lsblk.to_string_lossy().into_owned();
        let mut argv = vec![prog.as_str()];
        argv.extend(args);
        if let Some((0, out, _)) = run(&argv) {
            for line in out.lines() {
                let line = line.trim();
                if let Some((name, uuid)) = line.rsplit_once(char::is_whitespace) {
                    uuids.entry(name.trim().to_string()).or_insert_with(|| uuid.trim().to_string());
                }
            }
        }
    }
    let mtab =
        if std::path::Path::new("/etc/mtab").exists() { "/etc/mtab" } else { "/proc/mounts" };
    let content = file_content(mtab).unwrap_or_default();
    // ansible's `gather_timeout or 10`: zero means the default; a negative limit has passed
    // before the first look, so only details already gathered by then are kept.
    let timeout = match gather_timeout {
        0 => Duration::from_secs(10),
        t if t < 0 => Duration::ZERO,
        t => Duration::from_secs(t as u64),
    };
    let mut pending = Vec::new();
    for line in content.lines() {
        let fields: Vec<String> = line.split_whitespace().map(unescape).collect();
        if fields.len() < 4 {
            continue;
        }
        let (device, mount, fstype) = (&fields[0], &fields[1], &fields[2]);
        let num = |i: usize| fields.get(i).and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
        if (!device.starts_with('/') && !device.starts_with('\\') && !device.contains(":/"))
            || fstype == "none"
        {
            continue;
        }
        let mut options = fields[3].clone();
        let bind_re_hit = options.find("bind").is_some_and(|i| options[i..].contains('"'));
        if bind_mounts.contains(mount) && !bind_re_hit {
            options.push_str(",bind");
        }
        let mut info = Map::new();
        info.insert("mount".into(), json!(mount));
        info.insert("device".into(), json!(device));
        info.insert("fstype".into(), json!(fstype));
        info.insert("options".into(), json!(options));
        info.insert("dump".into(), json!(num(4)));
        info.insert("passno".into(), json!(num(5)));
        let (tx, rx) = mpsc::channel();
        let (m, dev, known) = (mount.clone(), device.clone(), uuids.get(device).cloned());
        std::thread::spawn(move || {
            let size = statvfs(&m);
            let fallback = udevadm_uuid(&dev);
            let _ = tx.send((size, known.unwrap_or(fallback)));
        });
        pending.push((info, rx, Instant::now() + timeout));
    }
    let mut mounts = Vec::new();
    for (mut info, rx, deadline) in pending {
        let wait = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(wait) {
            Ok((size, uuid)) => {
                if let Some(s) = size {
                    info.extend(s);
                }
                let uuid = if uuid.is_empty() { "N/A".into() } else { uuid };
                info.insert("uuid".into(), json!(uuid));
            }
            Err(_) => {
                let mount = info.get("mount").and_then(Value::as_str).unwrap_or("");
                warnings.push(format!("Timeout exceeded when getting mount info for {mount}"));
                info.insert("note".into(), json!("Could not get extra information due to timeout"));
            }
        }
        mounts.push(Value::Object(info));
    }
    let mut f = Facts::new();
    f.insert("mounts".into(), Value::Array(mounts));
    f
}
