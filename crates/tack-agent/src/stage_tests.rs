use std::os::unix::fs::{MetadataExt, PermissionsExt};

use super::*;

fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o777
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn the_directory_is_0700_and_files_0600_or_0700_for_an_executable() {
    let cache = tempfile::tempdir().unwrap();
    let mut stage = Stage::new(Some(cache.path().to_path_buf()));
    let plain = stage.put("web1", &hash(b"data"), b"data", false).unwrap();
    let script = stage.put("web1", &hash(b"#!/bin/sh\n"), b"#!/bin/sh\n", true).unwrap();
    let dir = stage.dir().unwrap().to_path_buf();
    assert_eq!(dir, cache.path().join(format!("stage-web1-{}", std::process::id())));
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&plain), 0o600);
    assert_eq!(mode(&script), 0o700);
    assert_eq!(std::fs::read(&plain).unwrap(), b"data");
    assert!(plain.file_name().unwrap().to_str().unwrap().ends_with(&hash(b"data")));
}

#[test]
fn bytes_that_do_not_match_their_hash_are_not_staged() {
    let cache = tempfile::tempdir().unwrap();
    let mut stage = Stage::new(Some(cache.path().to_path_buf()));
    let err = stage.put("web1", &hash(b"other"), b"data", false).unwrap_err();
    assert!(matches!(err, StageError::Hash { .. }), "{err}");
    assert!(names(cache.path()).is_empty(), "nothing was made");
}

#[test]
fn a_directory_another_uid_owns_is_refused() {
    let cache = tempfile::tempdir().unwrap();
    let dir = cache.path().join("stage-x");
    std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
    let ours = std::fs::metadata(&dir).unwrap().uid();
    check_private(&dir, ours).unwrap();
    // The same directory seen by an agent of another uid is not its alone.
    let err = check_private(&dir, ours.wrapping_add(1)).unwrap_err();
    assert!(matches!(err, StageError::NotPrivate(_)), "{err}");
    // Nor is one others may enter.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o750)).unwrap();
    assert!(matches!(check_private(&dir, ours), Err(StageError::NotPrivate(_))));
}

#[test]
fn a_link_where_the_directory_should_be_is_refused_and_left_alone() {
    let cache = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::set_permissions(elsewhere.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let name = format!("stage-web1-{}", std::process::id());
    std::os::unix::fs::symlink(elsewhere.path(), cache.path().join(&name)).unwrap();
    let mut stage = Stage::new(Some(cache.path().to_path_buf()));
    let err = stage.put("web1", &hash(b"data"), b"data", false).unwrap_err();
    assert!(matches!(err, StageError::NotPrivate(_)), "{err}");
    assert!(names(elsewhere.path()).is_empty(), "nothing was written through the link");
    assert!(std::fs::symlink_metadata(cache.path().join(&name)).unwrap().is_symlink());
}

#[test]
fn an_unstaged_file_is_gone_at_once_and_a_consumed_one_is_fine() {
    let cache = tempfile::tempdir().unwrap();
    let mut stage = Stage::new(Some(cache.path().to_path_buf()));
    let first = stage.put("web1", &hash(b"one"), b"one", false).unwrap();
    let second = stage.put("web1", &hash(b"one"), b"one", false).unwrap();
    assert_ne!(first, second, "each put has a name of its own");
    stage.remove(first.to_str().unwrap()).unwrap();
    assert!(!first.exists());
    assert!(second.exists(), "the other put is untouched");
    // A module that moved its source into place consumed it.
    std::fs::rename(&second, cache.path().join("moved")).unwrap();
    stage.remove(second.to_str().unwrap()).unwrap();
    // Only what this link staged may be removed.
    let outside = cache.path().join("moved");
    let err = stage.remove(outside.to_str().unwrap()).unwrap_err();
    assert!(matches!(err, StageError::NotStaged(_)), "{err}");
    assert!(outside.exists());
}

#[test]
fn closing_removes_the_whole_directory() {
    let cache = tempfile::tempdir().unwrap();
    let mut stage = Stage::new(Some(cache.path().to_path_buf()));
    stage.put("web1", &hash(b"left"), b"left", false).unwrap();
    let dir = stage.dir().unwrap().to_path_buf();
    stage.close();
    assert!(!dir.exists());
    assert!(names(cache.path()).is_empty());
}

#[test]
fn dead_agents_directories_of_the_same_host_are_removed_at_the_first_put() {
    let cache = tempfile::tempdir().unwrap();
    // A pid that is certainly dead: a child that has been reaped.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let make = |name: &str| {
        let dir = cache.path().join(name);
        std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        std::fs::write(dir.join("1-abc"), b"secret").unwrap();
    };
    make(&format!("stage-web1-{dead}"));
    // Another host's, and a live agent's of the same host (this process stands for it).
    make(&format!("stage-web2-{dead}"));
    let parent = std::os::unix::process::parent_id();
    make(&format!("stage-web1-{parent}"));
    let mut stage = Stage::new(Some(cache.path().to_path_buf()));
    stage.put("web1", &hash(b"x"), b"x", false).unwrap();
    let ours = format!("stage-web1-{}", std::process::id());
    assert_eq!(
        names(cache.path()),
        {
            let mut want = vec![ours, format!("stage-web1-{parent}"), format!("stage-web2-{dead}")];
            want.sort();
            want
        },
        "only the dead agent's directory of the same host went"
    );
}

#[test]
fn a_host_name_cannot_climb_or_pose_as_another_hosts_pid() {
    assert_eq!(dir_host("web1.example.com"), "web1.example.com");
    assert_eq!(dir_host("../../etc"), ".._.._etc");
    assert_eq!(dir_host(".."), "_..");
    assert_eq!(dir_host("a-1"), "a_1");
    assert_eq!(dir_host(""), "_");
}

#[test]
fn a_cache_others_may_write_to_is_refused() {
    let cache = tempfile::tempdir().unwrap();
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut stage = Stage::new(Some(cache.path().to_path_buf()));
    let err = stage.put("web1", &hash(b"data"), b"data", false).unwrap_err();
    assert!(matches!(err, StageError::OpenCache(_)), "{err}");
    assert!(names(cache.path()).is_empty());
}
