//! Tests of the charts' data and rendering, without a GPU.

use super::draw::*;
use super::lines::*;
use super::looks::*;
use super::speedup::*;
use super::*;
use crate::records::bench::{Cache, Status};
use plotters::prelude::*;

fn row(kernel: &str, chapter: u32, status: Status, n: usize, cache: Cache, median_us: f64) -> Row {
    let bytes = if kernel == "copy" { 8 * n } else { 4 * n };
    Row {
        kernel: kernel.into(), chapter, title: format!("{kernel} title"), status, dtype: Dtype::F32,
        n, block: 256, cache, median_us, min_us: median_us, max_us: median_us, bytes, working_set_bytes: bytes,
        repeats: 3, method: "test".into(),
    }
}

fn machine(peak: Option<f64>) -> Machine {
    Machine { gpu: "Test GPU".into(), peak_gbps: peak, ..Default::default() }
}

#[test]
fn copy_floor_is_the_read_half_of_the_copy_at_its_bandwidth() {
    // A copy of 2^20 values in 10 µs moves 8 MiB; reading 4 MiB at that rate takes 5 µs.
    let rows = vec![row("copy", 0, Status::Pace, 1 << 20, Cache::Rotated, 10.0), row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 50.0)];
    let chart = time_chart(&(machine(None), rows), Part::Harris);
    let floor = chart.series.iter().find(|s| s.label.starts_with("copy pace")).unwrap();
    assert_eq!(floor.points.len(), 1);
    assert!((floor.points[0].1 - 5.0).abs() < 1e-9, "{:?}", floor.points);
    assert!(!chart.series.iter().any(|s| s.label.starts_with("peak floor")), "no peak, no peak line");
}

#[test]
fn read_only_ceiling_is_drawn_at_its_own_time_and_bandwidth_in_both_parts() {
    let rows = vec![
        row("read_only", 0, Status::Ceiling, 1 << 20, Cache::Rotated, 2.0),
        row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 50.0),
        row("reduce9", 9, Status::Correct, 1 << 20, Cache::Rotated, 3.0),
    ];
    for part in [Part::Harris, Part::Modern] {
        let time = time_chart(&(machine(Some(4194.304)), rows.clone()), part);
        let ceiling = time.series.iter().find(|s| s.label.starts_with("read-only ceiling")).expect("a ceiling line");
        assert_eq!(ceiling.points, vec![((1 << 20) as f64, 2.0)]);
        assert_eq!(ceiling.look, READ_ONLY_LOOK);
        let bandwidth = bandwidth_chart(&(machine(Some(4194.304)), rows.clone()), part);
        let ceiling = bandwidth.series.iter().find(|s| s.label.starts_with("read-only ceiling")).expect("a ceiling line");
        // 4 MiB in 2 µs is 2097.152 GB/s: half of the 4194.304 GB/s peak.
        assert!((ceiling.points[0].1 - 50.0).abs() < 1e-9, "{:?}", ceiling.points);
        assert!(!bandwidth.series.iter().any(|s| s.label.starts_with("read_only:")), "the ceiling is not drawn as a kernel");
    }
}

#[test]
fn peak_floor_reads_n_values_at_the_peak() {
    let rows = vec![row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 50.0)];
    let chart = time_chart(&(machine(Some(4000.0)), rows), Part::Harris);
    let peak = chart.series.iter().find(|s| s.label.starts_with("peak floor")).unwrap();
    let expected_us = (4 << 20) as f64 / 4000e9 * 1e6;
    assert!((peak.points[0].1 - expected_us).abs() < 1e-9);
}

#[test]
fn series_follow_book_order_and_mark_historical_kernels_dashed() {
    let rows = vec![
        row("reduce5", 5, Status::Correct, 1024, Cache::Rotated, 3.0),
        row("reduce1", 1, Status::Correct, 2048, Cache::Rotated, 9.0),
        row("reduce1", 1, Status::Correct, 1024, Cache::Rotated, 5.0),
        row("reduce5_volatile", 5, Status::Historical, 1024, Cache::Rotated, 3.0),
        row("reduce3", 3, Status::Correct, 1024, Cache::Resident, 1.0), // not rotated: left out
    ];
    let chart = time_chart(&(machine(None), rows), Part::Harris);
    let labels: Vec<&str> = chart.series.iter().map(|s| s.label.split(':').next().unwrap()).collect();
    assert_eq!(labels, ["reduce1", "reduce5", "reduce5_volatile"]);
    assert_eq!(chart.series[0].points, vec![(1024.0, 5.0), (2048.0, 9.0)], "sorted by N");
    assert!(chart.series[2].look.dashed && !chart.series[1].look.dashed);
    let looks: Vec<Look> = chart.series.iter().map(|s| s.look).collect();
    for (i, a) in looks.iter().enumerate() {
        for b in &looks[i + 1..] {
            assert!(a.colour != b.colour && a.marker != b.marker, "{a:?} and {b:?} look alike");
        }
    }
}

#[test]
fn looks_stay_distinct_past_one_cycle_of_colours() {
    let looks: Vec<(RGBColor, Marker)> = (0..64).map(|i| nth_look(i, false)).map(|l| (l.colour, l.marker)).collect();
    for (i, a) in looks.iter().enumerate() {
        assert!(!looks[i + 1..].contains(a), "look {i} repeats");
    }
}

#[test]
fn speedups_are_ratios_of_times_skipping_gaps() {
    let times = [Some(40.0), Some(20.0), None, Some(5.0)];
    assert_eq!(step_speedups(&times), [None, Some(2.0), None, Some(4.0)]);
    assert_eq!(cumulative_speedups(&times), [Some(1.0), Some(2.0), None, Some(8.0)]);
}

#[test]
fn bandwidth_is_a_percentage_of_the_peak_when_known() {
    let rows = vec![row("reduce1", 1, Status::Correct, 1 << 20, Cache::Rotated, 2.0)];
    let with_peak = bandwidth_chart(&(machine(Some(4194.304)), rows.clone()), Part::Harris);
    let gbps = rows[0].gbps();
    assert!((with_peak.series[0].points[0].1 - 100.0 * gbps / 4194.304).abs() < 1e-9);
    let without = bandwidth_chart(&(machine(None), rows), Part::Harris);
    assert!((without.series[0].points[0].1 - gbps).abs() < 1e-9);
}

#[test]
fn a_zero_time_is_refused_not_drawn() {
    let rows = vec![row("reduce1", 1, Status::Correct, 1024, Cache::Rotated, 0.0)];
    let err = Figure::Lines(time_chart(&(machine(None), rows), Part::Harris)).render().unwrap_err();
    assert!(err.contains("reduce1") && err.contains("1024"), "{err}");
}

#[test]
fn tick_labels_are_short() {
    assert_eq!(power_of_two(1048576.0), "2^20");
    assert_eq!(power_of_two(1000.0), "1000");
    assert_eq!(number(0.125), "0.125");
    assert_eq!(number(2.5), "2.5");
    assert_eq!(number(250.0), "250");
    assert_eq!(number(0.30000000000000004), "0.3");
    assert_eq!(bytes_label(8.0), "8 B");
    assert_eq!(bytes_label(65536.0), "64 KiB");
    assert_eq!(bytes_label((1u64 << 30) as f64), "1 GiB");
    assert_eq!(bytes_label(1000.0), "1000");
}

/// The entry point's graph-amortized rows and its host-visible one, a library's two, and a
/// kernel, at two sizes: what the modern and host-visible charts are drawn from.
fn entry_and_peer_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    for (n, us) in [(1usize << 20, 4.0), (1 << 24, 18.0)] {
        rows.extend([
            Row { title: "entry point: reduce12, block 256".into(), ..row("entry_point", 0, Status::Correct, n, Cache::Rotated, us) },
            row("entry_point_host", 0, Status::Correct, n, Cache::Rotated, us + 10.0),
            row("cub_sum", 0, Status::Peer, n, Cache::Rotated, us * 1.1),
            row("cub_sum_host", 0, Status::Peer, n, Cache::Rotated, us + 17.0),
            row("reduce9", 9, Status::Correct, n, Cache::Rotated, us * 1.2),
            row("reduce1", 1, Status::Correct, n, Cache::Rotated, us * 9.0),
        ]);
    }
    rows
}

#[test]
fn the_entry_point_is_its_own_thick_line_in_the_modern_charts_beside_the_peers() {
    let book = (machine(Some(4000.0)), entry_and_peer_rows());
    for chart in [time_chart(&book, Part::Modern), bandwidth_chart(&book, Part::Modern)] {
        let entry: Vec<&Series> = chart.series.iter().filter(|s| s.label.starts_with(ENTRY_LABEL)).collect();
        assert_eq!(entry.len(), 1, "{}: one entry-point line, got {:?}", chart.title, chart.series.iter().map(|s| &s.label).collect::<Vec<_>>());
        assert_eq!(entry[0].look, ENTRY_LOOK);
        let others = chart.series.iter().filter(|s| !s.label.starts_with(ENTRY_LABEL)).map(|s| s.look.width).max().unwrap();
        assert!(entry[0].look.width > others, "the entry point's line is the thick one");
        assert_eq!(entry[0].points.len(), 2, "its graph-amortized rows only, not its host-visible ones");
        let labels: Vec<&str> = chart.series.iter().map(|s| s.label.split(':').next().unwrap()).collect();
        assert!(labels.contains(&"cub_sum") && labels.contains(&"reduce9"), "{labels:?}");
        assert!(!labels.iter().any(|l| l.starts_with("entry_point") || l.ends_with("_host")), "no entry point as a kernel, no host-visible row: {labels:?}");
    }
    // In the time chart its points are its medians.
    let time = time_chart(&book, Part::Modern);
    let entry = time.series.iter().find(|s| s.label.starts_with(ENTRY_LABEL)).unwrap();
    assert_eq!(entry.points, vec![((1 << 20) as f64, 4.0), ((1 << 24) as f64, 18.0)]);
    // Harris's chart is his seven kernels: no entry point there.
    assert!(!time_chart(&book, Part::Harris).series.iter().any(|s| s.label.starts_with(ENTRY_LABEL)));
}

#[test]
fn the_host_visible_chart_draws_the_entry_point_and_each_librarys_one_call() {
    let book = (machine(Some(4000.0)), entry_and_peer_rows());
    let chart = host_chart(&book, Dtype::F32);
    let labels: Vec<&str> = chart.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert!(labels[0].starts_with(ENTRY_LABEL) && labels[0].contains("one call"), "{labels:?}");
    assert!(labels[1].starts_with(ENTRY_LABEL) && labels[1].contains("GPU time"), "{labels:?}");
    assert!(labels[2].starts_with("cub_sum_host: "), "{labels:?}");
    assert_eq!(chart.series[0].look, ENTRY_LOOK);
    assert_eq!(chart.series[0].points, vec![((1 << 20) as f64, 14.0), ((1 << 24) as f64, 28.0)]);
    assert!(chart.series[1].look.dashed && chart.series[1].look.width == LINE_WIDTH, "the GPU time is the thin dashed reference");
    assert_eq!(chart.y_axis, Axis::Log);
    // Drawn as the book's chart: the legend names the entry point, its thick line is drawn last
    // (over the others), and a type with no host-visible rows says so instead of failing.
    let svg = benchmark_chart("host_visible_f32.svg", &[], &book).unwrap();
    assert!(svg.contains(ENTRY_LABEL) && svg.contains("cub_sum_host: "), "{svg}");
    // The plot comes before the legend, whose first sample starts at its column's left edge.
    let plot = svg.split(&format!("points=\"{},", PLOT_WIDTH + 8)).next().unwrap();
    let last_line = plot.rsplit("<polyline").next().unwrap();
    assert!(last_line.contains(&format!("stroke-width=\"{}\"", ENTRY_LOOK.width)), "the last line drawn is not the entry point's: {last_line}");
    assert!(host_chart(&book, Dtype::I32).series.is_empty());
    assert!(benchmark_chart("host_visible_i32.svg", &[], &book).unwrap().contains("Nothing to draw: no host-visible i32 measurements"));
}

#[test]
fn a_long_legend_makes_the_chart_taller_not_cut_off() {
    let rows: Vec<Row> = (0..40).map(|i| row(&format!("kernel{i}"), 8, Status::Correct, 1 << 20, Cache::Rotated, 1.0 + i as f64)).collect();
    let svg = benchmark_chart("time_modern.svg", &[], &(machine(None), rows)).unwrap();
    let number = |attr: &str, text: &str| -> f64 { text.split(&format!("{attr}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap() };
    let height = number("height", &svg);
    let last_label = svg.rsplit("<text").next().unwrap();
    assert!(last_label.contains("kernel39"), "{last_label}");
    assert!(number("y", last_label) + LEGEND_SIZE <= height, "the last legend entry at y = {} is outside a picture {height} high", number("y", last_label));
}

#[test]
fn the_entry_chart_divides_the_entry_points_time_by_the_fastest_library_of_its_own_run() {
    let same_run = |r: Row| Row { method: format!("graph of 9, CUDA events; {}", crate::book::chapters::entry::SAME_RUN), ..r };
    let i32_row = |r: Row| Row { dtype: Dtype::I32, ..r };
    let mut rows = Vec::new();
    for (n, us) in [(1usize << 20, 4.0), (1 << 24, 18.0)] {
        rows.extend([
            row("entry_point", 0, Status::Correct, n, Cache::Rotated, us),
            same_run(row("cub_sum", 0, Status::Peer, n, Cache::Rotated, us * 1.25)),
            same_run(row("torch_sum", 0, Status::Peer, n, Cache::Rotated, us * 2.0)),
            // Faster, but from another run: not compared.
            row("tilelang_sum", 0, Status::Peer, n, Cache::Rotated, us * 0.5),
            i32_row(row("entry_point", 0, Status::Correct, n, Cache::Rotated, us)),
            i32_row(same_run(row("cub_sum", 0, Status::Peer, n, Cache::Rotated, us * 0.8))),
            // Graph-amortized only: a host-visible row is another measurement.
            same_run(row("cub_sum_host", 0, Status::Peer, n, Cache::Rotated, us * 0.1)),
        ]);
    }
    // A size where no library ran beside it has no point.
    rows.push(row("entry_point", 0, Status::Correct, 1 << 26, Cache::Rotated, 60.0));
    let chart = entry_ratio_chart(&(machine(None), rows));
    let labels: Vec<&str> = chart.series.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels.len(), 3, "{labels:?}");
    assert!(labels[0].starts_with("f32") && labels[1].starts_with("i32") && labels[2].starts_with("1: "), "{labels:?}");
    let near = |got: &[(f64, f64)], want: &[(f64, f64)]| got.len() == want.len() && got.iter().zip(want).all(|(g, w)| g.0 == w.0 && (g.1 - w.1).abs() < 1e-12);
    assert!(near(&chart.series[0].points, &[((1 << 20) as f64, 0.8), ((1 << 24) as f64, 0.8)]), "{:?}", chart.series[0].points);
    assert!(near(&chart.series[1].points, &[((1 << 20) as f64, 1.25), ((1 << 24) as f64, 1.25)]), "{:?}", chart.series[1].points);
    assert_eq!(chart.series[2].points, vec![((1 << 20) as f64, 1.0), ((1 << 24) as f64, 1.0)]);
    assert!(benchmark_chart("entry_vs_peers.svg", &[], &(machine(None), Vec::new())).unwrap().contains("Nothing to draw"));
}
