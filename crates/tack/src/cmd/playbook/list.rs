//! The listing and syntax-check side of `tack playbook`: `--syntax-check`, `--list-hosts`,
//! `--list-tasks` and `--list-tags`, printed as ansible-playbook 2.21 prints them.

use std::fmt::Write;

use tack_diag::Diagnostic;
use tack_playbook::Loader;
use tack_playbook::listing::{list_tasks, play_tags};
use tack_playbook::play_vars::play_vars;
use tack_playbook::post_validate::post_validate_play;
use tack_playbook::tags::TagFilter;
use tack_template::Templar;
use tack_yaml::{Node, Value};

use super::Args;
use crate::session::Session;

/// Loads every playbook and renders the requested listing.
pub(super) fn run(
    args: &Args,
    session: &Session,
    palette: Option<&tack_report::callback::color::Palette>,
) -> Result<String, Diagnostic> {
    let options = tack_playbook::LoadOptions {
        verbosity: args.verbosity.verbose,
        ..session.load_options(&args.module_path)
    };
    let loader = Loader::new(&session.loader, &options);
    let templar = Templar::new();
    let mut filter = TagFilter::from_cli(&args.tags, &args.skip_tags);
    if args.list_tags && args.tags.is_empty() && args.skip_tags.is_empty() {
        filter.only = ["never".to_string(), "all".to_string()].into();
    }

    let mut out = String::new();
    for path in &args.playbooks {
        let playbook = loader.load_playbook(path)?;
        let vvv = args.verbosity.verbose >= 3;
        if vvv {
            tack_engine::check_listing_verbosity(std::slice::from_ref(&playbook), 3)?;
        }
        if args.verbosity.verbose >= 2 {
            // Shown as each playbook loads, before any listing (which comes at the end): the
            // imports, from -vvv with the gatherings of `vars_files` as ansible loads.
            use std::io::Write as _;
            use tack_report::callback::color::{Hue, paint};
            let lines: Vec<(u8, String)> = if vvv {
                tack_engine::vars_file_load_lines(
                    &playbook,
                    &session.extra_vars,
                    &session.loader,
                    &templar,
                )?
            } else {
                playbook
                    .imported
                    .iter()
                    .map(|file| (2, format!("statically imported: {}", file.display())))
                    .collect()
            };
            let mut stdout = std::io::stdout().lock();
            let verbosity = args.verbosity.verbose;
            for (_, line) in lines.into_iter().filter(|(v, _)| *v <= verbosity) {
                let _ = writeln!(stdout, "{}", paint(palette, &line, Hue::Verbose));
            }
            let line = format!("{} plays in {}", playbook.plays.len(), path.display());
            let _ = writeln!(stdout, "{}", paint(palette, &line, Hue::Verbose));
        }
        let mut plays = Vec::new();
        let mut notes = String::new();
        for mut play in playbook.plays {
            // Listings never prompt: a prompted variable takes its default unless -e sets it.
            for prompt in play.vars_prompt.clone() {
                let Some(name) = prompt.get("name") else { continue };
                if session.extra_vars.get(&tack_yaml::pyrepr::str(&name.value)).is_some() {
                    continue;
                }
                let default =
                    prompt.get("default").cloned().unwrap_or_else(|| Node::bare(Value::Null));
                play.vars.insert(name.clone(), default);
            }
            let vars = play_vars(&play, &session.extra_vars, &session.loader, &templar)?;
            let keywords = post_validate_play(&play, &vars, &templar, &session.loader)?;
            let gathering: Vec<String> = if vvv {
                let notes = tack_engine::vars_file_notes(
                    &play,
                    &session.extra_vars,
                    &session.loader,
                    &templar,
                )?;
                let verbosity = args.verbosity.verbose;
                notes.into_iter().filter(|(v, _)| *v <= verbosity).map(|(_, l)| l).collect()
            } else {
                Vec::new()
            };
            // The playbook executor gathers twice per play (vars_prompt, post-validation).
            push_notes(&mut notes, &gathering, palette);
            push_notes(&mut notes, &gathering, palette);
            if !args.syntax_check {
                plays.push((play, keywords, vars, gathering));
            }
        }
        print_now(&notes);
        let _ = writeln!(out, "\nplaybook: {}", path.display());
        for (idx, (play, keywords, vars, gathering)) in plays.iter().enumerate() {
            let mine = play_tags(play);
            let _ = write!(
                out,
                "\n  play #{} ({}): {}",
                idx + 1,
                keywords.hosts.join(","),
                keywords.name
            );
            let _ = write!(out, "\tTAGS: [{}]", mine.join(","));
            if args.list_hosts {
                let data = session.inventory.data();
                let hosts: Vec<&str> = session
                    .inventory
                    .select(&keywords.hosts.join(","))?
                    .into_iter()
                    .map(|h| data.host(h).name.as_str())
                    .collect();
                let pattern = keywords
                    .hosts
                    .iter()
                    .map(|h| tack_yaml::pyrepr::str_repr(h))
                    .collect::<Vec<_>>()
                    .join(", ");
                let _ = write!(out, "\n    pattern: [{pattern}]\n    hosts ({}):", hosts.len());
                for h in hosts {
                    let _ = write!(out, "\n      {h}");
                }
            }
            out.push('\n');
            if args.list_tags || args.list_tasks {
                // The listing gathers the play's variables once more to list its tasks.
                push_notes(&mut out, gathering, palette);
                let listed = list_tasks(play, vars, &templar, &filter)?;
                let mut msg = String::new();
                if args.list_tasks {
                    msg.push_str("    tasks:\n");
                }
                let mut all_tags: std::collections::BTreeSet<String> =
                    mine.iter().cloned().collect();
                for task in &listed.tasks {
                    all_tags.extend(task.tags.iter().cloned());
                    if args.list_tasks {
                        let mut cur: std::collections::BTreeSet<String> =
                            mine.iter().cloned().collect();
                        cur.extend(task.tags.iter().cloned());
                        let cur: Vec<String> = cur.into_iter().collect();
                        let _ = writeln!(msg, "      {}\tTAGS: [{}]", task.name, cur.join(", "));
                    }
                }
                if args.list_tags {
                    let all: Vec<String> = all_tags.into_iter().collect();
                    let _ = writeln!(msg, "      TASK TAGS: [{}]", all.join(", "));
                }
                // ansible's display adds a newline only to text that does not end with one.
                out.push_str(&msg);
                if !msg.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
    }
    Ok(out)
}

/// Appends `-vvv` notes to `out`, one line each, painted as verbose text.
fn push_notes(
    out: &mut String,
    notes: &[String],
    palette: Option<&tack_report::callback::color::Palette>,
) {
    use tack_report::callback::color::{Hue, paint};
    for note in notes {
        let _ = writeln!(out, "{}", paint(palette, note, Hue::Verbose));
    }
}

/// Prints what ansible shows while it loads, before the listing that comes at the end.
fn print_now(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
