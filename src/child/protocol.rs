//! The protocol between a child and its parent: two kinds of line on the child's stdout, whatever
//! the child does (a mistake, an exercise).
//!
//! - [`READY`] once its set-up is done (GPU opened, kernel compiled), and again before each run
//!   or case (after its input was made on the host): the [`supervisor`](super::supervisor)
//!   counts the run deadline from the last one.
//! - [`OUTCOME`] followed by the child's report as one line of JSON, through serde_json: each
//!   kind of child has its own report (`mistakes::Report`, `exercises::report::ChildReport`);
//!   the parent reads the last such line ([`super::ChildRun::outcome_json`]).

use serde::Serialize;
use std::io::Write;

/// The line a child prints when its set-up is done and the run deadline should start.
pub const READY: &str = "CHILD-READY";
/// The prefix of the line that carries a child's report.
pub const OUTCOME: &str = "CHILD-OUTCOME";

/// Print [`READY`] and flush: the child's set-up (or a run's host-side preparation) is done,
/// and the run deadline starts again.
pub fn say_ready() {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{READY}");
    let _ = stdout.flush();
}

/// `CHILD-OUTCOME {json}`: a report as its line.
pub fn outcome_line<R: Serialize>(report: &R) -> Result<String, String> {
    serde_json::to_string(report).map(|json| format!("{OUTCOME} {json}")).map_err(|e| e.to_string())
}

/// Print a report's line and flush.
pub fn print_outcome<R: Serialize>(report: &R) -> Result<(), String> {
    let line = outcome_line(report)?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}").and_then(|()| stdout.flush()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_one_line_after_its_prefix() {
        #[derive(Serialize)]
        struct Sample {
            text: &'static str,
            n: u32,
        }
        let line = outcome_line(&Sample { text: "two\nlines", n: 3 }).unwrap();
        assert_eq!(line, r#"CHILD-OUTCOME {"text":"two\nlines","n":3}"#);
        assert!(!line.contains('\n'));
    }
}
