//! The totals of one input summed on 1, 2, 4 and 8 GPUs, as data: `plots/data/ranks/cpu.csv`,
//! worked out on the CPU by `reduction multigpu determinism --simulate`
//! (`multigpu::simulate`), and `plots/data/ranks/<gpu>-x<count>[-<algorithm>].csv`, measured on
//! a GPU host by `reduction multigpu determinism`. The book's multi-GPU chapter reads both.

use super::allreduce::Algorithm;
use super::csv;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How the step across GPUs added, in every order tried (or every run measured).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cross {
    /// `f64` adds of the GPUs' sums, every one exact: the order cannot matter.
    Exact,
    /// `f64` adds, some of which rounded: the order can matter.
    Rounded,
    /// Integer adds of packed chunk sums and zeros (the gathered sum): exact in any order.
    Integer,
}

/// One input, one mode, one GPU count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankTotal {
    /// `random`, `exact` or `pattern` ([`crate::multigpu`]'s inputs), its size and seed.
    pub input: String,
    pub n: usize,
    pub seed: u64,
    /// The kernel on every GPU.
    pub kernel: String,
    /// `sharded` or `gathered`.
    pub mode: String,
    pub ranks: usize,
    /// The total as Rust prints it (it reads back to the same value), its type and its bits.
    pub total: String,
    pub total_type: String,
    pub bits: String,
    /// Orders of the step across GPUs tried (CPU), or runs (GPU); and the distinct totals seen.
    pub samples: usize,
    pub distinct: usize,
    pub cross: Cross,
    /// The same bits as the one-GPU row of the same input and mode.
    pub same_as_one_gpu: bool,
}

impl RankTotal {
    /// A row from a total (`wide`: an `f64` total; else the `f32` of kernel 15's fold, held in
    /// an `f64`) and the bits of the one-GPU total it is compared with.
    #[allow(clippy::too_many_arguments)]
    pub fn new(input: &str, n: usize, seed: u64, kernel: &str, mode: &str, ranks: usize, total: f64, wide: bool, samples: usize, distinct: usize, cross: Cross, one_gpu_bits: u64) -> RankTotal {
        let (text, ty, bits) = if wide {
            (format!("{total:?}"), "f64", format!("{:#018x}", total.to_bits()))
        } else {
            (format!("{:?}", total as f32), "f32", format!("{:#010x}", (total as f32).to_bits()))
        };
        RankTotal {
            input: input.into(),
            n,
            seed,
            kernel: kernel.into(),
            mode: mode.into(),
            ranks,
            total: text,
            total_type: ty.into(),
            bits,
            samples,
            distinct,
            cross,
            same_as_one_gpu: total.to_bits() == one_gpu_bits,
        }
    }

    /// What the row is about, apart from the GPU count: rows with the same key are compared.
    pub fn key(&self) -> (String, usize, u64, String, String) {
        (self.input.clone(), self.n, self.seed, self.kernel.clone(), self.mode.clone())
    }
}

/// Where the files live: `plots/data/ranks/` under the repository's `root`.
pub fn data_dir(root: &Path) -> PathBuf {
    root.join("plots/data/ranks")
}

/// The CPU's file in `dir`.
pub fn cpu_file(dir: &Path) -> PathBuf {
    dir.join("cpu.csv")
}

/// A GPU host's file in `dir`: `nvidia-h200-x8.csv`, or `nvidia-h200-x8-ring.csv`.
pub fn gpu_file(dir: &Path, gpu: &str, visible: usize, algorithm: Algorithm) -> PathBuf {
    let stem = format!("{}-x{visible}", super::slug(gpu));
    dir.join(match algorithm {
        Algorithm::Default => format!("{stem}.csv"),
        a => format!("{stem}-{}.csv", a.name()),
    })
}

pub fn write_csv(path: &Path, header: &csv::Header, rows: &[RankTotal]) -> Result<()> {
    csv::write(path, header, rows)
}

pub fn read_csv(path: &Path) -> Result<(csv::Header, Vec<RankTotal>)> {
    csv::read(path)
}

/// Every file in `dir`: the CPU's first (`cpu.csv`), then the GPU hosts', by name.
pub fn load_all(dir: &Path) -> Result<Vec<(PathBuf, csv::Header, Vec<RankTotal>)>> {
    let mut files = super::csv_files(dir);
    files.sort_by_key(|f| (f != &cpu_file(dir), f.clone()));
    files.into_iter().map(|f| read_csv(&f).map(|(h, r)| (f, h, r))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_print_their_totals_and_bits_and_compare_them() {
        let wide = RankTotal::new("random", 10, 1, "reduce15_reproducible", "sharded", 2, 0.1, true, 5, 1, Cross::Exact, 0.1f64.to_bits());
        assert_eq!((wide.total.as_str(), wide.bits.as_str(), wide.same_as_one_gpu), ("0.1", "0x3fb999999999999a", true));
        let narrow = RankTotal::new("random", 10, 1, "reduce15_reproducible", "gathered", 8, 0.1f32 as f64, false, 16, 1, Cross::Integer, 0.1f64.to_bits());
        assert_eq!((narrow.total.as_str(), narrow.bits.as_str(), narrow.same_as_one_gpu), ("0.1", "0x3dcccccd", false));
        let path = std::env::temp_dir().join(format!("reduction-ranks-{}.csv", std::process::id()));
        write_csv(&path, &vec![("source".into(), "a test".into())], &[wide.clone(), narrow.clone()]).unwrap();
        let (header, rows) = read_csv(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!((header[0].1.as_str(), rows), ("a test", vec![wide, narrow]));
        assert_eq!(gpu_file(Path::new("d"), "NVIDIA H200", 8, Algorithm::Tree), Path::new("d/nvidia-h200-x8-tree.csv"));
    }
}
