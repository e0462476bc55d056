//! The row sums' results (chapter 13): ordinary benchmark rows ([`super::bench::Row`]) under
//! `plots/data/rows/`, with one convention: `n` is the row length N, and `bytes` the M·N·size
//! bytes read, so M = bytes / (size·n) ([`rows_of`]). Written by `measure::rows_bench` and
//! `plots/tile_peers.py`, read by `book::rows` and `book::tile`.

use super::bench::{read_csv, Row};
use super::machine::Machine;
use crate::error::Result;
use std::path::{Path, PathBuf};

/// The name of the automatic choice's rows, and of the library peer's.
pub const AUTO_KERNEL: &str = "rows_auto";
pub const TORCH_KERNEL: &str = "torch_sum_dim1";
/// The tile-language peers (`plots/tile_peers.py`, kernels/tilelang/ and kernels/triton/).
pub const TILELANG_KERNEL: &str = "tilelang_row_sum";
pub const TRITON_KERNEL: &str = "triton_row_sum";
/// The peers, as (kernel, column heading), in the order the table shows them.
pub const PEERS: [(&str, &str); 3] = [(TILELANG_KERNEL, "TileLang"), (TRITON_KERNEL, "Triton"), (TORCH_KERNEL, "torch.sum(x, dim=1)")];
/// The chapter of the kernels, in the results' `chapter` column.
pub const CHAPTER: u32 = 13;

/// The command that measures them.
pub const MEASURE_COMMAND: &str = "cargo run --release -- rows-bench";

/// Where the row-sum results of a GPU are: `plots/data/rows/<gpu-slug>.csv`, and
/// `<gpu-slug>-peers.csv` from `plots/tile_peers.py`.
pub fn results_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("rows")
}

/// The rows of one GPU (by slug) under `rows_dir`, both files merged, the benchmark's header
/// kept; `None` where neither file exists.
pub fn load(rows_dir: &Path, slug: &str) -> Result<Option<(Machine, Vec<Row>)>> {
    let mut found: Option<(Machine, Vec<Row>)> = None;
    for file in [format!("{slug}.csv"), format!("{slug}-peers.csv")] {
        let path = rows_dir.join(file);
        if !path.is_file() {
            continue;
        }
        let (machine, rows) = read_csv(&path)?;
        match found.as_mut() {
            Some((_, existing)) => existing.extend(rows),
            None => found = Some((machine, rows)),
        }
    }
    Ok(found)
}

/// M of a row-sum result: bytes / (size · n).
pub fn rows_of(row: &Row) -> usize {
    row.bytes / (row.dtype.size_bytes() * row.n.max(1))
}
