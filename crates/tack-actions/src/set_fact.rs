//! `set_fact`: sets host variables from its (rendered) arguments, at the precedence of facts
//! and registered results; `cacheable` is accepted as ansible accepts it (there is no fact
//! cache, so it changes nothing else).

use tack_yaml::{Mapping, Node, Value};

use crate::input::ActionInput;
use crate::output::ActionOutput;
use tack_report::result::{b, s};

/// ansible's `validate_variable_name`: a Python identifier that is not a keyword.
fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else { return false };
    (first == '_' || first.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && !PYTHON_KEYWORDS.contains(&name)
}

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

pub(crate) fn run(input: &ActionInput<'_>) -> ActionOutput {
    let mut facts = Mapping::new();
    let mut out_facts = Vec::new();
    for (key, value) in input.args.iter() {
        let name = tack_yaml::pyrepr::str(&key.value);
        if name == "cacheable" {
            continue;
        }
        if !valid_name(&name) {
            let mut data = Mapping::new();
            data.insert(s("changed"), b(false));
            let msg = format!(
                "The variable name '{name}' is not valid. Variables must start with a letter or \
                 underscore character, and contain only letters, numbers and underscores."
            );
            return ActionOutput::action_failed(
                data,
                Node::bare(Value::Str(msg)),
                input.task_origin.clone(),
            );
        }
        facts.insert(key.clone(), value.clone());
        out_facts.push((name, value.clone()));
    }
    let mut data = Mapping::new();
    if facts.is_empty() {
        data.insert(s("changed"), b(false));
        let msg =
            "No key/value pairs provided, at least one is required for this action to succeed";
        return ActionOutput::action_failed(data, s(msg), input.task_origin.clone());
    }
    tack_loader::vars::warn_if_reserved(&facts);
    data.insert(s("ansible_facts"), Node::bare(Value::Map(facts)));
    data.insert(s("changed"), b(false));
    let mut out = ActionOutput::new(data);
    // What set_fact stores is what its arguments rendered to: its provenance is that of
    // everything the render read, which the executor passes in.
    out.facts = out_facts.into_iter().map(|(n, v)| (n, v, input.derived.clone())).collect();
    out
}
