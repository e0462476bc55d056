//! Which kernel went through which compute-sanitizer tool, read from the logs in
//! `plots/data/sanitizer/` (`tests/gpu-host.sh sanitize` writes them: every test binary that
//! launches the book's kernels, under each of the four tools, each test's line kept). A kernel
//! counts as checked by a tool when a log of that tool holds a passing test that launched it.

use crate::records::bench::{COPY_KERNEL, READ_ONLY_KERNEL};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// The four tools, in the order the chapter names them.
pub const TOOLS: [&str; 4] = ["memcheck", "racecheck", "synccheck", "initcheck"];

/// The row kernels' name in the table (`kernels/13_rows.cu`, launched by `RowReducer`).
pub const ROWS: &str = "rows";

/// The groups of `tests/rows.rs` whose tests launch the row kernels (the others check the
/// planner, the chapter and the scripts, on the host).
pub const ROW_KERNEL_GROUPS: [&str; 9] = ["auto", "exact", "half", "one_hot", "random", "reuse", "row_loop", "strided", "empty"];

/// Every kernel the table must account for: the registry's correct ones (Harris's racy 2007
/// kernel 5 is kept for the lesson, and racecheck's report on it is chapter 5's), the two
/// yardsticks, the row sums.
pub fn registered_kernels() -> Vec<String> {
    let mut names: Vec<String> = crate::kernels::correct().map(|k| k.name.to_string()).collect();
    names.extend([READ_ONLY_KERNEL, COPY_KERNEL, ROWS].map(String::from));
    names
}

/// What one log says: its tool, the passing tests by kernel, and its summary line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log {
    pub name: String,
    pub tool: Option<&'static str>,
    pub passed_by_kernel: BTreeMap<String, usize>,
    pub failed: usize,
    /// `ERROR SUMMARY: 0 errors` / `RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)`.
    pub summary: Option<String>,
}

impl Log {
    /// Errors (or, for racecheck, hazards) the summary reports; `None` without a summary.
    pub fn errors(&self) -> Option<u64> {
        let s = self.summary.as_ref()?;
        s.split_whitespace().next()?.parse().ok()
    }
}

/// Read one log. `name` is its file name, which names the tool (`sanitize-racecheck-test-gpu.log`)
/// and, for the row sums' binary, contains `rows`.
pub fn parse_log(name: &str, text: &str) -> Log {
    let tool = TOOLS.into_iter().filter_map(|t| name.find(t).map(|at| (at, t))).min().map(|(_, t)| t);
    let kernels = registered_kernels();
    let rows_binary = name.contains("rows");
    let mut log = Log { name: name.to_string(), tool, ..Log::default() };
    for line in text.lines() {
        let line = line.trim_start_matches('=').trim();
        if let Some(rest) = line.strip_prefix("ERROR SUMMARY: ").or_else(|| line.strip_prefix("RACECHECK SUMMARY: ")) {
            if !rest.contains("not printed") {
                log.summary = Some(rest.to_string());
            }
            continue;
        }
        let Some(test) = line.strip_prefix("test ") else { continue };
        let Some((test_name, outcome)) = test.rsplit_once(" ... ") else { continue };
        let test_name = test_name.trim();
        let group = test_name.split("::").next().unwrap_or_default();
        let kernel = if kernels.iter().any(|k| k == group) {
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

/// Every `*.log` under `dir`, parsed, by file name.
pub fn load_logs(dir: &Path) -> Vec<Log> {
    let mut logs: Vec<Log> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .filter_map(|p| Some(parse_log(&p.file_name()?.to_string_lossy(), &std::fs::read_to_string(&p).ok()?)))
        .collect();
    logs.sort_by(|a, b| a.name.cmp(&b.name));
    logs
}

/// (tests that passed under the tool, the errors the logs that ran them reported, whether every
/// such log has its summary) for each kernel and tool.
pub fn coverage(logs: &[Log]) -> BTreeMap<(String, &'static str), (usize, u64, bool)> {
    let mut out = BTreeMap::new();
    for log in logs {
        let Some(tool) = log.tool else { continue };
        for (kernel, passed) in &log.passed_by_kernel {
            let cell = out.entry((kernel.clone(), tool)).or_insert((0, 0, true));
            cell.0 += passed;
            cell.1 += log.errors().unwrap_or(0);
            cell.2 &= log.summary.is_some();
        }
    }
    out
}

/// The chapter's table: every registered kernel against the four tools, from the logs.
pub fn coverage_table(dir: &Path) -> String {
    let logs = load_logs(dir);
    let cells = coverage(&logs);
    let mut s = String::from("| kernel | memcheck | racecheck | synccheck | initcheck |\n|---|--:|--:|--:|--:|\n");
    let mut missing: Vec<String> = Vec::new();
    let mut pairs_missing = 0;
    for kernel in registered_kernels() {
        write!(s, "| `{kernel}` |").unwrap();
        let mut tools_missing = Vec::new();
        for tool in TOOLS {
            match cells.get(&(kernel.clone(), tool)) {
                Some((passed, errors, true)) => write!(s, " {passed} tests, {errors} {} |", if tool == "racecheck" { "hazards" } else { "errors" }).unwrap(),
                Some((passed, _, false)) => write!(s, " {passed} tests, no summary (the run was cut short) |").unwrap(),
                None => {
                    write!(s, " not run |").unwrap();
                    tools_missing.push(tool);
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
        writeln!(s, "Not yet run, {pairs_missing} of {} kernel–tool pairs: {} (`tests/gpu-host.sh sanitize` runs them all, and its \
            logs go to `plots/data/sanitizer/`).", registered_kernels().len() * TOOLS.len(), missing.join(", ")).unwrap();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "========= COMPUTE-SANITIZER\ntest reduce15_neumaier::f32::n=7   ... ok\ntest read_only::b512_l8::f32::n=1 ... ok\n\
test copy::u32::n=3 ... ok\ntest device::info_is_plausible ... ok\ntest reduce3::i32::n=5 ... FAILED\n========= ERROR SUMMARY: 2 errors\n";

    #[test]
    fn a_log_counts_its_passing_tests_by_kernel_and_reads_its_summary() {
        let log = parse_log("sanitize-memcheck-test-gpu.log", LOG);
        assert_eq!(log.tool, Some("memcheck"));
        assert_eq!(log.passed_by_kernel.get("reduce15_neumaier"), Some(&1));
        assert_eq!(log.passed_by_kernel.get(READ_ONLY_KERNEL), Some(&1));
        assert_eq!(log.passed_by_kernel.get(COPY_KERNEL), Some(&1));
        assert_eq!((log.failed, log.errors()), (1, Some(2)));
        // Row tests count for the row kernels only in the row binary's logs.
        let rows = parse_log("sanitize-racecheck-test-rows.log", "test random::warp::1x1 ... ok\ntest choice::short ... ok\n");
        assert_eq!(rows.passed_by_kernel.get(ROWS), Some(&1));
        assert_eq!(rows.passed_by_kernel.len(), 1);
        assert!(parse_log("sanitize-racecheck-test-gpu.log", "test random::warp::1x1 ... ok\n").passed_by_kernel.is_empty());
    }

    #[test]
    fn the_table_names_every_kernel_and_every_pair_not_run() {
        let dir = std::env::temp_dir().join(format!("reduction-sanitizer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("sanitize-memcheck-test-gpu.log"), LOG).unwrap();
        let table = coverage_table(&dir);
        std::fs::remove_dir_all(&dir).ok();
        assert!(table.contains("| `reduce15_neumaier` | 1 tests, 2 errors | not run |"), "{table}");
        assert!(table.contains("`reduce1` (no tool)") && table.contains("`reduce15_neumaier` (racecheck, synccheck, initcheck)"), "{table}");
        for kernel in registered_kernels() {
            assert!(table.contains(&format!("| `{kernel}` |")), "{kernel}");
        }
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
}
