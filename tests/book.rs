//! The book itself: every listing it includes exists, every chapter is reachable, every kernel
//! file is registered (so tested and benchmarked), and `mdbook build` leaves nothing unexpanded.
//! None of this needs a GPU.

mod common;

use libtest_mimic::{Completion, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

fn chapters() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("book"))
        .expect("book/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    out.sort();
    out
}

/// Every `{{#include path[:anchor]}}` in `text`, as (path, anchor).
fn includes(text: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{#include ") {
        let after = &rest[start + "{{#include ".len()..];
        let end = after.find("}}").unwrap_or(after.len());
        let spec = after[..end].trim();
        let (path, anchor) = match spec.split_once(':') {
            Some((p, a)) => (p.to_string(), Some(a.to_string())),
            None => (spec.to_string(), None),
        };
        found.push((path, anchor));
        rest = &after[end..];
    }
    found
}

fn check_includes(chapter: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(chapter)?;
    let mut problems = Vec::new();
    for (path, anchor) in includes(&text) {
        let file = chapter.parent().unwrap().join(&path);
        let Ok(target) = std::fs::read_to_string(&file) else {
            problems.push(format!("includes {path}, which does not exist"));
            continue;
        };
        // Line-number ranges are not used: listings are pulled by anchor so they cannot drift.
        // Anchors are comments: `// ANCHOR: x` in CUDA and Rust, `# ANCHOR: x` in Python.
        if let Some(anchor) = anchor.filter(|a| !a.chars().next().is_some_and(|c| c.is_ascii_digit())) {
            let has = |marker: &str| target.lines().any(|l| l.trim_start().trim_start_matches("//").trim_start_matches('#').trim() == format!("{marker}: {anchor}"));
            if !has("ANCHOR") || !has("ANCHOR_END") {
                problems.push(format!("includes {path}:{anchor}, but that file has no ANCHOR/ANCHOR_END pair named {anchor}"));
            }
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("{}: {}", chapter.display(), problems.join("; ")).into()) }
}

fn summary_links() -> Vec<String> {
    let summary = std::fs::read_to_string(root().join("book/SUMMARY.md")).expect("book/SUMMARY.md");
    summary
        .split("](")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap().to_string())
        .filter(|link| !link.is_empty())
        .collect()
}

fn mdbook_build() -> Result<Completion, Failed> {
    let required = std::env::var("REQUIRE_MDBOOK").is_ok_and(|v| v == "1");
    let version = Command::new("mdbook").arg("--version").output();
    let Ok(version) = version else {
        if required {
            return Err("REQUIRE_MDBOOK=1 but `mdbook` is not on PATH".into());
        }
        return Ok(Completion::ignored_with("`mdbook` is not on PATH (cargo install mdbook --version 0.5.4 --locked)"));
    };
    eprintln!("{}", String::from_utf8_lossy(&version.stdout).trim());
    let dest = std::env::temp_dir().join(format!("reduction-book-test-{}", std::process::id()));
    let output = Command::new("mdbook").arg("build").arg("--dest-dir").arg(&dest).arg(root()).output()?;
    if !output.status.success() {
        return Err(format!("mdbook build failed:\n{}", String::from_utf8_lossy(&output.stderr)).into());
    }
    // mdBook leaves a directive it could not expand in the page and still exits 0.
    let mut unexpanded = Vec::new();
    for page in std::fs::read_dir(&dest)?.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "html")) {
        let html = std::fs::read_to_string(&page)?;
        if html.contains("{{#") {
            unexpanded.push(page.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    let _ = std::fs::remove_dir_all(&dest);
    if unexpanded.is_empty() { Ok(Completion::Completed) } else { Err(format!("unexpanded directives in {unexpanded:?}").into()) }
}

/// The mistakes chapter explains why mistake 1 (a barrier inside `if (tid < s)`) gave the right
/// sum and why synccheck said nothing; that explanation stands only while the data says so.
fn mistake_1_gave_right_sums_and_synccheck_no_errors() -> Result<(), Failed> {
    let data = root().join("plots/data");
    let gpu = std::fs::read_to_string(data.join("book-gpu.txt"))?.trim().to_string();
    let csv = std::fs::read_to_string(data.join("mistakes").join(format!("{gpu}.csv")))?;
    let header = csv.lines().find(|l| l.starts_with("mistake,")).ok_or("the mistakes CSV has no column names")?;
    let column = |name: &str| header.split(',').position(|c| c == name).ok_or(format!("no column {name}"));
    let (outcome, wrong) = (column("outcome")?, column("wrong_runs")?);
    let row: Vec<&str> = csv.lines().find(|l| l.starts_with("sync_in_branch,")).ok_or("mistake 1 was not run")?.split(',').collect();
    if row[outcome] != "correct" || row[wrong] != "0" {
        return Err(format!("mistake 1 on {gpu}: outcome {}, {} wrong runs; book/mistakes.md explains right sums", row[outcome], row[wrong]).into());
    }
    let log = std::fs::read_to_string(data.join("sanitizer/synccheck-sync_in_branch.log"))?;
    if !log.lines().any(|l| l.trim_start_matches('=').trim() == "ERROR SUMMARY: 0 errors") {
        return Err("synccheck-sync_in_branch.log does not report 0 errors; book/mistakes.md says synccheck stayed silent".into());
    }
    Ok(())
}

/// Chapter 9 says the block and unroll sweep (`plots/data/tuning/`) found 1024 threads best for
/// the largest inputs, 256 or 512 for the small ones, and four 16-byte loads in flight within a
/// percent of eight, for every 16-byte kernel. Each line of the summary reads
/// `kernel  2^k  best  T us (uU-bB); uU-bB:T uU-bB:T ...`, the fastest first.
fn tuning_supports_the_block_and_unroll_choice() -> Result<(), Failed> {
    let data = root().join("plots/data/tuning");
    let gpu = std::fs::read_to_string(root().join("plots/data/book-gpu.txt"))?.trim().to_string();
    let text = std::fs::read_to_string(data.join(format!("{gpu}-unroll-and-block.txt")))?;
    let sixteen_byte = ["reduce9", "reduce10_atomic", "reduce10_last_block", "reduce11", "reduce11_grid", "reduce12"];
    let mut problems = Vec::new();
    let mut checked = 0;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(kernel), Some(size)) = (words.next(), words.next()) else { continue };
        if !sixteen_byte.contains(&kernel) {
            continue;
        }
        let Some((_, ranked)) = line.split_once("; ") else { continue };
        // (unroll, block, µs), fastest first.
        let configs: Vec<(u32, u32, f64)> = ranked.split_whitespace().filter_map(|c| {
            let (config, us) = c.split_once(':')?;
            let (u, b) = config.strip_prefix('u')?.split_once("-b")?;
            Some((u.parse().ok()?, b.parse().ok()?, us.parse().ok()?))
        }).collect();
        let Some(&(_, best_block, best_us)) = configs.first() else { continue };
        checked += 1;
        match size {
            "2^28" | "2^30" if best_block != 1024 => problems.push(format!("{kernel} {size}: best block {best_block}, not 1024")),
            "2^16" if best_block > 512 => problems.push(format!("{kernel} {size}: best block {best_block}, not 256 or 512")),
            _ => {}
        }
        if matches!(size, "2^28" | "2^30") {
            match configs.iter().find(|(u, ..)| *u == 4) {
                Some((_, _, us)) if *us <= 1.01 * best_us => {}
                _ => problems.push(format!("{kernel} {size}: no four-load configuration within 1 % of the best ({best_us} µs)")),
            }
        }
    }
    if checked == 0 {
        return Err("no 16-byte kernel in the tuning summary: this check would prove nothing".into());
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("book/09_vectorized.md says otherwise: {}", problems.join("; ")).into()) }
}

/// Chapter 18 says that from rows of 2^15 f32 values LayerNorm falls behind softmax, and RMSNorm
/// from 2^16, and that in the profiled LayerNorm neither DRAM nor L2 is near busy; chapter 17,
/// that softmax's planner takes a cluster of two 512s for bf16 rows of 2^16 because it was faster
/// than one block of 1024 in the same run, and clusters of 16 at 2^18 f32 values. All of it stands only while the data says so.
fn norms_long_rows_and_the_softmax_cluster_as_the_chapters_say() -> Result<(), Failed> {
    let data = root().join("plots/data");
    let gpu = std::fs::read_to_string(data.join("book-gpu.txt"))?.trim().to_string();
    let (_, rows) = reduction::records::dl::read_csv::<reduction::records::dl::DlRow>(&data.join("dl").join(format!("{gpu}.csv")))?;
    let speed = |kernel: &str, dtype: &str, cols: usize| -> Result<f64, Failed> {
        let m = (1usize << 28) / cols;
        let r = rows.iter().find(|r| r.kernel == kernel && r.dtype.name() == dtype && r.n == cols && r.rows == m)
            .ok_or(format!("no {kernel} {dtype} {m} x {cols} in the dl data"))?;
        Ok(r.gbps())
    };
    let mut problems = Vec::new();
    for k in 14..=18 {
        let softmax = speed("dl_softmax", "f32", 1 << k)?;
        for (op, from) in [("dl_layer_norm", 15), ("dl_rms_norm", 16)] {
            let ratio = speed(op, "f32", 1 << k)? / softmax;
            if k >= from && ratio > 0.97 {
                problems.push(format!("{op} f32 2^{k} at {ratio:.3} of softmax's speed: not behind"));
            }
            if k < from && ratio < 0.99 {
                problems.push(format!("{op} f32 2^{k} at {ratio:.3} of softmax's speed: behind already"));
            }
        }
    }
    if speed("dl_softmax", "bf16", 1 << 16)? <= speed("dl_softmax_wide_block", "bf16", 1 << 16)? {
        problems.push("softmax bf16 2^16: the planner's cluster is not faster than one block of 1024".into());
    }
    // Chapter 17 (and plan::cluster_for): at 2^18 f32 values the planner takes the non-portable
    // cluster of 16 × 512 over the portable 8 × 1024, and for softmax backward 16 × 1024 over
    // co-resident blocks, both measured in the same run.
    for op in ["softmax", "log_softmax", "layer_norm", "rms_norm"] {
        let planned = rows.iter().find(|r| r.kernel == format!("dl_{op}") && r.dtype.name() == "f32" && r.n == 1 << 18).map(|r| r.title.as_str()).unwrap_or("");
        if !planned.contains(&format!("[{op}_cluster16x8_f32]")) {
            problems.push(format!("{op} f32 2^18: the planner's row is not the cluster of 16 ({planned})"));
        }
        if speed(&format!("dl_{op}"), "f32", 1 << 18)? <= speed(&format!("dl_{op}_wide_block"), "f32", 1 << 18)? {
            problems.push(format!("{op} f32 2^18: the cluster of 16 × 512 is not faster than 8 × 1024"));
        }
    }
    if speed("dl_softmax_bwd", "f32", 1 << 18)? <= speed("dl_softmax_bwd_split", "f32", 1 << 18)? {
        problems.push("softmax backward f32 2^18: the cluster of 16 is not faster than co-resident blocks".into());
    }
    let ncu = std::fs::read_to_string(data.join("dl/experiments").join(format!("{gpu}-staged-ncu.txt")))?;
    let cluster = ncu.split("=== ncu layer_norm_cluster").nth(1).ok_or("no profile of today's LayerNorm cluster")?;
    let metric = |section: &str, name: &str| -> Result<f64, Failed> {
        let line = section.lines().find(|l| l.trim_start().starts_with(name)).ok_or(format!("no {name} in the profile"))?;
        Ok(line.split_whitespace().last().unwrap_or("").parse()?)
    };
    for name in ["DRAM Throughput", "L2 Cache Throughput"] {
        let busy = metric(cluster, name)?;
        if busy > 75.0 {
            problems.push(format!("today's LayerNorm cluster: {name} {busy}%, near busy"));
        }
    }
    // ... and that the staged kernel kept fewer warps than today's.
    let staged = ncu.split("=== ncu layer_norm_staged").nth(1).and_then(|s| s.split("=== ncu").next()).ok_or("no profile of the staged LayerNorm")?;
    if metric(staged, "Achieved Occupancy")? >= metric(cluster, "Achieved Occupancy")? {
        problems.push("the staged LayerNorm kept as many warps as today's".into());
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("book/dl_norms.md or dl_softmax.md says otherwise: {}", problems.join("; ")).into()) }
}

/// Chapter 18: where the strips outnumber one wave (rows of 2^17 and 2^18 values), one chunk a
/// strip was faster at some cases and slower at others than 8 blocks an SM (so the plan keeps the
/// rule before there); below, one wave was not slower by more than the noise at any case.
fn the_column_plans_as_chapter_18_says() -> Result<(), Failed> {
    use reduction::records::dl::{self as records, DlRow};
    let data = root().join("plots/data");
    let gpu = std::fs::read_to_string(data.join("book-gpu.txt"))?.trim().to_string();
    let [eight, wave] = records::columns_wave_files(&data, &gpu);
    let read = |path| -> Result<Vec<DlRow>, Failed> {
        Ok(records::read_csv::<DlRow>(path)?.1.into_iter().filter(|r| r.kernel == records::kernel_name("layer_norm_bwd_gamma_beta")).collect())
    };
    let (eight, wave) = (read(&eight)?, read(&wave)?);
    let (mut faster, mut slower, mut problems) = (0, 0, Vec::new());
    // The table compares the cases both plans ran (the one-wave call also ran the LLM shapes).
    for a in &wave {
        let Some(b) = eight.iter().find(|b| (b.dtype, b.rows, b.n) == (a.dtype, a.rows, a.n)) else { continue };
        let gain = b.median_us / a.median_us - 1.0;
        if a.n >= 1 << 17 {
            if gain > 0.0 { faster += 1 } else { slower += 1 }
        } else if gain < -0.01 {
            problems.push(format!("one wave {:.1}% slower at {} {}×{}", -gain * 100.0, a.dtype, a.rows, a.n));
        }
    }
    if faster == 0 || slower == 0 {
        problems.push(format!("rows of 2^17 and 2^18: one chunk a strip faster at {faster}, slower at {slower} cases"));
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("book/dl_norms.md says otherwise: {}", problems.join("; ")).into()) }
}

/// choose.rs's rule for the staged blocks (LayerNorm's and RMSNorm's rows of 257 to 1024 packs),
/// from the runs by turns it cites: the staged blocks faster than the earlier team in both rounds
/// at as many cases as it says, the same time (within 0.1%) at the others, every case inside the
/// rule's lengths, and the means it quotes.
fn the_staged_blocks_rule_as_choose_rs_says() -> Result<(), Failed> {
    use reduction::kernels::dl::plan::{packs, LANES_MAX_PACKS, STAGED_MAX_PACKS};
    let rules = std::fs::read_to_string(root().join("src/kernels/dl/choose.rs"))?;
    let dir = root().join("plots/data/dl/experiments/staged-blocks");
    // (op, type, rows, cols) -> (the earlier team's medians, the staged blocks' medians)
    type Case = (String, String, usize, usize);
    let mut cases: std::collections::BTreeMap<Case, (Vec<f64>, Vec<f64>)> = Default::default();
    let mut problems = Vec::new();
    for call in ["s57-call1", "s57-call3"] {
        if !rules.contains(call) {
            problems.push(format!("choose.rs no longer cites {call}: update this test"));
        }
        for entry in std::fs::read_dir(dir.join(format!("nvidia-h100-80gb-hbm3-{call}")))? {
            let path = entry?.path();
            let stem = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
            let before = stem.starts_with("before-");
            if !(before || stem.starts_with("staged-")) || path.extension().is_none_or(|e| e != "csv") {
                continue;
            }
            let (_, rows) = reduction::records::dl::read_csv::<reduction::records::dl::DlRow>(&path)?;
            for r in rows.iter().filter(|r| r.kernel.starts_with("dl_") && r.status == reduction::records::bench::Status::Correct) {
                // The earlier team's runs also timed shapes the staged blocks were not run at.
                let times = cases.entry((r.op.clone(), r.dtype.name().to_string(), r.rows, r.n)).or_default();
                if before { times.0.push(r.median_us) } else { times.1.push(r.median_us) }
            }
        }
    }
    cases.retain(|_, (_, staged)| !staged.is_empty());
    let (mut faster, mut same) = (0, Vec::new());
    let mean = |t: &[f64]| t.iter().sum::<f64>() / t.len() as f64;
    for ((op, dtype, m, n), (before, staged)) in &cases {
        if before.len() != 2 || staged.len() != 2 {
            problems.push(format!("{op} {dtype} {m}x{n}: {} rounds of the earlier team, {} of the staged blocks", before.len(), staged.len()));
        } else if staged.iter().all(|s| before.iter().all(|b| s < b)) {
            faster += 1;
        } else if (mean(staged) / mean(before) - 1.0).abs() <= 0.001 {
            same.push(format!("{} against {}", format_args!("{:.2}", mean(staged)), format_args!("{:.2}", mean(before))));
        } else {
            problems.push(format!("{op} {dtype} {m}x{n}: staged {staged:?} neither faster in both rounds than {before:?} nor the same time"));
        }
        let dtype = reduction::element::Dtype::parse(dtype).ok_or("a type")?;
        let p = packs(dtype, *n as u64);
        if p <= LANES_MAX_PACKS || p > STAGED_MAX_PACKS {
            problems.push(format!("{op} {dtype} {m}x{n}: outside the rule's lengths"));
        }
    }
    if !rules.contains(&format!("Faster in both rounds at {faster} of {} cases", cases.len())) {
        problems.push(format!("faster in both rounds at {faster} of {} cases: not what choose.rs says", cases.len()));
    }
    for quote in &same {
        if !rules.contains(&format!("the same time ({quote})")) {
            problems.push(format!("choose.rs does not say the same time ({quote})"));
        }
    }
    for (op, dtype, m, n) in [("layer_norm", "bf16", 4096, 4096), ("rms_norm", "f32", 65536, 4096)] {
        match cases.get(&(op.to_string(), dtype.to_string(), m, n)) {
            Some((before, staged)) => {
                let quote = format!("{:.2} against {:.2}", mean(staged), mean(before));
                if !rules.contains(&quote) {
                    problems.push(format!("{op} {dtype} {m}x{n}: choose.rs does not quote the means ({quote})"));
                }
            }
            None => problems.push(format!("{op} {dtype} {m}x{n}: not measured")),
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("src/kernels/dl/choose.rs says otherwise: {}", problems.join("; ")).into()) }
}

/// 18_norms.cu's reason for the norms' lanes without the test per pack, and dl_softmax.md's
/// sentence on the staged-lanes switch, from the data they cite
/// (`plots/data/dl/experiments/norms-lanes/`, `plots/data/dl/ncu/`): the instructions it quotes,
/// the H200's issue slots, the untested build faster in both rounds at every case, and the
/// switch faster at every f32 case and slower at as many bf16 ones as the chapter says.
fn the_norms_lanes_rule_as_18_norms_cu_says() -> Result<(), Failed> {
    let kernel = std::fs::read_to_string(root().join("kernels/18_norms.cu"))?;
    let chapter = std::fs::read_to_string(root().join("book/dl_softmax.md"))?;
    let dir = root().join("plots/data/dl/experiments/norms-lanes");
    let mut problems = Vec::new();
    // The instructions of one launch, from call 1's printed summary (both builds, one call).
    let summary = std::fs::read_to_string(dir.join("nvidia-h100-80gb-hbm3-s58-call1/ln-ncu.txt"))?;
    let count = |variant: &str| -> Option<f64> {
        let line = summary.lines().find(|l| l.trim_start().starts_with(&format!("layer_norm_bf16_1048576x256-{variant}:")))?;
        let after = &line[line.find("Executed Instructions inst ")? + "Executed Instructions inst ".len()..];
        after.split(';').next()?.replace(',', "").trim().parse().ok()
    };
    match (count("plain"), count("untested")) {
        (Some(plain), Some(untested)) => {
            let quote = format!("{:.0}% fewer instructions at LayerNorm bf16 2^20 × 256", (1.0 - untested / plain) * 100.0);
            if !kernel.contains(&quote) {
                problems.push(format!("18_norms.cu does not say \"{quote}\""));
            }
        }
        _ => problems.push("call 1's ln-ncu.txt lacks LayerNorm's plain or untested count".into()),
    }
    let profile = std::fs::read_to_string(root().join("plots/data/dl/ncu/layer_norm_bf16_1048576x256.txt"))?;
    let busy: Option<f64> = profile.lines().find(|l| l.trim_start().starts_with("Issue Slots Busy")).and_then(|l| l.split_whitespace().last()?.parse().ok());
    match busy {
        Some(b) if kernel.contains(&format!("the H200's issue slots {b:.0}% busy")) => {}
        other => problems.push(format!("18_norms.cu does not quote the H200's issue slots ({other:?})")),
    }
    // The chapter: "its issue slots the busiest of every profile there".
    for entry in std::fs::read_dir(root().join("plots/data/dl/ncu"))? {
        let text = std::fs::read_to_string(entry?.path())?;
        let other: Option<f64> = text.lines().find(|l| l.trim_start().starts_with("Issue Slots Busy")).and_then(|l| l.split_whitespace().last()?.parse().ok());
        if other.zip(busy).is_some_and(|(o, b)| o > b) {
            problems.push(format!("a profile in plots/data/dl/ncu/ has busier issue slots ({other:?}) than LayerNorm bf16 2^20 × 256's"));
        }
    }
    // "On the H100 the memory, not the instructions, sets these rows' time (... DRAM was busier
    // than the issue slots)": call 1's report of the build with the test.
    let h100 = std::fs::read_to_string(dir.join("nvidia-h100-80gb-hbm3-s58-call1/layer_norm_bf16_1048576x256-plain.txt"))?;
    let value = |key: &str| -> Option<f64> { h100.lines().find(|l| l.trim_start().starts_with(key)).and_then(|l| l.split_whitespace().last()?.parse().ok()) };
    match (value("DRAM Throughput"), value("One or More Eligible")) {
        (Some(dram), Some(issue)) if dram > issue && chapter.replace('\n', " ").contains("DRAM was busier than the issue slots") => {}
        other => problems.push(format!("call 1's H100 profile (DRAM, issue slots) {other:?}, or the chapter's sentence on it, changed")),
    }
    if !chapter.contains("issue slots the busiest of every profile there") {
        problems.push("dl_softmax.md no longer says LayerNorm's issue slots were the busiest: update this test".into());
    }
    // The turns of call 2: `plain`, `untested`, `staged_lanes_untested`, two rounds each.
    let call = dir.join("nvidia-h100-80gb-hbm3-s58-call2");
    type Case = (String, String, usize, usize);
    let mut times: std::collections::BTreeMap<(String, Case), Vec<f64>> = Default::default();
    for variant in ["plain", "untested", "staged_lanes_untested"] {
        for round in 1..=2 {
            let (_, rows) = reduction::records::dl::read_csv::<reduction::records::dl::DlRow>(&call.join(format!("{variant}-{round}.csv")))?;
            for r in rows.iter().filter(|r| r.kernel.starts_with("dl_") && r.status == reduction::records::bench::Status::Correct) {
                times.entry((variant.to_string(), (r.op.clone(), r.dtype.name().to_string(), r.rows, r.n))).or_default().push(r.median_us);
            }
        }
    }
    let faster = |a: &[f64], b: &[f64]| a.iter().all(|x| b.iter().all(|y| x < y));
    let slower = |a: &[f64], b: &[f64]| a.iter().all(|x| b.iter().all(|y| x > y));
    let (mut f32_faster, mut f32_cases, mut bf16_slower, mut bf16_cases) = (0, 0, 0, 0);
    for ((variant, case), plain) in times.iter().filter(|((v, _), _)| v == "plain") {
        let _ = variant;
        let of = |v: &str| times.get(&(v.to_string(), case.clone()));
        match of("untested") {
            Some(u) if faster(u, plain) => {}
            other => problems.push(format!("{case:?}: untested {other:?} not faster in both rounds than plain {plain:?}")),
        }
        if let Some(st) = of("staged_lanes_untested") {
            if case.1 == "f32" {
                f32_cases += 1;
                f32_faster += faster(st, plain) as usize;
            } else {
                bf16_cases += 1;
                bf16_slower += slower(st, plain) as usize;
            }
        }
    }
    let words = ["none", "one", "two", "three", "four", "five", "six", "seven", "eight"];
    let sentence = format!(
        "faster at {} f32 case, slower at {} of the {} bf16 ones",
        if f32_faster == f32_cases { "every".to_string() } else { format!("{f32_faster} of the {f32_cases}") },
        words.get(bf16_slower).copied().unwrap_or("many"),
        words.get(bf16_cases).copied().unwrap_or("many")
    );
    if !chapter.replace('\n', " ").contains(&sentence) {
        problems.push(format!("dl_softmax.md does not say \"{sentence}\""));
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("the norms' lanes: {}", problems.join("; ")).into()) }
}

/// The staged lanes as `kernels/18_norms.cu`, `kernels/dl_rows.cuh` and dl_softmax.md tell them,
/// from session 59's two calls (`plots/data/dl/experiments/norms-lanes/`) and the switches'
/// registers (`registers-sm_90.csv` there): the counts of cases faster or slower in both rounds,
/// the registers quoted, and that only the indices worked out in each row brought them back.
/// The norms' parameters ahead of the write (kernels/18_norms.cu's `ParamAhead`): the counts and
/// ranges its comment and dl_norms.md quote are those of the turns in
/// `plots/data/dl/experiments/switches/norms-ahead/`, and the default takes it where it won.
fn the_parameters_ahead_as_the_kernels_and_the_chapter_say() -> Result<(), Failed> {
    use reduction::book::chapters::dl_norms::ahead_by_default;
    use reduction::records::dl::{read_csv, DlRow};
    let dir = root().join("plots/data/dl/experiments/switches/norms-ahead");
    let flat = |path: &str| -> Result<String, Failed> { Ok(std::fs::read_to_string(root().join(path))?.replace("//", " ").split_whitespace().collect::<Vec<_>>().join(" ")) };
    let (norms, chapter) = (flat("kernels/18_norms.cu")?, flat("book/dl_norms.md")?);
    // (variant, entry, rows, cols) -> the medians of the two rounds.
    let mut times: std::collections::BTreeMap<(String, String, usize, usize), Vec<f64>> = Default::default();
    for variant in ["plain", "norms_ahead"] {
        for round in 1..=2 {
            let (_, rows) = read_csv::<DlRow>(&dir.join(format!("{variant}-{round}.csv")))?;
            for r in rows.iter().filter(|r| r.status == reduction::records::bench::Status::Correct && r.entry().contains("_cluster")) {
                times.entry((variant.to_string(), r.entry().to_string(), r.rows, r.n)).or_default().push(r.median_us);
            }
        }
    }
    // Per group of cluster entries: (cases, faster in both rounds, slower in both, least and most change in %).
    let group = |pick: &dyn Fn(&str) -> bool| {
        let (mut n, mut faster, mut slower, mut changes) = (0, 0, 0, Vec::new());
        for ((v, entry, rows, cols), base) in &times {
            if v != "plain" || !pick(entry) {
                continue;
            }
            let Some(t) = times.get(&("norms_ahead".to_string(), entry.clone(), *rows, *cols)) else { continue };
            n += 1;
            faster += t.iter().all(|x| base.iter().all(|y| x < y)) as usize;
            slower += t.iter().all(|x| base.iter().all(|y| x > y)) as usize;
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            changes.push(((mean(t) / mean(base) - 1.0) * 100.0).abs());
        }
        changes.sort_by(f64::total_cmp);
        (n, faster, slower, changes.first().copied().unwrap_or(0.0), changes.last().copied().unwrap_or(0.0))
    };
    let rms = group(&|e| e.starts_with("rms_norm") && ahead_by_default(e));
    let ln = group(&|e| e.starts_with("layer_norm") && ahead_by_default(e));
    let spilled = group(&|e| e.starts_with("layer_norm") && !ahead_by_default(e));
    let mut problems = Vec::new();
    if rms.0 == 0 || rms.1 != rms.0 || ln.0 == 0 || ln.1 != ln.0 || spilled.0 == 0 || spilled.2 != spilled.0 {
        problems.push(format!("the default takes the parameters ahead where they did not win in both rounds: RMSNorm {rms:?}, LayerNorm's clusters of 4 {ln:?}, its other clusters {spilled:?}"));
    }
    let sentence = format!(
        "RMSNorm faster in both rounds at all {} of its cluster cases ({:.1}% to {:.1}% on the mean of the rounds), LayerNorm at all {} of its clusters of 4 ({:.1}% to {:.1}%), and slower in both at its {} cluster cases that spill ({:.1}% to {:.1}%)",
        rms.0, rms.3, rms.4, ln.0, ln.3, ln.4, spilled.0, spilled.3, spilled.4
    );
    for (what, text) in [("kernels/18_norms.cu", &norms), ("book/dl_norms.md", &chapter)] {
        if !text.contains(&sentence) {
            problems.push(format!("{what} does not say \"{sentence}\""));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

/// LayerNorm's clusters by two passes (18_norms.cu's `TwoPassRows::cluster`) and the clusters'
/// shorter merge: the default, because by turns against the build before them
/// (`switches/cluster-two-pass/`) LayerNorm's cluster entries were faster in both rounds at every
/// case; 18_norms.cu's comment says so with the data's counts.
fn the_cluster_two_passes_as_the_kernels_say() -> Result<(), Failed> {
    use reduction::book::chapters::turns::{mean, read_turns, rounds, verdict, Verdict};
    use reduction::records::dl::{read_csv, DlRow};
    let dir = root().join("plots/data/dl/experiments/switches/cluster-two-pass");
    let norms = std::fs::read_to_string(root().join("kernels/18_norms.cu"))?.replace("//", " ").split_whitespace().collect::<Vec<_>>().join(" ");
    // A folder's runs, its cases (entry, rows, cols) with `pick`'s entries, and a variant's two rounds of a case.
    let read = |dir: &std::path::Path| read_turns(dir, |f| Ok(read_csv::<DlRow>(f)?.1));
    let correct = |r: &DlRow| r.status == reduction::records::bench::Status::Correct;
    let cases = |runs: &[reduction::book::chapters::turns::Turn<DlRow>], pick: &dyn Fn(&str) -> bool| {
        let mut c: Vec<(String, usize, usize)> = runs.iter().flat_map(|t| &t.rows).filter(|r| correct(r) && pick(r.entry())).map(|r| (r.entry().to_string(), r.rows, r.n)).collect();
        c.sort();
        c.dedup();
        c
    };
    let of = |runs: &[reduction::book::chapters::turns::Turn<DlRow>], variant: &str, case: &(String, usize, usize)| {
        rounds(runs, variant, |r| (correct(r) && (r.entry(), r.rows, r.n) == (case.0.as_str(), case.1, case.2)).then_some(r.median_us))
    };
    let runs = read(&dir)?;
    let ln = |e: &str| e.starts_with("layer_norm_cluster");
    let mut problems = Vec::new();
    let (mut n, mut faster, mut changes) = (0, 0, Vec::new());
    for case in cases(&runs, &ln) {
        let (now, before, alone) = (of(&runs, "plain", &case), of(&runs, "cluster_before", &case), of(&runs, "cluster_merge32", &case));
        if now.len() != 2 || before.len() != 2 {
            continue;
        }
        n += 1;
        faster += (verdict(&now, &before) == Verdict::Faster) as usize;
        changes.push((1.0 - mean(&now) / mean(&before)) * 100.0);
        // The chapter's split of the change (book/dl_norms.md).
        if alone.len() == 2 {
            let (t, b, a) = (mean(&now), mean(&before), mean(&alone));
            if a - t <= b - a {
                problems.push(format!("{case:?}: the shorter merge gave {:.1} µs of the change, the two passes {:.1}: the chapter says the merge gave more", a - t, b - a));
            }
            if case.0.ends_with("_bf16") && a <= b {
                problems.push(format!("{case:?}: the chapter says the two passes alone were slower than the build before at bf16 ({a:.1} against {b:.1} µs)"));
            }
        }
    }
    changes.sort_by(f64::total_cmp);
    if n == 0 || faster != n {
        problems.push(format!("LayerNorm's clusters by two passes are the default, but faster in both rounds at only {faster} of {n} cases"));
    }
    // The other ops' clusters unmoved.
    let others = |e: &str| e.contains("_cluster") && !e.starts_with("layer_norm");
    for (folder, variant) in [(dir.clone(), "cluster_before"), (dir.join("softmax"), "cluster_merge32")] {
        let runs = read(&folder)?;
        for case in cases(&runs, &others) {
            let (base, other) = (of(&runs, "plain", &case), of(&runs, variant, &case));
            if base.len() == 2 && other.len() == 2 && (mean(&other) / mean(&base) - 1.0).abs() >= 0.005 {
                problems.push(format!("{case:?}: {variant} moved {:+.2}% from plain; the chapter says less than half a percent", (mean(&other) / mean(&base) - 1.0) * 100.0));
            }
        }
    }
    let sentence = format!("faster in both rounds at all {n} of its cluster cases ({:.1}% to {:.1}% on the mean of the rounds)",
        changes.first().copied().unwrap_or(0.0), changes.last().copied().unwrap_or(0.0));
    if !norms.contains(&sentence) {
        problems.push(format!("kernels/18_norms.cu does not say \"{sentence}\""));
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

/// RMSNorm's clusters staged by default, LayerNorm's not (18_norms.cu's `ClusterStaged`): the
/// counts and ranges its comment quotes are those of the turns in
/// `plots/data/dl/experiments/switches/cluster-staged/`, RMSNorm's clusters staged were faster in
/// both rounds at most of their cases, and LayerNorm's slower in both at every one.
fn the_staged_clusters_as_the_kernels_say() -> Result<(), Failed> {
    use reduction::book::chapters::dl_norms::{cluster_staged_outcome, gpu_of};
    use reduction::book::chapters::turns::read_turns;
    use reduction::records::dl::{read_csv, DlRow};
    let dir = root().join("plots/data/dl/experiments/switches/cluster-staged");
    let norms = std::fs::read_to_string(root().join("kernels/18_norms.cu"))?.replace("//", " ").split_whitespace().collect::<Vec<_>>().join(" ");
    let runs = read_turns(&dir, |f| Ok(read_csv::<DlRow>(f)?.1))?;
    let (rms, ln) = (cluster_staged_outcome(&runs, "rms_norm", "cluster_staged"), cluster_staged_outcome(&runs, "layer_norm", "cluster_staged"));
    let mut problems = Vec::new();
    if rms.cases == 0 || 2 * rms.faster <= rms.cases {
        problems.push(format!("RMSNorm's clusters are staged by default, but staged they were faster in both rounds at only {} of {} cases", rms.faster, rms.cases));
    }
    if ln.cases == 0 || ln.slower != ln.cases {
        problems.push(format!("LayerNorm's clusters are left unstaged for being slower staged at every case, but were slower in both rounds at {} of {}", ln.slower, ln.cases));
    }
    let sentences = [
        format!("faster in both rounds at {} of its {} cluster cases and slower in both at {} (from {:+.1}% to {:+.1}% on the mean of the rounds)",
            rms.faster, rms.cases, rms.slower, rms.best * 100.0, rms.worst * 100.0),
        format!("were slower in both at all {} (from {:+.1}% to {:+.1}%)", ln.cases, ln.best * 100.0, ln.worst * 100.0),
    ];
    for sentence in sentences {
        if !norms.contains(&sentence) {
            problems.push(format!("kernels/18_norms.cu does not say \"{sentence}\""));
        }
    }
    // LayerNorm's γ alone staged (dl_norms.md): one case lost, at an entry that spills under the
    // switch, timed on the same kind of GPU as the first table.
    let gamma_dir = dir.with_file_name("cluster-staged-gamma");
    let gamma = read_turns(&gamma_dir, |f| Ok(read_csv::<DlRow>(f)?.1))?;
    let outcome = cluster_staged_outcome(&gamma, "layer_norm", "ln_cluster_gamma");
    let spilling: Vec<String> = std::fs::read_to_string(gamma_dir.join("ptxas-sm_90.txt"))?
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("entry,"))
        .filter_map(|l| l.split(',').collect::<Vec<_>>().get(..4).filter(|f| f[2] != "0").map(|f| f[0].to_string()))
        .collect();
    if outcome.lost.len() != 1 || outcome.lost.iter().any(|e| !spilling.contains(e)) {
        problems.push(format!("dl_norms.md says γ alone staged lost one case, at an entry that spills under the switch: lost at {:?}, spilling {spilling:?}", outcome.lost));
    }
    if gpu_of(&dir)? != gpu_of(&gamma_dir)? {
        problems.push("dl_norms.md says the γ-alone call ran on the same kind of GPU as the first".to_string());
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

/// The sanitizers chapter's section on synccheck and clusters of 16: what it says of the trials'
/// logs (`plots/data/sanitizer/cluster16/`) and of the probe's run (`cluster16-probe/summary.txt`).
fn the_cluster16_synccheck_as_the_sanitizers_chapter_says() -> Result<(), Failed> {
    let dir = root().join("plots/data/sanitizer");
    let mut problems = Vec::new();
    // The trials: the error in every log of clusters of 16, none over the clusters of 2, and
    // "all but two" of the trials of 16 failed.
    let read = |name: &str| std::fs::read_to_string(dir.join("cluster16").join(name));
    let (mut sixteen_ok, mut sixteen) = (0, 0);
    for name in ["synccheck-rms_norm__f32__cluster.txt", "synccheck-others-f32-cluster16.txt", "synccheck-rms-f32-cluster16-unstaged.txt"] {
        let text = read(name)?;
        if !text.contains("Barrier error detected. Missing wait.") {
            problems.push(format!("cluster16/{name}: no \"Missing wait\""));
        }
        for line in text.lines().filter(|l| l.contains("::cluster16::")) {
            sixteen += 1;
            sixteen_ok += line.trim_end().ends_with("... ok") as usize;
        }
    }
    if sixteen == 0 || sixteen_ok != 2 {
        problems.push(format!("the chapter says all but two of the trials of clusters of 16 failed: {sixteen_ok} of {sixteen} passed"));
    }
    if !read("synccheck-rms-bf16-cluster.txt")?.contains("ERROR SUMMARY: 0 errors") {
        problems.push("the chapter says synccheck reported nothing over the clusters of 2".to_string());
    }
    // The probe: every plain run right; synccheck's error at C = 16 in every variant, none at 8.
    let summary = std::fs::read_to_string(dir.join("cluster16-probe/summary.txt"))?;
    let (mut plain, mut at16, mut at8) = (0, 0, 0);
    for line in summary.lines() {
        if line.starts_with("plain ") {
            plain += 1;
            if !line.contains(": 0 of ") {
                problems.push(format!("a plain run with wrong values: {line}"));
            }
        } else if line.starts_with("synccheck C=16 ") {
            at16 += 1;
            if !line.contains("Missing wait") {
                problems.push(format!("synccheck at C = 16 without the error: {line}"));
            }
        } else if line.starts_with("synccheck C=8 ") {
            at8 += 1;
            if line.contains("Missing wait") || !line.contains("ERROR SUMMARY: 0 errors") {
                problems.push(format!("synccheck at C = 8 with an error: {line}"));
            }
        }
    }
    // Three variants (parity, token, local) at each size.
    if (plain, at16, at8) != (6, 3, 3) {
        problems.push(format!("summary.txt: {plain} plain runs, {at16} synccheck runs at C = 16, {at8} at C = 8; the chapter shows three variants at each"));
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

fn the_staged_lanes_as_the_kernels_and_the_chapter_say() -> Result<(), Failed> {
    use reduction::records::dl::{read_csv, DlRow};
    let dir = root().join("plots/data/dl/experiments/norms-lanes");
    let chapter = std::fs::read_to_string(root().join("book/dl_softmax.md"))?.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = |path: &str| -> Result<String, Failed> { Ok(std::fs::read_to_string(root().join(path))?.replace("//", " ").split_whitespace().collect::<Vec<_>>().join(" ")) };
    let norms = flat("kernels/18_norms.cu")?;
    let rows_cuh = flat("kernels/dl_rows.cuh")?;
    let mut problems = Vec::new();
    // (op, type, rows, cols) -> a variant's medians, round by round, in one call's folder.
    type Case = (String, String, usize, usize);
    let turns = |call: &str, variants: &[&str]| -> Result<std::collections::BTreeMap<(String, Case), Vec<f64>>, Failed> {
        let mut times: std::collections::BTreeMap<(String, Case), Vec<f64>> = Default::default();
        for variant in variants {
            for round in 1..=2 {
                let (_, rows) = read_csv::<DlRow>(&dir.join(call).join(format!("{variant}-{round}.csv")))?;
                // Only the lanes entries: the switches change nothing else.
                for r in rows.iter().filter(|r| r.kernel.starts_with("dl_") && r.entry().contains("_lanes") && r.status == reduction::records::bench::Status::Correct) {
                    times.entry((variant.to_string(), (r.op.clone(), r.dtype.name().to_string(), r.rows, r.n))).or_default().push(r.median_us);
                }
            }
        }
        Ok(times)
    };
    let faster = |a: &[f64], b: &[f64]| a.iter().all(|x| b.iter().all(|y| x < y));
    let slower = |a: &[f64], b: &[f64]| a.iter().all(|x| b.iter().all(|y| x > y));
    // Per op: (cases, faster in both rounds, slower in both) of `variant` against `base`.
    let counts = |times: &std::collections::BTreeMap<(String, Case), Vec<f64>>, variant: &str, base: &str, op: &str, dtype: Option<&str>| {
        let mut c = (0, 0, 0);
        for ((v, case), b) in times.iter().filter(|((v, case), _)| v == base && case.0 == op && dtype.is_none_or(|d| case.1 == d)) {
            let _ = v;
            if let Some(t) = times.get(&(variant.to_string(), case.clone())) {
                c.0 += 1;
                c.1 += faster(t, b) as usize;
                c.2 += slower(t, b) as usize;
            }
        }
        c
    };
    let words = ["none", "one", "two", "three", "four", "five", "six", "seven", "eight"];
    let word = |n: usize| words.get(n).copied().unwrap_or("many");
    // "all seven" where every case, else "five of seven".
    let share = |n: usize, of: usize| if n == of { format!("all {}", word(of)) } else { format!("{} of {}", word(n), word(of)) };
    let call1 = turns("nvidia-h100-80gb-hbm3-s59-call1", &["plain", "staged_lanes", "staged_lanes_unhoisted"])?;
    let call2 = turns("nvidia-h100-80gb-hbm3-s59-call2", &["plain", "unstaged_lanes"])?;
    let hoisted = counts(&call1, "staged_lanes", "plain", "layer_norm", Some("bf16"));
    if hoisted.0 == 0 || hoisted.2 != hoisted.0 || !chapter.contains("lost at every LayerNorm bf16 case") {
        problems.push(format!("call 1: staged_lanes slower in both rounds at {} of {} LayerNorm bf16 cases, or the chapter no longer says \"lost at every\"", hoisted.2, hoisted.0));
    }
    let (ln, rms) = (counts(&call1, "staged_lanes_unhoisted", "plain", "layer_norm", None), counts(&call1, "staged_lanes_unhoisted", "plain", "rms_norm", None));
    let sentence = format!("in both rounds, at {} of its lanes cases (at f32 2^17 × 2^11 the planner gives the row a block), and RMSNorm's, which stage one parameter, not two, slower in both at {}.", share(ln.1, ln.0), share(rms.2, rms.0));
    if !chapter.contains(&sentence) {
        problems.push(format!("dl_softmax.md does not say \"{sentence}\""));
    }
    // "(at f32 2^17 × 2^11 the planner gives the row a block)": LayerNorm's row there in call 1.
    let (_, plain1) = read_csv::<DlRow>(&dir.join("nvidia-h100-80gb-hbm3-s59-call1/plain-1.csv"))?;
    match plain1.iter().find(|r| r.op == "layer_norm" && r.dtype.name() == "f32" && (r.rows, r.n) == (131_072, 2048)) {
        Some(r) if r.entry().contains("_block") => {}
        other => problems.push(format!("call 1's LayerNorm f32 2^17 × 2^11 is not a block's: {:?}", other.map(|r| r.entry().to_string()))),
    }
    let again = counts(&call2, "plain", "unstaged_lanes", "layer_norm", None);
    let sentence = format!("faster in both rounds at {} lanes cases again", share(again.1, again.0));
    if !chapter.contains(&sentence) {
        problems.push(format!("dl_softmax.md does not say \"{sentence}\""));
    }
    if (ln.1, ln.0) != (again.1, again.0) {
        problems.push(format!("18_norms.cu says the same count in each call: call 1 {ln:?}, call 2 {again:?}"));
    }
    let comment = format!("at {} short-row cases the planner gives lanes, in each of two calls, where staging RMSNorm's γ alone was slower in both at {} (", share(ln.1, ln.0), share(rms.2, rms.0));
    if !norms.contains(&comment) {
        problems.push(format!("18_norms.cu does not say \"{comment}\""));
    }
    // The registers of layer_norm_lanes8_bf16 under each variant.
    let (_, record) = reduction::records::csv::read::<reduction::records::registers::SwitchRegisters>(&dir.join("registers-sm_90.csv"))?;
    let of = |variant: &str| record.iter().find(|r| r.variant == variant && r.entry == "layer_norm_lanes8_bf16").map(|r| (r.registers, r.spill_store_bytes));
    match (of("staged_lanes"), of("unstaged_lanes"), of("staged_lanes_unhoisted"), of("staged_lanes_fenced"), of("staged_lanes_generic"), of("plain")) {
        (Some((staged, spill)), Some((unstaged, _)), Some((unhoisted, 0)), Some((fenced, _)), Some((generic, _)), Some((plain, _))) => {
            let blocks = |r: u32| 65_536 / (r.div_ceil(8) * 8 * 256);
            let quote = format!("took {staged} registers a thread, and spilled, where it takes {unstaged} without the staging");
            if spill == 0 || !chapter.contains(&quote) {
                problems.push(format!("dl_softmax.md does not say \"{quote}\" (spilled {spill} bytes)"));
            }
            let quote = format!("took {staged} registers and spilled where it takes {unhoisted} so ({} blocks of 256 an SM for {}", word(blocks(staged) as usize), word(blocks(unhoisted) as usize));
            if !rows_cuh.contains(&quote) {
                problems.push(format!("dl_rows.cuh does not say \"{quote}\""));
            }
            if fenced <= unhoisted || generic <= unhoisted || unhoisted > unstaged || plain != unhoisted {
                problems.push(format!("registers: fenced {fenced}, generic {generic}, unhoisted {unhoisted}, unstaged {unstaged}, default {plain}: not as the chapter says"));
            }
        }
        other => problems.push(format!("registers-sm_90.csv lacks layer_norm_lanes8_bf16's variants, or unhoisted spills: {other:?}")),
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("the staged lanes: {}", problems.join("; ")).into()) }
}

/// choose.rs's measured rules of 2026-12-03 (softmax's 16-bit rows of up to 16384 packs take a
/// cluster of 8 × 256; RMSNorm's few 16-bit rows of up to 1024 packs take 2 packs a thread), from
/// the forced-team runs in `plots/data/dl/experiments/<gpu>-teams.csv`: the order each comment
/// states, and the means it quotes.
fn the_planner_rules_of_the_teams_runs_as_choose_rs_says() -> Result<(), Failed> {
    let data = root().join("plots/data");
    let gpu = std::fs::read_to_string(data.join("book-gpu.txt"))?.trim().to_string();
    let (_, rows) = reduction::records::dl::read_csv::<reduction::records::dl::DlRow>(&data.join("dl/experiments").join(format!("{gpu}-teams.csv")))?;
    let rules = std::fs::read_to_string(root().join("src/kernels/dl/choose.rs"))?;
    // The mean of every run of `entry` with `block` threads at the case.
    let mean = |op: &str, dtype: &str, m: usize, n: usize, (entry, block): (&str, u32)| -> Result<f64, Failed> {
        let runs: Vec<f64> = rows.iter()
            .filter(|r| r.op == op && r.dtype.name() == dtype && r.rows == m && r.n == n && r.block == block && r.title.contains(&format!("[{entry}]")))
            .map(|r| r.median_us).collect();
        if runs.is_empty() {
            return Err(format!("no run of {entry} × {block} at {op} {dtype} {m}x{n} in the teams file").into());
        }
        Ok(runs.iter().sum::<f64>() / runs.len() as f64)
    };
    let mut problems = Vec::new();
    // (op, type, rows, cols, the team choose.rs names first, the other, whether the first is the
    // faster, whether choose.rs quotes "<first> against <other>" in µs)
    type Team = (&'static str, u32);
    type Claim = (&'static str, &'static str, usize, usize, Team, Team, bool, bool);
    let claims: [Claim; 15] = [
        ("softmax", "bf16", 8192, 128256, ("softmax_cluster8x8_bf16", 256), ("softmax_cluster4x8_bf16", 512), true, true),
        ("log_softmax", "bf16", 8192, 128256, ("log_softmax_cluster8x8_bf16", 256), ("log_softmax_cluster4x8_bf16", 512), true, true),
        ("softmax", "bf16", 2048, 131072, ("softmax_cluster8x8_bf16", 256), ("softmax_cluster4x8_bf16", 512), true, true),
        ("log_softmax", "bf16", 2048, 131072, ("log_softmax_cluster8x8_bf16", 256), ("log_softmax_cluster4x8_bf16", 512), true, true),
        ("softmax", "f32", 4096, 65536, ("softmax_cluster8x8_f32", 256), ("softmax_cluster4x8_f32", 512), false, false),
        ("rms_norm", "bf16", 8192, 128256, ("rms_norm_cluster8x8_bf16", 256), ("rms_norm_cluster4x8_bf16", 512), false, true),
        ("rms_norm", "bf16", 4096, 4096, ("rms_norm_block2_bf16", 256), ("rms_norm_block8_bf16", 64), true, true),
        ("layer_norm", "bf16", 4096, 4096, ("layer_norm_block2_bf16", 256), ("layer_norm_block8_bf16", 64), false, true),
        ("softmax", "bf16", 4096, 4096, ("softmax_block2_bf16", 256), ("softmax_block8_bf16", 64), false, true),
        ("softmax", "f32", 65536, 4096, ("softmax_block2_f32", 512), ("softmax_block8_f32", 128), true, true),
        ("log_softmax", "f32", 65536, 4096, ("log_softmax_block2_f32", 512), ("log_softmax_block8_f32", 128), true, true),
        ("rms_norm", "f32", 65536, 4096, ("rms_norm_block2_f32", 512), ("rms_norm_block8_f32", 128), true, true),
        ("log_softmax", "f32", 4096, 4096, ("log_softmax_block2_f32", 512), ("log_softmax_block8_f32", 128), true, true),
        ("layer_norm", "f32", 65536, 4096, ("layer_norm_block2_f32", 512), ("layer_norm_block8_f32", 128), false, true),
        ("rms_norm", "f32", 131072, 2048, ("rms_norm_block2_f32", 256), ("rms_norm_block8_f32", 64), false, true),
    ];
    for (op, dtype, m, n, first, other, first_faster, quoted) in claims {
        let (a, b) = (mean(op, dtype, m, n, first)?, mean(op, dtype, m, n, other)?);
        if (a < b) != first_faster {
            problems.push(format!("{op} {dtype} {m}x{n}: {} × {} {a:.1} µs against {} × {} {b:.1}: not the order choose.rs states", first.0, first.1, other.0, other.1));
        }
        let quote = format!("{a:.1} against {b:.1}");
        if quoted && !rules.contains(&quote) {
            problems.push(format!("{op} {dtype} {m}x{n}: choose.rs does not quote the teams file's means ({quote})"));
        }
    }
    // The book's own rows (plots/data/dl) were measured with these rules: the planner's team there,
    // and at the long rows faster than the forced cluster of 4 × 512 beside it in the same run.
    let (_, book) = reduction::records::dl::read_csv::<reduction::records::dl::DlRow>(&data.join("dl").join(format!("{gpu}.csv")))?;
    let row = |kernel: &str, m: usize, n: usize| book.iter().find(|r| r.kernel == kernel && r.dtype.name() == "bf16" && r.rows == m && r.n == n);
    for (op, m, n) in [("softmax", 2048, 131072), ("softmax", 8192, 128256), ("log_softmax", 2048, 131072), ("log_softmax", 8192, 128256)] {
        match (row(&format!("dl_{op}"), m, n), row(&format!("dl_{op}_cluster"), m, n)) {
            (Some(planned), Some(forced)) if planned.title.contains(&format!("[{op}_cluster8x8_bf16]")) && planned.block == 256 => {
                if planned.median_us >= forced.median_us {
                    problems.push(format!("{op} bf16 {m}x{n} in the book's data: the planner's 8 × 256 not faster than {}", forced.title));
                }
            }
            _ => problems.push(format!("{op} bf16 {m}x{n} in the book's data: not the planner's cluster of 8 × 256 beside the forced cluster")),
        }
    }
    // Since the staged blocks (choose.rs's STAGED_MAX_PACKS: the norms' rows of 257 to 1024 packs
    // on sm_80 and later), RMSNorm's rows there take them: the book's data, measured again on the
    // H200 in session 60, are theirs.
    if !row("dl_rms_norm", 4096, 4096).is_some_and(|r| r.title.contains("[rms_norm_block4_staged_bf16]")) {
        problems.push("rms_norm bf16 4096x4096 in the book's data: not the planner's staged block".into());
    }
    for op in ["softmax", "log_softmax", "rms_norm"] {
        for m in [65536, 4096] {
            let planned = book.iter().find(|r| r.kernel == format!("dl_{op}") && r.dtype.name() == "f32" && r.rows == m && r.n == 4096);
            let (entry, block) = if op == "rms_norm" { ("rms_norm_block4_staged_f32".to_string(), 256) } else { (format!("{op}_block2_f32"), 512) };
            if !planned.is_some_and(|r| r.title.contains(&format!("[{entry}]")) && r.block == block) {
                problems.push(format!("{op} f32 {m}x4096 in the book's data: not the planner's {entry} × {block} threads"));
            }
        }
    }
    // "the two took the same time": within 1%, 2 packs a thread (blocks of 4 × `block`) against 8.
    for (op, dtype, m, n, block) in [
        ("rms_norm", "bf16", 65536, 4096, 64),
        ("rms_norm", "bf16", 32768, 8192, 128),
        ("rms_norm", "f32", 4096, 4096, 128),
        ("softmax", "f32", 4096, 4096, 128),
        ("softmax", "f32", 131072, 2048, 64),
        ("log_softmax", "f32", 131072, 2048, 64),
    ] {
        let (a, b) = (mean(op, dtype, m, n, (&format!("{op}_block2_{dtype}"), block * 4))?, mean(op, dtype, m, n, (&format!("{op}_block8_{dtype}"), block))?);
        if (a / b - 1.0).abs() > 0.01 {
            problems.push(format!("{op} {dtype} {m}x{n}: 2 packs a thread {a:.1} µs, 8 packs {b:.1}: not the same time"));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("src/kernels/dl/choose.rs says otherwise: {}", problems.join("; ")).into()) }
}

fn main() {
    let mut trials: Vec<Trial> = chapters()
        .into_iter()
        .map(|chapter| {
            let name = format!("includes::{}", chapter.file_name().unwrap().to_string_lossy());
            Trial::test(name, move || check_includes(&chapter))
        })
        .collect();

    trials.push(Trial::test("summary::every_chapter_is_listed_and_every_link_exists", || {
        let links = summary_links();
        let mut problems = Vec::new();
        for link in &links {
            if !root().join("book").join(link).exists() {
                problems.push(format!("SUMMARY.md links {link}, which does not exist"));
            }
        }
        for chapter in chapters() {
            let name = chapter.file_name().unwrap().to_string_lossy().to_string();
            if name != "SUMMARY.md" && !links.contains(&name) {
                problems.push(format!("{name} is not in SUMMARY.md, so no reader can reach it"));
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
    }));

    trials.push(Trial::test("kernels::every_file_is_registered", || {
        let registered: Vec<&str> = reduction::kernels::files().iter().map(|(f, _)| *f).collect();
        let headers: Vec<&str> = reduction::kernels::HEADERS.iter().map(|(h, _)| *h).collect();
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(root().join("kernels"))?.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let is_source = name.ends_with(".cu") || name.ends_with(".cuh");
            if is_source && !registered.contains(&name.as_str()) && !headers.contains(&name.as_str()) {
                missing.push(name);
            }
        }
        // The broken kernels of the mistakes chapter have a registry of their own.
        let broken: Vec<&str> = reduction::mistakes::kernel_files().iter().map(|(f, _)| *f).collect();
        for entry in std::fs::read_dir(root().join("kernels/broken"))?.flatten() {
            let name = format!("broken/{}", entry.file_name().to_string_lossy());
            if (name.ends_with(".cu") || name.ends_with(".cuh")) && !broken.contains(&name.as_str()) {
                missing.push(name);
            }
        }
        if missing.is_empty() { Ok(()) } else { Err(format!("not in src/kernels/registry.rs (or, under broken/, src/kernels/broken/catalogue.rs), so never compiled or tested: {missing:?}").into()) }
    }));

    trials.push(Trial::test("claims::mistake_1_gave_right_sums_and_synccheck_no_errors", mistake_1_gave_right_sums_and_synccheck_no_errors));
    trials.push(Trial::test("claims::tuning_supports_the_block_and_unroll_choice", tuning_supports_the_block_and_unroll_choice));
    trials.push(Trial::test("claims::norms_long_rows_and_the_softmax_cluster_as_the_chapters_say", norms_long_rows_and_the_softmax_cluster_as_the_chapters_say));
    trials.push(Trial::test("claims::the_column_plans_as_chapter_18_says", the_column_plans_as_chapter_18_says));
    trials.push(Trial::test("claims::the_planner_rules_of_the_teams_runs_as_choose_rs_says", the_planner_rules_of_the_teams_runs_as_choose_rs_says));
    trials.push(Trial::test("claims::the_staged_blocks_rule_as_choose_rs_says", the_staged_blocks_rule_as_choose_rs_says));
    trials.push(Trial::test("claims::the_norms_lanes_rule_as_18_norms_cu_says", the_norms_lanes_rule_as_18_norms_cu_says));
    trials.push(Trial::test("claims::the_staged_lanes_as_the_kernels_and_the_chapter_say", the_staged_lanes_as_the_kernels_and_the_chapter_say));
    trials.push(Trial::test("claims::the_parameters_ahead_as_the_kernels_and_the_chapter_say", the_parameters_ahead_as_the_kernels_and_the_chapter_say));
    trials.push(Trial::test("claims::the_cluster_two_passes_as_the_kernels_say", the_cluster_two_passes_as_the_kernels_say));
    trials.push(Trial::test("claims::the_staged_clusters_as_the_kernels_say", the_staged_clusters_as_the_kernels_say));
    trials.push(Trial::test("claims::the_cluster16_synccheck_as_the_sanitizers_chapter_says", the_cluster16_synccheck_as_the_sanitizers_chapter_says));
    trials.push(Trial::ignorable_test("mdbook::build_expands_every_directive", mdbook_build));
    common::run(trials)
}
