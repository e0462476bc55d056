//! `reduction rows` and `reduction rows-bench`: the row sums of a matrix, one checked, or every
//! shape measured.

use super::{command_line, machine_of, parse_seed, parse_size, render, Outcome};
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use reduction::limits::{count_in_words as words, Need};
use reduction::records::bench as results;
use reduction::measure::rows_bench::{self, RowsBenchConfig};
use reduction::rows::{self, RowLayout, RowReducer, Strategy};
use reduction::Gpu;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct RowsArgs {
    /// Rows
    #[arg(long, default_value = "4096", value_parser = parse_size)]
    m: usize,
    /// Values per row
    #[arg(long, default_value = "768", value_parser = parse_size)]
    n: usize,
    /// Values from one row's start to the next's [default: N]
    #[arg(long, value_parser = parse_size)]
    stride: Option<usize>,
    /// Who sums a row: the host's choice (auto), or a warp, a block or several blocks per row
    #[arg(long, default_value = "auto", value_parser = strategy_choice())]
    strategy: Choice,
    /// The matrix's seed
    #[arg(long, default_value = "1", value_parser = parse_seed)]
    seed: u64,
}

/// A strategy, or `None` for the host's own choice (`auto`).
#[derive(Clone, Copy)]
struct Choice(Option<Strategy>);

/// `auto` or one of [`Strategy`]'s names.
fn strategy_choice() -> impl TypedValueParser<Value = Choice> {
    PossibleValuesParser::new(std::iter::once("auto").chain(Strategy::ALL.map(Strategy::name))).map(|s| Choice(Strategy::parse(&s)))
}

/// `reduction rows`: the row sums of one random matrix, with the launch, the reason for it, and
/// every row checked against the reference.
pub fn one(args: RowsArgs) -> Outcome {
    let RowsArgs { m, n, seed, .. } = args;
    let stride = args.stride.unwrap_or(n);
    let layout = RowLayout::strided(m, n, stride);
    let len = layout.required_len()?;
    // The matrix on the host and on the GPU; on the host also each row's sum and reference.
    let matrix = match stride == n {
        true => format!("a {} × {} f32 matrix", words(m), words(n)),
        false => format!("a {} × {} f32 matrix (row stride {})", words(m), words(n), words(stride)),
    };
    Need { what: format!("{matrix} with its row sums"), bytes: len as u128 * 4 + m as u128 * 12 }.check_host()?;
    let gpu = Gpu::open()?;
    Need { what: format!("{matrix} with its row sums"), bytes: len as u128 * 4 + m as u128 * 4 }.check_device(&gpu)?;
    let mut reducer = RowReducer::with_strategy(&gpu, args.strategy.0)?;
    let launch = reducer.plan(layout)?;
    match launch {
        Some(launch) => println!("{layout}: {launch}"),
        None => println!("{layout}: nothing to add, no launch"),
    }
    let xs: Vec<f32> = reduction::data::random_parallel(len, seed);
    let sums = reducer.sum_host(&xs, layout)?;
    let depth = launch.map_or(0, |l| l.addition_depth(n));
    reduction::check::rows::check_rows(&sums, &reduction::check::rows::row_references(&xs, layout), depth)?;
    println!("all {m} row sums are within the f32 error bound of their f64 reference; the first: {:?}", &sums[..m.min(4)]);
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct RowsBenchArgs {
    /// Shapes to measure, MxN [default: 4096 × 64, and M·N = 2^28 from 2^20 × 2^8 to 16 × 2^24]
    #[arg(long, value_name = "MxN,...", value_delimiter = ',', value_parser = parse_shape)]
    shapes: Option<Vec<(usize, usize)>>,
    /// Where the CSV goes; without it, plots/data/rows, and the chapter is redrawn
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The inputs' seed
    #[arg(long, default_value_t = RowsBenchConfig::default().seed, value_parser = parse_seed)]
    seed: u64,
    /// A few shapes, shorter timings
    #[arg(long)]
    quick: bool,
    /// Input types (f32 with every strategy, f16 and bf16 with the automatic choice)
    #[arg(long = "dtype", value_name = "TYPE,...", value_delimiter = ',', default_value = "f32,f16,bf16")]
    dtypes: Vec<reduction::element::Dtype>,
    /// Do not run plots/tile_peers.py (TileLang, Triton and torch.sum on the same shapes) afterwards
    #[arg(long)]
    no_peers: bool,
}

/// `4096x64`, `2^10x2^16` (for other commands' --shapes).
pub fn parse_shape_arg(shape: &str) -> Result<(usize, usize), String> {
    parse_shape(shape)
}

/// `4096x64`, `2^10x2^16`.
pub(crate) fn parse_shape(shape: &str) -> Result<(usize, usize), String> {
    let (m, n) = shape.split_once('x').ok_or(format!("{shape:?} is not a shape (write MxN: 4096x64, 2^10x2^16)"))?;
    Ok((parse_size(m)?, parse_size(n)?))
}

/// `reduction rows-bench`: every shape with each strategy and the automatic choice, written to
/// plots/data/rows/<gpu>.csv (or --out), then the chapter's table and chart redrawn.
pub fn bench(args: RowsBenchArgs) -> Outcome {
    let mut config = RowsBenchConfig::default();
    if args.quick {
        config.shapes = rows_bench::quick_shapes();
        config.target_ms = 1.0;
    }
    let shapes_asked = args.shapes.is_some();
    if let Some(shapes) = args.shapes {
        config.shapes = shapes;
    }
    config.seed = args.seed;
    config.dtypes = args.dtypes.clone();
    let out_dir = args.out.clone().unwrap_or_else(|| reduction::records::rows::results_dir(Path::new("plots/data")));
    // The largest matrix must fit on the host (the pool's copy) and on the GPU.
    let mut largest: Option<(usize, usize, usize)> = None;
    for &(m, n) in &config.shapes {
        let values = m.checked_mul(n).ok_or(format!("{} × {} is more values than a 64-bit index holds", words(m), words(n)))?;
        if largest.is_none_or(|(_, _, v)| values > v) {
            largest = Some((m, n, values));
        }
    }
    let largest = largest.map(|(m, n, values)| Need::elements(format!("a {} × {} f32 matrix", words(m), words(n)), values, 4));
    // The pool's host copy must fit. On the GPU, shapes asked for must fit; of the default
    // ones, what does not fit is skipped, with why.
    if let Some(need) = &largest {
        need.check_host()?;
    }
    let gpu = super::open_gpu_for(largest.as_ref().filter(|_| shapes_asked))?;
    let started = std::time::Instant::now();
    let measured = rows_bench::bench(&gpu, &config)?;
    let machine = machine_of(&gpu, command_line());
    let path = out_dir.join(format!("{}.csv", reduction::records::slug(&gpu.info().name)));
    results::write_csv(&path, &machine, &measured)?;
    println!("{}: row sums of M × N f32 matrices (µs per M sums; the fastest in bold)\n", machine.gpu);
    println!("{}", reduction::book::chapters::rows::table(&machine, &measured));
    println!("Why the host picks what it picks ({} SMs):", machine.sm_count);
    let mut reasons: Vec<(Strategy, &str)> = Vec::new();
    for &(m, n) in &config.shapes {
        let choice = rows::choose(m, n, machine.sm_count);
        if !reasons.contains(&choice) {
            reasons.push(choice);
        }
    }
    for (strategy, why) in reasons {
        println!("  {:<5}  {why}", strategy.name());
    }
    println!("\n{} measurements in {:.0} s, written to {}", measured.len(), started.elapsed().as_secs_f64(), path.display());
    if !args.no_peers {
        // The peers in the same run, on the same GPU, right after: the rows beside ours, the
        // whole-array sums beside the benchmark's (with --out DIR: DIR and DIR/tile).
        let sums_dir = match &args.out {
            Some(dir) => dir.join("tile"),
            None => reduction::records::tile::results_dir(Path::new("plots/data")),
        };
        let shapes: Vec<String> = config.shapes.iter().map(|(m, n)| format!("{m}x{n}")).collect();
        // Under a cap, the peers get what is left of it while this process holds its context
        // (after a synchronisation, so that the freed pool is given back to the driver first).
        gpu.synchronize()?;
        let budget = match gpu.memory_cap() {
            Some(_) => Some(gpu.memory()?.0),
            None => None,
        };
        run_peers(&out_dir, &sums_dir, &shapes.join(","), budget);
    }
    if args.out.is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

/// Run `python3 plots/tile_peers.py` on the same shapes, and say what became of it: the peers
/// are not part of the book's own measurement, so a missing Python, PyTorch, TileLang or Triton
/// is reported, not fatal. With `budget`, the script is told (in `REDUCTION_DEVICE_MEMORY`) to
/// fit in that many bytes of device memory.
fn run_peers(rows_dir: &Path, sums_dir: &Path, shapes: &str, budget: Option<usize>) {
    let script = Path::new("plots/tile_peers.py");
    if !script.is_file() {
        println!("peers not measured: {} not found (run from the repository's root)", script.display());
        return;
    }
    println!("\nthe peers on the same shapes: python3 {} (TileLang, Triton, torch.sum)", script.display());
    let mut command = std::process::Command::new("python3");
    if let Some(bytes) = budget {
        command.env(reduction::device_memory::VAR, bytes.to_string());
    }
    let status = command
        .arg(script)
        .arg("--rows-out").arg(rows_dir)
        .arg("--sums-out").arg(sums_dir)
        .arg("--shapes").arg(shapes)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => println!("peers not measured: python3 {} exited with {s} (it says why above)", script.display()),
        Err(e) => println!("peers not measured: python3 could not be started: {e}"),
    }
}
