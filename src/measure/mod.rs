//! Measurements on the GPU: the benchmark of every kernel, the row sums' benchmark, and the
//! accuracy experiment.

pub mod accuracy;
pub mod bench;
pub mod read_only;
pub mod determinism;
pub mod rows_bench;

/// The header of a results file (benchmark, row sums, accuracy): the GPU in hand, its memory and
/// software, today's date, and `command`, the command line that measured.
pub fn machine(gpu: &crate::Gpu, command: String) -> crate::results::Machine {
    let info = gpu.info();
    crate::results::Machine {
        gpu: info.name.clone(),
        compute_capability: format!("{}.{}", info.compute_capability.0, info.compute_capability.1),
        sm_count: info.sm_count,
        l2_bytes: info.l2_cache_bytes,
        peak_gbps: info.peak_bandwidth_bytes_per_s().map(|b| b / 1e9),
        memory_clock_mhz: info.memory_clock_khz / 1000,
        sm_clock_mhz: info.sm_clock_khz / 1000,
        driver_cuda: format!("{}.{}", info.driver_cuda_version.0, info.driver_cuda_version.1),
        nvrtc: crate::nvrtc::version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_else(|_| "unknown".into()),
        date: crate::results::today(),
        command,
    }
}

/// The median of `values` (sorted in place; NaN sorts last); 0 for none. The one definition every
/// timing and experiment uses.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let mid = values.len() / 2;
    if values.len() % 2 == 1 { values[mid] } else { (values[mid - 1] + values[mid]) / 2.0 }
}

#[cfg(test)]
mod tests {
    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(super::median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(super::median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(super::median(&mut []), 0.0);
    }
}
