//! What ansible's `apt` module asks python-apt, answered by apt's and dpkg's own command-line
//! tools: `apt-cache policy` (a package's candidate under the pins, and its version table),
//! `apt-cache showpkg` (who provides a virtual package), `apt-cache pkgnames` (the names a
//! wildcard matches), `dpkg-query` (what is installed), `dpkg --compare-versions`, and the
//! mtime of the package lists. Also the `run_command` the module runs every command through,
//! with apt's environment. Reads only: nothing here changes the host.

use std::collections::HashMap;
use std::path::Path;

use super::ModuleResult;

/// `APT_LISTS_PATH`: the package lists, whose mtime is the cache's age when there is no stamp.
pub(super) const LISTS: &str = "/var/lib/apt/lists";
/// `APT_UPDATE_SUCCESS_STAMP_PATH`.
const STAMP: &str = "/var/lib/apt/periodic/update-success-stamp";

/// `run_command` with `run_command_environ_update` set to apt's variables.
pub(super) struct Runner {
    env: Vec<(&'static str, String)>,
}

impl Runner {
    /// apt's environment: no prompts, and the best parsable locale everywhere, since the
    /// module reads apt-get's output.
    pub(super) fn new() -> Runner {
        let locale = super::common::best_parsable_locale();
        let mut env = vec![
            ("DEBIAN_FRONTEND", "noninteractive".to_string()),
            ("DEBIAN_PRIORITY", "critical".to_string()),
        ];
        for key in ["LANG", "LC_ALL", "LC_MESSAGES", "LC_CTYPE", "LANGUAGE"] {
            env.push((key, locale.clone()));
        }
        Runner { env }
    }

    /// Runs `argv`: (rc, stdout, stderr), or the failure ansible reports when the program
    /// cannot be started.
    pub(super) fn run(&self, argv: &[String]) -> Result<(i32, String, String), ModuleResult> {
        let Some((program, args)) = argv.split_first() else {
            return Ok((0, String::new(), String::new()));
        };
        let mut cmd = super::environment::command(program);
        cmd.args(args);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        super::common::command_output(&mut cmd, argv)
    }

    fn output(&self, argv: &[&str]) -> Result<(i32, String, String), ModuleResult> {
        let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
        self.run(&argv)
    }
}

/// One package as `apt-cache policy` shows it.
#[derive(Debug, Clone, Default)]
pub(super) struct Policy {
    /// The candidate under the pins (and `-t`), if any.
    pub candidate: Option<String>,
    /// Every version apt knows, newest first.
    pub versions: Vec<String>,
}

/// `apt-cache policy NAME...` (with `APT::Default-Release` when given), by package name. A
/// name apt does not know at all is missing from the map; a purely virtual one has no
/// versions.
pub(super) fn policies(
    runner: &Runner,
    names: &[String],
    default_release: Option<&str>,
) -> Result<HashMap<String, Policy>, ModuleResult> {
    let mut argv = vec!["apt-cache".to_string()];
    if let Some(release) = default_release {
        argv.extend(["-o".to_string(), format!("APT::Default-Release={release}")]);
    }
    argv.push("policy".into());
    argv.extend(names.iter().cloned());
    let (_, out, _) = runner.run(&argv)?;
    let mut map = HashMap::new();
    let mut current: Option<(String, Policy)> = None;
    let mut in_table = false;
    for line in out.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            if let Some((n, p)) = current.take() {
                map.insert(n, p);
            }
            current = Some((line.trim_end_matches(':').to_string(), Policy::default()));
            in_table = false;
            continue;
        }
        let Some((_, policy)) = current.as_mut() else { continue };
        let trimmed = line.trim_start();
        if let Some(c) = trimmed.strip_prefix("Candidate:") {
            let c = c.trim();
            policy.candidate = (c != "(none)").then(|| c.to_string());
        } else if trimmed.starts_with("Version table:") {
            in_table = true;
        } else if in_table {
            // Version lines are indented five (or marked ` *** `); their sources, eight.
            let indent = line.len() - trimmed.len();
            let entry = trimmed.strip_prefix("*** ").unwrap_or(trimmed);
            if (indent <= 5 || trimmed.starts_with("***"))
                && let Some(v) = entry.split_whitespace().next()
            {
                policy.versions.push(v.to_string());
            }
        }
    }
    if let Some((n, p)) = current.take() {
        map.insert(n, p);
    }
    Ok(map)
}

/// What dpkg says of an installed (or once installed) package.
#[derive(Debug, Clone, Default)]
pub(super) struct Installed {
    /// `current_state == CURSTATE_INSTALLED`.
    pub installed: bool,
    pub version: String,
}

/// `dpkg-query -W` of `names`, by package name (names dpkg never heard of are missing).
pub(super) fn installed(
    runner: &Runner,
    names: &[String],
) -> Result<HashMap<String, Installed>, ModuleResult> {
    let mut argv: Vec<String> = ["dpkg-query", "-W", "-f", "${Package}\t${Status}\t${Version}\n"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    argv.extend(names.iter().cloned());
    let (_, out, _) = runner.run(&argv)?;
    let mut map = HashMap::new();
    for line in out.lines() {
        let mut fields = line.split('\t');
        let (Some(name), Some(status), version) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let state = status.split_whitespace().nth(2).unwrap_or_default();
        map.insert(
            name.to_string(),
            Installed {
                installed: state == "installed",
                version: version.unwrap_or_default().to_string(),
            },
        );
    }
    Ok(map)
}

/// `len(pkg.installed_files) > 0`: dpkg still lists files of the package (a removed but not
/// purged package keeps its conffiles).
pub(super) fn has_files(name: &str) -> bool {
    let base = name.split(':').next().unwrap_or(name);
    let mut candidates = vec![format!("/var/lib/dpkg/info/{name}.list")];
    if let Ok(entries) = std::fs::read_dir("/var/lib/dpkg/info") {
        for e in entries.flatten() {
            let file = e.file_name().to_string_lossy().into_owned();
            if file.starts_with(&format!("{base}:")) && file.ends_with(".list") {
                candidates.push(format!("/var/lib/dpkg/info/{file}"));
            }
        }
    }
    candidates
        .iter()
        .any(|p| std::fs::read(p).is_ok_and(|b| b.iter().any(|c| !c.is_ascii_whitespace())))
}

/// `cache.get_providing_packages(name)`: the packages whose versions provide `name`.
pub(super) fn providers(runner: &Runner, name: &str) -> Result<Vec<String>, ModuleResult> {
    let (_, out, _) = runner.output(&["apt-cache", "showpkg", name])?;
    let mut found: Vec<String> = Vec::new();
    let mut in_section = false;
    for line in out.lines() {
        if line.starts_with("Reverse Provides:") {
            in_section = true;
            continue;
        }
        if in_section
            && let Some(p) = line.split_whitespace().next()
            && !found.iter().any(|f| f == p)
        {
            found.push(p.to_string());
        }
    }
    Ok(found)
}

/// The names of every real package, sorted as python-apt's `Cache.keys()` lists them.
pub(super) fn package_names(runner: &Runner) -> Result<Vec<String>, ModuleResult> {
    let (_, out, _) = runner.output(&["apt-cache", "pkgnames"])?;
    let mut names: Vec<String> = out.lines().map(str::to_string).collect();
    names.sort();
    Ok(names)
}

/// `apt_pkg.version_compare(a, b) >= 0`.
pub(super) fn version_at_least(runner: &Runner, a: &str, b: &str) -> Result<bool, ModuleResult> {
    Ok(runner.output(&["dpkg", "--compare-versions", a, "ge", b])?.0 == 0)
}

/// `get_updated_cache_time`: the whole seconds of the update stamp's mtime, else of the
/// lists directory's, else 0.
pub(super) fn cache_time() -> (f64, i64) {
    let mtime = |p: &str| {
        std::fs::metadata(p).ok().and_then(|m| m.modified().ok()).map(|t| {
            t.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
        })
    };
    let t = if Path::new(STAMP).exists() {
        mtime(STAMP).unwrap_or(0.0)
    } else {
        mtime(LISTS).unwrap_or(0.0)
    };
    (t, t.trunc() as i64)
}
