//! A smaller GPU, simulated: `REDUCTION_DEVICE_MEMORY=6GiB` makes the library treat the device
//! as if it had that much free memory when it was opened, so that the paths a reader's 8 GB card
//! takes (sizes skipped, tests ignored, sums refused) can be tried on a 140 GB one.
//!
//! The cap counts down as this process allocates, as a real small GPU's free memory would:
//! [`capped_free`] is `min(real free now, cap − what was taken since the GPU was opened)`. Which
//! is plain arithmetic, tested without a GPU; [`crate::gpu::Gpu::memory`] applies it. Python
//! peers read the same variable (`plots/peers.py`, `device_budget`).

use crate::error::{human_bytes_wide, Error, Result};

/// The environment variable that caps the device memory the library sees.
pub const VAR: &str = "REDUCTION_DEVICE_MEMORY";

/// The units a size may be written in: binary (KiB, MiB, GiB, TiB) and decimal (KB, MB, GB, TB).
const UNITS: &[(&str, u128)] = &[
    ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10),
    ("TB", 1_000_000_000_000), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000), ("kB", 1000),
    ("B", 1),
];

/// `6GiB`, `512MiB`, `8GB`, `1.5GiB`, `6 GiB` or a plain number of bytes, as bytes (fractions of
/// a byte are dropped). Anything else is an error that says how to write one.
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let bad = || format!("{text:?} is not a memory size (write 6GiB, 512MiB, 8GB or a number of bytes)");
    let trimmed = text.trim();
    let (number, scale) = UNITS
        .iter()
        .find_map(|(unit, scale)| trimmed.strip_suffix(unit).map(|n| (n.trim_end(), *scale)))
        .unwrap_or((trimmed, 1));
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') || number.matches('.').count() > 1 {
        return Err(bad());
    }
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return Err(bad());
    }
    // Exact decimal arithmetic: 1.5GiB is 1610612736 bytes, not a float's nearest.
    let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().map_err(|_| bad())? };
    let digits = fraction.len().min(30) as u32;
    let fraction: u128 = if fraction.is_empty() { 0 } else { fraction[..digits as usize].parse().map_err(|_| bad())? };
    let bytes = whole
        .checked_mul(scale)
        .and_then(|w| w.checked_add(fraction.checked_mul(scale)? / 10u128.pow(digits)))
        .ok_or_else(|| format!("{text:?} is more bytes than any GPU has"))?;
    u64::try_from(bytes).map_err(|_| format!("{text:?} is more bytes than any GPU has"))
}

/// The cap `REDUCTION_DEVICE_MEMORY` sets, if it is set: `Ok(None)` when it is not (or empty),
/// a [`Error::Config`] naming the variable when its value is not a size.
pub fn cap_from_env() -> Result<Option<u64>> {
    match std::env::var(VAR) {
        Ok(value) if !value.trim().is_empty() => parse_size(&value)
            .map(Some)
            .map_err(|reason| Error::Config { setting: format!("{VAR}={value}"), reason }),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err(Error::Config { setting: VAR.into(), reason: "is not valid UTF-8 (write 6GiB, 512MiB or 8GB)".into() })
        }
    }
}

/// The free memory the library works with: the driver's `free_now`, or with a `cap`, no more than
/// the cap less what was taken since the GPU was opened (`free_at_open − free_now`): allocations
/// of this process, and of any other, count against the cap as they would on a small GPU. Memory
/// given back beyond what the GPU had at open does not raise the cap.
pub fn capped_free(cap: Option<u64>, free_at_open: u64, free_now: u64) -> u64 {
    match cap {
        None => free_now,
        Some(cap) => free_now.min(cap.saturating_sub(free_at_open.saturating_sub(free_now))),
    }
}

/// One line for a GPU's description when a cap is set: `device memory capped at 6.0 GiB by
/// REDUCTION_DEVICE_MEMORY (139.2 GiB really free)`.
pub fn describe_cap(cap: u64, real_free: u64) -> String {
    format!("device memory capped at {} by {VAR} ({} really free)", human_bytes_wide(cap as u128), human_bytes_wide(real_free as u128))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_in_binary_and_decimal_units() {
        assert_eq!(parse_size("6GiB"), Ok(6 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("8GB"), Ok(8_000_000_000));
        assert_eq!(parse_size("64KiB"), Ok(64 << 10));
        assert_eq!(parse_size("1TiB"), Ok(1 << 40));
        assert_eq!(parse_size("2TB"), Ok(2_000_000_000_000));
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("8B"), Ok(8));
        assert_eq!(parse_size("1073741824"), Ok(1 << 30));
        // Fractions, spaces around the number and between it and the unit.
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("0.5 GiB"), Ok(1 << 29));
        assert_eq!(parse_size(" 6 GiB "), Ok(6 << 30));
        assert_eq!(parse_size(".25KiB"), Ok(256));
        assert_eq!(parse_size("1.0000000001B"), Ok(1));
        assert_eq!(parse_size("0"), Ok(0));
    }

    #[test]
    fn junk_is_refused_with_how_to_write_a_size() {
        for junk in ["", "GiB", "six GiB", "6 gigs", "6GiBs", "-1GiB", "1e9", "2^30", "6.5.1GiB", ".", "1,5GiB", "6 G", "0x10"] {
            let err = parse_size(junk).expect_err(junk);
            assert!(err.contains("is not a memory size") && err.contains("6GiB, 512MiB, 8GB"), "{junk}: {err}");
        }
        let err = parse_size("99999999999TiB").unwrap_err();
        assert!(err.contains("more bytes than any GPU has"), "{err}");
    }

    #[test]
    fn the_cap_counts_down_with_what_is_allocated_and_never_exceeds_the_real_memory() {
        const GIB: u64 = 1 << 30;
        // No cap: the driver's number.
        assert_eq!(capped_free(None, 139 * GIB, 130 * GIB), 130 * GIB);
        // A 6 GiB cap on a 139 GiB GPU: 6 GiB at first, 2 GiB once 4 GiB are taken, 0 past it.
        assert_eq!(capped_free(Some(6 * GIB), 139 * GIB, 139 * GIB), 6 * GIB);
        assert_eq!(capped_free(Some(6 * GIB), 139 * GIB, 135 * GIB), 2 * GIB);
        assert_eq!(capped_free(Some(6 * GIB), 139 * GIB, 130 * GIB), 0);
        // A cap larger than the GPU: the real free memory.
        assert_eq!(capped_free(Some(200 * GIB), 139 * GIB, 139 * GIB), 139 * GIB);
        assert_eq!(capped_free(Some(8 * GIB), 5 * GIB, 3 * GIB), 3 * GIB);
        // Memory freed by another process after the open does not lift the cap.
        assert_eq!(capped_free(Some(6 * GIB), 100 * GIB, 120 * GIB), 6 * GIB);
    }

    #[test]
    fn the_cap_describes_itself() {
        assert_eq!(describe_cap(6 << 30, 139 << 30), "device memory capped at 6.0 GiB by REDUCTION_DEVICE_MEMORY (139.0 GiB really free)");
    }
}
