//! The native modules' one table ([`MODULES`]: each module's names, how it runs, its argument
//! spec, whether it honours the task's timeout, the name its messages give it) and the
//! functions the controller and the agent ask it through: [`run_module`], the one entry
//! point (which makes the task's environment the module's: `environment`), and
//! [`native_name`], [`secret_options`], [`takes_timeout`]. A module's own file owns what it
//! does; nothing here knows how.

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
pub(crate) mod environment;
mod fetch;
mod file;
mod find;
mod fsattr;
mod get_url;
pub mod glob;
mod group;
mod host;
mod host_re;
pub(crate) mod hostname;
mod http;
mod lineinfile;
mod paths;
mod ping;
mod pip;
mod pip_req;
mod pipes;
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
    /// The task's `environment`: the module's process environment as the module sees it
    /// (see `environment`).
    pub environment: std::collections::BTreeMap<String, String>,
    /// The task's `timeout` in seconds: a command still running then is killed (with its
    /// process group) and the result is only `failed` and `timedout: {period}`. Only the
    /// modules [`takes_timeout`] names read it.
    pub timeout: Option<u64>,
    /// ansible's `python_module_rlimit_nofile`: the open-files soft limit of every process the
    /// module starts (ansible sets it in its module process, which those inherit).
    pub rlimit_nofile: Option<u64>,
}

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
    let (module, _) = entry(name)?;
    let _env = environment::enter(&invocation.environment, invocation.rlimit_nofile);
    Some(match module.run {
        Run::OwnArgs(run) => run(invocation),
        Run::Checked(run) => {
            let ctx = Ctx {
                name: module.message_name.unwrap_or(name),
                check_mode: invocation.check_mode,
                diff: invocation.diff,
            };
            argspec::begin(&invocation.args);
            argspec::finish(run(ctx, invocation))
        }
    })
}

fn short_name(name: &str) -> &str {
    tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy)
}

/// The options (with their aliases) a native module marks `no_log`: their values are secrets
/// wherever the controller would show them.
pub fn secret_options(name: &str) -> Vec<&'static str> {
    let Some(spec) = entry(name).and_then(|(module, _)| module.spec) else { return Vec::new() };
    let mut names = Vec::new();
    for opt in spec().options.iter().filter(|o| o.no_log) {
        names.push(opt.name);
        names.extend(opt.aliases.iter().copied());
    }
    names
}

/// Whether tack has a native module called `name`.
pub fn is_native(name: &str) -> bool {
    native_name(name).is_some()
}

/// The short name of the native module `name` names (any spelling), if tack has it: an
/// alias stays itself (`systemd_service`).
pub fn native_name(name: &str) -> Option<&'static str> {
    entry(name).map(|(_, short)| short)
}

/// Whether the native module `name` (any spelling) refuses by name what `args` (as the task
/// gave them) ask, where ansible's own module would do it: apt's whole-system upgrades,
/// `.deb` files and cleaning, `get_url`'s and `uri`'s URLs of a scheme tack's client does not
/// speak. The controller sends such a task to ansible's module instead, where it has
/// ansible-core; the refusal stays for a run without it.
pub fn beyond_native(name: &str, args: &serde_json::Map<String, serde_json::Value>) -> bool {
    let text = |key: &str| args.get(key).filter(|v| !v.is_null()).map(pyfmt::py_str);
    match native_name(name) {
        Some("apt") => apt::asks_beyond_native(args),
        Some("get_url" | "uri") => {
            text("url").is_some_and(|u| u.contains("://") && !fetch::speaks(&u, true))
        }
        _ => false,
    }
}

/// Whether the native module `name` (any spelling) honours [`Invocation::timeout`]; the
/// controller refuses a task `timeout` for any other.
pub fn takes_timeout(name: &str) -> bool {
    entry(name).is_some_and(|(module, _)| module.timeout)
}

/// The table's entry for `name` (any spelling), with the short name it matched.
fn entry(name: &str) -> Option<(&'static Module, &'static str)> {
    let short = short_name(name);
    MODULES.iter().find_map(|module| {
        std::iter::once(&module.name)
            .chain(module.aliases)
            .find(|n| **n == short)
            .map(|n| (module, *n))
    })
}

/// One native module: everything the agent runs it by and the controller asks of it.
struct Module {
    /// Its short name.
    name: &'static str,
    /// Other short names ansible-core routes to it, each answered as itself.
    aliases: &'static [&'static str],
    run: Run,
    /// Its argument spec, where it has one of its own: the controller masks the options it
    /// marks `no_log` ([`secret_options`]).
    spec: Option<fn() -> argspec::Spec>,
    /// Whether it stops itself at [`Invocation::timeout`].
    timeout: bool,
    /// The name ansible's messages give it when not the task's spelling: the name the action
    /// plugin in front of it runs it by.
    message_name: Option<&'static str>,
}

/// How a module is run.
#[derive(Clone, Copy)]
enum Run {
    /// Through the shared argument handling ([`argspec::begin`], [`argspec::finish`]), with
    /// a [`Ctx`].
    Checked(fn(Ctx, &Invocation) -> ModuleResult),
    /// Reading its arguments itself (`setup` predates the shared argument handling).
    OwnArgs(fn(&Invocation) -> ModuleResult),
}

impl Module {
    const fn new(name: &'static str, run: fn(Ctx, &Invocation) -> ModuleResult) -> Self {
        Module {
            name,
            aliases: &[],
            run: Run::Checked(run),
            spec: None,
            timeout: false,
            message_name: None,
        }
    }

    const fn own_args(name: &'static str, run: fn(&Invocation) -> ModuleResult) -> Self {
        Module {
            name,
            aliases: &[],
            run: Run::OwnArgs(run),
            spec: None,
            timeout: false,
            message_name: None,
        }
    }

    const fn spec(self, spec: fn() -> argspec::Spec) -> Self {
        Module { spec: Some(spec), ..self }
    }

    const fn aliases(self, aliases: &'static [&'static str]) -> Self {
        Module { aliases, ..self }
    }

    const fn timeout(self) -> Self {
        Module { timeout: true, ..self }
    }

    const fn messages_as(self, name: &'static str) -> Self {
        Module { message_name: Some(name), ..self }
    }
}

/// Every native module. Adding one is adding its entry here.
const MODULES: &[Module] = &[
    Module::own_args("setup", setup::run),
    Module::new("ping", ping::run),
    // It reads or removes one job file and returns: no timeout can pass while it runs.
    Module::new("async_status", async_status::run).timeout(),
    Module::new("command", |ctx, inv| command::run(ctx, inv, false)).spec(command::spec).timeout(),
    Module::new("shell", |ctx, inv| command::run(ctx, inv, true)).spec(command::spec).timeout(),
    Module::new("stat", stat::run).spec(stat::spec),
    Module::new("file", file::run).spec(file::spec),
    Module::new("slurp", slurp::run).spec(slurp::spec),
    Module::new("tempfile", tempname::run).spec(tempname::spec),
    Module::new("lineinfile", lineinfile::run).spec(lineinfile::spec),
    Module::new("replace", replace::run).spec(replace::spec),
    Module::new("blockinfile", blockinfile::run).spec(blockinfile::spec),
    // `copy`'s `validate` command stops at the timeout.
    Module::new("copy", copy::run).spec(copy::spec).timeout().messages_as("ansible.legacy.copy"),
    Module::new("find", find::run).spec(find::spec),
    Module::new("wait_for", wait_for::run).spec(wait_for::spec),
    Module::new("get_url", get_url::run).spec(get_url::spec),
    Module::new("uri", uri::run).spec(uri::spec).messages_as("ansible.legacy.uri"),
    Module::new("group", group::run).spec(group::spec),
    Module::new("user", user::run).spec(user::spec),
    Module::new("cron", cron::run).spec(cron::spec),
    Module::new("hostname", hostname::run).spec(hostname::spec),
    Module::new("assemble", assemble::run).spec(assemble::spec),
    Module::new("service", service::run).spec(service::spec).messages_as("ansible.legacy.service"),
    Module::new("systemd", systemd::run).spec(systemd::spec).aliases(&["systemd_service"]),
    Module::new("pip", pip::run).spec(pip::spec),
    Module::new("apt", apt::run).spec(apt::spec),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn every_name() -> impl Iterator<Item = &'static str> {
        MODULES.iter().flat_map(|m| std::iter::once(m.name).chain(m.aliases.iter().copied()))
    }

    #[test]
    fn each_name_is_one_modules() {
        let mut names: Vec<&str> = every_name().collect();
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn any_spelling_finds_a_module_and_an_alias_stays_itself() {
        for name in every_name() {
            for spelling in [
                name.to_string(),
                format!("ansible.builtin.{name}"),
                format!("ansible.legacy.{name}"),
            ] {
                assert_eq!(native_name(&spelling), Some(name));
            }
        }
        assert_eq!(native_name("ansible.builtin.systemd_service"), Some("systemd_service"));
        assert!(!is_native("debug"));
        assert!(!is_native("community.general.systemd"));
    }

    #[test]
    fn the_modules_that_take_the_timeout() {
        let timeout: Vec<&str> = every_name().filter(|n| takes_timeout(n)).collect();
        assert_eq!(timeout, ["async_status", "command", "shell", "copy"]);
        assert!(takes_timeout("ansible.legacy.copy"));
        assert!(!takes_timeout("debug"));
    }

    #[test]
    fn secret_options_come_from_the_specs_no_log_options() {
        let secret: Vec<(&str, Vec<&str>)> = every_name()
            .map(|n| (n, secret_options(n)))
            .filter(|(_, options)| !options.is_empty())
            .collect();
        assert_eq!(
            secret,
            [
                ("copy", vec!["content"]),
                ("get_url", vec!["url_password", "password"]),
                ("uri", vec!["url_password", "password"]),
                ("user", vec!["password", "ssh_key_passphrase"]),
            ]
        );
        assert_eq!(secret_options("ansible.builtin.uri"), ["url_password", "password"]);
    }

    #[test]
    fn messages_name_the_module_as_ansible_does() {
        // An unknown option fails the validation before the module does anything.
        let unsupported = |name: &str, required: &[(&str, &str)]| {
            let mut args = Map::new();
            for (key, value) in required {
                args.insert((*key).into(), Value::from(*value));
            }
            args.insert("bogus".into(), Value::from(1));
            let inv = Invocation { args, ..Invocation::default() };
            let result = run_module(name, &inv).unwrap_or_default();
            result.get("msg").and_then(Value::as_str).unwrap_or_default().to_string()
        };
        for (name, required, shown) in [
            ("ansible.builtin.copy", &[("dest", "/nonexistent")][..], "ansible.legacy.copy"),
            ("uri", &[("url", "http://127.0.0.1:9/")], "ansible.legacy.uri"),
            ("service", &[("name", "nonexistent"), ("state", "started")], "ansible.legacy.service"),
            ("ansible.builtin.stat", &[("path", "/nonexistent")], "ansible.builtin.stat"),
            ("systemd_service", &[("name", "nonexistent")], "systemd_service"),
        ] {
            let msg = unsupported(name, required);
            let expected = format!("Unsupported parameters for ({shown}) module: bogus");
            assert!(msg.starts_with(&expected), "{name}: {msg}");
        }
        assert!(run_module("debug", &Invocation::default()).is_none());
    }
}
