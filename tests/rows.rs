//! Row sums (chapter 13): every strategy, forced, and the automatic choice against an f64
//! reference per row, on fresh random data with poisoned outputs (and a poisoned guard past the
//! last row), at the shapes where row sums break: N = 1, N around 32 and 1024, N not a multiple
//! of the 16-byte pack, one row, many short rows, strided views whose padding is NaN, grids too
//! small for the rows (the kernels' row loops); integer-valued rows whose sums must be exact.
//! The host's choice, the launch plans and the generated tables are checked with no GPU.

mod common;

use common::{gpu_trial, trial_seed};
use libtest_mimic::{Failed, Trial};
use reduction::data::Checked;
use reduction::element::Element;
use reduction::measure::rows_bench;
use reduction::element::{bf16, f16, Dtype};
use reduction::rows::{self, choose, plan, plan_typed, Limits, RowLayout, RowReducer, Strategy};
use reduction::{Error, Gpu};
use std::path::PathBuf;

/// Each strategy forced, and the automatic choice (`None`).
const STRATEGIES: [Option<Strategy>; 4] = [Some(Strategy::Warp), Some(Strategy::Block), Some(Strategy::Split), None];

fn strategy_name(s: Option<Strategy>) -> &'static str {
    s.map_or("auto", Strategy::name)
}

/// MAX_TEST_N caps the buffer a trial uses, for runs under compute-sanitizer.
fn fits_cap(len: usize) -> bool {
    let cap = std::env::var("MAX_TEST_N").ok().and_then(|v| v.parse().ok()).unwrap_or(usize::MAX);
    len <= cap
}

/// Guard values past the last row's output: a kernel that writes past `out[rows - 1]` hits them.
const GUARD: usize = 8;

/// Sum `host` (laid out as `layout`, starting `shift` values in) with `strategy` into a poisoned
/// output with a poisoned guard after it; the sums, after checking the guard, and the launch's
/// addition depth (for the error bound).
fn run(gpu: &Gpu, strategy: Option<Strategy>, host: &[f32], shift: usize, layout: RowLayout, grid_limit: Option<u32>) -> Result<(Vec<f32>, u64), Failed> {
    let mut reducer = RowReducer::with_strategy(gpu, strategy)?;
    if let Some(limit) = grid_limit {
        reducer.limit_grid(limit);
    }
    let input = gpu.upload(host)?;
    let mut out = gpu.alloc::<f32>(layout.rows + GUARD)?;
    gpu.fill(&mut out, f32::POISON)?;
    let launch = reducer.enqueue(&input.slice(shift..), layout, &mut out.as_view_mut())?;
    let got = gpu.download(&out)?;
    gpu.synchronize()?;
    if launch.is_none() != layout.is_empty() {
        return Err(format!("{layout}: launch {launch:?} for a layout that is empty = {}", layout.is_empty()).into());
    }
    if got[layout.rows..].iter().any(|g| g.to_bits() != f32::POISON.to_bits()) {
        return Err(format!("{layout}: something wrote past the last row's output: {:?}", &got[layout.rows..]).into());
    }
    Ok((got[..layout.rows].to_vec(), launch.map_or(0, |l| l.addition_depth(layout.cols))))
}

/// A buffer for `layout` starting `shift` values in, with every value outside the rows (the
/// shift, the padding of each row, the end) NaN, so that a stray read shows in the sum; the
/// rows hold `fill(i)` for the i-th value of the matrix.
fn padded(layout: RowLayout, shift: usize, fill: impl Fn(usize) -> f32) -> Vec<f32> {
    let len = shift + layout.rows * layout.stride.max(layout.cols);
    let mut host = vec![f32::NAN; len.max(1)];
    for r in 0..layout.rows {
        for c in 0..layout.cols {
            host[shift + r * layout.stride + c] = fill(r * layout.cols + c);
        }
    }
    host
}

fn random_trial(name: String, strategy: Option<Strategy>, layout: RowLayout, shift: usize, grid_limit: Option<u32>) -> Trial {
    let seed = trial_seed(&name);
    gpu_trial(name, move |gpu| {
        let values = f32::random(layout.rows * layout.cols, seed);
        let host = padded(layout, shift, |i| values[i]);
        let (got, depth) = run(gpu, strategy, &host, shift, layout, grid_limit)?;
        reduction::check::rows::check_rows(&got, &reduction::check::rows::row_references(&host[shift..], layout), depth).map_err(|e| format!("{layout}: {e}").into())
    })
}

/// Exact by construction ([`reduction::data::Checked::fill_exact`]): nonzero integers sized so
/// that every partial sum is exact in f32, so each row must come back bit for bit, and a dropped
/// or doubled value shows however long the row is.
fn exact_trial(name: String, strategy: Option<Strategy>, layout: RowLayout) -> Trial {
    let seed = trial_seed(&name);
    gpu_trial(name, move |gpu| {
        let values: Vec<f32> = reduction::data::exact_parallel(layout.rows * layout.cols, seed);
        let host = padded(layout, 0, |i| values[i]);
        let (got, depth) = run(gpu, strategy, &host, 0, layout, None)?;
        let references = reduction::check::rows::exact_row_references(&host, layout)?;
        reduction::check::rows::check_rows(&got, &references, depth).map_err(|e| format!("{layout}: {e}").into())
    })
}

/// Rows of f16 or bf16 (`shift` values into the buffer, NaN outside the rows): exact inputs
/// bit for bit, then random ones within the f32 bound.
fn half_trial<T: Checked<Acc = f32>>(name: String, strategy: Option<Strategy>, layout: RowLayout, shift: usize) -> Trial {
    let seed = trial_seed(&name);
    gpu_trial(name, move |gpu| {
        for exact in [true, false] {
            let values: Vec<T> = if exact { reduction::data::exact_parallel(layout.rows * layout.cols, seed) } else { T::random(layout.rows * layout.cols, seed) };
            let mut host = vec![T::POISON; shift + layout.rows * layout.stride.max(1)];
            for r in 0..layout.rows {
                host[shift + r * layout.stride..][..layout.cols].copy_from_slice(&values[r * layout.cols..][..layout.cols]);
            }
            let mut reducer = RowReducer::with_strategy(gpu, strategy)?;
            let input = gpu.upload(&host)?;
            let mut out = gpu.alloc::<f32>(layout.rows + GUARD)?;
            gpu.fill(&mut out, f32::POISON)?;
            let launch = reducer.enqueue(&input.slice(shift..), layout, &mut out.as_view_mut())?.ok_or("no launch")?;
            let got = gpu.download(&out)?;
            gpu.synchronize()?;
            if got[layout.rows..].iter().any(|g| g.to_bits() != f32::POISON.to_bits()) {
                return Err(format!("{layout}: something wrote past the last row's output").into());
            }
            let rows_host = &host[shift..];
            let references = if exact { reduction::check::rows::exact_row_references(rows_host, layout)? } else { reduction::check::rows::row_references(rows_host, layout) };
            reduction::check::rows::check_rows(&got[..layout.rows], &references, launch.addition_depth(layout.cols))
                .map_err(|e| format!("{layout} of {}, {} inputs: {e}", T::DTYPE, if exact { "exact" } else { "random" }))?;
        }
        Ok(())
    })
}

fn gpu_trials(trials: &mut Vec<Trial>) {
    // (M, N): one row, warp and block edges, packs and no packs, rows long enough to split,
    // many short rows (more blocks than a grid holds along y), LayerNorm-like shapes.
    let shapes: [(usize, usize); 20] = [
        (1, 1), (1, 2), (3, 3), (1, 31), (2, 32), (5, 33), (3, 1023), (3, 1024), (3, 1025), (5, 4097),
        (2, 8191), (2, 8192), (3, 8193), (1, (1 << 20) + 3), (7, 100_003), (1000, 1), (1000, 7), (4096, 64),
        (1 << 20, 5), (300_000, 33),
    ];
    for strategy in STRATEGIES {
        let s = strategy_name(strategy);
        for (m, n) in shapes {
            if fits_cap(m * n) {
                trials.push(random_trial(format!("random::{s}::{m}x{n}"), strategy, RowLayout::dense(m, n), 0, None));
            }
        }
        // Rows past 2^24 values: where a bound that grows with n stops meaning anything.
        for (m, n) in [(1, 1), (9, 31), (9, 33), (64, 1025), (2, 40_000), (1, (1 << 22) + 1), (200, 12_293), (2, (1 << 24) + 1), (1, (1 << 25) + 3)] {
            if fits_cap(m * n) {
                trials.push(exact_trial(format!("exact::{s}::{m}x{n}"), strategy, RowLayout::dense(m, n)));
            }
        }
        // Views of wider matrices: odd strides put the rows at every alignment, and a shift of 1
        // to 3 values moves the first row off the 16-byte boundary of the buffer. Rows of whole
        // packs (64 values) at a stride that is not (66), or at a shift, must not be read as if
        // every row started on a boundary.
        for (m, n, stride) in [(37, 1000, 1003), (300, 33, 64), (5, 50_000, 50_001), (11, 20_000, 40_000), (50, 64, 66), (50, 64, 68)] {
            for shift in [0, 1, 2, 3] {
                if fits_cap(shift + m * stride) {
                    let name = format!("strided::{s}::{m}x{n}::stride={stride}::shift={shift}");
                    trials.push(random_trial(name, strategy, RowLayout::strided(m, n, stride), shift, None));
                }
            }
        }
        // A grid of 3 blocks (along y for the split) for 1000 rows: every block loops over rows.
        for n in [100, 5000, 20_000] {
            if fits_cap(1000 * n) {
                trials.push(random_trial(format!("row_loop::{s}::1000x{n}::3_blocks"), strategy, RowLayout::dense(1000, n), 0, Some(3)));
            }
        }
        // PyTorch's corner test, by rows: row r is zero but for a single 1 in one of the first or
        // last 100 columns; its sum is exactly 1.
        if fits_cap(200 * 12_293) {
            trials.push(gpu_trial(format!("one_hot::{s}::200x12293"), move |gpu| {
                let (m, n) = (200, 12_293);
                let layout = RowLayout::dense(m, n);
                let hot = |r: usize| if r < 100 { r } else { n - 1 - (r - 100) };
                let host = padded(layout, 0, |i| if i % n == hot(i / n) { 1.0 } else { 0.0 });
                let (got, _) = run(gpu, strategy, &host, 0, layout, None)?;
                match got.iter().enumerate().find(|(_, &g)| g != 1.0) {
                    None => Ok(()),
                    Some((r, g)) => Err(format!("row {r} (the 1 at column {}) summed to {g}", hot(r)).into()),
                }
            }));
        }
    }

    // f16 and bf16 rows (summed in f32): exact and random, at the pack edges of 8 values, and
    // views one to seven values off the 16-byte boundary.
    for strategy in STRATEGIES {
        let s = strategy_name(strategy);
        for (m, n) in [(1, 1), (37, 7), (5, 8), (5, 9), (4096, 64), (3, 255), (3, 2049), (2, 70_001), (1, (1 << 20) + 7)] {
            if fits_cap(m * n) {
                trials.push(half_trial::<f16>(format!("half::f16::{s}::{m}x{n}"), strategy, RowLayout::dense(m, n), 0));
                trials.push(half_trial::<bf16>(format!("half::bf16::{s}::{m}x{n}"), strategy, RowLayout::dense(m, n), 0));
            }
        }
        for shift in [1, 3, 7] {
            trials.push(half_trial::<bf16>(format!("half::bf16::{s}::37x1000::stride=1003::shift={shift}"), strategy, RowLayout::strided(37, 1000, 1003), shift));
        }
    }
    // The entry point (reduction::row_sums): exact rows, bit for bit, at shapes the planner gives
    // to each of its strategies (a warp, a block, a split per row).
    for (m, n) in [(1000, 33), (200, 4097), (3, 1 << 20)] {
        let name = format!("entry::row_sums::{m}x{n}");
        let seed = trial_seed(&name);
        trials.push(gpu_trial(name, move |gpu| {
            let layout = RowLayout::dense(m, n);
            let host: Vec<f32> = reduction::data::exact_parallel(m * n, seed);
            let got = reduction::row_sums(gpu, &gpu.upload(&host)?.as_view(), layout)?;
            let launch = RowReducer::new(gpu)?.plan(layout)?.ok_or("no launch")?;
            let references = reduction::check::rows::exact_row_references(&host, layout)?;
            reduction::check::rows::check_rows(&got, &references, launch.addition_depth(n)).map_err(|e| format!("{layout} ({launch}): {e}").into())
        }));
    }
    trials.push(gpu_trial("empty::no_rows_no_launch", |gpu| {
        let host = [1.0f32; 4];
        for layout in [RowLayout::dense(0, 4), RowLayout::dense(0, 0)] {
            let (got, _) = run(gpu, None, &host, 0, layout, None)?;
            if !got.is_empty() {
                return Err(format!("{layout}: {got:?}").into());
            }
            if !RowReducer::new(gpu)?.sum_host::<f32>(&[], layout)?.is_empty() {
                return Err(format!("{layout}: sum_host gave sums for no rows").into());
            }
        }
        Ok(())
    }));
    trials.push(gpu_trial("empty::rows_of_nothing_are_zero_with_no_launch", |gpu| {
        for strategy in STRATEGIES {
            // `run` fails if a launch is made; the poisoned outputs must have become zeros.
            let (got, _) = run(gpu, strategy, &[], 0, RowLayout::dense(5, 0), None)?;
            if got != vec![0.0; 5] {
                return Err(format!("{}: {got:?}", strategy_name(strategy)).into());
            }
        }
        if RowReducer::new(gpu)?.sum_host::<f32>(&[], RowLayout::dense(3, 0))? != vec![0.0; 3] {
            return Err("sum_host: rows of nothing are not zero".into());
        }
        Ok(())
    }));
    trials.push(gpu_trial("errors::refused_before_any_launch", |gpu| {
        let mut reducer = RowReducer::new(gpu)?;
        let input = gpu.upload(&[1.0f32; 100])?;
        let expect = |what: &str, result: reduction::Result<Vec<f32>>, needle: &str| -> Result<(), Failed> {
            match result {
                Err(e @ Error::InvalidLength { .. }) if e.to_string().contains(needle) => Ok(()),
                Err(e) => Err(format!("{what}: wrong error: {e}").into()),
                Ok(v) => Err(format!("{what}: accepted, gave {} sums", v.len()).into()),
            }
        };
        expect("a view too short", reducer.sum(&input.as_view(), RowLayout::dense(11, 10)), "needs 110")?;
        expect("a stride under the row", reducer.sum(&input.as_view(), RowLayout::strided(2, 10, 9)), "shorter than a row")?;
        expect("an index past 64 bits", reducer.sum(&input.as_view(), RowLayout::strided(usize::MAX / 2, 4, 4)), "64-bit")?;
        expect("a host slice too short", reducer.sum_host(&[1.0f32; 5], RowLayout::dense(2, 3)), "needs 6")?;
        let mut small = gpu.alloc::<f32>(3)?;
        match reducer.enqueue(&input.as_view(), RowLayout::dense(10, 10), &mut small.as_view_mut()) {
            Err(e @ Error::InvalidLength { .. }) if e.to_string().contains("output holds 3") => {}
            other => return Err(format!("an output too short: {other:?}").into()),
        }
        // Nothing was lost: the same reducer still sums.
        let got = reducer.sum(&input.as_view(), RowLayout::dense(10, 10))?;
        if got != vec![10.0; 10] {
            return Err(format!("after the refusals: {got:?}").into());
        }
        Ok(())
    }));
    trials.push(gpu_trial("auto::is_the_strategy_it_names_bit_for_bit", |gpu| {
        let sm_count = gpu.info().sm_count as usize;
        for (m, n) in [(4096, 64), (100, 1024), (1000, 1025), (sm_count, 20_000), (sm_count - 1, 20_000), (8, 1 << 20), (8, 5000)] {
            let layout = RowLayout::dense(m, n);
            let xs = f32::random(m * n, trial_seed(&format!("auto::{m}x{n}")));
            let mut auto = RowReducer::new(gpu)?;
            let launch = auto.plan(layout)?.ok_or("no launch")?;
            let (expected, _) = choose(m, n, gpu.info().sm_count);
            if launch.strategy != expected {
                return Err(format!("{layout}: planned {launch}, but choose says {expected:?}").into());
            }
            let a = auto.sum_host(&xs, layout)?;
            let f = RowReducer::with_strategy(gpu, Some(expected))?.sum_host(&xs, layout)?;
            if a.iter().zip(&f).any(|(x, y)| x.to_bits() != y.to_bits()) {
                return Err(format!("{layout}: the automatic sums differ from {expected:?}'s").into());
            }
            println!("{layout}: {launch}");
        }
        Ok(())
    }));
    for strategy in Strategy::ALL {
        trials.push(gpu_trial(format!("determinism::{}::20_runs", strategy.name()), move |gpu| {
            let layout = RowLayout::dense(16, (1 << 20) + 3);
            let xs = f32::random(layout.rows * layout.cols, trial_seed("determinism"));
            let input = gpu.upload(&xs)?;
            let mut reducer = RowReducer::with_strategy(gpu, Some(strategy))?;
            let first = reducer.sum(&input.as_view(), layout)?;
            for run in 1..20 {
                let again = reducer.sum(&input.as_view(), layout)?;
                if let Some(r) = (0..layout.rows).find(|&r| again[r].to_bits() != first[r].to_bits()) {
                    return Err(format!("run {run}, row {r}: {:e}, run 0 gave {:e}", again[r], first[r]).into());
                }
            }
            Ok(())
        }));
    }
    trials.push(gpu_trial("reuse::one_reducer_many_shapes", |gpu| {
        // The split's partials and tickets grow and shrink back; tickets must stay at zero.
        let mut auto = RowReducer::new(gpu)?;
        let mut split = RowReducer::with_strategy(gpu, Some(Strategy::Split))?;
        for (i, (m, n)) in [(4, 9000), (64, 70_000), (4, 9000), (3, 1 << 20), (1000, 4100), (2, 10)].into_iter().enumerate() {
            let layout = RowLayout::dense(m, n);
            let xs = f32::random(m * n, trial_seed(&format!("reuse::{i}")));
            let references = reduction::check::rows::row_references(&xs, layout);
            for reducer in [&mut auto, &mut split] {
                let got = reducer.sum_host(&xs, layout)?;
                let depth = reducer.plan(layout)?.map_or(0, |l| l.addition_depth(n));
                reduction::check::rows::check_rows(&got, &references, depth).map_err(|e| format!("shape {i} ({layout}): {e}"))?;
            }
        }
        Ok(())
    }));
}

// ---- no GPU needed ----

fn host_trials(trials: &mut Vec<Trial>) {
    trials.push(Trial::test("choice::short_rows_get_a_warp", || {
        for m in [1, 131, 132, 1 << 20] {
            for n in [1, 64, 1000, 1024] {
                if choose(m, n, 132).0 != Strategy::Warp {
                    return Err(format!("{m} × {n}: {:?}", choose(m, n, 132)).into());
                }
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("choice::long_rows_get_a_block_each_when_they_fill_the_gpu", || {
        for (m, n) in [(132, 1025), (1 << 15, 2048), (132, 1 << 24), (1000, 1 << 20)] {
            if choose(m, n, 132).0 != Strategy::Block {
                return Err(format!("{m} × {n}: {:?}", choose(m, n, 132)).into());
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("choice::few_long_rows_are_split", || {
        for (m, n) in [(131, 32768), (16, 1 << 24), (1, 1 << 30)] {
            if choose(m, n, 132).0 != Strategy::Split {
                return Err(format!("{m} × {n}: {:?}", choose(m, n, 132)).into());
            }
        }
        // Too short to split, and the SM count decides.
        assert_eq!(choose(131, 32764, 132).0, Strategy::Block); // 8191 packs: under two tiles
        assert_eq!(choose(100, 1 << 20, 64).0, Strategy::Block);
        assert_eq!(choose(100, 1 << 20, 132).0, Strategy::Split);
        Ok(())
    }));
    trials.push(Trial::test("choice::every_reason_is_its_own_and_names_its_threshold", || {
        let cases = [(1, 1), (1000, 2000), (1, 1 << 20), (1, 2000)];
        let reasons: Vec<&str> = cases.iter().map(|&(m, n)| choose(m, n, 132).1).collect();
        for (i, r) in reasons.iter().enumerate() {
            if reasons[..i].contains(r) || r.is_empty() {
                return Err(format!("reason {i} repeats or is empty: {r:?}").into());
            }
        }
        let (warp, short) = (choose(1, 1, 132).1, choose(1, 2000, 132).1);
        if !warp.contains(&rows::WARP_MAX_COLS.to_string()) || !short.contains(&rows::SPLIT_MIN_COLS.to_string()) {
            return Err(format!("the reasons do not name the thresholds they apply: {warp:?}, {short:?}").into());
        }
        Ok(())
    }));
    trials.push(Trial::test("plan::empty_layouts_launch_nothing", || {
        for layout in [RowLayout::dense(0, 5), RowLayout::dense(5, 0), RowLayout::dense(0, 0), RowLayout::strided(0, 3, 1)] {
            for strategy in STRATEGIES {
                if plan(layout, strategy, Limits::h200())?.is_some() {
                    return Err(format!("{layout}: a launch was planned").into());
                }
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("plan::bad_layouts_are_refused_with_the_reason", || {
        let reason = |layout: RowLayout, len: usize| match layout.check(len) {
            Err(e @ Error::InvalidLength { .. }) => e.to_string(),
            other => format!("not refused: {other:?}"),
        };
        let cases = [
            (RowLayout::strided(3, 10, 9), 100, "stride 9 is shorter than a row of 10"),
            (RowLayout::strided(3, 10, 12), 33, "holds 33 values, but 3 × 10 (row stride 12) needs 34"),
            (RowLayout::strided(usize::MAX / 4, 8, 8), usize::MAX, "do not fit in a 64-bit index"),
        ];
        for (layout, len, needle) in cases {
            let got = reason(layout, len);
            if !got.contains(needle) {
                return Err(format!("{layout} with {len}: {got:?} does not say {needle:?}").into());
            }
        }
        // Exactly long enough: the last row needs no padding after it.
        RowLayout::strided(3, 10, 12).check(34)?;
        Ok(())
    }));
    trials.push(Trial::test("plan::grids_stay_within_the_hardware", || {
        let limits = Limits::h200();
        let huge = RowLayout::dense(3_000_000_000, 1);
        let block = plan(huge, Some(Strategy::Block), limits)?.unwrap();
        let warp = plan(huge, Some(Strategy::Warp), limits)?.unwrap();
        let split = plan(RowLayout::dense(3_000_000_000, 9000), Some(Strategy::Split), limits)?.unwrap();
        assert_eq!(block.grid, (Limits::HARDWARE_GRID_X, 1));
        assert_eq!(warp.grid, (23_437_500, 1)); // one lane per row of one value: 128 rows a block
        assert_eq!(split.grid, (1, Limits::HARDWARE_GRID_Y));
        let small = Limits { max_grid_x: 3, max_grid_y: 3, ..limits };
        assert_eq!(plan(RowLayout::dense(1000, 100), Some(Strategy::Block), small)?.unwrap().grid, (3, 1));
        assert_eq!(plan(RowLayout::dense(1000, 40_000), Some(Strategy::Split), small)?.unwrap().grid.1, 3);
        Ok(())
    }));
    trials.push(Trial::test("plan::the_split_gives_each_block_one_tile_of_64_kib", || {
        let limits = Limits::h200();
        let slices = |m: usize, n: usize| plan(RowLayout::dense(m, n), Some(Strategy::Split), limits).unwrap().unwrap().slices;
        assert_eq!(rows::SPLIT_TILE_PACKS * 16, 64 << 10);
        assert_eq!(slices(16, 1 << 24), 1024); // 2^24 values of 4 bytes in tiles of 16384
        assert_eq!(slices(1, 16384), 1);
        assert_eq!(slices(1, 16385), 2);
        assert_eq!(slices(2000, 1 << 20), 64);
        let half = plan_typed(RowLayout::dense(16, 1 << 24), Dtype::BF16, Some(Strategy::Split), limits)?.unwrap();
        assert_eq!(half.slices, 512, "a tile holds 32768 values of 2 bytes");
        let launch = plan(RowLayout::dense(16, 1 << 24), None, limits)?.unwrap();
        assert_eq!((launch.strategy, launch.grid, launch.block), (Strategy::Split, (1024, 16), rows::SPLIT_BLOCK));
        Ok(())
    }));
    trials.push(Trial::test("plan::block_threads_give_each_thread_one_round_of_four_loads", || {
        let got: Vec<u32> = [1, 16, 512, 513, 1024, 2048, 4096, 1 << 22].iter().map(|&packs| rows::block_threads(packs)).collect();
        assert_eq!(got, vec![64, 64, 128, 256, 256, 512, 1024, 1024]);
        Ok(())
    }));
    trials.push(Trial::test("plan::lanes_give_each_lane_eight_loads_and_more_lanes_to_few_rows", || {
        assert_eq!(rows::warp_lanes(1 << 20, 64, 132), 8); // 256 f32 values: 64 packs, 8 each
        assert_eq!(rows::warp_lanes(1 << 20, 32, 132), 4); // 256 bf16 values
        assert_eq!(rows::warp_lanes(1 << 18, 256, 132), 32);
        assert_eq!(rows::warp_lanes(1 << 20, 1, 132), 1);
        // 4096 rows of 16 packs: 2 lanes would leave the GPU nearly empty; up to one per pack.
        assert_eq!(rows::warp_lanes(4096, 16, 132), 16);
        assert_eq!(rows::warp_lanes(4096, 1000, 132), 32);
        let warp = plan_typed(RowLayout::dense(1 << 20, 256), Dtype::F16, None, Limits::h200())?.unwrap();
        assert_eq!((warp.strategy, warp.lanes, warp.grid.0), (Strategy::Warp, 4, (1 << 20) / 32));
        Ok(())
    }));
    trials.push(Trial::test("plan::few_rows_of_a_sum_give_each_lane_sixteen_values", || {
        // Rows enough for every SM: eight loads a lane, blocks of 128, as the operators have it.
        assert_eq!(rows::sum_team(1 << 20, 256, 64, 132), (8, rows::WARP_BLOCK));
        assert_eq!(rows::sum_team(1 << 18, 1024, 256, 132), (32, rows::WARP_BLOCK));
        // 4096 rows of 64 f32 values (16 packs): 4 lanes of 16 values, blocks of 64 (the
        // operators' rule gives one lane a pack: 16).
        assert_eq!(rows::sum_team(4096, 64, 16, 132), (4, rows::FEW_ROWS_BLOCK));
        assert_eq!(rows::warp_lanes(4096, 16, 132), 16);
        // bf16: 64 values are 8 packs, 4 lanes of 2 packs; 256 values, 16 lanes.
        assert_eq!(rows::sum_team(4096, 64, 8, 132), (4, rows::FEW_ROWS_BLOCK));
        assert_eq!(rows::sum_team(4096, 256, 32, 132), (16, rows::FEW_ROWS_BLOCK));
        // Never fewer lanes than eight loads a lane need, never more than a warp, at least one.
        assert_eq!(rows::sum_team(4096, 1024, 256, 132), (32, rows::FEW_ROWS_BLOCK));
        assert_eq!(rows::sum_team(10, 1, 1, 132), (1, rows::FEW_ROWS_BLOCK));
        let sums = plan_typed(RowLayout::dense(4096, 64), Dtype::F32, None, Limits::h200())?.unwrap();
        assert_eq!((sums.lanes, sums.block, sums.grid.0), (4, 64, 4096 / 16));
        let ops = rows::plan_for(rows::RowKernels::Operators, RowLayout::dense(4096, 64), Dtype::F32, None, Limits::h200())?.unwrap();
        assert_eq!((ops.lanes, ops.block, ops.grid.0), (16, 128, 4096 / 8));
        Ok(())
    }));
    trials.push(Trial::test("plan::a_forced_strategy_says_so", || {
        let launch = plan(RowLayout::dense(4096, 64), Some(Strategy::Split), Limits::h200())?.unwrap();
        assert_eq!((launch.strategy, launch.reason), (Strategy::Split, rows::FORCED));
        let auto = plan(RowLayout::dense(4096, 64), None, Limits::h200())?.unwrap();
        assert_eq!((auto.strategy, auto.reason), choose(4096, 64, 132));
        assert!(auto.to_string().contains("because rows of at most 256 16-byte packs"), "{auto}");
        Ok(())
    }));
    trials.push(Trial::test("bench::shapes_keep_m_times_n_fixed", || {
        let shapes = rows_bench::default_shapes();
        assert_eq!(shapes[0], (4096, 64));
        assert!(shapes[1..].iter().all(|&(m, n)| m * n == 1 << 28), "{shapes:?}");
        assert_eq!((shapes[1], *shapes.last().unwrap()), ((1 << 20, 1 << 8), (16, 1 << 24)));
        assert!(rows_bench::quick_shapes().iter().all(|s| shapes.contains(s)));
        // Each shape is measured by at least two strategies, and one block per row everywhere.
        for (_, n) in shapes {
            assert!(rows_bench::measured(Strategy::Block, n));
            assert!(Strategy::ALL.iter().filter(|s| rows_bench::measured(**s, n)).count() >= 2, "n = {n}");
        }
        Ok(())
    }));
    trials.push(Trial::test("book::the_row_tables_are_what_the_data_gives", || {
        let root = root();
        let data_dir = root.join("plots/data");
        let context = reduction::book::context::Context::load(&root)?;
        let machine = &context.book()?.0;
        let scratch = std::env::temp_dir().join(format!("reduction-rows-tables-{}", std::process::id()));
        std::fs::create_dir_all(scratch.join("plots"))?;
        let written = reduction::book::render::render_chapter(&context, &scratch, "rows.md");
        let result = (|| -> Result<(), Failed> {
            let written = written?;
            let measured = reduction::records::rows::load(&reduction::records::rows::results_dir(&data_dir), &reduction::records::slug(&machine.gpu))?.is_some();
            let svg = scratch.join("plots/rows.svg");
            if written.contains(&svg) != measured {
                return Err(format!("rows.svg drawn: {}, but row data present: {measured}", written.contains(&svg)).into());
            }
            for name in ["rows.md", "rows_chart.md"] {
                let fresh = std::fs::read_to_string(scratch.join("book/generated").join(name))?;
                let committed = std::fs::read_to_string(root.join("book/generated").join(name)).unwrap_or_default();
                if fresh != committed {
                    return Err(format!("book/generated/{name} is out of date with plots/data/rows/ (run `cargo run -- bench --plot-only`)").into());
                }
                if !measured && !fresh.contains("Not yet measured") {
                    return Err(format!("{name}: no data, yet no note saying so").into());
                }
            }
            Ok(())
        })();
        let _ = std::fs::remove_dir_all(&scratch);
        result
    }));
    trials.push(Trial::test("book::the_chapter_shows_the_kernels_the_choice_and_the_results", || {
        let text = std::fs::read_to_string(root().join("book/rows.md"))?;
        let wanted = ["{{#include generated/rows.md}}", "{{#include generated/rows_chart.md}}", "13_rows.cu:warp}}", "13_rows.cu:block}}",
            "13_rows.cu:split}}", "13_rows.cu:span_sum}}", "rows.rs:choose}}", "```rust,gpu"];
        let missing: Vec<&str> = wanted.into_iter().filter(|w| !text.contains(w)).collect();
        if missing.is_empty() { Ok(()) } else { Err(format!("book/rows.md lacks {missing:?}").into()) }
    }));
    trials.push(Trial::test("gpu_host::the_script_runs_the_rows_tests_and_benchmark", || {
        let script = std::fs::read_to_string(root().join("tests/gpu-host.sh"))?;
        for needle in ["has rows", "$B/tests/test-rows", "$B/bin/reduction rows-bench --out", "$B/tests/test-tile_languages", "$OUT/rows/tile"] {
            if !script.contains(needle) {
                return Err(format!("tests/gpu-host.sh has no `{needle}`").into());
            }
        }
        Ok(())
    }));
}

fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

fn main() {
    let mut trials = Vec::new();
    host_trials(&mut trials);
    gpu_trials(&mut trials);
    common::run(trials)
}
