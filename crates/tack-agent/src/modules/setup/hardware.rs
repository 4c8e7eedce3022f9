//! The hardware collector on Linux, first half: processors (`/proc/cpuinfo` read as ansible
//! counts sockets, cores and threads), memory (`/proc/meminfo`), DMI (`/sys/devices/virtual/
//! dmi/id`, else `dmidecode`, else `NA`), s390 sysinfo, uptime and LVM; block devices and
//! mounts are in `storage`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::storage;
use super::util::{bin_path, file_content, file_lines, run};

type Facts = Map<String, Value>;

pub(super) fn collect(collected: &Facts, gather_timeout: i64, warnings: &mut Vec<String>) -> Facts {
    let mut f = Facts::new();
    f.extend(cpu(collected));
    f.extend(memory());
    f.extend(dmi());
    f.extend(sysinfo());
    f.extend(storage::devices());
    if let Some(up) = file_content("/proc/uptime").filter(|u| !u.is_empty())
        && let Some(secs) = up.split(' ').next().and_then(|s| s.parse::<f64>().ok())
    {
        f.insert("uptime_seconds".into(), json!(secs as i64));
    }
    f.insert("lvm".into(), lvm(warnings));
    f.extend(storage::mounts(gather_timeout, warnings));
    f
}

fn cpu(collected: &Facts) -> Facts {
    let xen = Path::new("/proc/xen").exists()
        || file_lines("/sys/hypervisor/type").first().is_some_and(|l| l.trim() == "xen");
    let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") else {
        return Facts::new();
    };
    let arch = collected.get("ansible_architecture").and_then(Value::as_str).unwrap_or("");
    let mut f = parse_cpu(&text, arch, xen);
    if let Some(n) = affinity_count() {
        f.insert("processor_nproc".into(), json!(n));
    }
    f
}

/// The processor facts ansible derives from /proc/cpuinfo's text (`processor_nproc` from the
/// text too; the caller replaces it with the CPU affinity count, as ansible does).
pub(crate) fn parse_cpu(text: &str, arch: &str, xen: bool) -> Facts {
    let mut f = Facts::new();
    let mut processor: Vec<Value> = Vec::new();
    let (mut i, mut vendor_n, mut model_n, mut proc_n) = (0i64, 0i64, 0i64, 0i64);
    let mut physid = String::from("0");
    let mut coreid = String::from("0");
    // Insertion-ordered maps: ansible takes the first socket's and first core's values.
    let mut sockets: Vec<(String, i64)> = Vec::new();
    let mut cores: Vec<(String, i64)> = Vec::new();
    let (mut zp, mut zmt) = (0i64, 0i64);
    let mut xen_paravirt = false;
    let set = |m: &mut Vec<(String, i64)>, k: &str, v: i64| {
        if let Some(e) = m.iter_mut().find(|e| e.0 == k) {
            e.1 = v;
        } else {
            m.push((k.to_string(), v));
        }
    };
    for line in text.trim().lines() {
        let (key, val) = match line.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (line.trim(), ""),
        };
        if xen && key == "flags" && !val.contains("vme") {
            xen_paravirt = true;
        }
        if key == "flags" {
            let flags: Vec<Value> = val.split_whitespace().map(|s| json!(s)).collect();
            f.insert("flags".into(), Value::Array(flags));
        }
        let int = |v: &str| v.parse::<i64>().unwrap_or(0);
        match key {
            "model name" | "Processor" | "vendor_id" | "cpu" | "Vendor" | "processor" => {
                processor.push(json!(val));
                match key {
                    "vendor_id" => vendor_n += 1,
                    "model name" => model_n += 1,
                    "processor" => proc_n += 1,
                    _ => {}
                }
                i += 1;
            }
            "physical id" => {
                physid = val.to_string();
                if !sockets.iter().any(|e| e.0 == physid) {
                    sockets.push((physid.clone(), 1));
                }
            }
            "core id" => {
                coreid = val.to_string();
                // ansible checks the socket map here, not the core map.
                if !sockets.iter().any(|e| e.0 == coreid) {
                    set(&mut cores, &coreid, 1);
                }
            }
            "cpu cores" => set(&mut sockets, &physid, int(val)),
            "siblings" => set(&mut cores, &coreid, int(val)),
            "# processors" => zp = int(val),
            "max thread id" => zmt = int(val) + 1,
            "ncpus active" => i = int(val),
            _ => {}
        }
    }
    f.insert("processor".into(), Value::Array(processor));
    if vendor_n > 0 && vendor_n == model_n {
        i = vendor_n;
    }
    if ["armv", "aarch", "ppc"].iter().any(|p| arch.starts_with(p)) {
        i = proc_n;
    }
    let (count, cores_n, threads, vcpus, nproc);
    if arch == "s390x" {
        count = 1;
        cores_n = if zmt == 0 { 0 } else { py_round(zp as f64 / zmt as f64) };
        threads = zmt;
        vcpus = zp;
        nproc = zp;
    } else if xen_paravirt {
        (count, cores_n, threads, vcpus, nproc) = (i, i, 1, i, i);
    } else {
        count = if sockets.is_empty() { i } else { sockets.len() as i64 };
        cores_n = match sockets.first() {
            Some((_, v)) if *v != 0 => *v,
            _ => 1,
        };
        threads = match cores.first() {
            Some((_, v)) => py_round(*v as f64 / cores_n as f64),
            None => py_round(1.0 / cores_n as f64),
        };
        vcpus = threads * count * cores_n;
        nproc = proc_n;
    }
    f.insert("processor_count".into(), json!(count));
    f.insert("processor_cores".into(), json!(cores_n));
    f.insert("processor_threads_per_core".into(), json!(threads));
    f.insert("processor_vcpus".into(), json!(vcpus));
    f.insert("processor_nproc".into(), json!(nproc));
    f
}

/// Python's `round()` of a float to an int: halves go to the even neighbour.
fn py_round(x: f64) -> i64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && (r as i64) % 2 != 0 {
        (r - x.signum()) as i64
    } else {
        r as i64
    }
}

/// `len(os.sched_getaffinity(0))`.
fn affinity_count() -> Option<i64> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for this process.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        Some(libc::CPU_COUNT(&set) as i64)
    }
}

fn memory() -> Facts {
    let mut f = Facts::new();
    let Ok(text) = std::fs::read_to_string("/proc/meminfo") else {
        return f;
    };
    let mut stats: Map<String, Value> = Map::new();
    for line in text.trim().lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let original = ["MemTotal", "SwapTotal", "MemFree", "SwapFree"].contains(&key);
        let extra = ["Buffers", "Cached", "SwapCached"].contains(&key);
        if !original && !extra {
            continue;
        }
        let val = rest
            .trim()
            .split(' ')
            .next()
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
            .div_euclid(1024);
        if original {
            f.insert(format!("{}_mb", key.to_lowercase()), json!(val));
        }
        stats.insert(key.to_lowercase(), json!(val));
    }
    let g = |k: &str| stats.get(k).and_then(Value::as_i64);
    let real_used = g("memtotal").zip(g("memfree")).map(|(t, f)| t - f);
    let nocache_free = match (g("cached"), g("memfree"), g("buffers")) {
        (Some(c), Some(m), Some(b)) => Some(c + m + b),
        _ => None,
    };
    let nocache_used = g("memtotal").zip(nocache_free).map(|(t, f)| t - f);
    let swap_used = g("swaptotal").zip(g("swapfree")).map(|(t, f)| t - f);
    f.insert(
        "memory_mb".into(),
        json!({
            "real": {"total": g("memtotal"), "used": real_used, "free": g("memfree")},
            "nocache": {"free": nocache_free, "used": nocache_used},
            "swap": {"total": g("swaptotal"), "free": g("swapfree"), "used": swap_used,
                     "cached": g("swapcached")},
        }),
    );
    f
}

const FORM_FACTOR: &[&str] = &[
    "Unknown",
    "Other",
    "Unknown",
    "Desktop",
    "Low Profile Desktop",
    "Pizza Box",
    "Mini Tower",
    "Tower",
    "Portable",
    "Laptop",
    "Notebook",
    "Hand Held",
    "Docking Station",
    "All In One",
    "Sub Notebook",
    "Space-saving",
    "Lunch Box",
    "Main Server Chassis",
    "Expansion Chassis",
    "Sub Chassis",
    "Bus Expansion Chassis",
    "Peripheral Chassis",
    "RAID Chassis",
    "Rack Mount Chassis",
    "Sealed-case PC",
    "Multi-system",
    "CompactPCI",
    "AdvancedTCA",
    "Blade",
    "Blade Enclosure",
    "Tablet",
    "Convertible",
    "Detachable",
    "IoT Gateway",
    "Embedded PC",
    "Mini PC",
    "Stick PC",
];

/// Each DMI fact: its file under /sys/devices/virtual/dmi/id and its dmidecode keyword.
const DMI: &[(&str, &str, &str)] = &[
    ("bios_date", "bios_date", "bios-release-date"),
    ("bios_vendor", "bios_vendor", "bios-vendor"),
    ("bios_version", "bios_version", "bios-version"),
    ("board_asset_tag", "board_asset_tag", "baseboard-asset-tag"),
    ("board_name", "board_name", "baseboard-product-name"),
    ("board_serial", "board_serial", "baseboard-serial-number"),
    ("board_vendor", "board_vendor", "baseboard-manufacturer"),
    ("board_version", "board_version", "baseboard-version"),
    ("chassis_asset_tag", "chassis_asset_tag", "chassis-asset-tag"),
    ("chassis_serial", "chassis_serial", "chassis-serial-number"),
    ("chassis_vendor", "chassis_vendor", "chassis-manufacturer"),
    ("chassis_version", "chassis_version", "chassis-version"),
    ("form_factor", "chassis_type", "chassis-type"),
    ("product_name", "product_name", "system-product-name"),
    ("product_serial", "product_serial", "system-serial-number"),
    ("product_uuid", "product_uuid", "system-uuid"),
    ("product_version", "product_version", "system-version"),
    ("system_vendor", "sys_vendor", "system-manufacturer"),
];

fn dmi() -> Facts {
    let mut f = Facts::new();
    let base = "/sys/devices/virtual/dmi/id";
    if Path::new(&format!("{base}/product_name")).exists() {
        for (key, file, _) in DMI {
            let v = match file_content(&format!("{base}/{file}")) {
                None => "NA".to_string(),
                Some(data) if *key == "form_factor" => data
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| FORM_FACTOR.get(n))
                    .map(|s| (*s).to_string())
                    .unwrap_or_else(|| format!("unknown ({data})")),
                Some(data) => data,
            };
            f.insert((*key).into(), json!(v));
        }
        return f;
    }
    let dmi_bin = bin_path("dmidecode").map(|p| p.to_string_lossy().into_owned());
    for (key, _, word) in DMI {
        let v = dmi_bin
            .as_deref()
            .and_then(|b| run(&[b, "-s", word]))
            .filter(|r| r.0 == 0)
            .map(|r| r.1.lines().filter(|l| !l.starts_with('#')).collect::<String>())
            .unwrap_or_else(|| "NA".into());
        f.insert((*key).into(), json!(v));
    }
    f
}

fn sysinfo() -> Facts {
    let mut f = Facts::new();
    let Some(data) = file_content("/proc/sysinfo") else {
        return f;
    };
    for k in ["system_vendor", "product_version", "product_serial", "product_name", "product_uuid"]
    {
        f.insert(k.into(), json!("NA"));
    }
    for line in data.lines() {
        if let Some(v) = line.strip_prefix("Manufacturer:") {
            f.insert("system_vendor".into(), json!(v.trim_start()));
        } else if let Some(v) = line.strip_prefix("Type:") {
            f.insert("product_name".into(), json!(v.trim_start()));
        } else if let Some(v) = line.strip_prefix("Sequence Code:") {
            let v = v.trim_start().trim_start_matches('0');
            if !v.is_empty() {
                f.insert("product_serial".into(), json!(v));
            }
        }
    }
    f
}

fn lvm(warnings: &mut Vec<String>) -> Value {
    let Some(vgs_cmd) = bin_path("vgs") else {
        return json!("N/A");
    };
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } != 0 {
        return json!("N/A");
    }
    let opts = ["--noheadings", "--nosuffix", "--units", "g", "--separator", ","];
    let lines = |cmd: &Path| -> Vec<Vec<String>> {
        let prog = cmd.to_string_lossy().into_owned();
        let mut argv = vec![prog.as_str()];
        argv.extend(opts);
        run(&argv)
            .map(|r| {
                r.1.lines().map(|l| l.trim().split(',').map(str::to_string).collect()).collect()
            })
            .unwrap_or_default()
    };
    let mut vgs = Map::new();
    for items in lines(&vgs_cmd) {
        if items.len() < 3 {
            continue;
        }
        let n = items.len();
        vgs.insert(
            items[0].clone(),
            json!({"size_g": items[n - 2], "free_g": items[n - 1], "num_lvs": items[2],
                   "num_pvs": items[1], "lvs": {}}),
        );
    }
    let mut lvs = Map::new();
    if let Some(lvs_cmd) = bin_path("lvs") {
        for items in lines(&lvs_cmd) {
            if items.len() < 4 {
                continue;
            }
            lvs.insert(items[0].clone(), json!({"size_g": items[3], "vg": items[1]}));
            match vgs.get_mut(&items[1]).and_then(|v| v.get_mut("lvs")) {
                Some(Value::Object(m)) => {
                    m.insert(items[0].clone(), json!({"size_g": items[3]}));
                }
                _ => warnings.push(
                    "An LVM volume group was created while gathering LVM facts, and is not included in ansible_facts['vgs']."
                        .into(),
                ),
            }
        }
    }
    let mut pvs = Map::new();
    if let Some(pvs_cmd) = bin_path("pvs") {
        for items in lines(&pvs_cmd) {
            if items.len() < 6 {
                continue;
            }
            let mut name = items[0].clone();
            if name.starts_with("/dev/dm-")
                && let Some(dm) = bin_path("dmsetup")
            {
                let dm = dm.to_string_lossy().into_owned();
                if let Some((0, out, _)) =
                    run(&[&dm, "info", "-C", "--noheadings", "-o", "name", &name])
                {
                    name = format!("/dev/mapper/{}", out.trim_end());
                }
            }
            pvs.insert(name, json!({"size_g": items[4], "free_g": items[5], "vg": items[1]}));
        }
    }
    json!({"lvs": lvs, "vgs": vgs, "pvs": pvs})
}
