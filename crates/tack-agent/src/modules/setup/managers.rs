//! The package manager and service manager collectors (and `systemd`, which asks systemctl
//! when systemd runs the host): which tools exist and what PID 1 is, as ansible decides.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::util::{bin_path, file_content, run};

type Facts = Map<String, Value>;

fn facts(pairs: Vec<(&str, Value)>) -> Facts {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

const PKG_MGRS: &[(&str, &str)] = &[
    ("/usr/bin/rpm-ostree", "atomic_container"),
    ("/usr/bin/yum", "dnf"),
    ("/usr/bin/dnf-3", "dnf"),
    ("/usr/bin/dnf5", "dnf5"),
    ("/usr/bin/apt-get", "apt"),
    ("/usr/bin/zypper", "zypper"),
    ("/usr/sbin/urpmi", "urpmi"),
    ("/usr/bin/pacman", "pacman"),
    ("/bin/opkg", "opkg"),
    ("/usr/pkg/bin/pkgin", "pkgin"),
    ("/opt/local/bin/pkgin", "pkgin"),
    ("/opt/tools/bin/pkgin", "pkgin"),
    ("/opt/local/bin/port", "macports"),
    ("/usr/local/bin/brew", "homebrew"),
    ("/opt/homebrew/bin/brew", "homebrew"),
    ("/sbin/apk", "apk"),
    ("/usr/sbin/pkg", "pkgng"),
    ("/usr/sbin/swlist", "swdepot"),
    ("/usr/bin/emerge", "portage"),
    ("/usr/sbin/pkgadd", "svr4pkg"),
    ("/usr/bin/pkg", "pkg5"),
    ("/usr/bin/xbps-install", "xbps"),
    ("/usr/local/sbin/pkg", "pkgng"),
    ("/usr/bin/swupd", "swupd"),
    ("/usr/sbin/sorcery", "sorcery"),
    ("/usr/bin/installp", "installp"),
];

pub(super) fn pkg_mgr(collected: &Facts) -> Facts {
    let family = collected.get("ansible_os_family").and_then(Value::as_str).unwrap_or("");
    let mut name = "unknown".to_string();
    for (path, mgr) in PKG_MGRS {
        if family == "Altlinux" && *path == "/usr/bin/pkg" {
            continue;
        }
        if Path::new(path).exists() {
            name = (*mgr).to_string();
        }
    }
    if family == "RedHat" {
        name = if Path::new("/run/ostree-booted").exists() {
            "atomic_container".into()
        } else {
            ["/usr/bin/dnf", "/usr/bin/microdnf"]
                .iter()
                .find(|p| Path::new(p).exists())
                .map(|p| {
                    let real = std::fs::canonicalize(p).ok();
                    if real.as_deref() == Some(Path::new("/usr/bin/dnf5")) {
                        "dnf5".to_string()
                    } else {
                        "dnf".to_string()
                    }
                })
                .unwrap_or_else(|| "unknown".into())
        };
    } else if family == "Debian" && name != "apt" {
        name = "apt".into();
    } else if family == "Altlinux" && name == "apt" {
        name = "apt_rpm".into();
    }
    if name == "apt" && Path::new("/usr/bin/rpm").exists() {
        let rpm = run(&["/usr/bin/rpm", "-q", "--whatprovides", "/usr/bin/apt-get"]);
        if rpm.is_some_and(|r| r.0 == 0) {
            name = "apt_rpm".into();
        }
    }
    facts(vec![("pkg_mgr", json!(name))])
}

fn systemd_managed() -> bool {
    bin_path("systemctl").is_some()
        && ["/run/systemd/system/", "/dev/.run/systemd/", "/dev/.systemd/"]
            .iter()
            .any(|c| Path::new(c).exists())
}

pub(super) fn service_mgr(collected: &Facts) -> Facts {
    let get = |k: &str| collected.get(k).and_then(Value::as_str).unwrap_or("");
    let mut proc_1 = file_content("/proc/1/comm");
    if proc_1.is_none() {
        proc_1 = run(&["/bin/sh", "-c", "ps -p 1 -o comm|tail -n 1"])
            .filter(|r| r.0 == 0 && !r.1.trim().is_empty())
            .map(|r| r.1)
            .filter(|o| {
                !o.starts_with(' ') || !o.trim_start().starts_with(|c: char| c.is_ascii_digit())
            });
    }
    if proc_1.as_deref() == Some("COMMAND\n") {
        proc_1 = None;
    }
    if proc_1.is_none() {
        proc_1 = std::fs::read_link("/sbin/init").ok().map(|p| p.to_string_lossy().into_owned());
    }
    let proc_1 = proc_1
        .map(|p| p.rsplit('/').next().unwrap_or("").trim().to_string())
        .filter(|p| p != "init" && !p.ends_with("sh"));
    let name = if let Some(p) = proc_1 {
        match p.as_str() {
            "procd" => "openwrt_init".to_string(),
            "runit-init" => "runit".into(),
            "svscan" => "svc".into(),
            "openrc-init" => "openrc".into(),
            _ => p,
        }
    } else if get("ansible_distribution") == "OpenWrt" {
        "openwrt_init".into()
    } else if get("ansible_distribution") == "SMGL" {
        "simpleinit_msb".into()
    } else if get("ansible_system") == "Linux" {
        let offline = bin_path("systemctl").is_some()
            && std::fs::read_link("/sbin/init")
                .ok()
                .and_then(|l| l.file_name().map(|n| n == "systemd"))
                .unwrap_or(false);
        if systemd_managed() {
            "systemd".into()
        } else if bin_path("initctl").is_some() && Path::new("/etc/init/").exists() {
            "upstart".into()
        } else if Path::new("/sbin/openrc").exists() {
            "openrc".into()
        } else if offline {
            "systemd".into()
        } else if Path::new("/etc/init.d/").exists() {
            "sysvinit".into()
        } else if Path::new("/etc/dinit.d/").exists() {
            "dinit".into()
        } else {
            "service".into()
        }
    } else {
        "service".into()
    };
    facts(vec![("service_mgr", json!(name))])
}

pub(super) fn systemd() -> Facts {
    let Some(p) = bin_path("systemctl") else {
        return Facts::new();
    };
    if !systemd_managed() {
        return Facts::new();
    }
    let Some((0, out, _)) = run(&[&p.to_string_lossy(), "--version"]) else {
        return Facts::new();
    };
    let features = out.split('\n').nth(1).unwrap_or("").to_string();
    let version = out.split(' ').nth(1).and_then(|v| v.trim().parse::<i64>().ok());
    match version {
        Some(v) => facts(vec![("systemd", json!({"features": features, "version": v}))]),
        None => Facts::new(),
    }
}
