//! The modern chapters (`book/08_*.md` … `book/12_*.md`): each kernel from kernel 8 on against
//! the one it improves on (`<kernel>.md`), all of them at the sizes that matter (`modern.md`),
//! the element types through the 16-byte kernels (`types.md`), the bytes each keeps in flight
//! (`little.md`), kernel 8 against kernel 7 beyond the spread (`reduce8_vs_reduce7.md`), what one
//! launch saves against kernel 9 (`single_pass.md`), and the integer `REDUX` behind kernels 11
//! and 12 (`redux.md`).

use super::common::{by_capability, find, has_ceiling, pct_of_ceiling, pct_of_peak, size_text, CEILING_NOT_MEASURED, MAX_THREADS_PER_SM};
use crate::element::Dtype;
use crate::kernels::names;
use crate::records::bench::{Cache, Machine, Row, Status, READ_ONLY_KERNEL};
use crate::records::experiments::{self, Experiment};
use crate::records::sass::{count, Instruction};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Each modern kernel and the kernel its chapter improves on.
pub const MODERN_STEPS: [(&str, &str); 8] = [
    (names::REDUCE8_LAST_WARP, names::REDUCE7),
    (names::REDUCE8, names::REDUCE8_LAST_WARP),
    (names::REDUCE9, names::REDUCE8),
    (names::REDUCE10_ATOMIC, names::REDUCE9),
    (names::REDUCE10_LAST_BLOCK, names::REDUCE9),
    (names::REDUCE11, names::REDUCE9),
    (names::REDUCE11_GRID, names::REDUCE10_LAST_BLOCK),
    (names::REDUCE12, names::REDUCE9),
];

/// The sizes the modern chapters compare at: where launch latency rules, the middle, and where
/// bandwidth rules.
pub const MODERN_SIZES: [usize; 5] = [1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30];

/// A kernel's time next to the kernel its chapter improves on, f32 and i32, inputs rotated.
pub fn modern_step_table(m: &Machine, rows: &[Row], kernel: &str, previous: &str) -> String {
    let mut s = String::new();
    writeln!(s, "| input | {kernel} (µs) | GB/s | % of peak | % of read-only | {previous} (µs) | speed-up |\n|---|--:|--:|--:|--:|--:|--:|").unwrap();
    for dtype in [Dtype::F32, Dtype::I32] {
        for n in MODERN_SIZES {
            let Some(r) = find(rows, kernel, dtype, n, Cache::Rotated) else { continue };
            let before = find(rows, previous, dtype, n, Cache::Rotated)
                .map(|p| format!("{:.2} | {:.2}× |", p.median_us, p.median_us / r.median_us))
                .unwrap_or_else(|| " | |".into());
            writeln!(s, "| 2^{} {dtype} | {:.2} | {:.1} | {} | {} | {before}", n.trailing_zeros(), r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r)).unwrap();
        }
    }
    s
}

/// Every kernel from kernel 7 on, the read-only ceiling, and the library peers, at the modern
/// sizes (f32, rotated): time and, in brackets, the fraction of the theoretical peak.
pub fn modern_table(m: &Machine, rows: &[Row]) -> String {
    // (kernel, title, order): the book's kernels, then the ceiling, then the libraries.
    let mut kernels: Vec<(&str, &str, u8)> = Vec::new();
    for r in rows.iter().filter(|r| r.dtype == Dtype::F32 && !r.is_host_visible() && (r.chapter >= 7 || r.status == Status::Peer || r.is_read_only())) {
        if !kernels.iter().any(|(k, ..)| *k == r.kernel) {
            let order = if r.is_read_only() { 1 } else if r.status == Status::Peer { 2 } else { 0 };
            // The read-only row's title names the shape of one size; its row here is the fastest
            // shape at each size (the ceiling's table names them).
            let title = if r.is_read_only() { r.title.split(": ").next().unwrap_or(&r.title) } else { r.title.as_str() };
            kernels.push((&r.kernel, title, order));
        }
    }
    kernels.sort_by_key(|(_, _, order)| *order);
    let mut s = String::new();
    let sizes: Vec<String> = MODERN_SIZES.iter().map(|n| format!("2^{}", n.trailing_zeros())).collect();
    writeln!(s, "| kernel | {} |", sizes.join(" | ")).unwrap();
    writeln!(s, "|---|{}", "--:|".repeat(MODERN_SIZES.len())).unwrap();
    for (kernel, title, _) in kernels {
        let cells: Vec<String> = MODERN_SIZES.iter().map(|&n| match find(rows, kernel, Dtype::F32, n, Cache::Rotated) {
            Some(r) => format!("{:.2} µs ({})", r.median_us, pct_of_peak(m, r).replace(" %", "%")),
            None => "–".into(),
        }).collect();
        let each = if kernel == READ_ONLY_KERNEL { " at each size" } else { "" };
        writeln!(s, "| `{kernel}`: {title}{each} | {} |", cells.join(" | ")).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*The read-only ceiling (`read_only`) is {CEILING_NOT_MEASURED}.*").unwrap();
    }
    s
}

/// Half, single and double precision through the 16-byte kernels: the same number of values
/// is a different number of bytes, and the bytes decide the time.
pub fn types_table(m: &Machine, rows: &[Row]) -> String {
    let mut s = String::new();
    writeln!(s, "| kernel | type | n | time (µs) | GB/s | % of peak | % of read-only |\n|---|---|--:|--:|--:|--:|--:|").unwrap();
    let mut sorted: Vec<&Row> = rows.iter().filter(|r| r.cache == Cache::Rotated && r.n >= 1 << 28 && r.status == Status::Correct && !r.is_entry_point()).collect();
    sorted.sort_by(|a, b| (&a.kernel, a.n, a.dtype.name()).cmp(&(&b.kernel, b.n, b.dtype.name())));
    for r in sorted {
        writeln!(s, "| `{}` | {} | 2^{} | {:.2} | {:.1} | {} | {} |", r.kernel, r.dtype, r.n.trailing_zeros(), r.median_us, r.gbps(), pct_of_peak(m, r), pct_of_ceiling(rows, r)).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*% of read-only: the read-only ceiling for these types is {CEILING_NOT_MEASURED} (`--dtype f64,f16,bf16 --out plots/data/types`).*").unwrap();
    }
    s
}

/// Little's law for kernels 7 to 9: the bytes each keeps in flight as written, the latency that
/// covers at the peak, and the latency kernel 7's measured bandwidth implies.
pub fn bytes_in_flight(m: &Machine, rows: &[Row]) -> String {
    let (Some(peak), Some(threads)) = (m.peak_gbps, by_capability(&MAX_THREADS_PER_SM, &m.compute_capability)) else {
        return "*The theoretical peak or the resident threads per SM of this GPU are unknown, so the bytes in flight are not computed.*\n".into();
    };
    if m.sm_count == 0 {
        return "*The SM count of this GPU is not recorded, so the bytes in flight are not computed.*\n".into();
    }
    let per_sm_bytes_per_ns = peak / m.sm_count as f64; // GB/s = bytes per ns
    let n = 1usize << 30;
    // (kernel, loads as written, bytes per thread per step)
    let kernels = [(names::REDUCE7, "7 (8 loads as it does): two 4-byte loads per step", 8u32), (names::REDUCE9, "9: four 16-byte loads per step", 64)];
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
    if let Some(k7) = find(rows, names::REDUCE7, Dtype::F32, n, Cache::Rotated) {
        let per_sm = kernels[0].2 as f64 * threads as f64;
        let implied_ns = per_sm * m.sm_count as f64 / k7.gbps(); // bytes / (bytes per ns)
        write!(s, " The measurements can: if kernel 7 were held back by its {:.0} KiB per SM alone, its {:.0} GB/s would mean a \
            latency of {implied_ns:.0} ns — and kernel 9 keeps {} times as many bytes in flight.",
            per_sm / 1024.0, k7.gbps(), kernels[1].2 / kernels[0].2).unwrap();
    }
    s.push('\n');
    s
}

/// Whether `a` is slower than `b` beyond the spread of either: `a`'s fastest repeat is slower
/// than `b`'s median, and `a`'s median slower than `b`'s slowest.
pub fn clearly_slower(a: &Row, b: &Row) -> bool {
    a.min_us > b.median_us && a.median_us > b.max_us
}

/// Chapter 8: kernel 8 (every warp in registers) against kernel 7, which it replaces.
pub fn reduce8_vs_reduce7(rows: &[Row]) -> String {
    let mut parts = Vec::new();
    for dtype in [Dtype::F32, Dtype::I32] {
        for n in MODERN_SIZES {
            let (Some(k8), Some(k7)) = (find(rows, names::REDUCE8, dtype, n, Cache::Rotated), find(rows, names::REDUCE7, dtype, n, Cache::Rotated)) else { continue };
            let ratio = k8.median_us / k7.median_us;
            let verdict = if clearly_slower(k8, k7) {
                "slower, beyond the spread of either"
            } else if clearly_slower(k7, k8) {
                "faster, beyond the spread of either"
            } else {
                "within the spread of the repeats"
            };
            parts.push(format!("{} {dtype}: {:.2} against {:.2} µs ({ratio:.3}×, {verdict})", size_text(n), k8.median_us, k7.median_us));
        }
    }
    if parts.is_empty() {
        return "*Kernels 7 and 8 are not both measured on this GPU.*\n".into();
    }
    format!(
        "Kernel 8 against kernel 7, the one it replaces (medians; *beyond the spread* means that kernel 8's fastest repeat is slower \
        than kernel 7's median and its median slower than kernel 7's slowest repeat, or the other way round): {}.\n",
        parts.join("; ")
    )
}

/// Chapters 11 and 12: why `reduce11` and `reduce12` are faster than kernel 9 on `i32` at small
/// sizes and not on `f32`: the SASS, the benchmark, and the experiment that swaps only the warp's
/// sum (`sass`, `experiments`: [`crate::book::context::Context::sass`] and `experiments`).
pub fn redux_sentence(rows: &[Row], sass: &BTreeMap<String, Vec<Instruction>>, experiments: Option<&[Experiment]>) -> String {
    let mut s = String::new();
    let ratios = |kernel: &str, dtype: Dtype| -> Vec<String> {
        [1usize << 16, 1 << 20, 1 << 24]
            .iter()
            .filter_map(|&n| {
                let k9 = find(rows, names::REDUCE9, dtype, n, Cache::Rotated)?;
                Some(format!("{:.2}× at {}", k9.median_us / find(rows, kernel, dtype, n, Cache::Rotated)?.median_us, size_text(n)))
            })
            .collect()
    };
    write!(s, "On `i32`, against kernel 9 (its time over theirs): `{}` {}, `{}` {}; on `f32`: `{}` {}, `{}` {}.",
        names::REDUCE11, ratios(names::REDUCE11, Dtype::I32).join(", "), names::REDUCE12, ratios(names::REDUCE12, Dtype::I32).join(", "),
        names::REDUCE11, ratios(names::REDUCE11, Dtype::F32).join(", "), names::REDUCE12, ratios(names::REDUCE12, Dtype::F32).join(", ")).unwrap();
    let entry = |kernel: &str, suffix: &str| sass.get(&format!("{kernel}{suffix}"));
    let redux = |kernel: &str, suffix: &str| entry(kernel, suffix).map(|c| count(c, "REDUX"));
    let shfl = |kernel: &str, suffix: &str| entry(kernel, suffix).map(|c| count(c, "SHFL"));
    if let (Some(r9), Some(r11), Some(r12), Some(s9), Some(s11), Some(s12f)) = (
        redux(names::REDUCE9, "_i32"), redux(names::REDUCE11, "_i32"), redux(names::REDUCE12, "_b256_i32"),
        shfl(names::REDUCE9, "_i32"), shfl(names::REDUCE11, "_i32"), shfl(names::REDUCE12, "_b256_f32"),
    ) {
        write!(s, " The machine code says why (`plots/data/sass/sm_90/`, NVRTC for `sm_90`): for `i32`, `cg::reduce` compiles to \
            `REDUX.SUM.S32` — the hardware's warp-wide integer sum (`redux.sync`, sm_80 and later) — {r11} of them and {s11} shuffles in \
            `reduce11_i32`, and CUB's warp reduction to {r12} in `reduce12_b256_i32`, where kernel 9's `warp_sum` makes {s9} shuffles \
            and {r9} `REDUX`: five `SHFL.DOWN` and five adds for each warp's sum become one instruction. There is no floating-point \
            `REDUX` on this GPU (CUB's float `redux` needs sm_100), so `reduce12_b256_f32` still shuffles ({s12f} `SHFL`): whatever \
            separates the `f32` times above, it is not this instruction. Both libraries choose it in their source: CCCL's `cub/warp/specializations/warp_reduce_shfl.cuh` \
            (`WarpReduceShfl::Reduce` calls `warp_redux`, which `warp_redux.cuh` maps to `__reduce_add_sync` for integers of at most \
            4 bytes; NVIDIA/cccl at 571f2fc3, v3.6.0.dev), and CUDA 13.0's `cooperative_groups/details/reduce.h` \
            (`_redux_is_add_supported`: integral types of at most 4 bytes, `__reduce_add_sync` on sm_80 and later).").unwrap();
    } else {
        write!(s, " The SASS that would say why is not in `plots/data/sass/sm_90/` (`python3 plots/sass.py`).").unwrap();
    }
    match experiments {
        Some(e) => {
            let (mut explained, mut not, mut parts) = (Vec::new(), Vec::new(), Vec::new());
            for n in [1usize << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24] {
                let t = |v: &str| experiments::find(e, "redux", v, "i32", n);
                let (Some(k9), Some(swap), Some(k11), Some(k12)) = (t(names::REDUCE9), t("reduce9_redux"), t(names::REDUCE11), t(names::REDUCE12)) else { continue };
                parts.push(format!("{}: {:.2}, {:.2}, {:.2}, {:.2}", size_text(n), k9.median_us, swap.median_us, k11.median_us, k12.median_us));
                // The swap explains the gap where it makes kernel 9 faster beyond the spread and
                // lands within 2 % of cg::reduce's time.
                let faster = swap.max_us < k9.min_us;
                let like_cg = (swap.median_us / k11.median_us - 1.0).abs() < 0.02;
                if faster && like_cg { explained.push(size_text(n)) } else { not.push(size_text(n)) }
            }
            if !parts.is_empty() {
                write!(s, " To test it, kernel 9 was timed with only its warp sum replaced by `__reduce_add_sync`, beside `reduce11` and \
                    `reduce12` (CuPy, the same two passes and grids, CUDA graphs, inputs rotated; `plots/data/experiments/`; µs for kernel \
                    9, kernel 9 with the swap, `reduce11`, `reduce12`, `i32`): {}.", parts.join("; ")).unwrap();
                let list = |v: &[String]| if v.is_empty() { "no size".to_string() } else { v.join(", ") };
                write!(s, " The swap alone makes kernel 9 faster, beyond the spread of the repeats, and within 2 % of `reduce11`, at {}; \
                    not at {}.", list(&explained), list(&not)).unwrap();
                if !not.is_empty() {
                    write!(s, " Where it does not, this experiment does not show what the benchmark's gap is made of (there the \
                        four differ by fractions of a microsecond, which the benchmark and CuPy's timings do not agree on).").unwrap();
                }
            }
        }
        None => write!(s, " Kernel 9 with only its warp sum replaced by `__reduce_add_sync` has not been timed on this GPU, so that the \
            instruction explains the whole gap is not shown.").unwrap(),
    }
    s.push('\n');
    s
}

/// Chapter 10: what finishing in one launch saved, size by size, and what the memset costs
/// (`experiments`: [`crate::book::context::Context::experiments`]).
pub fn single_pass_sentence(rows: &[Row], experiments: Option<&[Experiment]>) -> String {
    let mut s = String::new();
    for (kernel, what) in [(names::REDUCE10_LAST_BLOCK, "The last-block kernel"), (names::REDUCE10_ATOMIC, "The atomic kernel")] {
        let mut faster = Vec::new();
        let mut slower = Vec::new();
        for n in MODERN_SIZES {
            for dtype in [Dtype::F32, Dtype::I32] {
                let (Some(k), Some(k9)) = (find(rows, kernel, dtype, n, Cache::Rotated), find(rows, names::REDUCE9, dtype, n, Cache::Rotated)) else { continue };
                let line = format!("{} {dtype} ({:.2} against {:.2} µs)", size_text(n), k.median_us, k9.median_us);
                if clearly_slower(k9, k) {
                    faster.push(line);
                } else if clearly_slower(k, k9) {
                    slower.push(line);
                }
            }
        }
        let list = |v: &[String]| if v.is_empty() { "no size".to_string() } else { v.join(", ") };
        write!(s, "{what} is faster than two-pass kernel 9, beyond the spread of the repeats, at {}; slower at {}; at the other sizes \
            measured the two are within the spread. ", list(&faster), list(&slower)).unwrap();
    }
    match experiments {
        Some(e) => {
            let mut parts = Vec::new();
            for n in [1usize << 16, 1 << 20, 1 << 24] {
                let t = |v: &str| experiments::find(e, "memset", v, "f32", n);
                if let (Some(both), Some(alone), Some(memset)) = (t("memset+reduce10_atomic"), t("reduce10_atomic_alone"), t("memset_alone")) {
                    parts.push(format!("at {}: {:.2} µs with the memset, {:.2} without, {:.2} for the memset alone", size_text(n), both.median_us, alone.median_us, memset.median_us));
                }
            }
            if !parts.is_empty() {
                write!(s, "What the zeroing costs inside a graph of back-to-back sums (CuPy, `plots/data/experiments/`; the kernel alone \
                    lets the result accumulate, timed only): {}.", parts.join("; ")).unwrap();
            }
        }
        None => write!(s, "What the memset costs the atomic kernel has not been measured on its own.").unwrap(),
    }
    s.push('\n');
    s
}

/// The variants of the finishing experiment (`plots/sum_finish.cu`), in the table's order.
const FINISH_VARIANTS: [(&str, &str); 6] = [
    ("read_only", "read-only (no sum)"),
    ("fence_sc", "last block, `__threadfence()`"),
    ("acq_rel", "last block, `atom.acq_rel`"),
    ("two_pass", "two launches"),
    ("two_pass_pdl", "two launches, the second dependent"),
    ("cluster8", "clusters of 8"),
];

/// The fastest tile shape of one finishing variant at `n`: (µs, "512 × 8").
fn fastest_finish(e: &[Experiment], variant: &str, n: usize) -> Option<(f64, String)> {
    e.iter()
        .filter(|x| x.experiment == "finish" && x.n == n && x.variant.rsplit_once("_l").is_some_and(|(v, _)| v == variant))
        .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
        .map(|x| (x.median_us, format!("{} × {}", x.block, x.variant.rsplit_once("_l").map_or("?", |(_, l)| l))))
}

/// Chapter 10: what adding the blocks' partial sums costs a sum of one tile per block — the
/// read-only kernel's tiles, finished by the last block (with either fence) or by a second launch
/// — each at its fastest tile shape, from `plots/sum_finish.cu`'s run.
pub fn finish_cost(experiments: Option<&[Experiment]>) -> String {
    let e = experiments.unwrap_or(&[]);
    let sizes: Vec<usize> = [13, 14, 15, 16, 18, 20, 22, 24, 26, 28, 30].into_iter().map(|k| 1usize << k).filter(|&n| fastest_finish(e, "read_only", n).is_some()).collect();
    if sizes.is_empty() {
        return "What finishing costs a tile kernel has not been measured on this GPU (`plots/sum_finish.cu`).\n".into();
    }
    let mut s = String::from("*f32, µs per sum (graph-amortized, inputs rotated), each at its fastest tile shape of threads × 16-byte loads; \
        `plots/sum_finish.cu`, in one run.*\n\n| n |");
    // Only the variants this run measured (the last two need sm_90).
    let variants: Vec<(&str, &str)> = FINISH_VARIANTS.iter().copied().filter(|(v, _)| sizes.iter().any(|&n| fastest_finish(e, v, n).is_some())).collect();
    for (_, title) in &variants {
        write!(s, " {title} |").unwrap();
    }
    s.push_str("\n|--:|");
    s.push_str(&"--:|".repeat(variants.len()));
    s.push('\n');
    for &n in &sizes {
        write!(s, "| {} |", size_text(n)).unwrap();
        for &(variant, _) in &variants {
            match fastest_finish(e, variant, n) {
                Some((us, shape)) => write!(s, " {us:.2} ({shape}) |").unwrap(),
                None => s.push_str(" – |"),
            }
        }
        s.push('\n');
    }
    let over = |variant: &str, n: usize| -> Option<f64> { Some(fastest_finish(e, variant, n)?.0 / fastest_finish(e, "read_only", n)?.0 - 1.0) };
    let largest = *sizes.last().expect("not empty");
    if let (Some(last), Some(two)) = (over("fence_sc", largest), over("two_pass", largest)) {
        write!(s, "\nAt {} the last block's finish took {:.1}% longer than the read-only kernel, which adds nothing; two launches took {:.1}% longer. ",
            size_text(largest), last * 100.0, two * 100.0).unwrap();
    }
    // The fence's kind: the largest difference between the two last-block variants.
    let fences: Vec<f64> = sizes.iter().filter_map(|&n| Some((fastest_finish(e, "acq_rel", n)?.0 / fastest_finish(e, "fence_sc", n)?.0 - 1.0).abs())).collect();
    if let Some(most) = fences.iter().copied().reduce(f64::max) {
        write!(s, "Taking the ticket with a release-acquire atomic instead of after `__threadfence()` changed the last block's time by at most \
            {:.1}% at any size, so the kind of fence is not what costs. What the last-block form does and the two-launch forms do not is wait: \
            every block holds its SM until its ticket comes back, where the read-only kernel's block leaves once it has written (this \
            run does not time that wait apart). ", most * 100.0).unwrap();
    }
    // The smallest size from which two launches beat the last block at every larger size too.
    let two_faster = |n: usize| matches!((fastest_finish(e, "two_pass", n), fastest_finish(e, "fence_sc", n)), (Some(t), Some(f)) if t.0 < f.0);
    let crossing = (0..sizes.len()).find(|&i| sizes[i..].iter().all(|&n| two_faster(n))).map(|i| sizes[i]);
    match crossing {
        Some(n) if n == sizes[0] => s.push_str("Two launches were the faster finish at every size measured here. "),
        Some(n) => write!(s, "From {} on, two launches were the faster finish here; at the size below it, one launch was. ", size_text(n)).unwrap(),
        None => s.push_str("At the largest size measured, one launch was the faster finish. "),
    }
    // The dependent second launch (sm_90): what it saves over the plain second launch.
    let saved: Vec<(usize, f64)> = sizes.iter().filter_map(|&n| Some((n, fastest_finish(e, "two_pass", n)?.0 - fastest_finish(e, "two_pass_pdl", n)?.0))).filter(|&(n, _)| n >= 1 << 16).collect();
    if let (Some(most), Some(least)) = (saved.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)), saved.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1))) {
        let than = |us: f64| format!("{:.2} µs {}", us.abs(), if us >= 0.0 { "less" } else { "more" });
        write!(s, "Queued as a programmatic dependent launch (each block of the first launch lets it in as it starts, and it waits in \
            `griddepcontrol.wait` until the first has ended), the two launches took from {} (at {}) to {} (at {}) than the plain two \
            launches from 2^16 on, each at its fastest tile shape; ",
            than(least.1), size_text(least.0), than(most.1), size_text(most.0)).unwrap();
        if let Some(over) = over("two_pass_pdl", largest) {
            write!(s, "at {} it took {:.1}% longer than the read-only kernel. ", size_text(largest), over * 100.0).unwrap();
        }
    }
    // Clusters of 8 blocks adding through distributed shared memory: where they were the fastest finish.
    let finishes = ["fence_sc", "acq_rel", "two_pass", "two_pass_pdl", "cluster8"];
    let cluster_wins: Vec<usize> = sizes.iter().copied().filter(|&n| {
        let best = finishes.iter().filter_map(|v| fastest_finish(e, v, n).map(|f| (*v, f.0))).min_by(|a, b| a.1.total_cmp(&b.1));
        best.is_some_and(|(v, _)| v == "cluster8")
    }).collect();
    if sizes.iter().any(|&n| fastest_finish(e, "cluster8", n).is_some()) {
        let names: Vec<String> = cluster_wins.iter().map(|&n| size_text(n)).collect();
        match names.as_slice() {
            [] => s.push_str("Clusters of 8 blocks, adding their sums through distributed shared memory, were the fastest finish at no size. "),
            _ => write!(s, "Clusters of 8 blocks, adding their sums through distributed shared memory (one launch while 8 tiles cover the input), \
                were the fastest finish only at {}. ", names.join(", ")).unwrap(),
        }
    }
    // Where the entry point's rule takes the tile kernel: one launch where its band fits one tile.
    let bands = crate::kernels::dispatch::BANDS;
    let mut uses = Vec::new();
    for (i, band) in bands.iter().enumerate().filter(|(_, b)| b.kernel == names::REDUCE10_TILES_TWO_PASS) {
        let from = if i == 0 { 1 } else { bands[i - 1].up_to_bytes / 4 + 1 };
        let tile = crate::kernels::find(band.kernel).map(|k| k.tile(band.block)).unwrap_or(0);
        let range = if band.up_to_bytes == u64::MAX { format!("from {from} values on") } else { format!("{from} to {} values", band.up_to_bytes / 4) };
        let how = if band.up_to_bytes / 4 <= tile { "one tile: one block, one launch" } else { "two launches" };
        uses.push(format!("{range} at {} threads ({how})", band.block));
    }
    if uses.is_empty() {
        s.push_str("The entry point ([one function for every size](skeleton.md)) does not use the two-launch form.");
    } else {
        write!(s, "The entry point ([one function for every size](skeleton.md)) takes `{}` for f32 {}.", names::REDUCE10_TILES_TWO_PASS, uses.join(", and ")).unwrap();
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn row(kernel: &str, n: usize, median: f64, min: f64, max: f64) -> Row {
        Row {
            kernel: kernel.into(), chapter: 0, title: String::new(), status: if kernel == READ_ONLY_KERNEL { Status::Ceiling } else { Status::Correct },
            dtype: Dtype::F32, n, block: 256, cache: Cache::Rotated, median_us: median, min_us: min, max_us: max, bytes: n * 4,
            working_set_bytes: 0, repeats: 15, method: String::new(),
        }
    }

    #[test]
    fn the_finish_table_takes_each_variants_fastest_shape() {
        let x = |variant: &str, block, us| Experiment {
            experiment: "finish".into(), variant: variant.into(), dtype: "f32".into(), n: 1 << 30, grid: 1, block, ops: 1, median_us: us, min_us: us, max_us: us,
        };
        let e = vec![x("read_only_l8", 512, 900.0), x("read_only_l4", 1024, 901.0), x("fence_sc_l8", 1024, 920.0), x("acq_rel_l8", 1024, 920.5), x("two_pass_l8", 512, 905.0)];
        let text = finish_cost(Some(&e));
        assert!(text.contains("| 2^30 | 900.00 (512 × 8) | 920.00 (1024 × 8) | 920.50 (1024 × 8) | 905.00 (512 × 8) |"), "{text}");
        assert!(text.contains("At 2^30 the last block's finish took 2.2% longer than the read-only kernel, which adds nothing; two launches took 0.6% longer."), "{text}");
        assert!(text.contains("at most 0.1% at any size"), "{text}");
        assert!(text.contains("Two launches were the faster finish at every size measured here."), "{text}");
        let mut smaller = e.clone();
        smaller.extend([x("read_only_l8", 512, 1.0), x("fence_sc_l8", 512, 1.1), x("two_pass_l8", 512, 1.2)].map(|r| Experiment { n: 1 << 20, ..r }));
        assert!(finish_cost(Some(&smaller)).contains("From 2^30 on, two launches were the faster finish here"), "{}", finish_cost(Some(&smaller)));
        assert!(finish_cost(None).contains("has not been measured"));
        // Without the sm_90 variants their columns and sentences are left out...
        assert!(!text.contains("dependent") && !text.contains("clusters"), "{text}");
        // ...with them, the dependent launch's saving and where clusters won, from the rows.
        let mut sm90 = e.clone();
        sm90.extend([x("two_pass_pdl_l8", 512, 904.5), x("cluster8_l8", 512, 950.0)]);
        sm90.extend([x("read_only_l8", 256, 1.6), x("fence_sc_l8", 256, 2.7), x("two_pass_l8", 256, 3.0), x("two_pass_pdl_l8", 256, 2.6), x("cluster8_l8", 256, 2.4)].map(|r| Experiment { n: 1 << 16, ..r }));
        let text = finish_cost(Some(&sm90));
        assert!(text.contains("| 2^30 | 900.00 (512 × 8) | 920.00 (1024 × 8) | 920.50 (1024 × 8) | 905.00 (512 × 8) | 904.50 (512 × 8) | 950.00 (512 × 8) |"), "{text}");
        assert!(text.contains("took from 0.40 µs less (at 2^16) to 0.50 µs less (at 2^30) than the plain two launches"), "{text}");
        // A dependent launch that was slower is said so, not as a negative saving.
        let mut slower = sm90.clone();
        slower.push(Experiment { n: 1 << 18, ..x("two_pass_l8", 256, 3.0) });
        slower.push(Experiment { n: 1 << 18, ..x("two_pass_pdl_l8", 256, 3.1) });
        slower.push(Experiment { n: 1 << 18, ..x("read_only_l8", 256, 1.8) });
        let text = finish_cost(Some(&slower));
        assert!(text.contains("took from 0.10 µs more (at 2^18) to 0.50 µs less (at 2^30)"), "{text}");
        assert!(text.contains("were the fastest finish only at 2^16."), "{text}");
    }

    #[test]
    fn slower_means_beyond_the_spread_of_both() {
        let rows = vec![row(names::REDUCE8, 1 << 30, 1134.1, 1133.0, 1135.0), row(names::REDUCE7, 1 << 30, 1127.2, 1126.0, 1128.0),
            row(names::REDUCE8, 1 << 20, 4.56, 4.40, 4.70), row(names::REDUCE7, 1 << 20, 4.29, 4.25, 4.60)];
        let text = reduce8_vs_reduce7(&rows);
        assert!(text.contains("2^30 f32: 1134.10 against 1127.20 µs (1.006×, slower, beyond the spread of either)"), "{text}");
        assert!(text.contains("2^20 f32: 4.56 against 4.29 µs (1.063×, within the spread of the repeats)"), "{text}");
        assert!(reduce8_vs_reduce7(&rows[2..3]).contains("not both measured"));
    }

    #[test]
    fn the_committed_data_gives_every_sentence() {
        let c = crate::book::context::Context::load(&crate::records::repo_root()).unwrap();
        let rows = &c.book().unwrap().1;
        assert!(reduce8_vs_reduce7(rows).contains("2^30 f32"));
        assert!(single_pass_sentence(rows, None).contains("The last-block kernel is faster"));
        assert!(single_pass_sentence(rows, None).contains("has not been measured on its own"));
        assert!(redux_sentence(rows, &c.sass, None).contains("REDUX.SUM.S32"));
        assert!(redux_sentence(rows, &BTreeMap::new(), None).contains("is not in `plots/data/sass/sm_90/`"));
        // The experiment on the H200: the swap to redux.sync alone closes the i32 gap from 2^18 on.
        let experiments = c.experiments.as_deref().expect("the committed experiments");
        let text = redux_sentence(rows, &c.sass, Some(experiments));
        assert!(text.contains("within 2 % of `reduce11`, at 2^18, 2^20, 2^22, 2^24; not at 2^16"), "{text}");
        assert!(single_pass_sentence(rows, Some(experiments)).contains("for the memset alone"));
    }
}
