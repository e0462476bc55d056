//! The reductions deep learning runs (chapters 17–20): softmax, log_softmax and softmax's
//! backward, LayerNorm and RMSNorm, cross-entropy, and LayerNorm's γ/β gradients, each a row (or
//! column) reduction fused with the elementwise work around it.
//!
//! The kernel files (`kernels/17_softmax.cu` … `kernels/20_layer_norm_grad.cu`, on
//! `kernels/dl_rows.cuh` and issue 22's `kernels/operators.cuh`) hold device code only; the
//! planner ([`plan`], pure, tested without a GPU) chooses who holds a row and sizes every grid, and
//! [`runner::DlRunner`] checks the buffers and launches.

pub mod choose;
pub mod columns;
pub mod menu;
pub mod plan;
pub mod runner;

use crate::element::Dtype;
use crate::kernels::{GridRule, KernelSpec, Shape, Shared, Status};

/// The element types every deep-learning kernel takes (f32 arithmetic inside).
pub const DTYPES: [Dtype; 3] = [Dtype::F32, Dtype::F16, Dtype::BF16];

const fn dl_file(name: &'static str, chapter: u32, title: &'static str, file: &'static str, source: &'static str) -> KernelSpec {
    KernelSpec {
        name,
        chapter,
        title,
        file,
        source,
        status: Status::Correct,
        min_block: 32,
        max_block: 1024,
        block_in_entry_name: false,
        elements_per_thread: 16,
        grid: GridRule::ResidentBlocks,
        shape: Shape::LastBlock,
        shared: Shared::Static,
        dtypes: &DTYPES,
        needs_cuda_headers: false,
        min_arch: crate::arch::Arch::BOOK_MINIMUM,
        dependent_launch: false,
    }
}

/// softmax, log_softmax, softmax's backward and the three-pass softmax (`kernels/17_softmax.cu`).
pub static SOFTMAX: KernelSpec =
    dl_file("softmax", 17, "softmax, log_softmax, softmax backward", "17_softmax.cu", include_str!("../../../kernels/17_softmax.cu"));
/// LayerNorm and RMSNorm (`kernels/18_norms.cu`).
pub static NORMS: KernelSpec = dl_file("norms", 18, "LayerNorm and RMSNorm", "18_norms.cu", include_str!("../../../kernels/18_norms.cu"));
/// Cross-entropy and its mean (`kernels/19_cross_entropy.cu`).
pub static CROSS_ENTROPY: KernelSpec =
    dl_file("cross_entropy", 19, "cross-entropy with ignore_index", "19_cross_entropy.cu", include_str!("../../../kernels/19_cross_entropy.cu"));
/// LayerNorm's γ and β gradients, a column reduction (`kernels/20_layer_norm_grad.cu`).
pub static LAYER_NORM_GRAD: KernelSpec = dl_file(
    "layer_norm_grad",
    20,
    "LayerNorm's dγ and dβ (columns)",
    "20_layer_norm_grad.cu",
    include_str!("../../../kernels/20_layer_norm_grad.cu"),
);

/// Every deep-learning kernel file.
pub fn files() -> [&'static KernelSpec; 4] {
    [&SOFTMAX, &NORMS, &CROSS_ENTROPY, &LAYER_NORM_GRAD]
}

/// One deep-learning reduction. On command lines and in records each is written as its
/// [`DlOp::name`], the `op` column of `/work/coord/peers-interface.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[clap(rename_all = "snake_case")]
pub enum DlOp {
    Softmax,
    LogSoftmax,
    SoftmaxBwd,
    LayerNorm,
    RmsNorm,
    CrossEntropy,
    LayerNormBwdGammaBeta,
}

impl DlOp {
    pub const ALL: [DlOp; 7] =
        [DlOp::Softmax, DlOp::LogSoftmax, DlOp::SoftmaxBwd, DlOp::LayerNorm, DlOp::RmsNorm, DlOp::CrossEntropy, DlOp::LayerNormBwdGammaBeta];
    /// The forward reductions the 90% goal is about.
    pub const FORWARD: [DlOp; 5] = [DlOp::Softmax, DlOp::LogSoftmax, DlOp::LayerNorm, DlOp::RmsNorm, DlOp::CrossEntropy];

    /// The `op` column of the records (and the peers' CSVs).
    pub fn name(self) -> &'static str {
        match self {
            DlOp::Softmax => "softmax",
            DlOp::LogSoftmax => "log_softmax",
            DlOp::SoftmaxBwd => "softmax_bwd",
            DlOp::LayerNorm => "layer_norm",
            DlOp::RmsNorm => "rms_norm",
            DlOp::CrossEntropy => "cross_entropy",
            DlOp::LayerNormBwdGammaBeta => "layer_norm_bwd_gamma_beta",
        }
    }

    pub fn parse(s: &str) -> Option<DlOp> {
        DlOp::ALL.into_iter().find(|op| op.name() == s)
    }

    pub fn title(self) -> &'static str {
        match self {
            DlOp::Softmax => "softmax",
            DlOp::LogSoftmax => "log_softmax",
            DlOp::SoftmaxBwd => "softmax backward",
            DlOp::LayerNorm => "LayerNorm",
            DlOp::RmsNorm => "RMSNorm",
            DlOp::CrossEntropy => "cross-entropy",
            DlOp::LayerNormBwdGammaBeta => "LayerNorm dγ, dβ",
        }
    }

    /// The stem of the entry points: `softmax_block8_f32`, `softmax_backward_split8_bf16`.
    pub fn stem(self) -> &'static str {
        match self {
            DlOp::SoftmaxBwd => "softmax_backward",
            DlOp::LayerNormBwdGammaBeta => "layer_norm_grad",
            other => other.name(),
        }
    }

    /// The kernel file that holds its entry points.
    pub fn spec(self) -> &'static KernelSpec {
        match self {
            DlOp::Softmax | DlOp::LogSoftmax | DlOp::SoftmaxBwd => &SOFTMAX,
            DlOp::LayerNorm | DlOp::RmsNorm => &NORMS,
            DlOp::CrossEntropy => &CROSS_ENTROPY,
            DlOp::LayerNormBwdGammaBeta => &LAYER_NORM_GRAD,
        }
    }

    /// 4-byte words of the row state the teams exchange: (max, sum), a sum, (count, mean, M2).
    pub fn state_words(self) -> usize {
        match self {
            DlOp::Softmax | DlOp::LogSoftmax | DlOp::CrossEntropy => 2,
            DlOp::SoftmaxBwd | DlOp::RmsNorm => 1,
            DlOp::LayerNorm => 3,
            DlOp::LayerNormBwdGammaBeta => 2,
        }
    }

    /// Row inputs each thread holds: two for softmax's backward (y and dy), one otherwise.
    pub fn row_inputs(self) -> usize {
        if self == DlOp::SoftmaxBwd {
            2
        } else {
            1
        }
    }

    /// Whether the op writes a whole row back (cross-entropy writes one loss per row).
    pub fn writes_rows(self) -> bool {
        !matches!(self, DlOp::CrossEntropy | DlOp::LayerNormBwdGammaBeta)
    }

    /// What must cross memory at least once (`/work/coord/peers-interface-changes.md`): every
    /// input read once and every output written once. `s` the element size; saved statistics,
    /// losses and their mean in f32; targets int64.
    pub fn bytes(self, dtype: Dtype, rows: u64, cols: u64) -> u64 {
        let s = dtype.size_bytes() as u64;
        let mn = rows * cols;
        match self {
            DlOp::Softmax | DlOp::LogSoftmax => 2 * mn * s,
            DlOp::SoftmaxBwd => 3 * mn * s,
            DlOp::LayerNorm => 2 * mn * s + 2 * cols * s + 8 * rows,
            DlOp::RmsNorm => 2 * mn * s + cols * s + 4 * rows,
            DlOp::CrossEntropy => mn * s + 8 * rows + 4 * rows + 4,
            DlOp::LayerNormBwdGammaBeta => 2 * mn * s + 8 * rows + 2 * cols * s,
        }
    }
}

impl std::fmt::Display for DlOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_the_peers_interface() {
        for op in DlOp::ALL {
            assert_eq!(DlOp::parse(op.name()), Some(op));
            let v = <DlOp as clap::ValueEnum>::to_possible_value(&op).unwrap();
            assert_eq!(v.get_name(), op.name());
        }
        assert_eq!(DlOp::parse("softmax_backward"), None);
    }

    #[test]
    fn every_stem_is_in_its_file() {
        for op in DlOp::ALL {
            assert!(op.spec().source.contains(op.stem()), "{} not in {}", op.stem(), op.spec().file);
        }
    }

    #[test]
    fn bytes_are_the_interface_formulas() {
        // softmax of 2^28 f32: 1 GiB read, 1 GiB written.
        assert_eq!(DlOp::Softmax.bytes(Dtype::F32, 1 << 18, 1 << 10), 2 << 30);
        // LayerNorm adds γ, β and two f32 statistics per row.
        assert_eq!(DlOp::LayerNorm.bytes(Dtype::BF16, 4, 8), 2 * 32 * 2 + 2 * 8 * 2 + 8 * 4);
        // Cross-entropy reads the logits once and int64 targets, writes M losses and a mean.
        assert_eq!(DlOp::CrossEntropy.bytes(Dtype::F32, 2, 3), 24 + 16 + 8 + 4);
        assert_eq!(DlOp::SoftmaxBwd.bytes(Dtype::F16, 2, 3), 36);
        assert_eq!(DlOp::LayerNormBwdGammaBeta.bytes(Dtype::F32, 2, 3), 48 + 16 + 24);
    }
}
