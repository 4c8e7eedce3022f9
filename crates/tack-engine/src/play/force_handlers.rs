//! `force_handlers` (the play keyword, or `--force-handlers` as its default): ansible compiles
//! such a play with each section (pre_tasks, roles and tasks, post_tasks) wrapped in a block
//! whose `always` is the section's `flush_handlers`, so a host that fails still runs the
//! handlers it was notified for before it leaves the play.
//!
//! Rewrites the compiled block list only; the play runs it as any other.

use tack_playbook::compile::CompiledBlock;
use tack_playbook::{Block, BlockOrigin, TaskEntry};
use tack_yaml::{Mapping, Node, Value};

fn is_flush(block: &Block) -> bool {
    block.implicit
        && matches!(block.block.as_slice(), [TaskEntry::Task(t)]
            if t.implicit && t.args.get("_raw_params").is_some_and(|n| n.value == Value::Str("flush_handlers".into())))
}

/// An implicit `meta: noop` standing in for an empty section, as ansible's does.
fn noop_from(flush: &Block) -> TaskEntry {
    let mut entries = flush.block.clone();
    if let Some(TaskEntry::Task(task)) = entries.first_mut() {
        let mut args = Mapping::new();
        args.insert(
            Node::bare(Value::Str("_raw_params".into())),
            Node::bare(Value::Str("noop".into())),
        );
        task.args = args;
        task.attrs = Default::default();
    }
    entries.remove(0)
}

/// A compiled block as an entry of a section: a role's block goes inside a plain block that
/// carries its role chain, so its tasks still see their roles' variables and names.
fn keep_chain(cb: CompiledBlock) -> Block {
    if cb.dep_chain.is_empty() {
        return cb.block;
    }
    Block {
        origin: None,
        implicit: true,
        attrs: Default::default(),
        vars: Mapping::new(),
        block: vec![TaskEntry::Block(cb.block)],
        rescue: Vec::new(),
        always: Vec::new(),
        role: None,
        from: BlockOrigin::Compiled(cb.dep_chain),
    }
}

/// The play's compiled blocks with every section ending in a flush wrapped as ansible's
/// `force_handlers` compiles it.
pub(crate) fn wrap(compiled: Vec<CompiledBlock>) -> Vec<CompiledBlock> {
    let mut out = Vec::new();
    let mut section: Vec<TaskEntry> = Vec::new();
    for cb in compiled {
        if !is_flush(&cb.block) {
            section.push(TaskEntry::Block(keep_chain(cb)));
            continue;
        }
        let body = if section.is_empty() {
            vec![noop_from(&cb.block)]
        } else {
            std::mem::take(&mut section)
        };
        let wrapper = Block {
            origin: None,
            implicit: true,
            attrs: Default::default(),
            vars: Mapping::new(),
            block: body,
            rescue: Vec::new(),
            always: vec![TaskEntry::Block(cb.block)],
            role: None,
            from: BlockOrigin::Written,
        };
        out.push(CompiledBlock { block: wrapper, dep_chain: Vec::new() });
    }
    // Nothing follows the last flush; kept in case a section was left open.
    out.extend(section.into_iter().filter_map(|e| match e {
        TaskEntry::Block(block) => Some(CompiledBlock { block, dep_chain: Vec::new() }),
        TaskEntry::Task(_) => None,
    }));
    out
}
