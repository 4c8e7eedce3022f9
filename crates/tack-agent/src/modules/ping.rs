//! `ansible.builtin.ping`: echoes `data` back. Touches nothing on the host.

use serde_json::Value;

use super::argspec::{Kind, Opt, Spec};
use super::{Ctx, Invocation, ModuleResult};

pub fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let spec =
        Spec { options: vec![Opt::new("data", Kind::Str).default("pong")], ..Spec::default() };
    let params = match ctx.params(&spec, inv) {
        Ok(p) => p,
        Err(failure) => return failure,
    };
    let data = params.str("data").unwrap_or_default();
    if data == "crash" {
        // ansible's module raises here and the controller reports a module failure; tack
        // reports that failure directly.
        return super::common::fail("MODULE FAILURE: boom");
    }
    let mut result = ModuleResult::new();
    result.insert("ping".into(), Value::from(data));
    result
}
