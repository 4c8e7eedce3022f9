//! Walking a compiled play task by task, with each task's ancestry: the objects ansible-core
//! consults, in its order, when a keyword is not set on the task itself (parent blocks, the
//! tasks that imported them, the role and its dependency chain, the play).

use crate::ast::{Block, BlockOrigin, Play, Role, RoleId, Task, TaskEntry};
use crate::compile::CompiledBlock;
use crate::tables::Keyword;
use tack_yaml::{Node, Value};

/// One object whose keywords a task may inherit.
#[derive(Debug, Clone, Copy)]
pub enum Ancestor<'a> {
    Block(&'a Block),
    /// An `import_tasks` / `import_role` task whose file's blocks contain the task.
    Import(&'a Task),
    Role(&'a Role),
    Play(&'a Play),
}

impl<'a> Ancestor<'a> {
    pub fn get(&self, kw: Keyword) -> Option<&'a Node> {
        match self {
            Ancestor::Block(b) => b.attrs.get(kw),
            Ancestor::Import(t) => t.attrs.get(kw),
            Ancestor::Role(r) => r.attrs.get(kw),
            Ancestor::Play(p) => p.attrs.get(kw),
        }
    }

    fn same(&self, other: &Ancestor<'a>) -> bool {
        match (self, other) {
            (Ancestor::Block(a), Ancestor::Block(b)) => std::ptr::eq(*a, *b),
            (Ancestor::Import(a), Ancestor::Import(b)) => std::ptr::eq(*a, *b),
            (Ancestor::Role(a), Ancestor::Role(b)) => std::ptr::eq(*a, *b),
            (Ancestor::Play(a), Ancestor::Play(b)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

/// A task reached by the walk, with its ancestry (nearest first, each object once).
#[derive(Debug, Clone)]
pub struct TaskInContext<'a> {
    pub task: &'a Task,
    pub ancestry: Vec<Ancestor<'a>>,
    /// The roles the task was reached through, outermost first.
    pub dep_chain: Vec<RoleId>,
    /// How many dynamic includes (`include_tasks`, `include_role`), one inside another,
    /// brought the task in.
    pub includes: usize,
}

impl<'a> TaskInContext<'a> {
    /// An inheritable keyword: the task's own value, else the first ancestor's.
    pub fn inherited(&self, kw: Keyword) -> Option<&'a Node> {
        self.task.attrs.get(kw).or_else(|| self.ancestry.iter().find_map(|a| a.get(kw)))
    }

    /// `delegate_to`: the task's own, else the nearest of its `Delegatable` parents' (blocks,
    /// the `import_tasks`/`import_role` that brought it in, roles).
    pub fn delegate_to(&self) -> Option<&'a Node> {
        self.task.delegate_to.as_ref().or_else(|| {
            self.ancestry.iter().find_map(|a| match a {
                Ancestor::Block(b) => b.attrs.get(Keyword::DelegateTo),
                Ancestor::Import(t) => t.delegate_to.as_ref(),
                Ancestor::Role(r) => r.attrs.get(Keyword::DelegateTo),
                Ancestor::Play(_) => None,
            })
        })
    }

    /// An extending keyword (`tags`): the task's own values followed by every ancestor's.
    pub fn extended(&self, kw: Keyword) -> Vec<&'a Node> {
        let mut out = Vec::new();
        let mut push = |n: &'a Node| match &n.value {
            Value::Seq(items) => out.extend(items.iter()),
            Value::Null => {}
            _ => out.push(n),
        };
        if let Some(own) = self.task.attrs.get(kw) {
            push(own);
        }
        for a in &self.ancestry {
            if let Some(v) = a.get(kw) {
                push(v);
            }
        }
        out
    }
}

/// One level of the parent chain while descending.
#[derive(Clone)]
struct Frame<'a> {
    block: &'a Block,
    dep_chain: Vec<RoleId>,
}

/// Which sections of each block the walk enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sections {
    /// `block`, `rescue` and `always`.
    All,
    /// Only `block` (what `--list-tasks` shows).
    BlockOnly,
}

/// Every task of `blocks` in order, with ancestry.
pub fn walk<'a>(
    play: &'a Play,
    blocks: &'a [CompiledBlock],
    sections: Sections,
) -> Vec<TaskInContext<'a>> {
    let mut out = Vec::new();
    for cb in blocks {
        let frame = Frame { block: &cb.block, dep_chain: cb.dep_chain.clone() };
        walk_block(play, &[frame], sections, &mut out);
    }
    out
}

/// The role chain inside `block`, entered from a block reached through `outer`: its own when
/// it was compiled apart.
fn chain_into(block: &Block, outer: &[RoleId]) -> Vec<RoleId> {
    match &block.from {
        BlockOrigin::Compiled(chain) => chain.clone(),
        _ => outer.to_vec(),
    }
}

fn walk_block<'a>(
    play: &'a Play,
    stack: &[Frame<'a>],
    sections: Sections,
    out: &mut Vec<TaskInContext<'a>>,
) {
    let Some(top) = stack.last() else { return };
    let lists: Vec<&'a Vec<TaskEntry>> = match sections {
        Sections::All => vec![&top.block.block, &top.block.rescue, &top.block.always],
        Sections::BlockOnly => vec![&top.block.block],
    };
    for list in lists {
        for entry in list {
            match entry {
                TaskEntry::Block(b) => {
                    let mut next = stack.to_vec();
                    next.push(Frame { block: b, dep_chain: chain_into(b, &top.dep_chain) });
                    walk_block(play, &next, sections, out);
                }
                TaskEntry::Task(t) => out.push(TaskInContext {
                    task: t,
                    ancestry: ancestry(play, stack),
                    dep_chain: top.dep_chain.clone(),
                    includes: 0,
                }),
            }
        }
    }
}

/// ansible's lookup order from the innermost block outwards: each block, then (after all its
/// parents) its role, the role's dependency chain reversed, and the play.
fn ancestry<'a>(play: &'a Play, stack: &[Frame<'a>]) -> Vec<Ancestor<'a>> {
    let mut seq = Vec::new();
    chain_from(play, stack, &mut seq);
    let mut unique: Vec<Ancestor<'a>> = Vec::new();
    for a in seq {
        if !unique.iter().any(|u| u.same(&a)) {
            unique.push(a);
        }
    }
    unique
}

fn chain_from<'a>(play: &'a Play, stack: &[Frame<'a>], seq: &mut Vec<Ancestor<'a>>) {
    let Some((top, parents)) = stack.split_last() else {
        seq.push(Ancestor::Play(play));
        return;
    };
    seq.push(Ancestor::Block(top.block));
    match &top.block.from {
        BlockOrigin::ImportTasks(t) | BlockOrigin::ImportRole(t) => {
            seq.push(Ancestor::Import(t));
        }
        BlockOrigin::Written | BlockOrigin::Compiled(_) => {}
    }
    chain_from(play, parents, seq);
    if let Some(role) = top.block.role {
        seq.push(Ancestor::Role(play.role(role)));
        for dep in top.dep_chain.iter().rev() {
            seq.push(Ancestor::Role(play.role(*dep)));
        }
    }
    seq.push(Ancestor::Play(play));
}

/// One block's place in the flat task list of [`walk_spans`]: its `block`, `rescue` and
/// `always` sections as index ranges (contiguous, in that order), its parent block and the
/// top-level block it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSpan {
    pub parent: Option<usize>,
    /// The index of the compiled (top-level) block this block is part of.
    pub top: usize,
    pub block: std::ops::Range<usize>,
    pub rescue: std::ops::Range<usize>,
    pub always: std::ops::Range<usize>,
}

impl BlockSpan {
    pub fn end(&self) -> usize {
        self.always.end
    }
}

/// The play's flat task list (block, rescue and always sections of every block, in order, as
/// [`walk`] with [`Sections::All`] gives it) with every block's span, and for each task the
/// innermost block containing it.
pub fn walk_spans<'a>(
    play: &'a Play,
    blocks: &'a [CompiledBlock],
) -> (Vec<TaskInContext<'a>>, Vec<BlockSpan>, Vec<usize>) {
    let mut tasks = Vec::new();
    let mut spans = Vec::new();
    let mut innermost = Vec::new();
    for (top, cb) in blocks.iter().enumerate() {
        let frame = Frame { block: &cb.block, dep_chain: cb.dep_chain.clone() };
        span_block(play, &[frame], None, top, &mut tasks, &mut spans, &mut innermost);
    }
    (tasks, spans, innermost)
}

fn span_block<'a>(
    play: &'a Play,
    stack: &[Frame<'a>],
    parent: Option<usize>,
    top: usize,
    tasks: &mut Vec<TaskInContext<'a>>,
    spans: &mut Vec<BlockSpan>,
    innermost: &mut Vec<usize>,
) {
    let Some(frame) = stack.last() else { return };
    let id = spans.len();
    let start = tasks.len();
    spans.push(BlockSpan {
        parent,
        top,
        block: start..start,
        rescue: start..start,
        always: start..start,
    });
    let mut ranges = Vec::new();
    for list in [&frame.block.block, &frame.block.rescue, &frame.block.always] {
        let from = tasks.len();
        for entry in list {
            match entry {
                TaskEntry::Block(b) => {
                    let mut next = stack.to_vec();
                    next.push(Frame { block: b, dep_chain: chain_into(b, &frame.dep_chain) });
                    span_block(play, &next, Some(id), top, tasks, spans, innermost);
                }
                TaskEntry::Task(t) => {
                    tasks.push(TaskInContext {
                        task: t,
                        ancestry: ancestry(play, stack),
                        dep_chain: frame.dep_chain.clone(),
                        includes: 0,
                    });
                    innermost.push(id);
                }
            }
        }
        ranges.push(from..tasks.len());
    }
    let span = &mut spans[id];
    span.block = ranges[0].clone();
    span.rescue = ranges[1].clone();
    span.always = ranges[2].clone();
}
