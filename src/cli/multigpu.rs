//! `reduction multigpu info|sum|allreduce`: across every visible GPU, with NCCL.

use super::{command_line, parse_bytes, parse_seconds, parse_seed, parse_size, render, Outcome};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Subcommand, ValueEnum};
use reduction::multigpu::allreduce::{self, AllReduceConfig};
use reduction::error::human_bytes;
use reduction::limits::{count_in_words as words, Need};
use reduction::multigpu::{self, nccl, Input, Mode, Ranks, SumOptions};
use reduction::records::allreduce::Algorithm;
use reduction::Dtype;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Subcommand)]
pub enum Multigpu {
    /// The GPUs, NCCL, and the multicast setting
    Info,
    /// Shard, sum on each GPU, add across GPUs with NCCL, check
    Sum(SumArgs),
    /// NCCL all-reduce bandwidth per message size (nccl-tests style)
    Allreduce(AllreduceArgs),
    /// One input's totals on 1, 2, 4, 8 GPUs, sharded and gathered, against the CPU's
    Determinism(DeterminismArgs),
}

pub fn run(command: Multigpu) -> Outcome {
    match command {
        Multigpu::Info => info(),
        Multigpu::Sum(args) => sum(args),
        Multigpu::Allreduce(args) => all_reduce(args),
        Multigpu::Determinism(args) => determinism(args),
    }
}

fn info() -> Outcome {
    println!("{}", reduction::multigpu::nccl::multicast_setting());
    match reduction::multigpu::nccl::library() {
        Ok(nccl) => println!("NCCL {} (loaded as {})", nccl.version_string(), nccl.name()),
        Err(e) => println!("{e}"),
    }
    let ranks = Ranks::open(None)?;
    println!("{} visible: {}", ranks.visible(), ranks.describe());
    for gpu in ranks.gpus() {
        println!("{}", gpu.info());
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct SumArgs {
    /// Values on each GPU
    #[arg(long, value_name = "N", default_value = "2^28", value_parser = parse_size)]
    per_gpu: usize,
    /// Values in all (instead of --per-gpu)
    #[arg(long, conflicts_with = "per_gpu", value_parser = parse_size)]
    n: Option<usize>,
    /// The element type
    #[arg(long, default_value = "i32", value_parser = sum_dtype())]
    dtype: Dtype,
    /// What the values are [default: pattern for i32, exact for f32]
    #[arg(long, value_enum)]
    input: Option<InputKind>,
    /// The per-GPU kernel [default: reduce10_last_block]
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Threads per block [default: the kernel's preferred block for the shard]
    #[arg(long, value_name = "THREADS", value_parser = parse_size)]
    block: Option<usize>,
    /// Use the first K visible GPUs [default: all]
    #[arg(long, value_name = "K", value_parser = parse_size)]
    gpus: Option<usize>,
    /// The seed of random and exact inputs
    #[arg(long, default_value = "1", value_parser = parse_seed)]
    seed: u64,
    /// Seconds an NCCL operation may take before the communicator is aborted
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    timeout: Option<Duration>,
    /// Kernel 15 on chunk-aligned shards, every chunk's sum gathered and folded in kernel 15's
    /// order: the same bits on any number of GPUs (f32; --kernel defaults to reduce15_reproducible)
    #[arg(long)]
    gathered: bool,
    /// NCCL's algorithm (sets NCCL_ALGO)
    #[arg(long, value_enum, default_value = "default")]
    algo: AlgoArg,
}

/// The element types the sum across GPUs takes: i32 and f32.
fn sum_dtype() -> impl TypedValueParser<Value = Dtype> {
    let names = [Dtype::I32, Dtype::F32].map(Dtype::name);
    PossibleValuesParser::new(names).map(|s| Dtype::parse(&s).expect("one of the names above"))
}

/// [`Input`] without its seed, which is `--seed`.
#[derive(Clone, Copy, ValueEnum)]
enum InputKind {
    /// (i mod 1000) − 500: a closed-form sum, no host copy
    Pattern,
    /// Random values
    Random,
    /// Exact-by-construction values: a float sum must come back bit for bit
    Exact,
}

fn sum(args: SumArgs) -> Outcome {
    choose_algorithm(args.algo)?;
    let dtype = args.dtype;
    let ranks = Ranks::open(args.gpus)?;
    let n = match args.n {
        Some(n) => n,
        None => args.per_gpu.checked_mul(ranks.len()).ok_or("--per-gpu times the GPU count overflows")?,
    };
    // The largest shard must fit on every GPU (the host only ever holds one chunk per GPU).
    let shard = n.div_ceil(ranks.len());
    let need = Need::elements(format!("a shard of {} {} values", words(shard), dtype.name()), shard, dtype.size_bytes());
    for gpu in ranks.gpus() {
        need.check_device(gpu)?;
    }
    let seed = args.seed;
    let input = match args.input.unwrap_or(if dtype == Dtype::I32 { InputKind::Pattern } else { InputKind::Exact }) {
        InputKind::Pattern => Input::Pattern,
        InputKind::Random => Input::Random { seed },
        InputKind::Exact => Input::Exact { seed },
    };
    let mut options = SumOptions::default();
    if args.gathered {
        options.mode = Mode::Gathered;
        options.kernel = reduction::kernels::names::REDUCE15_REPRODUCIBLE.into();
    }
    if let Some(kernel) = args.kernel {
        options.kernel = kernel;
    }
    options.block = super::block(args.block)?;
    options.nccl_timeout = args.timeout.unwrap_or(options.nccl_timeout);
    let report = match dtype {
        Dtype::I32 => multigpu::sum::<i32>(&ranks, n, input, &options)?,
        Dtype::F32 => multigpu::sum::<f32>(&ranks, n, input, &options)?,
        other => return Err(format!("--dtype must be i32 or f32, not {}", other.name()).into()),
    };
    print!("{}", report.summary());
    Ok(if report.check().is_ok() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

#[derive(Args)]
pub struct AllreduceArgs {
    /// The smallest message (8B, 64KiB, 1GiB, 2^30)
    #[arg(long, value_name = "BYTES", default_value_t = AllReduceConfig::default().min_bytes, value_parser = parse_bytes)]
    min: usize,
    /// The largest message; sizes double from --min
    #[arg(long, value_name = "BYTES", default_value_t = AllReduceConfig::default().max_bytes, value_parser = parse_bytes)]
    max: usize,
    /// Use the first K visible GPUs [default: all]
    #[arg(long, value_name = "K", value_parser = parse_size)]
    gpus: Option<usize>,
    /// Timed repeats per size; the median is kept
    #[arg(long, default_value_t = AllReduceConfig::default().repeats, value_parser = parse_size)]
    repeats: usize,
    /// GPU time one timed repeat aims for, in milliseconds
    #[arg(long, value_name = "MS", default_value_t = AllReduceConfig::default().target_ms)]
    target_ms: f64,
    /// Where the CSV goes; without it, plots/data/nccl, and the book is redrawn
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Seconds an NCCL operation may take before the communicator is aborted
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    timeout: Option<Duration>,
    /// NCCL's algorithm (sets NCCL_ALGO): its own choice, the ring or the tree. NVLS is never
    /// asked for: NVLink multicast stays off
    #[arg(long, value_enum, default_value = "default")]
    algo: AlgoArg,
}

/// [`Algorithm`], for the command line.
#[derive(Clone, Copy, ValueEnum)]
pub enum AlgoArg {
    /// NCCL_ALGO unset (or as the caller set it): NCCL picks per size
    Default,
    /// NCCL_ALGO=Ring
    Ring,
    /// NCCL_ALGO=Tree
    Tree,
}

impl AlgoArg {
    fn algorithm(self) -> Algorithm {
        match self {
            AlgoArg::Default => Algorithm::Default,
            AlgoArg::Ring => Algorithm::Ring,
            AlgoArg::Tree => Algorithm::Tree,
        }
    }
}

/// Ask NCCL for `algo`, first thing (before the GPUs are opened, while this process has one
/// thread): `default` leaves whatever the caller set, checked; the others set `NCCL_ALGO`.
fn choose_algorithm(algo: AlgoArg) -> Result<(), reduction::Error> {
    match algo {
        AlgoArg::Default => nccl::algorithm_setting().map(|_| ()),
        other => nccl::choose_algorithm(other.algorithm()),
    }
}

fn all_reduce(args: AllreduceArgs) -> Outcome {
    choose_algorithm(args.algo)?;
    let mut config = AllReduceConfig { min_bytes: args.min, max_bytes: args.max, repeats: args.repeats, target_ms: args.target_ms, ..AllReduceConfig::default() };
    // Doubling from --min to --max must not overflow; no GPU holds 2^62 bytes anyway.
    for (name, bytes) in [("--min", config.min_bytes), ("--max", config.max_bytes)] {
        if bytes > 1 << 62 {
            return Err(format!("{name} {} is more than any GPU holds", human_bytes(bytes)).into());
        }
    }
    config.nccl_timeout = args.timeout.unwrap_or(config.nccl_timeout);
    let ranks = Ranks::open(args.gpus)?;
    // Each GPU holds a send and a receive buffer of the largest message.
    if let Some(&largest) = allreduce::sizes(config.min_bytes, config.max_bytes).last() {
        let need = Need { what: format!("two all-reduce buffers of {}", human_bytes(largest)), bytes: 2 * largest as u128 };
        for gpu in ranks.gpus() {
            need.check_device(gpu)?;
        }
    }
    let started = std::time::Instant::now();
    let (mut header, rows) = allreduce::run(&ranks, &config)?;
    header.command = command_line();
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("plots/data/nccl"));
    let path = out_dir.join(header.file_name());
    reduction::records::allreduce::write_csv(&path, &header, &rows)?;
    println!("{} sizes in {:.0} s, written to {}", rows.len(), started.elapsed().as_secs_f64(), path.display());
    // How the GPUs are connected, for the chapter's table (the link decides the bandwidth).
    match std::process::Command::new("nvidia-smi").args(["topo", "-m"]).output() {
        Ok(out) if out.status.success() => {
            let topo = path.with_file_name(header.topology_file_name());
            std::fs::write(&topo, &out.stdout)?;
            println!("topology (nvidia-smi topo -m) written to {}", topo.display());
        }
        _ => println!("nvidia-smi topo -m did not run: the topology is not recorded"),
    }
    if args.out.is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct DeterminismArgs {
    /// Work it out on the CPU (no GPU, no NCCL): 1, 2, 4 and 8 simulated GPUs
    #[arg(long)]
    simulate: bool,
    /// Sums per input, mode and GPU count (run-to-run: how many distinct totals)
    #[arg(long, default_value = "3", value_parser = parse_size)]
    runs: usize,
    /// Where the CSV goes [default: plots/data/ranks]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// NCCL's algorithm (sets NCCL_ALGO)
    #[arg(long, value_enum, default_value = "default")]
    algo: AlgoArg,
}

fn determinism(args: DeterminismArgs) -> Outcome {
    use reduction::records::rank_totals;
    let dir = args.out.clone().unwrap_or_else(|| rank_totals::data_dir(std::path::Path::new(".")));
    if args.simulate {
        let started = std::time::Instant::now();
        let rows = multigpu::simulate::table();
        let header = [
            ("source", "CPU simulation (src/multigpu/simulate.rs): kernel 15's transcription on every simulated GPU, every ring order and the pairwise tree across them".to_string()),
            ("command", command_line()),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .to_vec();
        let path = rank_totals::cpu_file(&dir);
        rank_totals::write_csv(&path, &header, &rows)?;
        for r in &rows {
            println!("{:<8} {:<6} n = {:>8} on {} simulated GPU(s): {} ({}){}", r.mode, r.input, r.n, r.ranks, r.total, r.bits, if r.same_as_one_gpu { "" } else { "  <- not one GPU's bits" });
        }
        println!("{} rows in {:.1} s, written to {}", rows.len(), started.elapsed().as_secs_f64(), path.display());
        return Ok(ExitCode::SUCCESS);
    }
    choose_algorithm(args.algo)?;
    let all = Ranks::open(None)?;
    let measured = multigpu::determinism::measure(all.len(), args.runs, true)?;
    let header = multigpu::determinism::header(&all, &command_line())?;
    let path = rank_totals::gpu_file(&dir, &all.gpus()[0].info().name, all.len(), nccl::algorithm_setting()?);
    rank_totals::write_csv(&path, &header, &measured.rows)?;
    println!("{} rows written to {}", measured.rows.len(), path.display());
    if measured.disagreements.is_empty() {
        println!("every total the CPU says no order can change came out with the CPU's bits, in every run");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("DISAGREEMENTS with the CPU:\n{}", measured.disagreements.join("\n"));
        Ok(ExitCode::from(2))
    }
}
