//! The task lists a play runs and where each host is in them: segment 0 is the play's own
//! flat list; every file an `include_tasks` loads becomes another segment, which a host
//! enters at the include and leaves (the include then succeeding or failing) when it is done.
//! Positions inside a segment move by `iterator`'s block rules.
//!
//! Owns no output and runs nothing: `play` decides what runs and reports it.

use std::collections::{BTreeMap, VecDeque};

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::walk::{TaskInContext, walk_spans};

use crate::iterator::{HostCursor, Layout};

/// A task list a play runs: the play's own (segment 0) or a file an `include_tasks`
/// brought in, with the include parameters its tasks see.
#[derive(Clone)]
pub(crate) struct Segment<'a> {
    pub tasks: Vec<TaskInContext<'a>>,
    spans: Vec<tack_playbook::walk::BlockSpan>,
    innermost: Vec<usize>,
    selected: Vec<bool>,
    pub params: Option<std::sync::Arc<tack_template::Layer>>,
}

impl<'a> Segment<'a> {
    pub fn new(
        play: &'a Play,
        blocks: &'a [CompiledBlock],
        params: Option<std::sync::Arc<tack_template::Layer>>,
        keep: impl Fn(&TaskInContext<'a>) -> Result<bool, Diagnostic>,
    ) -> Result<Segment<'a>, Diagnostic> {
        let (tasks, spans, innermost) = walk_spans(play, blocks);
        let mut selected = Vec::with_capacity(tasks.len());
        for ctx in &tasks {
            selected.push(keep(ctx)?);
        }
        Ok(Segment { tasks, spans, innermost, selected, params })
    }

    pub fn layout(&self) -> Layout<'_> {
        Layout { spans: &self.spans, innermost: &self.innermost, selected: &self.selected }
    }
}

/// A host inside an included file: the segment it runs, its position there, and the
/// segments the same include still has for it (one per loop item).
pub(crate) struct Frame {
    pub seg: usize,
    pub cursor: HostCursor,
    pub queue: VecDeque<usize>,
}

/// Moves `host` past task `next` of segment `seg`, out of included files it finished (their
/// include then succeeds, or fails with them), as ansible's iterator leaves included blocks.
pub(crate) fn step(
    host: &str,
    seg: usize,
    next: usize,
    failed: bool,
    cursors: &mut [(String, HostCursor)],
    frames: &mut BTreeMap<String, Vec<Frame>>,
    segments: &[Segment<'_>],
) {
    let stack = frames.entry(host.to_string()).or_default();
    let mut failing = failed;
    let mut from = (seg, next);
    loop {
        match stack.last_mut() {
            Some(frame) => {
                let layout = segments[frame.seg].layout();
                if failing {
                    layout.failed(&mut frame.cursor, from.1);
                } else {
                    layout.succeeded(&mut frame.cursor, from.1);
                }
                if frame.cursor.pos.is_some() {
                    return;
                }
                if !frame.cursor.failed {
                    // The same include's next file (an included file with no selected task
                    // is passed over).
                    while let Some(more) = frame.queue.pop_front() {
                        let cursor = segments[more].layout().start();
                        if cursor.pos.is_some() {
                            frame.seg = more;
                            frame.cursor = cursor;
                            return;
                        }
                    }
                }
                failing = frame.cursor.failed;
                stack.pop();
                // The include itself now succeeds or fails where it stands.
                from = match stack.last() {
                    Some(outer) => (outer.seg, outer.cursor.pos.unwrap_or(0)),
                    None => {
                        let base = cursors.iter().find(|(h, _)| h == host).and_then(|(_, c)| c.pos);
                        (0, base.unwrap_or(0))
                    }
                };
            }
            None => {
                if let Some((_, cursor)) = cursors.iter_mut().find(|(h, _)| h == host) {
                    let layout = segments[0].layout();
                    if failing {
                        layout.failed(cursor, from.1);
                    } else {
                        layout.succeeded(cursor, from.1);
                    }
                }
                return;
            }
        }
    }
}

/// Puts `host` into the files its include at `next` of segment `seg` brought in.
pub(crate) fn enter(
    host: &str,
    mut queue: VecDeque<usize>,
    cursors: &mut [(String, HostCursor)],
    frames: &mut BTreeMap<String, Vec<Frame>>,
    segments: &[Segment<'_>],
    seg: usize,
    next: usize,
) {
    while let Some(first) = queue.pop_front() {
        let cursor = segments[first].layout().start();
        if cursor.pos.is_some() {
            frames.entry(host.to_string()).or_default().push(Frame { seg: first, cursor, queue });
            return;
        }
    }
    step(host, seg, next, false, cursors, frames, segments);
}

/// `is_any_block_rescuing` for a host that may be inside included files: the file's own
/// blocks, then the blocks around each include.
pub(crate) fn rescuing(
    host: &str,
    seg: usize,
    next: usize,
    base: Option<usize>,
    frames: &BTreeMap<String, Vec<Frame>>,
    segments: &[Segment<'_>],
) -> bool {
    if segments[seg].layout().rescuing(next) {
        return true;
    }
    let stack = frames.get(host).map(Vec::as_slice).unwrap_or_default();
    if stack.is_empty() {
        return false;
    }
    // Where each enclosing include stands: the play's position, then each outer file's.
    let mut outer: Vec<(usize, Option<usize>)> = vec![(0, base)];
    outer.extend(stack.iter().map(|f| (f.seg, f.cursor.pos)));
    outer.pop();
    outer.iter().rev().any(|(s, p)| p.is_some_and(|p| segments[*s].layout().rescuing(p)))
}
