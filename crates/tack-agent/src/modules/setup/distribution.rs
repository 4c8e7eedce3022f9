//! The distribution collector on Linux: ansible's first guess from os-release (through its
//! bundled `distro`), then its list of release files in order, the first one it can parse
//! deciding. Ported: the os-release and lsb-release rules of the Debian family and the
//! entries before them that decline a Debian os-release (Amazon, Arch, SUSE); a host whose
//! deciding release file belongs to another family is refused by name, not guessed.

use regex::Regex;
use serde_json::{Map, Value, json};

use super::args::ArgError;
use super::util::{file_content, file_lines};

const OS_FAMILY: &[(&str, &[&str])] = &[
    (
        "RedHat",
        &[
            "RedHat",
            "RHEL",
            "Fedora",
            "CentOS",
            "Scientific",
            "SLC",
            "Ascendos",
            "CloudLinux",
            "PSBM",
            "OracleLinux",
            "OVS",
            "OEL",
            "Amazon",
            "Amzn",
            "Virtuozzo",
            "XenServer",
            "Alibaba",
            "EulerOS",
            "openEuler",
            "AlmaLinux",
            "Rocky",
            "TencentOS",
            "EuroLinux",
            "Kylin Linux Advanced Server",
            "MIRACLE",
        ],
    ),
    (
        "Debian",
        &[
            "Debian",
            "Ubuntu",
            "Raspbian",
            "Neon",
            "KDE neon",
            "Linux Mint",
            "SteamOS",
            "Devuan",
            "Kali",
            "Cumulus Linux",
            "Pop!_OS",
            "Parrot",
            "Pardus GNU/Linux",
            "Uos",
            "Deepin",
            "OSMC",
            "Linux Mint Debian Edition",
            "Univention Corporate Server",
        ],
    ),
    (
        "Suse",
        &[
            "SuSE",
            "SLES",
            "SLED",
            "openSUSE",
            "openSUSE Tumbleweed",
            "SLES_SAP",
            "SUSE_LINUX",
            "openSUSE Leap",
            "ALP-Dolomite",
            "SL-Micro",
            "openSUSE MicroOS",
        ],
    ),
    ("Archlinux", &["Archlinux", "Antergos", "Manjaro"]),
    ("Mandrake", &["Mandrake", "Mandriva"]),
    ("Slackware", &["Slackware"]),
    ("Altlinux", &["Altlinux"]),
    ("SMGL", &["SMGL"]),
    ("Gentoo", &["Gentoo", "Funtoo"]),
    ("Alpine", &["Alpine"]),
    ("ClearLinux", &["Clear Linux OS", "Clear Linux Mix"]),
];

/// ansible's release files, in the order it tries them.
const OSDIST: &[(&str, &str, bool)] = &[
    ("/etc/altlinux-release", "Altlinux", false),
    ("/etc/oracle-release", "OracleLinux", false),
    ("/etc/slackware-version", "Slackware", false),
    ("/etc/centos-release", "CentOS", false),
    ("/etc/redhat-release", "RedHat", false),
    ("/etc/vmware-release", "VMwareESX", true),
    ("/etc/openwrt_release", "OpenWrt", false),
    ("/etc/os-release", "Amazon", false),
    ("/etc/system-release", "Amazon", false),
    ("/etc/alpine-release", "Alpine", false),
    ("/etc/arch-release", "Archlinux", true),
    ("/etc/os-release", "Archlinux", false),
    ("/etc/os-release", "SUSE", false),
    ("/etc/SuSE-release", "SUSE", false),
    ("/etc/gentoo-release", "Gentoo", false),
    ("/etc/os-release", "Debian", false),
    ("/etc/lsb-release", "Debian", false),
    ("/etc/lsb-release", "Mandriva", false),
    ("/etc/sourcemage-release", "SMGL", false),
    ("/usr/lib/os-release", "ClearLinux", false),
    ("/etc/coreos/update.conf", "Coreos", false),
    ("/etc/os-release", "Flatcar", false),
    ("/etc/os-release", "NA", false),
];

/// os-release as `distro` reads it: KEY=value, shell quotes removed, keys lowercased.
fn os_release() -> Map<String, Value> {
    let mut m = Map::new();
    let text = std::fs::read_to_string("/etc/os-release")
        .or_else(|_| std::fs::read_to_string("/usr/lib/os-release"))
        .unwrap_or_default();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
                .unwrap_or(v);
            m.insert(k.trim().to_lowercase(), json!(v));
        }
    }
    m
}

/// Python's `str.capitalize`.
fn capitalize(s: &str) -> String {
    let mut cs = s.chars();
    match cs.next() {
        Some(f) => f.to_uppercase().collect::<String>() + &cs.as_str().to_lowercase(),
        None => String::new(),
    }
}

fn lsb_release_field(field: &str) -> Option<String> {
    let p = super::util::bin_path("lsb_release")?;
    let (rc, out, _) = super::util::run(&[&p.to_string_lossy(), "-a"])?;
    if rc != 0 {
        return None;
    }
    out.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == field).then(|| v.trim().to_string())
    })
}

/// ansible's first guess: `distro`'s id, version (the most precise one for Debian) and
/// codename.
fn guess(osr: &Map<String, Value>) -> Map<String, Value> {
    let get = |k: &str| osr.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let id = get("id").to_lowercase();
    let mut name = capitalize(&id);
    name = match name.as_str() {
        "Amzn" => "Amazon".into(),
        "Rhel" => "Redhat".into(),
        "" => "OtherLinux".into(),
        _ => name,
    };
    let mut candidates = vec![get("version_id")];
    if id == "debian" || get("id_like").split_whitespace().any(|l| l == "debian") {
        candidates.push(lsb_release_field("Release").unwrap_or_default());
        candidates.push(file_content("/etc/debian_version").unwrap_or_default());
    }
    let plain = candidates.iter().find(|v| !v.is_empty()).cloned().unwrap_or_default();
    let mut version = plain.clone();
    if id == "debian" || id == "centos" {
        let mut best = String::new();
        for v in &candidates {
            if v.matches('.').count() > best.matches('.').count() || best.is_empty() {
                best = v.clone();
            }
        }
        version = if id == "centos" {
            best.split('.').take(2).collect::<Vec<_>>().join(".")
        } else {
            best
        };
    }
    let codename = osr
        .get("version_codename")
        .or_else(|| osr.get("ubuntu_codename"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let version = if version.is_empty() { "NA".to_string() } else { version };
    let major = version.split('.').next().unwrap_or("").to_string();
    let mut g = Map::new();
    g.insert("distribution".into(), json!(name));
    g.insert("distribution_version".into(), json!(version));
    g.insert("distribution_release".into(), json!(codename.unwrap_or_else(|| "NA".into())));
    g.insert(
        "distribution_major_version".into(),
        json!(if major.is_empty() { "NA".into() } else { major }),
    );
    g
}

fn re_group(re: &str, data: &str) -> Option<String> {
    Regex::new(re).ok()?.captures(data)?.get(1).map(|m| m.as_str().to_string())
}

/// ansible's Debian-family reading of os-release or lsb-release; `None` when the file names
/// none of the family.
fn parse_debian(
    data: &str,
    path: &str,
    guessed: &Map<String, Value>,
) -> Option<Map<String, Value>> {
    let mut f = Map::new();
    let mut put = |k: &str, v: String| {
        f.insert(k.to_string(), json!(v));
    };
    let version_id = || re_group(r#"VERSION_ID="(.*)""#, data);
    if data.contains("Debian") || data.contains("Raspbian") {
        put("distribution", "Debian".into());
        if let Some(r) = re_group(r"PRETTY_NAME=[^(]+ \(?([^)]+?)\)", data) {
            put("distribution_release", r);
        }
        if guessed.get("distribution_release").and_then(Value::as_str) == Some("NA")
            && data.contains("Debian")
        {
            // ansible asks dpkg about tzdata here; not ported, so the caller refuses.
            return None;
        }
        let minor = Regex::new(r"(\d+)\.(\d+)").ok()?;
        for line in file_lines("/etc/debian_version") {
            if let Some(m) = minor.captures(line.trim()) {
                put("distribution_minor_version", m[2].to_string());
            }
        }
    } else if data.contains("Ubuntu") {
        put("distribution", "Ubuntu".into());
    } else if data.contains("SteamOS") {
        put("distribution", "SteamOS".into());
    } else if (path == "/etc/lsb-release" || path == "/etc/os-release")
        && (data.contains("Kali") || data.contains("Parrot"))
    {
        let name = if data.contains("Kali") { "Kali" } else { "Parrot" };
        put("distribution", name.into());
        if let Some(r) = re_group("DISTRIB_RELEASE=(.*)", data) {
            put("distribution_release", r);
        }
    } else if data.contains("Devuan") {
        put("distribution", "Devuan".into());
        if let Some(r) = re_group(r#"PRETTY_NAME="?[^("]+ \(?([^) "]+)\)?"#, data) {
            put("distribution_release", r);
        }
        if let Some(v) = version_id() {
            put("distribution_version", v.clone());
            put("distribution_major_version", v);
        }
    } else if data.contains("Cumulus") {
        put("distribution", "Cumulus Linux".into());
        if let Some(v) = re_group("VERSION_ID=(.*)", data) {
            let parts: Vec<&str> = v.split('.').collect();
            if parts.len() == 3 {
                put("distribution_major_version", parts[0].to_string());
            }
            put("distribution_version", v);
        }
        if let Some(r) = re_group(r#"VERSION="(.*)""#, data) {
            put("distribution_release", r);
        }
    } else if data.contains("Mint") {
        put("distribution", "Linux Mint".into());
        if let Some(v) = version_id() {
            put("distribution_major_version", v.split('.').next().unwrap_or("").to_string());
            put("distribution_version", v);
        }
    } else if ["UOS", "Uos", "uos", "Deepin", "deepin"].iter().any(|n| data.contains(n)) {
        let uos = ["UOS", "Uos", "uos"].iter().any(|n| data.contains(n));
        put("distribution", if uos { "Uos" } else { "Deepin" }.into());
        if let Some(r) = re_group(r#"VERSION_CODENAME="?([^"]+)"?"#, data) {
            put("distribution_release", r);
        }
        if let Some(v) = version_id() {
            put("distribution_major_version", v.split('.').next().unwrap_or("").to_string());
            put("distribution_version", v);
        }
    } else if data.contains("LMDE") {
        put("distribution", "Linux Mint Debian Edition".into());
    } else {
        return None;
    }
    Some(f)
}

/// ansible strips quotes and backslashes from both ends of a release file before parsing it.
fn strip_quotes(content: &str) -> &str {
    content.trim_matches(|c| c == '\'' || c == '"' || c == '\\')
}

/// ansible's `_parse_dist_file` for the Debian entry: whether the file was recognised, and
/// what it says.
pub(crate) fn parse_debian_file(
    content: &str,
    path: &str,
    guessed: &Map<String, Value>,
) -> (bool, Map<String, Value>) {
    match parse_debian(strip_quotes(content), path, guessed) {
        Some(f) => (true, f),
        None => (false, Map::new()),
    }
}

fn dist_file(path: &str, allow_empty: bool) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || (!allow_empty && meta.len() == 0) {
        return None;
    }
    Some(file_content(path).unwrap_or_default())
}

pub(super) fn collect() -> Result<Map<String, Value>, ArgError> {
    let [system, _, release, version, _] = super::system::uname();
    let mut f = Map::new();
    f.insert("distribution".into(), json!(system));
    f.insert("distribution_release".into(), json!(release));
    f.insert("distribution_version".into(), json!(version));
    if system != "Linux" {
        return Err(ArgError::Refused(format!(
            "tack's setup gathers facts on Linux only, not {system}"
        )));
    }
    let guessed = guess(&os_release());
    for (k, v) in &guessed {
        f.insert(k.clone(), v.clone());
    }
    for &(path, name, allow_empty) in OSDIST {
        let Some(content) = dist_file(path, allow_empty) else {
            continue;
        };
        let decided = |f: &mut Map<String, Value>, parsed: Option<Map<String, Value>>| {
            f.insert("distribution".into(), json!(name));
            f.insert("distribution_file_path".into(), json!(path));
            f.insert("distribution_file_variety".into(), json!(name));
            if let Some(p) = parsed {
                f.insert("distribution_file_parsed".into(), json!(true));
                f.extend(p);
            }
        };
        if allow_empty {
            decided(&mut f, None);
            break;
        }
        let data = strip_quotes(&content);
        let declines = match name {
            "Amazon" => !data.contains("Amazon"),
            "Archlinux" => !data.contains("Arch Linux"),
            "SUSE" => !data.to_lowercase().contains("suse"),
            _ => false,
        };
        if declines {
            continue;
        }
        if name == "Debian" {
            let (parsed, facts) = parse_debian_file(&content, path, &f);
            if parsed {
                decided(&mut f, Some(facts));
                break;
            }
            if data.contains("Debian") || data.contains("Raspbian") {
                return Err(ArgError::Refused(
                    "tack's setup cannot tell this Debian release (ansible asks dpkg about tzdata)"
                        .into(),
                ));
            }
            continue;
        }
        return Err(ArgError::Refused(format!(
            "tack's setup does not read the {name} release file {path} yet"
        )));
    }
    let distro = f.get("distribution").and_then(Value::as_str).unwrap_or("").to_string();
    let family = OS_FAMILY
        .iter()
        .find(|(_, names)| names.contains(&distro.as_str()))
        .map(|(fam, _)| (*fam).to_string())
        .unwrap_or(distro);
    f.insert("os_family".into(), json!(family));
    Ok(f)
}
