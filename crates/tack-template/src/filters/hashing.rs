//! Hashing filters: `hash`, `checksum`, `sha1`, `md5`, `password_hash`.
//!
//! `password_hash` reproduces what ansible-core does where libxcrypt is installed (the reference
//! machine): the salt the user gives is handed to `crypt_gensalt` as random bytes, which
//! re-encodes them (`saltsalt` becomes `n34PoBLM`), and the result is crypt(3)'s SHA-512,
//! SHA-256 or MD5 scheme. The crypt algorithms are written here from their published
//! specifications (Drepper's SHA-crypt, PHK's MD5-crypt) over the RustCrypto digests, because
//! the salt re-encoding is libxcrypt's and no crate reproduces it. `bcrypt` and `yescrypt` are
//! refused by name.

use md5::Md5;
use minijinja::{State, Value};
use sha1::Sha1;
use sha2::digest::DynDigest;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512, Sha512_224, Sha512_256};

use super::args::{Bound, Sig};
use super::pyval::{self, Num, str_of, type_name};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("hash", Sig::new("get_hash", &["data", "hashtype"], 1), hash),
    Entry::new("checksum", Sig::new("checksum_s", &["data", "hash_func"], 1), sha1),
    Entry::new("sha1", Sig::new("checksum_s", &["data", "hash_func"], 1), sha1),
    Entry::new("md5", Sig::new("md5s", &["data"], 1), md5),
    Entry::new(
        "password_hash",
        Sig::new(
            "get_encrypted_password",
            &["password", "hashtype", "salt", "salt_size", "rounds", "ident"],
            1,
        ),
        password_hash,
    ),
];

fn hasher(name: &str) -> Option<Box<dyn DynDigest>> {
    Some(match name.to_ascii_lowercase().as_str() {
        "md5" => Box::new(Md5::new()),
        "sha1" => Box::new(Sha1::new()),
        "sha224" => Box::new(Sha224::new()),
        "sha256" => Box::new(Sha256::new()),
        "sha384" => Box::new(Sha384::new()),
        "sha512" => Box::new(Sha512::new()),
        "sha512_224" => Box::new(Sha512_224::new()),
        "sha512_256" => Box::new(Sha512_256::new()),
        "sha3_224" => Box::new(sha3::Sha3_224::new()),
        "sha3_256" => Box::new(sha3::Sha3_256::new()),
        "sha3_384" => Box::new(sha3::Sha3_384::new()),
        "sha3_512" => Box::new(sha3::Sha3_512::new()),
        "blake2b" => Box::new(blake2::Blake2b512::new()),
        "blake2s" => Box::new(blake2::Blake2s256::new()),
        _ => return None,
    })
}

fn hex_digest(mut h: Box<dyn DynDigest>, data: &[u8]) -> String {
    h.update(data);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn hash(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let name = args.get(1).map(str_of).unwrap_or_else(|| "sha1".into());
    let h = hasher(&name)
        .ok_or_else(|| FilterError::failed(format!("unsupported hash type {name}")))?;
    Ok(Value::from(hex_digest(h, str_of(args.input()).as_bytes())))
}

fn sha1(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    if let Some(func) = args.get(1) {
        // `hash_func` is called; nothing a template passes is callable.
        return Err(FilterError::failed(format!(
            "'{}' object is not callable",
            pyval::type_name(func)
        )));
    }
    Ok(Value::from(hex_digest(Box::new(Sha1::new()), str_of(args.input()).as_bytes())))
}

fn md5(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    Ok(Value::from(hex_digest(Box::new(Md5::new()), str_of(args.input()).as_bytes())))
}

/// The crypt schemes ansible's `CryptHash` knows, as far as tack implements them.
#[derive(Clone, Copy, PartialEq)]
enum Scheme {
    Md5,
    Sha256,
    Sha512,
}

struct Algo {
    name: &'static str,
    scheme: Option<Scheme>,
    ident: &'static str,
    salt_size: usize,
    implicit_rounds: Option<u64>,
}

fn algo(name: &str) -> Option<Algo> {
    let (name, scheme, ident, salt_size, implicit_rounds) = match name {
        "md5_crypt" => ("md5_crypt", Some(Scheme::Md5), "1", 8, None),
        "sha256_crypt" => ("sha256_crypt", Some(Scheme::Sha256), "5", 16, Some(535_000)),
        "sha512_crypt" => ("sha512_crypt", Some(Scheme::Sha512), "6", 16, Some(656_000)),
        "bcrypt" => ("bcrypt", None, "2b", 22, Some(12)),
        _ => return None,
    };
    Some(Algo { name, scheme, ident, salt_size, implicit_rounds })
}

const SALT_CHARS: &[u8] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn int_param(value: Option<&Value>, name: &str) -> Result<Option<i128>, FilterError> {
    match value {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => match pyval::num(v) {
            Some(Num::Int(i)) if v.kind() != minijinja::value::ValueKind::Bool => Ok(Some(i)),
            _ => {
                Err(FilterError::failed(format!("{name} must be an integer, not {}", type_name(v))))
            }
        },
    }
}

fn password_hash(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    encrypt(args)
}

/// ansible's `do_encrypt(password, algorithm, salt=, ident=)`, for the `password` lookup;
/// `Err` is the failure's message.
pub(crate) fn do_encrypt(
    password: &str,
    algorithm: &str,
    salt: Option<&str>,
    ident: Option<&str>,
) -> Result<String, String> {
    let sig = Sig::new(
        "get_encrypted_password",
        &["password", "hashtype", "salt", "salt_size", "rounds", "ident"],
        1,
    );
    let args = vec![Value::from(password), Value::from(algorithm)];
    let mut kwargs = vec![];
    if let Some(s) = salt {
        kwargs.push(("salt".to_string(), Value::from(s)));
    }
    if let Some(i) = ident {
        kwargs.push(("ident".to_string(), Value::from(i)));
    }
    let bound = super::args::bind(&sig, args, kwargs).map_err(|e| e.to_string())?;
    encrypt(&bound).map(|v| str_of(&v)).map_err(|e| e.to_string())
}

fn encrypt(args: &Bound) -> Result<Value, FilterError> {
    let hashtype = args.get(1).map(str_of).unwrap_or_else(|| "sha512".into());
    let algorithm = match hashtype.as_str() {
        "md5" => "md5_crypt".to_string(),
        "blowfish" => "bcrypt".to_string(),
        "sha256" => "sha256_crypt".to_string(),
        "sha512" => "sha512_crypt".to_string(),
        "md5_crypt" | "bcrypt" | "sha256_crypt" | "sha512_crypt" => hashtype.clone(),
        other => {
            return Err(FilterError::failed(format!(
                "{other} is not in the list of supported passlib algorithms: md5, blowfish, \
                 sha256, sha512"
            )));
        }
    };
    let Some(algo) = algo(&algorithm) else {
        return Err(FilterError::failed(format!("crypt does not support '{algorithm}' algorithm")));
    };
    let Some(scheme) = algo.scheme else {
        return Err(FilterError::failed(format!(
            "tack does not implement the '{}' algorithm of password_hash",
            algo.name
        )));
    };
    let salt = args.opt(2).map(str_of).filter(|s| !s.is_empty());
    let salt_size = match args.opt(3) {
        None => None,
        Some(v) => match pyval::num(v) {
            Some(Num::Int(i)) if v.is_integer() => Some(i),
            _ => return Err(FilterError::failed("salt_size must be an integer")),
        },
    };
    let rounds = int_param(args.opt(4), "rounds")?.filter(|&r| r != 0);
    let ident = args.opt(5).map(str_of).filter(|s| !s.is_empty());
    let rounds = rounds.or(algo.implicit_rounds.map(i128::from));
    let ident = ident.unwrap_or_else(|| algo.ident.to_string());

    let size = match salt_size.filter(|&s| s != 0) {
        None => algo.salt_size,
        Some(s) if s > algo.salt_size as i128 => {
            return Err(FilterError::failed(format!(
                "invalid salt size supplied ({s}), expected at most {}",
                algo.salt_size
            )));
        }
        Some(s) => usize::try_from(s).unwrap_or(0),
    };
    let rbytes: Vec<u8> = match &salt {
        Some(s) => {
            if !s.bytes().all(|b| SALT_CHARS.contains(&b)) {
                return Err(FilterError::failed("invalid characters in salt"));
            }
            if s.len() > algo.salt_size {
                return Err(FilterError::failed(format!(
                    "invalid salt size supplied ({}), expected at most {}",
                    s.len(),
                    algo.salt_size
                )));
            }
            s.as_bytes().to_vec()
        }
        None => {
            let mut buf = vec![0u8; size];
            getrandom::fill(&mut buf)
                .map_err(|e| FilterError::failed(format!("no random source: {e}")))?;
            buf
        }
    };
    let expected_ident = match scheme {
        Scheme::Md5 => "1",
        Scheme::Sha256 => "5",
        Scheme::Sha512 => "6",
    };
    let gensalt_failed =
        || FilterError::failed(format!("Failed to generate salt for '{}' algorithm", algo.name));
    if ident != expected_ident {
        return Err(gensalt_failed());
    }
    let count = rounds.unwrap_or(0);
    let password = str_of(args.input());
    let out = match scheme {
        Scheme::Md5 => {
            if count != 0 {
                return Err(gensalt_failed());
            }
            let salt = gensalt_chars(&rbytes, 8);
            md5_crypt(password.as_bytes(), salt.as_bytes())
        }
        Scheme::Sha256 | Scheme::Sha512 => {
            let rounds = if count == 0 { 5000 } else { count.clamp(1000, 999_999_999) as u64 };
            let salt = gensalt_chars(&rbytes, 16);
            sha_crypt(scheme, password.as_bytes(), salt.as_bytes(), rounds)
        }
    };
    Ok(Value::from(out))
}

/// The salt characters libxcrypt's `crypt_gensalt` makes of `rbytes`, as ansible's facade
/// calls it: each whole group of three bytes (not counting the last byte) becomes four
/// characters, up to `max_chars`.
fn gensalt_chars(rbytes: &[u8], max_chars: usize) -> String {
    let usable = rbytes.len().saturating_sub(1) / 3;
    let groups = usable.min(max_chars / 4);
    let mut out = String::new();
    for g in 0..groups {
        let b = &rbytes[g * 3..g * 3 + 3];
        push_b64(&mut out, b[2], b[1], b[0], 4);
    }
    out
}

fn push_b64(out: &mut String, b2: u8, b1: u8, b0: u8, n: usize) {
    let mut w = (u32::from(b2) << 16) | (u32::from(b1) << 8) | u32::from(b0);
    for _ in 0..n {
        out.push(char::from(SALT_CHARS[(w & 0x3f) as usize]));
        w >>= 6;
    }
}

fn digest(scheme: Scheme, parts: &[&[u8]]) -> Vec<u8> {
    fn run<D: Digest>(parts: &[&[u8]]) -> Vec<u8> {
        let mut h = D::new();
        for p in parts {
            Digest::update(&mut h, p);
        }
        h.finalize().to_vec()
    }
    match scheme {
        Scheme::Md5 => run::<Md5>(parts),
        Scheme::Sha256 => run::<Sha256>(parts),
        Scheme::Sha512 => run::<Sha512>(parts),
    }
}

/// `bytes` repeated to exactly `len` bytes.
fn repeat_to(bytes: &[u8], len: usize) -> Vec<u8> {
    bytes.iter().copied().cycle().take(len).collect()
}

/// SHA-crypt (`$5$`, `$6$`) as specified by Ulrich Drepper.
fn sha_crypt(scheme: Scheme, password: &[u8], salt: &[u8], rounds: u64) -> String {
    let salt = &salt[..salt.len().min(16)];
    let size = if scheme == Scheme::Sha512 { 64 } else { 32 };
    let b = digest(scheme, &[password, salt, password]);
    let mut a_input: Vec<u8> = [password, salt].concat();
    a_input.extend(repeat_to(&b, password.len()));
    let mut n = password.len();
    while n > 0 {
        if n & 1 == 1 {
            a_input.extend_from_slice(&b);
        } else {
            a_input.extend_from_slice(password);
        }
        n >>= 1;
    }
    let mut a = digest(scheme, &[&a_input]);
    let dp = digest(scheme, &[&password.repeat(password.len())]);
    let p = repeat_to(&dp, password.len());
    let ds = digest(scheme, &[&salt.repeat(16 + usize::from(a[0]))]);
    let s = repeat_to(&ds, salt.len());
    a = match scheme {
        Scheme::Sha512 => sha_rounds::<Sha512>(a, &p, &s, rounds),
        _ => sha_rounds::<Sha256>(a, &p, &s, rounds),
    };
    let mut out = String::from(if scheme == Scheme::Sha512 { "$6$" } else { "$5$" });
    if rounds != 5000 {
        out.push_str(&format!("rounds={rounds}$"));
    }
    out.push_str(&String::from_utf8_lossy(salt));
    out.push('$');
    if size == 64 {
        for i in 0..21 {
            let (x, y, z) = sha512_triplet(i);
            push_b64(&mut out, a[x], a[y], a[z], 4);
        }
        push_b64(&mut out, 0, 0, a[63], 2);
    } else {
        for i in 0..10 {
            let (x, y, z) = sha256_triplet(i);
            push_b64(&mut out, a[x], a[y], a[z], 4);
        }
        push_b64(&mut out, 0, a[31], a[30], 3);
    }
    out
}

/// The SHA-crypt main loop, kept allocation-free: it runs hundreds of thousands of times.
fn sha_rounds<D: Digest + sha2::digest::FixedOutputReset>(
    mut a: Vec<u8>,
    p: &[u8],
    s: &[u8],
    rounds: u64,
) -> Vec<u8> {
    let mut h = D::new();
    for i in 0..rounds {
        if i & 1 == 1 {
            Digest::update(&mut h, p);
        } else {
            Digest::update(&mut h, &a);
        }
        if i % 3 != 0 {
            Digest::update(&mut h, s);
        }
        if i % 7 != 0 {
            Digest::update(&mut h, p);
        }
        if i & 1 == 1 {
            Digest::update(&mut h, &a);
        } else {
            Digest::update(&mut h, p);
        }
        a.copy_from_slice(&h.finalize_reset());
    }
    a
}

fn sha512_triplet(i: usize) -> (usize, usize, usize) {
    const T: [(usize, usize, usize); 21] = [
        (0, 21, 42),
        (22, 43, 1),
        (44, 2, 23),
        (3, 24, 45),
        (25, 46, 4),
        (47, 5, 26),
        (6, 27, 48),
        (28, 49, 7),
        (50, 8, 29),
        (9, 30, 51),
        (31, 52, 10),
        (53, 11, 32),
        (12, 33, 54),
        (34, 55, 13),
        (56, 14, 35),
        (15, 36, 57),
        (37, 58, 16),
        (59, 17, 38),
        (18, 39, 60),
        (40, 61, 19),
        (62, 20, 41),
    ];
    T[i]
}

fn sha256_triplet(i: usize) -> (usize, usize, usize) {
    const T: [(usize, usize, usize); 10] = [
        (0, 10, 20),
        (21, 1, 11),
        (12, 22, 2),
        (3, 13, 23),
        (24, 4, 14),
        (15, 25, 5),
        (6, 16, 26),
        (27, 7, 17),
        (18, 28, 8),
        (9, 19, 29),
    ];
    T[i]
}

/// MD5-crypt (`$1$`) as specified by Poul-Henning Kamp.
fn md5_crypt(password: &[u8], salt: &[u8]) -> String {
    let salt = &salt[..salt.len().min(8)];
    let alt = digest(Scheme::Md5, &[password, salt, password]);
    let mut ctx: Vec<u8> = [password, b"$1$", salt].concat();
    let mut pl = password.len() as isize;
    while pl > 0 {
        let n = pl.min(16) as usize;
        ctx.extend_from_slice(&alt[..n]);
        pl -= 16;
    }
    let mut i = password.len();
    while i > 0 {
        if i & 1 == 1 {
            ctx.push(0);
        } else {
            ctx.push(password.first().copied().unwrap_or(0));
        }
        i >>= 1;
    }
    let mut fin = digest(Scheme::Md5, &[&ctx]);
    for i in 0..1000 {
        let mut parts: Vec<&[u8]> = Vec::with_capacity(4);
        parts.push(if i & 1 == 1 { password } else { &fin });
        if i % 3 != 0 {
            parts.push(salt);
        }
        if i % 7 != 0 {
            parts.push(password);
        }
        parts.push(if i & 1 == 1 { &fin } else { password });
        fin = digest(Scheme::Md5, &parts);
    }
    let mut out = format!("$1${}$", String::from_utf8_lossy(salt));
    for (x, y, z) in [(0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5)] {
        push_b64(&mut out, fin[x], fin[y], fin[z], 4);
    }
    push_b64(&mut out, 0, 0, fin[11], 2);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crypt_matches_libxcrypt() {
        // Printed by libxcrypt's crypt() on the reference machine.
        assert_eq!(
            sha_crypt(Scheme::Sha512, b"pw", b"n34PoBLM", 656_000),
            "$6$rounds=656000$n34PoBLM$ATcFfxaXFEn50virLHVkCwNm8oHRIwHNF5pdTAlU5JHAKx9l6M8qQgmvN2ix5dNa9zRM4UV64TPu9qR8B8wHE/"
        );
        assert_eq!(
            sha_crypt(Scheme::Sha256, b"pw", b"n34PoBLMgFrQVl4R", 535_000),
            "$5$rounds=535000$n34PoBLMgFrQVl4R$mEj4YFrrLrnXQyj2QjDiVZkTZwUz6KV3Var28J3jQt8"
        );
        assert_eq!(md5_crypt(b"pw", b"n34PoBLM"), "$1$n34PoBLM$Nw48lApu2xgEkJ./Zcgv2.");
        assert_eq!(gensalt_chars(b"saltsalt", 16), "n34PoBLM");
        assert_eq!(gensalt_chars(b"abcdefghijklmnop", 16), "V7qMYJaNbVKOeh4P");
        assert_eq!(gensalt_chars(b"abcdef", 16), "V7qM");
    }
}
