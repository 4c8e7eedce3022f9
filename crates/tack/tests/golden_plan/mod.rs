//! `tack plan` over every golden case (issue 7): each `ansible-playbook` line of a case, run
//! as `tack plan` with the same options on a fresh copy of the case, leaves the test hosts as
//! they were. The hosts of the golden suite are this machine (local and over the case's
//! loopback sshd), so "unchanged" is measured on the case's staged tree (every file's kind,
//! mode, bytes and modification time, every link's target) and on what the machine shares:
//! its installed packages, its user and group databases, its crontabs and its host name.
//!
//! A plan may fail (a case written to fail does in a plan too); it may not change a host,
//! and it may not hang (each plan is given two minutes). A task marked `check_mode: false`
//! runs in a plan by the user's word, so a plan that says one changed something is not held
//! to an unchanged tree (the machine's state still is).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use libtest_mimic::Failed;

/// How long one plan may take before the trial calls it hung.
const PLAN_SECONDS: &str = "120";

/// Whether the case has a playbook to plan.
pub(crate) fn plannable(case: &Path) -> bool {
    fs::read_to_string(case.join("cmd")).is_ok_and(|text| playbook_lines(&text).next().is_some())
}

fn playbook_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter(|l| l.split_whitespace().next() == Some("ansible-playbook"))
}

/// Plans each playbook line of `case`, staged under `work`, and compares the hosts' state
/// before and after.
pub(crate) fn plan_case(case: &Path, rel: &str, work: &Path, bin: &Path) -> Result<(), Failed> {
    let text = fs::read_to_string(case.join("cmd")).map_err(|e| format!("{rel}/cmd: {e}"))?;
    let stdin = fs::read(case.join("stdin")).unwrap_or_default();
    let mut problems = Vec::new();
    for line in playbook_lines(&text) {
        let argv = tack_py::shlex::split(line).map_err(|e| format!("{rel}/cmd: {e}"))?;
        let mut planned: Vec<String> = ["timeout", "-k", "5", PLAN_SECONDS, "tack", "plan"]
            .iter()
            .map(|a| a.to_string())
            .collect();
        planned.extend(argv[1..].iter().cloned());
        let before = (tree(work), machine());
        // Without the case's terminal: a plan's transcript is not what is compared here.
        let cmd = super::case_command(case, rel, work, bin, &planned, None)?;
        let out = super::run_answering(cmd, &stdin, &super::answers(work))
            .map_err(|e| format!("{rel}: {e}"))?;
        if out.status.code() == Some(124) {
            problems.push(format!("{line}: the plan did not end in {PLAN_SECONDS} s"));
        }
        let after = (tree(work), machine());
        let changed = differences(&before.0, &after.0);
        // A task marked `check_mode: false` is the user's word that it may run in a dry run,
        // and the plan says so (`ran, changed`): what it changed is its own doing.
        let by_the_users_word = String::from_utf8_lossy(&out.stdout).contains("\nran, changed: [");
        if !changed.is_empty() && !by_the_users_word {
            problems.push(format!(
                "{line}: the plan changed the case's tree:\n  {}\n{}",
                changed.join("\n  "),
                String::from_utf8_lossy(&out.stdout)
            ));
        }
        let changed = differences(&before.1, &after.1);
        if !changed.is_empty() {
            problems.push(format!("{line}: the plan changed the machine: {}", changed.join(", ")));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

/// The names whose state differs between two snapshots.
fn differences(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Vec<String> {
    let mut names: Vec<String> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(v))
        .map(|(k, v)| format!("{k}: {v} -> {}", after.get(k).map_or("absent", String::as_str)))
        .collect();
    names.extend(
        after
            .iter()
            .filter(|(k, _)| !before.contains_key(*k))
            .map(|(k, v)| format!("{k}: new {v}")),
    );
    names
}

/// Every entry below `root` but the case's sshd (its logs and pid file are the server's, not
/// a host's) and the control sockets ssh keeps for its connections.
fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let rel = path.strip_prefix(root).unwrap_or(&path).display().to_string();
        // The sshd's own files, and what both programs keep for themselves under `~/.ansible`:
        // the control sockets of their ssh connections and the temporary directory itself
        // (what is staged in it is still compared: it must be gone when the plan ends).
        if rel == ".sshd" || rel.starts_with(".home/.ansible/cp") {
            continue;
        }
        if rel == ".home/.ansible" || rel == ".home/.ansible/tmp" {
            walk(root, &path, out);
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(&path) else { continue };
        let mode = meta.permissions().mode() & 0o7777;
        let state = if meta.file_type().is_symlink() {
            let target = fs::read_link(&path).map(|t| t.display().to_string()).unwrap_or_default();
            format!("link {target}")
        } else if meta.is_dir() {
            walk(root, &path, out);
            format!("directory {mode:04o}")
        } else {
            format!(
                "file {mode:04o} {} modified {}.{:09}",
                digest(&fs::read(&path).unwrap_or_default()),
                meta.mtime(),
                meta.mtime_nsec()
            )
        };
        out.insert(rel, state);
    }
}

fn digest(bytes: &[u8]) -> String {
    use sha1::Digest;
    sha1::Sha1::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// What every case shares: the installed packages, the user and group databases, the
/// crontabs and the host name.
fn machine() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let packages = std::process::Command::new("dpkg-query")
        .args(["-W", "-f", "${Package} ${Version} ${Status}\n"])
        .output()
        .map(|o| o.stdout)
        .unwrap_or_default();
    out.insert("installed packages".to_string(), digest(&packages));
    for file in ["/etc/passwd", "/etc/group", "/etc/shadow", "/etc/hostname"] {
        out.insert(file.to_string(), digest(&fs::read(file).unwrap_or_default()));
    }
    out.extend(
        tree(Path::new("/var/spool/cron/crontabs"))
            .into_iter()
            .map(|(k, v)| (format!("crontab {k}"), v)),
    );
    out
}
