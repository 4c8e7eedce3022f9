//! Finding the configuration file as ansible's `find_ini_config_file` does: `$ANSIBLE_CONFIG`
//! (a file, or a directory holding `ansible.cfg`), `./ansible.cfg` unless the working directory
//! is world-writable, `~/.ansible.cfg`, then the system file; the first that exists and is
//! readable wins.
//!
//! Owns the search and its warning; it does not read the file.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use nix::unistd::{AccessFlags, access};

use crate::context::Context;
use crate::paths::{join, unfrackpath};

/// The outcome of the search.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovery {
    /// The file to read, if any.
    pub path: Option<String>,
    /// ansible's warning when a world-writable working directory's `ansible.cfg` was skipped.
    pub warning: Option<String>,
}

/// Searches for the configuration file.
pub fn find_config_file(ctx: &Context) -> Discovery {
    let mut candidates = Vec::new();

    let from_env = ctx.env.get("ANSIBLE_CONFIG").map(|value| {
        let path = unfrackpath(value, None, ctx);
        if Path::new(&path).is_dir() { join(&path, "ansible.cfg") } else { path }
    });
    candidates.extend(from_env.clone());

    let cwd_cfg = join(&ctx.cwd, "ansible.cfg");
    let mut skipped_public = false;
    match std::fs::metadata(&ctx.cwd) {
        Ok(meta) if meta.permissions().mode() & 0o002 != 0 => {
            skipped_public = Path::new(&cwd_cfg).exists();
        }
        Ok(_) => candidates.push(cwd_cfg),
        // An unreadable working directory is simply not a source.
        Err(_) => {}
    }

    candidates.push(unfrackpath("~/.ansible.cfg", None, ctx));
    candidates.push(ctx.system_config.clone());

    let path = candidates.into_iter().find(|p| access(Path::new(p), AccessFlags::R_OK).is_ok());
    // ansible compares against a sentinel when $ANSIBLE_CONFIG is unset, so then it always warns.
    let chosen_by_env = from_env.is_some() && from_env == path;
    let warning = (skipped_public && !chosen_by_env).then(|| {
        format!(
            "Ansible is being run in a world writable directory ({}), ignoring it as an \
             ansible.cfg source. For more information see \
             https://docs.ansible.com/ansible/devel/reference_appendices/config.html\
             #cfg-in-world-writable-dir",
            ctx.cwd
        )
    });
    Discovery { path, warning }
}
