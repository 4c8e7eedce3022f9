//! The task lists a play runs and where each host is in them: segment 0 is the play's own
//! flat list; every file an `include_tasks` loads becomes another segment, which a host
//! enters at the include and leaves (the include then succeeding or failing) when it is done.
//! Positions inside a segment move by `iterator`'s block rules.
//!
//! Owns no output and runs nothing: `play` decides what runs and reports it.

use std::collections::{BTreeMap, HashMap, VecDeque};

use tack_diag::Diagnostic;
use tack_playbook::Play;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::walk::{TaskInContext, walk_spans};

use crate::play::cursor::{HostCursor, Layout};

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
    pub(crate) fn new(
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

    /// A segment whose tasks' ancestry `adjust` changes before `keep` selects them (an
    /// included file's tasks inherit from the include and its `apply`).
    pub(crate) fn adjusted(
        play: &'a Play,
        blocks: &'a [CompiledBlock],
        params: Option<std::sync::Arc<tack_template::Layer>>,
        adjust: impl Fn(&mut TaskInContext<'a>),
        keep: impl Fn(&TaskInContext<'a>) -> Result<bool, Diagnostic>,
    ) -> Result<Segment<'a>, Diagnostic> {
        let (mut tasks, spans, innermost) = walk_spans(play, blocks);
        let mut selected = Vec::with_capacity(tasks.len());
        for ctx in &mut tasks {
            adjust(ctx);
            selected.push(keep(ctx)?);
        }
        Ok(Segment { tasks, spans, innermost, selected, params })
    }

    pub(crate) fn layout(&self) -> Layout<'_> {
        Layout { spans: &self.spans, innermost: &self.innermost, selected: &self.selected }
    }
}

/// A host inside an included file: the segment it runs, its position there, and the
/// segments the same include still has for it (one per loop item).
#[derive(Clone)]
pub(crate) struct Frame {
    pub seg: usize,
    pub cursor: HostCursor,
    pub queue: VecDeque<usize>,
    /// Another file of the same include failed to load: the include fails once these are
    /// done.
    pub fails: bool,
}

/// Moves `host` past task `next` of segment `seg`, out of included files it finished (their
/// include then succeeds, or fails with them), as ansible's iterator leaves included blocks.
fn step(
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
                failing = frame.cursor.failed || frame.fails;
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

/// Puts `host` into the files its include at `next` of segment `seg` brought in; the
/// include then succeeds, or fails when `fails`.
#[allow(clippy::too_many_arguments)]
fn enter(
    host: &str,
    mut queue: VecDeque<usize>,
    fails: bool,
    cursors: &mut [(String, HostCursor)],
    frames: &mut BTreeMap<String, Vec<Frame>>,
    segments: &[Segment<'_>],
    seg: usize,
    next: usize,
) {
    while let Some(first) = queue.pop_front() {
        let cursor = segments[first].layout().start();
        if cursor.pos.is_some() {
            let frame = Frame { seg: first, cursor, queue, fails };
            frames.entry(host.to_string()).or_default().push(frame);
            return;
        }
    }
    step(host, seg, next, fails, cursors, frames, segments);
}

/// `is_any_block_rescuing` for a host that may be inside included files: the file's own
/// blocks, then the blocks around each include.
fn rescuing(
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

/// Where every host of a play stands: the segments (the play's list and each included
/// file), each host's position, and the lockstep order the `linear` strategy follows.
pub(crate) struct Walk<'a> {
    pub segments: Vec<Segment<'a>>,
    pub cursors: Vec<(String, HostCursor)>,
    pub frames: BTreeMap<String, Vec<Frame>>,
    order: Vec<(usize, usize)>,
    /// Where each task stands in `order`; rebuilt only when an include splices.
    index: HashMap<(usize, usize), usize>,
    lockstep: usize,
}

/// The task a round runs and the hosts at it.
pub(crate) struct Round {
    /// Its place in the lockstep order (an include splices its files after it).
    pub pick: usize,
    pub seg: usize,
    pub next: usize,
    pub hosts: Vec<String>,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(play_segment: Segment<'a>, hosts: &[String]) -> Walk<'a> {
        let cursors = hosts.iter().map(|h| (h.clone(), play_segment.layout().start())).collect();
        let order: Vec<(usize, usize)> = (0..play_segment.tasks.len()).map(|i| (0, i)).collect();
        let mut walk = Walk {
            segments: vec![play_segment],
            cursors,
            frames: BTreeMap::new(),
            order,
            index: HashMap::new(),
            lockstep: 0,
        };
        walk.reindex();
        walk
    }

    fn reindex(&mut self) {
        self.index = self.order.iter().enumerate().map(|(i, at)| (*at, i)).collect();
    }

    /// A host's position: its innermost included file's, else the play's.
    fn position(&self, host: &str, base: &HostCursor) -> Option<(usize, usize)> {
        match self.frames.get(host).and_then(|f| f.last()) {
            Some(frame) => frame.cursor.pos.map(|p| (frame.seg, p)),
            None => base.pos.map(|p| (0, p)),
        }
    }

    /// Where `host` stands: (segment, task), `None` once it is done.
    pub(crate) fn at(&self, host: &str) -> Option<(usize, usize)> {
        self.cursor(host).and_then(|c| self.position(host, c))
    }

    /// The first task, from the lockstep cursor on, that some host is at (else the lowest
    /// any host is at), with the hosts at it; `None` when every host is done.
    pub(crate) fn next_round(&mut self) -> Option<Round> {
        let placed: Vec<usize> = self
            .cursors
            .iter()
            .filter_map(|(h, c)| self.position(h, c).and_then(|at| self.index.get(&at).copied()))
            .collect();
        let lowest = placed.iter().min().copied()?;
        let pick = placed.iter().copied().filter(|p| *p >= self.lockstep).min().unwrap_or(lowest);
        self.lockstep = pick + 1;
        let (seg, next) = self.order[pick];
        let hosts = self
            .cursors
            .iter()
            .filter(|(h, c)| self.position(h, c) == Some((seg, next)))
            .map(|(h, _)| h.clone())
            .collect();
        Some(Round { pick, seg, next, hosts })
    }

    /// Where `host` stands (segment and task), if it has a task left.
    pub(crate) fn position_of(&self, host: &str) -> Option<(usize, usize)> {
        let base = self.cursor(host)?;
        self.position(host, base)
    }

    /// Fails `host` at task `next` of segment `seg` past every rescue: on into the `always`
    /// sections around it, then out of the play.
    pub(crate) fn fail_past_rescue(&mut self, host: &str, seg: usize, next: usize) {
        if let Some(cursor) = self.cursor_mut(host) {
            cursor.no_rescue = true;
        }
        if let Some(stack) = self.frames.get_mut(host) {
            for frame in stack.iter_mut() {
                frame.cursor.no_rescue = true;
            }
        }
        self.advance(host, seg, next, true);
    }

    /// Moves `host` past task `next` of segment `seg`.
    pub(crate) fn advance(&mut self, host: &str, seg: usize, next: usize, failed: bool) {
        step(host, seg, next, failed, &mut self.cursors, &mut self.frames, &self.segments);
    }

    /// Whether `host` failing at `next` of `seg` would still have tasks to run (a rescue or
    /// an `always` around it), judged on a copy of its position.
    pub(crate) fn runs_on_after_failing(&self, host: &str, seg: usize, next: usize) -> bool {
        let Some(cursor) = self.cursor(host) else { return false };
        let mut cursors = vec![(host.to_string(), cursor.clone())];
        let mut frames: BTreeMap<String, Vec<Frame>> = BTreeMap::new();
        if let Some(stack) = self.frames.get(host) {
            frames.insert(host.to_string(), stack.clone());
        }
        step(host, seg, next, true, &mut cursors, &mut frames, &self.segments);
        let stack = frames.get(host).map(Vec::as_slice).unwrap_or_default();
        match stack.last() {
            Some(frame) => frame.cursor.pos.is_some(),
            None => cursors[0].1.pos.is_some(),
        }
    }

    /// Whether `host` failing at `next` of `seg` is caught by a rescue around it.
    pub(crate) fn rescuing(&self, host: &str, seg: usize, next: usize) -> bool {
        let base = self.cursor(host).and_then(|c| c.pos);
        rescuing(host, seg, next, base, &self.frames, &self.segments)
    }

    pub(crate) fn cursor(&self, host: &str) -> Option<&HostCursor> {
        self.cursors.iter().find(|(h, _)| h == host).map(|(_, c)| c)
    }

    pub(crate) fn cursor_mut(&mut self, host: &str) -> Option<&mut HostCursor> {
        self.cursors.iter_mut().find(|(h, _)| h == host).map(|(_, c)| c)
    }

    pub(crate) fn is_running(&self, host: &str) -> bool {
        self.cursor(host).is_some_and(|c| !c.failed)
    }

    /// The host is done with the play, not failed.
    pub(crate) fn finish(&mut self, host: &str) {
        self.frames.remove(host);
        if let Some(cursor) = self.cursor_mut(host) {
            cursor.pos = None;
        }
    }

    /// Forgets the included files of hosts that failed (a handler failing ends them).
    pub(crate) fn drop_failed_frames(&mut self) {
        let cursors = &self.cursors;
        self.frames.retain(|h, _| cursors.iter().any(|(c, cur)| c == h && !cur.failed));
    }

    /// Adds an included file's segment, its tasks in the lockstep order at `at`; returns
    /// its id and the place after it.
    pub(crate) fn splice(&mut self, at: usize, segment: Segment<'a>) -> (usize, usize) {
        let id = self.segments.len();
        let count = segment.tasks.len();
        self.segments.push(segment);
        for i in 0..count {
            self.order.insert(at + i, (id, i));
        }
        self.reindex();
        (id, at + count)
    }

    /// How many tasks the lockstep order holds (where a splice at its end goes).
    pub(crate) fn order_len(&self) -> usize {
        self.order.len()
    }

    /// Puts `host` into the files its include at `next` of `seg` brought in; when `fails`
    /// (another of its files could not be loaded) the include fails after them.
    pub(crate) fn enter(
        &mut self,
        host: &str,
        queue: VecDeque<usize>,
        fails: bool,
        seg: usize,
        next: usize,
    ) {
        let (cursors, frames) = (&mut self.cursors, &mut self.frames);
        enter(host, queue, fails, cursors, frames, &self.segments, seg, next);
    }
}
