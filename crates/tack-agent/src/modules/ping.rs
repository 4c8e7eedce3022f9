//! `ansible.builtin.ping`: echoes `data` back. Touches nothing on the host.

use serde_json::Value;

use super::argspec::{Kind, Opt, Spec};
use super::{Ctx, Invocation, ModuleResult};

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let spec =
        Spec { options: vec![Opt::new("data", Kind::Str).default("pong")], ..Spec::default() };
    let params = match ctx.params(&spec, inv) {
        Ok(p) => p,
        Err(failure) => return failure,
    };
    let data = params.str("data").unwrap_or_default();
    if data == "crash" {
        // ansible's module raises an exception here on purpose; its module loader turns an
        // escaping exception into this failure (no `msg`: the controller words it).
        return super::common::raised("boom");
    }
    let mut result = ModuleResult::new();
    result.insert("ping".into(), Value::from(data));
    result
}
