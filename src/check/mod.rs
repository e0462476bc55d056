//! What the tests and the benchmark check a sum against: inputs (random, exact by construction),
//! references and error bounds, and the planted bugs that prove those checks can fail.

pub mod data;
pub mod mutants;
pub mod ops;
pub mod ops_mutants;
pub mod reproducible;
