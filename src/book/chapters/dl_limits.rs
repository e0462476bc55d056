//! What bounds the deep-learning kernels on this GPU, for "Softmax, online": the yardsticks of
//! the same run (`dl_ceilings.md`), the copy at every tile shape (`dl_copy_shapes.md`) and what
//! Nsight Compute saw of the launches below the goal (`dl_ncu.md`).

use super::dl::peak;
use crate::book::context::Context;
use crate::error::Result;
use crate::records::dl::{self as records, Loaded};
use std::fmt::Write as _;

/// The yardsticks measured in the same run.
pub fn ceilings(l: &Loaded) -> String {
    let p = peak(&l.machine);
    let mut out = String::from("| yardstick (2^28 f32) | GB/s | % of peak |\n|---|---|---|\n");
    let mut any = false;
    for r in l.ours.iter().filter(|r| r.op == "copy" || r.op == "read") {
        any = true;
        writeln!(out, "| {} | {:.0} | {:.1}% |", r.title, r.gbps(), r.percent_of(p)).unwrap();
    }
    if any {
        out
    } else {
        "*No copy or read-only yardstick in this run.*\n".into()
    }
}

/// `dl_copy_shapes.md`: the tiled copy at every shape (`<gpu-slug>-copy-shapes.csv`, written by
/// `reduction dl-bench`), in µs and % of peak.
pub fn copy_shapes_markdown(c: &Context) -> Result<String> {
    let gpu = &c.book()?.0.gpu;
    let path = records::copy_shapes_file(&c.data_dir, &crate::records::slug(gpu));
    if !path.is_file() {
        return Ok(format!("*The copy's tile shapes are not yet measured on the {gpu} (`reduction dl-bench` does).*\n"));
    }
    let (machine, rows) = records::read_csv::<records::CopyShapeTime>(&path)?;
    Ok(copy_shapes_table(&rows, peak(&machine)))
}

fn copy_shapes_table(rows: &[records::CopyShapeTime], peak: f64) -> String {
    let mut out = String::from("| copy tile | plain stores | evict-first stores |\n|---|--:|--:|\n");
    let mut shapes: Vec<(u32, u32)> = rows.iter().map(|r| (r.block, r.packs)).collect();
    shapes.dedup();
    for (block, packs) in shapes {
        let cell = |evict_first: bool| {
            rows.iter().find(|r| (r.block, r.packs, r.evict_first) == (block, packs, evict_first)).map_or("—".to_string(), |r| {
                let gbps = 8.0 * r.n as f64 / r.median_us / 1e3;
                format!("{:.1} µs ({:.1}%)", r.median_us, gbps / peak * 100.0)
            })
        };
        writeln!(out, "| {block} threads × {packs} pack{} | {} | {} |", if packs == 1 { "" } else { "s" }, cell(false), cell(true)).unwrap();
    }
    out
}

/// `dl_ncu.md`: what Nsight Compute saw of launches below the goal, and of a peer's launch where
/// the peer is faster (`plots/data/dl/ncu/`, `[<peer>-]<op>_<type>_<M>x<N>.txt`); then, for each
/// peer's profile, a sentence setting it beside ours at the same shape.
pub fn ncu_markdown(c: &Context) -> Result<String> {
    use super::operators::{ncu_table, operator_profiles, NcuFolder};
    let dir = records::results_dir(&c.data_dir).join("ncu");
    let profiles = operator_profiles(&dir)?;
    if profiles.is_empty() {
        return Ok(format!("*No Nsight Compute profile of these kernels yet on the {}.*\n", c.book()?.0.gpu));
    }
    let folder = NcuFolder {
        dir: &dir,
        shown_as: "plots/data/dl/ncu/",
        launches: "the first of `reduction dl-bench --shapes <M>x<N> --dtypes <type> --ops <op>` (a peer's: the first in a Python program that calls it once)",
    };
    let mut out = ncu_table(&folder)?;
    let parsed = |stem: &str| profiles.iter().find(|(s, _)| s == stem).and_then(|(s, text)| super::determinism::parse_ncu(s, text).map(|p| (p, text)));
    for (stem, _) in &profiles {
        let Some((peer, ours_stem)) = stem.split_once('-') else { continue };
        let (Some((theirs, their_text)), Some((ours, our_text))) = (parsed(stem), parsed(ours_stem)) else { continue };
        let name = |text: &str| super::entry::profiled_kernel(text).unwrap_or("?").to_string();
        let more_warps = theirs.registers < ours.registers && theirs.achieved_occupancy > ours.achieved_occupancy && theirs.dram_percent > ours.dram_percent;
        let why = if more_warps { ": fewer registers a thread, more warps waiting on memory at once, DRAM busier" } else { "" };
        writeln!(out, "\nAt {}, {peer}'s `{}` holds {} registers a thread and reaches {:.1}% achieved occupancy, DRAM {:.1}% busy ({:.1} µs under ncu); ours, `{}`, {} registers, {:.1}%, DRAM {:.1}% ({:.1} µs){why}.",
            super::operators::profile_label(ours_stem).map_or_else(|| ours_stem.to_string(), |(label, _)| label), name(their_text), theirs.registers, theirs.achieved_occupancy, theirs.dram_percent, theirs.duration_us,
            name(our_text), ours.registers, ours.achieved_occupancy, ours.dram_percent, ours.duration_us).unwrap();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_shapes_table_puts_each_tile_on_one_line() {
        let time = |block, packs, evict_first, median_us| records::CopyShapeTime { block, packs, evict_first, n: 1 << 28, median_us };
        let rows = [time(256, 1, false, 513.15), time(256, 1, true, 500.36), time(512, 2, true, 515.36)];
        let t = copy_shapes_table(&rows, 4814.3);
        assert!(t.contains("| 256 threads × 1 pack | 513.1 µs (86.9%) | 500.4 µs (89.1%) |"), "{t}");
        assert!(t.contains("| 512 threads × 2 packs | — | 515.4 µs (86.6%) |"), "{t}");
        assert_eq!(t.lines().count(), 4, "{t}");
    }
}
