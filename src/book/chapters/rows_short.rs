//! "Row sums" (`book/rows.md`), the short rows: `plots/rows_short.cu`'s measurements of the
//! book's `rows_warp` at every team size and block (`plots/data/experiments/<gpu>-rows-short.csv`),
//! the team the planner takes ([`crate::rows::sum_team`]) and the one it took before (one lane a
//! pack, [`crate::rows::warp_lanes`], blocks of 128), and what making the team size a template
//! parameter did (`<gpu>-rows-short-before.csv` and `-after.csv`, one call of the GPU host).

use crate::book::context::Context;
use crate::error::Result;
use crate::rows::{sum_team, warp_lanes, WARP_BLOCK};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::Path;

/// One line of `plots/rows_short.cu`'s output.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ShortRow {
    pub dtype: String,
    pub rows: usize,
    pub cols: usize,
    /// `rows_warp` (the book's kernel) or `read` (the same bytes read, nothing summed).
    pub variant: String,
    pub lanes: u32,
    pub block: u32,
    pub launches: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

/// The H200's SM count: the experiment's rows were planned for the GPU they ran on.
fn sm_count(c: &Context) -> u32 {
    c.book().map(|(m, _)| m.sm_count).unwrap_or(132)
}

fn read(path: &Path) -> Result<Vec<ShortRow>> {
    Ok(crate::records::csv::read::<ShortRow>(path)?.1)
}

/// `rows_short.md`: the table and its sentences, or that the experiment has not run here.
pub fn markdown(c: &Context) -> Result<String> {
    let gpu = &c.book()?.0.gpu;
    let slug = crate::records::slug(gpu);
    let dir = c.data_dir.join("experiments");
    let main = dir.join(format!("{slug}-rows-short.csv"));
    if !main.is_file() {
        return Ok(format!("*The short-row experiment (`plots/rows_short.cu`) has not run on the {gpu}.*\n"));
    }
    let mut out = table(&read(&main)?, sm_count(c));
    let (before, after) = (dir.join(format!("{slug}-rows-short-before.csv")), dir.join(format!("{slug}-rows-short-after.csv")));
    if before.is_file() && after.is_file() {
        out.push('\n');
        out.push_str(&template_sentence(&read(&before)?, &read(&after)?, sm_count(c)));
    }
    Ok(out)
}

fn time(rows: &[ShortRow], shape: (&str, usize, usize), variant: &str, lanes: u32, block: u32) -> Option<f64> {
    rows.iter().find(|r| (r.dtype.as_str(), r.rows, r.cols) == shape && r.variant == variant && r.lanes == lanes && r.block == block).map(|r| r.median_us)
}

/// The shapes of a file, in its order.
fn shapes(rows: &[ShortRow]) -> Vec<(&str, usize, usize)> {
    let mut shapes: Vec<(&str, usize, usize)> = Vec::new();
    for r in rows {
        let s = (r.dtype.as_str(), r.rows, r.cols);
        if !shapes.contains(&s) {
            shapes.push(s);
        }
    }
    shapes
}

fn packs(dtype: &str, cols: usize) -> usize {
    let per = if dtype == "f32" { 4 } else { 8 };
    cols.div_ceil(per)
}

/// The team before this rule: one lane a pack while the rows were few, blocks of 128.
fn former_team(shape: (&str, usize, usize), sm_count: u32) -> (u32, u32) {
    (warp_lanes(shape.1, packs(shape.0, shape.2), sm_count), WARP_BLOCK)
}

/// Per shape: the fastest team of each size (its best block), the planner's team and the former
/// one, and the `read` yardstick; then how close the planner came.
fn table(rows: &[ShortRow], sm_count: u32) -> String {
    let mut out = String::from(
        "| type | M × N | 1 lane | 2 | 4 | 8 | 16 | 32 | fastest team | planner's team | former team | reading the bytes |\n\
         |---|---|--:|--:|--:|--:|--:|--:|---|---|---|--:|\n",
    );
    let (mut within, mut cases, mut worst, mut former_worst, mut gained) = (0, 0, 0.0f64, 0.0f64, 0.0f64);
    for shape in shapes(rows) {
        let kernel: Vec<&ShortRow> = rows.iter().filter(|r| (r.dtype.as_str(), r.rows, r.cols) == shape && r.variant == "rows_warp").collect();
        let Some(fastest) = kernel.iter().min_by(|a, b| a.median_us.total_cmp(&b.median_us)) else { continue };
        let mut line = format!("| {} | {} × {} |", shape.0, shape.1, shape.2);
        for lanes in [1u32, 2, 4, 8, 16, 32] {
            let best = kernel.iter().filter(|r| r.lanes == lanes).map(|r| r.median_us).fold(f64::INFINITY, f64::min);
            if best.is_finite() {
                write!(line, " {best:.2} |").unwrap();
            } else {
                line.push_str(" – |");
            }
        }
        let (lanes, block) = sum_team(shape.1, shape.2, packs(shape.0, shape.2), sm_count);
        let (old_lanes, old_block) = former_team(shape, sm_count);
        let planned = time(rows, shape, "rows_warp", lanes, block);
        let former = time(rows, shape, "rows_warp", old_lanes, old_block);
        let read = rows.iter().filter(|r| (r.dtype.as_str(), r.rows, r.cols) == shape && r.variant == "read").map(|r| r.median_us).fold(f64::INFINITY, f64::min);
        let cell = |t: Option<f64>, l: u32, b: u32| t.map_or(format!("{l} × {b}: –"), |t| format!("{l} lanes, block {b}: {t:.2}"));
        write!(line, " {} lanes, block {}: **{:.2}** | {} | {} | {} |", fastest.lanes, fastest.block, fastest.median_us, cell(planned, lanes, block), cell(former, old_lanes, old_block),
            if read.is_finite() { format!("{read:.2}") } else { "–".into() }).unwrap();
        writeln!(out, "{line}").unwrap();
        if let (Some(p), Some(f)) = (planned, former) {
            cases += 1;
            let over = p / fastest.median_us - 1.0;
            if over <= 0.03 {
                within += 1;
            }
            worst = worst.max(over);
            former_worst = former_worst.max(f / fastest.median_us - 1.0);
            gained = gained.max(1.0 - p / f);
        }
    }
    write!(
        out,
        "\nµs per launch; each team size at its fastest block of 64 to 512 threads. The planner's team was within 3% of the fastest measured at {within} of {cases} shapes \
         and at most {:.1}% slower; the former team (as many lanes as packs, up to a warp, in blocks of 128) was up to {:.1}% slower than the fastest, \
         and the planner's took up to {:.1}% less time than it.\n",
        worst * 100.0,
        former_worst * 100.0,
        gained * 100.0
    )
    .unwrap();
    out
}

/// What the team size as a template parameter (shifts and masks, and no per-row alignment walk
/// for rows of whole packs) did at the planner's former team: the two files of one call.
fn template_sentence(before: &[ShortRow], after: &[ShortRow], sm_count: u32) -> String {
    let mut parts = Vec::new();
    for shape in shapes(after) {
        let (lanes, block) = former_team(shape, sm_count);
        if let (Some(b), Some(a)) = (time(before, shape, "rows_warp", lanes, block), time(after, shape, "rows_warp", lanes, block)) {
            parts.push((shape, b, a));
        }
    }
    // The shape of the largest saving, named with it.
    let Some(&((dtype, rows, cols), b, a)) = parts.iter().max_by(|x, y| (1.0 - x.2 / x.1).total_cmp(&(1.0 - y.2 / y.1))) else { return String::new() };
    let slower = parts.iter().filter(|&&(_, b, a)| a > b).count();
    format!(
        "With the team size a template parameter, the same launches (the former team, in one run of the experiment beside the kernel as it was) took up to {:.1}% less time \
         ({dtype} {rows} × {cols}: {b:.2} → {a:.2} µs); slower at {slower} of {} shapes.\n",
        (1.0 - a / b) * 100.0,
        parts.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(dtype: &str, rows: usize, cols: usize, variant: &str, lanes: u32, block: u32, us: f64) -> ShortRow {
        ShortRow { dtype: dtype.into(), rows, cols, variant: variant.into(), lanes, block, launches: 600, median_us: us, min_us: us, max_us: us }
    }

    fn sample() -> Vec<ShortRow> {
        let mut rows = vec![row("f32", 4096, 64, "read", 0, 64, 1.6), row("f32", 4096, 64, "read", 0, 128, 1.5)];
        for (lanes, us) in [(1, 3.1), (2, 2.1), (4, 1.9), (8, 1.95), (16, 2.1), (32, 2.6)] {
            rows.push(row("f32", 4096, 64, "rows_warp", lanes, 64, us));
            rows.push(row("f32", 4096, 64, "rows_warp", lanes, 128, us + 0.2));
        }
        rows
    }

    #[test]
    fn the_table_marks_the_fastest_the_planner_and_the_former_team() {
        let t = table(&sample(), 132);
        // 4 lanes in blocks of 64 (the planner's team) were fastest; the former team was 16 lanes
        // in blocks of 128 (2.3 µs, 21.1% slower).
        assert!(t.contains("| f32 | 4096 × 64 | 3.10 | 2.10 | 1.90 | 1.95 | 2.10 | 2.60 | 4 lanes, block 64: **1.90** | 4 lanes, block 64: 1.90 | 16 lanes, block 128: 2.30 | 1.50 |"), "{t}");
        assert!(t.contains("within 3% of the fastest measured at 1 of 1 shapes and at most 0.0% slower"), "{t}");
        assert!(t.contains("up to 21.1% slower than the fastest, and the planner's took up to 17.4% less time"), "{t}");
    }

    #[test]
    fn the_template_sentence_compares_the_former_team_in_both_files() {
        let after = sample();
        let before: Vec<ShortRow> = after.iter().map(|r| ShortRow { median_us: r.median_us * 1.25, ..r.clone() }).collect();
        let s = template_sentence(&before, &after, 132);
        assert!(s.contains("up to 20.0% less time (f32 4096 × 64: 2.88 → 2.30 µs); slower at 0 of 1 shapes"), "{s}");
        // The example is the shape of the largest saving, whichever it is.
        let wider = |r: &ShortRow, us: f64| ShortRow { cols: 256, median_us: us, min_us: us, max_us: us, ..r.clone() };
        let (mut before, mut after) = (before.clone(), after.clone());
        before.extend(before.clone().iter().map(|r| wider(r, 4.0)));
        after.extend(after.clone().iter().map(|r| wider(r, 3.0)));
        let s = template_sentence(&before, &after, 132);
        assert!(s.contains("up to 25.0% less time (f32 4096 × 256: 4.00 → 3.00 µs); slower at 0 of 2 shapes"), "{s}");
    }
}
