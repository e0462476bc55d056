//! The CPU transcription of `kernels/15_reproducible.cu`: the same additions in the same order
//! with the same rounding (f32 and f64 adds round to nearest on the host too, and Rust never
//! fuses an add into an FMA). The tests demand the GPU's bits from it, so it is the proof that the
//! order is the data's and not the launch's: this code knows nothing of grids, blocks or SMs.

use crate::kernels::CHUNK_VALUES;
use crate::kernels::names;

/// Virtual lanes per chunk, and values per lane (`CHUNK_LANES`, `LANE_VALUES` in the kernel).
pub const CHUNK_LANES: usize = crate::kernels::CHUNK_LANES as usize;
pub const LANE_VALUES: usize = 16;

// ANCHOR: accumulator
/// One of the kernel's three accumulators.
pub trait Accumulator: Copy {
    fn zero() -> Self;
    fn add(&mut self, x: f32);
    fn merge(&mut self, other: Self);
    fn result(self) -> f32;
}

/// `PlainF32`: one f32 add per value.
#[derive(Clone, Copy, Debug)]
pub struct PlainF32(pub f32);

impl Accumulator for PlainF32 {
    fn zero() -> Self {
        PlainF32(0.0)
    }
    fn add(&mut self, x: f32) {
        self.0 += x;
    }
    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
    fn result(self) -> f32 {
        self.0
    }
}

/// `Neumaier`: the sum and the carry of its rounding errors.
#[derive(Clone, Copy, Debug)]
pub struct Neumaier {
    pub s: f32,
    pub c: f32,
}

impl Accumulator for Neumaier {
    fn zero() -> Self {
        Neumaier { s: 0.0, c: 0.0 }
    }
    fn add(&mut self, x: f32) {
        let t = self.s + x;
        let e = if self.s.abs() >= x.abs() { (self.s - t) + x } else { (x - t) + self.s };
        self.c += e;
        self.s = t;
    }
    fn merge(&mut self, other: Self) {
        self.add(other.s);
        self.c += other.c;
    }
    fn result(self) -> f32 {
        if self.s.is_finite() { self.s + self.c } else { self.s }
    }
}

/// `WideF64`: f32 values added in f64, rounded to f32 at the end.
#[derive(Clone, Copy, Debug)]
pub struct WideF64(pub f64);

impl Accumulator for WideF64 {
    fn zero() -> Self {
        WideF64(0.0)
    }
    fn add(&mut self, x: f32) {
        self.0 += x as f64;
    }
    fn merge(&mut self, other: Self) {
        self.0 += other.0;
    }
    fn result(self) -> f32 {
        self.0 as f32
    }
}
// ANCHOR_END: accumulator

// ANCHOR: order
/// The halving tree the kernel's shuffles compute over 32 lanes: lane i takes lane i + offset
/// for offset 16, 8, 4, 2, 1; lane 0 holds the result. (Lanes past the end take their own
/// value on the GPU; those results never reach lane 0.)
fn warp_tree<A: Accumulator>(mut v: [A; 32]) -> A {
    let mut offset = 16;
    while offset > 0 {
        for i in 0..offset {
            let other = v[i + offset];
            v[i].merge(other);
        }
        offset /= 2;
    }
    v[0]
}

/// 1024 lanes' values to one: each warp of 32 by the tree, then the 32 warp sums by the tree.
fn lanes_tree<A: Accumulator>(lanes: &[A]) -> A {
    let mut warps = [A::zero(); 32];
    for (w, warp) in lanes.chunks_exact(32).enumerate() {
        warps[w] = warp_tree(warp.try_into().expect("32 lanes"));
    }
    warp_tree(warps)
}

/// The sum of chunk `chunk` of `xs` (values as f32; `per` of them in a 16-byte pack of the
/// input type): lane l folds, for each position j in a pack, value j of packs l, l + 1024, ...
/// of the chunk, then the positions by a halving tree; then the 1024 lanes by `lanes_tree`.
fn chunk_sum<A: Accumulator>(xs: &[f32], chunk: usize, per: usize) -> A {
    let packs_per_lane = LANE_VALUES / per;
    let base = chunk * CHUNK_VALUES as usize;
    let value = |i: usize| xs.get(base + i).copied().unwrap_or(0.0); // zeros past n
    let lanes: Vec<A> = (0..CHUNK_LANES).map(|lane| {
        let mut acc = vec![A::zero(); per];
        for (j, a) in acc.iter_mut().enumerate() {
            for k in 0..packs_per_lane {
                a.add(value((k * CHUNK_LANES + lane) * per + j));
            }
        }
        let mut width = per / 2;
        while width > 0 {
            for j in 0..width {
                let other = acc[j + width];
                acc[j].merge(other);
            }
            width /= 2;
        }
        acc[0]
    }).collect();
    lanes_tree(&lanes)
}

/// The kernel's sum of `xs`, given as f32 values of an input type whose 16-byte pack holds
/// `bytes_per_value`-byte values (4 for f32, 2 for f16 and bf16): every chunk's sum, then the
/// fold of the chunks' sums.
pub fn transcribe<A: Accumulator + Send>(xs: &[f32], bytes_per_value: usize) -> f32 {
    fold_partials(&chunk_partials::<A>(xs, bytes_per_value)).result()
}

/// The sum of every chunk of `xs`, in chunk order: what the kernel leaves in `partials`. The
/// chunks are summed on every core; the order inside each is the kernel's.
pub fn chunk_partials<A: Accumulator + Send>(xs: &[f32], bytes_per_value: usize) -> Vec<A> {
    let per = 16 / bytes_per_value;
    let chunks = xs.len().div_ceil(CHUNK_VALUES as usize);
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let mut partials = vec![A::zero(); chunks];
    std::thread::scope(|scope| {
        for (t, part) in partials.chunks_mut(chunks.div_ceil(threads).max(1)).enumerate() {
            let first = t * chunks.div_ceil(threads).max(1);
            scope.spawn(move || part.iter_mut().enumerate().for_each(|(i, p)| *p = chunk_sum(xs, first + i, per)));
        }
    });
    partials
}

/// The last block's fold of the chunks' sums: lane l folds partials l, l + 1024, ... in
/// order, then the lanes' tree.
pub fn fold_partials<A: Accumulator>(partials: &[A]) -> A {
    let lanes: Vec<A> = (0..CHUNK_LANES).map(|lane| {
        let mut acc = A::zero();
        partials.iter().skip(lane).step_by(CHUNK_LANES).for_each(|p| acc.merge(*p));
        acc
    }).collect();
    lanes_tree(&lanes)
}
// ANCHOR_END: order

/// An accumulator as the kernel stores it in `partials`: 8 bytes per chunk (the kernel's
/// `pack()` and `unpack()`).
pub trait Packed: Accumulator {
    fn pack(self) -> u64;
    fn unpack(bits: u64) -> Self;
}

impl Packed for PlainF32 {
    fn pack(self) -> u64 {
        self.0.to_bits() as u64
    }
    fn unpack(bits: u64) -> Self {
        PlainF32(f32::from_bits(bits as u32))
    }
}

impl Packed for Neumaier {
    fn pack(self) -> u64 {
        (self.c.to_bits() as u64) << 32 | self.s.to_bits() as u64
    }
    fn unpack(bits: u64) -> Self {
        Neumaier { s: f32::from_bits(bits as u32), c: f32::from_bits((bits >> 32) as u32) }
    }
}

impl Packed for WideF64 {
    fn pack(self) -> u64 {
        self.0.to_bits()
    }
    fn unpack(bits: u64) -> Self {
        WideF64(f64::from_bits(bits))
    }
}

/// The order (and accumulator) a registered chunked kernel sums in, by name: `reduce15_reproducible`,
/// `reduce15_neumaier` or `reduce15_f64`, and the one-lane `_b1024` and two-launch `_two_pass`
/// forms of the first two, which run the same order. `None` for any other kernel.
#[derive(Clone, Copy)]
enum Order {
    Plain,
    Compensated,
    Wide,
}

fn order_of(kernel: &str) -> Option<Order> {
    match kernel {
        names::REDUCE15_REPRODUCIBLE | names::REDUCE15_REPRODUCIBLE_B1024 | names::REDUCE15_REPRODUCIBLE_TWO_PASS => Some(Order::Plain),
        names::REDUCE15_NEUMAIER | names::REDUCE15_NEUMAIER_B1024 | names::REDUCE15_NEUMAIER_TWO_PASS => Some(Order::Compensated),
        names::REDUCE15_F64 => Some(Order::Wide),
        _ => None,
    }
}

/// The fold of packed chunk sums (the `partials` array as the kernel leaves it) for a chunked
/// kernel by name; `None` for any other kernel.
pub fn fold_packed(kernel: &str, packed: &[u64]) -> Option<f32> {
    fn fold<A: Packed>(packed: &[u64]) -> f32 {
        fold_partials(&packed.iter().map(|&b| A::unpack(b)).collect::<Vec<A>>()).result()
    }
    Some(match order_of(kernel)? {
        Order::Plain => fold::<PlainF32>(packed),
        Order::Compensated => fold::<Neumaier>(packed),
        Order::Wide => fold::<WideF64>(packed),
    })
}

/// The packed chunk sums of `xs` (f32 values) for a chunked kernel by name, in chunk order;
/// `None` for any other kernel.
pub fn packed_partials(kernel: &str, xs: &[f32]) -> Option<Vec<u64>> {
    fn packed<A: Packed + Send>(xs: &[f32]) -> Vec<u64> {
        chunk_partials::<A>(xs, 4).into_iter().map(A::pack).collect()
    }
    Some(match order_of(kernel)? {
        Order::Plain => packed::<PlainF32>(xs),
        Order::Compensated => packed::<Neumaier>(xs),
        Order::Wide => packed::<WideF64>(xs),
    })
}

/// The transcription of a registered chunked kernel by name (`reduce15_reproducible`,
/// `reduce15_neumaier`, `reduce15_f64`, and the `_b1024` and `_two_pass` forms of the first two);
/// `None` for any other kernel.
pub fn transcribe_kernel(kernel: &str, xs: &[f32], bytes_per_value: usize) -> Option<f32> {
    Some(match order_of(kernel)? {
        Order::Plain => transcribe::<PlainF32>(xs, bytes_per_value),
        Order::Compensated => transcribe::<Neumaier>(xs, bytes_per_value),
        Order::Wide => transcribe::<WideF64>(xs, bytes_per_value),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_file_has_the_same_chunk() {
        let source = crate::kernels::find("reduce15_reproducible").unwrap().source;
        assert!(source.contains(&format!("#define CHUNK_LANES {CHUNK_LANES} ")));
        assert!(source.contains(&format!("#define LANE_VALUES {LANE_VALUES} ")));
        assert_eq!(CHUNK_VALUES as usize, CHUNK_LANES * LANE_VALUES);
    }

    #[test]
    fn exact_inputs_sum_exactly_in_every_accumulator() {
        // Small integers: every partial sum is exact, whatever the order.
        let xs: Vec<f32> = (0..100_003).map(|i| ((i * 7919) % 201) as f32 - 100.0).collect();
        let exact: f64 = xs.iter().map(|&x| x as f64).sum();
        for kernel in ["reduce15_reproducible", "reduce15_neumaier", "reduce15_f64"] {
            assert_eq!(transcribe_kernel(kernel, &xs, 4).unwrap() as f64, exact, "{kernel}");
            assert_eq!(transcribe_kernel(kernel, &xs, 2).unwrap() as f64, exact, "{kernel} (half packs)");
        }
    }

    #[test]
    fn the_order_is_not_the_loop_order_and_compensation_helps() {
        // Cancellation: the plain order loses bits that Neumaier and f64 keep, and the plain
        // transcription differs from a loop's sum (it is a different order, not a copy of one).
        let xs = crate::data::random_f32(1 << 20, 5);
        let exact = crate::data::compensated_sum(&xs).0;
        let plain = transcribe::<PlainF32>(&xs, 4) as f64;
        let compensated = transcribe::<Neumaier>(&xs, 4) as f64;
        let wide = transcribe::<WideF64>(&xs, 4) as f64;
        let looped = xs.iter().fold(0.0f32, |s, &x| s + x) as f64;
        assert_ne!(plain, looped);
        assert!((compensated - exact).abs() <= (plain - exact).abs(), "{compensated} {plain} {exact}");
        assert!((wide - exact).abs() <= exact.abs() * 1e-7 + 1e-30, "{wide} {exact}");
    }

    #[test]
    fn packed_partials_fold_to_the_transcription_and_pack_as_the_kernel() {
        let xs = crate::data::random_f32(3 * CHUNK_VALUES as usize + 77, 11);
        for kernel in [names::REDUCE15_REPRODUCIBLE, names::REDUCE15_NEUMAIER, names::REDUCE15_F64, names::REDUCE15_REPRODUCIBLE_B1024, names::REDUCE15_NEUMAIER_B1024, names::REDUCE15_REPRODUCIBLE_TWO_PASS, names::REDUCE15_NEUMAIER_TWO_PASS] {
            let packed = packed_partials(kernel, &xs).unwrap();
            assert_eq!(packed.len(), 4);
            assert_eq!(fold_packed(kernel, &packed).unwrap().to_bits(), transcribe_kernel(kernel, &xs, 4).unwrap().to_bits(), "{kernel}");
        }
        // The kernel's layout: the sum in the low word, Neumaier's carry in the high one.
        assert_eq!(Neumaier { s: 1.0, c: -0.5 }.pack(), (((-0.5f32).to_bits() as u64) << 32) | 1.0f32.to_bits() as u64);
        assert_eq!(PlainF32::unpack(PlainF32(-0.0).pack()).0.to_bits(), (-0.0f32).to_bits());
        assert_eq!(WideF64::unpack(WideF64(0.1).pack()).0, 0.1);
        assert_eq!((fold_packed("reduce7", &[]), packed_partials("reduce7", &xs)), (None, None));
    }

    #[test]
    fn zeros_past_n_change_nothing_and_order_matters_inside_a_chunk() {
        let mut xs = vec![0.0f32; 40_000];
        xs[0] = 1.0e8;
        xs[4096] = 1.0;
        xs[1] = -1.0e8;
        // In chunk 0, lane 0 holds values 0..4 of pack 0 and of packs 1024, 2048, 3072:
        // 1e8 + 1 rounds the 1 away before -1e8 arrives in the plain order; Neumaier keeps it.
        assert_eq!(transcribe::<PlainF32>(&xs, 4), 0.0);
        assert_eq!(transcribe::<Neumaier>(&xs, 4), 1.0);
    }
}
