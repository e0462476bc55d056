//! What the deep-learning kernels are checked against: float64 references computed on the CPU
//! from the very values the GPU read, and the bounds the f32 arithmetic must keep to, derived
//! from the launch (how many values a thread adds, the tree above it) and the output type.
//!
//! A bound is `|got − want| ≤ rtol·|want| + atol·scale`, with `scale` the largest |want| of the
//! tensor (so an underflowed e^(x − max) may be 0). NaN must meet NaN, and nothing else passes
//! NaN or ±∞ where the reference is finite. The planted bugs of [`crate::check::dl_mutants`] miss
//! these bounds by orders of magnitude (a missing rescale is off by e^(m − M); a dropped tail
//! value by up to 1/N of the sum; swapped γ and β by |γ − β|), which `tests/dl.rs` shows.

use crate::element::{bf16, f16, Dtype, Element};
use crate::rows::RowLayout;

/// `|got − want| ≤ rtol·|want| + atol·scale + abs`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    pub rtol: f64,
    pub atol: f64,
    /// An absolute floor: f16's subnormal spacing, or what the input's magnitude costs.
    pub abs: f64,
}

/// What the input does to the rounding, measured on it by the caller.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Conditioning {
    /// The largest x − min over a row (softmax family): e^(x − max) is computed from x − max.
    pub spread: f64,
    /// The largest |x| (cross-entropy: logsumexp − `x[t]` cancels, and f32 holds each to u·|x|).
    pub magnitude: f64,
    /// The largest |mean|·rstd of a row (LayerNorm: the mean's own rounding, amplified by rstd).
    pub mean_rstd: f64,
    /// The largest mean of |x| over a row: a sum's rounding is bounded by its depth times u times
    /// the sum of |x|, not of x (a row mean near 0 by cancellation is no smaller an error).
    pub mean_abs: f64,
}

/// Unit roundoff of f32 arithmetic and of each output type.
pub const U32: f64 = 1.0 / (1u64 << 24) as f64;
pub fn unit(dtype: Dtype) -> f64 {
    match dtype {
        Dtype::F16 => 1.0 / 2048.0,
        Dtype::BF16 => 1.0 / 256.0,
        _ => U32,
    }
}

/// ex2.approx.ftz.f32's relative error (PTX ISA: "maximum relative error 2^-22", taken as 2^-21).
pub const EX2: f64 = 1.0 / (1u64 << 21) as f64;

// ANCHOR: bounds
/// The bound of each output of `op`, for a launch whose deepest sum has `depth` roundings
/// ([`crate::kernels::dl::plan::Launch::depth`]), written in `dtype`, on rows whose exponents
/// (x − max) reach `spread` at most (softmax family: e^(x − max) is computed from x − max, so its
/// relative error grows with |x − max|; the terms that far below the max are small).
///   softmax:     y = e^(x−M)/S. Each e^t: (2|t|·ln2·u + EX2) relative; S adds `depth` roundings;
///                1/S and the product one each; then the rounding to the output type.
///   log_softmax: y = (x − M) − log S: u·|x − M| absolute, log S's error u·|log S| + the relative
///                error of S; then the output rounding (relative to |y|).
///   norms:       y = (x − μ)·r·γ (+ β): μ and r from `depth`-deep sums of values and squares;
///                relative error (depth + 8)·u of the centred value, plus the output rounding.
///   softmax_bwd: dx = y·(dy − Σ y·dy): the dot product `depth` deep, relative to Σ|y·dy|.
///   statistics (mean, rstd, rrms, loss): f32, (depth + 8)·u relative, and as much absolute
///                against the tensor's scale.
pub fn bound(op: crate::kernels::dl::DlOp, output: &str, dtype: Dtype, depth: u64, c: Conditioning) -> Bound {
    use crate::kernels::dl::DlOp;
    let u = U32;
    let d = depth as f64;
    let typed = matches!(output, "y" | "dx" | "dgamma" | "dbeta");
    let out = if typed { unit(dtype) } else { u };
    // f16 keeps values under 2^-14 to a spacing of 2^-24, not to a relative 2^-11.
    let subnormal = if typed && dtype == Dtype::F16 { 1.0 / (1u64 << 24) as f64 } else { 0.0 };
    let exp = 2.0 * c.spread * std::f64::consts::LN_2 * u + EX2;
    let b = |rtol: f64, atol: f64, abs: f64| Bound { rtol, atol, abs: abs + subnormal };
    match (op, output) {
        (DlOp::Softmax, "y") => b(2.0 * (exp + d * u) + 4.0 * u + out, 2.0 * u, 0.0),
        (DlOp::LogSoftmax, "y") => b(out + 2.0 * u, (c.spread + 20.0) * u + exp + d * u, 4.0 * u * c.magnitude),
        (DlOp::LayerNorm | DlOp::RmsNorm, "y") => b(out + (d + 8.0) * u, 4.0 * (d + 8.0) * u, 8.0 * u * c.mean_rstd * 1.5),
        // f32 2 × 65536 on the H200: means of 1e-4 with values near 1; a bound from the means
        // alone (the rule below) was 1.2× too tight there.
        (DlOp::LayerNorm, "mean") => b((d + 8.0) * u, (d + 8.0) * u, (d + 8.0) * u * c.mean_abs),
        (DlOp::LayerNorm, "rstd") => b((d + 8.0) * u + 16.0 * u * c.mean_rstd, (d + 8.0) * u, 0.0),
        (DlOp::SoftmaxBwd, "dx") => b(out + 4.0 * u, 2.0 * (d + 4.0) * u, 0.0),
        (DlOp::CrossEntropy, _) => b((d + 8.0) * u + exp, (d + 8.0) * u + exp, 8.0 * u * c.magnitude),
        (DlOp::LayerNormBwdGammaBeta, _) => b(out, (d + 8.0) * u, 0.0),
        _ => b((d + 8.0) * u, (d + 8.0) * u, 0.0),
    }
}
// ANCHOR_END: bounds

/// Check `got` against `want` within `b`: `Ok`, or how many values are wrong and the first few.
pub fn compare(what: &str, got: &[f64], want: &[f64], b: Bound) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} values for {} expected", got.len(), want.len()));
    }
    let scale = want.iter().filter(|w| w.is_finite()).fold(0.0f64, |m, w| m.max(w.abs()));
    let mut wrong = 0usize;
    let mut first = Vec::new();
    let mut worst = 0.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            let tol = b.rtol * w.abs() + b.atol * scale + b.abs;
            let err = (g - w).abs();
            if err.is_finite() && tol > 0.0 {
                worst = worst.max(err / tol);
            }
            err <= tol
        };
        if !ok {
            wrong += 1;
            if first.len() < 3 {
                first.push(format!("[{i}] got {g:e}, want {w:e}"));
            }
        }
    }
    if wrong == 0 {
        Ok(())
    } else {
        Err(format!("{what}: {wrong} of {} values outside |err| ≤ {:.2e}·|want| + {:.2e}·{scale:.3e} + {:.1e} (worst {worst:.3} × the bound): {}",
            got.len(), b.rtol, b.atol, b.abs, first.join(", ")))
    }
}

/// The worst ratio of error to tolerance (for reports); NaN mismatches count as infinity.
pub fn worst_ratio(got: &[f64], want: &[f64], b: Bound) -> f64 {
    let scale = want.iter().filter(|w| w.is_finite()).fold(0.0f64, |m, w| m.max(w.abs()));
    got.iter().zip(want).fold(0.0f64, |m, (&g, &w)| {
        if w.is_nan() {
            return if g.is_nan() { m } else { f64::INFINITY };
        }
        let tol = b.rtol * w.abs() + b.atol * scale + b.abs;
        let err = (g - w).abs();
        if !err.is_finite() {
            f64::INFINITY
        } else if tol > 0.0 {
            m.max(err / tol)
        } else if err > 0.0 {
            f64::INFINITY
        } else {
            m
        }
    })
}

/// The values of the row-major `layout` of `host`, as f64, one row after another.
pub fn row_values<T: Element>(host: &[T], layout: RowLayout, r: usize) -> impl Iterator<Item = f64> + '_ {
    host[r * layout.stride..r * layout.stride + layout.cols].iter().map(|x| x.to_f64())
}

/// The conditioning of rows of `x` for [`bound`] (the tests' and the benchmark's checks): the
/// largest of the rows' own. `mean_rstd` is left 0: LayerNorm's comes from its reference
/// ([`with_mean_rstd`]).
pub fn conditioning<T: Element>(x: &[T], layout: RowLayout) -> Conditioning {
    (0..layout.rows).map(|r| row_conditioning(x, layout, r)).fold(Conditioning::default(), |c, r| Conditioning {
        spread: c.spread.max(r.spread),
        magnitude: c.magnitude.max(r.magnitude),
        mean_abs: c.mean_abs.max(r.mean_abs),
        ..c
    })
}

/// `c` with LayerNorm's |mean|·rstd, the largest over the rows of its reference's mean and rstd.
pub fn with_mean_rstd(c: Conditioning, mean: &[f64], rstd: &[f64]) -> Conditioning {
    Conditioning { mean_rstd: mean.iter().zip(rstd).fold(0.0f64, |a, (m, r)| a.max((m * r).abs())), ..c }
}

/// Row `r`'s own conditioning (the whole tensor's is the largest of its rows').
pub fn row_conditioning<T: Element>(x: &[T], layout: RowLayout, r: usize) -> Conditioning {
    let mut c = Conditioning::default();
    let (lo, hi, abs, count) = row_values(x, layout, r)
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY, 0.0, 0usize), |(a, b, s, k), v| (a.min(v), b.max(v), s + v.abs(), k + 1));
    if count > 0 {
        c.spread = hi - lo;
        c.magnitude = hi.abs().max(lo.abs());
        c.mean_abs = abs / count as f64;
    }
    c
}

/// `f(r, out_row)` for every row, on every core: `out` holds `per_row` values per row.
fn by_rows(rows: usize, per_row: usize, f: impl Fn(usize, &mut [f64]) + Sync) -> Vec<f64> {
    let mut out = vec![0.0; rows * per_row];
    if rows == 0 || per_row == 0 {
        return out;
    }
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    let per = rows.div_ceil(workers).max(1);
    std::thread::scope(|scope| {
        for (w, chunk) in out.chunks_mut(per * per_row).enumerate() {
            let f = &f;
            scope.spawn(move || {
                for (i, row) in chunk.chunks_mut(per_row).enumerate() {
                    f(w * per + i, row);
                }
            });
        }
    });
    out
}

// ANCHOR: references
/// softmax (or log_softmax) of every row, in f64: e^(x − max) / Σ e^(x − max).
pub fn softmax<T: Element>(x: &[T], layout: RowLayout, log: bool) -> Vec<f64> {
    by_rows(layout.rows, layout.cols, |r, out| {
        let m = row_values(x, layout, r).fold(f64::NEG_INFINITY, f64::max);
        let s: f64 = row_values(x, layout, r).map(|v| (v - m).exp()).sum();
        for (o, v) in out.iter_mut().zip(row_values(x, layout, r)) {
            *o = if log { (v - m) - s.ln() } else { (v - m).exp() / s };
        }
        if row_values(x, layout, r).any(f64::is_nan) {
            out.iter_mut().for_each(|o| *o = f64::NAN);
        }
    })
}

/// softmax's backward: dx = y · (dy − Σ y·dy) per row.
pub fn softmax_backward<T: Element>(y: &[T], dy: &[T], layout: RowLayout) -> Vec<f64> {
    by_rows(layout.rows, layout.cols, |r, out| {
        let dot: f64 = row_values(y, layout, r).zip(row_values(dy, layout, r)).map(|(a, b)| a * b).sum();
        for (o, (a, b)) in out.iter_mut().zip(row_values(y, layout, r).zip(row_values(dy, layout, r))) {
            *o = a * (b - dot);
        }
    })
}

/// LayerNorm of every row: (y, mean, rstd), the biased variance as torch's F.layer_norm.
pub fn layer_norm<T: Element>(x: &[T], gamma: &[T], beta: &[T], layout: RowLayout, eps: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let n = layout.cols as f64;
    let stats = by_rows(layout.rows, 2, |r, out| {
        let mean = row_values(x, layout, r).sum::<f64>() / n;
        let var = row_values(x, layout, r).map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        out[0] = mean;
        out[1] = 1.0 / (var + eps).sqrt();
    });
    let y = by_rows(layout.rows, layout.cols, |r, out| {
        let (mean, rstd) = (stats[2 * r], stats[2 * r + 1]);
        for (j, (o, v)) in out.iter_mut().zip(row_values(x, layout, r)).enumerate() {
            *o = (v - mean) * rstd * gamma[j].to_f64() + beta[j].to_f64();
        }
    });
    (y, stats.iter().step_by(2).copied().collect(), stats.iter().skip(1).step_by(2).copied().collect())
}

/// RMSNorm of every row: (y, 1/rms), as torch's F.rms_norm.
pub fn rms_norm<T: Element>(x: &[T], gamma: &[T], layout: RowLayout, eps: f64) -> (Vec<f64>, Vec<f64>) {
    let n = layout.cols as f64;
    let rrms = by_rows(layout.rows, 1, |r, out| out[0] = 1.0 / (row_values(x, layout, r).map(|v| v * v).sum::<f64>() / n + eps).sqrt());
    let y = by_rows(layout.rows, layout.cols, |r, out| {
        for (j, (o, v)) in out.iter_mut().zip(row_values(x, layout, r)).enumerate() {
            *o = v * rrms[r] * gamma[j].to_f64();
        }
    });
    (y, rrms)
}

/// Cross-entropy of every row: (losses, their mean over the rows not ignored). A target that is
/// `ignore_index` gives 0 and is not counted; one outside [0, cols) gives NaN.
pub fn cross_entropy<T: Element>(x: &[T], targets: &[i64], layout: RowLayout, ignore_index: i64) -> (Vec<f64>, f64) {
    let loss = by_rows(layout.rows, 1, |r, out| {
        let t = targets[r];
        out[0] = if t == ignore_index {
            0.0
        } else if t < 0 || t as usize >= layout.cols {
            f64::NAN
        } else {
            let m = row_values(x, layout, r).fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = row_values(x, layout, r).map(|v| (v - m).exp()).sum();
            m + s.ln() - x[r * layout.stride + t as usize].to_f64()
        };
    });
    let live = targets[..layout.rows].iter().filter(|&&t| t != ignore_index).count();
    let total: f64 = loss.iter().zip(targets).filter(|(_, &t)| t != ignore_index).map(|(l, _)| l).sum();
    (loss, if live == 0 { f64::NAN } else { total / live as f64 })
}

/// LayerNorm's dγ and dβ from the kernels' own saved mean and rstd (f32, as the backward gets
/// them), and the sums of |terms| each column's bound is relative to.
pub fn layer_norm_grad<T: Element>(x: &[T], dy: &[T], mean: &[f32], rstd: &[f32], layout: RowLayout) -> [Vec<f64>; 4] {
    let cols = layout.cols;
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get()).min(layout.rows.max(1));
    let per = layout.rows.div_ceil(workers.max(1)).max(1);
    let parts: Vec<[Vec<f64>; 4]> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..layout.rows.div_ceil(per))
            .map(|w| {
                scope.spawn(move || {
                    let mut acc: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; cols]);
                    for r in w * per..((w + 1) * per).min(layout.rows) {
                        for (j, (xv, dv)) in row_values(x, layout, r).zip(row_values(dy, layout, r)).enumerate() {
                            let term = dv * (xv - mean[r] as f64) * rstd[r] as f64;
                            acc[0][j] += term;
                            acc[1][j] += dv;
                            acc[2][j] += term.abs();
                            acc[3][j] += dv.abs();
                        }
                    }
                    acc
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a reference worker panicked")).collect()
    });
    let mut out: [Vec<f64>; 4] = std::array::from_fn(|_| vec![0.0; cols]);
    for part in parts {
        for k in 0..4 {
            for j in 0..cols {
                out[k][j] += part[k][j];
            }
        }
    }
    out
}
// ANCHOR_END: references

/// Element types made from f32 (rounded to nearest even) for the inputs.
pub trait FromF32: Element {
    fn from_f32(v: f32) -> Self;
}
impl FromF32 for f32 {
    fn from_f32(v: f32) -> f32 {
        v
    }
}
impl FromF32 for f16 {
    fn from_f32(v: f32) -> f16 {
        f16::from_f32(v)
    }
}
impl FromF32 for bf16 {
    fn from_f32(v: f32) -> bf16 {
        bf16::from_f32(v)
    }
}

/// Uniform values in [lo, hi) of the element type, on every core (chunks seeded `seed + i`).
pub fn uniform<T: FromF32>(n: usize, lo: f32, hi: f32, seed: u64) -> Vec<T> {
    use rand::{Rng, SeedableRng};
    const CHUNK: usize = 1 << 20;
    let mut out = vec![T::default(); n];
    std::thread::scope(|scope| {
        for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
            scope.spawn(move || {
                let mut rng = rand::rngs::SmallRng::seed_from_u64(seed.wrapping_add(i as u64));
                chunk.iter_mut().for_each(|x| *x = T::from_f32(rng.gen_range(lo..hi)));
            });
        }
    });
    out
}

/// A softmax output to feed the backward: rows of positive values summing to 1 (rounded to T).
pub fn softmax_rows<T: FromF32>(layout: RowLayout, seed: u64) -> Vec<T> {
    let x: Vec<f32> = uniform(layout.rows * layout.stride.max(1), -2.0, 2.0, seed);
    let y = softmax(&x, layout, false);
    let mut out = vec![T::default(); layout.rows * layout.stride.max(1)];
    for r in 0..layout.rows {
        for c in 0..layout.cols {
            out[r * layout.stride + c] = T::from_f32(y[r * layout.cols + c] as f32);
        }
    }
    out
}

/// Targets uniform in [0, cols), one row in `ignore_every` set to `ignore_index`.
pub fn targets(rows: usize, cols: usize, ignore_index: i64, ignore_every: usize, seed: u64) -> Vec<i64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed ^ 0x7a6e_7e75);
    (0..rows).map(|r| if ignore_every > 0 && r % ignore_every == ignore_every - 1 { ignore_index } else { rng.gen_range(0..cols.max(1) as i64) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::dl::DlOp;

    #[test]
    fn the_references_are_what_they_say() {
        let layout = RowLayout::dense(3, 5);
        let x: Vec<f32> = uniform(15, -1.0, 1.0, 1);
        let y = softmax(&x, layout, false);
        for r in 0..3 {
            let s: f64 = y[r * 5..r * 5 + 5].iter().sum();
            assert!((s - 1.0).abs() < 1e-12);
        }
        let ly = softmax(&x, layout, true);
        assert!((ly[7].exp() - y[7]).abs() < 1e-12);
        let g = vec![1.0f32; 5];
        let b = vec![0.0f32; 5];
        let (n, mean, rstd) = layer_norm(&x, &g, &b, layout, 0.0);
        let m0: f64 = n[..5].iter().sum::<f64>() / 5.0;
        let v0: f64 = n[..5].iter().map(|v| v * v).sum::<f64>() / 5.0;
        assert!(m0.abs() < 1e-12 && (v0 - 1.0).abs() < 1e-9, "{m0} {v0}");
        assert_eq!((mean.len(), rstd.len()), (3, 3));
        let (loss, mean_loss) = cross_entropy(&x, &[0, -100, 9], layout, -100);
        assert!(loss[0] > 0.0 && loss[1] == 0.0 && loss[2].is_nan() && mean_loss.is_nan());
        let (loss, mean_loss) = cross_entropy(&x, &[0, -100, 4], layout, -100);
        assert!((mean_loss - (loss[0] + loss[2]) / 2.0).abs() < 1e-15);
        let (_, all_ignored) = cross_entropy(&x, &[-100, -100, -100], layout, -100);
        assert!(all_ignored.is_nan());
        // softmax's backward of dy = 1 is zero: a softmax row sums to one.
        let ys = softmax_rows::<f32>(layout, 3);
        let dx = softmax_backward(&ys, &[1.0f32; 15], layout);
        assert!(dx.iter().all(|d| d.abs() < 1e-6), "{dx:?}");
    }

    #[test]
    fn a_strided_view_uses_only_its_columns() {
        let layout = RowLayout::strided(2, 3, 5);
        let mut x = vec![f32::NAN; 10];
        for r in 0..2 {
            for c in 0..3 {
                x[r * 5 + c] = (r * 3 + c) as f32;
            }
        }
        assert!(softmax(&x, layout, false).iter().all(|v| v.is_finite()));
    }

    #[test]
    fn conditioning_is_the_largest_of_the_rows_own() {
        // Row 0: mean |x| 1.5, spread 4; row 1: a NaN left out, mean |x| 3, spread 6.
        let x: Vec<f32> = vec![1.0, -1.0, 2.0, -2.0, 3.0, -3.0, f32::NAN, 3.0];
        let layout = RowLayout::dense(2, 4);
        let row0 = row_conditioning(&x, layout, 0);
        assert_eq!((row0.spread, row0.magnitude, row0.mean_abs), (4.0, 2.0, 1.5));
        let c = conditioning(&x, layout);
        assert_eq!((c.spread, c.magnitude, c.mean_abs, c.mean_rstd), (6.0, 3.0, 3.0, 0.0));
        // A LayerNorm mean near 0 by cancellation is held to the rounding of Σ|x|, not of |mean|.
        let b = bound(DlOp::LayerNorm, "mean", Dtype::F32, 20, c);
        assert!(b.abs > 0.0 && b.abs < 1e-5, "{b:?}");
    }

    #[test]
    fn compare_catches_what_it_must_and_passes_rounding() {
        let c = Conditioning { spread: 3.0, ..Default::default() };
        let b = bound(DlOp::Softmax, "y", Dtype::F32, 40, c);
        let want = vec![0.25, 0.25, 0.5, 0.0];
        let mut got = want.clone();
        got[2] *= 1.0 + 1e-6;
        assert!(compare("y", &got, &want, b).is_ok());
        got[2] = 0.5 * (1.0 + 1e-3);
        assert!(compare("y", &got, &want, b).is_err());
        assert!(compare("y", &[f64::NAN, 0.25, 0.5, 0.0], &want, b).is_err());
        assert!(compare("y", &[f64::NAN], &[f64::NAN], b).is_ok());
        assert!(compare("y", &[1.0], &[f64::NAN], b).is_err());
        // A bound that grew until it admitted zero would prove nothing: even bf16's does not.
        let loose = bound(DlOp::Softmax, "y", Dtype::BF16, 1000, Conditioning { spread: 10.0, ..Default::default() });
        assert!(loose.rtol < 0.02 && loose.atol < 1e-5 && loose.abs == 0.0, "{loose:?}");
        // f16's floor is its subnormal spacing, nothing more.
        let half = bound(DlOp::Softmax, "y", Dtype::F16, 40, c);
        assert_eq!(half.abs, 1.0 / (1u64 << 24) as f64);
        assert!(compare("y", &[0.0, 0.0, 0.0, 0.0], &want, loose).is_err());
    }
}
