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
    trials.push(Trial::ignorable_test("peers::device_memory_is_read_as_the_library_reads_it", python_memory_rules));
    libtest_mimic::run(&args, trials).exit();
}

/// `plots/peers.py` (and through it `plots/tile_peers.py`) reads `REDUCTION_DEVICE_MEMORY` with a
/// parser of its own: it must give the library's bytes, or refuse what the library refuses; and
/// its pool plan must skip what does not fit. No GPU, no PyTorch: the functions are plain Python.
fn python_memory_rules() -> Result<Completion, Failed> {
    let texts = ["6GiB", "512MiB", "8GB", "1.5GiB", " 6 GiB ", ".25KiB", "100MB", "2TB", "1TiB", "8B", "1073741824", "0",
        "", "GiB", "six GiB", "6 gigs", "6GiBs", "-1GiB", "1e9", "2^30", "6.5.1GiB", ".", "1,5GiB", "0x10", "99999999999TiB"];
    let script = format!(
        "import json, sys\nsys.path.insert(0, 'plots')\nsys.dont_write_bytecode = True\nimport peers\nout = []\n\
         for t in {texts:?}:\n    try: out.append(peers.parse_memory_size(t))\n    except ValueError: out.append(None)\n\
         sizes = [1 << k for k in range(10, 31)]\n\
         out.append(peers.plan_pool(sizes, 4, 60 << 20, 6 << 30))\n\
         out.append(peers.plan_pool(sizes, 4, 60 << 20, 139 << 30))\n\
         out.append(peers.budget_from(139 << 30, '6GiB'))\n\
         out.append(peers.budget_from(5 << 30, '6GiB'))\n\
         out.append(peers.budget_from(5 << 30, None))\n\
         out.append([peers.allocator_fraction(6 << 30, 140 << 30), peers.allocator_fraction(None, 140 << 30), peers.allocator_fraction(200 << 30, 140 << 30)])\n\
         print(json.dumps(out))\n"
    );
    let output = match Command::new("python3").arg("-c").arg(&script).current_dir(root()).output() {
        Ok(output) => output,
        Err(e) if required() => return Err(format!("REQUIRE_TILE_LANGUAGES=1 but python3 cannot be started: {e}").into()),
        Err(e) => return Ok(Completion::ignored_with(format!("python3 cannot be started: {e}"))),
    };
    if !output.status.success() {
        return Err(format!("python3 failed: {}", String::from_utf8_lossy(&output.stderr)).into());
    }
    let answers: Vec<serde_json::Value> = serde_json::from_slice(&output.stdout)?;
    for (text, answer) in texts.iter().zip(&answers) {
        let library = reduction::device_memory::parse_size(text).ok();
        if answer.as_u64() != library {
            return Err(format!("{text:?}: peers.py reads {answer}, the library {library:?}").into());
        }
    }
    let rest = &answers[texts.len()..];
    let plan = |i: usize| (rest[i][0].as_u64().unwrap_or(0), rest[i][1].as_array().map(|a| a.iter().filter_map(|v| v.as_u64()).collect::<Vec<_>>()).unwrap_or_default());
    // Under 6 GiB the pool is 45% of it (2.7 GiB of f32): 2^30 (4 GiB) is skipped, 2^29 kept.
    let (pool, skipped) = plan(0);
    if pool != (6u64 << 30) * 45 / 100 / 4 || skipped != [1 << 30] {
        return Err(format!("the 6 GiB plan: pool {pool}, skipped {skipped:?}").into());
    }
    let (pool, skipped) = plan(1);
    if pool != 1 << 31 || !skipped.is_empty() {
        return Err(format!("the 139 GiB plan: pool {pool}, skipped {skipped:?}").into());
    }
    let budgets: Vec<u64> = rest[2..5].iter().map(|b| b[0].as_u64().unwrap_or(0)).collect();
    if budgets != [6 << 30, 5 << 30, 5 << 30] || !rest[2][1].as_str().unwrap_or("").contains("REDUCTION_DEVICE_MEMORY=6GiB") {
        return Err(format!("budgets {budgets:?}: {:?}", &rest[2..5]).into());
    }
    // torch's allocator held to the cap (6 of 140 GiB), and left alone without one or above the GPU.
    let fractions = &rest[5];
    let held = fractions[0].as_f64().unwrap_or(0.0);
    if (held - 6.0 / 140.0).abs() > 1e-12 || !fractions[1].is_null() || !fractions[2].is_null() {
        return Err(format!("torch's allocator fractions: {fractions}").into());
    }
    Ok(Completion::Completed)
}
