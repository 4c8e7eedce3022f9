//! Embeds the agent binary named by `TACK_AGENT_BIN` (when set) so the controller can install
//! it on hosts without a `tack-agent` beside it: `AgentImage::controller()` reads it. A gzip
//! copy goes beside it, compressed here once: on first contact a host with `gzip` is sent
//! that (about 40% of the bytes), which ssh's own `-C` would otherwise spend the controller's
//! CPU compressing on every upload.

use std::io::Write;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-env-changed=TACK_AGENT_BIN");
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let code = match std::env::var_os("TACK_AGENT_BIN") {
        Some(bin) if !bin.is_empty() => {
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
            format!(
                "pub(crate) const AGENT: Option<&[u8]> = Some(include_bytes!({path:?}));\n\
                 pub(crate) const AGENT_GZ: Option<&[u8]> = Some(include_bytes!({gz_path:?}));\n"
            )
        }
        _ => "pub(crate) const AGENT: Option<&[u8]> = None;\npub(crate) const AGENT_GZ: Option<&[u8]> = None;\n"
            .to_string(),
    };
    std::fs::write(Path::new(&out).join("embedded_agent.rs"), code)
        .expect("the build script can write into OUT_DIR");
}
