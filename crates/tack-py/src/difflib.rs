//! Python's `difflib.SequenceMatcher` and `difflib.unified_diff`, as CPython 3.13 computes
//! them: ansible's callbacks print file diffs with `unified_diff`, and which lines it pairs up
//! (not merely a minimal edit script) decides the transcript, so the matcher's own heuristics
//! are reproduced — the longest-block recursion, its earliest-in-`a`-then-`b` tie break, and
//! the "popular element" rule (`autojunk`: in a `b` of 200 or more items, an item occurring
//! more than `len(b) / 100 + 1` times is never used to start a match).
//!
//! What this module does not do: the `isjunk` predicate (ansible never passes one), the
//! `ratio` family, or any other `difflib` output format.

use std::collections::HashMap;
use std::hash::Hash;

/// One operation of `get_opcodes`: what turns `a[i1..i2]` into `b[j1..j2]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Equal,
    Replace,
    Delete,
    Insert,
}

impl Tag {
    /// The name Python gives the operation.
    pub fn as_str(self) -> &'static str {
        match self {
            Tag::Equal => "equal",
            Tag::Replace => "replace",
            Tag::Delete => "delete",
            Tag::Insert => "insert",
        }
    }
}

/// `(tag, i1, i2, j1, j2)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opcode {
    pub tag: Tag,
    pub i1: usize,
    pub i2: usize,
    pub j1: usize,
    pub j2: usize,
}

/// `Match(a, b, size)`: `a[a..a+size] == b[b..b+size]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Match {
    pub a: usize,
    pub b: usize,
    pub size: usize,
}

/// `SequenceMatcher(None, a, b, autojunk)`.
pub struct SequenceMatcher<'s, T> {
    a: &'s [T],
    b: &'s [T],
    /// Where each item of `b` occurs, ascending, with popular items removed.
    b2j: HashMap<&'s T, Vec<usize>>,
}

impl<'s, T: Eq + Hash> SequenceMatcher<'s, T> {
    pub fn new(a: &'s [T], b: &'s [T], autojunk: bool) -> SequenceMatcher<'s, T> {
        let mut b2j: HashMap<&'s T, Vec<usize>> = HashMap::new();
        for (j, item) in b.iter().enumerate() {
            b2j.entry(item).or_default().push(j);
        }
        if autojunk && b.len() >= 200 {
            let ntest = b.len() / 100 + 1;
            b2j.retain(|_, places| places.len() <= ntest);
        }
        SequenceMatcher { a, b, b2j }
    }

    /// `find_longest_match(alo, ahi, blo, bhi)`. Popular items are not junk: a block found
    /// without them is still extended over equal neighbours, popular or not.
    pub fn find_longest_match(&self, alo: usize, ahi: usize, blo: usize, bhi: usize) -> Match {
        let (a, b) = (self.a, self.b);
        let (mut besti, mut bestj, mut bestsize) = (alo, blo, 0);
        // Length of the match ending at a[i-1], b[j] for each j, carried row to row.
        let mut j2len: HashMap<usize, usize> = HashMap::new();
        for (i, item) in a.iter().enumerate().take(ahi).skip(alo) {
            let mut next: HashMap<usize, usize> = HashMap::new();
            if let Some(places) = self.b2j.get(item) {
                for &j in places {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    let k = j.checked_sub(1).and_then(|p| j2len.get(&p)).copied().unwrap_or(0) + 1;
                    next.insert(j, k);
                    if k > bestsize {
                        besti = i + 1 - k;
                        bestj = j + 1 - k;
                        bestsize = k;
                    }
                }
            }
            j2len = next;
        }
        while besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1] {
            besti -= 1;
            bestj -= 1;
            bestsize += 1;
        }
        while besti + bestsize < ahi
            && bestj + bestsize < bhi
            && a[besti + bestsize] == b[bestj + bestsize]
        {
            bestsize += 1;
        }
        Match { a: besti, b: bestj, size: bestsize }
    }

    /// `get_matching_blocks()`: adjacent blocks merged, ending with `(len(a), len(b), 0)`.
    pub fn matching_blocks(&self) -> Vec<Match> {
        let (la, lb) = (self.a.len(), self.b.len());
        // Python pops from the end of a list; the order blocks are found in does not matter
        // (they are sorted), but the ranges searched must be the same.
        let mut queue = vec![(0, la, 0, lb)];
        let mut blocks = Vec::new();
        while let Some((alo, ahi, blo, bhi)) = queue.pop() {
            let m = self.find_longest_match(alo, ahi, blo, bhi);
            if m.size > 0 {
                blocks.push(m);
                if alo < m.a && blo < m.b {
                    queue.push((alo, m.a, blo, m.b));
                }
                if m.a + m.size < ahi && m.b + m.size < bhi {
                    queue.push((m.a + m.size, ahi, m.b + m.size, bhi));
                }
            }
        }
        blocks.sort();
        let mut merged = Vec::new();
        let mut cur = Match { a: 0, b: 0, size: 0 };
        for m in blocks {
            if cur.a + cur.size == m.a && cur.b + cur.size == m.b {
                cur.size += m.size;
            } else {
                if cur.size > 0 {
                    merged.push(cur);
                }
                cur = m;
            }
        }
        if cur.size > 0 {
            merged.push(cur);
        }
        merged.push(Match { a: la, b: lb, size: 0 });
        merged
    }

    /// `get_opcodes()`.
    pub fn opcodes(&self) -> Vec<Opcode> {
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        for m in self.matching_blocks() {
            let tag = if i < m.a && j < m.b {
                Some(Tag::Replace)
            } else if i < m.a {
                Some(Tag::Delete)
            } else if j < m.b {
                Some(Tag::Insert)
            } else {
                None
            };
            if let Some(tag) = tag {
                out.push(Opcode { tag, i1: i, i2: m.a, j1: j, j2: m.b });
            }
            i = m.a + m.size;
            j = m.b + m.size;
            if m.size > 0 {
                out.push(Opcode { tag: Tag::Equal, i1: m.a, i2: i, j1: m.b, j2: j });
            }
        }
        out
    }

    /// `get_grouped_opcodes(n)`: hunks with up to `n` lines of context.
    pub fn grouped_opcodes(&self, n: usize) -> Vec<Vec<Opcode>> {
        let mut codes = self.opcodes();
        if codes.is_empty() {
            codes.push(Opcode { tag: Tag::Equal, i1: 0, i2: 1, j1: 0, j2: 1 });
        }
        if let Some(first) = codes.first_mut().filter(|c| c.tag == Tag::Equal) {
            first.i1 = first.i1.max(first.i2.saturating_sub(n));
            first.j1 = first.j1.max(first.j2.saturating_sub(n));
        }
        if let Some(last) = codes.last_mut().filter(|c| c.tag == Tag::Equal) {
            last.i2 = last.i2.min(last.i1 + n);
            last.j2 = last.j2.min(last.j1 + n);
        }
        let mut groups = Vec::new();
        let mut group = Vec::new();
        for mut code in codes {
            if code.tag == Tag::Equal && code.i2 - code.i1 > 2 * n {
                group.push(Opcode {
                    i2: code.i2.min(code.i1 + n),
                    j2: code.j2.min(code.j1 + n),
                    ..code
                });
                groups.push(std::mem::take(&mut group));
                code.i1 = code.i1.max(code.i2.saturating_sub(n));
                code.j1 = code.j1.max(code.j2.saturating_sub(n));
            }
            group.push(code);
        }
        let only_context = group.len() == 1 && group[0].tag == Tag::Equal;
        if !group.is_empty() && !only_context {
            groups.push(group);
        }
        groups
    }
}

/// `_format_range_unified`.
fn range(start: usize, stop: usize) -> String {
    let length = stop - start;
    if length == 1 {
        return format!("{}", start + 1);
    }
    let beginning = if length == 0 { start } else { start + 1 };
    format!("{beginning},{length}")
}

/// The header dates and context of a `unified_diff` call.
#[derive(Debug, Clone, Default)]
pub struct UnifiedOptions<'o> {
    pub fromfile: &'o str,
    pub tofile: &'o str,
    pub fromfiledate: &'o str,
    pub tofiledate: &'o str,
    /// Lines of context (`n`, 3 in Python).
    pub n: usize,
    /// What ends the header and hunk lines (`lineterm`, `"\n"` in Python).
    pub lineterm: &'o str,
}

/// `difflib.unified_diff(a, b, ...)`: the lines it yields, each as Python builds it (content
/// lines keep whatever ending they came with).
pub fn unified_diff<S: AsRef<str> + Eq + Hash>(
    a: &[S],
    b: &[S],
    options: &UnifiedOptions<'_>,
) -> Vec<String> {
    let matcher = SequenceMatcher::new(a, b, true);
    let mut out = Vec::new();
    let term = options.lineterm;
    for (index, group) in matcher.grouped_opcodes(options.n).iter().enumerate() {
        if index == 0 {
            let date = |d: &str| if d.is_empty() { String::new() } else { format!("\t{d}") };
            out.push(format!("--- {}{}{term}", options.fromfile, date(options.fromfiledate)));
            out.push(format!("+++ {}{}{term}", options.tofile, date(options.tofiledate)));
        }
        let (Some(first), Some(last)) = (group.first(), group.last()) else { continue };
        out.push(format!(
            "@@ -{} +{} @@{term}",
            range(first.i1, last.i2),
            range(first.j1, last.j2)
        ));
        for code in group {
            if code.tag == Tag::Equal {
                out.extend(a[code.i1..code.i2].iter().map(|l| format!(" {}", l.as_ref())));
                continue;
            }
            if matches!(code.tag, Tag::Replace | Tag::Delete) {
                out.extend(a[code.i1..code.i2].iter().map(|l| format!("-{}", l.as_ref())));
            }
            if matches!(code.tag, Tag::Replace | Tag::Insert) {
                out.extend(b[code.j1..code.j2].iter().map(|l| format!("+{}", l.as_ref())));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstring_example_prefers_earliest_in_a() {
        let a: Vec<char> = " abcd".chars().collect();
        let b: Vec<char> = "abcd abcd".chars().collect();
        let m = SequenceMatcher::new(&a, &b, true).find_longest_match(0, 5, 0, 9);
        assert_eq!(m, Match { a: 0, b: 4, size: 5 });
    }
}
