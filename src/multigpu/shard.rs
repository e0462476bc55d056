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

// ANCHOR: chunk_shard
/// As [`shard`], in whole chunks of `chunk` values: the `⌈n / chunk⌉` chunks are shared out as
/// [`shard`] shares values, so every shard starts on a chunk boundary and only the last
/// non-empty one may end inside a chunk (at `n`). Kernel 15 sums each chunk in an order of its
/// own, so a chunk's sum is the same bits whichever GPU sums it.
pub fn chunk_shard(n: usize, ranks: usize, rank: usize, chunk: usize) -> Range<usize> {
    assert!(chunk > 0, "chunks of zero values");
    let chunks = shard(n.div_ceil(chunk), ranks, rank);
    (chunks.start * chunk).min(n)..(chunks.end * chunk).min(n)
}
// ANCHOR_END: chunk_shard

/// Every rank's [`chunk_shard`], in rank order.
pub fn chunk_shards(n: usize, ranks: usize, chunk: usize) -> Vec<Range<usize>> {
    (0..ranks).map(|r| chunk_shard(n, ranks, r, chunk)).collect()
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

    #[test]
    fn chunk_shards_cover_the_input_once_on_chunk_boundaries() {
        for ranks in [1, 2, 3, 4, 8] {
            for n in [0, 1, 15, 16, 17, 16 * 5 + 3, 16 * 8, 16 * 64 + 1, 1000] {
                let s = chunk_shards(n, ranks, 16);
                assert_eq!((s[0].start, s[ranks - 1].end), (0, n), "{n} on {ranks}: {s:?}");
                assert!(s.windows(2).all(|w| w[0].end == w[1].start), "{n} on {ranks}: {s:?}");
                // Every non-empty shard starts on a boundary and ends on one or at n: no chunk is split.
                assert!(s.iter().all(|r| r.is_empty() || (r.start % 16 == 0 && (r.end % 16 == 0 || r.end == n))), "{n} on {ranks}: {s:?}");
                let chunks: Vec<usize> = s.iter().map(|r| r.len().div_ceil(16)).collect();
                assert!(chunks.iter().max().unwrap() - chunks.iter().min().unwrap() <= 1, "{n} on {ranks}: {chunks:?}");
            }
        }
        assert_eq!(chunk_shards(100, 3, 1), shards(100, 3), "chunks of one value are values");
    }
}
