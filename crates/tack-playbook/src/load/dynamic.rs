//! What the dynamic includes load at run time: the task file of an `include_tasks` (with the
//! roles its `import_role` tasks bring) and the role of an `include_role`
//! (`IncludeRole.get_block_list`: the role loaded as from an include, compiled under the
//! include's dependency chain, its handlers added to the play's).
//!
//! Roles loaded here join a copy of the play's role arena (ids of earlier roles stay valid);
//! the caller decides whether the play it runs now sees the grown arena. Never runs anything.

use std::path::PathBuf;

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::{Loader, PlayBuild};
use crate::ast::{Block, Play, Role, RoleId, Task};
use crate::compile::CompiledBlock;

pub use super::role::FromFiles;

/// A file or role a dynamic include brought in.
pub struct Included {
    /// The file that was read (the role's directory for `include_role`).
    pub file: PathBuf,
    /// The blocks the hosts run, each with the role chain it was reached through.
    pub blocks: Vec<CompiledBlock>,
    /// The play's role arena with the roles loaded now appended, when any were.
    pub roles: Option<Vec<Role>>,
    /// Handlers the loaded roles bring, after the play's own.
    pub handlers: Vec<CompiledBlock>,
}

impl Included {
    pub(crate) fn new(file: PathBuf, block: Block, play: &Play, build: PlayBuild) -> Included {
        let grew = build.roles.len() > play.role_arena.len();
        let handlers = build
            .extra_handlers
            .into_iter()
            .map(|block| CompiledBlock { block, dep_chain: Vec::new() })
            .collect();
        Included {
            file,
            blocks: vec![CompiledBlock { block, dep_chain: Vec::new() }],
            roles: grew.then_some(build.roles),
            handlers,
        }
    }
}

/// What an `include_role` asks for, rendered for the hosts that share it.
pub struct RoleRequest<'r> {
    /// The include task (its role is the loaded role's parent).
    pub include: &'r Task,
    /// The roles the include was reached through, outermost first.
    pub dep_chain: &'r [RoleId],
    pub name: &'r str,
    /// The name's render read what a managed host said: the role is found only inside the
    /// role search path's directories (seed 002).
    pub name_host_named: bool,
    pub from: FromFiles,
    /// The include's `vars` and loop variable: they become the role's `vars`.
    pub vars: Mapping,
    /// `allow_duplicates` of the include (ansible's default for an include is true).
    pub allow_duplicates: bool,
    /// `rescuable` of the include (default true): when false, a role that cannot be loaded
    /// is ansible's parser error (fatal to the run) instead of a failure of the include.
    pub rescuable: bool,
}

impl Loader<'_> {
    /// `TaskInclude.build_parent_block`: the block an include's `apply` makes, the parent of
    /// everything the include brings in (`None` without `apply`).
    pub fn load_apply(&self, play: &Play, include: &Task) -> Result<Option<Block>, Diagnostic> {
        let Some(apply) = include.args.get("apply").filter(|a| a.value.is_truthy()) else {
            return Ok(None);
        };
        let mut build = PlayBuild::new(crate::play_vars::play_basedir(play), self, &Mapping::new());
        build.roles = play.role_arena.clone();
        build.action_groups = play.action_groups.clone();
        let scope = super::Scope {
            role: include.role,
            collections: include.collections.clone(),
            ..super::Scope::root()
        };
        self.load_block(apply, false, &mut build, &scope).map(Some)
    }

    /// `IncludeRole.get_block_list`: loads the role `request` names (search path, files,
    /// dependencies) into a copy of `play`'s arena and compiles it under the include's
    /// dependency chain. `vars` are what the role name's search templates see.
    pub fn load_included_role(
        &self,
        play: &Play,
        request: RoleRequest<'_>,
        vars: &Mapping,
    ) -> Result<(Included, RoleId), Diagnostic> {
        let mut build = PlayBuild::new(crate::play_vars::play_basedir(play), self, vars);
        build.roles = play.role_arena.clone();
        build.action_groups = play.action_groups.clone();
        let origin = request.include.args.get("name").or_else(|| request.include.args.get("role"));
        let node = Node::new(
            Value::Str(request.name.to_string()),
            origin.and_then(|n| n.origin.clone()).or_else(|| request.include.origin.clone()),
        );
        let fatal = |e: Diagnostic| {
            if request.rescuable {
                e
            } else {
                Diagnostic::caused_by("Could not include role.", None, e).parser()
            }
        };
        // A role name a managed host chose: by its text before any search, then where the
        // role found leads.
        let roots = request.name_host_named.then(|| self.role_search(&build, None));
        let refused = |escape: tack_loader::confine::Escape| {
            let message = escape.message("the 'name' of this include was", request.name);
            fatal(Diagnostic::at(message, node.origin.clone()))
        };
        if let Some(roots) = &roots {
            tack_loader::confine::check_name(request.name, roots).map_err(refused)?;
        }
        let mut rr = self
            .role_ref(&node, &build, None, &request.include.collections, vars)
            .map_err(fatal)?;
        if let Some(roots) = &roots {
            tack_loader::confine::check_found(&rr.path, roots).map_err(refused)?;
        }
        for (k, v) in request.vars.iter() {
            rr.vars.insert(k.clone(), v.clone());
        }
        let path = rr.path.clone();
        let id = self
            .load_role(rr, &mut build, request.include.role, &request.from, true, 0)
            .map_err(|e| if request.rescuable { e } else { e.parser() })?;
        build.roles[id.0].allow_duplicates = request.allow_duplicates;
        let blocks = crate::compile::compile_role_under(&build.roles, id, request.dep_chain);
        let mut chain = request.dep_chain.to_vec();
        chain.push(id);
        // The role's handlers, then those of the roles its task files import.
        let handlers = crate::compile::role_handler_blocks(&build.roles, id)
            .into_iter()
            .chain(std::mem::take(&mut build.extra_handlers))
            .map(|block| CompiledBlock { block, dep_chain: chain.clone() })
            .collect();
        Ok((Included { file: path, blocks, roles: Some(build.roles), handlers }, id))
    }
}
