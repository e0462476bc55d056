//! Looks: a colour and a marker per series, so lines stay apart in print and for colour-blind
//! eyes; the legend, in its own column, and the markers.

use crate::records::bench::Row;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use super::Drawn;
use super::draw::{FONT, LEGEND_SIZE};

pub(super) const KERNEL_COLOURS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Marker {
    Circle,
    Triangle,
    Square,
    Diamond,
    OpenCircle,
    OpenTriangle,
    OpenSquare,
    OpenDiamond,
    Cross,
    Plus,
}

pub(super) const KERNEL_MARKERS: [Marker; 8] = [
    Marker::Circle,
    Marker::Triangle,
    Marker::Square,
    Marker::Diamond,
    Marker::OpenCircle,
    Marker::OpenTriangle,
    Marker::OpenSquare,
    Marker::OpenDiamond,
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Look {
    pub(super) colour: RGBColor,
    pub(super) marker: Marker,
    pub(super) dashed: bool,
    /// The line's stroke in pixels: [`LINE_WIDTH`], or more for the line a chart is about.
    pub(super) width: u32,
}

/// Every series' stroke but the one a chart singles out.
pub(super) const LINE_WIDTH: u32 = 2;

/// The measured copy, and what it implies for a reduction: a pace to compare with.
pub(super) const COPY_LOOK: Look = Look { colour: BLACK, marker: Marker::Plus, dashed: false, width: LINE_WIDTH };
/// The measured read-only kernel: the ceiling every sum chases.
pub(super) const READ_ONLY_LOOK: Look = Look { colour: RGBColor(120, 0, 0), marker: Marker::Cross, dashed: false, width: LINE_WIDTH };
/// The datasheet-style peak: a bound no program reaches.
pub(super) const PEAK_LOOK: Look = Look { colour: RGBColor(128, 128, 128), marker: Marker::Cross, dashed: true, width: LINE_WIDTH };
/// The entry point (`Reducer::auto`): what a reader calls, so the line the eye should find first
/// among the kernels and libraries: thick, in the palette's next colour, which no kernel takes.
pub(super) const ENTRY_LOOK: Look = Look { colour: RGBColor(188, 189, 34), marker: Marker::Square, dashed: false, width: 5 };

/// The `i`-th look of a list: colours cycle every 8, and the marker shifts by one each cycle,
/// so up to 64 series keep a distinct pair.
pub(super) fn nth_look(i: usize, dashed: bool) -> Look {
    let n = KERNEL_COLOURS.len();
    Look { colour: KERNEL_COLOURS[i % n], marker: KERNEL_MARKERS[(i + i / n) % n], dashed, width: LINE_WIDTH }
}

/// Kernels in book order (chapter, then their order in the file), so that a kernel keeps its
/// look in every chart of one GPU.
pub(super) fn kernels_in_order<'a>(rows: impl IntoIterator<Item = &'a Row>) -> Vec<&'a str> {
    let mut kernels: Vec<(u32, usize, &str)> = Vec::new();
    for (i, row) in rows.into_iter().enumerate().filter(|(_, r)| !r.is_yardstick()) {
        if !kernels.iter().any(|(_, _, k)| *k == row.kernel) {
            kernels.push((row.chapter, i, &row.kernel));
        }
    }
    kernels.sort();
    kernels.into_iter().map(|(_, _, k)| k).collect()
}

pub(super) const LEGEND_ROW: i32 = 26;
pub(super) const LEGEND_SAMPLE: i32 = 36;

/// Width of the legend column: the longest label at a generous average glyph width, so the
/// text never runs off the picture whatever font the reader's browser picks.
pub(super) fn legend_width(entries: &[(&str, Look)]) -> u32 {
    let longest = entries.iter().map(|(label, _)| label.chars().count()).max().unwrap_or(0);
    (LEGEND_SAMPLE as f64 + 28.0 + longest as f64 * LEGEND_SIZE / 1.24 * 0.58).ceil() as u32
}

/// Height of the legend column below the title: a chart with more series than fit beside a
/// plot of the usual height is drawn taller, so that no entry falls off the picture.
pub(super) fn legend_height(entries: usize) -> u32 {
    (24 + entries as i32 * LEGEND_ROW) as u32
}

/// The legend as its own column right of the plot: it can never cover a line.
pub(super) fn draw_legend(area: &DrawingArea<SVGBackend, Shift>, entries: &[(&str, Look)]) -> Drawn {
    let style = (FONT, LEGEND_SIZE).into_font().into_text_style(area).pos(Pos::new(HPos::Left, VPos::Center));
    let x0 = 8;
    for (i, (label, look)) in entries.iter().enumerate() {
        let y = 24 + i as i32 * LEGEND_ROW;
        let line = look.colour.stroke_width(look.width);
        if look.dashed {
            area.draw(&DashedPathElement::new(vec![(x0, y), (x0 + LEGEND_SAMPLE, y)], 8, 5, line))?;
        } else {
            area.draw(&PathElement::new(vec![(x0, y), (x0 + LEGEND_SAMPLE, y)], line))?;
        }
        draw_marker(area, (x0 + LEGEND_SAMPLE / 2, y), look.marker, look.colour)?;
        area.draw_text(label, &style, (x0 + LEGEND_SAMPLE + 10, y))?;
    }
    Ok(())
}

pub(super) const MARKER_SIZE: i32 = 4;

pub(super) fn draw_marker<CT: CoordTranslate>(area: &DrawingArea<SVGBackend, CT>, at: CT::From, marker: Marker, colour: RGBColor) -> Drawn {
    let r = MARKER_SIZE;
    let filled = colour.filled();
    let open = colour.stroke_width(2);
    let diamond = vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)];
    let square = [(-r, -r), (r, r)];
    match marker {
        Marker::Circle => area.draw(&Circle::new(at, r, filled)),
        Marker::OpenCircle => area.draw(&Circle::new(at, r, open)),
        Marker::Triangle => area.draw(&TriangleMarker::new(at, r + 1, filled)),
        Marker::OpenTriangle => {
            let outline = vec![(0, -r - 1), (r + 1, r), (-r - 1, r), (0, -r - 1)];
            area.draw(&(EmptyElement::at(at) + PathElement::new(outline, open)))
        }
        Marker::Square => area.draw(&(EmptyElement::at(at) + Rectangle::new(square, filled))),
        Marker::OpenSquare => area.draw(&(EmptyElement::at(at) + Rectangle::new(square, open))),
        Marker::Diamond => area.draw(&(EmptyElement::at(at) + Polygon::new(diamond, filled))),
        Marker::OpenDiamond => {
            let mut outline = diamond.clone();
            outline.push(diamond[0]);
            area.draw(&(EmptyElement::at(at) + PathElement::new(outline, open)))
        }
        Marker::Cross => area.draw(&Cross::new(at, r, open)),
        Marker::Plus => {
            let across = PathElement::new(vec![(-r - 1, 0), (r + 1, 0)], open);
            let down = PathElement::new(vec![(0, -r - 1), (0, r + 1)], open);
            area.draw(&(EmptyElement::at(at) + across + down))
        }
    }
}
