//! What was observed, in words: one sentence per mistake, for the tables, the verdicts and the
//! command line.

use super::catalogue::{Kind, Mistake};
use crate::child::Phase;
use crate::records::mistakes::{Class, Recorded};
use std::fmt::Write as _;

/// A sum as the reader would write it: an `i32` sum as an integer, an `f32` sum as its shortest
/// `f32` digits.
fn number(x: f64) -> String {
    if x.is_finite() && x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{}", x as f32)
    }
}

/// What a recorded mistake did, in one sentence.
pub fn what_it_did(mistake: &Mistake, r: &Recorded) -> String {
    let runs = r.runs;
    let first = |got: Option<f64>, expected: Option<f64>| match (got, expected) {
        (Some(g), Some(e)) => format!("got {}, expected {}", number(g), number(e)),
        _ => String::new(),
    };
    let mut s = match (mistake.kind, r.outcome) {
        (Kind::FloatEquality { .. }, Class::WrongResult) => format!(
            "`==` rejected {} of {runs} sums of a correct kernel (first: GPU {}, CPU loop {}); the error bound rejected {}",
            r.wrong_runs, number(r.got.unwrap_or(f64::NAN)), number(r.expected.unwrap_or(f64::NAN)), r.fix_wrong_runs.unwrap_or(0)
        ),
        (Kind::FloatEquality { .. }, Class::Correct) => format!(
            "`==` happened to hold in all {runs} runs; the error bound rejected {}", r.fix_wrong_runs.unwrap_or(0)
        ),
        (Kind::HostRoundTrips { .. }, Class::Correct) => match (r.mistake_us, r.fix_us) {
            (Some(slow), Some(fast)) => format!(
                "right sums; {slow:.0} µs with the partial sums copied through the host, {fast:.0} µs with the passes on the GPU ({:.1}× slower)",
                slow / fast
            ),
            _ => format!("right sums in all {runs} runs; no times recorded"),
        },
        (_, Class::Correct) => format!("right sum in all {runs} runs"),
        (_, Class::WrongResult) => format!("wrong sum in {} of {runs} runs (first: {})", r.wrong_runs, first(r.got, r.expected)),
        (_, Class::LaunchError) => match r.cuda_code() {
            Some(code) => format!("CUDA error {}", code.words()),
            None => format!("an error that was not the driver's: {}", r.message),
        },
        (_, Class::Hang) if r.phase == Some(Phase::Startup) => format!("never finished starting; killed after {:.1} s", r.elapsed_s),
        (_, Class::Hang) => format!("no result {:.1} s after the launch; killed by the guard", r.elapsed_s),
        (_, Class::Crashed) => format!("the child process died: {}", r.message),
    };
    let context = match (mistake.kind, r.outcome) {
        (Kind::HostRoundTrips { .. }, _) | (_, Class::Crashed) => None,
        (Kind::Passes { .. }, Class::Correct | Class::WrongResult) => None, // the grids add nothing
        _ => Some(&r.detail).filter(|d| !d.is_empty()),
    };
    if let Some(detail) = context {
        write!(s, "; {detail}").unwrap();
    }
    s
}

/// A recorded run of every mistake, each with the outcome its catalogue entry asserts, for tests.
#[cfg(test)]
pub(crate) fn every_mistake() -> crate::records::mistakes::Records {
    let numbered: Vec<(u32, &str, Class)> = super::all().iter().map(|m| (m.number, m.name, m.asserted.unwrap_or(Class::Correct))).collect();
    crate::records::mistakes::sample_records(&numbered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::broken::find;

    #[test]
    fn sentences_say_what_happened() {
        let records = every_mistake();
        let row = |name: &str| records.rows.iter().find(|r| r.mistake == name).unwrap();
        let m = |name: &str| find(name).unwrap();
        assert_eq!(what_it_did(m("tail_not_written"), row("tail_not_written")), "wrong sum in 20 of 20 runs (first: got -1234, expected 4411)");
        assert!(what_it_did(m("shared_size_missing"), row("shared_size_missing")).starts_with("CUDA error `CUDA_ERROR_ILLEGAL_ADDRESS` (an illegal memory access was encountered)"));
        assert!(what_it_did(m("grid_barrier_spin"), row("grid_barrier_spin")).starts_with("no result 5.0 s after the launch; killed by the guard; one launch of 4097"));
        assert!(what_it_did(m("partials_to_host"), row("partials_to_host")).contains("(4.5× slower)"));
        let started = crate::records::mistakes::Recorded { phase: Some(Phase::Startup), ..row("grid_barrier_spin").clone() };
        assert!(what_it_did(m("grid_barrier_spin"), &started).starts_with("never finished starting"));
    }
}
