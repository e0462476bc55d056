//! The entry point against the libraries a reader would otherwise call: what one function
//! (`reduction::sum`, `Reducer::auto`) gets at each size, beside CUB called directly, CuPy,
//! torch, TileLang and Triton — graph-amortized and host-visible — and the rule's bands for the
//! skeleton chapter. A peer is compared only where it was measured in the same run as the
//! entry point (its `method` says so): runs can land on different H200s, 2–3% apart.

use super::common::size_label;
use crate::element::Dtype;
use crate::kernels::dispatch::BANDS;
use crate::records::bench::{Cache, Row, ENTRY_POINT_HOST_KERNEL, ENTRY_POINT_KERNEL, READ_ONLY_KERNEL};
use crate::records::sass::{self, Instruction};
use crate::records::Machine;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The peers, graph-amortized, in the columns' order: (kernel, column).
pub const PEERS: &[(&str, &str)] = &[("cub_sum", "CUB"), ("cupy_sum_cub", "CuPy (CUB)"), ("torch_sum", "torch"), ("tilelang_sum", "TileLang"), ("triton_sum", "Triton")];
/// The peers, host-visible: one call and the copy of its result to the host.
pub const HOST_PEERS: &[(&str, &str)] = &[("cub_sum_host", "CUB"), ("cupy_sum_cub_host", "CuPy `.item()`"), ("torch_sum_host", "torch `.item()`")];

/// What a peer's `method` says when it ran in the benchmark's own run (`src/cli/peers.rs`).
pub const SAME_RUN: &str = "in reduction bench's run";

const NOT_MEASURED: &str = "*The entry point is not yet measured on this GPU beside the libraries: `cargo run --release -- bench` measures it and runs the peers in the same run.*\n";

/// The median of `kernel` at `block` in a band's evidence file (a path from the repository's root).
fn evidence_time(file: &str, kernel: &str, block: u32, dtype: Dtype, n: usize) -> Option<f64> {
    let (_, rows) = crate::records::bench::read_csv(&crate::records::repo_root().join(file)).ok()?;
    rows.iter().find(|r| r.kernel == kernel && r.block == block && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated).map(|r| r.median_us)
}

pub(super) fn row<'a>(rows: &'a [Row], kernel: &str, dtype: Dtype, n: usize) -> Option<&'a Row> {
    rows.iter().find(|r| r.kernel == kernel && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated)
}

/// A peer's row at n, if it was measured in the benchmark's own run.
fn peer<'a>(rows: &'a [Row], kernel: &str, dtype: Dtype, n: usize) -> Option<&'a Row> {
    row(rows, kernel, dtype, n).filter(|r| r.method.contains(SAME_RUN))
}

/// Every size `kernel` was measured at, the ragged ones (10^6, 2^22 + 1, …) too: a peer that is
/// ahead only where n is not a power of two is still ahead.
fn sizes(rows: &[Row], kernel: &str, dtype: Dtype) -> Vec<usize> {
    let mut n: Vec<usize> = rows.iter().filter(|r| r.kernel == kernel && r.dtype == dtype && r.cache == Cache::Rotated).map(|r| r.n).collect();
    n.sort_unstable();
    n.dedup();
    n
}

/// `entry_point.md`: the entry point at each size (the kernel it picked, its time, its share of
/// the read-only ceiling) beside every peer of the same run, the fastest in bold; then where it
/// is behind, said from the same numbers.
pub fn entry_table(m: &Machine, rows: &[Row]) -> String {
    if !rows.iter().any(|r| r.kernel == ENTRY_POINT_KERNEL) {
        return NOT_MEASURED.into();
    }
    let mut s = String::new();
    for dtype in [Dtype::F32, Dtype::I32] {
        let ns = sizes(rows, ENTRY_POINT_KERNEL, dtype);
        if ns.is_empty() {
            continue;
        }
        let heads: Vec<&str> = PEERS.iter().map(|(_, h)| *h).collect();
        writeln!(s, "\n**{dtype}** (µs per sum, graph-amortized; the fastest in bold)\n").unwrap();
        writeln!(s, "| n | entry point picks | entry point | % of read-only | {} |\n|--:|---|--:|--:|{}", heads.join(" | "), "--:|".repeat(PEERS.len())).unwrap();
        let mut behind = Vec::new();
        let mut ahead = 0;
        for &n in &ns {
            let ours = row(rows, ENTRY_POINT_KERNEL, dtype, n).expect("sizes come from the rows");
            let picked = ours.title.trim_start_matches("entry point: ");
            let ceiling = row(rows, READ_ONLY_KERNEL, dtype, n).map_or("–".into(), |c| format!("{:.1}", 100.0 * c.median_us / ours.median_us));
            let theirs: Vec<Option<&Row>> = PEERS.iter().map(|(k, _)| peer(rows, k, dtype, n)).collect();
            let fastest = theirs.iter().flatten().map(|r| r.median_us).fold(ours.median_us, f64::min);
            let cell = |us: f64| if us == fastest { format!("**{us:.2}**") } else { format!("{us:.2}") };
            let cells: Vec<String> = theirs.iter().map(|r| r.map_or("–".into(), |r| cell(r.median_us))).collect();
            writeln!(s, "| {} | {picked} | {} | {ceiling} | {} |", size_label(n), cell(ours.median_us), cells.join(" | ")).unwrap();
            let measured = theirs.iter().flatten().count();
            match theirs.iter().flatten().filter(|r| r.median_us < ours.median_us).min_by(|a, b| a.median_us.total_cmp(&b.median_us)) {
                Some(r) => behind.push(format!("{} ({} {:.2} µs against {:.2}, {:.1}%)", size_label(n), r.title, r.median_us, ours.median_us, 100.0 * (ours.median_us / r.median_us - 1.0))),
                None if measured > 0 => ahead += 1,
                None => {}
            }
        }
        // The rule as it stands against what the entry point launched when it was measured: a
        // rule revised from a run's evidence is measured by the next run, and says so till then.
        let revised: Vec<String> = ns
            .iter()
            .filter_map(|&n| {
                let (kernel, block, one_block) = entry_launch(&row(rows, ENTRY_POINT_KERNEL, dtype, n)?.title)?;
                let bytes = (n * 4) as u64;
                let band = BANDS.iter().find(|b| bytes <= b.up_to_bytes)?;
                if (kernel, block, one_block) == (band.kernel, band.block, band.one_block) {
                    return None;
                }
                // The new choice against the one it replaced, both from the band's evidence file.
                let times = Some((evidence_time(band.evidence.file, band.kernel, band.block, dtype, n), evidence_time(band.evidence.file, kernel, block, dtype, n)))
                    .and_then(|(new, old)| Some((new?, old?, kernel, block)));
                Some(match times {
                    Some((new, old, k, b)) => format!("{} (`{}` at block {}: {new:.2} µs there, against {old:.2} for `{k}` at block {b})", size_label(n), band.kernel, band.block),
                    None => format!("{} (`{}` at block {})", size_label(n), band.kernel, band.block),
                })
            })
            .collect();
        let peers_measured = ns.iter().filter(|&&n| PEERS.iter().any(|(k, _)| peer(rows, k, dtype, n).is_some())).count();
        if peers_measured == 0 {
            writeln!(s, "\n*No peer was measured in this run for {dtype}.*").unwrap();
        } else if behind.is_empty() {
            writeln!(s, "\nOn {dtype} the entry point was at least as fast as every peer measured beside it, at all {ahead} sizes.").unwrap();
        } else {
            writeln!(s, "\nOn {dtype} the entry point was at least as fast as every peer beside it at {ahead} of {peers_measured} sizes; behind at {}.", behind.join("; ")).unwrap();
        }
        if !revised.is_empty() {
            let files: Vec<&str> = BANDS.iter().map(|b| b.evidence.file).fold(Vec::new(), |mut v, f| { if !v.contains(&f) { v.push(f) } v });
            writeln!(s, "\nThe rule was revised after this run (`kernels::dispatch::BANDS`, from the rows its bands cite: {}): it now picks another kernel at {}; the entry point's times above are those of the rule it replaced, until the next `reduction bench`.",
                files.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", "), revised.join(", ")).unwrap();
        }
    }
    writeln!(s, "\n*Measured on an {} on {} by `{}`; each peer only where it ran in the same run (its `method` column says so), the same way: checked first, inputs rotated past L2, CUDA events around graphs of back-to-back calls (CuPy's sum is not captured: K back-to-back calls).*", m.gpu, m.date, m.command).unwrap();
    s
}

/// What an entry point row's title says it launched (`entry point: reduce12, block 256`, with
/// `, one block` where the grid was capped at one block, and `, host-visible` on a host row):
/// the kernel, the block and whether it was one block.
pub fn entry_launch(title: &str) -> Option<(&str, u32, bool)> {
    let (kernel, rest) = title.strip_prefix("entry point: ")?.split_once(", block ")?;
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    Some((kernel, rest[..digits].parse().ok()?, rest[digits..].starts_with(", one block")))
}

/// Two times of the same launch that differ by less than this agree.
pub const TWIN_AGREE: f64 = 0.01;
/// Differences larger than this are listed one by one.
pub const TWIN_LISTED: f64 = 0.03;

/// `entry_twins.md`: the entry point's launch is, at most sizes, a kernel at a block that the
/// benchmark also times as that kernel's own row: the same launches, timed at another moment of
/// the same run. How far apart the two came is how far apart two rows of one run can be with no
/// difference in the code; and where a peer was ahead of the entry point's row, whether it was
/// ahead of the same launch's other time too.
pub fn entry_twins(rows: &[Row], repeat: Option<(&Machine, &[Row])>) -> String {
    let mut pairs: Vec<(Dtype, usize, &Row, &Row)> = Vec::new();
    for ours in rows.iter().filter(|r| r.kernel == ENTRY_POINT_KERNEL && r.cache == Cache::Rotated) {
        let Some((kernel, block, false)) = entry_launch(&ours.title) else { continue };
        if let Some(twin) = rows.iter().find(|r| r.kernel == kernel && r.block == block && r.dtype == ours.dtype && r.n == ours.n && r.cache == Cache::Rotated) {
            pairs.push((ours.dtype, ours.n, ours, twin));
        }
    }
    if pairs.is_empty() {
        return String::new();
    }
    let entry_rows = rows.iter().filter(|r| r.kernel == ENTRY_POINT_KERNEL && r.cache == Cache::Rotated).count();
    pairs.sort_by_key(|p| (p.0.name(), p.1));
    let change = |ours: &Row, twin: &Row| ours.median_us / twin.median_us - 1.0;
    let agree = pairs.iter().filter(|(_, _, o, t)| change(o, t).abs() < TWIN_AGREE).count();
    let mut s = format!(
        "**The same launch, timed twice.** In {} of the {} rows above (a size and a type each), the entry point launched a kernel at a block that this run also timed as that kernel's own row: \
        the same launches, timed at another moment of the run. The two agreed within {:.0}% in {agree} of them.",
        pairs.len(), entry_rows, TWIN_AGREE * 100.0
    );
    // The smallest size from which every pair agrees: above it the moment does not show.
    let mut by_size: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    by_size.sort_unstable();
    by_size.dedup();
    let from = by_size.iter().rev().take_while(|&&n| pairs.iter().filter(|p| p.1 >= n).all(|(_, _, o, t)| change(o, t).abs() < TWIN_AGREE)).last().copied();
    if let Some(from) = from.filter(|&f| f > by_size[0]) {
        let worst = pairs.iter().filter(|p| p.1 >= from).map(|(_, _, o, t)| change(o, t).abs()).fold(0.0, f64::max);
        write!(s, " From {} values up they agreed within {:.1}%.", size_label(from), worst * 100.0).unwrap();
    }
    let apart: Vec<&(Dtype, usize, &Row, &Row)> = pairs.iter().filter(|(_, _, o, t)| change(o, t).abs() > TWIN_LISTED).collect();
    if apart.is_empty() {
        writeln!(s, " Nowhere did they differ by more than {:.0}%.", TWIN_LISTED * 100.0).unwrap();
    } else {
        // The same pair in a second whole run, where one was made: did it differ the same way?
        let again = |dtype: Dtype, n: usize, o: &Row| -> Option<f64> {
            let (_, rows) = repeat?;
            let ours = rows.iter().find(|r| r.kernel == ENTRY_POINT_KERNEL && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated && r.title == o.title)?;
            let (kernel, block, _) = entry_launch(&ours.title)?;
            let twin = rows.iter().find(|r| r.kernel == kernel && r.block == block && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated)?;
            Some(change(ours, twin))
        };
        let second = repeat.map_or(String::new(), |_| " in the second run |".into());
        writeln!(s, " Where they differed by more than {:.0}%:\n\n| n | type | the entry point's row | the kernel's own row | the entry point's row against it |{second}\n|--:|---|--:|--:|--:|{}",
            TWIN_LISTED * 100.0, if repeat.is_some() { "--:|" } else { "" }).unwrap();
        let mut repeated = 0;
        for (dtype, n, o, t) in &apart {
            write!(s, "| {} | {dtype} | {:.2} µs | {:.2} µs | {:+.1}% |", size_label(*n), o.median_us, t.median_us, 100.0 * change(o, t)).unwrap();
            if repeat.is_some() {
                match again(*dtype, *n, o) {
                    Some(c) => {
                        repeated += usize::from(c.abs() > TWIN_LISTED && c.signum() == change(o, t).signum());
                        write!(s, " {:+.1}% |", 100.0 * c).unwrap();
                    }
                    None => s.push_str(" – |"),
                }
            }
            s.push('\n');
        }
        if let Some((machine, _)) = repeat {
            writeln!(s, "\nThe second run is the whole benchmark again ({}, {}; `plots/data/experiments/bench-repeat/`): \
                {repeated} of these {} rows differed the same way there, by more than {:.0}% again.", machine.gpu, machine.date, apart.len(), TWIN_LISTED * 100.0).unwrap();
        }
        writeln!(s, "\nThe two rows of a pair run the same code on the same input, each from its own reducer with its own scratch buffers. Where a sum takes a few microseconds, a difference of this size comes with where in the run each was timed: \
            `plots/data/experiments/entry-point-order/` times the same launches in other orders, and they move with what the process timed before them. \
            What a process allocated before a reducer also decides where that reducer's scratch buffers land; the next paragraph moves only them.").unwrap();
    }
    // Where a peer beat the entry point's row: did it beat the launch's other time?
    let mut beaten = Vec::new();
    for (dtype, n, ours, twin) in &pairs {
        let peers: Vec<&Row> = PEERS.iter().filter_map(|(k, _)| peer(rows, k, *dtype, *n)).collect();
        let Some(best) = peers.iter().filter(|r| r.median_us < ours.median_us).min_by(|a, b| a.median_us.total_cmp(&b.median_us)) else { continue };
        let verdict = if (twin.median_us / best.median_us - 1.0).abs() < TWIN_AGREE {
            "level (within 1%)"
        } else if twin.median_us < best.median_us {
            "ahead"
        } else {
            "behind"
        };
        let column = PEERS.iter().find(|(k, _)| *k == best.kernel).map_or(best.kernel.as_str(), |(_, c)| c);
        beaten.push(format!("| {} | {dtype} | {column} | {:.2} µs | {:.2} µs | {:.2} µs | {verdict} |", size_label(*n), best.median_us, ours.median_us, twin.median_us));
    }
    if !beaten.is_empty() {
        writeln!(s, "\nWhere a library was ahead of the entry point's row, the same launch timed as its own row:\n\n| n | type | library | library's time | the entry point's row | the kernel's own row | the kernel's own row against the library |\n|--:|---|---|--:|--:|--:|---|\n{}", beaten.join("\n")).unwrap();
    }
    s
}

/// `host_visible.md`: one call as a caller who reads the sum waits for it — the launches, the
/// result's way to the host and the wait — for the entry point and the peers, with the
/// entry point's graph-amortized time beside it.
pub fn host_visible_table(m: &Machine, rows: &[Row]) -> String {
    if !rows.iter().any(|r| r.kernel == ENTRY_POINT_HOST_KERNEL) {
        return NOT_MEASURED.into();
    }
    let mut s = String::new();
    for dtype in [Dtype::F32, Dtype::I32] {
        let ns = sizes(rows, ENTRY_POINT_HOST_KERNEL, dtype);
        if ns.is_empty() {
            continue;
        }
        let heads: Vec<&str> = HOST_PEERS.iter().map(|(_, h)| *h).collect();
        writeln!(s, "\n**{dtype}** (µs per call, by the host's clock; the fastest in bold)\n").unwrap();
        writeln!(s, "| n | entry point, GPU time | entry point, one call | {} |\n|--:|--:|--:|{}", heads.join(" | "), "--:|".repeat(HOST_PEERS.len())).unwrap();
        let mut behind = Vec::new();
        for &n in &ns {
            let ours = row(rows, ENTRY_POINT_HOST_KERNEL, dtype, n).expect("sizes come from the rows");
            let gpu = row(rows, ENTRY_POINT_KERNEL, dtype, n).map_or("–".into(), |r| format!("{:.2}", r.median_us));
            let theirs: Vec<Option<&Row>> = HOST_PEERS.iter().map(|(k, _)| peer(rows, k, dtype, n)).collect();
            let fastest = theirs.iter().flatten().map(|r| r.median_us).fold(ours.median_us, f64::min);
            let cell = |us: f64| if us == fastest { format!("**{us:.1}**") } else { format!("{us:.1}") };
            let cells: Vec<String> = theirs.iter().map(|r| r.map_or("–".into(), |r| cell(r.median_us))).collect();
            writeln!(s, "| {} | {gpu} | {} | {} |", size_label(n), cell(ours.median_us), cells.join(" | ")).unwrap();
            if let Some(r) = theirs.iter().flatten().filter(|r| r.median_us < ours.median_us).min_by(|a, b| a.median_us.total_cmp(&b.median_us)) {
                behind.push(format!("{} ({} {:.1} µs against {:.1})", size_label(n), r.title, r.median_us, ours.median_us));
            }
        }
        // The sentence: what waiting for one small sum costs a caller, at 2^16.
        let n = 1 << 16;
        if let (Some(host), Some(gpu)) = (row(rows, ENTRY_POINT_HOST_KERNEL, dtype, n), row(rows, ENTRY_POINT_KERNEL, dtype, n)) {
            writeln!(s, "\nAt 2^16 {dtype} values, a caller of the entry point waits {:.1} µs for the sum, {:.1} times the {:.2} µs the GPU spends on it in a graph of back-to-back sums: the launch and the wait for it cost more than the sum.",
                host.median_us, host.median_us / gpu.median_us, gpu.median_us).unwrap();
        }
        if behind.is_empty() {
            writeln!(s, "\nOne call of the entry point was at least as fast as one call of every peer measured beside it, at every size.").unwrap();
        } else {
            writeln!(s, "\nOne call of the entry point was slower than a peer's at {}.", behind.join("; ")).unwrap();
        }
    }
    writeln!(s, "\n*Measured on an {} on {} by `{}`: the input already on the GPU (rotated past L2 as for the kernels), one call and its result in a host variable (the entry point's last launch writes it into page-locked host memory that the GPU sees; each peer copies it back), timed by the host's clock, the median of many calls after ten warm ones; each peer only where it ran in the same run.*", m.gpu, m.date, m.command).unwrap();
    s
}

/// `host_result.md`: how a sum's one value reaches the host, three ways, from the experiment
/// beside the finishes (`plots/sum_finish.cu`, `host_result` rows): copied into pageable memory,
/// into page-locked memory, or written by the kernel into page-locked memory mapped into the
/// GPU's address space.
pub fn host_result(experiments: Option<&[crate::records::experiments::Experiment]>) -> String {
    let find = |variant: &str, n: usize| experiments.and_then(|e| crate::records::experiments::find(e, "host_result", variant, "f32", n));
    let mut parts = Vec::new();
    for n in [1usize << 10, 1 << 16, 1 << 24] {
        if let (Some(pageable), Some(pinned), Some(mapped)) = (find("pageable", n), find("pinned", n), find("mapped", n)) {
            parts.push(format!("at {}: {:.1} µs with a copy into pageable memory, {:.1} into page-locked memory, {:.1} with no copy", size_label(n), pageable.median_us, pinned.median_us, mapped.median_us));
        }
    }
    if parts.is_empty() {
        return "How the result reaches the host has not been timed apart on this GPU (`plots/sum_finish.cu`).\n".into();
    }
    format!("The entry point's last launch writes the sum into page-locked host memory mapped into the GPU's address space, so no copy \
        follows the kernels: the caller waits for the kernels alone. One call and its wait, the same kernel each way (`plots/sum_finish.cu`, \
        median of 401 calls by the host's clock): {}.\n", parts.join("; "))
}

/// `dispatch_bands.md`: the entry point's rule as a table — each band's sizes, kernel, block and
/// why — from `kernels::dispatch::BANDS` itself, with the file each band's evidence is in.
pub fn dispatch_bands(sass: &BTreeMap<String, Vec<Instruction>>) -> String {
    let mut s = String::from("| f32 values | kernel | block | why | evidence |\n|---|---|--:|---|---|\n");
    let mut low = 0u64;
    for band in BANDS {
        let range = if band.up_to_bytes == u64::MAX { format!("more than {}", low / 4) } else { format!("{} to {}", low / 4 + 1, band.up_to_bytes / 4) };
        let grid = if band.one_block { ", one block" } else { "" };
        writeln!(s, "| {range} | `{}`{grid} | {} | {} | `{}` |", band.kernel, band.block, band.why, band.evidence.file).unwrap();
        low = band.up_to_bytes;
    }
    for (dtype, n, what) in crate::kernels::dispatch::KNOWN_GAPS {
        writeln!(s, "\nWhere the rule is not the fastest by more than its slack (`KNOWN_GAPS`, which `tests/dispatch.rs` holds to the data): {dtype}, n = {n}: {what}.{}",
            leftover_loads_sentence(sass, *dtype, *n)).unwrap();
    }
    s
}

/// What the committed SASS of the kernel the rule gives `n` values of `dtype` shows of its loops of
/// 16-byte loads: the main loop's loads in flight, and a loop after it that loads one pack at a
/// time and adds it before the next (`plots/data/sass/sm_90/`); empty where the listing is not
/// committed or shows no such loop.
fn leftover_loads_sentence(sass: &BTreeMap<String, Vec<Instruction>>, dtype: Dtype, n: usize) -> String {
    let (band, kernel) = crate::kernels::dispatch::band_for(n, dtype);
    let entry = kernel.entry_name_of(dtype, band.block);
    let Some(code) = sass.get(&entry) else { return String::new() };
    match sass::wide_load_loops(code)[..] {
        [(main, main_in_flight), .., (1, 1)] if main > 1 => format!(
            " In `{entry}`'s machine code (`plots/data/sass/{}/`, NVRTC for `{}`), the main loop issues {main_in_flight} of its {main} 16-byte loads before it waits \
            for one; the loop after it, for the packs a thread has left, loads one pack and adds it before it loads the next, so a thread with packs left waits \
            for each in turn.",
            sass::ARCH, sass::ARCH
        ),
        _ => String::new(),
    }
}
