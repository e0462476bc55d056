//! Tests of the generated tables and sentences, without a GPU.

use super::benchmark::*;
use super::classic::*;
use super::common::*;
use super::harris::*;
use super::introduction::*;
use super::modern::*;
use super::rows::*;
use super::sanitizers::*;
use crate::element::Dtype;
use crate::records::bench::{Cache, Machine, Row, Status, READ_ONLY_KERNEL};
use crate::records::bench::COPY_KERNEL;
use super::entry::*;
use super::entry_scratch::*;
use crate::records::bench::ENTRY_POINT_KERNEL;

pub(crate) fn row(kernel: &str, n: usize, cache: Cache, us: f64) -> Row {
    Row {
        kernel: kernel.into(), chapter: 0, title: String::new(), status: Status::Correct, dtype: Dtype::I32, n, block: 256,
        cache, median_us: us, min_us: us, max_us: us, bytes: 4 * n, working_set_bytes: 4 * n, repeats: 15, method: String::new(),
    }
}

/// The H200's header as the benchmark wrote it.
fn h200() -> Machine {
    Machine {
        gpu: "NVIDIA H200".into(), compute_capability: "9.0".into(), sm_count: 132, l2_bytes: 60 << 20, peak_gbps: Some(4814.3),
        memory_clock_mhz: 3201, sm_clock_mhz: 1980, ..Default::default()
    }
}

fn named(kernel: &str, dtype: Dtype, n: usize, cache: Cache, us: f64) -> Row {
    let status = if kernel == READ_ONLY_KERNEL { Status::Ceiling } else { Status::Correct };
    // reduce7 -> chapter 7; the yardsticks have none.
    let chapter = kernel.trim_start_matches("reduce").parse().unwrap_or(0);
    Row { dtype, status, chapter, ..row(kernel, n, cache, us) }
}

#[test]
fn harris_published_figures_are_transcribed_consistently() {
    // Each published cumulative speed-up is the product of the published (rounded) steps,
    // rounded; and his split is the product of the algorithmic and the code steps.
    let step = |k: usize| HARRIS_G80[k].3.parse::<f64>().unwrap();
    let mut product = 1.0;
    for (k, (.., cumulative)) in HARRIS_G80.iter().enumerate().skip(1) {
        product *= step(k);
        assert_eq!(format!("{product:.2}"), *cumulative, "cumulative speed-up of kernel {}", k + 1);
    }
    assert_eq!(format!("{:.2}", step(1) * step(2) * step(3) * step(6)), HARRIS_SPLIT.0);
    assert_eq!(format!("{:.2}", step(4) * step(5)), HARRIS_SPLIT.1);
    // His kernel 7: 62.671 GB/s of 86.4 GB/s.
    assert_eq!(format!("{:.1}", 100.0 * HARRIS_G80[6].2 / G80_PEAK_GBPS), "72.5");
    let text = speedup_split(&[]);
    assert!(text.contains("| G80, 2^22 ints (Harris, as published) | 11.84× | 2.54× | 30.04× |"), "{text}");
    let table = harris_table(&h200(), &[], 1 << 22, Cache::Rotated);
    assert!(table.contains("| 0.965 | 17.377 | 20.1 % | 1.78× | 8.34× |"), "{table}");
    assert!(table.contains("| 0.536 | 31.289 | 36.2 % | 1.8× | 15.01× |"), "{table}");
}

#[test]
fn the_add_to_fetch_ratio_comes_from_the_header() {
    // 132 × 128 × 1.98 GHz = 33.45e12 adds/s; 4814.3 GB/s / 4 B = 1.2036e12 values/s: 27.8.
    let text = add_to_fetch_ratio(&h200());
    assert!(text.contains("33.5 trillion") && text.contains("1.20 trillion") && text.contains("**28 times**"), "{text}");
    assert!(add_to_fetch_ratio(&Machine { sm_clock_mhz: 0, ..h200() }).contains("Not yet measured"));
    assert!(add_to_fetch_ratio(&Machine { compute_capability: "3.5".into(), ..h200() }).contains("not in this book's table"));
    assert_eq!(fp32_lanes_per_sm("8.0"), Some(64));
    assert_eq!(fp32_lanes_per_sm("8.6"), Some(128));
}

#[test]
fn the_machine_line_names_the_bus_and_clock_of_the_peak() {
    let line = machine_line(&h200(), &[]);
    assert!(line.contains("a 6016-bit bus at 3201 MHz") && line.contains("2 × 3201 MHz × 6016 bit / 8 = 4814 GB/s"), "{line}");
    assert!(line.contains("not yet measured"), "{line}");
    let measured = [named(READ_ONLY_KERNEL, Dtype::F32, 1 << 20, Cache::Rotated, 1.0)];
    assert!(!machine_line(&h200(), &measured).contains("not yet measured"));
}

#[test]
fn kernels_are_set_against_the_read_only_ceiling_of_the_same_size_type_and_cache() {
    let n = 1 << 30;
    let rows = vec![
        named("reduce7", Dtype::F32, n, Cache::Rotated, 1000.0),
        named("reduce9", Dtype::F32, n, Cache::Rotated, 800.0),
        named(READ_ONLY_KERNEL, Dtype::F32, n, Cache::Rotated, 760.0),
        named(READ_ONLY_KERNEL, Dtype::I32, n, Cache::Rotated, 1.0), // another type: not the f32 ceiling
        named(COPY_KERNEL, Dtype::F32, n, Cache::Rotated, 2000.0),
    ];
    assert_eq!(pct_of_ceiling(&rows, &rows[1]), "95.0 %");
    assert_eq!(pct_of_ceiling(&rows, &named("reduce9", Dtype::F32, 1 << 20, Cache::Rotated, 1.0)), "–");
    let best = best_table(&h200(), &rows);
    assert!(best.contains("| 2^30 | reduce9 | 800.00 |") && best.contains("| 95.0 % |"), "{best}");
    assert!(!best.contains("not yet measured"), "{best}");
    let ceiling = ceiling_table(&h200(), &rows);
    assert!(ceiling.contains("| `reduce7` | – | – | – | 76.0% |"), "{ceiling}");
    let pace = copy_pace(&h200(), &rows);
    assert!(pace.contains("reaches 95.0 % of it"), "{pace}");
    assert!(kernel7_large(&h200(), &rows).contains("76.0 % of the read-only ceiling"));
    // Without a read-only row, every comparison says so instead of inventing one.
    let without: Vec<Row> = rows.iter().filter(|r| !r.is_read_only()).cloned().collect();
    assert!(ceiling_table(&h200(), &without).contains("not yet measured"));
    assert!(copy_pace(&h200(), &without).contains("not yet measured"));
    assert!(best_table(&h200(), &without).contains("| – | – |"));
}

#[test]
fn little_s_law_uses_the_peak_the_sm_count_and_the_resident_threads() {
    let rows = vec![named("reduce7", Dtype::F32, 1 << 30, Cache::Rotated, 1130.0)];
    let text = bytes_in_flight(&h200(), &rows);
    // 4814.3 GB/s over 132 SMs = 36.47 B/ns; 8 B × 2048 threads = 16 KiB covers 449 ns.
    assert!(text.contains("36.5 bytes every nanosecond") && text.contains("| 16 KiB | 449 ns |") && text.contains("| 128 KiB | 3.6 µs |"), "{text}");
    // 2^32 bytes in 1130 µs = 3800.9 GB/s; 16 KiB × 132 / 3.8009 B/ns = 569 ns.
    assert!(text.contains("latency of 569 ns") && text.contains("8 times as many"), "{text}");
    assert!(bytes_in_flight(&Machine { compute_capability: "1.0".into(), ..h200() }, &rows).contains("unknown"));
}


#[test]
fn the_resident_sum_is_compared_with_the_smallest_one() {
    let rows = vec![
        named("reduce7", Dtype::I32, 1 << 22, Cache::Resident, 5.0),
        named("reduce7", Dtype::I32, 1 << 22, Cache::Rotated, 8.0),
        named("reduce7", Dtype::I32, 1 << 16, Cache::Rotated, 3.0),
    ];
    let text = resident_fixed_cost(&h200(), &rows);
    assert!(text.contains("takes 5.00 µs") && text.contains("60 % of the L2-resident time") && text.contains("not yet measured"), "{text}");
}

#[test]
fn few_rows_say_which_strategy_won_at_each_shape() {
    let row_sum = |kernel: &str, m: usize, n: usize, us: f64| Row { dtype: Dtype::F32, bytes: 4 * m * n, ..row(kernel, n, Cache::Rotated, us) };
    let rows = vec![
        row_sum("rows_block", 128, 1 << 21, 238.0),
        row_sum("rows_split", 128, 1 << 21, 260.0),
        row_sum("rows_block", 32, 1 << 23, 330.0),
        row_sum("rows_split", 32, 1 << 23, 253.0),
        Row { status: Status::Peer, ..row_sum(crate::records::rows::TORCH_KERNEL, 32, 1 << 23, 252.0) },
        row_sum("rows_block", 4096, 1 << 16, 236.0), // as many rows as SMs and more: not a few
    ];
    let text = rows_few_sentence("Test GPU", 132, Some(&rows));
    assert!(text.contains("still the faster of the two at 128 × 2^21 (238.00 µs against 260.00)"), "{text}");
    assert!(text.contains("several blocks per row won at 32 × 2^23 (253.00 µs against 330.00)"), "{text}");
    assert!(text.contains("faster than all three of the book's kernels at 32 × 2^23 (252.00 µs)"), "{text}");
    assert!(!text.contains("4096"), "{text}");
    assert!(rows_few_sentence("Test GPU", 132, None).contains("Not yet measured"));
}

#[test]
fn step_and_cumulative_speedups_come_from_the_rows() {
    let rows: Vec<Row> = CHANGES.iter().enumerate().map(|(k, (name, _))| row(name, 1 << 22, Cache::Rotated, 64.0 / (1u32 << k) as f64)).collect();
    let m = Machine { gpu: "Test GPU".into(), peak_gbps: Some(1000.0), l2_bytes: 1 << 20, ..Default::default() };
    let table = harris_table(&m, &rows, 1 << 22, Cache::Rotated);
    // Every step halves the time: 2x per step, 64x cumulative at kernel 7.
    assert!(table.contains("| 7 | multiple elements per thread | 1.00 |"), "{table}");
    assert!(table.contains("| 2.00× | 64.00× |"), "{table}");
    let split = speedup_split(&rows);
    assert!(split.contains("| 2^22 ints, rotated | 16.00× | 4.00× | 64.00× |"), "{split}");
}

#[test]
fn sanitizer_sentences_quote_the_summary_line() {
    let race = "# compute-sanitizer --tool racecheck ...\n========= RACECHECK SUMMARY: 4 hazards displayed (0 errors, 10 warnings)\n";
    assert!(sanitizer_sentence(race).contains("racecheck reported **4 hazards displayed (0 errors, 10 warnings)**"));
    let sync = "========= COMPUTE-SANITIZER\nmistake 1 ...\n========= ERROR SUMMARY: 0 errors\n";
    assert!(sanitizer_sentence(&format!("# --tool synccheck\n{sync}")).contains("synccheck reported **0 errors**"));
    let mem = "========= ERROR SUMMARY: 209 errors\n========= ERROR SUMMARY: 206 errors were not printed.\n";
    assert!(sanitizer_sentence(mem).contains("**209 errors**"));
    assert!(sanitizer_sentence("killed\n").contains("did not finish"));
    let suite = "memcheck\ntest result: ok. 2225 passed; 0 failed\n========= ERROR SUMMARY: 0 errors\n";
    assert!(sanitizer_sentence(suite).contains("**0 errors** (2225 tests ran under it and passed)"));
    assert!(sanitizer_sentence("initcheck\n# not yet run: compute-sanitizer --tool initcheck x\n").contains("has not been run here yet (`compute-sanitizer --tool initcheck x`)"));
    // Without a GPU in its header, the log is of the book's GPU; with one, of that GPU and day.
    assert!(sanitizer_sentence(race).starts_with("On the GPU this book was last measured on, "));
    let dated = "racecheck-x-sum\n# compute-sanitizer --tool racecheck x (2 runs)   (NVIDIA H100 80GB HBM3, 2026-12-05; exit 0 after 3 s)\n";
    let one = "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n";
    let bad = "========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n";
    assert_eq!(sanitizer_sentence(&format!("{dated}{one}{one}")),
        "On the NVIDIA H100 80GB HBM3 (2026-12-05), compute-sanitizer's racecheck reported **0 hazards displayed (0 errors, 0 warnings)** in each of its 2 runs.\n");
    // A log of several runs is reported by its worst, wherever it is, and so is its coverage.
    for text in [format!("{dated}{bad}{one}{one}"), format!("{dated}{one}{one}{bad}")] {
        assert!(sanitizer_sentence(&text).contains("reported **2 hazards displayed (2 errors, 0 warnings)** in the worst of its 3 runs"), "{text}");
        assert_eq!(crate::book::chapters::sanitizers::parse_log("racecheck-x-sum", &text).errors(), Some(2), "{text}");
    }
}

#[test]
fn ncu_csv_values_are_read_by_metric_name() {
    let report = "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n\
        \"0\",\"reduce2_i32\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum\",\"\",\"1,234,567\"\n\
        \"0\",\"reduce2_i32\",\"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum\",\"\",\"0\"\n";
    assert_eq!(ncu_metric(report, BANK_METRICS[0].0), Some(1_234_567.0));
    assert_eq!(ncu_metric(report, BANK_METRICS[1].0), Some(0.0));
    assert_eq!(ncu_metric(report, BANK_METRICS[2].0), None);
}

#[test]
fn missing_measurements_are_said_not_invented() {
    let m = Machine::default();
    let table = harris_table(&m, &[row("reduce1", 1 << 25, Cache::Rotated, 100.0)], 1 << 25, Cache::Rotated);
    assert!(table.contains("| 2 | strided index, no divergence | not measured |"), "{table}");
}

#[test]
fn kernel_4_is_judged_by_its_share_of_the_peak_and_by_its_profile() {
    let rows = vec![
        named("reduce4", Dtype::I32, 1 << 22, Cache::Rotated, 15.0),
        named("reduce5", Dtype::I32, 1 << 22, Cache::Rotated, 12.0),
        named("reduce4", Dtype::I32, 1 << 30, Cache::Rotated, 2700.0),
        named("reduce5", Dtype::I32, 1 << 30, Cache::Rotated, 2000.0),
    ];
    let none = std::collections::BTreeMap::new();
    let text = kernel4_limit(&h200(), &rows, &none);
    assert!(text.contains("faster by 1.25× at 2^22 and 1.35× at 2^30") && text.contains("has not been profiled"), "{text}");
    assert!(kernel4_limit(&h200(), &rows[..2], &none).contains("not both measured"));
    // With the committed profiles: the instruction counts and the issue slots say what fills its time.
    let c = crate::book::context::Context::load(&crate::records::repo_root()).unwrap();
    let text = kernel4_limit(&h200(), &rows, &c.harris_profiles);
    assert!(text.contains("Under Nsight Compute") && text.contains("% fewer") && text.contains("of its cycles"), "{text}");
}

#[test]
fn kernels_1_to_7_are_profiled_and_tabled_in_book_order() {
    let c = crate::book::context::Context::load(&crate::records::repo_root()).unwrap();
    assert_eq!(c.harris_profiles.len(), 7);
    assert!(c.harris_profiles["reduce4"].get(crate::records::ncu::ISSUE_ACTIVE).unwrap() > 70.0);
    let table = harris_profile_table(&c.harris_profiles);
    let at = |k: &str| table.find(&format!("| `{k}` |")).unwrap_or_else(|| panic!("{k} missing:\n{table}"));
    assert!(at("reduce1") < at("reduce4") && at("reduce4") < at("reduce7"), "{table}");
    assert!(table.contains("From `reduce1` to `reduce7` the instructions per element fall"), "{table}");
    assert!(harris_profile_table(&std::collections::BTreeMap::new()).contains("Not profiled"));
}

#[test]
fn a_tree_step_is_counted_in_the_committed_sass() {
    let c = crate::book::context::Context::load(&crate::records::repo_root()).unwrap();
    let k1 = crate::records::sass::tree_loop(&c.sass["reduce1_i32"]).unwrap().len();
    let text = sass_tree_sentence(&c.sass);
    assert!(text.contains(&format!("**{k1} instructions**")) && text.contains("no loop left"), "{text}");
    assert!(sass_tree_sentence(&std::collections::BTreeMap::new()).contains("is not in `plots/data/sass/sm_90/`"));
}

#[test]
fn the_2007_kernel_5_is_counted_in_measurements_not_sizes() {
    let old = |n: usize, cache: Cache, us: f64| Row { status: Status::Historical, ..named("reduce5_volatile", Dtype::I32, n, cache, us) };
    let rows = vec![
        old(1 << 20, Cache::Rotated, 10.0), old(1 << 22, Cache::Rotated, 20.0), old(1 << 22, Cache::Resident, 8.0),
        named("reduce5", Dtype::I32, 1 << 20, Cache::Rotated, 11.0), named("reduce5", Dtype::I32, 1 << 22, Cache::Rotated, 21.0),
        named("reduce5", Dtype::I32, 1 << 22, Cache::Resident, 8.8),
    ];
    let text = historical_kernel5(&rows);
    assert!(text.contains("in all 3 measurements the benchmark checked before timing (2 sizes read from DRAM and 1 left in L2)"), "{text}");
    assert!(text.contains("`f32`: the 2007 form was not measured"), "{text}");
}

#[test]
fn the_entry_point_is_compared_only_with_peers_of_its_own_run() {
    let same = |kernel: &str, n: usize, us: f64| Row {
        status: Status::Peer, dtype: Dtype::F32, title: kernel.into(),
        method: format!("graph of 10 back-to-back, CUDA events; {SAME_RUN}, after its f32 kernels"), ..row(kernel, n, Cache::Rotated, us)
    };
    let entry = |n: usize, us: f64| Row { dtype: Dtype::F32, title: "entry point: reduce10_tiles, block 512".into(), ..row(ENTRY_POINT_KERNEL, n, Cache::Rotated, us) };
    let mut rows = vec![
        entry(1 << 20, 3.0),
        entry(1 << 28, 240.0),
        named(READ_ONLY_KERNEL, Dtype::F32, 1 << 28, Cache::Rotated, 238.0),
        same("cub_sum", 1 << 20, 8.0),
        same("cub_sum", 1 << 28, 238.5),
        // Faster, but from another run: never compared.
        Row { method: "graph of 4 back-to-back, CUDA events".into(), ..same("tilelang_sum", 1 << 20, 1.0) },
    ];
    let table = entry_table(&h200(), &rows);
    assert!(table.contains("| 2^20 | reduce10_tiles, block 512 | **3.00** | – | 8.00 | – | – | – | – |"), "{table}");
    assert!(table.contains("| 2^28 | reduce10_tiles, block 512 | 240.00 | 99.2 | **238.50** |"), "{table}");
    assert!(table.contains("at least as fast as every peer beside it at 1 of 2 sizes; behind at 2^28 (cub_sum 238.50 µs against 240.00, 0.6%)"), "{table}");
    // Without the entry point's rows, the note says how to measure it.
    rows.retain(|r| r.kernel != ENTRY_POINT_KERNEL);
    assert!(entry_table(&h200(), &rows).contains("not yet measured"));
    assert!(host_visible_table(&h200(), &rows).contains("not yet measured"));
}

#[test]
fn the_entry_points_launch_is_set_against_its_own_row_and_ragged_sizes_are_shown() {
    let same = |kernel: &str, dtype: Dtype, n: usize, us: f64| Row {
        status: Status::Peer, dtype, title: kernel.into(),
        method: format!("graph of 10 back-to-back, CUDA events; {SAME_RUN}, after its kernels"), ..row(kernel, n, Cache::Rotated, us)
    };
    let entry = |dtype: Dtype, n: usize, title: &str, us: f64| Row { dtype, title: title.into(), ..row(ENTRY_POINT_KERNEL, n, Cache::Rotated, us) };
    let own = |kernel: &str, dtype: Dtype, block: u32, n: usize, us: f64| Row { block, ..named(kernel, dtype, n, Cache::Rotated, us) };
    let (tiles, k12) = ("entry point: reduce10_tiles_two_pass, block 512", "entry point: reduce12, block 256");
    let rows = vec![
        entry(Dtype::F32, 1 << 14, tiles, 2.07),
        // The same kernel, block and size in another type and left in L2, first: never its pair.
        own("reduce10_tiles_two_pass", Dtype::I32, 512, 1 << 14, 2.07),
        Row { block: 512, ..named("reduce10_tiles_two_pass", Dtype::F32, 1 << 14, Cache::Resident, 2.07) },
        own("reduce10_tiles_two_pass", Dtype::F32, 512, 1 << 14, 1.81),
        same("tilelang_sum", Dtype::F32, 1 << 14, 1.82),
        entry(Dtype::F32, 1 << 16, k12, 2.70),
        own("reduce12", Dtype::F32, 256, 1 << 16, 2.69),
        entry(Dtype::F32, 1_000_000, k12, 4.99),
        own("reduce12", Dtype::F32, 256, 1_000_000, 4.70),
        same("cub_sum", Dtype::F32, 1_000_000, 3.90),
        entry(Dtype::F32, (1 << 22) + 1, tiles, 6.97),
        own("reduce10_tiles_two_pass", Dtype::F32, 512, (1 << 22) + 1, 6.98),
        entry(Dtype::F32, 1 << 28, tiles, 236.4),
        own("reduce10_tiles_two_pass", Dtype::F32, 512, 1 << 28, 236.3),
        same("cub_sum", Dtype::F32, 1 << 28, 236.35),
        // Another block, and a one-block launch: not the same launch as any row.
        entry(Dtype::F32, 1 << 12, k12, 1.34),
        own("reduce12", Dtype::F32, 128, 1 << 12, 1.30),
        entry(Dtype::F32, 1 << 13, "entry point: reduce12, block 512, one block", 1.60),
        own("reduce12", Dtype::F32, 512, 1 << 13, 1.50),
    ];
    // The ragged sizes are rows of the table, and a peer ahead there is said to be.
    let table = entry_table(&h200(), &rows);
    assert!(table.contains("| 10^6 | reduce12, block 256 | 4.99 |"), "{table}");
    assert!(table.contains("| 2^22 + 1 | reduce10_tiles_two_pass, block 512 | **6.97** |"), "{table}");
    assert!(table.contains("10^6 (cub_sum 3.90 µs against 4.99, 27.9%)"), "{table}");
    let twins = entry_twins(&rows, None);
    assert!(twins.contains("In 5 of the 7 rows above"), "{twins}");
    assert!(twins.contains("agreed within 1% in 3 of them"), "{twins}");
    assert!(twins.contains("| 2^14 | f32 | 2.07 µs | 1.81 µs | +14.4% |\n| 10^6 | f32 | 4.99 µs | 4.70 µs | +6.2% |\n\n"), "only the pairs more than 3% apart: {twins}");
    // 2^16 agrees too, but 10^6 above it does not: agreement from 2^22 + 1 up.
    assert!(twins.contains("From 2^22 + 1 values up they agreed within 0.1%"), "{twins}");
    assert!(twins.contains("| 2^14 | f32 | TileLang | 1.82 µs | 2.07 µs | 1.81 µs | level (within 1%) |\n| 10^6 | f32 | CUB | 3.90 µs | 4.99 µs | 4.70 µs | behind |\n| 2^28 | f32 | CUB | 236.35 µs | 236.40 µs | 236.30 µs | level (within 1%) |"), "{twins}");
    assert!(entry_twins(&rows[15..], None).is_empty(), "no pair, no paragraph");
    // A second run: a pair that differs the same way again counts; one that flips sign, or a size
    // the second run lacks, does not.
    let repeat = vec![
        entry(Dtype::F32, 1 << 14, tiles, 2.05),
        own("reduce10_tiles_two_pass", Dtype::F32, 512, 1 << 14, 1.82),
        entry(Dtype::F32, 1_000_000, k12, 4.50),
        own("reduce12", Dtype::F32, 256, 1_000_000, 4.75),
    ];
    let machine = Machine { date: "2026-12-05".into(), ..h200() };
    let twins = entry_twins(&rows, Some((&machine, &repeat)));
    assert!(twins.contains("| 2^14 | f32 | 2.07 µs | 1.81 µs | +14.4% | +12.6% |\n| 10^6 | f32 | 4.99 µs | 4.70 µs | +6.2% | -5.3% |\n"), "{twins}");
    assert!(twins.contains("(NVIDIA H200, 2026-12-05; `plots/data/experiments/bench-repeat/`): 1 of these 2 rows differed the same way there"), "{twins}");
    let twins = entry_twins(&rows, Some((&machine, &repeat[..2])));
    assert!(twins.contains("| 10^6 | f32 | 4.99 µs | 4.70 µs | +6.2% | – |"), "{twins}");
}

#[test]
fn entry_point_titles_and_sizes_read_back() {
    assert_eq!(entry_launch("entry point: reduce12, block 256"), Some(("reduce12", 256, false)));
    assert_eq!(entry_launch("entry point: reduce12, block 512, one block"), Some(("reduce12", 512, true)));
    assert_eq!(entry_launch("entry point: reduce12, block 512, one block, host-visible"), Some(("reduce12", 512, true)));
    assert_eq!(entry_launch("entry point: reduce10_tiles_two_pass, block 512, host-visible"), Some(("reduce10_tiles_two_pass", 512, false)));
    assert_eq!(entry_launch("reduce12, block 256"), None);
    let labels: Vec<String> = [1 << 20, 1_000_000, 10_000_000, (1 << 22) + 1, 3 * (1 << 24) - 1, 1000, 12345].map(size_label).to_vec();
    assert_eq!(labels, ["2^20", "10^6", "10^7", "2^22 + 1", "3·2^24 − 1", "10^3", "12345"]);
}

#[test]
fn the_bands_table_is_the_rule_itself() {
    let table = dispatch_bands(&std::collections::BTreeMap::new());
    assert_eq!(table.lines().filter(|l| l.starts_with('|')).count(), 2 + crate::kernels::dispatch::BANDS.len());
    assert!(table.contains("| 1 to 1024 | `reduce12` | 256 |"), "{table}");
    assert!(table.contains("| 1025 to 2048 | `reduce12` | 128 |"), "{table}");
    assert!(table.contains("more than"), "{table}");
    assert!(!table.contains("machine code"), "no SASS, no sentence about it: {table}");
}

#[test]
fn the_gap_at_a_million_values_reads_the_committed_sass() {
    use crate::records::sass;
    let listings = sass::load(&sass::sass_dir(&crate::records::repo_root().join("plots/data"), sass::ARCH)).unwrap();
    // Kernel 12's committed code loads a thread's leftovers in one round: no sentence of one at a time.
    assert!(!dispatch_bands(&listings).contains("machine code"), "{}", dispatch_bands(&listings));
    // A listing with a loop of one load after the unrolled loop says so.
    let one_at_a_time = sass::four_then_one_at_a_time();
    let mut old = listings.clone();
    old.insert("reduce12_b256_f32".into(), sass::parse(&one_at_a_time));
    let table = dispatch_bands(&old);
    assert!(table.contains("In `reduce12_b256_f32`'s machine code (`plots/data/sass/sm_90/`, NVRTC for `sm_90`), the main loop issues 4 of its 4 16-byte loads before it waits for one; \
        the loop after it, for the packs a thread has left, loads one pack and adds it before it loads the next"), "{table}");
}

#[test]
fn the_scratch_experiment_draws_each_launchs_pattern_and_holds_the_second_process_to_it() {
    let placed = |kernel: &str, n: usize, at: &str, us: f64| Row { title: format!("{kernel} [scratch at {at}]"), block: 256, ..named(kernel, Dtype::F32, n, Cache::Rotated, us) };
    let at = ["0x1000 0x1200", "0x201000 0x201200", "0x601000 0x601200"];
    // A launch whose middle placement is slow in both processes; one level in both; one whose
    // second process put its buffers elsewhere (its pattern flips, its change is not compared).
    let first = vec![
        placed("reduce12", 1 << 16, at[0], 3.00), placed("reduce12", 1 << 16, at[1], 3.12), placed("reduce12", 1 << 16, at[2], 3.01),
        placed("reduce6", 1 << 16, at[0], 2.80), placed("reduce6", 1 << 16, at[1], 2.81), placed("reduce6", 1 << 16, at[2], 2.80),
        placed("reduce6", 1 << 18, at[0], 3.20), placed("reduce6", 1 << 18, at[1], 3.05), placed("reduce6", 1 << 18, at[2], 3.21),
        // The entry point's own row, timed once: not a launch of the experiment.
        Row { title: format!("entry point: reduce12, block 256 [scratch at {}]", at[0]), ..row(ENTRY_POINT_KERNEL, 1 << 16, Cache::Rotated, 3.0) },
    ];
    let mut second = first.clone();
    second[1].median_us = 3.13;
    for r in &mut second[6..9] {
        r.title = r.title.replace("0x", "0xa");
    }
    (second[7].median_us, second[8].median_us) = (3.21, 3.05);
    let dir = tempfile::tempdir().unwrap();
    let gpu = dir.path().join("experiments/scratch/nvidia-h100");
    std::fs::create_dir_all(&gpu).unwrap();
    let machine = Machine { gpu: "NVIDIA H100".into(), date: "2026-12-05".into(), ..h200() };
    crate::records::bench::write_csv(&gpu.join("1.csv"), &machine, &first).unwrap();
    crate::records::bench::write_csv(&gpu.join("2.csv"), &machine, &second).unwrap();
    let s = entry_scratch(dir.path(), "NVIDIA H200").unwrap();
    assert!(s.contains("(NVIDIA H100, 2026-12-05; `plots/data/experiments/scratch/`; the tables above are of the NVIDIA H200, where this is not yet measured)"), "{s}");
    assert!(!entry_scratch(dir.path(), "NVIDIA H100").unwrap().contains("tables above"));
    assert!(s.contains("times the same launches 3 times in one process"), "{s}");
    assert!(s.contains("| reduce12 | f32 | 2^16 | 256 | 3.00 µs | 3.12 µs | 4.0% | `FsF` | `FsF` | 0.3% |"), "{s}");
    assert!(s.contains("| reduce6 | f32 | 2^16 | 256 | 2.80 µs | 2.81 µs | 0.4% | `level` | `level` | 0.0% |"), "{s}");
    assert!(s.contains("| reduce6 | f32 | 2^18 | 256 | 3.05 µs | 3.21 µs | 5.2% | `sFs` | `ssF` | other addresses |"), "{s}");
    assert!(s.contains("In 2 of the 3 launches the second process put the buffers at the same addresses as the first. In 2 of them the first process's placements were 2% or more apart, up to 5.2% (reduce6 at 2^18 values of f32); in 1 of those 2 the second process drew the same pattern, and no time at one address moved by more than 0.3%"), "{s}");
    assert!(s.contains("2 of those launches shared their addresses with another (other kernels or sizes, timed at other moments of the run): in 0 of those 1 sets"), "{s}");
    assert!(!s.contains("entry_point"), "{s}");
    // No runs: the paragraph says how to make them.
    assert!(entry_scratch(&dir.path().join("none"), "NVIDIA H200").unwrap().contains("not yet measured"));
}
