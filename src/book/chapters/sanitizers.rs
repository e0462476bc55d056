//! What compute-sanitizer reported, as the chapters quote it (`sanitizer/<log>.md`): one sentence
//! per log under `plots/data/sanitizer/`, naming the tool and its summary line; and which kernel
//! went through which tool, read from the same logs (`sanitizer_coverage.md`: `tests/gpu-host.sh
//! sanitize` runs every test binary that launches the book's kernels under each of the four
//! tools, each test's line kept). A kernel counts as checked by a tool when a log of that tool
//! holds a passing test that launched it.

use crate::child::Sanitizer;
use crate::records::bench::{COPY_KERNEL, READ_ONLY_KERNEL};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// "compute-sanitizer's racecheck reported 3 hazards displayed (0 errors, 10 warnings)." The
/// tool is the first one named in the text (the log's file name comes first). A log of several
/// runs (one summary line each) is reported by its worst summary, with how many runs it holds;
/// a log whose header names its GPU and date (`# … (NVIDIA H200, 2026-12-02)`) is said to be of them.
pub fn sanitizer_sentence(log: &str) -> String {
    let tool = Sanitizer::ALL
        .into_iter()
        .map(Sanitizer::name)
        .filter_map(|t| log.find(t).map(|at| (at, t)))
        .min()
        .map_or("the sanitizer", |(_, t)| t);
    let summaries: Vec<&str> = log.lines().filter_map(summary_of).collect();
    let worst = worst_summary(log);
    let tests = log.lines().find_map(|l| l.strip_prefix("test result: ok. ")).and_then(|rest| rest.split(" passed").next().map(str::to_string));
    let under = tests.map(|n| format!(" ({n} tests ran under it and passed)")).unwrap_or_default();
    let runs = match summaries.len() {
        0 | 1 => String::new(),
        n if summaries.iter().all(|s| Some(*s) == worst) => format!(" in each of its {n} runs"),
        n => format!(" in the worst of its {n} runs"),
    };
    let on = header_machine(log).map_or_else(|| "On the GPU this book was last measured on".to_string(), |(gpu, date)| format!("On the {gpu} ({date})"));
    match worst {
        Some(summary) => format!("{on}, compute-sanitizer's {tool} reported **{summary}**{runs}{under}.\n"),
        None => match log.lines().find_map(|l| l.strip_prefix("# not yet run: ")) {
            Some(command) => format!("compute-sanitizer's {tool} has not been run here yet (`{command}`).\n"),
            None => format!("The {tool} log has no summary line: the run did not finish.\n"),
        },
    }
}

/// The tool's summary on a line of its output (`ERROR SUMMARY: 0 errors`, `RACECHECK SUMMARY: …`),
/// but the "not printed" line that comes beside a real one.
fn summary_of(line: &str) -> Option<&str> {
    let line = line.trim_start_matches('=').trim();
    line.strip_prefix("RACECHECK SUMMARY: ").or_else(|| line.strip_prefix("ERROR SUMMARY: ")).filter(|s| !s.contains("not printed"))
}

/// The summary of a log, or of the worst of its runs where it holds several: the one that
/// reports the most errors (an unreadable count counts as the most), the first of equals.
fn worst_summary(text: &str) -> Option<&str> {
    text.lines().filter_map(summary_of).fold(None, |kept, s| match kept {
        Some(k) if summary_errors(s).unwrap_or(u64::MAX) <= summary_errors(k).unwrap_or(u64::MAX) => Some(k),
        _ => Some(s),
    })
}

/// The errors (racecheck: hazards) a summary reports.
fn summary_errors(summary: &str) -> Option<u64> {
    summary.split_whitespace().next()?.parse().ok()
}

/// The GPU and the date a log's header names in its last parentheses (`# compute-sanitizer …
/// (NVIDIA H200, 2026-12-02; exit 0 after 1 s)`), if it names them.
fn header_machine(log: &str) -> Option<(&str, &str)> {
    let header = log.lines().find(|l| l.starts_with('#'))?;
    let inside = header.rsplit_once('(')?.1.split([')', ';']).next()?;
    let (gpu, date) = inside.rsplit_once(", ")?;
    (gpu.starts_with("NVIDIA") && date.len() == 10 && date.chars().filter(|c| *c == '-').count() == 2).then_some((gpu, date))
}

/// The logs of `tests/gpu-host.sh sanitize` (and of the final calls that ran its lanes), named
/// `sanitize-<tool>-<binary>`: they feed [`coverage_table`] and get no sentence of their own.
pub fn is_suite_log(name: &str) -> bool {
    name.starts_with("sanitize-")
}

/// `sanitizer_runs.md`: one row per suite log, as its header and its summary lines say: the tool,
/// the test binary, the GPU and day, whether it finished (or was stopped by its time limit, and after how long),
/// how many tests passed under the tool, and the tool's summary. A log that was stopped has no
/// summary line: the tool reports only at the end, so its row says "stopped before its summary".
pub fn runs_table(logs: &[(String, String)]) -> String {
    let mut s = String::from("| tool | test binary | GPU, day | run | tests passed under the tool | the tool's summary |\n|---|---|---|---|--:|---|\n");
    let mut rows = 0;
    for (name, text) in logs.iter().filter(|(name, _)| is_suite_log(name)) {
        let rest = name.trim_start_matches("sanitize-");
        let Some((tool, binary)) = rest.split_once('-') else { continue };
        let header = text.lines().next().unwrap_or_default();
        // A sweep's log (`sanitize-<tool>-<binary>--<tag>`) ran the tests its header's filter
        // names: the word after the binary, unless it is an option.
        let binary = match binary.split_once("--") {
            Some((binary, _)) => {
                // The binary's folder is the bundle's (`.gpu-bundle/tests/`) or a slimmer copy's.
                let args: Vec<&str> = header.split(&format!("/{binary} ")).nth(1).map_or(Vec::new(), |r| r.split("--test-threads").next().unwrap_or("").split_whitespace().collect());
                let skipped: Vec<String> = args.windows(2).filter(|w| w[0] == "--skip").map(|w| format!("`{}`", w[1])).collect();
                let but = if skipped.is_empty() { String::new() } else { format!(", but {}", skipped.join(" and ")) };
                match args.first().filter(|w| !w.starts_with("--")) {
                    Some(filter) => format!("{binary}` (tests matching `{filter}`{but})"),
                    None if skipped.is_empty() => format!("{binary}` (the whole binary)"),
                    None => format!("{binary}` (every test{but})"),
                }
            }
            None => format!("{binary}`"),
        };
        // `; exit 0 after 12 s;` or, in a header without the time, `; exit 0;` (then the time is
        // the test harness's own `finished in 2.35s`).
        let after = header.split("; exit ").nth(1).unwrap_or_default();
        let code: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
        let seconds = after[code.len()..]
            .strip_prefix(" after ")
            .map(|r| r.split(" s").next().unwrap_or("?").to_string())
            .or_else(|| text.lines().filter_map(|l| l.split("; finished in ").nth(1)).next_back().map(|t| t.trim().trim_end_matches('s').to_string()))
            .unwrap_or_else(|| "?".to_string());
        let exit = if code.is_empty() { "?" } else { code.as_str() };
        let run = match exit {
            "0" => format!("finished in {seconds} s"),
            "124" => format!("stopped by its time limit after {seconds} s"),
            other => format!("exit {other} after {seconds} s"),
        };
        let passed = text.lines().filter(|l| l.starts_with("test ") && l.ends_with(" ... ok")).count();
        let failed = text.lines().filter(|l| l.starts_with("test ") && l.contains(" ... FAILED")).count();
        let passed = if failed > 0 { format!("{passed} ({failed} failed)") } else { passed.to_string() };
        let summary = worst_summary(text).map_or_else(|| "stopped before its summary".to_string(), str::to_string);
        let machine = header_machine(text).map_or_else(|| "–".to_string(), |(gpu, date)| format!("{gpu}, {date}"));
        let _ = writeln!(s, "| {tool} | `{binary} | {machine} | {run} | {passed} | {summary} |");
        rows += 1;
    }
    if rows == 0 {
        return "No run of `tests/gpu-host.sh sanitize` is in `plots/data/sanitizer/` yet.\n".to_string();
    }
    s
}

/// The chapter that shows the sentence of the log `name` (`plots/data/sanitizer/<name>.log`):
/// a mistake's tool run on it in the mistake's chapter, Harris's kernel 5 in its own chapter,
/// everything else in the sanitizer chapter.
pub fn chapter_of(name: &str) -> &'static str {
    let mistake = crate::kernels::broken::all()
        .iter()
        .find(|m| crate::kernels::broken::sanitizer_log(m).is_some_and(|log| log == format!("plots/data/sanitizer/{name}.log")));
    if let Some(m) = mistake {
        super::mistakes::chapter_of(m)
    } else if name == "kernel5-racecheck" {
        "05_unroll_last_warp.md"
    } else {
        "sanitizers.md"
    }
}

/// The row kernels' name in the coverage table (`kernels/13_rows.cu`, launched by `RowReducer`).
pub const ROWS: &str = "rows";

/// The groups of `tests/rows.rs` whose tests launch the row kernels (the others check the
/// planner, the chapter and the scripts, on the host).
pub const ROW_KERNEL_GROUPS: [&str; 9] = ["auto", "exact", "half", "one_hot", "random", "reuse", "row_loop", "strided", "empty"];

/// Every kernel the coverage table must account for: the registry's correct ones (Harris's racy
/// 2007 kernel 5 is kept for the lesson, and racecheck's report on it is chapter 5's), the two
/// yardsticks, the row sums.
pub fn registered_kernels() -> Vec<String> {
    let mut names: Vec<String> = crate::kernels::correct().map(|k| k.name.to_string()).collect();
    names.extend([READ_ONLY_KERNEL, COPY_KERNEL, ROWS].map(String::from));
    names.extend(crate::kernels::ops::Op::CHAPTER.iter().map(|op| operator_kernel(op.name())));
    names.extend(crate::kernels::dl::DlOp::ALL.iter().map(|op| dl_kernel(op.name())));
    names
}

/// The operators' kernels in the table, one row per operator (`kernels/16_*.cu`, whole arrays and
/// rows): the tests of `test-ops` named `whole::<op>::…` and `rows::<op>::…`.
pub fn operator_kernel(op: &str) -> String {
    format!("operator {op}")
}

/// The deep-learning kernels in the table, one row per reduction (`kernels/17_*.cu` … `20_*.cu`):
/// the tests of `test-dl` named `<op>::…`, `trap::<inputs>::<op>::…` and, for the γ and β
/// gradient, `columns::…` (not its planted bugs, `mutation::…`).
pub fn dl_kernel(op: &str) -> String {
    format!("fused {op}")
}

/// The row of the table a test of the operators' or deep-learning binary counts for, if any.
fn binary_kernel(log_name: &str, test_name: &str) -> Option<String> {
    let parts: Vec<&str> = test_name.split("::").collect();
    if log_name.contains("test-ops") {
        return match parts.as_slice() {
            ["whole" | "rows", op, ..] if crate::kernels::ops::Op::CHAPTER.iter().any(|o| o.name() == *op) => Some(operator_kernel(op)),
            _ => None,
        };
    }
    if log_name.contains("test-dl") {
        let is_op = |op: &str| crate::kernels::dl::DlOp::ALL.iter().any(|o| o.name() == op);
        return match parts.as_slice() {
            ["trap", _, op, ..] if is_op(op) => Some(dl_kernel(op)),
            ["columns", ..] => Some(dl_kernel("layer_norm_bwd_gamma_beta")),
            [op, ..] if is_op(op) => Some(dl_kernel(op)),
            _ => None,
        };
    }
    None
}

/// What one log says: its tool, the passing tests by kernel, and its summary line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log {
    pub name: String,
    pub tool: Option<Sanitizer>,
    pub passed_by_kernel: BTreeMap<String, usize>,
    /// Checked runs of `reduction sum --kernel <k>` under the tool that were all right (its
    /// line `<k> <type> n=<n> block=<b>: 0 of <runs> runs wrong`), by kernel.
    pub sum_runs_by_kernel: BTreeMap<String, usize>,
    pub failed: usize,
    /// `ERROR SUMMARY: 0 errors` / `RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)`.
    pub summary: Option<String>,
}

impl Log {
    /// Errors (or, for racecheck, hazards) the summary reports; `None` without a summary.
    pub fn errors(&self) -> Option<u64> {
        summary_errors(self.summary.as_ref()?)
    }
}

/// Read one log. `name` is its file name (or stem), which names the tool
/// (`sanitize-racecheck-test-gpu`) and, for the row sums' binary, contains `rows`.
pub fn parse_log(name: &str, text: &str) -> Log {
    let tool = Sanitizer::ALL.into_iter().filter_map(|t| name.find(t.name()).map(|at| (at, t))).min_by_key(|(at, _)| *at).map(|(_, t)| t);
    let kernels = registered_kernels();
    let rows_binary = name.contains("rows");
    // A log of several runs keeps its worst summary.
    let mut log = Log { name: name.to_string(), tool, summary: worst_summary(text).map(str::to_string), ..Log::default() };
    for line in text.lines() {
        let line = line.trim_start_matches('=').trim();
        if line.starts_with("ERROR SUMMARY: ") || line.starts_with("RACECHECK SUMMARY: ") {
            continue;
        }
        if let Some((what, verdict)) = line.split_once(": ").filter(|(what, _)| what.contains(" n=") && what.contains(" block=")) {
            let kernel = what.split_whitespace().next().unwrap_or_default();
            let runs = verdict.strip_prefix("0 of ").and_then(|r| r.strip_suffix(" runs wrong")).and_then(|r| r.parse::<usize>().ok());
            if kernels.iter().any(|k| k == kernel) {
                match runs {
                    Some(runs) => *log.sum_runs_by_kernel.entry(kernel.to_string()).or_default() += runs,
                    None if verdict.ends_with(" runs wrong") => log.failed += 1,
                    None => {}
                }
            }
            continue;
        }
        let Some(test) = line.strip_prefix("test ") else { continue };
        let Some((test_name, outcome)) = test.rsplit_once(" ... ") else { continue };
        let group = test_name.trim().split("::").next().unwrap_or_default();
        let kernel = if let Some(k) = binary_kernel(name, test_name.trim()) {
            Some(k)
        } else if kernels.iter().any(|k| k == group) {
            Some(group.to_string())
        } else if rows_binary && ROW_KERNEL_GROUPS.contains(&group) {
            Some(ROWS.to_string())
        } else {
            None
        };
        match (outcome.trim(), kernel) {
            ("ok", Some(k)) => *log.passed_by_kernel.entry(k).or_default() += 1,
            (o, Some(_)) if o.starts_with("FAILED") => log.failed += 1,
            _ => {}
        }
    }
    log
}

/// What the logs of one tool say of one kernel: the tests that passed under it in the logs that
/// reached their summary and the errors those summaries report; the tests that passed in logs cut
/// short before a summary (whose errors are unknown).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cell {
    pub passed: usize,
    pub errors: u64,
    pub passed_in_cut_logs: usize,
    /// Checked runs of `reduction sum` (as [`Log::sum_runs_by_kernel`]), in finished logs and in
    /// logs cut short.
    pub sum_runs: usize,
    pub sum_runs_in_cut_logs: usize,
}

impl Cell {
    /// What ran: "12 tests", "1 run of `reduction sum`", or both.
    fn what_ran(passed: usize, runs: usize) -> String {
        let mut parts = Vec::new();
        if passed > 0 || runs == 0 {
            parts.push(format!("{passed} tests"));
        }
        if runs > 0 {
            parts.push(format!("{runs} run{} of `reduction sum`", if runs == 1 { "" } else { "s" }));
        }
        parts.join(" and ")
    }
}

/// A [`Cell`] for each kernel and tool (by the tool's name). A kernel that a finished log covers
/// is reported from the finished logs; a run cut short elsewhere adds nothing to it.
pub fn coverage(logs: &[Log]) -> BTreeMap<(String, &'static str), Cell> {
    let mut out: BTreeMap<(String, &'static str), Cell> = BTreeMap::new();
    for log in logs {
        let Some(tool) = log.tool else { continue };
        let kernels: BTreeSet<&String> = log.passed_by_kernel.keys().chain(log.sum_runs_by_kernel.keys()).collect();
        for kernel in kernels {
            let passed = log.passed_by_kernel.get(kernel).copied().unwrap_or(0);
            let runs = log.sum_runs_by_kernel.get(kernel).copied().unwrap_or(0);
            let cell = out.entry((kernel.clone(), tool.name())).or_default();
            match log.errors() {
                Some(errors) if log.summary.is_some() => {
                    cell.passed += passed;
                    cell.sum_runs += runs;
                    cell.errors += errors;
                }
                _ => {
                    cell.passed_in_cut_logs += passed;
                    cell.sum_runs_in_cut_logs += runs;
                }
            }
        }
    }
    out
}

/// `sanitizer_coverage.md`: every registered kernel against the four tools, from the logs
/// (`logs`: (name, text), [`crate::book::context::Context::sanitizer_logs`]).
pub fn coverage_table(logs: &[(String, String)]) -> String {
    let logs: Vec<Log> = logs.iter().map(|(name, text)| parse_log(name, text)).collect();
    let cells = coverage(&logs);
    let mut s = String::from("| kernel | memcheck | racecheck | synccheck | initcheck |\n|---|--:|--:|--:|--:|\n");
    let mut missing: Vec<String> = Vec::new();
    let mut pairs_missing = 0;
    for kernel in registered_kernels() {
        write!(s, "| `{kernel}` |").unwrap();
        let mut tools_missing = Vec::new();
        for tool in Sanitizer::ALL {
            match cells.get(&(kernel.clone(), tool.name())) {
                Some(cell) if cell.passed + cell.sum_runs > 0 => {
                    write!(s, " {}, {} {} |", Cell::what_ran(cell.passed, cell.sum_runs), cell.errors, if tool == Sanitizer::Racecheck { "hazards" } else { "errors" }).unwrap()
                }
                Some(cell) => write!(s, " {}, no summary (the run was cut short) |", Cell::what_ran(cell.passed_in_cut_logs, cell.sum_runs_in_cut_logs)).unwrap(),
                None => {
                    write!(s, " not run |").unwrap();
                    tools_missing.push(tool.name());
                }
            }
        }
        s.push('\n');
        pairs_missing += tools_missing.len();
        match tools_missing.len() {
            0 => {}
            4 => missing.push(format!("`{kernel}` (no tool)")),
            _ => missing.push(format!("`{kernel}` ({})", tools_missing.join(", "))),
        }
    }
    s.push('\n');
    if missing.is_empty() {
        writeln!(s, "Every registered kernel passed tests under all four tools.").unwrap();
    } else {
        writeln!(s, "{COVERAGE_NOT_YET_RUN} {pairs_missing} of {} kernel–tool pairs: {} (`tests/gpu-host.sh sanitize` runs them all, and its \
            logs go to `plots/data/sanitizer/`).", registered_kernels().len() * Sanitizer::ALL.len(), missing.join(", ")).unwrap();
    }
    s
}

/// How the coverage table starts its list of the kernel–tool pairs no log covers yet (allowed,
/// with the reason, in [`crate::book::manifest::NOT_MEASURED_ALLOWED`]).
pub const COVERAGE_NOT_YET_RUN: &str = "Not yet run,";

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "========= COMPUTE-SANITIZER\ntest reduce15_neumaier::f32::n=7   ... ok\ntest read_only::b512_l8::f32::n=1 ... ok\n\
test copy::u32::n=3 ... ok\ntest device::info_is_plausible ... ok\ntest reduce3::i32::n=5 ... FAILED\n========= ERROR SUMMARY: 2 errors\n";

    #[test]
    fn the_operators_and_fused_kernels_are_counted_from_their_binaries() {
        let ops = parse_log("sanitize-memcheck-test-ops", "test whole::max::f32::n=2 ... ok\ntest rows::argmax::f16::warp::3x255/255 ... ok\ntest planted::x ... ok\n");
        assert_eq!(ops.passed_by_kernel.get("operator max"), Some(&1));
        assert_eq!(ops.passed_by_kernel.get("operator argmax"), Some(&1));
        assert_eq!(ops.passed_by_kernel.len(), 2, "planted bugs are no kernel's");
        let dl = parse_log("sanitize-initcheck-test-dl", "test softmax::f32::auto::3x2 ... ok\ntest trap::HugeRows::cross_entropy::f32::auto::3x2 ... ok\n\
test columns::f32::5x7 ... ok\ntest mutation::rescale_missing::softmax::f32::auto ... ok\n");
        assert_eq!(dl.passed_by_kernel.get("fused softmax"), Some(&1));
        assert_eq!(dl.passed_by_kernel.get("fused cross_entropy"), Some(&1));
        assert_eq!(dl.passed_by_kernel.get("fused layer_norm_bwd_gamma_beta"), Some(&1));
        assert_eq!(dl.passed_by_kernel.len(), 3, "planted bugs are no kernel's");
        // The same test names in another binary's log count for nothing.
        assert!(parse_log("sanitize-memcheck-test-gpu", "test whole::max::f32::n=2 ... ok\n").passed_by_kernel.is_empty());
    }

    #[test]
    fn a_log_counts_its_passing_tests_by_kernel_and_reads_its_summary() {
        let log = parse_log("sanitize-memcheck-test-gpu.log", LOG);
        assert_eq!(log.tool, Some(Sanitizer::Memcheck));
        assert_eq!(log.passed_by_kernel.get("reduce15_neumaier"), Some(&1));
        assert_eq!(log.passed_by_kernel.get(READ_ONLY_KERNEL), Some(&1));
        assert_eq!(log.passed_by_kernel.get(COPY_KERNEL), Some(&1));
        assert_eq!((log.failed, log.errors()), (1, Some(2)));
        // The first tool named in the name is the log's.
        assert_eq!(parse_log("racecheck-memcheck-x", "").tool, Some(Sanitizer::Racecheck));
        // Row tests count for the row kernels only in the row binary's logs.
        let rows = parse_log("sanitize-racecheck-test-rows.log", "test random::warp::1x1 ... ok\ntest choice::short ... ok\n");
        assert_eq!(rows.passed_by_kernel.get(ROWS), Some(&1));
        assert_eq!(rows.passed_by_kernel.len(), 1);
        assert!(parse_log("sanitize-racecheck-test-gpu.log", "test random::warp::1x1 ... ok\n").passed_by_kernel.is_empty());
    }

    #[test]
    fn a_sweep_run_is_named_by_its_binary_and_filter() {
        let log = "# MAX_TEST_N=4097 REQUIRE_GPU=1 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 .gpu-bundle/tests/test-ops x257/257  --test-threads 4   (NVIDIA H200, 2026-12-01; exit 0 after 12 s; the tests' lines)\n\
test rows::max::f32::warp::3x257/257 ... ok\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
        let table = runs_table(&[("sanitize-racecheck-test-ops--x257_257".to_string(), log.to_string())]);
        assert!(table.contains("| racecheck | `test-ops` (tests matching `x257/257`) | NVIDIA H200, 2026-12-01 | finished in 12 s | 1 | 0 hazards displayed (0 errors, 0 warnings) |"), "{table}");
        let skips = runs_table(&[("sanitize-memcheck-test-rows--all".to_string(), log.replace("test-ops x257/257", "test-rows --skip determinism::"))]);
        assert!(skips.contains("`test-rows` (every test, but `determinism::`)"), "{skips}");
        let whole = runs_table(&[("sanitize-memcheck-test-rows--all".to_string(), log.replace("test-ops x257/257", "test-rows"))]);
        assert!(whole.contains("`test-rows` (the whole binary)"), "{whole}");
        let filtered = runs_table(&[("sanitize-memcheck-test-ops--n_1025".to_string(), log.replace("x257/257", "n=1025 --skip planted:: --skip large::"))]);
        assert!(filtered.contains("`test-ops` (tests matching `n=1025`, but `planted::` and `large::`)"), "{filtered}");
        // A slimmer copy of the bundle, and a header with the exit code but not the time: the
        // harness's own time stands in.
        let slim = "# MAX_TEST_N=65537 REQUIRE_GPU=1 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 .gpu-slim/test-gpu reduce10_tiles --test-threads 8   (NVIDIA H200, 2026-12-02; exit 0; the tests' lines)\n\
test reduce10_tiles::i32::n=9 ... ok\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 5076 filtered out; finished in 2.35s\n========= ERROR SUMMARY: 0 errors\n";
        let table = runs_table(&[("sanitize-memcheck-test-gpu--reduce10_tiles".to_string(), slim.to_string())]);
        assert!(table.contains("| memcheck | `test-gpu` (tests matching `reduce10_tiles`) | NVIDIA H200, 2026-12-02 | finished in 2.35 s | 1 | 0 errors |"), "{table}");
    }

    #[test]
    fn the_table_names_every_kernel_and_every_pair_not_run() {
        let table = coverage_table(&[("sanitize-memcheck-test-gpu".to_string(), LOG.to_string())]);
        assert!(table.contains("| `reduce15_neumaier` | 1 tests, 2 errors | not run |"), "{table}");
        assert!(table.contains("`reduce1` (no tool)") && table.contains("`reduce15_neumaier` (racecheck, synccheck, initcheck)"), "{table}");
        for kernel in registered_kernels() {
            assert!(table.contains(&format!("| `{kernel}` |")), "{kernel}");
        }
        // A log cut short before its summary says so in its cells.
        let cut = coverage_table(&[("sanitize-racecheck-test-gpu".to_string(), "test reduce9::f32::n=1 ... ok\n".to_string())]);
        assert!(cut.contains("| `reduce9` | not run | 1 tests, no summary (the run was cut short) |"), "{cut}");
        // Beside a finished log of the same tool, the finished one speaks for the kernel.
        let finished = "test reduce9::f32::n=1025 ... ok\ntest reduce9::i32::n=1025 ... ok\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
        let both = coverage_table(&[("sanitize-racecheck-test-gpu".to_string(), "test reduce9::f32::n=1 ... ok\n".to_string()), ("sanitize-racecheck-test-gpu-sweep".to_string(), finished.to_string())]);
        assert!(both.contains("| `reduce9` | not run | 2 tests, 0 hazards |"), "{both}");
        // Errors in a finished log are counted, whatever a cut log says.
        let bad = coverage_table(&[("sanitize-memcheck-test-gpu-sweep".to_string(), "test reduce9::f32::n=1025 ... ok\n========= ERROR SUMMARY: 3 errors\n".to_string())]);
        assert!(bad.contains("| `reduce9` | 1 tests, 3 errors |"), "{bad}");
        // A checked `reduction sum` under the tool covers its kernel; one with a wrong run does not.
        let sum = "# compute-sanitizer --tool racecheck --print-limit 5 .gpu-bundle/bin/reduction sum --kernel reduce9 --n 4097 --block 64\n\
reduce9 f32 n=4097 block=64: 0 of 1 runs wrong\n========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
        let runs = coverage_table(&[("racecheck-reduce9-sum".to_string(), sum.to_string())]);
        assert!(runs.contains("| `reduce9` | not run | 1 run of `reduction sum`, 0 hazards |"), "{runs}");
        let wrong = coverage_table(&[("racecheck-reduce9-sum".to_string(), sum.replace("0 of 1", "1 of 1"))]);
        assert!(wrong.contains("| `reduce9` | not run | not run |"), "{wrong}");
        assert_eq!(parse_log("racecheck-reduce9-sum", &sum.replace("0 of 1", "1 of 1")).failed, 1);
    }

    /// The sanitize stage of `tests/gpu-host.sh` runs every test binary but those it names, and
    /// those it names are real binaries none of which is where the correct kernels are tested.
    #[test]
    fn the_sanitize_stage_skips_no_binary_that_tests_the_kernels() {
        let root = crate::records::repo_root();
        let script = std::fs::read_to_string(root.join("tests/gpu-host.sh")).unwrap();
        let list = script.split("SANITIZE_SKIP:-").nth(1).and_then(|r| r.split('}').next()).expect("a default skip list");
        let skipped: Vec<&str> = list.split_whitespace().collect();
        for binary in &skipped {
            let file = root.join("tests").join(format!("{}.rs", binary.trim_start_matches("test-")));
            assert!(file.is_file(), "{binary} in the skip list is no test binary ({})", file.display());
        }
        for kept in ["test-gpu", "test-rows", "test-reproducible", "test-snippets"] {
            assert!(!skipped.contains(&kept), "{kept} is skipped");
        }
        assert!(script.contains("for t in $B/tests/test-*; do"), "the stage no longer runs every bundled binary");
        assert!(script.contains("for tool in ${TOOLS:-memcheck racecheck synccheck initcheck}; do"));
        // Each registered kernel is launched by a test in a binary that is kept.
        let tests_gpu = std::fs::read_to_string(root.join("tests/gpu.rs")).unwrap();
        assert!(tests_gpu.contains("kernels::correct()") && tests_gpu.contains("read_only::b{}_l{}") && tests_gpu.contains("copy::u32::n={n}"));
    }

    #[test]
    fn the_row_kernel_groups_are_the_groups_tests_rows_names() {
        let text = std::fs::read_to_string(crate::records::repo_root().join("tests/rows.rs")).unwrap();
        for group in ROW_KERNEL_GROUPS {
            assert!(text.contains(&format!("\"{group}::")), "tests/rows.rs has no group {group}");
        }
    }

    /// The sanitizer chapter's sentence on kernel 12 under racecheck, held to the committed logs:
    /// the test binary's three runs on kernel 12 stopped before their summary, and one `reduction
    /// sum` a process, f32 and i32 at 33, 1000 and 4097 values in blocks of 64 and 256 and the
    /// entry point at 4097 and 10^6, each reached a summary of 0 hazards.
    #[test]
    fn the_chapters_kernel_12_racecheck_runs_are_the_committed_ones() {
        let dir = crate::records::repo_root().join("plots/data/sanitizer");
        let chapter = std::fs::read_to_string(crate::records::repo_root().join("book/sanitizers.md")).unwrap();
        assert!(chapter.contains("the three \"stopped\" `reduce12` rows"), "the chapter's sentence changed: update this test");
        let logs: Vec<(String, String)> = ["reduce12", "reduce12__f32", "reduce12__i32"]
            .iter()
            .map(|tag| {
                let name = format!("sanitize-racecheck-test-gpu--{tag}");
                (name.clone(), std::fs::read_to_string(dir.join(format!("{name}.log"))).unwrap())
            })
            .collect();
        let table = runs_table(&logs);
        assert_eq!(table.matches("stopped by its time limit").count(), 3, "{table}");
        assert_eq!(table.matches("stopped before its summary").count(), 3, "{table}");
        let sums = std::fs::read_to_string(dir.join("racecheck-reduce12-sum.log")).unwrap();
        let log = parse_log("racecheck-reduce12-sum", &sums);
        assert_eq!(log.errors(), Some(0));
        assert_eq!(sums.lines().filter_map(summary_of).count(), 16);
        for dtype in ["f32", "i32"] {
            for n in [33, 1000, 4097] {
                for block in [64, 256] {
                    assert!(sums.contains(&format!("reduce12 {dtype} n={n} block={block}: 0 of 1 runs wrong")), "{dtype} {n} {block}");
                }
            }
            for n in [4097, 1_000_000] {
                assert!(sums.contains(&format!("# reduction sum --n {n} --dtype {dtype} (the entry point)")), "{dtype} {n}");
            }
        }
        assert_eq!(log.sum_runs_by_kernel.get("reduce12"), Some(&16), "{:?}", log.sum_runs_by_kernel);
    }
}
