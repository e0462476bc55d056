//! Sharding: which contiguous part of the input each rank sums.

use std::ops::Range;

// ANCHOR: shard
/// The part of `0..n` that rank `rank` of `ranks` sums: contiguous, in rank order, the first
/// `n % ranks` ranks one element longer than the rest. Every element is in exactly one shard;
/// with fewer elements than ranks, the last ranks get empty shards (and add zero).
pub fn shard(n: usize, ranks: usize, rank: usize) -> Range<usize> {
    assert!(rank < ranks, "rank {rank} of {ranks}");
    let (base, extra) = (n / ranks, n % ranks);
    let start = rank * base + rank.min(extra);
    start..start + base + usize::from(rank < extra)
}
// ANCHOR_END: shard

/// Every rank's shard, in rank order.
pub fn shards(n: usize, ranks: usize) -> Vec<Range<usize>> {
    (0..ranks).map(|r| shard(n, ranks, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_the_input_once_in_rank_order() {
        for (n, ranks) in [(0, 1), (0, 3), (2, 3), (10, 3), (1_000_003, 8), (7, 7)] {
            let s = shards(n, ranks);
            assert_eq!(s.first().unwrap().start, 0);
            assert_eq!(s.last().unwrap().end, n);
            assert!(s.windows(2).all(|w| w[0].end == w[1].start && w[0].len() >= w[1].len() && w[0].len() - w[1].len() <= 1), "{n} on {ranks}: {s:?}");
        }
    }
}
