//! "Beyond +" (`book/operators.md`, chapter 16): the tables, sentences and charts of the
//! operators, from `plots/data/operators/` ([`crate::records::operators`]: the book's kernels and
//! the peers), and the first H200 run's experiments under `operators/prototype/` (the accuracy
//! sweep, the broken versions, the mean/variance walks, Nsight Compute). The manifest names the
//! file each function writes (`operators_goal.md`, `plots/operators.svg`, ...).

use crate::book::context::Context;
use crate::book::draw::charts::{line_chart, PlainSeries};
use crate::element::Dtype;
use crate::error::{io_error, Result};
use crate::records::csv;
use crate::records::operators::{results_dir, OpFile, OpRow};
use crate::records::Machine;
use super::determinism::ncu_value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The command that measures what this chapter shows.
pub const MEASURE_COMMAND: &str = "cargo run --release -- ops-bench";
/// The operators of the goal, in the chapter's order.
const OPS: [&str; 6] = ["max", "min", "argmax", "argmin", "mean_var", "sumsq"];
const WALKS: [&str; 5] = ["mean_var", "welford_divide", "welford_fast_divide", "welford_pack", "mean_var_textbook"];
/// The whole-array size the goal is set at, and the shortest row it covers.
const GOAL_N: usize = 1 << 28;
const GOAL_MIN_ROW: usize = 256;
/// The share of the theoretical peak the goal asks for.
const GOAL_PERCENT: f64 = 90.0;

fn pow2(n: usize) -> String {
    if n.is_power_of_two() && n >= 16 { format!("2^{}", n.trailing_zeros()) } else { n.to_string() }
}

fn shape(r: &OpRow) -> String {
    if r.rows == 1 { pow2(r.row.n) } else { format!("{} × {}", pow2(r.rows), pow2(r.row.n)) }
}

/// The book's own result of `op` on `dtype` at (rows, n): the whole-array kernel, or the row
/// kernel the planner chose.
fn ours<'a>(rows: &'a [OpRow], op: &str, dtype: Dtype, m: usize, n: usize) -> Option<&'a OpRow> {
    let kernel = if m == 1 { format!("{op}_whole") } else { format!("{op}_rows_auto") };
    rows.iter().find(|r| r.row.kernel == kernel && r.row.dtype == dtype && r.rows == m && r.row.n == n)
}

fn dtypes(op: &str) -> &'static [Dtype] {
    if matches!(op, "max" | "min" | "argmax" | "argmin") { &[Dtype::F32, Dtype::F16, Dtype::BF16, Dtype::I32] } else { &[Dtype::F32, Dtype::F16, Dtype::BF16] }
}

/// What to say where the operators have not been measured on the book's GPU.
fn not_yet(c: &Context) -> String {
    let gpu = c.book_gpu().unwrap_or("book's GPU");
    format!("*Not yet measured on the {gpu}: run `{MEASURE_COMMAND}` on it (on a GPU host without Rust, `bash tests/gpu-host.sh ops`), then `cargo run -- bench --plot-only`.*\n")
}

/// The book GPU's operators and peers, or what to say instead.
fn measured(c: &Context) -> std::result::Result<(&OpFile, &[OpRow]), String> {
    match &c.operators {
        Some(file) => Ok((file, c.operator_peers.as_ref().map_or(&[][..], |(_, p)| p.as_slice()))),
        None => Err(not_yet(c)),
    }
}

/// The first H200 run's experiments: `plots/data/operators/prototype/`.
fn prototype(c: &Context) -> PathBuf {
    results_dir(&c.data_dir).join("prototype")
}

/// `operators_source.md`: where the numbers come from.
pub fn source_markdown(c: &Context) -> Result<String> {
    Ok(match measured(c) {
        Ok(((machine, _), _)) => source(machine, c.operator_peers.as_ref().map(|(m, _)| m)),
        Err(why) => why,
    })
}

/// `operators_goal.md`: [`goal_table`] of the book's GPU.
pub fn goal_markdown(c: &Context) -> Result<String> {
    Ok(measured(c).map_or_else(|why| why, |((machine, rows), _)| goal_table(machine, rows)))
}

/// `operators_peers.md`: [`peers_table`].
pub fn peers_markdown(c: &Context) -> Result<String> {
    Ok(measured(c).map_or_else(|why| why, |((_, rows), peers)| peers_table(rows, peers)))
}

/// `operators_sum.md`: [`sum_sentence`].
pub fn sum_markdown(c: &Context) -> Result<String> {
    Ok(measured(c).map_or_else(|why| why, |((machine, rows), _)| sum_sentence(machine, rows)))
}

/// `operators_walks.md`: the walks of the mean and variance at 2^28, with Nsight Compute's view.
pub fn walks_markdown(c: &Context) -> Result<String> {
    match measured(c) {
        Ok(((machine, rows), _)) => walks_table(machine, rows, &prototype(c)),
        Err(why) => Ok(why),
    }
}

/// `operators_accuracy.md`: the prototype's accuracy sweep of the mean/variance walks.
pub fn accuracy_markdown(c: &Context) -> Result<String> {
    Ok(accuracy_table(&prototype(c).join("accuracy.csv"))?.unwrap_or_else(|| not_yet(c)))
}

/// `operators_broken.md`: what the prototype's planted bugs returned on real data.
pub fn broken_markdown(c: &Context) -> Result<String> {
    Ok(broken_table(&prototype(c).join("broken.csv"))?.unwrap_or_else(|| not_yet(c)))
}

/// `plots/operators.svg`: time against n, whole f32 arrays; `None` where nothing is measured.
pub fn chart(c: &Context) -> Result<Option<String>> {
    measured(c).ok().map(|((machine, rows), peers)| {
        line_chart(format!("Operators on whole f32 arrays, {}: time vs n", machine.gpu), "median time per operation (µs)".into(), whole_series(rows, peers))
    }).transpose()
}

/// `plots/operators_rows.svg`: time against N, rows of M × N = 2^28 f32 values.
pub fn rows_chart(c: &Context) -> Result<Option<String>> {
    measured(c).ok().map(|((machine, rows), peers)| {
        line_chart(format!("Operators on the rows of M × N = 2^28 f32 values, {}: time vs N", machine.gpu), "median time per M results (µs)".into(), rows_series(rows, peers))
    }).transpose()
}

fn source(machine: &Machine, peers: Option<&Machine>) -> String {
    let mut s = format!("Measured on the {} on {}, by `{}`.", machine.gpu, machine.date, machine.command);
    if let Some(p) = peers {
        let _ = write!(s, " The peers: `{}`.", p.command);
    }
    s.push('\n');
    s
}

fn percent(machine: &Machine, r: &OpRow) -> Option<f64> {
    r.percent_of(machine.peak_gbps)
}

fn cell_percent(p: Option<f64>) -> String {
    p.map_or("—".into(), |p| format!("{p:.1}%"))
}

// ANCHOR: goal
/// Every operator and type: the whole array at 2^28 (µs, GB/s, % of peak), the slowest row
/// shape with N ≥ 256 (% of peak, and which), and whether both reach 90%.
pub fn goal_table(machine: &Machine, rows: &[OpRow]) -> String {
    let peak = machine.peak_gbps.map_or("an unknown peak".to_string(), |p| format!("{p:.0} GB/s"));
    let mut s = format!("Against {GOAL_PERCENT:.0}% of the theoretical {peak} (bytes: every input read once, every result written once):\n\n");
    s += "| operator | type | 2^28 whole: µs | GB/s | % of peak | rows, N ≥ 256: slowest | at | ≥ 90%? |\n|---|---|---|---|---|---|---|---|\n";
    let (mut met, mut total) = (0, 0);
    for op in OPS {
        for &dtype in dtypes(op) {
            let whole = ours(rows, op, dtype, 1, GOAL_N);
            let slowest = rows.iter()
                .filter(|r| r.row.kernel == format!("{op}_rows_auto") && r.row.dtype == dtype && r.row.n >= GOAL_MIN_ROW)
                .filter_map(|r| percent(machine, r).map(|p| (p, r)))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            let Some(whole) = whole else { continue };
            let pw = percent(machine, whole);
            let ok = pw.is_some_and(|p| p >= GOAL_PERCENT) && slowest.is_some_and(|(p, _)| p >= GOAL_PERCENT);
            total += 1;
            met += ok as usize;
            let _ = writeln!(s, "| {op} | {dtype} | {:.1} | {:.0} | {} | {} | {} | {} |", whole.row.median_us, whole.gbps(), cell_percent(pw),
                cell_percent(slowest.map(|(p, _)| p)), slowest.map_or("—".into(), |(_, r)| shape(r)), if ok { "yes" } else { "**no**" });
        }
    }
    let _ = writeln!(s, "\n{met} of {total} operator and type pairs reach {GOAL_PERCENT:.0}% of peak both at 2^28 and on every row shape with N ≥ 256.");
    s
}
// ANCHOR_END: goal

/// Where a peer was faster than the book's kernel at the same size or shape, per operator and
/// type, and how many measured points the book's kernels won.
pub fn peers_table(rows: &[OpRow], peers: &[OpRow]) -> String {
    if peers.is_empty() {
        return "*No peers measured in this run.*\n".into();
    }
    let mut s = "| operator | type | points compared | a peer faster at |\n|---|---|---|---|\n".to_string();
    let (mut won, mut compared) = (0, 0);
    for op in OPS {
        for &dtype in dtypes(op) {
            // The fastest peer at each (rows, n).
            let mut best: BTreeMap<(usize, usize), &OpRow> = BTreeMap::new();
            for p in peers.iter().filter(|p| p.op == op && p.row.dtype == dtype) {
                let key = (p.rows, p.row.n);
                if best.get(&key).is_none_or(|b| p.row.median_us < b.row.median_us) {
                    best.insert(key, p);
                }
            }
            let mut lost = Vec::new();
            let mut here = 0;
            for (&(m, n), p) in &best {
                let Some(o) = ours(rows, op, dtype, m, n) else { continue };
                here += 1;
                if p.row.median_us < o.row.median_us {
                    lost.push(format!("{} ({} {:.2} µs, ours {:.2})", shape(o), p.row.kernel, p.row.median_us, o.row.median_us));
                }
            }
            if here == 0 {
                continue;
            }
            compared += here;
            won += here - lost.len();
            let cell = if lost.is_empty() { "none".to_string() } else { lost.join("; ") };
            let _ = writeln!(s, "| {op} | {dtype} | {here} | {cell} |");
        }
    }
    let _ = writeln!(s, "\nThe book's kernels were at least as fast as the fastest peer at {won} of {compared} points (sizes and shapes, every operator and type).");
    s
}

/// The sum as an instance of the operator machinery, beside kernel 10 (whole arrays) and kernel
/// 13 (rows), f32.
pub fn sum_sentence(machine: &Machine, rows: &[OpRow]) -> String {
    let find = |kernel: &str, m: usize, n: usize| rows.iter().find(|r| r.row.kernel == kernel && r.row.dtype == Dtype::F32 && r.rows == m && r.row.n == n);
    let mut s = String::new();
    if let (Some(generic), Some(k10), Some(ro)) = (find("sum_whole", 1, GOAL_N), find("reduce10_last_block", 1, GOAL_N), find("read_only", 1, GOAL_N)) {
        let _ = write!(s, "At 2^28 f32 values the sum through the operator machinery took {:.1} µs ({}), kernel 10's own {:.1} µs ({}), the read-only kernel {:.1} µs ({}). ",
            generic.row.median_us, cell_percent(percent(machine, generic)), k10.row.median_us, cell_percent(percent(machine, k10)), ro.row.median_us, cell_percent(percent(machine, ro)));
    }
    let ratios: Vec<f64> = rows.iter()
        .filter(|r| r.row.kernel == "sum_rows_auto" && r.row.dtype == Dtype::F32)
        .filter_map(|g| find(crate::records::rows::AUTO_KERNEL, g.rows, g.row.n).map(|k| g.row.median_us / k.row.median_us))
        .collect();
    if !ratios.is_empty() {
        let (lo, hi) = ratios.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
        let _ = write!(s, "On the {} row shapes measured, the generic row sum took {:.2}× to {:.2}× kernel 13's time.", ratios.len(), lo, hi);
    }
    if s.is_empty() {
        s = "*The generic sum and kernels 10 and 13 were not measured together in this run.*".into();
    }
    s.push('\n');
    s
}

/// The walks of the mean and variance at 2^28, every type: time, % of peak, and (where Nsight
/// Compute measured them) DRAM throughput and issue slots busy.
fn walks_table(machine: &Machine, rows: &[OpRow], prototype: &Path) -> Result<String> {
    // The benchmark writes the walks into the results; the first run kept them in its tuning file.
    let mut all: Vec<OpRow> = rows.to_vec();
    let tuning = prototype.join("tuning.csv");
    if !rows.iter().any(|r| r.row.kernel == "welford_divide_whole") && tuning.is_file() {
        all.extend(crate::records::operators::read_csv(&tuning)?.1);
    }
    let ncu = ncu_metrics(prototype)?;
    let mut s = "| walk | type | µs at 2^28 | % of peak | DRAM throughput (ncu) | issue slots busy (ncu) |\n|---|---|---|---|---|---|\n".to_string();
    let mut any = false;
    for dtype in [Dtype::F32, Dtype::F16, Dtype::BF16] {
        for op in WALKS {
            let Some(r) = all.iter().find(|r| r.row.kernel == format!("{op}_whole") && r.row.dtype == dtype && r.row.n == GOAL_N) else { continue };
            any = true;
            let (dram, issue) = ncu.get(&(format!("{op}_whole_{}", dtype.name()))).cloned().unwrap_or_default();
            let _ = writeln!(s, "| {op} | {dtype} | {:.1} | {} | {} | {} |", r.row.median_us, cell_percent(percent(machine, r)), if dram.is_empty() { "—".into() } else { format!("{dram}%") }, if issue.is_empty() { "—".into() } else { format!("{issue}%") });
        }
    }
    Ok(if any { s } else { "*The walks of the mean and variance have not been measured in this run.*\n".into() })
}

/// (DRAM throughput %, issue slots busy %) per kernel from Nsight Compute's text reports.
fn ncu_metrics(prototype: &Path) -> Result<BTreeMap<String, (String, String)>> {
    let mut out = BTreeMap::new();
    // The first run's profiles of every walk (f32, f16), then those of plots/data/operators/ncu/ (bf16 too).
    let mut texts: Vec<String> = ["whole-f32.txt", "whole-f16.txt"].iter().filter_map(|name| std::fs::read_to_string(prototype.join("ncu").join(name)).ok()).collect();
    let later = prototype.parent().map(|dir| operator_profiles(&dir.join("ncu"))).transpose()?.unwrap_or_default();
    texts.extend(later.into_iter().map(|(_, text)| text));
    for text in &texts {
        let mut current: Option<String> = None;
        for line in text.lines() {
            let t = line.trim();
            if let Some(kernel) = t.split_whitespace().next().filter(|k| k.contains("_whole_") && t.contains("Context")) {
                current = Some(kernel.to_string());
                out.entry(kernel.to_string()).or_insert((String::new(), String::new()));
            }
            let value = || t.split_whitespace().last().unwrap_or("").to_string();
            if let Some(k) = &current {
                let entry = out.get_mut(k).expect("inserted above");
                if t.starts_with("DRAM Throughput") && entry.0.is_empty() {
                    entry.0 = value();
                } else if t.starts_with("Issue Slots Busy") && entry.1.is_empty() {
                    entry.1 = value();
                }
            }
        }
    }
    Ok(out)
}

/// The profiles of `plots/data/operators/ncu/` (and `dl/ncu/`): `[<peer>-]<op>_<type>_<M>x<N>[_two_blocks].txt`,
/// ncu's details page of one launch at that shape (`M` = 1: the whole array).
pub(crate) fn operator_profiles(dir: &Path) -> Result<Vec<(String, String)>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| io_error(dir, e))?.path();
        if path.extension().is_some_and(|e| e == "txt") {
            let text = std::fs::read_to_string(&path).map_err(|e| io_error(&path, e))?;
            out.push((path.file_stem().unwrap_or_default().to_string_lossy().into_owned(), text));
        }
    }
    out.sort();
    Ok(out)
}

/// `argmax f32, 2^14 × 2^14` from `argmax_f32_16384x16384` (`2^28 whole` for one row); the
/// second value says whether the launch asked for two blocks per SM (`_two_blocks`).
pub(crate) fn profile_label(stem: &str) -> Option<(String, bool)> {
    let (stem, two_blocks) = match stem.strip_suffix("_two_blocks") { Some(s) => (s, true), None => (stem, false) };
    let (peer, stem) = match stem.split_once('-') { Some((peer, rest)) => (Some(peer), rest), None => (None, stem) };
    let (rest, shape) = stem.rsplit_once('_')?;
    let (op, dtype) = rest.rsplit_once('_')?;
    let (m, n) = shape.split_once('x')?;
    let (m, n): (usize, usize) = (m.parse().ok()?, n.parse().ok()?);
    let at = if m == 1 { format!("{} whole", super::common::size_text(n)) } else { super::rows::shape(m, n) };
    let by = peer.map(|p| format!(" ({p})")).unwrap_or_default();
    Some((format!("{op} {dtype}, {at}{by}"), two_blocks))
}

/// A folder of profiles and how its launches were made, for [`ncu_table`]'s notes.
pub(crate) struct NcuFolder<'a> {
    pub dir: &'a Path,
    /// As the notes name it: `plots/data/operators/ncu/`.
    pub shown_as: &'a str,
    /// What was profiled: "the first of `reduction op …`".
    pub launches: &'a str,
    /// The registers the current code compiles to (`plots/data/dl/registers-sm_90.csv`), where
    /// recorded: a profile that held another count is of an earlier build, and the table says so.
    pub build: Option<(&'a str, &'a [crate::records::registers::EntryRegisters])>,
}

/// Issue slots busier than this (% of cycles) call a launch bound by its instructions.
const ISSUE_BOUND_PERCENT: f64 = 70.0;
/// Achieved occupancy below this, with DRAM not busy, calls a launch short of warps.
const FEW_WARPS_PERCENT: f64 = 60.0;

/// `operators_ncu.md`: what Nsight Compute saw of the operator launches furthest below 90% of
/// peak (and of one that reaches it, for contrast), and what each profile says limits it.
pub fn ncu_markdown(c: &Context) -> Result<String> {
    let dir = results_dir(&c.data_dir).join("ncu");
    let folder = NcuFolder { dir: &dir, shown_as: "plots/data/operators/ncu/", launches: "the first of `reduction op --op <op> --dtype <type> --rows <M> --n <N>`", build: None };
    if operator_profiles(&dir)?.is_empty() {
        return Ok("*Not yet profiled on this GPU: `ncu … reduction op --op argmax --rows 16384 --n 16384` writes the details page into `plots/data/operators/ncu/argmax_f32_16384x16384.txt`.*\n".into());
    }
    ncu_table(&folder)
}

/// One row per profile of the folder: the launch, its registers, occupancy, issue slots and DRAM,
/// and what limits it, read off those numbers.
pub(crate) fn ncu_table(folder: &NcuFolder<'_>) -> Result<String> {
    let profiles = operator_profiles(folder.dir)?;
    let mut s = String::from("| launch | kernel | block × grid | registers a thread | occupancy: possible / achieved | issue slots busy | DRAM throughput | duration under ncu | what limits it |\n|---|---|--:|--:|--:|--:|--:|--:|---|\n");
    let mut written = 0;
    let mut earlier_builds = Vec::new();
    for (stem, text) in &profiles {
        let (Some((label, two_blocks)), Some(p), Some(issue)) = (profile_label(stem), super::determinism::parse_ncu(stem, text), ncu_value(text, "Issue Slots Busy")) else { continue };
        let kernel = super::entry_ncu::profiled_kernel(text).unwrap_or("?");
        let verdict = if p.dram_percent > super::entry_ncu::MEMORY_BOUND_DRAM_PERCENT {
            "memory".to_string()
        } else if issue > ISSUE_BOUND_PERCENT {
            "instructions: the issue slots are busy, DRAM waits".to_string()
        } else if p.achieved_occupancy < FEW_WARPS_PERCENT {
            // The registers are to blame only where they are the binding limit and keep the SM from full.
            let limits = ["Block Limit SM", "Block Limit Shared Mem", "Block Limit Warps"].map(|name| ncu_value(text, name).unwrap_or(f64::INFINITY));
            let registers_bind = p.theoretical_occupancy < 100.0 && limits.iter().all(|&l| f64::from(p.register_block_limit) <= l);
            if registers_bind {
                format!("too few warps: the registers allow {} block{} an SM", p.register_block_limit, if p.register_block_limit == 1 { "" } else { "s" })
            } else {
                format!("too few warps: {:.0}% of an SM's threads at work", p.achieved_occupancy)
            }
        } else {
            match ncu_value(text, "No Eligible") {
                Some(idle) => format!("neither alone: no warp ready to issue in {idle:.0}% of cycles"),
                None => "neither alone".to_string(),
            }
        };
        let asked = if two_blocks { " (two blocks an SM asked)" } else { "" };
        if let Some(now) = folder.build.and_then(|(_, entries)| entries.iter().find(|e| e.entry == kernel)).filter(|e| e.registers != p.registers) {
            earlier_builds.push(format!("`{kernel}` ({label}) held {} registers a thread then, {} now", p.registers, now.registers));
        }
        written += 1;
        writeln!(s, "| {label}{asked} | `{kernel}` | {} × {} | {} | {:.0}% / {:.1}% | {issue:.1}% | {:.1}% | {:.2} µs | {verdict} |", p.block, p.grid, p.registers, p.theoretical_occupancy, p.achieved_occupancy, p.dram_percent, p.duration_us).unwrap();
    }
    if let (Some((file, _)), false) = (folder.build, earlier_builds.is_empty()) {
        let _ = writeln!(s, "\nProfiled before a change to the code, and not yet again: {} (the current build's registers: `{file}`, which CI compiles again). Their rows are of that build.", earlier_builds.join("; "));
    }
    let unread = profiles.len() - written;
    if unread > 0 {
        let _ = writeln!(s, "\n*{unread} profile{} in `{}` could not be read (not ncu's details page of one launch).*", if unread == 1 { "" } else { "s" }, folder.shown_as);
    }
    let _ = writeln!(s, "\n*One launch of each, {}, profiled by Nsight Compute without fixed clocks (`{}`). \"What limits it\" reads the numbers: DRAM over {:.0}% busy is memory; issue slots over {:.0}% busy, instructions; achieved occupancy under {:.0}%, too few warps.*",
        folder.launches, folder.shown_as, super::entry_ncu::MEMORY_BOUND_DRAM_PERCENT, ISSUE_BOUND_PERCENT, FEW_WARPS_PERCENT);
    Ok(s)
}

/// The accuracy sweep (whole arrays of f32): each walk's relative error of the variance as
/// mean / sd grows, and torch.var_mean's.
fn accuracy_table(path: &Path) -> Result<Option<String>> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(None) };
    let (_, body) = csv::split_header(&text, &path.display().to_string())?;
    let mut reader = ::csv::Reader::from_reader(body.as_bytes());
    let mut table: BTreeMap<u64, BTreeMap<String, String>> = BTreeMap::new();
    let mut columns: Vec<String> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| io_error(path, e))?;
        let get = |i: usize| record.get(i).unwrap_or("").to_string();
        // op,dtype,shape,n,mu_over_sigma,mean_err_over_sigma,var_rel_err,got_var,ref_var
        if get(1) != "f32" || get(2) != "whole" {
            continue;
        }
        let ratio: u64 = get(4).parse().unwrap_or(0);
        let op = get(0);
        if !columns.contains(&op) {
            columns.push(op.clone());
        }
        table.entry(ratio).or_default().insert(op, get(6));
    }
    if table.is_empty() {
        return Ok(None);
    }
    let mut s = format!("| mean / sd | {} |\n|---|{}\n", columns.join(" | "), "---|".repeat(columns.len()));
    for (ratio, cells) in &table {
        let row: Vec<String> = columns.iter().map(|c| cells.get(c).map_or("—".into(), |v| v.replace("inf", "∞"))).collect();
        let _ = writeln!(s, "| {ratio} | {} |", row.join(" | "));
    }
    s += "\n(Relative error of the variance against the f64 two-pass variance of the same f32 values, 2^24 of them.)\n";
    Ok(Some(s))
}

/// What each planted bug returned on real data.
fn broken_table(path: &Path) -> Result<Option<String>> {
    let Ok(text) = std::fs::read_to_string(path) else { return Ok(None) };
    let (_, body) = csv::split_header(&text, &path.display().to_string())?;
    let mut reader = ::csv::Reader::from_reader(body.as_bytes());
    let mut s = "| bug | operator | data | n | right | returned | caught |\n|---|---|---|---|---|---|---|\n".to_string();
    let mut any = false;
    for record in reader.records() {
        let record = record.map_err(|e| io_error(path, e))?;
        let get = |i: usize| record.get(i).unwrap_or("").to_string();
        // bug,op,dtype,data,n,correct,returned,caught
        let n: usize = get(4).parse().unwrap_or(0);
        let _ = writeln!(s, "| {} | {} {} | {} | {} | {} | {} | {} |", get(0), get(1), get(2), get(3), pow2(n), get(5), get(6), if get(7) == "1" { "yes" } else { "no" });
        any = true;
    }
    Ok(any.then_some(s))
}

type Series = PlainSeries;

fn points(rows: &[OpRow], kernel: &str, dtype: Dtype, whole: bool) -> Vec<(f64, f64)> {
    let mut p: Vec<(f64, f64)> = rows.iter()
        .filter(|r| r.row.kernel == kernel && r.row.dtype == dtype && (r.rows == 1) == whole && (whole || r.rows * r.row.n == 1 << 28))
        .map(|r| (r.row.n as f64, r.row.median_us))
        .collect();
    p.sort_by(|a, b| a.0.total_cmp(&b.0));
    p
}

fn whole_series(rows: &[OpRow], peers: &[OpRow]) -> Series {
    let mut series = Vec::new();
    for (kernel, label) in [("max_whole", "max"), ("argmax_whole", "argmax"), ("mean_var_whole", "mean_var"), ("sumsq_whole", "sumsq"), ("sum_whole", "sum (operator)"), ("read_only", "read-only kernel")] {
        let p = points(rows, kernel, Dtype::F32, true);
        if !p.is_empty() {
            series.push((label.to_string(), p, false));
        }
    }
    for kernel in ["torch_amax", "torch_argmax", "torch_var_mean", "cupy_max"] {
        let p = points(peers, kernel, Dtype::F32, true);
        if !p.is_empty() {
            series.push((kernel.to_string(), p, true));
        }
    }
    series
}

fn rows_series(rows: &[OpRow], peers: &[OpRow]) -> Series {
    let mut series = Vec::new();
    for (kernel, label) in [("max_rows_auto", "max"), ("argmax_rows_auto", "argmax"), ("mean_var_rows_auto", "mean_var"), ("sumsq_rows_auto", "sumsq"), ("rows_auto", "kernel 13 (sum)")] {
        let p = points(rows, kernel, Dtype::F32, false);
        if !p.is_empty() {
            series.push((label.to_string(), p, false));
        }
    }
    for kernel in ["torch_amax_dim1", "torch_argmax_dim1", "torch_var_mean_dim1", "triton_row_mean_var"] {
        let p = points(peers, kernel, Dtype::F32, false);
        if !p.is_empty() {
            series.push((kernel.to_string(), p, true));
        }
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::bench::{Cache, Row, Status};

    fn op_row(kernel: &str, op: &str, dtype: Dtype, rows: usize, n: usize, us: f64) -> OpRow {
        OpRow {
            row: Row {
                kernel: kernel.into(), chapter: 16, title: String::new(), status: Status::Correct, dtype, n, block: 256, cache: Cache::Rotated,
                median_us: us, min_us: us, max_us: us, bytes: crate::records::operators::op_bytes(op, rows, n, dtype.size_bytes()),
                working_set_bytes: 1 << 30, repeats: 15, method: String::new(),
            },
            op: op.into(),
            rows,
        }
    }

    #[test]
    fn the_profiles_are_labelled_and_judged_from_their_numbers() {
        assert_eq!(profile_label("argmax_f32_16384x16384"), Some(("argmax f32, 2^14 × 2^14".into(), false)));
        assert_eq!(profile_label("mean_var_bf16_1x268435456"), Some(("mean_var bf16, 2^28 whole".into(), false)));
        assert_eq!(profile_label("welford_divide_bf16_16x16777216_two_blocks"), Some(("welford_divide bf16, 16 × 2^24".into(), true)));
        assert_eq!(profile_label("notes"), None);
        assert_eq!(profile_label("torch-softmax_f32_1048576x256"), Some(("softmax f32, 2^20 × 256 (torch)".into(), false)));
        let page = |dram: f64, issue: f64, achieved: f64| format!(
            "  argmax_rows_block_f32 (16384, 1, 1)x(1024, 1, 1), Context 1, Stream 13, Device 0, CC 9.0\n    Duration                         us       436.19\n    DRAM Throughput                   %        {dram}\n    Compute (SM) Throughput           %        51.82\n    Issue Slots Busy               %        {issue}\n    No Eligible                            %        45.93\n    Block Size                                                 1,024\n    Grid Size                                                 16,384\n    Registers Per Thread             register/thread              38\n    Block Limit Registers                 block            1\n    Theoretical Occupancy                     %           50\n    Achieved Occupancy                        %        {achieved}\n");
        let dir = std::env::temp_dir().join(format!("operators-ncu-{}", std::process::id()));
        let folder = |dir: &std::path::Path| NcuFolder { dir: Box::leak(dir.to_path_buf().into_boxed_path()), shown_as: "plots/data/operators/ncu/", launches: "the first", build: None };
        std::fs::create_dir_all(&dir).unwrap();
        let verdict = |dram: f64, issue: f64, achieved: f64| {
            std::fs::write(dir.join("argmax_f32_16384x16384.txt"), page(dram, issue, achieved)).unwrap();
            let table = ncu_table(&folder(&dir)).unwrap();
            table.lines().nth(2).unwrap_or("").rsplit('|').nth(1).unwrap_or("").trim().to_string()
        };
        assert_eq!(verdict(95.3, 36.9, 96.6), "memory");
        assert_eq!(verdict(68.3, 71.3, 96.9), "instructions: the issue slots are busy, DRAM waits");
        assert_eq!(verdict(51.3, 51.8, 49.6), "too few warps: the registers allow 1 block an SM");
        assert_eq!(verdict(70.3, 61.6, 72.6), "neither alone: no warp ready to issue in 46% of cycles");
        std::fs::write(dir.join("argmax_f32_16384x16384_two_blocks.txt"), page(68.3, 71.3, 96.9)).unwrap();
        std::fs::write(dir.join("argmax_f32_4096x4096.txt"), "not a profile").unwrap();
        let table = ncu_table(&folder(&dir)).unwrap();
        assert!(table.contains("| argmax f32, 2^14 × 2^14 (two blocks an SM asked) | `argmax_rows_block_f32` | 1024 × 16384 | 38 | 50% / 96.9% | 71.3% | 68.3% | 436.19 µs |"), "{table}");
        assert!(table.contains("1 profile in `plots/data/operators/ncu/` could not be read"), "{table}");
        assert!(!table.contains("Profiled before a change"), "no record of the build, no note: {table}");
        // Beside the current build's registers: a profile that held another count is of an earlier build.
        let entry = |registers| crate::records::registers::EntryRegisters { file: "16_extremes.cu".into(), entry: "argmax_rows_block_f32".into(), registers, spill_store_bytes: 0, spill_load_bytes: 0 };
        let with_build = |entries: &'static [crate::records::registers::EntryRegisters]| ncu_table(&NcuFolder { build: Some(("plots/data/x.csv", entries)), ..folder(&dir) }).unwrap();
        let changed = with_build(Box::leak(Box::new([entry(48)])));
        assert!(changed.contains("Profiled before a change to the code, and not yet again: `argmax_rows_block_f32` (argmax f32, 2^14 × 2^14) held 38 registers a thread then, 48 now; `argmax_rows_block_f32` (argmax f32, 2^14 × 2^14) held 38"), "{changed}");
        assert!(changed.contains("(the current build's registers: `plots/data/x.csv`"), "{changed}");
        assert!(!with_build(Box::leak(Box::new([entry(38)]))).contains("Profiled before a change"), "the same count: no note");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The chapter's paragraph on the two-blocks-per-SM bound, checked against the committed
    /// record of ptxas and the two runs: i32 fits in 32 registers with nothing spilled; the float
    /// types spill; their argmax rows of 2^14 values got faster and their rows of 2^20 slower.
    #[test]
    fn the_row_block_bound_paragraph_is_what_the_data_shows() {
        let data = crate::records::repo_root().join("plots/data/operators");
        let text = std::fs::read_to_string(data.join("experiments/row_block_registers.csv")).unwrap();
        let (_, body) = csv::split_header(&text, "row_block_registers.csv").unwrap();
        let entry = |defines: &str, name: &str| -> (u32, u32) {
            let line = body.lines().find(|l| l.contains(&format!("\"{defines}\",{name},"))).unwrap_or_else(|| panic!("{defines} {name}"));
            let cells: Vec<&str> = line.rsplit(',').collect();
            (cells[3].parse().unwrap(), cells[1].parse().unwrap()) // registers, spill stores
        };
        let unbounded_i32 = entry("OP_I32_BLOCK_BOUNDS=__launch_bounds__(1024)", "argmax_rows_block_i32");
        assert!(unbounded_i32.0 > 32 && entry("default", "argmax_rows_block_i32") == (32, 0), "i32: {unbounded_i32:?}");
        let (_, kept) = crate::records::operators::read_csv(&data.join("nvidia-h200.csv")).unwrap();
        let (_, bounded) = crate::records::operators::read_csv(&data.join("experiments/two_blocks_every_type.csv")).unwrap();
        let time = |rows: &[OpRow], dtype: Dtype, m: usize, n: usize| rows.iter().find(|r| r.row.kernel == "argmax_rows_auto" && r.row.dtype == dtype && r.rows == m && r.row.n == n).map(|r| r.row.median_us).unwrap();
        for dtype in [Dtype::F32, Dtype::F16, Dtype::BF16] {
            let (registers, spilled) = entry("OP_FLOAT_BLOCK_BOUNDS=__launch_bounds__(1024,2)", &format!("argmax_rows_block_{}", dtype.name()));
            assert!(registers == 32 && spilled > 0, "{dtype}: {registers} registers, {spilled} bytes spilled");
            assert!(time(&bounded, dtype, 1 << 14, 1 << 14) < time(&kept, dtype, 1 << 14, 1 << 14), "{dtype}: rows of 2^14");
            assert!(time(&bounded, dtype, 256, 1 << 20) > time(&kept, dtype, 256, 1 << 20), "{dtype}: rows of 2^20");
        }
    }

    #[test]
    fn the_goal_and_the_peers_are_read_off_the_data() {
        let machine = Machine { gpu: "Test GPU".into(), peak_gbps: Some(4800.0), ..Machine::default() };
        let rows = vec![
            op_row("max_whole", "max", Dtype::F32, 1, 1 << 28, 236.0),        // 4.55 TB/s: 94.8%
            op_row("max_rows_auto", "max", Dtype::F32, 1 << 20, 256, 300.0),   // 74.6%: misses
            op_row("max_whole", "max", Dtype::F32, 1, 1 << 10, 2.6),
        ];
        let table = goal_table(&machine, &rows);
        assert!(table.contains("| max | f32 | 236.0 |") && table.contains("**no**") && table.contains("0 of 1 operator"), "{table}");
        let peers = vec![op_row("torch_amax", "max", Dtype::F32, 1, 1 << 10, 1.9), op_row("torch_amax", "max", Dtype::F32, 1, 1 << 28, 250.0)];
        let t = peers_table(&rows, &peers);
        assert!(t.contains("2^10 (torch_amax 1.90 µs, ours 2.60)") && t.contains("at 1 of 2 points"), "{t}");
        assert!(peers_table(&rows, &[]).contains("No peers"));
    }
}
