//! What tack cannot run of a collection yet is refused by name where the task runs, not
//! before the play: a module whose action the collection's `meta/runtime.yml` routes to one
//! of ansible-core's own action plugins. A task that never runs never stops the
//! play. (What tack runs of collections is pinned by goldens recorded from ansible-core.)

use std::path::Path;
use std::process::Command;

const MODULE: &str = "#!/usr/bin/python\nfrom ansible.module_utils.basic import AnsibleModule\n\
AnsibleModule(argument_spec={}).exit_json(changed=False)\n";

fn collection(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("collections/ansible_collections/ns/col");
    for sub in ["plugins/modules", "plugins/action", "meta"] {
        std::fs::create_dir_all(root.join(sub)).expect("dirs");
    }
    for module in ["routed", "plain"] {
        std::fs::write(root.join(format!("plugins/modules/{module}.py")), MODULE).expect("module");
    }
    std::fs::write(
        root.join("meta/runtime.yml"),
        "plugin_routing:\n  action:\n    routed:\n      redirect: ansible.builtin.copy\n",
    )
    .expect("runtime");
    root
}

fn run(playbook: &str) -> (i32, String) {
    run_with(playbook, &[])
}

fn run_with(playbook: &str, extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    collection(dir.path());
    // ansible-core routes `timezone` here.
    let routed =
        dir.path().join("collections/ansible_collections/community/general/plugins/modules");
    std::fs::create_dir_all(&routed).expect("dirs");
    std::fs::write(routed.join("timezone.py"), MODULE).expect("module");
    // The controller's ansible-core is the reference's (the test script installs it).
    let host =
        "h1 ansible_connection=local ansible_python_interpreter=/opt/ansible-ref/bin/python\n";
    std::fs::write(dir.path().join("hosts"), host).expect("hosts");
    std::fs::write(dir.path().join("site.yml"), playbook).expect("playbook");
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .args(extra)
        .current_dir(dir.path())
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .output()
        .expect("tack runs");
    let text =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

const PLAY: &str = "- hosts: all\n  gather_facts: false\n  tasks:\n";

#[test]
fn a_module_the_collection_routes_is_refused_when_it_runs() {
    let (code, text) = run(&format!("{PLAY}    - ns.col.routed:\n"));
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains(
            "tack does not follow a collection's action plugin routing to ansible-core's own \
             actions yet:"
        ) && text.contains("routes 'ns.col.routed' to 'ansible.builtin.copy'"),
        "{text}"
    );
}

#[test]
fn a_routed_module_name_at_vvv_is_refused_before_the_run() {
    let (code, text) = run_with(&format!("{PLAY}    - timezone:\n"), &["-vvv"]);
    assert_eq!(code, 1, "{text}");
    assert!(!text.contains("PLAY ["), "{text}");
    assert!(
        text.contains(
            "tack does not support -vvv with a module name ansible-core routes to a collection \
             ('timezone') yet"
        ),
        "{text}"
    );
    // Without -vvv it runs, as the collection's module.
    let (code, text) = run_with(&format!("{PLAY}    - timezone:\n"), &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ok: [h1]"), "{text}");
}

#[test]
fn collection_content_at_vvvv_is_refused_before_the_run() {
    let (code, text) = run_with(&format!("{PLAY}    - ns.col.plain:\n"), &["-vvvv"]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains(
            "tack does not support -vvvv with a module from a collection ('ns.col.plain') yet"
        ),
        "{text}"
    );
}
