//! The entry point's rule against the data it cites: for every band of `kernels::dispatch`, the
//! results file its evidence names must hold the band's kernel at the band's block at every size
//! of the band that was measured there, and that kernel must be the fastest measured (within
//! `EVIDENCE_SLACK`) for f32 and i32 alike. No GPU needed: this reads committed data.

use reduction::kernels::dispatch::{Band, BANDS, EVIDENCE_SLACK, KNOWN_GAPS};
use reduction::records::bench::{self as results, Cache, Row, Status};
use reduction::Dtype;

/// Sizes that are not a power of two (2^22 + 1, 10^6) are ragged for every kernel, and the
/// fastest there differs from one file to the next by more than the noise: the band's choice
/// must be within this of it.
const RAGGED_SLACK: f64 = 0.15;

fn band_range(i: usize) -> (u64, u64) {
    let low = if i == 0 { 0 } else { BANDS[i - 1].up_to_bytes };
    (low, BANDS[i].up_to_bytes)
}

fn measured(rows: &[Row], band: &Band, dtype: Dtype, n: usize) -> Option<f64> {
    rows.iter()
        .find(|r| r.kernel == band.evidence.kernel && r.block == band.evidence.block && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated)
        .map(|r| r.median_us)
}

#[test]
fn every_band_is_the_fastest_measured_at_its_sizes() {
    let root = reduction::records::repo_root();
    let mut checked = 0;
    let mut gaps_seen = 0;
    let mut failures = Vec::new();
    for (i, band) in BANDS.iter().enumerate() {
        let (_, rows) = results::read_csv(&root.join(band.evidence.file)).unwrap_or_else(|e| panic!("{}: {e}", band.evidence.file));
        let (low, high) = band_range(i);
        for dtype in [Dtype::F32, Dtype::I32] {
            let mut sizes: Vec<usize> = rows.iter().filter(|r| r.dtype == dtype && r.cache == Cache::Rotated).map(|r| r.n).collect();
            sizes.sort_unstable();
            sizes.dedup();
            for n in sizes.into_iter().filter(|&n| (n as u64 * 4) > low && (n as u64 * 4) <= high) {
                // The entry point's own rows are what the rule produces, not evidence for it.
                let best = rows
                    .iter()
                    .filter(|r| r.status == Status::Correct && r.kernel != "entry_point" && r.dtype == dtype && r.n == n && r.cache == Cache::Rotated)
                    .min_by(|a, b| a.median_us.total_cmp(&b.median_us))
                    .expect("a size with rows has a fastest one");
                let Some(ours) = measured(&rows, band, dtype, n) else {
                    failures.push(format!("{} {dtype} n={n}: {} at block {} was not measured", band.evidence.file, band.kernel, band.block));
                    continue;
                };
                let slack = if n.is_power_of_two() { EVIDENCE_SLACK } else { RAGGED_SLACK };
                checked += 1;
                let known = KNOWN_GAPS.iter().any(|&(d, gap_n, _)| d == dtype && gap_n == n);
                if known {
                    gaps_seen += 1;
                    if ours <= best.median_us * (1.0 + slack) {
                        failures.push(format!("{dtype} n={n}: listed in KNOWN_GAPS but within the slack now ({ours:.2} µs against {:.2}): drop it", best.median_us));
                    }
                } else if ours > best.median_us * (1.0 + slack) {
                    failures.push(format!(
                        "{dtype} n={n}: the band's {} at block {} took {ours:.2} µs, {:.1}% behind {} at block {} ({:.2} µs)",
                        band.kernel, band.block, 100.0 * (ours / best.median_us - 1.0), best.kernel, best.block, best.median_us
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "the rule does not follow its evidence:\n{}", failures.join("\n"));
    assert_eq!(gaps_seen, KNOWN_GAPS.len(), "every known gap is a measured size of its band");
    // Every band was checked somewhere: a rule with no data behind a band would pass above.
    assert!(checked >= BANDS.len() * 2, "only {checked} checks");
}

#[test]
fn a_slower_choice_would_be_caught() {
    // The check above can fail: the same data, with the large band's choice swapped for
    // reduce3 (Harris's kernel 3, far from the fastest there), is refused.
    let root = reduction::records::repo_root();
    let (_, rows) = results::read_csv(&root.join("plots/data/nvidia-h200.csv")).unwrap();
    let slow = Band { kernel: "reduce3", block: 256, evidence: reduction::kernels::dispatch::Evidence { file: "", kernel: "reduce3", block: 256 }, ..BANDS[BANDS.len() - 1] };
    let n = 1 << 28;
    let ours = measured(&rows, &slow, Dtype::F32, n).expect("reduce3 was measured at 2^28");
    let best = rows.iter().filter(|r| r.status == Status::Correct && r.dtype == Dtype::F32 && r.n == n && r.cache == Cache::Rotated).map(|r| r.median_us).fold(f64::MAX, f64::min);
    assert!(ours > best * (1.0 + EVIDENCE_SLACK), "reduce3 {ours} vs best {best}");
}
