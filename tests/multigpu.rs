//! Beyond one GPU: the multi-GPU sum (shards, the book's kernel on each GPU, NCCL across them)
//! and the all-reduce benchmark. With no GPU the GPU trials are ignored with the reason; with
//! a GPU but no NCCL, ignored with that reason (failed under `REQUIRE_GPU=1`); with one GPU the
//! sums run with one rank and say so; with two or more they run on all of them.
//! `REQUIRE_GPUS=N` fails them where fewer than N GPUs are visible. The sharding arithmetic,
//! the bandwidth formulas, the results file and the chart run everywhere.

mod common;

use common::{gpu_required, nccl_trial, trial_seed};
use libtest_mimic::{Completion, Failed, Trial};
use reduction::multigpu::allreduce::{self, AllReduceConfig};
use reduction::records::allreduce::{self as results, AllReduceHeader, AllReduceRow};
use reduction::multigpu::{self, Input, Mode, Ranks, SumOptions, Value};
use reduction::records::rank_totals::Cross;
use reduction::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Every visible GPU, opened once for the whole binary; fewer than `REQUIRE_GPUS` is a failure.
fn ranks() -> Result<&'static Ranks, Failed> {
    static RANKS: OnceLock<Result<Ranks, String>> = OnceLock::new();
    let ranks = RANKS.get_or_init(|| Ranks::open(None).map_err(|e| e.to_string())).as_ref().map_err(|e| Failed::from(e.clone()))?;
    let wanted = common::required_gpus()?;
    if ranks.len() < wanted {
        return Err(format!("REQUIRE_GPUS={wanted} but only {} GPU(s) are visible", ranks.len()).into());
    }
    Ok(ranks)
}

/// The GPU counts a trial runs on: 1, 2, 4, 8 up to every visible GPU, and all of them.
fn rank_counts() -> Result<Vec<usize>, Failed> {
    Ok(multigpu::determinism::rank_counts(ranks()?.len()))
}

/// One multi-GPU trial at a time: two communicators' kernels queued in different orders on two
/// GPUs could wait for each other, and 8 GiB per GPU is enough for one trial.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Sum `n` values on `ranks`, print what happened, and fail on any wrong partial or total.
fn check_sum<T: multigpu::Summable>(ranks: &Ranks, n: usize, input: Input, options: &SumOptions) -> Result<(), Failed> {
    let report = multigpu::sum::<T>(ranks, n, input, options)?;
    eprint!("{}", report.summary());
    if ranks.len() == 1 && report.note.is_none() {
        return Err("one rank, and the report does not say so".into());
    }
    if report.ranks.len() != ranks.len() {
        return Err(format!("{} ranks reported for {} GPUs", report.ranks.len(), ranks.len()).into());
    }
    report.check().map_err(Failed::from)
}

/// Sizes where sharding breaks: nothing, fewer elements than GPUs, one more than a multiple of
/// the GPU count, and sizes no GPU count divides.
fn ragged_sizes(gpus: usize) -> Vec<usize> {
    let mut sizes = vec![0, 1, 2, 3, gpus.saturating_sub(1), gpus + 1, 1000 * gpus + 1, 1_000_003, (3 << 24) + 5];
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

fn gpu_trials(trials: &mut Vec<Trial>) {
    // The headline: 2^31 i32 per GPU (8 GiB each), checked exactly. With two GPUs the total is
    // past the i32 range, which is why the partials are widened to i64 before NCCL adds them.
    trials.push(common::nccl_trial_ignorable("sum::i32_pattern_2^31_per_gpu", |_| {
        let _serial = one_at_a_time();
        let ranks = ranks()?;
        let per_gpu = 1usize << 31;
        // A GPU with less memory is the reader's GPU, not a defect: ignored, with the reason.
        let needs = common::Needs::memory((per_gpu * 4 + (1 << 30)) as u64);
        for gpu in ranks.gpus() {
            if let Some(why) = common::not_on_this_gpu(&needs, gpu.info().architecture(), gpu.memory_at_open() as u64, gpu.memory_cap()) {
                return Ok(libtest_mimic::Completion::ignored_with(format!("GPU {}: {why}", gpu.info().ordinal)));
            }
        }
        check_sum::<i32>(ranks, per_gpu * ranks.len(), Input::Pattern, &SumOptions::default()).map(|()| libtest_mimic::Completion::Completed)
    }));
    trials.push(nccl_trial("sum::i32_pattern_ragged_sizes", |_| {
        let _serial = one_at_a_time();
        let ranks = ranks()?;
        for n in ragged_sizes(ranks.len()) {
            check_sum::<i32>(ranks, n, Input::Pattern, &SumOptions::default()).map_err(|e| format!("n = {n}: {}", e.message().unwrap_or("failed")))?;
        }
        Ok(())
    }));
    // Random reals against the launch's bound, and f32 inputs exact by construction, which must
    // come back bit for bit, on every GPU and in total, past 2^24 values too.
    for (name, dtype, exact) in [("i32", "i32", false), ("f32", "f32", false), ("f32_exact", "f32", true)] {
        let trial = format!("sum::{name}_random_ragged_sizes");
        let seed = trial_seed(&trial);
        trials.push(nccl_trial(trial, move |_| {
            let _serial = one_at_a_time();
            let ranks = ranks()?;
            for n in [1, ranks.len() + 1, 1_000_003, (3 << 24) + 5] {
                let input = if exact { Input::Exact { seed } } else { Input::Random { seed } };
                let checked = match dtype {
                    "i32" => check_sum::<i32>(ranks, n, input, &SumOptions::default()),
                    _ => check_sum::<f32>(ranks, n, input, &SumOptions::default()),
                };
                checked.map_err(|e| format!("n = {n}, seed {seed}: {}", e.message().unwrap_or("failed")))?;
            }
            Ok(())
        }));
    }
    // Every shape of kernel works as the first level: multi-pass, atomics, the last block.
    for kernel in ["reduce9", "reduce10_atomic", "reduce7"] {
        trials.push(nccl_trial(format!("sum::first_level_{kernel}"), move |_| {
            let _serial = one_at_a_time();
            let options = SumOptions { kernel: kernel.into(), ..SumOptions::default() };
            check_sum::<i32>(ranks()?, (1 << 22) + 7, Input::Pattern, &options)
        }));
    }
    trials.push(nccl_trial("sum::one_rank_and_all_ranks_agree_exactly", |_| {
        // i32 on 1, 2, 4, 8 GPUs (up to the host's) and on all of them: one total.
        let _serial = one_at_a_time();
        let n = (1 << 20) + 3;
        let input = Input::Random { seed: trial_seed("one_rank_and_all_ranks") };
        let one = multigpu::sum::<i32>(&Ranks::open(Some(1))?, n, input, &SumOptions::default())?;
        one.check()?;
        for count in rank_counts()? {
            let b = multigpu::sum::<i32>(&Ranks::open(Some(count))?, n, input, &SumOptions::default())?;
            eprint!("{}", b.summary());
            b.check()?;
            if one.ranks[0].total != b.ranks[0].total {
                return Err(format!("one rank gave {}, {count} ranks gave {}", one.ranks[0].total, b.ranks[0].total).into());
            }
        }
        Ok(())
    }));
    trials.push(nccl_trial("errors::more_gpus_than_visible", |_| {
        let visible = ranks()?.visible();
        match Ranks::open(Some(visible + 1)) {
            Err(Error::NoGpu(why)) if why.contains(&format!("asked for {}", visible + 1)) => Ok(()),
            Err(other) => Err(format!("expected NoGpu naming the count, got {other}").into()),
            Ok(_) => Err("opened more GPUs than are visible".into()),
        }
    }));
    trials.push(nccl_trial("errors::shard_too_large_for_the_gpu_stops_every_rank", |_| {
        let _serial = one_at_a_time();
        // 2^40 i32 per GPU (4 TiB): refused before any rank joins NCCL, so none waits for ever.
        let ranks = ranks()?;
        let started = std::time::Instant::now();
        match multigpu::sum::<i32>(ranks, (1usize << 40) * ranks.len(), Input::Pattern, &SumOptions::default()) {
            Err(Error::OutOfMemory { requested_bytes, .. }) if requested_bytes == 1 << 42 => {
                eprintln!("refused in {:.1} s, as expected", started.elapsed().as_secs_f64());
                Ok(())
            }
            Err(other) => Err(format!("expected OutOfMemory for 4 TiB, got {other}").into()),
            Ok(report) => Err(format!("a 4 TiB shard was summed?\n{}", report.summary()).into()),
        }
    }));
    trials.push(nccl_trial("errors::allreduce_benchmark_needs_two_gpus", |_| {
        let one = Ranks::open(Some(1))?;
        match allreduce::run(&one, &AllReduceConfig { max_bytes: 64, progress: false, ..AllReduceConfig::default() }) {
            Err(Error::NoGpu(why)) if why.contains("at least two GPUs") => Ok(()),
            Err(other) => Err(format!("expected NoGpu, got {other}").into()),
            Ok(_) => Err("measured an all-reduce on one GPU".into()),
        }
    }));
    trials.push(Trial::ignorable_test("allreduce::sweep_8_bytes_to_4_mib", || {
        // Needs two GPUs: with one, nothing crosses a link. Ignored with the reason where there
        // are fewer, unless REQUIRE_GPUS asks for them.
        match (common::gpu(), reduction::multigpu::nccl::available()) {
            (Err(_), _) | (_, Err(_)) if !gpu_required() => return Ok(Completion::ignored_with("needs GPUs and NCCL (see the other trials)")),
            _ => {}
        }
        let _serial = one_at_a_time();
        let ranks = ranks()?;
        if ranks.len() < 2 {
            return Ok(Completion::ignored_with(format!("needs two GPUs; {} visible (REQUIRE_GPUS=2 makes this a failure)", ranks.len())));
        }
        let config = AllReduceConfig { max_bytes: 4 << 20, repeats: 5, target_ms: 0.5, progress: true, ..AllReduceConfig::default() };
        let (header, rows) = allreduce::run(ranks, &config)?;
        check_rows(&header, &rows, 20)?;
        let asked = reduction::multigpu::nccl::algorithm_setting()?;
        if header.ranks() != ranks.len() || header.algorithm != asked {
            return Err(format!("the header says {} GPU(s) and {:?}; the run had {} and {asked:?}", header.ranks(), header.algorithm, ranks.len()).into());
        }
        Ok(Completion::Completed)
    }));
    determinism_trials(trials);
}

/// The same input on 1, 2, 4, 8 GPUs: what the CPU works out ([`multigpu::simulate`]) is what
/// the GPUs do, bit for bit.
fn determinism_trials(trials: &mut Vec<Trial>) {
    use reduction::check::reproducible::transcribe_kernel;
    use reduction::multigpu::simulate;
    trials.push(nccl_trial("sum::gathered_is_one_gpus_kernel15_bits_on_every_gpu_count", |_| {
        let _serial = one_at_a_time();
        let seed = trial_seed("gathered_on_every_gpu_count");
        let n = 3 * (1 << 22) + 5; // 769 chunks, the last one 5 values
        let input = Input::Random { seed };
        let xs = simulate::values(input, n);
        let cpu = transcribe_kernel(simulate::KERNEL, &xs, 4).expect("a chunked kernel");
        // Kernel 15 on one GPU over the whole input, as the determinism chapter runs it.
        let gpu0 = &ranks()?.gpus()[0];
        let one = reduction::Reducer::<f32>::new(gpu0, simulate::KERNEL, 256)?.sum_host(&xs)?;
        if one.to_bits() != cpu.to_bits() {
            return Err(format!("kernel 15 on GPU 0 gave {one:?}, its transcription {cpu:?}").into());
        }
        let options = SumOptions { kernel: simulate::KERNEL.into(), mode: Mode::Gathered, ..SumOptions::default() };
        for count in rank_counts()? {
            let report = multigpu::sum::<f32>(&Ranks::open(Some(count))?, n, input, &options)?;
            eprint!("{}", report.summary());
            report.check()?;
            for r in &report.ranks {
                if r.total != Value::F32(cpu) {
                    return Err(format!("{count} GPU(s), seed {seed}: rank {} holds {}, one GPU's kernel 15 gives {cpu:?}", r.rank, r.total).into());
                }
            }
        }
        Ok(())
    }));
    trials.push(nccl_trial("sum::sharded_kernel15_is_what_the_cpu_works_out_on_every_gpu_count", |_| {
        let _serial = one_at_a_time();
        let seed = trial_seed("sharded_on_every_gpu_count");
        let n = 3 * (1 << 22) + 5;
        let input = Input::Random { seed };
        let xs = simulate::values(input, n);
        let options = SumOptions { kernel: simulate::KERNEL.into(), ..SumOptions::default() };
        for count in rank_counts()? {
            let report = multigpu::sum::<f32>(&Ranks::open(Some(count))?, n, input, &options)?;
            eprint!("{}", report.summary());
            report.check()?;
            // Each GPU's sum is its shard's transcription, bit for bit...
            let cpu_partials = simulate::sharded_partials(&xs, simulate::KERNEL, count);
            for (r, cpu) in report.ranks.iter().zip(&cpu_partials) {
                if r.partial != Value::F32(*cpu) {
                    return Err(format!("{count} GPU(s), seed {seed}: rank {} summed {}, the CPU {cpu:?}", r.rank, r.partial).into());
                }
            }
            // ...and where the CPU finds every add across GPUs exact, the total is its total.
            let cpu = simulate::sharded(&xs, simulate::KERNEL, count);
            let total = report.ranks[0].total;
            match cpu.cross {
                Cross::Exact if total != Value::F64(cpu.total) => {
                    return Err(format!("{count} GPU(s), seed {seed}: total {total}, the CPU (every order exact) {:?}", cpu.total).into());
                }
                Cross::Exact => {}
                _ => eprintln!("{count} GPU(s), seed {seed}: some adds across GPUs round; the order NCCL chose decides the last bits ({total})"),
            }
        }
        Ok(())
    }));
    trials.push(nccl_trial("sum::f32_gathered_ragged_sizes", |_| {
        // Nothing, fewer chunks than GPUs, one value short of a chunk, and sizes no chunk
        // count divides: every GPU's total is the transcription's, bit for bit.
        let _serial = one_at_a_time();
        let ranks = ranks()?;
        let seed = trial_seed("f32_gathered_ragged_sizes");
        let options = SumOptions { kernel: simulate::KERNEL.into(), mode: Mode::Gathered, ..SumOptions::default() };
        for n in [0, 1, ranks.len() + 1, (1 << 14) - 1, 1_000_003, (3 << 24) + 5] {
            let input = Input::Random { seed };
            let cpu = transcribe_kernel(simulate::KERNEL, &simulate::values(input, n), 4).expect("a chunked kernel");
            let report = multigpu::sum::<f32>(ranks, n, input, &options)?;
            report.check().map_err(|e| format!("n = {n}, seed {seed}: {e}"))?;
            if report.ranks.iter().any(|r| r.total != Value::F32(cpu)) {
                return Err(format!("n = {n}, seed {seed}: {:?}, the CPU {cpu:?}", report.ranks.iter().map(|r| r.total).collect::<Vec<_>>()).into());
            }
        }
        Ok(())
    }));
    trials.push(nccl_trial("errors::gathered_takes_f32_and_a_chunked_kernel_only", |_| {
        let ranks = ranks()?;
        let gathered = SumOptions { mode: Mode::Gathered, ..SumOptions::default() };
        for (got, why) in [
            (multigpu::sum::<f32>(ranks, 100, Input::Exact { seed: 1 }, &gathered).map(|_| ()), "one sum per chunk"),
            (multigpu::sum::<i32>(ranks, 100, Input::Pattern, &SumOptions { kernel: simulate::KERNEL.into(), ..gathered.clone() }).map(|_| ()), "only f32"),
        ] {
            match got {
                Err(Error::Config { reason, .. }) if reason.contains(why) => {}
                other => return Err(format!("expected a Config error saying {why:?}, got {other:?}").into()),
            }
        }
        Ok(())
    }));
}

/// The rows of a sweep: one per size, doubling from 8 B, times ordered, bandwidths consistent.
fn check_rows(header: &AllReduceHeader, rows: &[AllReduceRow], expected: usize) -> Result<(), Failed> {
    if rows.len() != expected {
        return Err(format!("{} rows, expected {expected}", rows.len()).into());
    }
    for (i, r) in rows.iter().enumerate() {
        if r.bytes != 8 << i || r.count * 4 != r.bytes {
            return Err(format!("row {i}: {} bytes, {} values", r.bytes, r.count).into());
        }
        if !(r.min_us > 0.0 && r.min_us <= r.median_us && r.median_us <= r.max_us && r.max_us.is_finite()) {
            return Err(format!("row {i}: times {} ≤ {} ≤ {} µs do not hold", r.min_us, r.median_us, r.max_us).into());
        }
        let expected_bus = r.algbw_gbps() * results::bus_factor(header.ranks());
        if (r.busbw_gbps(header.ranks()) - expected_bus).abs() > 1e-9 * expected_bus {
            return Err(format!("row {i}: busbw is not algbw × 2(n−1)/n").into());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Host only.

fn sharding_trials(trials: &mut Vec<Trial>) {
    trials.push(Trial::test("shard::every_element_in_exactly_one_shard", || {
        let mut cases: Vec<(usize, usize)> = Vec::new();
        for ranks in 1..=9 {
            cases.extend((0..=40).map(|n| (n, ranks)));
        }
        for (n, ranks) in cases {
            let shards = multigpu::shards(n, ranks);
            let mut seen = vec![0u8; n];
            for s in &shards {
                for i in s.clone() {
                    seen[i] += 1;
                }
            }
            if let Some(i) = seen.iter().position(|&c| c != 1) {
                return Err(format!("n = {n}, {ranks} ranks: element {i} is in {} shards ({shards:?})", seen[i]).into());
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("shard::contiguous_balanced_and_in_rank_order_at_any_size", || {
        for n in [0usize, 1, 7, 1000, (1 << 31) + 4097, (3 << 32) + 1, usize::MAX / 2] {
            for ranks in [1usize, 2, 3, 7, 8, 64] {
                let shards = multigpu::shards(n, ranks);
                let (lo, hi) = (shards.iter().map(|s| s.len()).min().unwrap(), shards.iter().map(|s| s.len()).max().unwrap());
                let contiguous = shards.windows(2).all(|w| w[0].end == w[1].start);
                if shards[0].start != 0 || shards.last().unwrap().end != n || !contiguous || hi - lo > 1 {
                    return Err(format!("n = {n}, {ranks} ranks: {shards:?}").into());
                }
                // Longer shards first, so that with n < ranks the empty ones are the last ranks.
                if shards.windows(2).any(|w| w[0].len() < w[1].len()) {
                    return Err(format!("n = {n}, {ranks} ranks: a later shard is longer: {shards:?}").into());
                }
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("pattern::two_gpus_of_2^31_need_a_wider_total", || {
        let per_gpu = 1u64 << 31;
        let first = multigpu::pattern_sum(0..per_gpu);
        let second = multigpu::pattern_sum(per_gpu..2 * per_gpu);
        let total = multigpu::pattern_sum(0..2 * per_gpu);
        if i32::try_from(first).is_err() || i32::try_from(second).is_err() {
            return Err(format!("each GPU's partial should fit in i32: {first}, {second}").into());
        }
        if i32::try_from(total).is_ok() || first + second != total {
            return Err(format!("the two-GPU total {total} should be past i32 and the sum of {first} and {second}").into());
        }
        Ok(())
    }));
    trials.push(Trial::test("pattern::2^31_per_gpu_on_2_4_and_8_gpus_every_partial_fits_i32", || {
        // The headline test's shards on every GPU count it runs on: each GPU's partial fits the
        // kernel's i32 accumulator, and the partials add up to the whole in i64.
        for gpus in [2u64, 4, 8] {
            let n = gpus << 31;
            let partials: Vec<i64> = multigpu::shards(n as usize, gpus as usize).into_iter().map(|s| multigpu::pattern_sum(s.start as u64..s.end as u64)).collect();
            if let Some(p) = partials.iter().find(|p| i32::try_from(**p).is_err()) {
                return Err(format!("{gpus} GPUs: a partial {p} does not fit i32").into());
            }
            if partials.iter().sum::<i64>() != multigpu::pattern_sum(0..n) || i32::try_from(multigpu::pattern_sum(0..n)).is_ok() {
                return Err(format!("{gpus} GPUs: the partials {partials:?} do not add to the whole, or the whole fits i32").into());
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("busbw::is_algbw_times_2(n-1)/n", || {
        let alg = results::algbw_gbps(1 << 30, 4e-3);
        let cases = [(1usize, 0.0), (2, 1.0), (4, 1.5), (8, 1.75)];
        for (ranks, factor) in cases {
            let bus = results::busbw_gbps(alg, ranks);
            if (bus - factor * alg).abs() > 1e-9 * alg {
                return Err(format!("{ranks} ranks: busbw {bus} for algbw {alg}, expected ×{factor}").into());
            }
        }
        if (alg - 268.435456).abs() > 1e-9 {
            return Err(format!("1 GiB in 4 ms is 268.4 GB/s, not {alg}").into());
        }
        Ok(())
    }));
}

fn sample_header() -> AllReduceHeader {
    AllReduceHeader {
        gpus: vec!["Test GPU".into(), "Test GPU".into()],
        nccl: "2.99.0".into(),
        driver_cuda: "13.0".into(),
        multicast: "NCCL_NVLS_ENABLE=0 (set by this program)".into(),
        date: "2026-01-01".into(),
        command: "reduction multigpu allreduce".into(),
        method: allreduce::METHOD.into(),
        algorithm: results::Algorithm::Default,
    }
}

/// Synthetic rows (never committed as data): a latency floor, then a bandwidth ceiling.
fn sample_rows() -> Vec<AllReduceRow> {
    allreduce::sizes(8, 1 << 30)
        .into_iter()
        .map(|bytes| {
            let us = 10.0 + bytes as f64 / 300e3;
            AllReduceRow { bytes, count: bytes / 4, median_us: us, min_us: us * 0.95, max_us: us * 1.1, repeats: 15, ops_per_repeat: 10 }
        })
        .collect()
}

/// Rows timed exactly by the α–β ring model on `p` GPUs (never committed as data): α = 4 µs and
/// β = 60 GB/s to 1 MiB, then `alpha` and `beta`.
fn model_rows(p: usize, alpha: f64, beta: f64) -> Vec<AllReduceRow> {
    use reduction::records::nccl_model::Shape;
    allreduce::sizes(8, 1 << 30)
        .into_iter()
        .map(|bytes| {
            let (a, b) = if bytes <= 1 << 20 { (4.0, 60.0) } else { (alpha, beta) };
            let us = Shape::Ring.latency_steps(p) as f64 * a + Shape::Ring.busiest_rank_bytes(p, bytes as f64) / (1e3 * b);
            AllReduceRow { bytes, count: bytes / 4, median_us: us, min_us: us, max_us: us, repeats: 15, ops_per_repeat: 10 }
        })
        .collect()
}

/// A scratch project root, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("reduction-multigpu-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn svg_texts(path: &Path) -> Result<Vec<String>, Failed> {
    let xml = std::fs::read_to_string(path)?;
    let doc = roxmltree::Document::parse(&xml).map_err(|e| format!("{} is not well-formed XML: {e}", path.display()))?;
    Ok(doc.descendants().filter(|n| n.has_tag_name("text")).map(|n| n.descendants().filter(|d| d.is_text()).filter_map(|d| d.text()).collect::<String>().trim().to_string()).collect())
}

fn results_trials(trials: &mut Vec<Trial>) {
    trials.push(Trial::test("csv::round_trips_and_refuses_what_it_cannot_read", || {
        let scratch = Scratch::new("csv");
        let path = scratch.0.join(sample_header().file_name());
        results::write_csv(&path, &sample_header(), &sample_rows())?;
        if !path.ends_with("test-gpu-x2.csv") {
            return Err(format!("file name {}", path.display()).into());
        }
        let (header, rows) = results::read_csv(&path)?;
        if header != sample_header() || rows.len() != 28 {
            return Err(format!("read back {header:?} and {} rows", rows.len()).into());
        }
        if (rows[27].median_us - sample_rows()[27].median_us).abs() > 1e-3 {
            return Err("a time changed on the way".into());
        }
        let text = std::fs::read_to_string(&path)?;
        for (broken, why) in [
            (text.replacen("# gpu_count: 2", "# gpu_count: 3", 1), "gpu_count"),
            (text.replacen(",f32,sum,", ",f32,sum,zero,", 1), "fields"),
            (text.replacen("bytes,count", "size,count", 1), "column names"),
        ] {
            match results::parse_csv(&broken) {
                Err(message) if message.contains(why) => {}
                other => return Err(format!("a file with a bad {why} gave {other:?}").into()),
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("render::no_results_no_chart_and_a_note", || {
        let scratch = Scratch::new("empty");
        let written = render_nccl(&scratch.0)?;
        let note = std::fs::read_to_string(scratch.0.join("book/generated/nccl.md"))?;
        // The four tables say what is missing; no chart is drawn.
        if scratch.0.join("plots/nccl.svg").exists() || scratch.0.join("plots/nccl_model.svg").exists() || written.len() != 4 {
            return Err(format!("drew {written:?} with no data").into());
        }
        for (file, wanted) in [("nccl_model.md", "Not yet measured"), ("nccl_ranks.md", "Not yet computed")] {
            let text = std::fs::read_to_string(scratch.0.join("book/generated").join(file))?;
            if !text.contains(wanted) {
                return Err(format!("{file} does not say {wanted:?}:\n{text}").into());
            }
        }
        if !note.contains("Not yet measured") || !note.contains("multigpu allreduce") {
            return Err(format!("the note does not say how to measure:\n{note}").into());
        }
        Ok(())
    }));
    trials.push(Trial::test("render::results_draw_the_chart_and_the_table", || {
        let scratch = Scratch::new("drawn");
        let dir = results::data_dir(&scratch.0);
        results::write_csv(&dir.join("test-gpu-x2.csv"), &sample_header(), &sample_rows())?;
        std::fs::write(dir.join("test-gpu-x2-topo.txt"), "        GPU0    GPU1\nGPU0     X      NV18\n")?;
        render_nccl(&scratch.0)?;
        let texts = svg_texts(&scratch.0.join("plots/nccl.svg"))?;
        for wanted in ["2 × Test GPU: busbw", "2 × Test GPU: algbw (= busbw on 2 GPUs)", "8 B", "1 GiB", "message size (bytes)"] {
            if !texts.iter().any(|t| t == wanted) {
                return Err(format!("the chart does not show {wanted:?}: {texts:?}").into());
            }
        }
        let table = std::fs::read_to_string(scratch.0.join("book/generated/nccl.md"))?;
        let last = &sample_rows()[27];
        for wanted in [
            "{{#include ../../plots/nccl.svg}}".to_string(),
            "| 8 B |".into(),
            "| 1 GiB |".into(),
            format!("{:.2} GB/s", last.busbw_gbps(2)),
            "NV18".into(),
            "NCCL 2.99.0".into(),
        ] {
            if !table.contains(&wanted) {
                return Err(format!("the table does not show {wanted:?}:\n{table}").into());
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("render::measured_runs_replace_predictions_and_say_so", || {
        // A 2-GPU run to fit, then an 8-GPU ring run: its rows and line become "measured", the
        // 4-GPU and 8-GPU-tree rows stay predictions, and every table says which is which.
        let scratch = Scratch::new("model");
        let dir = results::data_dir(&scratch.0);
        let fit_rows = model_rows(2, 5.0, 300.0);
        results::write_csv(&dir.join("test-gpu-x2.csv"), &sample_header(), &fit_rows)?;
        let eight = AllReduceHeader { gpus: vec!["Test GPU".into(); 8], algorithm: results::Algorithm::Ring, ..sample_header() };
        results::write_csv(&dir.join(eight.file_name()), &eight, &model_rows(8, 6.0, 280.0))?;
        render_nccl(&scratch.0)?;
        let model = std::fs::read_to_string(scratch.0.join("book/generated/nccl_model.md"))?;
        let fit = reduction::records::nccl_model::fit(&fit_rows, 2, reduction::records::nccl_model::Shape::Ring, 2)?;
        let beta = fit.regimes[1].beta_gbps;
        for wanted in [
            "| 8 | ring | measured (`test-gpu-x8-ring.csv`) |".to_string(),
            "| 8 | tree | **prediction** |".into(),
            "| 4 | ring | **prediction** |".into(),
            "Predictions, not measurements: 4 GPUs (ring), 4 GPUs (tree), 8 GPUs (tree) are not measured".into(),
            format!("{beta:.1} GB/s"),
        ] {
            if !model.contains(&wanted) {
                return Err(format!("nccl_model.md does not show {wanted:?}:\n{model}").into());
            }
        }
        if (beta - 300.0).abs() > 1e-6 {
            return Err(format!("the fit's β is {beta}, the rows were made with 300").into());
        }
        let published = std::fs::read_to_string(scratch.0.join("book/generated/nccl_published.md"))?;
        for wanted in ["| 8 | ring |", "measured, `test-gpu-x8-ring.csv`", "| 8 | tree |", "**prediction** of the model", "NVLS is not measured", "issues/272", "issues/212"] {
            if !published.contains(wanted) {
                return Err(format!("nccl_published.md does not show {wanted:?}:\n{published}").into());
            }
        }
        let texts = svg_texts(&scratch.0.join("plots/nccl_model.svg"))?;
        for wanted in ["8 GPUs, ring: measured", "8 GPUs, ring: prediction", "8 GPUs, tree: prediction", "2 GPUs: model (fit)", "2 GPUs, NCCL's choice: measured"] {
            if !texts.iter().any(|t| t == wanted) {
                return Err(format!("the model's chart does not show {wanted:?}: {texts:?}").into());
            }
        }
        // The chart of NCCL's own choice leaves the ring run to the model's chart.
        if svg_texts(&scratch.0.join("plots/nccl.svg"))?.iter().any(|t| t.starts_with("8 × Test GPU")) {
            return Err("nccl.svg draws a run of a chosen algorithm".into());
        }
        Ok(())
    }));
    trials.push(Trial::test("render::a_gpu_hosts_totals_are_held_against_the_cpus", || {
        use reduction::records::rank_totals;
        let scratch = Scratch::new("ranks");
        let dir = rank_totals::data_dir(&scratch.0);
        let (header, cpu) = rank_totals::read_csv(&rank_totals::cpu_file(&rank_totals::data_dir(&root())))?;
        rank_totals::write_csv(&rank_totals::cpu_file(&dir), &header, &cpu)?;
        render_nccl(&scratch.0)?;
        let before = std::fs::read_to_string(scratch.0.join("book/generated/nccl_ranks.md"))?;
        if !before.contains("not measured yet") {
            return Err(format!("with no GPU file the table does not say so:\n{before}").into());
        }
        // A host of two GPUs whose sharded 2-GPU random total came out with other bits.
        let mut gpu: Vec<_> = cpu.iter().filter(|r| r.ranks <= 2).cloned().collect();
        let wrong = gpu.iter().position(|r| r.mode == "sharded" && r.ranks == 2).unwrap();
        gpu[wrong].bits = "0x0".into();
        let gpu_header = vec![("source".to_string(), "measured on 2 × Test GPU".to_string()), ("nccl".into(), "2.99.0".into()), ("nccl_algo".into(), "Ring (NCCL_ALGO=Ring)".into())];
        rank_totals::write_csv(&rank_totals::gpu_file(&dir, "Test GPU", 2, results::Algorithm::Ring), &gpu_header, &gpu)?;
        render_nccl(&scratch.0)?;
        let after = std::fs::read_to_string(scratch.0.join("book/generated/nccl_ranks.md"))?;
        let wanted = format!("on 1, 2 GPU(s), {} of {} totals have the CPU's bits", gpu.len() - 1, gpu.len());
        if after.contains("not measured yet") || !after.contains(&wanted) || !after.contains("test-gpu-x2-ring.csv") {
            return Err(format!("the table does not say {wanted:?}:\n{after}").into());
        }
        Ok(())
    }));
    trials.push(Trial::test("render::bad_results_are_an_error_naming_the_file", || {
        let scratch = Scratch::new("bad");
        let dir = results::data_dir(&scratch.0);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("broken-x2.csv"), "nonsense\n")?;
        match render_nccl(&scratch.0) {
            Err(Error::Io { path, .. }) if path.contains("broken-x2.csv") => Ok(()),
            other => Err(format!("expected an error naming broken-x2.csv, got {other:?}").into()),
        }
    }));
}

/// The multi-GPU chapter's files (`nccl.md`, `plots/nccl.svg`), drawn from the data under `root`
/// into `root`, as `bench --plot-only` draws them.
fn render_nccl(root: &Path) -> Result<Vec<PathBuf>, reduction::Error> {
    let context = reduction::book::context::Context::load(root)?;
    reduction::book::render::render_chapter(&context, root, "multigpu.md")
}

fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

/// The committed table is what the committed results draw (tests/plots.rs checks the chart).
fn committed_table_is_current() -> Result<(), Failed> {
    let scratch = Scratch::new("committed");
    let committed = results::data_dir(&root());
    if committed.is_dir() {
        let into = results::data_dir(&scratch.0);
        std::fs::create_dir_all(&into)?;
        for file in std::fs::read_dir(&committed)?.flatten().filter(|f| f.path().is_file()) {
            std::fs::copy(file.path(), into.join(file.file_name()))?;
        }
    }
    if let Some(slug) = reduction::records::book_gpu_slug(&root().join("plots/data")) {
        std::fs::write(scratch.0.join("plots/data").join(reduction::records::BOOK_GPU_FILE), format!("{slug}\n"))?;
    }
    render_nccl(&scratch.0)?;
    let relative = "book/generated/nccl.md";
    let (fresh, old) = (std::fs::read_to_string(scratch.0.join(relative)).ok(), std::fs::read_to_string(root().join(relative)).ok());
    if fresh.as_deref().map(str::trim_end) == old.as_deref().map(str::trim_end) {
        Ok(())
    } else {
        Err(format!("{relative} differs from what plots/data/nccl/ draws; run `cargo run -- bench --plot-only` and commit it").into())
    }
}

fn nccl_trials(trials: &mut Vec<Trial>) {
    trials.push(Trial::test("render::committed_table_and_chart_are_current", committed_table_is_current));
    trials.push(Trial::test("simulate::the_committed_cpu_table_is_what_the_cpu_works_out", || {
        use reduction::records::rank_totals;
        let path = rank_totals::cpu_file(&rank_totals::data_dir(&root()));
        let (_, committed) = rank_totals::read_csv(&path)?;
        let fresh = multigpu::simulate::table();
        if committed != fresh {
            return Err(format!("{} differs from what the simulation works out; run `cargo run -- multigpu determinism --simulate` and commit it", path.display()).into());
        }
        // What the chapter says of it: the gathered totals are one GPU's at every count, the
        // exact input's too, and the sharded random totals are not.
        for r in &fresh {
            let expected = r.mode == "gathered" || r.input == "exact" || r.ranks == 1;
            if r.same_as_one_gpu != expected || r.distinct != 1 {
                return Err(format!("{r:?}").into());
            }
        }
        Ok(())
    }));
    trials.push(Trial::test("nccl::multicast_is_off_unless_the_caller_set_it", || {
        let value = std::env::var(reduction::multigpu::nccl::NVLS_VAR).map_err(|_| "NCCL_NVLS_ENABLE is not set")?;
        match reduction::multigpu::nccl::keep_multicast_off() {
            reduction::multigpu::nccl::Multicast::TurnedOff if value == "0" => Ok(()),
            reduction::multigpu::nccl::Multicast::AlreadySet(v) if v == value => Ok(()),
            other => Err(format!("NCCL_NVLS_ENABLE={value}, but keep_multicast_off says {other:?}").into()),
        }
    }));
    trials.push(Trial::test("nccl::a_missing_library_is_an_error_not_a_panic", || {
        // Either way is right, as long as it is one of these two: loaded and NCCL 2, or
        // Error::NoNccl naming the library to install.
        match reduction::multigpu::nccl::library() {
            Ok(nccl) if nccl.version().0 == 2 => {
                eprintln!("NCCL {} loaded as {}", nccl.version_string(), nccl.name());
                Ok(())
            }
            Ok(nccl) => Err(format!("loaded NCCL {}", nccl.version_string()).into()),
            Err(Error::NoNccl(why)) if why.contains("libnccl.so.2") && !gpu_required() => {
                eprintln!("no NCCL here: {why}");
                Ok(())
            }
            Err(e) => Err(format!("{e}").into()),
        }
    }));
    trials.push(Trial::ignorable_test("nccl::a_communicator_id_needs_no_gpu", || {
        // ncclGetUniqueId only opens a socket: where NCCL loads, it works with or without a GPU.
        match reduction::multigpu::nccl::library() {
            Ok(nccl) => nccl.unique_id().map(|_| Completion::Completed).map_err(|e| e.to_string().into()),
            Err(e) if gpu_required() => Err(e.to_string().into()),
            Err(e) => Ok(Completion::ignored_with(e.to_string())),
        }
    }));
}

fn main() {
    // Before any thread starts: NCCL must never turn NVLink multicast on (reduction::multigpu::nccl).
    reduction::multigpu::nccl::keep_multicast_off();
    let mut trials = Vec::new();
    sharding_trials(&mut trials);
    results_trials(&mut trials);
    nccl_trials(&mut trials);
    gpu_trials(&mut trials);
    common::run(trials)
}
