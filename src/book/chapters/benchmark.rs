//! "Measuring your GPU" (`book/benchmark.md`): the fastest kernel at each size against the peak,
//! the read-only ceiling, the copy and cuBLAS (`best.md`), every kernel as a share of the
//! ceiling (`ceiling.md`), the copy as a pace, not a ceiling (`pace.md`), and the read-only
//! kernel's fastest shape at each size with every sum that beat it (`ceiling_shapes.md`).

use super::common::{find, has_ceiling, pct, pct_of_ceiling, pct_of_peak, ceiling_for, size_text, CEILING_NOT_MEASURED};
use crate::element::Dtype;
use crate::kernels::{ReadOnlyShape, READ_ONLY_SHAPES};
use crate::records::bench::{Cache, Machine, Row, Status, COPY_KERNEL, CUBLAS_KERNEL, READ_ONLY_KERNEL};
use std::fmt::Write as _;

/// Every correct kernel from kernel 7 on, and the libraries, as a share of the read-only
/// ceiling at the sizes where bandwidth rules (f32, rotated); or why there is no such table.
pub fn ceiling_table(m: &Machine, rows: &[Row]) -> String {
    if !has_ceiling(rows) {
        return format!("*The read-only ceiling is {CEILING_NOT_MEASURED}; this table then shows each kernel as a share of it.*\n");
    }
    let sizes = [1usize << 24, 1 << 26, 1 << 28, 1 << 30];
    let mut s = String::new();
    let heads: Vec<String> = sizes.iter().map(|n| format!("2^{}", n.trailing_zeros())).collect();
    writeln!(s, "| kernel | {} |\n|---|{}", heads.join(" | "), "--:|".repeat(sizes.len())).unwrap();
    let ceiling: Vec<String> = sizes.iter().map(|&n| match find(rows, READ_ONLY_KERNEL, Dtype::F32, n, Cache::Rotated) {
        Some(c) => format!("{:.1} GB/s ({} of peak)", c.gbps(), pct_of_peak(m, c).replace(" %", "%")),
        None => "–".into(),
    }).collect();
    writeln!(s, "| read-only ceiling | {} |", ceiling.join(" | ")).unwrap();
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.dtype == Dtype::F32 && !r.is_host_visible() && ((r.chapter >= 7 && r.status == Status::Correct) || r.status == Status::Peer || r.is_copy())) {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
    }
    for kernel in kernels {
        let cells: Vec<String> = sizes.iter().map(|&n| {
            find(rows, kernel, Dtype::F32, n, Cache::Rotated).map_or("–".into(), |r| pct_of_ceiling(rows, r).replace(" %", "%"))
        }).collect();
        let name = if kernel == COPY_KERNEL { "`copy` (read + write, a pace)".to_string() } else { format!("`{kernel}`") };
        writeln!(s, "| {name} | {} |", cells.join(" | ")).unwrap();
    }
    // Where a sum beat the read-only kernel, it is no ceiling there: say so, from the data.
    let beaten: Vec<String> = sizes.iter().filter_map(|&n| {
        let ceiling = find(rows, READ_ONLY_KERNEL, Dtype::F32, n, Cache::Rotated)?;
        let best = rows.iter()
            .filter(|r| r.dtype == Dtype::F32 && r.n == n && r.cache == Cache::Rotated && r.status == Status::Correct && r.kernel != READ_ONLY_KERNEL && !r.is_entry_point())
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us))?;
        (best.median_us < ceiling.median_us).then(|| format!(
            "at 2^{} `{}` took {:.2} µs and the read-only kernel {:.2} µs", n.trailing_zeros(), best.kernel, best.median_us, ceiling.median_us))
    }).collect();
    if !beaten.is_empty() {
        writeln!(s, "\nAt these sizes a sum was faster than the read-only kernel: {}. Where the read-only kernel was measured at one \
            shape with a result zeroed before each launch (results older than its shape sweep), that launch and that zeroing \
            are the difference; where it was measured at its best shape, the two are within the spread of the repeats or the \
            sentence under the best-kernel table says by how much they are not.", beaten.join("; ")).unwrap();
    }
    s
}

/// The fastest correct kernel at each size (f32, inputs rotated), against the theoretical peak
/// and the read-only ceiling, with the copy's pace and the cuBLAS peer beside it.
pub fn best_table(m: &Machine, rows: &[Row]) -> String {
    let mut sizes: Vec<usize> = rows.iter().filter(|r| r.dtype == Dtype::F32 && r.status == Status::Correct).map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::new();
    writeln!(s, "| n (f32) | fastest kernel | time (µs) | GB/s | % of peak | % of read-only | read-only GB/s | copy GB/s (pace) | cuBLAS Sasum (µs) |").unwrap();
    writeln!(s, "|--:|---|--:|--:|--:|--:|--:|--:|--:|").unwrap();
    for n in sizes.into_iter().filter(|n| n.is_power_of_two() && n.trailing_zeros() % 2 == 0) {
        let Some(best) = fastest(rows, Dtype::F32, n) else { continue };
        let gbps = |kernel: &str| find(rows, kernel, Dtype::F32, n, Cache::Rotated).map(|r| format!("{:.0}", r.gbps())).unwrap_or_else(|| "–".into());
        let peer = find(rows, CUBLAS_KERNEL, Dtype::F32, n, Cache::Rotated).map(|r| format!("{:.2}", r.median_us)).unwrap_or_default();
        writeln!(s, "| 2^{} | {} | {:.2} | {:.1} | {} | {} | {} | {} | {peer} |", n.trailing_zeros(), best.kernel, best.median_us, best.gbps(),
            pct_of_peak(m, best), pct_of_ceiling(rows, best), gbps(READ_ONLY_KERNEL), gbps(COPY_KERNEL)).unwrap();
    }
    if !has_ceiling(rows) {
        writeln!(s, "\n*The read-only columns: the ceiling is {CEILING_NOT_MEASURED}.*").unwrap();
    }
    s
}

/// The fastest correct kernel of the book at one size (inputs rotated).
pub fn fastest(rows: &[Row], dtype: Dtype, n: usize) -> Option<&Row> {
    rows.iter()
        .filter(|r| r.dtype == dtype && r.n == n && r.status == Status::Correct && r.cache == Cache::Rotated && !r.is_entry_point())
        .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
}

/// The copy against the fastest reduction and the read-only ceiling, at the largest size.
pub fn copy_pace(m: &Machine, rows: &[Row]) -> String {
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

/// The read-only kernel's fastest shape at each size, and any sum that was faster than it anyway
/// (`shapes`: every shape's measurement, [`crate::book::context::Context::read_only_shapes`]).
pub fn ceiling_shapes(rows: &[Row], shapes: Option<&[Row]>) -> String {
    let ceilings: Vec<&Row> = rows.iter().filter(|r| r.is_read_only() && r.dtype == Dtype::F32 && r.cache == Cache::Rotated).collect();
    if ceilings.is_empty() {
        return "*The read-only kernel is not measured on this GPU.*\n".into();
    }
    let mut s = String::new();
    let shaped: Vec<(&Row, ReadOnlyShape)> = ceilings.iter().filter_map(|r| Some((*r, ReadOnlyShape::from_title(&r.title)?))).collect();
    if shaped.is_empty() {
        writeln!(s, "*These results were measured with the read-only kernel at one shape (512 threads × 8 loads, a result zeroed before \
            each launch), before it was measured at every shape: the next `cargo run --release -- bench` measures its 20 shapes.*\n").unwrap();
    } else {
        let count = shapes.map_or(0, |v| v.iter().filter(|r| r.dtype == Dtype::F32 && r.cache == Cache::Rotated).count());
        write!(s, "The read-only kernel's fastest shape at each size (`f32`, of {} shapes measured at each; every shape's time is in \
            `plots/data/read-only/`): ", if count > 0 { count / ceilings.len().max(1) } else { READ_ONLY_SHAPES.len() }).unwrap();
        let list: Vec<String> = shaped.iter().filter(|(r, _)| r.n.is_power_of_two() && r.n.trailing_zeros() % 2 == 0)
            .map(|(r, sh)| format!("{} {} ({:.2} µs)", size_text(r.n), sh.label(), r.median_us)).collect();
        writeln!(s, "{}.\n", list.join(", ")).unwrap();
    }
    // Every correct sum that beat the ceiling of its size, type and cache mode.
    let mut beaten = Vec::new();
    for c in rows.iter().filter(|r| r.is_read_only()) {
        if let Some(best) = rows.iter().filter(|r| r.status == Status::Correct && r.dtype == c.dtype && r.n == c.n && r.cache == c.cache)
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
        {
            if best.median_us < c.median_us {
                beaten.push((c, best));
            }
        }
    }
    if beaten.is_empty() {
        writeln!(s, "No sum was faster than the read-only kernel at any size, element type or cache mode measured: it is a ceiling \
            everywhere in this run.").unwrap();
    } else {
        let worst = beaten.iter().map(|(c, b)| (c, b, c.median_us / b.median_us - 1.0)).max_by(|a, b| a.2.total_cmp(&b.2)).unwrap();
        let within = beaten.iter().all(|(c, b)| b.min_us <= c.median_us && c.min_us <= b.max_us && (c.median_us / b.median_us) < 1.01);
        write!(s, "A sum was faster than the read-only kernel at {} of {} measurements (size, type and cache mode); the largest gap: \
            `{}` at {} {} {}, {:.2} µs against {:.2} ({:.1} %).", beaten.len(), rows.iter().filter(|r| r.is_read_only()).count(),
            worst.1.kernel, size_text(worst.0.n), worst.0.dtype, worst.0.cache.name(), worst.1.median_us, worst.0.median_us, 100.0 * worst.2).unwrap();
        if within {
            writeln!(s, " Every such gap is under 1 % and within the spread of the repeats: there the read-only kernel and the sum are \
                the same time, and the ceiling is one only to within that.").unwrap();
        } else {
            writeln!(s, " Where a sum beats it by more than the spread, the read-only kernel is no ceiling: the tables' \"% of \
                read-only\" columns then pass 100 %.").unwrap();
        }
    }
    s
}

/// `working_set.md`: up to which size a graph's inputs, all of them together, fit in this GPU's
/// L2, so that a replay after the first may find them there (the `working_set_bytes` column of
/// every rotated row of the run).
pub fn working_set(m: &Machine, rows: &[Row]) -> String {
    let rotated: Vec<&Row> = rows.iter().filter(|r| r.cache == Cache::Rotated && r.working_set_bytes > 0 && !r.is_host_visible()).collect();
    if m.l2_bytes == 0 || rotated.is_empty() {
        return "*The L2 size or the graphs' working sets are not recorded in this run.*\n".into();
    }
    let fits = |r: &Row| r.working_set_bytes <= m.l2_bytes;
    // The largest size at which every row's graph fits, and the largest at which any does.
    let mut sizes: Vec<usize> = rotated.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let all_fit = sizes.iter().copied().take_while(|&n| rotated.iter().filter(|r| r.n == n).all(|r| fits(r))).last();
    let any_fit = rotated.iter().filter(|r| fits(r)).map(|r| r.n).max();
    let l2 = crate::error::human_bytes(m.l2_bytes);
    let mut s = match (all_fit, any_fit) {
        (_, None) => format!("In this run every graph read more than this GPU's L2 ({l2}): each sum's input came from DRAM."),
        (Some(a), Some(b)) if a == b => format!("In this run a graph's inputs, all of them together, were smaller than this GPU's L2 ({l2}) for every kernel up to {} values.", size_text(a)),
        (Some(a), Some(b)) => format!("In this run a graph's inputs, all of them together, were smaller than this GPU's L2 ({l2}) for every kernel up to {} values, and for some up to {}.", size_text(a), size_text(b)),
        (None, Some(b)) => format!("In this run a graph's inputs, all of them together, were smaller than this GPU's L2 ({l2}) for some kernels, up to {} values.", size_text(b)),
    };
    if any_fit.is_some() {
        s.push_str(" There a replay after the first can find its inputs in L2, so those times are of sums over inputs that a program summing a few megabytes again and again would also find in L2, not of inputs fresh from DRAM; the peers are timed the same way.");
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::names;

    #[test]
    fn the_working_set_sentence_says_up_to_which_size_graphs_fit_in_l2() {
        let m = Machine { l2_bytes: 60 << 20, ..Machine::default() };
        let at = |kernel: &str, n: usize, ws: usize| Row { working_set_bytes: ws, ..row(kernel, n, 1.0, 1.0, 1.0) };
        let rows = vec![at(names::REDUCE12, 1 << 10, 2 << 20), at(names::REDUCE9, 1 << 10, 1 << 20), at(names::REDUCE12, 1 << 16, 110 << 20), at(names::REDUCE9, 1 << 16, 36 << 20), at(names::REDUCE12, 1 << 20, 1 << 30)];
        let s = working_set(&m, &rows);
        assert!(s.contains("for every kernel up to 2^10 values, and for some up to 2^16.") && s.contains("find its inputs in L2"), "{s}");
        let dram = working_set(&m, &rows[4..]);
        assert!(dram.contains("every graph read more than this GPU's L2") && !dram.contains("find its inputs"), "{dram}");
        assert!(working_set(&Machine::default(), &rows).contains("not recorded"));
    }

    fn row(kernel: &str, n: usize, median: f64, min: f64, max: f64) -> Row {
        Row {
            kernel: kernel.into(), chapter: 0, title: String::new(), status: if kernel == READ_ONLY_KERNEL { Status::Ceiling } else { Status::Correct },
            dtype: Dtype::F32, n, block: 256, cache: Cache::Rotated, median_us: median, min_us: min, max_us: max, bytes: n * 4,
            working_set_bytes: 0, repeats: 15, method: String::new(),
        }
    }

    #[test]
    fn a_sum_faster_than_the_ceiling_is_reported() {
        let ceiling = Row { title: "read-only sum, fastest of 20 shapes: 256 threads × 1 loads".into(), ..row(READ_ONLY_KERNEL, 1 << 22, 7.71, 7.6, 7.8) };
        let rows = vec![ceiling.clone(), row(names::REDUCE12, 1 << 22, 6.74, 6.7, 6.8)];
        let text = ceiling_shapes(&rows, None);
        assert!(text.contains("2^22 256 × 1") && text.contains("at 1 of 1 measurements") && text.contains("no ceiling"), "{text}");
        let fine = vec![ceiling, row(names::REDUCE12, 1 << 22, 7.9, 7.8, 8.0)];
        assert!(ceiling_shapes(&fine, None).contains("it is a ceiling everywhere"));
        // Rows from before the shape sweep say so; none at all, that the ceiling is not measured.
        let old = vec![row(READ_ONLY_KERNEL, 1 << 22, 7.71, 7.6, 7.8)];
        assert!(ceiling_shapes(&old, None).contains("at one shape"));
        assert!(ceiling_shapes(&[], None).contains("not measured"));
    }
}
