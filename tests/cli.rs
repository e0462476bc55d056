//! Bad input on the command line: each is refused with a message that names what is wrong, and
//! a non-zero exit, before anything is allocated or launched. None of this needs a GPU: the
//! refusals come before one is opened, so they are the same with or without one.

use std::path::PathBuf;
use std::process::Command;

/// The program: cargo's build, or in the GPU bundle (run from the project root) its copy.
fn exe() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_reduction"));
    let bundled = PathBuf::from(".gpu-bundle/bin/reduction");
    [built.clone(), bundled].into_iter().find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no `reduction` binary: neither {} nor .gpu-bundle/bin/reduction", built.display()))
}

/// Run `reduction ARGS`; (exit code, stdout, stderr).
fn reduction(args: &str) -> (Option<i32>, String, String) {
    let out = Command::new(exe())
        .args(args.split_whitespace())
        .output()
        .expect("the reduction binary runs");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Assert that `args` fails with exit code 1 and exactly the one-line error `expected`.
fn refused(args: &str, expected: &str) {
    let (code, stdout, stderr) = reduction(args);
    assert_eq!(stderr.trim_end(), format!("error: {expected}"), "reduction {args}");
    assert_eq!(code, Some(1), "reduction {args}: {stderr}");
    assert!(stdout.is_empty(), "reduction {args} printed {stdout:?}");
}

/// The host memory these tests assume is smaller than 4 TiB (true of every machine this runs on;
/// where it is not, the size tests would only test the GPU side, so they say so and stop).
fn host_smaller_than_4_tib() -> bool {
    let small = reduction::limits::host_available_bytes().is_some_and(|b| b < 4 << 40);
    if !small {
        eprintln!("this host has 4 TiB or more available (or does not say): the host-memory refusals are not tested here");
    }
    small
}

#[test]
fn a_sum_too_large_for_the_host_is_refused_before_anything_is_allocated() {
    if !host_smaller_than_4_tib() {
        return;
    }
    let (code, stdout, stderr) = reduction("sum --kernel reduce9 --n 2^40");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    let line = stderr.trim_end();
    assert!(
        line.starts_with("error: 2^40 f32 values (4.0 TiB) will not fit in this machine's available memory (")
            && line.ends_with("); nothing was allocated"),
        "{line}"
    );
    // In the element type asked for, and past what a usize of bytes can count.
    let (_, _, stderr) = reduction("sum --kernel reduce9 --dtype f64 --n 2^62");
    assert!(stderr.starts_with("error: 2^62 f64 values (32.0 EiB) will not fit in "), "{stderr}");
}

#[test]
fn every_command_that_takes_a_size_refuses_one_that_does_not_fit() {
    if !host_smaller_than_4_tib() {
        return;
    }
    for (args, what) in [
        ("bench --sizes 2^10,2^40", "2^40 f32 values (4.0 TiB)"),
        ("bench --sizes 2^40 --dtype i32,f64", "2^40 f64 values (8.0 TiB)"),
        ("rows --m 2^20 --n 2^20", "a 2^20 × 2^20 f32 matrix with its row sums (4.0 TiB)"),
        ("rows --m 2^10 --n 2^10 --stride 2^30", "a 2^10 × 2^10 f32 matrix (row stride 2^30) with its row sums (4.0 TiB)"),
        ("rows-bench --shapes 4096x64,2^20x2^20", "a 2^20 × 2^20 f32 matrix (4.0 TiB)"),
    ] {
        let (code, stdout, stderr) = reduction(args);
        assert_eq!(code, Some(1), "reduction {args}: {stderr}");
        assert!(stdout.is_empty(), "reduction {args} printed {stdout:?}");
        assert!(stderr.starts_with(&format!("error: {what} will not fit in this machine's available memory")), "reduction {args}: {stderr}");
    }
    refused("rows-bench --shapes 2^30x2^34", "2^30 × 2^34 is more values than a 64-bit index holds");
}

#[test]
fn an_element_type_the_kernel_lacks_is_named_as_such() {
    refused("sum --kernel reduce_kahan --dtype i32", "reduce_kahan takes f32 only (asked for i32)");
    refused("sum --kernel reduce1 --dtype f64", "reduce1 takes f32 or i32 (asked for f64)");
    // Before the size: the type is wrong whatever the size.
    refused("sum --kernel reduce_kahan --dtype i32 --n 2^40", "reduce_kahan takes f32 only (asked for i32)");
}

#[test]
fn sizes_that_cannot_be_a_block_or_a_message_are_refused() {
    refused("sum --kernel reduce9 --block 2^33", "--block 2^33 is far more threads than a block holds");
    refused("multigpu allreduce --max 8e18", "--max 6.9 EiB is more than any GPU holds");
}

#[test]
fn the_program_and_every_subcommand_explain_their_options() {
    for (command, options) in [
        ("", &["info", "sum", "bench", "accuracy", "rows", "rows-bench", "mistake", "mistakes", "multigpu"][..]),
        ("info", &[][..]),
        ("sum", &["--kernel", "--block", "--n", "--dtype", "--runs", "--seed", "--same-input", "f32, i32, f64, f16, bf16"][..]),
        ("bench", &["--sizes", "--kernels", "--dtype", "--block", "--out", "--seed", "--quick", "--plot-only"][..]),
        ("accuracy", &["--max", "--seeds", "--out"][..]),
        ("rows", &["--m", "--n", "--stride", "--strategy", "--seed", "auto, warp, block, split"][..]),
        ("rows-bench", &["--shapes", "--out", "--seed", "--quick"][..]),
        ("mistake", &["NAME", "--n", "--runs", "--seed", "--allow-hang"][..]),
        ("mistakes", &["--n", "--runs", "--seed", "--deadline", "--startup", "--only", "--record", "--list", "--table-only"][..]),
        ("multigpu", &["info", "sum", "allreduce"][..]),
        ("multigpu info", &[][..]),
        ("multigpu sum", &["--per-gpu", "--n", "--dtype", "--input", "--kernel", "--block", "--gpus", "--seed", "--timeout"][..]),
        ("multigpu allreduce", &["--min", "--max", "--gpus", "--repeats", "--target-ms", "--out", "--timeout"][..]),
    ] {
        let (code, stdout, stderr) = reduction(&format!("{command} --help"));
        assert_eq!(code, Some(0), "reduction {command} --help: {stderr}");
        assert!(stdout.starts_with(char::is_uppercase) && stdout.contains(&format!("Usage: reduction {command}")), "reduction {command} --help:\n{stdout}");
        for option in options.iter().chain(&["--help"]) {
            assert!(stdout.contains(option), "reduction {command} --help does not list {option}:\n{stdout}");
        }
    }
}

#[test]
fn options_are_typed_when_they_are_parsed() {
    for (args, expected) in [
        ("sum --kernel reduce9 --n lots", "invalid value 'lots' for '--n <N>': \"lots\" is not a size (write 1048576, 2^20 or 1e6)"),
        ("sum --kernel reduce9 --dtype f8", "invalid value 'f8' for '--dtype <DTYPE>'"),
        ("bench --dtype f32,q4", "invalid value 'q4' for '--dtype <DTYPE,...>'"),
        ("rows --strategy diagonal", "invalid value 'diagonal' for '--strategy <STRATEGY>'"),
        ("rows-bench --shapes 4096by64", "\"4096by64\" is not a shape (write MxN: 4096x64, 2^10x2^16)"),
        ("multigpu sum --dtype f64", "invalid value 'f64' for '--dtype <DTYPE>'"),
        ("multigpu sum --n 2^20 --per-gpu 2^20", "cannot be used with"),
        ("multigpu allreduce --max 1TB", "\"1TB\" is not a size in bytes (write 8B, 64KiB, 1GiB or 2^30)"),
        ("mistakes --deadline 0", "invalid value '0' for '--deadline <SECONDS>': must be more than 0"),
        ("bench --sizes 2^20,0", "invalid value '0' for '--sizes <N,...>': \"0\": a size to measure must be at least 1"),
        ("ops-bench --sizes 0", "\"0\": a size to measure must be at least 1"),
        ("sum --kernel reduce9 --bogus 1", "unexpected argument '--bogus'"),
        ("sum --kernel", "a value is required for '--kernel <NAME>'"),
        ("dl-bench --planner-only", "the following required arguments were not provided:\n  --out <DIR>"),
        ("bench --scratch-pads 2", "the following required arguments were not provided:\n  --out <DIR>"),
        ("dl-bench --team block:2:256", "the following required arguments were not provided:\n  --out <DIR>\n  --planner-only"),
        ("dl-bench --planner-only --out x --team warp:8", "a team is block:VPT:THREADS, staged:VPT:THREADS, lanes:LANES:VPT, cluster:C:VPT:THREADS or split:S:VPT:THREADS"),
        ("", "Usage: reduction <COMMAND>"),
    ] {
        let (code, stdout, stderr) = reduction(args);
        assert!(code.is_some_and(|c| c != 0), "reduction {args}: {code:?}");
        assert!(stdout.is_empty(), "reduction {args} printed {stdout:?}");
        assert!(stderr.contains(expected), "reduction {args}: expected {expected:?} in\n{stderr}");
        assert!(args.is_empty() || stderr.starts_with("error: "), "reduction {args}: {stderr}");
    }
}

#[test]
fn a_device_memory_cap_that_is_not_a_size_is_refused_with_how_to_write_one() {
    for (value, shown) in [("lots", "\"lots\""), ("6 gigs", "\"6 gigs\""), ("2^30", "\"2^30\"")] {
        let out = Command::new(exe()).arg("info").env("REDUCTION_DEVICE_MEMORY", value).output().expect("the reduction binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.trim_end(), format!("error: REDUCTION_DEVICE_MEMORY={value}: {shown} is not a memory size (write 6GiB, 512MiB, 8GB or a number of bytes)"));
    }
}
