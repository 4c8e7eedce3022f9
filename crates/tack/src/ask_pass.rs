//! `-k` (`--ask-pass`) and `-K` (`--ask-become-pass`): the connection and become passwords
//! asked at the controlling terminal, as ansible asks them (`tack_actions::terminal::getpass`).
//! Without a terminal ansible falls back to reading stdin with a warning about the echo;
//! tack refuses that by name instead.

use zeroize::Zeroizing;

/// Which password is asked, with the option or setting that asks for it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Asked {
    Connection(&'static str),
    Become(&'static str),
}

impl Asked {
    fn flag(self) -> &'static str {
        match self {
            Asked::Connection(flag) | Asked::Become(flag) => flag,
        }
    }

    fn what(self) -> &'static str {
        match self {
            Asked::Connection(_) => "connection",
            Asked::Become(_) => "become",
        }
    }

    /// The option that gives the same password without a terminal.
    fn file_option(self) -> &'static str {
        match self {
            Asked::Connection(_) => "--connection-password-file",
            Asked::Become(_) => "--become-password-file",
        }
    }
}

/// Why no password could be asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AskError {
    #[error(
        "tack does not support {flag} without a terminal to ask on yet (ansible reads stdin \
         then); give the password with {file_option}",
        flag = .0.flag(),
        file_option = .0.file_option()
    )]
    NoTerminal(Asked),
    #[error("cannot ask for the {what} password ({flag}) at the terminal: {source}", what = asked.what(), flag = asked.flag())]
    Terminal {
        asked: Asked,
        #[source]
        source: std::io::Error,
    },
}

/// The line typed at the terminal after `prompt`; `None` at end of input (Ctrl-D on an
/// empty line), which ansible takes as no password.
pub(crate) fn ask(prompt: &str, asked: Asked) -> Result<Option<Zeroizing<String>>, AskError> {
    tack_actions::terminal::getpass(prompt).map_err(|source| {
        // Opening `/dev/tty` without a controlling terminal fails with ENXIO.
        if source.raw_os_error() == Some(libc::ENXIO) {
            AskError::NoTerminal(asked)
        } else {
            AskError::Terminal { asked, source }
        }
    })
}
