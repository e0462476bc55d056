//! "Across GPUs with NCCL" (`book/multigpu.md`): the all-reduce table (`nccl.md`) and chart
//! (`plots/nccl.svg`), drawn with no GPU from `plots/data/nccl/` ([`crate::records::allreduce`],
//! written by `reduction multigpu allreduce`).

use crate::book::context::{AllReduceRun, Context};
use crate::book::draw::charts::{bytes_chart, BytesSeries};
use crate::error::Result;
use crate::records::allreduce::{bus_factor, AllReduceHeader, AllReduceRow};
use std::fmt::Write as _;

/// The sizes the chapter's table shows: 8 B and every eighth size up from it (2^3, 2^6, …), and
/// the largest.
fn table_sizes(rows: &[AllReduceRow]) -> Vec<&AllReduceRow> {
    let largest = rows.iter().map(|r| r.bytes).max().unwrap_or(0);
    let mut shown: Vec<&AllReduceRow> = rows.iter().filter(|r| r.bytes.trailing_zeros() % 3 == 0 || r.bytes == largest).collect();
    shown.sort_by_key(|r| r.bytes);
    shown.dedup_by_key(|r| r.bytes);
    shown
}

/// The note the chapter shows until someone has measured.
pub fn not_measured_note() -> String {
    "> **Not yet measured.** There are no all-reduce results in `plots/data/nccl/` yet, so this \
     page shows no figures. On a machine with two or more GPUs and NCCL, run\n\
     > `cargo run --release -- multigpu allreduce`\n\
     > (or, with the GPU bundle, `bash tests/gpu-host.sh multigpu` and copy `$OUT/nccl/` into\n\
     > `plots/data/nccl/`), then `cargo run --release -- bench --plot-only` to redraw this table\n\
     > and its chart.\n"
        .to_string()
}

/// The chapter's table for one run: the machine line, the sizes of `table_sizes`, what the
/// smallest and the largest message show, and the GPUs' topology where it was recorded.
pub fn table(header: &AllReduceHeader, rows: &[AllReduceRow], topology: Option<&str>) -> String {
    let ranks = header.ranks();
    let mut s = format!(
        "*Measured on {} with NCCL {} (driver CUDA {}, {}) on {} by `{}`.*\n\n",
        header.describe(), header.nccl, header.driver_cuda, header.multicast, header.date,
        if header.command.is_empty() { "reduction multigpu allreduce" } else { &header.command }
    );
    s += "| message | time per all-reduce | algbw | busbw |\n|--:|--:|--:|--:|\n";
    for r in table_sizes(rows) {
        writeln!(s, "| {} | {:.2} µs | {:.2} GB/s | {:.2} GB/s |", bytes_text(r.bytes), r.median_us, r.algbw_gbps(), r.busbw_gbps(ranks)).unwrap();
    }
    // The fixed cost of an all-reduce: what the messages whose bytes take no time (up to 32 KiB)
    // took, fastest and slowest; the smallest message is not the fastest.
    let small: Vec<&AllReduceRow> = rows.iter().filter(|r| r.bytes <= 32 << 10).collect();
    let fastest = small.iter().min_by(|a, b| a.median_us.total_cmp(&b.median_us));
    let slowest = small.iter().max_by(|a, b| a.median_us.total_cmp(&b.median_us));
    let best = rows.iter().max_by(|a, b| a.busbw_gbps(ranks).total_cmp(&b.busbw_gbps(ranks)));
    if let (Some(fast), Some(slow), Some(best)) = (fastest, slowest, best) {
        writeln!(
            s,
            "\nEvery message up to 32 KiB took between {:.2} µs ({}) and {:.2} µs ({}): that flat floor, not the bytes, is the \
             fixed cost of one all-reduce here (its latency). The highest bus bandwidth, {:.1} GB/s, came at {} (algorithm \
             bandwidth {:.1} GB/s; the bus factor for {ranks} GPUs is {:.2}).",
            fast.median_us, bytes_text(fast.bytes), slow.median_us, bytes_text(slow.bytes), best.busbw_gbps(ranks), bytes_text(best.bytes),
            best.algbw_gbps(), bus_factor(ranks)
        )
        .unwrap();
    }
    if let Some(topology) = topology {
        s += "\nHow the GPUs are connected (`nvidia-smi topo -m`, recorded with the run):\n\n```text\n";
        s += without_terminal_codes(topology).trim_end();
        s += "\n```\n";
    }
    s
}

/// `nvidia-smi` underlines its header with terminal escape codes (`ESC [ 4 m`); a page shows
/// them as noise.
fn without_terminal_codes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            // Skip to the end of the sequence: its final byte is a letter.
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `8 B`, `64 KiB`, `1 GiB`.
pub fn bytes_text(bytes: usize) -> String {
    let k = bytes.trailing_zeros();
    if bytes.is_power_of_two() && k >= 10 {
        let (unit, shift) = if k >= 30 { ("GiB", 30) } else if k >= 20 { ("MiB", 20) } else { ("KiB", 10) };
        format!("{} {unit}", bytes >> shift)
    } else {
        format!("{bytes} B")
    }
}

/// The run the table shows: the one with the most GPUs of the book's GPU, or else of any GPU.
fn shown(c: &Context) -> Option<&AllReduceRun> {
    let book_slug = c.book_gpu().map(crate::records::slug).or_else(|| c.book_slug.clone());
    c.allreduce
        .iter()
        .filter(|r| book_slug.as_deref().is_some_and(|slug| crate::records::slug(&r.header.gpus[0]) == slug))
        .max_by_key(|r| r.header.ranks())
        .or_else(|| c.allreduce.iter().max_by_key(|r| r.header.ranks()))
}

/// `nccl.md`: the chart (a nested include, which mdBook resolves from `book/generated/`) and the
/// table of the run `shown` picks, or the [`not_measured_note`] where nothing was measured.
pub fn table_markdown(c: &Context) -> String {
    match shown(c) {
        Some(run) => format!("{{{{#include ../../plots/nccl.svg}}}}\n\n{}", table(&run.header, &run.rows, run.topology.as_deref())),
        None => not_measured_note(),
    }
}

/// `plots/nccl.svg`: every run's bus and algorithm bandwidth against message size; `None` (not
/// drawn) where nothing was measured.
pub fn chart(c: &Context) -> Result<Option<String>> {
    if c.allreduce.is_empty() {
        return Ok(None);
    }
    let mut series = Vec::new();
    for (group, run) in c.allreduce.iter().enumerate() {
        let mut sorted: Vec<&AllReduceRow> = run.rows.iter().collect();
        sorted.sort_by_key(|r| r.bytes);
        let (h, ranks) = (&run.header, run.header.ranks());
        series.push(BytesSeries { label: format!("{}: busbw", h.describe()), points: sorted.iter().map(|r| (r.bytes as f64, r.busbw_gbps(ranks))).collect(), group, dashed: false });
        // On two GPUs the bus factor is 1 and the lines coincide: the legend says so.
        let same = if bus_factor(ranks) == 1.0 { " (= busbw on 2 GPUs)" } else { "" };
        series.push(BytesSeries { label: format!("{}: algbw{same}", h.describe()), points: sorted.iter().map(|r| (r.bytes as f64, r.algbw_gbps())).collect(), group, dashed: true });
    }
    let names: Vec<String> = c.allreduce.iter().map(|r| r.header.describe()).collect();
    let title = format!("NCCL all-reduce (f32, sum): {}", names.join(", "));
    bytes_chart(&title, "bandwidth (GB/s)", &series, "no all-reduce measurements").map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_codes_are_dropped_from_the_topology() {
        assert_eq!(without_terminal_codes("\u{1b}[4mGPU0\tGPU1\u{1b}[0m\nGPU0"), "GPU0\tGPU1\nGPU0");
    }

    #[test]
    fn bytes_read_as_a_person_writes_them() {
        assert_eq!(bytes_text(8), "8 B");
        assert_eq!(bytes_text(512), "512 B");
        assert_eq!(bytes_text(4096), "4 KiB");
        assert_eq!(bytes_text(1 << 30), "1 GiB");
    }
}
