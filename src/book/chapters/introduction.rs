//! The introduction's claim: how much faster the GPU adds than its memory delivers the numbers
//! (`intro_ratio.md`), from the machine header and the Programming Guide's table of `f32` lanes.

use super::common::{by_capability, times};
use crate::records::bench::Machine;

/// `f32` additions one SM can start per clock, by compute capability: the row "32-bit
/// floating-point add, multiply, multiply-add" of the CUDA C++ Programming Guide's table of
/// arithmetic instruction throughput (results per clock cycle per multiprocessor).
pub const FP32_LANES_PER_SM: [(&str, u32); 16] = [
    ("5.0", 128), ("5.2", 128), ("5.3", 128),
    ("6.0", 64), ("6.1", 128), ("6.2", 128),
    ("7.0", 64), ("7.2", 64), ("7.5", 64),
    ("8.0", 64), ("8.6", 128), ("8.7", 128), ("8.9", 128),
    ("9.0", 128), ("10.0", 128), ("12.0", 128),
];

/// `f32` lanes per SM for a compute capability written `major.minor`, if the table has it.
pub fn fp32_lanes_per_sm(compute_capability: &str) -> Option<u32> {
    by_capability(&FP32_LANES_PER_SM, compute_capability)
}

/// The introduction's claim: how much faster the GPU adds than its memory delivers the numbers,
/// from the header (SMs, SM clock, compute capability) and the theoretical peak.
pub fn add_to_fetch_ratio(m: &Machine) -> String {
    if m.sm_count == 0 || m.sm_clock_mhz == 0 {
        return format!("*Not yet measured: the {}'s results file does not record its SM count and SM clock; the next \
            `cargo run --release -- bench` writes them, and this comparison with them.*\n", m.gpu);
    }
    let Some(lanes) = fp32_lanes_per_sm(&m.compute_capability) else {
        return format!("*Compute capability {} is not in this book's table of `f32` lanes per SM (`src/book/chapters/introduction.rs`), so the \
            ratio is not computed for the {}.*\n", m.compute_capability, m.gpu);
    };
    let Some(peak) = m.peak_gbps else {
        return format!("*The {}'s theoretical memory bandwidth is unknown (the driver reported no memory clock), so the \
            ratio is not computed.*\n", m.gpu);
    };
    let adds_per_s = m.sm_count as f64 * lanes as f64 * m.sm_clock_mhz as f64 * 1e6;
    let values_per_s = peak * 1e9 / 4.0;
    format!(
        "On the {} this book was last measured on: {} SMs × {lanes} `f32` adders per SM (compute capability {}; the CUDA \
        C++ Programming Guide's table of arithmetic throughput) × {} MHz (the SM clock the driver reports as its maximum) = \
        {:.1} trillion `f32` additions per second. Its memory's theoretical peak, {peak:.0} GB/s, delivers {:.2} trillion \
        4-byte values per second. It could add **{} times** faster than it can fetch the numbers.\n",
        m.gpu, m.sm_count, m.compute_capability, m.sm_clock_mhz, adds_per_s / 1e12, values_per_s / 1e12, times(adds_per_s / values_per_s)
    )
}
