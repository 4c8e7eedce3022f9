//! Which collectors a `gather_subset` selects, in ansible's rules: the collectors ansible has
//! for Linux with their fact ids (each a valid subset name) and the collectors each requires,
//! `min`/`all`/`!` handling, and dependency order.

use serde_json::{Map, Value};

use super::args::{ArgError, Params};
use super::{Gathered, distribution, hardware, local, managers, network, system, virt};

/// One of ansible's Linux fact collectors.
struct Collector {
    name: &'static str,
    fact_ids: &'static [&'static str],
    requires: &'static [&'static str],
}

/// ansible's collectors for Linux, in `default_collectors` order.
const COLLECTORS: &[Collector] = &[
    c(
        "platform",
        &[
            "architecture",
            "kernel",
            "kernel_version",
            "machine",
            "machine_id",
            "python_version",
            "system",
        ],
        &[],
    ),
    c(
        "distribution",
        &[
            "distribution_major_version",
            "distribution_release",
            "distribution_version",
            "os_family",
        ],
        &[],
    ),
    c("lsb", &[], &[]),
    c("selinux", &[], &[]),
    c("apparmor", &[], &[]),
    c("chroot", &["is_chroot"], &[]),
    c("fips", &[], &[]),
    c("python", &[], &[]),
    c("caps", &["system_capabilities", "system_capabilities_enforced"], &[]),
    c("pkg_mgr", &[], &["distribution"]),
    c("service_mgr", &[], &["distribution", "platform"]),
    c("cmdline", &[], &[]),
    c("date_time", &[], &[]),
    c("env", &[], &[]),
    c("loadavg", &[], &[]),
    c(
        "ssh_pub_keys",
        &[
            "ssh_host_key_dsa_public",
            "ssh_host_key_ecdsa_public",
            "ssh_host_key_ed25519_public",
            "ssh_host_key_rsa_public",
            "ssh_host_pub_keys",
        ],
        &[],
    ),
    c(
        "user",
        &[
            "effective_group_ids",
            "effective_user_id",
            "real_user_id",
            "user_dir",
            "user_gecos",
            "user_gid",
            "user_id",
            "user_shell",
            "user_uid",
        ],
        &[],
    ),
    c("systemd", &[], &[]),
    c(
        "virtual",
        &[
            "virtualization_role",
            "virtualization_tech_guest",
            "virtualization_tech_host",
            "virtualization_type",
        ],
        &[],
    ),
    c(
        "hardware",
        &["devices", "mounts", "processor", "processor_cores", "processor_count"],
        &["platform"],
    ),
    c("dns", &[], &[]),
    c("fibre_channel_wwn", &[], &[]),
    c("iscsi", &[], &[]),
    c("nvme", &[], &[]),
    c(
        "network",
        &["all_ipv4_addresses", "all_ipv6_addresses", "default_ipv4", "default_ipv6", "interfaces"],
        &["distribution", "platform"],
    ),
    c("local", &[], &[]),
    c("facter", &["facter"], &[]),
    c("ohai", &[], &[]),
];

const fn c(
    name: &'static str,
    fact_ids: &'static [&'static str],
    requires: &'static [&'static str],
) -> Collector {
    Collector { name, fact_ids, requires }
}

/// setup's `minimal_gather_subset`: gathered even under `!all`.
const MINIMAL: &[&str] = &[
    "apparmor",
    "caps",
    "cmdline",
    "date_time",
    "distribution",
    "dns",
    "env",
    "fips",
    "local",
    "lsb",
    "pkg_mgr",
    "platform",
    "python",
    "selinux",
    "service_mgr",
    "ssh_pub_keys",
    "user",
];

/// The collectors a subset name stands for (a collector's name or one of its fact ids).
fn providers(id: &str) -> impl Iterator<Item = &'static Collector> + '_ {
    COLLECTORS.iter().filter(move |c| c.name == id || c.fact_ids.contains(&id))
}

fn valid_subsets() -> Vec<&'static str> {
    let mut all: Vec<&str> = COLLECTORS
        .iter()
        .flat_map(|c| std::iter::once(c.name).chain(c.fact_ids.iter().copied()))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The collector names to run, in the order they run.
pub(super) fn select(gather_subset: &[String]) -> Result<Vec<&'static str>, ArgError> {
    let valid = valid_subsets();
    let mut add: Vec<&str> = Vec::new();
    let mut exclude: Vec<&str> = Vec::new();
    let mut explicit: Vec<&str> = Vec::new();
    let spec: Vec<&str> = if gather_subset.is_empty() {
        vec!["all"]
    } else {
        gather_subset.iter().map(String::as_str).collect()
    };
    add.extend(MINIMAL);
    for subset in spec {
        match subset {
            "min" => add.extend(MINIMAL),
            "all" => add.extend(&valid),
            _ => {
                if let Some(neg) = subset.strip_prefix('!') {
                    match neg {
                        "min" => exclude.extend(MINIMAL),
                        "all" => exclude.extend(valid.iter().filter(|v| !MINIMAL.contains(v))),
                        _ => {
                            // '!hardware' also drops the fact ids hardware provides.
                            for col in COLLECTORS.iter().filter(|c| c.name == neg) {
                                exclude.extend(col.fact_ids);
                            }
                            if let Some(v) = valid.iter().find(|v| **v == neg) {
                                exclude.push(v);
                            }
                        }
                    }
                } else {
                    let Some(v) = valid.iter().find(|v| **v == subset) else {
                        return Err(ArgError::BadSubset(subset.to_string(), valid.join(", ")));
                    };
                    explicit.push(v);
                    add.push(v);
                }
            }
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for a in add {
        if (!exclude.contains(&a) || explicit.contains(&a)) && !names.contains(&a) {
            names.push(a);
        }
    }
    // Requirements are gathered too, even when excluded.
    let mut i = 0;
    while i < names.len() {
        let reqs: Vec<&str> =
            providers(names[i]).flat_map(|c| c.requires.iter().copied()).collect();
        for r in reqs {
            if !names.contains(&r) {
                names.push(r);
            }
        }
        i += 1;
    }
    // Each collector runs once, after the collectors it requires.
    let mut picked: Vec<&'static Collector> = Vec::new();
    for name in &names {
        for col in providers(name) {
            if !picked.iter().any(|p| p.name == col.name) {
                picked.push(col);
            }
        }
    }
    let mut ordered: Vec<&'static str> = Vec::new();
    while ordered.len() < picked.len() {
        for col in &picked {
            if !ordered.contains(&col.name)
                && col
                    .requires
                    .iter()
                    .all(|r| ordered.contains(r) || !picked.iter().any(|p| p.name == *r))
            {
                ordered.push(col.name);
            }
        }
    }
    Ok(ordered)
}

/// Runs one collector; its facts are unprefixed, as the collector names them.
pub(super) fn collect(
    name: &str,
    params: &Params,
    state: &mut Gathered,
) -> Result<Map<String, Value>, ArgError> {
    let facts = match name {
        "platform" => system::platform(params.python.as_deref()),
        "distribution" => distribution::collect()?,
        "lsb" => system::lsb(),
        "selinux" => system::selinux(),
        "apparmor" => system::apparmor(),
        "chroot" => system::chroot(),
        "fips" => system::fips(),
        "python" => system::python(params.python.as_deref()),
        "caps" => system::caps(),
        "pkg_mgr" => managers::pkg_mgr(&state.facts),
        "service_mgr" => managers::service_mgr(&state.facts),
        "cmdline" => system::cmdline(),
        "date_time" => system::date_time(),
        "env" => system::env(),
        "loadavg" => system::loadavg(),
        "ssh_pub_keys" => system::ssh_pub_keys(),
        "user" => system::user(),
        "systemd" => managers::systemd(),
        "virtual" => virt::collect(),
        "hardware" => hardware::collect(&state.facts, params.gather_timeout, &mut state.warnings),
        "dns" => system::dns(),
        "fibre_channel_wwn" => network::fibre_channel_wwn(),
        "iscsi" => network::iscsi(),
        "nvme" => network::nvme(),
        "network" => network::collect(),
        "local" => local::collect(&params.fact_path, &mut state.warnings),
        "facter" | "ohai" => system::facter_ohai(name)?,
        _ => Map::new(),
    };
    Ok(facts)
}
