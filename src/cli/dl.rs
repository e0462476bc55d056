//! `reduction dl-bench`: the deep-learning reductions measured on this GPU (chapters 17–20), the
//! peers run right after on the same shapes (`plots/dl_peers.py`), then the chapters redrawn.

use super::{command_line, machine_of, parse_seed, render, Outcome};
use clap::Args;
use reduction::element::Dtype;
use reduction::kernels::dl::plan::{Choice, Team};
use reduction::kernels::dl::DlOp;
use reduction::limits::Need;
use reduction::measure::dl_bench::{self, DlBenchConfig};
use reduction::records::dl as records;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct DlBenchArgs {
    /// Shapes, MxN [default: M·N = 2^28 for N = 2^8 … 2^18, then 4096x4096 and 8192x128256]
    #[arg(long, value_name = "MxN,...", value_delimiter = ',', value_parser = super::rows::parse_shape_arg)]
    shapes: Option<Vec<(usize, usize)>>,
    /// Input types
    #[arg(long = "dtypes", value_name = "TYPE,...", value_delimiter = ',', default_value = "f32,bf16")]
    dtypes: Vec<Dtype>,
    /// The reductions [default: all seven]
    #[arg(long, value_name = "OP,...", value_delimiter = ',')]
    ops: Option<Vec<DlOp>>,
    /// Where the CSVs go; without it, plots/data/dl, and the chapters are redrawn
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The inputs' seed
    #[arg(long, default_value_t = DlBenchConfig::default().seed, value_parser = parse_seed)]
    seed: u64,
    /// A few shapes, shorter timings
    #[arg(long)]
    quick: bool,
    /// Do not run plots/dl_peers.py (torch, torch.compile, Triton, TileLang, Liger, Quack) afterwards
    #[arg(long)]
    no_peers: bool,
    /// Only the planner's team of each op: no variants, yardsticks or demos (a quick run, e.g. under
    /// Nsight Compute); its CSV lacks what the chapters compare, so it needs --out
    #[arg(long, requires = "out")]
    planner_only: bool,
    /// With --planner-only: this team in place of the planner's, for every op and shape (as the
    /// teams file's runs by turns): block:VPT:THREADS, staged:VPT:THREADS (LayerNorm's and
    /// RMSNorm's parameters staged in shared memory, sm_80 and later), lanes:LANES:VPT,
    /// cluster:C:VPT:THREADS or split:S:VPT:THREADS (VPT: 16-byte packs a thread)
    #[arg(long, value_name = "TEAM", requires = "planner_only", value_parser = parse_team)]
    team: Option<Choice>,
    /// No new shape of the book's kernels is started after this many seconds (compiles included;
    /// 0: no limit). The shapes come in the order a short run should keep them
    #[arg(long, value_name = "S", default_value_t = 90)]
    budget_s: u64,
    /// The peers' budget, passed to plots/dl_peers.py --budget-s (no new case after it; 0: no
    /// limit); the script is killed 90 s past it
    #[arg(long, value_name = "S", default_value_t = 60)]
    peers_budget_s: u64,
    /// Measure nothing: merge these folders (each the --out of a run over some of the shapes, its
    /// peers in the same run) into one set of files under --out (default plots/data), then redraw
    #[arg(long, value_name = "DIR,...", value_delimiter = ',', conflicts_with_all = ["shapes", "quick"])]
    merge: Option<Vec<PathBuf>>,
    /// The GPU whose files --merge reads, as the file names spell it [default: the one GPU the
    /// first folder has results of]
    #[arg(long, value_name = "SLUG", requires = "merge")]
    gpu_slug: Option<String>,
}

pub fn bench(args: DlBenchArgs) -> Outcome {
    if let Some(parts) = &args.merge {
        let data_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("plots/data"));
        let slug = match args.gpu_slug.clone().or_else(|| parts.first().and_then(|p| records::slug_in(p))) {
            Some(slug) => slug,
            None => return Err(format!("--merge: {} holds the results of no GPU, or of several: name one with --gpu-slug", parts.first().map_or("-".into(), |p| p.display().to_string())).into()),
        };
        let written = records::merge(parts, &data_dir, &slug)?;
        println!("{written} rows of the book's kernels from {} runs, written to {}", parts.len(), records::results_file(&data_dir, &slug).display());
        return if args.out.is_none() { render() } else { Ok(ExitCode::SUCCESS) };
    }
    let mut config = DlBenchConfig::default();
    if args.quick {
        config.shapes = dl_bench::quick_shapes();
        config.target_ms = 5.0;
    }
    if let Some(shapes) = args.shapes {
        config.shapes = shapes;
    }
    if let Some(ops) = args.ops {
        config.ops = ops;
    }
    for &d in &args.dtypes {
        if !reduction::kernels::dl::DTYPES.contains(&d) {
            return Err(format!("--dtypes {d}: the deep-learning kernels take f32, f16 or bf16").into());
        }
    }
    config.dtypes = args.dtypes.clone();
    config.seed = args.seed;
    config.planner_only = args.planner_only;
    config.team = args.team;
    let largest = config.shapes.iter().map(|&(m, n)| m.saturating_mul(n)).max().unwrap_or(0);
    let need = Need::elements(format!("{largest} values of the largest shape"), largest, 4);
    let gpu = super::open_gpu_for(Some(&need))?;
    config.budget = (args.budget_s > 0).then(|| std::time::Duration::from_secs(args.budget_s));
    let data_dir = args.out.clone().unwrap_or_else(|| PathBuf::from("plots/data"));
    let dir = records::results_dir(&data_dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let slug = reduction::records::slug(&gpu.info().name);
    let machine = machine_of(&gpu, command_line());
    let path = records::results_file(&data_dir, &slug);
    // Written after every shape: a run cut short keeps what it measured.
    let bench = dl_bench::bench(&gpu, &config, &mut |rows| records::write_csv(&path, &machine, rows))?;
    records::write_csv(&path, &machine, &bench.rows)?;
    if !bench.copy_shapes.is_empty() {
        records::write_csv(&records::copy_shapes_file(&data_dir, &slug), &machine, &bench.copy_shapes)?;
    }
    println!("\n{} measurements in {:.0} s, written to {}", bench.rows.len(), bench.seconds, path.display());
    if !bench.not_measured.is_empty() {
        println!("not measured, past the budget of {} s (--budget-s): {}", args.budget_s, bench.not_measured.join(", "));
    }
    // What the chapter's planted bugs return, recorded beside the measurements (not in a quick run).
    if !args.planner_only {
        match reduction::measure::dl_demos::demos(&gpu) {
            Ok(demos) => {
                let path = records::demos_file(&data_dir, &slug);
                records::write_demos(&path, &machine, &demos)?;
                for d in &demos {
                    println!("{:<16} {:<40} {:>6} × {:<6} largest relative error {:.3e}, {} of {} rows NaN; {}", d.demo, d.kernel, d.m, d.n, d.max_rel_error, d.nan_rows, d.rows, d.note);
                }
            }
            Err(e) => println!("planted bugs' outputs not recorded: {e}"),
        }
    }
    if !args.no_peers {
        // The shapes ours measured, in the same order, so that a budget keeps the same ones.
        let shapes: Vec<String> = dl_bench::shapes_measured(&bench.rows).iter().map(|(m, n)| format!("{m}x{n}")).collect();
        let dtypes: Vec<&str> = config.dtypes.iter().map(|d| d.name()).collect();
        let ops: Vec<&str> = config.ops.iter().map(|o| o.name()).collect();
        if shapes.is_empty() {
            println!("peers not measured: no shape of ours was");
        } else {
            run_peers(&dir, &shapes.join(","), &dtypes.join(","), &ops.join(","), args.peers_budget_s);
        }
    }
    if args.out.is_none() {
        return render();
    }
    Ok(ExitCode::SUCCESS)
}

/// `python3 plots/dl_peers.py` on the same shapes, in the same run, with its own budget (no new
/// case after `budget_s`; killed 90 s past it); a missing Python or library is reported, not
/// fatal (the script says which peers it could not import, and why).
fn run_peers(dir: &Path, shapes: &str, dtypes: &str, ops: &str, budget_s: u64) {
    let script = Path::new("plots/dl_peers.py");
    if !script.is_file() {
        println!("peers not measured: {} not found (run from the repository's root)", script.display());
        return;
    }
    println!("\nthe peers on the same shapes: python3 {} (budget {})", script.display(), if budget_s > 0 { format!("{budget_s} s") } else { "none".into() });
    let mut command = std::process::Command::new("python3");
    command.arg(script).arg("--out").arg(dir).arg("--shapes").arg(shapes).arg("--dtypes").arg(dtypes).arg("--ops").arg(ops);
    // A Rust parent passes its device-memory cap down (REDUCTION_DEVICE_MEMORY is inherited).
    let deadline = if budget_s > 0 {
        command.arg("--budget-s").arg(budget_s.to_string());
        std::time::Duration::from_secs(budget_s + 90)
    } else {
        std::time::Duration::from_secs(24 * 3600)
    };
    let started = std::time::Instant::now();
    match super::peers::run_within(&mut command, deadline) {
        Ok(()) => println!("the peers: done in {:.0} s", started.elapsed().as_secs_f64()),
        Err(why) => println!("peers: python3 {} {why}; what it wrote before is kept", script.display()),
    }
}

/// `block:8:64`, `staged:4:128`, `lanes:8:4`, `cluster:8:8:256`, `split:4:8:512`: a team for
/// `--team` (the planner still checks it against the kernels' menu and sizes the grid).
fn parse_team(text: &str) -> Result<Choice, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let number = |s: &str| s.parse::<u32>().map_err(|_| format!("{text}: {s} is not a whole number"));
    match parts.as_slice() {
        ["block", vpt, block] => Ok(Choice { team: Team::Block, vpt: number(vpt)?, block: number(block)? }),
        ["staged", vpt, block] => Ok(Choice { team: Team::StagedBlock, vpt: number(vpt)?, block: number(block)? }),
        // The lanes entries' blocks are 256 threads (their launch bound), several rows each.
        ["lanes", lanes, vpt] => Ok(Choice { team: Team::Lanes(number(lanes)?), vpt: number(vpt)?, block: 256 }),
        ["cluster", c, vpt, block] => Ok(Choice { team: Team::Cluster(number(c)?), vpt: number(vpt)?, block: number(block)? }),
        ["split", slices, vpt, block] => Ok(Choice { team: Team::Split(number(slices)?), vpt: number(vpt)?, block: number(block)? }),
        _ => Err(format!("{text}: a team is block:VPT:THREADS, staged:VPT:THREADS, lanes:LANES:VPT, cluster:C:VPT:THREADS or split:S:VPT:THREADS")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_team_is_parsed_or_refused_with_the_forms_it_takes() {
        assert_eq!(parse_team("block:2:256"), Ok(Choice { team: Team::Block, vpt: 2, block: 256 }));
        assert_eq!(parse_team("staged:4:128"), Ok(Choice { team: Team::StagedBlock, vpt: 4, block: 128 }));
        assert_eq!(parse_team("lanes:8:4"), Ok(Choice { team: Team::Lanes(8), vpt: 4, block: 256 }));
        assert_eq!(parse_team("cluster:8:8:256"), Ok(Choice { team: Team::Cluster(8), vpt: 8, block: 256 }));
        assert_eq!(parse_team("split:4:8:512"), Ok(Choice { team: Team::Split(4), vpt: 8, block: 512 }));
        for bad in ["block:2", "block:two:256", "warp:8:4", ""] {
            assert!(parse_team(bad).unwrap_err().contains("block:VPT:THREADS") || parse_team(bad).unwrap_err().contains("not a whole number"), "{bad}");
        }
    }
}

