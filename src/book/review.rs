//! The sentences of the book's second review against its data (issue 24), each generated from
//! what was measured or compiled, never typed:
//!
//! | file in `book/generated/` | chapter | from | function |
//! |---|---|---|---|
//! | `block_300.md` | 1 | kernel 1's and 3's loops, traced on the CPU | [`crate::book::diagrams::block_of_300_sentence`] |
//! | `sass_tree.md` | 1, 2, 6 | `plots/data/sass/sm_90/` | [`sass_tree_sentence`] |
//! | `harris_profile.md` | 1, 4 | `plots/data/ncu/reduce1..7.csv` | [`harris_profile_table`] |
//! | `kernel4_limit.md` | 4 | the benchmark and the profiles | [`kernel4_limit`] |
//! | `reduce8_vs_reduce7.md` | 8 | the benchmark | [`reduce8_vs_reduce7`] |
//! | `redux.md` | 11, 12 | the benchmark, the SASS, `plots/data/experiments/` | [`redux_sentence`] |
//! | `single_pass.md` | 10 | the benchmark, `plots/data/experiments/` | [`single_pass_sentence`] |
//! | `ceiling_shapes.md` | benchmark | the benchmark, `plots/data/read-only/` | [`ceiling_shapes`] |
//! | `sanitizer_coverage.md` | sanitizers | `plots/data/sanitizer/*.log` | [`crate::book::sanitizer::coverage_table`] |
//! | `accuracy_cascade.md` | accuracy | `plots/data/accuracy/` | [`accuracy_cascade`] |

use crate::element::Dtype;
use crate::error::{io_error, Result};
use crate::records::bench::{Cache, Row, Status};
use crate::records::Machine;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Write every file of the table above into `root/book/generated/`.
pub fn render(data_dir: &Path, book: &(Machine, Vec<Row>), root: &Path) -> Result<Vec<PathBuf>> {
    let (machine, rows) = book;
    let slug = crate::records::slug(&machine.gpu);
    let sass = load_sass(&data_dir.join("sass/sm_90"));
    let profiles = load_profiles(&data_dir.join("ncu"));
    let experiments = load_experiments(&data_dir.join("experiments").join(format!("{slug}.csv")));
    let shapes = crate::records::bench::read_csv(&data_dir.join(crate::records::bench::READ_ONLY_SHAPES_DIR).join(format!("{slug}.csv"))).ok().map(|(_, r)| r);
    let accuracy = crate::records::accuracy::read_csv(&data_dir.join("accuracy").join(format!("{slug}.csv"))).ok().map(|(_, m)| m);
    let files: Vec<(&str, String)> = vec![
        ("block_300.md", crate::book::diagrams::block_of_300_sentence()),
        ("sass_tree.md", sass_tree_sentence(&sass)),
        ("harris_profile.md", harris_profile_table(&profiles)),
        ("kernel4_limit.md", kernel4_limit(machine, rows, &profiles)),
        ("reduce8_vs_reduce7.md", reduce8_vs_reduce7(rows)),
        ("redux.md", redux_sentence(rows, &sass, experiments.as_deref())),
        ("single_pass.md", single_pass_sentence(rows, experiments.as_deref())),
        ("ceiling_shapes.md", ceiling_shapes(rows, shapes.as_deref())),
        ("sanitizer_coverage.md", crate::book::sanitizer::coverage_table(&data_dir.join("sanitizer"))),
        ("accuracy_cascade.md", accuracy_cascade(accuracy.as_deref())),
    ];
    let out = root.join("book/generated");
    let mut written = Vec::new();
    for (name, text) in files {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

fn find<'a>(rows: &'a [Row], kernel: &str, dtype: Dtype, n: usize) -> Option<&'a Row> {
    rows.iter().find(|r| r.kernel == kernel && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated)
}

fn p2(n: usize) -> String {
    if n.is_power_of_two() { format!("2^{}", n.trailing_zeros()) } else { n.to_string() }
}

// ---- SASS ---------------------------------------------------------------------------------

/// One instruction of a SASS listing: its address and its text (predicate and opcode first).
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub address: u32,
    pub text: String,
}

impl Instruction {
    /// The opcode with its modifiers (`BAR.SYNC.DEFER_BLOCKING`), the predicate left out.
    pub fn opcode(&self) -> &str {
        let mut words = self.text.split_whitespace();
        let first = words.next().unwrap_or_default();
        if first.starts_with('@') { words.next().unwrap_or_default() } else { first }
    }

    /// The target of a branch (`BRA 0x190`), if this is one.
    fn branch_target(&self) -> Option<u32> {
        if !self.opcode().starts_with("BRA") {
            return None;
        }
        let target = self.text.split_whitespace().last()?.trim_end_matches(';');
        u32::from_str_radix(target.trim_start_matches("0x"), 16).ok()
    }
}

/// Parse the listing `plots/sass.py` writes (`/*0190*/  @!P1 BRA 0x190 ;`).
pub fn parse_sass(text: &str) -> Vec<Instruction> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("/*")?;
            let (address, text) = rest.split_once("*/")?;
            Some(Instruction { address: u32::from_str_radix(address, 16).ok()?, text: text.trim().trim_end_matches(';').trim().to_string() })
        })
        .filter(|i| i.opcode() != "NOP")
        .collect()
}

/// The SASS of every entry point under `dir` (`<entry>.sass`), by entry name.
pub fn load_sass(dir: &Path) -> BTreeMap<String, Vec<Instruction>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "sass") {
            if let (Some(stem), Ok(text)) = (path.file_stem(), std::fs::read_to_string(&path)) {
                out.insert(stem.to_string_lossy().to_string(), parse_sass(&text));
            }
        }
    }
    out
}

/// The instructions of the tree's loop: the first backward branch whose body holds a barrier.
pub fn tree_loop(code: &[Instruction]) -> Option<&[Instruction]> {
    code.iter().enumerate().find_map(|(end, i)| {
        let target = i.branch_target().filter(|t| *t < i.address)?;
        let start = code.iter().position(|j| j.address == target)?;
        let body = &code[start..=end];
        body.iter().any(|j| j.opcode().starts_with("BAR")).then_some(body)
    })
}

/// The instructions of the unsigned division `%` compiles to, in a loop body: from the
/// conversion to float (`I2F.U32.RP`) to the last fix-up before the test of the remainder.
fn modulo_instructions(body: &[Instruction]) -> usize {
    let Some(start) = body.iter().position(|i| i.opcode().starts_with("I2F")) else { return 0 };
    let end = body.iter().rposition(|i| i.opcode().starts_with("LOP3")).unwrap_or(start);
    end + 1 - start
}

/// The instructions between the first two block barriers after the load: one unrolled step.
fn straight_step(code: &[Instruction]) -> Option<usize> {
    let bars: Vec<usize> = code.iter().enumerate().filter(|(_, i)| i.opcode().starts_with("BAR")).map(|(k, _)| k).collect();
    Some(bars.get(1)? - bars.first()?)
}

/// Chapters 1, 2 and 6: what one step of each tree costs in machine instructions.
pub fn sass_tree_sentence(sass: &BTreeMap<String, Vec<Instruction>>) -> String {
    let loop_len = |entry: &str| sass.get(entry).and_then(|c| tree_loop(c)).map(|b| b.len());
    let (Some(k1), Some(k2), Some(k5)) = (loop_len("reduce1_i32"), loop_len("reduce2_i32"), loop_len("reduce5_i32")) else {
        return "*The SASS of kernels 1, 2 and 5 is not in `plots/data/sass/sm_90/` (`python3 plots/sass.py`).*\n".into();
    };
    let modulo = sass.get("reduce1_i32").and_then(|c| tree_loop(c)).map(modulo_instructions).unwrap_or(0);
    let mut s = format!(
        "In the machine code NVRTC writes for `sm_90` (`plots/data/sass/sm_90/`, from `python3 plots/sass.py`; `i32`), one step of \
        kernel 1's tree loop is **{k1} instructions**, {modulo} of them the unsigned division that `tid % (2 * s)` compiles to \
        (`I2F.U32.RP`, `MUFU.RCP`, `F2I`, `IMAD.HI` and fix-ups: the compiler cannot know that `2 * s` is a power of two). Kernel 2's \
        step is **{k2} instructions**. Kernel 5's step of the loop above the last warp is **{k5}**: a shift of `s`, the compare \
        `tid < s` and the loop's own compare and branch around two loads, an add, a store and the barrier."
    );
    match (sass.get("reduce6_b256_i32").and_then(|c| tree_loop(c)), sass.get("reduce6_b256_i32").and_then(|c| straight_step(c))) {
        (None, Some(step)) => write!(
            s,
            " Kernel 6 (`b256`) has no loop left in its tree: each step is **{step} instructions** from barrier to barrier, the `tid < s` \
            test a predicate on the loads and the store rather than a branch; a branch on `tid` remains only where the last warp starts."
        )
        .unwrap(),
        (Some(body), _) => write!(s, " Kernel 6 (`b256`) still has a loop of {} instructions.", body.len()).unwrap(),
        _ => write!(s, " The SASS of kernel 6 is not there.").unwrap(),
    }
    s.push('\n');
    s
}

// ---- Nsight Compute -----------------------------------------------------------------------

/// One kernel's profile: the metrics of `ncu --page raw --csv`, by name, with the launch's
/// element count (from the command recorded beside it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub kernel: String,
    pub metrics: BTreeMap<String, f64>,
}

impl Profile {
    pub fn get(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).copied()
    }

    /// The stall reasons (`smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`:
    /// cycles a warp waited for that reason, per instruction issued), largest first.
    pub fn stalls(&self) -> Vec<(String, f64)> {
        let mut v: Vec<(String, f64)> = self
            .metrics
            .iter()
            .filter_map(|(k, v)| {
                let reason = k.strip_prefix("smsp__average_warps_issue_stalled_")?.strip_suffix("_per_issue_active.ratio")?;
                // "selected" is the cycle a warp issues: no stall.
                (reason != "selected").then(|| (reason.replace('_', " "), *v))
            })
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }
}

/// Parse `ncu --page raw --csv` output: a header row of metric names, a row of units, then one
/// row per profiled kernel (the first is kept). Numbers may carry thousands separators.
pub fn parse_ncu_raw(text: &str, kernel: &str) -> Option<Profile> {
    let start = text.lines().position(|l| l.starts_with("\"ID\""))?;
    let body: String = text.lines().skip(start).collect::<Vec<_>>().join("\n");
    let mut reader = csv::ReaderBuilder::new().has_headers(true).flexible(true).from_reader(body.as_bytes());
    let headers = reader.headers().ok()?.clone();
    let mut records = reader.records().flatten();
    let units = records.next()?;
    let values = records.next()?;
    let mut metrics = BTreeMap::new();
    for ((name, unit), value) in headers.iter().zip(units.iter()).zip(values.iter()) {
        if let Ok(v) = value.replace(',', "").parse::<f64>() {
            metrics.insert(name.to_string(), v * unit_factor(unit));
        }
    }
    Some(Profile { kernel: kernel.to_string(), metrics })
}

/// ncu scales its units to the value (`usecond`, `Mbyte`): back to nanoseconds and bytes.
fn unit_factor(unit: &str) -> f64 {
    match unit {
        "usecond" | "us" => return 1e3,
        "msecond" | "ms" => return 1e6,
        "second" | "s" => return 1e9,
        _ => {}
    }
    // Kbyte, Mbyte, Ginst, ...: a decimal prefix on a lowercase base unit.
    let mut chars = unit.chars();
    let factor = match chars.next() {
        Some('K') => 1e3,
        Some('M') => 1e6,
        Some('G') => 1e9,
        Some('T') => 1e12,
        _ => return 1.0,
    };
    if chars.next().is_some_and(|c| c.is_ascii_lowercase()) { factor } else { 1.0 }
}

/// The profiles of kernels 1 to 7 under `dir` (`reduce<k>.csv`, from `tests/gpu-host.sh ncu`).
pub fn load_profiles(dir: &Path) -> BTreeMap<String, Profile> {
    let mut out = BTreeMap::new();
    for k in 1..=7 {
        let kernel = format!("reduce{k}");
        if let Some(p) = std::fs::read_to_string(dir.join(format!("{kernel}.csv"))).ok().and_then(|t| parse_ncu_raw(&t, &kernel)) {
            out.insert(kernel, p);
        }
    }
    out
}

/// The launch the profiles are of: the first pass of a sum of 2^25 `i32`, blocks of 256.
pub const PROFILED_N: usize = 1 << 25;

const ISSUE_ACTIVE: &str = "smsp__issue_active.avg.pct_of_peak_sustained_active";
const WARP_INSTRUCTIONS: &str = "smsp__inst_executed.sum";
const THREAD_INSTRUCTIONS: &str = "smsp__thread_inst_executed.sum";
const DRAM_READ: &str = "dram__bytes_read.sum";
const DURATION: &str = "gpu__time_duration.sum";

/// Chapters 1 and 4: kernels 1 to 7 under Nsight Compute, one launch each.
pub fn harris_profile_table(profiles: &BTreeMap<String, Profile>) -> String {
    if profiles.is_empty() {
        return "*Not profiled on this GPU yet: kernels 1–7 under Nsight Compute are `tests/gpu-host.sh ncu` (copy `ncu/reduce*.csv` \
            to `plots/data/ncu/`). Until then, what the text says of their instruction costs comes from the SASS alone.*\n".into();
    }
    let mut s = format!(
        "Nsight Compute (`ncu --clock-control none`, `tests/gpu-host.sh ncu`) on the first launch of a sum of {} `i32` values, 256 \
        threads a block. *Issue slots busy*: the share of cycles in which a scheduler issued an instruction; *instructions per \
        element*: warp instructions executed × 32 / n (thread instructions / n in brackets); the stalls: cycles a warp waited for \
        that reason per instruction issued, the two largest.\n\n\
        | kernel | time (µs) | DRAM read (GB/s) | issue slots busy | instructions per element | largest stalls |\n|---|--:|--:|--:|--:|---|\n",
        p2(PROFILED_N)
    );
    for (kernel, p) in profiles {
        let time_us = p.get(DURATION).map(|ns| ns / 1000.0);
        let gbps = match (p.get(DRAM_READ), p.get(DURATION)) {
            (Some(b), Some(ns)) if ns > 0.0 => format!("{:.0}", b / ns),
            _ => "–".into(),
        };
        let per_element = match (p.get(WARP_INSTRUCTIONS), p.get(THREAD_INSTRUCTIONS)) {
            (Some(w), Some(t)) => format!("{:.1} ({:.1})", w * 32.0 / PROFILED_N as f64, t / PROFILED_N as f64),
            _ => "–".into(),
        };
        let stalls: Vec<String> = p.stalls().iter().take(2).map(|(r, v)| format!("{r} {v:.1}")).collect();
        writeln!(s, "| `{kernel}` | {} | {gbps} | {} | {per_element} | {} |",
            time_us.map_or("–".into(), |t| format!("{t:.1}")), p.get(ISSUE_ACTIVE).map_or("–".into(), |v| format!("{v:.1} %")), stalls.join(", ")).unwrap();
    }
    // What the table says, from its own numbers.
    let per = |p: &Profile| p.get(WARP_INSTRUCTIONS).map(|w| w * 32.0 / PROFILED_N as f64);
    let (first, last) = (profiles.values().next(), profiles.values().last());
    if let (Some(a), Some(b)) = (first, last) {
        if let (Some(ia), Some(ib), Some(ba), Some(bb)) = (per(a), per(b), a.get(ISSUE_ACTIVE), b.get(ISSUE_ACTIVE)) {
            let busy: Vec<String> = profiles.iter().filter(|(_, p)| p.get(ISSUE_ACTIVE).is_some_and(|v| v >= 70.0)).map(|(k, _)| format!("`{k}`")).collect();
            write!(s, "\nFrom `{}` to `{}` the instructions per element fall from {ia:.0} to {ib:.1}, and the share of cycles in which a \
                scheduler issues from {ba:.0} % to {bb:.0} %.", a.kernel, b.kernel).unwrap();
            if !busy.is_empty() {
                write!(s, " Where the schedulers issue in 70 % of cycles or more ({}), the instructions are the work, not the bytes.", busy.join(", ")).unwrap();
            }
            if let Some((reason, v)) = b.stalls().first() {
                write!(s, " `{}`'s warps mostly wait: *{reason}*, {v:.0} cycles per instruction issued (for a load, that is memory).", b.kernel).unwrap();
            }
            s.push('\n');
        }
    }
    s
}

/// Chapter 4: what holds kernel 4 back, from the benchmark and, where profiled, Nsight Compute.
pub fn kernel4_limit(m: &Machine, rows: &[Row], profiles: &BTreeMap<String, Profile>) -> String {
    let sizes = [1usize << 22, 1 << 30];
    let pairs: Vec<(usize, &Row, &Row)> = sizes
        .iter()
        .filter_map(|&n| Some((n, find(rows, "reduce4", Dtype::I32, n)?, find(rows, "reduce5", Dtype::I32, n)?)))
        .collect();
    let Some(peak) = m.peak_gbps.filter(|_| pairs.len() == sizes.len()) else {
        return "*Kernels 4 and 5 are not both measured at 2^22 and 2^30 `i32` on this GPU (or its peak is unknown).*\n".into();
    };
    let shares: Vec<String> = pairs.iter().map(|(n, k4, _)| format!("{:.1} % of the theoretical peak at {}", 100.0 * k4.gbps() / peak, p2(*n))).collect();
    let speedups: Vec<String> = pairs.iter().map(|(n, k4, k5)| format!("{:.2}× at {}", k4.median_us / k5.median_us, p2(*n))).collect();
    let mut s = format!(
        "Kernel 4 reads at {} (`i32`, inputs rotated): memory bandwidth is not what holds it back. Kernel 5 changes only the last \
        warp's steps (no loop test, no block-wide barrier) and is faster by {}.",
        shares.join(" and "), speedups.join(" and ")
    );
    match (profiles.get("reduce4"), profiles.get("reduce5")) {
        (Some(p4), Some(p5)) => {
            let per = |p: &Profile| p.get(WARP_INSTRUCTIONS).map(|w| w * 32.0 / PROFILED_N as f64);
            if let (Some(i4), Some(i5)) = (per(p4), per(p5)) {
                write!(s, " Under Nsight Compute (the table below, {} `i32`) kernel 4 executes {i4:.1} instructions per element and kernel 5 \
                    {i5:.1}: {:.0} % fewer.", p2(PROFILED_N), 100.0 * (1.0 - i5 / i4)).unwrap();
                if let Some(busy) = p4.get(ISSUE_ACTIVE) {
                    write!(s, " Kernel 4's schedulers issue an instruction in {busy:.0} % of its cycles: the instructions, not the bytes, fill its time.").unwrap();
                }
            }
            if let (Some(b4), Some(b5)) = (stall(p4, "barrier"), stall(p5, "barrier")) {
                write!(s, " Warps of kernel 4 wait {b4:.1} cycles per issued instruction at barriers, kernel 5's {b5:.1}.").unwrap();
            }
            if let Some((reason, v)) = p4.stalls().first() {
                write!(s, " Kernel 4's largest stall is *{reason}* ({v:.1} cycles per instruction).").unwrap();
            }
        }
        _ => write!(s, " How much of kernel 4's time the steps of the last warp take has not been profiled on this GPU \
            (`tests/gpu-host.sh ncu` profiles kernels 1–7); the speed-up alone does not say it, since kernel 5 also changes the \
            instructions around them.").unwrap(),
    }
    s.push('\n');
    s
}

fn stall(p: &Profile, reason: &str) -> Option<f64> {
    p.get(&format!("smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"))
}

// ---- the benchmark's comparisons ------------------------------------------------------------

/// Whether `a` is slower than `b` beyond the spread of either: `a`'s fastest repeat is slower
/// than `b`'s median, and `a`'s median slower than `b`'s slowest.
fn clearly_slower(a: &Row, b: &Row) -> bool {
    a.min_us > b.median_us && a.median_us > b.max_us
}

/// Chapter 8: kernel 8 (every warp in registers) against kernel 7, which it replaces.
pub fn reduce8_vs_reduce7(rows: &[Row]) -> String {
    let sizes = [1usize << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30];
    let mut parts = Vec::new();
    for dtype in [Dtype::F32, Dtype::I32] {
        for &n in &sizes {
            let (Some(k8), Some(k7)) = (find(rows, "reduce8", dtype, n), find(rows, "reduce7", dtype, n)) else { continue };
            let ratio = k8.median_us / k7.median_us;
            let verdict = if clearly_slower(k8, k7) {
                "slower, beyond the spread of either"
            } else if clearly_slower(k7, k8) {
                "faster, beyond the spread of either"
            } else {
                "within the spread of the repeats"
            };
            parts.push(format!("{} {dtype}: {:.2} against {:.2} µs ({ratio:.3}×, {verdict})", p2(n), k8.median_us, k7.median_us));
        }
    }
    if parts.is_empty() {
        return "*Kernels 7 and 8 are not both measured on this GPU.*\n".into();
    }
    format!(
        "Kernel 8 against kernel 7, the one it replaces (medians; *beyond the spread* means that kernel 8's fastest repeat is slower \
        than kernel 7's median and its median slower than kernel 7's slowest repeat, or the other way round): {}.\n",
        parts.join("; ")
    )
}

/// A timing of `plots/data/experiments/<gpu>.csv` (`.gpu-queue` job issue24-profiles, CuPy).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
pub struct Experiment {
    pub experiment: String,
    pub variant: String,
    pub dtype: String,
    pub n: usize,
    pub grid: u32,
    pub block: u32,
    pub ops: usize,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
}

pub fn load_experiments(path: &Path) -> Option<Vec<Experiment>> {
    let text = std::fs::read_to_string(path).ok()?;
    let body: String = text.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
    csv::Reader::from_reader(body.as_bytes()).deserialize().collect::<std::result::Result<Vec<Experiment>, _>>().ok()
}

fn experiment<'a>(e: &'a [Experiment], experiment: &str, variant: &str, dtype: &str, n: usize) -> Option<&'a Experiment> {
    e.iter().find(|x| x.experiment == experiment && x.variant == variant && x.dtype == dtype && x.n == n)
}

fn count(code: Option<&Vec<Instruction>>, opcode: &str) -> Option<usize> {
    code.map(|c| c.iter().filter(|i| i.opcode().starts_with(opcode)).count())
}

/// Chapters 11 and 12: why `reduce11` and `reduce12` are faster than kernel 9 on `i32` at small
/// sizes and not on `f32`: the SASS, the benchmark, and the experiment that swaps only the warp's sum.
pub fn redux_sentence(rows: &[Row], sass: &BTreeMap<String, Vec<Instruction>>, experiments: Option<&[Experiment]>) -> String {
    let mut s = String::new();
    let ratios = |kernel: &str, dtype: Dtype| -> Vec<String> {
        [1usize << 16, 1 << 20, 1 << 24]
            .iter()
            .filter_map(|&n| Some(format!("{:.2}× at {}", find(rows, "reduce9", dtype, n)?.median_us / find(rows, kernel, dtype, n)?.median_us, p2(n))))
            .collect()
    };
    write!(s, "On `i32`, against kernel 9 (its time over theirs): `reduce11` {}, `reduce12` {}; on `f32`: `reduce11` {}, `reduce12` {}.",
        ratios("reduce11", Dtype::I32).join(", "), ratios("reduce12", Dtype::I32).join(", "),
        ratios("reduce11", Dtype::F32).join(", "), ratios("reduce12", Dtype::F32).join(", ")).unwrap();
    let redux = |e: &str| count(sass.get(e), "REDUX");
    let shfl = |e: &str| count(sass.get(e), "SHFL");
    if let (Some(r9), Some(r11), Some(r12), Some(s9), Some(s11), Some(s12f)) =
        (redux("reduce9_i32"), redux("reduce11_i32"), redux("reduce12_b256_i32"), shfl("reduce9_i32"), shfl("reduce11_i32"), shfl("reduce12_b256_f32"))
    {
        write!(s, " The machine code says why (`plots/data/sass/sm_90/`, NVRTC for `sm_90`): for `i32`, `cg::reduce` compiles to \
            `REDUX.SUM.S32` — the hardware's warp-wide integer sum (`redux.sync`, sm_80 and later) — {r11} of them and {s11} shuffles in \
            `reduce11_i32`, and CUB's warp reduction to {r12} in `reduce12_b256_i32`, where kernel 9's `warp_sum` makes {s9} shuffles \
            and {r9} `REDUX`: five `SHFL.DOWN` and five adds for each warp's sum become one instruction. There is no floating-point \
            `REDUX` on this GPU (CUB's float `redux` needs sm_100), so `reduce12_b256_f32` still shuffles ({s12f} `SHFL`) and the `f32` \
            times do not differ. Both libraries choose it in their source: CCCL's `cub/warp/specializations/warp_reduce_shfl.cuh` \
            (`WarpReduceShfl::Reduce` calls `warp_redux`, which `warp_redux.cuh` maps to `__reduce_add_sync` for integers of at most \
            4 bytes; NVIDIA/cccl at 571f2fc3, v3.6.0.dev), and CUDA 13.0's `cooperative_groups/details/reduce.h` \
            (`_redux_is_add_supported`: integral types of at most 4 bytes, `__reduce_add_sync` on sm_80 and later).").unwrap();
    } else {
        write!(s, " The SASS that would say why is not in `plots/data/sass/sm_90/` (`python3 plots/sass.py`).").unwrap();
    }
    match experiments {
        Some(e) => {
            let (mut explained, mut not, mut parts) = (Vec::new(), Vec::new(), Vec::new());
            for n in [1usize << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24] {
                let t = |v: &str| experiment(e, "redux", v, "i32", n);
                let (Some(k9), Some(swap), Some(k11), Some(k12)) = (t("reduce9"), t("reduce9_redux"), t("reduce11"), t("reduce12")) else { continue };
                parts.push(format!("{}: {:.2}, {:.2}, {:.2}, {:.2}", p2(n), k9.median_us, swap.median_us, k11.median_us, k12.median_us));
                // The swap explains the gap where it makes kernel 9 faster beyond the spread and
                // lands within 2 % of cg::reduce's time.
                let faster = swap.max_us < k9.min_us;
                let like_cg = (swap.median_us / k11.median_us - 1.0).abs() < 0.02;
                if faster && like_cg { explained.push(p2(n)) } else { not.push(p2(n)) }
            }
            if !parts.is_empty() {
                write!(s, " To test it, kernel 9 was timed with only its warp sum replaced by `__reduce_add_sync`, beside `reduce11` and \
                    `reduce12` (CuPy, the same two passes and grids, CUDA graphs, inputs rotated; `plots/data/experiments/`; µs for kernel \
                    9, kernel 9 with the swap, `reduce11`, `reduce12`, `i32`): {}.", parts.join("; ")).unwrap();
                let list = |v: &[String]| if v.is_empty() { "no size".to_string() } else { v.join(", ") };
                write!(s, " The swap alone makes kernel 9 faster, beyond the spread of the repeats, and within 2 % of `reduce11`, at {}; \
                    not at {}.", list(&explained), list(&not)).unwrap();
                if !not.is_empty() {
                    write!(s, " Where it does not, this experiment does not show what the benchmark's gap is made of (there the \
                        four differ by fractions of a microsecond, which the benchmark and CuPy's timings do not agree on).").unwrap();
                }
            }
        }
        None => write!(s, " Kernel 9 with only its warp sum replaced by `__reduce_add_sync` has not been timed on this GPU, so that the \
            instruction explains the whole gap is not shown.").unwrap(),
    }
    s.push('\n');
    s
}

/// Chapter 10: what finishing in one launch saved, size by size, and what the memset costs.
pub fn single_pass_sentence(rows: &[Row], experiments: Option<&[Experiment]>) -> String {
    let mut s = String::new();
    for (kernel, what) in [("reduce10_last_block", "The last-block kernel"), ("reduce10_atomic", "The atomic kernel")] {
        let mut faster = Vec::new();
        let mut slower = Vec::new();
        for n in [1usize << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30] {
            for dtype in [Dtype::F32, Dtype::I32] {
                let (Some(k), Some(k9)) = (find(rows, kernel, dtype, n), find(rows, "reduce9", dtype, n)) else { continue };
                let line = format!("{} {dtype} ({:.2} against {:.2} µs)", p2(n), k.median_us, k9.median_us);
                if clearly_slower(k9, k) {
                    faster.push(line);
                } else if clearly_slower(k, k9) {
                    slower.push(line);
                }
            }
        }
        let list = |v: &[String]| if v.is_empty() { "no size".to_string() } else { v.join(", ") };
        write!(s, "{what} is faster than two-pass kernel 9, beyond the spread of the repeats, at {}; slower at {}; at the other sizes \
            measured the two are within the spread. ", list(&faster), list(&slower)).unwrap();
    }
    match experiments {
        Some(e) => {
            let mut parts = Vec::new();
            for n in [1usize << 16, 1 << 20, 1 << 24] {
                let t = |v: &str| experiment(e, "memset", v, "f32", n);
                if let (Some(both), Some(alone), Some(memset)) = (t("memset+reduce10_atomic"), t("reduce10_atomic_alone"), t("memset_alone")) {
                    parts.push(format!("at {}: {:.2} µs with the memset, {:.2} without, {:.2} for the memset alone", p2(n), both.median_us, alone.median_us, memset.median_us));
                }
            }
            if !parts.is_empty() {
                write!(s, "What the zeroing costs inside a graph of back-to-back sums (CuPy, `plots/data/experiments/`; the kernel alone \
                    lets the result accumulate, timed only): {}.", parts.join("; ")).unwrap();
            }
        }
        None => write!(s, "What the memset costs the atomic kernel has not been measured on its own.").unwrap(),
    }
    s.push('\n');
    s
}

/// The benchmark chapter: the read-only kernel's fastest shape at each size, and any sum that
/// was faster than it anyway.
pub fn ceiling_shapes(rows: &[Row], shapes: Option<&[Row]>) -> String {
    let ceilings: Vec<&Row> = rows.iter().filter(|r| r.is_read_only() && r.dtype == Dtype::F32 && r.cache == Cache::Rotated).collect();
    if ceilings.is_empty() {
        return "*The read-only kernel is not measured on this GPU.*\n".into();
    }
    let mut s = String::new();
    let shaped: Vec<(&Row, crate::kernels::ReadOnlyShape)> =
        ceilings.iter().filter_map(|r| Some((*r, crate::kernels::ReadOnlyShape::from_title(&r.title)?))).collect();
    if shaped.is_empty() {
        writeln!(s, "*These results were measured with the read-only kernel at one shape (512 threads × 8 loads, a result zeroed before \
            each launch), before it was measured at every shape: the next `cargo run --release -- bench` measures its 20 shapes.*\n").unwrap();
    } else {
        let count = shapes.map_or(0, |v| v.iter().filter(|r| r.dtype == Dtype::F32 && r.cache == Cache::Rotated).count());
        write!(s, "The read-only kernel's fastest shape at each size (`f32`, of {} shapes measured at each; every shape's time is in \
            `plots/data/read-only/`): ", if count > 0 { count / ceilings.len().max(1) } else { crate::kernels::READ_ONLY_SHAPES.len() }).unwrap();
        let list: Vec<String> = shaped.iter().filter(|(r, _)| r.n.is_power_of_two() && r.n.trailing_zeros() % 2 == 0)
            .map(|(r, sh)| format!("{} {} ({:.2} µs)", p2(r.n), sh.label(), r.median_us)).collect();
        writeln!(s, "{}.\n", list.join(", ")).unwrap();
    }
    // Every correct sum that beat the ceiling of its size, type and cache mode.
    let mut beaten = Vec::new();
    for c in rows.iter().filter(|r| r.is_read_only()) {
        if let Some(best) = rows.iter().filter(|r| r.status == Status::Correct && r.dtype == c.dtype && r.n == c.n && r.cache == c.cache)
            .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
        {
            if best.median_us < c.median_us {
                beaten.push((c, best));
            }
        }
    }
    if beaten.is_empty() {
        writeln!(s, "No sum was faster than the read-only kernel at any size, element type or cache mode measured: it is a ceiling \
            everywhere in this run.").unwrap();
    } else {
        let worst = beaten.iter().map(|(c, b)| (c, b, c.median_us / b.median_us - 1.0)).max_by(|a, b| a.2.total_cmp(&b.2)).unwrap();
        let within = beaten.iter().all(|(c, b)| b.min_us <= c.median_us && c.min_us <= b.max_us && (c.median_us / b.median_us) < 1.01);
        write!(s, "A sum was faster than the read-only kernel at {} of {} measurements (size, type and cache mode); the largest gap: \
            `{}` at {} {} {}, {:.2} µs against {:.2} ({:.1} %).", beaten.len(), rows.iter().filter(|r| r.is_read_only()).count(),
            worst.1.kernel, p2(worst.0.n), worst.0.dtype, worst.0.cache.name(), worst.1.median_us, worst.0.median_us, 100.0 * worst.2).unwrap();
        if within {
            writeln!(s, " Every such gap is under 1 % and within the spread of the repeats: there the read-only kernel and the sum are \
                the same time, and the ceiling is one only to within that.").unwrap();
        } else {
            writeln!(s, " Where a sum beats it by more than the spread, the read-only kernel is no ceiling: the tables' \"% of \
                read-only\" columns then pass 100 %.").unwrap();
        }
    }
    s
}

/// The accuracy chapter: where the cascaded kernel's error lies against the tree's and the CPU
/// loop's, input by input (not only the medians of three).
pub fn accuracy_cascade(measurements: Option<&[crate::records::accuracy::Measurement]>) -> String {
    let Some(ms) = measurements.filter(|m| !m.is_empty()) else {
        return "*The accuracy experiment has not run on this GPU.*\n".into();
    };
    let by = |method: &str, n: usize| -> Vec<(u64, f64)> {
        let mut v: Vec<(u64, f64)> =
            ms.iter().filter(|m| m.method == method && m.input == Dtype::F32 && m.n == n).map(|m| (m.seed, m.relative_error())).collect();
        v.sort_by_key(|x| x.0);
        v
    };
    let mut sizes: Vec<usize> = ms.iter().filter(|m| m.method == "gpu_cascaded").map(|m| m.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let (mut between, mut total, mut not) = (0, 0, Vec::new());
    for &n in &sizes {
        let (tree, cascade, cpu) = (by("gpu_tree", n), by("gpu_cascaded", n), by("cpu_sequential", n));
        for ((seed, c), ((_, t), (_, l))) in cascade.iter().zip(tree.iter().zip(cpu.iter())) {
            total += 1;
            if (t.min(*l)..=t.max(*l)).contains(c) {
                between += 1;
            } else {
                not.push(format!("{} seed {seed}", p2(n)));
            }
        }
    }
    let seeds = ms.iter().map(|m| m.seed).collect::<std::collections::BTreeSet<_>>().len();
    let mut s = format!(
        "Input by input ({seeds} inputs at each of {} sizes, `f32`), the cascaded kernel's error lies between the tree's and the CPU \
        loop's in {between} of {total} cases",
        sizes.len()
    );
    if !not.is_empty() {
        write!(s, "; not at {}", not.iter().take(6).cloned().collect::<Vec<_>>().join(", ")).unwrap();
        if not.len() > 6 {
            write!(s, " and {} more", not.len() - 6).unwrap();
        }
    }
    s.push_str(". With three inputs a size, a median moves with one of them: read the table's medians as that.\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::bench::READ_ONLY_KERNEL;

    fn root() -> PathBuf {
        crate::records::repo_root()
    }

    #[test]
    fn sass_listings_are_parsed_and_the_tree_loops_found() {
        let listing = "# header\n        /*0190*/                   USHF.L.U32 UR6, UR5, 0x1, URZ ;\n        /*01a0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n        /*01b0*/              @!P1 BRA 0x190 ;\n        /*01c0*/                   NOP;\n";
        let code = parse_sass(listing);
        assert_eq!(code.len(), 3, "NOPs are not instructions");
        assert_eq!(code[2].opcode(), "BRA");
        assert_eq!(tree_loop(&code).map(|b| b.len()), Some(3));
        // The committed SASS: kernel 1's step is longer than kernel 2's by its modulo; kernel 6 has no tree loop.
        let sass = load_sass(&root().join("plots/data/sass/sm_90"));
        let k1 = tree_loop(&sass["reduce1_i32"]).unwrap();
        let k2 = tree_loop(&sass["reduce2_i32"]).unwrap();
        assert!(k1.len() > k2.len() + 10 && modulo_instructions(k1) >= 10, "{} {} {}", k1.len(), k2.len(), modulo_instructions(k1));
        assert!(tree_loop(&sass["reduce6_b256_i32"]).is_none());
        assert_eq!(count(sass.get("reduce11_i32"), "REDUX"), Some(2));
        assert_eq!(count(sass.get("reduce9_i32"), "REDUX"), Some(0));
        let text = sass_tree_sentence(&sass);
        assert!(text.contains(&format!("**{} instructions**", k1.len())) && text.contains("no loop left"), "{text}");
    }

    #[test]
    fn ncu_raw_csv_is_read_with_its_thousands_separators() {
        let text = "==PROF== noise\n\"ID\",\"Kernel Name\",\"smsp__inst_executed.sum\",\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\",\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\",\"gpu__time_duration.sum\"\n\"\",\"\",\"inst\",\"ratio\",\"ratio\",\"usecond\"\n\"0\",\"reduce4_i32\",\"1,048,576\",\"3.5\",\"7.25\",\"85.5\"\n";
        let p = parse_ncu_raw(text, "reduce4").unwrap();
        assert_eq!(p.get(WARP_INSTRUCTIONS), Some(1048576.0));
        assert_eq!(p.get(DURATION), Some(85500.0), "microseconds become nanoseconds");
        assert_eq!(p.stalls()[0], ("long scoreboard".to_string(), 7.25));
        let mut profiles = BTreeMap::new();
        profiles.insert("reduce4".to_string(), p);
        assert!(harris_profile_table(&profiles).contains("| `reduce4` |"));
        assert!(harris_profile_table(&BTreeMap::new()).contains("Not profiled"));
    }

    fn row(kernel: &str, n: usize, median: f64, min: f64, max: f64) -> Row {
        Row {
            kernel: kernel.into(), chapter: 0, title: String::new(), status: if kernel == READ_ONLY_KERNEL { Status::Ceiling } else { Status::Correct },
            dtype: Dtype::F32, n, block: 256, cache: Cache::Rotated, median_us: median, min_us: min, max_us: max, bytes: n * 4,
            working_set_bytes: 0, repeats: 15, method: String::new(),
        }
    }

    #[test]
    fn slower_means_beyond_the_spread_of_both() {
        let rows = vec![row("reduce8", 1 << 30, 1134.1, 1133.0, 1135.0), row("reduce7", 1 << 30, 1127.2, 1126.0, 1128.0),
            row("reduce8", 1 << 20, 4.56, 4.40, 4.70), row("reduce7", 1 << 20, 4.29, 4.25, 4.60)];
        let text = reduce8_vs_reduce7(&rows);
        assert!(text.contains("2^30 f32: 1134.10 against 1127.20 µs (1.006×, slower, beyond the spread of either)"), "{text}");
        assert!(text.contains("2^20 f32: 4.56 against 4.29 µs (1.063×, within the spread of the repeats)"), "{text}");
    }

    #[test]
    fn a_sum_faster_than_the_ceiling_is_reported() {
        let ceiling = Row { title: "read-only sum, fastest of 20 shapes: 256 threads × 1 loads".into(), ..row(READ_ONLY_KERNEL, 1 << 22, 7.71, 7.6, 7.8) };
        let rows = vec![ceiling.clone(), row("reduce12", 1 << 22, 6.74, 6.7, 6.8)];
        let text = ceiling_shapes(&rows, None);
        assert!(text.contains("2^22 256 × 1") && text.contains("at 1 of 1 measurements") && text.contains("no ceiling"), "{text}");
        let fine = vec![ceiling, row("reduce12", 1 << 22, 7.9, 7.8, 8.0)];
        assert!(ceiling_shapes(&fine, None).contains("it is a ceiling everywhere"));
    }

    #[test]
    fn the_committed_data_gives_every_sentence() {
        let data = root().join("plots/data");
        let all = crate::records::bench::load_all(&data).unwrap();
        let book = crate::book::render::book_gpu(&data, &all).unwrap();
        assert!(reduce8_vs_reduce7(&book.1).contains("2^30 f32"));
        assert!(single_pass_sentence(&book.1, None).contains("The last-block kernel is faster"));
        let sass = load_sass(&data.join("sass/sm_90"));
        assert!(redux_sentence(&book.1, &sass, None).contains("REDUX.SUM.S32"));
        // The experiment on the H200: the swap to redux.sync alone closes the i32 gap from 2^18 on.
        let experiments = load_experiments(&data.join("experiments/nvidia-h200.csv")).expect("the committed experiments");
        let text = redux_sentence(&book.1, &sass, Some(&experiments));
        assert!(text.contains("within 2 % of `reduce11`, at 2^18, 2^20, 2^22, 2^24; not at 2^16"), "{text}");
        assert!(single_pass_sentence(&book.1, Some(&experiments)).contains("for the memset alone"));
        // Kernels 1-7 under ncu: every one profiled, and kernel 4 busy issuing.
        let profiles = load_profiles(&data.join("ncu"));
        assert_eq!(profiles.len(), 7);
        assert!(profiles["reduce4"].get(ISSUE_ACTIVE).unwrap() > 70.0);
        assert!(harris_profile_table(&profiles).contains("| `reduce7` |"));
    }
}
