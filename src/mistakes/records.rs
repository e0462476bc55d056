//! What was observed, as data: one [`Recorded`] row per mistake, and a recorded run
//! ([`Records`]) as `plots/data/mistakes/<gpu>.csv`, in the one results format of the book
//! ([`crate::book::csv_file`]).

use super::catalogue::{Mistake, RunOptions};
use super::protocol::{Class, Observation, Outcome};
use super::supervisor::Deadline;
use crate::book::csv_file;
use crate::error::{io_error, Result};
use crate::gpu::Gpu;
use serde::{Deserialize, Serialize, Serializer};
use std::path::{Path, PathBuf};

/// One mistake's row in `plots/data/mistakes/<gpu>.csv`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub mistake: String,
    pub number: u32,
    pub outcome: Class,
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
    #[serde(serialize_with = "crate::book::csv_file::three_decimals")]
    pub startup_s: Option<f64>,
    #[serde(serialize_with = "crate::book::csv_file::three_decimals")]
    pub elapsed_s: f64,
    /// The error (launch error), the phase (hang), or the status and message (crash).
    pub message: String,
    pub detail: String,
}

impl Recorded {
    pub fn new(mistake: &Mistake, observed: &Observation) -> Recorded {
        let r = &observed.report;
        let (got, expected) = match r.outcome {
            Outcome::WrongResult { got, expected } => (Some(got), Some(expected)),
            _ => (None, None),
        };
        let message = match &r.outcome {
            Outcome::Correct | Outcome::WrongResult { .. } => String::new(),
            Outcome::LaunchError(e) => e.clone(),
            Outcome::Hang { phase, .. } => phase.name().to_string(),
            Outcome::Crashed { status, message } => format!("{status}: {message}"),
        };
        Recorded {
            mistake: mistake.name.to_string(),
            number: mistake.number,
            outcome: r.outcome.class(),
            runs: r.runs,
            wrong_runs: r.wrong_runs,
            fix_wrong_runs: r.fix_wrong_runs,
            got,
            expected,
            mistake_us: r.mistake_us,
            fix_us: r.fix_us,
            startup_s: observed.startup.map(|d| d.as_secs_f64()),
            elapsed_s: observed.run_time.as_secs_f64(),
            message: one_line(&message),
            detail: one_line(&r.detail),
        }
    }
}

/// A recorded run: the header block (what, where, when) and one row per mistake.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Records {
    pub header: Vec<(String, String)>,
    pub rows: Vec<Recorded>,
}

impl Records {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.header.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

const COLUMNS: &str = "mistake,number,outcome,runs,wrong_runs,fix_wrong_runs,got,expected,mistake_us,fix_us,startup_s,elapsed_s,message,detail";

/// The header block of a recorded run on `gpu`.
pub fn header(gpu: &Gpu, options: &RunOptions, deadline: Deadline, command: &str) -> Vec<(String, String)> {
    let info = gpu.info();
    [
        ("gpu", info.name.clone()),
        ("compute_capability", format!("{}.{}", info.compute_capability.0, info.compute_capability.1)),
        ("driver_cuda", format!("{}.{}", info.driver_cuda_version.0, info.driver_cuda_version.1)),
        ("nvrtc", crate::nvrtc::version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_else(|_| "unknown".into())),
        ("date", crate::results::today()),
        ("n", options.n.to_string()),
        ("runs", options.runs.to_string()),
        ("seed", options.seed.to_string()),
        ("deadline_s", format!("{}", deadline.run.as_secs_f64())),
        ("command", command.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), one_line(&v)))
    .collect()
}

/// Where to record for `RECORD_ENV`-style targets: a directory (existing, or written with a
/// trailing `/`) gets `<gpu-slug>.csv`; anything else is the file itself.
pub fn record_path(target: &Path, gpu_name: &str) -> PathBuf {
    if target.is_dir() || target.to_string_lossy().ends_with('/') {
        target.join(format!("{}.csv", crate::results::slug(gpu_name)))
    } else {
        target.to_path_buf()
    }
}

/// Write a recorded run, as `# key: value` lines and CSV ([`crate::book::csv_file`]).
pub fn write_records(path: &Path, records: &Records) -> Result<()> {
    csv_file::write(path, &records.header, &records.rows)
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

/// Seconds to the millisecond, always three decimals: `0.055`.

pub fn read_records(path: &Path) -> Result<Records> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    parse_records(&text).map_err(|why| io_error(path, why))
}

/// Read a recorded run from its text; `Err` says which line or record is wrong.
pub fn parse_records(text: &str) -> std::result::Result<Records, String> {
    match text.lines().position(|l| !l.starts_with("# ")) {
        Some(i) if text.lines().nth(i) != Some(COLUMNS) => return Err(format!("line {}: expected the column names {COLUMNS}", i + 1)),
        None => return Err("no column header".into()),
        Some(_) => {}
    }
    let (header, rows) = csv_file::from_str(text, "mistakes records").map_err(|e| e.to_string())?;
    Ok(Records { header, rows })
}

pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A recorded run of every mistake, for tests.
#[cfg(test)]
pub(crate) fn sample_records() -> Records {
    let mut rows = Vec::new();
    for m in super::catalogue::all() {
        let outcome = match m.asserted {
            Some(Class::WrongResult) => Outcome::WrongResult { got: -1234.0, expected: 4411.0 },
            Some(Class::LaunchError) => Outcome::LaunchError("CUDA error while pass 1 of 3: DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access was encountered\")".into()),
            Some(Class::Hang) => Outcome::Hang { phase: super::supervisor::Phase::Run, after: std::time::Duration::from_millis(5004) },
            _ => Outcome::Correct,
        };
        let mut o = super::verdict::sample_observation(outcome);
        o.report.detail = "one launch of 4097 blocks, \"quoted\" | piped".into();
        if matches!(m.kind, super::catalogue::Kind::HostRoundTrips { .. }) {
            o.report.mistake_us = Some(181.2345);
            o.report.fix_us = Some(40.0);
            o.report.fix_wrong_runs = Some(0);
        }
        rows.push(Recorded::new(m, &o));
    }
    let header = vec![("gpu".to_string(), "NVIDIA Test GPU".to_string()), ("n".into(), "1048613".into()), ("runs".into(), "20".into())];
    Records { header, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_the_csv() {
        let records = sample_records();
        let path = std::env::temp_dir().join(format!("reduction-mistakes-{}.csv", std::process::id()));
        write_records(&path, &records).unwrap();
        let back = read_records(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(back.header, records.header);
        for (a, b) in back.rows.iter().zip(&records.rows) {
            assert_eq!(a.mistake, b.mistake);
            assert_eq!(a.outcome, b.outcome);
            assert_eq!(a.got, b.got);
            assert_eq!(a.message, b.message);
            assert_eq!(a.detail, b.detail);
            assert_eq!(a.mistake_us, b.mistake_us.map(round3));
        }
        assert!(parse_records("nonsense\n").unwrap_err().contains("line 1"));
        assert!(parse_records(&format!("{COLUMNS}\nx,1\n")).unwrap_err().contains("record 1"));
    }

    #[test]
    fn record_targets_are_files_or_directories() {
        assert_eq!(record_path(Path::new("out/"), "NVIDIA H200"), Path::new("out/nvidia-h200.csv"));
        assert_eq!(record_path(Path::new("out/h200.csv"), "NVIDIA H200"), Path::new("out/h200.csv"));
        assert_eq!(record_path(&std::env::temp_dir(), "NVIDIA H200"), std::env::temp_dir().join("nvidia-h200.csv"));
    }

    #[test]
    fn the_committed_run_is_read_and_written_back_byte_for_byte() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("plots/data/mistakes");
        for file in std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "csv")) {
            let text = std::fs::read_to_string(&file).unwrap();
            let records = parse_records(&text).unwrap();
            assert_eq!(csv_file::to_string(&records.header, &records.rows).unwrap(), text, "{}", file.display());
        }
    }
}
