//! What the CUDA tools reported, as the chapters quote it: compute-sanitizer's summary lines and
//! the bank conflicts ncu counted.

use crate::element::Dtype;
use crate::error::{Result, io_error};
use crate::records::bench::{Cache, Row};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use super::find;

/// One sentence per compute-sanitizer log under `log_dir` (`plots/data/sanitizer/`), written to
/// `out_dir/<log name>.md`: which tool ran, and what its summary line counted, so that prose
/// about a sanitizer's verdict comes from its output.
pub fn write_sanitizer_summaries(log_dir: &Path, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let Ok(entries) = std::fs::read_dir(log_dir) else { return Ok(Vec::new()) };
    let mut logs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "log")).collect();
    logs.sort();
    std::fs::create_dir_all(out_dir).map_err(|e| io_error(out_dir, e))?;
    let mut written = Vec::new();
    for log in logs {
        let text = std::fs::read_to_string(&log).map_err(|e| io_error(&log, e))?;
        let path = out_dir.join(format!("{}.md", log.file_stem().unwrap().to_string_lossy()));
        let name = log.file_stem().unwrap().to_string_lossy().to_string();
        std::fs::write(&path, sanitizer_sentence(&format!("{name}\n{text}"))).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// "compute-sanitizer's racecheck reported 3 hazards displayed (0 errors, 10 warnings)." The
/// tool is the first one named in the text (the log's file name comes first).
pub(super) fn sanitizer_sentence(log: &str) -> String {
    let tool = ["memcheck", "racecheck", "synccheck", "initcheck"]
        .into_iter()
        .filter_map(|t| log.find(t).map(|at| (at, t)))
        .min()
        .map_or("the sanitizer", |(_, t)| t);
    let summary = log
        .lines()
        .filter_map(|l| l.trim_start_matches('=').trim().strip_prefix("RACECHECK SUMMARY: ").or_else(|| l.trim_start_matches('=').trim().strip_prefix("ERROR SUMMARY: ")))
        .find(|s| !s.contains("not printed"));
    let tests = log.lines().find_map(|l| l.strip_prefix("test result: ok. ")).and_then(|rest| rest.split(" passed").next().map(str::to_string));
    let under = tests.map(|n| format!(" ({n} tests ran under it and passed)")).unwrap_or_default();
    match summary {
        Some(summary) => format!("On the GPU this book was last measured on, compute-sanitizer's {tool} reported **{summary}**{under}.\n"),
        None => match log.lines().find_map(|l| l.strip_prefix("# not yet run: ")) {
            Some(command) => format!("compute-sanitizer's {tool} has not been run here yet (`{command}`).\n"),
            None => format!("The {tool} log has no summary line: the run did not finish.\n"),
        },
    }
}

/// The ncu metrics the bank-conflicts section reads, with what each counts.
pub const BANK_METRICS: [(&str, &str); 4] = [
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "bank conflicts, shared loads"),
    ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "bank conflicts, shared stores"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "wavefronts, shared loads"),
    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "wavefronts, shared stores"),
];

/// The value of `metric` in an `ncu --csv` report (the last quoted field of its line), if any.
pub fn ncu_metric(report: &str, metric: &str) -> Option<f64> {
    let line = report.lines().find(|l| l.contains(&format!("\"{metric}\"")))?;
    let value = line.trim().trim_end_matches('"').rsplit("\",\"").next()?;
    value.replace(',', "").parse().ok()
}

/// Kernel 2, kernel 2 padded and kernel 3: the bank conflicts ncu counted in one launch of each
/// (logs under `plots/data/bank-conflicts/`), and their benchmark times.
pub fn bank_conflicts_table(log_dir: &Path, rows: &[Row]) -> Option<String> {
    let kernels = ["reduce2", "reduce2_padded", "reduce3"];
    let reports: Vec<(&str, String)> = kernels
        .iter()
        .filter_map(|k| std::fs::read_to_string(log_dir.join(format!("{k}.log"))).ok().map(|t| (*k, t)))
        .collect();
    if reports.is_empty() {
        return None;
    }
    let mut s = String::new();
    let head: Vec<&str> = BANK_METRICS.iter().map(|(_, what)| *what).collect();
    writeln!(s, "| kernel | {} | 2^22 i32, rotated (µs) | 2^25 i32, rotated (µs) |\n|---|{}--:|--:|", head.join(" | "), "--:|".repeat(head.len())).unwrap();
    for (kernel, report) in &reports {
        let counts: Vec<String> = BANK_METRICS.iter().map(|(m, _)| ncu_metric(report, m).map_or("–".into(), |v| format!("{v:.0}"))).collect();
        let time = |n: usize| find(rows, kernel, Dtype::I32, n, Cache::Rotated).map_or("–".into(), |r| format!("{:.2}", r.median_us));
        writeln!(s, "| `{kernel}` | {} | {} | {} |", counts.join(" | "), time(1 << 22), time(1 << 25)).unwrap();
    }
    Some(s)
}
