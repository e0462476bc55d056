//! "Common mistakes" (`book/mistakes.md`, and a chapter for each kind of mistake: [`SECTIONS`]):
//! its tables, drawn from the recorded run (`plots/data/mistakes/<gpu>.csv`,
//! [`crate::records::mistakes`]) and the catalogue ([`crate::kernels::broken`]) with no GPU: the
//! table of every mistake in the overview, and one sentence per mistake for its section.

use crate::book::context::Context;
use crate::error::{io_error, Result};
use crate::kernels::broken::{all, what_it_did, Mistake};
use crate::records::mistakes::{read_records, records_dir, Records};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The recorded run the book shows: `mistakes/<slug>.csv` for the GPU the book shows (`book_gpu`,
/// from `book-gpu.txt`), else the first file there; `None` when nothing was measured yet.
pub fn book_records(data_dir: &Path, book_gpu: Option<&str>) -> Option<PathBuf> {
    let dir = records_dir(data_dir);
    let chosen = book_gpu.map(|slug| dir.join(format!("{slug}.csv")));
    if let Some(path) = chosen.filter(|p| p.is_file()) {
        return Some(path);
    }
    crate::records::csv_files(&dir).into_iter().next()
}

/// The overview chapter of the mistakes: the child-process supervisor and the table of all.
pub const OVERVIEW: &str = "mistakes.md";

/// The chapters that show the mistakes one by one, each with the numbers of those it shows.
pub const SECTIONS: [(&str, &[u32]); 3] =
    [("mistakes_sync.md", &[1, 2, 3, 8]), ("mistakes_memory.md", &[4, 5, 6, 7]), ("mistakes_checking.md", &[9, 10])];

/// The chapter (a file under `book/`) whose section shows `mistake`: its sentence, its sanitizer
/// log; the overview for a mistake no section lists (the test below refuses one).
pub fn chapter_of(mistake: &Mistake) -> &'static str {
    SECTIONS.iter().find(|(_, numbers)| numbers.contains(&mistake.number)).map_or(OVERVIEW, |(chapter, _)| chapter)
}

const NOT_MEASURED: &str = "Not yet measured on a GPU";

/// How to produce the data, for the note shown until it exists.
pub const MEASURE_COMMAND: &str = "MISTAKES_RECORD=plots/data/mistakes/ cargo test --release --test mistakes";
pub const TABLE_COMMAND: &str = "cargo run --release -- mistakes --table-only";

/// Write the chapter's files from the recorded run under `data_dir` (`plots/data`) into
/// `out_dir` (`book/generated`): `mistakes.md`, the table of every mistake, and
/// `mistakes/<name>.md`, one sentence per mistake for its section (what `reduction mistakes
/// --table-only` redraws; `render` writes the same files from its [`Context`]). With nothing
/// recorded yet, each says so and how to measure. Needs no GPU.
pub fn write_mistakes_table(data_dir: &Path, out_dir: &Path) -> Result<Vec<PathBuf>> {
    let source = book_records(data_dir, crate::records::book_gpu_slug(data_dir).as_deref());
    let recorded = match source {
        Some(path) => Some((read_records(&path)?, path)),
        None => None,
    };
    let recorded = recorded.as_ref().map(|(records, path)| (path.as_path(), records));
    let mut files = vec![("mistakes.md".to_string(), table_markdown(recorded.map(|r| r.0), recorded.map(|r| r.1)))];
    files.extend(all().iter().map(|m| (format!("mistakes/{}.md", m.name), sentence_markdown(m, recorded.map(|r| r.1)))));
    let mut written = Vec::new();
    for (name, text) in files {
        let path = out_dir.join(name);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
        std::fs::write(&path, text).map_err(|e| io_error(&path, e))?;
        written.push(path);
    }
    Ok(written)
}

/// `mistakes.md` from the context's recorded run.
pub fn table_of(c: &Context) -> String {
    table_markdown(c.mistakes.as_ref().map(|(path, _)| path.as_path()), c.mistakes.as_ref().map(|(_, records)| records))
}

/// `mistakes/<name>.md` from the context's recorded run.
pub fn sentence_of(c: &Context, mistake: &Mistake) -> String {
    sentence_markdown(mistake, c.mistakes.as_ref().map(|(_, records)| records))
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn where_measured(records: &Records) -> String {
    let gpu = records.get("gpu").unwrap_or("an unnamed GPU");
    let mut s = format!("**{gpu}**");
    let mut facts = Vec::new();
    if let Some(cc) = records.get("compute_capability") {
        facts.push(format!("compute capability {cc}"));
    }
    if let Some(cuda) = records.get("driver_cuda") {
        facts.push(format!("CUDA {cuda} driver"));
    }
    if let Some(nvrtc) = records.get("nvrtc") {
        facts.push(format!("NVRTC {nvrtc}"));
    }
    if !facts.is_empty() {
        write!(s, " ({})", facts.join(", ")).unwrap();
    }
    if let Some(date) = records.get("date") {
        write!(s, " on {date}").unwrap();
    }
    s
}

/// The table; `source` and `records` are `None` when nothing was measured.
pub fn table_markdown(source: Option<&Path>, records: Option<&Records>) -> String {
    let mut s = String::new();
    let (Some(source), Some(records)) = (source, records) else {
        writeln!(s, "<!-- Generated by reduction::book::chapters::mistakes::table_markdown; do not edit. -->\n").unwrap();
        writeln!(s, "> **{NOT_MEASURED}.** This table is drawn from `plots/data/mistakes/<gpu>.csv`, which the mistakes").unwrap();
        writeln!(s, "> test writes on a machine with an NVIDIA GPU: `{MEASURE_COMMAND}`,").unwrap();
        writeln!(s, "> then `{TABLE_COMMAND}` redraws it.\n").unwrap();
        writeln!(s, "| # | mistake | what it did | caught by |\n|---:|---|---|---|").unwrap();
        for m in all() {
            writeln!(s, "| {} | {} | *not measured yet* | {} |", m.number, cell(m.title), cell(m.caught_by)).unwrap();
        }
        return s;
    };
    let file = source.file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
    writeln!(s, "<!-- Generated by reduction::book::chapters::mistakes::table_markdown from plots/data/mistakes/{file}; do not edit. -->\n").unwrap();
    let n = records.get("n").unwrap_or("?");
    let runs = records.get("runs").unwrap_or("?");
    let deadline = records.get("deadline_s").map(|d| format!(", a deadline of {d} s after start-up")).unwrap_or_default();
    writeln!(s, "Measured on the {}: each mistake in a child process of its own, {runs} runs of N = {n} random", where_measured(records)).unwrap();
    writeln!(s, "values (`i32`; `f32` for mistake 9){deadline}.\n").unwrap();
    writeln!(s, "| # | mistake | what it did | caught by |\n|---:|---|---|---|").unwrap();
    for m in all() {
        let did = match records.rows.iter().find(|r| r.mistake == m.name) {
            Some(r) => what_it_did(m, r),
            None => "*not in this run*".into(),
        };
        writeln!(s, "| {} | {} | {} | {} |", m.number, cell(m.title), cell(&did), cell(m.caught_by)).unwrap();
    }
    s
}

/// One mistake's sentence for its section of the chapter.
pub fn sentence_markdown(mistake: &Mistake, records: Option<&Records>) -> String {
    let row = records.and_then(|r| r.rows.iter().find(|row| row.mistake == mistake.name).map(|row| (r, row)));
    match row {
        None => format!(
            "*{NOT_MEASURED}* (this sentence is drawn from `plots/data/mistakes/<gpu>.csv`; the note above the table at the top of the chapter says how to measure).\n"
        ),
        Some((records, row)) => {
            let gpu = records.get("gpu").unwrap_or("the GPU");
            format!("**On the {gpu}:** {}.\n", what_it_did(mistake, row))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mistake_is_in_exactly_one_section() {
        for m in all() {
            let holding: Vec<&str> = SECTIONS.iter().filter(|(_, numbers)| numbers.contains(&m.number)).map(|(c, _)| *c).collect();
            assert_eq!(holding.len(), 1, "mistake {} ({}) is in {holding:?}", m.number, m.name);
            assert_eq!(chapter_of(m), holding[0]);
        }
        for (chapter, numbers) in SECTIONS {
            assert!(crate::records::repo_root().join("book").join(chapter).is_file(), "no book/{chapter}");
            assert!(numbers.iter().all(|n| all().iter().any(|m| m.number == *n)), "{chapter} lists a mistake that does not exist");
        }
    }
    use crate::kernels::broken::describe::every_mistake;
    use crate::kernels::broken::find;

    #[test]
    fn tables_and_sentences_say_what_happened() {
        let records = every_mistake();
        let m = |name: &str| find(name).unwrap();
        let table = table_markdown(Some(Path::new("plots/data/mistakes/nvidia-test-gpu.csv")), Some(&records));
        assert!(table.contains("**NVIDIA Test GPU**") && table.contains("\\| piped"), "{table}");
        assert_eq!(table.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| #")).count(), all().len());
        assert!(sentence_markdown(m("sync_in_branch"), Some(&records)).starts_with("**On the NVIDIA Test GPU:** right sum in all 20 runs."));
        assert!(table_markdown(None, None).contains(NOT_MEASURED));
        assert!(sentence_markdown(m("sync_in_branch"), None).contains(NOT_MEASURED));
    }
}
