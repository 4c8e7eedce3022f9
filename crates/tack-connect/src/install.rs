//! The agent a controller uploads ([`AgentImage`]: its bytes, version, BLAKE3 hash and the
//! architecture it runs on) and the shell scripts of first contact: the probe (the host's
//! `uname -m` and whether `~/.cache/tack/agent-<version>-<hash prefix>` is there, executable
//! and whole), the upload (a private temporary file in that directory, its size and hash
//! checked on the host by the uploaded agent itself, renamed into place, older agents
//! removed), and both with the agent's start in one session ([`contact_script`]).
//!
//! Owns what runs on the host before the link; running `ssh` is `ssh_link`'s job.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ConnectionError;

/// The agent embedded at build time when `TACK_AGENT_BIN` named one (see build.rs).
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_agent.rs"));
}

/// What the embedded agent is, for `tack --version`: its machine, whether it is static, and
/// the start of its BLAKE3 hash (the name it is cached under on hosts); `None` when none was
/// embedded.
pub fn embedded_summary() -> Option<&'static str> {
    embedded::SUMMARY
}

/// How many hex digits of the hash name a cached agent.
const HASH_PREFIX: usize = 16;

/// Where agents are cached on a host, relative to the remote user's `$HOME`.
pub(crate) const CACHE_DIR: &str = ".cache/tack";

/// An agent binary the controller can install on hosts.
#[derive(Clone)]
pub struct AgentImage {
    bytes: Arc<[u8]>,
    /// The same bytes gzipped, sent instead to a host that has `gzip` (whatever they are,
    /// what the host ends up with is checked against `hash` before it is used).
    gzip: Option<Arc<[u8]>>,
    version: String,
    hash: blake3::Hash,
    arch: &'static str,
}

impl std::fmt::Debug for AgentImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentImage")
            .field("version", &self.version)
            .field("hash", &self.hash.to_hex().as_str())
            .field("arch", &self.arch)
            .field("len", &self.bytes.len())
            .field("gzip_len", &self.gzip.as_ref().map(|g| g.len()))
            .finish()
    }
}

impl AgentImage {
    /// An image of `bytes`, which must be an ELF executable for x86_64 or aarch64.
    pub fn new(bytes: impl Into<Arc<[u8]>>, version: &str) -> Result<Self, ConnectionError> {
        let bytes = bytes.into();
        let arch = elf_arch(&bytes).ok_or_else(|| {
            ConnectionError::AgentImage(
                "the agent image is not an x86_64 or aarch64 ELF executable".into(),
            )
        })?;
        let hash = blake3::hash(&bytes);
        Ok(AgentImage { bytes, gzip: None, version: version.to_string(), hash, arch })
    }

    /// The image, sent gzipped (`gz`, the bytes gzipped) to hosts that can unpack it.
    pub fn with_gzip(mut self, gz: impl Into<Arc<[u8]>>) -> Self {
        self.gzip = Some(gz.into());
        self
    }

    /// The agent binary at `path`.
    pub fn from_file(path: &Path, version: &str) -> Result<Self, ConnectionError> {
        let bytes = std::fs::read(path).map_err(|e| {
            ConnectionError::AgentImage(format!("cannot read the agent {}: {e}", path.display()))
        })?;
        Self::new(bytes, version)
            .map_err(|e| ConnectionError::AgentImage(format!("{}: {e}", path.display())))
    }

    /// The controller's own agent: the one embedded at build time (`TACK_AGENT_BIN`), else a
    /// `tack-agent` next to the running executable.
    pub fn controller() -> Result<Self, ConnectionError> {
        let version = env!("CARGO_PKG_VERSION");
        if let Some(bytes) = embedded::AGENT {
            let image = Self::new(bytes, version)?;
            return Ok(match embedded::AGENT_GZ {
                Some(gz) => image.with_gzip(gz),
                None => image,
            });
        }
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|d| d.join("tack-agent")))
            .unwrap_or_else(|| PathBuf::from("tack-agent"));
        if beside.is_file() {
            return Self::from_file(&beside, version);
        }
        Err(ConnectionError::AgentImage(format!(
            "no agent to install on the host: none was embedded when tack was built \
             (set TACK_AGENT_BIN to the output of scripts/build-agent.sh and rebuild) and there \
             is no {}",
            beside.display()
        )))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The gzipped bytes, when the image has them.
    pub fn gzip(&self) -> Option<&[u8]> {
        self.gzip.as_deref()
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    /// The BLAKE3 hash of the bytes, in hex.
    pub fn hash_hex(&self) -> String {
        self.hash.to_hex().to_string()
    }

    /// `uname -m` of the hosts the image runs on.
    pub fn arch(&self) -> &'static str {
        self.arch
    }

    /// The cached agent's file name on a host: `agent-<version>-<hash prefix>`.
    pub fn file_name(&self) -> String {
        let hex = self.hash.to_hex();
        format!("agent-{}-{}", self.version, &hex[..HASH_PREFIX])
    }

    /// The cached agent's path, as the remote shell writes it.
    pub(crate) fn remote_path(&self) -> String {
        format!("\"$HOME\"/{CACHE_DIR}/{}", self.file_name())
    }
}

/// The machine an ELF header names, as `uname -m` names it.
fn elf_arch(bytes: &[u8]) -> Option<&'static str> {
    if bytes.len() < 20 || &bytes[..4] != b"\x7fELF" {
        return None;
    }
    // e_machine, little-endian in the 64-bit little-endian files both targets are.
    match (bytes[4], bytes[5], u16::from_le_bytes([bytes[18], bytes[19]])) {
        (2, 1, 0x3e) => Some("x86_64"),
        (2, 1, 0xb7) => Some("aarch64"),
        _ => None,
    }
}

/// What the probe found on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Probe {
    pub arch: String,
    pub cached: bool,
    /// The host has `gzip`, to unpack a gzipped agent with (told only when it is missing).
    pub gzip: bool,
}

/// Reads the probe's output: its last lines (a login banner may come first): `uname -m`,
/// [`GZIP`] when the host has it, the marker.
pub(crate) fn parse_probe(stdout: &[u8]) -> Option<Probe> {
    let text = String::from_utf8_lossy(stdout);
    let mut lines = text.lines().rev().map(str::trim);
    let cached = match lines.next()? {
        CACHED => true,
        MISSING => false,
        _ => return None,
    };
    let mut lines = lines.peekable();
    let gzip = lines.next_if_eq(&GZIP).is_some();
    let arch = lines.next()?.to_string();
    Some(Probe { arch, cached, gzip })
}

/// Whether `uname -m` names a machine the image runs on.
/// What a probe call printed, understood and checked against `image`'s architecture: the
/// one reading both the login and the become probes make.
pub(crate) fn read_probe(
    image: &AgentImage,
    stdout: &[u8],
    step: &'static str,
) -> Result<Probe, ConnectionError> {
    let probe = parse_probe(stdout).ok_or_else(|| ConnectionError::Install {
        step,
        message: format!(
            "the host's answer was not understood: {:?}",
            String::from_utf8_lossy(stdout)
        ),
    })?;
    if !arch_matches(image, &probe.arch) {
        return Err(ConnectionError::AgentImage(format!(
            "the host is {} and the agent is built for {}",
            probe.arch,
            image.arch()
        )));
    }
    Ok(probe)
}

pub(crate) fn arch_matches(image: &AgentImage, uname: &str) -> bool {
    uname == image.arch || (image.arch == "aarch64" && uname == "arm64")
}

/// Makes the login user's agent cache `$d`, private.
fn cache_setup() -> String {
    format!("d=\"$HOME\"/{CACHE_DIR}; mkdir -p \"$d\"; chmod 700 \"$d\"")
}

/// The upload of what `reader` prints (the agent's bytes, from stdin) into the directory `$d`
/// that `setup` names (and makes ready): a private temporary file, checked for size and hash
/// by running it, renamed into place; then older agents go.
fn upload_from(image: &AgentImage, setup: &str, reader: &str) -> String {
    format!(
        "set -e; umask 077; {setup}; \
         t=\"$d/.upload-$$\"; trap 'rm -f \"$t\"' EXIT; {reader} > \"$t\"; \
         n=$(wc -c < \"$t\" | tr -d ' '); \
         if [ \"$n\" != {size} ]; then echo \"the upload has $n bytes, not {size}\" >&2; exit 3; fi; \
         chmod 700 \"$t\"; \
         if ! \"$t\" --verify {hash} \"$t\" >/dev/null; then \
         echo 'the uploaded agent does not have the BLAKE3 hash {hash}' >&2; exit 4; fi; \
         mv -f \"$t\" \"$d/{name}\"; \
         for f in \"$d\"/agent-*; do [ \"$f\" = \"$d/{name}\" ] || rm -f \"$f\"; done",
        size = image.bytes.len(),
        hash = image.hash_hex(),
        name = image.file_name(),
    )
}

/// The lines first contact prints before the agent's hello: after `uname -m`, whether the
/// cached agent is there, and after an upload, that it is now.
pub(crate) const CACHED: &str = "tack-agent:ok";
pub(crate) const MISSING: &str = "tack-agent:missing";
pub(crate) const INSTALLED: &str = "tack-agent:installed";
/// Said before [`MISSING`] by a host that has `gzip`.
pub(crate) const GZIP: &str = "tack-agent:gzip";
/// The controller's answers to [`MISSING`]: the agent's bytes follow ([`SEND`]), or look
/// again ([`RECHECK`]: another link to the same destination has just put it there). No
/// answer, and nothing is written on the host: an agent for another machine is never sent.
pub(crate) const SEND: &str = "tack-agent:send";
/// [`SEND`] of the gzipped bytes (exactly their size), which the host unpacks with `gzip`.
pub(crate) const SEND_GZIP: &str = "tack-agent:send-gzip";
pub(crate) const RECHECK: &str = "tack-agent:recheck";

/// First contact and the link in one session: `uname -m`, then the cached agent, when it
/// runs and vouches for its own hash, in the shell's place. When it does not, the shell
/// says so and waits for the controller's answer: [`RECHECK`] looks again; [`SEND`] is
/// followed by the agent's bytes on stdin, exactly its size (`head -c`, so nothing of the
/// link after them is read), checked and renamed into place by [`upload_from`]
/// (in a subshell, so the agent keeps the login's umask), and then the agent runs.
///
/// With `listen` (seconds), the agent also makes sure the host's listener runs
/// (`tack_agent::listen`), idle for at most that long.
pub(crate) fn contact_script(image: &AgentImage, listen: Option<u64>) -> String {
    let args = listen.map(|secs| format!(" {} {secs}", tack_agent::listen::LISTEN_ARG));
    contact_script_with(image, "", &image.remote_path(), &cache_setup(), args.as_deref())
}

/// [`contact_script`] for an agent at `agent` (a shell word), after `first` (which may set
/// variables `agent` and `setup` use), uploaded through `setup` (which sets `$d`, the
/// cache directory): how the become user's own cache is reached.
pub(crate) fn contact_script_in(
    image: &AgentImage,
    first: &str,
    agent: &str,
    setup: &str,
) -> String {
    contact_script_with(image, first, agent, setup, None)
}

/// [`contact_script_in`], the agent started with `args` (shell words, each led by a space).
fn contact_script_with(
    image: &AgentImage,
    first: &str,
    agent: &str,
    setup: &str,
    args: Option<&str>,
) -> String {
    let args = args.unwrap_or("");
    let installed = format!("echo {INSTALLED}; exec \"$a\"{args} ;;");
    // Only an image with gzipped bytes asks after gzip, and can be sent them.
    let (ask_gzip, send_gzip) = match &image.gzip {
        Some(gz) => (
            format!("command -v gzip >/dev/null 2>&1 && echo {GZIP}; "),
            format!(
                "{SEND_GZIP}) ({upload}) || exit $?; {installed} ",
                upload = upload_from(image, setup, &format!("head -c {} | gzip -dc", gz.len()))
            ),
        ),
        None => (String::new(), String::new()),
    };
    format!(
        "{first}uname -m; a={agent}; while :; do \
         if [ -x \"$a\" ] && \"$a\" --verify {hash} >/dev/null 2>&1; \
         then echo {CACHED}; exec \"$a\"{args}; fi; {ask_gzip}echo {MISSING}; \
         read -r go || exit 5; case \"$go\" in {RECHECK}) ;; \
         {SEND}) ({upload}) || exit $?; {installed} {send_gzip}\
         *) exit 5 ;; esac; done",
        hash = image.hash_hex(),
        upload = upload_from(image, setup, &format!("head -c {}", image.bytes.len())),
    )
}

/// The workspace's `tack-agent`, built by cargo (as the integration tests do).
#[cfg(test)]
pub(crate) fn test_image() -> AgentImage {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["build", "-q", "-p", "tack-agent", "--bin", "tack-agent"])
        .arg("--message-format=json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let exe = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["target"]["name"] == "tack-agent")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .unwrap();
    AgentImage::from_file(&exe, "0.0.0-test").unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_output_is_read_from_its_last_lines() {
        let p = parse_probe(b"Welcome!\nx86_64\ntack-agent:ok\n").unwrap();
        assert_eq!(p, Probe { arch: "x86_64".into(), cached: true, gzip: false });
        let p = parse_probe(b"aarch64\ntack-agent:missing\n").unwrap();
        assert!(!p.cached && !p.gzip);
        let p = parse_probe(b"aarch64\ntack-agent:gzip\ntack-agent:missing\n").unwrap();
        assert_eq!(p, Probe { arch: "aarch64".into(), cached: false, gzip: true });
        assert_eq!(parse_probe(b"x86_64\n"), None);
    }

    #[test]
    fn the_controllers_agent_is_the_embedded_one_or_says_where_it_looked() {
        match (embedded::AGENT, AgentImage::controller()) {
            (Some(bytes), Ok(img)) => assert_eq!(img.bytes(), bytes),
            (None, Err(ConnectionError::AgentImage(msg))) => {
                // A test binary lives in target/*/deps, where cargo puts no plain `tack-agent`.
                assert!(msg.contains("set TACK_AGENT_BIN"), "{msg}");
                assert!(msg.ends_with("/deps/tack-agent"), "{msg}");
            }
            (embedded, got) => panic!("embedded: {}, got {got:?}", embedded.is_some()),
        }
    }

    /// Runs the upload script here, as the host's shell would, with `home` as `$HOME`.
    fn upload(image: &AgentImage, home: &Path, bytes: &[u8]) -> (i32, String) {
        use std::io::Write;
        let mut child = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(upload_from(image, &cache_setup(), "cat"))
            .env("HOME", home)
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status.code().unwrap(), String::from_utf8_lossy(&out.stderr).trim().to_string())
    }

    fn cache_names(home: &Path) -> Vec<String> {
        let dir = home.join(CACHE_DIR);
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_upload_keeps_only_a_whole_agent_with_the_right_hash() {
        use std::os::unix::fs::PermissionsExt;
        let image = test_image();
        let home = tempfile::tempdir().unwrap();
        let bytes = image.bytes();

        let (rc, err) = upload(&image, home.path(), &bytes[..bytes.len() - 1]);
        assert_eq!(rc, 3);
        assert_eq!(err, format!("the upload has {} bytes, not {}", bytes.len() - 1, bytes.len()));
        assert!(cache_names(home.path()).is_empty(), "the short file is removed");

        // Same size, one byte changed near the end: it still runs, and its hash tells.
        let mut altered = bytes.to_vec();
        let at = altered.len() - 100;
        altered[at] ^= 0xff;
        let (rc, err) = upload(&image, home.path(), &altered);
        assert_eq!(rc, 4);
        assert_eq!(
            err,
            format!("the uploaded agent does not have the BLAKE3 hash {}", image.hash_hex())
        );
        assert!(cache_names(home.path()).is_empty(), "the altered file is removed");

        std::fs::write(home.path().join(CACHE_DIR).join("agent-0.0.0-old"), b"x").unwrap();
        assert_eq!(upload(&image, home.path(), bytes), (0, String::new()));
        assert_eq!(cache_names(home.path()), [image.file_name()]);
        let placed = home.path().join(CACHE_DIR).join(image.file_name());
        assert_eq!(std::fs::read(&placed).unwrap(), bytes);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&placed), mode(&home.path().join(CACHE_DIR))), (0o700, 0o700));
    }

    #[test]
    fn only_elf_executables_for_known_machines_are_images() {
        assert!(AgentImage::new(b"#!/bin/sh\necho hi\n".to_vec(), "1").is_err());
        let mut elf = vec![0u8; 64];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[18] = 0xb7;
        let img = AgentImage::new(elf, "1.2.3").unwrap();
        assert_eq!(img.arch(), "aarch64");
        assert!(arch_matches(&img, "arm64"));
        assert!(!arch_matches(&img, "x86_64"));
        assert!(img.file_name().starts_with("agent-1.2.3-"));
        assert_eq!(img.file_name().len(), "agent-1.2.3-".len() + HASH_PREFIX);
    }
}
