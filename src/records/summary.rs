//! What repeated measurements are summarised by: the median, and the extremes beside it. One
//! definition for every timing and experiment; nothing here sorts the caller's values.

/// The median, minimum and maximum of some measurements (NaN sorts last, as `total_cmp` has it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// How many values were summarised (at least one).
    pub count: usize,
}

impl Summary {
    /// The summary of `values`; `None` for none.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let mut sorted = values.to_vec();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 { sorted[mid] } else { (sorted[mid - 1] + sorted[mid]) / 2.0 };
        Some(Summary { median, min, max, count: sorted.len() })
    }
}

/// The median of `values` (the mean of the two middle ones for an even count); 0 for none.
pub fn median(values: &[f64]) -> f64 {
    Summary::of(values).map_or(0.0, |s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts_and_of_none() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn the_extremes_do_not_depend_on_the_order_and_the_input_is_left_alone() {
        let values = [5.0, -1.0, 9.5, 2.0];
        let s = Summary::of(&values).unwrap();
        assert_eq!((s.min, s.median, s.max, s.count), (-1.0, 3.5, 9.5, 4));
        assert_eq!(values, [5.0, -1.0, 9.5, 2.0], "not sorted in place");
        // A NaN sorts last: it is the maximum, never the minimum or (of three or more) the median.
        let s = Summary::of(&[f64::NAN, 1.0, 2.0]).unwrap();
        assert_eq!((s.min, s.median), (1.0, 2.0));
        assert!(s.max.is_nan());
    }
}
