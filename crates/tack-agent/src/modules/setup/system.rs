//! The small system collectors: platform, lsb, selinux, apparmor, chroot, fips, python, caps,
//! pkg_mgr, service_mgr, cmdline, date_time, env, loadavg, ssh_pub_keys, user, systemd, dns.
//! Each reads what ansible's collector of the same name reads.

use std::ffi::{CStr, CString};
use std::path::Path;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::args::ArgError;
use super::util::{bin_path, file_content, run};

type Facts = Map<String, Value>;

fn facts(pairs: Vec<(&str, Value)>) -> Facts {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// uname(2): sysname, nodename, release, version, machine.
pub(super) fn uname() -> [String; 5] {
    // SAFETY: utsname is plain C data; uname fills it and NUL-terminates every field.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname.
    let rc = unsafe { libc::uname(&mut u) };
    let field = |f: &[libc::c_char]| -> String {
        if rc != 0 {
            return String::new();
        }
        // SAFETY: uname succeeded, so the field holds a NUL-terminated string.
        unsafe { CStr::from_ptr(f.as_ptr()) }.to_string_lossy().into_owned()
    };
    [field(&u.sysname), field(&u.nodename), field(&u.release), field(&u.version), field(&u.machine)]
}

/// What the interpreter ansible would run the module with says about itself (the one the
/// controller named, else `python3` on `PATH`); asked once per interpreter and process.
pub(crate) struct PythonInfo {
    pub facts: Value,
    pub version: String,
    pub bits: String,
}

pub(crate) fn python_info(python: Option<&str>) -> Option<std::sync::Arc<PythonInfo>> {
    type Asked = std::collections::HashMap<String, Option<std::sync::Arc<PythonInfo>>>;
    static INFO: OnceLock<std::sync::Mutex<Asked>> = OnceLock::new();
    let program = python.unwrap_or("python3").to_string();
    let asked = INFO.get_or_init(Default::default);
    if let Some(known) = asked.lock().unwrap_or_else(|p| p.into_inner()).get(&program) {
        return known.clone();
    }
    let info = ask_python(&program).map(std::sync::Arc::new);
    asked.lock().unwrap_or_else(|p| p.into_inner()).insert(program, info.clone());
    info
}

/// Runs `program` (a path, or a name looked for on `PATH`) to describe itself.
fn ask_python(program: &str) -> Option<PythonInfo> {
    let prog =
        if program.contains('/') { std::path::PathBuf::from(program) } else { bin_path(program)? };
    let script = "import sys, json, platform\n\
        try:\n    from ssl import create_default_context, SSLContext\n    ssl = True\n\
        except ImportError:\n    ssl = False\n\
        v = sys.version_info\n\
        print(json.dumps({'version': {'major': v[0], 'minor': v[1], 'micro': v[2], \
        'releaselevel': v[3], 'serial': v[4]}, 'version_info': list(v), \
        'executable': sys.executable, 'has_sslcontext': ssl, \
        'type': getattr(getattr(sys, 'implementation', None), 'name', None), \
        'pyver': platform.python_version(), 'bits': platform.architecture()[0]}))\n";
    let prog = prog.to_string_lossy().into_owned();
    let (rc, out, _) = run(&[&prog, "-c", script])?;
    if rc != 0 {
        return None;
    }
    let mut v: Map<String, Value> = serde_json::from_str(out.trim()).ok()?;
    let version = v.remove("pyver")?.as_str()?.to_string();
    let bits = v.remove("bits")?.as_str()?.replace("bit", "");
    Some(PythonInfo { facts: Value::Object(v), version, bits })
}

pub(super) fn platform(python: Option<&str>) -> Facts {
    let [system, node, release, version, machine] = uname();
    let mut f = Facts::new();
    f.insert("system".into(), json!(system));
    f.insert("kernel".into(), json!(release));
    f.insert("kernel_version".into(), json!(version));
    f.insert("machine".into(), json!(machine));
    let py = python_info(python);
    if let Some(py) = &py {
        f.insert("python_version".into(), json!(py.version));
    }
    let fqdn = getfqdn(&node);
    f.insert("fqdn".into(), json!(fqdn));
    f.insert("hostname".into(), json!(node.split('.').next().unwrap_or("")));
    f.insert("nodename".into(), json!(node));
    let domain: Vec<&str> = fqdn.split('.').skip(1).collect();
    f.insert("domain".into(), json!(domain.join(".")));
    let bits = py.map(|p| p.bits.clone()).unwrap_or_else(|| (usize::BITS).to_string());
    f.insert("userspace_bits".into(), json!(bits));
    f.insert("architecture".into(), json!(machine));
    if machine == "x86_64" {
        match bits.as_str() {
            "64" => {
                f.insert("userspace_architecture".into(), json!("x86_64"));
            }
            "32" => {
                f.insert("userspace_architecture".into(), json!("i386"));
            }
            _ => {}
        }
    }
    let machine_id =
        file_content("/var/lib/dbus/machine-id").or_else(|| file_content("/etc/machine-id"));
    if let Some(id) = machine_id.filter(|s| !s.is_empty()) {
        f.insert("machine_id".into(), json!(id.lines().next().unwrap_or("")));
    }
    f
}

/// Python's `socket.getfqdn()`: the host's name resolved to an address and back.
fn getfqdn(node: &str) -> String {
    let Ok(cname) = CString::new(node) else {
        return node.to_string();
    };
    // SAFETY: addrinfo hints are plain data; getaddrinfo allocates the list freed below.
    unsafe {
        let mut hints: libc::addrinfo = std::mem::zeroed();
        hints.ai_family = libc::AF_UNSPEC;
        hints.ai_socktype = libc::SOCK_DGRAM;
        let mut res: *mut libc::addrinfo = std::ptr::null_mut();
        if libc::getaddrinfo(cname.as_ptr(), std::ptr::null(), &hints, &mut res) != 0
            || res.is_null()
        {
            return node.to_string();
        }
        let mut host = [0 as libc::c_char; 1025];
        let rc = libc::getnameinfo(
            (*res).ai_addr,
            (*res).ai_addrlen,
            host.as_mut_ptr(),
            host.len() as libc::socklen_t,
            std::ptr::null_mut(),
            0,
            libc::NI_NAMEREQD,
        );
        libc::freeaddrinfo(res);
        if rc != 0 {
            return node.to_string();
        }
        CStr::from_ptr(host.as_ptr()).to_string_lossy().into_owned()
    }
}

pub(super) fn lsb() -> Facts {
    let out = bin_path("lsb_release")
        .and_then(|p| run(&[&p.to_string_lossy(), "-a"]))
        .filter(|r| r.0 == 0)
        .map(|r| r.1);
    let file =
        Path::new("/etc/lsb-release").exists().then(|| super::util::file_lines("/etc/lsb-release"));
    lsb_facts(out.as_deref(), file)
}

/// The lsb facts from `lsb_release -a`'s output, else from /etc/lsb-release's lines.
pub(crate) fn lsb_facts(out: Option<&str>, file: Option<Vec<String>>) -> Facts {
    let mut lsb: Vec<(String, String)> = Vec::new();
    let set = |lsb: &mut Vec<(String, String)>, k: &str, v: String| {
        if let Some(e) = lsb.iter_mut().find(|e| e.0 == k) {
            e.1 = v;
        } else {
            lsb.push((k.to_string(), v));
        }
    };
    for line in out.unwrap_or("").lines() {
        let Some((_, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim().to_string();
        let key = [
            ("LSB Version:", "release"),
            ("Distributor ID:", "id"),
            ("Description:", "description"),
            ("Release:", "release"),
            ("Codename:", "codename"),
        ]
        .iter()
        .find(|(marker, _)| line.contains(marker));
        if let Some((_, name)) = key {
            set(&mut lsb, name, value);
        }
    }
    if lsb.is_empty()
        && let Some(lines) = file
    {
        for line in lines {
            let Some((_, value)) = line.split_once('=') else {
                continue;
            };
            let value = value.trim().to_string();
            for (key, name) in [
                ("DISTRIB_ID", "id"),
                ("DISTRIB_RELEASE", "release"),
                ("DISTRIB_DESCRIPTION", "description"),
                ("DISTRIB_CODENAME", "codename"),
            ] {
                if line.contains(key) {
                    set(&mut lsb, name, value);
                    break;
                }
            }
        }
    }
    if let Some(rel) = lsb.iter().find(|e| e.0 == "release").map(|e| e.1.clone()) {
        let major = rel.split('.').next().unwrap_or("").to_string();
        set(&mut lsb, "major_release", major);
    }
    let strip = |s: &str| s.trim_matches(|c| c == '\'' || c == '"' || c == '\\').to_string();
    let lsb: Map<String, Value> = lsb.into_iter().map(|(k, v)| (k, json!(strip(&v)))).collect();
    facts(vec![("lsb", Value::Object(lsb))])
}

/// ansible's selinux facts come from libselinux (through ctypes); tack asks the same library.
pub(super) fn selinux() -> Facts {
    type IntFn = unsafe extern "C" fn() -> libc::c_int;
    type PtrIntFn = unsafe extern "C" fn(*mut libc::c_int) -> libc::c_int;
    type PtrStrFn = unsafe extern "C" fn(*mut *mut libc::c_char) -> libc::c_int;
    // SAFETY: dlopen/dlsym with NUL-terminated names; each symbol is cast to its libselinux
    // prototype before it is called.
    unsafe {
        let lib = libc::dlopen(c"libselinux.so.1".as_ptr(), libc::RTLD_LAZY);
        if lib.is_null() {
            return facts(vec![
                ("selinux", json!({"status": "Missing selinux Python library"})),
                ("selinux_python_present", json!(false)),
            ]);
        }
        let sym = |name: &CStr| libc::dlsym(lib, name.as_ptr());
        let mut s = Map::new();
        let enabled = sym(c"is_selinux_enabled");
        let on =
            !enabled.is_null() && std::mem::transmute::<*mut libc::c_void, IntFn>(enabled)() == 1;
        if !on {
            s.insert("status".into(), json!("disabled"));
        } else {
            s.insert("status".into(), json!("enabled"));
            let pv = sym(c"security_policyvers");
            let v = if pv.is_null() {
                -1
            } else {
                std::mem::transmute::<*mut libc::c_void, IntFn>(pv)()
            };
            s.insert("policyvers".into(), if v < 0 { json!("unknown") } else { json!(v) });
            let mode_name = |m: libc::c_int| match m {
                1 => "enforcing",
                0 => "permissive",
                -1 => "disabled",
                _ => "unknown",
            };
            let gm = sym(c"selinux_getenforcemode");
            let mut cm: libc::c_int = 0;
            let config = if !gm.is_null()
                && std::mem::transmute::<*mut libc::c_void, PtrIntFn>(gm)(&mut cm) == 0
            {
                mode_name(cm)
            } else {
                "unknown"
            };
            s.insert("config_mode".into(), json!(config));
            let ge = sym(c"security_getenforce");
            let mode = if ge.is_null() {
                "unknown"
            } else {
                mode_name(std::mem::transmute::<*mut libc::c_void, IntFn>(ge)())
            };
            s.insert("mode".into(), json!(mode));
            let gp = sym(c"selinux_getpolicytype");
            let mut ptr: *mut libc::c_char = std::ptr::null_mut();
            let ty = if !gp.is_null()
                && std::mem::transmute::<*mut libc::c_void, PtrStrFn>(gp)(&mut ptr) == 0
                && !ptr.is_null()
            {
                let t = CStr::from_ptr(ptr).to_string_lossy().into_owned();
                libc::free(ptr.cast());
                t
            } else {
                "unknown".to_string()
            };
            s.insert("type".into(), json!(ty));
        }
        libc::dlclose(lib);
        facts(vec![("selinux_python_present", json!(true)), ("selinux", Value::Object(s))])
    }
}

pub(super) fn apparmor() -> Facts {
    let status =
        if Path::new("/sys/kernel/security/apparmor").exists() { "enabled" } else { "disabled" };
    facts(vec![("apparmor", json!({ "status": status }))])
}

pub(super) fn chroot() -> Facts {
    use std::os::unix::fs::MetadataExt;
    let flag = crate::modules::environment::var("debian_chroot").is_some_and(|v| !v.is_empty());
    let is = if flag {
        true
    } else {
        match (std::fs::metadata("/"), std::fs::metadata("/proc/1/root/.")) {
            (Ok(me), Ok(init)) => me.ino() != init.ino() || me.dev() != init.dev(),
            (Ok(me), Err(_)) => {
                let fs = bin_path("stat")
                    .and_then(|p| run(&[&p.to_string_lossy(), "-f", "--format=%T", "/"]))
                    .map(|r| r.1)
                    .unwrap_or_default();
                let root_ino = if fs.contains("btrfs") {
                    256
                } else if fs.contains("xfs") {
                    128
                } else {
                    2
                };
                me.ino() != root_ino
            }
            _ => false,
        }
    };
    facts(vec![("is_chroot", json!(is))])
}

pub(super) fn fips() -> Facts {
    let on = file_content("/proc/sys/crypto/fips_enabled").as_deref() == Some("1");
    facts(vec![("fips", json!(on))])
}

pub(super) fn python(python: Option<&str>) -> Facts {
    match python_info(python) {
        Some(p) => facts(vec![("python", p.facts.clone())]),
        None => Facts::new(),
    }
}

pub(super) fn caps() -> Facts {
    let mut f = facts(vec![
        ("system_capabilities_enforced", json!("N/A")),
        ("system_capabilities", json!("N/A")),
    ]);
    let Some(p) = bin_path("capsh") else { return f };
    let Some((0, out, _)) = run(&[&p.to_string_lossy(), "--print"]) else {
        return f;
    };
    let mut enforced = "NA";
    let mut caps: Vec<Value> = Vec::new();
    for line in out.lines() {
        if line.starts_with("Current:") {
            if line.split(':').nth(1).map(str::trim) == Some("=ep") {
                enforced = "False";
            } else {
                enforced = "True";
                caps = line
                    .split('=')
                    .nth(1)
                    .unwrap_or("")
                    .split(',')
                    .map(|c| json!(c.trim()))
                    .collect();
            }
        }
    }
    f.insert("system_capabilities_enforced".into(), json!(enforced));
    f.insert("system_capabilities".into(), Value::Array(caps));
    f
}

/// `shlex.split(data, posix=False)`: whitespace-separated words; a word that starts with a
/// quote runs to the matching quote and ends there; a quote inside a word is an ordinary
/// character. `None` when a quote is left open (ansible then keeps nothing).
pub(crate) fn split_non_posix(data: &str) -> Option<Vec<String>> {
    let is_space = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n');
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for ch in data.chars() {
        if let Some(q) = quote {
            cur.push(ch);
            if ch == q {
                quote = None;
                words.push(std::mem::take(&mut cur));
            }
        } else if is_space(ch) {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        } else if cur.is_empty() && (ch == '"' || ch == '\'') {
            quote = Some(ch);
            cur.push(ch);
        } else {
            cur.push(ch);
        }
    }
    if quote.is_some() {
        return None;
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    Some(words)
}

pub(super) fn cmdline() -> Facts {
    let Some(data) = file_content("/proc/cmdline").filter(|d| !d.is_empty()) else {
        return Facts::new();
    };
    parse_cmdline(&data)
}

/// The `cmdline` (last value wins) and `proc_cmdline` (repeated keys collect a list) facts.
pub(crate) fn parse_cmdline(data: &str) -> Facts {
    let words = split_non_posix(data).unwrap_or_default();
    let mut plain = Map::new();
    let mut multi = Map::new();
    for w in &words {
        match w.split_once('=') {
            None => {
                plain.insert(w.clone(), json!(true));
                multi.insert(w.clone(), json!(true));
            }
            Some((k, v)) => {
                plain.insert(k.to_string(), json!(v));
                match multi.get_mut(k) {
                    Some(Value::Array(items)) => items.push(json!(v)),
                    Some(old) => {
                        let prev = old.take();
                        *old = json!([prev, v]);
                    }
                    None => {
                        multi.insert(k.to_string(), json!(v));
                    }
                }
            }
        }
    }
    facts(vec![("cmdline", Value::Object(plain)), ("proc_cmdline", Value::Object(multi))])
}

unsafe extern "C" {
    fn tzset();
    static tzname: [*const libc::c_char; 2];
}

fn strftime(fmt: &CStr, tm: &libc::tm) -> String {
    let mut buf = [0 as libc::c_char; 256];
    // SAFETY: the buffer's length is passed; strftime NUL-terminates what it writes.
    let n = unsafe { libc::strftime(buf.as_mut_ptr(), buf.len(), fmt.as_ptr(), tm) };
    let bytes: Vec<u8> = buf[..n].iter().map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(super) fn date_time() -> Facts {
    let now =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    // On musl, libc marks `time_t` deprecated ahead of its change to 64 bits; the seconds
    // since 1970 fit either width.
    #[allow(deprecated)]
    let secs = now.as_secs() as libc::time_t;
    let micros = now.subsec_micros();
    // SAFETY: tzset reads TZ; localtime_r/gmtime_r fill the zeroed tm structs given.
    let (local, utc, tzname1) = unsafe {
        tzset();
        let mut l: libc::tm = std::mem::zeroed();
        let mut u: libc::tm = std::mem::zeroed();
        libc::localtime_r(&secs, &mut l);
        libc::gmtime_r(&secs, &mut u);
        let dst = if tzname[1].is_null() {
            String::new()
        } else {
            CStr::from_ptr(tzname[1]).to_string_lossy().into_owned()
        };
        (l, u, dst)
    };
    let lf = |f: &CStr| strftime(f, &local);
    let mut d = Map::new();
    let mut put = |k: &str, v: String| {
        d.insert(k.to_string(), json!(v));
    };
    put("year", lf(c"%Y"));
    put("month", lf(c"%m"));
    put("weekday", lf(c"%A"));
    put("weekday_number", lf(c"%w"));
    put("weeknumber", lf(c"%W"));
    put("day", lf(c"%d"));
    put("hour", lf(c"%H"));
    put("minute", lf(c"%M"));
    put("second", lf(c"%S"));
    put("epoch", secs.to_string());
    put("epoch_int", secs.to_string());
    put("date", lf(c"%Y-%m-%d"));
    put("time", lf(c"%H:%M:%S"));
    put("iso8601_micro", format!("{}.{micros:06}Z", strftime(c"%Y-%m-%dT%H:%M:%S", &utc)));
    put("iso8601", strftime(c"%Y-%m-%dT%H:%M:%SZ", &utc));
    put("iso8601_basic", format!("{}{micros:06}", lf(c"%Y%m%dT%H%M%S")));
    put("iso8601_basic_short", lf(c"%Y%m%dT%H%M%S"));
    put("tz", lf(c"%Z"));
    put("tz_dst", tzname1);
    put("tz_offset", lf(c"%z"));
    facts(vec![("date_time", Value::Object(d))])
}

pub(super) fn env() -> Facts {
    // The module's process environment: the agent's, with the task's over it.
    let mut env: Map<String, Value> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), json!(v.to_string_lossy().into_owned())))
        .collect();
    for (k, v) in crate::modules::environment::current() {
        env.insert(k, json!(v));
    }
    facts(vec![("env", Value::Object(env))])
}

pub(super) fn loadavg() -> Facts {
    let mut avg = [0f64; 3];
    // SAFETY: the array holds the three values asked for.
    let n = unsafe { libc::getloadavg(avg.as_mut_ptr(), 3) };
    if n != 3 {
        return Facts::new();
    }
    facts(vec![("loadavg", json!({"1m": avg[0], "5m": avg[1], "15m": avg[2]}))])
}

pub(super) fn ssh_pub_keys() -> Facts {
    let mut f = Facts::new();
    for dir in ["/etc/ssh", "/etc/openssh", "/etc"] {
        for algo in ["dsa", "rsa", "ecdsa", "ed25519"] {
            let name = format!("ssh_host_key_{algo}_public");
            if f.contains_key(&name) {
                return f;
            }
            if let Some(data) = file_content(&format!("{dir}/ssh_host_{algo}_key.pub")) {
                let mut parts = data.split_whitespace();
                if let (Some(kind), Some(key)) = (parts.next(), parts.next()) {
                    f.insert(name.clone(), json!(key));
                    f.insert(format!("{name}_keytype"), json!(kind));
                }
            }
        }
    }
    f
}

struct Passwd {
    name: String,
    uid: u32,
    gid: u32,
    gecos: String,
    dir: String,
    shell: String,
}

fn passwd(by_name: Option<&str>, uid: u32) -> Option<Passwd> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: pwd/buf outlive the call and their sizes are passed; on success the strings
    // in pwd point into buf, read before buf is dropped.
    unsafe {
        let mut pwd: libc::passwd = std::mem::zeroed();
        let mut res: *mut libc::passwd = std::ptr::null_mut();
        let rc = match by_name.map(CString::new) {
            Some(Ok(n)) => {
                libc::getpwnam_r(n.as_ptr(), &mut pwd, buf.as_mut_ptr(), buf.len(), &mut res)
            }
            Some(Err(_)) => return None,
            None => libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut res),
        };
        if rc != 0 || res.is_null() {
            return None;
        }
        let s = |p: *const libc::c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Some(Passwd {
            name: s(pwd.pw_name),
            uid: pwd.pw_uid,
            gid: pwd.pw_gid,
            gecos: s(pwd.pw_gecos),
            dir: s(pwd.pw_dir),
            shell: s(pwd.pw_shell),
        })
    }
}

pub(super) fn user() -> Facts {
    // SAFETY: these getters cannot fail.
    let (uid, euid, gid) = unsafe { (libc::getuid(), libc::geteuid(), libc::getgid()) };
    // Python's getpass.getuser(): the login variables first, then the password database.
    let login = ["LOGNAME", "USER", "LNAME", "USERNAME"]
        .iter()
        .find_map(|v| crate::modules::environment::var(v).filter(|s| !s.is_empty()))
        .or_else(|| passwd(None, uid).map(|p| p.name));
    let mut f = Facts::new();
    if let Some(l) = &login {
        f.insert("user_id".into(), json!(l));
    }
    let ent = login.as_deref().and_then(|l| passwd(Some(l), uid)).or_else(|| passwd(None, uid));
    if let Some(p) = ent {
        f.insert("user_uid".into(), json!(p.uid));
        f.insert("user_gid".into(), json!(p.gid));
        f.insert("user_gecos".into(), json!(p.gecos));
        f.insert("user_dir".into(), json!(p.dir));
        f.insert("user_shell".into(), json!(p.shell));
    }
    f.insert("real_user_id".into(), json!(uid));
    f.insert("effective_user_id".into(), json!(euid));
    f.insert("real_group_id".into(), json!(gid));
    // ansible reports the real group id here too.
    f.insert("effective_group_id".into(), json!(gid));
    f
}

pub(super) fn dns() -> Facts {
    parse_dns(&file_content("/etc/resolv.conf").unwrap_or_default())
}

/// resolv.conf's nameserver, domain, search, sortlist and options lines as ansible reads them.
pub(crate) fn parse_dns(content: &str) -> Facts {
    let mut d = Map::new();
    for line in content.lines() {
        if line.starts_with('#') || line.starts_with(';') || line.trim().is_empty() {
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let list = |t: &[&str]| Value::Array(t.iter().map(|s| json!(s)).collect());
        match tokens[0] {
            "nameserver" => {
                let e = d.entry("nameservers").or_insert_with(|| json!([]));
                if let Value::Array(a) = e {
                    a.extend(tokens[1..].iter().map(|s| json!(s)));
                }
            }
            "domain" if tokens.len() > 1 => {
                d.insert("domain".into(), json!(tokens[1]));
            }
            "search" => {
                d.insert("search".into(), list(&tokens[1..]));
            }
            "sortlist" => {
                d.insert("sortlist".into(), list(&tokens[1..]));
            }
            "options" => {
                let mut o = Map::new();
                for opt in &tokens[1..] {
                    match opt.split_once(':') {
                        Some((k, v)) if !v.is_empty() => o.insert(k.into(), json!(v)),
                        Some((k, _)) => o.insert(k.into(), json!(true)),
                        None => o.insert((*opt).into(), json!(true)),
                    };
                }
                d.insert("options".into(), Value::Object(o));
            }
            _ => {}
        }
    }
    facts(vec![("dns", Value::Object(d))])
}

/// ansible's facter and ohai collectors run those programs when installed; tack does not.
pub(super) fn facter_ohai(name: &str) -> Result<Facts, ArgError> {
    let found = match name {
        "facter" => bin_path("facter").or_else(|| bin_path("cfacter")),
        _ => bin_path("ohai"),
    };
    match found {
        None => Ok(Facts::new()),
        Some(p) => Err(ArgError::Refused(format!(
            "tack's setup does not gather {name} facts ({} is installed); exclude them with gather_subset: ['!{name}']",
            p.display()
        ))),
    }
}
