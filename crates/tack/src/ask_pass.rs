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
}

/// The line typed at the terminal after `prompt`; `None` at end of input (Ctrl-D on an
/// empty line), which ansible takes as no password.
pub fn ask(prompt: &str, flag: &'static str) -> Result<Option<Zeroizing<String>>, AskError> {
    match tack_engine::terminal::getpass(prompt) {
        Ok(typed) => Ok(typed.map(Zeroizing::new)),
        Err(_) => Err(AskError::NoTerminal { flag }),
    }
}
