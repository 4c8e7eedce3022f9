use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::*;

const REF_PYTHON: &str = "/opt/ansible-ref/bin/python";

/// A payload built by the engine's builder with the reference ansible-core, or `None` (and a
/// note) on a machine without it.
fn built(module: &str) -> Option<(String, String, Vec<u8>)> {
    built_from(&serde_json::json!({ "name": module }))
}

/// [`built`] for a builder request (a `library/` module: `{"name", "path"}`).
fn built_from(request: &Value) -> Option<(String, String, Vec<u8>)> {
    if !Path::new(REF_PYTHON).exists() {
        eprintln!("no ansible-core at {REF_PYTHON}: Python path test not run");
        return None;
    }
    let script =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../tack-actions/src/python_path/build_payload.py");
    let mut child = Command::new(REF_PYTHON)
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(Value::Array(vec![request.clone()]).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["modules"][0];
    use base64::Engine;
    let zip = base64::engine::general_purpose::STANDARD.decode(m["zip"].as_str().unwrap()).unwrap();
    Some((m["fqn"].as_str().unwrap().to_string(), m["profile"].as_str().unwrap().to_string(), zip))
}

#[test]
fn a_payload_is_refused_unless_its_bytes_match_its_name() {
    let mut host = PythonHost::new();
    let err = host.put_payload(&blake3::hash(b"one").to_hex(), b"two").unwrap_err();
    assert!(matches!(err, PythonError::BadHash { .. }), "{err}");
    assert!(host.dir.is_none(), "nothing is made for a refused payload");
    let err = host.put_payload("../x", b"").unwrap_err();
    assert!(matches!(err, PythonError::BadHash { .. }), "{err}");
}

#[test]
fn payloads_are_private_and_removed_with_the_host() {
    let mut host = PythonHost::new();
    let hash = blake3::hash(b"zip").to_hex().to_string();
    host.put_payload(&hash, b"zip").unwrap();
    assert!(host.has_payload(&hash));
    let dir = host.dir.clone().unwrap();
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    let file = dir.join(format!("{hash}.zip"));
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    drop(host);
    assert!(!dir.exists());
}

#[test]
fn a_run_needs_its_payload_first() {
    let mut host = PythonHost::new();
    let run = PythonRun {
        hash: "ab".into(),
        fqn: "ansible.modules.ping".into(),
        profile: "legacy".into(),
        interpreter: REF_PYTHON.into(),
        params: "{}".into(),
        environment: BTreeMap::new(),
        rlimit_nofile: None,
    };
    assert!(matches!(host.run(&run), Err(PythonError::NoPayload(_))));
}

#[test]
fn the_warm_server_runs_a_module_many_times_and_cleans_up() {
    let Some((fqn, profile, zip)) = built("ping") else { return };
    let mut host = PythonHost::new();
    let hash = blake3::hash(&zip).to_hex().to_string();
    host.put_payload(&hash, &zip).unwrap();
    let mut env = BTreeMap::new();
    env.insert("TACK_PY_TEST".to_string(), "seen".to_string());
    for data in ["pong", "again"] {
        let params = serde_json::json!({"ANSIBLE_MODULE_ARGS": {
            "data": data, "_ansible_check_mode": false, "_ansible_remote_tmp": "~/.ansible/tmp",
        }});
        let run = PythonRun {
            hash: hash.clone(),
            fqn: fqn.clone(),
            profile: profile.clone(),
            interpreter: REF_PYTHON.into(),
            params: params.to_string(),
            environment: env.clone(),
            rlimit_nofile: None,
        };
        let out = host.run(&run).unwrap();
        assert_eq!(out.rc, 0, "{out:?}");
        let result: Value = serde_json::from_str(out.stdout.trim()).unwrap();
        assert_eq!(result["ping"], data);
    }
    assert_eq!(host.servers.len(), 1, "warm servers for one interpreter");
    assert_eq!(host.servers.values().map(Vec::len).sum::<usize>(), 1, "one idle server");
    let dir = host.dir.clone().unwrap();
    drop(host);
    assert!(!dir.exists());
}

#[test]
fn a_module_that_fails_its_arguments_exits_non_zero_with_its_json() {
    let Some((fqn, profile, zip)) = built("ping") else { return };
    let mut host = PythonHost::new();
    let hash = blake3::hash(&zip).to_hex().to_string();
    host.put_payload(&hash, &zip).unwrap();
    let params = serde_json::json!({"ANSIBLE_MODULE_ARGS": {"nope": 1}});
    let run = PythonRun {
        hash,
        fqn,
        profile,
        interpreter: REF_PYTHON.into(),
        params: params.to_string(),
        environment: BTreeMap::new(),
        rlimit_nofile: None,
    };
    let out = host.run(&run).unwrap();
    assert_eq!(out.rc, 1);
    let result: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert!(result["msg"].as_str().unwrap().contains("Unsupported parameters"), "{result}");
}

/// What one task's module does to its process never reaches the next task's: its
/// environment, the globals it set in module_utils the server had imported, the state of a
/// standard module it imported (which the server then imports afresh), its own exit code.
#[test]
fn a_module_leaves_nothing_behind_for_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("leak.py");
    let source = [
        "import os, sys",
        "from ansible.module_utils.basic import AnsibleModule",
        "from ansible.module_utils import basic",
        "m = AnsibleModule({'code': {'type': 'int'}})",
        "import decimal",
        "seen = dict(env=os.environ.get('TACK_LEAK'), mark=getattr(basic, '_tack_leak', None),",
        "            decimal=getattr(decimal, '_tack_leak', None))",
        "os.environ['TACK_LEAK'] = basic._tack_leak = decimal._tack_leak = 'leaked'",
        "if m.params['code']:",
        "    print('{\"bye\": 1}')",
        "    sys.exit(m.params['code'])",
        "m.exit_json(**seen)",
    ];
    std::fs::write(&path, source.join("\n") + "\n").unwrap();
    let request = serde_json::json!({ "name": "leak", "path": path });
    let Some((fqn, profile, zip)) = built_from(&request) else { return };
    let mut host = PythonHost::new();
    let hash = blake3::hash(&zip).to_hex().to_string();
    host.put_payload(&hash, &zip).unwrap();
    let run = |host: &mut PythonHost, code: i64| {
        let params = serde_json::json!({"ANSIBLE_MODULE_ARGS": {"code": code}});
        let run = PythonRun {
            hash: hash.clone(),
            fqn: fqn.clone(),
            profile: profile.clone(),
            interpreter: REF_PYTHON.into(),
            params: params.to_string(),
            environment: BTreeMap::new(),
            rlimit_nofile: None,
        };
        host.run(&run).unwrap()
    };
    let out = run(&mut host, 3);
    assert_eq!((out.rc, out.stdout.trim()), (3, "{\"bye\": 1}"), "{out:?}");
    for _ in 0..2 {
        let out = run(&mut host, 0);
        assert_eq!(out.rc, 0, "{out:?}");
        let result: Value = serde_json::from_str(out.stdout.trim()).unwrap();
        for key in ["env", "mark", "decimal"] {
            assert_eq!(result[key], Value::Null, "{key} leaked: {result}");
        }
    }
    assert_eq!(host.servers.values().map(Vec::len).sum::<usize>(), 1, "one server ran them all");
}

/// Compiled code the controller put beside a payload's sources is what the host runs: here
/// it was compiled from a different text than the source beside it, to tell them apart.
#[test]
fn compiled_code_in_a_payload_is_used_without_compiling() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("which.py");
    let module = |said: &str| {
        format!(
            "from ansible.module_utils.basic import AnsibleModule\n\
             AnsibleModule({{}}).exit_json(said='{said}')\n"
        )
    };
    std::fs::write(&path, module("source")).unwrap();
    let request = serde_json::json!({ "name": "which", "path": path });
    let Some((fqn, profile, zip)) = built_from(&request) else { return };
    // The same zip, and beside the module compiled code (unchecked hash-based, as the
    // controller's compiler writes it) of the text that says "compiled".
    let add = "import io, py_compile, sys, tempfile, os, zipfile\n\
               zin = zipfile.ZipFile(io.BytesIO(sys.stdin.buffer.read()))\n\
               out = io.BytesIO()\n\
               with zipfile.ZipFile(out, 'w') as z:\n\
               \x20   for i in zin.infolist(): z.writestr(i, zin.read(i))\n\
               \x20   d = tempfile.mkdtemp(); src = os.path.join(d, 'm.py'); pyc = src + 'c'\n\
               \x20   open(src, 'w').write(sys.argv[1])\n\
               \x20   py_compile.compile(src, cfile=pyc, doraise=True,\n\
               \x20       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)\n\
               \x20   name = 'ansible/legacy/__pycache__/which.%s.pyc' % sys.implementation.cache_tag\n\
               \x20   z.writestr(name, open(pyc, 'rb').read())\n\
               sys.stdout.buffer.write(out.getvalue())";
    let mut child = Command::new(REF_PYTHON)
        .args(["-c", add, &module("compiled")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&zip).unwrap();
    let zip = child.wait_with_output().unwrap().stdout;
    assert_eq!(fqn, "ansible.legacy.which");
    let mut host = PythonHost::new();
    let hash = blake3::hash(&zip).to_hex().to_string();
    host.put_payload(&hash, &zip).unwrap();
    let run = PythonRun {
        hash,
        fqn,
        profile,
        interpreter: REF_PYTHON.into(),
        params: serde_json::json!({"ANSIBLE_MODULE_ARGS": {}}).to_string(),
        environment: BTreeMap::new(),
        rlimit_nofile: None,
    };
    let out = host.run(&run).unwrap();
    let result: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(result["said"], "compiled", "{out:?}");
    assert!(out.tag.starts_with("cpython-3"), "{out:?}");
}
