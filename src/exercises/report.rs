//! What a check found, as the child reports it (JSON, one line) and as the reader reads it.

use super::catalogue::Exercise;
use crate::child::Sanitizer;
use serde::{Deserialize, Serialize};

/// The first case that went wrong.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Which case, in words ([`super::cases::Case::label`]), with its number.
    pub case: String,
    /// Expected and returned values, for a wrong result...
    pub expected: Option<String>,
    pub got: Option<String>,
    /// ...or the error a launch raised.
    pub error: Option<String>,
    /// What the numbers suggest ([`super::cases::diagnose`]).
    pub diagnosis: Option<String>,
}

/// A solved exercise's time, beside the book's kernel, on one input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    pub n: usize,
    pub yours_us: f64,
    pub book_kernel: String,
    pub book_us: f64,
    pub peak_gbps: Option<f64>,
    /// Exercise 2: the speed-up the book measured for its padded kernel.
    pub target: Option<String>,
    /// The timed values' type and size (f32, 4 bytes, unless an exercise says otherwise).
    #[serde(default = "f32_name")]
    pub dtype: String,
    #[serde(default = "four")]
    pub value_bytes: usize,
}

fn f32_name() -> String {
    "f32".into()
}

fn four() -> usize {
    4
}

impl Speed {
    pub fn gbps(&self, us: f64) -> f64 {
        self.n as f64 * self.value_bytes as f64 / (us * 1e-6) / 1e9
    }
}

/// The child's last line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildReport {
    pub cases_passed: usize,
    pub cases_total: usize,
    pub failure: Option<Failure>,
    pub speed: Option<Speed>,
    /// Cases not run, and why (the case past 2^31 on a GPU without the memory for it).
    #[serde(default)]
    pub skipped: Vec<String>,
}

/// The checker's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Solved { cases: usize, speed: Option<Speed>, skipped: Vec<String> },
    /// Every case right, but the source breaks a rule no test on one GPU can see
    /// ([`super::fence`]): not solved.
    RightButUnsafe { cases: usize, warning: String },
    /// Killed at the deadline on a case after answering every smaller one, its time growing
    /// with n: correct, too slow ([`super::pace`]).
    TooSlow { case: Option<String>, explanation: String },
    Failed { passed: usize, total: usize, failure: Failure },
    DidNotCompile { log: String },
    /// Killed at the deadline, during this case, and nothing says it was only slow.
    Hung { case: Option<String>, seconds: f64, explanation: String },
    /// compute-sanitizer found errors; its report.
    SanitizerFound { tool: Sanitizer, report: String },
    /// The child died without a report.
    Crashed { case: Option<String>, status: String, tail: String },
}

impl Verdict {
    pub fn solved(&self) -> bool {
        matches!(self, Verdict::Solved { .. })
    }

    /// The case the verdict names, if any.
    pub fn failing_case(&self) -> Option<&str> {
        match self {
            Verdict::Failed { failure, .. } => Some(&failure.case),
            Verdict::Hung { case, .. } | Verdict::Crashed { case, .. } | Verdict::TooSlow { case, .. } => case.as_deref(),
            _ => None,
        }
    }

    /// The report, as `reduction exercise N` prints it.
    pub fn render(&self, exercise: &Exercise, file: &str) -> String {
        let head = format!("exercise {} ({}): {file}", exercise.number, exercise.title);
        let hint = format!("hint: {}", exercise.hint);
        match self {
            Verdict::Solved { cases, speed, skipped } => {
                let mut s = format!("{head}\nSOLVED: all {cases} hidden cases right");
                for why in skipped {
                    s += &format!("\n  not run: {why}");
                }
                if let Some(speed) = speed {
                    s += &format!("\n{}", render_speed(speed));
                }
                s
            }
            Verdict::RightButUnsafe { cases, warning } => {
                format!("{head}\nNOT YET: all {cases} hidden cases right, but\n  warning: {warning}\n{hint}")
            }
            Verdict::TooSlow { case, explanation } => format!(
                "{head}\nTOO SLOW{}: {explanation}\n{hint}",
                case.as_ref().map(|c| format!(" in case {c}")).unwrap_or_default()
            ),
            Verdict::Failed { passed, total, failure } => {
                let mut s = format!("{head}\nNOT YET: case {} failed ({passed} of {total} cases passed before it)", failure.case);
                if let (Some(e), Some(g)) = (&failure.expected, &failure.got) {
                    s += &format!("\n  expected {e}\n  got      {g}");
                }
                if let Some(e) = &failure.error {
                    s += &format!("\n  error: {e}");
                }
                if let Some(d) = &failure.diagnosis {
                    s += &format!("\n  what it suggests: {d}");
                }
                format!("{s}\n{hint}")
            }
            Verdict::DidNotCompile { log } => format!("{head}\nDOES NOT COMPILE:\n{log}"),
            Verdict::Hung { case, seconds, explanation } => format!(
                "{head}\nHUNG: killed after {seconds:.1} s without a result{}\n  ({explanation})\n{hint}",
                case.as_ref().map(|c| format!(" in case {c}")).unwrap_or_default()
            ),
            Verdict::SanitizerFound { tool, report } => format!("{head}\ncompute-sanitizer --tool {tool} FOUND ERRORS:\n{report}\n{hint}"),
            Verdict::Crashed { case, status, tail } => format!(
                "{head}\nCRASHED ({status}){}:\n{tail}\n{hint}",
                case.as_ref().map(|c| format!(" in case {c}")).unwrap_or_default()
            ),
        }
    }
}

/// `yours: 412 µs = 652 GB/s (13.5% of 4814 GB/s); reduce2: ...`.
pub fn render_speed(speed: &Speed) -> String {
    let pct = |gbps: f64| speed.peak_gbps.map(|p| format!(" ({:.1}% of {:.0} GB/s)", 100.0 * gbps / p, p)).unwrap_or_default();
    let (yours, book) = (speed.gbps(speed.yours_us), speed.gbps(speed.book_us));
    let mut s = format!(
        "speed at n = {} {} (median of CUDA-event timings):\n  yours:   {:>9.1} µs = {:>6.0} GB/s{}\n  {:<8} {:>9.1} µs = {:>6.0} GB/s{}\n  yours / {}: {:.2}x",
        crate::limits::count_in_words(speed.n), speed.dtype, speed.yours_us, yours, pct(yours),
        format!("{}:", speed.book_kernel), speed.book_us, book, pct(book), speed.book_kernel, yours / book,
    );
    if let Some(target) = &speed.target {
        s += &format!("\n  target: {target}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_the_case_the_values_and_the_hint() {
        let failure = Failure {
            case: "3 (n = 3, f32)".into(), expected: Some("12".into()), got: Some("5".into()), error: None,
            diagnosis: Some("exactly the last value is missing".into()),
        };
        let text = Verdict::Failed { passed: 2, total: 44, failure }.render(&super::super::all()[2], "kernels/exercises/03_sequential.cu");
        for part in ["exercise 3", "03_sequential.cu", "NOT YET: case 3 (n = 3, f32) failed", "expected 12", "got      5", "last value", "hint: s runs"] {
            assert!(text.contains(part), "{part:?} not in\n{text}");
        }
    }

    #[test]
    fn a_solved_exercise_shows_its_bandwidth_beside_the_book_kernel() {
        let speed = Speed { n: 1 << 26, yours_us: 100.0, book_kernel: "reduce3".into(), book_us: 200.0, peak_gbps: Some(4814.0), target: None, dtype: "f32".into(), value_bytes: 4 };
        let text = Verdict::Solved { cases: 44, speed: Some(speed), skipped: vec![] }.render(&super::super::all()[2], "f.cu");
        assert!(text.contains("SOLVED: all 44"), "{text}");
        assert!(text.contains("2684 GB/s (55.8% of 4814 GB/s)") && text.contains("yours / reduce3: 2.00x"), "{text}");
    }

    #[test]
    fn the_child_report_survives_json() {
        let report = ChildReport { cases_passed: 1, cases_total: 2, failure: None, speed: None, skipped: vec!["the case past 2^31".into()] };
        let line = serde_json::to_string(&report).unwrap();
        assert_eq!(serde_json::from_str::<ChildReport>(&line).unwrap(), report);
    }
}
