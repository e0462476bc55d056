//! The charts and diagrams: drawn from the committed H200 measurements and from a two-GPU
//! fixture, every SVG is well-formed XML that names its GPU and every series it should show; the
//! pictures committed under `plots/` are exactly what the committed data draws; bad data is an
//! error, never a panic. None of this needs a GPU.

mod common;

use libtest_mimic::{Failed, Trial};
use reduction::book::render::{book_gpu, load_all, render_all};
use reduction::records::bench::{read_csv, write_csv, Cache, Machine, Row, Status, ENTRY_POINT_HOST_KERNEL, ENTRY_POINT_KERNEL};
use reduction::Dtype;
use reduction::Error;
use std::path::{Path, PathBuf};

const CHARTS: [&str; 9] = [
    "time.svg", "bandwidth.svg", "time_modern.svg", "bandwidth_modern.svg", "speedup.svg", "gpus.svg", "host_visible_f32.svg", "host_visible_i32.svg", "entry_vs_peers.svg",
];
/// The legend's name for the entry point (`Reducer::auto`), on every chart that draws it.
const ENTRY_LABEL: &str = "entry point (Reducer::auto)";
/// Each diagram, and the kernel whose addressing it draws.
const DIAGRAMS: [(&str, &str); 10] = [
    ("interleaved_divergent.svg", "reduce1"), ("interleaved_strided.svg", "reduce2"), ("sequential.svg", "reduce3"),
    ("interleaved_divergent_64.svg", "reduce1"), ("interleaved_strided_64.svg", "reduce2"), ("sequential_64.svg", "reduce3"),
    ("decomposition.svg", "reduce3"), ("grid_stride.svg", "reduce7"), ("shuffle_tree.svg", "reduce8"),
    ("last_block_ticket.svg", "reduce10_last_block"),
];

/// Copy the files of `from` into `to`, folders included.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)?.flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

fn fixture_dir() -> PathBuf {
    root().join("tests/fixtures/plots")
}

/// A scratch project root with `plots/data/`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Result<Scratch, Failed> {
        let dir = std::env::temp_dir().join(format!("reduction-plots-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("plots/data"))?;
        Ok(Scratch(dir))
    }

    fn data_dir(&self) -> PathBuf {
        self.0.join("plots/data")
    }

    /// Copy `from` (the CSVs, book-gpu.txt, and the subfolders of the other experiments: row
    /// sums, all-reduce, accuracy, bank conflicts, ...) into this root's data dir.
    fn with_data_of(self, from: &Path) -> Result<Scratch, Failed> {
        copy_tree(from, &self.data_dir())?;
        Ok(self)
    }

    fn render(&self) -> Result<Vec<PathBuf>, Failed> {
        render_all(&self.0).map_err(|e| format!("render_all failed: {e}").into())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The text of every `<text>` element, after checking the file parses as an `<svg>` document.
fn svg_texts(path: &Path) -> Result<Vec<String>, Failed> {
    let xml = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let doc = roxmltree::Document::parse(&xml).map_err(|e| format!("{} is not well-formed XML: {e}", path.display()))?;
    if doc.root_element().tag_name().name() != "svg" {
        return Err(format!("{}: the root element is not <svg>", path.display()).into());
    }
    Ok(doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.descendants().filter(|d| d.is_text()).filter_map(|d| d.text()).collect::<String>().trim().to_string())
        .collect())
}

/// Every label in `wanted` must be the start of some text in `path`.
fn expect_labels(path: &Path, wanted: &[String]) -> Result<(), Failed> {
    let texts = svg_texts(path)?;
    let missing: Vec<&String> = wanted.iter().filter(|w| !texts.iter().any(|t| t.starts_with(w.as_str()))).collect();
    if missing.is_empty() { Ok(()) } else { Err(format!("{} does not show {missing:?}", path.display()).into()) }
}

fn contains_text(path: &Path, wanted: &str) -> Result<(), Failed> {
    if svg_texts(path)?.iter().any(|t| t.contains(wanted)) {
        Ok(())
    } else {
        Err(format!("{} does not mention {wanted:?}", path.display()).into())
    }
}

fn distinct<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Render a copy of `data_dir` and check each picture against the rows it was drawn from.
fn check_render(name: &str, data_dir: &Path, book_override: Option<&str>) -> Result<(), Failed> {
    check_scratch(&Scratch::new(name)?.with_data_of(data_dir)?, book_override)
}

/// The fixture's alpha GPU with a read-only ceiling measured beside its copy (at 0.45 of the
/// copy's time: it moves half the bytes, a little faster), as `reduction bench` now writes it.
fn check_render_with_a_ceiling() -> Result<(), Failed> {
    let scratch = Scratch::new("alpha-ceiling")?.with_data_of(&fixture_dir())?;
    let path = scratch.data_dir().join("fixture-gpu-alpha.csv");
    let (machine, mut rows) = read_csv(&path)?;
    let ceiling: Vec<Row> = rows.iter().filter(|r| r.is_copy()).map(|copy| Row {
        kernel: reduction::records::bench::READ_ONLY_KERNEL.into(),
        title: "read-only sum (every byte read once)".into(),
        status: Status::Ceiling,
        median_us: 0.45 * copy.median_us,
        bytes: copy.bytes / 2,
        ..copy.clone()
    }).collect();
    if ceiling.is_empty() {
        return Err("the fixture has no copy rows to put a ceiling beside".into());
    }
    rows.extend(ceiling);
    write_csv(&path, &machine, &rows)?;
    std::fs::write(scratch.data_dir().join("book-gpu.txt"), "fixture-gpu-alpha\n")?;
    check_scratch(&scratch, Some("fixture-gpu-alpha"))?;
    // The tables then compare with it instead of saying it is not measured.
    let best = std::fs::read_to_string(scratch.0.join("book/generated/best.md"))?;
    if best.contains("not yet measured") || !best.contains("% of read-only") {
        return Err(format!("best.md does not use the measured ceiling:\n{best}").into());
    }
    Ok(())
}

fn check_scratch(scratch: &Scratch, book_override: Option<&str>) -> Result<(), Failed> {
    if let Some(slug) = book_override {
        std::fs::write(scratch.data_dir().join("book-gpu.txt"), format!("{slug}\n"))?;
    }
    let written = scratch.render()?;
    let data = load_all(&scratch.data_dir())?;
    let (machine, rows) = book_gpu(&scratch.data_dir(), &data).ok_or("no book GPU")?;
    if book_override.is_some_and(|slug| reduction::records::slug(&machine.gpu) != slug) {
        return Err(format!("the book shows {}, not {book_override:?}", machine.gpu).into());
    }
    let plots = scratch.0.join("plots");
    for file in CHARTS {
        let path = plots.join(file);
        if !written.contains(&path) {
            return Err(format!("{file} was not drawn (drew {written:?})").into());
        }
        contains_text(&path, &machine.gpu)?;
    }
    check_sweeps(&plots, machine, rows)?;
    check_speedup(&plots.join("speedup.svg"), rows)?;
    check_host_visible(&plots, rows)?;
    let best_per_gpu: Vec<String> = data.iter().map(|(m, _)| format!("{}: ", m.gpu)).collect();
    expect_labels(&plots.join("gpus.svg"), &best_per_gpu)?;
    for (file, kernel) in DIAGRAMS {
        let path = plots.join("diagrams").join(file);
        if !written.contains(&path) {
            return Err(format!("{file} was not drawn").into());
        }
        contains_text(&path, &format!("({kernel})"))?;
    }
    Ok(())
}

/// time.svg and bandwidth.svg (Harris's kernels, chapters 1–7) and their `_modern` versions
/// (chapter 7 on, and the library peer): one labelled series per kernel measured on f32 with
/// rotated inputs (graph-amortized: not the host-visible rows), the read-only ceiling and the copy exactly where they were measured, and the
/// peak floor exactly when the peak is known. The entry point's line is in the modern charts
/// exactly where it was measured, and never in Harris's.
fn check_sweeps(plots: &Path, machine: &Machine, rows: &[Row]) -> Result<(), Failed> {
    let harris = |r: &Row| (1..=7).contains(&r.chapter) && r.status != Status::Peer;
    let modern = |r: &Row| r.chapter >= 7 || r.status == Status::Peer;
    for (suffix, shows) in [("", &harris as &dyn Fn(&Row) -> bool), ("_modern", &modern)] {
        // Host-visible rows (one call timed by the host's clock) have their own table, not these charts.
        let swept = rows.iter().filter(|r| r.dtype == Dtype::F32 && r.cache == Cache::Rotated && !r.is_host_visible());
        let kernels = distinct(swept.clone().filter(|r| !r.is_yardstick() && shows(r)).map(|r| r.kernel.as_str()));
        if kernels.is_empty() {
            return Err(format!("the data has no f32 rotated kernel rows for time{suffix}.svg; this check would prove nothing").into());
        }
        let (time, bandwidth) = (plots.join(format!("time{suffix}.svg")), plots.join(format!("bandwidth{suffix}.svg")));
        let texts = [svg_texts(&time)?, svg_texts(&bandwidth)?];
        // A yardstick's line is drawn exactly when it was measured: never invented, never lost.
        for (measured, time_label, bandwidth_label) in [
            (swept.clone().any(|r| r.is_copy()), "copy pace", "copy (a pace): "),
            (swept.clone().any(|r| r.is_read_only()), "read-only ceiling", "read-only ceiling: "),
        ] {
            for (texts, label) in texts.iter().zip([time_label, bandwidth_label]) {
                if texts.iter().any(|t| t.starts_with(label)) != measured {
                    return Err(format!("{label}: drawn = {}, measured = {measured} (time{suffix}.svg / bandwidth{suffix}.svg)", !measured).into());
                }
            }
        }
        let labels: Vec<String> = kernels.iter().map(|k| format!("{k}: ")).collect();
        expect_labels(&time, &labels)?;
        expect_labels(&bandwidth, &labels)?;
        let entry_measured = suffix == "_modern" && swept.clone().any(|r| r.kernel == ENTRY_POINT_KERNEL);
        for (texts, file) in texts.iter().zip([&time, &bandwidth]) {
            let drawn = texts.iter().any(|t| t.starts_with(ENTRY_LABEL));
            if drawn != entry_measured {
                return Err(format!("{}: the entry point's line drawn = {drawn}, measured there = {entry_measured}", file.display()).into());
            }
        }
        let peak_drawn = texts[0].iter().any(|t| t.starts_with("peak floor"));
        if peak_drawn != machine.peak_gbps.is_some() {
            return Err(format!("time{suffix}.svg: peak floor drawn = {peak_drawn}, but the peak is {:?}", machine.peak_gbps).into());
        }
    }
    Ok(())
}

/// host_visible_<type>.svg: for each element type, the entry point's one call and every
/// library's (the `_host` rows, rotated) by name; where the type has no such row, the chart says
/// there is nothing to draw.
fn check_host_visible(plots: &Path, rows: &[Row]) -> Result<(), Failed> {
    for dtype in [Dtype::F32, Dtype::I32] {
        let path = plots.join(format!("host_visible_{dtype}.svg"));
        let host: Vec<&Row> = rows.iter().filter(|r| r.dtype == dtype && r.cache == Cache::Rotated && r.is_host_visible()).collect();
        if host.is_empty() {
            contains_text(&path, "Nothing to draw")?;
            continue;
        }
        let mut labels: Vec<String> = distinct(host.iter().filter(|r| !r.is_entry_point()).map(|r| r.kernel.as_str())).into_iter().map(|k| format!("{k}: ")).collect();
        if host.iter().any(|r| r.kernel == ENTRY_POINT_HOST_KERNEL) {
            labels.push(format!("{ENTRY_LABEL}: one call"));
        }
        expect_labels(&path, &labels)?;
        // No graph-amortized library row: those are the time chart's.
        let texts = svg_texts(&path)?;
        if let Some(r) = rows.iter().find(|r| r.dtype == dtype && r.status == Status::Peer && !r.is_host_visible() && texts.iter().any(|t| t.starts_with(&format!("{}: ", r.kernel)))) {
            return Err(format!("{} draws {}, a graph-amortized row", path.display(), r.kernel).into());
        }
    }
    Ok(())
}

/// speedup.svg: every correct kernel measured on 2^22 ints names its group, each cache mode
/// measured there has its legend entry, and no historical kernel (the racy reduce5_volatile)
/// is among them.
fn check_speedup(path: &Path, rows: &[Row]) -> Result<(), Failed> {
    let at_harris_size = |r: &&Row| r.dtype == Dtype::I32 && r.n == 1 << 22;
    // Harris's seven kernels, and nothing else: no variants, no later kernels.
    let is_harris = |r: &&Row| reduction::book::chapters::harris::HARRIS_G80.iter().any(|(name, ..)| *name == r.kernel);
    let harris: Vec<&Row> = rows.iter().filter(at_harris_size).filter(|r| r.status == Status::Correct).filter(is_harris).collect();
    let mut labels = distinct(harris.iter().map(|r| r.kernel.as_str()));
    labels.extend(distinct(harris.iter().map(|r| r.cache.name())));
    expect_labels(path, &labels)?;
    let texts = svg_texts(path)?;
    if let Some(other) = rows.iter().filter(at_harris_size).filter(|r| !is_harris(r)).find(|r| texts.contains(&r.kernel)) {
        return Err(format!("speedup.svg shows {}, which is not one of Harris's seven", other.kernel).into());
    }
    let historical = rows.iter().filter(at_harris_size).filter(|r| r.status == Status::Historical);
    match historical.map(|r| r.kernel.as_str()).find(|k| texts.iter().any(|t| t == k)) {
        Some(kernel) => Err(format!("speedup.svg shows {kernel}, which is historical; Harris's table uses the correct form").into()),
        None => Ok(()),
    }
}

/// Every picture under plots/ equals a fresh render of plots/data, and none is left over.
fn committed_pictures_are_current() -> Result<(), Failed> {
    let committed = root().join("plots");
    let scratch = Scratch::new("committed")?.with_data_of(&committed.join("data"))?;
    let written = scratch.render()?;
    let fresh = scratch.0.join("plots");
    let mut stale = Vec::new();
    for path in written.iter().filter(|p| p.extension().is_some_and(|e| e == "svg")) {
        let relative = path.strip_prefix(&fresh).map_err(|_| format!("{} drawn outside plots/", path.display()))?;
        match std::fs::read_to_string(committed.join(relative)) {
            Ok(old) if same_picture(&old, &std::fs::read_to_string(path)?) => {}
            Ok(_) => stale.push(format!("plots/{} differs", relative.display())),
            Err(_) => stale.push(format!("plots/{} is missing", relative.display())),
        }
    }
    for dir in [committed.clone(), committed.join("diagrams")] {
        for entry in std::fs::read_dir(&dir)?.flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(&committed).unwrap_or(&path).to_path_buf();
            if path.extension().is_some_and(|e| e == "svg") && !written.contains(&fresh.join(&relative)) {
                stale.push(format!("plots/{} is not drawn from the data any more", relative.display()));
            }
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!("{}; run `cargo run -- bench --plot-only` and commit plots/", stale.join("; ")).into())
    }
}

/// The same bytes, or — where another platform's `ln` and `powf` round a pixel the other way, or
/// git turned line ends into CRLF — the same elements and texts, with attribute numbers (pixel
/// positions) within one of each other. Every label is text and compared exactly, so a changed
/// measurement still shows as a difference.
fn same_picture(committed: &str, fresh: &str) -> bool {
    if committed == fresh {
        return true;
    }
    let (Ok(a), Ok(b)) = (roxmltree::Document::parse(committed), roxmltree::Document::parse(fresh)) else {
        return false;
    };
    let (a, b): (Vec<_>, Vec<_>) = (a.descendants().collect(), b.descendants().collect());
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| {
            x.tag_name() == y.tag_name()
                && x.text().map(str::trim) == y.text().map(str::trim)
                && x.attributes().len() == y.attributes().len()
                && x.attributes().zip(y.attributes()).all(|(p, q)| p.name() == q.name() && within_a_pixel(p.value(), q.value()))
        })
}

fn within_a_pixel(a: &str, b: &str) -> bool {
    let (a, b) = (tokens(a), tokens(b));
    a.len() == b.len()
        && a.iter().zip(&b).all(|(x, y)| match (x.parse::<f64>(), y.parse::<f64>()) {
            (Ok(x), Ok(y)) => (x - y).abs() <= 1.0,
            _ => x == y,
        })
}

/// Runs of digits (with sign and point) and runs of everything else.
fn tokens(text: &str) -> Vec<&str> {
    let numeric = |c: char| c.is_ascii_digit() || c == '.' || c == '-';
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices().skip(1) {
        let prev = text[..i].chars().next_back().unwrap_or(c);
        if numeric(c) != numeric(prev) {
            out.push(&text[start..i]);
            start = i;
        }
    }
    out.push(&text[start..]);
    out
}

/// Every file under book/generated/ equals a fresh render of plots/data: no table or sentence
/// the chapters include says anything the committed data does not.
fn committed_text_is_current() -> Result<(), Failed> {
    let scratch = Scratch::new("committed-text")?.with_data_of(&root().join("plots/data"))?;
    let written = scratch.render()?;
    let fresh = scratch.0.join("book/generated");
    let mut stale = Vec::new();
    for path in written.iter().filter(|p| p.starts_with(&fresh)) {
        let relative = path.strip_prefix(&fresh).map_err(|_| format!("{} outside book/generated", path.display()))?;
        let committed = root().join("book/generated").join(relative);
        match std::fs::read_to_string(&committed) {
            // Line ends aside (git may turn them into CRLF), the text must be the same.
            Ok(old) if old.replace("\r\n", "\n") == std::fs::read_to_string(path)? => {}
            Ok(_) => stale.push(format!("book/generated/{} differs", relative.display())),
            Err(_) => stale.push(format!("book/generated/{} is missing", relative.display())),
        }
    }
    if stale.is_empty() {
        Ok(())
    } else {
        Err(format!("{}; run `cargo run -- bench --plot-only` and commit book/generated/", stale.join("; ")).into())
    }
}

fn same_bytes_twice() -> Result<(), Failed> {
    let first = Scratch::new("twice-a")?.with_data_of(&fixture_dir())?;
    let second = Scratch::new("twice-b")?.with_data_of(&fixture_dir())?;
    let (a, b) = (first.render()?, second.render()?);
    for (x, y) in a.iter().zip(&b) {
        if std::fs::read(x)? != std::fs::read(y)? {
            return Err(format!("{} is not the same from the same data", x.display()).into());
        }
    }
    Ok(())
}

/// `render_all` on `scratch` must fail with an `Error::Io` whose path contains `path_part`.
fn expect_io_error(scratch: &Scratch, path_part: &str) -> Result<(), Failed> {
    match render_all(&scratch.0) {
        Err(Error::Io { path, message }) if path.contains(path_part) => {
            eprintln!("refused as expected: {path}: {message}");
            Ok(())
        }
        Err(other) => Err(format!("expected an I/O error naming {path_part}, got: {other}").into()),
        Ok(written) => Err(format!("expected an error, but drew {written:?}").into()),
    }
}

fn fixture_text(file: &str) -> Result<String, Failed> {
    Ok(std::fs::read_to_string(fixture_dir().join(file))?)
}

fn main() {
    let mut trials = vec![
        Trial::test("render::committed_h200_data", || check_render("h200", &root().join("plots/data"), None)),
        Trial::test("render::fixture_two_gpus_book_alpha_with_a_missing_size", || {
            check_render("alpha", &fixture_dir(), Some("fixture-gpu-alpha"))
        }),
        Trial::test("render::fixture_with_a_read_only_ceiling", check_render_with_a_ceiling),
        Trial::test("render::fixture_two_gpus_book_beta_with_unknown_peak", || {
            check_render("beta", &fixture_dir(), Some("fixture-gpu-beta"))
        }),
        Trial::test("render::committed_pictures_equal_a_fresh_render", committed_pictures_are_current),
        Trial::test("render::committed_generated_text_equals_a_fresh_render", committed_text_is_current),
        Trial::test("render::same_data_same_bytes", same_bytes_twice),
        Trial::test("render::a_moved_point_or_label_is_a_different_picture", || {
            let svg = "<svg>\n<text x=\"10\" y=\"20\">\nreduce7: 1.56×\n</text>\n<circle cx=\"100\" cy=\"200\"/>\n</svg>\n";
            let nudged = svg.replace("cx=\"100\"", "cx=\"101\"").replace('\n', "\r\n");
            let moved = svg.replace("cy=\"200\"", "cy=\"203\"");
            let relabelled = svg.replace("1.56", "1.57");
            let checks = [(&nudged, true), (&moved, false), (&relabelled, false)];
            match checks.iter().find(|(other, same)| same_picture(svg, other) != *same) {
                None => Ok(()),
                Some((other, same)) => Err(format!("same_picture({svg:?}, {other:?}) should be {same}").into()),
            }
        }),
    ];
    trials.push(Trial::test("errors::malformed_csv", || {
        let scratch = Scratch::new("malformed")?;
        let broken = fixture_text("fixture-gpu-alpha.csv")?.replacen(",f32,1048576,", ",f32,many,", 1);
        std::fs::write(scratch.data_dir().join("broken.csv"), broken)?;
        expect_io_error(&scratch, "broken.csv")
    }));
    trials.push(Trial::test("errors::empty_data_dir", || expect_io_error(&Scratch::new("empty")?, "plots/data")));
    trials.push(Trial::test("errors::zero_time_cannot_be_drawn", || {
        let scratch = Scratch::new("zero")?;
        let (machine, mut rows) = read_csv(&fixture_dir().join("fixture-gpu-alpha.csv"))?;
        let row = rows.iter_mut().find(|r| r.kernel == "reduce1" && r.dtype == Dtype::F32).ok_or("no reduce1 f32 row")?;
        row.median_us = 0.0;
        write_csv(&scratch.data_dir().join("zero.csv"), &machine, &rows)?;
        expect_io_error(&scratch, "time.svg")
    }));
    common::run(trials)
}
