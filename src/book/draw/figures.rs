//! The figures beside the addressing diagrams: the same trees at 64 elements (two warps) with
//! warps and shared-memory banks coloured, kernel decomposition, the grid-stride loop, the
//! shuffle tree and the last-block ticket. Each is drawn from index arithmetic that a test
//! checks against the kernel's own lines (or from the host's planner), as the addressing
//! diagrams are: a figure cannot show an access pattern the kernels do not have.

use crate::book::draw::diagrams::{steps, Scheme, Step};
use crate::error::{io_error, Result};
use plotters::coord::Shift;
use plotters::drawing::DrawingAreaErrorKind;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use crate::kernels::names;

type Drawn<T = ()> = std::result::Result<T, DrawingAreaErrorKind<std::io::Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

const WARP_COLOURS: [RGBColor; 2] = [RGBColor(31, 119, 180), RGBColor(255, 127, 14)];
const IDLE: RGBColor = RGBColor(238, 238, 238);
const INK: RGBColor = RGBColor(60, 60, 60);
const FADED: RGBColor = RGBColor(150, 150, 150);
const CONFLICT: RGBColor = RGBColor(214, 39, 40);

// ---- the trees at 64 elements: warps and banks ------------------------------------------------

/// Shared-memory banks: 32, each 4 bytes wide, so 4-byte word `i` is in bank `i % 32`.
pub const BANKS: u32 = 32;

/// What one step of a tree does to the warps and the banks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpStep {
    pub s: u32,
    /// Warps with at least one busy thread.
    pub busy_warps: u32,
    /// Warps with some threads busy and some idle: both sides of the branch run.
    pub divergent_warps: u32,
    /// The worst n-way bank conflict of one warp's access (1: none), over the step's two reads.
    pub conflict_ways: u32,
}

/// The n-way bank conflict of one warp reading these word addresses: the most distinct
/// addresses that fall in one bank (the same address read twice is a broadcast, not a conflict).
pub fn conflict_ways(addresses: &[u32]) -> u32 {
    let mut per_bank: Vec<Vec<u32>> = vec![Vec::new(); BANKS as usize];
    for &a in addresses {
        let bank = &mut per_bank[(a % BANKS) as usize];
        if !bank.contains(&a) {
            bank.push(a);
        }
    }
    per_bank.iter().map(|b| b.len() as u32).max().unwrap_or(0).max(1)
}

/// Warps and banks, step by step, for `scheme` on a block of `n` threads.
pub fn warp_steps(scheme: Scheme, n: u32) -> Result<Vec<WarpStep>> {
    let warps = n.div_ceil(32);
    Ok(steps(scheme, n)?
        .into_iter()
        .map(|step| {
            let busy_in = |w: u32| step.adds.iter().filter(|a| a.thread / 32 == w).count() as u32;
            let busy_warps = (0..warps).filter(|&w| busy_in(w) > 0).count() as u32;
            let divergent_warps = (0..warps).filter(|&w| busy_in(w) > 0 && busy_in(w) < 32.min(n)).count() as u32;
            let conflict = (0..warps)
                .flat_map(|w| {
                    let adds: Vec<_> = step.adds.iter().filter(|a| a.thread / 32 == w).collect();
                    let dst: Vec<u32> = adds.iter().map(|a| a.dst).collect();
                    let src: Vec<u32> = adds.iter().map(|a| a.src).collect();
                    [conflict_ways(&dst), conflict_ways(&src)]
                })
                .max()
                .unwrap_or(1);
            WarpStep { s: step.s, busy_warps, divergent_warps, conflict_ways: conflict }
        })
        .collect())
}

const N64: u32 = 64;
const C64: i32 = 17; // cell pitch

fn text(size: f64, colour: RGBColor, h: HPos) -> TextStyle<'static> {
    TextStyle { font: ("sans-serif", size).into_font(), color: colour.to_backend_color(), pos: Pos::new(h, VPos::Center) }
}

fn render(path: &Path, size: (u32, u32), draw: impl FnOnce(&Area) -> Drawn) -> Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| io_error(path, e))?;
        draw(&root).and_then(|()| root.present()).map_err(|e| io_error(path, e))?;
    }
    Ok(crate::book::draw::charts::fit_to_page(svg))
}

fn banks_figure(scheme: Scheme, path: &Path) -> Result<String> {
    let all = steps(scheme, N64)?;
    let summary = warp_steps(scheme, N64)?;
    let (left, top, row_h) = (120, 118, 44);
    let width = (left + N64 as i32 * C64 + 330) as u32;
    let height = (top + all.len() as i32 * row_h + 60) as u32;
    render(path, (width, height), |root| {
        let chapter = crate::kernels::find(scheme.kernel()).map(|k| k.chapter).unwrap_or_default();
        root.draw_text(&format!("Kernel {chapter} ({}): {}, 64 elements, two warps", scheme.kernel(), scheme.title()),
            &text(20.0, BLACK, HPos::Left), (10, 20))?;
        root.draw_text("each step: the words a thread adds (src → dst), coloured by its warp; red: a bank read by two threads of one warp at different words",
            &text(13.0, INK, HPos::Left), (10, 44))?;
        for i in 0..N64 {
            let x = left + i as i32 * C64 + C64 / 2;
            if i % 8 == 0 {
                root.draw_text(&i.to_string(), &text(11.0, FADED, HPos::Center), (x, top - 40))?;
            }
            root.draw_text(&(i % BANKS).to_string(), &text(8.0, FADED, HPos::Center), (x, top - 20))?;
        }
        root.draw_text("sdata index", &text(12.0, FADED, HPos::Right), (left - 8, top - 40))?;
        root.draw_text("bank", &text(12.0, FADED, HPos::Right), (left - 8, top - 20))?;
        for (k, (step, ws)) in all.iter().zip(&summary).enumerate() {
            let y = top + k as i32 * row_h;
            draw_bank_row(root, step, left, y)?;
            root.draw_text(&format!("s = {}", step.s), &text(13.0, INK, HPos::Right), (left - 8, y + 10))?;
            let verdict = format!(
                "{} warp(s) busy, {} divergent; {}",
                ws.busy_warps, ws.divergent_warps,
                if ws.conflict_ways > 1 { format!("{}-way bank conflict", ws.conflict_ways) } else { "no bank conflict".into() }
            );
            let colour = if ws.conflict_ways > 1 || ws.divergent_warps > 0 { CONFLICT } else { INK };
            root.draw_text(&verdict, &text(12.0, colour, HPos::Left), (left + N64 as i32 * C64 + 12, y + 10))?;
        }
        let y = top + all.len() as i32 * row_h + 20;
        for (w, colour) in WARP_COLOURS.iter().enumerate() {
            let x = left + w as i32 * 160;
            root.draw(&Rectangle::new([(x, y - 7), (x + 14, y + 7)], colour.filled()))?;
            root.draw_text(&format!("warp {w} (threads {}–{})", 32 * w, 32 * w + 31), &text(12.0, INK, HPos::Left), (x + 20, y))?;
        }
        Ok(())
    })
}

/// One step at 64 elements: the cell a thread writes (filled) and the one it reads (outlined),
/// in its warp's colour; a red mark under a word whose bank a warp reads at another word too.
fn draw_bank_row(root: &Area, step: &Step, left: i32, y: i32) -> Drawn {
    for i in 0..N64 {
        let x = left + i as i32 * C64;
        root.draw(&Rectangle::new([(x, y), (x + C64 - 2, y + 20)], IDLE.filled()))?;
    }
    for add in &step.adds {
        let colour = WARP_COLOURS[(add.thread / 32) as usize % 2];
        let (xd, xs) = (left + add.dst as i32 * C64, left + add.src as i32 * C64);
        root.draw(&Rectangle::new([(xd, y), (xd + C64 - 2, y + 20)], colour.filled()))?;
        root.draw(&Rectangle::new([(xs, y), (xs + C64 - 2, y + 20)], colour.stroke_width(2)))?;
        root.draw(&PathElement::new(vec![(xs + C64 / 2, y + 22), (xs + C64 / 2, y + 26), (xd + C64 / 2, y + 26), (xd + C64 / 2, y + 22)], colour.mix(0.6).stroke_width(1)))?;
    }
    // Conflicting words: a warp reads two different words of one bank.
    for warp in 0..N64 / 32 {
        let reads: Vec<u32> = step.adds.iter().filter(|a| a.thread / 32 == warp).map(|a| a.src).collect();
        for &a in &reads {
            if reads.iter().any(|&b| b != a && b % BANKS == a % BANKS) {
                let x = left + a as i32 * C64 + C64 / 2;
                root.draw(&Circle::new((x, y + 34), 3, CONFLICT.filled()))?;
            }
        }
    }
    Ok(())
}

// ---- kernel decomposition ---------------------------------------------------------------------

/// The launches of a sum of 64 values by kernel 3 with blocks of 8 threads, as the host plans
/// them ([`crate::plan::plan_passes`]), and the values after each.
pub fn decomposition(values: &[i64], block: u32) -> Result<Vec<(crate::plan::Pass, Vec<i64>)>> {
    let kernel = crate::kernels::find(names::REDUCE3)?;
    let passes = crate::plan::plan_passes(kernel, values.len() as u64, block, u32::MAX)?;
    let mut current = values.to_vec();
    let mut out = Vec::new();
    for pass in passes {
        let next: Vec<i64> = current.chunks(kernel.tile(block) as usize).map(|c| c.iter().sum()).collect();
        out.push((pass, next.clone()));
        current = next;
    }
    Ok(out)
}

fn decomposition_figure(path: &Path) -> Result<String> {
    let values: Vec<i64> = (0..64).map(|i| ((i * 37 + 11) % 19) as i64 - 6).collect();
    let block = 8u32;
    let passes = decomposition(&values, block)?;
    let (left, top, cell, row_h) = (150, 70, 17, 110);
    let width = (left + 64 * cell + 40) as u32;
    let height = (top + (passes.len() as i32 + 1) * row_h) as u32;
    render(path, (width, height), |root| {
        root.draw_text(&format!("Kernel decomposition (reduce3): 64 values, blocks of {block} threads, {} launches", passes.len()),
            &text(20.0, BLACK, HPos::Left), (10, 20))?;
        root.draw_text("each launch: one block per tile writes one partial sum; the next launch reduces the partial sums",
            &text(13.0, INK, HPos::Left), (10, 44))?;
        let mut rows: Vec<Vec<i64>> = vec![values.clone()];
        rows.extend(passes.iter().map(|(_, v)| v.clone()));
        for (r, row) in rows.iter().enumerate() {
            let y = top + r as i32 * row_h;
            let spacing = 64 * cell / row.len() as i32; // each value under the tile it sums
            let label = if r == 0 { "input".to_string() } else { format!("after launch {r}") };
            root.draw_text(&label, &text(13.0, INK, HPos::Right), (left - 10, y + 10))?;
            for (i, v) in row.iter().enumerate() {
                let x = left + i as i32 * spacing + spacing / 2 - cell / 2;
                let colour = if r == 0 { WHITE } else { RGBColor(207, 224, 245) };
                root.draw(&Rectangle::new([(x, y), (x + cell - 1, y + 20)], colour.filled()))?;
                root.draw(&Rectangle::new([(x, y), (x + cell - 1, y + 20)], FADED.stroke_width(1)))?;
                root.draw_text(&v.to_string(), &text(9.0, BLACK, HPos::Center), (x + cell / 2, y + 10))?;
            }
            if let Some((pass, next)) = passes.get(r) {
                let tile = (row.len() as u32).div_ceil(pass.grid) as i32;
                for b in 0..pass.grid as i32 {
                    let x0 = left + b * tile * spacing + 2;
                    let x1 = left + ((b + 1) * tile).min(row.len() as i32) * spacing - 2;
                    root.draw(&Rectangle::new([(x0, y + 26), (x1, y + 48)], WARP_COLOURS[0].mix(0.15).filled()))?;
                    root.draw_text(&format!("block {b}"), &text(10.0, INK, HPos::Center), ((x0 + x1) / 2, y + 37))?;
                    let next_spacing = 64 * cell / next.len() as i32;
                    let to = (left + b * next_spacing + next_spacing / 2, y + row_h);
                    root.draw(&PathElement::new(vec![((x0 + x1) / 2, y + 48), to], WARP_COLOURS[0].mix(0.6).stroke_width(1)))?;
                }
                root.draw_text(&format!("launch {}: grid {}, block {}", r + 1, pass.grid, pass.block),
                    &text(12.0, FADED, HPos::Right), (left - 10, y + 37))?;
            }
        }
        Ok(())
    })
}

// ---- the grid-stride loop ---------------------------------------------------------------------

/// Kernel 7's loop, as written in `kernels/07_multiple_elements.cu` (a test checks it still is).
pub const GRID_STRIDE_LINES: [&str; 5] = [
    "u64 i = (u64)blockIdx.x * (BLOCK * 2) + tid;",
    "const u64 grid_stride = (u64)BLOCK * 2 * gridDim.x;",
    "sum += in[i];",
    "if (i + BLOCK < n) sum += in[i + BLOCK];",
    "i += grid_stride;",
];

/// For each element, the (block, thread, loop step) that reads it, by kernel 7's loop.
pub fn grid_stride_owners(n: u64, block: u32, grid: u32) -> Vec<(u32, u32, u32)> {
    let mut owner = vec![(u32::MAX, u32::MAX, u32::MAX); n as usize];
    for b in 0..grid {
        for tid in 0..block {
            let mut i = b as u64 * (block as u64 * 2) + tid as u64;
            let grid_stride = block as u64 * 2 * grid as u64;
            let mut step = 0;
            while i < n {
                owner[i as usize] = (b, tid, step);
                if i + (block as u64) < n {
                    owner[(i + block as u64) as usize] = (b, tid, step);
                }
                i += grid_stride;
                step += 1;
            }
        }
    }
    owner
}

fn grid_stride_figure(path: &Path) -> Result<String> {
    let (n, block, grid) = (64u64, 4u32, 2u32);
    let owners = grid_stride_owners(n, block, grid);
    let per_row = (2 * block * grid) as usize;
    let (left, top, cell, row_h) = (120, 120, 46, 46);
    let width = (left + per_row as i32 * cell + 30) as u32;
    let height = (top + (owners.len() / per_row) as i32 * row_h + 50) as u32;
    render(path, (width, height), |root| {
        root.draw_text(&format!("Grid-stride loop (reduce7): {grid} blocks of {block} threads, {n} values, two per step"),
            &text(20.0, BLACK, HPos::Left), (10, 20))?;
        let code = TextStyle { font: ("monospace", 13.0).into_font(), color: INK.to_backend_color(), pos: Pos::new(HPos::Left, VPos::Center) };
        for (k, line) in GRID_STRIDE_LINES.iter().enumerate() {
            root.draw_text(line, &code, (20 + (k / 3) as i32 * 520, 46 + (k % 3) as i32 * 18))?;
        }
        for (r, chunk) in owners.chunks(per_row).enumerate() {
            let y = top + r as i32 * row_h;
            root.draw_text(&format!("step {r}"), &text(13.0, INK, HPos::Right), (left - 10, y + 14))?;
            for (c, &(b, tid, _)) in chunk.iter().enumerate() {
                let x = left + c as i32 * cell;
                let colour = WARP_COLOURS[b as usize % 2].mix(0.25 + 0.15 * tid as f64);
                root.draw(&Rectangle::new([(x, y), (x + cell - 3, y + 28)], colour.filled()))?;
                root.draw_text(&format!("{b}.{tid}"), &text(12.0, BLACK, HPos::Center), (x + cell / 2, y + 10))?;
                root.draw_text(&(r * per_row + c).to_string(), &text(9.0, INK, HPos::Center), (x + cell / 2, y + 22))?;
            }
        }
        root.draw_text("each cell: an input value, labelled block.thread that reads it (and its index); a row is one trip of the loop over the whole grid",
            &text(12.0, INK, HPos::Left), (10, height as i32 - 22))?;
        Ok(())
    })
}

// ---- the shuffle tree -------------------------------------------------------------------------

/// `warp_sum`'s loop, as written in `kernels/warp_reduce.cuh`.
pub const SHUFFLE_LINES: [&str; 2] =
    ["for (int offset = 16; offset > 0; offset >>= 1) {", "v += __shfl_down_sync(0xffffffffu, v, offset);  // add the value of lane + offset"];

/// The 32 lanes' values before the loop and after each step: `__shfl_down_sync` gives lane `l`
/// the value of lane `l + offset`, or its own where `l + offset` is past the warp.
pub fn shuffle_steps(values: &[i64; 32]) -> Vec<(u32, Vec<i64>)> {
    let mut rows = vec![(0, values.to_vec())];
    let mut offset = 16u32;
    while offset > 0 {
        let v = rows.last().expect("one row").1.clone();
        let next = (0..32).map(|l| v[l] + if l + (offset as usize) < 32 { v[l + offset as usize] } else { v[l] }).collect();
        rows.push((offset, next));
        offset >>= 1;
    }
    rows
}

fn shuffle_figure(path: &Path) -> Result<String> {
    let values: [i64; 32] = std::array::from_fn(|l| ((l * 7 + 3) % 11) as i64 - 4);
    let rows = shuffle_steps(&values);
    let (left, top, cell, row_h) = (110, 100, 34, 84);
    let width = (left + 32 * cell + 20) as u32;
    let height = (top + (rows.len() as i32 - 1) * row_h + 70) as u32;
    render(path, (width, height), |root| {
        root.draw_text("Warp shuffle tree (reduce8): 32 lanes, no shared memory, no barrier", &text(20.0, BLACK, HPos::Left), (10, 20))?;
        let code = TextStyle { font: ("monospace", 13.0).into_font(), color: INK.to_backend_color(), pos: Pos::new(HPos::Left, VPos::Center) };
        for (k, line) in SHUFFLE_LINES.iter().enumerate() {
            root.draw_text(line, &code, (20 + k as i32 * 28, 46 + k as i32 * 18))?;
        }
        for (r, (offset, v)) in rows.iter().enumerate() {
            let y = top + r as i32 * row_h;
            let label = if r == 0 { "lanes".to_string() } else { format!("offset {offset}") };
            root.draw_text(&label, &text(13.0, INK, HPos::Right), (left - 10, y + 11))?;
            for (l, value) in v.iter().enumerate() {
                let x = left + l as i32 * cell;
                // The lanes whose value still reaches lane 0.
                let live = r == 0 || (l as u32) < *offset;
                let fill = if live { RGBColor(207, 224, 245) } else { IDLE };
                root.draw(&Rectangle::new([(x, y), (x + cell - 3, y + 22)], fill.filled()))?;
                root.draw_text(&value.to_string(), &text(11.0, if live { BLACK } else { FADED }, HPos::Center), (x + cell / 2, y + 11))?;
                if r > 0 && live {
                    let from = left + (l as i32 + *offset as i32) * cell + cell / 2;
                    root.draw(&PathElement::new(vec![(from, y - row_h + 24), (x + cell / 2, y - 2)], WARP_COLOURS[0].mix(0.6).stroke_width(1)))?;
                }
            }
        }
        root.draw_text("lines: the lane whose value a lane adds; grey: lanes whose sums no longer reach lane 0; lane 0 ends with the warp's sum",
            &text(12.0, INK, HPos::Left), (10, height as i32 - 20))?;
        Ok(())
    })
}

// ---- the last-block ticket --------------------------------------------------------------------

/// Kernel 10's ticket, as written in `kernels/10_single_pass.cu`.
pub const TICKET_LINES: [&str; 3] =
    ["partials[blockIdx.x] = v;", "last = atomicAdd(ticket, 1u) == gridDim.x - 1;", "*ticket = 0;  // ready for the next launch"];

/// Blocks finishing in `order`: the ticket each draws, and whether it is the last. The ticket
/// counter starts at 0 and the last block resets it.
pub fn tickets(order: &[u32]) -> (Vec<(u32, u32, bool)>, u32) {
    let grid = order.len() as u32;
    let mut counter = 0u32;
    let mut drawn = Vec::new();
    for &block in order {
        let ticket = counter;
        counter += 1;
        let last = ticket == grid - 1;
        if last {
            counter = 0;
        }
        drawn.push((block, ticket, last));
    }
    (drawn, counter)
}

fn ticket_figure(path: &Path) -> Result<String> {
    let order = [3u32, 0, 5, 1, 4, 2];
    let partials = [14i64, -3, 9, 6, -1, 8];
    let (drawn, _) = tickets(&order);
    let (left, top, row_h) = (40, 110, 40);
    let width = 980u32;
    let height = (top + drawn.len() as i32 * row_h + 70) as u32;
    render(path, (width, height), |root| {
        root.draw_text("The last-block ticket (reduce10_last_block): 6 blocks, finishing in any order", &text(20.0, BLACK, HPos::Left), (10, 20))?;
        let code = TextStyle { font: ("monospace", 13.0).into_font(), color: INK.to_backend_color(), pos: Pos::new(HPos::Left, VPos::Center) };
        for (k, line) in TICKET_LINES.iter().enumerate() {
            root.draw_text(line, &code, (20, 46 + k as i32 * 18))?;
        }
        for (r, &(block, ticket, last)) in drawn.iter().enumerate() {
            let y = top + r as i32 * row_h;
            let colour = if last { CONFLICT } else { WARP_COLOURS[0] };
            root.draw(&Rectangle::new([(left, y), (left + 90, y + 28)], colour.mix(0.2).filled()))?;
            root.draw_text(&format!("block {block}"), &text(13.0, BLACK, HPos::Center), (left + 45, y + 14))?;
            let said = format!(
                "{}. writes partials[{block}] = {}, __threadfence(), draws ticket {ticket}{}",
                r + 1, partials[block as usize],
                if last { " = gridDim.x − 1: the last block".to_string() } else { ": not the last, returns".to_string() }
            );
            root.draw_text(&said, &text(13.0, if last { CONFLICT } else { INK }, HPos::Left), (left + 104, y + 14))?;
        }
        let sum: i64 = partials.iter().sum();
        let y = top + drawn.len() as i32 * row_h + 20;
        root.draw_text(&format!("the last block adds partials[0..6) in index order = {sum}, writes out[0], resets the ticket to 0"),
            &text(13.0, INK, HPos::Left), (left, y))?;
        Ok(())
    })
}

// ---- all of them ------------------------------------------------------------------------------

/// A figure of a later chapter, drawn from the host's arithmetic, by its file name under
/// `plots/diagrams/`.
pub type Drawing = Box<dyn Fn() -> Result<String>>;

/// The chapter that shows the figure `name` (a file name under `plots/diagrams/`).
pub fn chapter_of(name: &str) -> &'static str {
    match name {
        "interleaved_divergent_64.svg" | "decomposition.svg" => "01_interleaved_divergent.md",
        "interleaved_strided_64.svg" => "02_interleaved_strided.md",
        "sequential_64.svg" => "03_sequential.md",
        "grid_stride.svg" => "07_multiple_elements.md",
        "shuffle_tree.svg" => "08_warp_shuffle.md",
        _ => "10_single_pass.md",
    }
}

/// Every figure, as (file name under `plots/diagrams/`, drawing): each tree's shared-memory
/// banks at 64 values, the kernel decomposition, the grid-stride loop, the shuffle tree and the
/// last block's ticket.
pub fn figures() -> Vec<(String, Drawing)> {
    let mut figures: Vec<(String, Drawing)> = Scheme::ALL
        .iter()
        .map(|&s| {
            let name = format!("{}_64.svg", s.name());
            let path = format!("plots/diagrams/{name}");
            (name, Box::new(move || banks_figure(s, Path::new(&path))) as Drawing)
        })
        .collect();
    let at = |name: &str| std::path::PathBuf::from(format!("plots/diagrams/{name}"));
    let (d, g, s, t) = (at("decomposition.svg"), at("grid_stride.svg"), at("shuffle_tree.svg"), at("last_block_ticket.svg"));
    figures.push(("decomposition.svg".into(), Box::new(move || decomposition_figure(&d))));
    figures.push(("grid_stride.svg".into(), Box::new(move || grid_stride_figure(&g))));
    figures.push(("shuffle_tree.svg".into(), Box::new(move || shuffle_figure(&s))));
    figures.push(("last_block_ticket.svg".into(), Box::new(move || ticket_figure(&t))));
    figures
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_1_diverges_kernel_2_conflicts_kernel_3_does_neither() {
        let k1 = warp_steps(Scheme::InterleavedDivergent, 64).unwrap();
        let k2 = warp_steps(Scheme::InterleavedStrided, 64).unwrap();
        let k3 = warp_steps(Scheme::Sequential, 64).unwrap();
        // Kernel 1: half the threads of both warps busy at s = 1; no two threads in one bank.
        assert_eq!((k1[0].busy_warps, k1[0].divergent_warps, k1[0].conflict_ways), (2, 2, 1));
        // Kernel 2: warp 0 entirely busy, warp 1 idle, and 2 threads per bank at s = 1.
        assert_eq!((k2[0].busy_warps, k2[0].divergent_warps, k2[0].conflict_ways), (1, 0, 2));
        assert!(k2[..5].iter().all(|s| s.conflict_ways == 2), "{k2:?}");
        // In Harris's block of 256 the strided index piles up to 8 threads of a warp in a bank.
        assert_eq!(warp_steps(Scheme::InterleavedStrided, 256).unwrap().iter().map(|s| s.conflict_ways).max(), Some(8));
        // Kernel 3: no conflict at any step; divergence only once fewer than 32 threads are busy.
        assert!(k3.iter().all(|s| s.conflict_ways == 1));
        assert!(k3.iter().all(|s| s.divergent_warps == u32::from(s.s < 32)));
    }

    #[test]
    fn bank_conflicts_count_distinct_words_per_bank() {
        assert_eq!(conflict_ways(&[0, 1, 2, 3]), 1);
        assert_eq!(conflict_ways(&[0, 32]), 2);
        assert_eq!(conflict_ways(&[0, 0, 0]), 1); // a broadcast
        assert_eq!(conflict_ways(&[0, 32, 64, 96, 1]), 4);
    }

    #[test]
    fn decomposition_follows_the_planner_and_keeps_the_sum() {
        let values: Vec<i64> = (0..64).map(|i| i - 20).collect();
        let passes = decomposition(&values, 8).unwrap();
        assert_eq!(passes.iter().map(|(p, _)| p.grid).collect::<Vec<_>>(), vec![8, 1]);
        assert_eq!(passes.last().unwrap().1, vec![values.iter().sum::<i64>()]);
    }

    #[test]
    fn the_grid_stride_loop_reads_every_value_once() {
        for (n, block, grid) in [(64, 4, 2), (1000, 32, 3), (7, 4, 2)] {
            let owners = grid_stride_owners(n, block, grid);
            assert!(owners.iter().all(|o| o.0 != u32::MAX), "n = {n}: a value nobody reads");
        }
        // A value read twice would have been overwritten in `owners`: count reads directly.
        let (n, block, grid) = (100u64, 4u64, 3u64);
        let mut reads = vec![0; n as usize];
        for b in 0..grid {
            for t in 0..block {
                let mut i = b * block * 2 + t;
                while i < n {
                    reads[i as usize] += 1;
                    if i + block < n { reads[(i + block) as usize] += 1; }
                    i += block * 2 * grid;
                }
            }
        }
        assert!(reads.iter().all(|&r| r == 1));
    }

    #[test]
    fn the_shuffle_tree_leaves_the_warps_sum_in_lane_0() {
        let values: [i64; 32] = std::array::from_fn(|l| l as i64 * 3 - 40);
        let rows = shuffle_steps(&values);
        assert_eq!(rows.iter().skip(1).map(|r| r.0).collect::<Vec<_>>(), vec![16, 8, 4, 2, 1]);
        assert_eq!(rows.last().unwrap().1[0], values.iter().sum::<i64>());
    }

    #[test]
    fn exactly_one_block_is_last_and_the_counter_is_left_at_zero() {
        let (drawn, counter) = tickets(&[3, 0, 5, 1, 4, 2]);
        assert_eq!(drawn.iter().filter(|d| d.2).count(), 1);
        assert!(drawn.last().unwrap().2);
        assert_eq!(counter, 0);
    }

    #[test]
    fn the_transcribed_lines_are_still_in_the_kernels() {
        let k7 = crate::kernels::find("reduce7").unwrap().full_source();
        let k10 = crate::kernels::find("reduce10_last_block").unwrap().full_source();
        let k8 = crate::kernels::find("reduce8").unwrap().full_source();
        for line in GRID_STRIDE_LINES {
            assert!(k7.contains(line), "{line}");
        }
        for line in TICKET_LINES {
            assert!(k10.contains(line), "{line}");
        }
        for line in SHUFFLE_LINES {
            assert!(k8.contains(line), "{line}");
        }
    }
}
