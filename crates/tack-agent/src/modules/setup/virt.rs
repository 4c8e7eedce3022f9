//! The `virtual` collector on Linux: ansible's sequence of container and hypervisor probes
//! (cgroups and environment of PID 1, systemd's container file, DMI names, cpuinfo, kernel
//! modules, `dmidecode`, `/dev/kvm`); the first probe that finds one decides type and role,
//! every probe adds to the guest/host technology sets.

use std::path::Path;

use regex::Regex;
use serde_json::{Map, Value, json};

use super::util::{bin_path, file_content, file_lines, run};

#[derive(Default)]
struct State {
    kind: Option<String>,
    role: Option<String>,
    found: bool,
    guest: Vec<String>,
    host: Vec<String>,
}

impl State {
    fn add(list: &mut Vec<String>, t: &str) {
        if !list.iter().any(|x| x == t) {
            list.push(t.to_string());
        }
    }
    fn guest(&mut self, t: &str) {
        Self::add(&mut self.guest, t);
    }
    fn host(&mut self, t: &str) {
        Self::add(&mut self.host, t);
    }
    /// A probe that decides both type and role when nothing has decided yet.
    fn decide(&mut self, kind: &str, role: &str) {
        if !self.found {
            self.kind = Some(kind.into());
            self.role = Some(role.into());
            self.found = true;
        }
    }
    /// A DMI probe: decides the type only (the role was set to guest beforehand).
    fn decide_type(&mut self, kind: &str) {
        if !self.found {
            self.kind = Some(kind.into());
            self.found = true;
        }
    }
}

fn re(p: &str) -> Option<Regex> {
    Regex::new(p).ok()
}

fn has(r: &Option<Regex>, s: &str) -> bool {
    r.as_ref().is_some_and(|r| r.is_match(s))
}

pub(super) fn collect() -> Map<String, Value> {
    let mut s = State::default();
    let docker = re(r"/docker(/|-[0-9a-f]+\.scope)");
    let lxc = re("/lxc/|/machine.slice/machine-lxc");
    for line in file_lines("/proc/1/cgroup") {
        if has(&docker, &line) {
            s.guest("docker");
            s.decide("docker", "guest");
        }
        if has(&lxc, &line) {
            s.guest("lxc");
            s.decide("lxc", "guest");
        }
        if line.contains("/system.slice/containerd.service") {
            s.guest("containerd");
            s.decide("containerd", "guest");
        }
    }
    if let Ok(env) = std::fs::read("/proc/1/environ") {
        let env = String::from_utf8_lossy(&env);
        for line in env.trim().split('\0') {
            if line.contains("container=lxc") {
                s.guest("lxc");
                s.decide("lxc", "guest");
            }
            if line.contains("container=podman") {
                s.guest("podman");
                s.decide("podman", "guest");
            }
            if line.starts_with("container=") && line.len() > "container=".len() {
                s.guest("container");
                s.decide("container", "guest");
            }
        }
    }
    if Path::new("/proc/vz").exists() && !Path::new("/proc/lve").exists() {
        s.kind = Some("openvz".into());
        if Path::new("/proc/bc").exists() {
            s.host("openvz");
            if !s.found {
                s.role = Some("host".into());
            }
        } else {
            s.guest("openvz");
            if !s.found {
                s.role = Some("guest".into());
            }
        }
        s.found = true;
    }
    let systemd_container = file_content("/run/systemd/container").filter(|c| !c.is_empty());
    if let Some(c) = &systemd_container {
        s.guest(c);
        s.decide(c, "guest");
    }
    if Path::new("/.dockerenv").exists() || Path::new("/.dockerinit").exists() {
        s.guest("docker");
        s.decide("docker", "guest");
    }
    if s.guest
        .iter()
        .any(|g| ["docker", "lxc", "podman", "openvz", "containerd"].contains(&g.as_str()))
        || systemd_container.is_some()
    {
        s.guest("container");
    }
    if Path::new("/proc/xen").exists() {
        let xen_host = file_lines("/proc/xen/capabilities").iter().any(|l| l.contains("control_d"));
        if xen_host {
            s.host("xen");
            if !s.found {
                s.kind = Some("xen".into());
                s.role = Some("host".into());
            }
        } else if !s.found {
            s.kind = Some("xen".into());
            s.role = Some("guest".into());
        }
        s.found = true;
    }
    if !s.found {
        s.role = Some("guest".into());
    }
    let dmi = |n: &str| file_content(&format!("/sys/devices/virtual/dmi/id/{n}"));
    let product = dmi("product_name");
    let vendor = dmi("sys_vendor");
    let family = dmi("product_family");
    let product = product.as_deref();
    let vendor = vendor.as_deref();
    if matches!(product, Some("KVM" | "KVM Server" | "Bochs" | "AHV" | "CloudStack KVM Hypervisor"))
    {
        s.guest("kvm");
        s.decide_type("kvm");
    }
    if vendor == Some("oVirt") {
        s.guest("oVirt");
        s.decide_type("oVirt");
    }
    if vendor == Some("Red Hat") {
        if family.as_deref() == Some("RHV") {
            s.guest("RHV");
            s.decide_type("RHV");
        } else if product == Some("RHEV Hypervisor") {
            s.guest("RHEV");
            s.decide_type("RHEV");
        }
    }
    if product.is_some_and(|p| p.starts_with("VMware")) {
        s.guest("VMware");
        s.decide_type("VMware");
    }
    if matches!(product, Some("OpenStack Compute" | "OpenStack Nova")) {
        s.guest("openstack");
        s.decide_type("openstack");
    }
    if product == Some("BHYVE") {
        s.guest("bhyve");
        s.decide_type("bhyve");
    }
    let bios = dmi("bios_vendor");
    match bios.as_deref() {
        Some("Xen") => {
            s.guest("xen");
            s.decide_type("xen");
        }
        Some("innotek GmbH") => {
            s.guest("virtualbox");
            s.decide_type("virtualbox");
        }
        Some("Amazon EC2" | "DigitalOcean" | "Hetzner" | "Linode") => {
            s.guest("kvm");
            s.decide_type("kvm");
        }
        _ => {}
    }
    let vendor_kinds: &[(&[&str], &str)] = &[
        (&["QEMU", "Amazon EC2", "DigitalOcean", "Google", "Scaleway", "Nutanix"], "kvm"),
        (&["KubeVirt"], "KubeVirt"),
        (&["Microsoft Corporation"], "VirtualPC"),
        (&["Parallels Software International Inc."], "parallels"),
        (&["OpenStack Foundation"], "openstack"),
    ];
    for (vendors, kind) in vendor_kinds {
        if vendor.is_some_and(|v| vendors.contains(&v)) {
            s.guest(kind);
            s.decide_type(kind);
        }
    }
    if !s.found {
        s.role = None;
    }
    for line in file_lines("/proc/self/status") {
        if has(&re(r"^VxID:\s+\d+"), &line) {
            if !s.found {
                s.kind = Some("linux_vserver".into());
            }
            if has(&re(r"^VxID:\s+0"), &line) {
                s.host("linux_vserver");
                if !s.found {
                    s.role = Some("host".into());
                }
            } else {
                s.guest("linux_vserver");
                if !s.found {
                    s.role = Some("guest".into());
                }
            }
            s.found = true;
        }
    }
    cpuinfo(&mut s);
    modules(&mut s);
    if let Some(dmi_bin) = bin_path("dmidecode") {
        let dmi_bin = dmi_bin.to_string_lossy().into_owned();
        if let Some((0, out, _)) = run(&[&dmi_bin, "-s", "system-product-name"]) {
            let name: String = out.lines().filter(|l| !l.starts_with('#')).map(str::trim).collect();
            if name.starts_with("VMware") {
                s.guest("VMware");
                s.decide("VMware", "guest");
            }
            if out.contains("BHYVE") {
                s.guest("bhyve");
                s.decide("bhyve", "guest");
            }
        }
    }
    if Path::new("/dev/kvm").exists() {
        s.host("kvm");
        s.decide("kvm", "host");
    }
    if !s.found {
        s.kind = Some("NA".into());
        s.role = Some("NA".into());
    }
    let mut f = Map::new();
    if let Some(k) = s.kind {
        f.insert("virtualization_type".into(), json!(k));
    }
    if let Some(r) = s.role {
        f.insert("virtualization_role".into(), json!(r));
    }
    f.insert("virtualization_tech_guest".into(), json!(s.guest));
    f.insert("virtualization_tech_host".into(), json!(s.host));
    f
}

fn cpuinfo(s: &mut State) {
    let probes: &[(&str, &str, &str)] = &[
        ("^model name.*QEMU Virtual CPU", "kvm", "kvm"),
        ("^vendor_id.*User Mode Linux", "uml", "uml"),
        ("^model name.*UML", "uml", "uml"),
        ("^machine.*CHRP IBM pSeries .emulated by qemu.", "kvm", "kvm"),
        ("^vendor_id.*PowerVM Lx86", "powervm_lx86", "powervm_lx86"),
    ];
    let s390 = re("^vendor_id.*IBM/S390");
    for line in file_lines("/proc/cpuinfo") {
        let hit = probes.iter().find(|(p, _, _)| has(&re(p), &line));
        if let Some((_, tech, kind)) = hit {
            s.guest(tech);
            if !s.found {
                s.kind = Some((*kind).into());
            }
        } else if has(&s390, &line) {
            s.guest("PR/SM");
            if !s.found {
                s.kind = Some("PR/SM".into());
            }
            if bin_path("lscpu").is_some() {
                if let Some((0, out, _)) = run(&["lscpu"]) {
                    for l in out.lines() {
                        if let Some((k, v)) = l.split_once(':')
                            && k.trim() == "Hypervisor"
                        {
                            s.guest(v.trim());
                            if !s.found {
                                s.kind = Some(v.trim().into());
                            }
                        }
                    }
                }
            } else {
                s.guest("ibm_systemz");
                if !s.found {
                    s.kind = Some("ibm_systemz".into());
                }
            }
        } else {
            continue;
        }
        if !s.found {
            let role = if s.kind.as_deref() == Some("PR/SM") { "LPAR" } else { "guest" };
            s.role = Some(role.into());
            s.found = true;
        }
    }
}

fn modules(s: &mut State) {
    let Ok(text) = std::fs::read_to_string("/proc/modules") else {
        return;
    };
    let mods: Vec<&str> = text.trim().lines().map(|l| l.split(' ').next().unwrap_or("")).collect();
    if mods.contains(&"kvm") {
        s.host("kvm");
        if !s.found {
            s.kind = Some("kvm".into());
            s.role = Some("host".into());
        }
        if Path::new("/rhev/").is_dir() {
            let vdsm = std::fs::read_dir("/proc").ok().is_some_and(|d| {
                d.filter_map(Result::ok).any(|e| {
                    let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
                    matches!(comm.trim_end(), "vdsm" | "vdsmd")
                })
            });
            if vdsm {
                s.host("RHEV");
                if !s.found {
                    s.kind = Some("RHEV".into());
                }
            }
        }
        s.found = true;
    }
    if mods.contains(&"vboxdrv") {
        s.host("virtualbox");
        s.decide("virtualbox", "host");
    }
    if mods.contains(&"virtio") {
        s.host("kvm");
        s.decide("kvm", "guest");
    }
}
