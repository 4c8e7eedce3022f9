//! ansible's `-vvv` note ``Read `vars_file` 'path'.``: printed each time its variable manager
//! gathers a play's variables, once per `vars_files` item that found a file (after the
//! `-vvvvv` lines of the places it looked). This module says
//! where those gatherings fall in a run, as the linear strategy makes them at `-f 1`: two per
//! play and one per batch before the batch's `PLAY` banner, and one per host a task (or meta
//! task, or handler) is queued for: the first host's before the task's banner, the next
//! `forks` hosts' before the first host's result (each is queued at once while a worker is
//! free), then host `i + forks`'s just before host `i`'s result (its queueing waits for a
//! worker, and the results are read after it).
//!
//! What the notes cannot follow yet (templated names, which ansible renders per host; other
//! strategies; includes and delegation, whose gatherings happen in a worker) is refused by
//! `crate::verbose` before anything runs. This module only prints notes; it reads no file.

use tack_report::callback::Callback;

/// The notes of one gathering of a play's variables (empty below `-vvv`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReadNotes {
    /// Each line with the `-v` count it needs.
    lines: Vec<(u8, String)>,
    /// `-f`: how many workers the strategy queues hosts to.
    forks: usize,
}

impl ReadNotes {
    /// The notes of one gathering of a play's variables (`PlayVarLayers::read_notes`) shown
    /// at `-v` count `verbosity`.
    pub(crate) fn new(notes: &[(u8, String)], verbosity: i64, forks: i64) -> ReadNotes {
        let lines: Vec<(u8, String)> =
            notes.iter().filter(|(level, _)| i64::from(*level) <= verbosity).cloned().collect();
        if lines.is_empty() {
            return ReadNotes::default();
        }
        let forks = usize::try_from(forks).unwrap_or(1).max(1);
        ReadNotes { lines, forks }
    }

    /// One gathering's lines, with the `-v` count each needs.
    pub(crate) fn lines(&self) -> &[(u8, String)] {
        &self.lines
    }

    /// One gathering: each note.
    pub(crate) fn show(&self, callback: &mut dyn Callback) {
        for (level, line) in &self.lines {
            callback.verbose_line(*level, line);
        }
    }

    /// `times` gatherings in a row.
    pub(crate) fn show_times(&self, callback: &mut dyn Callback, times: usize) {
        for _ in 0..times {
            self.show(callback);
        }
    }

    /// Before `host`'s result among `hosts` (queued in that order): the gatherings of the
    /// hosts queued before it is read (see the module's notes).
    pub(crate) fn before_result(&self, hosts: &[String], host: &str, callback: &mut dyn Callback) {
        if self.lines.is_empty() {
            return;
        }
        let Some(i) = hosts.iter().position(|h| h == host) else { return };
        let last = hosts.len() - 1;
        let times = if i == 0 { self.forks.min(last) } else { usize::from(i + self.forks <= last) };
        self.show_times(callback, times);
    }
}

/// How many times loading `play`'s roles gathers its variables: once per role named in
/// `roles:` and once per dependency each names, at every depth (a role named twice loads its
/// dependencies twice).
pub(crate) fn role_gatherings(play: &tack_playbook::Play) -> usize {
    fn count(play: &tack_playbook::Play, id: tack_playbook::RoleId, depth: usize) -> usize {
        // Dependency cycles are refused by the loader; the depth keeps this finite anyway.
        if depth > 64 {
            return 1;
        }
        1 + play.role(id).dependencies.iter().map(|d| count(play, *d, depth + 1)).sum::<usize>()
    }
    play.roles.iter().map(|id| count(play, *id, 0)).sum()
}

/// How many `include_tasks` tasks loading `play` meets (its sections, its roles' task files,
/// its handlers): each gathers the play's variables as it is loaded.
pub(crate) fn include_gatherings(play: &tack_playbook::Play) -> usize {
    use tack_playbook::tables::actions as names;
    let compiled = tack_playbook::compile::compile_play(play);
    let handlers = crate::handlers::handler_blocks(play);
    let walk = tack_playbook::walk::walk;
    let all = tack_playbook::walk::Sections::All;
    walk(play, &compiled, all)
        .into_iter()
        .chain(walk(play, &handlers, all))
        .filter(|ctx| names::is(&ctx.task.action, names::INCLUDE_TASKS))
        .count()
}

/// The lines ansible prints while it loads `playbook`, with the `-v` count each needs: for
/// each play, one gathering per role loaded for its `roles:` (to find the role), then
/// for each task file it imports one gathering and `statically imported: file` (`-vv`). An
/// `import_role`, which gathers more, is refused by `crate::verbose`, as are imports in a
/// play whose roles gather more than once (a role's own imports come between the roles'
/// gatherings).
pub fn load_lines(
    playbook: &tack_playbook::Playbook,
    extra_vars: &tack_yaml::Mapping,
    loader: &tack_loader::DataLoader,
    templar: &tack_template::Templar,
) -> Result<Vec<(u8, String)>, tack_diag::Diagnostic> {
    let mut out = Vec::new();
    let mut from = 0;
    for (play, mark) in playbook.plays.iter().zip(&playbook.import_marks) {
        let notes = gathering_notes(play, extra_vars, loader, templar)?;
        let gathering = |out: &mut Vec<(u8, String)>| {
            out.extend(notes.iter().cloned());
        };
        // Each `include_tasks` the play loads gathers too (imports with them are refused, so
        // every note here is the same line and only their count matters).
        for _ in 0..role_gatherings(play) + include_gatherings(play) {
            gathering(&mut out);
        }
        for file in playbook.imported.get(from..*mark).unwrap_or_default() {
            gathering(&mut out);
            out.push((2, format!("statically imported: {}", file.display())));
        }
        from = *mark;
    }
    Ok(out)
}

/// The notes of one gathering of `play`'s variables, with the `-v` count each needs (for
/// the listings, which gather twice per play as the playbook executor runs, then once more
/// per play listed with its tasks or tags).
pub fn gathering_notes(
    play: &tack_playbook::Play,
    extra_vars: &tack_yaml::Mapping,
    loader: &tack_loader::DataLoader,
    templar: &tack_template::Templar,
) -> Result<Vec<(u8, String)>, tack_diag::Diagnostic> {
    if play.vars_files.is_empty() {
        return Ok(Vec::new());
    }
    let layers = tack_playbook::play_vars::play_var_layers(play, extra_vars, loader, templar)?;
    Ok(layers.read_notes)
}
