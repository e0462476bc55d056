//! The parent's side: run a mistake in a child process under a deadline ([`run_guarded`]), and
//! judge what it did against what the book says it does ([`Mistake::verdict`]).

use super::options::RunOptions;
use super::report::{classify, Observation, Outcome};
use super::{CHILD_ENV, CHILD_N_ENV, CHILD_RUNS_ENV, CHILD_SEED_ENV, RECORD_ENV};
use crate::child::{run_with_deadline, Deadline, Phase};
use crate::kernels::broken::{what_it_did, Kind, Mistake};
use crate::records::mistakes::Class;
use crate::error::{io_error, Result};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Run `mistake` in a child process (`exe`, which must call [`crate::child::run_if_asked`] with
/// [`super::CHILD`] first thing in `main`) under `deadline`, and classify what it did. This process's GPU context is never
/// involved. `Err` only when no child could be started.
pub fn run_guarded(exe: &Path, mistake: &Mistake, options: &RunOptions, deadline: Deadline) -> Result<Observation> {
    options.validate()?;
    let mut command = Command::new(exe);
    command
        .env(CHILD_ENV, mistake.name)
        .env(CHILD_N_ENV, options.n.to_string())
        .env(CHILD_RUNS_ENV, options.runs.to_string())
        .env(CHILD_SEED_ENV, options.seed.to_string())
        .env_remove(RECORD_ENV);
    let run = run_with_deadline(command, deadline).map_err(|e| io_error(exe, format!("could not start a child process: {e}")))?;
    Ok(classify(&run))
}

impl Mistake {
    /// Is what was observed what the book says this mistake does? `Err` says why not. Only a
    /// mistake that is wrong by construction has its outcome asserted; the others pass with
    /// any outcome the mistake can have, but never with a child that died without a report
    /// (that is a fault of this program, not the mistake's) or a kill later than a second past
    /// the deadline. The fixes (the error bound, the passes on the GPU) must be right.
    pub fn verdict(&self, observed: &Observation, deadline: Deadline) -> std::result::Result<(), String> {
        let outcome = observed.outcome();
        if let Outcome::Crashed { status, message } = outcome {
            return Err(format!("the child process ended ({status}) without a usable report: {message}"));
        }
        if let Outcome::Hang { phase, after } = outcome {
            if *phase == Phase::Startup {
                return Err(format!("the child never finished setting up (no READY line in {:.0} s): {}", after.as_secs_f64(), observed.stderr_tail));
            }
            if *after > deadline.run + Duration::from_secs(1) {
                return Err(format!("killed {:.2} s after it was ready; the deadline is {:.2} s", after.as_secs_f64(), deadline.run.as_secs_f64()));
            }
        }
        if let Some(expected) = self.asserted {
            if outcome.class() != expected {
                return Err(format!("expected {}, observed {}: {}", expected.name(), outcome.class().name(), what_it_did(self, &observed.record(self))));
            }
        }
        match self.kind {
            Kind::FloatEquality { .. } | Kind::HostRoundTrips { .. } => {
                if !matches!(outcome.class(), Class::Correct | Class::WrongResult) {
                    return Err(format!("a correct kernel did not finish its runs: {}", what_it_did(self, &observed.record(self))));
                }
                match observed.report.fix_wrong_runs {
                    Some(0) => {}
                    Some(k) => return Err(format!("the fix got {k} of {} runs wrong", observed.report.runs)),
                    None => return Err("the child did not report on the fix".into()),
                }
                if matches!(self.kind, Kind::HostRoundTrips { .. }) {
                    if outcome.class() != Class::Correct {
                        return Err(format!("copying partial sums through the host gave wrong sums: {}", what_it_did(self, &observed.record(self))));
                    }
                    if observed.report.mistake_us.is_none() || observed.report.fix_us.is_none() {
                        return Err("the child reported no times".into());
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// An observation of a child that reported `outcome` after 20 runs, for tests.
#[cfg(test)]
pub(super) fn sample_observation(outcome: Outcome) -> Observation {
    let mut report = super::report::Report::new(outcome);
    report.runs = 20;
    report.wrong_runs = 20;
    Observation { report, startup: Some(Duration::from_millis(900)), run_time: Duration::from_millis(5010), stderr_tail: String::new() }
}

/// After the mistakes ran in child processes, this (the parent) process must still sum right:
/// kernel 3 on `i32` and kernel 7 on `f32`, each checked. `Err` says which sum was wrong.
pub fn parent_still_sums(gpu: &crate::Gpu) -> std::result::Result<(), String> {
    use crate::check::CheckSum;
    use crate::data::{random_f32, random_i32, Checked};
    let xs = random_i32((1 << 20) + 37, 11);
    let mut reducer = crate::Reducer::<i32>::new(gpu, "reduce3", 256).map_err(|e| e.to_string())?;
    let got = reducer.sum_host(&xs).map_err(|e| e.to_string())?;
    reducer.check(got, &i32::reference(&xs)).map_err(|why| format!("kernel 3 (i32): {why}"))?;
    let fs = random_f32((1 << 20) + 37, 11);
    let mut reducer = crate::Reducer::<f32>::new(gpu, "reduce7", 256).map_err(|e| e.to_string())?;
    let got = reducer.sum_host(&fs).map_err(|e| e.to_string())?;
    reducer.check(got, &f32::reference(&fs)).map_err(|why| format!("kernel 7 (f32): {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mistakes::find;

    #[test]
    fn verdicts_follow_the_assertions() {
        let d = Deadline { startup: Duration::from_secs(60), run: Duration::from_secs(5) };
        let wrong = sample_observation(Outcome::WrongResult { got: 1.0, expected: 2.0 });
        assert!(find("tail_not_written").unwrap().verdict(&wrong, d).is_ok());
        assert!(find("grid_barrier_spin").unwrap().verdict(&wrong, d).unwrap_err().contains("expected hang"));
        let hang = sample_observation(Outcome::Hang { phase: Phase::Run, after: Duration::from_millis(5010) });
        assert!(find("grid_barrier_spin").unwrap().verdict(&hang, d).is_ok());
        let late = sample_observation(Outcome::Hang { phase: Phase::Run, after: Duration::from_millis(6500) });
        assert!(find("grid_barrier_spin").unwrap().verdict(&late, d).unwrap_err().contains("killed"));
        // A recorded-only mistake may do anything a mistake can, but not crash the child.
        assert!(find("sync_in_branch").unwrap().verdict(&hang, d).is_ok());
        let crashed = sample_observation(Outcome::Crashed { status: "exit code 101".into(), message: "panicked".into() });
        assert!(find("sync_in_branch").unwrap().verdict(&crashed, d).is_err());
        // The fixes must be right.
        let mut eq = sample_observation(Outcome::WrongResult { got: 1.0, expected: 1.0000001 });
        eq.report.fix_wrong_runs = Some(0);
        assert!(find("float_equality").unwrap().verdict(&eq, d).is_ok());
        eq.report.fix_wrong_runs = Some(1);
        assert!(find("float_equality").unwrap().verdict(&eq, d).is_err());
    }
}
