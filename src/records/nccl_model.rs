//! A latency–bandwidth model of NCCL's all-reduce, fitted to the measured runs of
//! [`super::allreduce`] and used to predict GPU counts that were never measured.
//!
//! The model is the α–β model of point-to-point collectives: a step costs `α` (a latency) plus
//! its bytes over `β` (a bandwidth), and an algorithm is a number of latency steps and the bytes
//! its busiest rank must send. Derived for `p` GPUs and a message of `n` bytes:
//!
//! - **ring**: a reduce-scatter and an all-gather of `p − 1` steps each, every step moving
//!   `n/p` bytes over every link at once: `T = 2(p − 1)·α + 2(p − 1)/p · n/β`;
//! - **tree, as NCCL builds it within one machine**: a chain through the `p` GPUs (NCCL's tuning
//!   model, `graph/tuning.cc` in <https://github.com/NVIDIA/nccl>, charges `2·((nRanks/nNodes − 1)·intraLat + log2(nNodes)·interLat)`:
//!   the binary trees join machines, a chain joins a machine's GPUs), reduced up and broadcast
//!   down, pipelined: `2(p − 1)` latency steps, and a middle GPU sends every byte twice (up with
//!   the partial sums, down with the total), `T = 2(p − 1)·α + 2n/β` (`n/β` on two GPUs, where
//!   there is no middle);
//! - **double binary tree** (one GPU per machine): `2·⌈log₂ p⌉` latency steps, and the same `2n`
//!   from the busiest rank (inner in one tree, leaf in the other).
//!
//! On two GPUs all three are `T = 2α + n/β`, so two-GPU data fits `α` and `β` whatever the
//! algorithm NCCL chose, and cannot tell the algorithms apart. NCCL switches protocol with the
//! message size (LL, LL128, Simple: each its own latency and bandwidth), so the fit cuts the
//! sizes into [`Regime`]s, each with its own `α` and `β`, at the breaks that fit best.

use super::allreduce::{bus_factor, AllReduceRow};

/// How an all-reduce algorithm moves data: its latency steps and its busiest rank's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// NCCL's ring.
    Ring,
    /// NCCL's tree within one machine: a chain.
    Chain,
    /// NCCL's double binary tree, one GPU per machine.
    DoubleBinaryTree,
}

impl Shape {
    /// Latency steps of one all-reduce on `p` GPUs.
    pub fn latency_steps(self, p: usize) -> usize {
        match (self, p) {
            (_, 0 | 1) => 0,
            (Shape::Ring | Shape::Chain, p) => 2 * (p - 1),
            (Shape::DoubleBinaryTree, p) => 2 * p.next_power_of_two().trailing_zeros() as usize,
        }
    }

    /// Bytes the busiest of `p` GPUs sends in an all-reduce of `n` bytes.
    pub fn busiest_rank_bytes(self, p: usize, n: f64) -> f64 {
        match (self, p) {
            (_, 0 | 1) => 0.0,
            (Shape::Ring, p) => 2.0 * (p - 1) as f64 / p as f64 * n,
            (Shape::Chain | Shape::DoubleBinaryTree, 2) => n,
            (Shape::Chain | Shape::DoubleBinaryTree, _) => 2.0 * n,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Ring => "ring",
            Shape::Chain => "tree (a chain within one machine)",
            Shape::DoubleBinaryTree => "double binary tree (one GPU per machine)",
        }
    }
}

/// One range of message sizes, fitted with its own latency and bandwidth.
#[derive(Clone, Debug, PartialEq)]
pub struct Regime {
    /// The smallest and largest message of the fit in this regime, in bytes.
    pub first_bytes: usize,
    pub last_bytes: usize,
    /// Latency per step, in µs.
    pub alpha_us: f64,
    /// Bandwidth per GPU, one direction, in GB/s.
    pub beta_gbps: f64,
    /// Measured sizes it was fitted to, and its largest relative error on them.
    pub points: usize,
    pub max_relative_error: f64,
}

/// The model fitted to one run: the run's GPU count and shape, and its regimes in size order.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub ranks: usize,
    pub shape: Shape,
    pub regimes: Vec<Regime>,
}

/// Fewest sizes a regime is fitted to: two constants need more than two points to be tested.
pub const MIN_POINTS: usize = 3;

/// The two-constant least-squares fit of `T = s·α + b·γ` (γ = 1/β) to `(s, b, T)` points, in
/// relative terms (minimising Σ((model − T)/T)², so that 10 µs and 3 ms weigh alike). `None`
/// where the points do not determine a positive α and γ.
fn least_squares(points: &[(f64, f64, f64)]) -> Option<(f64, f64, f64)> {
    let (mut uu, mut uv, mut vv, mut u1, mut v1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(s, b, t) in points {
        let (u, v) = (s / t, b / t);
        uu += u * u;
        uv += u * v;
        vv += v * v;
        u1 += u;
        v1 += v;
    }
    let det = uu * vv - uv * uv;
    if det.abs() <= 1e-12 * uu * vv {
        return None;
    }
    let alpha = (u1 * vv - v1 * uv) / det;
    let gamma = (uu * v1 - uv * u1) / det;
    if !(alpha > 0.0 && gamma > 0.0) {
        return None;
    }
    let cost = points.iter().map(|&(s, b, t)| ((s * alpha + b * gamma - t) / t).powi(2)).sum();
    Some((alpha, gamma, cost))
}

/// The fit of `rows[range]`, as a regime, and its cost; `None` where it has no positive fit.
fn fit_regime(rows: &[&AllReduceRow], ranks: usize, shape: Shape) -> Option<(Regime, f64)> {
    let steps = shape.latency_steps(ranks) as f64;
    // Times in µs, bytes in GB·µs/s units: bytes / (β GB/s) = bytes / (1e3 β) µs.
    let points: Vec<(f64, f64, f64)> = rows.iter().map(|r| (steps, shape.busiest_rank_bytes(ranks, r.bytes as f64) / 1e3, r.median_us)).collect();
    let (alpha_us, gamma, cost) = least_squares(&points)?;
    let max_relative_error = points.iter().map(|&(s, b, t)| ((s * alpha_us + b * gamma - t) / t).abs()).fold(0.0, f64::max);
    let regime = Regime {
        first_bytes: rows.first()?.bytes,
        last_bytes: rows.last()?.bytes,
        alpha_us,
        beta_gbps: 1.0 / gamma,
        points: rows.len(),
        max_relative_error,
    };
    Some((regime, cost))
}

/// Fit `regimes` regimes to a run of `ranks` GPUs measured with an algorithm of `shape`: the
/// sizes are sorted, cut into `regimes` runs of consecutive sizes (at least [`MIN_POINTS`]
/// each) at the breaks whose fits have the least total relative squared error, and each run is
/// fitted by least squares. `Err` says why no fit exists.
pub fn fit(rows: &[AllReduceRow], ranks: usize, shape: Shape, regimes: usize) -> Result<Fit, String> {
    if ranks < 2 {
        return Err(format!("a run of {ranks} GPU(s) moves nothing between GPUs; the model needs two or more"));
    }
    let mut sorted: Vec<&AllReduceRow> = rows.iter().collect();
    sorted.sort_by_key(|r| r.bytes);
    sorted.dedup_by_key(|r| r.bytes);
    let n = sorted.len();
    if regimes == 0 || n < regimes * MIN_POINTS {
        return Err(format!("{n} message sizes cannot be cut into {regimes} regime(s) of {MIN_POINTS} or more"));
    }
    // best[k][j]: the cheapest cut of the first j sizes into k regimes, and where its last starts.
    let fits: Vec<Vec<Option<(Regime, f64)>>> = (0..n).map(|i| (0..=n).map(|j| if j >= i + MIN_POINTS { fit_regime(&sorted[i..j], ranks, shape) } else { None }).collect()).collect();
    let mut best: Vec<Vec<Option<(f64, usize)>>> = vec![vec![None; n + 1]; regimes + 1];
    best[0][0] = Some((0.0, 0));
    for k in 1..=regimes {
        for j in 1..=n {
            best[k][j] = (0..j)
                .filter_map(|i| Some((best[k - 1][i]?.0 + fits[i][j].as_ref()?.1, i)))
                .min_by(|a, b| a.0.total_cmp(&b.0));
        }
    }
    if best[regimes][n].is_none() {
        return Err(format!("no cut into {regimes} regime(s) gives every regime a positive latency and bandwidth"));
    }
    let mut cuts = Vec::new();
    let mut end = n;
    for k in (1..=regimes).rev() {
        let start = best[k][end].expect("reached from best[regimes][n]").1;
        cuts.push((start, end));
        end = start;
    }
    cuts.reverse();
    let regimes = cuts.into_iter().map(|(i, j)| fits[i][j].clone().expect("a chosen cut has a fit").0).collect();
    Ok(Fit { ranks, shape, regimes })
}

impl Fit {
    /// The regime a message of `bytes` falls in: the first whose largest fitted size is at
    /// least `bytes` (sizes between two regimes go to the lower), else the last.
    pub fn regime_of(&self, bytes: f64) -> &Regime {
        self.regimes.iter().find(|r| bytes <= r.last_bytes as f64).or(self.regimes.last()).expect("a fit has a regime")
    }

    /// Whether `bytes` is outside the sizes the model was fitted to.
    pub fn extrapolates(&self, bytes: f64) -> bool {
        let (lo, hi) = (self.regimes.first().map_or(0, |r| r.first_bytes), self.regimes.last().map_or(0, |r| r.last_bytes));
        bytes < lo as f64 || bytes > hi as f64
    }

    /// The predicted time of one all-reduce of `bytes` on `p` GPUs with `shape`, in µs: every
    /// latency step costs the regime's `α`.
    pub fn time_us(&self, shape: Shape, p: usize, bytes: f64) -> f64 {
        let r = self.regime_of(bytes);
        shape.latency_steps(p) as f64 * r.alpha_us + shape.busiest_rank_bytes(p, bytes) / (1e3 * r.beta_gbps)
    }

    /// As [`Fit::time_us`] with the latency of the measured GPU count, as if none of it grew
    /// with the steps: the other end of what the data allows (NCCL's own tuning model charges
    /// most of an all-reduce's latency once, and only a part per step).
    pub fn time_us_fixed_latency(&self, shape: Shape, p: usize, bytes: f64) -> f64 {
        let r = self.regime_of(bytes);
        self.shape.latency_steps(self.ranks) as f64 * r.alpha_us + shape.busiest_rank_bytes(p, bytes) / (1e3 * r.beta_gbps)
    }

    /// Predicted algorithm bandwidth (bytes over time), in GB/s.
    pub fn algbw_gbps(&self, shape: Shape, p: usize, bytes: f64) -> f64 {
        bytes / (self.time_us(shape, p, bytes) * 1e3)
    }

    /// Predicted bus bandwidth, with nccl-tests' factor `2(p − 1)/p` whatever the algorithm.
    pub fn busbw_gbps(&self, shape: Shape, p: usize, bytes: f64) -> f64 {
        self.algbw_gbps(shape, p, bytes) * bus_factor(p)
    }

    /// The model's relative error on one measured row of the fitted run.
    pub fn relative_error(&self, row: &AllReduceRow) -> f64 {
        (self.time_us(self.shape, self.ranks, row.bytes as f64) - row.median_us) / row.median_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(bytes: usize, us: f64) -> AllReduceRow {
        AllReduceRow { bytes, count: bytes / 4, median_us: us, min_us: us, max_us: us, repeats: 1, ops_per_repeat: 1 }
    }

    /// Rows timed exactly by the model: (α µs, β GB/s) below and above 1 MiB.
    fn synthetic(shape: Shape, p: usize, small: (f64, f64), large: (f64, f64)) -> Vec<AllReduceRow> {
        (3..=30)
            .map(|k| {
                let bytes = 1usize << k;
                let (a, b) = if bytes <= 1 << 20 { small } else { large };
                row(bytes, shape.latency_steps(p) as f64 * a + shape.busiest_rank_bytes(p, bytes as f64) / (1e3 * b))
            })
            .collect()
    }

    #[test]
    fn steps_and_bytes_are_the_derivations() {
        for (p, ring, dbt) in [(2, 2, 2), (4, 6, 4), (8, 14, 6), (5, 8, 6)] {
            assert_eq!((Shape::Ring.latency_steps(p), Shape::Chain.latency_steps(p), Shape::DoubleBinaryTree.latency_steps(p)), (ring, ring, dbt));
        }
        assert_eq!(Shape::Ring.busiest_rank_bytes(8, 1.0), 1.75);
        assert_eq!(Shape::Ring.busiest_rank_bytes(4, 1.0), 1.5);
        for shape in [Shape::Ring, Shape::Chain, Shape::DoubleBinaryTree] {
            assert_eq!(shape.busiest_rank_bytes(2, 3.0), 3.0, "{shape:?}: on two GPUs each sends the message once");
            assert_eq!((shape.latency_steps(1), shape.busiest_rank_bytes(1, 3.0)), (0, 0.0));
        }
        assert_eq!(Shape::Chain.busiest_rank_bytes(4, 1.0), 2.0);
    }

    #[test]
    fn a_fit_finds_the_constants_and_the_break_it_was_made_from() {
        for (shape, p) in [(Shape::Ring, 2), (Shape::Ring, 8), (Shape::Chain, 4)] {
            let rows = synthetic(shape, p, (5.0, 100.0), (10.0, 300.0));
            let fit = fit(&rows, p, shape, 2).unwrap();
            let [small, large] = &fit.regimes[..] else { panic!("{fit:?}") };
            assert_eq!((small.first_bytes, small.last_bytes, large.first_bytes, large.last_bytes), (8, 1 << 20, 2 << 20, 1 << 30));
            for (got, want) in [(small.alpha_us, 5.0), (small.beta_gbps, 100.0), (large.alpha_us, 10.0), (large.beta_gbps, 300.0)] {
                assert!((got - want).abs() < 1e-6 * want, "{shape:?} on {p}: {got} for {want}");
            }
            assert!(small.max_relative_error < 1e-9 && large.max_relative_error < 1e-9);
            assert!(rows.iter().all(|r| fit.relative_error(r).abs() < 1e-9));
        }
    }

    #[test]
    fn a_fit_on_one_gpu_count_predicts_another_exactly_when_the_shape_is_right() {
        let on_four = synthetic(Shape::Ring, 4, (4.0, 80.0), (9.0, 350.0));
        let fit = fit(&on_four, 4, Shape::Ring, 2).unwrap();
        for (p, r) in [(2, synthetic(Shape::Ring, 2, (4.0, 80.0), (9.0, 350.0))), (8, synthetic(Shape::Ring, 8, (4.0, 80.0), (9.0, 350.0)))] {
            for row in r {
                let got = fit.time_us(Shape::Ring, p, row.bytes as f64);
                assert!((got - row.median_us).abs() < 1e-6 * row.median_us, "{p} GPUs, {} B: {got} for {}", row.bytes, row.median_us);
            }
        }
        // A chain's times fitted as a ring's fit just as well (one GPU count cannot tell the
        // shapes apart: only the constants differ), and predict another GPU count wrongly.
        let chain = synthetic(Shape::Chain, 4, (4.0, 80.0), (9.0, 350.0));
        let wrong = super::fit(&chain, 4, Shape::Ring, 2).unwrap();
        let right = super::fit(&chain, 4, Shape::Chain, 2).unwrap();
        assert!(right.regimes.iter().chain(&wrong.regimes).all(|r| r.max_relative_error < 1e-9));
        assert!((wrong.time_us(Shape::Ring, 8, 1e9) - right.time_us(Shape::Chain, 8, 1e9)).abs() > 0.1 * right.time_us(Shape::Chain, 8, 1e9));
    }

    #[test]
    fn large_messages_reach_beta_on_a_ring_and_less_on_a_chain() {
        let fit = fit(&synthetic(Shape::Ring, 2, (5.0, 100.0), (10.0, 300.0)), 2, Shape::Ring, 2).unwrap();
        for p in [2, 4, 8] {
            let ring = fit.busbw_gbps(Shape::Ring, p, 1e15);
            let chain = fit.busbw_gbps(Shape::Chain, p, 1e15);
            let chain_limit = if p == 2 { 300.0 } else { 300.0 * (p - 1) as f64 / p as f64 };
            assert!((ring - 300.0).abs() < 1e-3 && (chain - chain_limit).abs() < 1e-3, "{p}: {ring} {chain}");
            // More GPUs, more steps: small messages slow down, in both bounds' order.
            assert!(fit.time_us(Shape::Ring, p, 8.0) >= fit.time_us_fixed_latency(Shape::Ring, p, 8.0));
        }
        assert!(fit.time_us(Shape::Ring, 8, 8.0) > 6.9 * fit.time_us(Shape::Ring, 2, 8.0));
        assert!(fit.extrapolates(4.0) && fit.extrapolates(2e9) && !fit.extrapolates(4096.0));
    }

    #[test]
    fn what_cannot_be_fitted_is_an_error() {
        assert!(fit(&synthetic(Shape::Ring, 2, (5.0, 100.0), (10.0, 300.0))[..5], 2, Shape::Ring, 2).unwrap_err().contains("5 message sizes"));
        assert!(fit(&[row(8, 10.0), row(16, 10.0), row(32, 10.0)], 1, Shape::Ring, 1).unwrap_err().contains("1 GPU"));
        // Time that falls as the message grows has no positive bandwidth.
        let falling = [row(1 << 20, 30.0), row(2 << 20, 20.0), row(4 << 20, 10.0)];
        assert!(fit(&falling, 2, Shape::Ring, 1).unwrap_err().contains("positive"));
    }
}
