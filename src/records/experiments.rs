//! The timing experiments that isolate one change to a kernel (`plots/timing_experiments.py`,
//! CuPy on the GPU host): `plots/data/experiments/<gpu>.csv`, one [`Experiment`] per variant and
//! size — kernel 9 with only its warp sum swapped for `__reduce_add_sync` beside `reduce11` and
//! `reduce12` (`redux`), and the atomic kernel with and without its memset (`memset`). Written by
//! that script, read by the chapters of kernels 10 to 12.

use super::csv::Header;
use crate::error::Result;
use std::path::{Path, PathBuf};

/// One timing: a variant of an experiment at one size, in microseconds per operation.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Experiment {
    pub experiment: String,
    pub variant: String,
    pub dtype: String,
    pub n: usize,
    pub grid: u32,
    pub block: u32,
    /// Operations in the timed graph.
    pub ops: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

/// `data_dir/experiments/<gpu-slug>.csv`.
pub fn experiments_file(data_dir: &Path, gpu: &str) -> PathBuf {
    data_dir.join("experiments").join(format!("{}.csv", super::slug(gpu)))
}

/// `data_dir/experiments/<gpu-slug>-finish.csv`: how a tile kernel's partial sums are added
/// (`plots/sum_finish.cu`, nvcc on the GPU host), in the same format.
pub fn finish_file(data_dir: &Path, gpu: &str) -> PathBuf {
    data_dir.join("experiments").join(format!("{}-finish.csv", super::slug(gpu)))
}

pub fn read_csv(path: &Path) -> Result<(Header, Vec<Experiment>)> {
    super::csv::read(path)
}

/// The timing of `variant` of `experiment` at `n` values of `dtype`, if there is one.
pub fn find<'a>(e: &'a [Experiment], experiment: &str, variant: &str, dtype: &str, n: usize) -> Option<&'a Experiment> {
    e.iter().find(|x| x.experiment == experiment && x.variant == variant && x.dtype == dtype && x.n == n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_experiments_are_read_with_their_header() {
        let data = crate::records::repo_root().join("plots/data");
        let (header, e) = read_csv(&experiments_file(&data, "NVIDIA H200")).unwrap();
        assert!(header.iter().any(|(k, v)| k == "command" && v.contains("timing_experiments.py")), "{header:?}");
        assert!(find(&e, "redux", "reduce9_redux", "i32", 1 << 16).is_some());
        assert!(find(&e, "memset", "memset_alone", "f32", 1 << 20).is_some());
        assert!(find(&e, "redux", "no such variant", "i32", 1 << 16).is_none());
    }
}
