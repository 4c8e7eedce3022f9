//! `ansible_failed_task`: the failed task's attributes as ansible's strategy stores them for
//! a rescue (`Task.dump_attrs()` of the task the worker sent back), one key per task
//! attribute of ansible-core's table plus `_resolved_action`.
//!
//! A task without a loop comes back post-validated: inherited keywords resolved through its
//! parents, values templated for the host and converted to the attribute's type, the
//! `environment` layers merged into one mapping, `when` templated. A looped task comes back
//! as loaded (its items ran on copies): keywords as written, defaults as declared; only its
//! name, `ignore_errors`, `loop_control` and connection are resolved. A task whose `when` or
//! arguments failed to render comes back as loaded too, its `loop_control` and connection
//! unresolved.
//!
//! Owns only the shape of that mapping; it decides nothing about the run, and renders with
//! the host's scope without changing it.

use tack_playbook::tables::{Attribute, Isa, Keyword, ObjectKind};
use tack_template::Scope;
use tack_yaml::{Mapping, Node, Value};

use tack_actions::Action;
use tack_report::result::s;

use crate::task::reading::Reading;
use crate::task::when::When;

/// The connection plugin every task tack runs resolves to.
const CONNECTION: &str = "ansible.builtin.local";
/// A task's `connection` before it is resolved: ansible's default transport.
const UNRESOLVED_CONNECTION: &str = "ssh";

/// A task that failed on a host, as its dump is made.
pub(crate) struct FailedTask<'a> {
    pub task: &'a Reading<'a>,
    pub action: Action,
    /// `--check` (or a plan) on the command line.
    pub check_flag: bool,
    /// `--diff` on the command line.
    pub diff_flag: bool,
}

impl FailedTask<'_> {
    /// The mapping `ansible_failed_task` holds after this task failed on a host.
    pub(crate) fn dump(&self, scope: &Scope) -> Node {
        // A task whose `when` or arguments failed to render failed inside its
        // post-validation: it comes back as loaded, its connection not resolved yet.
        // (A looped task judges `when` per item, on copies.)
        let unfinished = self.task.ctx.task.loop_items.is_none()
            && (matches!(
                crate::task::when::evaluate(self.task.ctx, self.task.templar, scope),
                When::Failed(_)
            ) || self.render_args(scope).is_err());
        let validated = self.task.ctx.task.loop_items.is_none() && !unfinished;
        let mut out = Mapping::new();
        out.insert(s("_resolved_action"), s(&self.action.fqcn()));
        for attr in ObjectKind::Task.attributes() {
            let value = match attr.keyword {
                Keyword::Connection if unfinished => self
                    .task
                    .ctx
                    .inherited(Keyword::Connection)
                    .cloned()
                    .unwrap_or_else(|| s(UNRESOLVED_CONNECTION)),
                Keyword::LoopControl => self.loop_control_dump(scope, !unfinished),
                _ => self.dumped(attr, scope, validated),
            };
            out.insert(s(attr.name), value);
        }
        Node::bare(Value::Map(out))
    }

    fn dumped(&self, attr: &Attribute, scope: &Scope, validated: bool) -> Node {
        let task = self.task.ctx.task;
        let own = task.attrs.get(attr.keyword);
        match attr.keyword {
            Keyword::Action => s(&task.action),
            Keyword::Args if validated => {
                let mut args = match self.render_args(scope) {
                    Ok(rendered) => rendered.args,
                    Err(_) => task.args.clone(),
                };
                // ansible's `shell` action marks the task's own arguments before it runs
                // `command`.
                if self.action == Action::Module("shell") {
                    args.insert(s("_uses_shell"), Node::bare(Value::Bool(true)));
                }
                Node::bare(Value::Map(args))
            }
            Keyword::Args => Node::bare(Value::Map(task.args.clone())),
            Keyword::Async | Keyword::AsyncVal => {
                let node = task.attrs.get(Keyword::Async).or(task.attrs.get(Keyword::AsyncVal));
                self.typed(node, Isa::Int, attr, scope, validated, int(0))
            }
            Keyword::Connection => s(CONNECTION),
            Keyword::Collections => own.cloned().unwrap_or_else(empty),
            Keyword::ChangedWhen | Keyword::FailedWhen | Keyword::Until => match own {
                None => empty(),
                Some(node) if validated => as_list(node),
                Some(node) => node.clone(),
            },
            Keyword::CheckMode => match (validated, self.task.ctx.inherited(attr.keyword)) {
                (true, _) => Node::bare(Value::Bool(self.task.check_mode(scope, self.check_flag))),
                (false, Some(node)) => node.clone(),
                (false, None) => Node::bare(Value::Bool(self.check_flag)),
            },
            Keyword::Diff => match (validated, self.task.ctx.inherited(attr.keyword)) {
                (true, _) => Node::bare(Value::Bool(
                    self.task.diff_mode(scope, self.diff_flag).unwrap_or(false),
                )),
                (false, Some(node)) => node.clone(),
                (false, None) => Node::bare(Value::Bool(self.diff_flag)),
            },
            Keyword::DelegateTo => match self.task.ctx.delegate_to() {
                None => Node::bare(Value::Null),
                Some(node) if validated => self.rendered(node, scope),
                Some(node) => node.clone(),
            },
            Keyword::Environment => self.environment_dump(scope, validated),
            // The worker writes the resolved value back whatever the task's shape.
            Keyword::IgnoreErrors => {
                let ignore = self.task.flag(Keyword::IgnoreErrors, scope).unwrap_or(false);
                Node::bare(Value::Bool(ignore))
            }
            Keyword::Loop => match (&task.loop_items, validated) {
                (Some(items), false) => items.clone(),
                _ => Node::bare(Value::Null),
            },
            Keyword::LoopWith => {
                task.loop_with.as_deref().map(s).unwrap_or(Node::bare(Value::Null))
            }
            Keyword::ModuleDefaults => self.module_defaults_dump(),
            Keyword::Name => match own {
                Some(node) => match self.task.templar.render(node, scope) {
                    Ok(r) => Node::bare(Value::Str(tack_yaml::pyrepr::str(&r.value.value))),
                    Err(_) => node.clone(),
                },
                None => s(""),
            },
            Keyword::Notify => match own {
                None => Node::bare(Value::Null),
                Some(node) if validated => as_list(&self.rendered(node, scope)),
                Some(node) => node.clone(),
            },
            Keyword::Register => match own {
                None => Node::bare(Value::Null),
                Some(node) => {
                    let mut map = Mapping::new();
                    map.insert(
                        s(&tack_yaml::pyrepr::str(&node.value)),
                        s("_task.polymorphic_result"),
                    );
                    Node::bare(Value::Map(map))
                }
            },
            Keyword::Tags => self.tags_dump(),
            Keyword::Vars => Node::bare(Value::Map(task.vars.clone())),
            Keyword::When => self.when_dump(scope, validated),
            _ => {
                let node =
                    if attr.inheritable { self.task.ctx.inherited(attr.keyword) } else { own };
                self.typed(node, attr.isa, attr, scope, validated, default_of(attr, validated))
            }
        }
    }

    /// A keyword's value: rendered and converted to `isa` when the task was post-validated.
    fn typed(
        &self,
        node: Option<&Node>,
        isa: Isa,
        attr: &Attribute,
        scope: &Scope,
        validated: bool,
        default: Node,
    ) -> Node {
        let Some(node) = node else { return default };
        if !validated || attr.is_static {
            return node.clone();
        }
        let rendered = self.rendered(node, scope);
        if rendered.value == Value::Null {
            return rendered;
        }
        tack_playbook::post_validate::validated_value(
            attr.name,
            isa,
            attr.listof,
            false,
            rendered.clone(),
        )
        .unwrap_or(rendered)
    }

    fn render_args(
        &self,
        scope: &Scope,
    ) -> Result<crate::task::args::RenderedArgs, crate::task::args::ArgsFailed> {
        crate::task::args::render(self.task.ctx, self.action, self.task.templar, scope)
    }

    fn rendered(&self, node: &Node, scope: &Scope) -> Node {
        match self.task.templar.render(node, scope) {
            Ok(r) => r.value,
            Err(_) => node.clone(),
        }
    }

    /// `Task._post_validate_environment`: every layer, outermost first, merged into one
    /// mapping of templated values; as loaded, the layers' items in a list.
    fn environment_dump(&self, scope: &Scope, validated: bool) -> Node {
        let layers = crate::task::environment::layers(self.task.ctx);
        let items: Vec<&Node> = layers
            .iter()
            .flat_map(|layer| match &layer.value {
                Value::Seq(items) => items.iter().collect::<Vec<_>>(),
                Value::Null => Vec::new(),
                _ => vec![*layer],
            })
            .collect();
        if !validated {
            return Node::bare(Value::Seq(items.into_iter().cloned().collect()));
        }
        let mut env = Mapping::new();
        for item in items {
            match &item.value {
                Value::Map(map) => {
                    for (key, value) in map.iter() {
                        if let Ok(r) = self.task.templar.render(value, scope) {
                            env.insert(key.clone(), r.value);
                        }
                    }
                }
                _ => {
                    if let Ok(r) = self.task.templar.render(item, scope)
                        && let Value::Map(map) = r.value.value
                    {
                        for (key, value) in map.into_iter() {
                            env.insert(key, value);
                        }
                    }
                }
            }
        }
        Node::bare(Value::Seq(vec![Node::bare(Value::Map(env))]))
    }

    /// `LoopControl`, post-validated (its typed fields templated, `label` as written) unless
    /// the task failed before that.
    fn loop_control_dump(&self, scope: &Scope, validated: bool) -> Node {
        let own = self.task.ctx.task.attrs.get(Keyword::LoopControl).and_then(Node::as_map);
        let mut out = Mapping::new();
        for attr in ObjectKind::LoopControl.attributes() {
            let node = own.and_then(|m| m.get(attr.name));
            let value = match (attr.keyword, node) {
                (Keyword::Label, Some(node)) => node.clone(),
                (Keyword::BreakWhen, Some(node)) => as_list(node),
                (_, Some(node)) => self.typed(
                    Some(node),
                    attr.isa,
                    attr,
                    scope,
                    validated,
                    Node::bare(Value::Null),
                ),
                (Keyword::LoopVar, None) => s("item"),
                (Keyword::Pause, None) if validated => Node::bare(Value::Float(0.0)),
                (Keyword::Pause, None) => int(0),
                (Keyword::ExtendedAllitems, None) => Node::bare(Value::Bool(true)),
                (Keyword::BreakWhen, None) => empty(),
                (_, None) => Node::bare(Value::Null),
            };
            out.insert(s(attr.name), value);
        }
        Node::bare(Value::Map(out))
    }

    /// `module_defaults` outermost first, each entry under the name ansible resolved it to.
    fn module_defaults_dump(&self) -> Node {
        let maps = crate::task::module_defaults::mappings(self.task.ctx);
        Node::bare(Value::Seq(
            maps.into_iter().map(|m| Node::bare(Value::Map(m.clone()))).collect(),
        ))
    }

    /// The task's and its parents' tags (comma-separated strings split), each once.
    fn tags_dump(&self) -> Node {
        let mut out: Vec<Node> = Vec::new();
        for node in self.task.ctx.extended(Keyword::Tags) {
            let parts: Vec<Node> = match &node.value {
                Value::Str(text) => text.split(',').map(|t| s(t.trim())).collect(),
                _ => vec![node.clone()],
            };
            for part in parts {
                if !out.iter().any(|o| o.value == part.value) {
                    out.push(part);
                }
            }
        }
        Node::bare(Value::Seq(out))
    }

    /// The parents' conditions then the task's, templated when post-validated.
    fn when_dump(&self, scope: &Scope, validated: bool) -> Node {
        let mut out = Vec::new();
        for item in crate::task::when::conditions(self.task.ctx) {
            out.push(if validated { self.rendered(item, scope) } else { item.clone() });
        }
        Node::bare(Value::Seq(out))
    }
}

/// A judged `failed_when` on `result`, with the error it raises when true. ansible moves the
/// action's own `exception` to `failed_when_suppressed_exception` whatever the verdict; a true
/// one raises its own (`Module failed` when the module itself had failed), and a result
/// without a message takes the error's text as its `msg`.
pub(crate) fn failed_when_judged(
    result: &mut tack_report::result::HostResult,
    module_failed: bool,
    failed: bool,
) -> Option<String> {
    if let Some((_, exception)) = result.data.remove("exception") {
        result.data.insert(s("failed_when_suppressed_exception"), exception);
    }
    result.data.insert(s("failed_when_result"), Node::bare(Value::Bool(failed)));
    result.data.insert(s("failed"), Node::bare(Value::Bool(failed)));
    if !failed {
        return None;
    }
    result.data.insert(s("exception"), s("(traceback unavailable)"));
    let by = if module_failed { "Module" } else { "Action" };
    let text = format!("Task failed: {by} failed: A 'failed_when' expression evaluated to 'True'.");
    let empty = match result.data.get("msg") {
        None => true,
        Some(node) => matches!(&node.value, Value::Str(m) if m.is_empty()),
    };
    if empty {
        result.data.insert(s("msg"), s(&text));
    }
    Some(text)
}

fn int(i: i64) -> Node {
    Node::bare(Value::Int(i))
}

fn empty() -> Node {
    Node::bare(Value::Seq(Vec::new()))
}

fn as_list(node: &Node) -> Node {
    match &node.value {
        Value::Seq(_) => node.clone(),
        Value::Null => empty(),
        _ => Node::bare(Value::Seq(vec![node.clone()])),
    }
}

/// ansible-core's declared default of a task attribute without one set anywhere (`delay`'s
/// `5` becomes `5.0` once post-validated as a float).
fn default_of(attr: &Attribute, validated: bool) -> Node {
    match attr.name {
        "any_errors_fatal" | "become" | "ignore_unreachable" | "no_log" => {
            Node::bare(Value::Bool(false))
        }
        "become_method" => s("sudo"),
        "delay" if validated => Node::bare(Value::Float(5.0)),
        "delay" => int(5),
        "poll" => int(15),
        "throttle" | "timeout" => int(0),
        _ => Node::bare(Value::Null),
    }
}
