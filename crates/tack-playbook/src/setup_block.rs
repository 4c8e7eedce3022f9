//! The play's setup block as `PlayIterator` builds it: tasks the play runs on every host
//! before its own (fact gathering, the argument-spec check), made in memory, tagged `always`
//! unless the play has tags, under the `when` of the `import_playbook` that brought the
//! play in, in a block that never runs once.

use tack_yaml::{Mapping, Node, Value};

use crate::ast::{Attrs, Block, BlockOrigin, Play, Task, TaskEntry};
use crate::compile::CompiledBlock;
use crate::tables::Keyword;

/// A block of the one task `action` named `name` with `args`.
pub fn setup_task_block(play: &Play, name: &str, action: &str, args: Mapping) -> CompiledBlock {
    let s = |t: &str| Node::bare(Value::Str(t.to_string()));
    let mut attrs = Attrs::default();
    attrs.set(Keyword::Name, s("name"), s(name));
    let tags = match play.attrs.get(Keyword::Tags) {
        Some(_) => Vec::new(),
        None => vec![s("always")],
    };
    attrs.set(Keyword::Tags, s("tags"), Node::bare(Value::Seq(tags)));
    if let Some(when) = &play.included_conditional {
        attrs.set(Keyword::When, s("when"), when.clone());
    }
    let task = Task {
        library_search: Some(play.module_search.clone()),
        action_plugin: None,
        action_looked_up_at_run: false,
        module_deprecation: None,
        action_rejected: false,
        ..Task::in_memory(action, args, attrs, None)
    };
    let mut block_attrs = Attrs::default();
    block_attrs.set(Keyword::RunOnce, s("run_once"), Node::bare(Value::Bool(false)));
    let block = Block {
        origin: play.origin.clone(),
        implicit: true,
        attrs: block_attrs,
        vars: Mapping::new(),
        block: vec![TaskEntry::Task(task)],
        rescue: Vec::new(),
        always: Vec::new(),
        role: None,
        from: BlockOrigin::Written,
    };
    CompiledBlock { block, dep_chain: Vec::new() }
}
