//! The multi-GPU sum worked out on the CPU, bit for bit, for any number of simulated GPUs:
//! which totals agree between 1, 2, 4 and 8 GPUs, and why. No GPU and no NCCL: each simulated
//! GPU runs kernel 15's CPU transcription ([`crate::check::reproducible`], whose bits
//! `tests/reproducible.rs` demands from every launch on a GPU), and the step across GPUs is
//! done in every order NCCL could do it in.
//!
//! - [`Mode::Sharded`]: each GPU's `f32` sum of its contiguous shard, widened to `f64`, then
//!   added across GPUs. With one value per GPU, NCCL's ring adds them one after another around
//!   the ring from the rank where the value's chunk starts, its tree within one machine (a chain)
//!   one after another from the chain's end, its double binary tree pairwise. Which rotation
//!   and direction depends on the rings NCCL builds, so every rotation of the rank order in both
//!   directions is tried, and the pairwise tree. Where every add of every order is exact, the
//!   order cannot matter, and the total is the exact sum of the GPUs' sums — which still depend
//!   on where the shards are cut, so on the number of GPUs.
//! - [`Mode::Gathered`]: shards on kernel 15's chunk boundaries, every chunk's packed sum put in
//!   its own slot (zero elsewhere), the slots of all GPUs added as integers — in any order, the
//!   same bits — and the gathered sums folded in kernel 15's order: the total of one GPU.

use super::input::{fill, Input};
use super::shard::{chunk_shards, shards};
use super::sum::Mode;
use crate::check::reproducible::{fold_packed, packed_partials, transcribe_kernel};
use crate::kernels::CHUNK_VALUES;
use crate::records::rank_totals::{Cross, RankTotal};

/// The simulated totals of one mode on one number of GPUs.
#[derive(Clone, Debug, PartialEq)]
pub struct Simulated {
    pub ranks: usize,
    /// The total (every order's, where they agree; the first order's where they do not), and
    /// whether it is an `f64` (sharded) or the `f32` of kernel 15's fold (gathered).
    pub total: f64,
    pub wide: bool,
    /// Orders of the step across GPUs tried, and the distinct totals they gave.
    pub orders: usize,
    pub distinct: usize,
    pub cross: Cross,
}

/// `a + b` in `f64`, and whether it was exact (Knuth's two-sum: the rounding error is zero).
fn add_exact(a: f64, b: f64) -> (f64, bool) {
    let s = a + b;
    let bb = s - a;
    let error = (a - (s - bb)) + (b - bb);
    (s, error == 0.0 && s.is_finite())
}

/// One after another, in `order`.
fn sequential(values: &[f64], order: &[usize]) -> (f64, bool) {
    order.iter().skip(1).fold((values[order[0]], true), |(s, exact), &r| {
        let (t, e) = add_exact(s, values[r]);
        (t, exact && e)
    })
}

/// Pairwise, as a balanced binary tree over the ranks in order.
fn pairwise(values: &[f64]) -> (f64, bool) {
    match values.len() {
        0 => (0.0, true),
        1 => (values[0], true),
        n => {
            let ((a, ea), (b, eb)) = (pairwise(&values[..n / 2]), pairwise(&values[n / 2..]));
            let (s, e) = add_exact(a, b);
            (s, ea && eb && e)
        }
    }
}

/// Every order tried for `p` ranks: each rotation of `0..p` forwards and backwards (a ring or a
/// chain in either direction, from any rank); the pairwise tree is tried besides.
pub fn ring_orders(p: usize) -> Vec<Vec<usize>> {
    let mut orders: Vec<Vec<usize>> = Vec::new();
    for start in 0..p {
        let forwards: Vec<usize> = (0..p).map(|k| (start + k) % p).collect();
        let backwards: Vec<usize> = (0..p).map(|k| (start + p - k) % p).collect();
        for order in [forwards, backwards] {
            if !orders.contains(&order) {
                orders.push(order);
            }
        }
    }
    orders
}

/// The per-GPU sums of a sharded sum of `xs` on `ranks` GPUs with chunked kernel `kernel`.
pub fn sharded_partials(xs: &[f32], kernel: &str, ranks: usize) -> Vec<f32> {
    shards(xs.len(), ranks).into_iter().map(|s| transcribe_kernel(kernel, &xs[s], 4).expect("a chunked kernel")).collect()
}

/// [`Mode::Sharded`] on `ranks` simulated GPUs.
pub fn sharded(xs: &[f32], kernel: &str, ranks: usize) -> Simulated {
    let partials: Vec<f64> = sharded_partials(xs, kernel, ranks).into_iter().map(f64::from).collect();
    let mut totals: Vec<(f64, bool)> = ring_orders(ranks).iter().map(|o| sequential(&partials, o)).collect();
    totals.push(pairwise(&partials));
    let mut distinct: Vec<u64> = totals.iter().map(|t| t.0.to_bits()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    Simulated {
        ranks,
        total: totals[0].0,
        wide: true,
        orders: totals.len(),
        distinct: distinct.len(),
        cross: if totals.iter().all(|t| t.1) { Cross::Exact } else { Cross::Rounded },
    }
}

/// The slots one simulated GPU contributes to the gather: its chunks' packed sums in their
/// places, zero elsewhere.
pub fn slots_of(xs: &[f32], kernel: &str, shard: std::ops::Range<usize>) -> Vec<u64> {
    let chunk = CHUNK_VALUES as usize;
    let mut slots = vec![0u64; xs.len().div_ceil(chunk)];
    let mine = packed_partials(kernel, &xs[shard.clone()]).expect("a chunked kernel");
    slots[shard.start / chunk..][..mine.len()].copy_from_slice(&mine);
    slots
}

/// The integer all-reduce of the slots, adding the GPUs' slots in `order` (wrapping, as NCCL's
/// 64-bit integer sum does).
pub fn gather(slots: &[Vec<u64>], order: &[usize]) -> Vec<u64> {
    let mut out = vec![0u64; slots.first().map_or(0, Vec::len)];
    for &r in order {
        out.iter_mut().zip(&slots[r]).for_each(|(o, &s)| *o = o.wrapping_add(s));
    }
    out
}

/// [`Mode::Gathered`] on `ranks` simulated GPUs: the slots gathered in every ring order, each
/// folded.
pub fn gathered(xs: &[f32], kernel: &str, ranks: usize) -> Simulated {
    let slots: Vec<Vec<u64>> = chunk_shards(xs.len(), ranks, CHUNK_VALUES as usize).into_iter().map(|s| slots_of(xs, kernel, s)).collect();
    let totals: Vec<f32> = ring_orders(ranks).iter().map(|o| fold_packed(kernel, &gather(&slots, o)).expect("a chunked kernel")).collect();
    let mut distinct: Vec<u32> = totals.iter().map(|t| t.to_bits()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    Simulated { ranks, total: totals[0] as f64, wide: false, orders: totals.len(), distinct: distinct.len(), cross: Cross::Integer }
}

/// The inputs of the book's table: random values of two sizes (one with fewer chunks than eight
/// GPUs' worth, so that some gathered shards are empty) and exact-by-construction values, each
/// as the multi-GPU sum makes it ([`Input`], from the global index, whatever the GPU count).
pub const INPUTS: [(Input, usize); 3] = [
    (Input::Random { seed: 1 }, (1 << 22) + 12345),
    (Input::Random { seed: 1 }, 5 * CHUNK_VALUES as usize + 3),
    (Input::Exact { seed: 1 }, (1 << 22) + 12345),
];

/// The GPU counts of the book's table.
pub const RANK_COUNTS: [usize; 4] = [1, 2, 4, 8];

/// The kernel of the book's table, on every GPU.
pub const KERNEL: &str = crate::kernels::names::REDUCE15_REPRODUCIBLE;

/// `random`, `exact`, `pattern`: the input's kind, for a results file.
pub fn input_kind(input: Input) -> &'static str {
    match input {
        Input::Pattern => "pattern",
        Input::Random { .. } => "random",
        Input::Exact { .. } => "exact",
    }
}

/// The input's seed (0 for the pattern).
pub fn input_seed(input: Input) -> u64 {
    match input {
        Input::Pattern => 0,
        Input::Random { seed } | Input::Exact { seed } => seed,
    }
}

/// The `n` values of `input`, as the ranks make them.
pub fn values(input: Input, n: usize) -> Vec<f32> {
    let mut xs = vec![0.0f32; n];
    fill(&mut xs, 0, n, input, std::thread::available_parallelism().map_or(1, |t| t.get()));
    xs
}

/// Every row of the book's table: each input, each mode, each GPU count, simulated.
pub fn table() -> Vec<RankTotal> {
    let mut rows = Vec::new();
    for (input, n) in INPUTS {
        let xs = values(input, n);
        for mode in [Mode::Sharded, Mode::Gathered] {
            let mut one = None;
            for ranks in RANK_COUNTS {
                let s = match mode {
                    Mode::Sharded => sharded(&xs, KERNEL, ranks),
                    Mode::Gathered => gathered(&xs, KERNEL, ranks),
                };
                let first = *one.get_or_insert(s.total.to_bits());
                rows.push(RankTotal::new(input_kind(input), n, input_seed(input), KERNEL, mode.name(), ranks, s.total, s.wide, s.orders, s.distinct, s.cross, first));
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::names;

    const KERNELS: [&str; 3] = [names::REDUCE15_REPRODUCIBLE, names::REDUCE15_NEUMAIER, names::REDUCE15_F64];
    const CHUNK: usize = CHUNK_VALUES as usize;

    #[test]
    fn gathered_totals_are_one_gpus_bits_on_1_2_4_and_8_gpus() {
        // Ragged sizes: fewer chunks than GPUs, a partial last chunk, chunks no GPU count divides.
        for n in [1, CHUNK - 1, 3 * CHUNK + 5, 11 * CHUNK + 7] {
            let xs = values(Input::Random { seed: 3 }, n);
            for kernel in KERNELS {
                let one_gpu = transcribe_kernel(kernel, &xs, 4).unwrap();
                for ranks in RANK_COUNTS {
                    let g = gathered(&xs, kernel, ranks);
                    assert_eq!((g.total as f32).to_bits(), one_gpu.to_bits(), "{kernel}, n = {n}, {ranks} GPUs");
                    assert_eq!(g.distinct, 1, "{kernel}, n = {n}, {ranks} GPUs: the gather's order mattered");
                }
            }
        }
    }

    #[test]
    fn sharded_totals_change_with_the_gpu_count_though_no_order_matters() {
        let xs = values(Input::Random { seed: 3 }, 11 * CHUNK + 7);
        let totals: Vec<Simulated> = RANK_COUNTS.iter().map(|&p| sharded(&xs, KERNEL, p)).collect();
        for t in &totals {
            assert_eq!((t.cross, t.distinct), (Cross::Exact, 1), "{t:?}: f64 adds of a few f32 sums are exact");
        }
        assert_eq!(totals[0].total, transcribe_kernel(KERNEL, &xs, 4).unwrap() as f64, "one GPU is kernel 15");
        let mut bits: Vec<u64> = totals.iter().map(|t| t.total.to_bits()).collect();
        bits.dedup();
        assert!(bits.len() > 1, "the shards' sums did not depend on where they were cut: {totals:?}");
        // ...and an exact input's total never depends on it.
        let exact = values(Input::Exact { seed: 3 }, 11 * CHUNK + 7);
        let one = sharded(&exact, KERNEL, 1).total;
        assert!(RANK_COUNTS.iter().all(|&p| sharded(&exact, KERNEL, p).total == one));
    }

    #[test]
    fn the_orders_are_the_rings_and_a_rounded_add_is_seen() {
        assert_eq!(ring_orders(1), vec![vec![0]]);
        assert_eq!(ring_orders(2), vec![vec![0, 1], vec![1, 0]]);
        assert_eq!(ring_orders(4).len(), 8);
        assert!(ring_orders(8).iter().all(|o| { let mut s = o.clone(); s.sort(); s == (0..8).collect::<Vec<_>>() }));
        // 1 + 2^-60 rounds: the order-free claim must be able to fail.
        let (s, exact) = sequential(&[1.0, 2f64.powi(-60), -1.0], &[0, 1, 2]);
        assert!(!exact && s == 0.0);
        let (s, exact) = sequential(&[1.0, -1.0, 2f64.powi(-60)], &[0, 1, 2]);
        assert!(exact && s == 2f64.powi(-60));
        assert!(!pairwise(&[1.0, 2f64.powi(-60), -1.0, 0.0]).1);
    }

    #[test]
    fn the_gather_fails_where_its_rules_are_broken() {
        let xs = values(Input::Random { seed: 4 }, 6 * CHUNK + 9);
        let one_gpu = transcribe_kernel(KERNEL, &xs, 4).unwrap().to_bits();
        // Shards cut anywhere but on chunk boundaries: a split chunk is summed as two chunks.
        let split: Vec<Vec<u64>> = shards(xs.len(), 4).into_iter().map(|s| {
            let chunk = CHUNK;
            let mut slots = vec![0u64; xs.len().div_ceil(chunk)];
            let mine = packed_partials(KERNEL, &xs[s.clone()]).unwrap();
            for (k, bits) in mine.into_iter().enumerate() {
                let slot = &mut slots[s.start / chunk + k];
                *slot = slot.wrapping_add(bits);
            }
            slots
        }).collect();
        assert_ne!(fold_packed(KERNEL, &gather(&split, &[0, 1, 2, 3])).unwrap().to_bits(), one_gpu);
        // Each GPU folding its own chunks and the folds added (the sharded sum): other bits.
        let shard_folds: f32 = chunk_shards(xs.len(), 4, CHUNK).into_iter().map(|s| transcribe_kernel(KERNEL, &xs[s], 4).unwrap()).sum();
        assert_ne!(shard_folds.to_bits(), one_gpu);
    }
}
