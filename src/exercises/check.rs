//! The parent's side: which file, compiled first (no GPU needed, so compile errors come back at
//! once with the reader's file and line), then run in a child process under a deadline,
//! optionally under compute-sanitizer, and the child's report turned into a [`Verdict`].

use super::catalogue::{Exercise, NearMiss};
use super::report::{ChildReport, Verdict};
use super::{CASE_LINE, CHILD_ENV, FILE_ENV, QUICK_ENV, SEED_ENV, SOURCE_ENV, TIME_ENV};
use crate::error::{Error, Result};
use crate::child::{run_with_deadline, tail_lines, Deadline, Ending, Sanitizer};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Which text of an exercise to check.
#[derive(Clone, Debug)]
pub enum Which {
    /// The stub as this binary embeds it.
    Stub,
    Solution,
    NearMiss(&'static NearMiss),
    /// A file on disk: the reader's work.
    File(PathBuf),
}

/// How to check.
#[derive(Clone, Debug)]
pub struct Options {
    pub seed: u64,
    /// A compute-sanitizer tool: run under it, on the small cases only, and without timing.
    pub sanitize: Option<Sanitizer>,
    /// Time a solved kernel beside the book's.
    pub time: bool,
    pub deadline: Deadline,
}

impl Options {
    pub fn new(seed: u64) -> Options {
        Options { seed, sanitize: None, time: false, deadline: Deadline { startup: Duration::from_secs(120), run: Duration::from_secs(20) } }
    }
}

/// The source a check hands its child, in a file no other check shares (removed on drop).
fn scratch_source(number: u32, text: &str) -> Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix(&format!("reduction-exercise-{number}-"))
        .suffix(".cu")
        .tempfile()
        .map_err(|e| crate::error::io_error(&std::env::temp_dir(), e))?;
    file.write_all(text.as_bytes()).map_err(|e| crate::error::io_error(file.path(), e))?;
    Ok(file)
}

/// The name shown in messages, and the text.
pub fn source(exercise: &Exercise, which: &Which) -> Result<(String, String)> {
    Ok(match which {
        Which::Stub => (exercise.stub_path(), exercise.stub.to_string()),
        Which::Solution => (exercise.solution_path(), exercise.solution.to_string()),
        Which::NearMiss(m) => (format!("{} [near miss: {}]", exercise.solution_path(), m.name), exercise.near_miss_source(m)?),
        Which::File(path) => (path.display().to_string(), std::fs::read_to_string(path).map_err(|e| crate::error::io_error(path, e))?),
    })
}

/// Compile with NVRTC for `arch` (no GPU needed). `Ok(None)` when it compiles; the verdict
/// with NVRTC's log (which names the reader's file and line) when it does not.
pub fn compile(file: &str, text: &str, arch: &str) -> Result<Option<Verdict>> {
    match crate::nvrtc::compile_cubin(file, &crate::kernels::spliced_source(file, text), arch, &[]) {
        Ok(_) => Ok(None),
        Err(Error::Compile { log, .. }) => Ok(Some(Verdict::DidNotCompile { log: readable_log(&log) })),
        Err(e) => Err(e),
    }
}

/// NVRTC's log without the option list the compile error starts with.
fn readable_log(log: &str) -> String {
    log.lines().filter(|l| !l.starts_with("NVRTC_ERROR")).collect::<Vec<_>>().join("\n").trim().to_string()
}

/// Check one text of `exercise`: compile, then run in a child of `exe` (a binary whose `main`
/// starts with [`crate::child::run_if_asked`] with [`super::CHILD`]).
pub fn check(exe: &Path, exercise: &Exercise, which: &Which, options: &Options) -> Result<Verdict> {
    let (file, text) = source(exercise, which)?;
    // Compile errors first, for the book's oldest architecture (no GPU needed, and no kernel of
    // an exercise needs more); the child compiles again for its own GPU.
    if let Some(verdict) = compile(&file, &text, &crate::arch::Arch::BOOK_MINIMUM.sm())? {
        return Ok(verdict);
    }
    // It compiles; running it needs a GPU. Say so plainly rather than as a crashed child.
    crate::gpu::probe()?;
    // A file of its own for each check: checks of one exercise run side by side (the test
    // binary runs the stub, the solution and the near misses at once), and a name shared by
    // them let one check's child compile another's source (the untouched stubs of exercises 4
    // and 8 "passed" so, with the solution's text, on the H200 on 2026-12-02). Removed on drop.
    let scratch = scratch_source(exercise.number, &text)?;
    let mut command = match options.sanitize {
        Some(tool) => tool.command(exe),
        None => Command::new(exe),
    };
    command
        .env(CHILD_ENV, exercise.number.to_string())
        .env(FILE_ENV, &file)
        .env(SOURCE_ENV, scratch.path())
        .env(SEED_ENV, options.seed.to_string())
        .env(QUICK_ENV, if options.sanitize.is_some() { "1" } else { "0" })
        .env(TIME_ENV, if options.time && options.sanitize.is_none() { "1" } else { "0" });
    let deadline = match options.sanitize {
        // Every access is checked: far slower.
        Some(_) => Deadline { startup: options.deadline.startup * 2, run: options.deadline.run * 6 },
        None => options.deadline,
    };
    let run = run_with_deadline(command, deadline);
    drop(scratch);
    let run = run.map_err(|e| Error::Config { setting: "running the exercise".into(), reason: format!("could not start {}: {e}", exe.display()) })?;
    let case = run.stdout.lines().rev().find_map(|l| l.strip_prefix(CASE_LINE)).map(|c| c.trim().to_string());
    let everything = format!("{}\n{}", run.stdout, run.stderr);
    if let Some(tool) = options.sanitize {
        if sanitizer_errors(&everything) > 0 {
            let report: Vec<&str> = everything.lines().filter(|l| l.starts_with("=========")).take(40).collect();
            return Ok(Verdict::SanitizerFound { tool, report: report.join("\n") });
        }
    }
    match (&run.ending, run.outcome_json()) {
        (Ending::Killed { .. }, _) => Ok(stopped(&run.stdout, case, run.run_time().as_secs_f64(), deadline.run.as_secs_f64())),
        (_, Some(json)) => {
            let report: ChildReport = serde_json::from_str(json)
                .map_err(|e| Error::Config { setting: "the exercise's report".into(), reason: format!("unreadable ({e}): {json}") })?;
            Ok(match report.failure {
                // Every value right; what no single-GPU case can see is read from the source.
                None => match super::fence::check_fence_order(&text).warning(&file) {
                    Some(warning) => Verdict::RightButUnsafe { cases: report.cases_total, warning },
                    None => Verdict::Solved { cases: report.cases_total, speed: report.speed, skipped: report.skipped },
                },
                Some(failure) => Verdict::Failed { passed: report.cases_passed, total: report.cases_total, failure },
            })
        }
        (Ending::Exited { status, .. }, None) => Ok(Verdict::Crashed { case, status: status.clone(), tail: tail_lines(&run.stderr, 12) }),
    }
}

/// A child killed at the deadline: too slow, if it answered every smaller case and its time grew
/// to past the deadline (the `CASE_DONE_LINE`s it printed say), or hung.
pub fn stopped(stdout: &str, case: Option<String>, seconds: f64, deadline_seconds: f64) -> Verdict {
    let answered: Vec<super::pace::Answered> = stdout
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix(super::CASE_DONE_LINE)?.split_whitespace();
            Some(super::pace::Answered { n: words.next()?.parse().ok()?, seconds: words.next()?.parse().ok()? })
        })
        .collect();
    // The killed case's size, from its label: `7 of 44 (n = 257 (2^8 + 1), i32, ...)`.
    let killed_n = case.as_deref().and_then(|c| c.split("n = ").nth(1)).and_then(|r| r.split(|ch: char| !ch.is_ascii_digit()).next()).and_then(|d| d.parse().ok());
    let Some(killed_n) = killed_n else {
        return Verdict::Hung { case, seconds, explanation: super::pace::Stopped::Hung.explain(0, deadline_seconds) };
    };
    match super::pace::classify(&answered, killed_n, deadline_seconds) {
        slow @ super::pace::Stopped::TooSlow { .. } => Verdict::TooSlow { case, explanation: slow.explain(killed_n, deadline_seconds) },
        hung => Verdict::Hung { case, seconds, explanation: hung.explain(killed_n, deadline_seconds) },
    }
}

/// What compute-sanitizer found: the count of its `ERROR SUMMARY: N errors` line, or of
/// racecheck's `RACECHECK SUMMARY: N hazards displayed` (a race inside one warp is reported as
/// a warning, not an error, and is still a race). 0 if neither.
pub fn sanitizer_errors(output: &str) -> usize {
    let count = |marker: &str| {
        output
            .lines()
            .filter_map(|l| l.split(marker).nth(1))
            .filter_map(|rest| rest.split_whitespace().next()?.parse::<usize>().ok())
            .max()
            .unwrap_or(0)
    };
    count("ERROR SUMMARY:").max(count("RACECHECK SUMMARY:"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kill_after_growing_times_is_too_slow_and_one_without_is_hung() {
        let done = |n: usize, s: f64| format!("{} {n} {s}\n", super::super::CASE_DONE_LINE);
        let slow: String = [(65537, 0.07), (1048613, 1.1)].iter().map(|&(n, s)| done(n, s)).collect();
        let case = Some("44 of 44 (n = 16777219 (2^24 + 3), i32)".to_string());
        match stopped(&slow, case.clone(), 20.0, 20.0) {
            Verdict::TooSlow { explanation, .. } => assert!(explanation.starts_with("too slow, not hung"), "{explanation}"),
            other => panic!("{other:?}"),
        }
        let fast: String = [(65537, 0.0002), (1048613, 0.0003)].iter().map(|&(n, s)| done(n, s)).collect();
        assert!(matches!(stopped(&fast, case, 20.0, 20.0), Verdict::Hung { .. }));
        assert!(matches!(stopped("", None, 20.0, 20.0), Verdict::Hung { .. }));
    }

    #[test]
    fn the_sanitizer_summary_is_read() {
        assert_eq!(sanitizer_errors("========= ERROR SUMMARY: 3 errors\n"), 3);
        assert_eq!(sanitizer_errors("========= ERROR SUMMARY: 0 errors\n"), 0);
        assert_eq!(sanitizer_errors("nothing"), 0);
        assert_eq!(sanitizer_errors("========= RACECHECK SUMMARY: 3 hazards displayed (0 errors, 10 warnings)\n========= ERROR SUMMARY: 0 errors"), 3);
    }

    #[test]
    fn two_checks_of_one_exercise_never_share_a_source_file() {
        // The stub's check and the solution's, side by side in one process: each child must
        // read its own text (a shared name once let the stub's child compile the solution).
        let stub = scratch_source(4, "stub").unwrap();
        let solution = scratch_source(4, "solution").unwrap();
        assert_ne!(stub.path(), solution.path());
        assert_eq!(std::fs::read_to_string(stub.path()).unwrap(), "stub");
        let path = solution.path().to_path_buf();
        drop(solution);
        assert!(!path.exists(), "removed when the check is done");
    }

    #[test]
    fn sources_are_named_for_the_reader() {
        let e = &super::super::all()[0];
        assert_eq!(source(e, &Which::Stub).unwrap().0, "kernels/exercises/01_strided_index.cu");
        let (name, text) = source(e, &Which::NearMiss(&e.near_misses[0])).unwrap();
        assert!(name.ends_with("[near miss: drops_last_element]") && text.contains("(i + 1 < n)"));
        assert!(matches!(source(e, &Which::File("/no/such/file.cu".into())), Err(Error::Io { .. })));
    }
}
