//! The tile languages' whole-array sums (`plots/data/tile/<gpu-slug>.csv`, ordinary benchmark
//! rows) and the CUDA TileLang generated for the row sum, both saved by `plots/tile_peers.py`
//! and read by `book::tile`.

use std::path::{Path, PathBuf};

/// Where the whole-array tile-language sums and the generated source are: `plots/data/tile/`.
pub fn results_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("tile")
}

/// The CUDA TileLang generated for the row sum, saved by `plots/tile_peers.py`.
pub const GENERATED_SOURCE: &str = "tilelang_row_sum.cu";
/// The whole-array sums of the tile languages, by kernel name.
pub const TILELANG_SUM: &str = "tilelang_sum";
pub const TRITON_SUM: &str = "triton_sum";
