//! ansible's `-vvv` note ``Read `vars_file` 'path'.``: printed each time its variable manager
//! gathers a play's variables, once per `vars_files` item that found a file. This module says
//! where those gatherings fall in a run, as the linear strategy makes them at `-f 1`: two per
//! play and one per batch before the batch's `PLAY` banner, and one per host a task (or meta
//! task, or handler) is queued for: the first host's before the task's banner, each next
//! host's just before the previous host's result (its worker is still starting when the
//! strategy gathers the next host's variables).
//!
//! What the notes cannot follow yet (templated names, which ansible renders per host; other
//! strategies; includes and delegation, whose gatherings happen in a worker) is refused by
//! `crate::verbose` before anything runs. This module only prints notes; it reads no file.

use std::path::PathBuf;

use crate::callback::Callback;

/// The notes of one gathering of a play's variables (empty below `-vvv`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadNotes {
    lines: Vec<String>,
}

impl ReadNotes {
    /// The notes for the files a play's `vars_files` read, at `-v` count `verbosity`.
    pub(crate) fn new(read: &[PathBuf], verbosity: i64) -> ReadNotes {
        if verbosity < 3 {
            return ReadNotes::default();
        }
        let lines = read
            .iter()
            .map(|p| format!("Read `vars_file` {}.", tack_py::repr::str_repr(&p.to_string_lossy())))
            .collect();
        ReadNotes { lines }
    }

    /// One gathering's lines.
    pub(crate) fn lines(&self) -> &[String] {
        &self.lines
    }

    /// One gathering: each file's note.
    pub(crate) fn show(&self, callback: &mut dyn Callback) {
        for line in &self.lines {
            callback.verbose_line(3, line);
        }
    }

    /// `times` gatherings in a row.
    pub(crate) fn show_times(&self, callback: &mut dyn Callback, times: usize) {
        for _ in 0..times {
            self.show(callback);
        }
    }

    /// Before `host`'s result among `hosts` (queued in that order): the next host's
    /// gathering, if there is a next host.
    pub(crate) fn before_result(&self, hosts: &[String], host: &str, callback: &mut dyn Callback) {
        if self.lines.is_empty() {
            return;
        }
        if let Some(i) = hosts.iter().position(|h| h == host)
            && i + 1 < hosts.len()
        {
            self.show(callback);
        }
    }
}

/// The notes ansible prints while it loads the playbooks, before any play starts: each role
/// named in a play's `roles:` gathers that play's variables once to render its name (the
/// dependencies and imports that would gather more are refused by `crate::verbose`).
pub(crate) fn load_notes(
    ctx: &crate::RunContext<'_>,
    playbooks: &[tack_playbook::Playbook],
) -> Result<Vec<String>, tack_diag::Diagnostic> {
    let mut out = Vec::new();
    if ctx.facts.verbosity < 3 {
        return Ok(out);
    }
    for play in playbooks.iter().flat_map(|p| &p.plays) {
        if play.vars_files.is_empty() || play.roles.is_empty() {
            continue;
        }
        let notes = gathering_notes(play, ctx.extra_vars, ctx.loader, ctx.templar)?;
        for _ in &play.roles {
            out.extend(notes.iter().cloned());
        }
    }
    Ok(out)
}

/// The `-vvv` notes of one gathering of `play`'s variables (for the listings, which gather
/// twice per play as the playbook executor runs, then once more per play listed with its
/// tasks or tags).
pub fn gathering_notes(
    play: &tack_playbook::Play,
    extra_vars: &tack_yaml::Mapping,
    loader: &tack_loader::DataLoader,
    templar: &tack_template::Templar,
) -> Result<Vec<String>, tack_diag::Diagnostic> {
    if play.vars_files.is_empty() {
        return Ok(Vec::new());
    }
    let layers = tack_playbook::play_vars::play_var_layers(play, extra_vars, loader, templar)?;
    Ok(ReadNotes::new(&layers.read, 3).lines)
}
