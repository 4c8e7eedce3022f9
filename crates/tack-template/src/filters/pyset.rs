//! CPython 3.13's `set` table (open addressing, nine linear probes then perturbation, the same
//! resize points), so `list(set(a) | set(b))` comes out in the order ansible's does.
//!
//! Hashes follow CPython: integers modulo 2**61-1, floats by their exact value, `None`'s fixed
//! hash, and strings by SipHash-1-3 with the all-zero key that `PYTHONHASHSEED=0` selects.
//! ansible runs with a random string-hash key, so its order for strings varies from run to run;
//! tack picks the reproducible one. Written here because no crate models CPython's set layout.

use minijinja::Value;
use minijinja::value::ValueKind;

use super::pyval::{self, Num};

const MIN_SIZE: usize = 8;
const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;
const MODULUS: u64 = (1 << 61) - 1;
const NONE_HASH: i64 = 4_238_894_112;

#[derive(Clone)]
enum Slot {
    Empty,
    Dummy,
    Active(i64, Value),
}

/// A Python set of hashable values.
#[derive(Clone)]
pub(crate) struct PySet {
    table: Vec<Slot>,
    fill: usize,
    used: usize,
}

impl PySet {
    fn new() -> PySet {
        PySet { table: vec![Slot::Empty; MIN_SIZE], fill: 0, used: 0 }
    }

    fn mask(&self) -> usize {
        self.table.len() - 1
    }

    /// `set(items)`.
    pub(super) fn from_items(items: &[Value]) -> PySet {
        let mut set = PySet::new();
        for item in items {
            set.add(hash(item), item.clone());
        }
        set
    }

    /// The members in iteration order (`list(s)`).
    pub(super) fn items(&self) -> Vec<Value> {
        self.entries().map(|(_, v)| v.clone()).collect()
    }

    fn entries(&self) -> impl Iterator<Item = (i64, &Value)> {
        self.table.iter().filter_map(|s| match s {
            Slot::Active(h, v) => Some((*h, v)),
            _ => None,
        })
    }

    fn find(&self, h: i64, key: &Value) -> Option<usize> {
        let mask = self.mask();
        let mut perturb = h as u64;
        let mut i = (h as u64 as usize) & mask;
        loop {
            let probes = if i + LINEAR_PROBES <= mask { LINEAR_PROBES } else { 0 };
            for j in i..=i + probes {
                match &self.table[j] {
                    Slot::Empty => return None,
                    Slot::Active(eh, ev) if *eh == h && pyval::eq(ev, key) => return Some(j),
                    _ => {}
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb as usize)) & mask;
        }
    }

    fn contains(&self, h: i64, key: &Value) -> bool {
        self.find(h, key).is_some()
    }

    /// `set_add_entry`.
    fn add(&mut self, h: i64, key: Value) {
        let mask = self.mask();
        let mut perturb = h as u64;
        let mut i = (h as u64 as usize) & mask;
        let mut freeslot = None;
        let unused = loop {
            let probes = if i + LINEAR_PROBES <= mask { LINEAR_PROBES } else { 0 };
            let mut found = None;
            for j in i..=i + probes {
                match &self.table[j] {
                    Slot::Empty => {
                        found = Some(j);
                        break;
                    }
                    Slot::Active(eh, ev) if *eh == h && pyval::eq(ev, &key) => return,
                    Slot::Dummy if freeslot.is_none() => freeslot = Some(j),
                    _ => {}
                }
            }
            if let Some(j) = found {
                break j;
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb as usize)) & mask;
        };
        if let Some(slot) = freeslot {
            self.used += 1;
            self.table[slot] = Slot::Active(h, key);
            return;
        }
        self.fill += 1;
        self.used += 1;
        self.table[unused] = Slot::Active(h, key);
        if self.fill * 5 >= mask * 3 {
            let minused = if self.used > 50_000 { self.used * 2 } else { self.used * 4 };
            self.resize(minused);
        }
    }

    fn discard(&mut self, h: i64, key: &Value) -> bool {
        match self.find(h, key) {
            Some(j) => {
                self.table[j] = Slot::Dummy;
                self.used -= 1;
                true
            }
            None => false,
        }
    }

    fn resize(&mut self, minused: usize) {
        let mut size = MIN_SIZE;
        while size <= minused {
            size <<= 1;
        }
        let old = std::mem::replace(&mut self.table, vec![Slot::Empty; size]);
        self.fill = self.used;
        for slot in old {
            if let Slot::Active(h, v) = slot {
                self.insert_clean(h, v);
            }
        }
    }

    fn insert_clean(&mut self, h: i64, key: Value) {
        let mask = self.mask();
        let mut perturb = h as u64;
        let mut i = (h as u64 as usize) & mask;
        loop {
            if matches!(self.table[i], Slot::Empty) {
                self.table[i] = Slot::Active(h, key);
                return;
            }
            if i + LINEAR_PROBES <= mask {
                for j in i + 1..=i + LINEAR_PROBES {
                    if matches!(self.table[j], Slot::Empty) {
                        self.table[j] = Slot::Active(h, key);
                        return;
                    }
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i.wrapping_mul(5).wrapping_add(1).wrapping_add(perturb as usize)) & mask;
        }
    }

    /// `set_merge`: every member of `other` added to `self`.
    fn merge(&mut self, other: &PySet) {
        if other.used == 0 {
            return;
        }
        if (self.fill + other.used) * 5 >= self.mask() * 3 {
            self.resize((self.used + other.used) * 2);
        }
        if self.fill == 0 && self.mask() == other.mask() && other.fill == other.used {
            self.table = other.table.clone();
            self.fill = other.fill;
            self.used = other.used;
            return;
        }
        if self.fill == 0 {
            self.fill = other.used;
            self.used = other.used;
            for (h, v) in other.entries() {
                self.insert_clean(h, v.clone());
            }
            return;
        }
        for (h, v) in other.entries() {
            self.add(h, v.clone());
        }
    }

    fn copy(&self) -> PySet {
        let mut out = PySet::new();
        out.merge(self);
        out
    }

    /// `self | other`.
    pub(super) fn union(&self, other: &PySet) -> PySet {
        let mut out = self.copy();
        out.merge(other);
        out
    }

    /// `self & other`.
    pub(super) fn intersection(&self, other: &PySet) -> PySet {
        let (big, small) = if other.used > self.used { (other, self) } else { (self, other) };
        let mut out = PySet::new();
        for (h, v) in small.entries() {
            if big.contains(h, v) {
                out.add(h, v.clone());
            }
        }
        out
    }

    /// `self - other`.
    pub(super) fn difference(&self, other: &PySet) -> PySet {
        if (self.used >> 2) > other.used {
            let mut out = self.copy();
            for (h, v) in other.entries() {
                out.discard(h, v);
            }
            return out;
        }
        let mut out = PySet::new();
        for (h, v) in self.entries() {
            if !other.contains(h, v) {
                out.add(h, v.clone());
            }
        }
        out
    }

    /// `self ^ other`.
    pub(super) fn symmetric_difference(&self, other: &PySet) -> PySet {
        let mut out = other.copy();
        for (h, v) in self.entries() {
            if !out.discard(h, v) {
                out.add(h, v.clone());
            }
        }
        out
    }
}

/// CPython's `hash()` of a hashable value.
pub(crate) fn hash(value: &Value) -> i64 {
    let h = match value.kind() {
        ValueKind::None | ValueKind::Undefined => NONE_HASH,
        ValueKind::String => str_hash(value.as_str().unwrap_or_default()),
        _ => match pyval::num(value) {
            Some(Num::Int(i)) => int_hash(i),
            Some(Num::Float(f)) => float_hash(f),
            None => 0,
        },
    };
    if h == -1 { -2 } else { h }
}

fn int_hash(i: i128) -> i64 {
    let m = i.unsigned_abs() % u128::from(MODULUS);
    let h = m as i64;
    if i < 0 { -h } else { h }
}

fn float_hash(f: f64) -> i64 {
    if f.is_infinite() {
        return if f > 0.0 { 314_159 } else { -314_159 };
    }
    if f.is_nan() {
        return 0;
    }
    if f.fract() == 0.0 && f.abs() < 1e38 {
        return int_hash(f as i128);
    }
    let (mut m, mut e) = frexp(f.abs());
    let sign: i64 = if f < 0.0 { -1 } else { 1 };
    let mut x: u64 = 0;
    while m != 0.0 {
        x = ((x << 28) & MODULUS) | (x >> (61 - 28));
        m *= 268_435_456.0;
        e -= 28;
        let y = m as u64;
        m -= y as f64;
        x += y;
        if x >= MODULUS {
            x -= MODULUS;
        }
    }
    let e = if e >= 0 { e % 61 } else { 61 - 1 - ((-1 - e) % 61) };
    x = ((x << e) & MODULUS) | (x >> (61 - e));
    (x as i64) * sign
}

/// `math.frexp` for a positive finite number: `m` in [0.5, 1) and `e` with `x = m * 2**e`.
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 {
        return (0.0, 0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        let (m, e) = frexp(x * 2f64.powi(54));
        return (m, e - 54);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exp - 1022)
}

fn str_hash(s: &str) -> i64 {
    if s.is_empty() {
        return 0;
    }
    // CPython hashes its internal representation: one, two or four bytes per code point.
    let widest = s.chars().map(|c| c as u32).max().unwrap_or(0);
    let bytes: Vec<u8> = if widest < 0x100 {
        s.chars().map(|c| c as u32 as u8).collect()
    } else if widest < 0x10000 {
        s.chars().flat_map(|c| (c as u32 as u16).to_le_bytes()).collect()
    } else {
        s.chars().flat_map(|c| (c as u32).to_le_bytes()).collect()
    };
    siphash13(&bytes) as i64
}

fn siphash13(data: &[u8]) -> u64 {
    let (k0, k1) = (0u64, 0u64);
    let mut v = [
        k0 ^ 0x736f_6d65_7073_6575,
        k1 ^ 0x646f_7261_6e64_6f6d,
        k0 ^ 0x6c79_6765_6e65_7261,
        k1 ^ 0x7465_6462_7974_6573,
    ];
    fn round(v: &mut [u64; 4]) {
        v[0] = v[0].wrapping_add(v[1]);
        v[2] = v[2].wrapping_add(v[3]);
        v[1] = v[1].rotate_left(13) ^ v[0];
        v[3] = v[3].rotate_left(16) ^ v[2];
        v[0] = v[0].rotate_left(32);
        v[2] = v[2].wrapping_add(v[1]);
        v[0] = v[0].wrapping_add(v[3]);
        v[1] = v[1].rotate_left(17) ^ v[2];
        v[3] = v[3].rotate_left(21) ^ v[0];
        v[2] = v[2].rotate_left(32);
    }
    let chunks = data.chunks_exact(8);
    let tail = chunks.remainder();
    for chunk in chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let m = u64::from_le_bytes(word);
        v[3] ^= m;
        round(&mut v);
        v[0] ^= m;
    }
    let mut last = (data.len() as u64) << 56;
    for (i, b) in tail.iter().enumerate() {
        last |= u64::from(*b) << (8 * i);
    }
    v[3] ^= last;
    round(&mut v);
    v[0] ^= last;
    v[2] ^= 0xff;
    round(&mut v);
    round(&mut v);
    round(&mut v);
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_cpython_with_a_zero_hash_seed() {
        // Printed by CPython 3.13 under PYTHONHASHSEED=0.
        assert_eq!(hash(&Value::from("a")), 4644417185603328019);
        assert_eq!(hash(&Value::from("abc")), -4594863902769663758);
        assert_eq!(hash(&Value::from("é")), 6047309291227476195);
        assert_eq!(hash(&Value::from("日本")), 6243316497235261705);
        assert_eq!(hash(&Value::from(1.5)), 1152921504606846977);
        assert_eq!(hash(&Value::from(-1)), -2);
        assert_eq!(hash(&Value::from(())), 4238894112);
    }

    #[test]
    fn iteration_order_matches_cpython() {
        let ints = |xs: &[i64]| xs.iter().map(|&x| Value::from(x)).collect::<Vec<_>>();
        let set = PySet::from_items(&ints(&[3, 1, 2, 10, 9, 17, 33]));
        // `list(set([3, 1, 2, 10, 9, 17, 33]))` in CPython 3.13.
        assert_eq!(set.items(), ints(&[1, 2, 3, 33, 9, 10, 17]));
        let diff = PySet::from_items(&ints(&[3, 1, 2])).difference(&PySet::from_items(&ints(&[1])));
        assert_eq!(diff.items(), ints(&[2, 3]));
    }
}
