//! The commands each chapter's "Run it" section shows, and where their output goes. The
//! output is written by `reduction book-runs` on the GPU (each command run as a child process,
//! its stdout and stderr captured as a terminal shows them) into `book/generated/runs/`, and
//! the chapters include those files: no output in the book is typed by hand.

/// One command of a "Run it" section.
#[derive(Debug)]
pub struct Run {
    /// The output file's stem: `book/generated/runs/<slug>.txt`.
    pub slug: &'static str,
    /// The chapter file that shows it.
    pub chapter: &'static str,
    /// The command line as the reader types it, from the book's folder; `reduction` is the
    /// book's program (`cargo run --release --`).
    pub command: &'static str,
}

const fn run(slug: &'static str, chapter: &'static str, command: &'static str) -> Run {
    Run { slug, chapter, command }
}

pub static RUNS: &[Run] = &[
    run("info", "introduction.md", "reduction info"),
    run("exercise_list", "exercises.md", "reduction exercise --list"),
    run("reduce1", "01_interleaved_divergent.md", "reduction sum --kernel reduce1 --n 2^24 --dtype i32"),
    run("reduce1_block_300", "01_interleaved_divergent.md", "reduction sum --kernel reduce1 --n 2^24 --block 300"),
    run("reduce2", "02_interleaved_strided.md", "reduction sum --kernel reduce2 --n 2^24 --dtype i32"),
    run("reduce2_padded", "02_interleaved_strided.md", "reduction sum --kernel reduce2_padded --n 2^24 --dtype f32 --runs 3"),
    run("reduce3", "03_sequential.md", "reduction sum --kernel reduce3 --n 2^24 --dtype f32 --runs 3"),
    run("exercise_3_near_miss", "03_sequential.md", "reduction exercise 3 --near-miss sums_99_percent --seed 1"),
    run("exercise_3_solution", "03_sequential.md", "reduction exercise 3 --solution --seed 1"),
    run("reduce4", "04_first_add_during_load.md", "reduction sum --kernel reduce4 --n 2^24 --dtype f32 --runs 3"),
    run("reduce5", "05_unroll_last_warp.md", "reduction sum --kernel reduce5 --n 2^24 --dtype i32"),
    run("reduce5_volatile_racecheck", "05_unroll_last_warp.md",
        "compute-sanitizer --tool racecheck --print-limit 3 --show-backtrace no reduction sum --kernel reduce5_volatile --n 10000 --dtype i32"),
    run("reduce6", "06_complete_unroll.md", "reduction sum --kernel reduce6 --n 2^24 --block 512 --runs 3"),
    run("reduce7", "07_multiple_elements.md", "reduction sum --kernel reduce7 --n 2^26 --runs 3"),
    run("reduce8", "08_warp_shuffle.md", "reduction sum --kernel reduce8 --n 2^24 --dtype bf16 --runs 3"),
    run("reduce9", "09_vectorized.md", "reduction sum --kernel reduce9 --n 2^26 --dtype f16 --runs 3"),
    run("exercise_9_near_miss", "09_vectorized.md", "reduction exercise 9 --near-miss assumes_aligned --seed 1"),
    run("reduce10_atomic", "10_single_pass.md", "reduction sum --kernel reduce10_atomic --dtype f32 --n 2^24 --runs 20 --same-input --block 256"),
    run("reduce10_last_block", "10_single_pass.md", "reduction sum --kernel reduce10_last_block --dtype f32 --n 2^24 --runs 20 --same-input --block 256"),
    run("reduce11_grid", "11_cooperative_groups.md", "reduction sum --kernel reduce11_grid --n 2^26 --runs 3"),
    run("reduce12", "12_cub.md", "reduction sum --kernel reduce12 --n 2^26 --block 512 --runs 3"),
    run("benchmark_quick", "benchmark.md", "reduction bench --quick --kernels reduce9,reduce10_last_block,reduce12 --no-peers --out /tmp/reduction-bench-quick"),
    run("multigpu_sum", "multigpu.md", "reduction multigpu sum --per-gpu 2^28"),
    run("reduce_kahan", "accuracy.md", "reduction sum --kernel reduce_kahan --n 2^24 --runs 3"),
    run("rows_4096x768", "rows.md", "reduction rows --m 4096 --n 768"),
    run("rows_2p20x256", "rows.md", "reduction rows --m 1048576 --n 256"),
    run("rows_32x2p23", "rows.md", "reduction rows --m 32 --n 8388608"),
    run("tile_languages_rows", "tile_languages.md", "reduction rows-bench --quick --out /tmp/reduction-rows-quick"),
    run("reduce15_neumaier_block_128", "determinism.md", "reduction sum --kernel reduce15_neumaier --n 2^24 --runs 10 --same-input --block 128"),
    run("reduce15_neumaier_block_1024", "determinism.md", "reduction sum --kernel reduce15_neumaier --n 2^24 --runs 10 --same-input --block 1024"),
];

/// What a run's output file holds, under its command line, until the GPU host has run it: the
/// chapter then shows that the output is not recorded yet, rather than an output nobody saw.
pub const NOT_YET_RECORDED: &str = "(not yet recorded on the GPU host: `OUT=results bash tests/gpu-host.sh book` runs this and writes its output here)";

/// The runs whose output files are still [`NOT_YET_RECORDED`]: added since the last GPU round;
/// the next `tests/gpu-host.sh book` records them, and this list is then emptied (a test holds
/// the list and the files to each other).
pub const NOT_YET_RECORDED_RUNS: &[&str] = &["multigpu_sum"];

/// The chapter of a snippet's output file under `book/generated/snippets/`
/// (`01_interleaved_divergent_2.txt`: the second shown snippet of `01_interleaved_divergent.md`,
/// as `tests/snippets.rs` names them).
pub fn snippet_chapter(file: &str) -> String {
    let stem = file.strip_suffix(".txt").unwrap_or(file);
    let chapter = stem.rsplit_once('_').filter(|(_, n)| n.chars().all(|c| c.is_ascii_digit())).map_or(stem, |(chapter, _)| chapter);
    format!("{chapter}.md")
}

/// Where the outputs are, from the book's folder.
pub const DIR: &str = "book/generated/runs";

impl Run {
    /// `book/generated/runs/<slug>.txt`.
    pub fn path(&self) -> String {
        format!("{DIR}/{}.txt", self.slug)
    }

    /// The `reduction` arguments of the command (after `reduction`, whatever wraps it).
    pub fn reduction_args(&self) -> Vec<&'static str> {
        let words: Vec<&'static str> = self.command.split_whitespace().collect();
        match words.iter().position(|w| *w == "reduction") {
            Some(at) => words[at + 1..].to_vec(),
            None => Vec::new(),
        }
    }

    /// The first line of its output file: the prompt and the command.
    pub fn header(&self) -> String {
        format!("$ {}", self.command)
    }

    /// The include a chapter writes to show it.
    pub fn include(&self) -> String {
        format!("{{{{#include generated/runs/{}.txt}}}}", self.slug)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book(file: &str) -> String {
        let path = crate::records::repo_root().join(file);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn every_run_is_shown_by_its_chapter_with_output_a_program_wrote() {
        for r in RUNS {
            let chapter = book(&format!("book/{}", r.chapter));
            assert!(chapter.contains(&r.include()), "{} does not include {}", r.chapter, r.path());
            let output = book(&r.path());
            assert!(output.starts_with(&format!("{}\n", r.header())), "{} does not start with `{}`", r.path(), r.header());
            assert!(output.lines().count() > 1, "{} holds no output", r.path());
            assert!(!r.reduction_args().is_empty(), "{}", r.command);
            // A run added since the last GPU round says so in place of its output, and is listed.
            let waiting = output.lines().nth(1) == Some(NOT_YET_RECORDED);
            assert_eq!(waiting, NOT_YET_RECORDED_RUNS.contains(&r.slug), "{}: placeholder and NOT_YET_RECORDED_RUNS disagree", r.path());
        }
        for slug in NOT_YET_RECORDED_RUNS {
            assert!(RUNS.iter().any(|r| r.slug == *slug), "{slug} is no run");
        }
        let slugs: std::collections::HashSet<_> = RUNS.iter().map(|r| r.slug).collect();
        assert_eq!(slugs.len(), RUNS.len(), "slugs are unique");
    }

    #[test]
    fn every_kernel_chapter_has_a_run_it_section() {
        for chapter in ["01_interleaved_divergent.md", "02_interleaved_strided.md", "03_sequential.md", "04_first_add_during_load.md",
            "05_unroll_last_warp.md", "06_complete_unroll.md", "07_multiple_elements.md", "08_warp_shuffle.md", "09_vectorized.md",
            "10_single_pass.md", "11_cooperative_groups.md", "12_cub.md", "introduction.md", "accuracy.md", "rows.md",
            "determinism.md"] {
            assert!(RUNS.iter().any(|r| r.chapter == chapter), "{chapter} shows no command");
            assert!(book(&format!("book/{chapter}")).contains("## Run it"), "{chapter} has no Run it section");
        }
    }
}
