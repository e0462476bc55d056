//! The kernels written in TileLang (kernels/tilelang/) and Triton (kernels/triton/) -- the row
//! and whole-array sums, max, row mean/variance, softmax, the norms, cross-entropy and the
//! backward reductions -- checked on the GPU against a float64 reference by
//! `tests/tile_languages.py`, one child process per (language, kernel), each with a deadline:
//! exact and random inputs in f32, f16 and bf16 (and i32 for max), at N = 1, 31, 2^k ± 1, M = 1
//! and tiles that do not divide the shape, and one planted bug a type that must be caught.
//!
//! Where Python, PyTorch, a CUDA GPU or the language itself cannot be imported, the trial is
//! reported ignored with the reason; `REQUIRE_TILE_LANGUAGES=1` makes that a failure. The
//! chapter's line counts and listings are checked with no GPU.

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The repository: the current directory where it holds the scripts (the GPU bundle runs from
/// the repository's root), else the crate's own directory.
fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

fn required() -> bool {
    std::env::var("REQUIRE_TILE_LANGUAGES").is_ok_and(|v| v == "1")
}

/// The kernels of each language that `tests/tile_languages.py` checks: the sums of the
/// tile-language chapter, then the operators' and deep-learning reductions' peers (plots/op_peers.py,
/// plots/dl_peers.py). TileLang has no softmax backward or dγ/dβ written here.
const KERNELS: [(&str, &[&str]); 2] = [
    ("tilelang", &["row_sum", "sum", "max", "row_max", "row_mean_var", "softmax", "log_softmax", "layer_norm", "rms_norm", "cross_entropy"]),
    ("triton", &["row_sum", "sum", "max", "row_max", "row_mean_var", "softmax", "log_softmax", "layer_norm", "rms_norm", "cross_entropy",
        "softmax_bwd", "layer_norm_bwd_gamma_beta"]),
];

/// How long one child may take: TileLang compiles each kernel with nvcc (~2 s each, in parallel).
const DEADLINE: Duration = Duration::from_secs(600);

/// Run the checks of `language`'s `kernel`; `Ok(Err(reason))` when they cannot run here.
fn run_checks(language: &str, kernel: &str) -> Result<Result<usize, String>, Failed> {
    let root = root();
    let mut child = match Command::new("python3")
        .arg(root.join("tests/tile_languages.py"))
        .args([language, kernel])
        .current_dir(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return Ok(Err(format!("python3 cannot be started: {e}"))),
    };
    // Read the pipes on their own threads, so that a full pipe cannot stall the child.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).map(|_| s)
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).map(|_| s)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{language} {kernel}: no answer after {} s; killed", DEADLINE.as_secs()).into());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = out_reader.join().map_err(|_| "stdout reader panicked")??;
    let stderr = err_reader.join().map_err(|_| "stderr reader panicked")??;
    if !status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        return Err(format!("{language} {kernel}: the checks exited with {status}: {}", tail.into_iter().rev().collect::<Vec<_>>().join("\n")).into());
    }
    // TileLang logs to stdout too: only the JSON lines are the checks' records.
    let mut passed = 0;
    let mut failed = Vec::new();
    for line in stdout.lines().filter(|l| l.starts_with('{')) {
        let record: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("{line:?}: {e}"))?;
        if let Some(why) = record.get("unavailable").and_then(|v| v.as_str()) {
            return Ok(Err(why.to_string()));
        }
        match record.get("ok").and_then(|v| v.as_bool()) {
            Some(true) => passed += 1,
            Some(false) => failed.push(format!("{}: {}", record["check"].as_str().unwrap_or("?"), record["detail"].as_str().unwrap_or(""))),
            None => return Err(format!("a record with no verdict: {line}").into()),
        }
    }
    if !failed.is_empty() {
        return Err(format!("{} of {} checks failed: {}", failed.len(), failed.len() + passed, failed.iter().take(5).cloned().collect::<Vec<_>>().join("; ")).into());
    }
    if passed == 0 {
        return Err(format!("{language} {kernel}: no check ran").into());
    }
    Ok(Ok(passed))
}

fn checks_trial(language: &'static str, kernel: &'static str) -> Trial {
    Trial::ignorable_test(format!("{language}::{kernel}"), move || match run_checks(language, kernel)? {
        Ok(passed) => {
            println!("{language} {kernel}: {passed} checks passed");
            Ok(Completion::Completed)
        }
        Err(why) if required() => Err(format!("REQUIRE_TILE_LANGUAGES=1 but {why}").into()),
        Err(why) => Ok(Completion::ignored_with(why)),
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for (language, kernels) in KERNELS {
        for kernel in kernels {
            trials.push(checks_trial(language, kernel));
        }
    }
    // No GPU needed: every listing the chapter counts is there, anchored, and short.
    trials.push(Trial::test("listings::every_counted_listing_is_anchored", || {
        let counts = reduction::book::chapters::tile::line_counts()?;
        if counts.len() != reduction::book::chapters::tile::LISTINGS.len() || counts.iter().any(|(_, n)| *n == 0) {
            return Err(format!("{counts:?}").into());
        }
        let chapter = std::fs::read_to_string(root().join("book/tile_languages.md"))?;
        for listing in &reduction::book::chapters::tile::LISTINGS {
            for anchor in listing.anchors {
                let include = format!("{}:{anchor}}}}}", listing.file);
                if !chapter.contains(&include) {
                    return Err(format!("book/tile_languages.md does not include {include}").into());
                }
            }
        }
        Ok(())
    }));
    // The chapter's paragraph on what TileLang did for us: each claim in the saved source.
    trials.push(Trial::test("generated::the_saved_source_shows_what_the_chapter_says", || {
        let path = root().join("plots/data/tile").join(reduction::records::tile::GENERATED_SOURCE);
        let source = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let claims = [("16-byte loads", "*(float4*)(A +"), ("loads issued before any add", "#pragma unroll"), ("adds in registers first", "rv < "),
            ("shuffles across threads", "tl::AllReduce"), ("the block size from the program", "__launch_bounds__(128")];
        let missing: Vec<&str> = claims.iter().filter(|(_, needle)| !source.contains(needle)).map(|(claim, _)| *claim).collect();
        if missing.is_empty() { Ok(()) } else { Err(format!("{}: no sign of {missing:?}", path.display()).into()) }
    }));
    libtest_mimic::run(&args, trials).exit();
}
