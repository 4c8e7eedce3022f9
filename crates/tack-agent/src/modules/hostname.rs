//! `ansible.builtin.hostname` on Linux: the host's name, read and set by the strategy ansible
//! picks (`hostnamectl` on a systemd-run host, else the distribution's file: `/etc/hostname`,
//! Alpine's file plus `hostname -F`, Red Hat's `/etc/sysconfig/network`). Changes only the
//! host name. Strategies for other systems (BSD, macOS, Solaris, OpenRC, SLES) are refused.

use std::net::ToSocketAddrs;

use serde_json::json;

use super::argspec::{Kind, Opt, Spec};
use super::common::fail;
use super::group::{bin_path, run_cmd};
use super::{Ctx, Invocation, ModuleResult};

const USES: &[&str] = &[
    "alpine", "debian", "freebsd", "generic", "macos", "macosx", "darwin", "openbsd", "openrc",
    "redhat", "sles", "solaris", "systemd",
];

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("name", Kind::Str).required(),
            Opt::new("use", Kind::Str).choices(USES),
        ],
        ..Spec::default()
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Strategy {
    Systemd,
    /// The name in a file, the running name left alone (ansible's `FileStrategy`).
    File(&'static str),
    Alpine,
    RedHat,
}

/// ansible's `get_distribution()`: the os-release ID, capitalised.
fn distribution() -> String {
    let text = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let id = text
        .lines()
        .find_map(|l| l.strip_prefix("ID="))
        .map(|v| v.trim().trim_matches('"').to_string())
        .unwrap_or_default();
    let mut chars = id.chars();
    let cap: String = match chars.next() {
        Some(c) => c.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect(),
        None => String::new(),
    };
    match cap.as_str() {
        "Amzn" => "Amazon".into(),
        "Rhel" => "Redhat".into(),
        "" => "OtherLinux".into(),
        _ => cap,
    }
}

fn systemd_managed() -> bool {
    bin_path("systemctl").is_ok()
        && ["/run/systemd/system/", "/dev/.run/systemd/", "/dev/.systemd/"]
            .iter()
            .any(|c| std::path::Path::new(c).exists())
}

fn pick(use_: Option<&str>) -> Result<Strategy, ModuleResult> {
    let refuse = |what: &str| {
        Err(fail(format!("tack's hostname module does not implement the '{what}' strategy")))
    };
    match use_ {
        Some("systemd" | "debian") => return Ok(Strategy::Systemd),
        Some("alpine") => return Ok(Strategy::Alpine),
        Some("redhat") => return Ok(Strategy::RedHat),
        Some(other) => return refuse(other),
        None => {}
    }
    if systemd_managed() {
        return Ok(Strategy::Systemd);
    }
    let d = distribution();
    const FILE: &[&str] = &[
        "Cumulus-linux",
        "Debian",
        "Deepin",
        "Devuan",
        "Kali",
        "Kylin",
        "Linaro",
        "Linuxmint",
        "Neon",
        "Parrot",
        "Pop",
        "Raspbian",
        "Ubuntu",
        "Uos",
        "Void",
    ];
    const REDHAT: &[&str] = &[
        "Alinux",
        "Altlinux",
        "Amazon",
        "Anolis",
        "Centos",
        "Cloudlinux",
        "Cloudlinuxserver",
        "Eurolinux",
        "Oracle",
        "Redhat",
        "Scientific",
        "Virtuozzo",
    ];
    match d.as_str() {
        d if FILE.contains(&d) => Ok(Strategy::File("/etc/hostname")),
        d if REDHAT.contains(&d) => Ok(Strategy::RedHat),
        "Alpine" => Ok(Strategy::Alpine),
        "Gentoo" => refuse("openrc"),
        "Sles" => refuse("sles"),
        other => Err(fail(format!("hostname module cannot be used on platform Linux ({other})"))),
    }
}

fn command(argv: &[&str]) -> Result<String, ModuleResult> {
    let cmd: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let (rc, out, err) = run_cmd(&cmd);
    if rc != 0 {
        return Err(fail(format!("Command failed rc={rc}, out={out}, err={err}")));
    }
    Ok(out)
}

const NETWORK: &str = "/etc/sysconfig/network";

impl Strategy {
    fn permanent(self) -> Result<String, ModuleResult> {
        match self {
            Strategy::Systemd => {
                let ctl = bin_path("hostnamectl")?;
                Ok(command(&[&ctl, "--static", "status"])?.trim().to_string())
            }
            Strategy::File(f) => Ok(read_name(f)),
            Strategy::Alpine => Ok(read_name("/etc/hostname")),
            Strategy::RedHat => {
                let text = std::fs::read_to_string(NETWORK)
                    .map_err(|e| fail(format!("failed to read hostname: {e}")))?;
                for line in text.lines().map(str::trim) {
                    if line.starts_with("HOSTNAME") {
                        return match line.split_once('=') {
                            Some((_, v)) if !v.contains('=') => Ok(v.trim().to_string()),
                            _ => Err(fail(format!(
                                "failed to read hostname: not enough values to unpack in {line}"
                            ))),
                        };
                    }
                }
                Err(fail(format!("Unable to locate HOSTNAME entry in {NETWORK}")))
            }
        }
    }

    fn current(self) -> Result<String, ModuleResult> {
        match self {
            Strategy::Systemd => {
                let ctl = bin_path("hostnamectl")?;
                Ok(command(&[&ctl, "--transient", "status"])?.trim().to_string())
            }
            other => other.permanent(),
        }
    }

    fn set_permanent(self, name: &str) -> Result<(), ModuleResult> {
        let write = |f: &str, text: String| {
            std::fs::write(f, text).map_err(|e| fail(format!("failed to update hostname: {e}")))
        };
        match self {
            Strategy::Systemd => {
                long_name(name)?;
                let ctl = bin_path("hostnamectl")?;
                command(&[&ctl, "--pretty", "--static", "set-hostname", name]).map(|_| ())
            }
            Strategy::File(f) => write(f, format!("{name}\n")),
            Strategy::Alpine => write("/etc/hostname", format!("{name}\n")),
            Strategy::RedHat => {
                let text = std::fs::read_to_string(NETWORK).unwrap_or_default();
                let mut found = false;
                let mut out = String::new();
                for line in text.split_inclusive('\n') {
                    if line.trim().starts_with("HOSTNAME") {
                        out.push_str(&format!("HOSTNAME={name}\n"));
                        found = true;
                    } else {
                        out.push_str(line);
                    }
                }
                if !found {
                    out.push_str(&format!("HOSTNAME={name}\n"));
                }
                write(NETWORK, out)
            }
        }
    }

    fn set_current(self, name: &str) -> Result<(), ModuleResult> {
        match self {
            Strategy::Systemd => {
                long_name(name)?;
                let ctl = bin_path("hostnamectl")?;
                command(&[&ctl, "--transient", "set-hostname", name]).map(|_| ())
            }
            Strategy::Alpine => {
                let h = bin_path("hostname")?;
                command(&[&h, "-F", "/etc/hostname"]).map(|_| ())
            }
            _ => Ok(()),
        }
    }
}

fn long_name(name: &str) -> Result<(), ModuleResult> {
    if name.chars().count() > 64 {
        return Err(fail(
            "name cannot be longer than 64 characters on systemd servers, try a shorter name",
        ));
    }
    Ok(())
}

fn read_name(file: &str) -> String {
    if !std::path::Path::new(file).is_file() {
        return String::new();
    }
    std::fs::read_to_string(file).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// `gethostname(2)`: the kernel's name for this machine (empty when it has none).
pub(crate) fn gethostname() -> String {
    let mut buf = vec![0u8; 256];
    // SAFETY: `buf` is writable for its whole length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// `socket.getfqdn()`: the name the host's address resolves back to (when it has a dot, or
/// no better one is known), else the host name.
fn getfqdn() -> String {
    let host = gethostname();
    let Some(addr) = (host.as_str(), 0).to_socket_addrs().ok().and_then(|mut a| a.next()) else {
        return host;
    };
    let (storage, len) = socket_addr(&addr);
    let mut name = vec![0 as libc::c_char; 1025];
    // SAFETY: `storage` holds a valid sockaddr of `len` bytes; `name` is writable.
    let rc = unsafe {
        libc::getnameinfo(
            (&storage as *const libc::sockaddr_storage).cast(),
            len,
            name.as_mut_ptr(),
            name.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NAMEREQD,
        )
    };
    if rc != 0 {
        return host;
    }
    // SAFETY: on success getnameinfo wrote a NUL-terminated name into `name`.
    unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned()
}

fn socket_addr(addr: &std::net::SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: a zeroed sockaddr_storage is valid; the family-specific view is written below.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr {
        std::net::SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is large enough and aligned for any sockaddr.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            (storage, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        std::net::SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: as above.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            (storage, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

pub(crate) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let name = p.str("name").unwrap_or_default().to_string();
    let strategy = match pick(p.str("use")) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let steps = || -> Result<(String, String, bool), ModuleResult> {
        let current = strategy.current()?;
        let permanent = strategy.permanent()?;
        let mut changed = false;
        let mut step = |get: fn(Strategy) -> Result<String, ModuleResult>,
                        set: fn(Strategy, &str) -> Result<(), ModuleResult>|
         -> Result<(), ModuleResult> {
            if get(strategy)? != name {
                if !ctx.check_mode {
                    set(strategy, &name)?;
                }
                changed = true;
            }
            Ok(())
        };
        // systemd sets the permanent name first; the others the running one.
        if strategy == Strategy::Systemd {
            step(Strategy::permanent, Strategy::set_permanent)?;
            step(Strategy::current, Strategy::set_current)?;
        } else {
            step(Strategy::current, Strategy::set_current)?;
            step(Strategy::permanent, Strategy::set_permanent)?;
        }
        Ok((current, permanent, changed))
    };
    let (current, permanent, changed) = match steps() {
        Ok(v) => v,
        Err(r) => return r,
    };
    let before = if name != current { current } else { permanent };
    let fqdn = getfqdn();
    let domain = fqdn.split('.').skip(1).collect::<Vec<_>>().join(".");
    let mut r = ModuleResult::new();
    r.insert("changed".into(), changed.into());
    r.insert("name".into(), name.clone().into());
    r.insert(
        "ansible_facts".into(),
        json!({"ansible_hostname": name.split('.').next().unwrap_or_default(),
               "ansible_nodename": name, "ansible_fqdn": fqdn, "ansible_domain": domain}),
    );
    if changed {
        r.insert(
            "diff".into(),
            json!({"after": format!("hostname = {name}\n"), "before": format!("hostname = {before}\n")}),
        );
    }
    r
}
