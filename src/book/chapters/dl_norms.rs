//! What chapter 18 ("LayerNorm, RMSNorm, cross-entropy") measured of the norms beyond the
//! planner's teams: the changes to their long rows tried and not taken, the switches timed by
//! turns against the default build (`dl_norms_experiments.md`), and LayerNorm beside RMSNorm in
//! Nsight Compute's counts (`dl_norms_instructions.md`). The switches' tables are `switches.rs`'s,
//! the short rows' by call `lanes.rs`'s.

use super::dl::{peak, shape};
use super::turns::{cell, mean, read_turns, rounds, verdict, Verdict};
use crate::book::context::Context;
use crate::element::Dtype;
use crate::error::Result;
use crate::records::bench::Status;
use crate::records::dl as records;
use std::fmt::Write as _;

mod lanes;
mod switches;
pub use lanes::norms_lanes_markdown;
pub use switches::{ahead_by_default, cluster_staged_outcome, gpu_of, lanes_bound_markdown, norms_ahead_markdown, norms_cluster_staged_markdown, norms_clusters_markdown, StagedOutcome};
use switches::switches_table;

/// `dl_norms_experiments.md`: two changes to the norms' long rows, measured on the GPU host and
/// not taken (`plots/data/dl/experiments/`: `<slug>-staged.csv`, `<slug>-staged-ncu.txt`,
/// `<slug>-prefetch.log`, and the patches `staged.diff`, `prefetch.diff`), then the switches
/// timed by turns against the default build (`switches/params-ahead/`, `switches/ln-switches/`).
pub fn norms_experiments_markdown(c: &Context) -> Result<String> {
    let gpu = &c.book()?.0.gpu;
    let slug = crate::records::slug(gpu);
    let dir = records::results_dir(&c.data_dir).join("experiments");
    let staged = dir.join(format!("{slug}-staged.csv"));
    if !staged.is_file() {
        return Ok(format!("*The norms' staged clusters are not measured on the {gpu}.*\n"));
    }
    let (machine, rows) = records::read_csv::<records::DlRow>(&staged)?;
    let read = |name: String| std::fs::read_to_string(dir.join(&name)).map_err(|e| crate::error::io_error(&dir.join(&name), e));
    let ncu = read(format!("{slug}-staged-ncu.txt")).unwrap_or_default();
    let prefetch = read(format!("{slug}-prefetch.log")).unwrap_or_default();
    let switches = dir.join("switches");
    Ok(format!(
        "{}\n{}\n{}\n{}\n{}",
        staged_table(&rows, peak(&machine)),
        ncu_sentence(&ncu),
        prefetch_table(&prefetch),
        switches_table(&switches.join("params-ahead"), None, "RMSNorm's γ loaded packs ahead (`-DDL_PARAMS_AHEAD=D`, `tests/gpu-host.sh params-ahead`)")?,
        switches_table(&switches.join("ln-switches"), None, "LayerNorm's two passes over the held row (`-DDL_LN_TWO_PASS`, `tests/gpu-host.sh ln-switches`)")?
    ))
}

/// `dl_staged_blocks.md`: the staged blocks (`Team::StagedBlock`) against the team the planner
/// took before them, by turns in one call, and the fastest peer of the same call
/// (`plots/data/dl/experiments/staged-blocks/<slug>/`: `before-<round>.csv`, the planner's runs of
/// that build; `staged-<type>-<threads>-<round>.csv`, the staged team forced; `peers.csv`, the
/// peers' run that followed). One table per GPU measured.
pub fn staged_blocks_markdown(c: &Context) -> Result<String> {
    let root = records::results_dir(&c.data_dir).join("experiments/staged-blocks");
    let mut gpus: Vec<std::path::PathBuf> = std::fs::read_dir(&root).map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default();
    gpus.sort();
    let mut out = String::new();
    for dir in &gpus {
        out += &staged_blocks_table(dir)?;
    }
    if out.is_empty() {
        return Ok("*The staged blocks are not measured by turns on any GPU (`plots/data/dl/experiments/staged-blocks/`).*\n".into());
    }
    Ok(out)
}

/// One GPU's folder of [`staged_blocks_markdown`].
fn staged_blocks_table(dir: &std::path::Path) -> Result<String> {
    let runs = read_turns(dir, |f| Ok(records::read_csv::<records::DlRow>(f)?.1))?;
    let Some(first) = crate::records::csv_files(dir).into_iter().next() else { return Ok(String::new()) };
    let gpu = records::read_csv::<records::DlRow>(&first)?.0.gpu;
    let peers_file = dir.join("peers.csv");
    let peers = if peers_file.is_file() { records::read_csv::<records::DlRow>(&peers_file)?.1 } else { Vec::new() };
    // The cases: every (op, type, shape) a staged run measured, with that run's variant.
    type Case = (String, Dtype, usize, usize);
    let is_case = |r: &records::DlRow, c: &Case| r.status == Status::Correct && r.kernel.starts_with("dl_") && (&r.op, r.dtype, r.rows, r.n) == (&c.0, c.1, c.2, c.3);
    let mut cases: Vec<(Case, String)> = Vec::new();
    for t in runs.iter().filter(|t| t.variant.starts_with("staged")) {
        for r in t.rows.iter().filter(|r| r.status == Status::Correct && r.kernel.starts_with("dl_")) {
            let case = (r.op.clone(), r.dtype, r.rows, r.n);
            if !cases.iter().any(|(c, _)| *c == case) {
                cases.push((case, t.variant.clone()));
            }
        }
    }
    cases.sort_by_key(|((op, dtype, m, n), _)| (op.clone(), dtype.name(), *n, *m));
    // A variant's medians of the case, round by round, and the entry it ran.
    let pick = |variant: &str, c: &Case| {
        let times = rounds(&runs, variant, |r| is_case(r, c).then_some(r.median_us));
        let entry = runs.iter().filter(|t| t.variant == variant).flat_map(|t| &t.rows).find(|r| is_case(r, c)).map_or("", |r| r.entry());
        (times, entry)
    };
    let mut out = format!(
        "*µs, the median of each of two rounds (`a / b`), by turns in one call on an {gpu}: the team the planner took before the staged blocks, \
        and the staged blocks forced; then the fastest peer, measured right after in the same call (`plots/dl_peers.py`). \
        `plots/data/dl/experiments/staged-blocks/{}/`.*\n\n\
        | op | type | M × N | planner's team before | µs | staged blocks | µs | change | fastest peer, same call |\n|---|---|---|---|--:|---|--:|--:|---|\n",
        dir.file_name().unwrap_or_default().to_string_lossy());
    let (mut faster, mut slower, mut changes) = (0, 0, Vec::new());
    let (mut ahead, mut behind, mut gaps) = (0, 0, Vec::new());
    for (c, variant) in &cases {
        let (before, before_entry) = pick("before", c);
        let (staged, staged_entry) = pick(variant, c);
        if before.is_empty() || staged.is_empty() {
            continue;
        }
        let change = mean(&staged) / mean(&before) - 1.0;
        match verdict(&staged, &before) {
            Verdict::Faster => faster += 1,
            Verdict::Slower => slower += 1,
            Verdict::Mixed => {}
        }
        changes.push((change, format!("{} {} {}", c.0, c.1, shape(c.2, c.3))));
        let peer = super::dl::best_peer(&peers, &c.0, c.1, c.2, c.3).map_or("—".to_string(), |p| {
            let gap = mean(&staged) / p.median_us;
            if gap > 1.0 { behind += 1; gaps.push((gap, format!("{} {} {}, {} {:.2} µs", c.0, c.1, shape(c.2, c.3), super::dl::peer_name(p), p.median_us))); } else { ahead += 1; }
            format!("{} {:.2}", super::dl::peer_name(p), p.median_us)
        });
        writeln!(out, "| {} | {} | {} | `{before_entry}` | {} | `{staged_entry}` | {} | {:+.1}% | {peer} |", c.0, c.1, shape(c.2, c.3), cell(&before, 2), cell(&staged, 2), change * 100.0).unwrap();
    }
    if changes.is_empty() {
        return Ok(String::new());
    }
    let best = changes.iter().min_by(|a, b| a.0.total_cmp(&b.0)).expect("not empty");
    let worst = changes.iter().max_by(|a, b| a.0.total_cmp(&b.0)).expect("not empty");
    write!(out, "\nOn the {gpu} the staged blocks were faster than the planner's earlier team in both rounds at {faster} of {} cases and slower in both at {slower}; \
        from {:+.1}% ({}) to {:+.1}% ({}) on the mean of the rounds.", changes.len(), best.0 * 100.0, best.1, worst.0 * 100.0, worst.1).unwrap();
    if ahead + behind > 0 {
        write!(out, " Beside the fastest peer of the same call, the staged blocks' mean was ahead or level at {ahead} of {} cases", ahead + behind).unwrap();
        match gaps.iter().max_by(|a, b| a.0.total_cmp(&b.0)) {
            Some((gap, what)) => write!(out, " and behind at {behind}, by at most {:.1}% ({what}).", (gap - 1.0) * 100.0).unwrap(),
            None => out.push('.'),
        }
    }
    out.push_str("\n\n");
    Ok(out)
}

/// The staged cluster (the planner's row of that build, `[<op>_staged<C>x8_<type>]`) beside the
/// teams main's planner takes, measured in the same run.
fn staged_table(rows: &[records::DlRow], peak: f64) -> String {
    let mut out = String::from(
        "*µs (% of peak), median of 15 CUDA-event runs, one run of `reduction dl-bench --no-peers` with the staged build \
        (`plots/data/dl/experiments/*-staged.csv`).*\n\n\
        | op | type | M × N | staged team | staged | a cluster per row, 512-thread blocks | 1024-thread blocks |\n|---|---|---|---|--:|--:|--:|\n",
    );
    let (mut slower, mut cases, mut worst) = (0, 0, 0.0f64);
    let cell = |r: Option<&records::DlRow>| r.map_or("—".to_string(), |r| format!("{:.1} ({:.1}%)", r.median_us, r.percent_of(peak)));
    // The staged cluster's entries, `<op>_staged<C>x8_<type>` (not today's staged blocks,
    // `<op>_block4_staged_<type>`).
    let staged_cluster = |title: &str| title.split("_staged").nth(1).is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit()));
    for r in rows.iter().filter(|r| r.kernel == records::kernel_name(&r.op) && staged_cluster(&r.title)) {
        let find = |k: String| rows.iter().find(|o| o.kernel == k && (&o.op, o.dtype, o.rows, o.n) == (&r.op, r.dtype, r.rows, r.n));
        let (cluster, wide) = (find(records::cluster_name(&r.op)), find(records::wide_block_name(&r.op)));
        let best = [cluster, wide].into_iter().flatten().map(|o| o.median_us).fold(f64::INFINITY, f64::min);
        if best.is_finite() {
            cases += 1;
            if r.median_us > best {
                slower += 1;
                worst = worst.max(r.median_us / best - 1.0);
            }
        }
        let blocks = r.title.split("_staged").nth(1).and_then(|t| t.split('x').next()).unwrap_or("?");
        writeln!(out, "| {} | {} | {} | cluster {blocks} × {} | {} | {} | {} |", r.op, r.dtype, shape(r.rows, r.n), r.block, cell(Some(r)), cell(cluster), cell(wide)).unwrap();
    }
    write!(out, "\nThe staged cluster was slower than the faster of the other two at {slower} of {cases} cases, by up to {:.0}%.\n", worst * 100.0).unwrap();
    out
}

/// What the Nsight Compute excerpt says of the two LayerNorm launches (`=== ncu layer_norm_<team> ...`
/// sections of metric lines).
fn ncu_sentence(text: &str) -> String {
    let metric = |team: &str, name: &str| -> Option<f64> {
        let section = text.split("=== ncu ").find(|s| s.starts_with(&format!("layer_norm_{team} ")))?;
        let line = section.lines().find(|l| l.trim_start().starts_with(name))?;
        line.split_whitespace().last()?.replace(',', "").parse().ok()
    };
    // "f32 4096x65536" → "f32 2^12 × 2^16"
    let case = text.split("=== ncu layer_norm_cluster ").nth(1).and_then(|s| s.lines().next()).unwrap_or("");
    let shape = match case.split_once(' ').and_then(|(t, mn)| mn.split_once('x').map(|(m, n)| (t, m.parse::<usize>(), n.parse::<usize>()))) {
        Some((t, Ok(m), Ok(n))) => format!("{t} {}", shape(m, n)),
        _ => case.to_string(),
    };
    let of = |team: &str| -> Option<String> {
        Some(format!(
            "DRAM {:.1}% busy, L2 {:.1}%, achieved occupancy {:.1}% ({} registers a thread, a grid of {} blocks)",
            metric(team, "DRAM Throughput")?,
            metric(team, "L2 Cache Throughput")?,
            metric(team, "Achieved Occupancy")?,
            metric(team, "Registers Per Thread")?,
            metric(team, "Grid Size")?
        ))
    };
    match (of("cluster"), of("staged")) {
        (Some(cluster), Some(staged)) => format!(
            "Nsight Compute on one launch of each, LayerNorm {shape} (`plots/data/dl/experiments/*-staged-ncu.txt`): the clusters of \
            main, one a row: {cluster}; the staged ones: {staged}.\n"
        ),
        _ => String::new(),
    }
}

/// main's kernels beside the build that prefetches γ (and β) into L1 (`p8` in the log), per case.
fn prefetch_table(log: &str) -> String {
    // build op dtype M x N median_us percent
    let parse = |build: &str| -> Vec<(String, String, String, f64, String)> {
        let mut cases = Vec::new();
        for l in log.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 8 || f[0] != build {
                continue;
            }
            if let (Ok(m), Ok(n), Ok(us)) = (f[3].parse::<usize>(), f[5].parse::<usize>(), f[6].parse::<f64>()) {
                cases.push((f[1].to_string(), f[2].to_string(), shape(m, n), us, f[7].to_string()));
            }
        }
        cases
    };
    let (base, pre) = (parse("base"), parse("p8"));
    if base.is_empty() || pre.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "*µs (% of peak), the planner's team, main's kernels and the build that prefetches, one after the other in one call \
        (`plots/data/dl/experiments/*-prefetch.log`).*\n\n| op | type | M × N | main | γ, β prefetched into L1 | change |\n|---|---|---|--:|--:|--:|\n",
    );
    let (mut slower, mut cases) = (0, 0);
    for (op, dtype, shape, us, pct) in &base {
        let Some(p) = pre.iter().find(|p| (&p.0, &p.1, &p.2) == (op, dtype, shape)) else { continue };
        cases += 1;
        slower += usize::from(p.3 > *us);
        let change = format!("{:+.1}%", (p.3 / us - 1.0) * 100.0).replace("-0.0%", "+0.0%");
        writeln!(out, "| {op} | {dtype} | {shape} | {us:.1} ({pct}) | {:.1} ({}) | {change} |", p.3, p.4).unwrap();
    }
    write!(out, "\nPrefetched, the write was slower at {slower} of {cases} cases.\n").unwrap();
    out
}

/// `dl_norms_instructions.md`: LayerNorm beside RMSNorm in the profiles of `plots/data/dl/ncu/`
/// (`norms_instructions`).
pub fn norms_instructions_markdown(c: &Context) -> Result<String> {
    let profiles = super::operators::operator_profiles(&records::results_dir(&c.data_dir).join("ncu"))?;
    let text = norms_instructions(&profiles);
    Ok(if text.is_empty() { format!("*No LayerNorm and RMSNorm profiles of one shape yet on the {}.*\n", c.book()?.0.gpu) } else { text.trim_start().to_string() })
}

/// Warp instructions executed per 32 values of the launch in `text`, the profile of `stem`
/// (`<op>_<type>_<M>x<N>`): SM active cycles × executed IPC (both per SM) × the SMs, over M·N / 32.
fn instructions_per_32_values(stem: &str, text: &str) -> Option<f64> {
    use super::determinism::ncu_value;
    let (m, n) = stem.rsplit_once('_')?.1.split_once('x')?;
    let values = m.parse::<f64>().ok()? * n.parse::<f64>().ok()?;
    // The program's own header line: "  132 SMs, 60.0 MiB of L2, ...".
    let sms: f64 = text.lines().find_map(|l| l.trim().split_once(" SMs,")).and_then(|(count, _)| count.parse().ok())?;
    Some(ncu_value(text, "SM Active Cycles")? * ncu_value(text, "Executed Ipc Active")? * sms / (values / 32.0))
}

/// For each LayerNorm profile with an RMSNorm one of the same type and shape: the instructions each
/// executed per 32 values, their achieved occupancy and their DRAM throughput, so that the reader
/// sees which of the two a gap between them comes from.
fn norms_instructions(profiles: &[(String, String)]) -> String {
    let mut out = String::new();
    let find = |stem: &str| profiles.iter().find(|(s, _)| s == stem).map(|(_, text)| text);
    for (stem, ln_text) in profiles.iter().filter(|(s, _)| s.starts_with("layer_norm_")) {
        let rms_stem = stem.replacen("layer_norm_", "rms_norm_", 1);
        let Some(rms_text) = find(&rms_stem) else { continue };
        let parsed = |s: &str, t: &str| Some((super::determinism::parse_ncu(s, t)?, instructions_per_32_values(s, t)?, super::entry_ncu::profiled_kernel(t)?.to_string()));
        let (Some((ln, ln_count, ln_kernel)), Some((rms, rms_count, rms_kernel))) = (parsed(stem, ln_text), parsed(&rms_stem, rms_text)) else { continue };
        let label = super::operators::profile_label(stem).map_or_else(|| stem.clone(), |(label, _)| label.replacen("layer_norm ", "", 1));
        let ratio = ln_count / rms_count;
        let occupancy_ratio = ln.achieved_occupancy / rms.achieved_occupancy;
        // What the two numbers say together: more work at the same warps, or the same work with fewer.
        let reading = if ratio > 1.2 && (0.9..=1.1).contains(&occupancy_ratio) {
            format!("LayerNorm did {ratio:.1} times the instructions with as many warps")
        } else if (0.9..=1.1).contains(&ratio) && occupancy_ratio < 0.8 {
            "LayerNorm did as much work with fewer warps at a time".to_string()
        } else {
            "neither count alone sets them apart".to_string()
        };
        writeln!(out, "\nAt {label}, LayerNorm's `{ln_kernel}` executed {ln_count:.1} warp instructions per 32 values, RMSNorm's `{rms_kernel}` {rms_count:.1} ({ratio:.2}×), \
            at {:.1}% and {:.1}% achieved occupancy, DRAM {:.1}% and {:.1}% busy: {reading}. *(SM active cycles × executed IPC × SMs, from the same profiles.)*",
            ln.achieved_occupancy, rms.achieved_occupancy, ln.dram_percent, rms.dram_percent).unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_norms_experiments_read_their_three_files() {
        let head = "# gpu: NVIDIA H200\n# peak_gbps: 4814.3\nkernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows\n";
        let row = |kernel: &str, entry: &str, us: &str| format!("{kernel},18,t [{entry}],correct,f32,65536,512,rotated,{us},1,2,3,1,1,15,m,layer_norm,4096\n");
        let text = format!("{head}{}{}{}", row("dl_layer_norm", "layer_norm_staged4x8_f32", "1046.6"), row("dl_layer_norm_cluster", "layer_norm_cluster4x8_f32", "701.7"),
            row("dl_layer_norm_wide_block", "layer_norm_cluster2x8_f32", "745.9"));
        let rows = crate::records::csv::from_str::<records::DlRow>(&text, "test").unwrap().1;
        let t = staged_table(&rows, 4814.3);
        assert!(t.contains("| layer_norm | f32 | 2^12 × 2^16 | cluster 4 × 512 | 1046.6 ("), "{t}");
        assert!(t.contains("at 1 of 1 cases, by up to 49%."), "{t}");
        // A run where the staged team is faster counts as such.
        let faster = text.replace(",1046.6,", ",600.0,");
        let t = staged_table(&crate::records::csv::from_str::<records::DlRow>(&faster, "test").unwrap().1, 4814.3);
        assert!(t.contains("at 0 of 1 cases"), "{t}");

        let ncu = "=== ncu layer_norm_staged f32 4096x65536\n    DRAM Throughput   %   42.07\n    L2 Cache Throughput  %  48.61\n    Grid Size    120\n    Registers Per Thread  register/thread  128\n    Achieved Occupancy  %  24.68\n\
            === ncu layer_norm_cluster f32 4096x65536\n    DRAM Throughput   %   58.83\n    L2 Cache Throughput  %  67.20\n    Grid Size    8,192\n    Registers Per Thread  register/thread  62\n    Achieved Occupancy  %  49.20\n";
        let s = ncu_sentence(ncu);
        assert!(s.contains("LayerNorm f32 2^12 × 2^16"), "{s}");
        assert!(s.contains("one a row: DRAM 58.8% busy, L2 67.2%, achieved occupancy 49.2% (62 registers a thread, a grid of 8192 blocks); the staged ones: DRAM 42.1%"), "{s}");
        assert_eq!(ncu_sentence("=== ncu layer_norm_staged f32 4096x65536\n"), "", "half a profile says nothing");

        let log = "# comment\nbase  layer_norm  f32       8192 x 32768       607.76  73.4%\nbase  rms_norm  f32  8192 x 32768  514.39  86.7%\n\
            p8    layer_norm  f32       8192 x 32768       607.59  73.4%\np8  rms_norm  f32  8192 x 32768  533.70  83.6%\np2  rms_norm  f32  8192 x 32768  1.0  99.0%\n";
        let t = prefetch_table(log);
        assert!(t.contains("| layer_norm | f32 | 2^13 × 2^15 | 607.8 (73.4%) | 607.6 (73.4%) | +0.0% |"), "{t}");
        assert!(t.contains("| rms_norm | f32 | 2^13 × 2^15 | 514.4 (86.7%) | 533.7 (83.6%) | +3.8% |"), "{t}");
        assert!(t.contains("slower at 1 of 2 cases."), "{t}");
        assert_eq!(prefetch_table("base  rms_norm  f32  8192 x 32768  514.39  86.7%\n"), "", "no build beside it");
    }

    #[test]
    fn the_staged_blocks_are_set_against_the_earlier_team_and_the_peers_of_the_same_call() {
        let dir = std::env::temp_dir().join(format!("staged-blocks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let head = "# gpu: NVIDIA H100 80GB HBM3\nkernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows\n";
        let row = |kernel: &str, entry: &str, m: usize, us: f64| format!("{kernel},18,t [{entry}],correct,bf16,4096,128,rotated,{us},1,2,3,1,1,15,m,layer_norm,{m}\n");
        let write = |name: &str, text: String| std::fs::write(dir.join(name), format!("{head}{text}")).unwrap();
        write("before-1.csv", row("dl_layer_norm", "layer_norm_block8_bf16", 4096, 28.0) + &row("dl_layer_norm", "layer_norm_block8_bf16", 65536, 362.0));
        write("before-2.csv", row("dl_layer_norm", "layer_norm_block8_bf16", 4096, 27.9) + &row("dl_layer_norm", "layer_norm_block8_bf16", 65536, 363.0));
        write("staged-bf16-128-1.csv", row("dl_layer_norm", "layer_norm_block4_staged_bf16", 4096, 24.9) + &row("dl_layer_norm", "layer_norm_block4_staged_bf16", 65536, 358.0));
        write("staged-bf16-128-2.csv", row("dl_layer_norm", "layer_norm_block4_staged_bf16", 4096, 24.8) + &row("dl_layer_norm", "layer_norm_block4_staged_bf16", 65536, 364.0));
        write("peers.csv", row("tilelang_layer_norm", "x", 4096, 24.0).replace(",correct,", ",peer,") + &row("liger_layer_norm", "x", 65536, 370.0).replace(",correct,", ",peer,"));
        let t = staged_blocks_table(&dir).unwrap();
        assert!(t.contains("| layer_norm | bf16 | 2^12 × 2^12 | `layer_norm_block8_bf16` | 28.00 / 27.90 | `layer_norm_block4_staged_bf16` | 24.90 / 24.80 | -11.1% | TileLang 24.00 |"), "{t}");
        assert!(t.contains("on an NVIDIA H100 80GB HBM3"), "{t}");
        // 65536 rows: faster in one round, slower in the other: counted as neither.
        assert!(t.contains("faster than the planner's earlier team in both rounds at 1 of 2 cases and slower in both at 0; from -11.1% (layer_norm bf16 2^12 × 2^12) to -0.4% (layer_norm bf16 2^16 × 2^12)"), "{t}");
        assert!(t.contains("ahead or level at 1 of 2 cases and behind at 1, by at most 3.5% (layer_norm bf16 2^12 × 2^12, TileLang 24.00 µs)."), "{t}");
        // No earlier team beside them: nothing to say.
        std::fs::remove_file(dir.join("before-1.csv")).unwrap();
        std::fs::remove_file(dir.join("before-2.csv")).unwrap();
        assert_eq!(staged_blocks_table(&dir).unwrap(), "");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_norms_are_set_side_by_side_by_instructions_and_warps() {
        let profile = |kernel: &str, cycles: &str, ipc: &str, occupancy: &str| format!("  132 SMs, 60.0 MiB of L2, 139.8 GiB of device memory\n  {kernel} (16384, 1, 1)x(512, 1, 1), Context 1, Stream 13, Device 0, CC 9.0\n\
            Duration us 797.82\nDRAM Throughput % 55.36\nCompute (SM) Throughput % 42.98\nSM Active Cycles cycle {cycles}\nExecuted Ipc Active inst/cycle {ipc}\n\
            Block Size 512\nGrid Size 16,384\nRegisters Per Thread register/thread 62\nBlock Limit Registers block 2\nTheoretical Occupancy % 50\nAchieved Occupancy % {occupancy}\n");
        let profiles = vec![
            ("layer_norm_f32_1024x262144".to_string(), profile("layer_norm_cluster16x8_f32", "1,367,863.13", "1.97", "45.31")),
            ("rms_norm_f32_1024x262144".to_string(), profile("rms_norm_cluster16x8_f32", "1,020,635.30", "1.26", "43.96")),
            ("softmax_f32_1024x262144".to_string(), profile("softmax_cluster16x8_f32", "904,332.79", "1.55", "44.17")),
        ];
        let s = norms_instructions(&profiles);
        // 1,367,863.13 × 1.97 × 132 / (2^28 / 32) = 42.4; 1,020,635.30 × 1.26 × 132 / 2^23 = 20.2.
        assert!(s.contains("At f32, 1024 × 2^18, LayerNorm's `layer_norm_cluster16x8_f32` executed 42.4 warp instructions per 32 values, RMSNorm's `rms_norm_cluster16x8_f32` 20.2 (2.10×)"), "{s}");
        assert!(s.contains("LayerNorm did 2.1 times the instructions with as many warps"), "{s}");
        assert_eq!(s.matches("At ").count(), 1, "one sentence a pair; softmax has no partner: {s}");
        // The same work, fewer warps.
        let fewer = vec![profiles[0].clone(), ("rms_norm_f32_1024x262144".to_string(), profile("rms_norm_block2_f32", "1,367,863.13", "1.97", "88.0"))];
        assert!(norms_instructions(&fewer).contains("LayerNorm did as much work with fewer warps at a time"));
        // No RMSNorm profile of the shape, or no SM count: nothing is said.
        assert_eq!(norms_instructions(&profiles[..1]), "");
        let no_sms = vec![profiles[0].clone(), (profiles[1].0.clone(), profiles[1].1.replace("132 SMs,", ""))];
        assert_eq!(norms_instructions(&no_sms), "");
    }
}
