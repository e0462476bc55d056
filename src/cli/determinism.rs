//! `reduction determinism`: every f32 kernel's determinism level on every visible GPU (runs,
//! launch shapes, GPUs, the CPU transcription), written to plots/data/determinism/, then the
//! book redrawn.

use super::{command_line, machine_of, parse_seed, parse_size, render, Outcome};
use clap::Args;
use reduction::measure::determinism::{self, DeterminismConfig};
use reduction::Gpu;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct DeterminismArgs {
    /// Values in the input
    #[arg(long, default_value = "16777219", value_parser = parse_size)]
    n: usize,
    /// Sums at each kernel's preferred launch
    #[arg(long, default_value = "100", value_parser = parse_size)]
    runs: usize,
    /// The input's seed
    #[arg(long, default_value_t = DeterminismConfig::default().seed, value_parser = parse_seed)]
    seed: u64,
    /// The folder for the results file; without it, plots/data/determinism, and the book is
    /// redrawn
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(args: DeterminismArgs) -> Outcome {
    if args.n == 0 || args.runs == 0 {
        return Err("--n and --runs must be at least 1".into());
    }
    let config = DeterminismConfig { n: args.n, runs: args.runs, seed: args.seed, ..DeterminismConfig::default() };
    let count = reduction::gpu::probe()?;
    let mut rows = Vec::new();
    let mut first = None;
    for ordinal in 0..count {
        let gpu = Gpu::open_ordinal(ordinal)?;
        reduction::limits::Need::values(args.n, reduction::Dtype::F32).check_device(&gpu)?;
        eprintln!("{}", gpu.info());
        if let Some(note) = gpu.memory_note() {
            eprintln!("  {note}");
        }
        rows.extend(determinism::measure(&gpu, ordinal, &config)?);
        first.get_or_insert_with(|| machine_of(&gpu, command_line()));
    }
    let machine = first.ok_or("no GPU measured")?;
    let dir = args.out.clone().unwrap_or_else(|| PathBuf::from("plots/data/determinism"));
    let path = dir.join(format!("{}.csv", reduction::records::slug(&machine.gpu)));
    reduction::records::determinism::write_csv(&path, &machine, &rows)?;
    let (header, back) = reduction::records::determinism::read_csv(&path)?;
    println!("{}", reduction::book::chapters::determinism::table(&header, &back, None));
    println!("{} rows written to {}", rows.len(), path.display());
    if args.out.is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}
