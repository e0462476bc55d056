//! Which determinism level each kernel of the book reaches, measured: one input of f32 values
//! whose sum cancels (condition number 10^12, so that any change in the order of the additions
//! shows in the bits; an accurate sum of random values rounds the same in most orders) summed many times at one launch shape (run to run), at every block size and, for
//! the chunked kernels, at grid caps from one block to no cap (launch-independent), on every
//! visible GPU (GPU to GPU), and, where the order has a CPU transcription, against it. The
//! results file is [`crate::records::determinism`]; the chapter's table is drawn from it.

use crate::records::determinism::Record;
use crate::check::reproducible::transcribe_kernel;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::{self, KernelSpec};
use crate::Reducer;

/// What to measure.
#[derive(Clone, Debug)]
pub struct DeterminismConfig {
    pub n: usize,
    pub runs: usize,
    pub seed: u64,
    /// The condition number Σ|x| / |Σx| of the input ([`crate::measure::accuracy::conditioned_f32`]).
    pub condition: f64,
}

impl Default for DeterminismConfig {
    fn default() -> Self {
        DeterminismConfig { n: (1 << 24) + 3, runs: 100, seed: 2026, condition: 1e12 }
    }
}

/// The launch shapes a kernel is swept over: every block size; for a chunked kernel, each with
/// grid caps from one block to many times the SM count, and no cap.
fn shapes(kernel: &KernelSpec, sm_count: u32) -> Vec<(u32, Option<u32>)> {
    let caps: Vec<Option<u32>> = if kernel.shape.is_chunked() {
        vec![Some(1), Some(7), Some(sm_count / 2), Some(sm_count), Some(8 * sm_count), None]
    } else {
        vec![None]
    };
    kernel.block_sizes().flat_map(|b| caps.iter().map(move |&c| (b, c))).collect()
}

/// Distinct values in `bits`.
fn distinct(bits: &[u32]) -> usize {
    let mut b = bits.to_vec();
    b.sort_unstable();
    b.dedup();
    b.len()
}

/// Every correct f32 kernel on one GPU (`ordinal` names it in the rows); kernels whose CUDA
/// headers cannot be found are left out with a note.
pub fn measure(gpu: &Gpu, ordinal: usize, config: &DeterminismConfig) -> Result<Vec<Record>> {
    let xs = crate::measure::accuracy::conditioned_f32(config.n, config.condition, config.seed);
    let wide: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
    let condition = crate::measure::accuracy::exact_sum(&wide.iter().map(|x| x.abs()).collect::<Vec<_>>()) / crate::measure::accuracy::exact_sum(&wide).abs();
    let input = gpu.upload(&xs)?;
    let view = input.as_view();
    let mut rows = Vec::new();
    for kernel in kernels::correct().filter(|k| k.supports(crate::Dtype::F32)) {
        if kernel.needs_cuda_headers && crate::nvrtc::cuda_include_dir().is_err() {
            eprintln!("determinism: skipped {} (no CUDA headers)", kernel.name);
            continue;
        }
        let block = kernel.preferred_block(config.n);
        let mut reducer = Reducer::<f32>::new(gpu, kernel.name, block)?;
        let mut runs = Vec::with_capacity(config.runs);
        for _ in 0..config.runs {
            runs.push(reducer.sum(&view)?.to_bits());
        }
        let mut over_shapes = Vec::new();
        for (b, cap) in shapes(kernel, gpu.info().sm_count) {
            let mut r = Reducer::<f32>::new(gpu, kernel.name, b)?;
            if let Some(cap) = cap {
                r.cap_grid(cap.max(1))?;
            }
            over_shapes.push(r.sum(&view)?.to_bits());
        }
        let transcription = transcribe_kernel(kernel.name, &xs, 4).map(f32::to_bits);
        rows.push(Record {
            gpu: ordinal,
            kernel: kernel.name.to_string(),
            n: config.n,
            condition,
            runs: config.runs,
            distinct_over_runs: distinct(&runs),
            shapes: over_shapes.len(),
            distinct_over_shapes: distinct(&over_shapes),
            bits: format!("{:08x}", runs[0]),
            transcription: transcription.map(|b| format!("{b:08x}")).unwrap_or_default(),
        });
        eprintln!("determinism: GPU {ordinal} {:<22} {} distinct over {} runs, {} over {} shapes",
            kernel.name, distinct(&runs), config.runs, distinct(&over_shapes), over_shapes.len());
    }
    Ok(rows)
}
