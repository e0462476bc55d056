//! `reduction op` and `reduction ops-bench`: one operator on one random input, checked; or every
//! operator measured, with the peers in the same run.

use super::{command_line, machine_of, parse_measured_size, parse_seed, parse_size, render, Outcome};
use clap::Args;
use reduction::records::operators as ops_records;
use reduction::check::ops::{self as checks, Case, OpInput};
use reduction::element::{bf16, f16, Dtype};
use reduction::kernels::ops::{row_depth, Op, OpReducer};
use reduction::limits::{count_in_words as words, Need};
use reduction::measure::ops_bench::{self, OpsBenchConfig};
use reduction::rows::{RowLayout, Strategy};
use reduction::Gpu;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct OpArgs {
    /// The operator
    #[arg(long = "op", value_enum)]
    op: Op,
    /// Values (per row, with --rows)
    #[arg(long, default_value = "2^20", value_parser = parse_size)]
    n: usize,
    /// Rows: M results of N values each (1: the whole array)
    #[arg(long, default_value = "1", value_parser = parse_size)]
    rows: usize,
    #[arg(long, default_value = "f32")]
    dtype: Dtype,
    /// What the input plants: random, ties, nan, infinities, first, last, all_negative, ...
    #[arg(long, default_value = "random", value_parser = case_of)]
    input: Case,
    /// Row strategy: auto, warp, block or split
    #[arg(long, default_value = "auto")]
    strategy: String,
    #[arg(long, default_value = "1", value_parser = parse_seed)]
    seed: u64,
}

fn case_of(s: &str) -> Result<Case, String> {
    [Case::Random, Case::AllNegative, Case::Ties, Case::Nan, Case::Infinities, Case::Last, Case::First, Case::SignedZeros, Case::AllLowest, Case::NanInFirstPack, Case::IntegerLimits]
        .into_iter()
        .find(|c| c.name() == s)
        .ok_or_else(|| format!("{s:?} is not an input (random, all_negative, ties, nan, infinities, last, first, signed_zeros, all_lowest, nan_in_first_pack, integer_limits)"))
}

/// `reduction op`: one operator on one planted input, the launch, the result and its check.
pub fn one(args: OpArgs) -> Outcome {
    match args.dtype {
        Dtype::F32 => one_typed::<f32>(&args),
        Dtype::F16 => one_typed::<f16>(&args),
        Dtype::BF16 => one_typed::<bf16>(&args),
        Dtype::I32 => one_typed::<i32>(&args),
        Dtype::F64 => Err("the operators take f32, f16, bf16 or i32".into()),
    }
}

fn one_typed<T: OpInput>(args: &OpArgs) -> Outcome {
    let (op, n, m) = (args.op, args.n, args.rows);
    let strategy = match args.strategy.as_str() {
        "auto" => None,
        s => Some(Strategy::parse(s).ok_or(format!("--strategy {s}: write auto, warp, block or split"))?),
    };
    let values = m.checked_mul(n).ok_or("more values than a 64-bit index holds")?;
    let need = Need::values(values, T::DTYPE);
    need.check_host()?;
    let gpu = Gpu::open()?;
    need.check_device(&gpu)?;
    let mut reducer = OpReducer::new(&gpu, op, T::DTYPE)?;
    reducer.set_strategy(strategy);
    let xs: Vec<T> = if m == 1 { checks::input(op, args.input, n, args.seed) } else { checks::row_input(op, args.input, m, n, n, args.seed) };
    let input = gpu.upload(&xs)?;
    if m == 1 {
        let launch = reducer.plan_whole(n)?;
        println!("{op} of {} {} values ({}): grid {} × {} threads, one pass, the last block combines", words(n), T::DTYPE, args.input.name(), launch.grid, launch.block);
        let got = reducer.whole(&input.as_view())?;
        let expected = checks::reference_parallel(op, &xs).ok_or("no reference for an empty input")?;
        println!("result: {got:?}\nreference: {expected:?}");
        checks::check(op, got, &expected, launch.depth(n as u64, T::DTYPE))?;
        println!("correct ({})", if matches!(op, Op::Max | Op::Min | Op::Argmax | Op::Argmin) { "exactly" } else { "within the bound of this launch" });
    } else {
        let layout = RowLayout::dense(m, n);
        let launch = reducer.plan_rows(layout)?.ok_or("nothing to launch")?;
        println!("{op} of each row of {layout} {} ({}): {launch}", T::DTYPE, args.input.name());
        let got = reducer.rows(&input.as_view(), layout)?;
        let depth = row_depth(&launch, n as u64, T::DTYPE);
        for (r, g) in got.iter().enumerate() {
            let expected = checks::reference(op, &xs[r * n..(r + 1) * n]).ok_or("no reference for an empty row")?;
            checks::check(op, *g, &expected, depth).map_err(|why| format!("row {r}: {why}"))?;
        }
        println!("all {m} rows correct; the first: {:?}", &got[..m.min(3)]);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct OpsBenchArgs {
    /// Operators [default: max, min, argmax, argmin, mean_var, sumsq, sum]
    #[arg(long, value_delimiter = ',', value_enum)]
    ops: Option<Vec<Op>>,
    /// Input types
    #[arg(long = "dtype", value_name = "TYPE,...", value_delimiter = ',', default_value = "f32,f16,bf16,i32")]
    dtypes: Vec<Dtype>,
    /// Whole-array sizes [default: 2^10 … 2^30]
    #[arg(long, value_delimiter = ',', value_parser = parse_measured_size)]
    sizes: Option<Vec<usize>>,
    /// Row shapes, MxN [default: 4096 × 64, and M·N = 2^28 from 2^20 × 2^8 to 16 × 2^24]
    #[arg(long, value_name = "MxN,...", value_delimiter = ',', value_parser = super::rows::parse_shape)]
    shapes: Option<Vec<(usize, usize)>>,
    /// Fewer sizes and shapes, shorter timings
    #[arg(long)]
    quick: bool,
    /// Where the CSVs go; without it, plots/data/operators, and the chapter is redrawn
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Do not run plots/op_peers.py (torch, CuPy, Triton, TileLang on the same sizes) afterwards
    #[arg(long)]
    no_peers: bool,
    #[arg(long, default_value_t = OpsBenchConfig::default().seed, value_parser = parse_seed)]
    seed: u64,
}

/// `reduction ops-bench`: every operator, whole arrays and rows, written to
/// plots/data/operators/<gpu>.csv, the peers to <gpu>-peers.csv by plots/op_peers.py in the same
/// run, then the chapter's tables and charts redrawn.
pub fn bench(args: OpsBenchArgs) -> Outcome {
    let mut config = if args.quick { OpsBenchConfig::quick() } else { OpsBenchConfig::default() };
    if let Some(ops) = args.ops {
        config.ops = ops;
    }
    if let Some(sizes) = args.sizes {
        config.sizes = sizes;
    }
    if let Some(shapes) = args.shapes {
        config.shapes = shapes;
    }
    config.dtypes = args.dtypes.clone();
    config.seed = args.seed;
    let out_dir = args.out.clone().unwrap_or_else(|| ops_records::results_dir(Path::new("plots/data")));
    let gpu = super::open_gpu_for(None)?;
    let started = std::time::Instant::now();
    let measured = ops_bench::bench(&gpu, &config)?;
    let machine = machine_of(&gpu, command_line());
    let path = out_dir.join(format!("{}.csv", reduction::records::slug(&gpu.info().name)));
    ops_records::write_csv(&path, &machine, &measured)?;
    println!("\n{} measurements in {:.0} s, written to {}", measured.len(), started.elapsed().as_secs_f64(), path.display());
    if !args.no_peers {
        let sizes: Vec<String> = config.sizes.iter().map(|n| n.to_string()).collect();
        let shapes: Vec<String> = config.shapes.iter().map(|(m, n)| format!("{m}x{n}")).collect();
        let ops: Vec<&str> = config.ops.iter().filter(|op| Op::CHAPTER.contains(op)).map(|op| op.name()).collect();
        let dtypes: Vec<&str> = config.dtypes.iter().map(|d| d.name()).collect();
        run_peers(&out_dir, &sizes.join(","), &shapes.join(","), &dtypes.join(","), &ops.join(","));
    }
    if args.out.is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

/// Run `python3 plots/op_peers.py` on the same sizes and shapes, and say what became of it: the
/// peers are not the book's own measurement, so a missing Python or library is reported, not fatal.
fn run_peers(out_dir: &Path, sizes: &str, shapes: &str, dtypes: &str, ops: &str) {
    let script = Path::new("plots/op_peers.py");
    if !script.is_file() {
        println!("peers not measured: {} not found (run from the repository's root)", script.display());
        return;
    }
    println!("\nthe peers on the same sizes and shapes: python3 {} (torch, CuPy, Triton, TileLang)", script.display());
    let status = std::process::Command::new("python3")
        .arg(script)
        .arg("--out").arg(out_dir)
        .arg("--sizes").arg(sizes)
        .arg("--shapes").arg(shapes)
        .arg("--dtypes").arg(dtypes)
        .arg("--ops").arg(ops)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => println!("peers not measured: python3 {} exited with {s} (it says why above)", script.display()),
        Err(e) => println!("peers not measured: python3 could not be started: {e}"),
    }
}
