//! `reduction accuracy`: the relative error of f32/f16/bf16 sums by every method, written to
//! plots/data/accuracy/, then the book redrawn.

use super::{command_line, machine_of, parse_size, render, Outcome};
use clap::Args;
use reduction::limits::{count_in_words as words, Need};
use reduction::{Dtype, Gpu};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct AccuracyArgs {
    /// The largest size (sizes are 2^10, 2^12, ... up to it)
    #[arg(long, default_value = "2^30", value_parser = parse_size)]
    max: usize,
    /// Random inputs per size
    #[arg(long, default_value = "3", value_parser = parse_size)]
    seeds: usize,
    /// The data folder; without it, plots/data, and the book is redrawn
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(args: AccuracyArgs) -> Outcome {
    let sizes: Vec<usize> = (10..=30).step_by(2).map(|k| 1usize << k).filter(|&n| n <= args.max).collect();
    // The largest size, as f32 values and their f64 copy on the host, and as f32 on the GPU.
    let largest = sizes.iter().copied().max().unwrap_or(0);
    Need::elements(format!("{} f32 values and their f64 copy", words(largest)), largest, 12).check_host()?;
    let gpu = Gpu::open()?;
    Need::values(largest, Dtype::F32).check_device(&gpu)?;
    eprintln!("{}", gpu.info());
    let rows = reduction::accuracy::run(&gpu, &sizes, args.seeds as u64)?;
    let data_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("plots/data"));
    let path = reduction::book::accuracy::book_file(&data_dir, &gpu.info().name);
    let machine = machine_of(&gpu, command_line());
    reduction::book::accuracy::write_csv(&path, &machine, &rows)?;
    println!("{}", reduction::book::accuracy::table(&machine.gpu, &rows));
    println!("{} measurements written to {}", rows.len(), path.display());
    if args.out.is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}
