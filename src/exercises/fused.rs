//! The checker's side of the two deep-learning exercises: 11, a row softmax built on the reader's
//! online-softmax merge, and 12, LayerNorm's γ gradient (a sum down each column). Hidden shapes
//! where they break (one value, rows shorter than the block, rows whose maximum is 10^4, columns
//! of 70001 rows), f32, against float64 references within the bounds of [`crate::check::dl`].
//! The host chooses the grid: one block of 256 per row (11), one per 32 columns (12).

use super::report::Failure;
use crate::check::dl::{self as reference, Conditioning};
use crate::error::{During, Result};
use crate::gpu::Gpu;
use crate::kernels::dl::DlOp;
use crate::rows::RowLayout;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use rand::{Rng, SeedableRng};

/// Which of the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fused {
    /// Exercise 14: `exercise_f32(const float* x, float* y, u64 rows, u64 cols)`.
    Softmax,
    /// Exercise 15: `exercise_f32(x, dy, mean, rstd, float* dgamma, u64 rows, u64 cols)`.
    Gamma,
}

/// The block both exercises are written for.
pub const BLOCK: u32 = 256;

/// What is in a case's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Uniform in [−2, 2).
    Random,
    /// Every other row shifted by 10^4: e^x overflows without the shift.
    Huge,
    /// Every value in [−60, −50): a pair that starts from a maximum of 0 is wrong.
    Negative,
}

/// One hidden input.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedCase {
    pub number: usize,
    pub rows: usize,
    pub cols: usize,
    pub kind: Kind,
    pub seed: u64,
}

impl FusedCase {
    pub fn label(&self) -> String {
        let what = match self.kind {
            Kind::Random => "",
            Kind::Huge => ", every other row shifted by 10^4",
            Kind::Negative => ", every value between -60 and -50",
        };
        format!("{} row{} of {} f32 value{}{what}", self.rows, if self.rows == 1 { "" } else { "s" }, self.cols, if self.cols == 1 { "" } else { "s" })
    }
}

/// The cases, smallest first. `quick` (compute-sanitizer) keeps the small ones.
pub fn cases(which: Fused, quick: bool, seed: u64) -> Vec<FusedCase> {
    let shapes: &[(usize, usize, Kind)] = match which {
        Fused::Softmax => &[(1, 1, Kind::Random), (3, 7, Kind::Random), (2, 32, Kind::Negative), (8, 256, Kind::Random), (37, 1001, Kind::Random),
            (6, 1001, Kind::Huge), (5, 4099, Kind::Negative), (2, 70_001, Kind::Random), (300, 33, Kind::Huge)],
        Fused::Gamma => &[(1, 1, Kind::Random), (7, 3, Kind::Random), (9, 33, Kind::Random), (300, 256, Kind::Random), (1001, 37, Kind::Random),
            (8, 4099, Kind::Random), (70_001, 5, Kind::Random), (4096, 300, Kind::Random)],
    };
    shapes
        .iter()
        .filter(|&&(m, n, _)| !quick || m * n <= 1 << 16)
        .enumerate()
        .map(|(i, &(rows, cols, kind))| FusedCase { number: i + 1, rows, cols, kind, seed: seed.wrapping_add((i as u64 + 1) * 0x9e37_79b9) })
        .collect()
}

fn values(case: &FusedCase, salt: u64) -> Vec<f32> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(case.seed ^ salt);
    (0..case.rows * case.cols)
        .map(|i| match case.kind {
            Kind::Random => rng.gen_range(-2.0f32..2.0),
            Kind::Negative => rng.gen_range(-60.0f32..-50.0),
            Kind::Huge => rng.gen_range(-2.0f32..2.0) + if (i / case.cols) % 2 == 1 { 1e4 } else { 0.0 },
        })
        .collect()
}

/// Values after each output, poisoned with it, that no store may reach: more than a block of
/// the γ kernel's 32 columns past the end.
const GUARD: usize = 64;

/// The bound of output i.
type Tolerance = Box<dyn Fn(usize) -> f64>;

/// Run one case with the reader's kernel: `None` when every output is within its bound.
pub fn run_case(gpu: &Gpu, function: &CudaFunction, which: Fused, case: &FusedCase) -> Result<Option<Failure>> {
    let layout = RowLayout::dense(case.rows, case.cols);
    let (m, n) = (case.rows as u64, case.cols as u64);
    let x = values(case, 1);
    let dev_x = gpu.upload(&x)?;
    let stream = gpu.stream().clone();
    let (got, want, bound_of): (Vec<f32>, Vec<f64>, Tolerance) = match which {
        Fused::Softmax => {
            let mut y = gpu.alloc::<f32>(case.rows * case.cols + GUARD)?;
            gpu.fill(&mut y, f32::NAN)?;
            crate::child::say_ready();
            let mut args = stream.launch_builder(function);
            args.arg(&dev_x).arg(&mut y).arg(&m).arg(&n);
            let config = LaunchConfig { grid_dim: (case.rows as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
            // SAFETY: exercise_f32(const float* x, float* y, u64 rows, u64 cols), as the stub
            // declares it: x and y hold rows × cols values; one block of 256 per row. A kernel
            // that breaks its side faults in this child process, never in the reader's.
            unsafe { args.launch(config) }.during("launching the reader's softmax")?;
            let got = gpu.download(&y)?;
            gpu.synchronize()?;
            let want = reference::softmax(&x, layout, false);
            let depth = (case.cols as u64).div_ceil(BLOCK as u64) + 16;
            let b = reference::bound(DlOp::Softmax, "y", crate::element::Dtype::F32, depth, Conditioning { spread: 4.0, ..Default::default() });
            let scale = want.iter().fold(0.0f64, |a, w| a.max(w.abs()));
            (got, want.clone(), Box::new(move |i| b.rtol * want[i].abs() + b.atol * scale + b.abs))
        }
        Fused::Gamma => {
            let dy = values(&FusedCase { kind: Kind::Random, ..case.clone() }, 2);
            let (_, mean, rstd) = reference::layer_norm(&x, &vec![1.0f32; case.cols], &vec![0.0f32; case.cols], layout, 1e-5);
            let (mean, rstd): (Vec<f32>, Vec<f32>) = (mean.iter().map(|&v| v as f32).collect(), rstd.iter().map(|&v| v as f32).collect());
            let (dev_dy, dev_mean, dev_rstd) = (gpu.upload(&dy)?, gpu.upload(&mean)?, gpu.upload(&rstd)?);
            let mut dgamma = gpu.alloc::<f32>(case.cols + GUARD)?;
            gpu.fill(&mut dgamma, f32::NAN)?;
            crate::child::say_ready();
            let mut args = stream.launch_builder(function);
            args.arg(&dev_x).arg(&dev_dy).arg(&dev_mean).arg(&dev_rstd).arg(&mut dgamma).arg(&m).arg(&n);
            let config = LaunchConfig { grid_dim: (case.cols.div_ceil(32) as u32, 1, 1), block_dim: (BLOCK, 1, 1), shared_mem_bytes: 0 };
            // SAFETY: exercise_f32(x, dy, mean, rstd, dgamma, rows, cols), as the stub declares
            // it: x and dy rows × cols, mean and rstd one value per row, dgamma one per column;
            // one block of 256 per 32 columns.
            unsafe { args.launch(config) }.during("launching the reader's γ gradient")?;
            let got = gpu.download(&dgamma)?;
            gpu.synchronize()?;
            let [want, _, scale, _] = reference::layer_norm_grad(&x, &dy, &mean, &rstd, layout);
            let depth = (case.rows as f64 / 8.0).ceil() + 16.0;
            (got, want, Box::new(move |j| (depth + 8.0) * reference::U32 * scale[j] + 1e-30))
        }
    };
    // The guard after the output, poisoned with it, stays NaN: a kernel whose test of the last
    // row or column is missing writes there (and would pass without a sanitizer).
    if let Some(at) = got[want.len()..].iter().position(|v| !v.is_nan()) {
        let output = match which {
            Fused::Softmax => "y",
            Fused::Gamma => "dγ",
        };
        return Ok(Some(Failure {
            case: String::new(),
            expected: Some(format!("{output} holds {} values; nothing written after them", want.len())),
            got: Some(format!("{:e} written {} values past its end", got[want.len() + at], at + 1)),
            error: None,
            diagnosis: Some("a thread past the last row or column wrote: test the index against rows and cols before the store".into()),
        }));
    }
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let g = g as f64;
        let ok = if w.is_nan() { g.is_nan() } else { (g - w).abs() <= bound_of(i) };
        if !ok {
            let what = match which {
                Fused::Softmax => format!("y[{}][{}]", i / case.cols, i % case.cols),
                Fused::Gamma => format!("dγ[{i}]"),
            };
            return Ok(Some(Failure {
                case: String::new(),
                expected: Some(format!("{what} = {w:e} (within {:.1e})", bound_of(i))),
                got: Some(format!("{g:e}")),
                error: None,
                diagnosis: diagnose(which, case, g, &got),
            }));
        }
    }
    Ok(None)
}

/// What a wrong result most likely means.
fn diagnose(which: Fused, case: &FusedCase, got: f64, all: &[f32]) -> Option<String> {
    if got.is_nan() {
        return Some(match which {
            Fused::Softmax if case.cols < BLOCK as usize => "NaN in a row shorter than the block: a thread with no values holds (-inf, 0), and e^(-inf - (-inf)) is NaN; keep a side whose maximum is the merged maximum as it is".into(),
            Fused::Softmax => "NaN: e^x without x - max overflows (rows shifted by 10^4 reach e^10000), or a value nothing wrote".into(),
            Fused::Gamma => "NaN, the poison the checker writes before the launch: a column nobody wrote".into(),
        });
    }
    match which {
        Fused::Softmax => {
            let row = &all[..case.cols.min(all.len())];
            let sum: f64 = row.iter().map(|&v| v as f64).sum();
            ((sum - 1.0).abs() > 1e-3).then(|| format!("row 0 of the output sums to {sum:.6}, not 1: the pairs' sums were added without each being rescaled to the larger maximum (s·e^(m_side − M))"))
        }
        // No ratio names a Gamma mistake: a warp that walks every row from its own first counts
        // row r min(r + 1, 8) times, and with terms of both signs the column's sum is then no
        // fixed multiple of the right one (the check's failure and the exercise's hint say enough).
        Fused::Gamma => None,
    }
}
