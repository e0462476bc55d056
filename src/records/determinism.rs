//! The determinism experiment's results as data: `plots/data/determinism/<gpu>.csv`, one row per
//! kernel and visible GPU, and the level each kernel reaches ([`level`]). Written by
//! `measure::determinism`, read by `book::determinism`.

use super::csv::{self, Header};
use super::machine::Machine;
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One kernel on one GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The GPU's ordinal among the visible ones.
    pub gpu: usize,
    pub kernel: String,
    pub n: usize,
    /// The input's condition number Σ|x| / |Σx|.
    pub condition: f64,
    /// Sums at the kernel's preferred launch, and how many bit patterns they gave.
    pub runs: usize,
    pub distinct_over_runs: usize,
    /// Launch shapes tried (block sizes, grid caps), and how many bit patterns they gave.
    pub shapes: usize,
    pub distinct_over_shapes: usize,
    /// The first run's result, as hex bits.
    pub bits: String,
    /// The CPU transcription's bits, for the kernels that have one; empty otherwise.
    pub transcription: String,
}

/// The levels, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    NotDeterministic,
    RunToRun,
    LaunchIndependent,
    GpuToGpu,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::NotDeterministic => "not deterministic",
            Level::RunToRun => "run to run",
            Level::LaunchIndependent => "launch-independent",
            // What the data can show: the bits of every GPU measured and of the CPU transcription.
            Level::GpuToGpu => "same on every GPU measured and the CPU",
        }
    }
}

/// The level the rows of one kernel (one per GPU) show: different bits over runs, over launch
/// shapes, or across GPUs each drop it one level; GPU to GPU needs every GPU's bits equal to the
/// CPU transcription's (an order the data fixes, proven on a machine with no SMs at all).
pub fn level(rows: &[&Record]) -> Level {
    if rows.iter().any(|r| r.distinct_over_runs > 1) {
        return Level::NotDeterministic;
    }
    if rows.iter().any(|r| r.distinct_over_shapes > 1) {
        return Level::RunToRun;
    }
    let same_everywhere = rows.windows(2).all(|w| w[0].bits == w[1].bits);
    if same_everywhere && rows.iter().all(|r| !r.transcription.is_empty() && r.transcription == r.bits) {
        Level::GpuToGpu
    } else {
        Level::LaunchIndependent
    }
}

/// The header of a determinism file: the GPU, how many were measured, its SMs, the date and the
/// command.
fn header(machine: &Machine, gpus: usize) -> Header {
    let mut header = machine.keep(&["gpu", "sm_count", "date", "command"]);
    header.insert(1, ("gpus".to_string(), gpus.to_string()));
    header
}

pub fn write_csv(path: &Path, machine: &Machine, rows: &[Record]) -> Result<()> {
    let mut gpus: Vec<usize> = rows.iter().map(|r| r.gpu).collect();
    gpus.sort_unstable();
    gpus.dedup();
    csv::write(path, &header(machine, gpus.len()), rows)
}

pub fn read_csv(path: &Path) -> Result<(Header, Vec<Record>)> {
    csv::read(path)
}

/// The results file of a GPU model.
pub fn book_file(data_dir: &Path, gpu: &str) -> PathBuf {
    data_dir.join("determinism").join(format!("{}.csv", super::slug(gpu)))
}


#[cfg(test)]
mod tests {
    use super::*;

    fn record(gpu: usize, kernel: &str, runs: usize, shapes: usize, bits: &str, transcription: &str) -> Record {
        Record { gpu, kernel: kernel.into(), n: 100, condition: 1e12, runs: 100, distinct_over_runs: runs, shapes: 6, distinct_over_shapes: shapes, bits: bits.into(), transcription: transcription.into() }
    }

    #[test]
    fn each_difference_drops_one_level() {
        let l = |rs: &[Record]| level(&rs.iter().collect::<Vec<_>>());
        assert_eq!(l(&[record(0, "k", 3, 5, "1", "")]), Level::NotDeterministic);
        assert_eq!(l(&[record(0, "k", 1, 5, "1", "")]), Level::RunToRun);
        assert_eq!(l(&[record(0, "k", 1, 1, "1", "")]), Level::LaunchIndependent);
        assert_eq!(l(&[record(0, "k", 1, 1, "1", "1"), record(1, "k", 1, 1, "1", "1")]), Level::GpuToGpu);
        // Two GPUs that disagree, or a transcription that disagrees, are not GPU to GPU.
        assert_eq!(l(&[record(0, "k", 1, 1, "1", "1"), record(1, "k", 1, 1, "2", "1")]), Level::LaunchIndependent);
        assert_eq!(l(&[record(0, "k", 1, 1, "1", "2")]), Level::LaunchIndependent);
    }

    #[test]
    fn the_committed_measurement_supports_the_chapter() {
        // The chapter says: kernel 10's atomic sum is not deterministic, kernels 1 and 2 are
        // launch-independent and kernel 3 is not, and kernel 15's three are GPU to GPU.
        let path = book_file(&crate::records::repo_root().join("plots/data"), "NVIDIA H200");
        let (_, rows) = read_csv(&path).unwrap();
        let level_of = |k: &str| level(&rows.iter().filter(|r| r.kernel == k).collect::<Vec<_>>());
        assert_eq!(level_of("reduce10_atomic"), Level::NotDeterministic);
        for k in ["reduce1", "reduce2"] {
            assert_eq!(level_of(k), Level::LaunchIndependent, "{k}");
        }
        assert_eq!(level_of("reduce3"), Level::RunToRun);
        for k in ["reduce15_reproducible", "reduce15_neumaier", "reduce15_f64"] {
            assert_eq!(level_of(k), Level::GpuToGpu, "{k}");
        }
    }
}
