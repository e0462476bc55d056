//! What one run of a mistake does: how many values, how many runs, from which seed.

use crate::error::{Error, Result};

/// What one mistake run does: how many values, how many runs, from which seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    pub n: usize,
    pub runs: usize,
    pub seed: u64,
}

impl Default for RunOptions {
    /// 2^20 + 37 values: large enough for three passes, and not a multiple of any block.
    fn default() -> Self {
        RunOptions { n: (1 << 20) + 37, runs: 20, seed: 2007 }
    }
}

impl RunOptions {
    /// Refuse what cannot run, with the reason.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.n == 0 {
            return Err("n must be at least 1".into());
        }
        if self.n > i32::MAX as usize {
            return Err(format!("n = {} is more than the mistakes' launcher handles (2^31 - 1)", self.n));
        }
        if !(1..=100_000).contains(&self.runs) {
            return Err(format!("runs must be from 1 to 100000, not {}", self.runs));
        }
        Ok(())
    }

    /// [`RunOptions::check`], as the library's error: a bad setting.
    pub fn validate(&self) -> Result<()> {
        self.check().map_err(|reason| Error::Config { setting: format!("mistake run options (n = {}, runs = {})", self.n, self.runs), reason })
    }

    /// The defaults, overridden by whichever of these variables are set.
    pub fn from_env_vars(n: &str, runs: &str, seed: &str) -> std::result::Result<RunOptions, String> {
        let mut options = RunOptions::default();
        let read = |name: &str| -> std::result::Result<Option<u64>, String> {
            match std::env::var(name) {
                Err(_) => Ok(None),
                Ok(v) => v.trim().parse().map(Some).map_err(|_| format!("{name}={v:?} is not a whole number")),
            }
        };
        if let Some(v) = read(n)? {
            options.n = v as usize;
        }
        if let Some(v) = read(runs)? {
            options.runs = v as usize;
        }
        if let Some(v) = read(seed)? {
            options.seed = v;
        }
        options.check()?;
        Ok(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_refuse_what_cannot_run() {
        assert!(RunOptions::default().check().is_ok());
        assert!(RunOptions { n: 0, ..Default::default() }.check().unwrap_err().contains("n must"));
        assert!(RunOptions { runs: 0, ..Default::default() }.check().unwrap_err().contains("runs"));
    }
}
