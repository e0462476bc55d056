//! "Across GPUs with NCCL" (`book/multigpu.md`): the all-reduce table (`nccl.md`) and chart
//! (`plots/nccl.svg`), drawn with no GPU from `plots/data/nccl/` ([`crate::records::allreduce`],
//! written by `reduction multigpu allreduce`); the latency–bandwidth model fitted to them and its
//! predictions for 4 and 8 GPUs beside whatever was measured (`nccl_model.md`,
//! `plots/nccl_model.svg`, [`crate::records::nccl_model`]); the closing figures against the
//! published ones (`nccl_published.md`); and one input's totals on 1, 2, 4 and 8 GPUs
//! (`nccl_ranks.md`, from `plots/data/ranks/`, [`crate::records::rank_totals`]).

use crate::book::context::{AllReduceRun, Context};
use crate::book::draw::charts::{bytes_chart, BytesSeries};
use crate::error::Result;
use crate::records::allreduce::{bus_factor, Algorithm, AllReduceHeader, AllReduceRow};
use crate::records::csv;
use crate::records::nccl_model::{self, Fit, Shape};
use crate::records::rank_totals::{Cross, RankTotal};
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

/// The runs of the book's GPU (or, where it has none, every run), in file order.
fn book_runs(c: &Context) -> Vec<&AllReduceRun> {
    let book_slug = c.book_gpu().map(crate::records::slug).or_else(|| c.book_slug.clone());
    let mine: Vec<&AllReduceRun> = c.allreduce.iter().filter(|r| book_slug.as_deref().is_some_and(|slug| crate::records::slug(&r.header.gpus[0]) == slug)).collect();
    if mine.is_empty() { c.allreduce.iter().collect() } else { mine }
}

/// The run the table shows: NCCL's own choice on the most GPUs of the book's GPU, or else of any.
fn shown(c: &Context) -> Option<&AllReduceRun> {
    book_runs(c).into_iter().filter(|r| r.header.algorithm == Algorithm::Default).max_by_key(|r| r.header.ranks())
}

/// `nccl.md`: the chart (a nested include, which mdBook resolves from `book/generated/`) and the
/// table of the run `shown` picks, or the [`not_measured_note`] where nothing was measured.
pub fn table_markdown(c: &Context) -> String {
    match shown(c) {
        Some(run) => format!("{{{{#include ../../plots/nccl.svg}}}}\n\n{}", table(&run.header, &run.rows, run.topology.as_deref())),
        None => not_measured_note(),
    }
}

/// `plots/nccl.svg`: every run of NCCL's own choice, its bus and algorithm bandwidth against
/// message size (the runs of a chosen algorithm are `nccl_model.svg`'s); `None` (not drawn)
/// where nothing was measured.
pub fn chart(c: &Context) -> Result<Option<String>> {
    if !c.allreduce.iter().any(|r| r.header.algorithm == Algorithm::Default) {
        return Ok(None);
    }
    let mut series = Vec::new();
    for (group, run) in c.allreduce.iter().filter(|r| r.header.algorithm == Algorithm::Default).enumerate() {
        let mut sorted: Vec<&AllReduceRow> = run.rows.iter().collect();
        sorted.sort_by_key(|r| r.bytes);
        let (h, ranks) = (&run.header, run.header.ranks());
        series.push(BytesSeries { label: format!("{}: busbw", h.describe()), points: sorted.iter().map(|r| (r.bytes as f64, r.busbw_gbps(ranks))).collect(), group, dashed: false });
        // On two GPUs the bus factor is 1 and the lines coincide: the legend says so.
        let same = if bus_factor(ranks) == 1.0 { " (= busbw on 2 GPUs)" } else { "" };
        series.push(BytesSeries { label: format!("{}: algbw{same}", h.describe()), points: sorted.iter().map(|r| (r.bytes as f64, r.algbw_gbps())).collect(), group, dashed: true });
    }
    let names: Vec<String> = c.allreduce.iter().filter(|r| r.header.algorithm == Algorithm::Default).map(|r| r.header.describe()).collect();
    let title = format!("NCCL all-reduce (f32, sum): {}", names.join(", "));
    bytes_chart("plots/nccl.svg", &title, "bandwidth (GB/s)", &series, "no all-reduce measurements", false).map(Some)
}

// ---------------------------------------------------------------------------------------------
// The model: fitted to the fewest GPUs measured, predicting the rest.

/// GPU counts and algorithms the chapter predicts.
pub const PREDICTED_COUNTS: [usize; 3] = [2, 4, 8];
const PREDICTED_ALGORITHMS: [Algorithm; 2] = [Algorithm::Ring, Algorithm::Tree];

/// The regimes the fit cuts the sizes into: NCCL's latency-bound protocol and its bandwidth one.
pub const REGIMES: usize = 2;

/// The sizes the model's table shows: the latency, and three bandwidths.
const MODEL_SIZES: [usize; 4] = [8, 1 << 20, 64 << 20, 1 << 30];

/// The model's shape for a run or a prediction of `algorithm` (NCCL's own choice is a ring:
/// with NVLS off, the model's tree is never faster).
pub fn shape_of(algorithm: Algorithm) -> Shape {
    match algorithm {
        Algorithm::Tree => Shape::Chain,
        Algorithm::Default | Algorithm::Ring => Shape::Ring,
    }
}

/// `NCCL's choice`, `ring`, `tree`.
fn algorithm_text(a: Algorithm) -> &'static str {
    match a {
        Algorithm::Default => "NCCL's choice",
        Algorithm::Ring => "ring",
        Algorithm::Tree => "tree",
    }
}

/// The run the model is fitted to: NCCL's choice (else any algorithm) on the fewest GPUs (two or
/// more) of the book's GPU; and the fit.
pub fn fitted(c: &Context) -> Option<(&AllReduceRun, std::result::Result<Fit, String>)> {
    let runs = book_runs(c);
    let run = runs.iter().filter(|r| r.header.ranks() >= 2).min_by_key(|r| (r.header.algorithm != Algorithm::Default, r.header.ranks()))?;
    Some((run, nccl_model::fit(&run.rows, run.header.ranks(), shape_of(run.header.algorithm), REGIMES)))
}

/// The measured run of `count` GPUs and `algorithm` of the book's GPU, if any.
fn measured(c: &Context, count: usize, algorithm: Algorithm) -> Option<&AllReduceRun> {
    book_runs(c).into_iter().find(|r| r.header.ranks() == count && r.header.algorithm == algorithm)
}

fn file_name(run: &AllReduceRun) -> String {
    run.file.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default()
}

/// `3349.5 µs`, `11.98 µs`.
fn micros(us: f64) -> String {
    if us >= 100.0 { format!("{us:.0} µs") } else { format!("{us:.2} µs") }
}

/// `nccl_model.md`: the fitted constants, their errors, and the table of predictions for 2, 4
/// and 8 GPUs, ring and tree, with every measured run beside its prediction.
pub fn model_markdown(c: &Context) -> String {
    let Some((run, fit)) = fitted(c) else {
        return "> **Not yet measured.** The model is fitted to an all-reduce run (`plots/data/nccl/`), and there is none: \
                run `reduction multigpu allreduce` on a machine with two or more GPUs.\n"
            .into();
    };
    let fit = match fit {
        Ok(fit) => fit,
        Err(why) => return format!("> **The model does not fit `{}`:** {why}.\n", file_name(run)),
    };
    let p0 = fit.ranks;
    let mut s = format!(
        "*Fitted to `plots/data/nccl/{}` ({}, NCCL {}, {}, {} sizes), by least squares on the relative error, \
         the sizes cut into {} regimes where the fit is best. Everything on {} is a fit; every row of another \
         GPU count without a file of its own is a prediction.*\n\n",
        file_name(run), run.header.describe(), run.header.nccl, algorithm_text(run.header.algorithm), run.rows.len(), fit.regimes.len(), if p0 == 2 { "two GPUs".to_string() } else { format!("{p0} GPUs") }
    );
    s += "| regime (measured sizes) | α per step | β per GPU | sizes fitted | largest error |\n|--|--:|--:|--:|--:|\n";
    for r in &fit.regimes {
        writeln!(s, "| {} to {} | {:.2} µs | {:.1} GB/s | {} | {:.1}% |", bytes_text(r.first_bytes), bytes_text(r.last_bytes), r.alpha_us, r.beta_gbps, r.points, 100.0 * r.max_relative_error).unwrap();
    }
    if let Ok(one) = nccl_model::fit(&run.rows, p0, fit.shape, 1) {
        if let Some(w) = run.rows.iter().max_by(|a, b| one.relative_error(a).abs().total_cmp(&one.relative_error(b).abs())) {
            writeln!(s, "\nOne regime for every size would be off by up to {:.0}% (at {}).", 100.0 * one.relative_error(w).abs(), bytes_text(w.bytes)).unwrap();
        }
    }
    let worst = run.rows.iter().max_by(|a, b| fit.relative_error(a).abs().total_cmp(&fit.relative_error(b).abs()));
    if let Some(w) = worst {
        writeln!(
            s,
            "\nOn {p0} GPUs the model's time is `{}·α + n/β` ({} latency steps); its worst size is {}, measured at {} and modelled at {} ({:+.1}%).",
            fit.shape.latency_steps(p0), fit.shape.latency_steps(p0), bytes_text(w.bytes), micros(w.median_us), micros(fit.time_us(fit.shape, p0, w.bytes as f64)), 100.0 * fit.relative_error(w)
        )
        .unwrap();
    }
    s += "\n| GPUs | algorithm | source | time at 8 B | busbw at 1 MiB | busbw at 64 MiB | busbw at 1 GiB |\n|--:|--|--|--:|--:|--:|--:|\n";
    let mut predicted_only = Vec::new();
    for p in PREDICTED_COUNTS {
        if let Some(m) = measured(c, p, Algorithm::Default) {
            s += &model_row(&fit, p, Algorithm::Default, Some(m));
        }
        for a in PREDICTED_ALGORITHMS {
            let m = measured(c, p, a);
            if m.is_none() && p != p0 {
                predicted_only.push(format!("{p} GPUs ({})", algorithm_text(a)));
            }
            s += &model_row(&fit, p, a, m);
        }
    }
    let (small, eight) = (MODEL_SIZES[0] as f64, *PREDICTED_COUNTS.last().unwrap());
    writeln!(
        s,
        "\nA cell of a measured row holds the measurement, then the model's figure. Every latency step costing α is the \
         model's assumption, and the upper end of what two GPUs allow: were all of the latency paid once per call, \
         8 B on {eight} GPUs would take {} (ring), not {}.",
        micros(fit.time_us_fixed_latency(Shape::Ring, eight, small)), micros(fit.time_us(Shape::Ring, eight, small))
    )
    .unwrap();
    if !predicted_only.is_empty() {
        writeln!(s, "\n*Predictions, not measurements: {} are not measured on a host with that many GPUs (none was lent); each of their rows is the model's.*", predicted_only.join(", ")).unwrap();
    }
    s
}

/// One row of the model's table: measured (with the model beside it) or predicted.
fn model_row(fit: &Fit, p: usize, a: Algorithm, run: Option<&AllReduceRun>) -> String {
    let shape = shape_of(a);
    let source = match run {
        Some(r) => format!("measured (`{}`)", file_name(r)),
        None if p == fit.ranks => "fit".to_string(),
        None => "**prediction**".to_string(),
    };
    let mut row = format!("| {p} | {} | {source} |", algorithm_text(a));
    for (i, bytes) in MODEL_SIZES.into_iter().enumerate() {
        let (model, text): (f64, fn(f64) -> String) = if i == 0 { (fit.time_us(shape, p, bytes as f64), micros) } else { (fit.busbw_gbps(shape, p, bytes as f64), |g| format!("{g:.1} GB/s")) };
        let cell = match run.map(|r| r.rows.iter().find(|x| x.bytes == bytes)) {
            None => text(model),
            Some(None) => format!("— ({})", text(model)),
            Some(Some(x)) => format!("{} ({})", text(if i == 0 { x.median_us } else { x.busbw_gbps(p) }), text(model)),
        };
        row += &format!(" {cell} |");
    }
    row + "\n"
}

/// `plots/nccl_model.svg`: the bus bandwidth of every measured run (solid) and of the model for
/// every GPU count and algorithm of the table (dashed); `None` where there is nothing to fit.
pub fn model_chart(c: &Context) -> Result<Option<String>> {
    let Some((_, Ok(fit))) = fitted(c) else { return Ok(None) };
    // The benchmark's sizes: every power of two from 8 B to 1 GiB.
    let sizes: Vec<f64> = (3..=30).map(|k| (1u64 << k) as f64).collect();
    // One colour for each line of the table (a measurement and its prediction share one).
    const GROUPS: [(usize, Algorithm); 8] = [
        (2, Algorithm::Default), (2, Algorithm::Ring), (4, Algorithm::Ring), (4, Algorithm::Tree),
        (8, Algorithm::Ring), (8, Algorithm::Tree), (4, Algorithm::Default), (8, Algorithm::Default),
    ];
    let group_of = |p: usize, a: Algorithm| GROUPS.iter().position(|&g| g == (p, a)).unwrap_or(1);
    let mut series = Vec::new();
    for p in PREDICTED_COUNTS {
        for a in [Algorithm::Default, Algorithm::Ring, Algorithm::Tree] {
            let group = group_of(p, a);
            if let Some(run) = measured(c, p, a) {
                let mut rows: Vec<&AllReduceRow> = run.rows.iter().collect();
                rows.sort_by_key(|r| r.bytes);
                series.push(BytesSeries { label: format!("{p} GPUs, {}: measured", algorithm_text(a)), points: rows.iter().map(|r| (r.bytes as f64, r.busbw_gbps(p))).collect(), group, dashed: false });
            }
            if a != Algorithm::Default && !(p == fit.ranks && a == Algorithm::Tree) {
                let what = if p == fit.ranks { "model (fit)" } else { "prediction" };
                let label = if p == fit.ranks { format!("{p} GPUs: {what}") } else { format!("{p} GPUs, {}: {what}", algorithm_text(a)) };
                series.push(BytesSeries { label, points: sizes.iter().map(|&b| (b, fit.busbw_gbps(shape_of(a), p, b))).collect(), group, dashed: true });
            }
        }
    }
    bytes_chart("plots/nccl_model.svg", "NCCL all-reduce: measured, and the α–β model's predictions", "bus bandwidth (GB/s)", &series, "no all-reduce measurements", true).map(Some)
}

// ---------------------------------------------------------------------------------------------
// The published figures.

/// A figure published for NCCL's all-reduce on one machine: what, where, and the number.
pub struct Published {
    pub machine: &'static str,
    pub algorithm: &'static str,
    pub busbw_gbps: f64,
    pub source: &'static str,
    pub url: &'static str,
}

/// The figures the chapter holds its own against (quoted, with their sources).
pub const PUBLISHED: [Published; 3] = [
    Published {
        machine: "8 × H200",
        algorithm: "NCCL's choice (NVLS), NCCL 2.20.3, sizes to 4 GiB",
        busbw_gbps: 475.0,
        source: "nccl-tests issue 272",
        url: "https://github.com/NVIDIA/nccl-tests/issues/272",
    },
    Published {
        machine: "8 × H100",
        algorithm: "NVLS (NCCL's default there)",
        busbw_gbps: 480.0,
        source: "nccl-tests issue 212 (an NCCL maintainer)",
        url: "https://github.com/NVIDIA/nccl-tests/issues/212",
    },
    Published {
        machine: "8 × H100",
        algorithm: "ring (NCCL_ALGO=RING)",
        busbw_gbps: 370.0,
        source: "nccl-tests issue 212 (an NCCL maintainer)",
        url: "https://github.com/NVIDIA/nccl-tests/issues/212",
    },
];

/// `nccl_published.md`: the bus bandwidth at 1 GiB per GPU count and algorithm, measured where a
/// run exists and predicted elsewhere, and the published peaks beside them.
pub fn published_markdown(c: &Context) -> String {
    let fit = fitted(c).and_then(|(_, f)| f.ok());
    let largest = 1usize << 30;
    let mut s = format!("| GPUs | algorithm | busbw at {}, this book | source |\n|--:|--|--:|--|\n", bytes_text(largest));
    for p in PREDICTED_COUNTS {
        for a in Algorithm::ALL {
            let cell = match (measured(c, p, a), &fit) {
                (Some(run), _) => run.rows.iter().find(|r| r.bytes == largest).map(|r| (format!("{:.1} GB/s", r.busbw_gbps(p)), format!("measured, `{}`", file_name(run)))),
                (None, Some(fit)) if a != Algorithm::Default => {
                    let what = if p == fit.ranks { "the model (fitted on this many GPUs)" } else { "**prediction** of the model" };
                    Some((format!("{:.1} GB/s", fit.busbw_gbps(shape_of(a), p, largest as f64)), what.to_string()))
                }
                _ => None,
            };
            if let Some((value, source)) = cell {
                writeln!(s, "| {p} | {} | {value} | {source} |", algorithm_text(a)).unwrap();
            }
        }
    }
    writeln!(s, "| 8 | NVLS | — | NVLS is not measured: NVLink multicast stays off on the project's machines |").unwrap();
    s += "\nPublished peaks (the largest bus bandwidth of each sweep, at whatever size it came):\n\n| machine | algorithm | busbw | source |\n|--|--|--:|--|\n";
    for p in &PUBLISHED {
        writeln!(s, "| {} | {} | ~{:.0} GB/s | [{}]({}) |", p.machine, p.algorithm, p.busbw_gbps, p.source, p.url).unwrap();
    }
    let ring = PUBLISHED.iter().find(|p| p.algorithm.starts_with("ring"));
    if let (Some((run, Ok(fit))), Some(ring)) = (fitted(c), ring) {
        let predicted = fit.busbw_gbps(Shape::Ring, 8, largest as f64);
        let beta = fit.regimes.last().map_or(0.0, |r| r.beta_gbps);
        let mut tail: Vec<&AllReduceRow> = run.rows.iter().collect();
        tail.sort_by_key(|r| r.bytes);
        let p0 = run.header.ranks();
        let last: Vec<String> = tail.iter().rev().take(3).rev().map(|r| format!("{:.0} GB/s at {}", r.busbw_gbps(p0), bytes_text(r.bytes))).collect();
        let rising = tail.windows(2).rev().take(2).all(|w| w[1].busbw_gbps(p0) > w[0].busbw_gbps(p0));
        writeln!(
            s,
            "\nThe model's ring on 8 GPUs at {} comes to {predicted:.0} GB/s, {:.0}% of the published ring figure on 8 H100s (NVLink 4 \
             on both). Its ceiling is the β of its last regime, {beta:.0} GB/s, fitted to the {p0}-GPU sizes from {}; the {p0}-GPU bus \
             bandwidth {} at the largest sizes measured ({}): β is an average over a curve that a longer sweep would extend.",
            bytes_text(largest), 100.0 * predicted / ring.busbw_gbps,
            bytes_text(fit.regimes.last().map_or(0, |r| r.first_bytes)),
            if rising { "was still rising" } else { "had levelled off" },
            last.join(", ")
        )
        .unwrap();
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Determinism across GPU counts.

/// `nccl_ranks.md`: the totals of each input and mode on 1, 2, 4 and 8 GPUs as the CPU works them
/// out, whether they are one GPU's bits, and what each GPU host's run found.
pub fn ranks_markdown(c: &Context) -> String {
    let Some((_, _, cpu)) = c.rank_totals.iter().find(|(f, _, _)| f.file_name().is_some_and(|n| n == "cpu.csv")) else {
        return "> **Not yet computed.** `reduction multigpu determinism --simulate` writes `plots/data/ranks/cpu.csv`.\n".into();
    };
    let counts: Vec<usize> = {
        let mut k: Vec<usize> = cpu.iter().map(|r| r.ranks).collect();
        k.sort_unstable();
        k.dedup();
        k
    };
    let mut s = String::from("| input | n | sum |");
    for k in &counts {
        write!(s, " {k} GPU{} |", if *k == 1 { "" } else { "s" }).unwrap();
    }
    s += "\n|--|--:|--|";
    s += &"--:|".repeat(counts.len());
    s += "\n";
    for key in keys(cpu) {
        let rows: Vec<&RankTotal> = cpu.iter().filter(|r| r.key() == key).collect();
        write!(s, "| {} | {} | {} |", key.0, key.1, key.4).unwrap();
        for k in &counts {
            let cell = rows.iter().find(|r| r.ranks == *k).map_or("—".to_string(), |r| format!("`{}`{}", r.total, if r.ranks == 1 { "" } else if r.same_as_one_gpu { " =" } else { " ≠" }));
            write!(s, " {cell} |").unwrap();
        }
        s += "\n";
    }
    let sharded: Vec<&RankTotal> = cpu.iter().filter(|r| r.mode == "sharded" && r.ranks > 1).collect();
    let exact = sharded.iter().filter(|r| r.cross == Cross::Exact && r.distinct == 1).count();
    let orders = sharded.iter().map(|r| r.samples).max().unwrap_or(0);
    writeln!(
        s,
        "\n`=`: the same bits as on one GPU; `≠`: other bits. Worked out on the CPU (`plots/data/ranks/cpu.csv`), kernel 15 on every \
         GPU. In {exact} of the {} sharded sums on two or more GPUs every `f64` add across GPUs is exact in each of the orders tried \
         (every ring rotation in both directions and the pairwise tree: up to {orders}), so no algorithm NCCL picks can change those totals.",
        sharded.len()
    )
    .unwrap();
    let measured: Vec<&(std::path::PathBuf, csv::Header, Vec<RankTotal>)> = c.rank_totals.iter().filter(|(f, _, _)| f.file_name().is_some_and(|n| n != "cpu.csv")).collect();
    if measured.is_empty() {
        s += "\n*On GPUs these totals are not measured yet: no host has run `reduction multigpu determinism`, which sums the same inputs on 1, 2, 4 and 8 GPUs (as many as it has), three times each, and compares every total with this table.*\n";
    }
    for (file, header, rows) in measured {
        let agree = rows.iter().filter(|g| cpu.iter().any(|r| r.key() == g.key() && r.ranks == g.ranks && r.bits == g.bits)).count();
        let repeatable = rows.iter().filter(|g| g.distinct == 1).count();
        let counts: Vec<String> = {
            let mut k: Vec<usize> = rows.iter().map(|r| r.ranks).collect();
            k.sort_unstable();
            k.dedup();
            k.iter().map(|k| k.to_string()).collect()
        };
        writeln!(
            s,
            "\nMeasured by `{}` ({}, NCCL {}, {}): on {} GPU(s), {agree} of {} totals have the CPU's bits, and {repeatable} gave one total in every run.",
            file.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default(),
            csv::value(header, "source").unwrap_or("?"), csv::value(header, "nccl").unwrap_or("?"), csv::value(header, "nccl_algo").unwrap_or("?"),
            counts.join(", "), rows.len()
        )
        .unwrap();
    }
    s
}

/// The distinct (input, n, seed, kernel, mode) of `rows`, in order.
fn keys(rows: &[RankTotal]) -> Vec<(String, usize, u64, String, String)> {
    let mut out = Vec::new();
    for r in rows {
        if !out.contains(&r.key()) {
            out.push(r.key());
        }
    }
    out
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
