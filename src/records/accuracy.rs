//! The accuracy experiment's results as data: `plots/data/accuracy/<gpu>.csv` (one sum of one
//! input by one method, as N grows) and `plots/data/accuracy/conditioning/<gpu>.csv` (the same
//! at a prescribed condition number). Written by `measure::accuracy`, read by `book::accuracy`.

use super::csv;
use super::machine::Machine;
use crate::element::Dtype;
use crate::error::Result;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use std::path::{Path, PathBuf};

/// The methods, in the order the chapter discusses them, with what each is.
pub const METHODS: &[(&str, &str)] = &[
    ("cpu_sequential", "CPU loop, f32: s += x, one after another"),
    ("cpu_pairwise", "CPU pairwise, f32: halves summed recursively"),
    ("gpu_tree", "GPU tree, f32 (kernel 3: one element per thread)"),
    ("gpu_cascaded", "GPU cascaded, f32 (kernel 9: 4 accumulators per thread, then the tree)"),
    ("gpu_kahan", "GPU compensated, f32 (Kahan-Neumaier per thread)"),
    ("gpu_reproducible", "GPU reproducible, f32 (kernel 15: order fixed by n)"),
    ("gpu_reproducible_neumaier", "GPU reproducible and compensated (kernel 15, Neumaier at every level)"),
    ("gpu_reproducible_f64", "GPU reproducible, f32 inputs summed in f64 (kernel 15)"),
    ("gpu_f64_accumulator", "GPU, f32 inputs summed in f64"),
    ("gpu_f16_in_f32", "GPU, f16 inputs summed in f32 (kernel 9)"),
    ("gpu_f16_in_f16", "GPU, f16 inputs summed in f16"),
    ("gpu_bf16_in_f32", "GPU, bf16 inputs summed in f32 (kernel 9)"),
    ("gpu_bf16_in_bf16", "GPU, bf16 inputs summed in bf16"),
];

/// |result − exact| / |exact|.
pub fn relative_error(result: f64, exact: f64) -> f64 {
    (result - exact).abs() / exact.abs()
}

/// One sum of one input by one method: a line of the results file, which also carries the
/// relative error for a reader of the file (computed again from the two sums when read).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Measurement {
    pub method: String,
    /// The input's element type: `f32`, `f16` or `bf16`.
    pub input: Dtype,
    pub n: usize,
    pub seed: u64,
    pub result: f64,
    pub exact: f64,
}

impl Measurement {
    pub fn relative_error(&self) -> f64 {
        relative_error(self.result, self.exact)
    }
}

/// A number in scientific notation (`5.064353942871094e2`), so that it reads back bit for bit.
struct Scientific(f64);

impl Serialize for Scientific {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(&format!("{:e}", self.0))
    }
}

impl Serialize for Measurement {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut line = serializer.serialize_struct("Measurement", 7)?;
        line.serialize_field("method", &self.method)?;
        line.serialize_field("input", &self.input)?;
        line.serialize_field("n", &self.n)?;
        line.serialize_field("seed", &self.seed)?;
        line.serialize_field("result", &Scientific(self.result))?;
        line.serialize_field("exact", &Scientific(self.exact))?;
        line.serialize_field("relative_error", &Scientific(self.relative_error()))?;
        line.end()
    }
}

/// One sum of one input of a prescribed condition number by one method.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Conditioned {
    pub method: String,
    pub n: usize,
    /// The condition number asked for, and the one the input has: Σ|x| / |Σx|.
    pub target: f64,
    pub seed: u64,
    pub condition: f64,
    pub result: f64,
    pub exact: f64,
}

impl Conditioned {
    pub fn relative_error(&self) -> f64 {
        relative_error(self.result, self.exact)
    }
}

impl Serialize for Conditioned {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut line = serializer.serialize_struct("Conditioned", 8)?;
        line.serialize_field("method", &self.method)?;
        line.serialize_field("n", &self.n)?;
        line.serialize_field("target", &Scientific(self.target))?;
        line.serialize_field("seed", &self.seed)?;
        line.serialize_field("condition", &Scientific(self.condition))?;
        line.serialize_field("result", &Scientific(self.result))?;
        line.serialize_field("exact", &Scientific(self.exact))?;
        line.serialize_field("relative_error", &Scientific(self.relative_error()))?;
        line.end()
    }
}

/// The header of an accuracy file: the GPU, the date and the command.
const HEADER_KEYS: [&str; 3] = ["gpu", "date", "command"];

pub fn write_csv(path: &Path, machine: &Machine, rows: &[Measurement]) -> Result<()> {
    csv::write(path, &machine.keep(&HEADER_KEYS), rows)
}

/// (GPU name, measurements) from a file written by [`write_csv`].
pub fn read_csv(path: &Path) -> Result<(String, Vec<Measurement>)> {
    let (header, rows) = csv::read::<Measurement>(path)?;
    Ok((csv::value(&header, "gpu").unwrap_or("unknown GPU").to_string(), rows))
}

pub fn write_conditioning_csv(path: &Path, machine: &Machine, rows: &[Conditioned]) -> Result<()> {
    csv::write(path, &machine.keep(&HEADER_KEYS), rows)
}

pub fn read_conditioning_csv(path: &Path) -> Result<(String, Vec<Conditioned>)> {
    let (header, rows) = csv::read::<Conditioned>(path)?;
    Ok((csv::value(&header, "gpu").unwrap_or("unknown GPU").to_string(), rows))
}

/// The size sweep's file of a GPU: `accuracy/<gpu-slug>.csv` under `data_dir`.
pub fn book_file(data_dir: &Path, gpu: &str) -> PathBuf {
    data_dir.join("accuracy").join(format!("{}.csv", super::slug(gpu)))
}

/// The conditioning sweep's file of a GPU: `accuracy/conditioning/<gpu-slug>.csv`.
pub fn conditioning_file(data_dir: &Path, gpu: &str) -> PathBuf {
    data_dir.join("accuracy").join("conditioning").join(format!("{}.csv", super::slug(gpu)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> Machine {
        Machine { gpu: "Test GPU".into(), date: "2026-11-30".into(), command: "reduction accuracy".into(), ..Default::default() }
    }

    #[test]
    fn csv_round_trips_with_the_relative_error_beside_the_sums() {
        let rows = vec![
            Measurement { method: "cpu_sequential".into(), input: Dtype::F32, n: 1 << 20, seed: 1, result: 524_300.0, exact: 524_288.0 },
            Measurement { method: "gpu_tree".into(), input: Dtype::F32, n: 1 << 20, seed: 1, result: 524_288.0, exact: 524_288.0 },
        ];
        let path = std::env::temp_dir().join(format!("reduction-accuracy-{}.csv", std::process::id()));
        write_csv(&path, &machine(), &rows).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let (gpu, back) = read_csv(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(text.starts_with("# gpu: Test GPU\n# date: 2026-11-30\n# command: reduction accuracy\nmethod,input,n,seed,result,exact,relative_error\n"), "{text}");
        assert!(text.contains("\ncpu_sequential,f32,1048576,1,5.243e5,5.24288e5,2.288818359375e-5\n"), "{text}");
        assert_eq!((gpu.as_str(), back), ("Test GPU", rows));
    }

    #[test]
    fn conditioning_csv_round_trips() {
        let row = |method: &str, target: f64, result: f64| Conditioned { method: method.into(), n: 1 << 24, target, seed: 1, condition: target * 1.01, result, exact: 1.0 };
        let rows = vec![row("gpu_tree", 1e6, 1.5), row("gpu_reproducible_neumaier", 1e9, 1.001)];
        let path = std::env::temp_dir().join(format!("reduction-conditioning-{}.csv", std::process::id()));
        write_conditioning_csv(&path, &machine(), &rows).unwrap();
        let (gpu, back) = read_conditioning_csv(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!((gpu.as_str(), &back), ("Test GPU", &rows));
    }

    #[test]
    fn the_committed_files_write_back_byte_for_byte() {
        let data = crate::records::repo_root().join("plots/data");
        for path in [book_file(&data, "NVIDIA H200"), conditioning_file(&data, "NVIDIA H200")] {
            let text = std::fs::read_to_string(&path).unwrap();
            let (header, _) = csv::split_header(&text, "accuracy").unwrap();
            let machine = Machine::from_header(&header);
            let again = std::env::temp_dir().join(format!("reduction-accuracy-again-{}.csv", std::process::id()));
            // The relative error is computed again from the two sums: the same bits.
            if path.to_string_lossy().contains("conditioning") {
                write_conditioning_csv(&again, &machine, &read_conditioning_csv(&path).unwrap().1).unwrap();
            } else {
                write_csv(&again, &machine, &read_csv(&path).unwrap().1).unwrap();
            }
            let written = std::fs::read_to_string(&again).unwrap();
            std::fs::remove_file(&again).unwrap();
            assert_eq!(written, text, "{}", path.display());
        }
    }
}
