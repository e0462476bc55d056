//! The tile-language chapter's generated parts, drawn with no GPU from `plots/data/`: how many
//! lines each version of the row sum and the whole-array sum takes (counted in the source
//! files), what the CUDA that TileLang generated does (read from the saved source), and how the
//! TileLang and Triton versions did against the book's kernels and `torch.sum` (from
//! `plots/data/rows/` and `plots/data/tile/`, written by `plots/tile_peers.py`).

use crate::book::context::Context;
use crate::records::rows::{self as rows_records, AUTO_KERNEL, TILELANG_KERNEL, TORCH_KERNEL, TRITON_KERNEL};
use crate::records::tile::{TILELANG_SUM, TRITON_SUM};
use crate::element::Dtype;
use crate::error::Result;
use crate::records::bench::{Cache, Row};
use crate::records::Machine;
use std::fmt::Write as _;

/// A listing the chapter counts: its label, its file, and the anchors whose lines are its code.
pub struct Listing {
    pub label: &'static str,
    pub file: &'static str,
    pub anchors: &'static [&'static str],
}

/// The row sums and the whole-array sums, each as the reader writes it. For CUDA, the row
/// kernel (a team of lanes per row) with its walk over a row and its 16-byte pack sum; the
/// host's planner and launch are not counted, nor the tile languages' launch wrappers but
/// Triton's, which chooses the tile shape.
pub const LISTINGS: [Listing; 5] = [
    Listing { label: "row sum, TileLang", file: "kernels/tilelang/row_sum.py", anchors: &["row_sum"] },
    Listing { label: "row sum, Triton (kernel and launch)", file: "kernels/triton/row_sum.py", anchors: &["row_sum", "launch"] },
    Listing { label: "row sum, CUDA (`rows_warp`, `span_sum`, `pack_sum`)", file: "kernels/13_rows.cu", anchors: &["warp", "span_sum"] },
    Listing { label: "whole-array sum, TileLang (kernel and passes)", file: "kernels/tilelang/sum.py", anchors: &["partial_sums", "passes"] },
    Listing { label: "whole-array sum, Triton (kernel and launch)", file: "kernels/triton/sum.py", anchors: &["sum"] },
];

/// Lines of code between `ANCHOR: name` and `ANCHOR_END: name` in `text`: not blank, not a
/// comment (`//`, `#`), not a `#pragma`; `None` if the anchor is missing.
pub fn code_lines(text: &str, anchor: &str) -> Option<usize> {
    let mut inside = false;
    let mut count = 0;
    let mut found = false;
    for line in text.lines() {
        let t = line.trim();
        if t.ends_with(&format!("ANCHOR: {anchor}")) {
            inside = true;
            found = true;
            continue;
        }
        if t.ends_with(&format!("ANCHOR_END: {anchor}")) {
            inside = false;
            continue;
        }
        let comment = t.starts_with("//") || (t.starts_with('#') && !t.starts_with("#include") && !t.starts_with("#define")) || t.starts_with("#pragma");
        if inside && !t.is_empty() && !comment {
            count += 1;
        }
    }
    found.then_some(count)
}

/// The text of a listed file, compiled in (as the kernels are), so that the counts need no
/// checkout: the book can be redrawn anywhere.
pub fn listed_source(file: &str) -> Option<&'static str> {
    Some(match file {
        "kernels/tilelang/row_sum.py" => include_str!("../../../kernels/tilelang/row_sum.py"),
        "kernels/triton/row_sum.py" => include_str!("../../../kernels/triton/row_sum.py"),
        "kernels/tilelang/sum.py" => include_str!("../../../kernels/tilelang/sum.py"),
        "kernels/triton/sum.py" => include_str!("../../../kernels/triton/sum.py"),
        "kernels/13_rows.cu" => include_str!("../../../kernels/13_rows.cu"),
        "kernels/vector_load.cuh" => include_str!("../../../kernels/vector_load.cuh"),
        _ => return None,
    })
}

/// The lines of each listing; the CUDA row sum also counts the pack sum it uses from
/// `kernels/vector_load.cuh`.
pub fn line_counts() -> Result<Vec<(&'static str, usize)>> {
    let missing = |what: String| crate::error::Error::Config { setting: "the tile chapter's listings".into(), reason: what };
    let lines_of = |file: &str, anchor: &str| -> Result<usize> {
        let text = listed_source(file).ok_or_else(|| missing(format!("{file} is not compiled in")))?;
        code_lines(text, anchor).ok_or_else(|| missing(format!("{file} has no `ANCHOR: {anchor}`")))
    };
    let mut out = Vec::new();
    for listing in &LISTINGS {
        let mut lines = 0;
        for anchor in listing.anchors {
            lines += lines_of(listing.file, anchor)?;
        }
        if listing.file.ends_with("13_rows.cu") {
            lines += lines_of("kernels/vector_load.cuh", "pack_sum")?;
        }
        out.push((listing.label, lines));
    }
    Ok(out)
}

/// What the generated CUDA shows, each as a sentence, read from the source itself.
pub fn generated_facts(source: &str) -> Vec<String> {
    let mut facts = Vec::new();
    let first = source.lines().next().unwrap_or("").trim_start_matches("// ").to_string();
    if !first.is_empty() {
        facts.push(format!("Where it comes from: {first}"));
    }
    if let Some(threads) = after(source, "__launch_bounds__(").and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next().map(str::to_string)) {
        facts.push(format!("**Block size.** The kernel is compiled for blocks of {threads} threads (`__launch_bounds__({threads}, 1)`): the `threads=` of `T.Kernel`."));
    }
    let loads = source.matches("*(float4*)(A +").count();
    if loads > 0 {
        let unrolled = source.contains("#pragma unroll");
        facts.push(format!("**16-byte loads.** The input is read as `float4`, 16 bytes a load{}, the step of kernel 9 — TileLang proved the addresses aligned from the static shape.",
            if unrolled { ", in an unrolled loop: every load of the tile is issued before any is added" } else { "" }));
    } else {
        facts.push("**Loads.** The input is not read with `float4` loads here.".into());
    }
    if let Some(rest) = after(source, "tl::AllReduce<tl::SumOp, ") {
        let per_row = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("?");
        let shared = source.contains("workspace") && source.contains("__syncthreads()");
        facts.push(format!("**The tree.** Each thread first adds its own values of a row in registers (the `rv` loop), then `tl::AllReduce` adds across the {per_row} threads that share a row{}.",
            if shared { ": shuffles within a warp, and, since a row spans more than one warp, shared memory (`workspace`) and a barrier before each of the tile's rows — the cost a team of lanes inside one warp does not pay" } else { ", with warp shuffles" }));
    }
    if source.contains("(int)blockIdx.x") || source.contains("((int)threadIdx.x)") {
        facts.push("**Indices.** Offsets are computed in 32-bit `int`: a matrix of more than 2³¹ values would need a kernel compiled with 64-bit indices; the book's kernels compute them in 64 bits.".into());
    }
    if !source.contains("gridDim") {
        facts.push("**No loop over the grid.** There is no `gridDim` in the kernel: one block per tile of rows, as many blocks as tiles — the read-only kernel's best shape, chosen because a tile program is written that way.".into());
    }
    facts
}

fn after<'a>(text: &'a str, needle: &str) -> Option<&'a str> {
    text.find(needle).map(|i| &text[i + needle.len()..])
}

/// The f32 row sums of the tile languages, our automatic choice and torch.sum, shape by shape,
/// with the sentences the chapter says about them; `None` where a peer or our rows are missing.
pub fn rows_comparison(machine: &Machine, rows: &[Row]) -> Option<String> {
    let f32_rows: Vec<&Row> = rows.iter().filter(|r| r.dtype == Dtype::F32 && r.cache == Cache::Rotated).collect();
    let get = |k: &str, m: usize, n: usize| f32_rows.iter().copied().find(|r| r.kernel == k && r.n == n && rows_records::rows_of(r) == m);
    let mut shapes: Vec<(usize, usize)> = f32_rows.iter().filter(|r| r.kernel == AUTO_KERNEL).map(|r| (rows_records::rows_of(r), r.n)).collect();
    shapes.sort_by_key(|&(m, n)| (n, m));
    shapes.dedup();
    let peers = [TILELANG_KERNEL, TRITON_KERNEL, TORCH_KERNEL];
    if shapes.is_empty() || !f32_rows.iter().any(|r| peers.contains(&r.kernel.as_str())) {
        return None;
    }
    let peak = machine.peak_gbps.filter(|p| *p > 0.0);
    let mut s = String::from("| M × N | ours, automatic (µs) | TileLang (µs) | Triton (µs) | torch.sum (µs) | best peer ÷ ours | ours: % of peak |\n|---|--:|--:|--:|--:|--:|--:|\n");
    let (mut wins, mut compared) = (0, 0);
    let mut losses: Vec<String> = Vec::new();
    let (mut at_90, mut long_shapes, mut lowest): (usize, usize, Option<(f64, usize, usize)>) = (0, 0, None);
    for &(m, n) in &shapes {
        let ours = get(AUTO_KERNEL, m, n).expect("shapes come from our rows");
        let cells: Vec<Option<&Row>> = peers.iter().map(|k| get(k, m, n)).collect();
        let best = cells.iter().flatten().min_by(|a, b| a.median_us.total_cmp(&b.median_us));
        let cell = |r: Option<&Row>| r.map_or("–".to_string(), |r| if best.is_some_and(|b| std::ptr::eq(*b, r)) && r.median_us < ours.median_us { format!("**{:.2}**", r.median_us) } else { format!("{:.2}", r.median_us) });
        let ours_cell = if best.is_none_or(|b| ours.median_us <= b.median_us) { format!("**{:.2}**", ours.median_us) } else { format!("{:.2}", ours.median_us) };
        let ratio = best.map_or("–".to_string(), |b| format!("{:.3}", b.median_us / ours.median_us));
        let pct = peak.map(|p| 100.0 * ours.gbps() / p);
        writeln!(s, "| {} × {} | {ours_cell} | {} | {} | {} | {ratio} | {} |", shape_name(m), shape_name(n), cell(cells[0]), cell(cells[1]), cell(cells[2]),
            pct.map_or("–".into(), |p| format!("{p:.1} %"))).unwrap();
        if let Some(b) = best {
            compared += 1;
            if ours.median_us <= b.median_us {
                wins += 1;
            } else {
                losses.push(format!("{} × {} ({} {:.2} µs against our {:.2} µs, {:.1} % faster)", shape_name(m), shape_name(n), peer_name(&b.kernel), b.median_us, ours.median_us,
                    100.0 * (ours.median_us / b.median_us - 1.0)));
            }
        }
        if let (Some(p), true) = (pct, n >= 256) {
            long_shapes += 1;
            at_90 += usize::from(p >= 90.0);
            if lowest.is_none_or(|(l, _, _)| p < l) {
                lowest = Some((p, m, n));
            }
        }
    }
    writeln!(s).unwrap();
    write!(s, "Our automatic row sum was at least as fast as the fastest of TileLang, Triton and `torch.sum(x, dim=1)` at {wins} of {compared} shapes").unwrap();
    if losses.is_empty() {
        writeln!(s, ".").unwrap();
    } else {
        writeln!(s, "; it was slower at {}.", losses.join(", ")).unwrap();
    }
    if let Some((p, m, n)) = lowest {
        writeln!(s, "At {at_90} of the {long_shapes} shapes with rows of 256 values or more it read at 90 % of the theoretical peak or better; its lowest share there was {p:.1} % (at {} × {}).",
            shape_name(m), shape_name(n)).unwrap();
    }
    writeln!(s).unwrap();
    writeln!(s, "*f32, M·N = 2²⁸ but for the first shape; measured on an {} on {} by `{}` and `python3 plots/tile_peers.py` in the same run, the same way: checked first, inputs rotated past L2, CUDA events around graphs of back-to-back calls.*",
        machine.gpu, machine.date, machine.command).unwrap();
    Some(s)
}

fn peer_name(kernel: &str) -> &'static str {
    match kernel {
        TILELANG_KERNEL => "TileLang",
        TRITON_KERNEL => "Triton",
        _ => "torch.sum",
    }
}

fn shape_name(v: usize) -> String {
    if v.is_power_of_two() && v >= 1 << 14 { format!("2^{}", v.trailing_zeros()) } else { v.to_string() }
}

/// The whole-array sums of the tile languages against the book's fastest kernel and torch.sum
/// at each size both measured (f32, rotated inputs); `None` where there is nothing to compare.
pub fn sums_comparison(tile: &(Machine, Vec<Row>), bench: Option<&(Machine, Vec<Row>)>) -> Option<String> {
    let (machine, rows) = tile;
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.n).collect();
    sizes.sort();
    sizes.dedup();
    if sizes.is_empty() {
        return None;
    }
    let bench_rows: &[Row] = bench.map_or(&[], |(_, r)| r.as_slice());
    let ours = |n: usize| {
        bench_rows.iter()
            .filter(|r| r.n == n && r.dtype == Dtype::F32 && r.cache == Cache::Rotated && r.status == crate::records::bench::Status::Correct && r.chapter > 0 && !r.is_copy())
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
    };
    let torch = |n: usize| bench_rows.iter().find(|r| r.n == n && r.kernel == "torch_sum" && r.cache == Cache::Rotated);
    let get = |k: &str, n: usize| rows.iter().find(|r| r.kernel == k && r.n == n);
    let mut s = String::from("| n | TileLang, passes (µs) | Triton, atomics (µs) | torch.sum (µs) | the book's fastest kernel (µs) |\n|---|--:|--:|--:|--:|\n");
    let (mut ours_best, mut compared) = (0, 0);
    for &n in &sizes {
        let cells = [get(TILELANG_SUM, n), get(TRITON_SUM, n), torch(n)];
        let o = ours(n);
        let cell = |r: Option<&Row>| r.map_or("–".to_string(), |r| format!("{:.2}", r.median_us));
        let ours_cell = o.map_or("–".to_string(), |r| format!("{:.2} ({})", r.median_us, r.kernel));
        writeln!(s, "| 2^{} | {} | {} | {} | {ours_cell} |", n.trailing_zeros(), cell(cells[0]), cell(cells[1]), cell(cells[2])).unwrap();
        if let (Some(o), Some(best)) = (o, cells.iter().flatten().min_by(|a, b| a.median_us.total_cmp(&b.median_us))) {
            compared += 1;
            ours_best += usize::from(o.median_us <= best.median_us);
        }
    }
    writeln!(s).unwrap();
    if compared > 0 {
        writeln!(s, "The book's fastest kernel at each size was at least as fast as the tile languages and `torch.sum` at {ours_best} of the {compared} sizes all of them were measured at.\n").unwrap();
    }
    writeln!(s, "*f32; the tile languages measured by `python3 plots/tile_peers.py` on an {} on {}, the book's kernels and `torch.sum` by `reduction bench` and `plots/peers.py` (their own run), the same way.*", machine.gpu, machine.date).unwrap();
    Some(s)
}

/// What the tile chapter says where a measurement is missing.
fn not_yet(c: &Context, what: &str) -> Result<String> {
    Ok(format!("*{what} not yet measured on the {}: `cargo run --release -- rows-bench` (it runs `python3 plots/tile_peers.py` after its own measurement; on a GPU host without Rust, `bash tests/gpu-host.sh rows`).*\n", c.book()?.0.gpu))
}

/// `tile_lines.md`: the lines of code of each listing.
pub fn lines_markdown(_: &Context) -> Result<String> {
    let mut lines = String::from("| listing | lines of code |\n|---|--:|\n");
    for (label, count) in line_counts()? {
        writeln!(lines, "| {label} | {count} |").unwrap();
    }
    lines.push_str("\n*Counted by `reduction::book::chapters::tile::line_counts` in the files the listings above include: lines that are not blank and not comments.*\n");
    Ok(lines)
}

/// `tile_generated.md`: what the CUDA TileLang generated does ([`generated_facts`]).
pub fn generated_markdown(c: &Context) -> Result<String> {
    match &c.tile_source {
        Some(source) => Ok(generated_facts(source).into_iter().map(|f| format!("- {f}\n")).collect()),
        None => not_yet(c, "The generated source"),
    }
}

/// `tile_rows.md`: the tile languages' row sums beside the book's ([`rows_comparison`]).
pub fn rows_markdown(c: &Context) -> Result<String> {
    match c.row_sums.as_ref().and_then(|(m, r)| rows_comparison(m, r)) {
        Some(text) => Ok(text),
        None => not_yet(c, "The tile-language row sums"),
    }
}

/// `tile_sums.md`: the tile languages' whole-array sums beside the book's ([`sums_comparison`]).
pub fn sums_markdown(c: &Context) -> Result<String> {
    match c.tile_sums.as_ref().and_then(|tile| sums_comparison(tile, Some(c.book().ok()?))) {
        Some(text) => Ok(text),
        None => not_yet(c, "The tile-language sums"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_lines_skip_comments_and_blanks() {
        let text = "x\n// ANCHOR: a\n// a comment\n\nint x = 1;\n#pragma unroll\n  # py comment\nfoo()\n// ANCHOR_END: a\ny\n";
        assert_eq!(code_lines(text, "a"), Some(2));
        assert_eq!(code_lines(text, "b"), None);
    }

    #[test]
    fn facts_come_from_the_source() {
        let src = "// from somewhere\nextern \"C\" __global__ void __launch_bounds__(128, 1) k(const float* A) {\n#pragma unroll\n *(float4*)(tile) = *(float4*)(A + (((int)blockIdx.x) * 4));\n __syncthreads(); x = tl::AllReduce<tl::SumOp, 64, 1>::run(x, workspace);\n}\n";
        let facts = generated_facts(src).join("\n");
        assert!(facts.contains("blocks of 128 threads") && facts.contains("float4") && facts.contains("64 threads that share a row"), "{facts}");
        assert!(facts.contains("32-bit") && facts.contains("No loop over the grid"), "{facts}");
        let plain = generated_facts("__launch_bounds__(256) for (i = blockIdx.x; i < n; i += gridDim.x) s += A[i];").join("\n");
        assert!(plain.contains("not read with `float4`") && !plain.contains("No loop over the grid"), "{plain}");
    }
}
