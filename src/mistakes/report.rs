//! What a mistake's child reports (a [`Report`], the JSON of its `CHILD-OUTCOME` line,
//! [`crate::child::protocol`]), and what the parent concludes from the child's life
//! ([`classify`] into an [`Observation`], then [`Observation::record`] for the results file).
//! [`classify`] gives the child's report when it gave one, `Hang` when it was killed, `Crashed`
//! when it died without a report or with a line that cannot be read.

use crate::child::{outcome_line, ChildRun, Ending, Phase, OUTCOME, REAP_GRACE};
use crate::kernels::broken::Mistake;
use crate::records::mistakes::{one_line, Class, CudaCode, Recorded};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::time::Duration;

/// What happened when something that may be broken ran.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every run gave the right answer: the mistake did not show this time.
    Correct,
    /// At least one run's check failed; the first failing run's value and the expected one.
    WrongResult { got: f64, expected: f64 },
    /// An error at a launch or at the wait after it: `error` in full, and `cuda`, the driver's
    /// error code, where the driver raised it.
    LaunchError { error: String, cuda: Option<CudaCode> },
    /// No result before the deadline: the child was killed `after` that long in `phase`.
    Hang { phase: Phase, after: Duration },
    /// The child died without a report (a panic, a signal, an error before the run), or its
    /// report could not be read.
    Crashed { status: String, message: String },
}

impl Outcome {
    pub fn class(&self) -> Class {
        match self {
            Outcome::Correct => Class::Correct,
            Outcome::WrongResult { .. } => Class::WrongResult,
            Outcome::LaunchError { .. } => Class::LaunchError,
            Outcome::Hang { .. } => Class::Hang,
            Outcome::Crashed { .. } => Class::Crashed,
        }
    }
}

/// What a child reports on its [`OUTCOME`] line.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub outcome: Outcome,
    /// Runs attempted (a launch error ends the runs early).
    pub runs: usize,
    /// Runs whose check failed.
    pub wrong_runs: usize,
    /// Runs the fix got wrong, where the child also ran the fix (must be 0).
    pub fix_wrong_runs: Option<usize>,
    /// Median time of the mistaken code and of the fix, where the mistake is about speed.
    pub mistake_us: Option<f64>,
    pub fix_us: Option<f64>,
    /// A sentence of context: the grid, what a later call in the same context did, ….
    pub detail: String,
}

impl Report {
    pub fn new(outcome: Outcome) -> Report {
        Report { outcome, runs: 0, wrong_runs: 0, fix_wrong_runs: None, mistake_us: None, fix_us: None, detail: String::new() }
    }

    /// The report as one line: `CHILD-OUTCOME {"outcome":"wrong-result","got":...}`.
    pub fn to_line(&self) -> String {
        outcome_line(&Wire::from(self)).expect("a report always serializes")
    }

    /// Print the line and flush.
    pub fn print(&self) -> Result<(), String> {
        crate::child::print_outcome(&Wire::from(self))
    }

    /// Read a report back from its JSON object (the line without its prefix).
    pub fn parse(json: &str) -> Result<Report, String> {
        let wire: Wire = serde_json::from_str(json.trim()).map_err(|e| e.to_string())?;
        Ok(wire.into())
    }
}

// ---- the report on the wire: one flat JSON object ----

/// A [`Report`] as its line carries it: the outcome's class and its data flattened into one
/// object with the counts, so that a person reading a child's output reads plain fields.
#[derive(Serialize, Deserialize)]
struct Wire {
    #[serde(flatten)]
    outcome: WireOutcome,
    runs: usize,
    wrong_runs: usize,
    fix_wrong_runs: Option<usize>,
    mistake_us: Option<Number>,
    fix_us: Option<Number>,
    #[serde(default)]
    detail: String,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
enum WireOutcome {
    Correct,
    WrongResult { got: Number, expected: Number },
    LaunchError {
        error: String,
        #[serde(default)]
        cuda_error: Option<String>,
        #[serde(default)]
        cuda_error_text: Option<String>,
    },
    Hang { phase: Phase, after_s: f64 },
    Crashed { status: String, message: String },
}

/// A number that survives JSON: finite as a number; NaN and infinities (a poisoned `f32` sum)
/// as the strings `"NaN"`, `"inf"`, `"-inf"`, which JSON has no numbers for.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Number {
    Finite(f64),
    Special(String),
}

impl From<f64> for Number {
    fn from(x: f64) -> Number {
        if x.is_finite() { Number::Finite(x) } else { Number::Special(format!("{x}")) }
    }
}

impl Number {
    fn value(&self) -> f64 {
        match self {
            Number::Finite(x) => *x,
            Number::Special(s) => s.parse().unwrap_or(f64::NAN),
        }
    }
}

impl From<&Report> for Wire {
    fn from(r: &Report) -> Wire {
        let outcome = match &r.outcome {
            Outcome::Correct => WireOutcome::Correct,
            Outcome::WrongResult { got, expected } => WireOutcome::WrongResult { got: (*got).into(), expected: (*expected).into() },
            Outcome::LaunchError { error, cuda } => WireOutcome::LaunchError {
                error: error.clone(),
                cuda_error: cuda.as_ref().map(|c| c.name.clone()),
                cuda_error_text: cuda.as_ref().map(|c| c.description.clone()),
            },
            Outcome::Hang { phase, after } => WireOutcome::Hang { phase: *phase, after_s: after.as_secs_f64() },
            Outcome::Crashed { status, message } => WireOutcome::Crashed { status: status.clone(), message: message.clone() },
        };
        Wire {
            outcome,
            runs: r.runs,
            wrong_runs: r.wrong_runs,
            fix_wrong_runs: r.fix_wrong_runs,
            mistake_us: r.mistake_us.map(Number::from),
            fix_us: r.fix_us.map(Number::from),
            detail: r.detail.clone(),
        }
    }
}

impl From<Wire> for Report {
    fn from(w: Wire) -> Report {
        let outcome = match w.outcome {
            WireOutcome::Correct => Outcome::Correct,
            WireOutcome::WrongResult { got, expected } => Outcome::WrongResult { got: got.value(), expected: expected.value() },
            WireOutcome::LaunchError { error, cuda_error, cuda_error_text } => {
                Outcome::LaunchError { error, cuda: cuda_error.map(|name| CudaCode { name, description: cuda_error_text.unwrap_or_default() }) }
            }
            WireOutcome::Hang { phase, after_s } => Outcome::Hang { phase, after: Duration::from_secs_f64(after_s.max(0.0)) },
            WireOutcome::Crashed { status, message } => Outcome::Crashed { status, message },
        };
        Report {
            outcome,
            runs: w.runs,
            wrong_runs: w.wrong_runs,
            fix_wrong_runs: w.fix_wrong_runs,
            mistake_us: w.mistake_us.as_ref().map(Number::value),
            fix_us: w.fix_us.as_ref().map(Number::value),
            detail: w.detail,
        }
    }
}

/// What the parent concluded about one child: its report, and how long it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub report: Report,
    /// From the spawn to the first [`READY`](crate::child::READY).
    pub startup: Option<Duration>,
    /// From the last [`READY`](crate::child::READY) (or the spawn) to the exit or the kill.
    pub run_time: Duration,
    /// The child's last lines of stderr.
    pub stderr_tail: String,
}

impl Observation {
    pub fn outcome(&self) -> &Outcome {
        &self.report.outcome
    }

    /// This observation of `mistake` as a row of the results file.
    pub fn record(&self, mistake: &Mistake) -> Recorded {
        let r = &self.report;
        let (got, expected) = match r.outcome {
            Outcome::WrongResult { got, expected } => (Some(got), Some(expected)),
            _ => (None, None),
        };
        let (phase, cuda, message) = match &r.outcome {
            Outcome::Correct | Outcome::WrongResult { .. } => (None, None, String::new()),
            Outcome::LaunchError { error, cuda } => (None, cuda.clone(), error.clone()),
            Outcome::Hang { phase, .. } => (Some(*phase), None, String::new()),
            Outcome::Crashed { status, message } => (None, None, format!("{status}: {message}")),
        };
        Recorded {
            mistake: mistake.name.to_string(),
            number: mistake.number,
            outcome: r.outcome.class(),
            phase,
            cuda_error: cuda.as_ref().map(|c| c.name.clone()),
            cuda_error_text: cuda.map(|c| c.description),
            runs: r.runs,
            wrong_runs: r.wrong_runs,
            fix_wrong_runs: r.fix_wrong_runs,
            got,
            expected,
            mistake_us: r.mistake_us,
            fix_us: r.fix_us,
            startup_s: self.startup.map(|d| d.as_secs_f64()),
            elapsed_s: self.run_time.as_secs_f64(),
            message: one_line(&message),
            detail: one_line(&r.detail),
        }
    }
}

/// Turn what a child did into an [`Observation`]: its report if it printed one (noting an
/// unusual exit after it), `Hang` if the guard killed it, `Crashed` otherwise.
pub fn classify(run: &ChildRun) -> Observation {
    let stderr_tail = run.stderr_tail(12);
    let report = match (&run.ending, run.outcome_json()) {
        (Ending::Killed { phase, reaped }, _) => {
            let mut report = Report::new(Outcome::Hang { phase: *phase, after: run.run_time() });
            report.detail = run.stderr_tail(1);
            if !reaped {
                let _ = write!(report.detail, " (the killed child had not exited {} s later)", REAP_GRACE.as_secs());
            }
            report
        }
        (Ending::Exited { success, status }, Some(json)) => match Report::parse(json) {
            Ok(mut report) => {
                if !success {
                    let _ = write!(report.detail, "{}(after its report the child ended with {status})", if report.detail.is_empty() { "" } else { " " });
                }
                report
            }
            Err(why) => Report::new(Outcome::Crashed {
                status: status.clone(),
                message: format!("unreadable {OUTCOME} line ({why}): {}", json.chars().take(200).collect::<String>()),
            }),
        },
        (Ending::Exited { status, .. }, None) => Report::new(Outcome::Crashed {
            status: status.clone(),
            message: match panic_message(&run.stderr) {
                Some(panic) => panic,
                None if stderr_tail.is_empty() => "no report and no message".into(),
                None => stderr_tail.clone(),
            },
        }),
    };
    Observation { report, startup: run.ready_after, run_time: run.run_time(), stderr_tail }
}

/// A Rust panic's "thread … panicked at file:line:" line and its message, from a child's stderr
/// (a backtrace after it would push it out of the tail).
fn panic_message(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines.iter().rposition(|l| l.contains("panicked at"))?;
    Some(lines[at..].iter().take(2).map(|l| l.trim()).collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_report() -> Report {
        Report {
            outcome: Outcome::WrongResult { got: -12.0, expected: 4411.0 },
            runs: 20,
            wrong_runs: 20,
            fix_wrong_runs: Some(0),
            mistake_us: Some(181.25),
            fix_us: None,
            detail: "grid 4097 > 1056 \"resident\", one\nline\\two\ttab \u{1}".into(),
        }
    }

    #[test]
    fn reports_round_trip_through_their_line() {
        let mut reports = vec![full_report(), Report::new(Outcome::Correct)];
        reports.push(Report::new(Outcome::LaunchError { error: "DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access\")".into(), cuda: None }));
        let cuda = CudaCode { name: "CUDA_ERROR_ILLEGAL_ADDRESS".into(), description: "an illegal memory access was encountered".into() };
        reports.push(Report::new(Outcome::LaunchError { error: "pass 1 of 3: CUDA error".into(), cuda: Some(cuda) }));
        reports.push(Report::new(Outcome::Hang { phase: Phase::Run, after: Duration::from_millis(5250) }));
        reports.push(Report::new(Outcome::Crashed { status: "killed by signal 11 (SIGSEGV)".into(), message: "é ünïcode".into() }));
        for report in reports {
            let line = report.to_line();
            assert!(!line.contains('\n'), "{line}");
            let json = line.strip_prefix(OUTCOME).unwrap();
            assert_eq!(Report::parse(json).unwrap(), report, "{line}");
        }
    }

    #[test]
    fn a_nan_sum_survives_the_line() {
        let report = Report::new(Outcome::WrongResult { got: f64::NAN, expected: 1.5 });
        let parsed = Report::parse(report.to_line().strip_prefix(OUTCOME).unwrap()).unwrap();
        match parsed.outcome {
            Outcome::WrongResult { got, expected } => assert!(got.is_nan() && expected == 1.5),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_lines_are_refused_with_a_reason() {
        for (json, why) in [
            ("{not json", "key must be a string"),
            ("{\"outcome\":\"exploded\",\"runs\":1,\"wrong_runs\":0}", "unknown variant `exploded`"),
            ("{\"outcome\":\"wrong-result\",\"runs\":1,\"wrong_runs\":1}", "missing field `got`"),
            ("{\"outcome\":\"correct\",\"runs\":-1,\"wrong_runs\":0}", "-1"),
            ("{\"outcome\":\"correct\",\"runs\":1,\"wrong_runs\":0} trailing", "trailing characters"),
        ] {
            let err = Report::parse(json).unwrap_err();
            assert!(err.contains(why), "{json}: {err}");
        }
    }
}
