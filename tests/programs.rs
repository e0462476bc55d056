//! The CUDA programs the GPU host builds with nvcc (`plots/*.cu`: CUB's own sum, the finishing
//! experiment), compiled here with no GPU, for the book's minimum architecture and for sm_90, so
//! that a program that does not build is found before a call on the GPU host is spent on it.
//! Where no nvcc is found (on PATH, in `$CUDA_HOME/bin` or `/usr/local/cuda/bin`), each trial is
//! reported ignored with the reason; with `REQUIRE_NVCC=1` (CI, which installs nvcc from PyPI) it
//! fails instead.

use libtest_mimic::{Arguments, Completion, Trial};
use std::path::PathBuf;
use std::process::Command;

/// The repository: the current directory where it holds the programs, else the crate's own.
fn root() -> PathBuf {
    let here = PathBuf::from(".");
    if here.join("plots/cub_sum.cu").is_file() { here } else { PathBuf::from(env!("CARGO_MANIFEST_DIR")) }
}

/// The first nvcc that answers `--version`.
fn nvcc() -> Result<PathBuf, String> {
    let mut candidates = vec![PathBuf::from("nvcc")];
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(home).join("bin/nvcc"));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/bin/nvcc"));
    candidates
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        .ok_or_else(|| "no nvcc on PATH, in $CUDA_HOME/bin or /usr/local/cuda/bin".to_string())
}

fn required() -> bool {
    std::env::var("REQUIRE_NVCC").is_ok_and(|v| v == "1")
}

/// The book's minimum architecture and the H200's.
const ARCHITECTURES: [&str; 2] = ["sm_75", "sm_90"];

fn compile(program: String, arch: &'static str) -> Trial {
    let name = format!("nvcc::{}::{arch}", program.trim_start_matches("plots/"));
    Trial::ignorable_test(name, move || {
        let nvcc = match nvcc() {
            Ok(nvcc) => nvcc,
            Err(why) if required() => return Err(format!("{why} (REQUIRE_NVCC=1)").into()),
            Err(why) => return Ok(Completion::ignored_with(why)),
        };
        let object = std::env::temp_dir().join(format!("reduction-programs-{}-{arch}-{}.o", program.replace('/', "_"), std::process::id()));
        // The flags the GPU host builds them with (the programs' headers), compile only: no GPU
        // and no CUDA runtime library is needed.
        let out = Command::new(&nvcc)
            .args(["-O3", "-std=c++17", &format!("-arch={arch}"), "-Xcompiler", "-fopenmp", "-c", "-o"])
            .arg(&object)
            .arg(root().join(&program))
            .output()
            .map_err(|e| format!("{} could not be started: {e}", nvcc.display()))?;
        let _ = std::fs::remove_file(&object);
        if !out.status.success() {
            return Err(format!("{program} for {arch}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(Completion::Completed)
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut programs: Vec<String> = std::fs::read_dir(root().join("plots"))
        .expect("plots/ is in the repository")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".cu"))
        .map(|f| format!("plots/{f}"))
        .collect();
    programs.sort();
    assert!(programs.iter().any(|p| p == "plots/cub_sum.cu"), "plots/cub_sum.cu is one of the programs: {programs:?}");
    let trials = programs.into_iter().flat_map(|p| ARCHITECTURES.map(|arch| compile(p.clone(), arch))).collect();
    libtest_mimic::run(&args, trials).exit();
}
