//! Turning a loaded play into the order ansible runs it (`Play.compile`, `Role.compile`): role
//! dependencies depth-first, then each role's own blocks closed by an implicit
//! `meta: role_complete`, then the play's task lists separated by implicit `flush_handlers`.

use tack_yaml::{Mapping, Node, Value};

use crate::ast::{Attrs, Block, BlockOrigin, Play, Role, RoleId, Task, TaskEntry};
use crate::tables::Keyword;

/// A compiled block and the chain of roles it was reached through (outermost first), which
/// decides inherited keywords and variables.
#[derive(Debug, Clone)]
pub struct CompiledBlock {
    pub block: Block,
    pub dep_chain: Vec<RoleId>,
}

fn implicit_meta(arg: &str, role: Option<RoleId>, always: bool) -> Block {
    let s = |t: &str| Node::bare(Value::Str(t.to_string()));
    let mut args = Mapping::new();
    args.insert(s("_raw_params"), s(arg));
    let mut attrs = Attrs::default();
    if always {
        attrs.set(Keyword::Tags, s("tags"), Node::bare(Value::Seq(vec![s("always")])));
    }
    let task = Task { implicit: true, ..Task::in_memory("meta", args, attrs, role) };
    Block {
        origin: None,
        implicit: true,
        attrs: Attrs::default(),
        vars: Mapping::new(),
        block: vec![TaskEntry::Task(task)],
        rescue: Vec::new(),
        always: Vec::new(),
        role,
        from: BlockOrigin::Written,
    }
}

/// `Role.compile`: the role's blocks with its dependencies' first, ending in `role_complete`.
pub fn role_blocks(roles: &[Role], id: RoleId) -> Vec<Block> {
    compile_role(roles, id, &[]).into_iter().map(|c| c.block).collect()
}

/// `Role.compile` for a role an `include_role` loads: its blocks reached through `chain`
/// (the include's roles) and the role itself.
pub fn compile_role_under(roles: &[Role], id: RoleId, chain: &[RoleId]) -> Vec<CompiledBlock> {
    compile_role(roles, id, chain)
}

fn compile_role(roles: &[Role], id: RoleId, chain: &[RoleId]) -> Vec<CompiledBlock> {
    let role = &roles[id.0];
    let mut new_chain = chain.to_vec();
    new_chain.push(id);
    let mut out = Vec::new();
    for dep in &role.dependencies {
        out.extend(compile_role(roles, *dep, &new_chain));
    }
    for b in &role.task_blocks {
        out.push(CompiledBlock { block: b.clone(), dep_chain: new_chain.clone() });
    }
    out.push(CompiledBlock {
        block: implicit_meta("role_complete", Some(id), true),
        dep_chain: new_chain,
    });
    out
}

/// `Role.get_handler_blocks`: dependencies' handlers first.
pub fn role_handler_blocks(roles: &[Role], id: RoleId) -> Vec<Block> {
    let role = &roles[id.0];
    let mut out = Vec::new();
    for dep in &role.dependencies {
        out.extend(role_handler_blocks(roles, *dep));
    }
    out.extend(role.handler_blocks.iter().cloned());
    out
}

/// `Play.compile` without `force_handlers`: pre_tasks, flush, roles + tasks, flush,
/// post_tasks, flush.
pub fn compile_play(play: &Play) -> Vec<CompiledBlock> {
    let flush = || CompiledBlock {
        block: implicit_meta("flush_handlers", None, true),
        dep_chain: Vec::new(),
    };
    let plain = |b: &Block| CompiledBlock { block: b.clone(), dep_chain: Vec::new() };
    let mut out: Vec<CompiledBlock> = play.pre_tasks.iter().map(plain).collect();
    out.push(flush());
    for id in &play.roles {
        if !play.role(*id).from_include {
            out.extend(compile_role(&play.role_arena, *id, &[]));
        }
    }
    out.extend(play.tasks.iter().map(plain));
    out.push(flush());
    out.extend(play.post_tasks.iter().map(plain));
    out.push(flush());
    out
}
