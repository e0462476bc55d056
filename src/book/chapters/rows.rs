//! "Row sums" (`book/rows.md`): the table and chart of every strategy at every shape, the f16 and
//! bf16 rows, and what the data says of few rows, from `plots/data/rows/`
//! ([`crate::records::rows`]: ordinary benchmark rows where `n` is the row length N and M is
//! [`rows_of`]).

use crate::book::context::Context;
use crate::book::draw::charts::{line_chart, PlainSeries};
use crate::element::Dtype;
use crate::error::Result;
use crate::records::bench::{Cache, Row, Status};
use crate::records::rows::{rows_of, AUTO_KERNEL, MEASURE_COMMAND, PEERS, TORCH_KERNEL};
use crate::records::Machine;
use crate::rows::Strategy;
use std::fmt::Write as _;

/// The f32 rows: the main table and chart; f16 and bf16 have a table of their own.
fn f32_only(rows: &[Row]) -> Vec<Row> {
    rows.iter().filter(|r| r.dtype == Dtype::F32).cloned().collect()
}

/// The row sums of the book's GPU that have f32 rows: the main table and chart.
fn f32_sums(c: &Context) -> Option<(&Machine, Vec<Row>)> {
    c.row_sums.as_ref().filter(|(_, all)| all.iter().any(|r| r.dtype == Dtype::F32)).map(|(m, all)| (m, f32_only(all)))
}

/// `rows.md`: the f32 row sums at every shape, each strategy and the peers, or how to measure.
pub fn table_markdown(c: &Context) -> Result<String> {
    Ok(match f32_sums(c) {
        Some((machine, rows)) => table(machine, &rows),
        None => format!("*Not yet measured on the {}: run `{MEASURE_COMMAND}` on it (on a GPU host without Rust, \
            `bash tests/gpu-host.sh rows` and copy `$OUT/rows/*.csv` to `plots/data/rows/`), then \
            `cargo run -- bench --plot-only`.*\n", c.book()?.0.gpu),
    })
}

/// `rows_chart.md`: the chart (a nested include), or why there is none.
pub fn chart_markdown(c: &Context) -> Result<String> {
    Ok(match f32_sums(c) {
        Some(_) => "{{#include ../../plots/rows.svg}}\n".to_string(),
        None => format!("*Not yet measured on the {}: no chart yet.*\n", c.book()?.0.gpu),
    })
}

/// `plots/rows.svg`: time per row sum against N; `None` (not drawn) with no f32 row sums.
pub fn chart(c: &Context) -> Result<Option<String>> {
    f32_sums(c)
        .map(|(machine, rows)| {
            let (title, y_desc, series) = chart_series(machine, &rows);
            line_chart(title, y_desc, series)
        })
        .transpose()
}

/// `rows_half.md`: the f16 and bf16 row sums, or that they are not measured.
pub fn half_markdown(c: &Context) -> Result<String> {
    Ok(match c.row_sums.as_ref().and_then(|(machine, all)| half_table(machine, all)) {
        Some(table) => table,
        None => format!("*f16 and bf16 row sums not yet measured on the {}: `{MEASURE_COMMAND}` measures them.*\n", c.book()?.0.gpu),
    })
}

/// `rows_few.md`: what the row sums did with fewer rows than SMs ([`rows_few_sentence`]).
pub fn few_markdown(c: &Context) -> Result<String> {
    let book = &c.book()?.0;
    let sm_count = c.row_sums.as_ref().map_or(book.sm_count, |(m, _)| m.sm_count);
    let f32_sums: Option<Vec<Row>> = c.row_sums.as_ref().map(|(_, rows)| f32_only(rows));
    Ok(rows_few_sentence(&book.gpu, sm_count, f32_sums.as_deref()))
}

/// The series the chart draws: time against N at the M·N most shapes share (the fixed product
/// of the sweep), one line per strategy, the automatic choice and the library peer (dashed).
fn chart_series(machine: &Machine, rows: &[Row]) -> (String, String, PlainSeries) {
    let product = common_product(rows);
    let mut series = Vec::new();
    let names: Vec<(&str, String, bool)> = Strategy::ALL.iter().map(|s| (s.kernel(), format!("{}: {}", s.kernel(), s.title()), false))
        .chain([(AUTO_KERNEL, format!("{AUTO_KERNEL}: the host's choice"), false)])
        .chain(PEERS.iter().map(|&(k, label)| (k, label.to_string(), true)))
        .collect();
    for (kernel, label, dashed) in names {
        let mut points: Vec<(f64, f64)> = rows.iter()
            .filter(|r| r.kernel == kernel && r.bytes == product)
            .map(|r| (r.n as f64, r.median_us))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        if !points.is_empty() {
            series.push((label, points, dashed));
        }
    }
    let values = product / 4;
    let size = if values.is_power_of_two() { format!("2^{}", values.trailing_zeros()) } else { values.to_string() };
    (format!("Row sums of M × N = {size} f32 values, {}: time vs row length N", machine.gpu), "median time per M row sums (µs)".into(), series)
}

/// The bytes per operation that most rows share.
fn common_product(rows: &[Row]) -> usize {
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for r in rows {
        match counts.iter_mut().find(|(b, _)| *b == r.bytes) {
            Some((_, c)) => *c += 1,
            None => counts.push((r.bytes, 1)),
        }
    }
    // The most common; on a tie the largest, so that the sweep wins over a lone small shape.
    counts.into_iter().max_by_key(|&(b, c)| (c, b)).map_or(0, |(b, _)| b)
}

fn find<'a>(rows: &'a [Row], kernel: &str, m: usize, n: usize) -> Option<&'a Row> {
    rows.iter().find(|r| r.kernel == kernel && r.n == n && rows_of(r) == m && r.cache == Cache::Rotated && r.dtype == Dtype::F32)
}

fn power(v: usize) -> String {
    if v.is_power_of_two() && v >= 1 << 14 { format!("2^{}", v.trailing_zeros()) } else { v.to_string() }
}

/// The table of every shape: each strategy's time, the automatic choice, the library peer, the
/// fastest in bold and its bandwidth; then how often the automatic choice was the fastest of
/// the three kernels.
pub fn table(machine: &Machine, rows: &[Row]) -> String {
    let mut shapes: Vec<(usize, usize)> = rows.iter().map(|r| (rows_of(r), r.n)).collect();
    shapes.sort_by_key(|&(m, n)| (n, m));
    shapes.dedup();
    let peers: Vec<(&str, &str)> = PEERS.iter().copied().filter(|(k, _)| rows.iter().any(|r| r.kernel == *k)).collect();
    let has_peer = !peers.is_empty();
    let mut s = String::new();
    let mut header = "| M × N | automatic choice | lanes per row (µs) | block per row (µs) | split rows (µs) | automatic (µs) |".to_string();
    let mut rule = "|---|---|--:|--:|--:|--:|".to_string();
    for (_, heading) in &peers {
        write!(header, " {heading} (µs) |").unwrap();
        rule.push_str("--:|");
    }
    header.push_str(" fastest: GB/s | % of peak |");
    rule.push_str("--:|--:|");
    writeln!(s, "{header}\n{rule}").unwrap();
    let (mut picked_best, mut compared, mut worst): (usize, usize, Option<(f64, usize, usize)>) = (0, 0, None);
    for &(m, n) in &shapes {
        let auto = find(rows, AUTO_KERNEL, m, n);
        let mut kernels: Vec<&str> = Strategy::ALL.iter().map(|s| s.kernel()).collect();
        kernels.push(AUTO_KERNEL);
        kernels.extend(peers.iter().map(|(k, _)| *k));
        let fastest = kernels.iter().filter_map(|k| find(rows, k, m, n)).min_by(|a, b| a.median_us.total_cmp(&b.median_us));
        let cell = |k: &str| match find(rows, k, m, n) {
            Some(r) if fastest.is_some_and(|f| std::ptr::eq(f, r)) => format!("**{:.2}**", r.median_us),
            Some(r) => format!("{:.2}", r.median_us),
            None => "–".into(),
        };
        let pick = auto.and_then(|a| a.title.split_once('(').map(|(_, rest)| rest.trim_end_matches(')').to_string()));
        let mut line = format!("| {} × {} | {} |", power(m), power(n), pick.clone().unwrap_or_else(|| "–".into()));
        for k in &kernels {
            write!(line, " {} |", cell(k)).unwrap();
        }
        match fastest {
            Some(f) => {
                let pct = machine.peak_gbps.filter(|p| *p > 0.0).map(|p| format!("{:.1} %", 100.0 * f.gbps() / p)).unwrap_or_else(|| "–".into());
                write!(line, " {:.1} | {pct} |", f.gbps()).unwrap();
            }
            None => line.push_str(" – | – |"),
        }
        writeln!(s, "{line}").unwrap();
        // The automatic choice against the fastest of the three kernels at this shape.
        let best_kernel = Strategy::ALL.iter().filter_map(|k| find(rows, k.kernel(), m, n)).min_by(|a, b| a.median_us.total_cmp(&b.median_us));
        let chosen = pick.as_deref().and_then(Strategy::parse).and_then(|p| find(rows, p.kernel(), m, n));
        if let (Some(best), Some(chosen)) = (best_kernel, chosen) {
            compared += 1;
            if std::ptr::eq(best, chosen) {
                picked_best += 1;
            } else {
                let slower = chosen.median_us / best.median_us;
                if worst.is_none_or(|(w, _, _)| slower > w) {
                    worst = Some((slower, m, n));
                }
            }
        }
    }
    writeln!(s).unwrap();
    if compared > 0 {
        write!(s, "The automatic choice picked the fastest of the three kernels at {picked_best} of {compared} shapes").unwrap();
        match worst {
            Some((slower, m, n)) => writeln!(s, "; where it did not, its pick took at most {slower:.2}× the fastest one's time (at {} × {}).", power(m), power(n)).unwrap(),
            None => writeln!(s, ".").unwrap(),
        }
        writeln!(s).unwrap();
    }
    let peak = machine.peak_gbps.map(|p| format!(", theoretical peak {p:.0} GB/s")).unwrap_or_default();
    writeln!(s, "*Measured on an {} ({} SMs, {:.0} MiB of L2{peak}; driver CUDA {}, NVRTC {}) on {} by `{}`; inputs rotated through a pool larger than L2, \
        median of CUDA-event timings of graphs of back-to-back calls; every result checked row by row before it was timed.*",
        machine.gpu, machine.sm_count, machine.l2_bytes as f64 / (1 << 20) as f64, machine.driver_cuda, machine.nvrtc, machine.date, machine.command).unwrap();
    if has_peer {
        let names: Vec<&str> = peers.iter().map(|(_, h)| *h).collect();
        writeln!(s, "*{} measured by `python3 plots/tile_peers.py` (which `rows-bench` runs after its own measurement), the same way.*", names.join(", ")).unwrap();
    }
    s
}

/// The f16 and bf16 rows: the automatic choice against `torch.sum(x, dim=1)` on the same type
/// (f32 sums out of both); `None` where neither type was measured.
pub fn half_table(machine: &Machine, rows: &[Row]) -> Option<String> {
    let dtypes: Vec<Dtype> = [Dtype::F16, Dtype::BF16].into_iter().filter(|d| rows.iter().any(|r| r.dtype == *d && r.kernel == AUTO_KERNEL)).collect();
    if dtypes.is_empty() {
        return None;
    }
    let mut shapes: Vec<(usize, usize)> = rows.iter().filter(|r| dtypes.contains(&r.dtype)).map(|r| (rows_of(r), r.n)).collect();
    shapes.sort_by_key(|&(m, n)| (n, m));
    shapes.dedup();
    let mut s = String::new();
    let mut header = "| M × N |".to_string();
    let mut rule = "|---|".to_string();
    for d in &dtypes {
        write!(header, " automatic, {d} (µs) | torch.sum, {d} (µs) | automatic: GB/s | % of peak |").unwrap();
        rule.push_str("--:|--:|--:|--:|");
    }
    writeln!(s, "{header}\n{rule}").unwrap();
    let (mut faster, mut compared) = (0, 0);
    for &(m, n) in &shapes {
        let mut line = format!("| {} × {} |", power(m), power(n));
        for &d in &dtypes {
            let get = |k: &str| rows.iter().find(|r| r.kernel == k && r.dtype == d && r.n == n && rows_of(r) == m && r.cache == Cache::Rotated);
            let (auto, torch) = (get(AUTO_KERNEL), get(TORCH_KERNEL));
            let bold = |r: Option<&Row>, other: Option<&Row>| match r {
                Some(r) if other.is_none_or(|o| r.median_us <= o.median_us) => format!("**{:.2}**", r.median_us),
                Some(r) => format!("{:.2}", r.median_us),
                None => "–".into(),
            };
            let (gbps, pct) = match auto {
                Some(a) => (format!("{:.1}", a.gbps()), machine.peak_gbps.filter(|p| *p > 0.0).map_or("–".into(), |p| format!("{:.1} %", 100.0 * a.gbps() / p))),
                None => ("–".into(), "–".into()),
            };
            write!(line, " {} | {} | {gbps} | {pct} |", bold(auto, torch), bold(torch, auto)).unwrap();
            if let (Some(a), Some(t)) = (auto, torch) {
                compared += 1;
                faster += usize::from(a.median_us <= t.median_us);
            }
        }
        writeln!(s, "{line}").unwrap();
    }
    writeln!(s).unwrap();
    if compared > 0 {
        writeln!(s, "The automatic row sum was at least as fast as `torch.sum(x, dim=1)` on the same type at {faster} of {compared} shapes.\n").unwrap();
    }
    writeln!(s, "*Inputs of 2 bytes a value, summed in f32; bytes read are M·N·2. Measured on an {} by `{}` and `python3 plots/tile_peers.py` on {}.*", machine.gpu, machine.command, machine.date).unwrap();
    Some(s)
}

/// `128 × 2^21`, as the row-sum table writes a shape.
pub fn shape(m: usize, n: usize) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::bench::Status;

    fn row(kernel: &str, title: &str, m: usize, n: usize, median_us: f64) -> Row {
        Row {
            kernel: kernel.into(), chapter: crate::records::rows::CHAPTER, title: title.into(), status: Status::Correct, dtype: Dtype::F32, n, block: 256,
            cache: Cache::Rotated, median_us, min_us: median_us, max_us: median_us, bytes: 4 * m * n, working_set_bytes: 4 * m * n,
            repeats: 15, method: "test".into(),
        }
    }

    fn sample() -> (Machine, Vec<Row>) {
        let machine = Machine { gpu: "Test GPU".into(), sm_count: 132, peak_gbps: Some(4800.0), date: "2026-01-01".into(), command: "reduction rows-bench".into(), ..Default::default() };
        let rows = vec![
            row("rows_warp", "one warp per row", 1 << 20, 1 << 8, 270.0),
            row("rows_block", "one block per row", 1 << 20, 1 << 8, 290.0),
            row("rows_auto", "automatic (warp)", 1 << 20, 1 << 8, 271.0),
            row("rows_block", "one block per row", 16, 1 << 24, 1600.0),
            row("rows_split", "several blocks per row", 16, 1 << 24, 240.0),
            row("rows_auto", "automatic (split)", 16, 1 << 24, 241.0),
            row("rows_warp", "one warp per row", 4096, 64, 4.0),
            row("rows_block", "one block per row", 4096, 64, 3.0),
            row("rows_auto", "automatic (warp)", 4096, 64, 4.1),
        ];
        (machine, rows)
    }

    #[test]
    fn the_table_marks_the_fastest_and_counts_the_automatic_choice() {
        let (machine, rows) = sample();
        let t = table(&machine, &rows);
        assert!(t.contains("| 2^20 × 256 | warp | **270.00** | 290.00 | – | 271.00 |"), "{t}");
        assert!(t.contains("| 16 × 2^24 | split | – | 1600.00 | **240.00** | 241.00 |"), "{t}");
        // 4096 × 64: the block was faster than the warp the host picked, by 4/3.
        assert!(t.contains("fastest of the three kernels at 2 of 3 shapes"), "{t}");
        assert!(t.contains("at most 1.33× the fastest one's time (at 4096 × 64)"), "{t}");
        assert!(t.contains("Test GPU") && !t.contains("torch"), "{t}");
        // 2^28 values (2^30 bytes) in 240 µs: 4473.9 GB/s, 93.2 % of 4800.
        assert!(t.contains("| 4473.9 | 93.2 % |"), "{t}");
    }

    #[test]
    fn the_chart_shows_the_fixed_product_only() {
        let (machine, mut rows) = sample();
        rows.push(row(TORCH_KERNEL, "torch", 16, 1 << 24, 250.0));
        let (title, _, series) = chart_series(&machine, &rows);
        assert!(title.contains("2^28") && title.contains("Test GPU"), "{title}");
        let warp = series.iter().find(|s| s.0.starts_with("rows_warp")).unwrap();
        assert_eq!(warp.1, vec![(256.0, 270.0)], "the 4096 × 64 shape is off the fixed product");
        let torch = series.iter().find(|s| s.0.starts_with("torch")).unwrap();
        assert!(torch.2, "the peer is dashed");
        assert_eq!(series.len(), 5);
        assert!(table(&machine, &rows).contains("torch.sum(x, dim=1) (µs)"));
    }

    #[test]
    fn rows_are_recovered_from_bytes() {
        assert_eq!(rows_of(&row("rows_warp", "", 4096, 64, 1.0)), 4096);
    }
}
