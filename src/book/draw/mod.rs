//! The drawing layer beneath the chapters' generators: charts from the records ([`charts`]), the
//! addressing diagrams of the trees ([`diagrams`]), and the figures of later chapters drawn from
//! the host's arithmetic ([`figures`]). One look for the whole book, and the same bytes from the
//! same data.

pub mod charts;
pub mod diagrams;
pub mod figures;
