//! `-K` (`--ask-become-pass`): the become password asked at the controlling terminal, as
//! ansible asks it (`tack_engine::terminal::getpass`). Without a terminal ansible falls
//! back to reading stdin with a warning about the echo; tack refuses that by name instead.

use zeroize::Zeroizing;

/// Why no password could be asked.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(
        "tack does not support {flag} without a terminal to ask on yet (ansible reads stdin \
         then); give the password with --become-password-file"
    )]
    NoTerminal { flag: &'static str },
    #[error("cannot ask for the become password ({flag}) at the terminal: {source}")]
    Terminal {
        flag: &'static str,
        #[source]
        source: std::io::Error,
    },
}

/// The line typed at the terminal after `prompt`; `None` at end of input (Ctrl-D on an
/// empty line), which ansible takes as no password.
pub fn ask(prompt: &str, flag: &'static str) -> Result<Option<Zeroizing<String>>, AskError> {
    tack_engine::terminal::getpass(prompt).map_err(|source| {
        // Opening `/dev/tty` without a controlling terminal fails with ENXIO.
        if source.raw_os_error() == Some(libc::ENXIO) {
            AskError::NoTerminal { flag }
        } else {
            AskError::Terminal { flag, source }
        }
    })
}
