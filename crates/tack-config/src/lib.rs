//! ansible's configuration: finding and reading `ansible.cfg`, the `ANSIBLE_*` environment
//! variables, and every setting typed, defaulted and prioritised as ansible-core 2.21 does.
//!
//! ```no_run
//! use tack_config::{Config, Context};
//!
//! let ctx = Context::from_process()?;
//! let config = Config::load(&ctx)?;      // search, read, resolve every setting
//! config.emit_notices();                  // ansible's start-up warnings and deprecations
//! println!("{} forks, file {:?}", config.forks(), config.config_file());
//! for set in config.user_set_settings() {
//!     println!("{} from {}", set.name, set.origin.label());
//! }
//! # Ok::<(), tack_config::ConfigError>(())
//! ```
//!
//! The settings are ansible's own list (`ansible/config/base.yml`, plus the options of the ssh
//! connection, the default callback and the sh shell), generated into `table.rs` by
//! `scripts/gen-config-table.py`. Each is resolved as ansible resolves it at start-up: the
//! environment over the file over the default, converted to its type, checked against its
//! choices; the first invalid one, in ansible's order, fails the load with ansible's message.
//!
//! This crate knows nothing of inventories, playbooks or the command line: the binary applies
//! command-line options with [`Config::apply_cli`], and host variables that override plugin
//! options are the engine's to apply.

mod accessors;
mod config;
mod context;
mod convert;
pub mod def;
mod discover;
mod error;
mod ini;
mod notices;
mod paths;
mod pyrepr;
mod resolve;
mod table;
mod value;

pub use accessors::{
    DuplicateKeyPolicy, Gathering, HashBehaviour, MismatchPolicy, PlaybookVarsRoot,
};
pub use config::{Config, UserSetting, WithVarsError};
pub use context::{Context, SYSTEM_CONFIG};
pub use discover::{Discovery, find_config_file};
pub use error::ConfigError;
pub use ini::IniFile;
pub use notices::Notice;
pub use value::{Resolved, SettingOrigin, SettingValue};
