//! A managed host never chooses a controller path (seed 002): a `src` whose render read what
//! a host said is refused before it is looked up, so the file it names is never opened; a
//! `fetch` writes nothing outside `dest`, not through a link planted under it, and never
//! under a `dest` a host named.

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
