//! Everything the book is drawn from, read once: the records under `plots/data/` and the tools'
//! logs beside them, for every generator of the manifest to draw from (mdBook hands each
//! preprocessor one context the same way). Nothing here opens a GPU.

use crate::error::{io_error, Result};
use crate::records::accuracy::{self, Conditioned, Measurement};
use crate::records::allreduce::{self, AllReduceHeader, AllReduceRow};
use crate::records::bench::{self, Machine, Row};
use crate::records::csv::Header;
use crate::records::determinism::{self, Record};
use crate::records::experiments::{self, Experiment};
use crate::records::mistakes::{self, Records};
use crate::records::ncu::{self, Profile};
use crate::records::sass::{self, Instruction};
use std::collections::BTreeMap;
use crate::records::rank_totals::{self, RankTotal};
use std::path::{Path, PathBuf};

/// One all-reduce run: its file, header and rows, and the GPUs' topology recorded beside it.
#[derive(Clone, Debug)]
pub struct AllReduceRun {
    pub file: PathBuf,
    pub header: AllReduceHeader,
    pub rows: Vec<AllReduceRow>,
    /// `nvidia-smi topo -m`, from `<gpu>-x<count>-topo.txt`, where it was recorded.
    pub topology: Option<String>,
}

/// The data of the book, loaded from `root/plots/data`.
#[derive(Clone, Debug)]
pub struct Context {
    /// The repository's root, where `book/` and `plots/` are.
    pub root: PathBuf,
    /// `root/plots/data`.
    pub data_dir: PathBuf,
    /// Every GPU's benchmark results (`plots/data/*.csv`, peers merged), by file name.
    pub gpus: Vec<(Machine, Vec<Row>)>,
    /// Which of them the book shows: the one `book-gpu.txt` names, else the first.
    book: Option<usize>,
    /// The slug `book-gpu.txt` names, if it names one.
    pub book_slug: Option<String>,
    /// The book's GPU's other element types (`types/<gpu>.csv`).
    pub types: Option<(Machine, Vec<Row>)>,
    /// The book's GPU's row sums, ours and the peers' (`rows/`).
    pub row_sums: Option<(Machine, Vec<Row>)>,
    /// The tile languages' whole-array sums (`tile/<gpu>.csv`) and TileLang's generated source.
    pub tile_sums: Option<(Machine, Vec<Row>)>,
    pub tile_source: Option<String>,
    /// The accuracy experiment's two sweeps, as (GPU, measurements).
    pub accuracy: Option<(String, Vec<Measurement>)>,
    pub conditioning: Option<(String, Vec<Conditioned>)>,
    /// The determinism levels (`determinism/<gpu>.csv`).
    pub determinism: Option<(Header, Vec<Record>)>,
    /// Nsight Compute's reports (`ncu/<kernel>.txt`), as (kernel, text), by kernel.
    pub ncu: Vec<(String, String)>,
    /// Nsight Compute's raw metrics of Harris's kernels (`ncu/<kernel>.csv`, [`PROFILED_KERNELS`]).
    pub harris_profiles: BTreeMap<String, Profile>,
    /// The SASS NVRTC writes for [`sass::ARCH`] (`sass/sm_90/<entry>.sass`), by entry point.
    pub sass: BTreeMap<String, Vec<Instruction>>,
    /// The book's GPU's timing experiments (`experiments/<gpu>.csv`, `plots/timing_experiments.py`).
    pub experiments: Option<Vec<Experiment>>,
    /// The book's GPU's read-only kernel at every launch shape (`read-only/<gpu>.csv`), the
    /// evidence for the shape of each read-only row of its results.
    pub read_only_shapes: Option<Vec<Row>>,
    /// ncu's bank-conflict counts (`bank-conflicts/<kernel>.log`), as (kernel, text).
    pub bank_conflicts: Vec<(String, String)>,
    /// compute-sanitizer's logs (`sanitizer/<name>.log`), as (name, text), by name.
    pub sanitizer_logs: Vec<(String, String)>,
    /// The mistakes' recorded run the book shows, and its file.
    pub mistakes: Option<(PathBuf, Records)>,
    /// Every all-reduce run (`nccl/`), by file name.
    pub allreduce: Vec<AllReduceRun>,
    /// One input's totals on 1, 2, 4 and 8 GPUs (`ranks/`): the CPU's file first, then the GPU
    /// hosts'.
    pub rank_totals: Vec<(PathBuf, Header, Vec<RankTotal>)>,
    /// The snippets' outputs under `book/generated/snippets/` (written on the GPU host), by name.
    pub snippet_outputs: Vec<String>,
    /// The deep-learning reductions of the book's GPU, ours and the peers' (`dl/`), what planted
    /// bugs returned (`dl/<gpu>-demos.csv`); Nsight Compute's pages are read from `dl/ncu/`.
    pub dl: Option<crate::records::dl::Loaded>,
    pub dl_demos: Option<String>,
    /// The book's GPU's operators (`operators/<gpu>.csv`) and their peers (`<gpu>-peers.csv`).
    pub operators: Option<crate::records::operators::OpFile>,
    pub operator_peers: Option<crate::records::operators::OpFile>,
}

/// The kernels whose raw metrics chapters 1 and 4 show (`ncu/<kernel>.csv`), in book order.
pub const PROFILED_KERNELS: [&str; 7] = [
    crate::kernels::names::REDUCE1, crate::kernels::names::REDUCE2, crate::kernels::names::REDUCE3, crate::kernels::names::REDUCE4,
    crate::kernels::names::REDUCE5, crate::kernels::names::REDUCE6, crate::kernels::names::REDUCE7,
];

/// The kernels whose bank conflicts the chapter of kernel 2 shows, in its order.
pub const BANK_CONFLICT_KERNELS: [&str; 3] = [crate::kernels::names::REDUCE2, crate::kernels::names::REDUCE2_PADDED, crate::kernels::names::REDUCE3];

impl Context {
    /// Read every record and log under `root/plots/data`. A file that is there but malformed is
    /// an error naming it; a file that is not there is `None` (or empty), and the chapters say
    /// it is not measured yet.
    pub fn load(root: &Path) -> Result<Context> {
        let data_dir = root.join("plots/data");
        let gpus = if data_dir.is_dir() { bench::load_all(&data_dir)? } else { Vec::new() };
        let book_slug = crate::records::book_gpu_slug(&data_dir);
        let book = book_slug
            .as_ref()
            .and_then(|slug| gpus.iter().position(|(m, _)| crate::records::slug(&m.gpu) == *slug))
            .or(if gpus.is_empty() { None } else { Some(0) });
        let book_gpu = book.map(|i| gpus[i].0.gpu.clone());
        let slug = book_gpu.as_deref().map(crate::records::slug);
        let optional_csv = |path: PathBuf| -> Result<Option<(Machine, Vec<Row>)>> { if path.is_file() { bench::read_csv(&path).map(Some) } else { Ok(None) } };
        let (types, row_sums, tile_sums, read_only_shapes) = match &slug {
            Some(slug) => (
                optional_csv(data_dir.join("types").join(format!("{slug}.csv")))?,
                crate::records::rows::load(&crate::records::rows::results_dir(&data_dir), slug)?,
                optional_csv(crate::records::tile::results_dir(&data_dir).join(format!("{slug}.csv")))?,
                optional_csv(data_dir.join(bench::READ_ONLY_SHAPES_DIR).join(format!("{slug}.csv")))?.map(|(_, rows)| rows),
            ),
            None => (None, None, None, None),
        };
        let tile_source = std::fs::read_to_string(crate::records::tile::results_dir(&data_dir).join(crate::records::tile::GENERATED_SOURCE)).ok();
        let (accuracy, conditioning, determinism, experiments) = match &book_gpu {
            Some(gpu) => {
                let file = accuracy::book_file(&data_dir, gpu);
                let conditioned = accuracy::conditioning_file(&data_dir, gpu);
                let levels = determinism::book_file(&data_dir, gpu);
                let timed = experiments::experiments_file(&data_dir, gpu);
                let finish = experiments::finish_file(&data_dir, gpu);
                (
                    if file.is_file() { Some(accuracy::read_csv(&file)?) } else { None },
                    if conditioned.is_file() { Some(accuracy::read_conditioning_csv(&conditioned)?) } else { None },
                    if levels.is_file() { Some(determinism::read_csv(&levels)?) } else { None },
                    match (timed.is_file(), finish.is_file()) {
                        (false, false) => None,
                        (t, f) => {
                            let mut all = if t { experiments::read_csv(&timed)?.1 } else { Vec::new() };
                            if f {
                                all.extend(experiments::read_csv(&finish)?.1);
                            }
                            Some(all)
                        }
                    },
                )
            }
            None => (None, None, None, None),
        };
        let bank_conflicts = BANK_CONFLICT_KERNELS
            .iter()
            .filter_map(|k| std::fs::read_to_string(data_dir.join("bank-conflicts").join(format!("{k}.log"))).ok().map(|t| (k.to_string(), t)))
            .collect();
        let mistakes = match crate::book::chapters::mistakes::book_records(&data_dir, book_slug.as_deref()) {
            Some(path) => Some((path.clone(), mistakes::read_records(&path)?)),
            None => None,
        };
        let allreduce = allreduce::load_all(&allreduce::data_dir(root))?
            .into_iter()
            .map(|(file, header, rows)| {
                let topology = std::fs::read_to_string(file.with_file_name(header.topology_file_name())).ok();
                AllReduceRun { file, header, rows, topology }
            })
            .collect();
        let (dl, dl_demos) = match &slug {
            Some(slug) => (
                crate::records::dl::load(&data_dir, slug)?,
                std::fs::read_to_string(crate::records::dl::results_dir(&data_dir).join(format!("{slug}-demos.csv"))).ok(),
            ),
            None => (None, None),
        };
        let (operators, operator_peers) = match &slug {
            Some(slug) => crate::records::operators::load(&data_dir, slug)?,
            None => (None, None),
        };
        Ok(Context {
            root: root.to_path_buf(),
            ncu: texts(&data_dir.join("ncu"), "txt")?,
            harris_profiles: ncu::load_profiles(&data_dir.join("ncu"), &PROFILED_KERNELS)?,
            sass: sass::load(&sass::sass_dir(&data_dir, sass::ARCH))?,
            sanitizer_logs: texts(&data_dir.join("sanitizer"), "log")?,
            data_dir,
            gpus,
            book,
            book_slug,
            types,
            row_sums,
            tile_sums,
            tile_source,
            accuracy,
            conditioning,
            determinism,
            experiments,
            read_only_shapes,
            bank_conflicts,
            mistakes,
            allreduce,
            rank_totals: rank_totals::load_all(&rank_totals::data_dir(root))?,
            snippet_outputs: file_names(&root.join("book/generated/snippets"), "txt"),
            dl,
            dl_demos,
            operators,
            operator_peers,
        })
    }

    /// The benchmark results of the GPU the book shows; an error where there are none.
    pub fn book(&self) -> Result<&(Machine, Vec<Row>)> {
        self.book.map(|i| &self.gpus[i]).ok_or_else(|| io_error(&self.data_dir, "no results file (*.csv) to draw from; `reduction bench` writes one"))
    }

    /// The name of the GPU the book shows, where there are benchmark results.
    pub fn book_gpu(&self) -> Option<&str> {
        self.book.map(|i| self.gpus[i].0.gpu.as_str())
    }
}

/// Every `*.<extension>` file directly in `dir`, as (stem, text), sorted by name; none where
/// `dir` does not exist.
fn texts(dir: &Path, extension: &str) -> Result<Vec<(String, String)>> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == extension)).collect();
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).map_err(|e| io_error(&file, e))?;
            Ok((file.file_stem().unwrap_or_default().to_string_lossy().to_string(), text))
        })
        .collect()
}

/// The names of the `*.<extension>` files directly in `dir`, sorted.
fn file_names(dir: &Path, extension: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == extension)).filter_map(|p| p.file_name().map(|n| n.to_string_lossy().to_string())).collect();
    names.sort();
    names
}
