//! The score of planted bugs, shared by the mutation tests of the sums (`tests/mutation.rs`) and of
//! the operators (`tests/ops.rs`): a bug counts as caught when the check refuses it on one of
//! [`DRAWS`] fresh inputs, while the unchanged code passes every one.

use libtest_mimic::Failed;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Fresh inputs tried before a bug that gave the right answer counts as missed.
pub const DRAWS: usize = 3;

/// Caught and planted, for the score; the unchanged code's passes beside them.
pub struct Score {
    caught: AtomicUsize,
    planted: AtomicUsize,
    controls: AtomicUsize,
    /// Sizes where a model of the launch says the change cannot alter any answer, and the bug
    /// answered exactly as the unchanged code: not counted as planted.
    cannot_act: AtomicUsize,
}

impl Score {
    pub const fn new() -> Score {
        Score { caught: AtomicUsize::new(0), planted: AtomicUsize::new(0), controls: AtomicUsize::new(0), cannot_act: AtomicUsize::new(0) }
    }

    /// `mutation score (what): caught C of P planted bugs (…%); …`, once anything was planted.
    pub fn line(&self, what: &str) -> Option<String> {
        let planted = self.planted.load(Relaxed);
        (planted > 0).then(|| {
            let caught = self.caught.load(Relaxed);
            let idle = self.cannot_act.load(Relaxed);
            let idle = if idle > 0 { format!("; at {idle} more sizes the change cannot act (the launch's model says why) and the bug answered exactly as the unchanged code") } else { String::new() };
            format!("mutation score ({what}): caught {caught} of {planted} planted bugs ({:.1}%); the unchanged code passed {} of {} checks{idle}",
                100.0 * caught as f64 / planted as f64, self.controls.load(Relaxed), planted)
        })
    }

    /// A size where the change cannot act: counted apart, once the caller has seen the bug answer
    /// exactly as the unchanged code.
    pub fn cannot_act(&self) {
        self.cannot_act.fetch_add(1, Relaxed);
    }
}

/// One planted bug on one input size: `run(draw)` checks a fresh input with the unchanged code and
/// with the bug, and returns both checks. The unchanged code must pass every draw; the bug must be
/// caught within [`DRAWS`].
pub fn plant(score: &Score, what: &str, n: usize, mut run: impl FnMut(usize) -> Result<(Result<(), String>, Result<(), String>), Failed>) -> Result<(), Failed> {
    score.planted.fetch_add(1, Relaxed);
    for draw in 0..DRAWS {
        let (control, planted) = run(draw)?;
        control.map_err(|why| format!("{what} n = {n}: the UNCHANGED code failed the check: {why}"))?;
        if draw == 0 {
            score.controls.fetch_add(1, Relaxed);
        }
        if planted.is_err() {
            score.caught.fetch_add(1, Relaxed);
            return Ok(());
        }
    }
    Err(format!("{what} n = {n}: the planted bug was NOT caught on {DRAWS} fresh inputs").into())
}
