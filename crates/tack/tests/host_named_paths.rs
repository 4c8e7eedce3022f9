//! A managed host never chooses a controller path (seed 002): a `src` whose render read what
//! a host said is refused before it is looked up, so the file it names is never opened; a
//! `fetch` writes nothing outside `dest`, not through a link planted under it, and never
//! under a `dest` a host named. What roles pick by facts (`include_vars`, `include_tasks`,
//! `include_role` and its `*_from`, file lookups, a template's includes) is found only inside
//! the role's and the playbook's directories: an absolute name outside them, a `..` that
//! climbs out or a link that leads out is refused before anything outside is opened; `pipe`,
//! `lines`, `env` and `password` with a host-named term are refused before they act.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const PLAY: &str = "- hosts: all\n  gather_facts: false\n  tasks:\n";

fn run(dir: &Path, playbook: &str) -> Output {
    std::fs::write(dir.join("hosts"), "h1 ansible_connection=local\n").unwrap();
    std::fs::write(dir.join("site.yml"), playbook).unwrap();
    Command::new(env!("CARGO_BIN_EXE_tack"))
        .args(["playbook", "-i", "hosts", "site.yml"])
        .args(["--ansible-python", "/opt/ansible-ref/bin/python"])
        .current_dir(dir)
        .env("ANSIBLE_CONFIG", "")
        .env("ANSIBLE_NOCOLOR", "1")
        .env("HOME", dir)
        .output()
        .expect("tack runs")
}

/// Watches a FIFO for a reader: opening a FIFO's write end without blocking succeeds only
/// while someone holds it open for reading, so any open of the "key" is seen (and a reader
/// that got in would block, which the watcher then ends by writing).
struct Watched {
    opened: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watched {
    fn fifo(path: &Path) -> Watched {
        let made = Command::new("mkfifo").arg("-m").arg("600").arg(path).status().unwrap();
        assert!(made.success(), "mkfifo {}", path.display());
        let (opened, stop) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let (seen, done, path) = (Arc::clone(&opened), Arc::clone(&stop), path.to_path_buf());
        let thread = std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let writer = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&path);
                if writer.is_ok() {
                    seen.store(true, Ordering::SeqCst);
                    // Let the reader finish rather than hang: it reads these bytes and EOF.
                    drop(writer);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        Watched { opened, stop, thread: Some(thread) }
    }

    fn was_opened(mut self) -> bool {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.opened.load(Ordering::SeqCst)
    }
}

#[test]
fn a_key_a_command_named_is_never_opened() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".ssh")).unwrap();
    let key = dir.path().join(".ssh/id_ed25519");
    let cases = [
        "copy: src={{ r.stdout }} dest={{ playbook_dir }}/out",
        "template: src={{ r.stdout }} dest={{ playbook_dir }}/out",
        "unarchive: src={{ r.stdout }} dest={{ playbook_dir }}",
        "script: '{{ r.stdout }}'",
        "assemble: src={{ r.stdout | dirname }} dest={{ playbook_dir }}/out remote_src=false",
        "uri: url=http://127.0.0.1:9/ method=POST src={{ r.stdout }}",
    ];
    for task in cases {
        let _ = std::fs::remove_file(&key);
        let watched = Watched::fifo(&key);
        let play = format!(
            "{PLAY}    - command: echo $HOME/.ssh/id_ed25519\n      register: r\n    - {task}\n"
        );
        let out = run(dir.path(), &play);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!watched.was_opened(), "{task} opened the key:\n{stdout}");
        assert_eq!(out.status.code(), Some(2), "{task}: {stdout}");
        let arg = if task.starts_with("script") { "_raw_params" } else { "src" };
        let verb = if task.starts_with("assemble") { "read" } else { "sent" };
        let wanted = format!(
            "the '{arg}' of this task was named by a managed host, and a controller file a host \
             chose is never {verb}"
        );
        assert!(stdout.contains(&wanted), "{task}: {stdout}");
        assert!(!dir.path().join("out").exists(), "{task} wrote a file");
    }
}

#[test]
fn fetch_never_writes_through_a_link_under_dest() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(dir.path().join("out")).unwrap();
    std::fs::write(dir.path().join("source.txt"), "host bytes\n").unwrap();
    // dest/<inventory_hostname> is a link out of dest.
    std::os::unix::fs::symlink(&elsewhere, dir.path().join("out/h1")).unwrap();
    let play = format!("{PLAY}    - fetch: src={{{{ playbook_dir }}}}/source.txt dest=out\n");
    let out = run(dir.path(), &play);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(stdout.contains("symbolic link"), "{stdout}");
    let written = std::fs::read_dir(&elsewhere).unwrap().count();
    assert_eq!(written, 0, "fetch wrote through the link:\n{stdout}");
}

#[test]
fn fetch_never_writes_under_a_dest_a_host_named() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("source.txt"), "host bytes\n").unwrap();
    let play = format!(
        "{PLAY}    - command: echo {{{{ playbook_dir }}}}/chosen\n      register: r\n    - fetch: src={{{{ playbook_dir }}}}/source.txt dest={{{{ r.stdout }}}}\n"
    );
    let out = run(dir.path(), &play);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains(
            "the 'dest' of this task was named by a managed host, and a controller path a host \
             chose is never written"
        ),
        "{stdout}"
    );
    assert!(!dir.path().join("chosen").exists());
}

/// A playbook directory `play/` with a role `web`, beside a directory `outside/` holding a
/// secret: a regular file (`secret.yml`, reached through links planted in every directory a
/// name is looked up in) and a watched FIFO (`key`, named directly).
struct Fixture {
    dir: tempfile::TempDir,
}

const SECRET: &str = "SECRET-31337";

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let (play, outside) = (dir.path().join("play"), dir.path().join("outside"));
        let secret = outside.join("secret.yml");
        std::fs::create_dir_all(outside.join("role/tasks")).unwrap();
        std::fs::write(&secret, format!("leaked: {SECRET}\n")).unwrap();
        std::fs::write(outside.join("role/tasks/main.yml"), format!("- debug: msg={SECRET}\n"))
            .unwrap();
        for sub in ["tasks", "vars", "defaults", "handlers", "files", "templates"] {
            let role_dir = play.join("roles/web").join(sub);
            std::fs::create_dir_all(&role_dir).unwrap();
            std::os::unix::fs::symlink(&secret, role_dir.join("link.yml")).unwrap();
            std::fs::create_dir_all(play.join(sub)).unwrap();
            std::os::unix::fs::symlink(&secret, play.join(sub).join("link.yml")).unwrap();
        }
        std::os::unix::fs::symlink(&secret, play.join("link.yml")).unwrap();
        std::os::unix::fs::symlink(&outside, play.join("roles/web/vars/linkdir")).unwrap();
        std::os::unix::fs::symlink(&outside, play.join("vars/linkdir")).unwrap();
        std::os::unix::fs::symlink(&outside, play.join("linkdir")).unwrap();
        std::os::unix::fs::symlink(outside.join("role"), play.join("roles/out")).unwrap();
        std::fs::write(play.join("roles/web/tasks/main.yml"), "- debug: msg=web\n").unwrap();
        std::fs::write(play.join("roles/web/tasks/Debian.yml"), "- debug: msg={{ pkg }}\n")
            .unwrap();
        std::fs::write(play.join("roles/web/vars/Debian.yml"), "pkg: deb-pkg\n").unwrap();
        std::fs::write(play.join("vars/Debian.yml"), "pkg: deb-pkg\nsrc_name: motd.j2\n").unwrap();
        std::fs::write(play.join("files/Debian.txt"), "debian notes\n").unwrap();
        std::fs::write(play.join("templates/motd.j2"), "motd\n").unwrap();
        std::fs::write(play.join("templates/inc.j2"), "{% include chosen %}\n").unwrap();
        std::fs::write(play.join("templates/imp.j2"), "{% import chosen as m with context %}x\n")
            .unwrap();
        Fixture { dir }
    }

    fn play(&self) -> std::path::PathBuf {
        self.dir.path().join("play")
    }

    fn key(&self) -> std::path::PathBuf {
        self.dir.path().join("outside/key")
    }

    /// Runs `task` after a command whose stdout (`r.stdout`) is `said`; the FIFO `key` is
    /// watched meanwhile. Returns whether it was opened, the exit code and stdout+stderr.
    fn run(&self, said: &str, task: &str) -> (bool, Option<i32>, String) {
        let _ = std::fs::remove_file(self.key());
        let watched = Watched::fifo(&self.key());
        let said = said.replace('\'', "'\"'\"'");
        let play =
            format!("{PLAY}    - command: printf %s '{said}'\n      register: r\n    - {task}\n");
        let out = run(&self.play(), &play);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (watched.was_opened(), out.status.code(), text)
    }

    /// The three ways out, as a host would name them: the watched key by an absolute path, by
    /// a `..` that climbs out from wherever it is joined, and a link planted inside.
    fn escapes(&self, link: &str) -> [String; 3] {
        let key = self.key().display().to_string();
        let climb = format!("{}{}", "../".repeat(12), key.trim_start_matches('/'));
        [key, climb, link.to_string()]
    }
}

/// Asserts a run was refused as a host-named name, opened nothing outside and showed nothing
/// of the secret.
fn assert_refused(case: &str, said: &str, (opened, code, text): (bool, Option<i32>, String)) {
    assert!(!opened, "{case} ({said}) opened the key:\n{text}");
    assert_ne!(code, Some(0), "{case} ({said}): {text}");
    assert!(text.contains("named by a managed host"), "{case} ({said}): {text}");
    assert!(!text.contains(SECRET), "{case} ({said}) showed the secret:\n{text}");
}

#[test]
fn includes_a_host_named_are_found_only_inside_the_role_and_the_playbook() {
    let f = Fixture::new();
    let cases = [
        ("include_vars: file={{ r.stdout }}", "link.yml"),
        ("include_vars: '{{ r.stdout }}'", "link.yml"),
        ("include_vars: dir={{ r.stdout }}", "linkdir"),
        ("include_tasks: '{{ r.stdout }}'", "link.yml"),
        ("include_tasks: file={{ r.stdout }}", "link.yml"),
        ("include_role: name={{ r.stdout }}", "out"),
        ("include_role: name=web tasks_from={{ r.stdout }}", "link.yml"),
        ("include_role: name=web vars_from={{ r.stdout }}", "link.yml"),
        ("include_role: name=web defaults_from={{ r.stdout }}", "link.yml"),
        ("include_role: name=web handlers_from={{ r.stdout }}", "link.yml"),
        ("include_vars: \"{{ lookup('first_found', [r.stdout]) }}\"", "link.yml"),
        ("include_vars: '{{ item }}'\n      with_first_found: ['{{ r.stdout }}']", "link.yml"),
    ];
    for (task, link) in cases {
        for said in f.escapes(link) {
            assert_refused(task, &said, f.run(&said, task));
        }
    }
}

#[test]
fn lookups_a_host_named_read_only_inside_the_role_and_the_playbook() {
    let f = Fixture::new();
    let cases = [
        "debug: msg={{ lookup('file', r.stdout) }}",
        "debug: msg={{ lookup('unvault', r.stdout) }}",
        "debug: msg={{ lookup('template', r.stdout) }}",
        "debug: msg={{ lookup('first_found', r.stdout) }}",
        "debug: msg={{ lookup('csvfile', 'leaked file=' ~ r.stdout ~ ' delimiter=:') }}",
        "debug: msg={{ lookup('ini', 'leaked type=properties file=' ~ r.stdout) }}",
        "debug: msg={{ item }}\n      with_file: ['{{ r.stdout }}']",
        "debug: msg={{ item }}\n      with_first_found: ['{{ r.stdout }}']",
        "template: src=inc.j2 dest={{ playbook_dir }}/out\n      vars: {chosen: '{{ r.stdout }}'}",
        "template: src=imp.j2 dest={{ playbook_dir }}/out\n      vars: {chosen: '{{ r.stdout }}'}",
    ];
    for task in cases {
        for said in f.escapes("link.yml") {
            assert_refused(task, &said, f.run(&said, task));
            assert!(!f.play().join("out").exists(), "{task} wrote a file");
        }
    }
    // A glob finds only files, so only the link can lead out.
    for task in [
        "debug: msg={{ lookup('fileglob', r.stdout) }}",
        "debug: msg={{ item }}\n      with_fileglob: ['{{ r.stdout }}']",
    ] {
        assert_refused(task, "link.yml", f.run("link.yml", task));
        assert_refused(task, "l*k.yml", f.run("l*k.yml", task));
    }
}

#[test]
fn commands_environment_and_passwords_a_host_named_are_refused_before_they_act() {
    let f = Fixture::new();
    let made = f.dir.path().join("made");
    let touch = format!("touch {}", made.display());
    let cases = [
        ("debug: msg={{ lookup('pipe', r.stdout) }}", touch.as_str()),
        ("debug: msg={{ lookup('lines', r.stdout) }}", touch.as_str()),
        ("debug: msg={{ item }}\n      with_lines: ['{{ r.stdout }}']", touch.as_str()),
        ("debug: msg={{ lookup('env', r.stdout) }}", "HOME"),
        ("debug: msg={{ lookup('password', r.stdout) }}", made.to_str().unwrap()),
    ];
    for (task, said) in cases {
        let (opened, code, text) = f.run(said, task);
        assert_refused(task, said, (opened, code, text.clone()));
        assert!(text.contains("lookup were named by a managed host"), "{task}: {text}");
        assert!(!made.exists(), "{task} acted");
    }
}

#[test]
fn what_a_host_named_inside_the_playbook_is_read_and_its_values_are_the_file_s() {
    let f = Fixture::new();
    let cases = [
        ("include_vars: 'vars/{{ r.stdout }}.yml'\n    - debug: var=pkg", "deb-pkg"),
        ("include_role: name=web tasks_from={{ r.stdout }}", "deb-pkg"),
        ("debug: msg={{ lookup('file', 'files/' ~ r.stdout ~ '.txt') }}", "debian notes"),
    ];
    for (task, shown) in cases {
        let task = if task.starts_with("include_role") {
            format!("include_vars: vars/Debian.yml\n    - {task}")
        } else {
            task.to_string()
        };
        let (opened, code, text) = f.run("Debian", &task);
        assert!(!opened);
        assert_eq!(code, Some(0), "{task}: {text}");
        assert!(text.contains(shown), "{task}: {text}");
    }
    // A vars file a host chose holds controller data: a template named by one of its values
    // is rendered, not refused.
    let task = "include_vars: 'vars/{{ r.stdout }}.yml'\n    - template: src={{ src_name }} dest={{ playbook_dir }}/motd";
    let (_, code, text) = f.run("Debian", task);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(std::fs::read_to_string(f.play().join("motd")).unwrap(), "motd\n");
}

/// The watch itself: a reader that opens the FIFO is seen.
#[test]
fn the_watch_sees_an_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fifo");
    let watched = Watched::fifo(&path);
    let reader =
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&path).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(reader);
    assert!(watched.was_opened());
}

/// A `vars_files` name a fact fills in (`vars/{{ ansible_facts.x }}.yml`) is rendered for each
/// host, and a fact is what a host said: outside the playbook's directory the file is never
/// opened, nothing of it becomes a variable, and the run says why.
#[test]
fn vars_files_a_fact_named_are_read_only_inside_the_playbook() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.play().join("library")).unwrap();
    std::fs::write(
        f.play().join("library/say_fact.py"),
        "from ansible.module_utils.basic import AnsibleModule\n\
         m = AnsibleModule({'said': {'type': 'str'}})\n\
         m.exit_json(ansible_facts={'chosen': m.params['said']})\n",
    )
    .unwrap();
    for said in f.escapes("link.yml") {
        let _ = std::fs::remove_file(f.key());
        let watched = Watched::fifo(&f.key());
        let play = format!(
            "- hosts: all\n  gather_facts: false\n  vars:\n    ansible_python_interpreter: \
             /opt/ansible-ref/bin/python\n  vars_files:\n    - \"{{{{ ansible_facts.chosen }}}}\"\n  \
             tasks:\n    - say_fact: said='{said}'\n    - debug: msg=\"{{{{ leaked | default('none') }}}}\"\n"
        );
        let out = run(&f.play(), &play);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!watched.was_opened(), "{said} opened the key:\n{text}");
        assert!(text.contains("named by a managed host"), "{said}: {text}");
        assert!(!text.contains(SECRET), "{said} showed the secret:\n{text}");
        assert!(text.contains("\"msg\": \"none\""), "{said}: {text}");
    }
}
