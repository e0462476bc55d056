//! The book's output, drawn from the records under `plots/data/` with no GPU. Reads
//! [`crate::records`] and the kernel registry; never an experiment.
//!
//! - [`context`]: every record and tool log the book is drawn from, read once.
//! - [`manifest`]: every generated file, the chapter that includes it, and its generator (grep a
//!   file's name there to find the function that writes it).
//! - [`chapters`]: the generators, one file per chapter or part of the book.
//! - [`draw`]: the drawing layer beneath them: charts, diagrams, figures.
//! - [`render`]: the call that redraws everything (`reduction bench --plot-only`).
//! - [`runs`]: the commands of the chapters' "Run it" sections, whose output a GPU host writes.

pub mod chapters;
pub mod context;
pub mod draw;
pub mod manifest;
pub mod render;
pub mod runs;
