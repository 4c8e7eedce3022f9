//! `tack completions` and `tack man` (issue 25): made from the command line's definition, for
//! tack and for the ansible command names it answers to; an unknown name is refused by name.

use std::process::{Command, Output};

fn tack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tack")).args(args).output().unwrap()
}

fn text(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn completions_cover_tack_and_the_ansible_names() {
    let bash = text(&tack(&["completions", "bash"]));
    assert!(bash.contains("_tack()") && bash.contains("playbook"), "{bash}");
    let zsh = text(&tack(&["completions", "zsh", "--for", "ansible-playbook"]));
    assert!(zsh.starts_with("#compdef ansible-playbook"), "{zsh}");
    assert!(zsh.contains("--list-tasks"), "{zsh}");
    let fish = text(&tack(&["completions", "fish", "--for", "ansible-vault"]));
    assert!(fish.contains("complete -c ansible-vault") && fish.contains("encrypt_string"));
    let refused = tack(&["completions", "bash", "--for", "ansible-galaxy"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains(
        "ansible-galaxy is not a command tack answers to (tack, ansible-playbook, ansible, \
         ansible-inventory, ansible-vault)"
    ));
}

#[test]
fn manual_pages_for_every_command() {
    let page = text(&tack(&["man", "--for", "ansible-playbook"]));
    assert!(page.contains(".TH ansible-playbook 1"), "{page}");
    assert!(page.contains("\\-\\-syntax\\-check"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    text(&tack(&["man", "--dir", dir.path().to_str().unwrap()]));
    for name in ["tack", "tack-playbook", "tack-token-create", "ansible", "ansible-vault-view"] {
        let page = std::fs::read_to_string(dir.path().join(format!("{name}.1"))).unwrap();
        assert!(page.contains(&format!(".TH {name} 1")), "{name}: {page}");
    }
}
