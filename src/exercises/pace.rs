//! "Too slow" or "hung": a kernel killed at the deadline on one hidden case either loops forever
//! or is correct and slow (a whole sum in one thread answers every small case, and takes minutes
//! for the largest). The difference is in the cases it did answer: a slow kernel answered every
//! smaller case, and its time grew with n, fast enough that the case it was killed on would take
//! about the deadline or longer. Pure arithmetic on the times, tested without a GPU.

/// One answered case: its size and the seconds its kernel took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Answered {
    pub n: usize,
    pub seconds: f64,
}

/// Why a kernel was killed, as far as the answered cases say.
#[derive(Clone, Debug, PartialEq)]
pub enum Stopped {
    /// It answered every smaller case, and its time grew with n like `n^exponent`: at that rate
    /// the case it was killed on would take about `predicted_seconds`.
    TooSlow { exponent: f64, predicted_seconds: f64 },
    /// Nothing says it was only slow: a loop whose condition never turns false, a barrier some
    /// threads never reach, a wait for a block that is not running.
    Hung,
}

/// Cases at least this long are timed well enough to fit (shorter ones are launch overhead).
const TIMED: f64 = 1e-4;

/// Classify a kill at `killed_n` after `deadline_seconds`, from the cases answered before it.
pub fn classify(answered: &[Answered], killed_n: usize, deadline_seconds: f64) -> Stopped {
    // Every case smaller than the one killed must have been answered, in the order they ran.
    if answered.is_empty() || answered.iter().any(|a| a.n >= killed_n) {
        return Stopped::Hung;
    }
    // The largest answered cases, whose times are not launch overhead.
    let mut timed: Vec<Answered> = answered.iter().copied().filter(|a| a.seconds >= TIMED && a.n > 0).collect();
    timed.sort_by_key(|a| a.n);
    timed.dedup_by_key(|a| a.n);
    if timed.len() < 2 {
        return Stopped::Hung;
    }
    let (small, large) = (timed[timed.len() - 2], timed[timed.len() - 1]);
    if large.seconds <= small.seconds {
        return Stopped::Hung; // no growth: the time is not what the size costs
    }
    let exponent = (large.seconds / small.seconds).ln() / (large.n as f64 / small.n as f64).ln();
    let predicted_seconds = large.seconds * (killed_n as f64 / large.n as f64).powf(exponent);
    // Slow means: the time grows with n at least like √n, and the growth alone comes within a
    // factor of two of the deadline (the kill shows it took at least that; a line through two
    // points is no better than that).
    if exponent >= 0.5 && predicted_seconds >= deadline_seconds / 2.0 {
        Stopped::TooSlow { exponent, predicted_seconds }
    } else {
        Stopped::Hung
    }
}

impl Stopped {
    /// What the reader is told.
    pub fn explain(&self, killed_n: usize, deadline_seconds: f64) -> String {
        match self {
            Stopped::TooSlow { exponent, predicted_seconds } => format!(
                "too slow, not hung: it answered every smaller case right, and its time grew like n^{exponent:.1}; at that rate \
                n = {killed_n} would take about {predicted_seconds:.0} s, past the {deadline_seconds:.0} s deadline. A correct sum \
                that reads the input with one thread (or one block) is this slow; give every thread of the grid its part"
            ),
            Stopped::Hung => format!(
                "hung: killed after {deadline_seconds:.0} s at n = {killed_n}, and the cases before it do not say it was only slow — \
                look for a loop whose condition never turns false, a barrier some threads never reach, or a wait for a block that \
                is not running"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(ns: &[usize], per_value: f64) -> Vec<Answered> {
        ns.iter().map(|&n| Answered { n, seconds: 2e-5 + n as f64 * per_value }).collect()
    }

    #[test]
    fn one_thread_summing_everything_is_too_slow() {
        // A sum in one thread: about 1 ns a value, linear; the deadline (20 s) falls on 2^34.
        let answered = linear(&[1, 33, 4097, 65537, 1 << 20, (1 << 24) + 3], 1e-6);
        match classify(&answered, 1 << 31, 20.0) {
            Stopped::TooSlow { exponent, predicted_seconds } => {
                assert!((exponent - 1.0).abs() < 0.1, "{exponent}");
                assert!(predicted_seconds > 20.0, "{predicted_seconds}");
            }
            other => panic!("{other:?}"),
        }
        assert!(classify(&answered, 1 << 31, 20.0).explain(1 << 31, 20.0).starts_with("too slow, not hung"));
    }

    #[test]
    fn a_kernel_that_never_ends_is_hung() {
        // Fast on every case, then killed: nothing grew.
        let fast = linear(&[1, 33, 4097, 65537, 1 << 20], 1e-12);
        assert_eq!(classify(&fast, (1 << 24) + 3, 20.0), Stopped::Hung);
        // Killed on the first case.
        assert_eq!(classify(&[], 1, 20.0), Stopped::Hung);
        // Times that grow, but far too little to reach the deadline: something else stopped it.
        let slow_but_fine = linear(&[1, 4097, 65537, 1 << 20], 1e-9);
        assert_eq!(classify(&slow_but_fine, (1 << 24) + 3, 20.0), Stopped::Hung);
        // A larger case was answered: the kill is not about size.
        assert_eq!(classify(&linear(&[1 << 20, 1 << 24], 1e-6), 1 << 20, 20.0), Stopped::Hung);
        assert!(Stopped::Hung.explain(5, 20.0).contains("a loop whose condition never turns false"));
    }
}
