//! The inputs of the multi-GPU sum: each depends only on an element's global index, so the input
//! is the same whatever the number of GPUs, and each rank makes its own shard.

use super::summable::Summable;
use crate::data::Reference;
use std::ops::Range;


/// What the summed values are. Both depend only on an element's global index, so the input is
/// the same whatever the number of GPUs, and each rank can make its own shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// `x_i = (i mod 1000) − 500`: its sum has a closed form, so 2^31 values per GPU are
    /// checked exactly with no host copy of the input.
    Pattern,
    /// Random values from [`crate::data::Checked::fill_random`], in blocks of 2^16 seeded by their position.
    Random { seed: u64 },
    /// Exact-by-construction values from [`crate::data::Checked::fill_exact`] (small nonzero integers with
    /// random signs, sized for the whole input), in the same blocks: a float sum of them must
    /// come back exact, bit for bit, on every GPU and in total.
    Exact { seed: u64 },
}

impl Input {
    pub fn describe(&self) -> String {
        match self {
            Input::Pattern => "x_i = (i mod 1000) - 500".into(),
            Input::Random { seed } => format!("random, seed {seed}"),
            Input::Exact { seed } => format!("exact by construction (nonzero integers, random signs), seed {seed}"),
        }
    }
}

/// `x_i = (i mod 1000) − 500`.
pub fn pattern_value(i: u64) -> i32 {
    (i % 1000) as i32 - 500
}

/// `Σ x_i` over `0..n`: −500 per whole period of 1000, plus the partial period.
fn pattern_prefix(n: u64) -> (i64, f64) {
    let (periods, rest) = ((n / 1000) as i64, (n % 1000) as i64);
    let sum = periods * -500 + rest * (rest - 1) / 2 - 500 * rest;
    // Σ|k − 500| is 250000 over a period; the partial period is added up (at most 999 terms).
    let abs = periods as f64 * 250_000.0 + (0..rest).map(|k| (k - 500).abs() as f64).sum::<f64>();
    (sum, abs)
}

/// The exact sum of the pattern over `range` of global indices.
pub fn pattern_sum(range: Range<u64>) -> i64 {
    pattern_prefix(range.end).0 - pattern_prefix(range.start).0
}

/// The reference of the pattern over `range`, in closed form.
pub fn pattern_reference(range: Range<u64>) -> Reference {
    let (a, b) = (pattern_prefix(range.start), pattern_prefix(range.end));
    let sum = b.0 - a.0;
    Reference { n: (range.end - range.start) as usize, sum_f64: sum as f64, sum_i64: sum, abs_sum: b.1 - a.1, exact: true }
}

/// Two references of disjoint inputs as one.
pub fn combine(a: Reference, b: Reference) -> Reference {
    a.combine(b)
}

/// Random values are drawn in blocks of this many, each seeded by its position.
const RANDOM_BLOCK: usize = 1 << 16;

/// Fill `out` with the input's values at global indices `start..start + out.len()`, for an
/// input of `total` values, on `helpers` threads.
pub fn fill<T: Summable>(out: &mut [T], start: usize, total: usize, input: Input, helpers: usize) {
    let piece = out.len().div_ceil(helpers.max(1)).max(1 << 16);
    std::thread::scope(|scope| {
        for (k, part) in out.chunks_mut(piece).enumerate() {
            scope.spawn(move || fill_serial(part, start + k * piece, total, input));
        }
    });
}

fn fill_serial<T: Summable>(out: &mut [T], start: usize, total: usize, input: Input) {
    match input {
        Input::Pattern => {
            let mut v = (start % 1000) as i32 - 500;
            for x in out.iter_mut() {
                *x = T::from_pattern(v);
                v = if v == 499 { -500 } else { v + 1 };
            }
        }
        Input::Random { seed } | Input::Exact { seed } => {
            let fill_block = if let Input::Exact { .. } = input { T::fill_exact } else { T::fill_random };
            let mut block_values = vec![T::default(); RANDOM_BLOCK];
            let end = start + out.len();
            let mut block = start / RANDOM_BLOCK;
            while block * RANDOM_BLOCK < end {
                let (b0, b1) = (block * RANDOM_BLOCK, (block + 1) * RANDOM_BLOCK);
                let block_seed = seed ^ (block as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                fill_block(&mut block_values, total, block_seed);
                let (lo, hi) = (b0.max(start), b1.min(end));
                out[lo - start..hi - start].copy_from_slice(&block_values[lo - b0..hi - b0]);
                block += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multigpu::shard::shards;

    #[test]
    fn pattern_closed_form_matches_a_loop() {
        for (a, b) in [(0u64, 0u64), (0, 1), (0, 999), (0, 1000), (0, 1001), (3, 2500), (999, 1001), (12345, 67890)] {
            let looped: i64 = (a..b).map(|i| pattern_value(i) as i64).sum();
            assert_eq!(pattern_sum(a..b), looped, "{a}..{b}");
            let abs: f64 = (a..b).map(|i| pattern_value(i).abs() as f64).sum();
            assert_eq!(pattern_reference(a..b).abs_sum, abs, "{a}..{b}");
        }
    }

    #[test]
    fn fill_gives_the_same_values_however_the_input_is_split() {
        let total = 300_000;
        for input in [Input::Pattern, Input::Random { seed: 5 }] {
            let mut whole = vec![0i32; total];
            fill(&mut whole, 0, total, input, 1);
            for ranks in [2, 3, 4, 7, 8] {
                let chunked = crate::multigpu::shard::chunk_shards(total, ranks, 1 << 14);
                for s in shards(total, ranks).into_iter().chain(chunked) {
                    let mut part = vec![0i32; s.len()];
                    fill(&mut part, s.start, total, input, 3);
                    assert_eq!(part, whole[s.clone()], "{input:?} shard {s:?} of {ranks}");
                }
            }
            if input == Input::Pattern {
                assert!(whole.iter().enumerate().all(|(i, &x)| x == pattern_value(i as u64)));
            } else {
                assert!(whole.iter().filter(|&&x| x == 0).count() < total / 100, "mostly zeros");
            }
        }
    }

}
