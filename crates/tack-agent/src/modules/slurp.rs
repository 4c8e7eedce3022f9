//! `ansible.builtin.slurp`: one file's content, base64-armoured by default. Read-only.

use base64::Engine;
use serde_json::Value;

use super::argspec::{Kind, Opt, Spec};
use super::common::fail_with_cause;
use super::{Ctx, Invocation, ModuleResult};

pub(crate) fn spec() -> Spec {
    Spec {
        options: vec![
            Opt::new("src", Kind::Path).required().aliases(&["path"]),
            Opt::new("armor", Kind::Bool).default(true),
        ],
        ..Spec::default()
    }
}

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let p = match ctx.params(&spec(), inv) {
        Ok(p) => p,
        Err(f) => return f,
    };
    let source = p.str("src").unwrap_or_default().to_string();
    let data = std::fs::File::open(&source).and_then(|mut f| {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut buf)?;
        Ok(buf)
    });
    let data = match data {
        Ok(d) => d,
        Err(e) => {
            let msg = match e.raw_os_error() {
                Some(libc::ENOENT) => format!("File not found: {source}"),
                Some(libc::EACCES) => format!("File is not readable: {source}"),
                Some(libc::EISDIR) => format!("Source is a directory and must be a file: {source}"),
                // ansible's message lacks its f-string prefix, so the braces show literally.
                _ => "Unable to slurp file: {source}".to_string(),
            };
            return fail_with_cause(
                ModuleResult::new(),
                &msg,
                &tack_py::oserror::os_error_bytes(&e, str::as_bytes(&source))
                    .replacen(": b'", ": '", 1),
            );
        }
    };
    let (content, encoding) = if p.bool("armor") {
        (base64::engine::general_purpose::STANDARD.encode(&data), "base64")
    } else {
        (String::from_utf8_lossy(&data).into_owned(), "utf-8")
    };
    let mut r = ModuleResult::new();
    r.insert("content".into(), Value::from(content));
    r.insert("source".into(), Value::from(source));
    r.insert("encoding".into(), Value::from(encoding));
    r
}
