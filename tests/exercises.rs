//! The exercises, checked: every stub, solution and near miss compiles with NVRTC (no GPU
//! needed, so CI runs it), a compile error names the reader's file and line; and on a GPU,
//! every reference solution passes, every untouched stub fails and every near miss fails —
//! each failure naming its case. A stub the reader has started on (its `TODO(exercise)` gone)
//! is not held to failing: `EXERCISE=N cargo test --test exercises` checks the reader's file
//! instead, and only when asked, so a stub never makes a plain `cargo test` fail.
//!
//! With `EXERCISES_RECORD=FILE`, the counts are written to FILE (the book's closing note).

mod common;

use common::{gpu_trial, nvrtc_trial, run_seed};
use libtest_mimic::{Arguments, Failed, Trial};
use reduction::exercises::{self, CaughtBy, Exercise, NearMiss, Options, Verdict, Which, TODO_MARKER};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// (exercise, what was checked, verdict in a word, the case it named) for the closing note.
static SEEN: Mutex<Vec<(u32, String, &'static str, String)>> = Mutex::new(Vec::new());

fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

fn main() {
    // This binary is also the checker's child: run the exercise the environment names, and exit.
    if let Some(code) = reduction::child::run_if_asked(&[exercises::CHILD]) {
        std::process::exit(code);
    }
    let mut trials = Vec::new();
    for e in exercises::all() {
        let texts: Vec<(String, Which)> = [("stub".to_string(), Which::Stub), ("solution".to_string(), Which::Solution)]
            .into_iter()
            .chain(e.near_misses.iter().map(|m| (format!("near_miss::{}", m.name), Which::NearMiss(m))))
            .collect();
        for (what, which) in texts {
            trials.push(nvrtc_trial(format!("compile::{:02}::{what}", e.number), move || {
                let (file, text) = exercises::check::source(e, &which)?;
                match exercises::compile(&file, &text, "sm_90")? {
                    None => Ok(()),
                    Some(verdict) => Err(verdict.render(e, &file).into()),
                }
            }));
        }
        trials.push(gpu_trial(format!("gpu::{:02}::solution_passes", e.number), move |_| solution_passes(e)));
        trials.push(stub_trial(e));
        for m in e.near_misses {
            trials.push(common::gpu_trial_with_completion(format!("gpu::{:02}::near_miss::{}", e.number, m.name), move |_| near_miss_fails(e, m)));
        }
    }
    trials.push(nvrtc_trial("compile::errors_name_the_readers_file_and_line", compile_error_is_located));
    trials.push(gpu_trial("gpu::07::one_thread_is_solved_or_too_slow_never_hung", |_| one_thread_is_never_hung()));
    if let Ok(number) = std::env::var("EXERCISE") {
        trials.push(gpu_trial(format!("reader::exercise_{number}"), move |_| readers_file(&number)));
    }
    let mut args = Arguments::from_args();
    // One check at a time: each runs a child on the GPU, and a solution is timed.
    args.test_threads.get_or_insert(1);
    let conclusion = libtest_mimic::run(&args, trials);
    closing_note();
    conclusion.exit()
}

fn options() -> Options {
    Options::new(run_seed())
}

fn exe() -> PathBuf {
    std::env::current_exe().expect("the test binary knows where it is")
}

fn note(e: &Exercise, what: &str, verdict: &Verdict) {
    let word = match verdict {
        Verdict::Solved { .. } => "passed",
        Verdict::SanitizerFound { .. } => "sanitizer",
        Verdict::DidNotCompile { .. } => "no compile",
        _ => "failed",
    };
    let case = verdict.failing_case().unwrap_or("").to_string();
    SEEN.lock().unwrap_or_else(|p| p.into_inner()).push((e.number, what.to_string(), word, case));
}

fn solution_passes(e: &'static Exercise) -> Result<(), Failed> {
    let mut o = options();
    o.time = true;
    let verdict = exercises::check(&exe(), e, &Which::Solution, &o)?;
    let text = verdict.render(e, &e.solution_path());
    eprintln!("{text}");
    note(e, "solution", &verdict);
    if verdict.solved() { Ok(()) } else { Err(text.into()) }
}

/// A failure that names its case (or a sanitizer report) is what the reader must see.
fn must_fail_naming_a_case(e: &Exercise, what: &str, verdict: &Verdict, file: &str) -> Result<(), Failed> {
    let text = verdict.render(e, file);
    eprintln!("{text}");
    note(e, what, verdict);
    match verdict {
        Verdict::Solved { .. } => Err(format!("{what} of exercise {} passed the checker; it must fail:\n{text}", e.number).into()),
        Verdict::DidNotCompile { .. } => Err(format!("{what} of exercise {} does not compile; it must compile and fail:\n{text}", e.number).into()),
        Verdict::SanitizerFound { report, .. } if !report.is_empty() => Ok(()),
        Verdict::RightButUnsafe { warning, .. } if warning.contains("memory model") => Ok(()),
        // A case names its input: `n = 33 (2^5 + 1), f32` or, for the row exercises, `3 rows of 7 f32 values`.
        _ if verdict.failing_case().is_some_and(|c| c.contains("n = ") || c.contains(" of ")) => Ok(()),
        _ => Err(format!("{what} of exercise {} failed without naming its case:\n{text}", e.number).into()),
    }
}

fn stub_trial(e: &'static Exercise) -> Trial {
    let name = format!("gpu::{:02}::stub_fails", e.number);
    // The stub the reader edits, as it is on disk now (the binary embeds the one it was built with).
    let on_disk = std::fs::read_to_string(root().join(e.stub_path())).unwrap_or_else(|_| e.stub.to_string());
    if !on_disk.contains(TODO_MARKER) {
        return Trial::test(name, || Ok(())).with_ignored_flag(true).with_kind(format!(
            "you have started this exercise (no {TODO_MARKER} left): `reduction exercise {}` or EXERCISE={} checks it",
            e.number, e.number
        ));
    }
    gpu_trial(name, move |_| {
        let verdict = exercises::check(&exe(), e, &Which::Stub, &options())?;
        must_fail_naming_a_case(e, "stub", &verdict, &e.stub_path())
    })
}

fn near_miss_fails(e: &'static Exercise, m: &'static NearMiss) -> Result<libtest_mimic::Completion, Failed> {
    let mut o = options();
    if let CaughtBy::Sanitizer(tool) = m.caught_by {
        o.sanitize = Some(tool);
    }
    let verdict = exercises::check(&exe(), e, &Which::NearMiss(m), &o)?;
    // A near miss only the case past 2^31 can show, on a GPU without the memory for that case.
    if let (CaughtBy::LargeCase, Verdict::Solved { skipped, .. }) = (m.caught_by, &verdict) {
        if let Some(why) = skipped.first() {
            return Ok(libtest_mimic::Completion::ignored_with(format!("not caught here: {why}")));
        }
    }
    must_fail_naming_a_case(e, &format!("near miss {}", m.name), &verdict, &format!("{} [{}]", e.solution_path(), m.name))?;
    Ok(libtest_mimic::Completion::Completed)
}

/// A correct kernel that sums everything in one thread: it may pass (the checker's largest case
/// is small enough) or be stopped at the deadline, but then as too slow, never as hung.
fn one_thread_is_never_hung() -> Result<(), Failed> {
    let e = exercises::find(7)?;
    let solution = e.solution;
    let one_thread = reduction::mutants::plant_once(
        solution,
        "    while (i < n) {\n        sum += in[i];\n        if (i + blockDim.x < n) sum += in[i + blockDim.x];\n        i += grid_stride;\n    }\n",
        "    if (blockIdx.x == 0 && tid == 0) {\n        for (u64 j = 0; j < n; ++j) sum += in[j];\n    }\n",
    )
    .map_err(|count| format!("the one-thread walk expects the solution's loop once, found it {count} times"))?;
    let path = std::env::temp_dir().join(format!("reduction-one-thread-{}.cu", std::process::id()));
    std::fs::write(&path, one_thread)?;
    let verdict = exercises::check(&exe(), e, &Which::File(path.clone()), &options());
    let _ = std::fs::remove_file(&path);
    let verdict = verdict?;
    let text = verdict.render(e, "one thread");
    eprintln!("{text}");
    match verdict {
        Verdict::Solved { .. } | Verdict::TooSlow { .. } => Ok(()),
        _ => Err(format!("a correct one-thread sum must be solved or too slow, never this:\n{text}").into()),
    }
}

fn readers_file(number: &str) -> Result<(), Failed> {
    let e = exercises::find(number.parse().map_err(|_| format!("EXERCISE={number:?} is not a number"))?)?;
    let path = root().join(e.stub_path());
    let mut o = options();
    o.time = true;
    let verdict = exercises::check(&exe(), e, &Which::File(path.clone()), &o)?;
    let text = verdict.render(e, &path.display().to_string());
    eprintln!("{text}");
    if verdict.solved() { Ok(()) } else { Err(text.into()) }
}

fn compile_error_is_located() -> Result<(), Failed> {
    let e = &exercises::all()[2];
    let broken = e.stub.replacen("// TODO(exercise): the tree with sequential addressing.", "for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) sdata[tid] += sdta[tid + s];", 1);
    let line = broken.lines().position(|l| l.contains("sdta")).expect("planted") + 1;
    let file = e.stub_path();
    match exercises::compile(&file, &broken, "sm_90")? {
        Some(verdict @ Verdict::DidNotCompile { .. }) => {
            let text = verdict.render(e, &file);
            let at = format!("{file}({line})");
            if text.contains(&at) && text.contains("sdta") { Ok(()) } else { Err(format!("expected {at} and `sdta` in:\n{text}").into()) }
        }
        other => Err(format!("expected a compile error, got {other:?}").into()),
    }
}

/// After the trials: how many of each passed and failed, for the book's closing note.
fn closing_note() {
    let seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    if seen.is_empty() {
        return;
    }
    let count = |what: &str, word: &str| seen.iter().filter(|(_, w, v, _)| w.starts_with(what) && *v == word).count();
    let total = |what: &str| seen.iter().filter(|(_, w, _, _)| w.starts_with(what)).count();
    let tally = reduction::records::exercises::Tally {
        solutions_passed: count("solution", "passed"),
        solutions: total("solution"),
        stubs_failed: total("stub") - count("stub", "passed"),
        stubs: total("stub"),
        near_misses_failed: total("near miss") - count("near miss", "passed"),
        near_misses: total("near miss"),
        found_by_sanitizer: count("near miss", "sanitizer"),
    };
    let mut text = format!("{}\n", tally.sentence());
    text += "\n| exercise | checked | verdict | first failing case |\n|---|---|---|---|\n";
    let mut rows: Vec<_> = seen.iter().collect();
    rows.sort();
    for (n, what, verdict, case) in rows {
        text += &format!("| {n} | {what} | {verdict} | {} |\n", if case.is_empty() { "—".to_string() } else { case.replace('|', "\\|") });
    }
    eprintln!("\n{text}");
    if let Ok(path) = std::env::var("EXERCISES_RECORD") {
        let path = Path::new(&path);
        if let Err(e) = std::fs::write(path, &text) {
            eprintln!("could not write {}: {e}", path.display());
        }
    }
}
