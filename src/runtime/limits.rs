//! Will an input fit? A size from the command line (`--n 2^40`) becomes a [`Need`]: what it is,
//! in words, and the bytes it takes. Before anything is allocated it is compared with the
//! host's available memory, and once a GPU is open with that GPU's free memory, so that a
//! request too large is refused with its size instead of dying in an allocation.
//!
//! The comparison ([`Need::check`]) is plain arithmetic, tested without a GPU; where the
//! numbers come from ([`host_available_bytes`], [`Gpu::memory`]) is kept apart from it.

use crate::element::Dtype;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use std::fmt;

/// Where an input would have to fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Memory {
    /// The host's available memory: `MemAvailable` in /proc/meminfo, or what is left under the
    /// container's cgroup limit, whichever is less.
    Host,
    /// What one allocation can address at all, where the host does not say what is available.
    AddressSpace,
    /// A GPU's free memory (`cuMemGetInfo`), by ordinal.
    Device { ordinal: usize },
    /// A GPU's free memory under `REDUCTION_DEVICE_MEMORY` ([`crate::device_memory`]).
    CappedDevice { ordinal: usize, cap: u64 },
}

impl fmt::Display for Memory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Memory::Host => write!(f, "this machine's available memory"),
            Memory::AddressSpace => write!(f, "what one allocation can address"),
            Memory::Device { ordinal } => write!(f, "GPU {ordinal}'s free memory"),
            Memory::CappedDevice { ordinal, cap } => write!(f, "GPU {ordinal}'s free memory under {}={}",
                crate::device_memory::VAR, crate::error::human_bytes_wide(*cap as u128)),
        }
    }
}

/// What a request needs in one memory: `what` in words (`2^40 f32 values`) and its bytes.
/// The bytes are a `u128`, so that no size that can be typed overflows (2^62 f64 values are
/// 2^65 bytes).
#[derive(Clone, Debug, PartialEq)]
pub struct Need {
    pub what: String,
    pub bytes: u128,
}

impl Need {
    /// `count` values of `dtype`.
    pub fn values(count: usize, dtype: Dtype) -> Need {
        Need::elements(format!("{} {} values", count_in_words(count), dtype.name()), count, dtype.size_bytes())
    }

    /// `count` elements of `element_bytes` each, described by `what`.
    pub fn elements(what: impl Into<String>, count: usize, element_bytes: usize) -> Need {
        Need { what: what.into(), bytes: count as u128 * element_bytes as u128 }
    }

    /// Refuse, as [`Error::TooLarge`], a need larger than `available` bytes of `memory`.
    /// `None` (the host did not say): refuse only what no allocation could address.
    pub fn check(&self, memory: Memory, available: Option<u128>) -> Result<()> {
        let (memory, available) = match available {
            Some(bytes) => (memory, bytes),
            None => (Memory::AddressSpace, isize::MAX as u128),
        };
        if self.bytes > available {
            return Err(Error::TooLarge { what: self.what.clone(), bytes: self.bytes, memory, available_bytes: available });
        }
        Ok(())
    }

    /// Against this machine's available memory, now.
    pub fn check_host(&self) -> Result<()> {
        self.check(Memory::Host, host_available_bytes())
    }

    /// Against `gpu`'s free memory, now.
    pub fn check_device(&self, gpu: &Gpu) -> Result<()> {
        let (free, _) = gpu.memory()?;
        let ordinal = gpu.info().ordinal;
        let memory = match gpu.memory_cap() {
            Some(cap) => Memory::CappedDevice { ordinal, cap },
            None => Memory::Device { ordinal },
        };
        self.check(memory, Some(free as u128))
    }
}

/// The share of a GPU's free memory that a benchmark's input pool may take: the rest is for the
/// kernels' scratch, a copy target of the same size and the driver. `plots/peers.py` uses it too.
pub const POOL_SHARE: f64 = 0.45;

/// Values of `element_bytes` in a benchmark's input pool: twice the largest input and eight L2s
/// at least, so that inputs rotate past the cache, but no more than [`POOL_SHARE`] of `free`. A
/// size larger than the pool is skipped, with the reason.
pub fn pool_values(largest: usize, l2_bytes: usize, free: usize, element_bytes: usize) -> usize {
    let want = (2 * largest).max(8 * l2_bytes / element_bytes);
    want.min((free as f64 * POOL_SHARE) as usize / element_bytes)
}

/// Values of `element_bytes` that an input pool's host copy may hold: [`POOL_SHARE`] of the
/// host's available memory (no limit where the host does not say).
pub fn host_pool_values(element_bytes: usize) -> usize {
    host_available_bytes().map_or(usize::MAX, |b| (b.min(usize::MAX as u128) as f64 * POOL_SHARE) as usize / element_bytes.max(1))
}

/// `2^40` for a power of two from 2^10 up, the number itself otherwise.
pub fn count_in_words(count: usize) -> String {
    if count >= 1024 && count.is_power_of_two() {
        format!("2^{}", count.trailing_zeros())
    } else {
        count.to_string()
    }
}

/// The host memory a new allocation can have: the less of `MemAvailable` and the room left
/// under a cgroup v2 limit. `None` where neither can be read (not Linux).
pub fn host_available_bytes() -> Option<u128> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let meminfo = read("/proc/meminfo").as_deref().and_then(mem_available);
    let cgroup = match (read("/sys/fs/cgroup/memory.max"), read("/sys/fs/cgroup/memory.current")) {
        (Some(max), Some(current)) => cgroup_room(&max, &current),
        _ => None,
    };
    match (meminfo, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `MemAvailable:  23174784 kB` from the text of /proc/meminfo, in bytes.
pub fn mem_available(meminfo: &str) -> Option<u128> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let mut words = line.split_whitespace();
    let value: u128 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => Some(value * 1024),
        None => Some(value),
        Some(_) => None,
    }
}

/// The room under a cgroup v2 limit: `memory.max` (a number, or `max` for none) less
/// `memory.current`.
pub fn cgroup_room(max: &str, current: &str) -> Option<u128> {
    let max: u128 = max.trim().parse().ok()?; // "max": no limit
    let current: u128 = current.trim().parse().ok()?;
    Some(max.saturating_sub(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_need_larger_than_the_memory_is_refused_with_its_size() {
        let need = Need::values(1 << 40, Dtype::F32);
        assert_eq!(need.bytes, 4 << 40);
        let err = need.check(Memory::Host, Some(64 << 30)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "2^40 f32 values (4.0 TiB) will not fit in this machine's available memory (64.0 GiB); nothing was allocated"
        );
        let err = need.check(Memory::Device { ordinal: 1 }, Some(139 << 30)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "2^40 f32 values (4.0 TiB) will not fit in GPU 1's free memory (139.0 GiB); nothing was allocated"
        );
        let err = Need::values(1 << 31, Dtype::F32).check(Memory::CappedDevice { ordinal: 0, cap: 6 << 30 }, Some(5 << 30)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "2^31 f32 values (8.0 GiB) will not fit in GPU 0's free memory under REDUCTION_DEVICE_MEMORY=6.0 GiB (5.0 GiB); nothing was allocated"
        );
    }

    #[test]
    fn a_need_that_fits_passes_up_to_the_last_byte() {
        let need = Need::values(1 << 20, Dtype::F64);
        assert_eq!(need.check(Memory::Host, Some(8 << 20)), Ok(()));
        assert!(matches!(need.check(Memory::Host, Some((8 << 20) - 1)), Err(Error::TooLarge { .. })));
        assert_eq!(Need::values(0, Dtype::F32).check(Memory::Host, Some(0)), Ok(()));
    }

    #[test]
    fn sizes_past_a_usize_of_bytes_do_not_overflow() {
        let need = Need::values(1 << 62, Dtype::F64);
        assert_eq!(need.bytes, 1 << 65);
        // With nothing known about the host, what no allocation can address is still refused.
        let err = need.check(Memory::Host, None).unwrap_err();
        assert!(matches!(err, Error::TooLarge { memory: Memory::AddressSpace, .. }), "{err:?}");
        assert!(err.to_string().starts_with("2^62 f64 values (32.0 EiB) will not fit in what one allocation can address"), "{err}");
        assert_eq!(Need::values(1 << 30, Dtype::F32).check(Memory::Host, None), Ok(()));
    }

    #[test]
    fn a_pool_fits_the_free_memory_and_larger_sizes_are_left_out() {
        const GIB: usize = 1 << 30;
        // The H200: 139 GiB free, the whole sweep to 2^30 f32 in a pool of 2^31.
        assert_eq!(pool_values(1 << 30, 60 << 20, 139 * GIB, 4), 1 << 31);
        // An 8 GB card with 7.5 GiB free (the README's example): 2^29 f32 fits, 2^30 does not;
        // 2^30 f32 (4 GiB) fits from 8.9 GiB free.
        let eight_gb = pool_values(1 << 30, 4 << 20, 15 * GIB / 2, 4);
        assert!((1 << 29..1 << 30).contains(&eight_gb), "{eight_gb}");
        assert!(pool_values(1 << 30, 4 << 20, 89 * GIB / 10, 4) >= 1 << 30);
        assert!(pool_values(1 << 30, 4 << 20, 88 * GIB / 10, 4) < 1 << 30);
        // The 6 GiB of tests/gpu-host.sh's capped stage: the same skips as the 8 GB card.
        let capped = pool_values(1 << 30, 60 << 20, 6 * GIB, 4);
        assert!((1 << 29..1 << 30).contains(&capped), "{capped}");
        // A small input on a small GPU: eight L2s, whatever the input.
        assert_eq!(pool_values(1 << 10, 4 << 20, 6 * GIB, 4), 8 << 20);
    }

    #[test]
    fn counts_are_written_as_powers_of_two_where_they_are() {
        assert_eq!(count_in_words(1 << 40), "2^40");
        assert_eq!(count_in_words(1024), "2^10");
        assert_eq!(count_in_words(512), "512");
        assert_eq!(count_in_words((1 << 20) + 1), "1048577");
    }

    #[test]
    fn host_memory_is_read_from_meminfo_and_the_cgroup() {
        let meminfo = "MemTotal:       24576000 kB\nMemFree:        20000000 kB\nMemAvailable:   23174784 kB\n";
        assert_eq!(mem_available(meminfo), Some(23174784 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
        assert_eq!(mem_available("MemAvailable: lots\n"), None);
        assert_eq!(cgroup_room("max\n", "123\n"), None);
        assert_eq!(cgroup_room("1073741824\n", "73741824\n"), Some(1_000_000_000));
        assert_eq!(cgroup_room("100\n", "200\n"), Some(0));
        // On Linux, where this runs, the host says something, and it is not zero.
        if cfg!(target_os = "linux") {
            assert!(host_available_bytes().is_some_and(|b| b > 0));
        }
    }
}
