//! The play-level execution controls that decide which hosts run together: the play's host
//! `order`, its `serial` batches (ansible's `_get_serialized_batches` and `pct_to_int`), and
//! the `max_fail_percentage` test ansible's linear strategy makes after each task.
//!
//! Pure functions over host names: nothing here runs a task or prints.

use tack_diag::Diagnostic;
use tack_yaml::{Node, Value};

/// The play's hosts in the order its `order` keyword asks for (`inventory` when unset).
pub(crate) fn order_hosts(
    mut hosts: Vec<String>,
    order: Option<&Node>,
) -> Result<Vec<String>, Diagnostic> {
    let Some(node) = order else { return Ok(hosts) };
    let order = match &node.value {
        Value::Null => return Ok(hosts),
        other => tack_yaml::pyrepr::str(other),
    };
    match order.as_str() {
        "inventory" => {}
        // Python's sort of `str` is by code point, which UTF-8 byte order preserves.
        "sorted" => hosts.sort(),
        "reverse_sorted" => {
            hosts.sort();
            hosts.reverse();
        }
        "reverse_inventory" => hosts.reverse(),
        "shuffle" => shuffle(&mut hosts)?,
        other => {
            return Err(Diagnostic::new(format!(
                "Invalid 'order' specified for inventory hosts: {other}"
            ))
            .with_class(tack_diag::ErrorClass::Options));
        }
    }
    Ok(hosts)
}

/// Fisher-Yates with the system's random source (ansible's `random.shuffle` is unseeded too).
fn shuffle(hosts: &mut [String]) -> Result<(), Diagnostic> {
    for i in (1..hosts.len()).rev() {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes)
            .map_err(|e| Diagnostic::new(format!("no random source for 'order: shuffle': {e}")))?;
        let j = (u64::from_le_bytes(bytes) % (i as u64 + 1)) as usize;
        hosts.swap(i, j);
    }
    Ok(())
}

/// `pct_to_int(value, total)`: `"N%"` is that share of all the play's hosts, truncated (with
/// Python's float arithmetic), at least 1; anything else is `int(value)`.
fn batch_size(item: &Node, total: usize) -> Result<i64, Diagnostic> {
    let invalid = || {
        Diagnostic::at(
            format!(
                "invalid serial value {}: expected an integer or a percentage",
                tack_yaml::pyrepr::repr(&item.value)
            ),
            item.origin.clone(),
        )
    };
    match &item.value {
        Value::Str(s) | Value::Unsafe(s) if s.ends_with('%') => {
            let pct = tack_py::num::int(&s.replace('%', "")).map_err(|_| invalid())?;
            let size = (pct as f64 / 100.0) * total as f64;
            let size = size.trunc() as i64;
            Ok(if size == 0 { 1 } else { size })
        }
        Value::Str(s) | Value::Unsafe(s) => tack_py::num::int(s).map_err(|_| invalid()),
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::Float(f) if f.is_finite() => Ok(f.trunc() as i64),
        _ => Err(invalid()),
    }
}

/// The play's hosts cut into `serial` batches: each item of the list sizes one batch, the
/// last item every batch after it; a size of 0 or less takes all the hosts left.
pub(crate) fn serialize(
    hosts: &[String],
    serial: Option<&Node>,
) -> Result<Vec<Vec<String>>, Diagnostic> {
    let items: Vec<Node> = match serial.map(|n| &n.value) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Seq(items)) => items.clone(),
        Some(_) => serial.into_iter().cloned().collect(),
    };
    if items.is_empty() {
        return Ok(if hosts.is_empty() { Vec::new() } else { vec![hosts.to_vec()] });
    }
    let mut left: std::collections::VecDeque<String> = hosts.iter().cloned().collect();
    let mut batches = Vec::new();
    let mut item = 0;
    while !left.is_empty() {
        let size = batch_size(&items[item], hosts.len())?;
        if size <= 0 {
            batches.push(left.drain(..).collect());
            break;
        }
        let take = usize::try_from(size).unwrap_or(usize::MAX).min(left.len());
        batches.push(left.drain(..take).collect());
        item = (item + 1).min(items.len() - 1);
    }
    Ok(batches)
}

/// The play's `max_fail_percentage` (already a float by post-validation), as a fraction.
pub(crate) fn max_fail_fraction(node: Option<&Node>) -> Option<f64> {
    match node.map(|n| &n.value) {
        Some(Value::Float(f)) => Some(f / 100.0),
        Some(Value::Int(i)) => Some(*i as f64 / 100.0),
        _ => None,
    }
}

/// ansible's test: the hosts failed so far in this batch, over the batch's size, strictly
/// above the fraction.
pub(crate) fn over_max_fail(failed: usize, batch: usize, fraction: f64) -> bool {
    batch > 0 && (failed as f64 / batch as f64) > fraction
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("h{i}")).collect()
    }

    fn seq(items: Vec<Value>) -> Node {
        Node::bare(Value::Seq(items.into_iter().map(Node::bare).collect()))
    }

    #[test]
    fn percent_truncates_with_float_arithmetic() {
        // 0.29 * 100 is 28.999999999999996 in Python too.
        let serial = seq(vec![Value::Str("29%".into())]);
        let batches = serialize(&names(100), Some(&serial)).unwrap();
        assert_eq!(batches[0].len(), 28);
    }

    #[test]
    fn last_item_repeats_and_zero_takes_the_rest() {
        let serial = seq(vec![Value::Int(1), Value::Int(2)]);
        let sizes: Vec<usize> =
            serialize(&names(6), Some(&serial)).unwrap().iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![1, 2, 2, 1]);
        let serial = seq(vec![Value::Int(1), Value::Int(0)]);
        let sizes: Vec<usize> =
            serialize(&names(6), Some(&serial)).unwrap().iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![1, 5]);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let order = Node::bare(Value::Str("shuffle".into()));
        let mut out = order_hosts(names(20), Some(&order)).unwrap();
        out.sort();
        let mut want = names(20);
        want.sort();
        assert_eq!(out, want);
    }
}
