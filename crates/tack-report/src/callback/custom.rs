//! The run's custom stats (`set_stats`), as ansible's `AggregateStats.set_custom_stats` and
//! `update_custom_stats` keep them (per host, or for the whole run under `_run`), and the
//! `CUSTOM STATS` lines the default callback prints after the recap.

use tack_yaml::{JsonOptions, Mapping, Node, Value};

use super::Stats;

/// `merge_hash` with ansible's defaults (recursive, lists replaced).
fn merge(into: &mut Mapping, from: &Mapping) {
    for (k, v) in from.iter() {
        let merged = match (into.get_value(&k.value).map(|n| &n.value), &v.value) {
            (Some(Value::Map(old)), Value::Map(new)) => {
                let mut old = old.clone();
                merge(&mut old, new);
                Node::bare(Value::Map(old))
            }
            _ => v.clone(),
        };
        into.insert(k.clone(), merged);
    }
}

/// `+=` of Python values of one type; `None` when Python's types do not match.
fn add(old: &Value, new: &Value) -> Option<Value> {
    Some(match (old, new) {
        (Value::Bool(a), Value::Bool(b)) => Value::Int(i64::from(*a) + i64::from(*b)),
        (Value::Int(a), Value::Int(b)) => Value::Int(a.checked_add(*b)?),
        (Value::Int(a), Value::Bool(b)) => Value::Int(a.checked_add(i64::from(*b))?),
        (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
        (Value::Str(a), Value::Str(b)) => Value::Str(format!("{a}{b}")),
        (Value::Seq(a), Value::Seq(b)) => Value::Seq(a.iter().chain(b).cloned().collect()),
        _ => return None,
    })
}

impl Stats {
    /// Applies a `set_stats` result's `ansible_stats` for `host` (the run's stats unless
    /// `per_host`).
    pub fn apply_custom(&mut self, host: &str, stats: &Mapping) {
        let Some(Value::Map(data)) = stats.get("data").map(|n| &n.value) else { return };
        let per_host = stats.get("per_host").is_some_and(|n| n.value.is_truthy());
        let aggregate = stats.get("aggregate").is_some_and(|n| n.value.is_truthy());
        let owner = if per_host { host } else { "_run" }.to_string();
        let slot = self.custom.entry(owner).or_default();
        for (k, v) in data.iter() {
            let Some(old) = slot.get_value(&k.value).filter(|_| aggregate).map(|n| n.value.clone())
            else {
                slot.insert(k.clone(), v.clone());
                continue;
            };
            let updated = match (old, &v.value) {
                (Value::Map(mut old), Value::Map(new)) => {
                    merge(&mut old, new);
                    Value::Map(old)
                }
                // Python's types differ: ansible leaves the stat as it was.
                (old, new) => add(&old, new).unwrap_or(old),
            };
            slot.insert(k.clone(), Node::bare(updated));
        }
    }

    /// The `CUSTOM STATS` lines after the banner: each host's, then the run's.
    pub fn custom_lines(&self) -> Vec<String> {
        let dump = |m: &Mapping| {
            let mut options = JsonOptions::indented(1, true);
            options.ensure_ascii = false;
            tack_yaml::to_json(&Node::bare(Value::Map(m.clone())), &options)
                .unwrap_or_else(|e| format!("<<stats not serialisable: {e}>>"))
                .replace('\n', "")
        };
        let mut lines = Vec::new();
        for (host, stats) in self.custom.iter().filter(|(h, _)| *h != "_run") {
            lines.push(format!("\t{host}: {}", dump(stats)));
        }
        if let Some(run) = self.custom.get("_run") {
            lines.push(String::new());
            lines.push(format!("\tRUN: {}", dump(run)));
        }
        lines.push(String::new());
        lines
    }
}
