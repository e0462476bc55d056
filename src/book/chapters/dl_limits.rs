//! What bounds the deep-learning kernels on this GPU, for "Softmax, online": the yardsticks of
//! the same run (`dl_ceilings.md`), the copy at every tile shape (`dl_copy_shapes.md`) and what
//! Nsight Compute saw of the launches below the goal (`dl_ncu.md`).

use super::dl::{peak, shape, team_of};
use crate::book::context::Context;
use crate::error::Result;
use crate::records::dl::{self as records, Loaded};
use std::fmt::Write as _;

/// The yardsticks measured in the same run.
pub fn ceilings(l: &Loaded) -> String {
    let p = peak(&l.machine);
    let mut out = String::from("| yardstick (2^28 f32) | GB/s | % of peak |\n|---|---|---|\n");
    let mut any = false;
    for r in l.ours.iter().filter(|r| r.op == "copy" || r.op == "read") {
        any = true;
        writeln!(out, "| {} | {:.0} | {:.1}% |", r.title, r.gbps(), r.percent_of(p)).unwrap();
    }
    if any {
        out
    } else {
        "*No copy or read-only yardstick in this run.*\n".into()
    }
}

/// `dl_copy_shapes.md`: the tiled copy at every shape (`<gpu-slug>-copy-shapes.csv`, written by
/// `reduction dl-bench`), in µs and % of peak.
pub fn copy_shapes_markdown(c: &Context) -> Result<String> {
    let gpu = &c.book()?.0.gpu;
    let path = records::copy_shapes_file(&c.data_dir, &crate::records::slug(gpu));
    if !path.is_file() {
        return Ok(format!("*The copy's tile shapes are not yet measured on the {gpu} (`reduction dl-bench` does).*\n"));
    }
    let (machine, rows) = records::read_csv::<records::CopyShapeTime>(&path)?;
    Ok(copy_shapes_table(&rows, peak(&machine)))
}

fn copy_shapes_table(rows: &[records::CopyShapeTime], peak: f64) -> String {
    let mut out = String::from("| copy tile | plain stores | evict-first stores |\n|---|--:|--:|\n");
    let mut shapes: Vec<(u32, u32)> = rows.iter().map(|r| (r.block, r.packs)).collect();
    shapes.dedup();
    for (block, packs) in shapes {
        let cell = |evict_first: bool| {
            rows.iter().find(|r| (r.block, r.packs, r.evict_first) == (block, packs, evict_first)).map_or("—".to_string(), |r| {
                let gbps = 8.0 * r.n as f64 / r.median_us / 1e3;
                format!("{:.1} µs ({:.1}%)", r.median_us, gbps / peak * 100.0)
            })
        };
        writeln!(out, "| {block} threads × {packs} pack{} | {} | {} |", if packs == 1 { "" } else { "s" }, cell(false), cell(true)).unwrap();
    }
    out
}

/// The exchanges of `plots/dl_long_rows.cu`, in the table's order: (variant, column title).
const EXCHANGES: [(&str, &str); 5] = [
    ("barrier", "read through DSMEM, two cluster barriers"),
    ("push", "pushed, one cluster barrier"),
    ("mbarrier", "pushed, a transaction barrier"),
    ("none", "no exchange (wrong), clusters"),
    ("nocluster", "no exchange (wrong), no clusters"),
];

/// `dl_cluster_exchange.md`: the long-row softmax's cluster exchanges against the same clusters
/// with no exchange (`<gpu-slug>-long-rows.csv` under `plots/data/dl/experiments/`).
pub fn cluster_exchange_markdown(c: &Context) -> Result<String> {
    let gpu = &c.book()?.0.gpu;
    let path = records::exchange_file(&c.data_dir, &crate::records::slug(gpu));
    if !path.is_file() {
        return Ok(format!("*The cluster exchanges are not yet measured on the {gpu} (`plots/dl_long_rows.cu`).*\n"));
    }
    let (header, rows) = crate::records::csv::read::<records::ExchangeTime>(&path)?;
    let peak = crate::records::csv::value(&header, "peak_gbps").and_then(|v| v.parse::<f64>().ok()).unwrap_or(f64::NAN);
    Ok(exchange_table(&rows, peak))
}

fn exchange_table(rows: &[records::ExchangeTime], peak: f64) -> String {
    let mut out = String::from("*Softmax, M·N = 2^28, each row held in registers by a cluster of C blocks × threads × 16-byte packs; µs (% of peak), \
        median of 15 CUDA-event runs; one run of `plots/dl_long_rows.cu`. The last two columns skip the exchange, so their outputs are wrong \
        (the check says so): they are what the launch costs without it. A team of one block (C = 1) needs no exchange and is right.*\n\n| type | N | team |");
    for (_, title) in EXCHANGES {
        write!(out, " {title} |").unwrap();
    }
    out.push_str("\n|---|--:|---|");
    out.push_str(&"--:|".repeat(EXCHANGES.len()));
    out.push('\n');
    let mut teams: Vec<(&str, usize, u32, u32, u32)> = rows.iter().map(|r| (r.dtype.as_str(), r.n, r.clusters, r.threads, r.vpt)).collect();
    teams.dedup();
    let time = |t: (&str, usize, u32, u32, u32), variant: &str| {
        rows.iter().find(|r| (r.dtype.as_str(), r.n, r.clusters, r.threads, r.vpt) == t && (r.variant == variant || (variant == "nocluster" && r.variant == "block"))).and_then(|r| r.median_us.map(|us| (us, r)))
    };
    for &t in &teams {
        write!(out, "| {} | 2^{} | {} × {} × {} |", t.0, t.1.trailing_zeros(), t.2, t.3, t.4).unwrap();
        for (variant, _) in EXCHANGES {
            match time(t, variant) {
                Some((us, r)) => write!(out, " {us:.1} ({:.1}%) |", r.gbps.unwrap_or(f64::NAN) / peak * 100.0).unwrap(),
                None => out.push_str(" — |"),
            }
        }
        out.push('\n');
    }
    // What the exchanges cost over the same clusters with no exchange, per type.
    for dtype in ["f32", "bf16"] {
        let cost = |variant: &str| -> Vec<f64> {
            teams.iter().filter(|t| t.0 == dtype && t.2 > 1).filter_map(|&t| Some(time(t, variant)?.0 / time(t, "none")?.0 - 1.0)).collect()
        };
        let (two, one, tx) = (cost("barrier"), cost("push"), cost("mbarrier"));
        if tx.is_empty() {
            continue;
        }
        let most = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 100.0;
        let fastest = teams.iter().filter(|t| t.0 == dtype && t.2 > 1).filter(|&&t| {
            let right = |v: &str| time(t, v).filter(|(_, r)| r.checked == "right").map(|(us, _)| us);
            matches!((right("mbarrier"), right("push"), right("barrier")), (Some(m), Some(p), Some(b)) if m <= p && m <= b)
        }).count();
        write!(out, "\n{dtype}: over the same clusters with no exchange, the two-barrier exchange took up to {:.1}% longer, the pushed one with one barrier \
            up to {:.1}%, the transaction barrier up to {:.1}%; it was the fastest of the three (and right) at {fastest} of {} teams.\n",
            most(&two), most(&one), most(&tx), tx.len()).unwrap();
    }
    out
}

/// `dl_untested_packs.md`: the planner's teams before and after the paths without a test per
/// pack, from one call on the GPU host ([`records::untested_packs_files`]).
pub fn untested_packs_markdown(c: &Context) -> Result<String> {
    let files = records::untested_packs_files(&c.data_dir, &crate::records::slug(&c.book()?.0.gpu));
    before_after_markdown(c, files, "The paths without a test per pack are not yet measured against the tested ones", |_| true, "*-packs-*.csv",
        ["with a test per pack", "without"])
}

/// `dl_exp_fma.md`: the planner's teams before and after e^(x − m) in one FMA (and f16/bf16
/// maxima kept packed), from one call on the GPU host ([`records::exp_fma_files`]).
pub fn exp_fma_markdown(c: &Context) -> Result<String> {
    let files = records::exp_fma_files(&c.data_dir, &crate::records::slug(&c.book()?.0.gpu));
    before_after_markdown(c, files, "The exponent in one FMA is not yet measured against the add and multiply", |r| r.op != COLUMNS, "*-exp-*.csv",
        ["(x − m)·log2e", "one FMA"])
}

/// `dl_columns_shared.md`: LayerNorm's dγ/dβ before and after its conflict-free shared memory,
/// from the same call as [`exp_fma_markdown`] (the two changes were measured together).
pub fn columns_shared_markdown(c: &Context) -> Result<String> {
    let files = records::exp_fma_files(&c.data_dir, &crate::records::slug(&c.book()?.0.gpu));
    before_after_markdown(c, files, "The column kernel's shared-memory layouts are not yet measured against each other", the_column_kernel, "*-exp-*.csv",
        ["lane-major", "lane-minor"])
}

/// `dl_columns_wave.md`: LayerNorm's dγ/dβ under the plan of 8 blocks an SM and under one wave,
/// from one call ([`records::columns_wave_files`]).
pub fn columns_wave_markdown(c: &Context) -> Result<String> {
    let files = records::columns_wave_files(&c.data_dir, &crate::records::slug(&c.book()?.0.gpu));
    before_after_markdown(c, files, "The column kernel's one-wave plan is not yet measured against the plan of 8 blocks an SM", the_column_kernel,
        "*-columns-*.csv", ["8 blocks an SM", "one wave"])
}

/// `dl_ce_mean.md`: cross-entropy before and after the last block loaded the mean's partials 8 at
/// a time, from one call ([`records::ce_mean_files`]).
pub fn ce_mean_markdown(c: &Context) -> Result<String> {
    let files = records::ce_mean_files(&c.data_dir, &crate::records::slug(&c.book()?.0.gpu));
    before_after_markdown(c, files, "Cross-entropy's mean with its partials loaded 8 at a time is not yet measured against one at a time", |_| true,
        "*-ce-mean-*.csv", ["one at a time", "8 in flight"])
}

/// The book's column kernel, not the two wrong layouts measured beside it.
fn the_column_kernel(r: &records::DlRow) -> bool {
    r.op == COLUMNS && r.kernel == records::kernel_name(COLUMNS)
}

/// A before/after table from the two files of one call, the rows that `keep` keeps; a sentence
/// that says what is missing where a file is.
fn before_after_markdown(c: &Context, [before, after]: [std::path::PathBuf; 2], missing: &str, keep: fn(&records::DlRow) -> bool, files: &str,
                         labels: [&str; 2]) -> Result<String> {
    if !before.is_file() || !after.is_file() {
        return Ok(format!("*{missing} on the {}.*\n", c.book()?.0.gpu));
    }
    let (machine, before) = records::read_csv::<records::DlRow>(&before)?;
    let (_, after) = records::read_csv::<records::DlRow>(&after)?;
    let kept = |rows: Vec<records::DlRow>| rows.into_iter().filter(keep).collect::<Vec<_>>();
    Ok(before_after_table(&kept(before), &kept(after), peak(&machine), files, labels))
}

const COLUMNS: &str = "layer_norm_bwd_gamma_beta";

/// The same cases from two builds run one after the other, each case's time before and after and
/// the gain, then one sentence an op with its range.
fn before_after_table(before: &[records::DlRow], after: &[records::DlRow], peak: f64, files: &str, [was, is]: [&str; 2]) -> String {
    let mut out = format!(
        "*The planner's team of each op, µs (% of peak), median of 15 CUDA-event runs; the two builds run one after the other \
        in one call on the GPU host (`reduction dl-bench --planner-only`, files `plots/data/dl/experiments/{files}`).*\n\n\
        | op | type | M × N | team | {was} | {is} | faster by |\n|---|---|---|---|--:|--:|--:|\n",
    );
    let mut gains: Vec<(&str, f64)> = Vec::new();
    for b in before {
        let Some(a) = after.iter().find(|a| (&a.op, a.dtype, a.rows, a.n) == (&b.op, b.dtype, b.rows, b.n)) else { continue };
        let gain = b.median_us / a.median_us - 1.0;
        gains.push((b.op.as_str(), gain));
        writeln!(out, "| {} | {} | {} | {} | {:.1} ({:.1}%) | {:.1} ({:.1}%) | {:+.1}% |", b.op, b.dtype, shape(b.rows, b.n),
            if a.op == COLUMNS { format!("strips × chunks of rows, {} threads", a.block) } else { team_of(a) },
            b.median_us, b.percent_of(peak), a.median_us, a.percent_of(peak), gain * 100.0).unwrap();
    }
    let mut ops: Vec<&str> = Vec::new();
    for (op, _) in &gains {
        if !ops.contains(op) {
            ops.push(op);
        }
    }
    for op in ops {
        let of: Vec<f64> = gains.iter().filter(|g| g.0 == op).map(|g| g.1 * 100.0).collect();
        let (lo, hi) = (of.iter().copied().fold(f64::INFINITY, f64::min), of.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        write!(out, "\n{op}: from {lo:+.1}% to {hi:+.1}% over the {} case{}.\n", of.len(), if of.len() == 1 { "" } else { "s" }).unwrap();
    }
    out
}

/// `dl_ncu.md`: what Nsight Compute saw of launches below the goal, and of a peer's launch where
/// the peer is faster (`plots/data/dl/ncu/`, `[<peer>-]<op>_<type>_<M>x<N>.txt`); then, for each
/// peer's profile, a sentence setting it beside ours at the same shape.
pub fn ncu_markdown(c: &Context) -> Result<String> {
    use super::operators::{ncu_table, operator_profiles, NcuFolder};
    let dir = records::results_dir(&c.data_dir).join("ncu");
    let profiles = operator_profiles(&dir)?;
    if profiles.is_empty() {
        return Ok(format!("*No Nsight Compute profile of these kernels yet on the {}.*\n", c.book()?.0.gpu));
    }
    let registers_file = c.data_dir.join(crate::records::registers::DL_FILE);
    let build = if registers_file.is_file() { crate::records::registers::read(&registers_file)? } else { Vec::new() };
    let shown = format!("plots/data/{}", crate::records::registers::DL_FILE);
    let folder = NcuFolder {
        dir: &dir,
        shown_as: "plots/data/dl/ncu/",
        launches: "the first of `reduction dl-bench --shapes <M>x<N> --dtypes <type> --ops <op>` (a peer's: the first in a Python program that calls it once)",
        build: (!build.is_empty()).then_some((shown.as_str(), build.as_slice())),
    };
    let mut out = ncu_table(&folder)?;
    let parsed = |stem: &str| profiles.iter().find(|(s, _)| s == stem).and_then(|(s, text)| super::determinism::parse_ncu(s, text).map(|p| (p, text)));
    for (stem, _) in &profiles {
        let Some((peer, ours_stem)) = stem.split_once('-') else { continue };
        let (Some((theirs, their_text)), Some((ours, our_text))) = (parsed(stem), parsed(ours_stem)) else { continue };
        let name = |text: &str| super::entry_ncu::profiled_kernel(text).unwrap_or("?").to_string();
        let more_warps = theirs.registers < ours.registers && theirs.achieved_occupancy > ours.achieved_occupancy && theirs.dram_percent > ours.dram_percent;
        let why = if more_warps { ": fewer registers a thread, more warps waiting on memory at once, DRAM busier" } else { "" };
        writeln!(out, "\nAt {}, {peer}'s `{}` holds {} registers a thread and reaches {:.1}% achieved occupancy, DRAM {:.1}% busy ({:.1} µs under ncu); ours, `{}`, {} registers, {:.1}%, DRAM {:.1}% ({:.1} µs){why}.",
            super::operators::profile_label(ours_stem).map_or_else(|| ours_stem.to_string(), |(label, _)| label), name(their_text), theirs.registers, theirs.achieved_occupancy, theirs.dram_percent, theirs.duration_us,
            name(our_text), ours.registers, ours.achieved_occupancy, ours.dram_percent, ours.duration_us).unwrap();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exchange_table_sets_each_exchange_beside_no_exchange() {
        let text = "# gpu: NVIDIA H200\n# peak_gbps: 4814.3\n\
            dtype,n,rows,clusters,threads,vpt,variant,registers,max_active_clusters,median_us,min_us,max_us,gbps,checked\n\
            f32,32768,8192,1,1024,8,block,64,0,529.09,528,530,4058.6,right\n\
            f32,65536,4096,2,1024,8,barrier,64,66,562.11,561,563,3820.3,right\n\
            f32,65536,4096,2,1024,8,push,64,66,551.78,551,552,3891.8,right\n\
            f32,65536,4096,2,1024,8,mbarrier,64,66,523.20,523,524,4104.5,right\n\
            f32,65536,4096,2,1024,8,none,64,66,520.00,520,521,4129.7,wrong\n\
            f32,65536,4096,2,1024,8,nocluster,64,0,522.91,522,523,4106.9,wrong\n\
            f32,262144,1024,32,1024,8,barrier,64,0,,,,,does not fit\n";
        let (_, rows) = crate::records::csv::from_str::<records::ExchangeTime>(text, "test").unwrap();
        let t = exchange_table(&rows, 4814.3);
        assert!(t.contains("| f32 | 2^16 | 2 × 1024 × 8 | 562.1 (79.4%) | 551.8 (80.8%) | 523.2 (85.3%) | 520.0 (85.8%) | 522.9 (85.3%) |"), "{t}");
        assert!(t.contains("| f32 | 2^15 | 1 × 1024 × 8 | — | — | — | — | 529.1 (84.3%) |"), "{t}");
        assert!(t.contains("| f32 | 2^18 | 32 × 1024 × 8 | — | — | — | — | — |"), "{t}");
        assert!(t.contains("the two-barrier exchange took up to 8.1% longer, the pushed one with one barrier up to 6.1%, the transaction barrier up to 0.6%; \
            it was the fastest of the three (and right) at 1 of 1 teams."), "{t}");
        assert!(!t.contains("bf16:"), "{t}");
    }

    #[test]
    fn the_untested_packs_table_sets_each_case_before_and_after() {
        let head = "# gpu: NVIDIA H200\n# peak_gbps: 4814.3\nkernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows\n";
        let row = |us: &str, team: &str| format!("dl_softmax,17,softmax: the planner's team [{team}],correct,bf16,131072,512,rotated,{us},1,2,3,536870912,536870912,15,m,softmax,2048\n");
        let read = |text: String| crate::records::csv::from_str::<records::DlRow>(&text, "test").unwrap().1;
        let ce = "dl_cross_entropy,19,cross-entropy: the planner's team [cross_entropy_split8_bf16],correct,bf16,131072,512,rotated,180.0,1,2,3,268435456,536870912,15,m,cross_entropy,2048\n";
        let before = read(format!("{head}{}{ce}{}", row("290.0", "softmax_cluster4x8_bf16"), row("290.0", "softmax_cluster4x8_bf16").replace(",2048\n", ",1024\n")));
        let after = read(format!("{head}{}{}{}", row("270.0", "softmax_cluster4x8_bf16"), ce.replace("180.0", "150.0"), row("300.0", "softmax_cluster4x8_bf16").replace(",2048\n", ",1024\n")));
        let t = before_after_table(&before, &after, 4814.3, "*-packs-*.csv", ["with a test per pack", "without"]);
        assert!(t.contains("| softmax | bf16 | 2^11 × 2^17 | cluster 4 × 512 | 290.0 (38.5%) | 270.0 (41.3%) | +7.4% |"), "{t}");
        assert!(t.contains("\nsoftmax: from -3.3% to +7.4% over the 2 cases.\n"), "{t}");
        assert!(t.contains("\ncross_entropy: from +20.0% to +20.0% over the 1 case.\n"), "{t}");
        assert_eq!(t.matches("over the").count(), 2, "one sentence an op: {t}");
        // A case only one build measured is left out, not set beside nothing.
        assert_eq!(before_after_table(&before, &[], 4814.3, "*-packs-*.csv", ["with a test per pack", "without"]).lines().filter(|l| l.starts_with("| softmax")).count(), 0);
    }

    #[test]
    fn the_before_and_after_table_names_the_column_kernel_and_its_labels() {
        let head = "# gpu: NVIDIA H200\n# peak_gbps: 4814.3\nkernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows\n";
        let row = |us: &str| format!("dl_layer_norm_bwd_gamma_beta,20,\"LayerNorm dγ, dβ: strips of columns × chunks of rows\",correct,bf16,4096,256,rotated,{us},1,2,3,67158016,536870912,15,m,layer_norm_bwd_gamma_beta,4096\n");
        let read = |text: String| crate::records::csv::from_str::<records::DlRow>(&text, "test").unwrap().1;
        let t = before_after_table(&read(format!("{head}{}", row("42.0"))), &read(format!("{head}{}", row("28.0"))), 4814.3, "*-exp-*.csv", ["lane-major", "lane-minor"]);
        assert!(t.contains("| lane-major | lane-minor | faster by |"), "{t}");
        assert!(t.contains("| layer_norm_bwd_gamma_beta | bf16 | 2^12 × 2^12 | strips × chunks of rows, 256 threads | 42.0 ("), "{t}");
        assert!(t.contains("+50.0% |"), "{t}");
        assert!(t.contains("files `plots/data/dl/experiments/*-exp-*.csv`"), "{t}");
    }

    #[test]
    fn the_copy_shapes_table_puts_each_tile_on_one_line() {
        let time = |block, packs, evict_first, median_us| records::CopyShapeTime { block, packs, evict_first, n: 1 << 28, median_us };
        let rows = [time(256, 1, false, 513.15), time(256, 1, true, 500.36), time(512, 2, true, 515.36)];
        let t = copy_shapes_table(&rows, 4814.3);
        assert!(t.contains("| 256 threads × 1 pack | 513.1 µs (86.9%) | 500.4 µs (89.1%) |"), "{t}");
        assert!(t.contains("| 512 threads × 2 packs | — | 515.4 µs (86.6%) |"), "{t}");
        assert_eq!(t.lines().count(), 4, "{t}");
    }
}
