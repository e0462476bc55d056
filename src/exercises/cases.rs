//! The hidden inputs: random values around a random offset, times a random power of two, at
//! the sizes where reductions break (1, 2^k ± 1, past 2^24), some through views that start 1 to
//! 3 elements past an aligned address, with guard values after the end that a load without a
//! bound would add. Every f32 value is an integer times 2^e, small enough that every partial
//! sum is exact in any order: a right kernel returns the exact result, bit for bit, and a
//! dropped, doubled or extra value shows at every size. Pure host code, tested without a GPU.

use super::launch::Op;
use crate::element::{Dtype, Element};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The sizes, smallest first, so that the first failure is the simplest one.
pub const SIZES: &[usize] = &[
    1, 2, 3, 31, 32, 33, 255, 256, 257, 300, 301, 511, 512, 513, 1023, 1025, 4095, 4097,
    (1 << 16) - 1, (1 << 16) + 1, (1 << 20) + 37, (1 << 24) + 3,
];

/// The case past 2^31 values, for the layouts that walk the input with a grid stride (a 32-bit
/// index wraps there): `i32`, every value 0 but the first (1) and the last (7), so that the sum
/// (8) and the maximum (7) both need the last value, 8 GiB made on the GPU with no host copy.
/// Run after every other case passed, where the GPU's free memory allows; skipped, and said so,
/// where it does not.
pub const LARGE_N: usize = (1 << 31) + 5;

/// What the large case must return; `None` for the operator exercises, whose cases are their
/// own (`exercises::operators`) and include none past 2^31.
pub fn large_expected(op: Op) -> Option<i64> {
    match op {
        Op::Sum => Some(8),
        Op::Max => Some(7),
        Op::Operator { .. } => None,
    }
}

/// Whether an exercise of this layout gets the case past 2^31: a grid-stride walk (the tiled
/// layouts give each block one tile, and their index is the block's).
pub fn takes_large_case(layout: super::launch::Layout) -> bool {
    matches!(layout, super::launch::Layout::Resident { .. } | super::launch::Layout::LastBlock)
}

/// Under compute-sanitizer every access is checked, so only the sizes up to this one are run.
pub const SANITIZER_MAX_N: usize = 4097;

/// Values after the end of a view (and before its start): a kernel that reads them adds them.
pub const GUARDS: usize = 64;

/// One hidden input.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// 1-based, in the order they run.
    pub number: usize,
    pub n: usize,
    pub dtype: Dtype,
    /// Elements between the allocation's (aligned) start and the view's first element.
    pub shift: usize,
    pub seed: u64,
    /// Every value negative (for a maximum: a thread that starts from 0 wins).
    pub all_negative: bool,
}

/// The cases of an exercise, for a run seeded with `seed`. `quick` keeps the small sizes (for
/// compute-sanitizer runs).
pub fn cases(op: Op, quick: bool, seed: u64) -> Vec<Case> {
    let mut cases = Vec::new();
    for (k, &n) in SIZES.iter().enumerate() {
        if quick && n > SANITIZER_MAX_N {
            break;
        }
        let mut push = |dtype: Dtype, shift: usize, all_negative: bool| {
            let number = cases.len() + 1;
            cases.push(Case { number, n, dtype, shift, seed: seed.wrapping_add(number as u64 * 0x9e37_79b9), all_negative });
        };
        push(Dtype::F32, k % 4, false);
        push(Dtype::I32, (k + 2) % 4, false);
        if op == Op::Max && k % 3 == 0 {
            push(Dtype::F32, (k + 1) % 4, true);
            push(Dtype::I32, (k + 3) % 4, true);
        }
    }
    cases
}

impl Case {
    /// What the reader is told: `n = 257 (2^8 + 1), i32, view shifted by 1 element`.
    pub fn label(&self) -> String {
        let mut s = format!("n = {}{}, {}", self.n, size_shape(self.n), self.dtype.name());
        if self.shift > 0 {
            s += &format!(", view starting {} element{} past a 16-byte boundary", self.shift, if self.shift == 1 { "" } else { "s" });
        }
        if self.all_negative {
            s += ", every value negative";
        }
        s
    }

    /// The largest magnitude of an integer drawn: small enough that no partial sum of n of them
    /// leaves the range where f32 (2^24) and i32 add exactly.
    fn magnitude(&self) -> i64 {
        ((1i64 << 23) / self.n.max(1) as i64).clamp(1, 1000)
    }

    /// The integers of the input, before scaling, and the power of two they are scaled by.
    pub fn integers(&self) -> (Vec<i64>, i32) {
        let mut rng = SmallRng::seed_from_u64(self.seed);
        let m = self.magnitude();
        let scale = if self.dtype == Dtype::F32 { rng.gen_range(-6..=6) } else { 0 };
        // Past 2^23 values the magnitude is 1: ±1 with random signs and no offset, a random
        // walk whose partial sums stay far inside 2^24 (see data::exact_magnitude).
        let offset = if m > 1 { rng.gen_range(-m..=m) } else { 0 };
        let values = (0..self.n)
            .map(|_| {
                let v = if self.all_negative {
                    -rng.gen_range(1..=2 * m)
                } else {
                    let r = if m > 1 { rng.gen_range(-m..=m) } else if rng.gen::<bool>() { 1 } else { -1 };
                    offset + r
                };
                if v == 0 { 1 } else { v } // never zero: a dropped zero would go unseen
            })
            .collect();
        (values, scale)
    }

    /// The value stored before and after the view: larger than any input value, so that it
    /// changes a sum or a maximum it is wrongly part of.
    pub fn guard(&self) -> i64 {
        4 * self.magnitude() + 4096
    }
}

/// ` (2^8 + 1)` for sizes next to a power of two (at most 40 away from the nearest), nothing
/// for small sizes or others.
pub fn size_shape(n: usize) -> String {
    if n < 16 {
        return String::new();
    }
    let p = (n as f64).log2().round() as u32;
    match n as i128 - (1i128 << p) {
        0 => format!(" (2^{p})"),
        d if d > 0 && d <= 40 => format!(" (2^{p} + {d})"),
        d if (-40..0).contains(&d) => format!(" (2^{p} - {})", -d),
        _ => String::new(),
    }
}

/// An element type the exercises run on.
pub trait CaseValue: Element {
    fn from_scaled(v: i64, scale: i32) -> Self;
}
impl CaseValue for f32 {
    fn from_scaled(v: i64, scale: i32) -> f32 {
        (v as f64 * 2f64.powi(scale)) as f32
    }
}
impl CaseValue for i32 {
    fn from_scaled(v: i64, _: i32) -> i32 {
        v as i32
    }
}

/// A case's input laid out as it is uploaded: `shift` guards, the n values, [`GUARDS`] guards.
pub struct Input<T> {
    pub buffer: Vec<T>,
    /// The exact result, and the first and last values (for the hints).
    pub expected: f64,
    pub first: f64,
    pub last: f64,
    pub guard: f64,
}

pub fn input<T: CaseValue>(case: &Case, op: Op) -> Input<T> {
    let (ints, scale) = case.integers();
    let guard = case.guard();
    let mut buffer = Vec::with_capacity(case.shift + case.n + GUARDS);
    buffer.extend(std::iter::repeat_n(T::from_scaled(guard, scale), case.shift));
    buffer.extend(ints.iter().map(|&v| T::from_scaled(v, scale)));
    buffer.extend(std::iter::repeat_n(T::from_scaled(guard, scale), GUARDS));
    let exact: i64 = match op {
        Op::Sum => ints.iter().sum(),
        Op::Max => ints.iter().copied().max().unwrap_or(0),
        Op::Operator { .. } => 0, // operator exercises have cases of their own (exercises::operators)
    };
    let scaled = |v: i64| v as f64 * 2f64.powi(scale);
    Input {
        buffer,
        expected: scaled(exact),
        first: scaled(ints[0]),
        last: scaled(*ints.last().expect("n >= 1")),
        guard: scaled(guard),
    }
}

/// What a wrong result most likely means, from the numbers alone; `None` if nothing fits.
pub fn diagnose<T: Element>(op: Op, case: &Case, expected: f64, got: T, first: f64, last: f64, guard: f64) -> Option<String> {
    if got == T::POISON {
        return Some("the output still holds the poison the checker wrote before the launch: no thread wrote out[blockIdx.x] (or out[0])".into());
    }
    let got = got.to_f64();
    if got.is_nan() {
        return Some("NaN, the poison the checker writes into every output before a launch: no thread wrote out[blockIdx.x] (or out[0]), or a value nothing wrote was added".into());
    }
    if op == Op::Max {
        if case.all_negative && got == 0.0 {
            return Some("0 is larger than every value of this input: a thread or lane with nothing to read started from 0; start from the lowest value of the type".into());
        }
        if got == guard {
            return Some("that is the guard value stored just past the end of the input: a load without a bound".into());
        }
        return None;
    }
    let missing = expected - got;
    if missing == last && case.n > 1 {
        return Some("exactly the last value is missing: check the bound of the load that reads it (i < n)".into());
    }
    if missing == first && case.n > 1 {
        return Some("exactly the first value is missing".into());
    }
    if got == 2.0 * expected {
        return Some("every value was counted twice".into());
    }
    if (-missing / guard).fract() == 0.0 && -missing >= guard {
        return Some(format!("{} guard value(s) — stored just past the end of the input — were added: a load without a bound", (-missing / guard) as i64));
    }
    if missing != 0.0 && case.n >= 100 && expected != 0.0 && (got / expected - 0.99).abs() < 0.02 {
        return Some("about 1% of the input is missing".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cases_cover_the_awkward_sizes_and_shifted_views() {
        let all = cases(Op::Sum, false, 7);
        for n in [1, 2, 31, 33, 255, 257, 1025, (1 << 16) + 1, (1 << 24) + 3] {
            assert!(all.iter().any(|c| c.n == n), "{n}");
        }
        assert!(all.iter().any(|c| c.n > 1 << 24));
        for shift in 1..4 {
            assert!(all.iter().any(|c| c.shift == shift && c.n > 1000), "shift {shift}");
        }
        assert!(all.windows(2).all(|w| w[0].n <= w[1].n), "smallest first");
        assert!(cases(Op::Sum, true, 7).iter().all(|c| c.n <= SANITIZER_MAX_N));
        assert!(cases(Op::Max, false, 7).iter().filter(|c| c.all_negative).count() >= 4);
    }

    #[test]
    fn inputs_are_random_exact_and_guarded() {
        for case in cases(Op::Sum, false, 3).iter().filter(|c| c.n <= 1 << 20) {
            let (ints, _) = case.integers();
            assert!(ints.iter().all(|&v| v != 0), "{}", case.label());
            // Every prefix sum stays where f32 adds exactly.
            let magnitudes: i64 = ints.iter().map(|v| v.abs()).sum();
            assert!(magnitudes <= 1 << 24, "{}", case.label());
            if case.n > 64 {
                let distinct: std::collections::HashSet<_> = ints.iter().collect();
                assert!(distinct.len() > 2, "not a uniform input: {}", case.label());
            }
        }
        let case = Case { number: 1, n: 5, dtype: Dtype::F32, shift: 3, seed: 9, all_negative: false };
        let made = input::<f32>(&case, Op::Sum);
        assert_eq!(made.buffer.len(), 3 + 5 + GUARDS);
        assert_eq!(made.buffer[0] as f64, made.guard);
        assert_eq!(made.buffer[3] as f64, made.first);
        assert_eq!(made.buffer[7] as f64, made.last);
        let sum: f64 = made.buffer[3..8].iter().map(|&v| v as f64).sum();
        assert_eq!(sum, made.expected);
        // The same seed makes the same input; another seed another.
        assert_eq!(case.integers(), case.integers());
        assert_ne!(case.integers(), Case { seed: 10, ..case.clone() }.integers());
    }

    #[test]
    fn the_labels_name_the_size_and_the_view() {
        let case = Case { number: 9, n: 257, dtype: Dtype::I32, shift: 1, seed: 0, all_negative: false };
        assert_eq!(case.label(), "n = 257 (2^8 + 1), i32, view starting 1 element past a 16-byte boundary");
        assert_eq!(size_shape((1 << 24) + 3), " (2^24 + 3)");
        assert_eq!(size_shape(4095), " (2^12 - 1)");
        assert_eq!(size_shape(300), "");
        assert_eq!(size_shape(33), " (2^5 + 1)");
        assert_eq!(size_shape(31), " (2^5 - 1)");
        assert_eq!(size_shape(1), "");
        assert_eq!(size_shape((1 << 20) + 37), " (2^20 + 37)");
    }

    #[test]
    fn the_diagnosis_names_the_classic_mistakes() {
        let case = Case { number: 1, n: 1000, dtype: Dtype::I32, shift: 0, seed: 0, all_negative: false };
        let d = |got: i32| diagnose(Op::Sum, &case, 500.0, got, 3.0, 7.0, 8192.0);
        assert!(d(493).unwrap().contains("last value"));
        assert!(d(497).unwrap().contains("first value"));
        assert!(d(1000).unwrap().contains("twice"));
        assert!(d(500 + 2 * 8192).unwrap().contains("2 guard value"));
        assert!(d(495).unwrap().contains("1%"));
        assert!(d(i32::POISON).unwrap().contains("poison"));
        assert_eq!(d(123), None);
        let negative = Case { all_negative: true, ..case };
        assert!(diagnose(Op::Max, &negative, -3.0, 0i32, -5.0, -4.0, 8192.0).unwrap().contains("started from 0"));
        assert!(diagnose(Op::Sum, &case, 1.0, f32::NAN, 0.0, 0.0, 1.0).unwrap().contains("poison"));
    }
}
