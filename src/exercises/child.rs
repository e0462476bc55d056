//! The child's side: compile the reader's file for this GPU, run every hidden case (saying
//! READY before each, so that the deadline is per case), time a solved kernel, report.

use super::cases::{self, Case, CaseValue};
use super::catalogue::{self, Exercise};
use super::launch::{Launcher, Op};
use super::report::{ChildReport, Failure, Speed};
use super::{CASE_DONE_LINE, CASE_LINE, CHILD_ENV, FILE_ENV, QUICK_ENV, SEED_ENV, SOURCE_ENV, TIME_ENV};
use crate::child::{print_outcome, say_ready, Role};
use crate::element::{Dtype, Element};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::gpu::KernelSource;
use crate::kernels::spliced_source;
use crate::records::summary::median;
use crate::runtime::timing::EventTimer;
use crate::kernels::names;

/// An exercise's child: [`CHILD_ENV`] names the exercise, [`crate::child::run_if_asked`] runs it.
pub const CHILD: Role = Role { what: "exercise", env: CHILD_ENV, run: run_child };

/// Check the reader's file for exercise `number` in this process, as its child, and print the
/// report.
fn run_child(number: &str) -> std::result::Result<(), String> {
    let number: u32 = number.parse().map_err(|_| format!("{CHILD_ENV}={number:?} is not a number"))?;
    let exercise = catalogue::find(number).map_err(|e| e.to_string())?;
    let var = |name: &str| std::env::var(name).map_err(|_| format!("{name} is not set"));
    let file = var(FILE_ENV)?;
    let text = std::fs::read_to_string(var(SOURCE_ENV)?).map_err(|e| e.to_string())?;
    let seed: u64 = var(SEED_ENV)?.parse().map_err(|_| format!("{SEED_ENV} is not a number"))?;
    let quick = std::env::var(QUICK_ENV).is_ok_and(|v| v == "1");
    let time = std::env::var(TIME_ENV).is_ok_and(|v| v == "1");
    let gpu = Gpu::open().map_err(|e| e.to_string())?;
    let report = run(&gpu, exercise, &file, &text, seed, quick, time).map_err(|e| e.to_string());
    std::mem::forget(gpu); // a faulted context is torn down by the exit, after the report
    print_outcome(&report?)
}

/// A reader's kernel file as the runtime compiles it: its name (in compiler messages) and its
/// text, with the book's headers spliced in as for the registered kernels, and no options
/// beyond the base ones. It has no launch rules: the exercise's [`super::launch::Layout`] does.
pub struct ReaderKernel {
    file: &'static str,
    text: String,
}

impl ReaderKernel {
    pub fn new(file: &str, text: &str) -> ReaderKernel {
        // Leaked: one small name per process, the key of its compiled module for as long as
        // the process lives.
        ReaderKernel { file: Box::leak(file.to_string().into_boxed_str()), text: text.to_string() }
    }
}

impl KernelSource for ReaderKernel {
    fn file(&self) -> &'static str {
        self.file
    }
    fn text(&self) -> String {
        spliced_source(self.file, &self.text)
    }
    fn options(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
}

fn run(gpu: &Gpu, exercise: &Exercise, file: &str, text: &str, seed: u64, quick: bool, time: bool) -> Result<ChildReport> {
    if let Op::Operator { op, dtypes } = exercise.op {
        return super::operators::run(gpu, exercise, op, dtypes, super::operators::spec_for(op, file, text), seed, quick, time);
    }
    let kernel = ReaderKernel::new(file, text);
    let load = |entry: &str| gpu.function(&kernel, entry);
    if let super::launch::Layout::Fused(which) = exercise.layout {
        return run_fused(gpu, &load("exercise_f32")?, which, seed, quick);
    }
    let mut f32s = Launcher::<f32>::new(gpu, load("exercise_f32")?, exercise.layout, exercise.shared, exercise.block)?;
    let mut i32s = Launcher::<i32>::new(gpu, load("exercise_i32")?, exercise.layout, exercise.shared, exercise.block)?;
    let all = cases::cases(exercise.op, quick, seed);
    let total = all.len();
    for (passed, case) in all.iter().enumerate() {
        let label = format!("{} of {total} ({})", case.number, case.label());
        println!("{CASE_LINE} {label}");
        eprintln!("case {label}");
        let outcome = match case.dtype {
            Dtype::I32 => one_case(gpu, &mut i32s, exercise.op, case),
            _ => one_case(gpu, &mut f32s, exercise.op, case),
        };
        let failure = match outcome {
            Ok((None, seconds)) => {
                println!("{CASE_DONE_LINE} {} {seconds:.6}", case.n);
                continue;
            }
            Ok((Some(mut failure), _)) => {
                failure.case = label;
                failure
            }
            Err(e) => Failure { case: label, expected: None, got: None, error: Some(e.to_string()), diagnosis: launch_diagnosis(&e) },
        };
        return Ok(ChildReport { cases_passed: passed, cases_total: total, failure: Some(failure), speed: None, skipped: Vec::new() });
    }
    let mut skipped = Vec::new();
    let mut total = total;
    if !quick && cases::takes_large_case(exercise.layout) {
        let label = format!("{} of {} (n = {} (2^31 + 5), i32, every value 0 but the first and the last)", total + 1, total + 1, cases::LARGE_N);
        match large_case(gpu, &mut i32s, exercise.op, &label) {
            Ok(LargeCase::Skipped(why)) => skipped.push(why),
            Ok(LargeCase::Passed) => total += 1,
            Ok(LargeCase::Failed(failure)) => {
                return Ok(ChildReport { cases_passed: total, cases_total: total + 1, failure: Some(failure), speed: None, skipped });
            }
            Err(e) => {
                let failure = Failure { case: label, expected: None, got: None, error: Some(e.to_string()), diagnosis: launch_diagnosis(&e) };
                return Ok(ChildReport { cases_passed: total, cases_total: total + 1, failure: Some(failure), speed: None, skipped });
            }
        }
    }
    let speed = if time { Some(speed(gpu, exercise, &mut f32s, seed)?) } else { None };
    Ok(ChildReport { cases_passed: total, cases_total: total, failure: None, speed, skipped })
}

/// What became of the case past 2^31.
enum LargeCase {
    Passed,
    Failed(Failure),
    Skipped(String),
}

/// The case past 2^31 ([`cases::LARGE_N`]): made on the GPU (zeroed, then its first and last
/// values written), where the free memory allows it with room for the kernel's scratch.
fn large_case(gpu: &Gpu, launcher: &mut Launcher<i32>, op: Op, label: &str) -> Result<LargeCase> {
    let Some(expected) = cases::large_expected(op) else {
        return Ok(LargeCase::Skipped(format!("case {label}: this exercise's operator has no case past 2^31")));
    };
    let n = cases::LARGE_N;
    let need = n * std::mem::size_of::<i32>();
    let (free, _) = gpu.memory()?;
    if free < need + (256 << 20) {
        return Ok(LargeCase::Skipped(format!(
            "case {label}: it needs {} of GPU memory and {} is free here, so a 32-bit index was not tested past 2^31",
            crate::error::human_bytes(need), crate::error::human_bytes(free)
        )));
    }
    println!("{CASE_LINE} {label}");
    eprintln!("case {label}");
    let mut input = gpu.alloc::<i32>(n)?;
    gpu.stream().memset_zeros(&mut input).map_err(|source| Error::Cuda { during: "zeroing the case past 2^31".into(), source })?;
    gpu.stream().memcpy_htod(&[1i32], &mut input.slice_mut(0..1)).map_err(|source| Error::Cuda { during: "writing its first value".into(), source })?;
    gpu.stream().memcpy_htod(&[7i32], &mut input.slice_mut(n - 1..n)).map_err(|source| Error::Cuda { during: "writing its last value".into(), source })?;
    launcher.prepare(n)?;
    say_ready();
    let started = std::time::Instant::now();
    let got = launcher.run(&input.as_view())?;
    println!("{CASE_DONE_LINE} {n} {:.6}", started.elapsed().as_secs_f64());
    if got as i64 == expected {
        return Ok(LargeCase::Passed);
    }
    let diagnosis = if got as i64 == expected - 7 {
        "the last value, past 2^31, was never read: an index or a count kept in 32 bits (int or unsigned) wraps before it gets there; keep it in u64".to_string()
    } else {
        "only this case has more than 2^31 values: an index or a count kept in 32 bits (int or unsigned) wraps at 2^31 or 2^32; keep it in u64".to_string()
    };
    let got_text = if got == i32::POISON { format!("{got} (the poison written before the launch)") } else { got.to_string() };
    Ok(LargeCase::Failed(Failure { case: label.to_string(), expected: Some(expected.to_string()), got: Some(got_text), error: None, diagnosis: Some(diagnosis) }))
}

/// Exercises 11 and 12: their own cases (rows and columns of f32), each within its bound.
fn run_fused(gpu: &Gpu, function: &cudarc::driver::CudaFunction, which: super::fused::Fused, seed: u64, quick: bool) -> Result<ChildReport> {
    let all = super::fused::cases(which, quick, seed);
    let total = all.len();
    for (passed, case) in all.iter().enumerate() {
        let label = format!("{} of {total} ({})", case.number, case.label());
        println!("{CASE_LINE} {label}");
        eprintln!("case {label}");
        let failure = match super::fused::run_case(gpu, function, which, case) {
            Ok(None) => continue,
            Ok(Some(mut failure)) => {
                failure.case = label;
                failure
            }
            Err(e) => Failure { case: label, expected: None, got: None, error: Some(e.to_string()), diagnosis: launch_diagnosis(&e) },
        };
        return Ok(ChildReport { cases_passed: passed, cases_total: total, failure: Some(failure), speed: None, skipped: Vec::new() });
    }
    Ok(ChildReport { cases_passed: total, cases_total: total, failure: None, speed: None, skipped: Vec::new() })
}

/// `None` when the kernel returned the exact result.
/// One case: the failure, if any, and the seconds the kernel took (from the ready line to its
/// result, what the deadline times).
fn one_case<T: CaseValue>(gpu: &Gpu, launcher: &mut Launcher<T>, op: Op, case: &Case) -> Result<(Option<Failure>, f64)> {
    let made = cases::input::<T>(case, op);
    let device = gpu.upload(&made.buffer)?;
    let view = device.slice(case.shift..case.shift + case.n);
    launcher.prepare(case.n)?;
    say_ready(); // the input is made and on the GPU: the deadline covers the kernel only
    let started = std::time::Instant::now();
    let got = launcher.run(&view)?;
    let seconds = started.elapsed().as_secs_f64();
    if got.to_f64() == made.expected {
        return Ok((None, seconds));
    }
    let show = |v: f64| if case.dtype == Dtype::I32 { format!("{}", v as i64) } else { format!("{v:?}") };
    let got_text = if got == T::POISON { format!("{got:?} (the poison written before the launch)") } else { show(got.to_f64()) };
    Ok((Some(Failure {
        case: String::new(),
        expected: Some(show(made.expected)),
        got: Some(got_text),
        error: None,
        diagnosis: cases::diagnose(op, case, made.expected, got, made.first, made.last, made.guard),
    }), seconds))
}

/// What a launch's error suggests, from the driver's error code.
fn launch_diagnosis(e: &Error) -> Option<String> {
    use cudarc::driver::sys::CUresult;
    match e.driver_error()?.0 {
        CUresult::CUDA_ERROR_MISALIGNED_ADDRESS => {
            Some("a load from an address that is not a multiple of its size: a uint4 (16-byte) load must start on a 16-byte boundary".into())
        }
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS => {
            Some("a load or store outside any allocation: an index without a bound (run with --sanitize memcheck to see which line)".into())
        }
        CUresult::CUDA_ERROR_NOT_FOUND => Some("the entry points must stay as the stub declares them (exercise_f32 and exercise_i32, or the stub's OP_ENTRIES line)".into()),
        _ => None,
    }
}

/// The values timed: 2^26 f32, 256 MiB, four times the H200's L2.
pub const TIMED_N: usize = 1 << 26;

/// The values timed on a GPU with `free` bytes free: [`TIMED_N`], halved until the input takes at
/// most half of them (the rest is the kernels' scratch and the driver's), but not below 2^20;
/// `None` where not even that fits.
pub fn timed_n(free: usize) -> Option<usize> {
    let mut n = TIMED_N;
    while n * 4 > free / 2 {
        if n <= 1 << 20 {
            return None;
        }
        n /= 2;
    }
    Some(n)
}

fn speed(gpu: &Gpu, exercise: &Exercise, launcher: &mut Launcher<f32>, seed: u64) -> Result<Speed> {
    let free = gpu.memory()?.0;
    let n = timed_n(free).ok_or_else(|| Error::TooLarge {
        what: "the timed input (2^20 f32 values at least, with room for scratch)".into(),
        bytes: 8 << 20,
        memory: crate::limits::Memory::Device { ordinal: gpu.info().ordinal },
        available_bytes: free as u128,
    })?;
    let case = Case { number: 0, n, dtype: Dtype::F32, shift: 0, seed, all_negative: false };
    let made = cases::input::<f32>(&case, exercise.op);
    let device = gpu.upload(&made.buffer)?;
    let view = device.slice(0..n);
    launcher.prepare(n)?;
    // Each timing gets the run deadline to itself: the input made on the host and the book's
    // kernel compiled before it count against none.
    say_ready();
    let yours_us = median_us(gpu, || launcher.enqueue(&view).map(|_| ()))?;
    let mut book = crate::Reducer::<f32>::new(gpu, exercise.book_kernel, 256)?;
    say_ready();
    let book_us = median_us(gpu, || book.enqueue(&view).map(|_| ()))?;
    Ok(Speed {
        n,
        yours_us,
        book_kernel: exercise.book_kernel.to_string(),
        book_us,
        peak_gbps: gpu.info().peak_bandwidth_bytes_per_s().map(|b| b / 1e9),
        target: if exercise.number == 2 { padded_target(gpu, yours_us, book_us) } else { None },
        dtype: "f32".into(),
        value_bytes: 4,
    })
}

/// Median of 15 CUDA-event timings of `work`, after 3 warm-up runs.
pub(super) fn median_us(gpu: &Gpu, work: impl FnMut() -> Result<()>) -> Result<f64> {
    Ok(median(&EventTimer::new(gpu)?.repeat_us(3, 15, work)?))
}

/// Exercise 2's target: the speed-up of the book's padded kernel over kernel 2, as the
/// benchmark measured it on this GPU (`plots/data/<gpu>.csv`, f32, block 256, largest n).
fn padded_target(gpu: &Gpu, yours_us: f64, book_us: f64) -> Option<String> {
    let path = std::path::Path::new("plots/data").join(format!("{}.csv", crate::records::slug(&gpu.info().name)));
    let yours = format!("yours runs at {:.2}x kernel 2", book_us / yours_us);
    let Ok((_, rows)) = crate::records::bench::read_csv(&path) else {
        return Some(format!("{yours}; run `reduction bench` from the book's folder to measure the book's padded kernel on this GPU"));
    };
    let pick = |kernel: &str| rows.iter().filter(|r| r.kernel == kernel && r.dtype == Dtype::F32 && r.block == 256).max_by_key(|r| r.n);
    let (Some(plain), Some(padded)) = (pick(names::REDUCE2), pick(names::REDUCE2_PADDED)) else {
        return Some(format!("{yours}; {} has no reduce2 and reduce2_padded rows", path.display()));
    };
    Some(format!(
        "beat kernel 2 by the book's padded kernel: {:.2}x at n = {} ({}); {yours}",
        padded.gbps() / plain.gbps(), crate::limits::count_in_words(padded.n), path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timed_input_fits_itself_to_the_free_memory() {
        assert_eq!(timed_n(139 << 30), Some(TIMED_N));
        assert_eq!(timed_n(512 << 20), Some(TIMED_N)); // 256 MiB is half of it
        assert_eq!(timed_n((512 << 20) - 1), Some(TIMED_N / 2));
        assert_eq!(timed_n(8 << 20), Some(1 << 20));
        assert_eq!(timed_n((8 << 20) - 1), None);
    }
}
