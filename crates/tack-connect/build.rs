//! Embeds the agent binary named by `TACK_AGENT_BIN` (when set) so the controller can install
//! it on hosts without a `tack-agent` beside it: `AgentImage::controller()` reads it.

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
            format!("pub const AGENT: Option<&[u8]> = Some(include_bytes!({:?}));\n", path)
        }
        _ => "pub const AGENT: Option<&[u8]> = None;\n".to_string(),
    };
    std::fs::write(Path::new(&out).join("embedded_agent.rs"), code)
        .expect("the build script can write into OUT_DIR");
}
