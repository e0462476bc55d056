//! The norms' experiment switches timed by turns against the default build of the same call
//! (`plots/data/dl/experiments/switches/`): each switch's table, and the counts that decided
//! which the default build takes.

use super::super::dl::shape;
use super::super::turns::{cell, mean, read_turns, rounds, verdict, Turn, Verdict};
use crate::book::context::Context;
use crate::element::Dtype;
use crate::error::Result;
use crate::records::bench::Status;
use crate::records::dl as records;
use std::fmt::Write as _;

/// `dl_lanes_bound.md`: softmax's and log_softmax's lanes of 8 packs bounded to four blocks of
/// 256 an SM (`-DDL_LANES8_MIN_BLOCKS=4`, kernels/dl_rows.cuh) against the default build, by turns
/// at the shapes where the planner takes them (`switches/lanes-bound/`, `tests/gpu-host.sh lanes-bound`).
pub fn lanes_bound_markdown(c: &Context) -> Result<String> {
    let dir = records::results_dir(&c.data_dir).join("experiments/switches/lanes-bound");
    // The switch's cases are the lanes entries of 8 packs; the timed build also gave the lanes of
    // fewer packs `__launch_bounds__(256, 1)` (other machine code than the default's `(256)`, since
    // fixed in kernels/dl_rows.cuh), and left the block entries alone.
    let table = switches_table(&dir, Some(&|entry: &str| entry.contains("_lanes8_")),
        "softmax's lanes of 8 packs at four blocks an SM (`-DDL_LANES8_MIN_BLOCKS=4`, `tests/gpu-host.sh lanes-bound`; `switches/lanes-bound/`)")?;
    if table.is_empty() {
        return Ok(format!("*The lanes of 8 packs at four blocks an SM are not measured on the {} (`tests/gpu-host.sh lanes-bound`).*\n", c.book()?.0.gpu));
    }
    Ok(table)
}

/// Whether the default build's `ParamAhead` (kernels/18_norms.cu) takes an entry's parameters
/// ahead of its write: RMSNorm's clusters, and LayerNorm's clusters of 4. (RMSNorm's clusters
/// have since staged γ in shared memory, dl_rows.cuh's `ClusterStaged`, whose write does not use
/// it; `-DDL_CLUSTER_UNSTAGED` gives them this write back.)
pub fn ahead_by_default(entry: &str) -> bool {
    entry.starts_with("rms_norm_cluster") || entry.starts_with("layer_norm_cluster4x")
}

/// `dl_norms_ahead.md`: the norms' parameters loaded ahead of the write in every team (the
/// `norms_ahead` build) against the build that loads each pack's as it is written, by turns
/// (`switches/norms-ahead/`), counted at the entries the default now takes it at, then what it did
/// at the other cluster entries.
pub fn norms_ahead_markdown(c: &Context) -> Result<String> {
    let dir = records::results_dir(&c.data_dir).join("experiments/switches/norms-ahead");
    let table = switches_table(&dir, Some(&ahead_by_default),
        "the parameters loaded ahead of the write in every team (`norms_ahead`: RMSNorm's γ 2 packs ahead, `-DDL_PARAMS_AHEAD=2`; LayerNorm's γ and β 1 pack, \
        `-DDL_LN_PARAMS_AHEAD=1`), against each pack's loaded as it is written (`plain`, the default build of that call; `tests/gpu-host.sh ln-switches`)")?;
    if table.is_empty() {
        return Ok(format!("*The norms' parameters ahead of the write are not measured on the {} (`switches/norms-ahead/`).*\n", c.book()?.0.gpu));
    }
    let runs = read_turns(&dir, |f| Ok(records::read_csv::<records::DlRow>(f)?.1))?;
    let gpu = gpu_of(&dir)?;
    // The cluster entries the default leaves as they were: each one's change and verdict.
    let mut others: Vec<(f64, String, Verdict)> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for r in runs.iter().flat_map(|t| t.rows.iter()).filter(|r| r.status == Status::Correct) {
        let entry = r.entry().to_string();
        let key = format!("{entry} {}", shape(r.rows, r.n));
        if !entry.contains("_cluster") || ahead_by_default(&entry) || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let times = |v: &str| rounds(&runs, v, |x| (x.status == Status::Correct && x.entry() == entry && (x.rows, x.n) == (r.rows, r.n)).then_some(x.median_us));
        let (base, switch) = (times("plain"), times("norms_ahead"));
        if base.is_empty() || switch.is_empty() {
            continue;
        }
        others.push((mean(&switch) / mean(&base) - 1.0, format!("`{entry}` at {}", shape(r.rows, r.n)), verdict(&switch, &base)));
    }
    let mut out = table;
    if !others.is_empty() {
        let slower = others.iter().filter(|o| o.2 == Verdict::Slower).count();
        let faster = others.iter().filter(|o| o.2 == Verdict::Faster).count();
        let best = others.iter().min_by(|a, b| a.0.total_cmp(&b.0)).expect("not empty");
        let worst = others.iter().max_by(|a, b| a.0.total_cmp(&b.0)).expect("not empty");
        write!(out, "\nAt the other cluster entries ({}, on the {gpu}) it was slower in both rounds at {slower} of {} and faster in both at {faster}: \
            from {:+.1}% ({}) to {:+.1}% ({}).\n", others.iter().map(|o| o.1.clone()).collect::<Vec<_>>().join(", "), others.len(),
            best.0 * 100.0, best.1, worst.0 * 100.0, worst.1).unwrap();
    }
    Ok(out)
}

/// The GPU a folder of by-turns runs was measured on (its first CSV's), or "" for none.
pub fn gpu_of(folder: &std::path::Path) -> Result<String> {
    Ok(crate::records::csv_files(folder).first().map(|f| records::read_csv::<records::DlRow>(f).map(|r| r.0.gpu)).transpose()?.unwrap_or_default())
}

/// `dl_norms_clusters.md`: the cluster entries since session 61 (LayerNorm's two passes over the
/// held row, every cluster's blocks met in log2(C) levels) against the build before them
/// (`cluster_before`: `-DDL_LN_CLUSTER_WELFORD -DDL_CLUSTER_MERGE_32`) and the two passes alone
/// (`cluster_merge32`), by turns (`switches/cluster-two-pass/`); then softmax's clusters, whose
/// machine code changed only in the merge (`switches/cluster-two-pass/softmax/`).
pub fn norms_clusters_markdown(c: &Context) -> Result<String> {
    let dir = records::results_dir(&c.data_dir).join("experiments/switches/cluster-two-pass");
    let clusters = |e: &str| e.contains("_cluster");
    let mut out = switches_table(&dir, Some(&clusters), &format!(
        "on an {}, the cluster entries as they are now (`plain`) against the build before (`cluster_before`: LayerNorm's threads' Welford states merged, \
        `-DDL_LN_CLUSTER_WELFORD`, and the cluster's block states met over 32 lanes, `-DDL_CLUSTER_MERGE_32`) and the two passes alone \
        (`cluster_merge32`: `-DDL_CLUSTER_MERGE_32`); `tests/gpu-host.sh ln-switches`", gpu_of(&dir)?))?;
    if out.is_empty() {
        return Ok(format!("*The norms' cluster entries are not measured by turns on the {} (`switches/cluster-two-pass/`).*\n", c.book()?.0.gpu));
    }
    let softmax = dir.join("softmax");
    if !crate::records::csv_files(&softmax).is_empty() {
        out += "\n";
        out += &switches_table(&softmax, Some(&clusters), &format!(
            "on an {}, softmax's clusters, whose machine code changed only in the merge: as they are now (`plain`) and with the block states met over 32 lanes \
            (`cluster_merge32`)", gpu_of(&softmax)?))?;
    }
    Ok(out)
}

/// `dl_norms_cluster_staged.md`: the norms' cluster entries with their parameters staged in
/// shared memory (`cluster_staged`: `-DDL_CLUSTER_STAGED`) against the build that loaded them from
/// L2 as it wrote (`plain`), by turns (`switches/cluster-staged/`); then each norm's count, which
/// decided the default: RMSNorm's clusters staged (`ClusterStaged` in 18_norms.cu), LayerNorm's not.
/// Then LayerNorm's with γ alone staged (`ln_cluster_gamma`: `-DDL_CLUSTER_STAGED_GAMMA`), by
/// turns in a later call (`switches/cluster-staged-gamma/`).
pub fn norms_cluster_staged_markdown(c: &Context) -> Result<String> {
    let dir = records::results_dir(&c.data_dir).join("experiments/switches/cluster-staged");
    let clusters = |e: &str| e.contains("_cluster");
    let mut out = switches_table(&dir, Some(&clusters), &format!(
        "on an {}, the cluster entries loading γ (and β) from L2 as they write (`plain`, the default build of that call) against `cluster_staged` \
        (`-DDL_CLUSTER_STAGED`: each thread's packs of them copied into shared memory as the row's loads go out); `tests/gpu-host.sh ln-switches`", gpu_of(&dir)?))?;
    if out.is_empty() {
        return Ok(format!("*The norms' staged clusters are not measured by turns on the {} (`switches/cluster-staged/`).*\n", c.book()?.0.gpu));
    }
    let runs = read_turns(&dir, |f| Ok(records::read_csv::<records::DlRow>(f)?.1))?;
    out.push('\n');
    for (op, name) in [("rms_norm", "RMSNorm"), ("layer_norm", "LayerNorm")] {
        let s = cluster_staged_outcome(&runs, op, "cluster_staged");
        if s.cases == 0 {
            continue;
        }
        writeln!(out, "- {name}'s clusters staged: faster in both rounds at {} of {} cases, slower in both at {}; from {:+.1}% to {:+.1}% on the mean of the rounds.",
            s.faster, s.cases, s.slower, s.best * 100.0, s.worst * 100.0).unwrap();
    }
    let gamma = records::results_dir(&c.data_dir).join("experiments/switches/cluster-staged-gamma");
    let table = switches_table(&gamma, Some(&clusters), &format!(
        "on an {}, LayerNorm's cluster entries as built (`plain`: γ and β from L2 as they write) against `ln_cluster_gamma` \
        (`-DDL_CLUSTER_STAGED_GAMMA`: γ alone staged, 64 KiB a block of 512 threads, β from L2 as each pack is written); `tests/gpu-host.sh ln-switches`", gpu_of(&gamma)?))?;
    if !table.is_empty() {
        out.push('\n');
        out += &table;
    }
    Ok(out)
}

/// One norm's cluster entries under `cluster_staged` against `plain` (`switches/cluster-staged/`).
#[derive(Debug, PartialEq)]
pub struct StagedOutcome {
    pub cases: usize,
    pub faster: usize,
    pub slower: usize,
    /// The least and the greatest change of the mean of the rounds (negative: faster).
    pub best: f64,
    pub worst: f64,
    /// The entries at the cases slower in both rounds.
    pub lost: Vec<String>,
}

/// `op`'s cluster cases timed in both rounds by `plain` and by `variant`, and how `variant` fared.
pub fn cluster_staged_outcome(runs: &[Turn<records::DlRow>], op: &str, variant: &str) -> StagedOutcome {
    let mut cases: Vec<(String, Dtype, usize, usize)> = runs.iter().flat_map(|t| &t.rows)
        .filter(|r| r.status == Status::Correct && r.op == op && r.entry().contains("_cluster"))
        .map(|r| (r.entry().to_string(), r.dtype, r.rows, r.n)).collect();
    cases.sort_by(|a, b| (&a.0, a.2, a.3).cmp(&(&b.0, b.2, b.3)));
    cases.dedup();
    let mut s = StagedOutcome { cases: 0, faster: 0, slower: 0, best: f64::INFINITY, worst: f64::NEG_INFINITY, lost: Vec::new() };
    for case in &cases {
        let of = |v: &str| rounds(runs, v, |r| (r.status == Status::Correct && (r.entry(), r.dtype, r.rows, r.n) == (case.0.as_str(), case.1, case.2, case.3)).then_some(r.median_us));
        let (base, staged) = (of("plain"), of(variant));
        if base.len() != 2 || staged.len() != 2 {
            continue;
        }
        let change = mean(&staged) / mean(&base) - 1.0;
        s.cases += 1;
        match verdict(&staged, &base) {
            Verdict::Faster => s.faster += 1,
            Verdict::Slower => {
                s.slower += 1;
                s.lost.push(case.0.clone());
            }
            Verdict::Mixed => {}
        }
        s.best = s.best.min(change);
        s.worst = s.worst.max(change);
    }
    s
}

/// The experiment switches of the norms against the default build, timed by turns in two rounds
/// (`<variant>-<round>.csv` in `dir`, each a `dl-bench --planner-only` run; a variant named
/// `plain…` is the default build): each case's median in each round, and each switch's change
/// against the default's mean of the two rounds, where the default ran the same entry.
/// `target`, where given, picks the entries the switch is for: the others are shown, marked, and
/// left out of its count.
pub(super) fn switches_table(dir: &std::path::Path, target: Option<&dyn Fn(&str) -> bool>, what: &str) -> Result<String> {
    let runs = read_turns(dir, |f| Ok(records::read_csv::<records::DlRow>(f)?.1))?;
    if runs.is_empty() {
        return Ok(String::new());
    }
    // A case: the op, the type, the shape, and the entry (the title's [..]).
    type Case = (String, Dtype, usize, usize, String);
    let mut cases: Vec<Case> = Vec::new();
    let mut variants: Vec<&str> = Vec::new();
    for run in &runs {
        if !variants.contains(&run.variant.as_str()) {
            variants.push(&run.variant);
        }
        for r in run.rows.iter().filter(|r| r.status == Status::Correct) {
            let c = (r.op.clone(), r.dtype, r.rows, r.n, r.entry().to_string());
            if !cases.contains(&c) {
                cases.push(c);
            }
        }
    }
    // Default build first, then the switches by name.
    variants.sort_by_key(|v| (!v.starts_with("plain"), *v));
    let times = |v: &str, c: &Case| rounds(&runs, v, |r| {
        (r.status == Status::Correct && (&r.op, r.dtype, r.rows, r.n) == (&c.0, c.1, c.2, c.3) && r.entry() == c.4).then_some(r.median_us)
    });
    // The folder as the book shows it (`plots/data/dl/experiments/...`).
    let path = dir.to_string_lossy().replace('\\', "/");
    let folder = path.find("experiments/").map_or("experiments/switches".to_string(), |i| path[i..].trim_end_matches('/').to_string());
    let mut out = format!("*µs, the median of each of two rounds (`a / b`), by turns in one call: {what}; `plots/data/dl/{folder}/`.*\n\n| op | type | M × N | entry |");
    for v in &variants {
        write!(out, " {v} |").unwrap();
    }
    out.push_str("\n|---|---|---|---|");
    out.push_str(&"--:|".repeat(variants.len()));
    out.push('\n');
    // Each switch's cases: (change against the default, entry, verdict of the rounds).
    type Outcome<'a> = (f64, &'a str, Verdict);
    let mut outcomes: Vec<(&str, Vec<Outcome>)> = variants.iter().filter(|v| !v.starts_with("plain")).map(|v| (*v, Vec::new())).collect();
    for c in &cases {
        let base = variants.iter().filter(|v| v.starts_with("plain")).map(|v| times(v, c)).find(|t| !t.is_empty());
        let targeted = target.is_none_or(|t| t(&c.4));
        write!(out, "| {} | {} | {} | `{}`{} |", c.0, c.1, shape(c.2, c.3), c.4, if targeted { "" } else { " (not counted)" }).unwrap();
        for v in &variants {
            let t = times(v, c);
            match (t.is_empty(), base.as_ref().filter(|_| !v.starts_with("plain"))) {
                (true, _) => out.push_str(" – |"),
                (false, Some(b)) => {
                    let change = mean(&t) / mean(b) - 1.0;
                    write!(out, " {} ({:+.1}%) |", cell(&t, 1), change * 100.0).unwrap();
                    if let Some((_, o)) = outcomes.iter_mut().find(|(s, _)| s == v).filter(|_| targeted) {
                        o.push((change, &c.4, verdict(&t, b)));
                    }
                }
                (false, None) => write!(out, " {} |", cell(&t, 1)).unwrap(),
            }
        }
        out.push('\n');
    }
    for (v, o) in outcomes.iter().filter(|(_, o)| !o.is_empty()) {
        let count = |want: Verdict| o.iter().filter(|x| x.2 == want).count();
        let best = o.iter().min_by(|a, b| a.0.total_cmp(&b.0)).expect("not empty");
        let worst = o.iter().max_by(|a, b| a.0.total_cmp(&b.0)).expect("not empty");
        let range = if o.len() == 1 {
            format!("{:+.1}%", best.0 * 100.0)
        } else {
            format!("from {:+.1}% (`{}`) to {:+.1}% (`{}`)", best.0 * 100.0, best.1, worst.0 * 100.0, worst.1)
        };
        write!(out, "\n`{v}` against the default build of that call (`plain`) on the same entry: faster in both rounds at {} of {} case{}, slower in both at {}; \
            {range} on the mean of the rounds.\n", count(Verdict::Faster), o.len(), if o.len() == 1 { "" } else { "s" }, count(Verdict::Slower)).unwrap();
    }
    if target.is_some() && cases.iter().any(|c| !target.is_none_or(|t| t(&c.4))) {
        out.push_str("\nRows marked *not counted* ran in the same turns and are left out of the count above.\n");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_switch_is_set_against_the_default_build_on_the_same_entry() {
        let dir = std::env::temp_dir().join(format!("switches-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let head = "# gpu: NVIDIA H200\nkernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows\n";
        let row = |entry: &str, n: usize, us: f64| format!("dl_rms_norm,18,t [{entry}],correct,f32,{n},512,rotated,{us},1,2,3,1,1,15,m,rms_norm,1024\n");
        let write = |name: &str, long: f64, short: f64| {
            std::fs::write(dir.join(name), format!("{head}{}{}", row("rms_norm_cluster16x8_f32", 262144, long), row("rms_norm_block2_f32", 4096, short))).unwrap()
        };
        write("plain-1.csv", 600.0, 35.0);
        write("plain-2.csv", 602.0, 35.0);
        write("ahead-1.csv", 570.0, 47.0);
        write("ahead-2.csv", 571.0, 47.0);
        let t = switches_table(&dir, None, "test").unwrap();
        assert!(t.contains("| rms_norm | f32 | 2^10 × 2^18 | `rms_norm_cluster16x8_f32` | 600.0 / 602.0 | 570.0 / 571.0 (-5.1%) |"), "{t}");
        assert!(t.contains("faster in both rounds at 1 of 2 cases, slower in both at 1; from -5.1% (`rms_norm_cluster16x8_f32`) to +34.3% (`rms_norm_block2_f32`)"), "{t}");
        // A round where the switch lost at the long rows: no longer faster in both rounds.
        write("ahead-2.csv", 605.0, 47.0);
        let t = switches_table(&dir, None, "test").unwrap();
        assert!(t.contains("faster in both rounds at 0 of 2 cases"), "{t}");
        // Entries the switch is not for are marked and left out of its count.
        let t = switches_table(&dir, Some(&|e: &str| e.contains("cluster")), "test").unwrap();
        assert!(t.contains("| `rms_norm_block2_f32` (not counted) |"), "{t}");
        assert!(t.contains("faster in both rounds at 0 of 1 case, slower in both at 0; -2.2%"), "{t}");
        assert!(t.contains("Rows marked *not counted*"), "{t}");
        assert!(!switches_table(&dir, None, "test").unwrap().contains("not counted"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(switches_table(&dir, None, "test").unwrap(), "", "nothing measured, nothing said");
    }
}
