//! What the engine does not run yet is refused by name before any play starts: nothing but
//! the `-v` header is printed on stdout (no PLAY banner), the error names the keyword, action or option and
//! where it was written, and the exit code is ansible's for the error's class. What depends
//! on a host's variables is refused by name where it would run, and nothing else stops.

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, playbook: &str, extra: &[&str]) -> Output {
    tack(dir, playbook, extra).output().expect("tack runs")
}

/// `tack playbook` on `playbook` against one local host, as a command still to be run.
fn tack(dir: &Path, playbook: &str, extra: &[&str]) -> Command {
    std::fs::write(dir.join("hosts"), "h1 ansible_connection=local\n").expect("hosts");
    std::fs::write(dir.join("site.yml"), playbook).expect("playbook");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tack"));
    cmd.args(["playbook", "-i", "hosts", "site.yml"])
        .args(extra)
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1");
    cmd
}

fn refused(playbook: &str, extra: &[&str], wanted: &str, code: i32) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = run(dir.path(), playbook, extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    // Only the header `-v` and more print as the program starts, before anything is read.
    let stdout = String::from_utf8_lossy(&out.stdout);
    let header = |line: &str| {
        line.starts_with("tack playbook [")
            || line.starts_with("  ")
            || line.starts_with("No config file found")
            || line.starts_with("Using ")
    };
    assert!(stdout.lines().all(header), "printed before refusing: {stdout}");
    assert!(stderr.contains(wanted), "wanted {wanted:?} in:\n{stderr}");
}

const PLAY: &str = "- hosts: all\n  gather_facts: false\n  tasks:\n";

/// Runs tack with no interpreter reachable: an empty `PATH` and no configured interpreter.
fn without_python(playbook: &str, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("hosts"), "h1 ansible_connection=local\n").expect("hosts");
    std::fs::write(dir.path().join("site.yml"), playbook).expect("playbook");
    Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .args(extra)
        .current_dir(dir.path())
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .env("PATH", dir.path())
        .output()
        .expect("tack runs")
}

#[test]
fn a_python_path_module_without_ansible_core_is_refused_before_anything_runs() {
    let play = format!("{PLAY}    - debug: msg=first\n    - getent: database=passwd key=root\n");
    let out = without_python(&play, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    for wanted in [
        "tack has no native module 'getent': no ansible-core was found on the controller",
        "python3 (cannot run it",
        "--ansible-python PATH",
        "site.yml:5:7",
    ] {
        assert!(stderr.contains(wanted), "wanted {wanted:?} in:\n{stderr}");
    }
}

#[test]
fn an_ansible_python_that_cannot_import_ansible_is_an_options_error() {
    let play = format!("{PLAY}    - getent: database=passwd key=root\n");
    let out = without_python(&play, &["--ansible-python", "/nonexistent/python"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("--ansible-python /nonexistent/python: cannot run it"), "{stderr}");
}

#[test]
fn fetch_never_writes_outside_dest() {
    // ansible-core writes a climbing `src` outside `dest`; tack refuses it before making
    // any directory (seed 002).
    let dir = tempfile::tempdir().expect("temp dir");
    let outside = dir.path().join("victim");
    std::fs::write(&outside, "host bytes\n").expect("source");
    let climb = "../".repeat(12);
    let src = format!("{climb}{}", outside.display().to_string().trim_start_matches('/'));
    let play = format!("{PLAY}    - fetch: src={src} dest=out\n");
    let out = run(dir.path(), &play, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let wanted = format!("the fetched path {} is outside 'out'", outside.display());
    assert!(stdout.contains(&wanted), "wanted {wanted:?} in:\n{stdout}");
    assert!(!dir.path().join("out").exists(), "a directory was made under dest");
}

#[test]
fn a_connection_plugin_that_cannot_be_loaded_fails_the_tasks_that_use_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("hosts"), "remote1 ansible_connection=docker\n").expect("hosts");
    std::fs::write(dir.path().join("site.yml"), format!("{PLAY}    - command: /bin/true\n"))
        .expect("playbook");
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .current_dir(dir.path())
        .env("ANSIBLE_CONFIG", "")
        .output()
        .expect("tack runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    // ansible-core's words where the controller has it (`docker` is a collection's, not
    // ansible-core's); tack's where it has none.
    assert!(
        stdout
            .contains("fatal: [remote1]: FAILED! => {\"changed\": false, \"msg\": \"Task failed: ")
            && (stdout.contains("the connection plugin 'docker' was not found")
                || stdout.contains("tack cannot load the connection plugin 'docker'")),
        "{stdout}"
    );
}

#[test]
fn unsupported_keywords_are_refused_where_written() {
    let play = format!("{PLAY}    - debug: msg=x\n      debugger: always\n");
    refused(&play, &[], "tack does not support the task keyword 'debugger' yet", 1);
    // Action plugins ansible runs as jobs (`package`) do not run as jobs in tack yet; other
    // action plugins fail the task where it runs, as ansible's do.
    let play = format!("{PLAY}    - package: name=tack-none\n      async: 10\n");
    refused(&play, &[], "the task keyword 'async' with the action 'package' yet", 1);
    refused(&play, &[], "site.yml:5:7", 1);
    let play = format!("{PLAY}    - command: /bin/true\n      async: 10\n      timeout: 5\n");
    refused(&play, &[], "the task keyword 'timeout' with 'async' yet", 1);
    let play = format!(
        "{PLAY}    - include_tasks:\n        file: x.yml\n        apply: {{collections: [a.b]}}\n"
    );
    refused(&play, &[], "the include_tasks apply keyword 'collections'", 1);
    let play =
        "- hosts: all\n  gather_facts: false\n  strategy: debug\n  tasks:\n    - debug: msg=x\n";
    refused(play, &[], "tack does not support the strategy 'debug' yet", 1);
    let play = format!("{PLAY}    - file: path=/tmp state=directory\n      timeout: 5\n");
    refused(&play, &[], "the task keyword 'timeout' with the action 'file'", 1);
    let play = format!(
        "{PLAY}    - package: name=x\n      module_defaults: {{apt: {{update_cache: true}}}}\n"
    );
    refused(&play, &[], "module_defaults for 'ansible.builtin.apt' on a 'package' task", 1);
    let play = format!("{PLAY}    - debug: msg=x\n      debugger: on_failed\n");
    refused(&play, &[], "the task keyword 'debugger'", 1);
    // A codec tack has no encoder for; the ones it has run (golden run/template-output-encoding).
    let play = format!("{PLAY}    - template: src=t.j2 dest=/tmp/x output_encoding=Shift-JIS\n");
    refused(&play, &[], "the template option 'output_encoding: Shift-JIS' yet", 1);
    // A listing runs nothing: there is no run to record and no events to write.
    let play = format!("{PLAY}    - debug: msg=x\n");
    for option in ["--record", "--events"] {
        let wanted = format!("does not support {option} with a listing or --syntax-check");
        refused(&play, &["--list-tasks", option, "x"], &wanted, 5);
    }
}

/// An encoding named through a variable is refused when the task runs, before its template
/// renders or anything is written.
#[test]
fn a_templated_output_encoding_tack_cannot_encode_fails_the_task() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("t.j2"), "x\n").expect("template");
    let dest = dir.path().join("out");
    let play = format!(
        "{PLAY}    - template: src=t.j2 dest={} output_encoding={{{{ enc }}}}\n      vars: {{enc:          utf-7}}\n",
        dest.display()
    );
    let out = run(dir.path(), &play, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let wanted = "tack does not support the template option 'output_encoding: utf-7' yet";
    assert!(stdout.contains(wanted), "wanted {wanted:?} in:\n{stdout}");
    assert!(!dest.exists(), "the template was written");
}

/// `bytes` (a `!!binary` value) in the arguments of an action whose arguments go to a module
/// of its own is refused by name at the task, and nothing is made.
#[test]
fn bytes_in_the_arguments_of_a_host_action_are_refused_at_the_task() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("t.j2"), "x\n").expect("template");
    let dest = dir.path().join("made");
    let play = format!(
        "{PLAY}    - template:\n        src: t.j2\n        dest: {}\n        mode: !!binary MDY0NA==\n",
        dest.display()
    );
    let out = run(dir.path(), &play, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let wanted = "tack does not support bytes (a `!!binary` value) in the arguments of 'template'";
    assert!(stdout.contains(wanted), "wanted {wanted:?} in:\n{stdout}");
    assert!(!dest.exists(), "the file was made");
}

/// `vault(wrap_object=true)`'s text is the vault secret in ansible-core 2.21: tack refuses
/// to show it, at the task, and the secret is nowhere in the output.
#[test]
fn the_text_of_a_wrapped_vault_value_is_refused_and_never_shown() {
    let dir = tempfile::tempdir().expect("temp dir");
    let play = format!(
        "{PLAY}    - debug:\n        msg: \"{{{{ 'abc' | vault(pw, wrap_object=True) }}}}\"\n      \
         vars:\n        pw: hunter2secret\n"
    );
    let out = run(dir.path(), &play, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    let wanted = "tack does not use the value of vault(wrap_object=true) other than through \
                  unvault and tag tests";
    assert!(stdout.contains(wanted), "wanted {wanted:?} in:\n{stdout}");
    assert!(!stdout.contains("hunter2secret"), "the secret was shown:\n{stdout}");
}

/// A become method tack does not run is refused by name at the task (the method may come
/// from a variable), never faked: the task fails and nothing runs as that user.
#[test]
fn an_unsupported_become_method_is_refused_at_the_task() {
    let dir = tempfile::tempdir().expect("temp dir");
    let play = format!(
        "{PLAY}    - command: touch {}/made\n      become: true\n      become_user: nobody\n      \
         become_method: doas\n",
        dir.path().display()
    );
    let out = run(dir.path(), &play, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("tack does not support the become method 'doas' yet"), "{stdout}");
    assert!(!dir.path().join("made").exists());
}

#[test]
fn unsupported_options_are_refused_with_ansibles_option_error_code() {
    let play = format!("{PLAY}    - debug: msg=x\n");
    refused(&play, &["--step"], "tack does not support --step", 5);
    refused(&play, &["--scp-extra-args", "-l 10"], "does not support --scp-extra-args", 5);
    refused(&play, &["--sftp-extra-args", "-l 10"], "does not support --sftp-extra-args", 5);
}

/// What `-vvv` and `-vvvv` would show differently from ansible is refused by name, with
/// where it was written; without `-vvv` the same playbook runs.
#[test]
fn verbose_levels_refuse_what_they_cannot_show_as_ansible_does() {
    let play = "- hosts: all\n  gather_facts: false\n  vars_files: [v.yml]\n  tasks:\n    - include_role: name=r\n";
    refused(play, &["-vvv"], "tack does not support -vvv with vars_files and include_role yet", 1);
    refused(play, &["-vvv"], "site.yml:5:", 1);
    let play = "- hosts: all\n  gather_facts: false\n  vars_files: ['{{ x }}.yml']\n  tasks: []\n";
    refused(play, &["-vvv"], "with vars_files named by a template yet", 1);
    let play = "- hosts: all\n  strategy: free\n  vars_files: [v.yml]\n  tasks: []\n";
    refused(play, &["-vvv"], "with vars_files and a strategy other than linear yet", 1);
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("v.yml"), "a: 1\n").expect("vars file");
    let play = "- hosts: all\n  gather_facts: false\n  vars_files: [v.yml]\n  tasks:\n    - debug: var=a\n";
    let out = run(dir.path(), play, &["-vv"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Seed 002: a controller file is never sent under a name a managed host chose (a
/// registered value here): the task fails with the seed's words and nothing is written.
/// (What a host may name for `include_vars`, `include_tasks` and `include_role`, confined
/// to the role's and the playbook's directories, is `tests/host_named_paths.rs`'.)
#[test]
fn a_controller_file_a_host_named_is_never_sent() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("secret.yml"), "secret: 1\n").expect("secret");
    let cases = [
        ("copy: src={{ r.stdout }} dest={{ playbook_dir }}/out", "'src'", "never sent"),
        ("template: src={{ r.stdout }} dest={{ playbook_dir }}/out", "'src'", "never sent"),
        // The script itself named by the host (its arguments may be: they go to the host).
        ("script: \"{{ r.stdout }} --flag\"", "'_raw_params'", "never sent"),
    ];
    for (task, arg, verb) in cases {
        let play =
            format!("{PLAY}    - command: echo secret.yml\n      register: r\n    - {task}\n");
        let out = run(dir.path(), &play, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{task}: {stdout}");
        let wanted = format!(
            "the {arg} of this task was named by a managed host, and a controller file a host \
             chose is {verb}"
        );
        assert!(stdout.contains(&wanted), "{task}: {stdout}");
        assert!(!dir.path().join("out").exists(), "{task} wrote a file");
    }
}

/// `-K` asks at the controlling terminal; without one (ansible then reads stdin, warning
/// that the password may be echoed) it is refused by name, before anything runs.
#[test]
fn ask_become_pass_without_a_terminal_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tack = tack(dir.path(), &format!("{PLAY}    - debug: msg=x\n"), &["-K"]);
    // A session of its own: no controlling terminal, whatever runs the tests.
    let out = Command::new("setsid")
        .arg("--wait")
        .arg(tack.get_program())
        .args(tack.get_args())
        .current_dir(dir.path())
        .env("ANSIBLE_CONFIG", "")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("tack runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        stderr.contains(
            "tack does not support -K (--ask-become-pass) without a terminal to ask on yet"
        ),
        "{stderr}"
    );
}

/// ansible's own ssh-agent (`SSH_AGENT` other than `none`) changes every ssh connection of a
/// run; tack refuses it before anything runs.
#[test]
fn an_ssh_agent_setting_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("site.yml"), format!("{PLAY}    - debug: msg=x\n")).unwrap();
    std::fs::write(dir.path().join("hosts"), "h ansible_connection=local\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .current_dir(dir.path())
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_SSH_AGENT", "auto")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("does not support SSH_AGENT 'auto'"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("TASK"));
}

/// `unarchive` (ansible-core's module through the Python path) refuses an archive a host
/// named before looking it up, as `copy` does.
#[test]
fn an_archive_a_host_named_is_never_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("secret.tgz"), "not an archive").expect("secret");
    let play = format!(
        "{PLAY}    - command: echo secret.tgz\n      register: r\n    - unarchive: src={{{{ r.stdout }}}} dest={{{{ playbook_dir }}}}\n"
    );
    let out = run(dir.path(), &play, &["--ansible-python", "/opt/ansible-ref/bin/python"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains(
            "the 'src' of this task was named by a managed host, and a controller file a host \
             chose is never sent"
        ),
        "{stdout}"
    );
}

/// A module in `library/` of a style tack does not run (PowerShell here) fails its task by
/// name, where it runs; the play goes on.
#[test]
fn a_library_module_that_is_not_python_is_refused_by_name_when_it_runs() {
    if !Path::new("/opt/ansible-ref/bin/python").exists() {
        eprintln!("no ansible-core at /opt/ansible-ref: not run");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("library")).expect("library");
    std::fs::write(
        dir.path().join("library/oldie"),
        "#!powershell\n#Requires -Module Ansible.ModuleUtils.Legacy\n",
    )
    .expect("module");
    let play = format!(
        "{PLAY}    - oldie:\n      when: false\n    - oldie:\n      ignore_errors: true\n    - debug: msg=after\n"
    );
    let out = run(dir.path(), &play, &["--ansible-python", "/opt/ansible-ref/bin/python"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let oldie = dir.path().join("library/oldie");
    let wanted = format!(
        "tack does not run a module of ansible's 'powershell' style yet: {}",
        oldie.display()
    );
    assert!(stdout.contains(&wanted), "{stdout}");
    assert!(stdout.contains("\"msg\": \"after\""), "{stdout}");
}

/// `tack playbook` on `playbook` with the environment variable `name` set to `value`.
fn run_with_setting(playbook: &str, name: &str, value: &str) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    tack(dir.path(), playbook, &[]).env(name, value).output().expect("tack runs")
}

/// The task debugger, and a
/// `log_verbosity` above a listing's verbosity while a log is kept are refused by name before
/// anything runs: a run that kept no facts, or logged less than ansible would, must not look
/// like one that did.
/// A fact cache plugin from a collection runs through ansible-core; without one on the
/// controller the run is refused by name before anything runs, rather than keeping no facts.
#[test]
fn a_python_cache_plugin_without_ansible_core_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = tack(dir.path(), &format!("{PLAY}    - debug: msg=x\n"), &[])
        .env("ANSIBLE_CACHE_PLUGIN", "community.general.redis")
        // No interpreter that imports ansible: none named, none behind a command on `PATH`.
        .env("PATH", "/usr/bin:/bin")
        .env_remove("TACK_ANSIBLE_PYTHON")
        .output()
        .expect("tack runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains(
            "tack does not support fact_caching 'community.general.redis' without ansible-core \
             on the controller to run it: "
        ),
        "{stderr}"
    );
}

#[test]
fn settings_tack_does_not_apply_are_refused() {
    let play = format!("{PLAY}    - debug: msg=x\n");
    for (name, value, wanted) in [
        ("ANSIBLE_ENABLE_TASK_DEBUGGER", "true", "enable_task_debugger"),
        ("ANSIBLE_VERBOSE_TO_STDERR", "1", "verbose_to_stderr"),
        ("ANSIBLE_EXECUTABLE", "/bin/bash", "executable '/bin/bash'"),
        ("ANSIBLE_DEBUG", "1", "debug (ansible's internal debug messages)"),
        ("ANSIBLE_ALLOW_EMBEDDED_TEMPLATES", "false", "allow_embedded_templates false"),
        (
            "_ANSIBLE_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR",
            "error",
            "_TEMPLAR_UNTRUSTED_TEMPLATE_BEHAVIOR 'error'",
        ),
        (
            "ANSIBLE_VARS_ENABLED",
            "host_group_vars,community.general.x",
            "vars_plugins_enabled 'community.general.x'",
        ),
        ("ANSIBLE_MODULE_IGNORE_EXTS", ".py", "module_ignore_exts ['.py']"),
        ("ANSIBLE_MODULE_STRICT_UTF8_RESPONSE", "0", "module_strict_utf8_response false"),
        (
            "_ANSIBLE_TEMPLAR_SANDBOX_MODE",
            "allow_unsafe_attributes",
            "_ANSIBLE_TEMPLAR_SANDBOX_MODE 'allow_unsafe_attributes'",
        ),
        ("ANSIBLE_COW_PATH", "/bin/true", "nocows false with cowsay at /bin/true"),
    ] {
        let out = run_with_setting(&play, name, value);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(5), "{name}: {stderr}");
        assert!(stderr.contains(&format!("does not support {wanted}")), "{stderr}");
    }
    // A setting given its default value asks nothing tack does not do.
    for (name, value) in [
        ("ANSIBLE_DISPLAY_TRACEBACK", "always"),
        ("ANSIBLE_MODULE_STRICT_UTF8_RESPONSE", "1"),
        ("ANSIBLE_ACTION_WARNINGS", "0"),
    ] {
        let out = run_with_setting(&play, name, value);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("run.log");
    let out = tack(dir.path(), &play, &["-v", "--list-tasks"])
        .env("ANSIBLE_LOG_PATH", &log)
        .env("ANSIBLE_LOG_VERBOSITY", "3")
        .output()
        .expect("tack runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains(
            "tack playbook does not support log_verbosity 3 above the run's verbosity (1) \
             with a listing or --syntax-check"
        ),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("tasks:"), "it listed");
    // Without a log, `log_verbosity` changes nothing (ansible's neither).
    let out = tack(dir.path(), &play, &[]).env("ANSIBLE_LOG_VERBOSITY", "3").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `tack plan` keeps no `log_path` log: a plan changes nothing on the controller either.
#[test]
fn a_plan_writes_no_log() {
    let play = format!("{PLAY}    - debug: msg=x\n");
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("site.yml"), &play).unwrap();
    let log = dir.path().join("run.log");
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .current_dir(dir.path())
        .args(["plan", "-i", "localhost,", "-c", "local", "site.yml"])
        .env("ANSIBLE_LOG_PATH", &log)
        .output()
        .expect("tack runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!log.exists());
}

/// An ad hoc run that loads callbacks (`bin_ansible_callbacks`) would run
/// `callbacks_enabled` too: refused by name, nothing run. Without loading them, ansible's ad
/// hoc ignores the setting, and so does tack's.
#[test]
fn adhoc_callbacks_enabled_is_refused_only_when_callbacks_load() {
    let adhoc = |load: &str| {
        Command::new(env!("CARGO_BIN_EXE_tack"))
            .args(["adhoc", "-i", "localhost,", "-c", "local", "-m", "ping", "all"])
            .env("ANSIBLE_CALLBACKS_ENABLED", "ansible.posix.profile_tasks")
            .env("ANSIBLE_LOAD_CALLBACK_PLUGINS", load)
            .output()
            .expect("tack runs")
    };
    let out = adhoc("True");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "tack adhoc does not support the callback plugin 'ansible.posix.profile_tasks' \
             (callbacks_enabled) yet"
        ),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("pong"));
    let out = adhoc("False");
    assert!(String::from_utf8_lossy(&out.stdout).contains("pong"), "{out:?}");
}

#[test]
fn facts_modules_variable_is_refused_where_a_free_play_gathers() {
    // `linear` gathers through the `gather_facts` action (goldens `run/gather-facts-modules`);
    // the free strategies gather with `setup` alone.
    let dir = tempfile::tempdir().expect("temp dir");
    let playbook = "- hosts: all\n  strategy: free\n  vars:\n    ansible_facts_modules: [setup, my_facts]\n  tasks:\n    - debug: msg=never\n";
    let out = run(dir.path(), playbook, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tack does not support ansible_facts_modules [\"my_facts\"] (host 'h1')"),
        "{stderr}"
    );
    assert!(!stdout.contains("TASK [debug]"), "a task ran: {stdout}");
    // Without gathering the variable asks for nothing.
    let quiet =
        run(dir.path(), &playbook.replace("  vars:", "  gather_facts: false\n  vars:"), &[]);
    assert_eq!(quiet.status.code(), Some(0), "{}", String::from_utf8_lossy(&quiet.stderr));
}

/// Plugins from collections tack does not run are refused by name where they would run: a
/// become method, a connection, a strategy.
#[test]
fn collection_plugins_tack_does_not_run_are_refused_by_name() {
    for (keyword, wanted) in [
        (
            "  become: true\n  become_method: community.general.doas\n",
            "tack does not support the become method 'community.general.doas' (become plugins \
             from collections are not run) yet",
        ),
        (
            "  strategy: community.general.foo\n",
            "tack does not support the strategy 'community.general.foo' (",
        ),
    ] {
        let play = format!("- hosts: all\n  gather_facts: false\n{keyword}  tasks:\n    - ping:\n");
        let dir = tempfile::tempdir().expect("temp dir");
        let out = tack(dir.path(), &play, &[]).output().expect("tack runs");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_ne!(out.status.code(), Some(0), "{all}");
        assert!(all.contains(wanted), "{all}");
    }
}

/// A strategy plugin with code of its own (ansible-core asked what its class defines) is
/// refused by name, with what it defines, where the play that names it would start: the
/// plays before it run. One that only inherits ansible-core's runs as tack's own
/// (goldens `run/strategy-external`, `adhoc/strategy-external`).
#[test]
fn a_strategy_plugin_with_code_of_its_own_is_refused_with_what_it_defines() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(dir.path().join("strategy_plugins")).expect("plugin dir");
    std::fs::write(
        dir.path().join("strategy_plugins/mine.py"),
        "from ansible.plugins.strategy.linear import StrategyModule as Linear\n\n\n\
         class StrategyModule(Linear):\n    def run(self, iterator, play_context):\n        \
         return super().run(iterator, play_context)\n",
    )
    .expect("plugin");
    let play = format!(
        "{PLAY}    - debug: msg=first\n- hosts: all\n  gather_facts: false\n  strategy: mine\n  tasks:\n    - debug: msg=second\n"
    );
    let out = tack(dir.path(), &play, &["--ansible-python", "/opt/ansible-ref/bin/python"])
        .output()
        .expect("tack runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "tack does not support the strategy 'mine' (a strategy written in Python: its class \
             StrategyModule defines run; tack runs only the plugins that inherit ansible-core's \
             linear, free or host_pinned and change nothing) yet"
        ),
        "{stderr}"
    );
    assert!(stdout.contains("first") && !stdout.contains("second"), "{stdout}");
}

/// A `strategy` setting tack has no strategy for (a collection's) is refused by name before
/// anything runs, for playbooks and ad hoc runs alike, when a play would use it; a play that
/// names its own strategy does not.
#[test]
fn a_strategy_setting_tack_does_not_have_is_refused_where_it_applies() {
    let play = format!("{PLAY}    - debug: msg=x\n");
    let out = run_with_setting(&play, "ANSIBLE_STRATEGY", "ns.col.external");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "tack does not support the strategy 'ns.col.external' (the strategy setting;"
        ),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("TASK"), "it ran");
    let own =
        "- hosts: all\n  gather_facts: false\n  strategy: linear\n  tasks:\n    - debug: msg=x\n";
    let out = run_with_setting(own, "ANSIBLE_STRATEGY", "ns.col.external");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["adhoc", "-i", "localhost,", "-c", "local", "-m", "ping", "all"])
        .env("ANSIBLE_STRATEGY", "ns.col.external")
        .output()
        .expect("tack runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("the strategy 'ns.col.external'"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("pong"));
}

/// `playbook_vars_root` other than `top` is refused by name only where it would change what
/// the run reads: another playbook's (or a role's) directory with `group_vars`/`host_vars`.
#[test]
fn playbook_vars_root_is_refused_where_it_would_read_more() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("sub");
    std::fs::write(sub.join("inner.yml"), format!("{PLAY}    - debug: msg=x\n")).expect("inner");
    let outer = "- import_playbook: sub/inner.yml\n";
    let out = tack(dir.path(), outer, &[])
        .env("ANSIBLE_PLAYBOOK_VARS_ROOT", "all")
        .output()
        .expect("tack runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::create_dir(sub.join("group_vars")).expect("group_vars");
    let out = tack(dir.path(), outer, &[])
        .env("ANSIBLE_PLAYBOOK_VARS_ROOT", "all")
        .output()
        .expect("tack runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("does not support playbook_vars_root 'all'"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("TASK"), "it ran");
}

/// `inject_invocation` is honoured by modules (goldens `run/inject-invocation`) but refused
/// by name on the actions whose ansible plugin reports arguments it made for its module
/// (temporary files, checksums), as the task runs: the task fails, naming the setting, and
/// nothing is written.
#[test]
fn inject_invocation_is_refused_on_actions_that_make_their_modules_arguments() {
    // (`unarchive` is refused the same way; it needs ansible-core on the controller to run.)
    for action in ["copy", "template", "assemble"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let dest = dir.path().join("out");
        let play = format!(
            "{PLAY}    - ping:\n    - {action}:\n        src: site.yml\n        dest: {}\n",
            dest.display()
        );
        let out = tack(dir.path(), &play, &[])
            .env("ANSIBLE_INJECT_INVOCATION", "1")
            .output()
            .expect("tack runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{action}: {stdout}");
        let wanted =
            format!("tack does not support inject_invocation with the action '{action}' yet");
        assert!(stdout.contains(&wanted), "{action}: {stdout}");
        assert!(stdout.contains("ok: [h1]"), "the ping before it ran: {stdout}");
        assert!(!dest.exists(), "{action} wrote its destination");
    }
}

/// At `-vvvvv` ansible notes, while it loads, a `module_defaults` group member that does not
/// resolve; tack refuses the run there by name (and runs it below `-vvvvv`).
#[test]
fn an_unresolved_module_defaults_member_is_refused_at_vvvvv_only() {
    let dir = tempfile::tempdir().expect("temp dir");
    let meta = dir.path().join("collections/ansible_collections/ns/col/meta");
    std::fs::create_dir_all(&meta).expect("collection");
    std::fs::write(meta.join("runtime.yml"), "action_groups:\n  g:\n    - missing_mod\n")
        .expect("runtime.yml");
    let play = "- hosts: all\n  gather_facts: false\n  module_defaults:\n    group/ns.col.g: {}\n  tasks:\n    - debug: msg=x\n";
    let out = tack(dir.path(), play, &["-vvvvv"]).output().expect("tack runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("'Could not resolve action ns.col.missing_mod in module_defaults'"),
        "{stderr}"
    );
    let out = tack(dir.path(), play, &["-vvvv"]).output().expect("tack runs");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Under the module debugging settings (`keep_remote_files`, an AnsiballZ extension) what
/// tack runs with its own code on the host has no module file to keep or debug: an action
/// such as `copy`, and the play's fact gathering, are refused by name where they would run,
/// and what runs on the controller (`debug`) runs as before.
#[test]
fn module_debugging_refuses_what_tack_runs_with_its_own_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let play = format!(
        "{PLAY}    - debug: msg=still-runs\n    - copy: content=x dest={}/out\n      ignore_errors: true\n",
        dir.path().display()
    );
    let out = tack(dir.path(), &play, &[]).env("ANSIBLE_KEEP_REMOTE_FILES", "1").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("still-runs"));
    assert!(stdout.contains("tack does not support keep_remote_files for the 'copy' action"));
    assert!(!dir.path().join("out").exists());

    let gathering = "- hosts: all\n  tasks:\n    - debug: msg=x\n";
    let extension = ["-e", r#"{"_ansible_ansiballz_pydevd_config": {"module": "pydevd"}}"#];
    let out = tack(dir.path(), gathering, &extension).output().unwrap();
    let shown = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
    let shown = String::from_utf8_lossy(&shown);
    assert!(
        shown.contains("tack does not support _ansible_ansiballz_pydevd_config for fact gathering"),
        "{shown}"
    );
    assert_ne!(out.status.code(), Some(0));
}
