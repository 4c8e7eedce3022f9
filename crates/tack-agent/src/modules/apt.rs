//! `ansible.builtin.apt` on Debian: installs, upgrades and removes packages (by name,
//! `name=version`, `name>=version` or an fnmatch pattern of names) with `apt-get`, refreshes
//! the package lists, removes unused dependencies, in check mode through `apt-get
//! --simulate`. What ansible learns from python-apt (candidates, installed versions, who
//! provides a virtual package) is asked of apt's own tools in `apt_cache.rs`. Changes nothing
//! but through `apt-get`, `apt-mark` and the package lists.
//!
//! `policy_rc_d` is ansible's: while each `apt-get` operation runs, `/usr/sbin/policy-rc.d`
//! exits with that code (one already there moved aside and put back after), in check mode
//! too, as ansible's module does around its `--simulate` run.
//!
//! Refused by name, before anything runs: `deb`, `upgrade` (other than `no`), `clean`,
//! `autoclean`, `state: build-dep` and `state: fixed`, and `name: '*'` with `state: latest`
//! (a whole-system upgrade). The controller sends those to ansible's own module instead
//! when it has ansible-core (`tack_actions`' `module.rs`), so this refusal is what a run
//! without it sees.

use serde_json::{Value, json};

use super::apt_cache::{self, Runner};
use super::argspec::{Elem, Kind, Opt, Params, Spec};
use super::common::{fail, shlex_split, warn};
use super::glob::fnmatch;
use super::{Ctx, Invocation, ModuleResult, group};

const DPKG_OPTIONS: &str = "force-confdef,force-confold";

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("state", Kind::Str).default("present").choices(&[
                "absent",
                "build-dep",
                "fixed",
                "latest",
                "present",
            ]),
            Opt::new("update_cache", Kind::Bool).aliases(&["update-cache"]),
            Opt::new("update_cache_retries", Kind::Int).default(5),
            Opt::new("update_cache_retry_max_delay", Kind::Int).default(12),
            Opt::new("cache_valid_time", Kind::Int).default(0),
            Opt::new("purge", Kind::Bool).default(false),
            Opt::new("package", Kind::List(Some(Elem::Str))).aliases(&["pkg", "name"]),
            Opt::new("deb", Kind::Path),
            Opt::new("default_release", Kind::Str).aliases(&["default-release"]),
            Opt::new("install_recommends", Kind::Bool).aliases(&["install-recommends"]),
            Opt::new("force", Kind::Bool).default(false),
            Opt::new("upgrade", Kind::Str)
                .choices(&["dist", "full", "no", "safe", "yes"])
                .default("no"),
            Opt::new("dpkg_options", Kind::Str).default(DPKG_OPTIONS),
            Opt::new("autoremove", Kind::Bool).default(false),
            Opt::new("autoclean", Kind::Bool).default(false),
            Opt::new("fail_on_autoremove", Kind::Bool).default(false),
            Opt::new("policy_rc_d", Kind::Int),
            Opt::new("only_upgrade", Kind::Bool).default(false),
            Opt::new("force_apt_get", Kind::Bool).default(false),
            Opt::new("clean", Kind::Bool).default(false),
            Opt::new("allow_unauthenticated", Kind::Bool)
                .default(false)
                .aliases(&["allow-unauthenticated"]),
            Opt::new("allow_downgrade", Kind::Bool).default(false).aliases(&[
                "allow-downgrade",
                "allow_downgrades",
                "allow-downgrades",
            ]),
            Opt::new("allow_change_held_packages", Kind::Bool).default(false),
            Opt::new("lock_timeout", Kind::Int).default(60),
            Opt::new("auto_install_module_deps", Kind::Bool).default(true),
        ],
        mutually_exclusive: &[&["deb", "package", "upgrade"]],
        required_one_of: &[&["autoremove", "deb", "package", "update_cache", "upgrade"]],
        ..Spec::default()
    }
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    if let Some(refusal) = refused(&p) {
        return fail(refusal);
    }
    let policy_rc_d = p.get("policy_rc_d").as_i64();
    let mut apt = Apt { ctx, runner: Runner::new(), warnings: Vec::new(), policy_rc_d };
    let mut r = match apt.main(&p) {
        Ok(r) | Err(r) => r,
    };
    for w in &apt.warnings {
        warn(&mut r, w);
    }
    r
}

/// Whether the task's arguments (as given, before validation) ask what [`refused`] refuses:
/// the controller sends such a task to ansible's own module instead, where it can.
pub(super) fn asks_beyond_native(args: &serde_json::Map<String, Value>) -> bool {
    let arg = |key: &str| args.get(key).filter(|v| !v.is_null());
    let text = |key: &str| arg(key).map(|v| super::pyfmt::py_str(v).to_lowercase());
    // Its choices are `dist`, `full`, `safe`, `yes` and `no`; a boolean is `yes` or `no`.
    let upgrade = arg("upgrade").is_some_and(|v| match v {
        Value::Bool(b) => *b,
        other => super::pyfmt::py_str(other).to_lowercase() != "no",
    });
    let flag = |key: &str| {
        arg(key)
            .is_some_and(|v| tack_py::boolean::strict(super::pyfmt::boolean_input(v)) == Some(true))
    };
    let state = text("state");
    let names: Vec<String> = ["name", "package", "pkg"]
        .iter()
        .filter_map(|key| arg(key))
        .flat_map(|v| match v {
            Value::Array(items) => items.iter().map(super::pyfmt::py_str).collect::<Vec<_>>(),
            other => super::pyfmt::py_str(other).split(',').map(str::to_string).collect(),
        })
        .collect();
    arg("deb").is_some()
        || upgrade
        || flag("clean")
        || flag("autoclean")
        || matches!(state.as_deref(), Some("build-dep" | "fixed"))
        || state.as_deref() == Some("latest") && names.iter().any(|n| n.trim() == "*")
}

/// What tack does not do of ansible's apt module: named, never silently skipped.
fn refused(p: &Params) -> Option<String> {
    let what = if p.is_set("deb") {
        "the option 'deb' (installing a .deb file)"
    } else if p.str("upgrade").is_some_and(|u| u != "no") {
        "the option 'upgrade' (a whole-system upgrade)"
    } else if p.bool("clean") {
        "the option 'clean'"
    } else if p.bool("autoclean") {
        "the option 'autoclean'"
    } else if matches!(p.str("state"), Some("build-dep" | "fixed")) {
        if p.str("state") == Some("fixed") { "state 'fixed'" } else { "state 'build-dep'" }
    } else {
        let names = p.get("package").as_array().cloned().unwrap_or_default();
        if p.str("state") == Some("latest")
            && names.iter().any(|n| n == "*")
            && names.iter().all(|n| n == "*")
        {
            "name '*' with state 'latest' (a whole-system upgrade)"
        } else {
            return None;
        }
    };
    Some(format!("apt: tack does not support {what} yet"))
}

/// `package_split`: `name`, then `=`/`>=` and the version when given.
fn package_split(spec: &str) -> (String, Option<&'static str>, Option<String>) {
    if let Some(i) = spec.find('=') {
        let (name, cmp) =
            if spec[..i].ends_with('>') { (&spec[..i - 1], ">=") } else { (&spec[..i], "=") };
        return (name.to_string(), Some(cmp), Some(spec[i + 1..].to_string()));
    }
    (spec.to_string(), None, None)
}

/// `expand_dpkg_options`.
fn expand_dpkg_options(compressed: &str) -> String {
    compressed
        .split(',')
        .map(|o| format!("-o \"Dpkg::Options::=--{o}\""))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `parse_diff`: apt-get's output from after `Reading state information...` through its
/// `N upgraded` line.
fn parse_diff(out: &str) -> Value {
    let lines = tack_py::text::splitlines(out);
    let start = lines
        .iter()
        .position(|l| *l == "Resolving dependencies...")
        .or_else(|| lines.iter().position(|l| *l == "Reading state information..."))
        .map_or(0, |i| i + 1);
    let upgraded = |l: &str| {
        let digits = l.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && {
            let rest = &l[digits..];
            rest.starts_with(" upgraded") || rest.starts_with(" packages upgraded")
        }
    };
    let end = lines.iter().position(|l| upgraded(l)).map_or(lines.len() + 1, |i| i + 1);
    let end = end.min(lines.len());
    let start = start.min(end);
    json!({"prepared": lines[start..end].join("\n")})
}

/// `package_status`: (installed, installed version matches, version to install, has files);
/// the version to install is `Some(None)` where apt must decide (a virtual package).
struct Status {
    installed: bool,
    version_ok: bool,
    installable: Option<Option<String>>,
    has_files: bool,
}

struct Apt<'a> {
    ctx: Ctx<'a>,
    runner: Runner,
    warnings: Vec<String>,
    /// `policy_rc_d`: the exit code `/usr/sbin/policy-rc.d` gives while `apt-get` runs.
    policy_rc_d: Option<i64>,
}

type Outcome = Result<ModuleResult, ModuleResult>;

impl Apt<'_> {
    fn main(&mut self, p: &Params) -> Outcome {
        let apt_get = group::bin_path("apt-get")?;
        let lock_timeout = p.get("lock_timeout").as_i64().unwrap_or(60);
        let dpkg_options = format!(
            "{} -o DPkg::Lock::Timeout={lock_timeout}",
            expand_dpkg_options(p.str("dpkg_options").unwrap_or(DPKG_OPTIONS))
        );
        if !std::path::Path::new(apt_cache::LISTS).is_dir() {
            let (rc, out, err) = self.recreate_cache()?;
            if rc != 0 {
                let mut r = ModuleResult::new();
                r.insert("rc".into(), rc.into());
                return Err(super::common::failed(
                    r,
                    format!("Failed to recreate the cache: {out}{err}"),
                ));
            }
        }
        let names: Option<Vec<String>> = p.get("package").as_array().map(|items| {
            items.iter().map(|v| v.as_str().unwrap_or_default().to_string()).collect()
        });
        let has_names = names.as_ref().is_some_and(|n| !n.is_empty());
        let (mtime, mut cache_time) = apt_cache::cache_time();
        let mut updated = false;
        let valid_time = p.get("cache_valid_time").as_i64().unwrap_or(0);
        if p.bool("update_cache") || valid_time != 0 {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs_f64())
                .unwrap_or(0.0);
            if mtime + (valid_time as f64) < now {
                self.update_cache(p)?;
                let before = cache_time;
                cache_time = apt_cache::cache_time().1;
                updated = self.ctx.check_mode || before != cache_time;
            }
            if !has_names {
                let mut r = ModuleResult::new();
                r.insert("changed".into(), updated.into());
                r.insert("cache_updated".into(), updated.into());
                r.insert("cache_update_time".into(), cache_time.into());
                return Ok(r);
            }
        }
        let all = names.unwrap_or_default();
        let packages: Vec<String> =
            all.iter().filter(|n| *n != "*").map(|n| n.trim().to_string()).collect();
        let state = p.str("state").unwrap_or("present");
        if state == "latest" && all.iter().any(|n| n == "*") && !packages.is_empty() {
            return Err(fail(
                "unable to install additional packages when upgrading all installed packages",
            ));
        }
        if let Some(bad) = packages.iter().find(|n| n.matches('=').count() > 1) {
            return Err(fail(format!("invalid package spec: {bad}")));
        }
        if packages.is_empty() && p.bool("autoremove") {
            return self.autoremove(p, &apt_get, &dpkg_options);
        }
        if state == "absent" {
            return self.remove(p, &packages, &apt_get, &dpkg_options);
        }
        let with_cache = |mut r: ModuleResult| {
            r.insert("cache_updated".into(), updated.into());
            r.insert("cache_update_time".into(), cache_time.into());
            r
        };
        match self.install(p, &packages, state == "latest", &apt_get, &dpkg_options)? {
            Ok(r) => Ok(with_cache(r)),
            Err(r) => {
                let msg = r.get("msg").cloned().unwrap_or_default();
                let mut r = with_cache(r);
                r.shift_remove("msg");
                r.insert("failed".into(), true.into());
                r.insert("msg".into(), msg);
                Err(r)
            }
        }
    }

    /// `recreate_cache`: `apt-get update -q`, tried twice.
    fn recreate_cache(&self) -> Result<(i32, String, String), ModuleResult> {
        let argv: Vec<String> = ["apt-get", "update", "-q"].iter().map(|s| s.to_string()).collect();
        let mut last = (0, String::new(), String::new());
        for _ in 0..2 {
            last = self.runner.run(&argv)?;
            if last.0 == 0 {
                break;
            }
        }
        Ok(last)
    }

    /// The cache update with ansible's retries and backoff (`apt-get update` stands for
    /// python-apt's `cache.update()`); check mode fetches nothing.
    fn update_cache(&mut self, p: &Params) -> Result<(), ModuleResult> {
        let retries = p.get("update_cache_retries").as_i64().unwrap_or(5);
        let max_delay = p.get("update_cache_retry_max_delay").as_i64().unwrap_or(12) as f64;
        let randomize = f64::from(std::process::id() % 1000) / 1000.0;
        let argv: Vec<String> = ["apt-get", "update", "-q"].iter().map(|s| s.to_string()).collect();
        let mut err = String::new();
        for retry in 0..retries.max(0) {
            if self.ctx.check_mode {
                return Ok(());
            }
            let (rc, _, stderr) = self.runner.run(&argv)?;
            if rc == 0 {
                return Ok(());
            }
            err = stderr.trim().to_string();
            self.warnings.push(format!(
                "Failed to update cache after {} retries due to {err}, retrying",
                retry + 1
            ));
            let mut delay = 2f64.powi(retry as i32) + randomize;
            if delay > max_delay {
                delay = max_delay + randomize;
            }
            std::thread::sleep(std::time::Duration::from_secs_f64(delay));
            self.warnings.push(format!(
                "Sleeping for {} seconds, before attempting to refresh the cache again",
                delay.round() as i64
            ));
        }
        let reason = if err.is_empty() { "unknown reason".to_string() } else { err };
        Err(fail(format!("Failed to update apt cache after {retries} retries: {reason}")))
    }

    /// `expand_pkgspec_from_fnmatches`: each pattern with `*?[]!` in its name replaced by the
    /// sorted names it matches (native packages only, unless it names an architecture).
    fn expand(&self, specs: &[String]) -> Result<Vec<String>, ModuleResult> {
        let mut out = Vec::new();
        let mut names: Option<Vec<String>> = None;
        for spec in specs {
            let (pattern, _, _) = package_split(spec);
            if !pattern.contains(['*', '?', '[', ']', '!']) {
                out.push(spec.clone());
                continue;
            }
            if names.is_none() {
                names = Some(apt_cache::package_names(&self.runner)?);
            }
            let all = names.as_deref().unwrap_or_default();
            let matches: Vec<String> = all
                .iter()
                .filter(|n| pattern.contains(':') || !n.contains(':'))
                .filter(|n| fnmatch(n, &pattern))
                .cloned()
                .collect();
            if matches.is_empty() {
                return Err(fail(format!("No package(s) matching '{pattern}' available")));
            }
            out.extend(matches);
        }
        Ok(out)
    }

    fn status(
        &self,
        name: &str,
        cmp: Option<&str>,
        version: Option<&str>,
        release: Option<&str>,
        installing: bool,
    ) -> Result<Status, ModuleResult> {
        let names = vec![name.to_string()];
        let policies = apt_cache::policies(&self.runner, &names, release)?;
        let policy = policies.get(name).filter(|p| !p.versions.is_empty());
        let Some(policy) = policy else {
            if !installing {
                return Ok(Status {
                    installed: false,
                    version_ok: false,
                    installable: None,
                    has_files: false,
                });
            }
            let providers = apt_cache::providers(&self.runner, name)?;
            if providers.is_empty() {
                return Err(fail(format!("No package matching '{name}' is available")));
            }
            if providers.len() == 1 {
                let s = self.status(&providers[0], cmp, version, release, true)?;
                if s.installed {
                    return Ok(s);
                }
            }
            return Ok(Status {
                installed: false,
                version_ok: false,
                installable: Some(None),
                has_files: false,
            });
        };
        let dpkg = apt_cache::installed(&self.runner, &names)?;
        let mine = dpkg.get(name.split(':').next().unwrap_or(name)).filter(|i| i.installed);
        let best = self.best_match(policy, cmp, version)?;
        let has_files = apt_cache::has_files(name);
        let Some(current) = mine else {
            return Ok(Status {
                installed: false,
                version_ok: false,
                installable: best.map(Some),
                has_files,
            });
        };
        let version_ok = match (cmp, version) {
            (Some("="), Some(v)) => fnmatch(&current.version, v),
            (Some(_), Some(v)) => apt_cache::version_at_least(&self.runner, &current.version, v)?,
            _ => true,
        };
        let installable = best.filter(|b| *b != current.version).map(Some);
        Ok(Status { installed: true, version_ok, installable, has_files })
    }

    /// `package_best_match`: the candidate, where an exact (or wildcard) version pins the
    /// newest version it matches above everything else.
    fn best_match(
        &self,
        policy: &apt_cache::Policy,
        cmp: Option<&str>,
        version: Option<&str>,
    ) -> Result<Option<String>, ModuleResult> {
        match (cmp, version) {
            (Some("="), Some(v)) => {
                Ok(policy.versions.iter().find(|cand| fnmatch(cand, v)).cloned())
            }
            (Some(_), Some(v)) => match &policy.candidate {
                Some(c) if apt_cache::version_at_least(&self.runner, c, v)? => Ok(Some(c.clone())),
                _ => Ok(None),
            },
            _ => Ok(policy.candidate.clone()),
        }
    }

    /// `install`: the outer `Err` ends the module as it is; the inner one is a failure the
    /// caller adds the cache keys to.
    fn install(
        &mut self,
        p: &Params,
        specs: &[String],
        upgrade: bool,
        apt_get: &str,
        dpkg_options: &str,
    ) -> Result<Outcome, ModuleResult> {
        let specs = self.expand(specs)?;
        let release = p.str("default_release");
        let only_upgrade = p.bool("only_upgrade");
        let mut list = Vec::new();
        let mut names = Vec::new();
        for spec in &specs {
            let (name, cmp, version) = package_split(spec);
            names.push(name.clone());
            let s = self.status(&name, cmp, version.as_deref(), release, true)?;
            if !s.installed && only_upgrade {
                continue;
            }
            if !s.version_ok && s.installable.is_none() {
                let mut r = ModuleResult::new();
                r.insert(
                    "msg".into(),
                    format!("no available installation candidate for {spec}").into(),
                );
                return Ok(Err(r));
            }
            match &s.installable {
                Some(v) if (!s.installed && !only_upgrade) || upgrade || !s.version_ok => {
                    match (v, &version) {
                        (Some(v), _) => list.push(format!("'{name}={v}'")),
                        (None, Some(want)) => list.push(format!("'{name}={want}'")),
                        (None, None) => list.push(format!("'{name}'")),
                    }
                }
                Some(_) if s.version_ok && cmp == Some("=") => {
                    list.push(format!("'{name}={}'", version.as_deref().unwrap_or_default()));
                }
                _ => {}
            }
        }
        let packages = list.join(" ");
        let result = if packages.is_empty() {
            let mut r = ModuleResult::new();
            r.insert("changed".into(), false.into());
            Ok(r)
        } else {
            let flag = |on: bool, text: &'static str| if on { text } else { "" };
            let mut cmd = format!(
                "{apt_get} -y {dpkg_options} {} {} {} {} {} {} install {packages}",
                flag(only_upgrade, "--only-upgrade"),
                "",
                flag(p.bool("force"), "--force-yes"),
                flag(p.bool("autoremove"), "--auto-remove"),
                flag(p.bool("fail_on_autoremove"), "--no-remove"),
                flag(self.ctx.check_mode, "--simulate"),
            );
            if let Some(r) = release {
                cmd.push_str(&format!(" -t '{r}'"));
            }
            match p.get("install_recommends").as_bool() {
                Some(false) => cmd.push_str(" -o APT::Install-Recommends=no"),
                Some(true) => cmd.push_str(" -o APT::Install-Recommends=yes"),
                None => {}
            }
            for (opt, text) in [
                ("allow_unauthenticated", " --allow-unauthenticated"),
                ("allow_downgrade", " --allow-downgrades"),
                ("allow_change_held_packages", " --allow-change-held-packages"),
            ] {
                if p.bool(opt) {
                    cmd.push_str(text);
                }
            }
            let (rc, out, err) = self.shell_words(&cmd)?;
            let mut r = ModuleResult::new();
            if rc != 0 {
                r.insert("msg".into(), format!("'{cmd}' failed: {err}").into());
                r.insert("stdout".into(), out.into());
                r.insert("stderr".into(), err.into());
                r.insert("rc".into(), rc.into());
                Err(r)
            } else {
                let diff = if self.ctx.diff { parse_diff(&out) } else { json!({}) };
                r.insert("changed".into(), true.into());
                r.insert("stdout".into(), out.into());
                r.insert("stderr".into(), err.into());
                r.insert("diff".into(), diff);
                Ok(r)
            }
        };
        if !self.ctx.check_mode {
            self.mark_manual(&names)?;
        }
        Ok(result)
    }

    /// `mark_installed(manual=True)`.
    fn mark_manual(&mut self, names: &[String]) -> Result<(), ModuleResult> {
        if names.is_empty() {
            return Ok(());
        }
        let Ok(apt_mark) = group::bin_path("apt-mark") else {
            self.warnings.push(
                "Could not find apt-mark binary, not marking package(s) as manually installed."
                    .into(),
            );
            return Ok(());
        };
        let mut argv = vec![apt_mark, "manual".to_string()];
        argv.extend(names.iter().cloned());
        let (rc, out, err) = self.runner.run(&argv)?;
        if rc != 0 {
            let joined: Vec<String> = argv.iter().map(|a| tack_py::shlex::quote(a)).collect();
            let mut r = ModuleResult::new();
            r.insert("stdout".into(), out.into());
            r.insert("stderr".into(), err.into());
            r.insert("rc".into(), rc.into());
            let shown = super::pyfmt::py_repr(&Value::from(joined.join(" ")));
            return Err(super::common::failed(r, format!("Command {shown} failed.")));
        }
        Ok(())
    }

    fn remove(
        &mut self,
        p: &Params,
        specs: &[String],
        apt_get: &str,
        dpkg_options: &str,
    ) -> Outcome {
        let specs = self.expand(specs)?;
        let purge = p.bool("purge");
        let mut list = Vec::new();
        for spec in &specs {
            let (name, cmp, version) = package_split(spec);
            let s = self.status(&name, cmp, version.as_deref(), None, false)?;
            if (s.installed && s.version_ok) || (s.has_files && purge) {
                list.push(format!("'{spec}'"));
            }
        }
        let packages = list.join(" ");
        let mut r = ModuleResult::new();
        if packages.is_empty() {
            r.insert("changed".into(), false.into());
            return Ok(r);
        }
        let flag = |on: bool, text: &'static str| if on { text } else { "" };
        let cmd = format!(
            "{apt_get} -q -y {dpkg_options} {} {} {} {} {} remove {packages}",
            flag(purge, "--purge"),
            flag(p.bool("force"), "--force-yes"),
            flag(p.bool("autoremove"), "--auto-remove"),
            flag(self.ctx.check_mode, "--simulate"),
            flag(p.bool("allow_change_held_packages"), "--allow-change-held-packages"),
        );
        let (rc, out, err) = self.shell_words(&cmd)?;
        let diff = if self.ctx.diff { parse_diff(&out) } else { json!({}) };
        if rc != 0 {
            r.insert("stdout".into(), out.into());
            r.insert("stderr".into(), err.clone().into());
            r.insert("rc".into(), rc.into());
            return Err(super::common::failed(
                r,
                format!("'apt-get remove {packages}' failed: {err}"),
            ));
        }
        r.insert("changed".into(), true.into());
        r.insert("stdout".into(), out.into());
        r.insert("stderr".into(), err.into());
        r.insert("diff".into(), diff);
        Ok(r)
    }

    /// `cleanup(operation='autoremove')`.
    fn autoremove(&mut self, p: &Params, apt_get: &str, dpkg_options: &str) -> Outcome {
        let flag = |on: bool, text: &'static str| if on { text } else { "" };
        let cmd = format!(
            "{apt_get} -y {dpkg_options} {} {} autoremove {}",
            flag(p.bool("purge"), "--purge"),
            flag(p.bool("force"), "--force-yes"),
            flag(self.ctx.check_mode, "--simulate"),
        );
        let (rc, out, err) = self.shell_words(&cmd)?;
        let diff = if self.ctx.diff { parse_diff(&out) } else { json!({}) };
        let mut r = ModuleResult::new();
        if rc != 0 {
            r.insert("stdout".into(), out.into());
            r.insert("stderr".into(), err.clone().into());
            r.insert("rc".into(), rc.into());
            return Err(super::common::failed(r, format!("'apt-get autoremove' failed: {err}")));
        }
        let changed = out.contains("The following packages will be REMOVED");
        r.insert("changed".into(), changed.into());
        r.insert("stdout".into(), out.into());
        r.insert("stderr".into(), err.into());
        r.insert("diff".into(), diff);
        Ok(r)
    }

    /// `run_command(cmd)` of an `apt-get` operation written as one string (split as `shlex`
    /// splits it), under `policy_rc_d` when set (`PolicyRcD`).
    fn shell_words(&self, cmd: &str) -> Result<(i32, String, String), ModuleResult> {
        let argv = shlex_split(cmd)
            .ok_or_else(|| fail("apt: tack could not split the apt-get command as shlex would"))?;
        match self.policy_rc_d {
            None => self.runner.run(&argv),
            Some(code) => policy_rc_d(code, || self.runner.run(&argv))?,
        }
    }
}

/// Where dpkg's maintainer scripts ask whether a service may start.
const POLICY_RC_D: &str = "/usr/sbin/policy-rc.d";

/// ansible's `PolicyRcD`: `run` with `/usr/sbin/policy-rc.d` exiting `code`, the file there
/// before moved to a private directory and back after (or the one written removed); its
/// failures in ansible's words.
fn policy_rc_d<T>(code: i64, run: impl FnOnce() -> T) -> Result<T, ModuleResult> {
    policy_rc_d_at(std::path::Path::new(POLICY_RC_D), code, run)
}

fn policy_rc_d_at<T>(
    path: &std::path::Path,
    code: i64,
    run: impl FnOnce() -> T,
) -> Result<T, ModuleResult> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let backup = if path.exists() {
        let base = super::environment::temp_dir();
        let dir = (0..100)
            .map(|_| base.join(format!("ansible{}", super::tempname::random_part())))
            .find(|dir| std::fs::DirBuilder::new().mode(0o700).create(dir).is_ok())
            .ok_or_else(|| fail(format!("Fail to move {POLICY_RC_D} to {}", base.display())))?;
        let kept = dir.join("policy-rc.d");
        move_file(path, &kept)
            .map_err(|_| fail(format!("Fail to move {POLICY_RC_D} to {}", dir.display())))?;
        Some((dir, kept))
    } else {
        None
    };
    std::fs::write(path, format!("#!/bin/sh\nexit {code}\n"))
        .and_then(|()| std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)))
        .map_err(|_| fail(format!("Failed to create or chmod {POLICY_RC_D}")))?;
    let out = run();
    match backup {
        Some((dir, kept)) => {
            move_file(&kept, path).and_then(|()| std::fs::remove_dir(&dir)).map_err(|_| {
                fail(format!("Fail to move back {} to {POLICY_RC_D}", kept.display()))
            })?;
        }
        None => std::fs::remove_file(path).map_err(|_| {
            fail(format!("Fail to remove {POLICY_RC_D} (after package manipulation)"))
        })?,
    }
    Ok(out)
}

/// `shutil.move`: a rename, else (another file system) a copy and a removal.
fn move_file(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    match std::fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            std::fs::copy(from, to)?;
            std::fs::remove_file(from)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_specs_split_at_the_first_comparison() {
        assert_eq!(package_split("sl"), ("sl".into(), None, None));
        assert_eq!(package_split("sl=5*"), ("sl".into(), Some("="), Some("5*".into())));
        assert_eq!(package_split("sl>=5"), ("sl".into(), Some(">="), Some("5".into())));
    }

    /// What tack does not do is refused by name before apt-get (or anything else) runs.
    #[test]
    fn unsupported_options_are_refused_by_name() {
        let cases = [
            (json!({"deb": "/tmp/x.deb"}), "'deb'"),
            (json!({"upgrade": "dist"}), "'upgrade'"),
            (json!({"name": "sl", "clean": true}), "'clean'"),
            (json!({"autoclean": true}), "'autoclean'"),
            (json!({"name": "sl", "state": "fixed"}), "state 'fixed'"),
            (json!({"name": "sl", "state": "build-dep"}), "state 'build-dep'"),
            (json!({"name": "*", "state": "latest"}), "name '*'"),
        ];
        for (args, needle) in cases {
            let inv = crate::modules::Invocation {
                args: args.as_object().cloned().unwrap_or_default(),
                ..crate::modules::Invocation::default()
            };
            assert!(super::asks_beyond_native(&inv.args), "{args}");
            let r = crate::modules::run_module("apt", &inv).unwrap();
            assert_eq!(r["failed"], json!(true), "{args}");
            let msg = r["msg"].as_str().unwrap_or_default();
            assert!(msg.starts_with("apt: tack does not support") && msg.contains(needle), "{msg}");
        }
    }

    #[test]
    fn policy_rc_d_exits_with_the_code_while_apt_runs_and_is_put_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("policy-rc.d");
        let read = || std::fs::read_to_string(&path).ok();
        let during = policy_rc_d_at(&path, 101, read).expect("ran");
        assert_eq!(during.as_deref(), Some("#!/bin/sh\nexit 101\n"));
        assert!(!path.exists(), "the file it wrote stays");
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("own");
        let during = policy_rc_d_at(&path, 104, read).expect("ran");
        assert_eq!(during.as_deref(), Some("#!/bin/sh\nexit 104\n"));
        assert_eq!(read().as_deref(), Some("#!/bin/sh\nexit 0\n"));
    }

    #[test]
    fn diff_is_the_part_between_the_markers() {
        let out = "Reading package lists...\nReading state information...\nThe following NEW packages will be installed:\n  sl\n0 upgraded, 1 newly installed, 0 to remove and 0 not upgraded.\nInst sl\n";
        assert_eq!(
            parse_diff(out)["prepared"],
            "The following NEW packages will be installed:\n  sl\n0 upgraded, 1 newly installed, 0 to remove and 0 not upgraded."
        );
    }
}
