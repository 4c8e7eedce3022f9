//! The ways configuration can fail, with ansible's wording, and their conversion to
//! [`tack_diag::Diagnostic`]. Every error here is one ansible raises while loading its
//! configuration, and so exits with code 5; those ansible has no counterpart for say so.

use std::path::PathBuf;

use tack_diag::{Diagnostic, ErrorClass};
use tack_py::repr::str_repr;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("Unsupported configuration file extension for {path}: {ext}")]
    UnsupportedExtension { path: String, ext: String },

    #[error("Unsupported configuration file type: {kind}")]
    UnsupportedType { path: String, kind: String },

    /// configparser refused the file; `message` is its text.
    #[error("Error reading config file ({path}): {message}")]
    Parse { path: String, message: String },

    #[error("{}", tack_py::oserror::os_error(.source, std::path::Path::new(.path)))]
    Read { path: String, source: std::io::Error },

    /// tack only: ansible decodes such a file with surrogate escapes; tack refuses it.
    #[error("Error reading config file ({path}): the file is not valid UTF-8 (byte {offset})")]
    NotUtf8 { path: String, offset: usize },

    #[error(
        "Config {label} from {} has an invalid value: Invalid value provided for {}: {raw}",
        str_repr(.origin), str_repr(.type_name)
    )]
    InvalidValue { label: String, origin: String, type_name: String, raw: String },

    #[error("Invalid value {value} for config {label}.")]
    InvalidChoice { label: String, value: String, valid: String },

    #[error("Unhandled exception when retrieving {label}: {reason}")]
    Unhandled { label: String, reason: String },

    /// tack only: ansible's integers have no upper bound, tack's settings are 64-bit.
    #[error(
        "Config {label} from {} has an invalid value: {raw} does not fit in a 64-bit integer",
        str_repr(.origin)
    )]
    OutOfRange { label: String, origin: String, raw: String },

    /// tack only: a name passed to [`crate::Config::apply_cli`] that no setting has.
    #[error("No config definition exists for {}.", str_repr(.name))]
    UnknownSetting { name: String },

    /// tack only: ansible would read the variable with surrogate escapes.
    #[error("environment variable {name} is not valid UTF-8")]
    NonUtf8Env { name: String },

    /// tack only: the working directory cannot be represented as ansible's string paths.
    #[error("the working directory {} is not valid UTF-8", .path.display())]
    NonUtf8Path { path: PathBuf },

    #[error("cannot determine the working directory: {source}")]
    Cwd { source: std::io::Error },
}

impl ConfigError {
    /// The help ansible prints after the message (the valid choices), if any.
    pub fn help(&self) -> Option<String> {
        match self {
            ConfigError::InvalidChoice { valid, .. } => Some(format!("Valid values are: {valid}")),
            _ => None,
        }
    }

    /// The text ansible prints when its configuration fails to load, before its display is
    /// set up: `ERROR: <message> <help>` on one block. ansible follows it with a Python
    /// traceback, which tack does not reproduce.
    pub fn startup_message(&self) -> String {
        let text = format!("{} {}", self, self.help().unwrap_or_default());
        format!("ERROR: {}\n", text.trim())
    }

    /// ansible exits with 5 when its configuration cannot be loaded, whatever the failure.
    pub fn exit_code(&self) -> i32 {
        ErrorClass::Options.exit_code()
    }
}

impl From<&ConfigError> for Diagnostic {
    fn from(err: &ConfigError) -> Diagnostic {
        let diag = Diagnostic::new(err.to_string()).with_class(ErrorClass::Options);
        match err.help() {
            Some(help) => diag.with_help(help),
            None => diag,
        }
    }
}

impl From<ConfigError> for Diagnostic {
    fn from(err: ConfigError) -> Diagnostic {
        Diagnostic::from(&err)
    }
}
