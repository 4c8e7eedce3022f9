//! Embeds the agent binary the controller installs on hosts without a `tack-agent` beside it
//! (`AgentImage::controller()` reads it): the one `TACK_AGENT_BIN` names, else, in a checkout
//! of the workspace, the one `scripts/build-agent.sh` builds (static musl, in `target/agent`,
//! its own lock: no wait on this build's), so a plain `cargo build` or `cargo install` gives a
//! controller that reaches ssh hosts. `TACK_AGENT_BUILD=0` embeds none (the controller then
//! looks for a `tack-agent` beside itself). A gzip copy goes beside it, compressed here once:
//! on first contact a host with `gzip` is sent that (about 40% of the bytes), which ssh's own
//! `-C` would otherwise spend the controller's CPU compressing on every upload.

use std::io::Write;
use std::path::Path;

/// The agent `scripts/build-agent.sh` builds, when this is a checkout of the workspace and
/// the build works; else why not, for the build's warning.
fn build_agent() -> Result<std::ffi::OsString, String> {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").ok_or("no CARGO_MANIFEST_DIR")?;
    let root = Path::new(&manifest).join("../..");
    let script = root.join("scripts/build-agent.sh");
    if !script.exists() {
        return Err("scripts/build-agent.sh is not beside this crate".into());
    }
    // The agent's sources: a change there builds it again.
    for dir in ["crates/tack-agent", "crates/tack-protocol", "crates/tack-py"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    let output = std::process::Command::new("bash")
        .arg(&script)
        // The flags cargo hands this build script are for the controller's target.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("scripts/build-agent.sh could not start: {e}"))?;
    if !output.status.success() {
        return Err(format!("scripts/build-agent.sh failed ({})", output.status));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let path = stdout.lines().last().unwrap_or_default().trim().to_string();
    if path.is_empty() {
        return Err("scripts/build-agent.sh named no binary".into());
    }
    Ok(path.into())
}

fn main() {
    println!("cargo:rerun-if-env-changed=TACK_AGENT_BIN");
    println!("cargo:rerun-if-env-changed=TACK_AGENT_BUILD");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let given = std::env::var_os("TACK_AGENT_BIN").filter(|bin| !bin.is_empty());
    let agent = match given {
        Some(bin) => Some(bin),
        None if std::env::var_os("TACK_AGENT_BUILD").is_some_and(|v| v == "0") => None,
        None => match build_agent() {
            Ok(bin) => Some(bin),
            Err(why) => {
                println!(
                    "cargo:warning=no agent embedded ({why}): this tack reaches ssh hosts only \
                     with a tack-agent beside it; see scripts/build-agent.sh"
                );
                None
            }
        },
    };
    let code = match agent {
        Some(bin) => {
            let path = std::fs::canonicalize(&bin).unwrap_or_else(|e| {
                panic!(
                    "TACK_AGENT_BIN names {}, which cannot be read: {e}",
                    Path::new(&bin).display()
                )
            });
            println!("cargo:rerun-if-changed={}", path.display());
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!("TACK_AGENT_BIN names {}, which cannot be read: {e}", path.display())
            });
            // A build script fails the build by panicking; writing into a Vec cannot fail.
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            gz.write_all(&bytes).expect("compressing into memory cannot fail");
            let gz = gz.finish().expect("compressing into memory cannot fail");
            let gz_path = Path::new(&out).join("embedded_agent.gz");
            std::fs::write(&gz_path, gz).expect("the build script can write into OUT_DIR");
            let summary = format!(
                "{}, {}, blake3 {}",
                elf_machine(&bytes),
                if elf_is_static(&bytes) { "static" } else { "dynamically linked" },
                &blake3::hash(&bytes).to_hex()[..16]
            );
            format!(
                "pub(crate) const AGENT: Option<&[u8]> = Some(include_bytes!({path:?}));\n\
                 pub(crate) const AGENT_GZ: Option<&[u8]> = Some(include_bytes!({gz_path:?}));\n\
                 pub(crate) const SUMMARY: Option<&str> = Some({summary:?});\n"
            )
        }
        _ => "pub(crate) const AGENT: Option<&[u8]> = None;\npub(crate) const AGENT_GZ: Option<&[u8]> = None;\n\
              pub(crate) const SUMMARY: Option<&str> = None;\n"
            .to_string(),
    };
    std::fs::write(Path::new(&out).join("embedded_agent.rs"), code)
        .expect("the build script can write into OUT_DIR");
}

/// The ELF machine an agent binary is for, as `uname -m` names it.
fn elf_machine(bytes: &[u8]) -> &'static str {
    match bytes.get(18..20) {
        Some([0x3e, 0]) => "x86_64",
        Some([0xb7, 0]) => "aarch64",
        _ => "an unknown machine",
    }
}

/// Whether a 64-bit little-endian ELF binary has no program interpreter (`PT_INTERP`): it is
/// statically linked and runs on any Linux of its machine.
fn elf_is_static(bytes: &[u8]) -> bool {
    let word = |at: usize, len: usize| -> Option<u64> {
        let raw = bytes.get(at..at + len)?;
        Some(raw.iter().rev().fold(0u64, |n, b| (n << 8) | u64::from(*b)))
    };
    let (Some(phoff), Some(entsize), Some(count)) = (word(0x20, 8), word(0x36, 2), word(0x38, 2))
    else {
        return false;
    };
    (0..count).all(|i| {
        let at = usize::try_from(phoff + i * entsize).unwrap_or(usize::MAX);
        word(at, 4) != Some(3)
    })
}
