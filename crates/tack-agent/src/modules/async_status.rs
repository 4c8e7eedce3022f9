//! `ansible.builtin.async_status` (the host half): reads, or erases, the job file an async
//! task's wrapper keeps under the async directory. The controller passes that directory as
//! `_async_dir` and adds the keys ansible's action plugin adds around this result; this
//! module never starts or stops a job.

use serde_json::Value;

use super::argspec::{Kind, Opt, Spec};
use super::{Ctx, Invocation, ModuleResult};

pub(super) fn run(ctx: Ctx, inv: &Invocation) -> ModuleResult {
    let spec = Spec {
        options: vec![
            Opt::new("jid", Kind::Str).required(),
            Opt::new("mode", Kind::Str).default("status").choices(&["cleanup", "status"]),
            Opt::new("_async_dir", Kind::Path).required(),
        ],
        ..Spec::default()
    };
    let params = match ctx.params(&spec, inv) {
        Ok(p) => p,
        Err(failure) => return failure,
    };
    let jid = params.str("jid").unwrap_or_default().to_string();
    let dir = params.str("_async_dir").unwrap_or_default();
    let log_path = std::path::Path::new(dir).join(&jid).display().to_string();
    let mut result = ModuleResult::new();
    result.insert("ansible_job_id".into(), Value::from(jid.clone()));
    if !std::path::Path::new(&log_path).exists() {
        result.insert("started".into(), Value::Bool(true));
        result.insert("finished".into(), Value::Bool(true));
        return super::common::failed(result, "could not find job");
    }
    if params.str("mode") == Some("cleanup") {
        if let Err(e) = std::fs::remove_file(&log_path) {
            return super::common::failed(result, format!("could not erase {log_path}: {e}"));
        }
        result.insert("erased".into(), Value::from(log_path));
        return result;
    }
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let data = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => map,
        // Not written yet (the wrapper renames a whole file into place): still running.
        _ if text.trim().is_empty() => {
            result.insert("results_file".into(), Value::from(log_path));
            result.insert("started".into(), Value::Bool(true));
            result.insert("finished".into(), Value::Bool(false));
            return result;
        }
        _ => {
            result.insert("results_file".into(), Value::from(log_path));
            result.insert("started".into(), Value::Bool(true));
            result.insert("finished".into(), Value::Bool(true));
            return super::common::failed(result, format!("Could not parse job output: {text}"));
        }
    };
    let mut data = data;
    // The wrapper's "started" record has no `finished` yet; a module's own result has
    // neither key, and is the finished job.
    if !data.contains_key("started") {
        data.insert("finished".into(), Value::Bool(true));
        data.insert("ansible_job_id".into(), Value::from(jid));
    } else if !data.contains_key("finished") {
        data.insert("finished".into(), Value::Bool(false));
    }
    data
}
