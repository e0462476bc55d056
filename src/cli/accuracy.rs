//! `reduction accuracy`: the relative error of f32/f16/bf16 sums by every method as N grows, and
//! of f32 sums as the condition number grows, written to plots/data/accuracy/, then the book
//! redrawn.

use super::{command_line, machine_of, parse_size, render, Outcome};
use clap::{Args, ValueEnum};
use reduction::limits::{count_in_words as words, Need};
use reduction::{Dtype, Gpu};
use std::path::PathBuf;
use std::process::ExitCode;

/// The two sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Sweep {
    /// Positive values, n = 2^10 … --max
    Sizes,
    /// Signed values of condition number 1 … 10^12, n = --n
    Conditioning,
}

#[derive(Args)]
pub struct AccuracyArgs {
    /// The largest size of the size sweep (sizes are 2^10, 2^12, ... up to it)
    #[arg(long, default_value = "2^30", value_parser = parse_size)]
    max: usize,
    /// Values per input of the conditioning sweep
    #[arg(long, default_value = "2^24", value_parser = parse_size)]
    n: usize,
    /// Random inputs per size (per condition number)
    #[arg(long, default_value = "3", value_parser = parse_size)]
    seeds: usize,
    /// Run one sweep only [default: both]
    #[arg(long, value_enum)]
    only: Option<Sweep>,
    /// The data folder; without it, plots/data, and the book is redrawn
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(args: AccuracyArgs) -> Outcome {
    let sizes: Vec<usize> = (10..=30).step_by(2).map(|k| 1usize << k).filter(|&n| n <= args.max).collect();
    let sweep = |s: Sweep| args.only.is_none_or(|only| only == s);
    if sweep(Sweep::Conditioning) && args.n == 0 {
        return Err("--n must be at least 1".into());
    }
    // Each input, as f32 values and their f64 copies on the host, and as f32 on the GPU.
    let on_host = |n: usize| Need::elements(format!("{} f32 values and their f64 copies", words(n)), n, 20).check_host();
    let fits = |n: usize, gpu: &Gpu| -> reduction::Result<()> {
        on_host(n)?;
        Need::values(n, Dtype::F32).check_device(gpu)
    };
    if sweep(Sweep::Conditioning) {
        on_host(args.n)?; // refused before a GPU is opened
    }
    let gpu = Gpu::open()?;
    eprintln!("{}", gpu.info());
    if let Some(note) = gpu.memory_note() {
        eprintln!("  {note}");
    }
    // The conditioning sweep's one size must fit; of the size sweep, what does not is skipped.
    if sweep(Sweep::Conditioning) {
        fits(args.n, &gpu)?;
    }
    let mut sizes = sizes;
    if sweep(Sweep::Sizes) {
        sizes.retain(|&n| match fits(n, &gpu) {
            Ok(()) => true,
            Err(why) => {
                println!("skipped n = {}: {why}", words(n));
                false
            }
        });
    }
    let data_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("plots/data"));
    let machine = machine_of(&gpu, command_line());
    if sweep(Sweep::Sizes) {
        let rows = reduction::measure::accuracy::run(&gpu, &sizes, args.seeds as u64)?;
        let path = reduction::records::accuracy::book_file(&data_dir, &gpu.info().name);
        reduction::records::accuracy::write_csv(&path, &machine, &rows)?;
        println!("{}", reduction::book::chapters::accuracy::table(&machine.gpu, &rows));
        println!("{} measurements written to {}", rows.len(), path.display());
    }
    if sweep(Sweep::Conditioning) {
        let rows = reduction::measure::accuracy::run_conditioning(&gpu, args.n, 12, args.seeds as u64)?;
        let path = reduction::records::accuracy::conditioning_file(&data_dir, &gpu.info().name);
        reduction::records::accuracy::write_conditioning_csv(&path, &machine, &rows)?;
        println!("{}", reduction::book::chapters::accuracy::conditioning_table(&machine.gpu, &rows));
        println!("{} measurements written to {}", rows.len(), path.display());
    }
    if args.out.is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}
