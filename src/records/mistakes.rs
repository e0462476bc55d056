//! What the mistakes did, as data: one [`Recorded`] row per mistake, and a recorded run
//! ([`Records`]) as `plots/data/mistakes/<gpu>.csv`. Written by `reduction mistakes --record`
//! and `tests/mistakes.rs` (`mistakes::Observation::record`), read by `book::mistakes`.

use super::csv::{self, Header};
use super::machine::Machine;
use crate::child::Phase;
use crate::error::{io_error, Result};
use cudarc::driver::DriverError;
use serde::{Deserialize, Serialize, Serializer};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a mistake did, without the data: what tests assert and tables print (the `outcome`
/// column).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    Correct,
    WrongResult,
    LaunchError,
    Hang,
    Crashed,
}

impl Class {
    pub const ALL: [Class; 5] = [Class::Correct, Class::WrongResult, Class::LaunchError, Class::Hang, Class::Crashed];

    pub fn name(self) -> &'static str {
        match self {
            Class::Correct => "correct",
            Class::WrongResult => "wrong-result",
            Class::LaunchError => "launch-error",
            Class::Hang => "hang",
            Class::Crashed => "crashed",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// A CUDA driver error as a record keeps it: the code's name and the driver's sentence for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CudaCode {
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`.
    pub name: String,
    /// `an illegal memory access was encountered` (empty where the driver gave none).
    pub description: String,
}

impl CudaCode {
    /// The name of the error's code, and the driver's sentence for it (asked of the driver,
    /// which raised it).
    pub fn of(error: DriverError) -> CudaCode {
        let description = error.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        CudaCode { name: format!("{:?}", error.0), description }
    }

    /// `` `CUDA_ERROR_ILLEGAL_ADDRESS` (an illegal memory access was encountered) ``.
    pub fn words(&self) -> String {
        if self.description.is_empty() {
            format!("`{}`", self.name)
        } else {
            format!("`{}` ({})", self.name, self.description)
        }
    }
}

/// One mistake's row in `plots/data/mistakes/<gpu>.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub mistake: String,
    pub number: u32,
    pub outcome: Class,
    /// For a hang: which deadline it overran.
    pub phase: Option<Phase>,
    /// For a launch error raised by the driver: its code's name, and the driver's sentence.
    pub cuda_error: Option<String>,
    pub cuda_error_text: Option<String>,
    pub runs: usize,
    pub wrong_runs: usize,
    pub fix_wrong_runs: Option<usize>,
    #[serde(serialize_with = "shortest")]
    pub got: Option<f64>,
    #[serde(serialize_with = "shortest")]
    pub expected: Option<f64>,
    /// Microseconds, kept to three decimals in the file.
    #[serde(serialize_with = "rounded_to_ns")]
    pub mistake_us: Option<f64>,
    #[serde(serialize_with = "rounded_to_ns")]
    pub fix_us: Option<f64>,
    /// Seconds from the spawn to READY, and from READY to the end (the kill, for a hang).
    #[serde(serialize_with = "csv::three_decimals")]
    pub startup_s: Option<f64>,
    #[serde(serialize_with = "csv::three_decimals")]
    pub elapsed_s: f64,
    /// The error, in full (launch error), or the status and message (crash).
    pub message: String,
    pub detail: String,
}

impl Recorded {
    /// The driver's error of a launch error, where it was the driver's.
    pub fn cuda_code(&self) -> Option<CudaCode> {
        self.cuda_error.as_ref().map(|name| CudaCode { name: name.clone(), description: self.cuda_error_text.clone().unwrap_or_default() })
    }
}

/// A recorded run: the header block (what, where, when) and one row per mistake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    pub header: Header,
    pub rows: Vec<Recorded>,
}

impl Records {
    pub fn get(&self, key: &str) -> Option<&str> {
        csv::value(&self.header, key)
    }
}

const COLUMNS: &str = "mistake,number,outcome,phase,cuda_error,cuda_error_text,runs,wrong_runs,fix_wrong_runs,got,expected,mistake_us,fix_us,startup_s,elapsed_s,message,detail";

/// The header block of a recorded run on `machine`: each mistake ran `runs` times on `n` values
/// from `seed`, under a run deadline of `deadline`.
pub fn header(machine: &Machine, n: usize, runs: usize, seed: u64, deadline: Duration) -> Header {
    let mut header = machine.keep(&["gpu", "compute_capability", "driver_cuda", "nvrtc", "date"]);
    header.extend([("n", n.to_string()), ("runs", runs.to_string()), ("seed", seed.to_string()), ("deadline_s", format!("{}", deadline.as_secs_f64()))].map(|(k, v)| (k.to_string(), v)));
    header.extend(machine.keep(&["command"]));
    header.into_iter().map(|(k, v)| (k, one_line(&v))).collect()
}

/// Where to record for `MISTAKES_RECORD`-style targets: a directory (existing, or written with a
/// trailing `/`) gets `<gpu-slug>.csv`; anything else is the file itself.
pub fn record_path(target: &Path, gpu_name: &str) -> PathBuf {
    if target.is_dir() || target.to_string_lossy().ends_with('/') {
        target.join(format!("{}.csv", super::slug(gpu_name)))
    } else {
        target.to_path_buf()
    }
}

/// Where the recorded runs are: `plots/data/mistakes/`.
pub fn records_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("mistakes")
}

/// Write a recorded run, as `# key: value` lines and CSV ([`super::csv`]).
pub fn write_records(path: &Path, records: &Records) -> Result<()> {
    csv::write(path, &records.header, &records.rows)
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A sum as Rust prints it: `74657`, `-647.5221557617188`; nothing for none.
fn shortest<S: Serializer>(x: &Option<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&x.map(|v| format!("{v}")).unwrap_or_default())
}

/// A time in µs rounded to the nanosecond, printed shortest: `152.406`.
fn rounded_to_ns<S: Serializer>(x: &Option<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    shortest(&x.map(round3), s)
}

pub fn read_records(path: &Path) -> Result<Records> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_records(&text).map_err(|why| io_error(path, why))
}

/// Read a recorded run from its text; `Err` says which line or record is wrong.
pub fn parse_records(text: &str) -> std::result::Result<Records, String> {
    csv::expect_columns(text, COLUMNS)?;
    let (header, rows) = csv::from_str(text, "mistakes records").map_err(|e| e.to_string())?;
    Ok(Records { header, rows })
}

/// `s` on one line, its runs of whitespace made single spaces.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A recorded run of every mistake of `numbered` (number, name, outcome), for tests.
#[cfg(test)]
pub(crate) fn sample_records(numbered: &[(u32, &str, Class)]) -> Records {
    let rows = numbered
        .iter()
        .map(|&(number, name, outcome)| {
            let mut r = Recorded {
                mistake: name.into(), number, outcome, phase: None, cuda_error: None, cuda_error_text: None, runs: 20, wrong_runs: 20,
                fix_wrong_runs: None, got: None, expected: None, mistake_us: None, fix_us: None, startup_s: Some(0.9), elapsed_s: 5.01,
                message: String::new(), detail: "one launch of 4097 blocks, \"quoted\" | piped".into(),
            };
            match outcome {
                Class::WrongResult => (r.got, r.expected) = (Some(-1234.0), Some(4411.0)),
                Class::LaunchError => {
                    r.cuda_error = Some("CUDA_ERROR_ILLEGAL_ADDRESS".into());
                    r.cuda_error_text = Some("an illegal memory access was encountered".into());
                    r.message = "CUDA error while pass 1 of 3: DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access was encountered\")".into();
                }
                Class::Hang => (r.phase, r.elapsed_s) = (Some(Phase::Run), 5.004),
                Class::Correct | Class::Crashed => {}
            }
            if name == "partials_to_host" {
                (r.mistake_us, r.fix_us, r.fix_wrong_runs, r.runs, r.wrong_runs) = (Some(181.235), Some(40.0), Some(0), 20, 0);
            }
            r
        })
        .collect();
    let header = vec![("gpu".to_string(), "NVIDIA Test GPU".to_string()), ("n".into(), "1048613".into()), ("runs".into(), "20".into())];
    Records { header, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Records {
        sample_records(&[(1, "sync_in_branch", Class::Correct), (2, "warp_no_volatile", Class::WrongResult), (7, "shared_size_missing", Class::LaunchError), (8, "grid_barrier_spin", Class::Hang), (10, "partials_to_host", Class::Correct)])
    }

    #[test]
    fn records_round_trip_through_the_csv() {
        let records = sample();
        let path = std::env::temp_dir().join(format!("reduction-mistakes-{}.csv", std::process::id()));
        write_records(&path, &records).unwrap();
        let back = read_records(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(back, records);
        assert_eq!(back.rows[3].phase, Some(Phase::Run));
        assert_eq!(back.rows[2].cuda_code().unwrap().words(), "`CUDA_ERROR_ILLEGAL_ADDRESS` (an illegal memory access was encountered)");
        assert!(parse_records("nonsense\n").unwrap_err().contains("line 1"));
        assert!(parse_records(&format!("{COLUMNS}\nx,1\n")).unwrap_err().contains("record 1"));
    }

    #[test]
    fn the_header_keeps_the_machine_and_the_runs() {
        let machine = Machine { gpu: "NVIDIA H200".into(), compute_capability: "9.0".into(), driver_cuda: "13.0".into(), nvrtc: "13.0".into(), date: "2026-11-30".into(), command: "reduction  mistakes\n--record x/".into(), ..Default::default() };
        let keys: Vec<String> = header(&machine, 1048613, 20, 2007, Duration::from_secs(5)).into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        assert_eq!(keys, ["gpu=NVIDIA H200", "compute_capability=9.0", "driver_cuda=13.0", "nvrtc=13.0", "date=2026-11-30", "n=1048613", "runs=20", "seed=2007", "deadline_s=5", "command=reduction mistakes --record x/"]);
    }

    #[test]
    fn record_targets_are_files_or_directories() {
        assert_eq!(record_path(Path::new("out/"), "NVIDIA H200"), Path::new("out/nvidia-h200.csv"));
        assert_eq!(record_path(Path::new("out/h200.csv"), "NVIDIA H200"), Path::new("out/h200.csv"));
        assert_eq!(record_path(&std::env::temp_dir(), "NVIDIA H200"), std::env::temp_dir().join("nvidia-h200.csv"));
    }

    #[test]
    fn the_committed_run_is_read_and_written_back_byte_for_byte() {
        let files = super::super::csv_files(&records_dir(&crate::records::repo_root().join("plots/data")));
        assert!(!files.is_empty());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let records = parse_records(&text).unwrap();
            assert_eq!(csv::to_string(&records.header, &records.rows).unwrap(), text, "{}", file.display());
        }
    }
}
