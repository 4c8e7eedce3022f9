//! The registry of native modules and the one entry point the controller and the agent call.

use serde_json::{Map, Value};

mod apt;
mod apt_cache;
pub mod argspec;
pub mod assemble;
mod async_status;
mod blockinfile;
mod command;
mod common;
pub use common::timestamp;
pub use common::utc_isoformat;
mod copy;
mod copytree;
mod cron;
mod digest;
mod environment;
mod fetch;
mod file;
mod find;
mod fsattr;
mod get_url;
pub mod glob;
mod group;
mod host;
pub(crate) mod hostname;
mod http;
mod lineinfile;
mod paths;
mod ping;
mod pip;
mod pip_req;
mod pyfmt;
pub mod pylit;
// Python's `re`, shared with the template layer.
use tack_py::re as pyre;
mod replace;
mod service;
pub mod setup;
mod slurp;
mod stat;
mod systemd;
mod tempname;
mod textfile;
mod uri;
mod user;
mod user_ops;
mod validate;
mod wait_for;

/// The name of a uid in the password database (the engine's `become` compares users).
pub use host::{user_home, user_name};

/// A module's result dictionary, as ansible's module would print it.
pub type ModuleResult = Map<String, Value>;

/// One module run: its arguments (already rendered on the controller) and the run's modes.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    pub args: Map<String, Value>,
    /// `--check` / `check_mode: true`: report what would change, change nothing.
    pub check_mode: bool,
    /// `--diff` / `diff: true`: include `diff` in the result where the module supports it.
    pub diff: bool,
    /// The task's `environment`, for the processes the module runs (see `environment`).
    pub environment: std::collections::BTreeMap<String, String>,
    /// The task's `timeout` in seconds: a command still running then is killed (with its
    /// process group) and the result is only `failed` and `timedout: {period}`.
    pub timeout: Option<u64>,
}

/// The modules that honour [`Invocation::timeout`] (`copy` for its `validate` command).
pub const TAKE_TIMEOUT: &[&str] = &["command", "shell", "copy"];

/// The modules that honour [`Invocation::environment`]; the engine refuses a task
/// environment for any other.
pub const TAKE_ENVIRONMENT: &[&str] = &["command", "shell"];

/// What a module sees of its run besides its arguments.
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The name ansible's messages give the module (the task's spelling of it).
    pub name: &'a str,
    pub check_mode: bool,
    pub diff: bool,
}

impl Ctx<'_> {
    /// Validates the arguments against `spec`; `Err` is the failure result to return.
    pub fn params(
        &self,
        spec: &argspec::Spec,
        inv: &Invocation,
    ) -> Result<argspec::Params, ModuleResult> {
        argspec::validate(self.name, spec, &inv.args).map_err(common::fail)
    }

    /// For a module without check-mode support (`supports_check_mode=False`): in check mode,
    /// the skipped result `AnsibleModule` returns instead of running.
    pub fn skip_in_check_mode(&self) -> Option<ModuleResult> {
        if !self.check_mode {
            return None;
        }
        let mut r = ModuleResult::new();
        r.insert("skipped".into(), true.into());
        r.insert(
            "msg".into(),
            format!("remote module ({}) does not support check mode", self.name).into(),
        );
        Some(r)
    }
}

/// Runs the native module `name` (short name, `ansible.builtin.` or `ansible.legacy.`
/// spelling). `None` when tack has no native module of that name.
pub fn run_module(name: &str, invocation: &Invocation) -> Option<ModuleResult> {
    // setup reads its few arguments itself (it predates the shared argument handling).
    if short_name(name) == "setup" {
        return Some(setup::run(invocation));
    }
    let ctx = Ctx { name, check_mode: invocation.check_mode, diff: invocation.diff };
    argspec::begin();
    let result = match short_name(name) {
        "ping" => ping::run(ctx, invocation),
        "async_status" => async_status::run(ctx, invocation),
        "command" => command::run(ctx, invocation, false),
        "shell" => command::run(ctx, invocation, true),
        "stat" => stat::run(ctx, invocation),
        "file" => file::run(ctx, invocation),
        "slurp" => slurp::run(ctx, invocation),
        "tempfile" => tempname::run(ctx, invocation),
        "lineinfile" => lineinfile::run(ctx, invocation),
        "replace" => replace::run(ctx, invocation),
        "blockinfile" => blockinfile::run(ctx, invocation),
        "copy" => copy::run(Ctx { name: "ansible.legacy.copy", ..ctx }, invocation),
        "find" => find::run(ctx, invocation),
        "wait_for" => wait_for::run(ctx, invocation),
        "get_url" => get_url::run(ctx, invocation),
        "uri" => uri::run(Ctx { name: "ansible.legacy.uri", ..ctx }, invocation),
        "group" => group::run(ctx, invocation),
        "user" => user::run(ctx, invocation),
        "cron" => cron::run(ctx, invocation),
        "hostname" => hostname::run(ctx, invocation),
        "assemble" => assemble::run(ctx, invocation),
        "systemd" | "systemd_service" => systemd::run(ctx, invocation),
        "service" => service::run(Ctx { name: "ansible.legacy.service", ..ctx }, invocation),
        "pip" => pip::run(ctx, invocation),
        "apt" => apt::run(ctx, invocation),
        _ => return None,
    };
    Some(argspec::finish(result))
}

fn short_name(name: &str) -> &str {
    tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy)
}

/// The options (with their aliases) a native module marks `no_log`: their values are secrets
/// wherever the controller would show them. A module with such an option is listed here.
pub fn secret_options(name: &str) -> Vec<&'static str> {
    let spec = match short_name(name) {
        "uri" => uri::spec(),
        "user" => user::spec(),
        "copy" => copy::spec(),
        "get_url" => get_url::spec(),
        _ => return Vec::new(),
    };
    let mut names = Vec::new();
    for opt in spec.options.iter().filter(|o| o.no_log) {
        names.push(opt.name);
        names.extend(opt.aliases.iter().copied());
    }
    names
}

/// Whether tack has a native module called `name`.
pub fn is_native(name: &str) -> bool {
    native_name(name).is_some()
}

/// The short name of the native module `name` names (any spelling), if tack has it.
pub fn native_name(name: &str) -> Option<&'static str> {
    let short = short_name(name);
    NATIVE.iter().copied().find(|n| *n == short)
}

/// Every native module, by short name. A module is added here in the same change that
/// registers it in [`run_module`].
const NATIVE: &[&str] = &[
    "setup",
    "ping",
    "async_status",
    "command",
    "shell",
    "stat",
    "file",
    "slurp",
    "tempfile",
    "lineinfile",
    "replace",
    "blockinfile",
    "copy",
    "find",
    "wait_for",
    "get_url",
    "uri",
    "group",
    "user",
    "cron",
    "hostname",
    "assemble",
    "service",
    "systemd",
    "systemd_service",
    "pip",
    "apt",
];
