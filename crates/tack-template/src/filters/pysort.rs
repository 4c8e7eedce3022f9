//! `sorted()` as CPython performs it: a stable sort using only `<`, run detection and binary
//! insertion in the order CPython's list sort compares, so that when two items cannot be
//! compared the `TypeError` names the same two types ansible's message names.
//!
//! Written here because Rust's sorts compare in a different order (the result of a successful
//! sort is the same; only which incomparable pair is met first differs).

use std::cmp::Ordering;

/// Below this length CPython sorts with one run and binary insertion only.
const MIN_MERGE: usize = 64;

/// Sorts `items` by `keys` (one per item) with `less(a, b)` = `a < b`, as `sorted(...,
/// reverse=reverse)` would.
pub(crate) fn sort_by_keys<T, K>(
    items: Vec<T>,
    keys: Vec<K>,
    reverse: bool,
    less: impl Fn(&K, &K) -> Result<bool, String>,
) -> Result<Vec<T>, String> {
    let mut pairs: Vec<(K, T)> = keys.into_iter().zip(items).collect();
    // CPython sorts a reversed copy ascending and reverses the result: equal items keep their
    // original order either way.
    if reverse {
        pairs.reverse();
    }
    if pairs.len() < MIN_MERGE {
        small_sort(&mut pairs, &less)?;
    } else {
        let mut failure = None;
        pairs.sort_by(|a, b| {
            if failure.is_some() {
                return Ordering::Equal;
            }
            match less(&b.0, &a.0) {
                Ok(true) => Ordering::Greater,
                Ok(false) => match less(&a.0, &b.0) {
                    Ok(true) => Ordering::Less,
                    Ok(false) => Ordering::Equal,
                    Err(e) => {
                        failure = Some(e);
                        Ordering::Equal
                    }
                },
                Err(e) => {
                    failure = Some(e);
                    Ordering::Equal
                }
            }
        });
        if let Some(e) = failure {
            return Err(e);
        }
    }
    if reverse {
        pairs.reverse();
    }
    Ok(pairs.into_iter().map(|(_, item)| item).collect())
}

fn small_sort<K, T>(
    a: &mut [(K, T)],
    less: &impl Fn(&K, &K) -> Result<bool, String>,
) -> Result<(), String> {
    let n = a.len();
    if n < 2 {
        return Ok(());
    }
    let mut run = 2;
    if less(&a[1].0, &a[0].0)? {
        while run < n && less(&a[run].0, &a[run - 1].0)? {
            run += 1;
        }
        a[..run].reverse();
    } else {
        while run < n && !less(&a[run].0, &a[run - 1].0)? {
            run += 1;
        }
    }
    for start in run..n {
        let (mut lo, mut hi) = (0, start);
        while lo < hi {
            let mid = lo + ((hi - lo) >> 1);
            if less(&a[start].0, &a[mid].0)? {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        a[lo..=start].rotate_right(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lt(a: &i32, b: &i32) -> Result<bool, String> {
        Ok(a < b)
    }

    #[test]
    fn sorts_stably_both_ways() {
        let items = vec!["b1", "a", "b2", "c"];
        let keys = vec![2, 1, 2, 3];
        assert_eq!(
            sort_by_keys(items.clone(), keys.clone(), false, lt).unwrap(),
            ["a", "b1", "b2", "c"]
        );
        assert_eq!(sort_by_keys(items, keys, true, lt).unwrap(), ["c", "b1", "b2", "a"]);
        let many: Vec<i32> = (0..200).rev().collect();
        let sorted = sort_by_keys(many.clone(), many, false, lt).unwrap();
        assert_eq!(sorted, (0..200).collect::<Vec<_>>());
    }
}
