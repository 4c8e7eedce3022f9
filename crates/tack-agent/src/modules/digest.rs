//! File digests as ansible's `digest_from_file` computes them (hex, lowercase). Read-only.

use std::io::Read;

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn run<D: Digest>(mut reader: impl Read) -> std::io::Result<String> {
    let mut d = D::new();
    let mut buf = vec![0u8; 65536];
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        d.update(&buf[..n]);
    }
    Ok(hex(&d.finalize()))
}

/// The digest of a file's content with ansible's algorithm name; `None` for an unknown name.
pub(super) fn file_digest(path: &str, algorithm: &str) -> Option<std::io::Result<String>> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Some(Err(e)),
    };
    Some(match algorithm {
        "md5" => run::<Md5>(file),
        "sha1" => run::<Sha1>(file),
        "sha224" => run::<Sha224>(file),
        "sha256" => run::<Sha256>(file),
        "sha384" => run::<Sha384>(file),
        "sha512" => run::<Sha512>(file),
        _ => return None,
    })
}
