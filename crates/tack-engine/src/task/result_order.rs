//! The order of a result's keys as ansible 2.21 registers it (`UnifiedTaskResult.
//! as_result_dict`): its own fields first, in their declared order (`changed`, `failed`, ...,
//! `msg`, `rc`, ..., the loop's keys), then what the module returned in the module's order,
//! then the `stdout_lines`/`stderr_lines` it adds, then a loop's `results`. The order shows
//! wherever a registered result is written out whole without sorting (`"{{ r }}"`,
//! `to_json`).

use tack_yaml::{Mapping, Node, Value};

/// The result fields, in `UnifiedTaskResult`'s order; `loop_item` and `loop_index` stand for
/// the loop's and the index's variable names.
const FIELDS: &[&str] = &[
    "changed",
    "failed",
    "unreachable",
    "skipped",
    "warnings",
    "deprecations",
    "ansible_facts",
    "async_result",
    "exception",
    "finished",
    "msg",
    "rc",
    "module_stderr",
    "module_stdout",
    "attempts",
    "retries",
    "diff",
    "ansible_stats",
    "ansible_job_id",
    "skip_reason",
    "skipped_reason",
    "false_condition",
    "changed_when_result",
    "failed_when_result",
    "break_when_result",
    "changed_when_suppressed_exception",
    "failed_when_suppressed_exception",
    "break_when_suppressed_exception",
    "ansible_loop_var",
    "ansible_index_var",
    "loop_item",
    "loop_index",
    "ansible_loop",
];

/// What `as_result_dict` adds after the module's own keys.
const TRAILING: &[&str] = &["stdout_lines", "stderr_lines", "results"];

/// Drops the result fields whose value is `None`: ansible's result object keeps a field
/// only when it is set (`debug: msg="{{ None }}"` registers no `msg`). The loop's variables
/// are dropped the same way where the result is registered ([`registered`]).
pub(crate) fn drop_unset(data: &mut Mapping) {
    let unset: Vec<&str> = FIELDS
        .iter()
        .copied()
        .filter(|f| !matches!(*f, "loop_item" | "loop_index"))
        .filter(|f| data.get(f).is_some_and(|v| matches!(v.value, Value::Null)))
        .collect();
    for key in unset {
        data.remove(key);
    }
}

/// `data` in the order ansible registers it, a loop's items too.
pub(crate) fn registered(data: &Mapping) -> Mapping {
    let name_of = |key: &str| data.get(key).and_then(Node::as_str).map(str::to_string);
    let loop_var = name_of("ansible_loop_var");
    let index_var = name_of("ansible_index_var");
    let field = |name: &str| -> Option<String> {
        match name {
            "loop_item" => loop_var.clone(),
            "loop_index" => index_var.clone(),
            other => Some(other.to_string()),
        }
    };
    let fields: Vec<String> = FIELDS.iter().filter_map(|f| field(f)).collect();
    let mut out = Mapping::new();
    let unset_loop_field = |key: &str| {
        [&loop_var, &index_var].iter().any(|v| v.as_deref() == Some(key))
            && data.get(key).is_some_and(|v| matches!(v.value, Value::Null))
    };
    let mut put = |key: &str| {
        if out.get(key).is_none()
            && !unset_loop_field(key)
            && let Some(value) = data.get(key)
        {
            out.insert(Node::bare(Value::Str(key.to_string())), value.clone());
        }
    };
    for key in &fields {
        put(key);
    }
    for (key, _) in data.iter() {
        if let Some(name) = key.as_str()
            && !TRAILING.contains(&name)
        {
            put(name);
        }
    }
    for key in TRAILING {
        put(key);
    }
    // Keys that are not text keep their place at the end.
    for (key, value) in data.iter() {
        if key.as_str().is_none() {
            out.insert(key.clone(), value.clone());
        }
    }
    if let Some(Value::Seq(items)) = out.get("results").map(|n| n.value.clone()) {
        let items = items
            .into_iter()
            .map(|item| match &item.value {
                Value::Map(map) => Node::new(Value::Map(registered(map)), item.origin.clone()),
                _ => item,
            })
            .collect();
        out.insert(Node::bare(Value::Str("results".into())), Node::bare(Value::Seq(items)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::registered;
    use tack_yaml::{Mapping, Node, Value};

    fn map(pairs: &[(&str, Node)]) -> Mapping {
        let mut m = Mapping::new();
        for (k, v) in pairs {
            m.insert(Node::bare(Value::Str((*k).into())), v.clone());
        }
        m
    }

    fn keys(m: &Mapping) -> Vec<String> {
        m.iter().filter_map(|(k, _)| k.as_str().map(str::to_string)).collect()
    }

    #[test]
    fn fields_first_then_the_modules_keys_then_what_ansible_adds() {
        let s = |t: &str| Node::bare(Value::Str(t.into()));
        let data = map(&[
            ("cmd", s("echo")),
            ("stdout", s("x")),
            ("stdout_lines", s("x")),
            ("rc", s("0")),
            ("msg", s("")),
            ("item", s("1")),
            ("ansible_loop_var", s("item")),
            ("failed", s("f")),
            ("changed", s("c")),
        ]);
        assert_eq!(
            keys(&registered(&data)),
            [
                "changed",
                "failed",
                "msg",
                "rc",
                "ansible_loop_var",
                "item",
                "cmd",
                "stdout",
                "stdout_lines"
            ]
        );
    }
}
