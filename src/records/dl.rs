//! The deep-learning reductions' results (chapters 17–20): `plots/data/dl/<gpu-slug>.csv` (the
//! book's kernels, written by `measure::dl_bench`), `<gpu-slug>-peers.csv` (torch, torch.compile,
//! Triton, TileLang, Liger-Kernel, Quack: `plots/dl_peers.py`) and `<gpu-slug>-peers-refused.csv`
//! (what a peer would not run, and why), `<gpu-slug>-copy-shapes.csv` (the copy's tile shapes), in the columns of `/work/coord/peers-interface.md`: a
//! benchmark row's ([`super::bench::Row`]), then `op` (the reduction) and `rows` (M; `n` is the
//! row length N). Read by `book::dl`.

use super::bench::{Cache, Row, Status};
use super::csv;
use super::machine::Machine;
use crate::element::Dtype;
use crate::error::Result;
use serde::{Deserialize, Serialize, Serializer};
use std::path::{Path, PathBuf};

mod merge;
pub use merge::merge;

/// The chapter of the fused kernels, in the `chapter` column.
pub const CHAPTER: u32 = 17;
/// The command that measures them (and runs the peers in the same run).
pub const MEASURE_COMMAND: &str = "cargo run --release -- dl-bench";

/// Where they are: `plots/data/dl/`.
pub fn results_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("dl")
}

/// The book's own rows: `dl_<op>` for the automatic choice of each op, and the variants the
/// chapter compares.
pub fn kernel_name(op: &str) -> String {
    format!("dl_{op}")
}
/// softmax read three times (max, sum, output): the textbook.
pub const THREE_PASS: &str = "softmax_three_pass";
/// softmax with the online (max, sum) pair, read twice (a team too small to hold the row).
pub const TWO_PASS: &str = "softmax_online_two_pass";
/// The long rows' two teams, forced: a cluster (sm_90) and co-resident blocks.
pub fn cluster_name(op: &str) -> String {
    format!("dl_{op}_cluster")
}
pub fn split_name(op: &str) -> String {
    format!("dl_{op}_split")
}
/// The long-row variant of `op` over blocks of 1024 threads where the planner takes 512
/// (`measure::dl_bench`).
pub fn wide_block_name(op: &str) -> String {
    format!("dl_{op}_wide_block")
}
/// LayerNorm's column sums in the row kernels' layouts: the wrong ones.
pub const TEAM_PER_COLUMN: &str = "layer_norm_grad_team_per_column";
pub const THREAD_PER_COLUMN: &str = "layer_norm_grad_thread_per_column";

/// One measurement of a deep-learning reduction (ours or a peer's).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct DlRow {
    pub kernel: String,
    pub chapter: u32,
    pub title: String,
    pub status: Status,
    pub dtype: Dtype,
    /// The row length N (the element count of a whole-array op, where `rows` is 1).
    pub n: usize,
    pub block: u32,
    pub cache: Cache,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// What must cross memory at least once: every input read once, every output written once.
    pub bytes: usize,
    pub working_set_bytes: usize,
    pub repeats: usize,
    pub method: String,
    /// `softmax`, `log_softmax`, `softmax_bwd`, `layer_norm`, `rms_norm`, `cross_entropy`,
    /// `layer_norm_bwd_gamma_beta`, `layer_norm_bwd` (peers), or `copy` / `read` (the yardsticks).
    pub op: String,
    pub rows: usize,
}

impl DlRow {
    /// The entry point a row of the book's kernels ran, from the `[entry]` that ends its title
    /// (`dl-bench` writes it); empty where there is none (the yardsticks, the peers).
    pub fn entry(&self) -> &str {
        self.title.rsplit_once('[').map_or("", |(_, e)| e.trim_end_matches(']'))
    }

    /// A benchmark row of `op` over `rows` rows.
    pub fn of(row: Row, op: &str, rows: usize) -> DlRow {
        DlRow {
            kernel: row.kernel,
            chapter: row.chapter,
            title: row.title,
            status: row.status,
            dtype: row.dtype,
            n: row.n,
            block: row.block,
            cache: row.cache,
            median_us: row.median_us,
            min_us: row.min_us,
            max_us: row.max_us,
            bytes: row.bytes,
            working_set_bytes: row.working_set_bytes,
            repeats: row.repeats,
            method: row.method,
            op: op.to_string(),
            rows,
        }
    }

    /// The benchmark row this measurement is, without its op and row count.
    pub fn as_row(&self) -> Row {
        Row {
            kernel: self.kernel.clone(),
            chapter: self.chapter,
            title: self.title.clone(),
            status: self.status,
            dtype: self.dtype,
            n: self.n,
            block: self.block,
            cache: self.cache,
            median_us: self.median_us,
            min_us: self.min_us,
            max_us: self.max_us,
            bytes: self.bytes,
            working_set_bytes: self.working_set_bytes,
            repeats: self.repeats,
            method: self.method.clone(),
        }
    }

    /// Bandwidth at the median time, in GB/s.
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / (self.median_us * 1e-6) / 1e9
    }

    /// The percentage of `peak_gbps` reached.
    pub fn percent_of(&self, peak_gbps: f64) -> f64 {
        100.0 * self.gbps() / peak_gbps
    }

    pub fn is_peer(&self) -> bool {
        self.status == Status::Peer
    }
}

/// The columns of the interface: a benchmark row's (`serialize_row_fields` in `records::bench`), then
/// `op` and `rows`.
impl Serialize for DlRow {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut line = serializer.serialize_struct("DlRow", 18)?;
        super::bench::serialize_row_fields(&mut line, &self.as_row())?;
        line.serialize_field("op", &self.op)?;
        line.serialize_field("rows", &self.rows)?;
        line.end()
    }
}

/// A peer that did not run a shape: `status` `refused` (the library said no) or `wrong` (its
/// answer failed the check).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    pub kernel: String,
    pub title: String,
    pub status: String,
    pub dtype: Dtype,
    pub n: usize,
    pub rows: usize,
    pub op: String,
    pub reason: String,
}

/// What a planted bug (or the correct kernel on a hard input) returned, for the chapter:
/// `<gpu-slug>-demos.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Demo {
    /// `rescale_missing`, `shift_missing` (planted bugs of `check::dl_mutants`), `f16_large`.
    pub demo: String,
    /// The entry and the team.
    pub kernel: String,
    pub dtype: Dtype,
    pub m: usize,
    pub n: usize,
    /// What the rows held.
    pub kind: String,
    /// The largest |got − want| / |want| (for `f16_large`: the worst error over its bound).
    pub max_rel_error: f64,
    pub nan_rows: usize,
    pub rows: usize,
    pub note: String,
}

pub fn demos_file(data_dir: &Path, slug: &str) -> PathBuf {
    results_dir(data_dir).join(format!("{slug}-demos.csv"))
}

pub fn write_demos(path: &Path, machine: &Machine, demos: &[Demo]) -> Result<()> {
    csv::write(path, &machine.header(), demos)
}

/// The tiled copy's median at one of its shapes (`measure::dl_yardsticks`), 2^28 f32 values read
/// and written once: `<gpu-slug>-copy-shapes.csv`, written by `reduction dl-bench`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CopyShapeTime {
    pub block: u32,
    pub packs: u32,
    pub evict_first: bool,
    pub n: usize,
    pub median_us: f64,
}

pub fn copy_shapes_file(data_dir: &Path, slug: &str) -> PathBuf {
    results_dir(data_dir).join(format!("{slug}-copy-shapes.csv"))
}

/// One launch of the long-row exchange experiment (`plots/dl_long_rows.cu`, nvcc on the GPU
/// host): a softmax over rows of `n` values held by clusters of `clusters` blocks of `threads`
/// threads, `vpt` packs a thread, the blocks exchanging their states the `variant` way
/// (`barrier`, `push`, `mbarrier`; `none` and `nocluster` skip the exchange and are wrong by
/// design; `block` is one block per row). No median where the team does not fit.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct ExchangeTime {
    pub dtype: String,
    pub n: usize,
    pub rows: usize,
    pub clusters: u32,
    pub threads: u32,
    pub vpt: u32,
    pub variant: String,
    pub registers: u32,
    pub max_active_clusters: u32,
    pub median_us: Option<f64>,
    pub min_us: Option<f64>,
    pub max_us: Option<f64>,
    pub gbps: Option<f64>,
    /// `right` or `wrong`: three whole rows against an f64 softmax.
    pub checked: String,
}

/// `plots/data/dl/experiments/<gpu-slug>-long-rows.csv`, what `plots/dl_long_rows.cu` prints.
pub fn exchange_file(data_dir: &Path, slug: &str) -> PathBuf {
    results_dir(data_dir).join("experiments").join(format!("{slug}-long-rows.csv"))
}

/// The A/B of the untested-pack paths (`kernels/dl_rows.cuh`, `UNTESTED`): two
/// `reduction dl-bench --planner-only` files from one call on the GPU host, the binary before the
/// paths (`tested`) and the one with them (`untested`), under `plots/data/dl/experiments/`.
pub fn untested_packs_files(data_dir: &Path, slug: &str) -> [PathBuf; 2] {
    ["tested", "untested"].map(|which| results_dir(data_dir).join("experiments").join(format!("{slug}-packs-{which}.csv")))
}

/// The planner's teams before and after the exponent in one FMA (`<slug>-exp-sub.csv`,
/// `<slug>-exp-fma.csv`).
pub fn exp_fma_files(data_dir: &Path, slug: &str) -> [PathBuf; 2] {
    ["sub", "fma"].map(|which| results_dir(data_dir).join("experiments").join(format!("{slug}-exp-{which}.csv")))
}

/// Cross-entropy's planner's teams before and after the mean's partials were loaded 8 at a time
/// (`<slug>-ce-mean-serial.csv`, `<slug>-ce-mean-batched.csv`), bf16 then f32, one after the other
/// in one call (bf16 before, after; f32 after, before).
pub fn ce_mean_files(data_dir: &Path, slug: &str) -> [PathBuf; 2] {
    ["serial", "batched"].map(|which| results_dir(data_dir).join("experiments").join(format!("{slug}-ce-mean-{which}.csv")))
}

/// LayerNorm's dγ/dβ under the plan of 8 blocks an SM and under one wave, one after the other in
/// one call (`<slug>-columns-eight.csv`, `<slug>-columns-wave.csv`).
pub fn columns_wave_files(data_dir: &Path, slug: &str) -> [PathBuf; 2] {
    ["eight", "wave"].map(|which| results_dir(data_dir).join("experiments").join(format!("{slug}-columns-{which}.csv")))
}

pub fn results_file(data_dir: &Path, slug: &str) -> PathBuf {
    results_dir(data_dir).join(format!("{slug}.csv"))
}
pub fn peers_file(data_dir: &Path, slug: &str) -> PathBuf {
    results_dir(data_dir).join(format!("{slug}-peers.csv"))
}
/// The peers measured in the peers helper's own run on the same GPU (`plots/dl_peers.py` alone,
/// with every peer it could carry), kept beside the peers of the book's run until a run of
/// `reduction dl-bench` with all of them replaces both.
pub fn peers_own_run_file(data_dir: &Path, slug: &str) -> PathBuf {
    results_dir(data_dir).join(format!("{slug}-peers-own-run.csv"))
}
/// Some ops, each in each of some types at each of some shapes (rows, cols).
pub type OpsAtShapes = (&'static [&'static str], &'static [Dtype], &'static [(usize, usize)]);

/// Where the book's kernels were measured again without their peers (`reduction dl-bench
/// --no-peers`, 2026-12-02): each entry's ops at each of its shapes. First after the cluster
/// exchange changed, then cross-entropy's long rows after its split lost the test per pack. Each
/// peer's row there was moved to [`peers_own_run_file`], since it ran beside the earlier kernels.
/// Softmax, log_softmax and cross-entropy at 2^13 × 2^15 and 2^12 × 2^16 were measured again with
/// every peer beside them after the exponent became one FMA (2026-12-03), and left the list;
/// cross-entropy's long rows left it when cross-entropy was measured again at every shape beside
/// every peer but Quack (whose rows moved to the own-run file). RMSNorm at bf16 4096 × 4096 joined
/// it on 2026-12-03, when the planner gave its few rows 2 packs a thread; softmax, log_softmax and
/// RMSNorm at f32 65536 × 4096 and 4096 × 4096 when it gave f32 rows of 1024 packs 2 packs a thread.
/// LayerNorm and RMSNorm left it on 2026-12-06, measured again at every shape beside every peer but
/// Quack (session 60).
pub const REMEASURED_WITHOUT_PEERS: [OpsAtShapes; 3] = [
    (&["softmax_bwd"], &[Dtype::F32, Dtype::BF16], &[(8192, 32768), (4096, 65536), (2048, 131072), (1024, 262144), (8192, 128256)]),
    (&["softmax", "log_softmax"], &[Dtype::F32, Dtype::BF16], &[(2048, 131072), (1024, 262144), (8192, 128256)]),
    (&["softmax", "log_softmax"], &[Dtype::F32], &[(65536, 4096), (4096, 4096)]),
];

/// Peers of an op that the last run of the op's kernels (at every shape) did not run beside them:
/// their rows are from the run before, in [`peers_own_run_file`]. Cross-entropy (2026-12-03),
/// LayerNorm and RMSNorm (2026-12-06): Quack, which could not travel beside TileLang and the
/// book's program in one call, and torch.compile at the shapes where that run did not compile it.
pub const NOT_IN_THE_LAST_RUN: [(&str, &[&str]); 3] = [
    ("cross_entropy", &["quack_cross_entropy", "torch_compile_cross_entropy"]),
    ("layer_norm", &["quack_layer_norm", "torch_compile_layer_norm"]),
    ("rms_norm", &["quack_rms_norm", "torch_compile_rms_norm"]),
];

/// Whether `peer`'s row of `op` is one of [`NOT_IN_THE_LAST_RUN`].
pub fn not_in_the_last_run(op: &str, peer: &str) -> bool {
    NOT_IN_THE_LAST_RUN.iter().any(|(o, peers)| *o == op && peers.contains(&peer))
}

/// Whether `op` in `dtype` at `rows` × `cols` is one of [`REMEASURED_WITHOUT_PEERS`].
pub fn remeasured_without_peers(op: &str, dtype: Dtype, rows: usize, cols: usize) -> bool {
    REMEASURED_WITHOUT_PEERS.iter().any(|(ops, dtypes, shapes)| ops.contains(&op) && dtypes.contains(&dtype) && shapes.contains(&(rows, cols)))
}

/// Appended to the `method` of a peer's row read from [`peers_own_run_file`].
pub const OWN_RUN: &str = " (the peers' own run)";
pub fn refused_file(data_dir: &Path, slug: &str) -> PathBuf {
    results_dir(data_dir).join(format!("{slug}-peers-refused.csv"))
}

/// Rows of any of these files ([`DlRow`], [`CopyShapeTime`]) under the machine's header.
pub fn write_csv<R: Serialize>(path: &Path, machine: &Machine, rows: &[R]) -> Result<()> {
    csv::write(path, &machine.header(), rows)
}

pub fn read_csv<R: serde::de::DeserializeOwned>(path: &Path) -> Result<(Machine, Vec<R>)> {
    let (header, rows) = csv::read::<R>(path)?;
    Ok((Machine::from_header(&header), rows))
}

/// Everything measured on one GPU: the book's rows with their header, the peers' rows, what
/// the peers refused. `None` where the book's own file does not exist.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub machine: Machine,
    pub ours: Vec<DlRow>,
    pub peers: Vec<DlRow>,
    pub refused: Vec<Refused>,
}

pub fn load(data_dir: &Path, slug: &str) -> Result<Option<Loaded>> {
    let file = results_file(data_dir, slug);
    if !file.is_file() {
        return Ok(None);
    }
    let (machine, ours) = read_csv(&file)?;
    let mut peers = match peers_file(data_dir, slug) {
        p if p.is_file() => read_csv(&p)?.1,
        _ => Vec::new(),
    };
    let own_run = peers_own_run_file(data_dir, slug);
    if own_run.is_file() {
        peers.extend(read_csv::<DlRow>(&own_run)?.1.into_iter().map(|r| DlRow { method: format!("{}{OWN_RUN}", r.method), ..r }));
    }
    let mut refused = Vec::new();
    for p in [refused_file(data_dir, slug), results_dir(data_dir).join(format!("{slug}-peers-own-run-refused.csv"))] {
        if p.is_file() {
            refused.extend(csv::read::<Refused>(&p)?.1);
        }
    }
    Ok(Some(Loaded { machine, ours, peers, refused }))
}

/// The GPU whose results a data folder holds, from its book file's name (`dl/<gpu-slug>.csv`);
/// `None` where there is none, or more than one GPU's.
pub fn slug_in(data_dir: &Path) -> Option<String> {
    let companions = ["-peers", "-peers-refused", "-peers-own-run", "-peers-own-run-refused", "-demos", "-copy-shapes"];
    let entries = std::fs::read_dir(results_dir(data_dir)).ok()?;
    let mut slugs = entries.filter_map(|e| {
        let path = e.ok()?.path();
        let stem = path.file_stem()?.to_str()?.to_string();
        (path.extension()? == "csv" && !companions.iter().any(|c| stem.ends_with(c))).then_some(stem)
    });
    let slug = slugs.next()?;
    slugs.next().is_none().then_some(slug)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_h200s_peer_rows_from_another_run_are_where_the_chapter_says() {
        // What the chapter says of †: a row from another run than ours is either Quack where the
        // run beside ours found it wrong or refused (a verdict at its case, no timing of that
        // run), or any peer at a case where ours was measured again without peers, or a peer
        // the last run of an op did not carry or compile.
        let dir = crate::records::repo_root().join("plots/data");
        let (_, own) = read_csv::<DlRow>(&peers_own_run_file(&dir, "nvidia-h200")).unwrap();
        let (_, peers) = read_csv::<DlRow>(&peers_file(&dir, "nvidia-h200")).unwrap();
        let (_, refused) = csv::read::<Refused>(&refused_file(&dir, "nvidia-h200")).unwrap();
        assert!(!own.is_empty());
        for r in &own {
            let case = |k: &str, d: Dtype, m: usize, n: usize| k == r.kernel && d == r.dtype && m == r.rows && n == r.n;
            let wrong_beside_ours = refused.iter().any(|x| case(&x.kernel, x.dtype, x.rows, x.n) && (x.status == "wrong" || x.status == "refused"));
            assert!((r.kernel.starts_with("quack_") && wrong_beside_ours) || remeasured_without_peers(&r.op, r.dtype, r.rows, r.n) || not_in_the_last_run(&r.op, &r.kernel),
                "{} {} {}×{}", r.kernel, r.dtype, r.rows, r.n);
            assert!(!peers.iter().any(|x| case(&x.kernel, x.dtype, x.rows, x.n)), "{} {} {}×{} timed beside ours too", r.kernel, r.dtype, r.rows, r.n);
        }
        assert!(!peers.iter().any(|x| remeasured_without_peers(&x.op, x.dtype, x.rows, x.n)), "a peer beside the earlier kernels where ours was measured again");
    }

    #[test]
    fn rows_round_trip_and_read_the_peers_columns() {
        let row = DlRow {
            kernel: "dl_softmax".into(), chapter: 17, title: "automatic".into(), status: Status::Correct, dtype: Dtype::BF16, n: 4096,
            block: 128, cache: Cache::Rotated, median_us: 260.5, min_us: 259.0, max_us: 270.125, bytes: 1 << 29, working_set_bytes: 1 << 30,
            repeats: 21, method: "graph of 8 back-to-back, CUDA events".into(), op: "softmax".into(), rows: 65536,
        };
        let machine = Machine { gpu: "NVIDIA H200".into(), sm_count: 132, peak_gbps: Some(4814.0), ..Default::default() };
        let path = std::env::temp_dir().join(format!("reduction-dl-{}.csv", std::process::id()));
        write_csv(&path, &machine, std::slice::from_ref(&row)).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let (m, back) = read_csv::<DlRow>(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!((m.gpu.as_str(), back), ("NVIDIA H200", vec![row.clone()]));
        assert!(text.contains("kernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows"), "{text}");
        // A peer's line, as plots/dl_peers.py writes it.
        let peer = "kernel,chapter,title,status,dtype,n,block,cache,median_us,min_us,max_us,gbps,bytes,working_set_bytes,repeats,method,op,rows\n\
                    torch_softmax,17,\"F.softmax\",peer,f32,256,0,rotated,514.000,510.000,520.000,4177.9,2147483648,4294967296,15,\"graph of 8 back-to-back, CUDA events\",softmax,1048576\n";
        let (_, rows) = csv::from_str::<DlRow>(peer, "peer").unwrap();
        assert!(rows[0].is_peer() && rows[0].rows == 1 << 20 && (rows[0].gbps() - 4177.9).abs() < 0.1);
        assert!((row.percent_of(4814.0) - 100.0 * row.gbps() / 4814.0).abs() < 1e-12);
    }

    #[test]
    fn the_peers_own_run_is_read_beside_the_run_of_ours_and_marked() {
        let dir = std::env::temp_dir().join(format!("reduction-dl-load-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("dl")).unwrap();
        let machine = Machine { gpu: "NVIDIA H200".into(), sm_count: 132, peak_gbps: Some(4814.0), ..Default::default() };
        let row = |kernel: &str, status| DlRow {
            kernel: kernel.into(), chapter: 17, title: kernel.into(), status, dtype: Dtype::F32, n: 1024, block: 0, cache: Cache::Rotated,
            median_us: 500.0, min_us: 499.0, max_us: 501.0, bytes: 1 << 31, working_set_bytes: 1 << 33, repeats: 15,
            method: "CUDA events".into(), op: "softmax".into(), rows: 1 << 18,
        };
        write_csv(&results_file(&dir, "gpu"), &machine, &[row("dl_softmax", Status::Correct)]).unwrap();
        write_csv(&peers_file(&dir, "gpu"), &machine, &[row("torch_softmax", Status::Peer)]).unwrap();
        assert!(load(&dir, "gpu").unwrap().unwrap().peers.iter().all(|r| !r.method.ends_with(OWN_RUN)));
        write_csv(&peers_own_run_file(&dir, "gpu"), &machine, &[row("triton_softmax", Status::Peer)]).unwrap();
        let l = load(&dir, "gpu").unwrap().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let marked: Vec<&str> = l.peers.iter().filter(|r| r.method.ends_with(OWN_RUN)).map(|r| r.kernel.as_str()).collect();
        assert_eq!((l.ours.len(), l.peers.len(), marked), (1, 2, vec!["triton_softmax"]));
    }
}
