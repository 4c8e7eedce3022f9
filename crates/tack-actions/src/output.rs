//! What an action gives back: the result dictionary, the error shown for it, the facts and
//! variables it sets, and the results ansible builds when an action raised or a module
//! returned.

use tack_diag::{Diagnostic, Origin};
use tack_template::Provenance;
use tack_yaml::{Mapping, Node};

use tack_report::result::{b, s};

/// What an action gives back.
pub struct ActionOutput {
    pub data: Mapping,
    pub verbose_always: bool,
    pub error: Option<Diagnostic>,
    /// Host variables to set (`set_fact`), in order.
    pub facts: Vec<(String, Node, Provenance)>,
    /// Each string of [`ActionOutput::facts`] says its own trust (see
    /// `ActionInput::trust_marked`).
    pub facts_trust_marked: bool,
    /// Host variables `include_vars` loaded, in order.
    pub included: Vec<(String, Node)>,
    /// The task raised instead of returning a result: `changed_when`/`failed_when` are not
    /// evaluated.
    pub raised: bool,
    /// `tack plan`: the task whose unavailable output a render of the action's own read (a
    /// template file's); the plan defers the task on it. (One name, not a list: the output
    /// stays small enough to travel in a `Result`.)
    pub unavailable: Option<std::sync::Arc<String>>,
    /// The action hides its result as `no_log` would (ansible's `_ansible_no_log` from an
    /// action: `include_vars` of a vault-encrypted file).
    pub no_log: bool,
    /// `set_fact` with `cacheable`: its facts also join the host's facts (the fact cache's
    /// layer: `ansible_facts`, and what `gathering = smart` and a persistent cache keep).
    pub cacheable: bool,
    /// What is shown of the result's warnings and deprecations beyond their texts in `data`,
    /// and its values a module tagged `Deprecated`. Boxed: results travel in `Result`s and few
    /// have any.
    pub notes: Option<Box<Notes>>,
}

/// [`ActionOutput::notes`].
#[derive(Debug, Default)]
pub struct Notes {
    /// Warnings of the result (in `data["warnings"]`) that show with where they came from
    /// (`tack_report`'s `warning_blocks`).
    pub warning_blocks: Vec<Diagnostic>,
    /// Each of `data["deprecations"]` as it is shown (a module's, with its help text).
    pub deprecations: Vec<tack_diag::RecordedDeprecation>,
    /// Values of `data` a module tagged `Deprecated` (`module_tags`).
    pub deprecated_values: Vec<tack_yaml::tagged::DeprecatedAt>,
}

impl ActionOutput {
    /// [`ActionOutput::notes`], made when first needed.
    pub fn notes_mut(&mut self) -> &mut Notes {
        self.notes.get_or_insert_with(Default::default)
    }

    pub fn new(data: Mapping) -> ActionOutput {
        ActionOutput {
            data,
            verbose_always: false,
            error: None,
            facts: Vec::new(),
            facts_trust_marked: false,
            included: Vec::new(),
            raised: false,
            unavailable: None,
            no_log: false,
            cacheable: false,
            notes: None,
        }
    }

    /// ansible's `AnsibleActionFail`: a failed result whose message is the action's.
    pub(crate) fn action_failed(
        mut data: Mapping,
        msg: Node,
        origin: Option<Origin>,
    ) -> ActionOutput {
        let text = tack_yaml::pyrepr::str(&msg.value);
        data.insert(s("failed"), b(true));
        data.insert(s("msg"), msg);
        // ansible raises AnsibleActionFail and keeps the exception's place in the result;
        // tack has no Python traceback to show, which is what ansible says there too.
        data.insert(s("exception"), s("(traceback unavailable)"));
        let mut out = ActionOutput::new(data);
        out.error = Some(Diagnostic::at(format!("Task failed: Action failed: {text}"), origin));
        out
    }
}

/// An action that raised an ansible error of its own (not a module's failure): the result is
/// `changed: false`, `failed` and the error's one-line message, and no traceback.
pub fn raised(error: Diagnostic) -> ActionOutput {
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(&error.brief()));
    let mut out = ActionOutput::new(data);
    out.error = Some(error);
    out.raised = true;
    out
}

/// A task that failed with an error instead of a result (ansible's exception results): the
/// result is only `failed` and the error's one-line message.
/// The task's output when its link failed it while it ran: [`errored`], and for a host
/// that is gone (ssh failed, the link dropped) ansible's unreachable result instead of a
/// failed one.
pub(crate) fn link_errored(
    e: &tack_connect::ConnectionError,
    origin: Option<tack_diag::Origin>,
) -> ActionOutput {
    let mut out = errored(Diagnostic::at(format!("Task failed: {e}"), origin));
    if matches!(e, tack_connect::ConnectionError::Unreachable { .. }) {
        out.data.remove("failed");
        out.data.insert(s("unreachable"), b(true));
    }
    out
}

/// Whether a request failed because the host is gone (ssh failed, the link dropped): a
/// file being staged then makes the host unreachable (ansible-core's ssh plugin raises
/// `Failed to connect to the host via ...` for a transfer ssh ends with 255: read in its
/// source, not recorded, since tack stages over its own link), where any other staging
/// failure fails the task.
pub(crate) fn link_lost(e: &tack_connect::ConnectionError) -> bool {
    matches!(e, tack_connect::ConnectionError::Unreachable { .. })
}

pub fn errored(diag: Diagnostic) -> ActionOutput {
    // ansible's result for a task whose action raised (`create_from_action_exception`).
    let mut data = Mapping::new();
    data.insert(s("changed"), b(false));
    data.insert(s("exception"), s("(traceback unavailable)"));
    data.insert(s("failed"), b(true));
    data.insert(s("msg"), s(&diag.brief()));
    let mut out = ActionOutput::new(data);
    out.error = Some(diag);
    out.raised = true;
    out
}
