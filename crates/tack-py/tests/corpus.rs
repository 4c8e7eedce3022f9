//! Replays the cases `scripts/record-py.py` recorded from CPython 3.13 (the interpreter
//! ansible-core 2.21.5 runs on), and ansible-core's own `boolean()`, and compares tack-py's answers
//! with theirs.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde_json::Value;
use tack_py::path::Environ;
use tack_py::{ansible, boolean, codecs, oserror, path, repr, shlex, text, textwrap};

fn corpus(name: &str) -> Value {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    let text = std::fs::read_to_string(&file).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap()
}

fn bytes(v: &Value) -> Vec<u8> {
    v.as_array().unwrap().iter().map(|b| b.as_u64().unwrap() as u8).collect()
}

fn strs(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(s).collect()
}

fn rows(v: &Value) -> &Vec<Value> {
    v.as_array().unwrap()
}

/// Every mismatch, so one run shows them all.
#[derive(Default)]
struct Failures(Vec<String>);

impl Failures {
    fn check<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, got: T, want: T) {
        if got != want {
            self.0.push(format!("{what}: got {got:?}, CPython {want:?}"));
        }
    }

    fn assert_none(self) {
        assert!(self.0.is_empty(), "{} mismatches:\n{}", self.0.len(), self.0.join("\n"));
    }
}

#[test]
fn repr_matches_cpython() {
    let c = corpus("repr.json");
    let mut f = Failures::default();
    for row in rows(&c["str"]) {
        f.check(&format!("repr({:?})", s(&row[0])), repr::str_repr(s(&row[0])), s(&row[1]).into());
    }
    for row in rows(&c["bytes"]) {
        let data = bytes(&row[0]);
        f.check(&format!("repr({data:?})"), repr::bytes_repr(&data), s(&row[1]).into());
    }
    for row in rows(&c["float"]) {
        let bits = u64::from_str_radix(s(&row[0]).trim_start_matches("0x"), 16).unwrap();
        let x = f64::from_bits(bits);
        f.check(&format!("repr({x:e})"), repr::float_repr(x), s(&row[1]).into());
    }
    for row in rows(&c["str_list"]) {
        f.check("repr(list)", repr::str_list_repr(&strs(&row[0])), s(&row[1]).into());
    }
    f.assert_none();
}

#[test]
fn str_and_bytes_methods_match_cpython() {
    let c = corpus("text.json");
    let mut f = Failures::default();
    for case in rows(&c["str"]) {
        let t = s(&case["text"]);
        f.check(&format!("{t:?}.strip()"), text::strip(t), s(&case["strip"]));
        f.check(&format!("{t:?}.lstrip()"), text::lstrip(t), s(&case["lstrip"]));
        f.check(&format!("{t:?}.rstrip()"), text::rstrip(t), s(&case["rstrip"]));
        f.check(&format!("{t:?}.split()"), text::split(t), strs(&case["split"]));
        f.check(&format!("{t:?}.splitlines()"), text::splitlines(t), strs(&case["splitlines"]));
    }
    for case in rows(&c["bytes"]) {
        let d = bytes(&case["data"]);
        f.check(&format!("{d:?}.strip()"), text::bytes_strip(&d).to_vec(), bytes(&case["strip"]));
        f.check(
            &format!("{d:?}.strip(b'\\r\\n')"),
            text::bytes_strip_chars(&d, b"\r\n").to_vec(),
            bytes(&case["strip_newlines"]),
        );
        let lines: Vec<Vec<u8>> = text::bytes_splitlines(&d).iter().map(|l| l.to_vec()).collect();
        let want: Vec<Vec<u8>> = rows(&case["splitlines"]).iter().map(bytes).collect();
        f.check(&format!("{d:?}.splitlines()"), lines, want);
    }
    f.assert_none();
}

#[test]
fn shorten_matches_cpython() {
    let mut f = Failures::default();
    for row in rows(&corpus("textwrap.json")) {
        let (t, width) = (s(&row[0]), row[1].as_u64().unwrap() as usize);
        f.check(
            &format!("shorten({t:?}, {width})"),
            textwrap::shorten(t, width),
            s(&row[2]).into(),
        );
    }
    f.assert_none();
}

#[test]
fn shlex_matches_cpython() {
    let c = corpus("shlex.json");
    let mut f = Failures::default();
    for case in rows(&c["split"]) {
        let line = s(&case["line"]);
        let got = if case["comments"].as_bool().unwrap() {
            shlex::split_comments(line)
        } else {
            shlex::split(line)
        };
        let got = got.map_err(|e| e.to_string());
        let want = match case.get("words") {
            Some(words) => Ok(strs(words).into_iter().map(String::from).collect()),
            None => Err(s(&case["error"]).to_string()),
        };
        f.check(&format!("split({line:?}, comments={})", case["comments"]), got, want);
    }
    for row in rows(&c["quote"]) {
        f.check(&format!("quote({:?})", s(&row[0])), shlex::quote(s(&row[0])), s(&row[1]).into());
    }
    f.assert_none();
}

/// The recorded environment, with `HOME` replaced per case.
struct Recorded(HashMap<String, String>);

impl Environ for Recorded {
    fn var(&self, name: &OsStr) -> Option<OsString> {
        self.0.get(name.to_str()?).map(OsString::from)
    }
    fn cwd(&self) -> PathBuf {
        PathBuf::from("/unused")
    }
}

fn text_of(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn os_path_matches_cpython() {
    let c = corpus("path.json");
    let mut f = Failures::default();
    for row in rows(&c["normpath"]) {
        let got = text_of(&path::normpath(Path::new(s(&row[0]))));
        f.check(&format!("normpath({:?})", s(&row[0])), got, s(&row[1]).into());
    }
    for row in rows(&c["dirname"]) {
        let got = text_of(path::dirname(Path::new(s(&row[0]))));
        f.check(&format!("dirname({:?})", s(&row[0])), got, s(&row[1]).into());
    }
    for row in rows(&c["basename"]) {
        let got = path::basename(Path::new(s(&row[0]))).to_str().unwrap().to_string();
        f.check(&format!("basename({:?})", s(&row[0])), got, s(&row[1]).into());
    }
    for row in rows(&c["splitext"]) {
        let (root, ext) = path::splitext(s(&row[0]));
        f.check(&format!("splitext({:?})", s(&row[0])), vec![root, ext], strs(&row[1]));
    }
    for row in rows(&c["join"]) {
        let got = text_of(&path::join(Path::new(s(&row[0])), Path::new(s(&row[1]))));
        f.check(&format!("join({:?}, {:?})", s(&row[0]), s(&row[1])), got, s(&row[2]).into());
    }
    let env: HashMap<String, String> =
        c["env"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), s(v).to_string())).collect();
    let recorded = Recorded(env.clone());
    for row in rows(&c["expandvars"]) {
        let got = text_of(&path::expandvars(Path::new(s(&row[0])), &recorded));
        f.check(&format!("expandvars({:?})", s(&row[0])), got, s(&row[1]).into());
    }
    for row in rows(&c["expanduser"]) {
        let mut with_home = env.clone();
        with_home.insert("HOME".into(), s(&row[1]).into());
        let got = text_of(&path::expanduser(Path::new(s(&row[0])), &Recorded(with_home)));
        let what = format!("expanduser({:?}) with HOME={:?}", s(&row[0]), s(&row[1]));
        f.check(&what, got, s(&row[2]).into());
    }
    f.assert_none();
}

#[test]
fn realpath_matches_cpython() {
    let c = corpus("path.json");
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let root_text = text_of(&root);
    let tree = &c["tree"];
    for d in rows(&tree["dirs"]) {
        std::fs::create_dir_all(root.join(s(d))).unwrap();
    }
    for file in rows(&tree["files"]) {
        std::fs::write(root.join(s(file)), "").unwrap();
    }
    for link in rows(&tree["links"]) {
        let target = s(&link[1]).replace("{root}", &root_text);
        std::os::unix::fs::symlink(target, root.join(s(&link[0]))).unwrap();
    }
    let mut f = Failures::default();
    for row in rows(&c["realpath"]) {
        let got = text_of(&path::realpath(&path::join(&root, Path::new(s(&row[0])))));
        let want = s(&row[1]).replace("{root}", &root_text);
        f.check(&format!("realpath({:?})", s(&row[0])), got, want);
    }
    f.assert_none();
}

#[test]
fn unfrackpath_composes_the_rules() {
    let env = Recorded(HashMap::from([("HOME".into(), "/home/me".into())]));
    let unfrack = |p: &str, base: Option<&str>| {
        text_of(&ansible::unfrackpath_in(Path::new(p), false, base.map(Path::new), &env))
    };
    assert_eq!(unfrack("~/a/../b", None), "/home/me/b");
    assert_eq!(unfrack("x/./y", Some("/base//dir")), "/base/dir/x/y");
    assert_eq!(unfrack("//srv/x", None), "//srv/x");
}

#[test]
fn str_encode_matches_cpython() {
    let mut f = Failures::default();
    let mut unsupported = Vec::new();
    for case in rows(&corpus("codecs.json")) {
        let (name, text) = (s(&case["name"]), s(&case["text"]));
        let what = format!("{text:?}.encode({name:?})");
        match codecs::encode(name, text) {
            Err(codecs::EncodeError::Unsupported { module }) => unsupported.push(module),
            Ok(bytes) => match case["bytes"].as_str() {
                Some(want) => f.check(&what, hex(&bytes), want.to_owned()),
                None => f.check(&what, hex(&bytes), format!("error {}", case["error"])),
            },
            Err(e) => f.check(&what, e.to_string(), s(&case["error"]).to_owned()),
        }
    }
    f.assert_none();
    // Exactly the codecs the generator found no single-byte map for are left out.
    unsupported.sort_unstable();
    unsupported.dedup();
    let expected = [
        "big5",
        "big5hkscs",
        "charmap",
        "cp932",
        "cp949",
        "cp950",
        "euc_jis_2004",
        "euc_jisx0213",
        "euc_jp",
        "euc_kr",
        "gb18030",
        "gb2312",
        "gbk",
        "hz",
        "idna",
        "iso2022_jp",
        "iso2022_jp_1",
        "iso2022_jp_2",
        "iso2022_jp_2004",
        "iso2022_jp_3",
        "iso2022_jp_ext",
        "iso2022_kr",
        "johab",
        "punycode",
        "raw_unicode_escape",
        "shift_jis",
        "shift_jis_2004",
        "shift_jisx0213",
        "unicode_escape",
        "utf_7",
    ];
    assert_eq!(unsupported, expected);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn strerror_matches_cpython() {
    let c = corpus("oserror.json");
    let mut f = Failures::default();
    for row in rows(&c) {
        let code = row[0].as_i64().unwrap() as i32;
        f.check(&format!("os.strerror({code})"), oserror::strerror_code(code), s(&row[1]).into());
        if code > 0 {
            let err = std::io::Error::from_raw_os_error(code);
            f.check(
                &format!("str(OSError({code}))"),
                oserror::os_error_no_name(&err),
                format!("[Errno {code}] {}", s(&row[1])),
            );
        }
    }
    f.assert_none();
}

#[test]
fn boolean_matches_ansible() {
    let c = corpus("boolean.json");
    let mut f = Failures::default();
    for row in rows(&c) {
        let raw = &row["input"];
        let decoded;
        let input = match s(&row["type"]) {
            "bool" => boolean::Input::Bool(raw.as_bool().unwrap()),
            "int" => boolean::Input::Int(raw.as_i64().unwrap()),
            "float" => boolean::Input::Float(s(raw).parse().unwrap()),
            "str" => boolean::Input::Text(s(raw)),
            "bytes" => {
                decoded = String::from_utf8(bytes(raw)).unwrap();
                boolean::Input::Text(&decoded)
            }
            _ => boolean::Input::Other,
        };
        let what = format!("boolean({raw})");
        let strict = match row["strict"].get("value") {
            Some(v) => Ok(v.as_bool().unwrap()),
            None => Err(s(&row["strict"]["error"]).to_string()),
        };
        let text = s(&row["text"]);
        f.check(
            &format!("{what}, strict"),
            boolean::strict(input).ok_or_else(|| boolean::invalid_message(text)),
            strict,
        );
        f.check(&format!("{what}, loose"), boolean::loose(input), row["loose"].as_bool().unwrap());
        // Membership is asked of decoded values only; `bytes` are never members.
        if s(&row["type"]) == "bytes" {
            continue;
        }
        f.check(
            &format!("{what} in BOOLEANS_TRUE"),
            boolean::is_member(input, true),
            row["member_true"].as_bool().unwrap(),
        );
        f.check(
            &format!("{what} in BOOLEANS_FALSE"),
            boolean::is_member(input, false),
            row["member_false"].as_bool().unwrap(),
        );
    }
    f.assert_none();
}
