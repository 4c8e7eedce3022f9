//! What `--list-tasks` and `--list-tags` show for a play: the tasks of each compiled block's
//! main section that the tag filter lets run, named as ansible names them, with their
//! inherited and rendered tags.

use std::collections::BTreeSet;

use tack_diag::Diagnostic;
use tack_template::Templar;
use tack_yaml::{Mapping, Node, Value, pyrepr};

use crate::ast::{Play, Task, TaskKind};
use crate::compile::compile_play;
use crate::tables::{Keyword, actions};
use crate::tags::TagFilter;
use crate::walk::{Sections, TaskInContext, walk};

/// One listed task.
#[derive(Debug, Clone)]
pub struct ListedTask {
    pub name: String,
    /// The task's own and inherited tags, rendered.
    pub tags: BTreeSet<String>,
}

/// The tasks of a play that the filter selects.
#[derive(Debug, Clone)]
pub struct PlayTasks {
    pub tasks: Vec<ListedTask>,
}

/// A task's name as `--list-tasks` prints it (`role : name`, or the action when unnamed).
pub fn listed_name(play: &Play, task: &Task) -> Option<String> {
    let name = task.name().map(|n| pyrepr::str(&n.value)).filter(|n| !n.is_empty());
    match (name, &task.kind) {
        (Some(n), TaskKind::IncludeRole(_)) => Some(n),
        (Some(n), _) => Some(match task.role {
            Some(r) => format!("{} : {n}", play.role(r).name),
            None => n,
        }),
        (None, _) => None,
    }
}

fn render_tags(
    nodes: &[&Node],
    vars: &Mapping,
    templar: &Templar,
) -> Result<BTreeSet<String>, Diagnostic> {
    let mut out = BTreeSet::new();
    for node in nodes {
        let rendered = templar.render_with_vars(node, vars).map_err(|e| e.to_diagnostic())?;
        match &rendered.value {
            Value::Seq(items) => out.extend(items.iter().map(|i| pyrepr::str(&i.value))),
            other => {
                out.insert(pyrepr::str(other));
            }
        }
    }
    Ok(out)
}

/// A task's tags with every ancestor's, rendered (`evaluate_tags` renders each object's tags).
pub fn task_tags(
    ctx: &TaskInContext<'_>,
    vars: &Mapping,
    templar: &Templar,
) -> Result<BTreeSet<String>, Diagnostic> {
    let tags = ctx.extended(Keyword::Tags);
    render_tags(&tags, vars, templar)
}

/// The tags of the play's implicit setup tasks (fact gathering, the argument-spec check):
/// the play's own when it has any, else `always` (`PlayIterator`).
pub fn setup_tags(
    play: &Play,
    vars: &Mapping,
    templar: &Templar,
) -> Result<BTreeSet<String>, Diagnostic> {
    match play.attrs.get(Keyword::Tags) {
        Some(tags) => render_tags(&[tags], vars, templar),
        None => Ok(["always".to_string()].into()),
    }
}

/// The selected tasks of a play, in order (implicit meta tasks excluded).
pub fn list_tasks(
    play: &Play,
    vars: &Mapping,
    templar: &Templar,
    filter: &TagFilter,
) -> Result<PlayTasks, Diagnostic> {
    let compiled = compile_play(play);
    let mut tasks = Vec::new();
    // ansible lists only the main section of each block (not rescue/always).
    for ctx in walk(play, &compiled, Sections::BlockOnly) {
        let task = ctx.task;
        if task.implicit && actions::is(&task.action, actions::META) {
            continue;
        }
        let tags = task_tags(&ctx, vars, templar)?;
        if !filter.should_run(&tags) {
            continue;
        }
        let name = listed_name(play, task).unwrap_or_else(|| task.action.clone());
        tasks.push(ListedTask { name, tags });
    }
    Ok(PlayTasks { tasks })
}

/// The play's own tags, unrendered (ansible does not post-validate play tags).
pub fn play_tags(play: &Play) -> Vec<String> {
    let Some(tags) = play.attrs.get(Keyword::Tags) else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    let items: Vec<&Node> = match &tags.value {
        Value::Seq(items) => items.iter().collect(),
        _ => vec![tags],
    };
    for t in items {
        let s = pyrepr::str(&t.value);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}
