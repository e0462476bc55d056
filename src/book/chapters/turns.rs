//! Experiments timed by turns: the default build and a switch, one run each per round, in one
//! call (`tests/gpu-host.sh` stages write `<variant>-<round>.csv`). What the chapters' tables of
//! such runs share: the runs of a folder, a case's medians round by round, and whether a switch
//! won or lost in every round.

use crate::error::Result;
use std::path::Path;

/// One run: the variant (`plain`, `tail`, `params_ahead2` …), its round, its rows.
pub struct Turn<R> {
    pub variant: String,
    pub round: u32,
    pub rows: Vec<R>,
}

/// Every `<variant>-<round>.csv` in `dir` (none where the folder is missing), read by `read`.
pub fn read_turns<R>(dir: &Path, read: impl Fn(&Path) -> Result<Vec<R>>) -> Result<Vec<Turn<R>>> {
    let mut turns = Vec::new();
    for file in crate::records::csv_files(dir) {
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let Some((variant, round)) = stem.rsplit_once('-').and_then(|(v, r)| Some((v.to_string(), r.parse::<u32>().ok()?))) else { continue };
        turns.push(Turn { variant, round, rows: read(&file)? });
    }
    Ok(turns)
}

/// A case's median in each round of `variant`, in round order: `median` picks the case's row of
/// a run and gives its time.
pub fn rounds<R>(turns: &[Turn<R>], variant: &str, median: impl Fn(&R) -> Option<f64>) -> Vec<f64> {
    let mut t: Vec<(u32, f64)> = turns.iter().filter(|t| t.variant == variant).filter_map(|t| t.rows.iter().find_map(&median).map(|us| (t.round, us))).collect();
    t.sort_by_key(|x| x.0);
    t.into_iter().map(|x| x.1).collect()
}

pub fn mean(t: &[f64]) -> f64 {
    t.iter().sum::<f64>() / t.len() as f64
}

/// The rounds' medians, `a / b`.
pub fn cell(t: &[f64], decimals: usize) -> String {
    t.iter().map(|x| format!("{x:.decimals$}")).collect::<Vec<_>>().join(" / ")
}

/// Whether `switch` beat `base` in every round (every time of one below every time of the
/// other), lost in every round, or neither.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    Mixed,
}

pub fn verdict(switch: &[f64], base: &[f64]) -> Verdict {
    if switch.iter().all(|x| base.iter().all(|y| x < y)) {
        Verdict::Faster
    } else if switch.iter().all(|x| base.iter().all(|y| x > y)) {
        Verdict::Slower
    } else {
        Verdict::Mixed
    }
}
