//! The Python peers of the operators and deep-learning reductions (`plots/op_peers.py`,
//! `plots/dl_peers.py`), checked with no GPU: their own self-tests (the command line of the peers
//! interface, the byte counts, the CSV rows of the measured and the refused), a bad argument
//! refused with status 2, and -- where PyTorch or a GPU is missing -- a clear one-line reason
//! and a non-zero exit instead of a traceback. Where a GPU is there, the last trial measures one
//! small shape and reads the CSV back.
//!
//! Where python3 cannot be started, every trial is reported ignored with the reason.

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository: the current directory where it holds the scripts, else the crate's own.
fn root() -> PathBuf {
    let here = PathBuf::from(".");
    if here.join("plots/op_peers.py").is_file() { here } else { PathBuf::from(env!("CARGO_MANIFEST_DIR")) }
}

/// `python3 <script> <args>` from the repository's root; `Ok(Err(reason))` when python3 is missing.
fn python(script: &str, args: &[&str]) -> Result<Result<Output, String>, Failed> {
    let root = root();
    match Command::new("python3").arg(root.join(script)).args(args).current_dir(&root).env("PYTHONDONTWRITEBYTECODE", "1").output() {
        Ok(out) => Ok(Ok(out)),
        Err(e) => Ok(Err(format!("python3 cannot be started: {e}"))),
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The script's `--self-test`: every line `ok`, and the closing `N passed, 0 failed`.
fn self_test(script: &'static str) -> Trial {
    Trial::ignorable_test(format!("self_test::{}", Path::new(script).file_stem().unwrap().to_string_lossy()), move || {
        let out = match python(script, &["--self-test"])? {
            Ok(out) => out,
            Err(why) => return Ok(Completion::ignored_with(why)),
        };
        let stdout = text(&out.stdout);
        let failed: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
        let summary = stdout.lines().last().unwrap_or("");
        if !out.status.success() || !failed.is_empty() || !summary.ends_with(" passed, 0 failed") {
            return Err(format!("{script} --self-test: {}; {failed:?}; stderr: {}", out.status, text(&out.stderr)).into());
        }
        let passed: usize = summary.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or(0);
        if passed < 20 {
            return Err(format!("{script} --self-test ran only {passed} checks").into());
        }
        Ok(Completion::Completed)
    })
}

/// A type the interface does not know is refused by name, with argparse's status 2.
fn bad_argument(script: &'static str, args: &'static [&'static str], named: &'static str) -> Trial {
    Trial::ignorable_test(format!("bad_argument::{}::{named}", Path::new(script).file_stem().unwrap().to_string_lossy()), move || {
        let out = match python(script, args)? {
            Ok(out) => out,
            Err(why) => return Ok(Completion::ignored_with(why)),
        };
        let stderr = text(&out.stderr);
        if out.status.code() != Some(2) || !stderr.contains(named) || stderr.contains("Traceback") {
            return Err(format!("{script} {args:?}: {} and {stderr:?}", out.status).into());
        }
        Ok(Completion::Completed)
    })
}

/// One tiny measurement: with no PyTorch or no GPU, a one-line reason and a failing status, never a
/// traceback; with a GPU, a results file whose columns are the interface's.
fn no_gpu_or_measured(script: &'static str, args: &'static [&'static str], file_stem: &'static str) -> Trial {
    Trial::ignorable_test(format!("without_a_gpu_a_reason::{}", Path::new(script).file_stem().unwrap().to_string_lossy()), move || {
        let out_dir = std::env::temp_dir().join(format!("reduction-peers-{}-{file_stem}", std::process::id()));
        let out_arg = out_dir.display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--out", &out_arg]);
        let out = match python(script, &all)? {
            Ok(out) => out,
            Err(why) => return Ok(Completion::ignored_with(why)),
        };
        let stderr = text(&out.stderr);
        if stderr.contains("Traceback") {
            return Err(format!("{script} crashed: {stderr}").into());
        }
        if !out.status.success() {
            let said = stderr.trim();
            if said.contains("PyTorch") || said.contains("GPU") {
                return Ok(Completion::Completed);
            }
            return Err(format!("{script} failed without saying why: {} {said:?}", out.status).into());
        }
        // A GPU was there: the file it wrote has the interface's columns.
        let csv = std::fs::read_dir(&out_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.to_string_lossy().ends_with("-peers.csv"))
            .ok_or("no <gpu-slug>-peers.csv written")?;
        let body = std::fs::read_to_string(&csv)?;
        let columns = body.lines().find(|l| !l.starts_with('#')).unwrap_or("");
        let _ = std::fs::remove_dir_all(&out_dir);
        if !columns.ends_with(",method,op,rows") || !body.contains("# command: python3 plots/") {
            let command = body.lines().find(|l| l.starts_with("# command:")).unwrap_or("no # command: line");
            return Err(format!("{}: columns {columns:?}, {command:?}", csv.display()).into());
        }
        Ok(Completion::Completed)
    })
}

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        self_test("plots/op_peers.py"),
        self_test("plots/dl_peers.py"),
        bad_argument("plots/op_peers.py", &["--dtypes", "f32,f64"], "f64"),
        bad_argument("plots/dl_peers.py", &["--ops", "softmax,median"], "median"),
        bad_argument("plots/dl_peers.py", &["--shapes", "4096"], "4096"),
        no_gpu_or_measured("plots/op_peers.py", &["--ops", "max", "--dtypes", "f32", "--sizes", "2^10", "--shapes", "4x64", "--peers", "torch"], "op"),
        no_gpu_or_measured("plots/dl_peers.py", &["--ops", "softmax", "--dtypes", "f32", "--shapes", "4x64", "--peers", "torch_softmax"], "dl"),
    ];
    libtest_mimic::run(&args, trials).exit();
}
