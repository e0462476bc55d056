//! What the tests and the benchmark check a sum against: inputs (random, exact by construction),
//! references and error bounds ([`data`], and per row [`rows`]), CPU transcriptions of the
//! reproducible kernels' order ([`reproducible`]), and the planted bugs that prove those checks
//! can fail ([`mutants`]). Uses the kernels; the kernels know nothing of how they are checked.

pub mod data;
pub mod mutants;
pub mod ops;
pub mod ops_mutants;
pub mod reproducible;
pub mod rows;

use crate::element::Element;
use data::{Checked, Reference};

/// The check of a sum that a [`crate::Reducer`] computed, against the reference of its input:
/// exactly for integers and exact-by-construction inputs, within the bound of that launch's
/// addition depth ([`crate::Reducer::addition_depth`]) for random reals.
pub trait CheckSum<T: Element> {
    fn check(&self, got: T::Acc, reference: &Reference) -> Result<(), String>;
}

impl<T: Checked> CheckSum<T> for crate::Reducer<T> {
    fn check(&self, got: T::Acc, reference: &Reference) -> Result<(), String> {
        let depth = self.addition_depth(reference.n).map_err(|e| e.to_string())?;
        T::check_with(got, reference, depth)
    }
}
