//! The `reduction` command line: one clap type per subcommand, each beside the code that runs it.
//! Options are typed when they are parsed (`--n 2^20`, `--dtype f64,f16,bf16`, `--max 1GiB`);
//! what needs more than one option, or the kernel registry, to be refused is refused by the
//! subcommand, before a GPU is opened.

pub mod accuracy;
pub mod bench;
pub mod book_runs;
pub mod determinism;
pub mod dl;
pub mod exercise;
pub mod mistakes;
pub mod multigpu;
pub mod ops;
pub mod peers;
pub mod rows;
pub mod sum;

use clap::{Parser, Subcommand};
use reduction::records::Machine;
use reduction::Gpu;
use std::process::ExitCode;
use std::time::Duration;

/// The executable book on GPU parallel reduction: its kernels, checked and measured on this GPU.
#[derive(Parser)]
#[command(name = "reduction", version, arg_required_else_help = true)]
#[command(after_help = "Kernels: see `reduction info`. Sizes may be written 1048576, 2^20 or 1e6.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// What the GPU is, and the registered kernels
    Info,
    /// One kernel, checked against the reference
    Sum(sum::SumArgs),
    /// Measure every kernel, write plots/data/<gpu>.csv, redraw the book's charts and tables
    Bench(bench::BenchArgs),
    /// Relative error of f32/f16/bf16 sums by every method
    Accuracy(accuracy::AccuracyArgs),
    /// Determinism levels of every f32 kernel: runs, launch shapes, every visible GPU
    Determinism(determinism::DeterminismArgs),
    /// Sum the rows of one random matrix: which kernel, why, every row checked
    Rows(rows::RowsArgs),
    /// Row sums of several shapes: each strategy and the automatic choice
    RowsBench(rows::RowsBenchArgs),
    /// The deep-learning reductions (softmax, norms, cross-entropy, backward), then their peers
    DlBench(dl::DlBenchArgs),
    /// One operator (max, argmax, mean_var, ...) on one planted input: the launch and the check
    Op(ops::OpArgs),
    /// Every operator, whole arrays and rows, beside the peers: writes plots/data/operators/
    OpsBench(ops::OpsBenchArgs),
    /// Run one mistake in this process (what compute-sanitizer wraps)
    Mistake(mistakes::MistakeArgs),
    /// Run every mistake in a child process under a deadline
    Mistakes(mistakes::MistakesArgs),
    /// Across every visible GPU, with NCCL
    #[command(subcommand)]
    Multigpu(multigpu::Multigpu),
    /// Check your kernel for one of the book's exercises on this GPU
    Exercise(exercise::ExerciseArgs),
    /// Run the commands of the chapters' "Run it" sections and write their output for the book
    BookRuns(book_runs::BookRunsArgs),
}

/// What a subcommand ends with: an exit code, or an error printed as `error: ...` (exit 1).
pub type Outcome = Result<ExitCode, Box<dyn std::error::Error>>;

// ---- value parsers: the syntaxes the book's commands are written in ----

/// `1048576`, `2^20` or `1e6`.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let bad = || format!("{s:?} is not a size (write 1048576, 2^20 or 1e6)");
    if let Some(k) = s.strip_prefix("2^") {
        let k: u32 = k.parse().map_err(|_| bad())?;
        return 1usize.checked_shl(k).filter(|_| k < 63).ok_or_else(bad);
    }
    if let Some((m, e)) = s.split_once('e') {
        let (m, e): (usize, u32) = (m.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?);
        return 10usize.checked_pow(e).and_then(|p| p.checked_mul(m)).ok_or_else(bad);
    }
    s.parse().map_err(|_| bad())
}

/// A size to measure, written as [`parse_size`] reads it, at least 1: a benchmark of no values
/// has nothing to time (and its pool's stride would be 0).
pub fn parse_measured_size(s: &str) -> Result<usize, String> {
    match parse_size(s)? {
        0 => Err(format!("{s:?}: a size to measure must be at least 1")),
        n => Ok(n),
    }
}

/// A seed, written like a size.
pub fn parse_seed(s: &str) -> Result<u64, String> {
    parse_size(s).map(|v| v as u64)
}

/// `1073741824`, `2^30`, `1e9`, or with a unit: `8B`, `64KiB`, `1GiB` (powers of 1024).
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)] {
        if let Some(number) = s.strip_suffix(unit) {
            let value = parse_size(number.trim()).map_err(|_| format!("{s:?} is not a size in bytes (write 8B, 64KiB, 1GiB or 2^30)"))?;
            return value.checked_mul(1 << shift).ok_or_else(|| format!("{s:?} is too large"));
        }
    }
    parse_size(s)
}

/// Seconds, more than 0 and at most a day: `5`, `0.5`.
pub fn parse_seconds(s: &str) -> Result<Duration, String> {
    reduction::child::parse_seconds(s)
}

/// `--block`, if given: a size that also fits in a `u32` (the kernel checks the rest).
pub fn block(block: Option<usize>) -> Result<Option<u32>, String> {
    let words = reduction::limits::count_in_words;
    block.map(|b| u32::try_from(b).map_err(|_| format!("--block {} is far more threads than a block holds", words(b)))).transpose()
}

// ---- what several subcommands share ----

/// Open the GPU for a measurement whose largest input is `largest` (if the reader chose the
/// sizes): the input must fit on the host before the GPU is opened and on the GPU before
/// anything is allocated. Prints what the GPU is.
pub fn open_gpu_for(largest: Option<&reduction::limits::Need>) -> Result<Gpu, Box<dyn std::error::Error>> {
    if let Some(need) = largest {
        need.check_host()?;
    }
    let gpu = Gpu::open()?;
    if let Some(need) = largest {
        need.check_device(&gpu)?;
    }
    eprintln!("{}", gpu.info());
    if let Some(note) = gpu.memory_note() {
        eprintln!("  {note}");
    }
    Ok(gpu)
}

/// The header of a results file: this GPU, today, and the command that measured.
pub fn machine_of(gpu: &Gpu, command: String) -> Machine {
    Machine::of(gpu, command)
}

/// This command line as a reader would retype it, for a results file's header: where the
/// files went (`--out`) is left out.
pub fn command_line() -> String {
    let mut kept = vec!["reduction".to_string()];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--out" {
            args.next();
        } else if !arg.starts_with("--out=") {
            kept.push(arg);
        }
    }
    kept.join(" ")
}

/// Redraw every chart and table from plots/data (no GPU needed).
pub fn render() -> Outcome {
    let mut written = reduction::book::render::render_all(std::path::Path::new("."))?;
    // The exercises added since the recorded GPU run of tests/exercises.rs, named under its counts.
    written.push(reduction::exercises::catalogue::write_unchecked_sentence(std::path::Path::new("."))?);
    for path in &written {
        println!("drew {}", path.display());
    }
    println!("{} files redrawn from plots/data", written.len());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }

    /// Every command line the README, the chapters, tests/gpu-host.sh, the mistakes chapter's
    /// sanitizer runs and the results files' headers write, as written there.
    const DOCUMENTED: &[&str] = &[
        "info",
        "sum --kernel reduce7 --n 2^20 --dtype i32",
        "sum --kernel reduce5_volatile --n 100000 --block 256",
        "sum --kernel reduce2 --n 2^22 --dtype i32 --block 256",
        "sum --kernel reduce10_atomic --dtype f32 --n 2^24 --runs 20 --same-input --block 256",
        "bench",
        "bench --quick",
        "bench --plot-only",
        "bench --out /tmp/out",
        "bench --dtype f64,f16,bf16 --kernels reduce8,reduce9,reduce10_last_block,reduce12 --sizes 2^16,2^20,2^24,2^28,2^30",
        "bench --kernels reduce7,reduce8 --sizes 2^16,2^20 --dtype f32 --block 512",
        "bench --dtype f64,f16,bf16 --out plots/data/types",
        "accuracy",
        "accuracy --out /tmp/out",
        "rows --m 64 --n 1000003",
        "rows --m 4096 --n 768 --stride 1024 --strategy auto --seed 1",
        "rows --strategy split",
        "rows-bench",
        "rows-bench --out /tmp/out/rows",
        "rows-bench --quick --shapes 4096x64,2^10x2^16",
        "op --op argmax --n 2^20 --dtype f16 --input ties",
        "op --op mean_var --rows 4096 --n 768 --dtype bf16",
        "op --op max --n 1000003 --input nan --strategy split --rows 3",
        "ops-bench",
        "ops-bench --quick",
        "ops-bench --ops max,argmax --dtype f32,f16 --sizes 2^20,2^28 --shapes 4096x64 --no-peers --out /tmp/out/operators",
        "dl-bench",
        "dl-bench --quick",
        "dl-bench --budget-s 0 --peers-budget-s 0 --out /tmp/out/dl",
        "dl-bench --shapes 4096x4096,8192x128256 --dtypes bf16 --ops softmax,cross_entropy --no-peers --seed 7",
        "mistake sync_in_branch --n 10000 --runs 1",
        "mistake tail_not_written",
        "mistake grid_barrier_spin --allow-hang --seed 5",
        "mistakes",
        "mistakes --only float_equality --runs 5",
        "mistakes --only a,b --n 2^20 --runs 3 --seed 9 --deadline 5 --startup 60 --record plots/data/mistakes/",
        "mistakes --list",
        "mistakes --table-only",
        "multigpu info",
        "multigpu sum --per-gpu 2^31",
        "multigpu sum --n 1e9 --dtype f32",
        "multigpu sum --n 2^20 --dtype i32 --input random --kernel reduce9 --block 512 --gpus 2 --seed 3 --timeout 30",
        "multigpu allreduce",
        "multigpu allreduce --max 1GiB --out /tmp/out/nccl",
        "multigpu allreduce --min 8 --max 1GiB --gpus 2 --repeats 15 --target-ms 2 --timeout 60",
        "exercise 3",
        "exercise --list",
        "exercise 5 --sanitize racecheck",
        "exercise 9 --file my_kernel.cu --seed 7 --deadline 5 --no-time",
        "exercise 1 --solution",
        "exercise 3 --near-miss sums_99_percent",
        // tests/gpu-host.sh's memory stages (capped, held)
        "sum --kernel reduce9 --n 2^31",
        "bench --kernels reduce9 --dtype f32 --sizes 2^29,2^30 --no-peers --out /tmp/out/bench",
        "rows-bench --dtype f32 --shapes 4096x64 --no-peers --out /tmp/out/rows",
        "accuracy --only sizes --seeds 1 --out /tmp/out/accuracy",
        "determinism --runs 3 --out /tmp/out/determinism",
        "exercise 9 --solution",
    ];

    #[test]
    fn every_documented_command_line_parses() {
        for line in DOCUMENTED {
            if let Err(e) = Cli::try_parse_from(std::iter::once("reduction").chain(line.split_whitespace())) {
                panic!("reduction {line}: {e}");
            }
        }
    }

    #[test]
    fn sizes_and_bytes_are_written_as_the_book_writes_them() {
        assert_eq!(parse_size("2^20"), Ok(1 << 20));
        assert_eq!(parse_size("1e6"), Ok(1_000_000));
        assert_eq!(parse_size("1048613"), Ok(1_048_613));
        assert!(parse_size("2^63").is_err() && parse_size("1e30").is_err() && parse_size("many").is_err());
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_bytes("64KiB"), Ok(64 << 10));
        assert_eq!(parse_bytes("8B"), Ok(8));
        assert_eq!(parse_bytes("8e18"), Ok(8_000_000_000_000_000_000));
        assert!(parse_bytes("xGiB").is_err());
        assert_eq!(block(Some(256)), Ok(Some(256)));
        assert_eq!(block(Some(1 << 33)), Err("--block 2^33 is far more threads than a block holds".into()));
    }
}
