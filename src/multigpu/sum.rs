//! The multi-GPU sum: each GPU sums its shard with the book's kernel (level 1), and NCCL adds the
//! widened per-GPU sums across GPUs (level 2), leaving the total on every one of them. Every
//! result is checked: each partial against its shard, the total on every rank against the
//! whole input.
//!
//! [`Mode::Gathered`] makes the total independent of the number of GPUs: kernel 15 on shards cut
//! on its chunks, every chunk's sum gathered to every GPU, and the chunks' sums folded in kernel
//! 15's own order (`src/multigpu/simulate.rs` works both modes out on the CPU).

use super::input::{combine, fill, pattern_reference, Input};
use super::nccl::{self, Comm};
use super::ranks::{run_ranks, Ranks};
use super::shard::{chunk_shard, shard};
use super::summable::{Summable, Value};
use crate::check::reproducible::fold_packed;
use crate::check::CheckSum;
use crate::data::{check_float, error_bound, Reference, F32_UNIT_ROUNDOFF, F64_UNIT_ROUNDOFF};
use crate::error::{human_bytes, During, Error, Result};
use crate::gpu::Gpu;
use crate::reducer::Reducer;
use cudarc::driver::CudaSlice;
use std::ops::Range;
use std::time::{Duration, Instant};
use crate::kernels::{names, CHUNK_VALUES};


// ANCHOR: mode
/// How the GPUs' work becomes the total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Each GPU sums a contiguous shard; NCCL adds the per-GPU sums, widened. Integer totals
    /// are the same whatever the number of GPUs; a float total's last bits depend on it, because
    /// the per-GPU sums do (their shards change with it).
    #[default]
    Sharded,
    /// Kernel 15 on shards cut on its chunk boundaries; every GPU's chunk sums (8 bytes each)
    /// gathered to every GPU by an integer all-reduce in which each slot is written by one rank
    /// and zero everywhere else (so the adds are exact, in any order); then every GPU folds all
    /// the chunk sums in kernel 15's order. The total is kernel 15's sum of the whole input on
    /// one GPU, bit for bit, on any number of GPUs. `f32` only.
    Gathered,
}
// ANCHOR_END: mode

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Sharded => "sharded",
            Mode::Gathered => "gathered",
        }
    }
}

/// How to sum.
#[derive(Clone, Debug)]
pub struct SumOptions {
    /// The per-GPU kernel; the book's best: one launch, deterministic. [`Mode::Gathered`] needs
    /// a chunked one (`reduce15_*`).
    pub kernel: String,
    pub mode: Mode,
    /// Threads per block; `None`: the kernel's preferred block for the shard's length.
    pub block: Option<u32>,
    /// How long an NCCL operation may take before the communicator is aborted.
    pub nccl_timeout: Duration,
    /// How long the whole sum may take, shards included, before the caller gives up.
    pub deadline: Duration,
}

impl Default for SumOptions {
    fn default() -> Self {
        SumOptions { kernel: names::REDUCE10_LAST_BLOCK.into(), mode: Mode::Sharded, block: None, nccl_timeout: Duration::from_secs(60), deadline: Duration::from_secs(300) }
    }
}

/// What one rank did.
#[derive(Clone, Debug)]
pub struct RankSum {
    pub rank: usize,
    pub gpu: String,
    pub shard: Range<usize>,
    pub block: u32,
    /// Its shard's sum, as the kernel returned it.
    pub partial: Value,
    /// The partial against the shard's own reference.
    pub partial_check: std::result::Result<(), String>,
    /// The total this rank holds after the all-reduce.
    pub total: Value,
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
    pub mode: Mode,
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
            let totals: Vec<String> = self.ranks.iter().map(|r| r.total.to_string()).collect();
            problems.push(format!("the ranks hold different totals: {totals:?}"));
        }
        if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
    }

    /// What happened, for a terminal or a log: one line per rank, then the verdict.
    pub fn summary(&self) -> String {
        let cross = match self.mode {
            Mode::Sharded => "the per-GPU sums added by an",
            Mode::Gathered => "every chunk's sum gathered by an",
        };
        let mut s = format!(
            "multi-GPU sum ({}): n = {} {} ({}), {}, {} per GPU, {cross} NCCL {} all-reduce across {} rank(s); {}\n",
            self.mode.name(), self.n, self.dtype, self.input, self.gpus, self.kernel, self.nccl, self.ranks.len(), self.multicast
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

/// What level 1 leaves on a rank for level 2: its partial sum, checked, and the buffers of the
/// all-reduce.
struct Level1<T: Summable> {
    block: u32,
    reference: Reference,
    partial: T::Acc,
    partial_check: std::result::Result<(), String>,
    /// The addition depth of this rank's sum (of the whole sum, when gathered), for the error
    /// bound of the total.
    depth: u64,
    cross: Cross<T::Wide>,
    fill_s: f64,
    reduce_ms: f64,
}

/// The all-reduce's buffers on one rank.
enum Cross<W> {
    /// [`Mode::Sharded`]: this rank's widened sum, and one value for the total.
    Widened { send: CudaSlice<W>, total: CudaSlice<W> },
    /// [`Mode::Gathered`]: one slot per chunk of the whole input, this rank's own chunk sums in
    /// theirs (from chunk `first`) and zero elsewhere; and the gathered slots.
    Gathered { first: usize, mine: Vec<u64>, chunks: usize, slots: CudaSlice<i64>, gathered: CudaSlice<i64> },
}

/// The total a rank holds: the all-reduced wide sum, or the fold of the gathered chunk sums.
#[derive(Clone, Copy)]
enum Total<W> {
    Wide(W),
    Folded(f32),
}

/// What a rank brings back from its thread: its line of the report, and what the total is
/// checked with.
struct RankOutcome<W> {
    sum: RankSum,
    reference: Reference,
    depth: u64,
    total: Total<W>,
}

/// A value no gathered slot holds by chance: the gathered slots are filled with it first.
const SLOT_POISON: i64 = 0x5a5a_5a5a_5a5a_5a5a;

/// Sum `n` values of `input`, sharded across `ranks`: each GPU sums its shard with
/// `options.kernel`, and NCCL adds the widened partial sums. Every result is checked: each
/// partial against its shard, the total (on every rank) against the whole input.
pub fn sum<T: Summable>(ranks: &Ranks, n: usize, input: Input, options: &SumOptions) -> Result<SumReport> {
    let nccl = nccl::library()?; // no NCCL: an error now, before any GPU work
    let kernel = crate::kernels::find(&options.kernel)?;
    let mode = options.mode;
    if mode == Mode::Gathered {
        if T::DTYPE != crate::Dtype::F32 {
            return Err(Error::Config { setting: format!("a gathered sum of {}", T::SUFFIX), reason: "only f32 is gathered: integer sums are the same bits whatever the number of GPUs already".into() });
        }
        if !kernel.shape.is_chunked() || fold_packed(kernel.name, &[]).is_none() {
            return Err(Error::Config { setting: format!("a gathered sum with {}", kernel.name), reason: "the gathered sum needs a kernel that leaves one sum per chunk, and whose fold the host knows: reduce15_reproducible, reduce15_neumaier or reduce15_f64 (or the _b1024 and _two_pass forms of the first two)".into() });
        }
    }
    let id = nccl.unique_id()?; // made once, shared by every rank
    let count = ranks.len();
    let helpers = helpers_per_rank(count);
    let opts = options.clone();
    let outcomes = run_ranks(ranks, options.deadline, move |rank, gpu, rendezvous| {
        let shard = match mode {
            Mode::Sharded => shard(n, count, rank),
            Mode::Gathered => chunk_shard(n, count, rank, CHUNK_VALUES as usize),
        };
        // ANCHOR: level1
        // Level 1, on this GPU: everything that can fail happens before the communicator.
        let local = (|| -> Result<Level1<T>> {
            let block = opts.block.unwrap_or_else(|| kernel.preferred_block(shard.len()));
            let mut reducer = Reducer::<T>::new(gpu, kernel.name, block)?;
            let mut values = gpu.alloc::<T>(shard.len())?;
            let started = Instant::now();
            let reference = upload_shard(gpu, &mut values, shard.clone(), n, input, helpers)?;
            let fill_s = started.elapsed().as_secs_f64();
            if !T::partial_fits(&reference) {
                return Err(Error::Config { setting: format!("n = {n} on {count} GPU(s)"), reason: format!(
                    "rank {rank}'s shard sums to {}, which does not fit in the kernel's {} accumulator; use more GPUs", reference.sum_i64, T::SUFFIX) });
            }
            reducer.poison_outputs(shard.len())?;
            let started = Instant::now();
            let partial = reducer.sum(&values.as_view())?; // waits for the GPU
            let (partial_check, depth) = (reducer.check(partial, &reference), reducer.addition_depth(shard.len())?);
            let reduce_ms = started.elapsed().as_secs_f64() * 1e3;
            drop(values); // the shard is summed: give its memory back before NCCL wants some
            // The wide type is no kernel's element type: plain copies, on the same stream.
            let stream = gpu.stream();
            let (cross, depth) = match mode {
                Mode::Sharded => {
                    let send = stream.clone_htod(&[T::widen(partial)]).during("uploading the widened partial sum")?;
                    let total = stream.clone_htod(&[T::WIDE_POISON]).during("poisoning the total")?;
                    (Cross::Widened { send, total }, depth)
                }
                Mode::Gathered => {
                    let mine = T::chunk_partials(&reducer, shard.len())?;
                    let (chunks, first) = (n.div_ceil(CHUNK_VALUES as usize), shard.start / CHUNK_VALUES as usize);
                    let mut slots = vec![0i64; chunks.max(1)];
                    for (slot, &bits) in slots[first..].iter_mut().zip(&mine) {
                        *slot = bits as i64;
                    }
                    let slots = stream.clone_htod(&slots).during("uploading this rank's chunk sums")?;
                    let gathered = stream.clone_htod(&vec![SLOT_POISON; chunks.max(1)]).during("poisoning the gathered chunk sums")?;
                    // The total is one launch's fold over every chunk: its bound is the whole sum's.
                    (Cross::Gathered { first, mine, chunks, slots, gathered }, reducer.addition_depth(n)?)
                }
            };
            Ok(Level1 { block, reference, partial, partial_check, depth, cross, fill_s, reduce_ms })
        })();
        // ANCHOR_END: level1
        // Every rank ready, or none goes on.
        let Level1 { block, reference, partial, partial_check, depth, cross, fill_s, reduce_ms } = rendezvous.vote(rank, local)?;
        let started = Instant::now();
        let mut comm = Comm::init(gpu, id, rank, count)?;
        let total = match cross {
            Cross::Widened { send, mut total } => {
                // ANCHOR: level2
                // Level 2, across GPUs: one value per rank, added by NCCL on this GPU's stream.
                comm.all_reduce_sum(&send, &mut total, 1)?;
                comm.wait(opts.nccl_timeout)?;
                // ANCHOR_END: level2
                Total::Wide(gpu.stream().clone_dtoh(&total).during("copying the total back")?[0])
            }
            Cross::Gathered { first, mine, chunks, slots, mut gathered } => {
                // ANCHOR: gather
                // Every chunk's sum to every GPU: integer adds of one rank's bits and zeros.
                comm.all_reduce_sum(&slots, &mut gathered, slots.len())?;
                comm.wait(opts.nccl_timeout)?;
                let bits: Vec<u64> = gathered_bits(gpu, &gathered, chunks)?;
                // ANCHOR_END: gather
                if bits[first..first + mine.len()] != mine[..] {
                    return Err(Error::WrongSum { what: format!("the gathered chunk sums on rank {rank}"), why: "they do not hold this rank's own".into() }.into());
                }
                Total::Folded(fold_packed(kernel.name, &bits).expect("a chunked kernel, checked above"))
            }
        };
        let all_reduce_ms = started.elapsed().as_secs_f64() * 1e3;
        drop(comm);
        let sum = RankSum {
            rank,
            gpu: format!("GPU {}: {}", gpu.info().ordinal, gpu.info().name),
            shard,
            block,
            partial: T::partial_value(partial),
            partial_check,
            total: match total {
                Total::Wide(w) => w.into(),
                Total::Folded(x) => Value::F32(x),
            },
            fill_s,
            reduce_ms,
            all_reduce_ms,
        };
        Ok(RankOutcome { sum, reference, depth, total })
    })?;
    let whole = outcomes.iter().fold(Reference::EMPTY, |acc, o| combine(acc, o.reference));
    // The same bits on every rank.
    let totals_agree = outcomes.windows(2).all(|w| w[0].sum.total == w[1].sum.total);
    let deepest = outcomes.iter().map(|o| o.depth).max().unwrap_or(0);
    let total_check = match outcomes.first().map(|o| o.total) {
        Some(Total::Wide(w)) => T::check_total(w, &whole, deepest),
        Some(Total::Folded(x)) => check_float(x as f64, &whole, F32_UNIT_ROUNDOFF, deepest),
        None => Err("no rank returned a total".into()),
    };
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
        mode,
        gpus: ranks.describe(),
        note: ranks.note(),
        nccl: nccl.version_string(),
        multicast: nccl::multicast_setting(),
        expected,
        ranks: outcomes.into_iter().map(|o| o.sum).collect(),
        total_check,
        totals_agree,
    })
}

/// Fill this rank's shard on the host, a chunk at a time on `helpers` threads, and upload it
/// ([`Gpu::upload_made`]); return the shard's reference (closed form for the pattern, computed
/// for random values).
fn upload_shard<T: Summable>(gpu: &Gpu, device: &mut CudaSlice<T>, shard: Range<usize>, total: usize, input: Input, helpers: usize) -> Result<Reference> {
    let mut reference = match input {
        Input::Pattern => pattern_reference(shard.start as u64..shard.end as u64),
        Input::Random { .. } | Input::Exact { .. } => Reference::EMPTY,
    };
    let what = format!("uploading the shard ({})", human_bytes(shard.len() * std::mem::size_of::<T>()));
    gpu.upload_made(device, &what, |offset, chunk| {
        fill(chunk, shard.start + offset, total, input, helpers);
        if let Input::Exact { .. } = input {
            let exact = T::exact_reference(chunk).map_err(|reason| Error::Config { setting: format!("an exact input of {total} values"), reason })?;
            reference = combine(reference, exact);
        } else if let Input::Random { .. } = input {
            reference = combine(reference, T::reference(chunk));
        }
        Ok(())
    })?;
    Ok(reference)
}

/// The first `chunks` gathered slots, copied back, as the bits they carry.
fn gathered_bits(gpu: &Gpu, gathered: &CudaSlice<i64>, chunks: usize) -> Result<Vec<u64>> {
    let slots = gpu.stream().clone_dtoh(gathered).during("copying the gathered chunk sums back")?;
    Ok(slots[..chunks].iter().map(|&b| b as u64).collect())
}

/// Threads each rank may use to fill its shard: the host's cores, shared out.
fn helpers_per_rank(ranks: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(4, |n| n.get());
    (cores / ranks.max(1)).max(1)
}