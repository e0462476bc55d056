//! The same inputs summed on 1, 2, 4 and 8 GPUs (as many as are visible), sharded and gathered,
//! each several times: the totals measured beside the ones [`super::simulate`] works out on the
//! CPU, written as [`crate::records::rank_totals`] for the book.

use super::nccl;
use super::ranks::Ranks;
use super::simulate::{self, input_kind, input_seed, KERNEL};
use super::sum::{sum, Mode, SumOptions};
use crate::error::{Error, Result};
use crate::records::rank_totals::{Cross, RankTotal};

/// What a measurement found: the rows for the results file, and every disagreement with the
/// CPU where the CPU says no order of the step across GPUs can change the bits.
pub struct Measured {
    pub rows: Vec<RankTotal>,
    pub disagreements: Vec<String>,
}

/// The GPU counts measured on a host with `visible` GPUs: 1, 2, 4 and 8 where there are that
/// many, and every GPU.
pub fn rank_counts(visible: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = simulate::RANK_COUNTS.into_iter().filter(|&k| k <= visible).collect();
    if visible > 0 && !counts.contains(&visible) {
        counts.push(visible);
    }
    counts
}

/// Sum each of [`simulate::INPUTS`] in both modes on every count of [`rank_counts`], `runs`
/// times each, with kernel 15 on every GPU; every sum is checked ([`super::SumReport::check`]:
/// each GPU's sum, the total, every rank's copy), and its total compared with the CPU's.
pub fn measure(visible: usize, runs: usize, progress: bool) -> Result<Measured> {
    let mut rows = Vec::new();
    let mut disagreements = Vec::new();
    for (input, n) in simulate::INPUTS {
        let xs = simulate::values(input, n);
        for mode in [Mode::Sharded, Mode::Gathered] {
            let mut one_gpu = None;
            for ranks in rank_counts(visible) {
                let cpu = match mode {
                    Mode::Sharded => simulate::sharded(&xs, KERNEL, ranks),
                    Mode::Gathered => simulate::gathered(&xs, KERNEL, ranks),
                };
                let gpus = Ranks::open(Some(ranks))?;
                let options = SumOptions { kernel: KERNEL.into(), mode, ..SumOptions::default() };
                let mut totals = Vec::new();
                for _ in 0..runs.max(1) {
                    let report = sum::<f32>(&gpus, n, input, &options)?;
                    report.check().map_err(|why| Error::WrongSum { what: format!("the {} sum of {} on {ranks} GPU(s)", mode.name(), input.describe()), why })?;
                    totals.push(gpu_total(&report.ranks[0].total)?);
                }
                let mut distinct: Vec<u64> = totals.iter().map(|t| t.to_bits()).collect();
                distinct.sort_unstable();
                distinct.dedup();
                let total = totals[0];
                let first = *one_gpu.get_or_insert(total.to_bits());
                let cross = match mode {
                    Mode::Gathered => Cross::Integer,
                    Mode::Sharded => cpu.cross,
                };
                let order_free = cross != Cross::Rounded;
                let agrees = total.to_bits() == cpu.total.to_bits();
                if order_free && (!agrees || distinct.len() > 1) {
                    disagreements.push(format!(
                        "{} {} of n = {n} on {ranks} GPU(s): the GPU gave {total:?} ({} distinct over {} runs), the CPU {:?}",
                        mode.name(), input_kind(input), distinct.len(), totals.len(), cpu.total
                    ));
                }
                if progress {
                    eprintln!(
                        "{:<8} {:<6} n = {n:>8} on {ranks} GPU(s): {total:?} [{} over {} run(s)], CPU {:?}: {}",
                        mode.name(), input_kind(input), if distinct.len() == 1 { "one total".to_string() } else { format!("{} totals", distinct.len()) },
                        totals.len(), cpu.total, if agrees { "same bits" } else { "other bits" }
                    );
                }
                rows.push(RankTotal::new(input_kind(input), n, input_seed(input), KERNEL, mode.name(), ranks, total, cpu.wide, totals.len(), distinct.len(), cross, first));
            }
        }
    }
    Ok(Measured { rows, disagreements })
}

/// A total as an `f64` (the gathered `f32` total widened exactly).
fn gpu_total(v: &super::Value) -> Result<f64> {
    match *v {
        super::Value::F64(x) => Ok(x),
        super::Value::F32(x) => Ok(x as f64),
        other => Err(Error::Config { setting: "an f32 multi-GPU sum".into(), reason: format!("its total {other} is not a float") }),
    }
}

/// The header of a GPU host's file: the GPUs, NCCL, the algorithm, when and how.
pub fn header(gpus: &Ranks, command: &str) -> Result<crate::records::csv::Header> {
    let library = nccl::library()?;
    Ok([
        ("source", format!("measured on {} (every count of GPUs up to all of them)", gpus.describe())),
        ("nccl", library.version_string()),
        ("multicast", nccl::multicast_setting()),
        ("nccl_algo", nccl::algorithm_setting()?.header_value()),
        ("date", crate::records::today()),
        ("command", command.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_power_of_two_up_to_the_host_and_the_host_itself() {
        assert_eq!(rank_counts(1), vec![1]);
        assert_eq!(rank_counts(2), vec![1, 2]);
        assert_eq!(rank_counts(3), vec![1, 2, 3]);
        assert_eq!(rank_counts(8), vec![1, 2, 4, 8]);
        assert_eq!(rank_counts(16), vec![1, 2, 4, 8, 16]);
        assert!(rank_counts(0).is_empty());
    }
}
