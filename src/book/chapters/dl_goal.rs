//! The goal of "Softmax, online" (`book/generated/dl_goal.md`) in sentences: each forward op's
//! range at M·N = 2^28, how many shapes meet the goal, how the fastest copy of the same run
//! compares, and every case where a peer is faster.

use super::dl::{best_peer, find, own_run_note, peak, peer_name, planned_since, shape, shapes, BACKWARD, FORWARD};
use crate::element::Dtype;
use crate::records::dl::{self as records, Loaded};
use std::fmt::Write as _;

/// The fastest copy of the run, in % of peak.
fn best_copy(l: &Loaded) -> Option<f64> {
    l.ours.iter().filter(|r| r.op == "copy").map(|r| r.percent_of(peak(&l.machine))).max_by(f64::total_cmp)
}

/// How many of the book's forward kernels at M·N = 2^28 reach 95% of the fastest copy's `copy`
/// (% of peak), of how many measured.
fn near_the_copy(l: &Loaded, copy: f64) -> (usize, usize) {
    let p = peak(&l.machine);
    let mut values = Vec::new();
    for dtype in [Dtype::F32, Dtype::BF16] {
        for (m, n) in shapes(&l.ours, dtype).into_iter().filter(|&(m, n)| m * n == 1 << 28) {
            for (op, _) in FORWARD {
                values.extend(find(&l.ours, &records::kernel_name(op), op, dtype, m, n).map(|r| r.percent_of(p)));
            }
        }
    }
    (values.iter().filter(|&&v| v >= 0.95 * copy).count(), values.len())
}

/// The (op, type, shape) cases, forward and backward, where both ours and a peer were timed.
fn compared_cases(l: &Loaded) -> usize {
    let mut count = 0;
    for dtype in [Dtype::F32, Dtype::BF16] {
        for (m, n) in shapes(&l.ours, dtype) {
            for (op, _) in FORWARD.iter().chain(BACKWARD.iter()) {
                count += usize::from(find(&l.ours, &records::kernel_name(op), op, dtype, m, n).is_some() && best_peer(&l.peers, op, dtype, m, n).is_some());
            }
        }
    }
    count
}

/// The goal in sentences: the range per op over N = 1024 … 262144 and at 256, 512; where the goal
/// is met; where a peer is faster.
pub fn goal(l: &Loaded) -> String {
    let p = peak(&l.machine);
    let mut out = String::new();
    let mut met = 0;
    let mut total = 0;
    let mut slower: Vec<(f64, String)> = Vec::new();
    for dtype in [Dtype::F32, Dtype::BF16] {
        let sh = shapes(&l.ours, dtype);
        let mut parts = Vec::new();
        for (op, title) in FORWARD {
            let pct = |keep: &dyn Fn(usize) -> bool| -> Vec<f64> {
                sh.iter().filter(|&&(m, n)| m * n == 1 << 28 && keep(n)).filter_map(|&(m, n)| find(&l.ours, &records::kernel_name(op), op, dtype, m, n)).map(|r| r.percent_of(p)).collect()
            };
            let long = pct(&|n| n >= 1024);
            let short = pct(&|n| n < 1024);
            if long.is_empty() {
                continue;
            }
            let (lo, hi) = long.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
            let slo = short.iter().copied().fold(f64::INFINITY, f64::min);
            met += long.iter().filter(|&&v| v >= 90.0).count() + short.iter().filter(|&&v| v >= 80.0).count();
            total += long.len() + short.len();
            let range = if hi - lo < 0.05 { format!("{lo:.1}%") } else { format!("{lo:.1}–{hi:.1}%") };
            parts.push(if short.is_empty() { format!("{title} {range}") } else { format!("{title} {range} (N < 1024: from {slo:.1}%)") });
        }
        for &(m, n) in &sh {
            for (op, title) in FORWARD.iter().chain(BACKWARD.iter()) {
                if let (Some(ours), Some(peer)) = (find(&l.ours, &records::kernel_name(op), op, dtype, m, n), best_peer(&l.peers, op, dtype, m, n)) {
                    if peer.median_us < ours.median_us {
                        let ratio = ours.median_us / peer.median_us;
                        // A row the planner no longer takes says so: the gap is the earlier team's.
                        let earlier = if planned_since(&l.machine, ours).is_some() { ", the planner's earlier team" } else { "" };
                        slower.push((ratio, format!("{title} {dtype} {} ({} {:.1} µs, ours {:.1} µs{earlier}, {ratio:.2}×)", shape(m, n), peer_name(peer), peer.median_us, ours.median_us)));
                    }
                }
            }
        }
        if !parts.is_empty() {
            // The columns this run measured: a run cut short by its budget measures only some.
            let measured: Vec<String> = sh.iter().filter(|&&(m, n)| m * n == 1 << 28).map(|&(_, n)| format!("2^{}", n.trailing_zeros())).collect();
            writeln!(out, "On the {} ({dtype}, M·N = 2^28, measured at N = {} of 2^8 … 2^18): {}.", l.machine.gpu, measured.join(", "), parts.join("; ")).unwrap();
            out.push('\n');
        }
    }
    writeln!(out, "The goal — 90% of peak from N = 1024, 80% at N = 256 and 512 — is met at {met} of the {total} forward shapes measured.").unwrap();
    if let Some(c) = best_copy(l) {
        write!(out, " The fastest copy on this GPU (a kernel that only reads and writes every byte once; the yardsticks below) reached {c:.1}%").unwrap();
        if c < 90.0 {
            write!(out, ": 90% is more than a plain copy reaches on this GPU, so for kernels that read and write every value once the copy is the mark").unwrap();
            let (near, of) = near_the_copy(l, c);
            write!(out, "; the book's forward kernels at M·N = 2^28 come within 5% of it (at least {:.1}% of peak) at {near} of {of} (op, type, N)", 0.95 * c).unwrap();
        }
        writeln!(out, ".").unwrap();
    }
    out.push('\n');
    if slower.is_empty() {
        writeln!(out, "No peer is faster than the book's kernel at any shape.").unwrap();
    } else {
        slower.sort_by(|a, b| b.0.total_cmp(&a.0));
        let close = slower.iter().filter(|(ratio, _)| *ratio <= 1.05).count();
        let compared = compared_cases(l);
        let largest: Vec<&str> = slower.iter().take(8).map(|(_, s)| s.as_str()).collect();
        writeln!(out, "A peer is faster at {} of the {compared} (op, type, shape) cases where one ran beside ours{}: by at most 5% at {close} of them; the largest gaps: {}.", slower.len(), own_run_note(l), largest.join("; ")).unwrap();
        writeln!(out, "\n<details><summary>Every case where a peer is faster</summary>\n\n{}.\n\n</details>", slower.iter().map(|(_, s)| s.as_str()).collect::<Vec<_>>().join("; ")).unwrap();
    }
    let absent = absent_peers(l);
    if !absent.is_empty() {
        writeln!(out, "\nNot measured in this run (neither timed nor refused): {}.", absent.join("; ")).unwrap();
    }
    out
}

/// The peer families of `plots/dl_peers.py` with no row, timed or refused, in the results (the
/// script skips a library it cannot import).
fn absent_peers(l: &Loaded) -> Vec<String> {
    // Only Quack's absence has a known cause; the others would be named bare.
    const FAMILIES: [(&str, &str); 6] = [
        ("torch_compile", "torch.compile"),
        ("torch", "torch eager"),
        ("triton", "Triton"),
        ("tilelang", "TileLang"),
        ("liger", "Liger-Kernel"),
        ("quack", "Quack (not installed on this GPU host; `plots/pack_peers.sh` packs it for one without network: the CuTe DSL it runs on is 52 + 5 MB)"),
    ];
    let has = |prefix: &str| {
        let starts = |k: &str| k.starts_with(prefix) && !(prefix == "torch" && k.starts_with("torch_compile"));
        l.peers.iter().any(|r| starts(&r.kernel)) || l.refused.iter().any(|r| starts(&r.kernel))
    };
    FAMILIES.iter().filter(|(prefix, _)| !has(prefix)).map(|(_, why)| why.to_string()).collect()
}
