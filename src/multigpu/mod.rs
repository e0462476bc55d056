//! Beyond one GPU: the input is split into one contiguous shard per GPU, each GPU sums its shard
//! with the book's kernel, and NCCL adds the per-GPU sums across GPUs, leaving the total on
//! every one of them. One host thread per GPU ("rank"), as NCCL's one-device-per-thread model
//! has it: each thread generates and uploads its own shard, so the host work is parallel too.
//!
//! Robust by construction, because a rank that stops early leaves its peers waiting inside NCCL
//! for ever: every step that can fail (opening, allocating, filling, compiling, summing) is done
//! before the communicator exists, and the ranks vote before joining it; a rank that fails or
//! panics releases the others from every later rendezvous; every wait on an NCCL operation has
//! a deadline, after which the communicator is aborted; and the caller waits for the ranks
//! with a deadline of its own.

pub mod allreduce;
pub mod nccl;

use crate::data::{check_float, error_bound, Checked, Reference, F32_UNIT_ROUNDOFF, F64_UNIT_ROUNDOFF};
use crate::error::{human_bytes, During, Error, Result};
use crate::gpu::Gpu;
use crate::nccl::{Comm, NcclElement};
use crate::reducer::Reducer;
use cudarc::driver::{CudaSlice, ValidAsZeroBits};
use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// The GPUs.

/// The GPUs a multi-GPU operation runs on, opened once: rank r is GPU r. One operation runs on
/// them at a time (a second waits): two all-reduces queued on the same streams in different
/// orders on different GPUs would wait for each other for ever.
#[derive(Clone)]
pub struct Ranks {
    gpus: Vec<Gpu>,
    visible: usize,
    busy: Arc<Mutex<()>>,
}

impl Ranks {
    /// Every visible GPU (`count: None`), or the first `count` of them.
    pub fn open(count: Option<usize>) -> Result<Ranks> {
        let visible = crate::gpu::probe()?;
        let count = count.unwrap_or(visible);
        if count == 0 {
            return Err(Error::NoGpu("asked for 0 GPUs; a sum needs at least one".into()));
        }
        if count > visible {
            return Err(Error::NoGpu(format!(
                "asked for {count} GPUs, but only {visible} {} visible (CUDA_VISIBLE_DEVICES={})",
                if visible == 1 { "is" } else { "are" },
                std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "unset".into())
            )));
        }
        let gpus = (0..count).map(Gpu::open_ordinal).collect::<Result<Vec<_>>>()?;
        Ok(Ranks { gpus, visible, busy: Arc::new(Mutex::new(())) })
    }

    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// How many GPUs the driver shows this process (the ranks may be fewer).
    pub fn visible(&self) -> usize {
        self.visible
    }

    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// `2 × NVIDIA H200`, or the names one by one where they differ.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.gpus.iter().map(|g| g.info().name.as_str()).collect();
        if names.windows(2).all(|w| w[0] == w[1]) {
            format!("{} × {}", names.len(), names[0])
        } else {
            names.join(" + ")
        }
    }

    /// Why there is one rank, said so that a reader of the output knows NCCL crossed no link.
    pub fn note(&self) -> Option<String> {
        match (self.len(), self.visible) {
            (1, 1) => Some("one rank: only one GPU is visible, so NCCL's all-reduce has no other GPU to add from and returns the partial sum itself".into()),
            (1, v) => Some(format!("one rank of the {v} visible GPUs (as asked): NCCL's all-reduce returns the partial sum itself")),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sharding.

// ANCHOR: shard
/// The part of `0..n` that rank `rank` of `ranks` sums: contiguous, in rank order, the first
/// `n % ranks` ranks one element longer than the rest. Every element is in exactly one shard;
/// with fewer elements than ranks, the last ranks get empty shards (and add zero).
pub fn shard(n: usize, ranks: usize, rank: usize) -> Range<usize> {
    assert!(rank < ranks, "rank {rank} of {ranks}");
    let (base, extra) = (n / ranks, n % ranks);
    let start = rank * base + rank.min(extra);
    start..start + base + usize::from(rank < extra)
}
// ANCHOR_END: shard

/// Every rank's shard, in rank order.
pub fn shards(n: usize, ranks: usize) -> Vec<Range<usize>> {
    (0..ranks).map(|r| shard(n, ranks, r)).collect()
}

// ---------------------------------------------------------------------------------------------
// Inputs.

/// What the summed values are. Both depend only on an element's global index, so the input is
/// the same whatever the number of GPUs, and each rank can make its own shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// `x_i = (i mod 1000) − 500`: its sum has a closed form, so 2^31 values per GPU are
    /// checked exactly with no host copy of the input.
    Pattern,
    /// Random values from [`Checked::fill_random`], in blocks of 2^16 seeded by their position.
    Random { seed: u64 },
    /// Exact-by-construction values from [`Checked::fill_exact`] (small nonzero integers with
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

const EMPTY: Reference = Reference::EMPTY;

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

// ---------------------------------------------------------------------------------------------
// Element types.

// ANCHOR: summable
/// An element type the multi-GPU sum takes. The per-GPU sums are widened before they cross
/// GPUs: 2^31 values per GPU of `(i mod 1000) − 500` sum to about −1.07·10^9 on each GPU, which
/// fits in an `i32`, but two GPUs' worth does not. The first level accumulates in the kernel's
/// type; the second needs a type that holds the whole sum.
pub trait Summable: Checked {
    /// The type the per-GPU sums are added in, across GPUs.
    type Wide: NcclElement + ValidAsZeroBits + Default + PartialEq + std::fmt::Debug;
    fn widen(partial: Self::Acc) -> Self::Wide;
    /// A value no all-reduce writes by chance: the output is filled with it first.
    const WIDE_POISON: Self::Wide;
    fn from_pattern(v: i32) -> Self;
    /// Whether a sum described by `r` fits in the kernel's accumulator.
    fn partial_fits(r: &Reference) -> bool;
    /// Check the total: exactly for integers and exact-by-construction inputs, within the error
    /// bound for floats, where `depth` is the deepest rank's addition depth (the f64 adds of the
    /// widened partials are far inside the f32 bound's margin).
    fn check_total(total: Self::Wide, r: &Reference, depth: u64) -> std::result::Result<(), String>;
}
// ANCHOR_END: summable

impl Summable for i32 {
    type Wide = i64;
    const WIDE_POISON: i64 = i64::MIN + 0x5a5a;
    fn widen(partial: i32) -> i64 {
        partial as i64
    }
    fn from_pattern(v: i32) -> i32 {
        v
    }
    fn partial_fits(r: &Reference) -> bool {
        i32::try_from(r.sum_i64).is_ok()
    }
    fn check_total(total: i64, r: &Reference, _depth: u64) -> std::result::Result<(), String> {
        if total == r.sum_i64 {
            Ok(())
        } else {
            Err(format!("got {total}, expected exactly {} for n = {} (off by {})", r.sum_i64, r.n, total.wrapping_sub(r.sum_i64)))
        }
    }
}

impl Summable for f32 {
    type Wide = f64;
    const WIDE_POISON: f64 = f64::NAN;
    fn widen(partial: f32) -> f64 {
        partial as f64
    }
    fn from_pattern(v: i32) -> f32 {
        v as f32
    }
    fn partial_fits(_: &Reference) -> bool {
        true
    }
    /// Each GPU's f32 sum has its launch's bound; the partials are then added in f64, whose
    /// roundings the bound's margin (a few f64 roundings of Σ|x|) covers for a few GPUs.
    fn check_total(total: f64, r: &Reference, depth: u64) -> std::result::Result<(), String> {
        check_float(total, r, F32_UNIT_ROUNDOFF, depth)
    }
}

impl Summable for f64 {
    type Wide = f64;
    const WIDE_POISON: f64 = f64::NAN;
    fn widen(partial: f64) -> f64 {
        partial
    }
    fn from_pattern(v: i32) -> f64 {
        v as f64
    }
    fn partial_fits(_: &Reference) -> bool {
        true
    }
    fn check_total(total: f64, r: &Reference, depth: u64) -> std::result::Result<(), String> {
        // The f64 adds across GPUs are roundings of the same size: one more level per doubling.
        check_float(total, r, F64_UNIT_ROUNDOFF, depth + 8)
    }
}

// ---------------------------------------------------------------------------------------------
// Ranks on threads, and how they agree.

/// Why a rank stopped.
pub(crate) enum Stop {
    /// Its own error.
    Own(Error),
    /// Another rank failed, and this one stopped at the next rendezvous.
    Peer(String),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Own(e)
    }
}

/// What one rank brings to a rendezvous.
#[derive(Clone, Debug, Default)]
pub(crate) struct Vote {
    /// Why this rank cannot go on, if it cannot.
    pub failure: Option<String>,
    pub number: f64,
}

/// A reusable meeting point for the rank threads: every rank arrives with a [`Vote`] and leaves
/// with all of them. Unlike `std::sync::Barrier` it can be broken: a rank that stops early
/// releases the others with an error instead of leaving them waiting for ever.
pub(crate) struct Rendezvous {
    ranks: usize,
    state: Mutex<RendezvousState>,
    arrived: Condvar,
}

struct RendezvousState {
    round: u64,
    waiting: usize,
    votes: Vec<Vote>,
    last: Vec<Vote>,
    broken: Option<String>,
}

impl Rendezvous {
    pub(crate) fn new(ranks: usize) -> Rendezvous {
        let state = RendezvousState { round: 0, waiting: 0, votes: vec![Vote::default(); ranks], last: Vec::new(), broken: None };
        Rendezvous { ranks, state: Mutex::new(state), arrived: Condvar::new() }
    }

    /// Wait for every rank; all votes, in rank order, or why the meeting was broken.
    pub(crate) fn meet(&self, rank: usize, vote: Vote) -> std::result::Result<Vec<Vote>, String> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = &s.broken {
            return Err(why.clone());
        }
        let round = s.round;
        s.votes[rank] = vote;
        s.waiting += 1;
        if s.waiting == self.ranks {
            s.last = std::mem::replace(&mut s.votes, vec![Vote::default(); self.ranks]);
            s.waiting = 0;
            s.round += 1;
            self.arrived.notify_all();
            return Ok(s.last.clone());
        }
        while s.round == round && s.broken.is_none() {
            s = self.arrived.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        // The round completed (its votes stay in `last` until the next one can complete, which
        // needs this rank), or a rank stopped before arriving.
        if s.round != round { Ok(s.last.clone()) } else { Err(s.broken.clone().unwrap_or_default()) }
    }

    /// All ranks agree to go on, or every rank learns which failed and why.
    pub(crate) fn all_ready(&self, rank: usize, mine: std::result::Result<(), String>) -> std::result::Result<(), String> {
        let votes = self.meet(rank, Vote { failure: mine.err(), number: 0.0 })?;
        let failed: Vec<String> = votes.iter().enumerate().filter_map(|(r, v)| v.failure.as_ref().map(|f| format!("rank {r}: {f}"))).collect();
        if failed.is_empty() { Ok(()) } else { Err(failed.join("; ")) }
    }

    /// The largest of the ranks' numbers: the same on every rank, so all decide alike.
    pub(crate) fn max(&self, rank: usize, number: f64) -> std::result::Result<f64, String> {
        Ok(self.meet(rank, Vote { failure: None, number })?.iter().map(|v| v.number).fold(f64::NEG_INFINITY, f64::max))
    }

    /// Release every rank waiting now or later: `rank` will not arrive.
    pub(crate) fn abandon(&self, rank: usize, why: &str) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.broken.is_none() {
            s.broken = Some(format!("rank {rank} stopped: {why}"));
        }
        self.arrived.notify_all();
    }
}

/// Run `work` on one thread per rank and return the ranks' results in rank order, or the first
/// error a rank had of its own. Gives up after `deadline`, leaving stuck threads behind (they
/// end with the process): a rank stuck inside NCCL cannot be stopped from outside.
pub(crate) fn run_ranks<R, F>(ranks: &Ranks, deadline: Duration, work: F) -> Result<Vec<R>>
where
    R: Send + 'static,
    F: Fn(usize, &Gpu, &Rendezvous) -> std::result::Result<R, Stop> + Send + Sync + 'static,
{
    let _one_at_a_time = ranks.busy.lock().unwrap_or_else(|p| p.into_inner());
    run_threads(ranks.gpus(), deadline, work)
}

/// [`run_ranks`] on any per-rank context (a GPU, or nothing in the tests of this file).
fn run_threads<C, R, F>(contexts: &[C], deadline: Duration, work: F) -> Result<Vec<R>>
where
    C: Clone + Send + 'static,
    R: Send + 'static,
    F: Fn(usize, &C, &Rendezvous) -> std::result::Result<R, Stop> + Send + Sync + 'static,
{
    let count = contexts.len();
    let rendezvous = Arc::new(Rendezvous::new(count));
    let work = Arc::new(work);
    let (sender, receiver) = mpsc::channel();
    for (rank, gpu) in contexts.iter().enumerate() {
        let (gpu, meeting, work, sender) = (gpu.clone(), rendezvous.clone(), work.clone(), sender.clone());
        let spawned = std::thread::Builder::new().name(format!("rank-{rank}")).spawn(move || {
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| work(rank, &gpu, &meeting)))
                .unwrap_or_else(|panic| Err(Stop::Own(Error::Nccl { during: format!("running rank {rank}"), message: format!("it panicked: {}", panic_text(&panic)) })));
            if let Err(stop) = &outcome {
                let why = match stop {
                    Stop::Own(e) => e.to_string(),
                    Stop::Peer(why) => why.clone(),
                };
                meeting.abandon(rank, &why);
            }
            let _ = sender.send((rank, outcome));
        });
        if let Err(e) = spawned {
            rendezvous.abandon(rank, "its thread could not start");
            return Err(Error::Nccl { during: format!("starting the thread of rank {rank}"), message: e.to_string() });
        }
    }
    drop(sender);
    let started = Instant::now();
    let mut outcomes: Vec<Option<std::result::Result<R, Stop>>> = (0..count).map(|_| None).collect();
    while outcomes.iter().any(Option::is_none) {
        let left = deadline.saturating_sub(started.elapsed());
        match receiver.recv_timeout(left) {
            Ok((rank, outcome)) => outcomes[rank] = Some(outcome),
            Err(_) => {
                let missing: Vec<usize> = outcomes.iter().enumerate().filter(|(_, o)| o.is_none()).map(|(r, _)| r).collect();
                return Err(Error::Nccl {
                    during: "waiting for every rank to finish".into(),
                    message: format!(
                        "rank(s) {missing:?} still running after {:.0} s; a rank is probably stuck in NCCL \
                         (NCCL_DEBUG=INFO shows where)",
                        deadline.as_secs_f64()
                    ),
                });
            }
        }
    }
    let outcomes: Vec<std::result::Result<R, Stop>> = outcomes.into_iter().flatten().collect();
    let mut results = Vec::with_capacity(count);
    let mut peer_only = None;
    for outcome in outcomes {
        match outcome {
            Ok(r) => results.push(r),
            Err(Stop::Own(e)) => return Err(e),
            Err(Stop::Peer(why)) => peer_only = peer_only.or(Some(why)),
        }
    }
    match peer_only {
        Some(why) => Err(Error::Nccl { during: "running the ranks".into(), message: why }),
        None => Ok(results),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "(no message)".into())
}

/// Threads each rank may use to fill its shard: the host's cores, shared out.
fn helpers_per_rank(ranks: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
    (cores / ranks.max(1)).max(1)
}

// ---------------------------------------------------------------------------------------------
// The multi-GPU sum.

/// How to sum.
#[derive(Clone, Debug)]
pub struct SumOptions {
    /// The per-GPU kernel; the book's best: one launch, deterministic.
    pub kernel: String,
    /// Threads per block; `None`: the kernel's preferred block for the shard's length.
    pub block: Option<u32>,
    /// How long an NCCL operation may take before the communicator is aborted.
    pub nccl_timeout: Duration,
    /// How long the whole sum may take, shards included, before the caller gives up.
    pub deadline: Duration,
}

impl Default for SumOptions {
    fn default() -> Self {
        SumOptions { kernel: "reduce10_last_block".into(), block: None, nccl_timeout: Duration::from_secs(60), deadline: Duration::from_secs(300) }
    }
}

/// What one rank did.
#[derive(Clone, Debug)]
pub struct RankSum {
    pub rank: usize,
    pub gpu: String,
    pub shard: Range<usize>,
    pub block: u32,
    /// Its shard's sum, as the kernel returned it (Debug-formatted).
    pub partial: String,
    /// The partial against the shard's own reference.
    pub partial_check: std::result::Result<(), String>,
    /// The total this rank holds after the all-reduce (Debug-formatted).
    pub total: String,
    pub fill_s: f64,
    pub reduce_ms: f64,
    pub all_reduce_ms: f64,
}

/// A multi-GPU sum and its verdicts.
#[derive(Clone, Debug)]
pub struct SumReport {
    pub dtype: &'static str,
    pub n: usize,
    pub input: String,
    pub kernel: String,
    pub gpus: String,
    pub note: Option<String>,
    pub nccl: String,
    pub multicast: String,
    pub expected: String,
    pub ranks: Vec<RankSum>,
    /// The total against the whole input's reference (checked on rank 0's copy)...
    pub total_check: std::result::Result<(), String>,
    /// ...and every rank holding bitwise the same total.
    pub totals_agree: bool,
}

impl SumReport {
    /// `Ok` when every partial, the total and every rank's copy of it are right.
    pub fn check(&self) -> std::result::Result<(), String> {
        let mut problems = Vec::new();
        for r in &self.ranks {
            if let Err(why) = &r.partial_check {
                problems.push(format!("rank {} (GPU {}) partial sum wrong: {why}", r.rank, r.gpu));
            }
        }
        if let Err(why) = &self.total_check {
            problems.push(format!("total wrong: {why}"));
        }
        if !self.totals_agree {
            let totals: Vec<&str> = self.ranks.iter().map(|r| r.total.as_str()).collect();
            problems.push(format!("the ranks hold different totals: {totals:?}"));
        }
        if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
    }

    /// What happened, for a terminal or a log: one line per rank, then the verdict.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "multi-GPU sum: n = {} {} ({}), {}, {} per GPU, then NCCL {} all-reduce across {} rank(s); {}\n",
            self.n, self.dtype, self.input, self.gpus, self.kernel, self.nccl, self.ranks.len(), self.multicast
        );
        if let Some(note) = &self.note {
            s += &format!("note: {note}\n");
        }
        for r in &self.ranks {
            s += &format!(
                "  rank {} ({}): elements {}..{} ({}), block {}, partial {} [{}], filled in {:.2} s, summed in {:.2} ms; all-reduce {:.2} ms -> total {}\n",
                r.rank, r.gpu, r.shard.start, r.shard.end, r.shard.len(), r.block, r.partial,
                if r.partial_check.is_ok() { "right" } else { "WRONG" }, r.fill_s, r.reduce_ms, r.all_reduce_ms, r.total
            );
        }
        s += &format!("expected {}\n", self.expected);
        match self.check() {
            Ok(()) => s += "RIGHT: every partial, the total, and every rank's copy of it\n",
            Err(why) => s += &format!("WRONG:\n{why}\n"),
        }
        s
    }
}

/// What a rank brings back from its thread.
struct RankOutcome {
    gpu: String,
    block: u32,
    reference: Reference,
    partial: String,
    partial_check: std::result::Result<(), String>,
    /// The addition depth of this rank's sum, for the error bound of the total.
    depth: u64,
    total: String,
    fill_s: f64,
    reduce_ms: f64,
    all_reduce_ms: f64,
}

/// Values the host fills and uploads at a time, per rank (64 MiB of i32).
const UPLOAD_CHUNK: usize = 1 << 24;

/// Sum `n` values of `input`, sharded across `ranks`: each GPU sums its shard with
/// `options.kernel`, and NCCL adds the widened partial sums. Every result is checked: each
/// partial against its shard, the total (on every rank) against the whole input.
pub fn sum<T: Summable>(ranks: &Ranks, n: usize, input: Input, options: &SumOptions) -> Result<SumReport> {
    let nccl = nccl::library()?; // no NCCL: an error now, before any GPU work
    let kernel = crate::kernels::find(&options.kernel)?;
    let id = nccl.unique_id()?; // made once, shared by every rank
    let count = ranks.len();
    let helpers = helpers_per_rank(count);
    let opts = options.clone();
    let outcomes = run_ranks(ranks, options.deadline, move |rank, gpu, rendezvous| {
        let shard = shard(n, count, rank);
        // ANCHOR: level1
        // Level 1, on this GPU: everything that can fail happens before the communicator.
        let local = (|| -> Result<_> {
            let block = opts.block.unwrap_or_else(|| kernel.preferred_block(shard.len()));
            let mut reducer = Reducer::<T>::new(gpu, kernel.name, block)?;
            let mut values = gpu.alloc::<T>(shard.len())?;
            let started = Instant::now();
            let reference = upload_shard(gpu, &mut values, shard.clone(), n, input, helpers)?;
            let fill_s = started.elapsed().as_secs_f64();
            if !T::partial_fits(&reference) {
                return Err(Error::InvalidLength { kernel: kernel.name.into(), n: shard.len(), reason: format!(
                    "this shard's sum, {}, does not fit in the kernel's {} accumulator; use more GPUs", reference.sum_i64, T::SUFFIX) });
            }
            reducer.poison_outputs(shard.len())?;
            let started = Instant::now();
            let partial = reducer.sum(&values.as_view())?; // waits for the GPU
            let (partial_check, depth) = (reducer.check(partial, &reference), reducer.addition_depth(shard.len())?);
            let reduce_ms = started.elapsed().as_secs_f64() * 1e3;
            drop(values); // the shard is summed: give its memory back before NCCL wants some
            // The wide type is no kernel's element type: plain copies, on the same stream.
            let stream = gpu.stream();
            let send = stream.clone_htod(&[T::widen(partial)]).during("uploading the widened partial sum")?;
            let total = stream.clone_htod(&[T::WIDE_POISON]).during("poisoning the total")?;
            Ok((block, reference, (partial, partial_check, depth), send, total, fill_s, reduce_ms))
        })();
        // ANCHOR_END: level1
        // ANCHOR: vote
        // Every rank ready, or none goes on: a rank missing from the communicator would leave
        // the others waiting inside NCCL.
        let ready = local.as_ref().map(|_| ()).map_err(|e| e.to_string());
        if let Err(why) = rendezvous.all_ready(rank, ready) {
            return Err(match local {
                Err(own) => Stop::Own(own),
                Ok(_) => Stop::Peer(why),
            });
        }
        // ANCHOR_END: vote
        let (block, reference, (partial, partial_check, depth), send, mut total, fill_s, reduce_ms) = local.map_err(Stop::Own)?;
        // ANCHOR: level2
        // Level 2, across GPUs: one value per rank, added by NCCL on this GPU's stream.
        let started = Instant::now();
        let mut comm = Comm::init(gpu, id, rank, count)?;
        comm.all_reduce_sum(&send, &mut total, 1)?;
        comm.wait(opts.nccl_timeout)?;
        // ANCHOR_END: level2
        let all_reduce_ms = started.elapsed().as_secs_f64() * 1e3;
        drop(comm);
        let total = gpu.stream().clone_dtoh(&total).during("copying the total back")?[0];
        Ok((
            RankOutcome {
                gpu: format!("GPU {}: {}", gpu.info().ordinal, gpu.info().name),
                block,
                reference,
                partial: format!("{partial:?}"),
                partial_check,
                depth,
                total: format!("{total:?}"),
                fill_s,
                reduce_ms,
                all_reduce_ms,
            },
            total,
        ))
    })?;
    let whole = outcomes.iter().fold(EMPTY, |acc, (o, _)| combine(acc, o.reference));
    // Debug formats round-trip, so equal text is the same value on every rank.
    let totals_agree = outcomes.windows(2).all(|w| w[0].0.total == w[1].0.total);
    let total_check = match outcomes.first().map(|(_, t)| *t) {
        Some(t) => T::check_total(t, &whole, outcomes.iter().map(|(o, _)| o.depth).max().unwrap_or(0)),
        None => Err("no rank returned a total".into()),
    };
    let deepest = outcomes.iter().map(|(o, _)| o.depth).max().unwrap_or(0);
    let expected = if whole.exact {
        format!("{} exactly", whole.sum_i64)
    } else if T::IS_FLOAT {
        let u = if T::DTYPE == crate::Dtype::F64 { F64_UNIT_ROUNDOFF } else { F32_UNIT_ROUNDOFF };
        format!("{:e} (f64 reference), within {:.3e} (addition depth {deepest})", whole.sum_f64, error_bound(deepest, whole.abs_sum, u))
    } else {
        format!("{} exactly", whole.sum_i64)
    };
    Ok(SumReport {
        dtype: T::SUFFIX,
        n,
        input: input.describe(),
        kernel: options.kernel.clone(),
        gpus: ranks.describe(),
        note: ranks.note(),
        nccl: nccl.version_string(),
        multicast: nccl::multicast_setting(),
        expected,
        ranks: outcomes
            .into_iter()
            .enumerate()
            .map(|(rank, (o, _))| RankSum {
                rank,
                gpu: o.gpu,
                shard: shard(n, count, rank),
                block: o.block,
                partial: o.partial,
                partial_check: o.partial_check,
                total: o.total,
                fill_s: o.fill_s,
                reduce_ms: o.reduce_ms,
                all_reduce_ms: o.all_reduce_ms,
            })
            .collect(),
        total_check,
        totals_agree,
    })
}

/// Fill this rank's shard on the host, a chunk at a time on `helpers` threads, and upload it;
/// return the shard's reference (closed form for the pattern, computed for random values).
fn upload_shard<T: Summable>(gpu: &Gpu, device: &mut CudaSlice<T>, shard: Range<usize>, total: usize, input: Input, helpers: usize) -> Result<Reference> {
    let mut reference = match input {
        Input::Pattern => pattern_reference(shard.start as u64..shard.end as u64),
        Input::Random { .. } | Input::Exact { .. } => EMPTY,
    };
    let mut host = vec![T::default(); UPLOAD_CHUNK.min(shard.len())];
    let mut start = shard.start;
    while start < shard.end {
        let len = UPLOAD_CHUNK.min(shard.end - start);
        let chunk = &mut host[..len];
        fill(chunk, start, total, input, helpers);
        if let Input::Exact { .. } = input {
            let exact = T::exact_reference(chunk).map_err(|why| Error::Cuda { during: "making the exact input".into(), message: why })?;
            reference = combine(reference, exact);
        } else if let Input::Random { .. } = input {
            reference = combine(reference, T::reference(chunk));
        }
        let offset = start - shard.start;
        let mut view = device.slice_mut(offset..offset + len);
        gpu.stream().memcpy_htod(&*chunk, &mut view).during(&format!("uploading {} of the shard", human_bytes(len * std::mem::size_of::<T>())))?;
        // The next chunk reuses the host buffer: this copy must have read it first.
        gpu.synchronize()?;
        start += len;
    }
    Ok(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            for ranks in [2, 3, 7] {
                for s in shards(total, ranks) {
                    let mut part = vec![0i32; s.len()];
                    fill(&mut part, s.start, total, input, 3);
                    assert_eq!(part, whole[s.clone()], "{input:?} shard {s:?}");
                }
            }
            if input == Input::Pattern {
                assert!(whole.iter().enumerate().all(|(i, &x)| x == pattern_value(i as u64)));
            } else {
                assert!(whole.iter().filter(|&&x| x == 0).count() < total / 100, "mostly zeros");
            }
        }
    }

    #[test]
    fn a_broken_rendezvous_releases_the_waiting_ranks() {
        let r = Arc::new(Rendezvous::new(3));
        let waiter = { let r = r.clone(); std::thread::spawn(move || r.all_ready(0, Ok(()))) };
        std::thread::sleep(Duration::from_millis(20));
        r.abandon(2, "it failed");
        let got = waiter.join().unwrap();
        assert!(got.unwrap_err().contains("rank 2 stopped: it failed"));
        assert!(r.max(1, 1.0).is_err(), "later meetings are broken too");
    }

    #[test]
    fn ranks_return_in_order_and_the_first_own_error_wins() {
        let three = [(), (), ()];
        let ok = run_threads(&three, Duration::from_secs(10), |rank, _, rv| {
            rv.all_ready(rank, Ok(())).map_err(Stop::Peer)?;
            Ok(rank * 10)
        });
        assert_eq!(ok.unwrap(), vec![0, 10, 20]);
        // Rank 1 fails before the vote; the others learn it there and stop, none hangs.
        let failed = run_threads(&three, Duration::from_secs(10), |rank, _, rv| {
            let mine = if rank == 1 { Err(Error::NoGpu("rank 1 has no memory".into())) } else { Ok(()) };
            let vote = mine.as_ref().map(|_| ()).map_err(|e| e.to_string());
            if let Err(why) = rv.all_ready(rank, vote) {
                return Err(match mine {
                    Err(own) => Stop::Own(own),
                    Ok(()) => Stop::Peer(why),
                });
            }
            Ok(rank)
        });
        assert_eq!(failed.unwrap_err(), Error::NoGpu("rank 1 has no memory".into()));
    }

    #[test]
    fn a_rank_that_panics_releases_the_others() {
        let started = Instant::now();
        let got = run_threads(&[(), ()], Duration::from_secs(30), |rank, _, rv| {
            if rank == 0 {
                panic!("rank 0 is broken");
            }
            rv.all_ready(rank, Ok(())).map_err(Stop::Peer)?;
            Ok(())
        });
        let e = got.unwrap_err().to_string();
        assert!(e.contains("panicked: rank 0 is broken"), "{e}");
        assert!(started.elapsed() < Duration::from_secs(10), "the other rank waited for the deadline");
    }

    #[test]
    fn a_stuck_rank_is_reported_at_the_deadline() {
        let got = run_threads(&[(), ()], Duration::from_millis(200), |rank, _, _| {
            if rank == 1 {
                std::thread::sleep(Duration::from_secs(3)); // as if inside NCCL
            }
            Ok(())
        });
        let e = got.unwrap_err().to_string();
        assert!(e.contains("rank(s) [1] still running"), "{e}");
    }

    #[test]
    fn rendezvous_rounds_share_the_votes() {
        let r = Arc::new(Rendezvous::new(2));
        let other = { let r = r.clone(); std::thread::spawn(move || (r.max(1, 7.0), r.all_ready(1, Err("no memory".into())))) };
        assert_eq!(r.max(0, 3.0), Ok(7.0));
        let mine = r.all_ready(0, Ok(()));
        let (theirs_max, theirs_ready) = other.join().unwrap();
        assert_eq!(theirs_max, Ok(7.0));
        assert_eq!(mine.unwrap_err(), "rank 1: no memory");
        assert_eq!(theirs_ready.unwrap_err(), "rank 1: no memory");
    }
}
