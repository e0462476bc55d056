//! "Softmax, online" (`book/dl_softmax.md`) and "Norms, cross-entropy and the backward"
//! (`book/dl_norms.md`): their tables and chart (`book/generated/dl_*.md`, `plots/dl.svg`), drawn
//! from `plots/data/dl/` ([`crate::records::dl`]) with no GPU: the book's rows beside the peers',
//! and what planted bugs returned. The goal's sentences are [`super::dl_goal`]'s; the yardsticks
//! and Nsight Compute's profiles, [`super::dl_limits`]'s. Where nothing was measured, each file
//! says how to measure instead.

use crate::book::context::Context;
use crate::book::draw::charts::{line_chart, PlainSeries};
use crate::element::Dtype;
use crate::error::Result;
use crate::records::dl::{self as records, DlRow, Loaded};
use crate::records::Machine;
use std::fmt::Write as _;

/// The ops of the forward table, in its column order.
pub(super) const FORWARD: [(&str, &str); 5] = [("softmax", "softmax"), ("log_softmax", "log_softmax"), ("layer_norm", "LayerNorm"), ("rms_norm", "RMSNorm"), ("cross_entropy", "cross-entropy")];
pub(super) const BACKWARD: [(&str, &str); 2] = [("softmax_bwd", "softmax backward"), ("layer_norm_bwd_gamma_beta", "LayerNorm dγ, dβ")];

pub(super) fn peak(machine: &Machine) -> f64 {
    machine.peak_gbps.unwrap_or(f64::NAN)
}

/// `2^k` for powers of two, the number otherwise.
pub(super) fn size(n: usize) -> String {
    if n.is_power_of_two() && n >= 1024 {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

pub(super) fn shape(m: usize, n: usize) -> String {
    format!("{} × {}", size(m), size(n))
}

/// The shapes measured for `dtype`, in the sweep's order: M·N = 2^28 by N, then the others.
pub(super) fn shapes(rows: &[DlRow], dtype: Dtype) -> Vec<(usize, usize)> {
    let mut s: Vec<(usize, usize)> = rows.iter().filter(|r| r.dtype == dtype && r.rows > 1).map(|r| (r.rows, r.n)).collect();
    s.sort_by_key(|&(m, n)| (m * n != 1 << 28, n, m));
    s.dedup();
    s
}

pub(super) fn find<'a>(rows: &'a [DlRow], kernel: &str, op: &str, dtype: Dtype, m: usize, n: usize) -> Option<&'a DlRow> {
    rows.iter().filter(|r| r.kernel == kernel && r.op == op && r.dtype == dtype && r.rows == m && r.n == n).min_by(|a, b| a.median_us.total_cmp(&b.median_us))
}

/// The fastest peer of an op and shape.
pub(super) fn best_peer<'a>(peers: &'a [DlRow], op: &str, dtype: Dtype, m: usize, n: usize) -> Option<&'a DlRow> {
    peers.iter().filter(|r| r.op == op && r.dtype == dtype && r.rows == m && r.n == n).min_by(|a, b| a.median_us.total_cmp(&b.median_us))
}

/// A peer's row as a short name: `liger_rms_norm` → `Liger`, with † where it was measured in the
/// peers' own run rather than beside ours.
pub(super) fn peer_name(peer: &DlRow) -> String {
    let name = family_name(&peer.kernel);
    if peer.method.ends_with(records::OWN_RUN) { format!("{name}†") } else { name }
}

fn family_name(kernel: &str) -> String {
    let family = kernel.split('_').next().unwrap_or(kernel);
    match family {
        "torch" if kernel.starts_with("torch_compile") => "torch.compile".into(),
        "torch" => "torch".into(),
        "liger" => "Liger".into(),
        "triton" => "Triton".into(),
        "tilelang" => "TileLang".into(),
        "quack" => "Quack".into(),
        other => other.into(),
    }
}

/// Where some peers come from the peers' own run: what † means.
pub(super) fn own_run_note(l: &Loaded) -> &'static str {
    if l.peers.iter().any(|r| r.method.ends_with(records::OWN_RUN)) {
        " (†: measured in the peers' own run on the same GPU, not in the run beside ours)"
    } else {
        ""
    }
}

/// One op's cell: ours (% of peak), and the fastest peer's, marked where the peer is faster.
fn cell(l: &Loaded, op: &str, dtype: Dtype, m: usize, n: usize) -> String {
    let p = peak(&l.machine);
    let Some(ours) = find(&l.ours, &records::kernel_name(op), op, dtype, m, n) else { return "—".into() };
    let mut s = format!("{:.1}%", ours.percent_of(p));
    if ours.percent_of(p) >= 90.0 {
        s = format!("**{s}**");
    }
    if let Some(peer) = best_peer(&l.peers, op, dtype, m, n) {
        let faster = peer.median_us < ours.median_us;
        write!(s, " · {} {:.1}%{}", peer_name(peer), peer.percent_of(p), if faster { " ▲" } else { "" }).unwrap();
    }
    s
}

/// The forward (or backward) table: one row per shape, one column per op.
pub fn ops_table(l: &Loaded, ops: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for dtype in [Dtype::F32, Dtype::BF16] {
        let sh = shapes(&l.ours, dtype);
        if sh.is_empty() {
            continue;
        }
        let mut body = String::new();
        for (m, n) in sh {
            let cells: Vec<String> = ops.iter().map(|(op, _)| cell(l, op, dtype, m, n)).collect();
            if cells.iter().all(|c| c == "—") {
                continue; // a run over these ops left this shape out
            }
            writeln!(body, "| {} | {} |", shape(m, n), cells.join(" | ")).unwrap();
        }
        // † is explained where this table shows one.
        let note = if body.contains('†') { own_run_note(l) } else { "" };
        writeln!(out, "\n**{dtype}**, % of {:.0} GB/s (bytes: every input read once, every output written once); \
            the fastest peer beside it, ▲ where it is faster than ours{note}:\n", peak(&l.machine)).unwrap();
        write!(out, "| M × N |").unwrap();
        for (_, title) in ops {
            write!(out, " {title} |").unwrap();
        }
        write!(out, "\n|---|").unwrap();
        for _ in ops {
            write!(out, "---|").unwrap();
        }
        out.push('\n');
        out.push_str(&body);
    }
    out
}

/// Softmax three ways: the textbook's three reads, the online pair read twice, the held row.
pub fn three_ways(l: &Loaded) -> String {
    let p = peak(&l.machine);
    let mut out = String::from("| dtype | M × N | three passes | online, read twice | held (read once) |\n|---|---|---|---|---|\n");
    for dtype in [Dtype::F32, Dtype::BF16] {
        for (m, n) in shapes(&l.ours, dtype).into_iter().filter(|&(m, n)| m * n == 1 << 28) {
            let t = |k: &str| find(&l.ours, k, "softmax", dtype, m, n).map_or("—".to_string(), |r| format!("{:.1} µs ({:.1}%)", r.median_us, r.percent_of(p)));
            writeln!(out, "| {dtype} | {} | {} | {} | {} |", shape(m, n), t(records::THREE_PASS), t(records::TWO_PASS), t(&records::kernel_name("softmax"))).unwrap();
        }
    }
    out
}

/// The team of a row of ours, from the entry in its title and its block: `cluster 2 × 1024`,
/// `block × 512`, `split × 512`, `staged block × 128`.
pub(super) fn team_of(r: &DlRow) -> String {
    let entry = r.entry();
    if entry.contains("_staged_") {
        return format!("staged block × {}", r.block);
    }
    let middle = entry.split('_').find(|part| ["lanes", "block", "cluster", "split"].iter().any(|k| part.starts_with(k))).unwrap_or("");
    match middle.strip_prefix("cluster") {
        Some(c) => format!("cluster {} × {}", c.split('x').next().unwrap_or("?"), r.block),
        None => format!("{} × {}", middle.trim_end_matches(|c: char| c.is_ascii_digit()), r.block),
    }
}

/// Long rows: the planner's team beside a cluster and co-resident blocks of 512 threads, forced,
/// and 1024-thread blocks where the planner takes 512 (a column only where a run measured them).
pub fn long_rows(l: &Loaded) -> String {
    let p = peak(&l.machine);
    let (mut behind, mut compared) = (0, 0);
    let mut leaders: std::collections::BTreeMap<String, usize> = Default::default();
    let mut lines: Vec<[String; 8]> = Vec::new();
    for (op, title) in [("softmax", "softmax"), ("rms_norm", "RMSNorm"), ("layer_norm", "LayerNorm"), ("softmax_bwd", "softmax backward")] {
        for dtype in [Dtype::F32, Dtype::BF16] {
            for (m, n) in shapes(&l.ours, dtype).into_iter().filter(|&(_, n)| n >= 32768) {
                let t = |k: String| find(&l.ours, &k, op, dtype, m, n).map_or("—".to_string(), |r| format!("{:.1}%", r.percent_of(p)));
                let Some(ours) = find(&l.ours, &records::kernel_name(op), op, dtype, m, n) else { continue };
                let peer = best_peer(&l.peers, op, dtype, m, n);
                if let Some(peer) = peer {
                    compared += 1;
                    if peer.median_us < ours.median_us {
                        behind += 1;
                        *leaders.entry(peer_name(peer)).or_default() += 1;
                    }
                }
                let peer = peer.map_or("—".to_string(), |r| format!("{} {:.1}%", peer_name(r), r.percent_of(p)));
                lines.push([title.to_string(), dtype.to_string(), shape(m, n), format!("{:.1}% ({})", ours.percent_of(p), team_of(ours)), t(records::cluster_name(op)),
                    t(records::wide_block_name(op)), t(records::split_name(op)), peer]);
            }
        }
    }
    let wide = lines.iter().any(|l| l[5] != "—");
    let mut out = String::from("| op | dtype | M × N | the planner's team | a cluster of 512-thread blocks |");
    out.push_str(if wide { " 1024-thread blocks | co-resident blocks | the fastest peer |\n|---|---|---|---|---|---|---|---|\n" } else { " co-resident blocks | the fastest peer |\n|---|---|---|---|---|---|---|\n" });
    for line in &lines {
        let cells: Vec<&str> = line.iter().enumerate().filter(|&(i, _)| wide || i != 5).map(|(_, c)| c.as_str()).collect();
        writeln!(out, "| {} |", cells.join(" | ")).unwrap();
    }
    if compared > 0 {
        let mut by: Vec<(String, usize)> = leaders.into_iter().collect();
        by.sort_by_key(|b| std::cmp::Reverse(b.1));
        let by: Vec<String> = by.iter().map(|(name, k)| format!("{name} at {k}")).collect();
        let who = if by.is_empty() { String::new() } else { format!(" ({})", by.join(", ")) };
        let note = if lines.iter().any(|l| l[7].contains('†')) { own_run_note(l) } else { "" };
        writeln!(out, "\nAt these lengths a peer is faster than the planner's team at {behind} of the {compared} cases with a peer beside it{who}{note}.").unwrap();
    }
    if let Some(line) = block_against_cluster(l) {
        writeln!(out, "\n{line}").unwrap();
    }
    out
}

/// Softmax f32 at M·N = 2^28: the planner's team at the longest row one block holds beside its
/// team at the shortest row that needs a cluster.
fn block_against_cluster(l: &Loaded) -> Option<String> {
    let p = peak(&l.machine);
    let planned: Vec<&DlRow> = shapes(&l.ours, Dtype::F32).into_iter().filter(|&(m, n)| m * n == 1 << 28 && n >= 32768)
        .filter_map(|(m, n)| find(&l.ours, &records::kernel_name("softmax"), "softmax", Dtype::F32, m, n)).collect();
    let block = planned.iter().filter(|r| team_of(r).starts_with("block")).max_by_key(|r| r.n)?;
    let cluster = planned.iter().filter(|r| team_of(r).starts_with("cluster")).min_by_key(|r| r.n)?;
    let (b, c) = (block.percent_of(p), cluster.percent_of(p));
    let verb = if c < b { "falls short of it" } else { "matches it" };
    Some(format!("Softmax f32: the planner's single block ({}) reaches {b:.1}% at {}; its smallest cluster ({}, at {}) {c:.1}%, and so {verb}.",
        team_of(block), shape(block.rows, block.n), team_of(cluster), shape(cluster.rows, cluster.n)))
}

/// LayerNorm's γ/β gradients in three layouts.
pub fn columns(l: &Loaded) -> String {
    let p = peak(&l.machine);
    let op = "layer_norm_bwd_gamma_beta";
    let mut out = String::from("| dtype | M × N | strips × chunks (ours) | a warp per column | a thread per column |\n|---|---|---|---|---|\n");
    for dtype in [Dtype::F32, Dtype::BF16] {
        for (m, n) in shapes(&l.ours, dtype) {
            let t = |k: &str| find(&l.ours, k, op, dtype, m, n).map_or("—".to_string(), |r| format!("{:.1} µs ({:.1}%)", r.median_us, r.percent_of(p)));
            let ours = t(&records::kernel_name(op));
            if ours == "—" {
                continue;
            }
            writeln!(out, "| {dtype} | {} | {ours} | {} | {} |", shape(m, n), t(records::TEAM_PER_COLUMN), t(records::THREAD_PER_COLUMN)).unwrap();
        }
    }
    out
}

/// Bytes of the fused kernels against torch's unfused eager compositions (counted, per value).
pub fn fusion() -> String {
    // Each eager op reads its inputs and writes its output once: a row statistic (max, sum,
    // mean) reads M·N and writes M; an elementwise op reads M·N (and a per-row value) and writes
    // M·N. Counted in values of M·N, the per-row terms left out.
    let rows: [(&str, &str, u32, u32); 5] = [
        ("softmax", "m = x.amax(-1); e = (x - m).exp(); s = e.sum(-1); y = e / s", 2, 1 + 2 + 2 + 1 + 2),
        ("log_softmax", "m = x.amax(-1); d = x - m; s = d.exp().sum(-1); y = d - s.log()", 2, 1 + 2 + 2 + 1 + 2),
        ("LayerNorm", "μ = x.mean(-1); d = x - μ; v = (d * d).mean(-1); y = d * (v + ε).rsqrt() * γ + β", 2, 1 + 2 + 2 + 1 + 2 + 2 + 2),
        ("RMSNorm", "s = (x * x).mean(-1); y = x * (s + ε).rsqrt() * γ", 2, 2 + 1 + 2 + 2),
        ("cross-entropy", "m = x.amax(-1); l = (x - m).exp().sum(-1).log() + m - x.gather(t) (as torch.logsumexp composes it)", 1, 1 + 2 + 2 + 1),
    ];
    let mut out = String::from("| op | as separate eager ops | values moved per value of x, fused | unfused | ratio |\n|---|---|---|---|---|\n");
    for (op, code, fused, unfused) in rows {
        writeln!(out, "| {op} | `{code}` | {fused} | {unfused} | {:.1}× |", unfused as f64 / fused as f64).unwrap();
    }
    out
}

/// What the planted bugs returned, from `<slug>-demos.csv` (the prototype harness writes it).
pub fn demos(text: &str) -> Option<String> {
    let body: String = text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
    let mut reader = ::csv::Reader::from_reader(body.as_bytes());
    let mut out = String::from("| what | launch | M × N | input | largest relative error | rows with a NaN | note |\n|---|---|---|---|---|---|---|\n");
    let mut any = false;
    for rec in reader.records().flatten() {
        let get = |i: usize| rec.get(i).unwrap_or("").to_string();
        let what = match get(0).as_str() {
            "rescale_missing" => "the merge without the rescale".to_string(),
            "shift_missing" => "e^x without the shift".to_string(),
            "f16_large" => "the correct kernel, f16 inputs".to_string(),
            other => other.to_string(),
        };
        let (m, n) = (get(3).parse().unwrap_or(0), get(4).parse().unwrap_or(0));
        let err: f64 = get(6).parse().unwrap_or(f64::NAN);
        let err = if get(0) == "f16_large" { format!("{err:.2} × its bound") } else if err.is_nan() { "NaN".into() } else { format!("{err:.3}") };
        // The harness leaves the rows with a NaN out of the error and of the note's row sums.
        let (err, note) = match get(7).parse::<u64>() {
            Ok(nan_rows) if nan_rows > 0 && err != "NaN" => (format!("{err} (rows without a NaN)"), format!("{} (rows without a NaN)", get(9))),
            _ => (err, get(9)),
        };
        writeln!(out, "| {what} | `{}` | {} | {} | {err} | {} of {} | {note} |", get(1), shape(m, n), get(5), get(7), get(8)).unwrap();
        any = true;
    }
    any.then_some(out)
}

/// The chart's series: GB/s against N at M·N = 2^28 for the forward ops in f32, ours solid, the
/// fastest peer of each dashed.
fn chart_series(l: &Loaded) -> PlainSeries {
    let mut series = Vec::new();
    for (op, title) in FORWARD {
        let mut ours = Vec::new();
        let mut peers = Vec::new();
        for (m, n) in shapes(&l.ours, Dtype::F32).into_iter().filter(|&(m, n)| m * n == 1 << 28) {
            if let Some(r) = find(&l.ours, &records::kernel_name(op), op, Dtype::F32, m, n) {
                ours.push((n as f64, r.gbps()));
            }
            if let Some(r) = best_peer(&l.peers, op, Dtype::F32, m, n) {
                peers.push((n as f64, r.gbps()));
            }
        }
        if !ours.is_empty() {
            series.push((format!("{title} (this book)"), ours, false));
        }
        if !peers.is_empty() {
            series.push((format!("{title}: fastest peer"), peers, true));
        }
    }
    series
}

/// The note of a file with nothing measured yet.
fn missing(c: &Context) -> Result<String> {
    Ok(format!("*Not yet measured on the {}: run `{}` on it (on a GPU host without Rust, the bundle's `bin/reduction dl-bench`), \
        then `cargo run -- bench --plot-only`.*\n", c.book()?.0.gpu, records::MEASURE_COMMAND))
}

/// `dl_*.md` drawn from the loaded results with `f`, or the note saying how to measure.
pub fn from_results(c: &Context, f: fn(&Loaded) -> String) -> Result<String> {
    match &c.dl {
        Some(l) => Ok(f(l)),
        None => missing(c),
    }
}

pub fn forward_markdown(l: &Loaded) -> String {
    format!("{}{}{}", provenance(&l.machine), planned_since_note(l), ops_table(l, &FORWARD))
}

/// The entry the planner takes today for a row of the book's data that was measured with another
/// (a rule added after the run, measured elsewhere); `None` where the row is today's plan, or is
/// not a planned row.
pub(super) fn planned_since(machine: &Machine, r: &DlRow) -> Option<String> {
    use crate::kernels::dl::{plan, DlOp};
    let arch = machine.compute_capability.split_once('.').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))?;
    if machine.sm_count == 0 {
        return None;
    }
    let device = plan::Device { sm_count: machine.sm_count, arch, max_grid_x: i32::MAX as u32 };
    let op = DlOp::parse(&r.op).filter(|op| r.kernel == records::kernel_name(op.name()) && !r.entry().is_empty())?;
    // The clusters the GPU held when it ran are assumed held: only a rule can change the plan.
    let now = plan::plan(op, r.dtype, r.rows as u64, r.n as u64, device, None, |_, _| u32::MAX).ok()??.entry();
    (now != r.entry()).then_some(now)
}

/// `planned_since` of every row, in a sentence; empty where every row is today's plan.
pub fn planned_since_note(l: &Loaded) -> String {
    let changed: Vec<String> = l.ours.iter().filter_map(|r| {
        let now = planned_since(&l.machine, r)?;
        let title = crate::kernels::dl::DlOp::parse(&r.op).map_or(r.op.as_str(), |op| op.title());
        Some(format!("{title} {} {} (`{}`; now `{now}`)", r.dtype, shape(r.rows, r.n), r.entry()))
    }).collect();
    if changed.is_empty() {
        return String::new();
    }
    format!("The planner has changed since this run at {} of its rows, which show the team it took then: {}. \
        The later rules are measured on another GPU (their comments in `src/kernels/dl/choose.rs` say where); \
        `reduction dl-bench` on the {} measures the planner's team of today.\n", changed.len(), changed.join("; "), l.machine.gpu)
}

pub fn provenance(machine: &Machine) -> String {
    let mut s = format!("Measured on the {} on {}: `{}` (compiled by {}).", machine.gpu, machine.date, machine.command, machine.nvrtc);
    if machine.nvrtc.contains("prototype") {
        s.push_str(" These are the prototype's numbers: the same kernel files, at an earlier commit, built with nvcc and \
            launched from CuPy (`plots/dl_prototype/`), before the Rust benchmark had run on a GPU; `reduction dl-bench` \
            replaces them.");
    }
    s.push('\n');
    s
}
pub fn backward_markdown(l: &Loaded) -> String {
    ops_table(l, &BACKWARD)
}

/// `dl_demos.md`: what the planted bugs returned, or that it is not recorded.
pub fn demos_markdown(c: &Context) -> Result<String> {
    Ok(match c.dl_demos.as_deref().and_then(demos) {
        Some(t) => t,
        None => format!("*The planted bugs' outputs are not yet recorded for the {}.*\n", c.book()?.0.gpu),
    })
}

/// `dl_fusion.md` (no data needed).
pub fn fusion_markdown(_: &Context) -> Result<String> {
    Ok(fusion())
}

/// `dl_chart.md`: the chart (a nested include), or why there is none.
pub fn chart_markdown(c: &Context) -> Result<String> {
    Ok(match c.dl.as_ref().map(chart_series) {
        Some(s) if !s.is_empty() => "{{#include ../../plots/dl.svg}}\n".into(),
        _ => format!("*No f32 rows at M·N = 2^28 on the {}: no chart yet.*\n", c.book()?.0.gpu),
    })
}

/// `plots/dl.svg`: bandwidth against N for the forward ops, ours and the fastest peer.
pub fn chart(c: &Context) -> Result<Option<String>> {
    let Some(l) = &c.dl else { return Ok(None) };
    let series = chart_series(l);
    if series.is_empty() {
        return Ok(None);
    }
    line_chart(format!("Fused reductions, M·N = 2^28 f32, {}: bandwidth vs row length N", l.machine.gpu), "GB/s (bytes read once + written once)".into(), series).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::bench::{Cache, Status};

    #[test]
    fn a_row_measured_with_an_earlier_plan_is_named_with_todays() {
        let head = "# gpu: NVIDIA H200\n# compute_capability: 9.0\n# sm_count: 132\nkernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows\n";
        let row = |op: &str, entry: &str, dtype: &str| format!("dl_{op},18,t [{entry}],correct,{dtype},4096,64,rotated,23.0,1,2,3,1,1,15,m,{op},4096\n");
        let text = format!("{head}{}{}{}", row("layer_norm", "layer_norm_block8_bf16", "bf16"), row("softmax", "softmax_block8_bf16", "bf16"), row("layer_norm", "layer_norm_block4_staged_f32", "f32"));
        let (header, rows) = crate::records::csv::from_str::<DlRow>(&text, "test").unwrap();
        let machine = Machine::from_header(&header);
        let now: Vec<Option<String>> = rows.iter().map(|r| planned_since(&machine, r)).collect();
        assert_eq!(now, [Some("layer_norm_block4_staged_bf16".to_string()), None, None]);
        let l = Loaded { machine: machine.clone(), ours: rows.clone(), peers: Vec::new(), refused: Vec::new() };
        let note = planned_since_note(&l);
        assert!(note.contains("at 1 of its rows") && note.contains("LayerNorm bf16 2^12 × 2^12 (`layer_norm_block8_bf16`; now `layer_norm_block4_staged_bf16`)"), "{note}");
        // On a Turing GPU the staged blocks are not today's plan: the earlier team is.
        let turing = Machine { compute_capability: "7.5".into(), ..machine };
        assert_eq!(planned_since(&turing, &rows[0]), None);
    }

    #[test]
    fn a_demo_with_nan_rows_says_its_error_leaves_them_out() {
        let csv = "demo,kernel,dtype,m,n,kind,max_rel_error,nan_rows,rows,note\n\
shift_missing,softmax_block8_f32,f32,64,4096,shifted,3.2e-7,21,64,rows of the output sum to 1.000000 … 1.000000\n\
shift_missing,softmax_block8_f32,f32,64,4096,plain,3.2e-7,0,64,rows of the output sum to 1.000000 … 1.000000\n";
        let t = demos(csv).unwrap();
        assert!(t.contains("| 0.000 (rows without a NaN) | 21 of 64 | rows of the output sum to 1.000000 … 1.000000 (rows without a NaN) |"), "{t}");
        assert!(t.contains("| 0.000 | 0 of 64 | rows of the output sum to 1.000000 … 1.000000 |"), "{t}");
    }

    fn row(kernel: &str, op: &str, status: Status, m: usize, n: usize, us: f64) -> DlRow {
        let bytes = 2 * m * n * 4;
        DlRow { kernel: kernel.into(), chapter: 17, title: kernel.into(), status, dtype: Dtype::F32, n, block: 128, cache: Cache::Rotated, median_us: us,
            min_us: us, max_us: us, bytes, working_set_bytes: bytes, repeats: 7, method: "m".into(), op: op.into(), rows: m }
    }

    #[test]
    fn the_tables_say_what_the_rows_say() {
        let machine = Machine { gpu: "Test GPU".into(), peak_gbps: Some(4000.0), ..Default::default() };
        // 2 GiB in 500 µs: 4295 GB/s, 107% of a 4000 GB/s peak; a peer a little faster.
        // The copy: 2 GiB in 560 µs, 95.9% of peak; ours at 107.4% is within 5% of it.
        let ours = vec![row("dl_softmax", "softmax", Status::Correct, 1 << 18, 1024, 500.0), row("softmax_three_pass", "softmax", Status::Correct, 1 << 18, 1024, 900.0),
            row("copy_tile", "copy", Status::Pace, 1, 1 << 28, 560.0)];
        let peers = vec![row("torch_softmax", "softmax", Status::Peer, 1 << 18, 1024, 490.0)];
        let l = Loaded { machine, ours, peers, refused: vec![] };
        let t = ops_table(&l, &FORWARD);
        assert!(t.contains("| 2^18 × 2^10 | **107.4%** · torch 109.6% ▲ |"), "{t}");
        let g = super::super::dl_goal::goal(&l);
        assert!(g.contains("softmax 107.4%") && g.contains("measured at N = 2^10 of") && g.contains("met at 1 of the 1") && g.contains("A peer is faster at 1 of the 1 (op, type, shape) cases"), "{g}");
        assert!(!g.contains("reached 95.9%: 90% is more than") && g.contains("reached 95.9%."), "a copy above 90% is no excuse: {g}");
        let slow_copy = Loaded { ours: l.ours.iter().map(|r| if r.op == "copy" { DlRow { median_us: 620.0, ..r.clone() } } else { r.clone() }).collect(), ..l.clone() };
        let g = super::super::dl_goal::goal(&slow_copy);
        assert!(g.contains("reached 86.6%: 90% is more than a plain copy reaches") && g.contains("at 1 of 1 (op, type, N)"), "{g}");
        assert!(three_ways(&l).contains("| f32 | 2^18 × 2^10 | 900.0 µs (59.7%) | — | 500.0 µs (107.4%) |"));
        assert!(fusion().contains("4.0×"));
    }

    #[test]
    fn the_long_rows_table_names_each_team_and_its_blocks() {
        let titled = |kernel: &str, entry: &str, block: u32, us: f64| DlRow { title: format!("softmax: x [{entry}]"), block, ..row(kernel, "softmax", Status::Correct, 1 << 13, 1 << 15, us) };
        let ours = vec![titled("dl_softmax", "softmax_block8_f32", 1024, 500.0), titled("dl_softmax_cluster", "softmax_cluster2x8_f32", 512, 625.0),
            titled("dl_softmax_split", "softmax_split8_f32", 512, 1000.0)];
        assert_eq!(team_of(&ours[1]), "cluster 2 × 512");
        let l = Loaded { machine: Machine { gpu: "Test GPU".into(), peak_gbps: Some(4000.0), ..Default::default() }, ours, peers: vec![], refused: vec![] };
        let t = long_rows(&l);
        assert!(t.contains("| softmax | f32 | 2^13 × 2^15 | 107.4% (block × 1024) | 85.9% | 53.7% | — |"), "no run measured 1024-thread blocks: no column: {t}");
        let wide = DlRow { kernel: records::wide_block_name("softmax"), ..l.ours[1].clone() };
        let l = Loaded { ours: [l.ours.clone(), vec![wide]].concat(), ..l };
        assert!(long_rows(&l).contains("| 107.4% (block × 1024) | 85.9% | 85.9% | 53.7% | — |"), "{}", long_rows(&l));
        assert!(!long_rows(&l).contains("smallest cluster"), "no cluster row of the planner's: no comparison");
        let cluster = DlRow { rows: 1 << 12, n: 1 << 16, ..titled("dl_softmax", "softmax_cluster2x8_f32", 1024, 600.0) };
        let l = Loaded { ours: [l.ours.clone(), vec![cluster]].concat(), ..l };
        assert!(long_rows(&l).contains("single block (block × 1024) reaches 107.4% at 2^13 × 2^15; its smallest cluster (cluster 2 × 1024, at 2^12 × 2^16) 89.5%, and so falls short of it."), "{}", long_rows(&l));
    }
}
