//! What a run is given and what it keeps about each host across plays: the run's context
//! (inventory, loader, templar, settings, links), each host's state between plays, and how the
//! run ended.

use std::path::PathBuf;

use tack_inventory::Inventory;
use tack_loader::DataLoader;
use tack_playbook::tags::TagFilter;
use tack_template::Templar;
use tack_yaml::Mapping;

/// The ansible-core version tack reproduces (`ansible_version`).
pub const ANSIBLE_VERSION: &str = "2.21.5";

/// What a run needs from the command line and the loaded project.
pub struct RunContext<'a> {
    pub inventory: &'a Inventory,
    pub loader: &'a DataLoader,
    pub templar: &'a Templar,
    pub extra_vars: &'a Mapping,
    pub tags: &'a TagFilter,
    /// Loads the task files `include_tasks` names at run time.
    pub tasks: &'a tack_playbook::Loader<'a>,
    pub facts: RunFacts,
    /// `--start-at-task`.
    pub start_at: Option<crate::play::start_at::StartAt>,
    /// `--force-handlers`: the default of the plays' `force_handlers`.
    pub force_handlers: bool,
    /// The run's links to its hosts.
    pub links: &'a tack_links::Links<'a>,
    /// `tack plan`: the paths on each host an earlier task would change.
    pub pending: crate::plan::pending::Pending,
    /// The fact cache (`fact_caching`): every host's facts, for the run or between runs.
    pub fact_cache: std::sync::Arc<crate::fact_cache::FactCache>,
}

/// A host's state across the plays of a run.
#[derive(Clone, Default)]
pub struct HostState {
    /// The host failed a task (not ignored): it runs nothing more.
    pub failed: bool,
    /// The host could not be reached (not ignored): it runs nothing more.
    pub unreachable: bool,
    /// A batch ended with the host unreachable: ansible's playbook executor keeps it among
    /// its unreachable hosts and hands them to every later play, so a `clear_host_errors`
    /// lasts to the end of its play only.
    pub unreachable_before: bool,
    /// The host's include failed to load and a rescue caught it: it runs nothing more, but
    /// the run's exit code does not count it (ansible's `_failed_hosts` without a failed
    /// iterator state).
    pub excluded: bool,
    /// Its `set_fact` values and registered results, kept for later plays.
    pub set_facts: Option<std::sync::Arc<tack_template::Layer>>,
    /// What `include_vars` loaded for it, kept for later plays.
    pub included_vars: Option<std::sync::Arc<tack_template::Layer>>,
}

impl HostState {
    /// The host runs nothing more in this run.
    pub fn out(&self) -> bool {
        self.failed || self.unreachable || self.excluded
    }
}

/// How a run ended: ansible-playbook's exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunStatus {
    Ok,
    /// A host's final state is failed (exit code 2).
    Failed,
    /// A host could not be reached (exit code 4, over failed hosts).
    Unreachable,
}

impl RunStatus {
    pub fn exit_code(self) -> u8 {
        match self {
            RunStatus::Ok => 0,
            RunStatus::Failed => 2,
            RunStatus::Unreachable => 4,
        }
    }
}

/// A strategy plugin not in ansible.builtin that the run names (see
/// `RunFacts::external_strategies`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalStrategy {
    /// The name plays and the setting give it (`ns.col.external`).
    pub name: String,
    /// ansible-core's strategy it only inherits (`linear`, `free` or `host_pinned`), which
    /// tack runs as its own; else why tack cannot run it (a clause for the refusal).
    pub runs_as: Result<String, String>,
}

/// What the magic variables say about the run itself.
#[derive(Debug, Clone, Default)]
pub struct RunFacts {
    pub check_mode: bool,
    /// `error_on_missing_handler = False`: a notification no handler answers is a warning
    /// (ansible's default, `false` here, fails the host's task).
    pub warn_on_missing_handler: bool,
    /// What ansible's play context adds to a running task's variables from settings where
    /// no variable names them (`ansible_module_compression`, `ansible_shell_executable`,
    /// `ansible_pipelining`, ...); the connection, user, key and timeout come from `ssh`.
    pub play_context_vars: Mapping,
    /// `tack plan`: nothing that could change a host runs (see `crate::plan`); implies
    /// `check_mode`.
    pub plan: bool,
    pub diff_mode: bool,
    /// What diff mode reads from the configuration.
    pub diff: tack_report::callback::diff::DiffSettings,
    pub forks: i64,
    pub verbosity: i64,
    pub run_tags: Vec<String>,
    pub skip_tags: Vec<String>,
    pub inventory_sources: Vec<String>,
    pub config_file: Option<PathBuf>,
    /// `ansible_playbook_python`: the Python ansible-core runs with on the controller, as
    /// the binary finds it without starting it (`None`: no such Python is known, and the
    /// variable stays undefined rather than name one that is not).
    pub playbook_python: Option<String>,
    pub limit: Option<String>,
    /// The `async_dir` setting as configured (`ANSIBLE_ASYNC_DIR`, `[defaults] async_dir`).
    pub async_dir: String,
    /// The `python_module_rlimit_nofile` setting: the modules' open-files soft limit where a
    /// host's `ansible_python_module_rlimit_nofile` does not say.
    pub python_module_rlimit_nofile: Option<u64>,
    /// The `inject_invocation` setting: modules' results gain `invocation` where a host's
    /// `ansible_inject_invocation` does not say.
    pub inject_invocation: bool,
    /// Callback plugins written in Python run: each result carries the connection its task
    /// ran with (`task.connection` to them). Worked out only then: nothing else reads it.
    pub result_connections: bool,
    /// The `strategy` setting (`ANSIBLE_STRATEGY`): the strategy of a play that names none
    /// (`None`: `linear`, ansible's default).
    pub default_strategy: Option<String>,
    /// Strategy plugins not in ansible.builtin the run names (`tack_actions::python_strategy`):
    /// the plays of one that only inherits one of ansible-core's strategies run with tack's
    /// own, with ansible's deprecation; any other is refused with why.
    pub external_strategies: Vec<ExternalStrategy>,
    /// `inject_facts_as_vars`: `None` at its default (each fact is a top-level variable too,
    /// with ansible's deprecation when one is read so), `Some(true)` the same without the
    /// deprecation, `Some(false)` facts only under `ansible_facts`.
    pub inject_facts: Option<bool>,
    /// The `poll_interval` setting (`DEFAULT_POLL_INTERVAL`): an `async` task's `poll` where
    /// it names none (`None`: ansible's default, 15).
    pub poll_interval: Option<i64>,
    /// The `any_errors_fatal` setting: the keyword's value where nothing sets it.
    pub any_errors_fatal: bool,
    /// `retry_files_enabled`: after each playbook with failed or unreachable hosts, their
    /// names go to `<playbook name>.retry` in this directory (`retry_files_save_path`), else
    /// beside the playbook (`None` inside: the playbook's directory).
    pub retry_files: Option<Option<PathBuf>>,
    /// What the configuration sets for ssh links.
    pub ssh: tack_links::link_target::SshDefaults,
    /// Python interpreter discovery (`interpreter_python`, its fallback list).
    pub interpreter: tack_links::interpreter::InterpreterSettings,
    /// `DEFAULT_GATHERING`: when a play gathers facts without saying.
    pub gathering: Gathering,
    /// `DEFAULT_NO_LOG` (`[defaults] no_log`): the `no_log` of every task that does not say.
    pub no_log: bool,
}

/// ansible's `gathering` setting: when a play's implicit fact gathering runs on a host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Gathering {
    /// Unless the play says `gather_facts: false`.
    #[default]
    Implicit,
    /// Only when the play says `gather_facts: true`.
    Explicit,
    /// As `Implicit`, but not on a host whose facts were gathered already (this run, or in
    /// the fact cache).
    Smart,
}
