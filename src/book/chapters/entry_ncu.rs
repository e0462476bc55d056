//! The entry point's launches under Nsight Compute (`plots/data/ncu/entry_<size>_<type>.txt`,
//! `tests/gpu-host.sh entry-ncu`) beside CUB's: what bounds each launch where a goal of the
//! benchmark chapter is missed or close.

use super::common::size_label;
use super::entry::{entry_launch, row};
use crate::element::Dtype;
use crate::records::bench::{Row, ENTRY_POINT_KERNEL, READ_ONLY_KERNEL};
use std::fmt::Write as _;

/// The size and type of a profile named `<prefix><size>_<type>`, the size written `2pK` (2^K) or
/// `MeK` (M·10^K), as `tests/gpu-host.sh entry-ncu` names its files.
fn profile_size(name: &str, prefix: &str) -> Option<(usize, Dtype)> {
    let (size, dtype) = name.strip_prefix(prefix)?.split_once('_')?;
    let n = match size.split_once('p').or_else(|| size.split_once('e'))? {
        ("2", k) if size.contains('p') => 1usize.checked_shl(k.parse::<u32>().ok().filter(|&k| k < 63)?)?,
        (m, k) if size.contains('e') => m.parse::<usize>().ok()?.checked_mul(10usize.checked_pow(k.parse().ok()?)?)?,
        _ => return None,
    };
    Some((n, Dtype::parse(dtype)?))
}

/// The entry point's Nsight Compute profiles (`plots/data/ncu/entry_<size>_<type>.txt`, made on
/// the GPU host by `ncu … reduction sum --n <size> --dtype <type>`): the size and type from the
/// file's name.
fn entry_profile_size(name: &str) -> Option<(usize, Dtype)> {
    profile_size(name, "entry_")
}

/// A profile of one or more launches, cut into one text per launch (each from its launch line to
/// the next), for [`profiled_kernel`] and `parse_ncu` to read one at a time.
fn launches(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if is_launch_line(line) {
            out.push(String::new());
        }
        if let Some(launch) = out.last_mut() {
            launch.push_str(line);
            launch.push('\n');
        }
    }
    out
}

/// A line of ncu's output that names a launch, `name (grid)x(block), Context …`.
fn is_launch_line(line: &str) -> bool {
    line.contains(")x(") && line.contains("Context")
}

/// The kernel ncu profiled: the first line naming a launch, `name (grid)x(block), Context …`.
pub fn profiled_kernel(text: &str) -> Option<&str> {
    // `softmax_lanes8_f32 (32768, 1, 1)x(256, 1, 1), Context 1, …`, or a C++ kernel's signature:
    // `void ns::softmax_warp_forward<float, …>(T2 *, …) (262144, 1, 1)x(32, 4, 1), Context 1, …`.
    let line = text.lines().map(str::trim).find(|l| is_launch_line(l))?;
    let name = line.strip_prefix("void ").unwrap_or(line);
    let name = name.split_once('(').map_or(name, |(n, _)| n).trim();
    let name = name.strip_prefix("<unnamed>::").unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// DRAM busier than this (ncu's DRAM Throughput, % of its peak) calls a launch bound by memory;
/// less busy than [`LATENCY_DRAM_PERCENT`], bound by the latency of its few steps.
pub const MEMORY_BOUND_DRAM_PERCENT: f64 = 80.0;
pub const LATENCY_DRAM_PERCENT: f64 = 10.0;

/// `entry_ncu.md`: what Nsight Compute saw the entry point's launch do at the sizes where it was
/// profiled, beside its benchmark time and the read-only kernel's at the same size.
pub fn entry_ncu(ncu: &[(String, String)], rows: &[Row]) -> String {
    let mut profiles: Vec<(usize, Dtype, &str, super::determinism::Profile)> = ncu
        .iter()
        .filter_map(|(name, text)| {
            let (n, dtype) = entry_profile_size(name)?;
            Some((n, dtype, profiled_kernel(text)?, super::determinism::parse_ncu(name, text)?))
        })
        .collect();
    if profiles.is_empty() {
        return "*The entry point is not yet profiled on this GPU (`ncu … reduction sum --n 2^30`, as in `tests/gpu-host.sh`'s closing calls, writes `plots/data/ncu/entry_2p30_f32.txt`).*\n".into();
    }
    profiles.sort_by_key(|p| (p.1.to_string(), p.0));
    let mut s = String::from("| n | launch | block × grid | achieved occupancy | DRAM throughput | duration under ncu | entry point in the benchmark | read-only kernel |\n|--:|---|--:|--:|--:|--:|--:|--:|\n");
    let mut said = Vec::new();
    let mut stale = Vec::new();
    for (n, dtype, kernel, p) in &profiles {
        let bench = |k: &str| row(rows, k, *dtype, *n).map_or("–".to_string(), |r| format!("{:.2} µs", r.median_us));
        // The launch the benchmark's entry point made (its row's title names kernel and block),
        // as an entry point name: a profile of an earlier rule's launch is not its profile.
        let now = row(rows, ENTRY_POINT_KERNEL, *dtype, *n).and_then(|r| {
            let (name, block, _) = entry_launch(&r.title)?;
            let spec = crate::kernels::find(name).ok()?;
            Some((crate::with_dtype!(*dtype, T => spec.entry_name::<T>(block)), name.to_string(), block.to_string()))
        });
        let entry = match &now {
            Some((entry, name, block)) if entry != kernel => {
                stale.push(format!("{} {dtype} (`{kernel}`; the rule now takes `{name}` at block {block})", size_label(*n)));
                format!("{} (now `{name}`)", bench(ENTRY_POINT_KERNEL))
            }
            _ => bench(ENTRY_POINT_KERNEL),
        };
        writeln!(s, "| {} {dtype} | `{kernel}` | {} × {} | {:.1}% | {:.1}% | {:.2} µs | {} | {} |", size_label(*n), p.block, p.grid, p.achieved_occupancy, p.dram_percent, p.duration_us,
            entry, bench(READ_ONLY_KERNEL)).unwrap();
        let verdict = if p.dram_percent > MEMORY_BOUND_DRAM_PERCENT {
            format!("DRAM was {:.1}% busy: the launch is bound by memory, and what is left to gain is in how close to the read-only kernel its loads come", p.dram_percent)
        } else if p.dram_percent < LATENCY_DRAM_PERCENT {
            let blocks = if p.grid == 1 { "1 block".to_string() } else { format!("{} blocks", p.grid) };
            format!("{blocks} of {} threads kept DRAM {:.1}% busy: at this size the time is the latency of the launch's few steps, not bandwidth", p.block, p.dram_percent)
        } else {
            format!("DRAM was {:.1}% busy", p.dram_percent)
        };
        said.push(format!("at {} {dtype}, {verdict}", size_label(*n)));
    }
    let sentence = said.join("; ");
    writeln!(s, "\n{}{}.", sentence[..1].to_uppercase(), &sentence[1..]).unwrap();
    if !stale.is_empty() {
        writeln!(s, "\nProfiled under an earlier rule, and not yet profiled as the entry point launches them now: {}.", stale.join("; ")).unwrap();
    }
    // CUB's own sum profiled the same way (`cub_<size>_<type>.txt`): the launches of its first
    // sum, up to the single-tile kernel that writes the result, beside the entry point's launch.
    let mut cub: Vec<String> = ncu
        .iter()
        .filter_map(|(name, text)| {
            let (n, dtype) = profile_size(name, "cub_")?;
            let texts = launches(text);
            let all: Vec<(&str, super::determinism::Profile)> = texts
                .iter()
                .filter_map(|launch| {
                    let kernel = profiled_kernel(launch)?;
                    // The name without its template arguments: `DeviceReduceKernel`.
                    let short = kernel.split('<').next().unwrap_or(kernel).rsplit("::").next().unwrap_or(kernel);
                    Some((short, super::determinism::parse_ncu(short, launch)?))
                })
                .collect();
            let end = all.iter().position(|(kernel, _)| kernel.contains("SingleTile"))?;
            let list: Vec<String> = all[..=end].iter().map(|(k, p)| format!("`{k}` ({} × {}, {:.2} µs)", p.block, p.grid, p.duration_us)).collect();
            let ours = profiles.iter().find(|p| p.0 == n && p.1 == dtype).map_or(String::new(), |(_, _, kernel, p)| {
                format!("; the entry point's first launch, `{kernel}` ({} × {}), {:.2} µs", p.block, p.grid, p.duration_us)
            });
            Some(format!("at {} {dtype}, {}{ours}", size_label(n), list.join(" then ")))
        })
        .collect();
    if !cub.is_empty() {
        cub.sort();
        writeln!(s, "\nCUB's own sum (`plots/cub_sum.cu`, its first sum, under Nsight Compute the same way): {}.", cub.join("; ")).unwrap();
    }
    writeln!(s, "\n*One launch each, the first of `reduction sum --n <n>` (the entry point), profiled by Nsight Compute without fixed clocks (SpeedOfLight, MemoryWorkloadAnalysis, Occupancy, LaunchStats and WarpStateStats sections): a cold launch outside a graph, so its duration is not the benchmark's. The benchmark's columns are of the run the benchmark chapter shows; a profile may be of a later build of the same launch (the files under `plots/data/ncu/` are dated by git).*").unwrap();
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::bench::Cache;

    const PROFILE: &str = "  reduce10_tiles_b512_l8_f32 (1, 1, 1)x(512, 1, 1), Context 1, Stream 13, Device 0, CC 9.0\n    Duration                         us         2.82\n    DRAM Throughput                   %         0.36\n    Compute (SM) Throughput           %         0.10\n    Block Size                                                   512\n    Grid Size                                                      1\n    Registers Per Thread             register/thread              32\n    Block Limit Registers                 block            4\n    Theoretical Occupancy                     %          100\n    Achieved Occupancy                        %        23.96\n";

    #[test]
    fn the_entry_points_profiles_say_what_bounds_each_launch() {
        let latency = entry_ncu(&[("entry_2p13_f32".into(), PROFILE.into())], &[]);
        assert!(latency.contains("| 2^13 f32 | `reduce10_tiles_b512_l8_f32` | 512 × 1 | 24.0% | 0.4% | 2.82 µs | – | – |"), "{latency}");
        assert!(latency.contains("At 2^13 f32, 1 block of 512 threads kept DRAM 0.4% busy: at this size the time is the latency"), "{latency}");
        let busy = PROFILE.replace("0.36", "94.17").replace("(1, 1, 1)", "(264, 1, 1)");
        let memory = entry_ncu(&[("entry_2p30_f32".into(), busy), ("reduce7".into(), PROFILE.into())], &[]);
        assert!(memory.contains("At 2^30 f32, DRAM was 94.2% busy: the launch is bound by memory"), "{memory}");
        assert!(!memory.contains("reduce7") && !memory.contains("2^13"), "only the entry point's profiles: {memory}");
        // Sizes written as 10^k; CUB's launches of its first sum, up to its single-tile kernel.
        let launch = |signature: &str, grid: u32, us: &str| {
            PROFILE.replace("reduce10_tiles_b512_l8_f32 (1, 1, 1)x(512, 1, 1)", &format!("void {signature} ({grid}, 1, 1)x(256, 1, 1)"))
                .replace("Block Size                                                   512", "Block Size                                                   256")
                .replace("Grid Size                                                      1", &format!("Grid Size {grid:>54}"))
                .replace("us         2.82", us)
        };
        let cub = [
            launch("DeviceReduceKernel<policy_hub<float>::Policy1000, float *>(T2, T5 *)", 245, "us         3.81"),
            launch("DeviceReduceSingleTileKernel<policy_hub<float>::Policy1000, float *>(T2, T3)", 1, "us         2.62"),
            launch("DeviceReduceKernel<policy_hub<float>::Policy1000, float *>(T2, T5 *)", 245, "ms         1.50"),
        ]
        .concat();
        let both = entry_ncu(&[("entry_1e6_f32".into(), PROFILE.replace("(1, 1, 1)", "(245, 1, 1)").replace("Grid Size                                                      1", "Grid Size                                                    245")), ("cub_1e6_f32".into(), cub.clone())], &[]);
        assert!(both.contains("| 10^6 f32 | `reduce10_tiles_b512_l8_f32` |"), "{both}");
        assert!(both.contains("at 10^6 f32, `DeviceReduceKernel` (256 × 245, 3.81 µs) then `DeviceReduceSingleTileKernel` (256 × 1, 2.62 µs); the entry point's first launch, `reduce10_tiles_b512_l8_f32` (512 × 245), 2.82 µs."), "{both}");
        assert!(!both.contains("1500"), "the second sum's launch is not the first sum's: {both}");
        assert_eq!(profile_size("entry_2p30_f32", "entry_"), Some((1 << 30, Dtype::F32)));
        assert_eq!(profile_size("cub_3e7_i32", "cub_"), Some((30_000_000, Dtype::I32)));
        assert_eq!(profile_size("entry_2p99_f32", "entry_"), None);
        assert_eq!(launches(&cub).len(), 3);
        assert_eq!(super::super::determinism::parse_ncu("third", &launches(&cub)[2]).unwrap().duration_us, 1500.0);
        assert!(entry_ncu(&[], &[]).contains("not yet profiled"));
        // A profile of a launch the rule no longer makes says so.
        let now = Row { dtype: Dtype::F32, title: "entry point: reduce10_tiles_two_pass, block 256".into(), ..crate::book::chapters::tests::row(ENTRY_POINT_KERNEL, 1 << 13, Cache::Rotated, 1.66) };
        let stale = entry_ncu(&[("entry_2p13_f32".into(), PROFILE.into())], &[now]);
        assert!(stale.contains("| 1.66 µs (now `reduce10_tiles_two_pass`) |"), "{stale}");
        assert!(stale.contains("2^13 f32 (`reduce10_tiles_b512_l8_f32`; the rule now takes `reduce10_tiles_two_pass` at block 256)"), "{stale}");
        let same = Row { title: "entry point: reduce10_tiles, block 512".into(), ..crate::book::chapters::tests::row(ENTRY_POINT_KERNEL, 1 << 13, Cache::Rotated, 1.66) };
        assert!(!entry_ncu(&[("entry_2p13_f32".into(), PROFILE.into())], &[same]).contains("earlier rule"));
    }
}
