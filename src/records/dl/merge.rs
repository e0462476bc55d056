//! `dl-bench --merge`: one GPU's files rebuilt from several runs over parts of the shapes, each
//! case from the last run that measured it.

use super::{copy_shapes_file, demos_file, peers_file, refused_file, results_file, CopyShapeTime, Demo, DlRow, Refused};
use crate::element::Dtype;
use crate::error::Result;
use crate::records::csv;
use std::path::{Path, PathBuf};

/// A (peer or kernel, type, M, N) case: the unit a run split by `--shapes` (or a peer measured
/// on its own) measures in one of its parts.
type Case = (String, Dtype, usize, usize);

/// `later`'s rows over `base`'s: every case `later` has replaces `base`'s rows of that case; rows
/// outside `case` (the yardsticks) are kept from `base` only, so that they stay one run's.
fn overlay<R>(base: &mut Vec<R>, later: Vec<R>, first: bool, case: impl Fn(&R) -> Option<Case>) {
    if first {
        base.extend(later);
        return;
    }
    let cases: std::collections::HashSet<Case> = later.iter().filter_map(&case).collect();
    base.retain(|r| case(r).is_none_or(|c| !cases.contains(&c)));
    base.extend(later.into_iter().filter(|r| case(r).is_some()));
}

/// The book's rows of an op at a shape and type come from one run (the planner's team and every
/// variant beside it): a later part that measured the op there replaces them all, and leaves the
/// other ops of the shape as they were.
fn shape_of(r: &DlRow) -> Option<Case> {
    (r.op != "copy" && r.op != "read").then(|| (r.op.clone(), r.dtype, r.rows, r.n))
}

/// A peer's rows are its own: a part that measured only some peers replaces only theirs.
fn peer_case(r: &DlRow) -> Option<Case> {
    Some((r.kernel.clone(), r.dtype, r.rows, r.n))
}

/// The header of the first part with the command line of every part, in order, each once, and
/// the dates they span ("2026-12-01 … 2026-12-03": a merged part keeps the range it had).
fn joined_header(headers: &[csv::Header]) -> csv::Header {
    let mut header = headers[0].clone();
    let mut commands: Vec<&str> = Vec::new();
    // A merged file lists its parts' commands already: each command once.
    for c in headers.iter().filter_map(|h| csv::value(h, "command")).flat_map(|c| c.split(" ; ")) {
        if !commands.contains(&c) {
            commands.push(c); // a part may carry another's file (the book's, beside its peers)
        }
    }
    if let Some(entry) = header.iter_mut().find(|(k, _)| k == "command") {
        entry.1 = commands.join(" ; ");
    }
    // ISO dates order as text; each part's date is one day or a range already joined.
    let days: std::collections::BTreeSet<&str> = headers.iter().filter_map(|h| csv::value(h, "date")).flat_map(|d| d.split(" … ")).map(str::trim).filter(|d| !d.is_empty()).collect();
    if let (Some(first), Some(last), Some(entry)) = (days.first(), days.last(), header.iter_mut().find(|(k, _)| k == "date")) {
        entry.1 = if first == last { first.to_string() } else { format!("{first} … {last}") };
    }
    header
}

/// Rebuild `into`'s files for GPU `slug` from `parts`, each the data folder of a `dl-bench --out`
/// run over some of the shapes (a full run is longer than some hosts lend a GPU for): the book's
/// rows of each shape from the last part that measured it, each peer's (timed or refused) at each
/// shape from the last part that ran that peer there;
/// the yardsticks (copy, its tile shapes, read-only) from the first part; the planted bugs' outputs from the last
/// part that has them. The header's command lists every part's. Each part is one run: its
/// kernels and its peers were measured beside each other. Returns the book's rows written.
pub fn merge(parts: &[PathBuf], into: &Path, slug: &str) -> Result<usize> {
    let missing = |what: &str| crate::error::Error::Config { setting: "dl-bench --merge".into(), reason: what.to_string() };
    if parts.is_empty() {
        return Err(missing("no folder to merge"));
    }
    let (mut ours, mut peers, mut refused, mut demos) = (Vec::new(), Vec::new(), Vec::new(), None);
    let (mut our_headers, mut peer_headers, mut refused_headers) = (Vec::new(), Vec::new(), Vec::new());
    let mut book_files: Vec<String> = Vec::new();
    for part in parts {
        let file = results_file(part, slug);
        if !file.is_file() {
            return Err(missing(&format!("{} does not exist (a folder dl-bench --out wrote, for {slug})", file.display())));
        }
        // A part of peers only carries a copy of the book's file it ran beside: read each once.
        let text = std::fs::read_to_string(&file).map_err(|e| crate::error::io_error(&file, e))?;
        if !book_files.contains(&text) {
            let (header, rows) = csv::read::<DlRow>(&file)?;
            our_headers.push(header);
            overlay(&mut ours, rows, our_headers.len() == 1, shape_of);
            book_files.push(text);
        }
        if peers_file(part, slug).is_file() {
            let (header, rows) = csv::read::<DlRow>(&peers_file(part, slug))?;
            peer_headers.push(header);
            overlay(&mut peers, rows, peer_headers.len() == 1, peer_case);
        }
        if refused_file(part, slug).is_file() {
            let (header, rows) = csv::read::<Refused>(&refused_file(part, slug))?;
            refused_headers.push(header);
            overlay(&mut refused, rows, refused_headers.len() == 1, |r: &Refused| Some((r.kernel.clone(), r.dtype, r.rows, r.n)));
        }
        if demos_file(part, slug).is_file() {
            demos = Some(csv::read::<Demo>(&demos_file(part, slug))?);
        }
    }
    csv::write(&results_file(into, slug), &joined_header(&our_headers), &ours)?;
    if !peer_headers.is_empty() {
        csv::write(&peers_file(into, slug), &joined_header(&peer_headers), &peers)?;
    }
    if !refused_headers.is_empty() {
        csv::write(&refused_file(into, slug), &joined_header(&refused_headers), &refused)?;
    }
    // The copy's tile shapes belong to the yardsticks: the first part's.
    let copy_shapes = copy_shapes_file(&parts[0], slug);
    if copy_shapes.is_file() {
        let (header, rows) = csv::read::<CopyShapeTime>(&copy_shapes)?;
        csv::write(&copy_shapes_file(into, slug), &header, &rows)?;
    }
    if let Some((header, rows)) = demos {
        csv::write(&demos_file(into, slug), &header, &rows)?;
    }
    Ok(ours.len())
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::records::bench::{Cache, Status};
    use crate::records::machine::Machine;

    #[test]
    fn a_merge_takes_each_case_from_the_last_run_that_measured_it_and_the_yardsticks_from_the_first() {
        let row = |kernel: &str, op: &str, rows: usize, n: usize, median_us: f64| DlRow {
            kernel: kernel.into(), chapter: 17, title: kernel.into(), status: Status::Correct, dtype: Dtype::F32, n,
            block: 256, cache: Cache::Rotated, median_us, min_us: median_us, max_us: median_us, bytes: 1 << 30, working_set_bytes: 1 << 31,
            repeats: 15, method: "graph".into(), op: op.into(), rows,
        };
        let root = std::env::temp_dir().join(format!("reduction-dl-merge-{}", std::process::id()));
        let (a, b, into) = (root.join("a"), root.join("b"), root.join("into"));
        let machine = |command: &str| Machine {
            gpu: "NVIDIA H200".into(), command: command.into(), date: if command == "run b" { "2026-12-03".into() } else { "2026-12-01".into() }, ..Default::default()
        };
        assert_eq!(slug_in(&a), None, "nothing written yet");
        write_csv(&peers_file(&a, "gpu"), &machine("peers a"), &[row("torch_softmax", "softmax", 1 << 20, 256, 506.0)]).unwrap();
        write_csv(&results_file(&a, "gpu"), &machine("run a"), &[row("copy", "copy", 1, 1 << 28, 540.0), row("dl_softmax", "softmax", 1 << 20, 256, 522.0), row("dl_softmax", "softmax", 1 << 14, 1 << 14, 521.0),
            row("softmax_three_pass", "softmax", 1 << 14, 1 << 14, 690.0), row("dl_rms_norm", "rms_norm", 1 << 14, 1 << 14, 523.0)]).unwrap();
        write_csv(&results_file(&b, "gpu"), &machine("run b"), &[row("copy", "copy", 1, 1 << 28, 530.0), row("dl_softmax", "softmax", 1 << 14, 1 << 14, 519.0), row("dl_softmax", "softmax", 1 << 10, 1 << 18, 530.0)]).unwrap();
        // A part of one peer alone (Quack, in a call of its own), beside a copy of the book's file.
        let q = root.join("quack");
        write_csv(&results_file(&q, "gpu"), &machine("run a"), &read_csv::<DlRow>(&results_file(&a, "gpu")).unwrap().1).unwrap();
        write_csv(&peers_file(&q, "gpu"), &machine("quack"), &[row("quack_softmax", "softmax", 1 << 20, 256, 505.0)]).unwrap();
        assert_eq!(slug_in(&a).as_deref(), Some("gpu"), "the book's file, not the peers'");
        assert_eq!(merge(&[a.clone(), b.clone()], &into, "gpu").unwrap(), 5);
        assert_eq!(merge(&[a.clone(), b.clone(), q], &into, "gpu").unwrap(), 5, "the copy of the book's file changes nothing");
        // Merged again with a part it holds: each command once.
        let again = root.join("again");
        merge(&[into.clone(), b.clone()], &again, "gpu").unwrap();
        assert_eq!(read_csv::<DlRow>(&results_file(&again, "gpu")).unwrap().0.command, "run a ; run b");
        let (peers_header, peers) = read_csv::<DlRow>(&peers_file(&into, "gpu")).unwrap();
        assert_eq!(peers.len(), 2, "torch and Quack at the same shape, from two parts, both kept");
        assert_eq!(peers_header.command, "peers a ; quack");
        let (header, ours) = read_csv::<DlRow>(&results_file(&into, "gpu")).unwrap();
        assert_eq!(header.command, "run a ; run b");
        assert_eq!((header.date.as_str(), peers_header.date.as_str()), ("2026-12-01 … 2026-12-03", "2026-12-01"), "the days the runs span");
        let median = |rows: usize| ours.iter().find(|r| r.rows == rows && r.op == "softmax").map(|r| r.median_us);
        assert_eq!((median(1 << 20), median(1 << 14), median(1 << 10)), (Some(522.0), Some(519.0), Some(530.0)));
        assert!(!ours.iter().any(|r| r.kernel == "softmax_three_pass"), "run b's softmax at 2^14 × 2^14 replaces run a's, variants and all");
        assert!(ours.iter().any(|r| r.op == "rms_norm" && r.median_us == 523.0), "an op run b did not measure there stays");
        let copies: Vec<f64> = ours.iter().filter(|r| r.op == "copy").map(|r| r.median_us).collect();
        assert_eq!(copies, vec![540.0], "the yardstick of the first run only");
        assert!(merge(&[a, root.join("nowhere")], &into, "gpu").is_err(), "a folder without the book's file is an error");
        std::fs::remove_dir_all(&root).ok();
    }
}
