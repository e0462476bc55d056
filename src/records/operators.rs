//! The operators' results (chapter 16): `plots/data/operators/<gpu>.csv` (the book's kernels) and
//! `<gpu>-peers.csv` (torch, CuPy, Triton, TileLang: `plots/op_peers.py`), one [`OpRow`] per
//! measurement — the benchmark's columns and two more, `op` and `rows`
//! (/work/coord/peers-interface.md): `rows` is M for a row-wise reduction (then `n` is N, the row
//! length) and 1 for a whole array (`n` the element count). `bytes` is what must cross memory at
//! least once, by [`op_bytes`], the same formula for ours and the peers'.

use super::bench::{Cache, Row, Status};
use super::csv;
use super::machine::Machine;
use crate::element::Dtype;
use crate::error::Result;
use serde::{Deserialize, Serialize, Serializer};
use std::path::{Path, PathBuf};

/// One measurement of an operator: a benchmark [`Row`], the operator's name (`max`, `argmax`,
/// `mean_var`, `sumsq`, `sum`, a mean/variance walk) and the number of rows.
#[derive(Clone, Debug, PartialEq)]
pub struct OpRow {
    pub row: Row,
    pub op: String,
    pub rows: usize,
}

impl OpRow {
    pub fn is_whole(&self) -> bool {
        self.rows == 1
    }

    /// Bandwidth at the median time, GB/s.
    pub fn gbps(&self) -> f64 {
        self.row.gbps()
    }

    /// Share of the theoretical peak, in percent (`None` without a peak).
    pub fn percent_of(&self, peak_gbps: Option<f64>) -> Option<f64> {
        peak_gbps.filter(|p| *p > 0.0).map(|p| 100.0 * self.gbps() / p)
    }
}

// ANCHOR: bytes
/// The bytes an operator must move at least once: every input value read and every result
/// written (peers-interface-changes.md, the same for ours and the peers'): max, min, sum and
/// sum of squares write one value of the input's size per result, argmax and argmin an 8-byte
/// index, mean and variance two values.
pub fn op_bytes(op: &str, rows: usize, n: usize, element_bytes: usize) -> usize {
    let out = match op {
        "argmax" | "argmin" => 8,
        "mean_var" | "welford_divide" | "welford_fast_divide" | "welford_pack" | "mean_var_textbook" => 2 * element_bytes,
        _ => element_bytes,
    };
    rows * n * element_bytes + rows * out
}
// ANCHOR_END: bytes

/// The folder of the operators' results under `data_dir`.
pub fn results_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("operators")
}

/// The line of a results file.
#[derive(Serialize, Deserialize)]
struct Record {
    kernel: String,
    chapter: u32,
    title: String,
    status: Status,
    dtype: Dtype,
    n: usize,
    block: u32,
    cache: Cache,
    #[serde(serialize_with = "decimals::<3, _>")]
    median_us: f64,
    #[serde(serialize_with = "decimals::<3, _>")]
    min_us: f64,
    #[serde(serialize_with = "decimals::<3, _>")]
    max_us: f64,
    /// Written for a reader of the file; computed again from the bytes and the time when read.
    #[serde(serialize_with = "decimals::<1, _>")]
    gbps: f64,
    bytes: usize,
    working_set_bytes: usize,
    repeats: usize,
    method: String,
    op: String,
    rows: usize,
}

fn decimals<const D: usize, S: Serializer>(value: &f64, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    serializer.serialize_str(&format!("{value:.D$}"))
}

impl From<&OpRow> for Record {
    fn from(o: &OpRow) -> Record {
        let r = &o.row;
        Record {
            kernel: r.kernel.clone(), chapter: r.chapter, title: r.title.clone(), status: r.status, dtype: r.dtype, n: r.n,
            block: r.block, cache: r.cache, median_us: r.median_us, min_us: r.min_us, max_us: r.max_us, gbps: r.gbps(),
            bytes: r.bytes, working_set_bytes: r.working_set_bytes, repeats: r.repeats, method: r.method.clone(),
            op: o.op.clone(), rows: o.rows,
        }
    }
}

impl From<Record> for OpRow {
    fn from(r: Record) -> OpRow {
        OpRow {
            row: Row {
                kernel: r.kernel, chapter: r.chapter, title: r.title, status: r.status, dtype: r.dtype, n: r.n, block: r.block,
                cache: r.cache, median_us: r.median_us, min_us: r.min_us, max_us: r.max_us, bytes: r.bytes,
                working_set_bytes: r.working_set_bytes, repeats: r.repeats, method: r.method,
            },
            op: r.op,
            rows: r.rows,
        }
    }
}

pub fn write_csv(path: &Path, machine: &Machine, rows: &[OpRow]) -> Result<()> {
    csv::write(path, &machine.header(), &rows.iter().map(Record::from).collect::<Vec<_>>())
}

pub fn read_csv(path: &Path) -> Result<(Machine, Vec<OpRow>)> {
    let (header, records) = csv::read::<Record>(path)?;
    Ok((Machine::from_header(&header), records.into_iter().map(OpRow::from).collect()))
}

/// A results file: its machine and its rows.
pub type OpFile = (Machine, Vec<OpRow>);

/// The book GPU's operator results and its peers' (`None` for a file that is not there).
pub fn load(data_dir: &Path, slug: &str) -> Result<(Option<OpFile>, Option<OpFile>)> {
    let dir = results_dir(data_dir);
    let read = |name: String| -> Result<Option<OpFile>> {
        let path = dir.join(name);
        if path.is_file() { read_csv(&path).map(Some) } else { Ok(None) }
    };
    Ok((read(format!("{slug}.csv"))?, read(format!("{slug}-peers.csv"))?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_count_every_input_once_and_every_result() {
        assert_eq!(op_bytes("max", 1, 1 << 28, 4), (1 << 30) + 4);
        assert_eq!(op_bytes("argmax", 1 << 20, 256, 2), (1 << 29) + 8 * (1 << 20));
        assert_eq!(op_bytes("mean_var", 4096, 64, 4), 4096 * 64 * 4 + 4096 * 8);
        assert_eq!(op_bytes("sumsq", 1, 1024, 2), 2048 + 2);
    }

    #[test]
    fn a_results_file_reads_back_as_written() {
        let row = OpRow {
            row: Row {
                kernel: "argmax_rows_auto".into(), chapter: 16, title: "argmax (warp)".into(), status: Status::Correct, dtype: Dtype::BF16,
                n: 256, block: 128, cache: Cache::Rotated, median_us: 241.5, min_us: 240.0, max_us: 250.125, bytes: op_bytes("argmax", 1 << 20, 256, 2),
                working_set_bytes: 1 << 30, repeats: 15, method: "graph of 12 back-to-back, CUDA events".into(),
            },
            op: "argmax".into(),
            rows: 1 << 20,
        };
        let dir = std::env::temp_dir().join(format!("ops-records-{}", std::process::id()));
        let path = dir.join("x.csv");
        let machine = Machine { gpu: "Test GPU".into(), peak_gbps: Some(4800.0), ..Machine::default() };
        write_csv(&path, &machine, std::slice::from_ref(&row)).unwrap();
        let (m, rows) = read_csv(&path).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(m.gpu, "Test GPU");
        assert_eq!(rows, vec![row]);
    }
}
