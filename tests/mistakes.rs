//! The common mistakes, each run in a child process under a deadline (src/child/supervisor.rs), and the
//! guard itself.
//!
//! - With no GPU (CI): the guard against children that sleep, lie, crash, fail to report or
//!   flood their pipes (this binary re-executes itself with `REDUCTION_GUARD_SELFTEST=<mode>`);
//!   mistake 9 on the CPU; the chapter's generated tables, sanitizer logs, diffs and `#line`
//!   directives against the files; the command line's refusals of bad input.
//! - With a GPU: every mistake through the guard (this binary re-executes itself with
//!   `REDUCTION_MISTAKE=<name>`). The outcome is asserted where the mistake is wrong by
//!   construction (2, 4, 5: wrong sums; 7: a CUDA error; 8: a hang, killed within a second of
//!   the deadline) and only recorded where it is a matter of luck (1, 3, 6) — the observation
//!   is printed either way (`observed:` lines). Then a check that this process's own GPU
//!   context still sums correctly.
//!
//! Trials run one at a time, in order, whatever `--test-threads` says: the mistakes must not
//! share the GPU with each other (a hang holds every SM), and the last check must come last.
//!
//! Environment: `CHILD_DEADLINE_S` (default 5) and `CHILD_STARTUP_S` (default 60) set the
//! deadlines; `MISTAKES_N`, `MISTAKES_RUNS`, `MISTAKES_SEED` the runs; `MISTAKES_RECORD=dir/`
//! (or `=file.csv`) writes what was observed, for the book (`plots/data/mistakes/<gpu>.csv`).

mod common;

use common::gpu_trial;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use reduction::data::{self, Checked};
use reduction::child::{self as guard, ChildRun, Deadline, Ending, Phase};
use reduction::mistakes::{self, Class, CudaCode, Mistake, Observation, Outcome, Recorded, Records, Report, RunOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The test-only child modes of the guard's own tests.
const SELFTEST_ENV: &str = "REDUCTION_GUARD_SELFTEST";

fn main() {
    // A child of this binary: a mistake, or one of the guard's self-tests. Before anything else,
    // and before libtest-mimic reads the command line.
    if let Some(code) = guard::run_if_asked(&[mistakes::CHILD]) {
        std::process::exit(code);
    }
    if let Ok(mode) = std::env::var(SELFTEST_ENV) {
        std::process::exit(selftest_child(&mode));
    }

    let mut trials = guard_trials();
    trials.push(Trial::test("float_equality::on_the_cpu_==_fails_and_the_bound_holds", float_equality_on_the_cpu));
    trials.extend(book_trials());
    trials.push(common::nvrtc_trial("kernels::without_volatile_every_lane_reads_its_neighbours_before_it_writes", warp_no_volatile_reads_first));
    trials.push(Trial::ignorable_test("cli::bad_input_is_refused_with_a_message", cli_refuses_bad_input));
    for mistake in mistakes::run_order() {
        trials.push(mistake_trial(mistake));
    }
    trials.push(gpu_trial("gpu::the_parent_process_still_sums_after_every_mistake", parent_still_sums));
    run_in_order(trials)
}

/// `common::run`, but one trial at a time, in the order given.
fn run_in_order(trials: Vec<Trial>) -> ! {
    let mut args = Arguments::from_args();
    args.test_threads = Some(1);
    if let Err(why) = common::gpu() {
        if !common::gpu_required() {
            eprintln!("note: tests that need a GPU are ignored here: {why} (REQUIRE_GPU=1 makes them fail instead)");
        }
    }
    libtest_mimic::run(&args, trials).exit()
}

// ---- the guard, with children that need no GPU ----

fn selftest_child(mode: &str) -> i32 {
    use std::io::Write;
    let report = |outcome: Outcome, wrong: usize| {
        let mut r = Report::new(outcome);
        r.runs = 3;
        r.wrong_runs = wrong;
        r.detail = "self-test".into();
        r
    };
    match mode {
        "sleep" => {
            guard::say_ready();
            std::thread::sleep(Duration::from_secs(600));
            0
        }
        "slow-host" => {
            // Three runs, each prepared on the host for 0.7 s and announced with READY.
            for _ in 0..3 {
                std::thread::sleep(Duration::from_millis(700));
                guard::say_ready();
            }
            report(Outcome::Correct, 0).print().expect("stdout takes the report");
            0
        }
        "sleep-before-ready" => {
            std::thread::sleep(Duration::from_secs(600));
            0
        }
        "sleep-with-grandchild" => {
            // As compute-sanitizer runs its target: the work in a process of its own. Never
            // waited for: this process sleeps until the guard kills it.
            #[allow(clippy::zombie_processes)]
            let grandchild = Command::new(std::env::current_exe().expect("the test binary")).env(SELFTEST_ENV, "sleep-before-ready").spawn().expect("a grandchild");
            eprintln!("grandchild {}", grandchild.id());
            guard::say_ready();
            std::thread::sleep(Duration::from_secs(600));
            0
        }
        "correct" => {
            guard::say_ready();
            report(Outcome::Correct, 0).print().expect("stdout takes the report");
            0
        }
        "wrong" => {
            guard::say_ready();
            report(Outcome::WrongResult { got: 41.0, expected: 42.0 }, 2).print().expect("stdout takes the report");
            0
        }
        "launch-error" => {
            guard::say_ready();
            let error = "pass 1 of 3: DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access was encountered\")";
            let cuda = CudaCode { name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(), description: "an illegal memory access was encountered".into() };
            report(Outcome::LaunchError { error: error.into(), cuda: Some(cuda) }, 0).print().expect("stdout takes the report");
            0
        }
        "exit-with-message" => {
            eprintln!("error: the self-test child could not do its work");
            3
        }
        "panic" => panic!("the self-test child panicked on purpose"),
        "garbage" => {
            guard::say_ready();
            println!("{} {{\"outcome\": \"correct\", \"runs\": ", guard::OUTCOME);
            0
        }
        "chatty" => {
            guard::say_ready();
            let line = "x".repeat(1023);
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
            for _ in 0..4096 {
                let _ = writeln!(out, "{line}");
                let _ = writeln!(err, "{line}");
            }
            drop((out, err));
            report(Outcome::Correct, 0).print().expect("stdout takes the report");
            0
        }
        other => {
            eprintln!("unknown {SELFTEST_ENV} mode {other:?}");
            2
        }
    }
}

fn selftest(mode: &str, deadline: Deadline) -> Result<(ChildRun, Observation, Duration), Failed> {
    let mut command = Command::new(std::env::current_exe()?);
    command.env(SELFTEST_ENV, mode).env_remove(mistakes::CHILD_ENV);
    let started = Instant::now();
    let run = guard::run_with_deadline(command, deadline)?;
    let wall = started.elapsed();
    let observed = mistakes::classify(&run);
    Ok((run, observed, wall))
}

const GENEROUS: Deadline = Deadline { startup: Duration::from_secs(30), run: Duration::from_secs(30) };

fn expect_class(observed: &Observation, class: Class) -> Result<(), Failed> {
    if observed.outcome().class() == class {
        Ok(())
    } else {
        Err(format!("expected {}, classified {:?}", class.name(), observed).into())
    }
}

/// On Linux, a reaped process has no /proc entry (unless its id was reused at once).
fn process_is_gone(pid: u32) -> bool {
    !Path::new("/proc").exists() || !Path::new(&format!("/proc/{pid}")).exists()
}

fn guard_trials() -> Vec<Trial> {
    vec![
        Trial::test("guard::a_child_that_sleeps_past_the_deadline_is_killed_as_a_hang", || {
            let deadline = Deadline { startup: Duration::from_secs(30), run: Duration::from_secs(1) };
            let (run, observed, wall) = selftest("sleep", deadline)?;
            let Outcome::Hang { phase: Phase::Run, after } = observed.outcome() else {
                return Err(format!("expected a hang in the run phase, got {:?}", observed).into());
            };
            let startup = run.ready_after.ok_or("the child never said it was ready")?;
            eprintln!("ready after {startup:?}, killed {after:?} later, guard returned after {wall:?}");
            if *after < deadline.run || *after > deadline.run + Duration::from_secs(1) {
                return Err(format!("killed {after:?} after READY; the deadline is {:?}", deadline.run).into());
            }
            if wall > startup + deadline.run + Duration::from_secs(1) {
                return Err(format!("the guard took {wall:?} to come back").into());
            }
            if run.ending != (Ending::Killed { phase: Phase::Run, reaped: true }) || !process_is_gone(run.pid) {
                return Err(format!("the child was not killed and reaped: {:?}, pid {}", run.ending, run.pid).into());
            }
            Ok(())
        }),
        Trial::test("guard::a_child_that_never_gets_ready_is_killed_at_the_startup_deadline", || {
            let deadline = Deadline { startup: Duration::from_secs(1), run: Duration::from_secs(60) };
            let (run, observed, wall) = selftest("sleep-before-ready", deadline)?;
            if !matches!(observed.outcome(), Outcome::Hang { phase: Phase::Startup, .. }) {
                return Err(format!("expected a hang at start-up, got {observed:?}").into());
            }
            if wall > deadline.startup + Duration::from_secs(1) || !process_is_gone(run.pid) {
                return Err(format!("took {wall:?}; child gone: {}", process_is_gone(run.pid)).into());
            }
            // The verdict of any mistake refuses a hang before READY: that is not the kernel.
            let verdict = mistakes::find("grid_barrier_spin").unwrap().verdict(&observed, deadline);
            if verdict.is_ok() {
                return Err("a start-up hang passed for the grid barrier's hang".into());
            }
            Ok(())
        }),
        Trial::test("guard::a_hung_child_is_killed_with_what_it_started", || {
            let deadline = Deadline { startup: Duration::from_secs(30), run: Duration::from_secs(1) };
            let (run, observed, _) = selftest("sleep-with-grandchild", deadline)?;
            if !matches!(observed.outcome(), Outcome::Hang { phase: Phase::Run, .. }) {
                return Err(format!("expected a hang in the run phase, got {observed:?}").into());
            }
            let grandchild: u32 = run.stderr.lines().find_map(|l| l.strip_prefix("grandchild ")).ok_or("the child did not say its grandchild's id")?.trim().parse()?;
            // Killed within a moment: gone, or a zombie waiting for the process that adopted it.
            let killed = || process_is_gone(grandchild) || std::fs::read_to_string(format!("/proc/{grandchild}/stat")).is_ok_and(|s| s.contains(") Z "));
            let until = Instant::now() + Duration::from_secs(5);
            while !killed() {
                if Instant::now() > until {
                    return Err(format!("the grandchild {grandchild} outlived the kill").into());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(())
        }),
        Trial::test("guard::each_ready_line_restarts_the_run_deadline", || {
            // 2.1 s in all, never more than 0.7 s after a READY: within a 1 s run deadline.
            let deadline = Deadline { startup: Duration::from_secs(30), run: Duration::from_secs(1) };
            let (run, observed, _) = selftest("slow-host", deadline)?;
            expect_class(&observed, Class::Correct)?;
            if run.elapsed < Duration::from_secs(2) || run.run_time() > Duration::from_secs(1) {
                return Err(format!("elapsed {:?}, run time {:?}", run.elapsed, run.run_time()).into());
            }
            Ok(())
        }),
        Trial::test("guard::a_child_that_reports_a_wrong_sum_is_wrong_result", || {
            let (_, observed, _) = selftest("wrong", GENEROUS)?;
            expect_class(&observed, Class::WrongResult)?;
            match observed.outcome() {
                Outcome::WrongResult { got, expected } if *got == 41.0 && *expected == 42.0 && observed.report.wrong_runs == 2 => Ok(()),
                other => Err(format!("the report's numbers did not come through: {other:?}").into()),
            }
        }),
        Trial::test("guard::a_child_that_reports_a_cuda_error_is_launch_error", || {
            let (_, observed, _) = selftest("launch-error", GENEROUS)?;
            expect_class(&observed, Class::LaunchError)?;
            match observed.outcome() {
                Outcome::LaunchError { cuda: Some(code), .. } if code.name == "CUDA_ERROR_ILLEGAL_ADDRESS" => Ok(()),
                other => Err(format!("the error did not come through: {other:?}").into()),
            }
        }),
        Trial::test("guard::a_child_that_succeeds_is_correct", || {
            let (run, observed, _) = selftest("correct", GENEROUS)?;
            expect_class(&observed, Class::Correct)?;
            if !matches!(run.ending, Ending::Exited { success: true, .. }) || observed.report.runs != 3 {
                return Err(format!("{run:?}").into());
            }
            Ok(())
        }),
        Trial::test("guard::a_child_that_exits_with_a_message_and_no_report_is_a_crash", || {
            let (_, observed, _) = selftest("exit-with-message", GENEROUS)?;
            match observed.outcome() {
                Outcome::Crashed { status, message } if status == "exit code 3" && message.contains("could not do its work") => Ok(()),
                other => Err(format!("expected a crash with the status and the message, got {other:?}").into()),
            }
        }),
        Trial::test("guard::a_child_that_panics_is_a_crash_with_the_panic_message", || {
            let (_, observed, _) = selftest("panic", GENEROUS)?;
            match observed.outcome() {
                Outcome::Crashed { status, message } if status == "exit code 101" && message.contains("panicked on purpose") => Ok(()),
                other => Err(format!("expected a crash with the panic message, got {other:?}").into()),
            }
        }),
        Trial::test("guard::an_unreadable_report_is_a_crash_that_says_so", || {
            let (_, observed, _) = selftest("garbage", GENEROUS)?;
            match observed.outcome() {
                Outcome::Crashed { message, .. } if message.contains(&format!("unreadable {} line", guard::OUTCOME)) => Ok(()),
                other => Err(format!("expected an unreadable-report crash, got {other:?}").into()),
            }
        }),
        Trial::test("guard::a_child_that_floods_its_pipes_does_not_block", || {
            let (run, observed, wall) = selftest("chatty", GENEROUS)?;
            expect_class(&observed, Class::Correct)?;
            if run.stdout.len() < 4 << 20 || run.stderr.len() < 4 << 20 {
                return Err(format!("output lost: {} bytes of stdout, {} of stderr", run.stdout.len(), run.stderr.len()).into());
            }
            eprintln!("8 MiB through the pipes in {wall:?}");
            Ok(())
        }),
        Trial::test("guard::a_missing_program_is_an_error_not_a_panic", || {
            match guard::run_with_deadline(Command::new("/nonexistent/reduction-child"), GENEROUS) {
                Err(_) => Ok(()),
                Ok(run) => Err(format!("a program that does not exist ran: {run:?}").into()),
            }
        }),
    ]
}

// ---- mistake 9, with no GPU ----

/// The order a tree adds in: pairs, then pairs of pairs.
fn tree_sum(xs: &[f32]) -> f32 {
    let mut level = xs.to_vec();
    while level.len() > 1 {
        level = level.chunks(2).map(|pair| pair.iter().sum()).collect();
    }
    level.first().copied().unwrap_or(0.0)
}

fn float_equality_on_the_cpu() -> Result<(), Failed> {
    let xs = data::random_f32(1 << 20, 2007);
    let cpu_loop: f32 = xs.iter().sum();
    let tree = tree_sum(&xs);
    let (exact, _) = data::sum_f64(&xs);
    eprintln!("loop {cpu_loop:e}, tree {tree:e}, f64 {exact:e}");
    if cpu_loop == tree || cpu_loop as f64 == exact || tree as f64 == exact {
        return Err(format!("`==` held for seed 2007 (loop {cpu_loop:e}, tree {tree:e}, f64 {exact:e}): pick another seed").into());
    }
    f32::check_sum(cpu_loop, &xs)?;
    f32::check_sum(tree, &xs)?;
    // Not a lucky seed: over 32 seeds, how often do the two orders agree exactly?
    let agreed = (0..32u64).filter(|&seed| {
        let xs = data::random_f32(1 << 16, seed);
        xs.iter().sum::<f32>() == tree_sum(&xs)
    }).count();
    eprintln!("the loop and the tree agreed exactly for {agreed} of 32 seeds of 2^16 values");
    if agreed > 4 {
        return Err(format!("the loop and the tree agreed for {agreed} of 32 seeds").into());
    }
    Ok(())
}

// ---- what the compiler makes of mistake 2 (needs NVRTC, no GPU) ----

/// The chapter says NVRTC compiles the unrolled warp of mistake 2 so that every lane reads all
/// six neighbours (byte offsets +128 … +4 of its own slot, for `i32`) before it writes its own
/// slot. Check it in the PTX of the entry point the GPU runs.
fn warp_no_volatile_reads_first() -> Result<(), Failed> {
    let (_, spec) = mistakes::kernel_files().into_iter().find(|(f, _)| f.contains("warp_no_volatile")).ok_or("no warp_no_volatile kernel")?;
    let options = cudarc::nvrtc::CompileOptions { arch: Some("sm_90"), options: vec!["-std=c++17".into()], ..Default::default() };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(spec.full_source(), options).map_err(|e| format!("{e:?}"))?.to_src();
    let entry = ptx.split(".entry ").find(|e| e.starts_with("warp_no_volatile_i32(")).ok_or("no warp_no_volatile_i32 entry in the PTX")?;
    let warp: Vec<&str> = entry.rsplit("bar.sync").next().unwrap_or_default().lines().map(str::trim).collect();
    let first_store = warp.iter().position(|l| l.starts_with("st.shared")).ok_or("the last warp stores nothing to shared memory")?;
    for offset in [128, 64, 32, 16, 8, 4] {
        let load = warp.iter().position(|l| l.starts_with("ld.shared") && l.ends_with(&format!("+{offset}];")));
        match load {
            Some(at) if at < first_store => {}
            Some(_) => return Err(format!("the read at +{offset} comes after the first write: the chapter's explanation is out of date\n{}", warp.join("\n")).into()),
            None => return Err(format!("no read at +{offset} in the last warp:\n{}", warp.join("\n")).into()),
        }
    }
    let stores = warp.iter().filter(|l| l.starts_with("st.shared")).count();
    eprintln!("the last warp: six neighbour reads, then {stores} write(s) to shared memory");
    Ok(())
}

// ---- the chapter against the files ----

fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

/// The mistakes chapters: the overview (`book/mistakes.md`) and the three it links to, as one text.
const CHAPTERS: [&str; 4] = ["book/mistakes.md", "book/mistakes_sync.md", "book/mistakes_memory.md", "book/mistakes_checking.md"];

fn chapter() -> Result<String, Failed> {
    let mut text = String::new();
    for file in CHAPTERS {
        let path = root().join(file);
        text += &std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(text)
}

fn book_trials() -> Vec<Trial> {
    vec![
        Trial::test("book::the_generated_tables_are_what_the_data_gives", || {
            let fresh = std::env::temp_dir().join(format!("reduction-mistakes-tables-{}", std::process::id()));
            let written = reduction::book::chapters::mistakes::write_mistakes_table(&root().join("plots/data"), &fresh)?;
            let mut stale = Vec::new();
            for path in &written {
                let relative = path.strip_prefix(&fresh).unwrap();
                let committed = root().join("book/generated").join(relative);
                if std::fs::read_to_string(&committed).ok() != std::fs::read_to_string(path).ok() {
                    stale.push(committed.display().to_string());
                }
            }
            let _ = std::fs::remove_dir_all(&fresh);
            if stale.is_empty() {
                Ok(())
            } else {
                Err(format!("out of date with plots/data/mistakes/ (run `{}`): {stale:?}", reduction::book::chapters::mistakes::TABLE_COMMAND).into())
            }
        }),
        Trial::test("book::every_mistake_has_its_section_its_sentence_and_its_sanitizer_log", || {
            let text = chapter()?;
            let script = std::fs::read_to_string(root().join("tests/gpu-host.sh")).unwrap_or_default();
            let mut problems = Vec::new();
            if !text.contains("{{#include generated/mistakes.md}}") {
                problems.push("the chapter does not include generated/mistakes.md".to_string());
            }
            for m in mistakes::all() {
                if !text.contains(&format!("{{{{#include generated/mistakes/{}.md}}}}", m.name)) {
                    problems.push(format!("no sentence for mistake {} ({})", m.number, m.name));
                }
                let (Some(log), Some(command)) = (mistakes::sanitizer_log(m), mistakes::sanitizer_command(m)) else { continue };
                if !text.contains(&format!("{{{{#include ../{log}}}}}")) {
                    problems.push(format!("the chapter does not show {log}"));
                }
                match std::fs::read_to_string(root().join(&log)) {
                    Err(e) => problems.push(format!("{log}: {e}")),
                    Ok(contents) => {
                        let placeholder = contents.starts_with(&format!("not yet run: {command}"));
                        if !placeholder && !contents.contains("COMPUTE-SANITIZER") {
                            problems.push(format!("{log} is neither the placeholder nor compute-sanitizer output"));
                        }
                    }
                }
                if !script.contains(&command.replace(".gpu-bundle/", "$B/")) {
                    problems.push(format!("tests/gpu-host.sh does not run `{command}`"));
                }
            }
            if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
        }),
        Trial::test("book::each_diff_in_the_chapter_matches_its_two_files", check_diffs),
        Trial::test("kernels::each_broken_kernel_keeps_its_own_line_numbers", || {
            let mut problems = Vec::new();
            for (file, spec) in mistakes::kernel_files() {
                let directives: Vec<(usize, &str)> = spec.source.lines().enumerate().filter(|(_, l)| l.starts_with("#line ")).collect();
                let [(index, line)] = directives[..] else {
                    problems.push(format!("{file}: expected one #line directive after the #include, found {}", directives.len()));
                    continue;
                };
                let expected = format!("#line {} \"kernels/{file}\"", index + 2);
                if line != expected {
                    problems.push(format!("{file}:{}: `{line}` should be `{expected}`", index + 1));
                }
                if !spec.source.lines().nth(index.wrapping_sub(1)).is_some_and(|l| l.starts_with("#include")) {
                    problems.push(format!("{file}: the #line directive must follow the #include"));
                }
            }
            if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
        }),
    ]
}

/// Every ```diff block of the chapter follows a `<!-- diff: MISTAKEN FIXED -->` line naming
/// two files of the project; each `-` line must be a line of the first, each `+` line a line of
/// the second, each context line a line of both (compared without leading and trailing space).
fn check_diffs() -> Result<(), Failed> {
    let text = chapter()?;
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    let mut diffs = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "```diff" {
            continue;
        }
        diffs += 1;
        let marker = lines[..i].iter().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim()).unwrap_or("");
        let Some(names) = marker.strip_prefix("<!-- diff:").and_then(|m| m.strip_suffix("-->")) else {
            problems.push(format!("line {}: a diff without a `<!-- diff: MISTAKEN FIXED -->` line above it", i + 1));
            continue;
        };
        let names: Vec<&str> = names.split_whitespace().collect();
        let [mistaken, fixed] = names[..] else {
            problems.push(format!("line {}: the diff marker must name two files", i + 1));
            continue;
        };
        let read = |name: &str| std::fs::read_to_string(root().join(name)).map(|t| t.lines().map(|l| l.trim().to_string()).collect::<Vec<_>>());
        let (Ok(before), Ok(after)) = (read(mistaken), read(fixed)) else {
            problems.push(format!("line {}: cannot read {mistaken} or {fixed}", i + 1));
            continue;
        };
        for (j, diff_line) in lines[i + 1..].iter().take_while(|l| l.trim() != "```").enumerate() {
            let at = i + 2 + j;
            let (sign, body) = diff_line.split_at(diff_line.len().min(1));
            let body = body.trim().to_string();
            let ok = match sign {
                "-" => before.contains(&body),
                "+" => after.contains(&body),
                " " | "" => body.is_empty() || (before.contains(&body) && after.contains(&body)),
                "@" => true,
                _ => false,
            };
            if !ok {
                problems.push(format!("line {at}: `{diff_line}` is not in {}", match sign { "-" => mistaken.to_string(), "+" => fixed.to_string(), _ => format!("both {mistaken} and {fixed}") }));
            }
        }
    }
    if diffs == 0 {
        problems.push("the chapter has no ```diff block".into());
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

// ---- the command line ----

fn cli_refuses_bad_input() -> Result<Completion, Failed> {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_reduction"));
    let bundled = root().join(".gpu-bundle/bin/reduction");
    let Some(exe) = [built, bundled].into_iter().find(|p| p.is_file()) else {
        return Ok(Completion::ignored_with("no `reduction` binary next to this test (neither the cargo build nor .gpu-bundle/bin)"));
    };
    for (args, expect) in [
        (&["mistake", "no_such_mistake"][..], "unknown mistake \"no_such_mistake\""),
        (&["mistake", "sync_in_branch", "--n", "0"][..], "n must be at least 1"),
        (&["mistake", "sync_in_branch", "--runs", "0"][..], "runs must be"),
        (&["mistake"][..], "name a mistake"),
        (&["mistake", "grid_barrier_spin"][..], "hangs by design"),
        (&["mistakes", "--deadline", "soon"][..], "--deadline"),
        (&["mistakes", "--only", "no_such_mistake"][..], "unknown mistake"),
        (&["mistakes", "--bogus"][..], "unexpected argument '--bogus'"),
    ] {
        let output = Command::new(&exe).args(args).env_remove(mistakes::CHILD_ENV).output()?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() || !stderr.contains("error: ") || !stderr.contains(expect) || stderr.contains("panicked") {
            return Err(format!("`reduction {}`: expected a failure saying {expect:?}, got {:?}:\n{stderr}", args.join(" "), output.status).into());
        }
    }
    Ok(Completion::Completed)
}

// ---- the mistakes on the GPU ----

static OBSERVED: Mutex<Vec<Recorded>> = Mutex::new(Vec::new());
static MISTAKES_RUN: AtomicUsize = AtomicUsize::new(0);

fn mistake_trial(mistake: &'static Mistake) -> Trial {
    gpu_trial(format!("gpu::{:02}_{}", mistake.number, mistake.name), move |gpu| {
        let deadline = Deadline::from_env()?;
        let options = RunOptions::from_env_vars("MISTAKES_N", "MISTAKES_RUNS", "MISTAKES_SEED")?;
        let observed = mistakes::run_guarded(&std::env::current_exe()?, mistake, &options, deadline)?;
        MISTAKES_RUN.fetch_add(1, Ordering::SeqCst);
        let recorded = observed.record(mistake);
        eprintln!(
            "observed: {:>2} {:<26} {:<13} {}  [start-up {}, then {:.2} s]",
            mistake.number, mistake.name, recorded.outcome.name(), mistakes::what_it_did(mistake, &recorded),
            observed.startup.map_or("-".into(), |s| format!("{:.2} s", s.as_secs_f64())), observed.run_time.as_secs_f64()
        );
        if !observed.stderr_tail.is_empty() {
            eprintln!("  child's last words:\n    {}", observed.stderr_tail.replace('\n', "\n    "));
        }
        record(gpu, recorded, &options, deadline)?;
        mistake.verdict(&observed, deadline).map_err(Failed::from)
    })
}

/// With `MISTAKES_RECORD` set, rewrite the record with every mistake observed so far.
fn record(gpu: &reduction::Gpu, recorded: Recorded, options: &RunOptions, deadline: Deadline) -> Result<(), Failed> {
    let mut observed = OBSERVED.lock().unwrap_or_else(|p| p.into_inner());
    observed.retain(|r| r.mistake != recorded.mistake);
    observed.push(recorded);
    observed.sort_by_key(|r| r.number);
    let Ok(target) = std::env::var(mistakes::RECORD_ENV) else { return Ok(()) };
    let path = mistakes::record_path(Path::new(&target), &gpu.info().name);
    let command = "test-mistakes (tests/mistakes.rs)";
    let machine = reduction::records::Machine::of(gpu, command.to_string());
    let records = Records { header: mistakes::header(&machine, options.n, options.runs, options.seed, deadline.run), rows: observed.clone() };
    mistakes::write_records(&path, &records)?;
    eprintln!("  recorded in {}", path.display());
    Ok(())
}

fn parent_still_sums(gpu: &'static reduction::Gpu) -> Result<(), Failed> {
    eprintln!("after {} mistakes in child processes, this process sums:", MISTAKES_RUN.load(Ordering::SeqCst));
    reduction::mistakes::parent_still_sums(gpu)?;
    eprintln!("  kernel 3 (i32) and kernel 7 (f32): right");
    Ok(())
}
