//! The `password` lookup: a password read from a controller file, or generated (with Python's
//! `random.Random(seed)` when `seed=` is given, so it is reproducible) and written there as
//! ansible writes it (`PASSWORD[ salt=SALT[ ident=IDENT]]`, mode 0600, in a directory made
//! 0700), optionally returned hashed (`encrypt=`).
//!
//! This is the only lookup that writes files; it writes the one its term names and its lock
//! file beside it, nothing else.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use minijinja::value::{Value as JValue, ValueKind};
use sha1::{Digest, Sha1};

use super::options::{int, py_str, string};
use super::{Call, Entry, LookupError};
use crate::filters::random::PyRandom;

pub(super) const LOOKUPS: &[Entry] =
    &[Entry::new("password", password).refused_when_chosen("file", "written")];

const VALID: &[&str] = &["length", "encrypt", "chars", "ident", "seed"];
const SALT_CHARS: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789./";

struct Options {
    length: i64,
    encrypt: Option<String>,
    chars: Vec<String>,
    ident: Option<String>,
    seed: Option<String>,
}

impl Options {
    fn from(pairs: &[(String, JValue)]) -> Result<Options, LookupError> {
        let mut o = Options {
            length: 20,
            encrypt: None,
            chars: vec!["ascii_letters".into(), "digits".into(), ".,:-_".into()],
            ident: None,
            seed: None,
        };
        for (k, v) in pairs {
            let text = || Some(string(v)).filter(|_| !v.is_none());
            match k.as_str() {
                "length" => o.length = int("password", "length", v)?,
                "encrypt" => o.encrypt = text(),
                "ident" => o.ident = text(),
                "seed" => o.seed = text(),
                "chars" => {
                    o.chars = match v.kind() {
                        ValueKind::Seq | ValueKind::Iterable => {
                            v.try_iter()?.map(|c| py_str(&c)).collect()
                        }
                        _ => split_chars(&py_str(v)),
                    }
                }
                _ => {}
            }
        }
        Ok(o)
    }
}

/// A `chars=` string: comma-separated specs, `,,` standing for a comma.
fn split_chars(chars: &str) -> Vec<String> {
    let mut out = Vec::new();
    if chars.contains(",,") {
        out.push(",".to_string());
    }
    out.extend(chars.replace(",,", ",").split(',').filter(|c| !c.is_empty()).map(str::to_string));
    out
}

/// `_gen_candidate_chars`: `string` module names expanded, quotes removed.
fn candidate_chars(specs: &[String]) -> Vec<char> {
    const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
    const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const DIGITS: &str = "0123456789";
    const PUNCT: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
    let mut all = String::new();
    for spec in specs {
        match spec.as_str() {
            "ascii_letters" => all.push_str(&format!("{LOWER}{UPPER}")),
            "ascii_lowercase" => all.push_str(LOWER),
            "ascii_uppercase" => all.push_str(UPPER),
            "digits" => all.push_str(DIGITS),
            "hexdigits" => all.push_str("0123456789abcdefABCDEF"),
            "octdigits" => all.push_str("01234567"),
            "punctuation" => all.push_str(PUNCT),
            "whitespace" => all.push_str(" \t\n\r\x0b\x0c"),
            "printable" => all.push_str(&format!("{DIGITS}{LOWER}{UPPER}{PUNCT} \t\n\r\x0b\x0c")),
            other => all.push_str(other),
        }
    }
    all.chars().filter(|c| *c != '"' && *c != '\'').collect()
}

/// `random_password(length, chars, seed)`.
fn random_password(length: i64, chars: &[char], seed: Option<&str>) -> Result<String, LookupError> {
    if length > 0 && chars.is_empty() {
        return Err(LookupError::failed("Cannot choose from an empty sequence"));
    }
    let mut rng = match seed {
        Some(s) => PyRandom::from_seed(&JValue::from(s)),
        None => {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes)
                .map_err(|e| LookupError::failed(format!("no random source: {e}")))?;
            PyRandom::from_seed(&JValue::from(u128::from_le_bytes(bytes) as i128 & i128::MAX))
        }
    };
    Ok((0..length.max(0)).map(|_| chars[rng.below(chars.len() as u128) as usize]).collect())
}

/// `_parse_parameters`: the path and the `key=value` options after it.
/// A term's path and its `key=value` options (`None` when it gave none).
type Term = (String, Option<Vec<(String, JValue)>>);

fn parse_term(term: &str) -> Result<Term, LookupError> {
    let Some((first, rest)) = term.split_once(' ') else { return Ok((term.to_string(), None)) };
    let pairs =
        tack_loader::kv::parse_kv(rest, false).map_err(|e| LookupError::failed(e.to_string()))?;
    let mut relpath = first.to_string();
    let mut params = Vec::new();
    for (k, v) in pairs {
        if k == "_raw_params" {
            relpath = format!("{relpath} {v}");
            if !term.starts_with(&relpath) {
                return Err(LookupError::failed(
                    "Unrecognized value after key=value parameters given to password lookup",
                ));
            }
        } else {
            params.push((k, JValue::from(v)));
        }
    }
    let invalid: Vec<&str> =
        params.iter().map(|(k, _)| k.as_str()).filter(|k| !VALID.contains(k)).collect();
    if !invalid.is_empty() {
        return Err(LookupError::failed(format!(
            "Unrecognized parameter(s) given to password lookup: {}",
            invalid.join(", ")
        )));
    }
    Ok((relpath, Some(params).filter(|p| !p.is_empty())))
}

/// `_parse_content`: password, salt and ident of a stored line.
fn parse_content(content: &str) -> (String, Option<String>, Option<String>) {
    let Some(i) = content.rfind(" salt=") else { return (content.to_string(), None, None) };
    let password = content[..i].to_string();
    let rem = &content[i + " salt=".len()..];
    if rem.is_empty() {
        return (password, None, None);
    }
    match rem.rfind(" ident=") {
        Some(j) => {
            (password, Some(rem[..j].to_string()), Some(rem[j + " ident=".len()..].to_string()))
        }
        None => (password, Some(rem.to_string()), None),
    }
}

fn os_error(e: &std::io::Error, path: &Path) -> LookupError {
    LookupError::failed(tack_py::oserror::os_error(e, path))
}

fn make_dirs(dir: &Path) -> Result<(), LookupError> {
    if dir.as_os_str().is_empty() || dir.exists() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| os_error(&e, dir))
}

/// The lock ansible takes beside the file; removed on drop.
struct Lock(Option<PathBuf>);

impl Drop for Lock {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn lock(path: &Path) -> Result<Lock, LookupError> {
    if path == Path::new("/dev/null") {
        return Ok(Lock(None));
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    make_dirs(dir)?;
    let digest = Sha1::digest(path.as_os_str().as_encoded_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let lockfile = dir.join(format!("{hex}.ansible_lockfile"));
    for attempt in 0..4 {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&lockfile) {
            Ok(_) => return Ok(Lock(Some(lockfile))),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 3 => {
                std::thread::sleep(std::time::Duration::from_secs(1 << attempt));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => break,
            Err(e) => return Err(os_error(&e, &lockfile)),
        }
    }
    Err(LookupError::failed(format!(
        "Password lookup cannot get the lock in 7 seconds, abort...This may caused by un-removed \
         lockfileyou can manually remove it from controller machine at {} and try again",
        lockfile.display()
    )))
}

fn write_file(path: &Path, content: &str) -> Result<(), LookupError> {
    make_dirs(path.parent().unwrap_or(Path::new("")))?;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| os_error(&e, path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| os_error(&e, path))?;
    f.write_all(format!("{content}\n").as_bytes()).map_err(|e| os_error(&e, path))
}

fn salt_size(encrypt: &str) -> usize {
    match encrypt {
        "bcrypt" => 22,
        "sha256_crypt" | "sha512_crypt" => 16,
        _ => 8,
    }
}

fn password(call: &Call) -> Result<Vec<JValue>, LookupError> {
    let mut out = Vec::new();
    for term in &call.terms {
        let (relpath, params) = parse_term(&py_str(term))?;
        // ansible's `set_options(direct=params)` replaces the keyword arguments entirely.
        let o = Options::from(params.as_deref().unwrap_or(&call.kwargs))?;
        let path = call.env.loader().path_dwim(&relpath);
        let chars = candidate_chars(&o.chars);
        let devnull = path == Path::new("/dev/null");
        let (plaintext, mut salt, mut ident, mut changed);
        {
            let _lock = lock(&path)?;
            let content = match std::fs::read(&path) {
                Ok(bytes) if !devnull => {
                    Some(tack_py::text::rstrip(&String::from_utf8_lossy(&bytes)).to_string())
                }
                Ok(_) => None,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(os_error(&e, &path)),
            };
            changed = false;
            match content {
                None => {
                    plaintext = random_password(o.length, &chars, o.seed.as_deref())?;
                    salt = None;
                    ident = None;
                    changed = true;
                }
                Some(c) => (plaintext, salt, ident) = parse_content(&c),
            }
            if let Some(enc) = &o.encrypt
                && salt.is_none()
            {
                changed = true;
                let salt_chars: Vec<char> = SALT_CHARS.chars().collect();
                salt = Some(random_password(salt_size(enc) as i64, &salt_chars, None)?);
            }
            match (&ident, &o.ident) {
                (None, _) => ident = o.ident.clone(),
                (Some(stored), Some(given)) if stored != given => {
                    return Err(LookupError::failed(format!(
                        "The ident parameter provided ({given}) does not match the stored one ({stored})."
                    )));
                }
                _ => {}
            }
            if o.encrypt.as_deref() == Some("bcrypt") && ident.is_none() {
                ident = Some("2b".into());
                changed = true;
            }
            if changed && !devnull {
                let content = match (&o.encrypt, &salt, &ident) {
                    (None, None, _) => plaintext.clone(),
                    (_, Some(s), Some(i)) => format!("{plaintext} salt={s} ident={i}"),
                    (_, Some(s), None) => format!("{plaintext} salt={s}"),
                    (Some(_), None, _) => plaintext.clone(),
                };
                write_file(&path, &content)?;
            }
        }
        match &o.encrypt {
            Some(enc) => {
                let hashed = crate::filters::hashing::do_encrypt(
                    &plaintext,
                    enc,
                    salt.as_deref(),
                    ident.as_deref(),
                )
                .map_err(LookupError::failed)?;
                out.push(JValue::from(hashed));
            }
            None => out.push(JValue::from(plaintext)),
        }
    }
    Ok(out)
}
