//! `reduction`: the book's command line.
//!
//!   reduction info                          what the GPU is
//!   reduction sum --kernel reduce3 ...      one kernel, checked against the reference
//!   reduction bench [options]               measure every kernel, write plots/data/<gpu>.csv
//!   reduction rows --m M --n N ...          the row sums of one matrix: which kernel, why, checked
//!   reduction rows-bench [options]          measure the row sums, write plots/data/rows/<gpu>.csv
//!   reduction mistake NAME ...              one of the chapter's mistakes, in this process
//!   reduction mistakes [options]            every mistake, each in a child process under a deadline
//!   reduction multigpu sum|allreduce|info   across every visible GPU, with NCCL

use reduction::bench::{self, BenchConfig};
use reduction::data::Checked;
use reduction::results::{self, Machine, Row};
use reduction::rows::{self, RowLayout, RowReducer, Strategy};
use reduction::measure::rows_bench::{self, RowsBenchConfig};
use reduction::limits::{count_in_words as words, Need};
use reduction::{kernels, Dtype, Error, Gpu, Reducer};
use reduction::guard::{self, Class, Deadline, Observation};
use reduction::mistakes::{self, Recorded, Records, RunOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage:
  reduction info
  reduction sum   --kernel NAME [--block 256] [--n 1048576] [--dtype f32|i32|f64|f16|bf16] [--runs 1] [--seed 1]
                  [--same-input]        sum one input --runs times and count the distinct results
  reduction bench [--sizes 2^10,2^20,...] [--kernels reduce1,...] [--dtype f32,i32,...] [--block B]
                  [--out plots/data] [--quick]
  reduction bench --plot-only           redraw every chart and table from plots/data, no GPU
  reduction accuracy [--max 2^30] [--seeds 3] [--out plots/data]
                                        relative error of f32/f16/bf16 sums by every method
  reduction rows  --m 4096 --n 768 [--stride S] [--strategy auto|warp|block|split] [--seed 1]
                                        sum the rows of one random matrix: which kernel, why, every row checked
  reduction rows-bench [--quick] [--shapes 4096x64,2^10x2^16,...] [--out plots/data/rows]
                                        row sums at M·N = 2^28 and 4096 × 64: each strategy and the automatic choice
  reduction mistake NAME [--n 1048613] [--runs 20] [--seed 2007]
                                        run one mistake in this process (what compute-sanitizer wraps)
  reduction mistakes [--only NAME,...] [--n N] [--runs R] [--seed S] [--deadline 5] [--startup 60]
                     [--record plots/data/mistakes/]
                                        run every mistake in a child process under a deadline
  reduction mistakes --list             the mistakes, and what each is expected to do
  reduction mistakes --table-only       redraw the chapter's mistakes tables from plots/data, no GPU
  reduction multigpu info               the GPUs, NCCL, and the multicast setting
  reduction multigpu sum [--per-gpu 2^28 | --n N] [--dtype i32|f32] [--input pattern|random|exact]
                         [--kernel reduce10_last_block] [--block B] [--gpus K] [--seed S]
                                        shard, sum on each GPU, add across GPUs with NCCL, check
  reduction multigpu allreduce [--min 8] [--max 1GiB] [--gpus K] [--repeats 15] [--out plots/data/nccl]
                                        NCCL all-reduce bandwidth per message size (nccl-tests style)

kernels: see `reduction info`. Sizes may be written 2^k.";

fn main() -> ExitCode {
    // First, while this process has one thread: NCCL must never turn NVLink multicast on (see
    // reduction::nccl::keep_multicast_off), and it reads the setting when it starts.
    if let reduction::nccl::Multicast::AlreadySet(v) = reduction::nccl::keep_multicast_off() {
        if v != "0" {
            eprintln!(
                "warning: {}={v} was set by the caller and is left alone: NCCL may use NVLink multicast, \
                 which can take a shared machine's GPUs out of service; unset it or set it to 0",
                reduction::nccl::NVLS_VAR
            );
        }
    }
    // A child process of `reduction mistakes`: run the mistake its environment names, report,
    // and exit, before anything else (and without ever returning to the code below).
    if let Some(code) = mistakes::run_child_if_asked() {
        std::process::exit(code);
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("info") => info(),
        Some("sum") => sum(&args[1..]),
        Some("bench") => run_bench(&args[1..]),
        Some("accuracy") => run_accuracy(&args[1..]),
        Some("rows") => rows_one(&args[1..]),
        Some("rows-bench") => rows_bench(&args[1..]),
        Some("mistake") => mistake(&args[1..]),
        Some("mistakes") => run_mistakes(&args[1..]),
        Some("multigpu") => multigpu(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(format!("{USAGE}").into()),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

type Outcome = Result<ExitCode, Box<dyn std::error::Error>>;

/// `--name value` pairs; every option must be known, so a typo is an error, not a default.
struct Options {
    pairs: Vec<(String, Option<String>)>,
}

impl Options {
    fn parse(args: &[String], known: &[&str], flags: &[&str]) -> Result<Options, String> {
        let mut pairs = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let name = args[i].strip_prefix("--").ok_or(format!("unexpected argument {:?}\n{USAGE}", args[i]))?;
            if flags.contains(&name) {
                pairs.push((name.to_string(), None));
                i += 1;
            } else if known.contains(&name) {
                let value = args.get(i + 1).ok_or(format!("--{name} needs a value"))?;
                pairs.push((name.to_string(), Some(value.clone())));
                i += 2;
            } else {
                return Err(format!("unknown option --{name}\n{USAGE}"));
            }
        }
        Ok(Options { pairs })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| v.as_deref())
    }

    fn flag(&self, name: &str) -> bool {
        self.pairs.iter().any(|(n, _)| n == name)
    }

    fn number(&self, name: &str, default: usize) -> Result<usize, String> {
        self.get(name).map(parse_size).unwrap_or(Ok(default))
    }

    /// `--block`, if given: a size that also fits in a `u32` (the kernel checks the rest).
    fn block(&self) -> Result<Option<u32>, String> {
        self.get("block").map(|b| parse_size(b).and_then(|v| u32::try_from(v).map_err(|_| format!("--block {b} is far more threads than a block holds")))).transpose()
    }
}

/// `1048576`, `2^20` or `1e6`.
fn parse_size(s: &str) -> Result<usize, String> {
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

fn info() -> Outcome {
    let gpu = Gpu::open()?;
    println!("{}", gpu.info());
    match reduction::nvrtc::version() {
        Ok((major, minor)) => println!("  NVRTC {major}.{minor}"),
        Err(e) => println!("  {e}"),
    }
    println!("\nkernels:");
    for k in kernels::all() {
        println!("  {:<18} chapter {}  {:<34} blocks {}..{}  {}", k.name, k.chapter, k.title, k.min_block, k.max_block, k.file);
    }
    Ok(ExitCode::SUCCESS)
}

fn sum(args: &[String]) -> Outcome {
    let opts = Options::parse(args, &["kernel", "block", "n", "dtype", "runs", "seed"], &["same-input"])?;
    let same_input = opts.flag("same-input");
    let kernel = opts.get("kernel").ok_or("--kernel is required")?;
    let block = opts.block()?.unwrap_or(256);
    let n = opts.number("n", 1 << 20)?;
    let runs = opts.number("runs", 1)?;
    let seed = opts.number("seed", 1)? as u64;
    let dtype = Dtype::parse(opts.get("dtype").unwrap_or("f32")).ok_or("--dtype must be f32, i32, f64, f16 or bf16")?;
    // Everything that can be refused without a GPU is refused before one is opened.
    let spec = kernels::find(kernel)?;
    if !spec.supports(dtype) {
        return Err(Error::unsupported_dtype(spec, dtype).into());
    }
    // The input is made on the host, then copied to the GPU.
    let input = Need::values(n, dtype);
    input.check_host()?;
    let gpu = Gpu::open()?;
    input.check_device(&gpu)?;
    let wrong = match dtype {
        Dtype::F32 => sum_runs::<f32>(&gpu, kernel, block, n, runs, seed, same_input)?,
        Dtype::I32 => sum_runs::<i32>(&gpu, kernel, block, n, runs, seed, same_input)?,
        Dtype::F64 => sum_runs::<f64>(&gpu, kernel, block, n, runs, seed, same_input)?,
        Dtype::F16 => sum_runs::<half::f16>(&gpu, kernel, block, n, runs, seed, same_input)?,
        Dtype::BF16 => sum_runs::<half::bf16>(&gpu, kernel, block, n, runs, seed, same_input)?,
    };
    println!("{kernel} {} n={n} block={block}: {wrong} of {runs} runs wrong", dtype.name());
    Ok(if wrong == 0 { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

/// Sum `runs` fresh inputs (or, with `same_input`, one input `runs` times, counting the distinct
/// results: a deterministic kernel gives one) and return how many sums were wrong.
fn sum_runs<T: Checked>(gpu: &Gpu, kernel: &str, block: u32, n: usize, runs: usize, seed: u64, same_input: bool) -> Result<usize, Box<dyn std::error::Error>> {
    let mut reducer = Reducer::<T>::new(gpu, kernel, block)?;
    let mut wrong = 0;
    let mut distinct: Vec<String> = Vec::new();
    for run in 0..runs {
        let xs = T::random(n, if same_input { seed } else { seed + run as u64 });
        let input = gpu.upload(&xs)?;
        reducer.poison_outputs(n)?;
        let got = reducer.sum(&input.as_view())?;
        if let Err(why) = reducer.check(got, &T::reference(&xs)) {
            wrong += 1;
            println!("run {run}: WRONG: {why}");
        }
        let shown = format!("{got:?}");
        if !distinct.contains(&shown) {
            distinct.push(shown);
        }
    }
    if same_input {
        println!("{kernel} {} n={n} block={block}: {} distinct result(s) from {runs} runs on one input: {}", T::SUFFIX, distinct.len(), distinct.join(", "));
    }
    Ok(wrong)
}

fn run_bench(args: &[String]) -> Outcome {
    let opts = Options::parse(args, &["sizes", "kernels", "dtype", "block", "out", "seed"], &["quick", "plot-only"])?;
    if opts.flag("plot-only") {
        return render();
    }
    let mut config = BenchConfig::new();
    if opts.flag("quick") {
        config.sizes = (10..=26).step_by(4).map(|k| 1usize << k).collect();
        config.target_ms = 1.0;
    }
    if let Some(list) = opts.get("sizes") {
        config.sizes = list.split(',').map(parse_size).collect::<Result<_, _>>()?;
    }
    if let Some(list) = opts.get("kernels") {
        config.kernels = list.split(',').map(kernels::find).collect::<Result<_, _>>()?;
    }
    if let Some(list) = opts.get("dtype") {
        config.dtypes = list.split(',').map(|d| Dtype::parse(d).ok_or(format!("unknown dtype {d:?}"))).collect::<Result<_, _>>()?;
    }
    config.block = opts.block()?;
    config.seed = opts.number("seed", config.seed as usize)? as u64;
    let out_dir = PathBuf::from(opts.get("out").unwrap_or("plots/data"));
    // Sizes asked for must fit, on the host (the pool's copy for the references) and on the
    // GPU. The default sweep is the program's own choice: what does not fit there is skipped.
    let largest = opts.get("sizes").map(|_| bench_need(&config)).transpose()?.flatten();
    if let Some(need) = &largest {
        need.check_host()?;
    }

    let gpu = Gpu::open()?;
    if let Some(need) = &largest {
        need.check_device(&gpu)?;
    }
    eprintln!("{}", gpu.info());
    let started = std::time::Instant::now();
    let rows = bench::run(&gpu, &config)?;
    let machine = machine_of(&gpu, bench_command("bench", args));
    let slug = results::slug(&gpu.info().name);
    let path = out_dir.join(format!("{slug}.csv"));
    results::write_csv(&path, &machine, &rows)?;
    print_summary(&machine, &rows);
    println!("\n{} measurements in {:.0} s, written to {}", rows.len(), started.elapsed().as_secs_f64(), path.display());
    if opts.get("out").is_none() {
        // The book now shows this GPU: its tables and charts are redrawn from the new data.
        std::fs::write(out_dir.join("book-gpu.txt"), format!("{slug}\n"))?;
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

/// The largest input `config` asks for, in its widest element type.
fn bench_need(config: &BenchConfig) -> Result<Option<Need>, String> {
    // The first of the widest, so that the message names the type asked for first.
    let widest = config.dtypes.iter().copied().min_by_key(|d| std::cmp::Reverse(d.size_bytes())).ok_or("--dtype names no element type")?;
    Ok(config.sizes.iter().copied().max().map(|n| Need::values(n, widest)))
}

fn run_accuracy(args: &[String]) -> Outcome {
    let opts = Options::parse(args, &["max", "seeds", "out"], &[])?;
    let max = opts.number("max", 1 << 30)?;
    let seeds = opts.number("seeds", 3)? as u64;
    let sizes: Vec<usize> = (10..=30).step_by(2).map(|k| 1usize << k).filter(|&n| n <= max).collect();
    // The largest size, as f32 values and their f64 copy on the host, and as f32 on the GPU.
    let largest = sizes.iter().copied().max().unwrap_or(0);
    Need::elements(format!("{} f32 values and their f64 copy", words(largest)), largest, 12).check_host()?;
    let gpu = Gpu::open()?;
    Need::values(largest, Dtype::F32).check_device(&gpu)?;
    eprintln!("{}", gpu.info());
    let rows = reduction::accuracy::run(&gpu, &sizes, seeds)?;
    let data_dir = PathBuf::from(opts.get("out").unwrap_or("plots/data"));
    let path = reduction::book::accuracy::book_file(&data_dir, &gpu.info().name);
    let machine = machine_of(&gpu, bench_command("accuracy", args));
    reduction::book::accuracy::write_csv(&path, &machine, &rows)?;
    println!("{}", reduction::book::accuracy::table(&machine.gpu, &rows));
    println!("{} measurements written to {}", rows.len(), path.display());
    if opts.get("out").is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

/// The header of a results file: this GPU, today, and the command that measured.
fn machine_of(gpu: &Gpu, command: String) -> Machine {
    reduction::measure::machine(gpu, command)
}

/// The command line as a reader would retype it: where the files went is left out.
fn bench_command(subcommand: &str, args: &[String]) -> String {
    let mut kept = vec!["reduction".to_string(), subcommand.to_string()];
    let mut skip_next = false;
    for arg in args {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if arg == "--out" {
            skip_next = true;
            continue;
        }
        kept.push(arg.clone());
    }
    kept.join(" ")
}

/// `reduction rows`: the row sums of one random matrix, with the launch, the reason for it, and
/// every row checked against the reference.
fn rows_one(args: &[String]) -> Outcome {
    let opts = Options::parse(args, &["m", "n", "stride", "strategy", "seed"], &[])?;
    let (m, n) = (opts.number("m", 4096)?, opts.number("n", 768)?);
    let stride = opts.number("stride", n)?;
    let seed = opts.number("seed", 1)? as u64;
    let strategy = match opts.get("strategy").unwrap_or("auto") {
        "auto" => None,
        s => Some(Strategy::parse(s).ok_or(format!("--strategy must be auto, warp, block or split, not {s:?}"))?),
    };
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
    let mut reducer = RowReducer::with_strategy(&gpu, strategy)?;
    let launch = reducer.plan(layout)?;
    match launch {
        Some(launch) => println!("{layout}: {launch}"),
        None => println!("{layout}: nothing to add, no launch"),
    }
    let xs: Vec<f32> = reduction::data::random_parallel(len, seed);
    let sums = reducer.sum_host(&xs, layout)?;
    let depth = launch.map_or(0, |l| l.addition_depth(n));
    rows::check_rows(&sums, &rows::row_references(&xs, layout), depth)?;
    println!("all {m} row sums are within the f32 error bound of their f64 reference; the first: {:?}", &sums[..m.min(4)]);
    Ok(ExitCode::SUCCESS)
}

/// `reduction rows-bench`: every shape with each strategy and the automatic choice, written to
/// plots/data/rows/<gpu>.csv (or --out), then the chapter's table and chart redrawn.
fn rows_bench(args: &[String]) -> Outcome {
    let opts = Options::parse(args, &["shapes", "out", "seed"], &["quick"])?;
    let mut config = RowsBenchConfig::default();
    if opts.flag("quick") {
        config.shapes = rows_bench::quick_shapes();
        config.target_ms = 1.0;
    }
    if let Some(list) = opts.get("shapes") {
        config.shapes = list.split(',').map(|shape| {
            let (m, n) = shape.split_once('x').ok_or(format!("{shape:?} is not a shape (write MxN: 4096x64, 2^10x2^16)"))?;
            Ok::<_, String>((parse_size(m)?, parse_size(n)?))
        }).collect::<Result<_, _>>()?;
    }
    config.seed = opts.number("seed", config.seed as usize)? as u64;
    let out_dir = opts.get("out").map(PathBuf::from).unwrap_or_else(|| reduction::book::rows::results_dir(Path::new("plots/data")));
    // The largest matrix must fit on the host (the pool's copy) and on the GPU.
    let mut largest: Option<(usize, usize, usize)> = None;
    for &(m, n) in &config.shapes {
        let values = m.checked_mul(n).ok_or(format!("{} × {} is more values than a 64-bit index holds", words(m), words(n)))?;
        if largest.map_or(true, |(_, _, v)| values > v) {
            largest = Some((m, n, values));
        }
    }
    let largest = largest.map(|(m, n, values)| Need::elements(format!("a {} × {} f32 matrix", words(m), words(n)), values, 4));
    if let Some(need) = &largest {
        need.check_host()?;
    }

    let gpu = Gpu::open()?;
    if let Some(need) = &largest {
        need.check_device(&gpu)?;
    }
    eprintln!("{}", gpu.info());
    let started = std::time::Instant::now();
    let measured = rows_bench::bench(&gpu, &config)?;
    let machine = machine_of(&gpu, bench_command("rows-bench", args));
    let path = out_dir.join(format!("{}.csv", results::slug(&gpu.info().name)));
    results::write_csv(&path, &machine, &measured)?;
    println!("{}: row sums of M × N f32 matrices (µs per M sums; the fastest in bold)\n", machine.gpu);
    println!("{}", reduction::book::rows::table(&machine, &measured));
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
    if opts.get("out").is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

/// Redraw every chart and table from plots/data (no GPU needed).
fn render() -> Outcome {
    let written = reduction::render::render_all(std::path::Path::new("."))?;
    for path in &written {
        println!("drew {}", path.display());
    }
    println!("{} files redrawn from plots/data", written.len());
    Ok(ExitCode::SUCCESS)
}

/// The best correct kernel at each size, against the copy kernel's pace and the theoretical peak.
fn print_summary(machine: &Machine, rows: &[Row]) {
    for dtype in [Dtype::F32, Dtype::I32] {
        let mut sizes: Vec<usize> = rows.iter().filter(|r| r.dtype == dtype && r.status == results::Status::Correct).map(|r| r.n).collect();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.is_empty() {
            continue;
        }
        println!("\n{} {dtype}: best kernel per size (inputs rotated past L2; peak {})", machine.gpu,
            machine.peak_gbps.map(|p| format!("{p:.0} GB/s")).unwrap_or("unknown".into()));
        println!("{:>12}  {:<20} {:>11} {:>9} {:>7} {:>11} {:>13}", "n", "kernel", "median µs", "GB/s", "% peak", "copy GB/s", "× cuBLAS time");
        for n in sizes {
            let candidates = rows.iter().filter(|r| r.dtype == dtype && r.n == n && r.status == results::Status::Correct && r.cache == results::Cache::Rotated);
            let Some(best) = candidates.min_by(|a, b| a.median_us.total_cmp(&b.median_us)) else { continue };
            let copy = rows.iter().find(|r| r.kernel == "copy" && r.dtype == dtype && r.n == n).map(|r| format!("{:.0}", r.gbps())).unwrap_or_default();
            let pct = machine.peak_gbps.map(|p| format!("{:.1}", 100.0 * best.gbps() / p)).unwrap_or_default();
            // The best kernel's time as a fraction of the library peer's (below 1: faster).
            let peer = rows.iter().find(|r| r.kernel == "cublas_sasum" && r.dtype == dtype && r.n == n).map(|r| format!("{:.2}", best.median_us / r.median_us)).unwrap_or_default();
            println!("{n:>12}  {:<20} {:>11.2} {:>9.1} {pct:>7} {copy:>11} {peer:>13}", best.kernel, best.median_us, best.gbps());
        }
    }
}

/// The run options of `mistake` and `mistakes`: the defaults, or the flags.
fn mistake_options(opts: &Options) -> Result<RunOptions, String> {
    let defaults = RunOptions::default();
    let options = RunOptions {
        n: opts.number("n", defaults.n)?,
        runs: opts.number("runs", defaults.runs)?,
        seed: opts.number("seed", defaults.seed as usize)? as u64,
    };
    options.check()?;
    mistake_input(&options).check_host().map_err(|e| e.to_string())?;
    Ok(options)
}

/// One run's input of a mistake: n 4-byte values (i32 or f32), on the host and on the GPU.
fn mistake_input(options: &RunOptions) -> Need {
    Need::elements(format!("{} 4-byte values", words(options.n)), options.n, 4)
}

/// `reduction mistake NAME`: one mistake in this process, no guard. For compute-sanitizer,
/// which must see the kernel run in the process it wraps.
fn mistake(args: &[String]) -> Outcome {
    let name = args.first().filter(|a| !a.starts_with("--")).ok_or("name a mistake: `reduction mistake NAME` (`reduction mistakes --list` shows them)")?;
    let m = mistakes::find(name).ok_or_else(|| mistakes::unknown(name))?;
    let opts = Options::parse(&args[1..], &["n", "runs", "seed"], &["allow-hang"])?;
    let options = mistake_options(&opts)?;
    if m.asserted == Some(Class::Hang) && !opts.flag("allow-hang") {
        return Err(format!(
            "{} hangs by design, and nothing here would stop it: run it under the guard \
             (`reduction mistakes --only {}`), or pass --allow-hang and kill it yourself",
            m.name, m.name
        )
        .into());
    }
    let gpu = Gpu::open()?;
    mistake_input(&options).check_device(&gpu)?;
    let started = std::time::Instant::now();
    let report = mistakes::run_in_process(&gpu, m, &options, || {})?;
    let observed = Observation { report, startup: None, run_time: started.elapsed(), stderr_tail: String::new() };
    println!("mistake {} ({}): {}", m.number, m.name, mistakes::what_it_did(m, &Recorded::new(m, &observed)));
    Ok(ExitCode::SUCCESS)
}

/// `reduction mistakes`: every mistake (or `--only` some) in a child process of this program
/// under a deadline, a table of what each did, and a check that this process's own GPU context
/// still works. Fails when a mistake did not do what the book says it does.
fn run_mistakes(args: &[String]) -> Outcome {
    let opts = Options::parse(args, &["n", "runs", "seed", "deadline", "startup", "only", "record"], &["table-only", "list"])?;
    if opts.flag("list") {
        for m in mistakes::all() {
            let expected = m.asserted.map(|c| c.name()).unwrap_or("(recorded only)");
            println!("{:>2}  {:<26} {:<16} {}; caught by {}", m.number, m.name, expected, m.title.replace('`', ""), m.caught_by.replace('`', ""));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if opts.flag("table-only") {
        for path in mistakes::write_mistakes_table(Path::new("plots/data"), Path::new("book/generated"))? {
            println!("drew {}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut deadline = Deadline::from_env()?;
    if let Some(d) = opts.get("deadline") {
        deadline.run = guard::parse_seconds(d).map_err(|why| format!("--deadline {d:?}: {why}"))?;
    }
    if let Some(d) = opts.get("startup") {
        deadline.startup = guard::parse_seconds(d).map_err(|why| format!("--startup {d:?}: {why}"))?;
    }
    let options = mistake_options(&opts)?;
    let mut selected = mistakes::run_order();
    if let Some(list) = opts.get("only") {
        let wanted: Vec<&str> = list.split(',').map(str::trim).collect();
        if let Some(bad) = wanted.iter().find(|w| mistakes::find(w).is_none()) {
            return Err(mistakes::unknown(bad).into());
        }
        selected.retain(|m| wanted.contains(&m.name));
    }
    let record = opts.get("record").map(PathBuf::from).or_else(|| std::env::var_os(mistakes::RECORD_ENV).map(PathBuf::from));

    // This process's own context: for the record's header and the last check. No broken
    // kernel is ever loaded into it; each mistake runs in a child process of its own.
    let gpu = Gpu::open()?;
    // Each child opens the same GPU; this process holds almost nothing on it meanwhile.
    mistake_input(&options).check_device(&gpu)?;
    let exe = std::env::current_exe()?;
    println!("{}", gpu.info().name);
    println!("{} mistakes, each in a child process: {} runs of n = {}, deadline {:.1} s after start-up ({:.0} s to start)\n",
        selected.len(), options.runs, options.n, deadline.run.as_secs_f64(), deadline.startup.as_secs_f64());
    println!("{:>2}  {:<26} {:<13} what it did", "#", "mistake", "outcome");
    let (mut rows, mut unexpected) = (Vec::new(), Vec::new());
    for m in selected {
        let observed = mistakes::run_guarded(&exe, m, &options, deadline)?;
        let recorded = Recorded::new(m, &observed);
        println!("{:>2}  {:<26} {:<13} {}", m.number, m.name, recorded.outcome.name(), mistakes::what_it_did(m, &recorded));
        if let Err(why) = m.verdict(&observed, deadline) {
            println!("    UNEXPECTED: {why}");
            unexpected.push(m.name);
        }
        rows.push(recorded);
    }
    rows.sort_by_key(|r| r.number);
    if let Some(target) = record {
        let path = mistakes::record_path(&target, &gpu.info().name);
        let command = format!("reduction mistakes {}", args.join(" ")).trim().to_string();
        mistakes::write_records(&path, &Records { header: mistakes::header(&gpu, &options, deadline, &command), rows })?;
        println!("\nrecorded in {}", path.display());
    }

    let xs = <i32 as Checked>::random((1 << 20) + 37, 11);
    let parent = Reducer::<i32>::new(&gpu, "reduce3", 256).and_then(|mut r| r.sum_host(&xs));
    match parent.map_err(|e| e.to_string()).and_then(|got| i32::check_sum(got, &xs)) {
        Ok(()) => println!("\nthis process's own GPU context still sums correctly"),
        Err(why) => {
            println!("\nthis process's own GPU context no longer sums: {why}");
            unexpected.push("(the parent process)");
        }
    }
    if unexpected.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("not what the book says: {}", unexpected.join(", ")).into())
    }
}

/// `1073741824`, `2^30`, `1e9`, or with a unit: `8B`, `64KiB`, `1GiB` (powers of 1024).
fn parse_bytes(s: &str) -> Result<usize, String> {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10), ("B", 0)] {
        if let Some(number) = s.strip_suffix(unit) {
            let value = parse_size(number.trim()).map_err(|_| format!("{s:?} is not a size in bytes (write 8B, 64KiB, 1GiB or 2^30)"))?;
            return value.checked_mul(1 << shift).ok_or_else(|| format!("{s:?} is too large"));
        }
    }
    parse_size(s)
}

/// `reduction multigpu ...`: the sum across GPUs and the all-reduce benchmark.
fn multigpu(args: &[String]) -> Outcome {
    let what = args.first().map(String::as_str).unwrap_or("");
    let rest = args.get(1..).unwrap_or(&[]);
    match what {
        "info" => multigpu_info(rest),
        "sum" => multigpu_sum(rest),
        "allreduce" => multigpu_allreduce(rest),
        _ => Err(format!("`reduction multigpu` needs one of: info, sum, allreduce\n{USAGE}").into()),
    }
}

fn multigpu_info(args: &[String]) -> Outcome {
    Options::parse(args, &[], &[])?;
    println!("{}", reduction::nccl::multicast_setting());
    match reduction::nccl::library() {
        Ok(nccl) => println!("NCCL {} (loaded as {})", nccl.version_string(), nccl.name()),
        Err(e) => println!("{e}"),
    }
    let ranks = reduction::multigpu::Ranks::open(None)?;
    println!("{} visible: {}", ranks.visible(), ranks.describe());
    for gpu in ranks.gpus() {
        println!("{}", gpu.info());
    }
    Ok(ExitCode::SUCCESS)
}

fn multigpu_sum(args: &[String]) -> Outcome {
    use reduction::multigpu::{self, Input, Ranks, SumOptions};
    let opts = Options::parse(args, &["n", "per-gpu", "dtype", "input", "kernel", "block", "gpus", "seed", "timeout"], &[])?;
    let dtype = opts.get("dtype").unwrap_or("i32");
    let element = match Dtype::parse(dtype) {
        Some(d @ (Dtype::I32 | Dtype::F32)) => d,
        _ => return Err(format!("--dtype must be i32 or f32, not {dtype:?}").into()),
    };
    let ranks = Ranks::open(opts.get("gpus").map(parse_size).transpose()?)?;
    let n = match (opts.get("n"), opts.get("per-gpu")) {
        (Some(_), Some(_)) => return Err("give --n (the total) or --per-gpu, not both".into()),
        (Some(n), None) => parse_size(n)?,
        (None, per_gpu) => parse_size(per_gpu.unwrap_or("2^28"))?.checked_mul(ranks.len()).ok_or("--per-gpu times the GPU count overflows")?,
    };
    // The largest shard must fit on every GPU (the host only ever holds one chunk per GPU).
    let shard = n.div_ceil(ranks.len());
    let need = Need::elements(format!("a shard of {} {dtype} values", words(shard)), shard, element.size_bytes());
    for gpu in ranks.gpus() {
        need.check_device(gpu)?;
    }
    let input = match opts.get("input").unwrap_or(if dtype == "i32" { "pattern" } else { "exact" }) {
        "pattern" => Input::Pattern,
        "random" => Input::Random { seed: opts.number("seed", 1)? as u64 },
        "exact" => Input::Exact { seed: opts.number("seed", 1)? as u64 },
        other => return Err(format!("--input must be pattern, random or exact, not {other:?}").into()),
    };
    let mut options = SumOptions::default();
    if let Some(kernel) = opts.get("kernel") {
        options.kernel = kernel.to_string();
    }
    options.block = opts.block()?;
    if let Some(t) = opts.get("timeout") {
        options.nccl_timeout = guard::parse_seconds(t).map_err(|why| format!("--timeout {t:?}: {why}"))?;
    }
    let report = match dtype {
        "i32" => multigpu::sum::<i32>(&ranks, n, input, &options)?,
        "f32" => multigpu::sum::<f32>(&ranks, n, input, &options)?,
        other => return Err(format!("--dtype must be i32 or f32, not {other:?}").into()),
    };
    print!("{}", report.summary());
    Ok(if report.check().is_ok() { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

fn multigpu_allreduce(args: &[String]) -> Outcome {
    use reduction::allreduce::{self, AllReduceConfig};
    let opts = Options::parse(args, &["min", "max", "gpus", "repeats", "target-ms", "out", "timeout"], &[])?;
    let mut config = AllReduceConfig::default();
    if let Some(v) = opts.get("min") {
        config.min_bytes = parse_bytes(v)?;
    }
    if let Some(v) = opts.get("max") {
        config.max_bytes = parse_bytes(v)?;
    }
    // Doubling from --min to --max must not overflow; no GPU holds 2^62 bytes anyway.
    for (name, bytes) in [("--min", config.min_bytes), ("--max", config.max_bytes)] {
        if bytes > 1 << 62 {
            return Err(format!("{name} {} is more than any GPU holds", reduction::error::human_bytes(bytes)).into());
        }
    }
    config.repeats = opts.number("repeats", config.repeats)?;
    if let Some(v) = opts.get("target-ms") {
        config.target_ms = v.parse().map_err(|_| format!("--target-ms {v:?} is not a number"))?;
    }
    if let Some(t) = opts.get("timeout") {
        config.nccl_timeout = guard::parse_seconds(t).map_err(|why| format!("--timeout {t:?}: {why}"))?;
    }
    let ranks = reduction::multigpu::Ranks::open(opts.get("gpus").map(parse_size).transpose()?)?;
    // Each GPU holds a send and a receive buffer of the largest message.
    if let Some(&largest) = allreduce::sizes(config.min_bytes, config.max_bytes).last() {
        let need = Need { what: format!("two all-reduce buffers of {}", reduction::error::human_bytes(largest)), bytes: 2 * largest as u128 };
        for gpu in ranks.gpus() {
            need.check_device(gpu)?;
        }
    }
    let started = std::time::Instant::now();
    let (mut header, rows) = allreduce::run(&ranks, &config)?;
    header.command = bench_command("multigpu allreduce", args);
    let out_dir = PathBuf::from(opts.get("out").unwrap_or("plots/data/nccl"));
    let path = out_dir.join(header.file_name());
    allreduce::write_csv(&path, &header, &rows)?;
    println!("{} sizes in {:.0} s, written to {}", rows.len(), started.elapsed().as_secs_f64(), path.display());
    // How the GPUs are connected, for the chapter's table (the link decides the bandwidth).
    match std::process::Command::new("nvidia-smi").args(["topo", "-m"]).output() {
        Ok(out) if out.status.success() => {
            let topo = path.with_file_name(format!("{}-topo.txt", header.file_name().trim_end_matches(".csv")));
            std::fs::write(&topo, &out.stdout)?;
            println!("topology (nvidia-smi topo -m) written to {}", topo.display());
        }
        _ => println!("nvidia-smi topo -m did not run: the topology is not recorded"),
    }
    if opts.get("out").is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}
