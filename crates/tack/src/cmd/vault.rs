//! `tack vault` (and `ansible-vault`): encrypt, decrypt, view, create, edit, rekey and
//! encrypt_string, reading and writing ansible-vault's formats.
//!
//! This module owns the flags, the order of checks, and which message goes to which stream
//! (ansible-core 2.21's `VaultCLI`); the format, the secret sources and the file operations are
//! `tack_vault`'s. It never prints a password or, except where the user asked for it on
//! stdout, a plaintext.

mod output;

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args as ClapArgs, Subcommand};
use tack_diag::{Diagnostic, ErrorClass};
use tack_py::ansible::unfrackpath;
use tack_vault::files::{self, Target};
use tack_vault::secrets::{self, SecretRequest};
use tack_vault::{TerminalPrompter, VaultSecrets};

use crate::options::{VaultOpts, VerbosityOpts};

#[derive(ClapArgs, Debug)]
#[command(about = "encryption/decryption utility for Ansible data files")]
pub(crate) struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// The flags every action takes.
#[derive(ClapArgs, Debug, Clone, Default)]
pub(crate) struct Common {
    #[command(flatten)]
    pub vault: VaultOpts,
    #[command(flatten)]
    pub verbosity: VerbosityOpts,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Action {
    /// Create new vault encrypted file
    Create {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        encrypt_id: EncryptId,
        /// allows editor to be opened when no tty attached
        #[arg(long = "skip-tty-check")]
        skip_tty_check: bool,
        #[arg(value_name = "file_name")]
        files: Vec<String>,
    },
    /// Decrypt vault encrypted file or string
    Decrypt {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        output: OutputOpt,
        #[arg(value_name = "file_name")]
        files: Vec<String>,
    },
    /// Edit vault encrypted file
    Edit {
        #[command(flatten)]
        common: Common,
        /// Accepted and unused, as in ansible-vault: edit keeps the file's own vault id.
        #[command(flatten)]
        encrypt_id: EncryptId,
        #[arg(value_name = "file_name")]
        files: Vec<String>,
    },
    /// View vault encrypted file
    View {
        #[command(flatten)]
        common: Common,
        #[arg(value_name = "file_name")]
        files: Vec<String>,
    },
    /// Encrypt YAML file
    Encrypt {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        output: OutputOpt,
        #[command(flatten)]
        encrypt_id: EncryptId,
        #[arg(value_name = "file_name")]
        files: Vec<String>,
    },
    /// Encrypt a string
    #[command(name = "encrypt_string")]
    EncryptString {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        output: OutputOpt,
        #[command(flatten)]
        encrypt_id: EncryptId,
        /// Prompt for the string to encrypt
        #[arg(short = 'p', long = "prompt")]
        prompt: bool,
        /// Do not hide input when prompted for the string to encrypt
        #[arg(long = "show-input")]
        show_input: bool,
        /// Specify the variable name
        #[arg(short = 'n', long = "name")]
        names: Vec<String>,
        /// Specify the variable name for stdin
        #[arg(long = "stdin-name")]
        stdin_name: Option<String>,
        // Options may follow the strings, as argparse takes them (`encrypt_string x --name
        // n`); a string that starts with `-` comes after `--`, or is a negative number.
        #[arg(value_name = "string_to_encrypt", allow_negative_numbers = true)]
        strings: Vec<String>,
    },
    /// Re-key a vault encrypted file
    Rekey {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        encrypt_id: EncryptId,
        /// new vault password file for rekey
        #[arg(long = "new-vault-password-file", conflicts_with = "new_vault_id")]
        new_vault_password_file: Option<String>,
        /// the new vault identity to use for rekey
        #[arg(long = "new-vault-id")]
        new_vault_id: Option<String>,
        #[arg(value_name = "file_name")]
        files: Vec<String>,
    },
}

#[derive(ClapArgs, Debug, Clone, Default)]
pub(crate) struct OutputOpt {
    /// output file name for encrypt or decrypt; use - for stdout
    #[arg(long = "output", value_name = "OUTPUT_FILE")]
    pub output: Option<String>,
}

impl OutputOpt {
    /// `--output` as ansible resolves it: `-` is stdout, a path is made absolute with its
    /// symlinks followed.
    fn target(&self) -> Option<Target> {
        self.output.as_deref().map(|o| match o {
            "-" => Target::Std,
            path => Target::Path(unfrackpath(std::path::Path::new(path), true, None)),
        })
    }
}

#[derive(ClapArgs, Debug, Clone, Default)]
pub(crate) struct EncryptId {
    /// the vault id used to encrypt (required if more than one vault-id is provided)
    #[arg(long = "encrypt-vault-id")]
    pub encrypt_vault_id: Option<String>,
}

fn options_error(message: impl Into<String>) -> anyhow::Error {
    Diagnostic::new(message).with_class(ErrorClass::Options).into()
}

/// Prints a line on stderr, as ansible's `display.display(msg, stderr=True)`.
fn say(message: &str) {
    tack_diag::display_log::record(tack_diag::display_log::Level::Info, message);
    eprintln!("{message}");
}

impl Action {
    fn common(&self) -> &Common {
        match self {
            Action::Create { common, .. }
            | Action::Decrypt { common, .. }
            | Action::Edit { common, .. }
            | Action::View { common, .. }
            | Action::Encrypt { common, .. }
            | Action::EncryptString { common, .. }
            | Action::Rekey { common, .. } => common,
        }
    }

    /// The input files, where the action has them.
    fn files(&self) -> &[String] {
        match self {
            Action::Create { files, .. }
            | Action::Decrypt { files, .. }
            | Action::Edit { files, .. }
            | Action::View { files, .. }
            | Action::Encrypt { files, .. }
            | Action::Rekey { files, .. } => files,
            Action::EncryptString { strings, .. } => strings,
        }
    }

    fn output(&self) -> Option<&OutputOpt> {
        match self {
            Action::Decrypt { output, .. }
            | Action::Encrypt { output, .. }
            | Action::EncryptString { output, .. } => Some(output),
            _ => None,
        }
    }

    fn encrypt_id(&self) -> Option<&str> {
        match self {
            Action::Create { encrypt_id, .. }
            | Action::Encrypt { encrypt_id, .. }
            | Action::EncryptString { encrypt_id, .. }
            | Action::Rekey { encrypt_id, .. } => encrypt_id.encrypt_vault_id.as_deref(),
            _ => None,
        }
    }
}

/// ansible-vault's `post_process_args` checks, in its order.
fn check_args(action: &Action) -> anyhow::Result<bool> {
    let common = action.common();
    if common.verbosity.verbose > 0 {
        return Err(options_error(
            "tack vault does not print ansible-vault's verbose (-v) messages yet; run it without -v",
        ));
    }
    for vault_id in &common.vault.vault_ids {
        if vault_id.contains(';') {
            return Err(options_error(format!(
                "'{vault_id}' is not a valid vault id. The character ';' is not allowed in vault ids"
            )));
        }
    }
    if action.output().is_some_and(|o| o.output.as_deref().is_some_and(|s| !s.is_empty()))
        && action.files().len() > 1
    {
        return Err(options_error("At most one input file may be used with the --output option"));
    }
    let mut read_stdin = false;
    if let Action::EncryptString { prompt, stdin_name, strings, .. } = action {
        read_stdin = strings.iter().any(|s| s == "-")
            || stdin_name.as_deref().is_some_and(|s| !s.is_empty())
            || (strings.is_empty() && !prompt);
        if *prompt && read_stdin {
            return Err(options_error(
                "The --prompt option is not supported if also reading input from stdin",
            ));
        }
    }
    Ok(read_stdin)
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let action = args.action;
    let read_stdin = check_args(&action)?;
    let config = crate::session::load_config(crate::session::DisplayLog::Keep)?;
    // The `verbosity` setting counts as `-v`s do, and a log that keeps verbose lines
    // (`log_verbosity`) needs them made.
    let verbosity = crate::session::verbosity(&config, action.common().verbosity.verbose);
    if tack_diag::display_log::noted_verbosity(verbosity) > 0 {
        return Err(options_error(
            "tack vault does not print ansible-vault's verbose (-v) messages yet (asked by the \
             verbosity or log_verbosity setting); run it without",
        ));
    }
    // Nothing here runs a module; ansible still reads the file and warns or fails as it does.
    crate::plugin_filter::load(&config)?;
    let settings = crate::vault_settings::load(&config)?;
    let _umask = files::RestrictiveUmask::set();
    let common = action.common().clone();
    let mut prompter = TerminalPrompter;

    let vault_ids = settings.vault.vault_ids_with(&common.vault.vault_ids);
    let password_files: Vec<PathBuf> =
        common.vault.vault_password_files.iter().map(|p| unfrackpath(p, false, None)).collect();
    let request = SecretRequest {
        vault_ids,
        password_files,
        ask_vault_pass: common.vault.ask_vault_pass || settings.ask_vault_pass,
        new_password: false,
        auto_prompt: true,
    };

    let encrypting = matches!(
        action,
        Action::Encrypt { .. } | Action::EncryptString { .. } | Action::Create { .. }
    );
    let (secrets, encrypt) = if encrypting {
        let encrypt_vault_id = action
            .encrypt_id()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .or_else(|| settings.vault.encrypt_identity.clone());
        let request = SecretRequest { new_password: true, ..request };
        let secrets = secrets::load_secrets(&settings.vault, request, &mut prompter)
            .map_err(Diagnostic::from)?;
        if secrets.secrets().len() > 1 && encrypt_vault_id.is_none() {
            let ids: Vec<&str> = secrets.secrets().iter().map(|s| s.vault_id.as_str()).collect();
            return Err(options_error(format!(
                "The vault-ids {} are available to encrypt. Specify the vault-id to encrypt with \
                 --encrypt-vault-id",
                ids.join(",")
            )));
        }
        if secrets.is_empty() {
            return Err(options_error("A vault password is required to use Ansible's Vault"));
        }
        let chosen = choose_encrypt_secret(&secrets, encrypt_vault_id.as_deref())?;
        (secrets, Some(chosen))
    } else {
        let secrets = secrets::load_secrets(&settings.vault, request, &mut prompter)
            .map_err(Diagnostic::from)?;
        if secrets.is_empty() {
            return Err(options_error("A vault password is required to use Ansible's Vault"));
        }
        (secrets, None)
    };

    match &action {
        Action::Encrypt { files: names, output, .. } => {
            let (index, vault_id) = encrypt.context("an encrypting action has its secret")?;
            if names.is_empty() && std::io::stdin().is_terminal() {
                say("Reading plaintext input from stdin");
            }
            let password = secrets.secrets()[index].password();
            let target = output.target();
            for name in names_or_stdin(names) {
                files::encrypt_file(&name, target.as_ref(), &secrets, password, &vault_id)
                    .map_err(Diagnostic::from)?;
            }
            if std::io::stdout().is_terminal() {
                say("Encryption successful");
            }
        }
        Action::Decrypt { files: names, output, .. } => {
            if names.is_empty() && std::io::stdin().is_terminal() {
                say("Reading ciphertext input from stdin");
            }
            let target = output.target();
            for name in names_or_stdin(names) {
                files::decrypt_file(&name, target.as_ref(), &secrets).map_err(Diagnostic::from)?;
            }
            if std::io::stdout().is_terminal() {
                say("Decryption successful");
            }
        }
        Action::View { files: names, .. } => {
            for name in names {
                let plaintext = files::plaintext(&Target::from_arg(name), &secrets)
                    .map_err(Diagnostic::from)?;
                output::page(&plaintext, settings.pager.as_deref());
            }
        }
        Action::Create { files: names, skip_tty_check, .. } => {
            let (index, vault_id) = encrypt.context("an encrypting action has its secret")?;
            let [name] = names.as_slice() else {
                return Err(options_error(
                    "ansible-vault create can take only one filename argument",
                ));
            };
            if !std::io::stdout().is_terminal() && !skip_tty_check {
                return Err(options_error("not a tty, editor cannot be opened"));
            }
            let password = secrets.secrets()[index].password();
            files::create_file(
                std::path::Path::new(name),
                &secrets,
                password,
                &vault_id,
                &settings.editor,
            )
            .map_err(Diagnostic::from)?;
        }
        Action::Edit { files: names, .. } => {
            for name in names {
                files::edit_file(std::path::Path::new(name), &secrets, &settings.editor)
                    .map_err(Diagnostic::from)?;
            }
        }
        Action::Rekey { files: names, new_vault_password_file, new_vault_id, .. } => {
            let encrypt_vault_id = action
                .encrypt_id()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .or_else(|| settings.vault.encrypt_identity.clone());
            let mut new_ids = if encrypt_vault_id.is_some() {
                settings.vault.identity_list.clone()
            } else {
                vec![]
            };
            new_ids.extend(new_vault_id.iter().cloned());
            let request = SecretRequest {
                vault_ids: new_ids,
                password_files: new_vault_password_file
                    .iter()
                    .map(|p| unfrackpath(std::path::Path::new(p), false, None))
                    .collect(),
                ask_vault_pass: common.vault.ask_vault_pass || settings.ask_vault_pass,
                new_password: true,
                auto_prompt: true,
            };
            let new_secrets = secrets::load_secrets(&settings.vault, request, &mut prompter)
                .map_err(Diagnostic::from)?;
            if new_secrets.is_empty() {
                return Err(options_error(
                    "A new vault password is required to use Ansible's Vault rekey",
                ));
            }
            let (index, new_id) = choose_encrypt_secret(&new_secrets, encrypt_vault_id.as_deref())?;
            let new_password = new_secrets.secrets()[index].password();
            for name in names {
                files::rekey_file(std::path::Path::new(name), &secrets, new_password, &new_id)
                    .map_err(Diagnostic::from)?;
            }
            say("Rekey successful");
        }
        Action::EncryptString { .. } => {
            let (index, vault_id) = encrypt.context("an encrypting action has its secret")?;
            encrypt_string(&action, read_stdin, &secrets, index, &vault_id, &mut prompter)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// ansible's `match_encrypt_secret`: the first secret labelled `vault_id`, or the first of all
/// when no id was asked for. Returns its index and label.
fn choose_encrypt_secret(
    secrets: &VaultSecrets,
    vault_id: Option<&str>,
) -> anyhow::Result<(usize, String)> {
    let all = secrets.secrets();
    let found = match vault_id {
        Some(id) => all.iter().position(|s| s.vault_id == id).ok_or_else(|| {
            Diagnostic::from(tack_vault::VaultError::EncryptIdNotFound {
                vault_id: id.to_string(),
                known: all.iter().map(|s| s.vault_id.clone()).collect(),
            })
        })?,
        None => 0,
    };
    let secret = all.get(found).context("a secret was loaded")?;
    Ok((found, secret.vault_id.clone()))
}

fn names_or_stdin(names: &[String]) -> Vec<Target> {
    if names.is_empty() {
        return vec![Target::Std];
    }
    names.iter().map(|n| Target::from_arg(n)).collect()
}

/// Where an encrypt_string input came from, as its stderr note names it.
#[derive(Clone, Copy)]
enum Source {
    Stdin,
    Args,
    Prompt,
}

impl Source {
    fn describe(self) -> &'static str {
        match self {
            Source::Stdin => "stdin",
            Source::Args => "the command line args",
            Source::Prompt => "the interactive prompt",
        }
    }
}

fn encrypt_string(
    action: &Action,
    read_stdin: bool,
    secrets: &VaultSecrets,
    index: usize,
    vault_id: &str,
    prompter: &mut TerminalPrompter,
) -> anyhow::Result<()> {
    use tack_vault::Prompter as _;
    let Action::EncryptString { output, prompt, show_input, names, stdin_name, strings, .. } =
        action
    else {
        anyhow::bail!("encrypt_string called for another action");
    };
    let mut inputs: Vec<(zeroize::Zeroizing<Vec<u8>>, Source, Option<String>)> = Vec::new();

    if *prompt {
        let answer = prompter
            .prompt_line("Variable name (enter for no name): ")?
            .ok_or_else(|| anyhow::anyhow!("EOF when reading a line"))?;
        let name = (!answer.is_empty()).then_some(answer);
        let text = if *show_input {
            prompter
                .prompt_line("String to encrypt:")?
                .map(|s| zeroize::Zeroizing::new(s.into_bytes()))
        } else {
            prompter
                .prompt_secret("String to encrypt (hidden): ")?
                .map(|s| zeroize::Zeroizing::new(s.as_bytes().to_vec()))
        };
        let text = text.ok_or_else(|| anyhow::anyhow!("EOF when reading a line"))?;
        if text.is_empty() {
            return Err(options_error(
                "The plaintext provided from the prompt was empty, not encrypting",
            ));
        }
        inputs.push((text, Source::Prompt, name));
    }

    if read_stdin {
        let stdout_tty = std::io::stdout().is_terminal();
        if stdout_tty {
            say("Reading plaintext input from stdin. (ctrl-d to end input, twice if your content \
                 does not already have a newline)");
        }
        let mut raw = zeroize::Zeroizing::new(Vec::new());
        std::io::stdin().lock().read_to_end(&mut raw)?;
        // Python reads stdin without newline translation on POSIX, so neither does tack.
        let text = raw;
        if text.is_empty() {
            return Err(options_error("stdin was empty, not encrypting"));
        }
        if stdout_tty && !text.ends_with(b"\n") {
            println!();
        }
        inputs.push((text, Source::Stdin, stdin_name.clone()));
    }

    let args: Vec<&String> = strings.iter().filter(|s| *s != "-").collect();
    if !names.is_empty() && args.len() > names.len() {
        // Vague on purpose, as ansible: never show which plaintext lost its name.
        say("The number of --name options do not match the number of args.");
        say(&format!(
            "The last named variable will be \"{}\". The rest will not have names.",
            names[names.len() - 1]
        ));
    }
    for (i, text) in args.into_iter().enumerate() {
        if text.is_empty() {
            return Err(options_error(
                "The plaintext provided from the command line args was empty, not encrypting",
            ));
        }
        let bytes = zeroize::Zeroizing::new(text.as_bytes().to_vec());
        inputs.push((bytes, Source::Args, names.get(i).cloned()));
    }

    let password = secrets.secrets()[index].password();
    let several = inputs.len() > 1;
    let mut blocks = Vec::new();
    let mut notes = String::new();
    for (i, (text, source, name)) in inputs.iter().enumerate() {
        let ciphertext =
            secrets.encrypt_with(text, password, Some(vault_id)).map_err(Diagnostic::from)?;
        blocks.push(output::vault_block(&ciphertext, name.as_deref()));
        if several {
            let n = i + 1;
            let from = source.describe();
            notes.push_str(&match name {
                Some(name) => format!(
                    "# The encrypted version of variable (\"{name}\", the string #{n} from {from}).\n"
                ),
                None => format!("# The encrypted version of the string #{n} from {from}.)\n"),
            });
        }
    }
    eprint!("{notes}");
    blocks.push(String::new());
    let target = output.target().unwrap_or(Target::Std);
    files::write_data(blocks.join("\n").as_bytes(), &target, true).map_err(Diagnostic::from)?;
    if std::io::stdout().is_terminal() {
        say("Encryption successful");
    }
    Ok(())
}
