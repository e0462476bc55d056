//! The peers in the benchmark's own run: `reduction bench` runs, after each element type's
//! kernels, the libraries a reader would otherwise call, as child processes on the same GPU —
//! `plots/peers.py` (torch.sum, CuPy's CUB sum, graph-amortized and host-visible), the CUB
//! program `plots/cub_sum.cu` (built with nvcc where nvcc exists) and, for f32 and i32,
//! `plots/tile_peers.py --no-rows --dtypes <type>` (TileLang, Triton). Each writes its CSV in the benchmark's
//! columns into a scratch folder; the rows come back here, their `method` saying which run they
//! were measured in. A peer that cannot run (no Python, no PyTorch, no nvcc) is skipped with the
//! reason printed: the peers are not part of the book's own measurement.

use reduction::records::bench::{self as results, Row};
use reduction::Dtype;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the peers run from and write to.
pub struct Peers {
    scratch: PathBuf,
    /// The built CUB program, or why there is none.
    cub: Result<PathBuf, String>,
    sizes: String,
}

impl Peers {
    /// Build the CUB program (once), for the sizes the benchmark measures.
    pub fn prepare(sizes: &[usize]) -> Peers {
        let scratch = std::env::temp_dir().join(format!("reduction-peers-{}", std::process::id()));
        let _ = std::fs::create_dir_all(&scratch);
        let cub = build_cub(&scratch);
        if let Err(why) = &cub {
            println!("CUB called directly: not measured: {why}");
        }
        Peers { scratch, cub, sizes: sizes.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(",") }
    }

    /// Every peer on `dtype` at the benchmark's sizes, now: their rows, each `method` noting
    /// the run. With `budget` (the benchmark runs under `REDUCTION_DEVICE_MEMORY`), each peer is
    /// told to fit in that many bytes of device memory, in the same variable.
    pub fn run(&self, dtype: Dtype, after: &str, budget: Option<usize>) -> Vec<Row> {
        let capped = |command: &mut Command| {
            if let Some(bytes) = budget {
                command.env(reduction::device_memory::VAR, bytes.to_string());
            }
        };
        let dir = self.scratch.join(dtype.name());
        let _ = std::fs::create_dir_all(&dir);
        let note = format!("in reduction bench's run, after its {after}");
        let mut rows = Vec::new();
        let python = |script: &str, args: &[&str]| -> Option<()> {
            if !Path::new(script).is_file() {
                println!("{script}: not measured: not found (run from the repository's root)");
                return None;
            }
            println!("\nthe peers on {dtype}: python3 {script} {}", args.join(" "));
            let mut command = Command::new("python3");
            capped(&mut command);
            match run_with_deadline(command.arg(script).args(args)) {
                Ok(()) => Some(()),
                Err(why) => {
                    println!("{script}: {why}");
                    None
                }
            }
        };
        let out = dir.to_string_lossy().to_string();
        let command = format!("reduction bench (plots/peers.py, {note})");
        if python("plots/peers.py", &["--out", &out, "--sizes", &self.sizes, "--dtypes", dtype.name(), "--command", &command]).is_some() {
            rows.extend(read_rows(&dir, "-peers.csv", &note));
        }
        if matches!(dtype, Dtype::F32 | Dtype::I32) {
            let tile = dir.join("tile");
            let tile_out = tile.to_string_lossy().to_string();
            let command = format!("reduction bench (plots/tile_peers.py, {note})");
            if python("plots/tile_peers.py", &["--no-rows", "--sums-out", &tile_out, "--rows-out", &tile_out, "--sizes", &self.sizes, "--dtypes", dtype.name(), "--command", &command]).is_some() {
                rows.extend(read_rows(&tile, ".csv", &note));
            }
        }
        if let Ok(program) = &self.cub {
            let csv = dir.join("cub.csv");
            println!("\nCUB called directly on {dtype}: {}", program.display());
            let mut command = Command::new(program);
            capped(&mut command);
            match run_with_deadline(command.args(["--sizes", &self.sizes, "--dtypes", dtype.name(), "--out"]).arg(&csv)) {
                Ok(()) => match results::read_csv(&csv) {
                    Ok((_, read)) => rows.extend(noted(read, &note)),
                    Err(e) => println!("CUB called directly: its CSV could not be read: {e}"),
                },
                Err(why) => println!("CUB called directly: {why}"),
            }
        }
        rows
    }
}

impl Drop for Peers {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// How long one peer's process may run before it is killed (and its rows left out): a peer
/// that hangs must not take the benchmark with it.
pub const PEER_DEADLINE: std::time::Duration = std::time::Duration::from_secs(180);

/// Run `command` to its end, or kill it at [`PEER_DEADLINE`]; `Err` says which happened.
fn run_with_deadline(command: &mut Command) -> Result<(), String> {
    run_within(command, PEER_DEADLINE)
}

pub fn run_within(command: &mut Command, deadline: std::time::Duration) -> Result<(), String> {
    let mut child = command.spawn().map_err(|e| format!("could not be started: {e}"))?;
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("exited with {status} (it says why above)")),
            Ok(None) if started.elapsed() > deadline => {
                reduction::child::kill_with_descendants(&mut child);
                let _ = child.wait();
                return Err(format!("killed after {:.1} s, its deadline", deadline.as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(100)),
            Err(e) => return Err(format!("could not be waited for: {e}")),
        }
    }
}

/// `nvcc -O3 -std=c++17 -arch=native plots/cub_sum.cu`, into the scratch folder.
fn build_cub(scratch: &Path) -> Result<PathBuf, String> {
    let source = Path::new("plots/cub_sum.cu");
    if !source.is_file() {
        return Err(format!("{} not found (run from the repository's root)", source.display()));
    }
    let program = scratch.join("cub_sum");
    println!("CUB called directly: building {} with nvcc", source.display());
    // nvcc on PATH, or the toolkit's usual place.
    let nvcc = if Command::new("nvcc").arg("--version").output().is_ok() { "nvcc".to_string() } else { "/usr/local/cuda/bin/nvcc".to_string() };
    run_with_deadline(Command::new(&nvcc).args(["-O3", "-std=c++17", "-arch=native", "-Xcompiler", "-fopenmp", "-o"]).arg(&program).arg(source))
        .map_err(|why| format!("{nvcc} {why}: CUB's own program needs the CUDA toolkit"))?;
    Ok(program)
}

/// The rows of the results files in `dir` whose names end in `suffix`.
fn read_rows(dir: &Path, suffix: &str, note: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.to_string_lossy().ends_with(suffix) && path.is_file() {
            match results::read_csv(&path) {
                Ok((_, read)) => rows.extend(noted(read, note)),
                Err(e) => println!("{}: could not be read: {e}", path.display()),
            }
        }
    }
    rows
}

fn noted(rows: Vec<Row>, note: &str) -> Vec<Row> {
    rows.into_iter().map(|mut r| {
        r.method = format!("{}; {note}", r.method);
        r
    }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_peer_that_fails_or_hangs_is_reported_not_waited_for() {
        assert_eq!(run_within(&mut Command::new("true"), Duration::from_secs(10)), Ok(()));
        assert!(run_within(&mut Command::new("false"), Duration::from_secs(10)).unwrap_err().starts_with("exited with"));
        let started = std::time::Instant::now();
        let hung = run_within(Command::new("sleep").arg("30"), Duration::from_millis(300)).unwrap_err();
        assert!(hung.starts_with("killed after"), "{hung}");
        assert!(started.elapsed() < Duration::from_secs(10), "the hung child was waited for");
        assert!(run_within(&mut Command::new("no-such-program-here"), Duration::from_secs(1)).unwrap_err().starts_with("could not be started"));
    }
}
