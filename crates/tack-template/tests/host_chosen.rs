//! Lookups and template includes whose names a managed host chose (seed 002): file lookups
//! find files only inside the role's and the playbook's directories, `pipe`, `lines`, `env`
//! and `password` are refused before they act, and a name written in the template works as
//! in ansible, whatever else the render read.

use std::path::Path;
use std::sync::Arc;

use tack_loader::DataLoader;
use tack_template::{Layer, Provenance, Scope, Templar};
use tack_yaml::Node;

fn yaml(text: &str) -> Node {
    tack_yaml::load_one(text, None).expect("test YAML")
}

fn layer(text: &str, provenance: Provenance) -> Arc<Layer> {
    Arc::new(Layer::from_mapping(yaml(text).as_map().expect("a mapping"), provenance))
}

/// A playbook directory with `files/Debian.txt`, a secret beside it (outside), and a link
/// out of it; the templar's base directory is the playbook's.
struct Play {
    dir: tempfile::TempDir,
    templar: Templar,
}

impl Play {
    fn new() -> Play {
        let dir = tempfile::tempdir().unwrap();
        let play = dir.path().join("play");
        std::fs::create_dir_all(play.join("files")).unwrap();
        std::fs::create_dir_all(play.join("templates")).unwrap();
        std::fs::write(play.join("files/Debian.txt"), "debian\n").unwrap();
        std::fs::write(play.join("templates/Debian.j2"), "tpl {{ 1 + 1 }}\n").unwrap();
        std::fs::write(dir.path().join("secret"), "secret\n").unwrap();
        for sub in ["files", "templates"] {
            let link = play.join(sub).join("out.txt");
            std::os::unix::fs::symlink(dir.path().join("secret"), link).unwrap();
        }
        let mut loader = DataLoader::new(Default::default());
        loader.set_basedir(&play);
        let templar = Templar::with_loader(Arc::new(loader));
        Play { dir, templar }
    }

    fn play(&self) -> std::path::PathBuf {
        self.dir.path().join("play")
    }

    /// Facts (from the host), and trusted variables, one of them a template reading a fact.
    fn scope(&self, fact: &str) -> Scope {
        let secret = self.dir.path().join("secret");
        Scope::new()
            .with_layer(layer(
                &format!(
                    "playbook_dir: {}\nwritten: Debian.txt\nsecret_path: {}\n\
                     via_fact: '{{{{ ansible_os_family }}}}.txt'\n\
                     names: ['{{{{ ansible_os_family }}}}.txt']\n",
                    self.play().display(),
                    secret.display()
                ),
                Provenance::Trusted,
            ))
            .with_layer(layer(
                &format!("ansible_os_family: '{fact}'\nchosen: '{fact}'\n"),
                Provenance::ManagedHost,
            ))
    }

    fn render(&self, source: &str, fact: &str) -> Result<String, String> {
        self.templar
            .render_str(source, &self.scope(fact))
            .map(|r| tack_yaml::pyrepr::str(&r.value.value))
            .map_err(|e| e.message)
    }
}

const CONFINED: &str = "named by a managed host, and a controller file a host chose is read \
                        only inside the role's and the playbook's directories";

#[test]
fn a_file_a_fact_chose_inside_the_playbook_is_read() {
    let p = Play::new();
    let read = |s: &str| p.render(s, "Debian").unwrap();
    assert_eq!(read("{{ lookup('file', ansible_os_family ~ '.txt') }}"), "debian");
    assert_eq!(read("{{ lookup('file', via_fact) }}"), "debian");
    assert_eq!(read("{{ query('file', names[0]) }}"), "['debian']");
    assert_eq!(read("{{ lookup('template', ansible_os_family ~ '.j2') }}"), "tpl 2\n");
    let first = "{{ lookup('first_found', [chosen ~ '.txt', 'default.txt']) | basename }}";
    assert_eq!(read(first), "Debian.txt");
    // An absolute name built from a trusted directory stays inside it.
    assert_eq!(read("{{ lookup('file', playbook_dir ~ '/files/' ~ chosen ~ '.txt') }}"), "debian");
}

#[test]
fn a_file_a_fact_chose_outside_the_playbook_is_refused() {
    let p = Play::new();
    let secret = p.dir.path().join("secret");
    for (fact, why) in [
        (secret.to_str().unwrap(), "is an absolute path outside them"),
        ("../../../../../../etc/shadow", "climbs out with '..'"),
        ("~/.ssh/id_ed25519", "starts with '~'"),
        ("out.txt", "reaches a symbolic link out of them"),
    ] {
        for lookup in ["file", "unvault", "template", "first_found", "fileglob"] {
            let source = format!("{{{{ lookup('{lookup}', chosen) }}}}");
            let err = p.render(&source, fact).expect_err("refused");
            let want = format!("the terms of the '{lookup}' lookup were {CONFINED}: '");
            // fileglob finds nothing for a name that is not a link: only the link is read.
            if lookup == "fileglob" && why != "reaches a symbolic link out of them" {
                continue;
            }
            assert!(err.contains(&want), "{lookup} {fact}: {err}");
            assert!(err.ends_with(why) || err.contains(why), "{lookup} {fact}: {err}");
            assert!(!err.contains("secret\n"), "{err}");
        }
    }
}

#[test]
fn commands_environment_and_passwords_a_host_named_are_refused() {
    let p = Play::new();
    let made = p.dir.path().join("made");
    for (lookup, what) in [
        ("pipe", "command a host chose is never run"),
        ("lines", "command a host chose is never run"),
        ("env", "environment variable a host chose is never read"),
        ("password", "file a host chose is never written"),
    ] {
        let fact = format!("touch {}", made.display());
        let fact = if lookup == "password" { made.display().to_string() } else { fact };
        let err = p.render(&format!("{{{{ lookup('{lookup}', chosen) }}}}"), &fact);
        let err = err.expect_err("refused");
        assert_eq!(
            err,
            format!(
                "the terms of the '{lookup}' lookup were named by a managed host, and a \
                 controller {what}"
            )
        );
        assert!(!made.exists(), "{lookup} acted");
        // errors=ignore does not turn a refusal into an empty result.
        let ignored = format!("{{{{ lookup('{lookup}', chosen, errors='ignore') }}}}");
        assert!(p.render(&ignored, &fact).is_err());
    }
}

#[test]
fn what_the_template_wrote_works_whatever_else_it_read() {
    let p = Play::new();
    let read = |s: &str| p.render(s, "Debian");
    // A host value read before, beside or after a lookup with written arguments.
    assert_eq!(
        read("{{ ansible_os_family }} {{ lookup('pipe', 'echo hi') }}").unwrap(),
        "Debian hi"
    );
    assert_eq!(
        read("{{ lookup('pipe', 'echo ' ~ written) if ansible_os_family == 'Debian' }}").unwrap(),
        "echo Debian.txt".replace("echo ", "")
    );
    assert_eq!(read("{{ lookup('env', 'NO_SUCH_VARIABLE_X') ~ chosen }}").unwrap(), "Debian");
    assert_eq!(read("{{ lookup('file', secret_path) }} {{ chosen }}").unwrap(), "secret Debian");
}

#[test]
fn a_name_the_template_set_from_a_host_value_is_the_host_s() {
    let p = Play::new();
    let err = p
        .render("{% set c = chosen %}{{ lookup('pipe', 'echo ' ~ c) }}", "x; touch /tmp/y")
        .expect_err("refused");
    assert!(err.contains("'pipe' lookup were named by a managed host"), "{err}");
    let err = p
        .render("{% for c in [chosen] %}{{ lookup('env', c) }}{% endfor %}", "HOME")
        .expect_err("refused");
    assert!(err.contains("'env' lookup were named by a managed host"), "{err}");
    // A lazily rendered list item that reads a fact is read before the question is asked.
    let err = p.render("{{ lookup('pipe', names) }}", "x").expect_err("refused");
    assert!(err.contains("'pipe' lookup were named by a managed host"), "{err}");
    // The lookup passed around as a value is judged by what the render read.
    let err = p.render("{% set f = lookup %}{{ chosen }}{{ f('env', 'HOME') }}", "x");
    assert!(err.expect_err("refused").contains("'env' lookup were named"));
}

#[test]
fn a_template_file_includes_what_a_host_chose_only_from_its_search_path() {
    let p = Play::new();
    let templates = p.play().join("templates");
    std::fs::write(templates.join("part-Debian.j2"), "part\n").unwrap();
    std::os::unix::fs::symlink(p.dir.path().join("secret"), templates.join("part-out.j2")).unwrap();
    let main = templates.join("main.j2");
    std::fs::write(&main, "{% include 'part-' ~ chosen ~ '.j2' %}\n").unwrap();
    let render = |fact: &str| {
        p.templar
            .render_file(Path::new(&main), &p.scope(fact))
            .map(|r| tack_yaml::pyrepr::str(&r.value.value))
    };
    assert_eq!(render("Debian").unwrap(), "part\n");
    let err = render("out").expect_err("refused").message;
    assert!(
        err.contains("the template an include or import names was named by a managed host"),
        "{err}"
    );
    assert!(err.contains("reaches a symbolic link out of them"), "{err}");
    let err = render("/../../../../../etc/shadow").expect_err("refused").message;
    assert!(err.contains("climbs out with '..'"), "{err}");
    // A name the file wrote includes as in ansible, after a host value was read.
    // In the file the render started with, a lookup's written terms are the playbook's even
    // after a host value was read; a name the file set from a host value is the host's.
    let own = templates.join("own.j2");
    std::fs::write(&own, "{{ chosen }} {{ lookup('pipe', 'echo hi') }}\n").unwrap();
    let out = p.templar.render_file(Path::new(&own), &p.scope("x")).unwrap();
    assert_eq!(tack_yaml::pyrepr::str(&out.value.value), "x hi\n");
    let set = templates.join("set.j2");
    std::fs::write(&set, "{% set c = chosen %}{{ lookup('pipe', c) }}\n").unwrap();
    let err = p.templar.render_file(Path::new(&set), &p.scope("echo x")).expect_err("refused");
    assert!(err.message.contains("'pipe' lookup were named by a managed host"), "{}", err.message);
    // An included file may see names of the file that included it: judged by what the
    // render read so far.
    std::fs::write(templates.join("part-pipe.j2"), "{{ lookup('pipe', c) }}\n").unwrap();
    let parent = templates.join("parent.j2");
    std::fs::write(&parent, "{% set c = chosen %}{% include 'part-pipe.j2' %}\n").unwrap();
    let err = p.templar.render_file(Path::new(&parent), &p.scope("echo x")).expect_err("refused");
    assert!(err.message.contains("'pipe' lookup were named by a managed host"), "{}", err.message);
    let written = templates.join("written.j2");
    std::fs::write(&written, "{{ chosen }} {% include 'part-Debian.j2' %}\n").unwrap();
    let out = p.templar.render_file(Path::new(&written), &p.scope("x")).unwrap();
    assert_eq!(tack_yaml::pyrepr::str(&out.value.value), "x part\n");
}
