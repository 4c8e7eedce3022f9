//! Random temporary names as Python's `tempfile` makes them (8 characters of
//! `[a-z0-9_]`), and `ansible.builtin.tempfile`, which creates one private file or directory.

use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

use serde_json::Value;

use super::argspec::{Kind, Opt, Spec};
use super::common::fail;
use super::paths::{basename, join};
use super::{Ctx, Invocation, ModuleResult, host};

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789_";

/// Eight random characters from Python's tempfile alphabet.
pub(super) fn random_part() -> String {
    let mut bytes = [0u8; 8];
    let filled = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if filled.is_err() {
        // Without /dev/urandom, time and pid still make a name no other run uses at once.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
            ^ u128::from(std::process::id());
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (seed >> (i * 8)) as u8;
        }
    }
    bytes.iter().map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char).collect()
}

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("state", Kind::Str).default("file").choices(&["file", "directory"]),
            Opt::new("path", Kind::Path),
            Opt::new("prefix", Kind::Str).default("ansible."),
            Opt::new("suffix", Kind::Str).default(""),
        ],
        ..Spec::default()
    }
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    if let Some(skipped) = ctx.skip_in_check_mode() {
        return skipped;
    }
    let prefix = p.str("prefix").unwrap_or_default();
    let suffix = p.str("suffix").unwrap_or_default();
    let q = |s: &str| super::pyfmt::py_repr(&Value::from(s));
    if !prefix.is_empty() && prefix != basename(prefix) {
        return fail(format!("prefix must be a valid file name component, got {}", q(prefix)));
    }
    if !suffix.is_empty() && suffix != basename(suffix) {
        return fail(format!("suffix must be a valid file name component, got {}", q(suffix)));
    }
    let dir = match p.str("path") {
        Some(d) => d.to_string(),
        None => super::environment::temp_dir().display().to_string(),
    };
    let dir = super::paths::abspath(&dir);
    let directory = p.str("state") == Some("directory");
    let mut last = None;
    for _ in 0..100 {
        let path = join(&dir, &format!("{prefix}{}{suffix}", random_part()));
        let made = if directory {
            std::fs::DirBuilder::new().mode(0o700).create(&path)
        } else {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
                .map(drop)
        };
        match made {
            Ok(()) => {
                let mut r = ModuleResult::new();
                r.insert("changed".into(), Value::Bool(true));
                r.insert("path".into(), Value::from(path));
                host::add_path_info(&mut r);
                return r;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some((e, path)),
            Err(e) => return fail(tack_py::oserror::os_error(&e, std::path::Path::new(&path))),
        }
    }
    match last {
        Some((e, path)) => fail(tack_py::oserror::os_error(&e, std::path::Path::new(&path))),
        None => fail("No usable temporary file name found"),
    }
}
