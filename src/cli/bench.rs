//! `reduction bench`: every kernel at every size, written to plots/data/<gpu>.csv, then the book
//! redrawn from it; `--plot-only` only redraws.

use super::{command_line, machine_of, parse_measured_size, parse_seed, parse_size, render, Outcome};
use clap::Args;
use reduction::limits::Need;
use reduction::measure::bench::{self, BenchConfig};
use reduction::records::bench::{self as results, Machine, Row};
use reduction::{kernels, Dtype};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct BenchArgs {
    /// Sizes to measure [default: 2^10 … 2^30 and a few that are not powers of two]
    #[arg(long, value_name = "N,...", value_delimiter = ',', value_parser = parse_measured_size)]
    sizes: Option<Vec<usize>>,
    /// Kernels to measure, `entry_point` for the entry point [default: every registered kernel and the entry point]
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    kernels: Option<Vec<String>>,
    /// Element types to measure [default: f32,i32]
    #[arg(long, value_name = "DTYPE,...", value_enum, value_delimiter = ',')]
    dtype: Option<Vec<Dtype>>,
    /// Threads per block for every kernel [default: each kernel's preferred block at each size]
    #[arg(long, value_name = "THREADS", value_parser = parse_size)]
    block: Option<usize>,
    /// Where the CSV goes; without it, plots/data, and the book then shows this GPU
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The inputs' seed
    #[arg(long, default_value_t = BenchConfig::new().seed, value_parser = parse_seed)]
    seed: u64,
    /// A few sizes, shorter timings
    #[arg(long)]
    quick: bool,
    /// Redraw every chart and table from plots/data; no GPU
    #[arg(long)]
    plot_only: bool,
    /// Do not run the peers (plots/peers.py, plots/cub_sum.cu, plots/tile_peers.py) after each element type's kernels
    #[arg(long)]
    no_peers: bool,
    /// Time the entry point before the kernels instead of after them (first, it slowed the kernels timed after it)
    #[arg(long)]
    entry_point_first: bool,
    /// An experiment: after each kernel's row, time the same launch K more times, its scratch
    /// buffers moved by a pad of 1..K × 2 MiB allocated first; titles give the addresses (needs --out)
    #[arg(long, value_name = "K", default_value_t = 0, requires = "out")]
    scratch_pads: usize,
}

pub fn run(args: BenchArgs) -> Outcome {
    if args.plot_only {
        return render();
    }
    let mut config = BenchConfig::new();
    if args.quick {
        config.sizes = (10..=26).step_by(4).map(|k| 1usize << k).collect();
        config.target_ms = 1.0;
    }
    if let Some(sizes) = &args.sizes {
        config.sizes = sizes.clone();
    }
    if let Some(names) = &args.kernels {
        config.entry_point = names.iter().any(|name| name == bench::ENTRY_POINT);
        config.kernels = names.iter().filter(|name| *name != bench::ENTRY_POINT).map(|name| kernels::find(name)).collect::<Result<_, _>>()?;
    }
    if let Some(dtypes) = args.dtype {
        config.dtypes = dtypes;
    }
    config.block = super::block(args.block)?;
    config.seed = args.seed;
    config.entry_point_first = args.entry_point_first;
    config.scratch_pads = args.scratch_pads;
    let out_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("plots/data"));
    // Sizes asked for must fit, on the host (the pool's copy for the references) and on the
    // GPU. The default sweep is the program's own choice: what does not fit there is skipped.
    let largest = args.sizes.as_ref().map(|_| largest_input(&config)).transpose()?.flatten();
    let gpu = super::open_gpu_for(largest.as_ref())?;
    let started = std::time::Instant::now();
    // The peers run in this run, on this GPU: after each element type's kernels, interleaved.
    let peers = (!args.no_peers).then(|| super::peers::Peers::prepare(&config.sizes));
    let mut rows = Vec::new();
    let mut read_only_shapes = Vec::new();
    let mut peer_rows = Vec::new();
    let machine = machine_of(&gpu, command_line());
    let slug = reduction::records::slug(&gpu.info().name);
    let path = out_dir.join(format!("{slug}.csv"));
    let peers_path = out_dir.join(format!("{slug}-peers.csv"));
    // The evidence for the read-only rows: every shape at every size.
    let shapes_path = out_dir.join(results::READ_ONLY_SHAPES_DIR).join(format!("{slug}.csv"));
    // One file for every peer of this run, its header this run's.
    let peers_machine = Machine { command: format!("{} (the peers: plots/peers.py, plots/cub_sum.cu, plots/tile_peers.py, in the same run)", machine.command), ..machine.clone() };
    let write = |rows: &[Row], read_only_shapes: &[Row], peer_rows: &[Row]| -> Result<(), Box<dyn std::error::Error>> {
        results::write_csv(&path, &machine, rows)?;
        std::fs::create_dir_all(shapes_path.parent().expect("a file in a folder"))?;
        results::write_csv(&shapes_path, &machine, read_only_shapes)?;
        if !peer_rows.is_empty() {
            results::write_csv(&peers_path, &peers_machine, peer_rows)?;
        }
        Ok(())
    };
    for &dtype in &config.dtypes {
        let one = BenchConfig { dtypes: vec![dtype], ..config.clone() };
        let measured = bench::run_with_shapes(&gpu, &one)?;
        rows.extend(measured.rows);
        read_only_shapes.extend(measured.read_only_shapes);
        if let Some(peers) = &peers {
            // Under a cap, the peers get what is left of it while this process holds its
            // context (after a synchronisation, so that the freed pool is given back first).
            gpu.synchronize()?;
            let budget = gpu.memory_cap().map(|_| gpu.memory()).transpose()?.map(|(free, _)| free);
            peer_rows.extend(peers.run(dtype, &format!("{dtype} kernels"), budget));
        }
        // Into a folder of the reader's choosing, after each element type: a run cut short
        // keeps what it measured. (plots/data is written once, complete.)
        if args.out.is_some() {
            write(&rows, &read_only_shapes, &peer_rows)?;
        }
    }
    write(&rows, &read_only_shapes, &peer_rows)?;
    if !peer_rows.is_empty() {
        println!("{} peer measurements written to {}", peer_rows.len(), peers_path.display());
    }
    print_summary(&machine, &rows);
    println!("\n{} measurements in {:.0} s, written to {} (the read-only kernel's {} shapes to {})", rows.len(),
        started.elapsed().as_secs_f64(), path.display(), read_only_shapes.len(), shapes_path.display());
    if args.out.is_none() {
        // The book now shows this GPU: its tables and charts are redrawn from the new data.
        std::fs::write(out_dir.join(reduction::records::BOOK_GPU_FILE), format!("{slug}\n"))?;
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

/// The largest input `config` asks for, in its widest element type.
fn largest_input(config: &BenchConfig) -> Result<Option<Need>, String> {
    // The first of the widest, so that the message names the type asked for first.
    let widest = config.dtypes.iter().copied().min_by_key(|d| std::cmp::Reverse(d.size_bytes())).ok_or("--dtype names no element type")?;
    Ok(config.sizes.iter().copied().max().map(|n| Need::values(n, widest)))
}

/// The best correct kernel at each size, against the copy kernel's pace, the theoretical peak and
/// cuBLAS, as plain text for the terminal: the fastest kernel per size is chosen by the same
/// function the book's best-kernel table uses (`book::chapters::benchmark::fastest`).
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
        println!("{:>12}  {:<20} {:>11} {:>9} {:>7} {:>11} {:>13} {:>11} {:>11}", "n", "kernel", "median µs", "GB/s", "% peak", "copy GB/s", "× cuBLAS time", "entry µs", "host-vis µs");
        for n in sizes {
            let Some(best) = reduction::book::chapters::benchmark::fastest(rows, dtype, n) else { continue };
            let copy = rows.iter().find(|r| r.kernel == results::COPY_KERNEL && r.dtype == dtype && r.n == n).map(|r| format!("{:.0}", r.gbps())).unwrap_or_default();
            let pct = machine.peak_gbps.map(|p| format!("{:.1}", 100.0 * best.gbps() / p)).unwrap_or_default();
            // The best kernel's time as a fraction of the library peer's (below 1: faster).
            let peer = rows.iter().find(|r| r.kernel == results::CUBLAS_KERNEL && r.dtype == dtype && r.n == n).map(|r| format!("{:.2}", best.median_us / r.median_us)).unwrap_or_default();
            let entry = |name: &str| rows.iter().find(|r| r.kernel == name && r.dtype == dtype && r.n == n).map(|r| format!("{:.2}", r.median_us)).unwrap_or_default();
            println!("{n:>12}  {:<20} {:>11.2} {:>9.1} {pct:>7} {copy:>11} {peer:>13} {:>11} {:>11}", best.kernel, best.median_us, best.gbps(), entry(bench::ENTRY_POINT), entry(bench::ENTRY_POINT_HOST));
        }
    }
}
