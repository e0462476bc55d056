//! Addressing diagrams: which thread adds which element at each step of each tree.
//!
//! [`steps`] repeats, in Rust, the index arithmetic of the tree loops in `kernels/01_*.cu` …
//! `kernels/03_*.cu`; the pictures are drawn from it and the tests below check it, so a diagram
//! cannot show an addressing that the tests have not summed with.
//!
//! ```
//! use reduction::book::draw::diagrams::{steps, Scheme};
//! // Kernel 2 at its first step: thread 1 adds element 3 into element 2.
//! let first = &steps(Scheme::InterleavedStrided, 16)?[0];
//! assert_eq!((first.s, first.adds[1].thread, first.adds[1].dst, first.adds[1].src), (1, 1, 2, 3));
//! # Ok::<(), reduction::Error>(())
//! ```

use crate::error::{io_error, Error, Result};
use plotters::coord::Shift;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use crate::kernels::names;

/// How a block's tree pairs up its elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Kernel 1: at step s (1, 2, 4, …) thread tid adds `tid + s` into `tid` when `tid % 2s == 0`.
    InterleavedDivergent,
    /// Kernel 2: at step s (1, 2, 4, …) thread tid works on `index = 2·s·tid`, adding
    /// `index + s` into `index` while `index < blockDim`.
    InterleavedStrided,
    /// Kernels 3 on: at step s (blockDim/2, …, 2, 1) thread tid < s adds `tid + s` into `tid`.
    Sequential,
}

impl Scheme {
    pub const ALL: [Scheme; 3] = [Scheme::InterleavedDivergent, Scheme::InterleavedStrided, Scheme::Sequential];

    /// The diagram's file stem.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::InterleavedDivergent => "interleaved_divergent",
            Scheme::InterleavedStrided => "interleaved_strided",
            Scheme::Sequential => "sequential",
        }
    }

    /// The first kernel of the registry that uses this scheme.
    pub fn kernel(self) -> &'static str {
        match self {
            Scheme::InterleavedDivergent => names::REDUCE1,
            Scheme::InterleavedStrided => names::REDUCE2,
            Scheme::Sequential => names::REDUCE3,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Scheme::InterleavedDivergent => "interleaved addressing, divergent branch",
            Scheme::InterleavedStrided => "interleaved addressing, strided index",
            Scheme::Sequential => "sequential addressing",
        }
    }

    /// The lines of the kernel's tree loop that this scheme transcribes, as written in its
    /// `.cu` file (a test checks that they still are).
    pub fn kernel_lines(self) -> &'static [&'static str] {
        match self {
            Scheme::InterleavedDivergent => {
                &["for (unsigned s = 1; s < blockDim.x; s *= 2)", "if (tid % (2 * s) == 0)", "sdata[tid] += sdata[tid + s];"]
            }
            Scheme::InterleavedStrided => &[
                "for (unsigned s = 1; s < blockDim.x; s *= 2)",
                "unsigned index = 2 * s * tid;",
                "if (index < blockDim.x)",
                "sdata[index] += sdata[index + s];",
            ],
            Scheme::Sequential => {
                &["for (unsigned s = blockDim.x / 2; s > 0; s >>= 1)", "if (tid < s)", "sdata[tid] += sdata[tid + s];"]
            }
        }
    }

    /// The strides s of the tree loop, in order, for a block of `n` threads.
    /// The kernels' loops exactly, so for any `n`: `s = 1, 2, 4, … < n`, or `s = n / 2, n / 4, … > 0`.
    fn strides(self, n: u32) -> Vec<u32> {
        match self {
            Scheme::InterleavedDivergent | Scheme::InterleavedStrided => {
                std::iter::successors(Some(1u32), |s| s.checked_mul(2)).take_while(|s| *s < n).collect()
            }
            Scheme::Sequential => std::iter::successors(Some(n / 2), |s| Some(s / 2)).take_while(|s| *s > 0).collect(),
        }
    }

    /// What thread `tid` does at stride `s` in a block of `n`: the `if` of the kernel.
    fn add(self, s: u32, n: u32, tid: u32) -> Option<Add> {
        match self {
            Scheme::InterleavedDivergent => (tid % (2 * s) == 0).then_some(Add { thread: tid, dst: tid, src: tid + s }),
            Scheme::InterleavedStrided => {
                let index = 2 * s * tid;
                (index < n).then_some(Add { thread: tid, dst: index, src: index + s })
            }
            Scheme::Sequential => (tid < s).then_some(Add { thread: tid, dst: tid, src: tid + s }),
        }
    }
}

/// One `sdata[dst] += sdata[src]`, done by `thread`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Add {
    pub thread: u32,
    pub dst: u32,
    pub src: u32,
}

/// One pass of the tree loop, between two `__syncthreads()`: its stride and every add in it,
/// in thread order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub s: u32,
    pub adds: Vec<Add>,
}

/// The steps of `scheme` on a block of `n` threads holding `n` elements. `n` must be a power of
/// two from 2 up to the kernel's largest block, as the kernels require.
pub fn steps(scheme: Scheme, n: u32) -> Result<Vec<Step>> {
    let max_block = crate::kernels::find(scheme.kernel())?.max_block;
    if !n.is_power_of_two() || n < 2 || n > max_block {
        return Err(Error::InvalidBlockSize {
            kernel: scheme.kernel().to_string(),
            block: n,
            reason: format!("the tree halves the block at each step, so it must be a power of two from 2 to {max_block}"),
        });
    }
    Ok(scheme
        .strides(n)
        .into_iter()
        .map(|s| Step { s, adds: (0..n).filter_map(|tid| scheme.add(s, n, tid)).collect() })
        .collect())
}

/// What a tree loop does with a block of `n` threads that the kernel was not written for (a
/// block that is not a power of two): the reads that fall past the tile of `n` values, and the
/// slots whose value never reaches slot 0. The loop is the kernel's, with no check of `n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RaggedBlock {
    /// (the step's stride, the add) for every read of `sdata[src]` with `src >= n`.
    pub reads_past_tile: Vec<(u32, Add)>,
    /// Slots of the tile whose value is never added, directly or through others, into slot 0.
    pub never_reach_slot_0: Vec<u32>,
}

/// Trace `scheme`'s loop on a block of `n` threads (any `n` from 1): see [`RaggedBlock`].
pub fn ragged_block(scheme: Scheme, n: u32) -> RaggedBlock {
    // held[slot]: the original slots whose values slot `slot` holds now.
    let mut held: Vec<Vec<u32>> = (0..n).map(|i| vec![i]).collect();
    let mut reads_past_tile = Vec::new();
    for s in scheme.strides(n) {
        let adds: Vec<Add> = (0..n).filter_map(|tid| scheme.add(s, n, tid)).collect();
        let before = held.clone();
        for add in adds {
            if add.src >= n || add.dst >= n {
                reads_past_tile.push((s, add));
                continue;
            }
            let moved = before[add.src as usize].clone();
            held[add.dst as usize].extend(moved);
        }
    }
    let mut reached = held.first().cloned().unwrap_or_default();
    reached.sort_unstable();
    reached.dedup();
    let never_reach_slot_0 = (0..n).filter(|i| reached.binary_search(i).is_err()).collect();
    RaggedBlock { reads_past_tile, never_reach_slot_0 }
}

/// The sentence of kernel 1's review about a block of 300 threads, from [`ragged_block`].
pub fn block_of_300_sentence() -> String {
    let n = 300;
    let k1 = ragged_block(Scheme::InterleavedDivergent, n);
    let k3 = ragged_block(Scheme::Sequential, n);
    let reads: Vec<String> = k1.reads_past_tile.iter().take(4).map(|(s, a)| format!("thread {} reads slot {} at `s = {s}`", a.thread, a.src)).collect();
    let reach = if k1.never_reach_slot_0.is_empty() {
        "every one of the 300 slots does reach slot 0 — nothing is dropped".to_string()
    } else {
        format!("{} slots never reach slot 0", k1.never_reach_slot_0.len())
    };
    format!(
        "Traced on the CPU with kernel 1's own loop (`reduction::book::draw::diagrams::ragged_block`, tested against the kernel's lines): with \
        300 threads {reach}; the sum goes wrong because {} of the adds read a slot past the end of the 300-value tile ({}, …), \
        whatever shared memory holds there. Kernel 3's halving loop fails the other way: with 300 threads {} slots never reach slot 0 \
        (the first is slot {}), {}.\n",
        k1.reads_past_tile.len(), reads.join(", "), k3.never_reach_slot_0.len(),
        k3.never_reach_slot_0.first().copied().unwrap_or(0),
        match k3.reads_past_tile.len() {
            0 => "and none of its reads falls past the tile".to_string(),
            r => format!("and {r} of its reads fall past the tile"),
        }
    )
}

/// Run the tree over `values` (one per thread): the contents of `sdata` before the first step
/// and after each. Every read of a step sees the values from before it, as the barrier between
/// steps promises; sums wrap on overflow rather than panic.
pub fn simulate(scheme: Scheme, values: &[i64]) -> Result<Vec<Vec<i64>>> {
    let n = u32::try_from(values.len()).unwrap_or(u32::MAX);
    let mut rows = vec![values.to_vec()];
    for step in steps(scheme, n)? {
        let before = rows.last().cloned().unwrap_or_default();
        let mut after = before.clone();
        for add in &step.adds {
            after[add.dst as usize] = before[add.dst as usize].wrapping_add(before[add.src as usize]);
        }
        rows.push(after);
    }
    Ok(rows)
}

/// The 16 values of Harris's slides, so the pictures can be set beside them.
const EXAMPLE: [i64; 16] = [10, 1, 8, -1, 0, -2, 3, 5, -2, -3, 2, 7, 0, 11, 0, 2];

/// The addressing diagram of `scheme`'s tree over sixteen example values, as the book inlines it
/// (`plots/diagrams/<scheme>.svg`).
pub fn tree_diagram(scheme: Scheme) -> Result<String> {
    let path = format!("plots/diagrams/{}.svg", scheme.name());
    Ok(crate::book::draw::charts::fit_to_page(diagram(scheme, &EXAMPLE, Path::new(&path))?))
}

// ---------------------------------------------------------------------------------------------
// Drawing, in pixels.

type Drawn<T = ()> = std::result::Result<T, DrawingAreaErrorKind<std::io::Error>>;

const FONT: &str = "sans-serif";
const CELL_W: i32 = 40;
const CELL_H: i32 = 28;
const PITCH: i32 = 46;
const LEFT: i32 = 150;
const TOP: i32 = 150;
const CODE_LINE: i32 = 18;
const CODE_INDENT: i32 = 28;
/// From the top of one row of cells to the top of the next; the threads sit in between.
const STEP_H: i32 = 118;
const NODE_R: i32 = 12;
const FOOTER: i32 = 56;

const ACCENT: RGBColor = RGBColor(31, 119, 180);
const WRITTEN: RGBColor = RGBColor(207, 224, 245);
const IDLE: RGBColor = RGBColor(230, 230, 230);
const FADED: RGBColor = RGBColor(150, 150, 150);

/// The SVG text of one diagram; `path` is only named in errors.
fn diagram(scheme: Scheme, values: &[i64], path: &Path) -> Result<String> {
    let n = values.len() as u32;
    let steps = steps(scheme, n)?;
    let rows = simulate(scheme, values)?;
    let width = (LEFT + n as i32 * PITCH + 20) as u32;
    let height = (TOP + CELL_H + steps.len() as i32 * STEP_H + FOOTER) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        draw_diagram(&root, scheme, &steps, &rows)
            .and_then(|()| root.present())
            .map_err(|e| io_error(path, e))?;
    }
    Ok(svg)
}

fn cell_x(i: u32) -> i32 {
    LEFT + i as i32 * PITCH
}

fn centre_x(i: u32) -> i32 {
    cell_x(i) + CELL_W / 2
}

fn row_y(r: usize) -> i32 {
    TOP + r as i32 * STEP_H
}

fn text(size: f64, colour: RGBColor, h: HPos) -> TextStyle<'static> {
    TextStyle { font: (FONT, size).into_font(), color: colour.to_backend_color(), pos: Pos::new(h, VPos::Center) }
}

fn draw_diagram(root: &DrawingArea<SVGBackend, Shift>, scheme: Scheme, steps: &[Step], rows: &[Vec<i64>]) -> Drawn {
    root.fill(&WHITE)?;
    let n = rows[0].len() as u32;
    let (w, h) = root.dim_in_pixel();
    let chapter = crate::kernels::find(scheme.kernel()).map(|k| k.chapter).unwrap_or_default();
    let title = format!("Kernel {chapter} ({}): {}, {n} elements, {n} threads", scheme.kernel(), scheme.title());
    root.draw_text(&title, &text(22.0, BLACK, HPos::Center), (w as i32 / 2, 22))?;
    let code = TextStyle { font: ("monospace", 15.0).into_font(), color: RGBColor(60, 60, 60).to_backend_color(), pos: Pos::new(HPos::Left, VPos::Center) };
    for (i, line) in scheme.kernel_lines().iter().enumerate() {
        // The loop header, then its body; the add sits inside the `if`.
        let indent = if i == 0 { 0 } else if line.starts_with("sdata") { 2 } else { 1 };
        root.draw_text(line, &code, (LEFT + indent * CODE_INDENT, 52 + i as i32 * CODE_LINE))?;
    }

    let small = text(13.0, FADED, HPos::Center);
    for i in 0..n {
        root.draw_text(&i.to_string(), &small, (centre_x(i), TOP - 14))?;
    }
    root.draw_text("sdata index", &text(14.0, FADED, HPos::Right), (LEFT - 12, TOP - 14))?;
    draw_cells(root, 0, &rows[0], None, false)?;
    for (k, step) in steps.iter().enumerate() {
        draw_step(root, k + 1, step, n)?;
        draw_cells(root, k + 1, &rows[k + 1], Some(&step.adds), k + 1 == steps.len())?;
    }
    let footer = text(15.0, RGBColor(60, 60, 60), HPos::Center);
    let y = h as i32 - FOOTER / 2;
    root.draw_text(
        "circles: threads by id (grey: idle in that step); lines: the two values it adds; blue cells: written in that step",
        &footer,
        (w as i32 / 2, y),
    )
}

/// Row `r` of `sdata`. After a step, the cells it wrote stand out and the others fade; the
/// last row rings slot 0, where the block's sum ends.
fn draw_cells(root: &DrawingArea<SVGBackend, Shift>, r: usize, values: &[i64], written: Option<&[Add]>, last: bool) -> Drawn {
    let y = row_y(r);
    for (i, value) in values.iter().enumerate() {
        let i = i as u32;
        let fresh = written.is_none_or(|adds| adds.iter().any(|a| a.dst == i));
        let fill = match written {
            None => WHITE,
            Some(_) if fresh => WRITTEN,
            Some(_) => RGBColor(245, 245, 245),
        };
        let corners = [(cell_x(i), y), (cell_x(i) + CELL_W, y + CELL_H)];
        root.draw(&Rectangle::new(corners, fill.filled()))?;
        let outline = if last && i == 0 { ACCENT.stroke_width(3) } else { RGBColor(120, 120, 120).stroke_width(1) };
        root.draw(&Rectangle::new(corners, outline))?;
        let ink = if fresh { BLACK } else { FADED };
        root.draw_text(&value.to_string(), &text(15.0, ink, HPos::Center), (centre_x(i), y + CELL_H / 2))?;
    }
    let label = if written.is_none() { "input" } else { "sdata" };
    root.draw_text(label, &text(15.0, RGBColor(60, 60, 60), HPos::Right), (LEFT - 12, y + CELL_H / 2))
}

/// The threads of one step, between row `r - 1` and row `r`: each busy thread joined to the two
/// values it reads and, by an arrow, to the one it writes; idle threads grey.
fn draw_step(root: &DrawingArea<SVGBackend, Shift>, r: usize, step: &Step, n: u32) -> Drawn {
    let above = row_y(r - 1) + CELL_H;
    let below = row_y(r);
    let node_y = (above + below) / 2;
    let read = ACCENT.mix(0.55).stroke_width(2);
    for add in &step.adds {
        let node = (centre_x(add.thread), node_y);
        root.draw(&PathElement::new(vec![(centre_x(add.dst), above), node], read))?;
        root.draw(&PathElement::new(vec![(centre_x(add.src), above), node], read))?;
        draw_arrow(root, node, (centre_x(add.dst), below))?;
    }
    for tid in 0..n {
        let busy = step.adds.iter().any(|a| a.thread == tid);
        let (fill, ink) = if busy { (ACCENT, WHITE) } else { (IDLE, FADED) };
        let centre = (centre_x(tid), node_y);
        root.draw(&Circle::new(centre, NODE_R, fill.filled()))?;
        if !busy {
            root.draw(&Circle::new(centre, NODE_R, FADED.stroke_width(1)))?;
        }
        root.draw_text(&tid.to_string(), &text(13.0, ink, HPos::Center), centre)?;
    }
    let label = text(15.0, RGBColor(60, 60, 60), HPos::Right);
    root.draw_text(&format!("s = {}", step.s), &label, (LEFT - 12, node_y - 9))?;
    let busy = format!("{} of {n} busy", step.adds.len());
    root.draw_text(&busy, &text(13.0, FADED, HPos::Right), (LEFT - 12, node_y + 10))
}

/// A line from the edge of the thread's circle to `to`, with a head pointing along it.
fn draw_arrow(root: &DrawingArea<SVGBackend, Shift>, from: (i32, i32), to: (i32, i32)) -> Drawn {
    let (dx, dy) = ((to.0 - from.0) as f64, (to.1 - from.1) as f64);
    let length = dx.hypot(dy);
    let (ux, uy) = (dx / length, dy / length);
    let at = |along: f64, across: f64| ((to.0 as f64 - ux * along - uy * across).round() as i32, (to.1 as f64 - uy * along + ux * across).round() as i32);
    let start = at(length - NODE_R as f64, 0.0);
    root.draw(&PathElement::new(vec![start, at(6.0, 0.0)], ACCENT.stroke_width(2)))?;
    root.draw(&Polygon::new(vec![to, at(9.0, 4.5), at(9.0, -4.5)], ACCENT.filled()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data;

    #[test]
    fn a_block_of_300_loses_no_slot_in_kernel_1_but_reads_past_its_tile() {
        let k1 = ragged_block(Scheme::InterleavedDivergent, 300);
        assert!(k1.never_reach_slot_0.is_empty(), "{:?}", k1.never_reach_slot_0);
        // The first read past the tile: thread 296 reads slot 300 at s = 4 (296 % 8 == 0).
        assert_eq!(k1.reads_past_tile.first(), Some(&(4, Add { thread: 296, dst: 296, src: 300 })));
        assert!(k1.reads_past_tile.iter().all(|(_, a)| a.src >= 300));
        // Kernel 3's halving loop drops slots instead (s = 150, 75, 37, 18, 9, 4, 2, 1: at s = 9 slot 18 is left out, and
        // the slots it holds, 8 among them, never reach slot 0), as chapter 3's block of 384 drops slot 2.
        let k3 = ragged_block(Scheme::Sequential, 300);
        assert!(!k3.never_reach_slot_0.is_empty() && k3.reads_past_tile.is_empty(), "{k3:?}");
        // A power of two is traced as the kernel runs it: nothing past the tile, nothing lost.
        for scheme in [Scheme::InterleavedDivergent, Scheme::InterleavedStrided, Scheme::Sequential] {
            let fine = ragged_block(scheme, 256);
            assert!(fine.reads_past_tile.is_empty() && fine.never_reach_slot_0.is_empty(), "{scheme:?}");
        }
        let sentence = block_of_300_sentence();
        assert!(sentence.contains("every one of the 300 slots does reach slot 0") && sentence.contains("thread 296 reads slot 300 at `s = 4`"), "{sentence}");
    }

    const SIZES: [u32; 4] = [16, 32, 64, 1024];

    fn random_values(n: u32, seed: u64) -> Vec<i64> {
        data::random_i32(n as usize, seed).into_iter().map(i64::from).collect()
    }

    #[test]
    fn every_scheme_leaves_the_sum_in_slot_zero() {
        for scheme in Scheme::ALL {
            for (seed, n) in SIZES.into_iter().enumerate() {
                let values = random_values(n, seed as u64 + 1);
                let rows = simulate(scheme, &values).unwrap();
                assert_eq!(rows.last().unwrap()[0], values.iter().sum::<i64>(), "{scheme:?}, n = {n}");
            }
        }
    }

    #[test]
    fn each_step_halves_the_busy_threads_and_there_are_log2_n_steps() {
        for scheme in Scheme::ALL {
            for n in SIZES {
                let steps = steps(scheme, n).unwrap();
                assert_eq!(steps.len() as u32, n.trailing_zeros(), "{scheme:?}, n = {n}");
                for (k, step) in steps.iter().enumerate() {
                    assert_eq!(step.adds.len() as u32, n >> (k + 1), "{scheme:?}, n = {n}, s = {}", step.s);
                }
            }
        }
    }

    #[test]
    fn no_step_reads_what_another_thread_of_it_writes() {
        // What makes one barrier per step enough: within a step, the slots written and the
        // slots read by other threads are disjoint.
        for scheme in Scheme::ALL {
            for n in SIZES {
                for step in steps(scheme, n).unwrap() {
                    let written: Vec<u32> = step.adds.iter().map(|a| a.dst).collect();
                    for add in &step.adds {
                        assert!(!written.contains(&add.src), "{scheme:?} n = {n} s = {}: slot {} is read and written", step.s, add.src);
                        assert_eq!(written.iter().filter(|d| **d == add.dst).count(), 1, "{scheme:?}: slot {} written twice", add.dst);
                    }
                }
            }
        }
    }

    fn busy_threads(step: &Step) -> Vec<u32> {
        step.adds.iter().map(|a| a.thread).collect()
    }

    #[test]
    fn kernel_2_and_3_keep_their_busy_threads_contiguous() {
        for scheme in [Scheme::InterleavedStrided, Scheme::Sequential] {
            for n in SIZES {
                for step in steps(scheme, n).unwrap() {
                    let k = step.adds.len() as u32;
                    assert_eq!(busy_threads(&step), (0..k).collect::<Vec<_>>(), "{scheme:?}, n = {n}, s = {}", step.s);
                }
            }
        }
    }

    #[test]
    fn kernel_1_scatters_its_busy_threads() {
        for n in SIZES {
            for step in steps(Scheme::InterleavedDivergent, n).unwrap() {
                let busy = busy_threads(&step);
                assert_eq!(busy, (0..n).step_by(2 * step.s as usize).collect::<Vec<_>>(), "n = {n}, s = {}", step.s);
                if busy.len() > 1 {
                    assert_ne!(busy, (0..busy.len() as u32).collect::<Vec<_>>(), "n = {n}, s = {}: contiguous", step.s);
                }
            }
        }
    }

    #[test]
    fn sequential_strides_run_downwards_and_interleaved_upwards() {
        let strides = |scheme| steps(scheme, 16).unwrap().iter().map(|s| s.s).collect::<Vec<_>>();
        assert_eq!(strides(Scheme::InterleavedDivergent), [1, 2, 4, 8]);
        assert_eq!(strides(Scheme::InterleavedStrided), [1, 2, 4, 8]);
        assert_eq!(strides(Scheme::Sequential), [8, 4, 2, 1]);
    }

    #[test]
    fn the_transcribed_lines_are_still_in_the_kernels() {
        for scheme in Scheme::ALL {
            let source = crate::kernels::find(scheme.kernel()).unwrap().source;
            for line in scheme.kernel_lines() {
                assert!(source.contains(line), "{} no longer contains `{line}`: update Scheme", scheme.kernel());
            }
        }
    }

    #[test]
    fn block_sizes_the_kernels_refuse_are_errors() {
        for n in [0, 1, 12, 2048] {
            for scheme in Scheme::ALL {
                assert!(matches!(steps(scheme, n), Err(Error::InvalidBlockSize { .. })), "{scheme:?}, n = {n}");
            }
        }
        assert!(simulate(Scheme::Sequential, &[1, 2, 3]).is_err());
    }

    #[test]
    fn the_example_sums_to_harris_41() {
        // Harris's slides show these 16 values reduced to 41.
        for scheme in Scheme::ALL {
            assert_eq!(simulate(scheme, &EXAMPLE).unwrap().last().unwrap()[0], 41);
        }
    }
}
