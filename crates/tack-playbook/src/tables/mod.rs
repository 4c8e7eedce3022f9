//! Facts about ansible-core 2.21.5 that the loader needs: which keywords each playbook object
//! accepts (with their types), which plugin names ansible-core ships, and how builtin names are
//! routed. The data is generated from ansible-core itself by `scripts/gen-playbook-tables.py`;
//! this module only gives it types and lookups.

mod generated;

pub use generated::*;

/// The declared type of a keyword (`FieldAttribute.isa`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    Str,
    Int,
    Float,
    Bool,
    Percent,
    List,
    Dict,
    Class,
    Any,
}

/// One keyword of a playbook object, as ansible-core declares it.
#[derive(Debug, Clone, Copy)]
pub struct Attribute {
    pub keyword: Keyword,
    pub name: &'static str,
    pub isa: Isa,
    /// Inherited from the parent block / role / play when unset.
    pub inheritable: bool,
    /// Never templated (`collections`, `vars`, `register`, `listen`).
    pub is_static: bool,
    pub required: bool,
    /// Parent values are appended (lists such as `tags`).
    pub extend: bool,
    pub prepend: bool,
    /// Load order: lower first.
    pub priority: i32,
    pub always_post_validate: bool,
    /// Allowed item types for lists, by Python type name.
    pub listof: &'static [&'static str],
}

/// Where ansible-core's builtin runtime metadata sends a plugin name.
#[derive(Debug, Clone, Copy)]
pub enum Routing {
    /// Another builtin plugin (short name).
    Redirect(&'static str),
    /// A collection's plugin (fully qualified name): found only where that collection is
    /// installed.
    Collection(&'static str),
    /// Removed: using it is an error with this text.
    Tombstone { warning_text: &'static str, removed: &'static str, by_date: bool },
    /// Still there, deprecated: using it warns with this text, naming the version that
    /// removes it.
    Deprecated { warning_text: &'static str, removal_version: &'static str },
}

/// The playbook objects whose keyword sets differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Play,
    Block,
    Task,
    Handler,
    TaskInclude,
    IncludeRole,
    RoleInclude,
    PlaybookInclude,
    RoleMetadata,
    LoopControl,
}

impl ObjectKind {
    pub fn attributes(self) -> &'static [Attribute] {
        match self {
            ObjectKind::Play => PLAY_ATTRIBUTES,
            ObjectKind::Block => BLOCK_ATTRIBUTES,
            ObjectKind::Task => TASK_ATTRIBUTES,
            ObjectKind::Handler => HANDLER_ATTRIBUTES,
            ObjectKind::TaskInclude => TASK_INCLUDE_ATTRIBUTES,
            ObjectKind::IncludeRole => INCLUDE_ROLE_ATTRIBUTES,
            ObjectKind::RoleInclude => ROLE_INCLUDE_ATTRIBUTES,
            ObjectKind::PlaybookInclude => PLAYBOOK_INCLUDE_ATTRIBUTES,
            ObjectKind::RoleMetadata => ROLE_METADATA_ATTRIBUTES,
            ObjectKind::LoopControl => LOOP_CONTROL_ATTRIBUTES,
        }
    }

    /// The class name ansible uses in its messages (`'x' is not a valid attribute for a Play`).
    pub fn class_name(self) -> &'static str {
        match self {
            ObjectKind::Play => "Play",
            ObjectKind::Block => "Block",
            ObjectKind::Task => "Task",
            ObjectKind::Handler => "Handler",
            ObjectKind::TaskInclude => "TaskInclude",
            ObjectKind::IncludeRole => "IncludeRole",
            ObjectKind::RoleInclude => "RoleInclude",
            ObjectKind::PlaybookInclude => "PlaybookInclude",
            ObjectKind::RoleMetadata => "RoleMetadata",
            ObjectKind::LoopControl => "LoopControl",
        }
    }

    pub fn attribute(self, name: &str) -> Option<&'static Attribute> {
        self.attributes().iter().find(|a| a.name == name)
    }
}

/// The builtin routing entry for a plugin type (`modules`, `action`, `lookup`) and short name.
pub fn routing(plugin_type: &str, short: &str) -> Option<Routing> {
    BUILTIN_ROUTING.iter().find(|(t, n, _)| *t == plugin_type && *n == short).map(|(_, _, r)| *r)
}

/// Action-name groups ansible-core treats specially (`C._ACTION_*`), by short name.
pub mod actions {
    pub const META: &[&str] = &["meta"];
    pub const INCLUDE_TASKS: &[&str] = &["include_tasks"];
    pub const IMPORT_TASKS: &[&str] = &["import_tasks"];
    pub const INCLUDE_ROLE: &[&str] = &["include_role"];
    pub const IMPORT_ROLE: &[&str] = &["import_role"];
    pub const IMPORT_PLAYBOOK: &[&str] = &["import_playbook"];
    pub const SET_FACT: &[&str] = &["set_fact"];
    pub const INCLUDE_VARS: &[&str] = &["include_vars"];
    /// Modules that take a free-form command line (`MODULE_REQUIRE_ARGS_SIMPLE`).
    pub const FREEFORM: &[&str] =
        &["command", "raw", "script", "shell", "win_command", "win_shell"];
    /// Builtin actions whose free-form string is kept as `_raw_params`.
    pub const RAW_PARAMS: &[&str] = &[
        "include_vars",
        "include_tasks",
        "include_role",
        "import_tasks",
        "import_role",
        "add_host",
        "group_by",
        "set_fact",
        "meta",
        "command",
        "raw",
        "script",
        "shell",
        "win_command",
        "win_shell",
    ];
    /// Names accepted as a task's action even before plugin resolution (`BUILTIN_TASKS`).
    pub const BUILTIN_TASKS: &[&str] =
        &["meta", "include_tasks", "include_role", "import_tasks", "import_role"];

    /// Whether `name` (short, `ansible.builtin.` or `ansible.legacy.` spelling) is in `group`.
    pub fn is(name: &str, group: &[&str]) -> bool {
        let short =
            tack_py::ansible::short_name(name, tack_py::ansible::CoreCollections::BuiltinOrLegacy);
        group.contains(&short)
    }
}
