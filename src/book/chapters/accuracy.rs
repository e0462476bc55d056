//! "How wrong does a float sum get?" (`book/accuracy.md`): the median error of each method as N
//! grows and as the condition number grows, as tables (`accuracy.md`,
//! `accuracy_conditioning.md`) and charts, and the cascaded kernel input by input
//! (`accuracy_cascade.md`), from `plots/data/accuracy/`
//! ([`crate::records::accuracy`]).

use super::common::size_text;
use crate::book::context::Context;
use crate::element::Dtype;
use crate::book::draw::charts::{accuracy_chart, conditioning_chart, MethodPoints};
use crate::error::Result;
use crate::records::accuracy::{Conditioned, Measurement, METHODS};
use crate::records::summary::median;
use std::fmt::Write as _;

/// The median relative error of each method at each n (over the seeds), in method order.
pub fn medians(rows: &[Measurement]) -> Vec<MethodPoints<usize>> {
    METHODS
        .iter()
        .filter_map(|&(method, what)| {
            let mut sizes: Vec<usize> = rows.iter().filter(|r| r.method == method).map(|r| r.n).collect();
            sizes.sort_unstable();
            sizes.dedup();
            let points: Vec<(usize, f64)> = sizes
                .into_iter()
                .map(|n| {
                    let errors: Vec<f64> = rows.iter().filter(|r| r.method == method && r.n == n).map(|r| r.relative_error()).collect();
                    (n, median(&errors))
                })
                .collect();
            (!points.is_empty()).then_some((method, what, points))
        })
        .collect()
}

/// The chapter's table: each method's median relative error at 2^20 and 2^30 (or the largest
/// sizes measured), next to the two textbook bounds.
pub fn table(gpu: &str, rows: &[Measurement]) -> String {
    let medians = medians(rows);
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let shown: Vec<usize> = [1usize << 20, 1 << 30].into_iter().filter(|n| sizes.contains(n)).collect();
    let seeds = {
        let mut s: Vec<u64> = rows.iter().map(|r| r.seed).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let mut s = String::new();
    writeln!(s, "Median relative error over {seeds} inputs of uniform random values in [0, 1), measured on an {gpu}; an error of 0 means the sum was exact.\n").unwrap();
    let head: Vec<String> = shown.iter().map(|n| format!("n = 2^{}", n.trailing_zeros())).collect();
    writeln!(s, "| method | {} |\n|---|{}", head.join(" | "), "--:|".repeat(shown.len())).unwrap();
    for (method, what, points) in &medians {
        let cells: Vec<String> = shown
            .iter()
            .map(|n| match points.iter().find(|(m, _)| m == n) {
                None => "–".into(),
                Some((_, e)) if e.is_infinite() => "∞ (the sum overflowed)".into(),
                Some((_, e)) => format!("{e:.1e}"),
            })
            .collect();
        writeln!(s, "| {what} (`{method}`) | {} |", cells.join(" | ")).unwrap();
    }
    let u = crate::data::F32_UNIT_ROUNDOFF;
    let bound = |f: &dyn Fn(f64) -> f64| shown.iter().map(|&n| format!("{:.1e}", f(n as f64))).collect::<Vec<_>>().join(" | ");
    writeln!(s, "| bound for any order of additions, (n − 1)·u (f32) | {} |", bound(&|n| (n - 1.0) * u)).unwrap();
    writeln!(s, "| bound for a balanced tree, ⌈log₂ n⌉·u (f32) | {} |", bound(&|n| n.log2().ceil() * u)).unwrap();
    s
}

/// What the chapter shows until the size sweep has run on the book's GPU.
pub const NOT_MEASURED: &str = "*Not yet measured on this GPU: `cargo run --release -- accuracy` writes the data and redraws this table and its chart.*\n";
/// The same for the conditioning sweep.
pub const CONDITIONING_NOT_MEASURED: &str = "*Not yet measured on this GPU: `cargo run --release -- accuracy --only conditioning` writes the data and redraws this table and its chart.*\n";

/// `accuracy.md`: the size sweep's table, or how to measure it.
pub fn sizes_markdown(c: &Context) -> String {
    c.accuracy.as_ref().map_or_else(|| NOT_MEASURED.to_string(), |(gpu, rows)| table(gpu, rows))
}

/// `plots/accuracy.svg`: each method's median error against N (empty where not measured).
pub fn sizes_chart(c: &Context) -> Result<String> {
    match &c.accuracy {
        Some((gpu, rows)) => accuracy_chart(gpu, &medians(rows)),
        None => accuracy_chart(&c.book()?.0.gpu, &[]),
    }
}

/// `accuracy_conditioning.md`: the conditioning sweep's table, or how to measure it.
pub fn conditioning_markdown(c: &Context) -> String {
    c.conditioning.as_ref().map_or_else(|| CONDITIONING_NOT_MEASURED.to_string(), |(gpu, rows)| conditioning_table(gpu, rows))
}

/// `plots/accuracy_conditioning.svg`: each method's median error against the condition number.
pub fn conditioning_chart_svg(c: &Context) -> Result<String> {
    match &c.conditioning {
        Some((gpu, rows)) => conditioning_chart(gpu, rows.first().map_or(0, |r| r.n), &conditioning_medians(rows)),
        None => conditioning_chart(&c.book()?.0.gpu, 0, &[]),
    }
}

/// Each method's (median condition, median relative error) at each target, in method order.
pub fn conditioning_medians(rows: &[Conditioned]) -> Vec<MethodPoints<f64>> {
    let mut targets: Vec<f64> = rows.iter().map(|r| r.target).collect();
    targets.sort_by(|a, b| a.total_cmp(b));
    targets.dedup();
    METHODS.iter().filter_map(|&(method, what)| {
        let points: Vec<(f64, f64)> = targets.iter().filter_map(|&t| {
            let at: Vec<&Conditioned> = rows.iter().filter(|r| r.method == method && r.target == t).collect();
            (!at.is_empty()).then(|| (median(&at.iter().map(|r| r.condition).collect::<Vec<_>>()), median(&at.iter().map(|r| r.relative_error()).collect::<Vec<_>>())))
        }).collect();
        (!points.is_empty()).then_some((method, what, points))
    }).collect()
}

/// The median error of `method` at the targets of at least `from`, if measured.
fn errors_from(rows: &[Conditioned], method: &str, from: f64) -> Vec<(f64, f64)> {
    let mut targets: Vec<f64> = rows.iter().filter(|r| r.target >= from).map(|r| r.target).collect();
    targets.sort_by(|a, b| a.total_cmp(b));
    targets.dedup();
    targets.into_iter().filter_map(|t| {
        let errors: Vec<f64> = rows.iter().filter(|r| r.method == method && r.target == t).map(|r| r.relative_error()).collect();
        (!errors.is_empty()).then(|| (t, median(&errors)))
    }).collect()
}

/// How many times smaller the compensated sum's median error is than the tree's at the
/// condition numbers from 10^6 on: the smallest ratio over those targets (infinite where the
/// compensated sum was exact), or None where either was not measured.
pub fn compensated_advantage(rows: &[Conditioned]) -> Option<f64> {
    let tree = errors_from(rows, "gpu_tree", 1e6);
    let compensated = errors_from(rows, "gpu_reproducible_neumaier", 1e6);
    let ratios: Vec<f64> = tree.iter().filter_map(|(t, e)| compensated.iter().find(|(c, _)| c == t).map(|(_, c)| if *c == 0.0 { f64::INFINITY } else { e / c })).collect();
    ratios.into_iter().reduce(f64::min)
}

/// The chapter's table of the conditioning sweep: each method's median error at condition
/// numbers 1, 10^3, 10^6, 10^9 and 10^12 (those measured), and the sentence on the
/// compensated sum against the tree.
pub fn conditioning_table(gpu: &str, rows: &[Conditioned]) -> String {
    let shown: Vec<f64> = [1.0, 1e3, 1e6, 1e9, 1e12].into_iter().filter(|t| rows.iter().any(|r| r.target == *t)).collect();
    let n = rows.first().map_or(0, |r| r.n);
    let seeds = {
        let mut s: Vec<u64> = rows.iter().map(|r| r.seed).collect();
        s.sort_unstable();
        s.dedup();
        s.len()
    };
    let mut s = String::new();
    writeln!(s, "Median relative error over {seeds} inputs of 2^{} values at each condition number, measured on an {gpu}; 0 means the sum was exact.\n", n.trailing_zeros()).unwrap();
    let head: Vec<String> = shown.iter().map(|t| format!("cond ≈ {t:.0e}")).collect();
    writeln!(s, "| method | {} |\n|---|{}", head.join(" | "), "--:|".repeat(shown.len())).unwrap();
    for &(method, what) in METHODS {
        let cells: Vec<String> = shown.iter().map(|&t| {
            let errors: Vec<f64> = rows.iter().filter(|r| r.method == method && r.target == t).map(|r| r.relative_error()).collect();
            if errors.is_empty() { "–".into() } else { format!("{:.1e}", median(&errors)) }
        }).collect();
        if cells.iter().all(|c| c == "–") {
            continue;
        }
        writeln!(s, "| {what} (`{method}`) | {} |", cells.join(" | ")).unwrap();
    }
    match compensated_advantage(rows) {
        Some(r) if r.is_infinite() => writeln!(s, "\nFrom condition number 10^6 on, the reproducible compensated sum was exact at every condition number where the tree was not.").unwrap(),
        Some(r) => writeln!(s, "\nFrom condition number 10^6 on, the reproducible compensated sum's median error is at least {r:.0}× smaller than the tree's (the smallest ratio over those condition numbers).").unwrap(),
        None => {}
    }
    if let Some(sentence) = compensated_reach(rows) {
        writeln!(s, "\n{sentence}").unwrap();
    }
    let wide = errors_from(rows, "gpu_reproducible_f64", 0.0);
    if let Some((t, e)) = wide.iter().copied().reduce(|a, b| if b.1 > a.1 { b } else { a }) {
        writeln!(s, "\nThe `f64` accumulator's largest median error over the sweep was {e:.1e} ({:.2} × u, at condition number {t:.0e}).", e * (1u64 << 24) as f64).unwrap();
    }
    s
}

/// Where the compensated sum's median error first exceeds `u = 2^-24`, the rounding of an `f32`
/// result: the largest condition number up to which it stayed within it, and its error at the
/// next one (or that it stayed within it over the whole sweep).
pub fn compensated_reach(rows: &[Conditioned]) -> Option<String> {
    const U: f64 = 1.0 / (1u64 << 24) as f64;
    let errors = errors_from(rows, "gpu_reproducible_neumaier", 0.0);
    let last = *errors.last()?;
    let within: Vec<&(f64, f64)> = errors.iter().take_while(|(_, e)| *e <= U).collect();
    Some(match (within.last(), errors.get(within.len())) {
        (Some((t, _)), Some((next, e))) => format!(
            "The reproducible compensated sum's median error stayed within u = 2^-24, the rounding of its `f32` result, up to condition number {t:.0e}; at {next:.0e} it was {e:.1e}, and {:.1e} at {:.0e}.",
            last.1, last.0),
        (Some(_), None) => format!("The reproducible compensated sum's median error stayed within u = 2^-24, the rounding of its `f32` result, at every condition number measured, up to {:.0e}.", last.0),
        (None, _) => format!("The reproducible compensated sum's median error exceeded u = 2^-24 already at condition number {:.0e}.", errors[0].0),
    })
}

/// `accuracy_cascade.md`: where the cascaded kernel's error lies against the tree's and the CPU
/// loop's, input by input (not only the medians of three), from [`Context::accuracy`].
pub fn cascade_markdown(c: &Context) -> String {
    accuracy_cascade(c.accuracy.as_ref().map(|(_, m)| m.as_slice()))
}

/// Where the cascaded kernel's error lies against the tree's and the CPU loop's, input by input.
pub fn accuracy_cascade(measurements: Option<&[Measurement]>) -> String {
    let Some(ms) = measurements.filter(|m| !m.is_empty()) else {
        return "*The accuracy experiment has not run on this GPU.*\n".into();
    };
    let by = |method: &str, n: usize| -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, f64)> =
            ms.iter().filter(|m| m.method == method && m.input == Dtype::F32 && m.n == n).map(|m| (m.seed, m.relative_error())).collect();
        v.sort_by_key(|x| x.0);
        v
    };
    let mut sizes: Vec<usize> = ms.iter().filter(|m| m.method == "gpu_cascaded").map(|m| m.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let (mut between, mut total, mut not) = (0, 0, Vec::new());
    for &n in &sizes {
        let (tree, cascade, cpu) = (by("gpu_tree", n), by("gpu_cascaded", n), by("cpu_sequential", n));
        for ((seed, c), ((_, t), (_, l))) in cascade.iter().zip(tree.iter().zip(cpu.iter())) {
            total += 1;
            if (t.min(*l)..=t.max(*l)).contains(c) {
                between += 1;
            } else {
                not.push(format!("{} seed {seed}", size_text(n)));
            }
        }
    }
    let seeds = ms.iter().map(|m| m.seed).collect::<std::collections::BTreeSet<_>>().len();
    let mut s = format!(
        "Input by input ({seeds} inputs at each of {} sizes, `f32`), the cascaded kernel's error lies between the tree's and the CPU \
        loop's in {between} of {total} cases",
        sizes.len()
    );
    if !not.is_empty() {
        write!(s, "; not at {}", not.iter().take(6).cloned().collect::<Vec<_>>().join(", ")).unwrap();
        if not.len() > 6 {
            write!(s, " and {} more", not.len() - 6).unwrap();
        }
    }
    s.push_str(". With three inputs a size, a median moves with one of them: read the table's medians as that.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cascade_is_placed_input_by_input() {
        let m = |method: &str, seed: u64, result: f64| Measurement { method: method.into(), input: Dtype::F32, n: 1 << 20, seed, result, exact: 1000.0 };
        // Seed 1: tree 1e-3, CPU 1e-2, cascade 5e-3 (between); seed 2: the cascade is worse than both.
        let rows = vec![m("gpu_tree", 1, 1001.0), m("cpu_sequential", 1, 1010.0), m("gpu_cascaded", 1, 1005.0),
            m("gpu_tree", 2, 1001.0), m("cpu_sequential", 2, 1002.0), m("gpu_cascaded", 2, 1020.0)];
        let text = accuracy_cascade(Some(&rows));
        assert!(text.contains("in 1 of 2 cases; not at 2^20 seed 2"), "{text}");
        assert!(accuracy_cascade(None).contains("has not run"));
    }

    #[test]
    fn the_table_shows_each_method_at_the_sizes_measured() {
        let rows = vec![
            Measurement { method: "cpu_sequential".into(), input: Dtype::F32, n: 1 << 20, seed: 1, result: 524_300.0, exact: 524_288.0 },
            Measurement { method: "gpu_tree".into(), input: Dtype::F32, n: 1 << 20, seed: 1, result: 524_288.0, exact: 524_288.0 },
        ];
        let t = table("Test GPU", &rows);
        assert!(t.contains("(`cpu_sequential`) | 2.3e-5 |"), "{t}");
        assert!(t.contains("(`gpu_tree`) | 0.0e0 |"), "{t}");
    }

    #[test]
    fn the_advantage_is_the_smallest_ratio() {
        let row = |method: &str, target: f64, result: f64| Conditioned { method: method.into(), n: 1 << 24, target, seed: 1, condition: target * 1.01, result, exact: 1.0 };
        let rows = vec![row("gpu_tree", 1e6, 1.5), row("gpu_reproducible_neumaier", 1e6, 1.0 + 1e-6), row("gpu_tree", 1e9, 3.0), row("gpu_reproducible_neumaier", 1e9, 1.001), row("gpu_tree", 1.0, 1.0)];
        // 0.5 / 1e-6 at 1e6, 2 / 1e-3 at 1e9: the smaller is 2000.
        let advantage = compensated_advantage(&rows).unwrap();
        assert!((advantage - 2000.0).abs() < 1e-6, "{advantage}");
        let t = conditioning_table("Test GPU", &rows);
        assert!(t.contains("at least 2000× smaller"), "{t}");
        assert!(t.contains("(`gpu_tree`) | 0.0e0 | 5.0e-1 | 2.0e0 |"), "{t}");
    }

    #[test]
    fn the_compensated_reach_names_the_first_condition_number_past_u() {
        let row = |target: f64, e: f64| Conditioned { method: "gpu_reproducible_neumaier".into(), n: 16, target, seed: 1, condition: target, result: 1.0 + e, exact: 1.0 };
        let rows = vec![row(1.0, 1e-8), row(1e3, 2e-8), row(1e6, 1e-6), row(1e9, 1e-3)];
        let sentence = compensated_reach(&rows).unwrap();
        assert!(sentence.contains("up to condition number 1e3; at 1e6 it was 1.0e-6"), "{sentence}");
        let all = vec![row(1.0, 1e-8), row(1e3, 2e-8)];
        assert!(compensated_reach(&all).unwrap().contains("at every condition number measured"));
    }

    #[test]
    fn the_committed_conditioning_data_meets_the_goal() {
        // From condition number 10^6 on, the compensated sum's error is at least 100 times
        // smaller than the tree's; and the plain tree's error grows with the condition number.
        let path = crate::records::accuracy::conditioning_file(&crate::records::repo_root().join("plots/data"), "NVIDIA H200");
        let (_, rows) = crate::records::accuracy::read_conditioning_csv(&path).unwrap();
        let advantage = compensated_advantage(&rows).unwrap();
        assert!(advantage >= 100.0, "{advantage}");
        let tree = errors_from(&rows, "gpu_tree", 1.0);
        assert!(tree.windows(4).all(|w| w[3].1 > w[0].1), "{tree:?}");
    }
}
