//! `random` and `shuffle`, with Python's `random.Random(seed)` (MT19937 seeded by
//! `init_by_array`, `getrandbits`, `_randbelow` by rejection) so a seeded call picks what
//! ansible picks. Unseeded calls use the operating system's randomness, as ansible's
//! `SystemRandom` does.
//!
//! The generator is written here because no crate reproduces CPython's seeding of strings
//! (their bytes followed by their SHA-512) and its bit-consumption order.

use minijinja::value::ValueKind;
use minijinja::{State, Value};
use sha2::{Digest, Sha512};

use super::args::{Bound, Sig};
use super::pyval::{self, Num, int_value, list_of};
use super::{Entry, FilterError};

pub(super) const FILTERS: &[Entry] = &[
    Entry::new("random", Sig::new("rand", &["end", "start", "step", "seed"], 1).env(), random),
    Entry::new("shuffle", Sig::new("randomize_list", &["mylist", "seed"], 1), shuffle),
];

/// CPython's Mersenne Twister.
pub(crate) struct PyRandom {
    state: [u32; 624],
    index: usize,
}

impl PyRandom {
    fn init_genrand(seed: u32) -> PyRandom {
        let mut state = [0u32; 624];
        state[0] = seed;
        for i in 1..624 {
            state[i] = 1_812_433_253u32
                .wrapping_mul(state[i - 1] ^ (state[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        PyRandom { state, index: 624 }
    }

    fn init_by_array(key: &[u32]) -> PyRandom {
        let mut r = PyRandom::init_genrand(19_650_218);
        let mt = &mut r.state;
        let (mut i, mut j) = (1usize, 0usize);
        let len = key.len().max(1);
        for _ in 0..624.max(len) {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key.get(j).copied().unwrap_or(0))
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= len {
                j = 0;
            }
        }
        for _ in 0..623 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        r
    }

    /// `random.Random(seed)` for the seeds a template can give.
    pub(crate) fn from_seed(seed: &Value) -> PyRandom {
        let bytes: Vec<u8> = match seed.kind() {
            ValueKind::String => {
                let text = seed.as_str().unwrap_or_default().as_bytes();
                let mut b = text.to_vec();
                b.extend_from_slice(&Sha512::digest(text));
                b
            }
            _ => {
                let n: u128 = match pyval::num(seed) {
                    Some(Num::Int(i)) => i.unsigned_abs(),
                    Some(Num::Float(_)) => super::pyset::hash(seed).unsigned_abs().into(),
                    None => {
                        super::pyset::hash(&Value::from(pyval::str_of(seed))).unsigned_abs().into()
                    }
                };
                n.to_be_bytes().to_vec()
            }
        };
        // The big-endian integer as 32-bit words, least significant first.
        let mut words: Vec<u32> = bytes
            .rchunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[4 - c.len()..].copy_from_slice(c);
                u32::from_be_bytes(w)
            })
            .collect();
        while words.len() > 1 && words.last() == Some(&0) {
            words.pop();
        }
        PyRandom::init_by_array(&words)
    }

    fn next_u32(&mut self) -> u32 {
        if self.index >= 624 {
            let mt = &mut self.state;
            for k in 0..624 {
                let y = (mt[k] & 0x8000_0000) | (mt[(k + 1) % 624] & 0x7fff_ffff);
                let mut v = mt[(k + 397) % 624] ^ (y >> 1);
                if y & 1 == 1 {
                    v ^= 0x9908_b0df;
                }
                mt[k] = v;
            }
            self.index = 0;
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `getrandbits(k)` for `k <= 128`.
    fn getrandbits(&mut self, k: u32) -> u128 {
        if k <= 32 {
            return u128::from(self.next_u32() >> (32 - k));
        }
        let mut out: u128 = 0;
        let mut left = k;
        let mut shift = 0;
        while left > 0 {
            let mut r = self.next_u32();
            if left < 32 {
                r >>= 32 - left;
            }
            out |= u128::from(r) << shift;
            shift += 32;
            left = left.saturating_sub(32);
        }
        out
    }

    /// `_randbelow(n)` for `n > 0`.
    pub(crate) fn below(&mut self, n: u128) -> u128 {
        let k = 128 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `shuffle(items)`.
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u128 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// The operating system's randomness, for calls without a seed.
fn system_below(n: u128) -> Result<u128, FilterError> {
    let mut seed = [0u8; 16];
    getrandom::fill(&mut seed)
        .map_err(|e| FilterError::failed(format!("no random source: {e}")))?;
    let mut r = PyRandom::from_seed(&Value::from(u128::from_le_bytes(seed) as i128 & i128::MAX));
    Ok(r.below(n))
}

fn seeded(seed: Option<&Value>) -> Option<PyRandom> {
    seed.filter(|s| !s.is_none()).map(PyRandom::from_seed)
}

fn int_of(value: Option<&Value>) -> Option<i128> {
    match value.and_then(pyval::num) {
        Some(Num::Int(i)) => Some(i),
        _ => None,
    }
}

fn random(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let end = args.input();
    let mut rng = seeded(args.get(3));
    let mut below = |n: u128| -> Result<u128, FilterError> {
        match rng.as_mut() {
            Some(r) => Ok(r.below(n)),
            None => system_below(n),
        }
    };
    let is_int = matches!(end.kind(), ValueKind::Bool)
        || (end.kind() == ValueKind::Number && end.is_integer());
    if is_int {
        let stop = int_of(Some(end)).unwrap_or(0);
        let start_given = args.get(1).filter(|s| pyval::truthy(s));
        let step_given = args.get(2).filter(|s| pyval::truthy(s));
        let start = match start_given {
            None => 0,
            Some(s) => int_of(Some(s)).ok_or_else(|| {
                FilterError::failed(format!(
                    "'{}' object cannot be interpreted as an integer",
                    pyval::type_name(s)
                ))
            })?,
        };
        let step = match step_given {
            None => 1,
            Some(s) => int_of(Some(s)).ok_or_else(|| {
                FilterError::failed(format!(
                    "'{}' object cannot be interpreted as an integer",
                    pyval::type_name(s)
                ))
            })?,
        };
        let width = stop - start;
        if step == 1 {
            if width <= 0 {
                return Err(FilterError::failed(format!(
                    "empty range in randrange({start}, {stop})"
                )));
            }
            return Ok(int_value(start + below(width as u128)? as i128));
        }
        let n = if step > 0 {
            (width + step - 1).div_euclid(step)
        } else {
            (width + step + 1).div_euclid(step)
        };
        if n <= 0 {
            return Err(FilterError::failed(format!(
                "empty range in randrange({start}, {stop}, {step})"
            )));
        }
        return Ok(int_value(start + step * below(n as u128)? as i128));
    }
    let Some(items) = list_of(end) else {
        return Err(FilterError::failed("random can only be used on sequences and integers"));
    };
    if args.get(1).is_some_and(pyval::truthy) || args.get(2).is_some_and(pyval::truthy) {
        return Err(FilterError::failed("start and step can only be used with integer values"));
    }
    if items.is_empty() {
        return Err(FilterError::failed("Cannot choose from an empty sequence"));
    }
    let i = below(items.len() as u128)? as usize;
    if end.kind() == ValueKind::Map {
        // `choice(d)` indexes the dict with an integer.
        return Err(FilterError::failed(i.to_string()));
    }
    Ok(items[i].clone())
}

fn shuffle(_: &mut State, args: &Bound) -> Result<Value, FilterError> {
    let input = args.input();
    let Some(mut items) = list_of(input) else {
        // ansible swallows the failure and returns its input.
        return Ok(input.clone());
    };
    match args.get(1).filter(|s| pyval::truthy(s)) {
        Some(seed) => PyRandom::from_seed(seed).shuffle(&mut items),
        None => {
            for i in (1..items.len()).rev() {
                let j = system_below(i as u128 + 1)? as usize;
                items.swap(i, j);
            }
        }
    }
    Ok(Value::from(items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_python_random() {
        // random.Random(42).getrandbits(32) and random.Random('abc').getrandbits(32) in CPython.
        assert_eq!(PyRandom::from_seed(&Value::from(42)).next_u32(), 2746317213);
        assert_eq!(PyRandom::from_seed(&Value::from("abc")).next_u32(), 3315820543);
    }
}
