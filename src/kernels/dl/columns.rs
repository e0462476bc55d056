//! The plan of LayerNorm's γ/β gradients, the column reduction: its own layout (strips of
//! columns × chunks of rows), apart from the row programs' teams in [`super::plan`].

use super::plan::packs;
use crate::element::Dtype;

// ANCHOR: columns
/// The plan of LayerNorm's γ/β gradients: a block per strip of 32 packs of columns (one per lane)
/// and chunk of rows; the strip's last chunk to finish adds the chunks' partial sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Columns {
    pub strips: u32,
    pub chunks: u32,
    pub rows_per_chunk: u64,
    pub block: u32,
}

/// Warps per block of the column kernel, and the rows each warp has in flight.
pub const COLUMN_WARPS: u32 = 8;
pub const COLUMN_ROWS_IN_FLIGHT: u64 = 4;

/// Strips × chunks of rows. Where the strips fit in one wave of the blocks the GPU holds at once
/// (`resident`, from the occupancy calculator): as many chunks per strip as fit beside them,
/// rounded down, so that no block waits for a second wave. (The rule before asked 8 blocks an SM
/// while registers let 3 (f16, bf16) or 4 (f32) run at once: short blocks in two or three waves;
/// at bf16 4096 × 4096 the kernel took longer than torch's.) Where they do not (long rows), the
/// rule before, 8 blocks an SM: one chunk a strip was measured slower there at bf16 2^11 × 2^17,
/// whose second wave was mostly empty (`plots/data/dl/experiments/<gpu>-columns-{eight,wave}.csv`,
/// the norms chapter's table of the two plans). A chunk keeps at least one round of rows for every
/// warp.
pub fn plan_columns(dtype: Dtype, rows: u64, cols: u64, resident: u64, sm_count: u32) -> Option<Columns> {
    if rows == 0 || cols == 0 {
        return None;
    }
    let strips = packs(dtype, cols).div_ceil(32);
    let most = rows.div_ceil(COLUMN_WARPS as u64 * COLUMN_ROWS_IN_FLIGHT).clamp(1, 65535);
    let wanted = if strips <= resident { resident / strips } else { (8 * sm_count as u64).div_ceil(strips) };
    let chunks = wanted.clamp(1, most);
    let rows_per_chunk = rows.div_ceil(chunks);
    Some(Columns { strips: strips as u32, chunks: rows.div_ceil(rows_per_chunk) as u32, rows_per_chunk, block: COLUMN_WARPS * 32 })
}
// ANCHOR_END: columns

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fill_one_wave_where_the_strips_fit_in_one() {
        // 4 blocks an SM on 132 SMs: 528 blocks at once.
        let c = plan_columns(Dtype::F32, 1 << 20, 256, 528, 132).unwrap();
        assert_eq!((c.strips, c.chunks), (2, 264), "{c:?}");
        assert!(c.chunks as u64 * c.rows_per_chunk >= 1 << 20, "{c:?}");
        // bf16 4096 × 4096 at 3 an SM: 16 strips × 24 chunks = 384 ≤ 396, never a block past the wave.
        let square = plan_columns(Dtype::BF16, 4096, 4096, 396, 132).unwrap();
        assert_eq!((square.strips, square.chunks, square.rows_per_chunk), (16, 24, 171));
        // More strips than one wave holds: 8 blocks an SM, as before (512 strips: 3 chunks).
        let long = plan_columns(Dtype::BF16, 2048, 1 << 17, 396, 132).unwrap();
        assert_eq!((long.strips, long.chunks), (512, 3));
        let wide = plan_columns(Dtype::F32, 1024, 1 << 18, 528, 132).unwrap();
        assert_eq!((wide.strips, wide.chunks), (2048, 1));
        let tall = plan_columns(Dtype::BF16, 7, 3, 396, 132).unwrap();
        assert_eq!((tall.strips, tall.chunks, tall.rows_per_chunk), (1, 1, 7));
        assert!(plan_columns(Dtype::F32, 0, 3, 528, 132).is_none());
    }
}
