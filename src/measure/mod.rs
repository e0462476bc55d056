//! Measurements on the GPU: the benchmark of every kernel, the row sums' benchmark, and the
//! accuracy experiment.

pub mod accuracy;
pub mod bench;
pub mod rows_bench;

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
