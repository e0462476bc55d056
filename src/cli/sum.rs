//! `reduction info` and `reduction sum`: the GPU, and one sum checked against the reference —
//! through the entry point (the launch `kernels::dispatch` picks), or with the kernel named.

use super::{parse_seed, parse_size, Outcome};
use clap::Args;
use reduction::check::CheckSum;
use reduction::data::Checked;
use reduction::limits::Need;
use reduction::{kernels, with_dtype, Dtype, Gpu, Reducer};
use std::process::ExitCode;

/// `reduction info`: what the GPU is, NVRTC's version, and the registered kernels.
pub fn info() -> Outcome {
    let gpu = Gpu::open()?;
    println!("{}", gpu.info());
    if let Some(note) = gpu.memory_note() {
        println!("  {note}");
    }
    match reduction::nvrtc::version() {
        Ok((major, minor)) => println!("  NVRTC {major}.{minor}"),
        Err(e) => println!("  {e}"),
    }
    println!("\nkernels:");
    let arch = gpu.info().architecture();
    for k in kernels::all() {
        let here = match k.available_on(arch) {
            Ok(()) => String::new(),
            Err(_) => format!("  (not on this GPU: needs {})", k.min_arch),
        };
        println!("  {:<18} chapter {}  {:<34} blocks {}..{}  {}{here}", k.name, k.chapter, k.title, k.min_block, k.max_block, k.file);
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct SumArgs {
    /// The kernel (`reduction info` lists them) [default: the entry point's choice for --n and --dtype]
    #[arg(long, value_name = "NAME")]
    kernel: Option<String>,
    /// Threads per block [default: 256 with --kernel, else the entry point's choice]
    #[arg(long, value_name = "THREADS", value_parser = parse_size)]
    block: Option<usize>,
    /// Values to sum
    #[arg(long, default_value = "2^20", value_parser = parse_size)]
    n: usize,
    /// The element type
    #[arg(long, value_enum, default_value_t = Dtype::F32)]
    dtype: Dtype,
    /// Sums, each of a fresh random input (seed, seed + 1, ...)
    #[arg(long, default_value = "1", value_parser = parse_size)]
    runs: usize,
    /// The first input's seed
    #[arg(long, default_value = "1", value_parser = parse_seed)]
    seed: u64,
    /// Sum one input --runs times and count the distinct results
    #[arg(long)]
    same_input: bool,
}

/// `reduction sum`: exit 0 when every run was right, 2 when one was wrong.
pub fn run(args: SumArgs) -> Outcome {
    let SumArgs { kernel, n, dtype, runs, seed, same_input, .. } = args;
    let block = super::block(args.block)?;
    // Everything that can be refused without a GPU is refused before one is opened.
    if let Some(kernel) = &kernel {
        let spec = kernels::find(kernel)?;
        if !spec.supports(dtype) {
            return Err(spec.unsupported(dtype).into());
        }
        // The kernel's own rules for the block (the device's limits are checked once it is open).
        spec.check_block(block.unwrap_or(256), dtype.size_bytes(), u32::MAX, usize::MAX)?;
    }
    // The input is made on the host, then copied to the GPU.
    let input = Need::values(n, dtype);
    input.check_host()?;
    let gpu = Gpu::open()?;
    if let Some(kernel) = &kernel {
        kernels::find(kernel)?.available_on(gpu.info().architecture())?;
    }
    input.check_device(&gpu)?;
    let (name, block) = match &kernel {
        Some(kernel) => (kernel.clone(), block.unwrap_or(256)),
        None => {
            let choice = kernels::dispatch::choose_here(n, dtype, gpu.info());
            let block = block.unwrap_or(choice.block);
            let rule = kernels::dispatch::choose(n, dtype, gpu.info()).kernel.name;
            let instead = if rule != choice.kernel.name { format!("; the CUDA headers are not found, so not {rule}") } else { String::new() };
            println!("entry point: {} at block {block}{} ({}{instead})", choice.kernel.name, if choice.one_block { ", one block" } else { "" }, choice.band.why);
            (choice.kernel.name.to_string(), block)
        }
    };
    let auto = kernel.is_none() && args.block.is_none();
    let wrong = with_dtype!(dtype, T => sum_runs::<T>(&gpu, &name, block, auto, n, runs, seed, same_input)?);
    println!("{name} {} n={n} block={block}: {wrong} of {runs} runs wrong", dtype.name());
    Ok(if wrong == 0 { ExitCode::SUCCESS } else { ExitCode::from(2) })
}

/// Sum `runs` fresh inputs (or, with `same_input`, one input `runs` times, counting the distinct
/// results: a deterministic kernel gives one) and return how many sums were wrong.
#[allow(clippy::too_many_arguments)]
fn sum_runs<T: Checked>(gpu: &Gpu, kernel: &str, block: u32, auto: bool, n: usize, runs: usize, seed: u64, same_input: bool) -> Result<usize, Box<dyn std::error::Error>> {
    // Through the entry point unless a kernel or a block was named.
    let mut reducer = if auto { Reducer::<T>::auto(gpu, n)? } else { Reducer::<T>::new(gpu, kernel, block)? };
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
