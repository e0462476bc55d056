//! The book's output, drawn from measured data with no GPU: results files, Markdown tables,
//! charts, addressing diagrams, and the call that redraws them all.

pub mod accuracy;
pub mod csv_file;
pub mod diagrams;
pub mod plots;
pub mod render;
pub mod results;
pub mod rows;
pub mod tables;
