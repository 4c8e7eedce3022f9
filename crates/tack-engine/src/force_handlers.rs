//! `force_handlers` (the play keyword, or `--force-handlers` as its default): ansible compiles
//! such a play with each section (pre_tasks, roles and tasks, post_tasks) wrapped in a block
//! whose `always` is the section's `flush_handlers`, so a host that fails still runs the
//! handlers it was notified for before it leaves the play.
//!
//! Rewrites the compiled block list only; the play runs it as any other.

use tack_diag::Diagnostic;
use tack_playbook::compile::CompiledBlock;
use tack_playbook::{Block, BlockOrigin, Play, TaskEntry};
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

/// The play's compiled blocks with every section ending in a flush wrapped as ansible's
/// `force_handlers` compiles it.
pub(crate) fn wrap(
    play: &Play,
    compiled: Vec<CompiledBlock>,
) -> Result<Vec<CompiledBlock>, Diagnostic> {
    if compiled.iter().any(|c| !c.dep_chain.is_empty()) {
        return Err(Diagnostic::at(
            "tack does not support 'force_handlers' in a play with roles yet",
            play.origin.clone(),
        ));
    }
    let mut out = Vec::new();
    let mut section: Vec<TaskEntry> = Vec::new();
    for cb in compiled {
        if !is_flush(&cb.block) {
            section.push(TaskEntry::Block(cb.block));
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
    Ok(out)
}
