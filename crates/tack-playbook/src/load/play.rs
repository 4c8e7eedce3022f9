//! One play (`Play.load`): keywords validated, `vars`, `vars_prompt`, `roles` and the four task
//! lists loaded, roles resolved and loaded into the play's role arena.

use std::path::Path;

use tack_diag::Diagnostic;
use tack_yaml::{Mapping, Node, Value};

use super::role::FromFiles;
use super::{Loader, PlayBuild, Scope, attrs, parser_error};
use crate::ast::Play;
use crate::tables::{Keyword, ObjectKind};

const VARS_PROMPT_KEYS: &[&str] =
    &["name", "prompt", "default", "private", "confirm", "encrypt", "salt_size", "salt", "unsafe"];

impl Loader<'_> {
    /// `Play.load(data, vars)`: `inherited_vars` are the vars of the `import_playbook` that
    /// brought the play in, if any.
    pub(crate) fn load_play(
        &self,
        ds: &Node,
        basedir: &Path,
        inherited_vars: Option<&Mapping>,
    ) -> Result<Play, Diagnostic> {
        let Some(map) = ds.as_map() else {
            return Err(parser_error(
                "playbook entries must be either valid plays or 'import_playbook' statements",
                Some(ds),
            ));
        };
        let mut map = map.clone();
        // `user` is the old spelling of `remote_user`.
        if let Some((user_key, user)) = map.remove("user") {
            if map.get("remote_user").is_some() {
                return Err(parser_error(
                    "both 'user' and 'remote_user' are set for this play. The use of 'user' is deprecated, and should be removed",
                    Some(ds),
                ));
            }
            map.insert(Node::new(Value::Str("remote_user".into()), user_key.origin.clone()), user);
        }
        attrs::validate_keys(&map, ObjectKind::Play)?;

        let structural = [
            Keyword::Vars,
            Keyword::VarsFiles,
            Keyword::VarsPrompt,
            Keyword::Roles,
            Keyword::PreTasks,
            Keyword::Tasks,
            Keyword::PostTasks,
            Keyword::Handlers,
        ];
        // Load in ansible's attribute order: vars, vars_files, roles, tags, ..., vars_prompt,
        // handlers, pre_tasks, post_tasks, tasks; so the first error reported is ansible's.
        let mut vars = inherited_vars.cloned().unwrap_or_default();
        if let Some(v) = map.get("vars") {
            for (k, val) in attrs::load_vars(v, "Play")? {
                vars.insert(k, val);
            }
        }
        let vars_files = match map.get("vars_files") {
            None => Vec::new(),
            Some(Node { value: Value::Null, .. }) => Vec::new(),
            Some(Node { value: Value::Seq(items), .. }) => items.clone(),
            Some(other) => vec![other.clone()],
        };
        let mut build = PlayBuild::new(basedir.to_path_buf(), self, &vars);
        let mut scope = Scope::root();
        let written = match map.get("collections") {
            Some(list) => super::collections::keyword_items(list)?,
            None => Vec::new(),
        };
        let default = self.default_collection.borrow().clone();
        scope.collections = super::collections::with_default(written, default.as_deref());
        let mut roles = Vec::new();
        if let Some(r) = map.get("roles").filter(|r| !r.is_null()) {
            let Some(list) = r.as_seq() else {
                return Err(parser_error(
                    "A malformed role declaration was encountered.",
                    Some(ds),
                ));
            };
            let template_vars = build.template_vars.clone();
            for entry in list {
                let rr = self.role_ref(entry, &build, None, &scope.collections, &template_vars)?;
                roles.push(self.load_role(
                    rr,
                    &mut build,
                    None,
                    &FromFiles::default(),
                    false,
                    0,
                )?);
            }
        }
        let mut play_attrs = attrs::collect(&map, &structural);
        if let Some((key, tags)) = map.entry("tags") {
            play_attrs.set(Keyword::Tags, key.clone(), attrs::load_tags(tags)?);
        }
        if let Some((key, defaults)) = map.entry("module_defaults") {
            let resolved = self.load_module_defaults(defaults, &build.action_groups)?;
            play_attrs.set(Keyword::ModuleDefaults, key.clone(), resolved);
        }
        let vars_prompt = match map.get("vars_prompt") {
            Some(v) => load_vars_prompt(v)?,
            None => Vec::new(),
        };

        let mut handlers = match map.get("handlers") {
            Some(v) => self.load_play_blocks(v, &mut build, &scope.handlers(), "handlers", ds)?,
            None => Vec::new(),
        };
        let mut lists = Vec::new();
        for key in ["pre_tasks", "post_tasks", "tasks"] {
            lists.push(match map.get(key) {
                Some(v) => self.load_play_blocks(v, &mut build, &scope, key, ds)?,
                None => Vec::new(),
            });
        }
        handlers.append(&mut build.extra_handlers);
        let tasks = lists.pop().unwrap_or_default();
        let post_tasks = lists.pop().unwrap_or_default();
        let pre_tasks = lists.pop().unwrap_or_default();

        let mut play = Play {
            origin: ds.origin.clone(),
            attrs: play_attrs,
            vars,
            vars_files,
            vars_prompt,
            roles,
            pre_tasks,
            tasks,
            post_tasks,
            handlers,
            role_arena: Vec::new(),
            basedir: basedir.to_path_buf(),
            included_path: None,
            included_conditional: None,
            module_search: std::sync::Arc::new(self.module_search(&scope.collections)),
            action_groups: build.action_groups.clone(),
        };
        play.roles.extend(build.imported_roles.iter().copied());
        play.role_arena = build.roles;
        validate_hosts(&play, ds)?;
        attrs::validate_string_fields(&play.attrs, ObjectKind::Play)?;
        Ok(play)
    }
}

/// `Play._load_vars_prompt`.
fn load_vars_prompt(ds: &Node) -> Result<Vec<Mapping>, Diagnostic> {
    let items: Vec<Node> = match &ds.value {
        Value::Null => return Ok(Vec::new()),
        Value::Seq(items) => items.clone(),
        _ => vec![ds.clone()],
    };
    let mut out = Vec::new();
    for item in items {
        let Some(m) = item.as_map() else {
            return Err(parser_error("Invalid variable file contents.", Some(&item)).with_help(
                "Variable files must contain either a dictionary of variables, or a list of dictionaries.",
            ));
        };
        if m.get("name").is_none() {
            return Err(parser_error(
                "Invalid vars_prompt data structure, missing 'name' key",
                Some(ds),
            ));
        }
        for key in m.keys() {
            let k = attrs::key_text(key);
            if !VARS_PROMPT_KEYS.contains(&k.as_str()) {
                return Err(parser_error(
                    format!("Invalid vars_prompt data structure, found unsupported key '{k}'"),
                    Some(ds),
                ));
            }
        }
        out.push(m.clone());
    }
    Ok(out)
}

/// `Play._validate_hosts`: only checked when the play gives `hosts`.
fn validate_hosts(play: &Play, ds: &Node) -> Result<(), Diagnostic> {
    let Some(hosts) = play.attrs.get(Keyword::Hosts) else { return Ok(()) };
    let empty = match &hosts.value {
        Value::Null => true,
        Value::Str(s) => s.is_empty(),
        Value::Seq(s) => s.is_empty(),
        Value::Map(m) => m.is_empty(),
        _ => false,
    };
    if empty {
        return Err(parser_error("Hosts list cannot be empty. Please check your playbook", None));
    }
    match &hosts.value {
        Value::Seq(items) => {
            for item in items {
                match &item.value {
                    Value::Null => {
                        return Err(parser_error(
                            "Hosts list cannot contain values of 'None'. Please check your playbook",
                            None,
                        ));
                    }
                    Value::Str(_) | Value::Unsafe(_) => {}
                    other => {
                        return Err(parser_error(
                            format!(
                                "Hosts list contains an invalid host value: '{}'",
                                tack_yaml::pyrepr::str(other)
                            ),
                            None,
                        ));
                    }
                }
            }
            Ok(())
        }
        Value::Str(_) | Value::Unsafe(_) | Value::Vault(_) => Ok(()),
        _ => Err(parser_error(
            "Hosts list must be a sequence or string. Please check your playbook.",
            Some(ds),
        )),
    }
}
