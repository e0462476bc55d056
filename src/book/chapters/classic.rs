//! The chapters of Harris's seven kernels (`book/01_*.md` … `book/07_*.md`): each kernel against
//! the one before it (`kernel<k>.md`), the bank conflicts ncu counted for kernels 2 and 3, what
//! limits kernel 4 (from the benchmark and the profiles), kernels 1 to 7 under Nsight Compute
//! (`harris_profile.md`), a tree step's cost in the SASS (`sass_tree.md`), Harris's kernel 5 as
//! written, and kernel 7 at the largest size and left in L2.

use super::common::{ceiling_for, find, pct, pct_of_ceiling, pct_of_peak, size_text, CEILING_NOT_MEASURED};
use super::harris::CHANGES;
use crate::element::Dtype;
use crate::kernels::names;
use crate::records::bench::{Cache, Machine, Row, COPY_KERNEL, READ_ONLY_KERNEL};
use crate::records::ncu::{Profile, DRAM_READ, DURATION, ISSUE_ACTIVE, PROFILED_N, THREAD_INSTRUCTIONS};
use crate::records::sass::{modulo_instructions, straight_step, tree_loop, Instruction};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One kernel against the one before it, at the sizes the chapters discuss.
pub fn chapter_table(m: &Machine, rows: &[Row], kernel: &str) -> String {
    let index = CHANGES.iter().position(|(k, _)| *k == kernel).expect("a Harris kernel");
    let previous = index.checked_sub(1).map(|i| CHANGES[i].0);
    let mut s = String::new();
    let header = match previous {
        Some(p) => format!("| input | {kernel} (µs) | GB/s | % of peak | % of read-only | {p} (µs) | speed-up |\n|---|--:|--:|--:|--:|--:|--:|"),
        None => format!("| input | {kernel} (µs) | GB/s | % of peak | % of read-only |\n|---|--:|--:|--:|--:|"),
    };
    writeln!(s, "{header}").unwrap();
    let cases = [(1usize << 22, Cache::Resident), (1 << 22, Cache::Rotated), (1 << 25, Cache::Rotated), (1 << 30, Cache::Rotated)];
    for dtype in [Dtype::I32, Dtype::F32] {
        for (n, cache) in cases {
            let Some(r) = find(rows, kernel, dtype, n, cache) else { continue };
            let label = format!("2^{} {dtype}, {}", n.trailing_zeros(), cache.name());
            let mut line = format!("| {label} | {:.2} | {:.1} | {} | {} |", r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r));
            if let Some(p) = previous {
                match find(rows, p, dtype, n, cache) {
                    Some(prev) => write!(line, " {:.2} | {:.2}× |", prev.median_us, prev.median_us / r.median_us).unwrap(),
                    None => line.push_str(" | |"),
                }
            }
            writeln!(s, "{line}").unwrap();
        }
    }
    s
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
/// (`reports`: (kernel, log) of those under `plots/data/bank-conflicts/`), and their benchmark
/// times.
pub fn bank_conflicts_table(reports: &[(String, String)], rows: &[Row]) -> Option<String> {
    if reports.is_empty() {
        return None;
    }
    let mut s = String::new();
    let head: Vec<&str> = BANK_METRICS.iter().map(|(_, what)| *what).collect();
    writeln!(s, "| kernel | {} | 2^22 i32, rotated (µs) | 2^25 i32, rotated (µs) |\n|---|{}--:|--:|", head.join(" | "), "--:|".repeat(head.len())).unwrap();
    for (kernel, report) in reports {
        let counts: Vec<String> = BANK_METRICS.iter().map(|(m, _)| ncu_metric(report, m).map_or("–".into(), |v| format!("{v:.0}"))).collect();
        let time = |n: usize| find(rows, kernel, Dtype::I32, n, Cache::Rotated).map_or("–".into(), |r| format!("{:.2}", r.median_us));
        writeln!(s, "| `{kernel}` | {} | {} | {} |", counts.join(" | "), time(1 << 22), time(1 << 25)).unwrap();
    }
    Some(s)
}

/// Chapter 4: what holds kernel 4 back, from the benchmark and, where profiled, Nsight Compute
/// (`profiles`: [`crate::book::context::Context::harris_profiles`]).
pub fn kernel4_limit(m: &Machine, rows: &[Row], profiles: &BTreeMap<String, Profile>) -> String {
    let sizes = [1usize << 22, 1 << 30];
    let pairs: Vec<(usize, &Row, &Row)> = sizes
        .iter()
        .filter_map(|&n| Some((n, find(rows, names::REDUCE4, Dtype::I32, n, Cache::Rotated)?, find(rows, names::REDUCE5, Dtype::I32, n, Cache::Rotated)?)))
        .collect();
    let Some(peak) = m.peak_gbps.filter(|_| pairs.len() == sizes.len()) else {
        return "*Kernels 4 and 5 are not both measured at 2^22 and 2^30 `i32` on this GPU (or its peak is unknown).*\n".into();
    };
    let shares: Vec<String> = pairs.iter().map(|(n, k4, _)| format!("{:.1} % of the theoretical peak at {}", 100.0 * k4.gbps() / peak, size_text(*n))).collect();
    let speedups: Vec<String> = pairs.iter().map(|(n, k4, k5)| format!("{:.2}× at {}", k4.median_us / k5.median_us, size_text(*n))).collect();
    let mut s = format!(
        "Kernel 4 reads at {} (`i32`, inputs rotated): memory bandwidth is not what holds it back. Kernel 5 changes only the last \
        warp's steps (no loop test, no block-wide barrier) and is faster by {}.",
        shares.join(" and "), speedups.join(" and ")
    );
    match (profiles.get(names::REDUCE4), profiles.get(names::REDUCE5)) {
        (Some(p4), Some(p5)) => {
            if let (Some(i4), Some(i5)) = (p4.instructions_per_element(), p5.instructions_per_element()) {
                write!(s, " Under Nsight Compute (the table below, {} `i32`) kernel 4 executes {i4:.1} instructions per element and kernel 5 \
                    {i5:.1}: {:.0} % fewer.", size_text(PROFILED_N), 100.0 * (1.0 - i5 / i4)).unwrap();
                if let Some(busy) = p4.get(ISSUE_ACTIVE) {
                    write!(s, " Kernel 4's schedulers issue an instruction in {busy:.0} % of its cycles: the instructions, not the bytes, fill its time.").unwrap();
                }
            }
            if let (Some(b4), Some(b5)) = (p4.stall("barrier"), p5.stall("barrier")) {
                write!(s, " Warps of kernel 4 wait {b4:.1} cycles per issued instruction at barriers, kernel 5's {b5:.1}.").unwrap();
            }
            if let Some((reason, v)) = p4.stalls().first() {
                write!(s, " Kernel 4's largest stall is *{reason}* ({v:.1} cycles per instruction).").unwrap();
            }
        }
        _ => write!(s, " How much of kernel 4's time the steps of the last warp take has not been profiled on this GPU \
            (`tests/gpu-host.sh ncu` profiles kernels 1–7); the speed-up alone does not say it, since kernel 5 also changes the \
            instructions around them.").unwrap(),
    }
    s.push('\n');
    s
}

/// Chapters 1, 2 and 6: what one step of each tree costs in machine instructions, counted in
/// the SASS (`sass`: [`crate::book::context::Context::sass`], by entry point).
pub fn sass_tree_sentence(sass: &BTreeMap<String, Vec<Instruction>>) -> String {
    let entry = |kernel: &str, suffix: &str| sass.get(&format!("{kernel}{suffix}"));
    let loop_len = |kernel: &str| entry(kernel, "_i32").and_then(|c| tree_loop(c)).map(|b| b.len());
    let (Some(k1), Some(k2), Some(k5)) = (loop_len(names::REDUCE1), loop_len(names::REDUCE2), loop_len(names::REDUCE5)) else {
        return "*The SASS of kernels 1, 2 and 5 is not in `plots/data/sass/sm_90/` (`python3 plots/sass.py`).*\n".into();
    };
    let modulo = entry(names::REDUCE1, "_i32").and_then(|c| tree_loop(c)).map(modulo_instructions).unwrap_or(0);
    let mut s = format!(
        "In the machine code NVRTC writes for `sm_90` (`plots/data/sass/sm_90/`, from `python3 plots/sass.py`; `i32`), one step of \
        kernel 1's tree loop is **{k1} instructions**, {modulo} of them the unsigned division that `tid % (2 * s)` compiles to \
        (`I2F.U32.RP`, `MUFU.RCP`, `F2I`, `IMAD.HI` and fix-ups: the compiler cannot know that `2 * s` is a power of two). Kernel 2's \
        step is **{k2} instructions**. Kernel 5's step of the loop above the last warp is **{k5}**: a shift of `s`, the compare \
        `tid < s` and the loop's own compare and branch around two loads, an add, a store and the barrier."
    );
    let k6 = entry(names::REDUCE6, "_b256_i32");
    match (k6.and_then(|c| tree_loop(c)), k6.and_then(|c| straight_step(c))) {
        (None, Some(step)) => write!(
            s,
            " Kernel 6 (`b256`) has no loop left in its tree: each step is **{step} instructions** from barrier to barrier, the `tid < s` \
            test a predicate on the loads and the store rather than a branch; a branch on `tid` remains only where the last warp starts."
        )
        .unwrap(),
        (Some(body), _) => write!(s, " Kernel 6 (`b256`) still has a loop of {} instructions.", body.len()).unwrap(),
        _ => write!(s, " The SASS of kernel 6 is not there.").unwrap(),
    }
    s.push('\n');
    s
}

/// Chapters 1 and 4: kernels 1 to 7 under Nsight Compute, one launch each (`profiles`:
/// [`crate::book::context::Context::harris_profiles`]).
pub fn harris_profile_table(profiles: &BTreeMap<String, Profile>) -> String {
    if profiles.is_empty() {
        return "*Not profiled on this GPU yet: kernels 1–7 under Nsight Compute are `tests/gpu-host.sh ncu` (copy `ncu/reduce*.csv` \
            to `plots/data/ncu/`). Until then, what the text says of their instruction costs comes from the SASS alone.*\n".into();
    }
    let mut s = format!(
        "Nsight Compute (`ncu --clock-control none`, `tests/gpu-host.sh ncu`) on the first launch of a sum of {} `i32` values, 256 \
        threads a block. *Issue slots busy*: the share of cycles in which a scheduler issued an instruction; *instructions per \
        element*: warp instructions executed × 32 / n (thread instructions / n in brackets); the stalls: cycles a warp waited for \
        that reason per instruction issued, the two largest.\n\n\
        | kernel | time (µs) | DRAM read (GB/s) | issue slots busy | instructions per element | largest stalls |\n|---|--:|--:|--:|--:|---|\n",
        size_text(PROFILED_N)
    );
    // In book order.
    let ordered: Vec<&Profile> = crate::book::context::PROFILED_KERNELS.iter().filter_map(|k| profiles.get(*k)).collect();
    for p in &ordered {
        let time_us = p.get(DURATION).map(|ns| ns / 1000.0);
        let gbps = match (p.get(DRAM_READ), p.get(DURATION)) {
            (Some(b), Some(ns)) if ns > 0.0 => format!("{:.0}", b / ns),
            _ => "–".into(),
        };
        let per_element = match (p.instructions_per_element(), p.get(THREAD_INSTRUCTIONS)) {
            (Some(w), Some(t)) => format!("{w:.1} ({:.1})", t / PROFILED_N as f64),
            _ => "–".into(),
        };
        let stalls: Vec<String> = p.stalls().iter().take(2).map(|(r, v)| format!("{r} {v:.1}")).collect();
        writeln!(s, "| `{}` | {} | {gbps} | {} | {per_element} | {} |", p.kernel,
            time_us.map_or("–".into(), |t| format!("{t:.1}")), p.get(ISSUE_ACTIVE).map_or("–".into(), |v| format!("{v:.1} %")), stalls.join(", ")).unwrap();
    }
    // What the table says, from its own numbers.
    if let (Some(a), Some(b)) = (ordered.first(), ordered.last()) {
        if let (Some(ia), Some(ib), Some(ba), Some(bb)) = (a.instructions_per_element(), b.instructions_per_element(), a.get(ISSUE_ACTIVE), b.get(ISSUE_ACTIVE)) {
            let busy: Vec<String> = ordered.iter().filter(|p| p.get(ISSUE_ACTIVE).is_some_and(|v| v >= 70.0)).map(|p| format!("`{}`", p.kernel)).collect();
            write!(s, "\nFrom `{}` to `{}` the instructions per element fall from {ia:.0} to {ib:.1}, and the share of cycles in which a \
                scheduler issues from {ba:.0} % to {bb:.0} %.", a.kernel, b.kernel).unwrap();
            if !busy.is_empty() {
                write!(s, " Where the schedulers issue in 70 % of cycles or more ({}), the instructions are the work, not the bytes.", busy.join(", ")).unwrap();
            }
            if let Some((reason, v)) = b.stalls().first() {
                write!(s, " `{}`'s warps mostly wait: *{reason}*, {v:.0} cycles per instruction issued (for a load, that is memory).", b.kernel).unwrap();
            }
            s.push('\n');
        }
    }
    s
}

/// Harris's 2007 kernel 5 next to the corrected one: where it was checked and what it cost.
pub fn historical_kernel5(rows: &[Row]) -> String {
    let mut s = String::new();
    for dtype in [Dtype::I32, Dtype::F32] {
        let old: Vec<&Row> = rows.iter().filter(|r| r.kernel == names::REDUCE5_VOLATILE && r.dtype == dtype).collect();
        let checked = old.len();
        let mean_ratio = old.iter().filter_map(|o| find(rows, names::REDUCE5, dtype, o.n, o.cache).map(|new| new.median_us / o.median_us)).collect::<Vec<_>>();
        if checked == 0 {
            writeln!(s, "- `{dtype}`: the 2007 form was not measured.").unwrap();
            continue;
        }
        let (lo, hi) = mean_ratio.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        // Measurements, not sizes: the benchmark measures some sizes twice (from DRAM and left in L2).
        let rotated = old.iter().filter(|r| r.cache == Cache::Rotated).count();
        let resident = checked - rotated;
        let what = if resident == 0 { format!("{rotated} sizes") } else { format!("{rotated} sizes read from DRAM and {resident} left in L2") };
        writeln!(s, "- `{dtype}`: the 2007 form gave the right sum in all {checked} measurements the benchmark checked before timing \
            ({what}); the `__syncwarp()` form took {lo:.2}× to {hi:.2}× its time.").unwrap();
    }
    s
}

/// Kernel 7 at the largest size, against the peak, the read-only ceiling and the copy.
pub fn kernel7_large(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 30;
    let Some(k7) = find(rows, names::REDUCE7, Dtype::F32, n, Cache::Rotated) else {
        return "*Kernel 7 is not measured at 2^30 `f32` on this GPU.*\n".into();
    };
    let mut s = format!("At 2^30 `f32` values, inputs rotated, kernel 7 reads {:.0} GB/s: {} of the theoretical peak", k7.gbps(), pct_of_peak(m, k7));
    match ceiling_for(rows, k7) {
        Some(c) => write!(s, " and {} of the read-only ceiling ({:.0} GB/s)", pct(100.0 * k7.gbps() / c.gbps()), c.gbps()).unwrap(),
        None => write!(s, "; the read-only ceiling is {CEILING_NOT_MEASURED}").unwrap(),
    }
    if let Some(copy) = find(rows, COPY_KERNEL, Dtype::F32, n, Cache::Rotated) {
        write!(s, ". The copy kernel moves {:.0} GB/s there, counting what it reads and what it writes", copy.gbps()).unwrap();
    }
    s.push_str(".\n");
    s
}

/// What re-reading one buffer that fits in L2 measures: mostly the fixed cost of a sum.
pub fn resident_fixed_cost(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 22;
    let (Some(resident), Some(dram), Some(tiny)) = (
        find(rows, names::REDUCE7, Dtype::I32, n, Cache::Resident),
        find(rows, names::REDUCE7, Dtype::I32, n, Cache::Rotated),
        find(rows, names::REDUCE7, Dtype::I32, 1 << 16, Cache::Rotated),
    ) else {
        return "*Kernel 7 is not measured at 2^22 `i32` in L2 and from DRAM, and at 2^16, on this GPU.*\n".into();
    };
    let mut s = format!(
        "Kernel 7 summing the same 16 MiB of `i32` again and again, so that it stays in L2, takes {:.2} µs a sum ({:.0} GB/s, {} \
        of the DRAM peak); from DRAM it takes {:.2} µs. The same kernel takes {:.2} µs for a sum of only 2^16 values (256 KiB): \
        {:.0} % of the L2-resident time is what any sum with this kernel pays whatever its size — the launches, the second pass, \
        the tail of the grid — not the time to read 16 MiB.",
        resident.median_us, resident.gbps(), pct_of_peak(m, resident), dram.median_us, tiny.median_us, 100.0 * tiny.median_us / resident.median_us
    );
    match find(rows, READ_ONLY_KERNEL, Dtype::I32, n, Cache::Resident) {
        Some(c) => write!(s, " The read-only kernel reads the same buffer in L2 in {:.2} µs ({:.0} GB/s).", c.median_us, c.gbps()).unwrap(),
        None => write!(s, " What reading it from L2 alone takes (the read-only kernel on the same buffer) is {CEILING_NOT_MEASURED}.").unwrap(),
    }
    s.push('\n');
    s
}

/// `bank_conflicts.md`: [`bank_conflicts_table`], or how to measure it.
pub fn bank_conflicts_markdown(reports: &[(String, String)], rows: &[Row]) -> String {
    bank_conflicts_table(reports, rows)
        .unwrap_or_else(|| "*Not yet measured on this GPU: `OUT=results bash tests/gpu-host.sh ncu`, then copy `results/bank-conflicts/` to `plots/data/`.*\n".into())
}
