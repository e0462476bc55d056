//! Kernels 9-12's leftover-load switches (`kernels/vector_load.cuh`, `kernels/12_cub_block_reduce.cu`),
//! each timed by turns against the default build (`tests/gpu-host.sh vec-tail`): the skeleton
//! chapter's tables of where each won and lost.

use super::common::size_label;
use crate::element::Dtype;
use crate::records::bench::{Cache, ENTRY_POINT_KERNEL};
use std::fmt::Write as _;

/// One of kernels 9-12's leftover-load switches (kernels/vector_load.cuh), as its experiment
/// folder names it and its table calls it.
pub struct VecSwitch {
    /// The variant's file names (`<variant>-<round>.csv`) beside the default build's `plain-…`.
    pub variant: &'static str,
    /// The NVRTC option that turns it on.
    pub option: &'static str,
    /// The folder under `plots/data/experiments/` its runs are in.
    pub folder: &'static str,
    /// Its column's head, and what kernel 12 did with it, for the closing sentence.
    pub column: &'static str,
    pub doing: &'static str,
    /// The element types whose own entries the switch leaves as the default build's machine code.
    /// Their sums are not the same code in both builds all the same: a sum's later passes add the
    /// partial sums with the accumulator type's entry (f32 for bf16), which the switch changes.
    /// Their rows are shown, marked, and not counted as the switch's cases.
    pub first_pass_unchanged: &'static [Dtype],
}

/// The leftover packs loaded at once (session 47).
pub const VEC_TAIL_IN_FLIGHT: VecSwitch = VecSwitch {
    variant: "tail",
    option: "-DVEC_TAIL_IN_FLIGHT",
    folder: "vec-tail",
    column: "leftover loads at once",
    doing: "with its leftover loads at once",
    first_pass_unchanged: &[],
};

/// The leftover packs as one more round of predicated loads, 4-byte types only.
pub const VEC_TAIL_PREDICATED: VecSwitch = VecSwitch {
    variant: "pred",
    option: "-DVEC_TAIL_PREDICATED",
    folder: "vec-pred",
    column: "leftover loads as a predicated round",
    doing: "with its leftover loads as one predicated round",
    first_pass_unchanged: &[Dtype::BF16, Dtype::F16],
};

/// Kernel 12 alone with the predicated round of [`VEC_TAIL_PREDICATED`] under a full SM's launch
/// bound, in every thread (`-DREDUCE12_PREDICATED_TAIL` as it was timed; `-DREDUCE12_UNSKIPPED_ROUND`
/// now); kernels 9-11 are the same code in both builds.
pub const REDUCE12_PREDICATED: VecSwitch = VecSwitch {
    variant: "k12_pred",
    option: "-DREDUCE12_PREDICATED_TAIL",
    folder: "vec-k12-pred",
    column: "predicated round in every thread",
    doing: "with its leftover loads as one predicated round in every thread",
    first_pass_unchanged: &[Dtype::BF16, Dtype::F16],
};

/// [`REDUCE12_PREDICATED`], the round skipped by a thread that has nothing left: kernel 12's
/// default build since it was timed (the default column of its table is the plain walk then).
pub const REDUCE12_PREDICATED_BRANCH: VecSwitch = VecSwitch {
    variant: "k12_pred_branch",
    option: "-DREDUCE12_PREDICATED_TAIL -DVEC_PRED_BRANCH",
    folder: "vec-k12-pred",
    column: "predicated round where a thread has any left",
    doing: "with its leftover loads as one predicated round, skipped by a thread that has none",
    first_pass_unchanged: &[Dtype::BF16, Dtype::F16],
};

/// Kernel 12's plain walk (`-DREDUCE12_PLAIN_TAIL`), timed by turns against the default build
/// that [`REDUCE12_PREDICATED_BRANCH`] became: the same comparison the other way round.
pub const REDUCE12_PLAIN: VecSwitch = VecSwitch {
    variant: "k12_plain",
    option: "-DREDUCE12_PLAIN_TAIL",
    folder: "vec-k12-plain",
    column: "plain walk (the default before)",
    doing: "with its plain walk back",
    first_pass_unchanged: &[Dtype::BF16, Dtype::F16],
};

/// `vec_tail.md`, `vec_pred.md`, `vec_k12_pred.md`, `vec_k12_pred_branch.md` and `vec_k12_plain.md`: one of kernels 9-12's leftover-load switches against the
/// default build, timed by turns in two rounds (`plots/data/experiments/<folder>/{plain,<variant>}-<round>.csv`,
/// `tests/gpu-host.sh vec-tail`): kernel 12 and the entry point at each size and type, and where
/// the switch won and lost. Where the switch leaves a type's own entries alone, that type's rows
/// change only through the later passes' accumulator entry: shown, marked, not counted.
pub fn vec_tail_table(data_dir: &std::path::Path, switch: &VecSwitch) -> crate::error::Result<String> {
    use super::turns::{cell, mean, read_turns, rounds, verdict, Verdict};
    let runs = read_turns(&data_dir.join("experiments").join(switch.folder), |f| Ok(crate::records::bench::read_csv(f)?.1))?;
    if !runs.iter().any(|r| r.variant == "plain") || !runs.iter().any(|r| r.variant == switch.variant) {
        return Ok(format!("*`{}` is not yet measured on this GPU (`tests/gpu-host.sh vec-tail`).*\n", switch.option));
    }
    let mut cases: Vec<(&str, Dtype, usize)> = Vec::new();
    for run in &runs {
        for r in run.rows.iter().filter(|r| (r.kernel == "reduce12" || r.kernel == ENTRY_POINT_KERNEL) && r.cache == Cache::Rotated) {
            if !cases.contains(&(r.kernel.as_str(), r.dtype, r.n)) {
                cases.push((&r.kernel, r.dtype, r.n));
            }
        }
    }
    cases.sort_by_key(|c| (c.0 != "reduce12", c.1.name(), c.2));
    // The GPU the runs name (the rest of the book may be of another).
    let gpu = crate::records::csv_files(&data_dir.join("experiments").join(switch.folder))
        .first()
        .and_then(|f| crate::records::bench::read_csv(f).ok())
        .map(|(machine, _)| machine.gpu)
        .filter(|g| !g.is_empty())
        .map_or(String::new(), |g| format!(" on an {g}"));
    let mut s = format!("*µs per sum, graph-amortized, the median of each of two rounds (`a / b`), the default build of the day and `{}` by turns in one call{gpu} \
        (`plots/data/experiments/{}/`).*\n\n| kernel | type | n | default | {} | change |\n|---|---|--:|--:|--:|--:|\n", switch.option, switch.folder, switch.column);
    let (mut faster, mut slower, mut counted) = (Vec::new(), Vec::new(), 0);
    // Rows of a type whose own entries the switch leaves alone: the largest change among them.
    let mut later_passes: Option<(f64, String)> = None;
    let mut marked: Vec<&str> = Vec::new();
    for &(kernel, dtype, n) in &cases {
        let times = |variant: &str| rounds(&runs, variant, |r| (r.kernel == kernel && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated).then_some(r.median_us));
        let (plain, switched) = (times("plain"), times(switch.variant));
        if plain.is_empty() || switched.is_empty() {
            continue;
        }
        let change = mean(&switched) / mean(&plain) - 1.0;
        let first_pass_same = switch.first_pass_unchanged.contains(&dtype);
        let mark = if first_pass_same { " (later passes only)" } else { "" };
        writeln!(s, "| `{kernel}` | {dtype}{mark} | {n} | {} | {} | {:+.1}% |", cell(&plain, 2), cell(&switched, 2), change * 100.0).unwrap();
        let label = format!("{dtype} {} ({:+.1}%)", size_label(n), change * 100.0);
        if first_pass_same {
            if !marked.contains(&dtype.name()) {
                marked.push(dtype.name());
            }
            if later_passes.as_ref().is_none_or(|(c, _)| change.abs() > c.abs()) {
                later_passes = Some((change, format!("`{kernel}` {label}")));
            }
        } else if kernel == "reduce12" {
            counted += 1;
            match verdict(&switched, &plain) {
                Verdict::Faster => faster.push(label),
                Verdict::Slower => slower.push(label),
                Verdict::Mixed => {}
            }
        }
    }
    let list = |v: &[String]| if v.is_empty() { "none".to_string() } else { v.join(", ") };
    write!(s, "\nKernel 12 {}, against the default build: faster in both rounds at {} of {counted} cases: {}; slower in both at {}: {}.\n",
        switch.doing, faster.len(), list(&faster), slower.len(), list(&slower)).unwrap();
    if let Some((_, at)) = later_passes {
        write!(s, "\nThe switch leaves the machine code of {}'s own entries as the default build's; their rows, marked, moved all the same, by up to {at}: \
            a sum's later passes add its f32 partial sums with the f32 entry, which the switch does change.\n", marked.join(" and ")).unwrap();
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_leftover_loads_are_set_against_the_default_build() {
        let data = std::env::temp_dir().join(format!("vec-tail-{}", std::process::id()));
        let dir = data.join("experiments/vec-tail");
        std::fs::create_dir_all(&dir).unwrap();
        assert!(vec_tail_table(&data, &VEC_TAIL_IN_FLIGHT).unwrap().contains("not yet measured"));
        let head = "# gpu: NVIDIA H200\nkernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method\n";
        let line = |n: usize, us: f64| format!("reduce12,12,t,correct,f32,{n},256,rotated,{us},1,2,3,4,5,15,m\n");
        let write = |name: &str, a: f64, b: f64| std::fs::write(dir.join(name), format!("{head}{}{}", line(1_000_000, a), line(10_000_000, b))).unwrap();
        write("plain-1.csv", 4.75, 12.10);
        write("plain-2.csv", 4.74, 12.04);
        write("tail-1.csv", 4.12, 12.76);
        write("tail-2.csv", 4.12, 12.72);
        let t = vec_tail_table(&data, &VEC_TAIL_IN_FLIGHT).unwrap();
        assert!(t.contains("| `reduce12` | f32 | 1000000 | 4.75 / 4.74 | 4.12 / 4.12 | -13.2% |"), "{t}");
        assert!(t.contains("faster in both rounds at 1 of 2 cases: f32 10^6 (-13.2%); slower in both at 1: f32 10^7 (+5.6%)."), "{t}");
        assert!(!t.contains("same code"), "{t}");
        // A round that does not agree is neither.
        write("tail-2.csv", 4.80, 12.00);
        assert!(vec_tail_table(&data, &VEC_TAIL_IN_FLIGHT).unwrap().contains("faster in both rounds at 0 of 2 cases: none; slower in both at 0: none."));
        // Another switch reads its own folder; a type whose own entries it leaves alone is marked, not a case.
        assert!(vec_tail_table(&data, &VEC_TAIL_PREDICATED).unwrap().contains("not yet measured"));
        let pred = data.join("experiments/vec-pred");
        std::fs::create_dir_all(&pred).unwrap();
        let bf16 = |us: f64| format!("reduce12,12,t,correct,bf16,1000000,256,rotated,{us},1,2,3,4,5,15,m\n");
        for (name, f32_us, bf16_us) in [("plain-1.csv", 4.67, 3.98), ("plain-2.csv", 4.68, 3.99), ("pred-1.csv", 3.80, 3.73), ("pred-2.csv", 3.79, 3.72)] {
            std::fs::write(pred.join(name), format!("{head}{}{}", line(1_000_000, f32_us), bf16(bf16_us))).unwrap();
        }
        let t = vec_tail_table(&data, &VEC_TAIL_PREDICATED).unwrap();
        assert!(t.contains("| `reduce12` | bf16 (later passes only) | 1000000 |"), "{t}");
        assert!(t.contains("faster in both rounds at 1 of 1 cases: f32 10^6 (-18.8%); slower in both at 0: none."), "{t}");
        assert!(t.contains("moved all the same, by up to `reduce12` bf16 10^6 (-6.5%)"), "{t}");
        // Kernel 12 alone with the predicated round: its files are `k12_pred-…`, beside the default's `plain-…`.
        assert!(vec_tail_table(&data, &REDUCE12_PREDICATED).unwrap().contains("not yet measured"));
        let default = data.join("experiments/vec-k12-pred");
        std::fs::create_dir_all(&default).unwrap();
        for (name, us) in [("plain-1.csv", 4.67), ("plain-2.csv", 4.68), ("k12_pred-1.csv", 3.80), ("k12_pred-2.csv", 3.79)] {
            std::fs::write(default.join(name), format!("{head}{}", line(1_000_000, us))).unwrap();
        }
        let t = vec_tail_table(&data, &REDUCE12_PREDICATED).unwrap();
        assert!(t.contains("| kernel | type | n | default | predicated round in every thread | change |"), "{t}");
        assert!(t.contains("| `reduce12` | f32 | 1000000 | 4.67 / 4.68 | 3.80 / 3.79 | -18.8% |"), "{t}");
        assert!(t.contains("the default build of the day and `-DREDUCE12_PREDICATED_TAIL` by turns in one call on an NVIDIA H200 ("), "{t}");
        // The branch's build reads the same folder, its own files.
        assert!(vec_tail_table(&data, &REDUCE12_PREDICATED_BRANCH).unwrap().contains("not yet measured"));
        for (name, us) in [("k12_pred_branch-1.csv", 3.70), ("k12_pred_branch-2.csv", 3.71)] {
            std::fs::write(default.join(name), format!("{head}{}", line(1_000_000, us))).unwrap();
        }
        let t = vec_tail_table(&data, &REDUCE12_PREDICATED_BRANCH).unwrap();
        assert!(t.contains("| `reduce12` | f32 | 1000000 | 4.67 / 4.68 | 3.70 / 3.71 | -20.7% |"), "{t}");
        std::fs::remove_dir_all(&data).unwrap();
    }

    /// The skeleton chapter says the round cost time run by every thread where every share is
    /// whole rounds (2^12: one block of 256 threads, four packs each), and that the branch's build
    /// skips it: held to the committed runs.
    #[test]
    fn the_committed_runs_show_what_the_chapter_says_of_whole_rounds() {
        use super::super::turns::{read_turns, rounds, verdict, Verdict};
        let dir = crate::records::repo_root().join("plots/data/experiments").join(REDUCE12_PREDICATED.folder);
        let runs = read_turns(&dir, |f| Ok(crate::records::bench::read_csv(f)?.1)).unwrap();
        for dtype in [Dtype::F32, Dtype::I32] {
            let times = |variant: &str| rounds(&runs, variant, |r| (r.kernel == "reduce12" && r.dtype == dtype && r.n == 4096 && r.cache == Cache::Rotated).then_some(r.median_us));
            assert_eq!(verdict(&times(REDUCE12_PREDICATED.variant), &times("plain")), Verdict::Slower, "{dtype}: the round in every thread");
            assert_ne!(verdict(&times(REDUCE12_PREDICATED_BRANCH.variant), &times("plain")), Verdict::Slower, "{dtype}: the round skipped");
        }
    }
}
