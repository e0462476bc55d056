//! Sentences the chapters include: each claim about a speed, a ratio or a behaviour, computed
//! from the measurements, so that the prose says what the data says (or that it is not measured
//! yet).

use crate::element::Dtype;
use crate::records::bench::{COPY_KERNEL, Cache, Machine, READ_ONLY_KERNEL, Row, Status};
use std::fmt::Write as _;
use super::{CEILING_NOT_MEASURED, ceiling_for, find, pct_of_peak};
use super::ceiling::fastest;
use super::harris::{ALGORITHMIC_STEPS, CHANGES, CODE_STEPS, G80_PEAK_GBPS, HARRIS_G80, HARRIS_SPLIT, product};

/// `f32` additions one SM can start per clock, by compute capability: the row "32-bit
/// floating-point add, multiply, multiply-add" of the CUDA C++ Programming Guide's table of
/// arithmetic instruction throughput (results per clock cycle per multiprocessor).
pub(super) const FP32_LANES_PER_SM: [(&str, u32); 16] = [
    ("5.0", 128), ("5.2", 128), ("5.3", 128),
    ("6.0", 64), ("6.1", 128), ("6.2", 128),
    ("7.0", 64), ("7.2", 64), ("7.5", 64),
    ("8.0", 64), ("8.6", 128), ("8.7", 128), ("8.9", 128),
    ("9.0", 128), ("10.0", 128), ("12.0", 128),
];

/// The most threads one SM holds at once, by compute capability: "Maximum number of resident
/// threads per SM" in the CUDA C++ Programming Guide's technical specifications.
pub(super) const MAX_THREADS_PER_SM: [(&str, u32); 9] =
    [("7.0", 2048), ("7.2", 2048), ("7.5", 1024), ("8.0", 2048), ("8.6", 1536), ("8.7", 2048), ("8.9", 1536), ("9.0", 2048), ("12.0", 1536)];

pub(super) fn by_capability(table: &[(&str, u32)], compute_capability: &str) -> Option<u32> {
    table.iter().find(|(cc, _)| *cc == compute_capability).map(|(_, v)| *v)
}

/// `f32` lanes per SM for a compute capability written `major.minor`, if the table has it.
pub fn fp32_lanes_per_sm(compute_capability: &str) -> Option<u32> {
    by_capability(&FP32_LANES_PER_SM, compute_capability)
}

/// `x` in a sentence: to the first decimal below 10, whole above.
pub(super) fn times(x: f64) -> String {
    if x < 10.0 { format!("{x:.1}") } else { format!("{x:.0}") }
}

pub(super) fn pct(x: f64) -> String {
    format!("{x:.1} %")
}

/// The introduction's claim: how much faster the GPU adds than its memory delivers the numbers,
/// from the header (SMs, SM clock, compute capability) and the theoretical peak.
pub(super) fn add_to_fetch_ratio(m: &Machine) -> String {
    if m.sm_count == 0 || m.sm_clock_mhz == 0 {
        return format!("*Not yet measured: the {}'s results file does not record its SM count and SM clock; the next \
            `cargo run --release -- bench` writes them, and this comparison with them.*\n", m.gpu);
    }
    let Some(lanes) = fp32_lanes_per_sm(&m.compute_capability) else {
        return format!("*Compute capability {} is not in this book's table of `f32` lanes per SM (`src/tables.rs`), so the \
            ratio is not computed for the {}.*\n", m.compute_capability, m.gpu);
    };
    let Some(peak) = m.peak_gbps else {
        return format!("*The {}'s theoretical memory bandwidth is unknown (the driver reported no memory clock), so the \
            ratio is not computed.*\n", m.gpu);
    };
    let adds_per_s = m.sm_count as f64 * lanes as f64 * m.sm_clock_mhz as f64 * 1e6;
    let values_per_s = peak * 1e9 / 4.0;
    format!(
        "On the {} this book was last measured on: {} SMs × {lanes} `f32` adders per SM (compute capability {}; the CUDA \
        C++ Programming Guide's table of arithmetic throughput) × {} MHz (the SM clock the driver reports as its maximum) = \
        {:.1} trillion `f32` additions per second. Its memory's theoretical peak, {peak:.0} GB/s, delivers {:.2} trillion \
        4-byte values per second. It could add **{} times** faster than it can fetch the numbers.\n",
        m.gpu, m.sm_count, m.compute_capability, m.sm_clock_mhz, adds_per_s / 1e12, values_per_s / 1e12, times(adds_per_s / values_per_s)
    )
}

/// "Reading the tables" of the Harris chapter: each observation computed from the rows, next to
/// Harris's published figures.
pub(super) fn harris_reading(m: &Machine, rows: &[Row]) -> String {
    let at = |kernel: &str, n: usize, cache: Cache| find(rows, kernel, Dtype::I32, n, cache);
    let share = |r: &Row| m.peak_gbps.map(|p| 100.0 * r.gbps() / p);
    let g80_share = |k: usize| 100.0 * HARRIS_G80[k].2 / G80_PEAK_GBPS;
    let (n22, n25) = (1usize << 22, 1usize << 25);
    let mut s = String::new();

    match (at("reduce1", n22, Cache::Rotated), at("reduce7", n22, Cache::Rotated)) {
        (Some(k1), Some(k7)) if share(k1).is_some() => {
            let here = share(k1).unwrap();
            let better = if here > g80_share(0) { "less bad" } else { "no better" };
            writeln!(s, "- **The first kernel is {better}.** Kernel 1 reads at {} of this GPU's peak (2^22 `i32`, rotated); \
                on the G80 it read at {} of its peak ({} GB/s of {G80_PEAK_GBPS}). The cumulative speed-up from kernel 1 to \
                kernel 7 is {:.2}× here, against Harris's {}×.",
                pct(here), pct(g80_share(0)), HARRIS_G80[0].2, k1.median_us / k7.median_us, HARRIS_G80[6].4).unwrap();
        }
        _ => writeln!(s, "- **The first kernel:** kernels 1 and 7 at 2^22 `i32`, rotated, are not both measured here.").unwrap(),
    }

    match (at("reduce7", n22, Cache::Rotated), at("reduce7", n22, Cache::Resident), at("reduce7", n25, Cache::Rotated)) {
        (Some(rot), resident, large) if share(rot).is_some() => {
            let here = share(rot).unwrap();
            let verdict = if here < g80_share(6) { "further from the hardware's limit than it was on the G80" } else { "at least as close to the hardware's limit as on the G80" };
            let mut line = format!("- **At Harris's size, the last kernel is {verdict}.** His kernel 7 read at {} of the G80's peak; \
                here it reads at {} at 2^22 from DRAM", pct(g80_share(6)), pct(here));
            if let Some(p) = resident.and_then(share) {
                write!(line, ", {} with the input left in L2 (of the DRAM peak)", pct(p)).unwrap();
            }
            if let Some(p) = large.and_then(share) {
                write!(line, ", and {} at 2^25", pct(p)).unwrap();
            }
            writeln!(s, "{line}.").unwrap();
        }
        _ => writeln!(s, "- **The last kernel:** kernel 7 at 2^22 `i32`, rotated, is not measured here (or the peak is unknown).").unwrap(),
    }

    match (product(rows, &ALGORITHMIC_STEPS, n22, Cache::Rotated), product(rows, &CODE_STEPS, n22, Cache::Rotated)) {
        (Some(a), Some(c)) => {
            let harris_code: f64 = HARRIS_SPLIT.1.parse().expect("a number, as published");
            let verdict = if c < harris_code { "gave less than they did on the G80" } else { "gave at least as much as on the G80" };
            let mut line = format!("- **The steps that remove instructions {verdict}.** The unrolling of kernels 5 and 6 gave {c:.2}× \
                here (2^22, rotated), against Harris's {}×; the algorithmic steps gave {a:.2}×, against his {}×", HARRIS_SPLIT.1, HARRIS_SPLIT.0);
            // The largest single step, and what it changed.
            let steps: Vec<(usize, f64)> = (1..CHANGES.len())
                .filter_map(|k| Some((k, at(CHANGES[k - 1].0, n22, Cache::Rotated)?.median_us / at(CHANGES[k].0, n22, Cache::Rotated)?.median_us)))
                .collect();
            if let Some((k, step)) = steps.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) {
                write!(line, ". The largest single step here is kernel {} ({}): {step:.2}×", k + 1, CHANGES[k].1).unwrap();
            }
            writeln!(s, "{line}.").unwrap();
        }
        _ => writeln!(s, "- **Code and algorithm:** not every kernel is measured at 2^22 `i32`, rotated.").unwrap(),
    }

    match (at("reduce7", n22, Cache::Rotated), at("reduce7", n25, Cache::Rotated)) {
        (Some(small), Some(large)) => {
            let mut line = format!("- **Size decides.** Kernel 7 takes {:.2} µs at 2^22 and {:.2} µs at 2^25: eight times the data in \
                {} times the time", small.median_us, large.median_us, times(large.median_us / small.median_us));
            if let (Some(a), Some(b)) = (share(small), share(large)) {
                write!(line, ", {} and {} of the peak", pct(a), pct(b)).unwrap();
            }
            writeln!(s, "{line}. At 2^22 the fixed costs of a sum — the launches, the second pass, the tail of the grid — are a large \
                part of a few microseconds. The benchmark chapter draws the whole curve, up to 2^30.").unwrap();
        }
        _ => writeln!(s, "- **Size:** kernel 7 is not measured at both 2^22 and 2^25 `i32`, rotated.").unwrap(),
    }

    writeln!(s).unwrap();
    match at("reduce7", n25, Cache::Rotated) {
        Some(k7) => match ceiling_for(rows, k7) {
            Some(c) => writeln!(s, "At 2^25, kernel 7 reads at {} of the read-only ceiling ({:.0} GB/s: a kernel that only reads \
                every byte once, measured in the same run).", pct(100.0 * k7.gbps() / c.gbps()), c.gbps()).unwrap(),
            None => writeln!(s, "How far kernel 7 is from the read-only ceiling (a kernel that only reads every byte once) is \
                {CEILING_NOT_MEASURED}.").unwrap(),
        },
        None => writeln!(s, "Kernel 7 is not measured at 2^25 `i32` here.").unwrap(),
    }
    s
}

/// What re-reading one buffer that fits in L2 measures: mostly the fixed cost of a sum.
pub(super) fn resident_fixed_cost(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 22;
    let (Some(resident), Some(dram), Some(tiny)) = (
        find(rows, "reduce7", Dtype::I32, n, Cache::Resident),
        find(rows, "reduce7", Dtype::I32, n, Cache::Rotated),
        find(rows, "reduce7", Dtype::I32, 1 << 16, Cache::Rotated),
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

/// Kernel 7 at the largest size, against the peak, the read-only ceiling and the copy.
pub(super) fn kernel7_large(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 30;
    let Some(k7) = find(rows, "reduce7", Dtype::F32, n, Cache::Rotated) else {
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

/// Little's law for kernels 7 to 9: the bytes each keeps in flight as written, the latency that
/// covers at the peak, and the latency kernel 7's measured bandwidth implies.
pub(super) fn bytes_in_flight(m: &Machine, rows: &[Row]) -> String {
    let (Some(peak), Some(threads)) = (m.peak_gbps, by_capability(&MAX_THREADS_PER_SM, &m.compute_capability)) else {
        return "*The theoretical peak or the resident threads per SM of this GPU are unknown, so the bytes in flight are not computed.*\n".into();
    };
    if m.sm_count == 0 {
        return "*The SM count of this GPU is not recorded, so the bytes in flight are not computed.*\n".into();
    }
    let per_sm_bytes_per_ns = peak / m.sm_count as f64; // GB/s = bytes per ns
    let n = 1usize << 30;
    // (kernel, loads as written, bytes per thread per step)
    let kernels = [("reduce7", "7 and 8: two 4-byte loads per step", 8u32), ("reduce9", "9: four 16-byte loads per step", 64)];
    let mut s = format!(
        "Little's law says how many bytes must be on their way: bytes in flight = bandwidth × latency. At this GPU's theoretical \
        peak of {peak:.0} GB/s, shared by {} SMs, each SM must receive {per_sm_bytes_per_ns:.1} bytes every nanosecond, so every \
        100 ns of latency needs {:.1} KiB in flight per SM. An SM of compute capability {} holds at most {threads} threads (the \
        CUDA C++ Programming Guide's technical specifications), so, as the kernels are written:\n\n",
        m.sm_count, per_sm_bytes_per_ns * 100.0 / 1024.0, m.compute_capability
    );
    writeln!(s, "| kernel | in flight per thread | per SM, at most | latency that covers at the peak | measured, 2^30 `f32` |\n|---|--:|--:|--:|--:|").unwrap();
    for (kernel, what, bytes) in kernels {
        let per_sm = bytes as f64 * threads as f64;
        let covered_ns = per_sm / per_sm_bytes_per_ns;
        let covered = if covered_ns < 1000.0 { format!("{covered_ns:.0} ns") } else { format!("{:.1} µs", covered_ns / 1000.0) };
        let measured = find(rows, kernel, Dtype::F32, n, Cache::Rotated).map_or("–".into(), |r| format!("{:.0} GB/s, {}", r.gbps(), pct_of_peak(m, r)));
        writeln!(s, "| {what} | {bytes} B | {:.0} KiB | {covered} | {measured} |", per_sm / 1024.0).unwrap();
    }
    writeln!(s).unwrap();
    write!(s, "This book does not measure the latency of one DRAM load, so the table alone cannot say which kernel keeps enough \
        bytes in flight.").unwrap();
    if let Some(k7) = find(rows, "reduce7", Dtype::F32, n, Cache::Rotated) {
        let per_sm = kernels[0].2 as f64 * threads as f64;
        let implied_ns = per_sm * m.sm_count as f64 / k7.gbps(); // bytes / (bytes per ns)
        write!(s, " The measurements can: if kernel 7 were held back by its {:.0} KiB per SM alone, its {:.0} GB/s would mean a \
            latency of {implied_ns:.0} ns — and kernel 9 keeps {} times as many bytes in flight.",
            per_sm / 1024.0, k7.gbps(), kernels[1].2 / kernels[0].2).unwrap();
    }
    s.push('\n');
    s
}

/// The copy against the fastest reduction and the read-only ceiling, at the largest size.
pub(super) fn copy_pace(m: &Machine, rows: &[Row]) -> String {
    let n = 1usize << 30;
    let (Some(copy), Some(best)) = (find(rows, COPY_KERNEL, Dtype::F32, n, Cache::Rotated), fastest(rows, Dtype::F32, n)) else {
        return "*The copy and the kernels are not both measured at 2^30 `f32` on this GPU.*\n".into();
    };
    let mut s = format!(
        "At 2^30 `f32` values the copy kernel moves {:.0} GB/s, counting each byte it reads and each it writes; the fastest \
        reduction (`{}`), which only reads, moves {:.0} GB/s: {} of the copy's rate. So the copy is a pace to compare with, \
        not a ceiling for a sum.",
        copy.gbps(), best.kernel, best.gbps(), pct(100.0 * best.gbps() / copy.gbps())
    );
    match ceiling_for(rows, best) {
        Some(c) => write!(s, " The ceiling is the read-only kernel, which reads every byte once and does nothing else: {:.0} GB/s \
            ({} of the theoretical peak), and the fastest reduction reaches {} of it.", c.gbps(), pct_of_peak(m, c), pct(100.0 * best.gbps() / c.gbps())).unwrap(),
        None => write!(s, " The ceiling for a sum is the read-only kernel, which reads every byte once and does nothing else; it is \
            {CEILING_NOT_MEASURED}.").unwrap(),
    }
    s.push('\n');
    s
}

/// `128 × 2^21`, as the row-sum table writes a shape.
pub(super) fn shape(m: usize, n: usize) -> String {
    let side = |v: usize| if v.is_power_of_two() && v > 8192 { format!("2^{}", v.trailing_zeros()) } else { v.to_string() };
    format!("{} × {}", side(m), side(n))
}

/// The row-sum chapter's claim about few rows: with fewer rows than SMs, which of one block per
/// row and several blocks per row was faster at each shape, and where `torch.sum` beat both.
/// `rows` are the row-sum measurements (`plots/data/rows/`), `None` where there are none.
pub fn rows_few_sentence(gpu: &str, sm_count: u32, rows: Option<&[Row]>) -> String {
    let Some(rows) = rows.filter(|r| !r.is_empty()) else {
        return format!("*Not yet measured on the {gpu}: `cargo run --release -- rows-bench`.*\n");
    };
    let time = |kernel: &str, m: usize, n: usize| {
        rows.iter().find(|r| r.kernel == kernel && crate::records::rows::rows_of(r) == m && r.n == n).map(|r| r.median_us)
    };
    let (block, split) = (crate::rows::Strategy::Block.kernel(), crate::rows::Strategy::Split.kernel());
    let mut shapes: Vec<(usize, usize)> = rows.iter().map(|r| (crate::records::rows::rows_of(r), r.n)).filter(|&(m, _)| m < sm_count as usize).collect();
    shapes.sort_by(|a, b| b.cmp(a));
    shapes.dedup();
    let (mut block_won, mut split_won, mut torch_won) = (Vec::new(), Vec::new(), Vec::new());
    for &(m, n) in &shapes {
        let (Some(b), Some(sp)) = (time(block, m, n), time(split, m, n)) else { continue };
        if b <= sp {
            block_won.push(format!("{} ({b:.2} µs against {sp:.2})", shape(m, n)));
        } else {
            split_won.push(format!("{} ({sp:.2} µs against {b:.2})", shape(m, n)));
        }
        let ours = rows.iter().filter(|r| crate::records::rows::rows_of(r) == m && r.n == n && r.status != Status::Peer).map(|r| r.median_us).fold(f64::MAX, f64::min);
        if let Some(t) = time(crate::records::rows::TORCH_KERNEL, m, n).filter(|&t| t < ours) {
            torch_won.push(format!("{} ({t:.2} µs)", shape(m, n)));
        }
    }
    if block_won.is_empty() && split_won.is_empty() {
        return format!("*No shape with fewer rows than the {gpu}'s {sm_count} SMs was measured with both one block and several blocks per row.*\n");
    }
    let list = |v: &[String]| if v.is_empty() { "none of them".to_string() } else { v.join(", ") };
    let mut s = format!(
        "With fewer rows than the {gpu}'s {sm_count} SMs, the measurements say: one block per row was still the faster of the two \
        at {}; several blocks per row won at {}.",
        list(&block_won), list(&split_won)
    );
    if !torch_won.is_empty() {
        write!(s, " `torch.sum(x, dim=1)` was faster than all three of the book's kernels at {}.", torch_won.join(", ")).unwrap();
    }
    s.push('\n');
    s
}
