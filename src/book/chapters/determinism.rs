//! "The same bits every time" (`book/determinism.md`): the level each kernel reaches
//! (`determinism.md`, from [`crate::records::determinism`]), what each level costs in the
//! benchmark's data, kernel 15's speed goal (`reproducible_goal.md`), and where its time goes
//! in Nsight Compute's profiles (`reproducible_ncu.md`).

use crate::book::context::Context;
use crate::error::Result;
use crate::records::bench::{Cache, Machine, Row};
use crate::records::csv::{self, Header};
use crate::records::determinism::{level, Level, Record};
use std::fmt::Write as _;
use crate::kernels::names;

/// Kernel 15's three (`kernels/15_reproducible.cu`), whose goal and profile the chapter shows.
const KERNEL15: [&str; 7] = [names::REDUCE15_REPRODUCIBLE, names::REDUCE15_NEUMAIER, names::REDUCE15_F64, names::REDUCE15_REPRODUCIBLE_B1024, names::REDUCE15_NEUMAIER_B1024, names::REDUCE15_REPRODUCIBLE_TWO_PASS, names::REDUCE15_NEUMAIER_TWO_PASS];

fn is_kernel15(kernel: &str) -> bool {
    KERNEL15.contains(&kernel)
}

/// The kernels in the order of the file, each with its rows.
fn by_kernel(rows: &[Record]) -> Vec<(&str, Vec<&Record>)> {
    let mut out: Vec<(&str, Vec<&Record>)> = Vec::new();
    for r in rows {
        match out.iter_mut().find(|(k, _)| *k == r.kernel) {
            Some((_, v)) => v.push(r),
            None => out.push((&r.kernel, vec![r])),
        }
    }
    out
}

/// The benchmark's best time for `kernel` (f32, rotated) at n, as "µs (% of peak)".
fn cost(machine: &Machine, bench: &[Row], kernel: &str, n: usize) -> Option<(f64, String)> {
    let row = bench.iter().find(|r| r.kernel == kernel && r.dtype == crate::Dtype::F32 && r.n == n && r.cache == Cache::Rotated)?;
    let pct = machine.peak_gbps.map(|p| format!(" ({:.1}% of peak)", 100.0 * row.gbps() / p)).unwrap_or_default();
    Some((row.median_us, format!("{:.1} µs{pct}", row.median_us)))
}

/// The chapter's tables: every kernel's level with the evidence, then each level's fastest
/// kernel in the benchmark's data at 2^28 and 2^30.
pub fn table(header: &Header, rows: &[Record], bench: Option<&(Machine, Vec<Row>)>) -> String {
    let value = |k: &str| csv::value(header, k).unwrap_or("?").to_string();
    let gpus: usize = value("gpus").parse().unwrap_or(1);
    let n = rows.first().map_or(0, |r| r.n);
    let condition = rows.first().map_or(0.0, |r| r.condition);
    let runs = rows.first().map_or(0, |r| r.runs);
    let mut s = String::new();
    writeln!(s, "*Measured on {} visible {} ({} SMs) on {} by `{}`: one input of {n} f32 values whose sum cancels (condition number Σ|x| / |Σx| = {condition:.1e}, so that another order of additions shows in the bits), summed {runs} times at each kernel's preferred launch, then once at every launch shape.*\n",
        gpus, value("gpu"), value("sm_count"), value("date"), value("command")).unwrap();
    let across = if gpus > 1 { "distinct across the GPUs" } else { "across GPUs" };
    writeln!(s, "| kernel | distinct over {runs} runs | distinct over launch shapes | {across} | = CPU transcription | level |\n|---|--:|--:|--:|:-:|---|").unwrap();
    let mut levels: Vec<(Level, &str)> = Vec::new();
    for (kernel, krows) in by_kernel(rows) {
        let first = krows[0];
        let runs = krows.iter().map(|r| r.distinct_over_runs).max().unwrap_or(0);
        let shapes = krows.iter().map(|r| r.distinct_over_shapes).max().unwrap_or(0);
        let mut bits: Vec<&str> = krows.iter().map(|r| r.bits.as_str()).collect();
        bits.sort_unstable();
        bits.dedup();
        let across_cell = if gpus > 1 { bits.len().to_string() } else { "one GPU measured".into() };
        let cpu = if first.transcription.is_empty() { "–".to_string() } else if krows.iter().all(|r| r.transcription == r.bits) { "yes".into() } else { "**no**".into() };
        let level = level(&krows);
        levels.push((level, kernel));
        writeln!(s, "| `{kernel}` | {runs} | {shapes} (of {}) | {across_cell} | {cpu} | {} |", first.shapes, level.name()).unwrap();
    }
    if let Some((machine, bench)) = bench {
        writeln!(s, "\nWhat each level costs on the {} (the benchmark's data, f32, inputs rotated past L2): the fastest kernel at each level.\n", machine.gpu).unwrap();
        writeln!(s, "| level | fastest kernel at 2^28 | time at 2^28 | time at 2^30 |\n|---|---|--:|--:|").unwrap();
        for level in [Level::NotDeterministic, Level::RunToRun, Level::LaunchIndependent, Level::GpuToGpu] {
            let best = levels.iter().filter(|(l, _)| *l == level)
                .filter_map(|(_, k)| cost(machine, bench, k, 1 << 28).map(|c| (c.0, *k)))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            match best {
                Some((_, kernel)) => {
                    let at = |n| cost(machine, bench, kernel, n).map_or("–".to_string(), |c| c.1);
                    writeln!(s, "| {} | `{kernel}` | {} | {} |", level.name(), at(1 << 28), at(1 << 30)).unwrap();
                }
                None => writeln!(s, "| {} | – (no kernel of this level in the benchmark's data) | – | – |", level.name()).unwrap(),
            }
        }
    }
    s
}

/// The goal for kernel 15, checked against the benchmark's data: each kernel's time at
/// 2^28 and 2^30 as a share of the theoretical peak, the goal (90%; 85% for the f64
/// accumulator), and the fastest plain (not chunked) kernel and the read-only ceiling beside it.
pub fn goal_table(machine: &Machine, bench: &[Row]) -> String {
    const GOALS: [(&str, f64); 7] = [(names::REDUCE15_REPRODUCIBLE, 90.0), (names::REDUCE15_NEUMAIER, 90.0), (names::REDUCE15_F64, 85.0),
        (names::REDUCE15_REPRODUCIBLE_B1024, 90.0), (names::REDUCE15_NEUMAIER_B1024, 90.0),
        (names::REDUCE15_REPRODUCIBLE_TWO_PASS, 90.0), (names::REDUCE15_NEUMAIER_TWO_PASS, 90.0)];
    let Some(peak) = machine.peak_gbps.filter(|p| *p > 0.0) else { return String::new() };
    let at = |kernel: &str, n: usize| bench.iter().find(|r| r.kernel == kernel && r.dtype == crate::Dtype::F32 && r.n == n && r.cache == Cache::Rotated);
    let mut s = String::new();
    writeln!(s, "| kernel | goal | 2^28 | 2^30 | met |\n|---|--:|--:|--:|:-:|").unwrap();
    for (kernel, goal) in GOALS {
        let cells: Vec<(String, bool)> = [1usize << 28, 1 << 30].iter().map(|&n| match at(kernel, n) {
            Some(r) => {
                let pct = 100.0 * r.gbps() / peak;
                (format!("{:.1} µs ({pct:.1}%)", r.median_us), pct >= goal)
            }
            None => ("–".into(), false),
        }).collect();
        let met = if cells.iter().all(|(c, _)| c == "–") { "not measured" } else if cells.iter().all(|(_, ok)| *ok) { "yes" } else { "**no**" };
        writeln!(s, "| `{kernel}` | ≥ {goal:.0}% | {} | {} | {met} |", cells[0].0, cells[1].0).unwrap();
    }
    for n in [1usize << 28, 1 << 30] {
        let plain = bench.iter()
            .filter(|r| r.dtype == crate::Dtype::F32 && r.n == n && r.cache == Cache::Rotated && r.status == crate::records::bench::Status::Correct && !is_kernel15(&r.kernel) && !r.is_entry_point())
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us));
        let ceiling = at(crate::records::bench::READ_ONLY_KERNEL, n);
        if let (Some(p), Some(c)) = (plain, ceiling) {
            let slowest = GOALS.iter().filter_map(|(k, _)| at(k, n)).max_by(|a, b| a.median_us.total_cmp(&b.median_us));
            let cost = slowest.map(|k| format!(" The slowest of kernel 15's sums, `{}`, takes {:.1}% longer than it.", k.kernel, 100.0 * (k.median_us / p.median_us - 1.0))).unwrap_or_default();
            // The reproducible plain sum's goal: within 1% of the fastest other kernel.
            let plain15 = [names::REDUCE15_REPRODUCIBLE, names::REDUCE15_REPRODUCIBLE_B1024, names::REDUCE15_REPRODUCIBLE_TWO_PASS].iter().filter_map(|k| at(k, n)).min_by(|a, b| a.median_us.total_cmp(&b.median_us));
            let cost = cost + &plain15.map(|k| format!(" The faster reproducible plain sum, `{}`, takes {:.1}% longer (the goal: within 1%).", k.kernel, 100.0 * (k.median_us / p.median_us - 1.0))).unwrap_or_default();
            writeln!(s, "\nAt 2^{}: the fastest other kernel, `{}`, {:.1} µs ({:.1}%); the read-only ceiling {:.1} µs ({:.1}%).{cost}",
                n.trailing_zeros(), p.kernel, p.median_us, 100.0 * p.gbps() / peak, c.median_us, 100.0 * c.gbps() / peak).unwrap();
        }
    }
    s
}

/// `determinism.md`: every kernel's level, with the benchmark's cost of each, or how to measure.
pub fn levels_markdown(c: &Context) -> Result<String> {
    Ok(match &c.determinism {
        Some((header, rows)) => table(header, rows, Some(c.book()?)),
        None => "*Not yet measured on this GPU: `cargo run --release -- determinism` writes the data and redraws this table.*\n".to_string(),
    })
}

/// `reproducible_goal.md`: the speed goal of kernel 15, measured in the same benchmark run as
/// every other kernel.
pub fn goal_markdown(c: &Context) -> Result<String> {
    let (machine, rows) = c.book()?;
    Ok(if rows.iter().any(|r| is_kernel15(&r.kernel)) {
        format!("*From the benchmark's data (`{}`); f32, inputs rotated past L2, percentages of the theoretical peak of {:.0} GB/s.*\n\n{}",
            machine.command, machine.peak_gbps.unwrap_or(0.0), goal_table(machine, rows))
    } else {
        "*Not yet measured on this GPU: `cargo run --release -- bench` measures kernel 15 beside every other kernel.*\n".to_string()
    })
}

/// What Nsight Compute reported for one launch (`plots/data/ncu/<kernel>.txt`, its text output
/// with the SpeedOfLight, Occupancy and LaunchStats sections).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub kernel: String,
    pub duration_us: f64,
    pub dram_percent: f64,
    pub compute_percent: f64,
    pub block: u32,
    pub grid: u64,
    pub registers: u32,
    /// Blocks an SM could hold, as the registers alone allow (ncu's "Block Limit Registers").
    pub register_block_limit: u32,
    pub theoretical_occupancy: f64,
    pub achieved_occupancy: f64,
}

/// The value of one metric (`DRAM Throughput`, `Issue Slots Busy`, ...) on ncu's details page:
/// the last column of its first line, thousands separators dropped.
pub fn ncu_value(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|v| v.replace(',', "").parse().ok())
}

/// ncu's Duration in µs, whatever unit it printed it in (`ns`, `us`, `ms`: ncu picks the unit by
/// the size, so a long launch's line reads `Duration  ms  1.50`).
pub fn ncu_duration_us(text: &str) -> Option<f64> {
    let line = text.lines().map(str::trim).find(|l| l.starts_with("Duration "))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let value: f64 = words.last()?.replace(',', "").parse().ok()?;
    let scale = match *words.get(words.len().checked_sub(2)?)? {
        "ns" => 1e-3,
        "us" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        _ => return None,
    };
    Some(value * scale)
}

/// The metrics of [`Profile`] read from ncu's text output; `None` if one is missing.
pub fn parse_ncu(kernel: &str, text: &str) -> Option<Profile> {
    let value = |name: &str| ncu_value(text, name);
    Some(Profile {
        kernel: kernel.to_string(),
        duration_us: ncu_duration_us(text)?,
        dram_percent: value("DRAM Throughput")?,
        compute_percent: value("Compute (SM) Throughput")?,
        block: value("Block Size")? as u32,
        grid: value("Grid Size")? as u64,
        registers: value("Registers Per Thread")? as u32,
        register_block_limit: value("Block Limit Registers")? as u32,
        theoretical_occupancy: value("Theoretical Occupancy")?,
        achieved_occupancy: value("Achieved Occupancy")?,
    })
}

/// `reproducible_ncu.md`: the table of every profile (`ncu`: (kernel, ncu's text), kernel 15's
/// first, then the others), and what it says of occupancy, from the numbers; a note when nothing
/// was profiled.
pub fn ncu_table(ncu: &[(String, String)]) -> String {
    // The ncu stage's launches at 2^28 f32: kernel 15's and the fastest plain sum's (the other
    // profiles in plots/data/ncu/ are of other sizes and chapters).
    let mut profiles: Vec<Profile> = ncu.iter().filter(|(kernel, _)| is_kernel15(kernel) || kernel == "reduce10_last_block").filter_map(|(kernel, text)| parse_ncu(kernel, text)).collect();
    if profiles.is_empty() {
        return "*Not yet profiled on this GPU: `tests/gpu-host.sh ncu` runs Nsight Compute on kernel 15 and writes `plots/data/ncu/`.*\n".into();
    }
    profiles.sort_by_key(|p| (!is_kernel15(&p.kernel), p.kernel.clone()));
    let mut s = String::from("| kernel | block × grid | registers a thread | occupancy: possible / achieved | SM throughput | DRAM throughput | duration |\n|---|--:|--:|--:|--:|--:|--:|\n");
    for p in &profiles {
        writeln!(s, "| `{}` | {} × {} | {} | {:.0}% / {:.1}% | {:.1}% | {:.1}% | {:.2} µs |", p.kernel, p.block, p.grid, p.registers,
            p.theoretical_occupancy, p.achieved_occupancy, p.compute_percent, p.dram_percent, p.duration_us).unwrap();
    }
    let ours: Vec<&Profile> = profiles.iter().filter(|p| is_kernel15(&p.kernel)).collect();
    if let (Some(fullest), false) = (profiles.iter().filter(|p| !is_kernel15(&p.kernel)).max_by(|a, b| a.theoretical_occupancy.total_cmp(&b.theoretical_occupancy)), ours.is_empty()) {
        let most = ours.iter().map(|p| p.theoretical_occupancy).fold(0.0, f64::max);
        let busiest = ours.iter().max_by(|a, b| a.compute_percent.total_cmp(&b.compute_percent)).unwrap();
        let limit = ours.iter().map(|p| p.register_block_limit).max().unwrap_or(0);
        writeln!(s, "\nKernel 15's launches could hold at most {most:.0}% of an SM's threads — their registers allow {limit} blocks an SM — against {:.0}% for `{}`; the busiest of them, `{}`, had an SM throughput (ncu's Compute (SM) Throughput) of {:.1}%, against {:.1}% for `{}`.",
            fullest.theoretical_occupancy, fullest.kernel, busiest.kernel, busiest.compute_percent, fullest.compute_percent, fullest.kernel).unwrap();
    }
    writeln!(s, "\n*One launch of each at 2^28 `f32`, profiled by Nsight Compute (`tests/gpu-host.sh ncu`; SpeedOfLight, Occupancy and LaunchStats sections) on the book's GPU.*").unwrap();
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncu_output_is_read_and_a_missing_metric_is_none() {
        let text = "    Duration                         us       249.12\n    DRAM Throughput                   %        89.77\n    Compute (SM) Throughput           %        54.70\n    Block Size                                                   512\n    Grid Size                                                 16,384\n    Registers Per Thread             register/thread              48\n    Block Limit Registers                 block            2\n    Theoretical Occupancy                     %           50\n    Achieved Occupancy                        %        48.03\n";
        let p = parse_ncu("k", text).unwrap();
        assert_eq!((p.block, p.grid, p.registers, p.register_block_limit), (512, 16384, 48, 2));
        assert_eq!((p.duration_us, p.theoretical_occupancy, p.achieved_occupancy), (249.12, 50.0, 48.03));
        assert!(parse_ncu("k", &text.replace("Registers Per Thread", "Registers")).is_none());
    }

    #[test]
    fn the_committed_profiles_are_read() {
        let ctx = Context::load(&crate::records::repo_root()).unwrap();
        let table = ncu_table(&ctx.ncu);
        assert!(table.contains("`reduce15_neumaier`") && table.contains("`reduce10_last_block`"), "{table}");
        assert!(table.contains("Kernel 15's launches could hold at most 50% of an SM's threads — their registers allow 2 blocks an SM"), "{table}");
    }

    fn record(gpu: usize, kernel: &str, runs: usize, shapes: usize, bits: &str, transcription: &str) -> Record {
        Record { gpu, kernel: kernel.into(), n: 100, condition: 1e12, runs: 100, distinct_over_runs: runs, shapes: 6, distinct_over_shapes: shapes, bits: bits.into(), transcription: transcription.into() }
    }

    #[test]
    fn csv_round_trips_and_the_table_names_every_kernel() {
        let rows = vec![record(0, "reduce10_atomic", 7, 9, "3f800000", ""), record(0, "reduce15_neumaier", 1, 1, "3f800001", "3f800001")];
        let machine = Machine { gpu: "Test GPU".into(), sm_count: 4, date: "2026-11-30".into(), command: "reduction determinism".into(), ..Default::default() };
        let path = std::env::temp_dir().join(format!("reduction-determinism-{}.csv", std::process::id()));
        crate::records::determinism::write_csv(&path, &machine, &rows).unwrap();
        let (header, back) = crate::records::determinism::read_csv(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(back, rows);
        let t = table(&header, &back, None);
        assert!(t.contains("| `reduce10_atomic` | 7 | 9 (of 6) | one GPU measured | – | not deterministic |"), "{t}");
        assert!(t.contains("| `reduce15_neumaier` | 1 | 1 (of 6) | one GPU measured | yes | same on every GPU measured and the CPU |"), "{t}");
    }
}
