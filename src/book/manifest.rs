//! Every generated file of the book: the file, the chapter that includes it, and the function
//! (or, for what only a GPU can write, the program) that writes it. `grep -n <file name>
//! src/book/manifest.rs` finds the generator of any file under `book/generated/`, `plots/*.svg`
//! or `plots/diagrams/` in one step. [`render`](crate::book::render::render_all) writes every
//! entry it can draw, in this order; the tests below check that every `{{#include}}` of a
//! generated file has exactly one entry and that every entry is included by its chapter.

use super::chapters::{accuracy, benchmark, classic, common, determinism, dl, dl_goal, dl_limits, dl_norms, entry, entry_ncu, entry_scratch, harris, introduction, mistakes, modern, multigpu, operators, rows, rows_short, sanitizers, tile, vec_switches};
use super::context::Context;
use super::draw::{charts, diagrams, figures};
use crate::error::Result;
use crate::kernels::broken;
use crate::records::bench::{Machine, Row};

/// A generator: the file's text from the loaded data, or `None` where there is nothing to draw.
pub type Draw = Box<dyn Fn(&Context) -> Result<Option<String>>>;

/// What an entry's file is written by.
pub enum Source {
    /// Drawn by `render` from the loaded data: the file's text, or `None` where there is nothing
    /// to draw yet (the file is then left as it is).
    Drawn(Draw),
    /// Written by a program on a GPU host (the command that writes it); `render` leaves it alone.
    Program(&'static str),
}

/// One generated file.
pub struct Generated {
    /// The file, from the repository's root (`book/generated/kernel2.md`, `plots/time.svg`).
    pub file: String,
    /// The chapter (a file under `book/`) that includes it, directly or through another
    /// generated file; where several do, the first in the book.
    pub chapter: String,
    /// Where the text comes from: the generator's path in the crate, or the program's file.
    pub generator: &'static str,
    pub source: Source,
}

/// An entry drawn from the context.
fn drawn(file: impl Into<String>, chapter: &str, generator: &'static str, draw: impl Fn(&Context) -> Result<Option<String>> + 'static) -> Generated {
    Generated { file: file.into(), chapter: chapter.to_string(), generator, source: Source::Drawn(Box::new(draw)) }
}

/// A `book/generated/` file drawn from the context, always written.
fn md(name: impl Into<String>, chapter: &'static str, generator: &'static str, write: impl Fn(&Context) -> Result<String> + 'static) -> Generated {
    drawn(format!("book/generated/{}", name.into()), chapter, generator, move |c| write(c).map(Some))
}

/// A `book/generated/` file drawn from the benchmark rows of the book's GPU.
fn bench(name: impl Into<String>, chapter: &'static str, generator: &'static str, write: impl Fn(&Machine, &[Row]) -> String + 'static) -> Generated {
    md(name, chapter, generator, move |c| {
        let (machine, rows) = c.book()?;
        Ok(write(machine, rows))
    })
}

/// A `book/generated/` file written by a program on the GPU host.
fn program(name: impl Into<String>, chapter: &str, generator: &'static str, command: &'static str) -> Generated {
    Generated { file: format!("book/generated/{}", name.into()), chapter: chapter.to_string(), generator, source: Source::Program(command) }
}

/// The chapters of Harris's seven kernels, by kernel.
const CLASSIC_CHAPTERS: [&str; 7] = [
    "01_interleaved_divergent.md", "02_interleaved_strided.md", "03_sequential.md", "04_first_add_during_load.md",
    "05_unroll_last_warp.md", "06_complete_unroll.md", "07_multiple_elements.md",
];

/// The chapter of a modern kernel (8 to 12), by the registry's chapter number.
fn modern_chapter(kernel: &str) -> &'static str {
    match crate::kernels::find(kernel).map(|k| k.chapter) {
        Ok(8) => "08_warp_shuffle.md",
        Ok(9) => "09_vectorized.md",
        Ok(10) => "10_single_pass.md",
        Ok(11) => "11_cooperative_groups.md",
        _ => "12_cub.md",
    }
}

/// Every generated file, for the data in `c` (the sanitizer sentences and the snippets' outputs
/// are one per file found; everything else is fixed).
pub fn manifest(c: &Context) -> Vec<Generated> {
    let mut m = vec![
        bench("machine.md", "01_interleaved_divergent.md", "book::chapters::common::machine_line", common::machine_line),
        bench("intro_ratio.md", "introduction.md", "book::chapters::introduction::add_to_fetch_ratio", |m, _| introduction::add_to_fetch_ratio(m)),
        md("sass_tree.md", "01_interleaved_divergent.md", "book::chapters::classic::sass_tree_sentence", |c| Ok(classic::sass_tree_sentence(&c.sass))),
        md("block_300.md", "01_interleaved_divergent.md", "book::draw::diagrams::block_of_300_sentence", |_| Ok(diagrams::block_of_300_sentence())),
    ];
    // Harris's seven kernels, and his table.
    for (k, (kernel, _)) in harris::CHANGES.iter().enumerate() {
        m.push(bench(format!("kernel{}.md", k + 1), CLASSIC_CHAPTERS[k], "book::chapters::classic::chapter_table", move |m, r| classic::chapter_table(m, r, kernel)));
    }
    m.extend([
        md("bank_conflicts.md", "02_interleaved_strided.md", "book::chapters::classic::bank_conflicts_table", |c| Ok(classic::bank_conflicts_markdown(&c.bank_conflicts, &c.book()?.1))),
        md("kernel4_limit.md", "04_first_add_during_load.md", "book::chapters::classic::kernel4_limit", |c| {
            let (m, r) = c.book()?;
            Ok(classic::kernel4_limit(m, r, &c.harris_profiles))
        }),
        md("harris_profile.md", "04_first_add_during_load.md", "book::chapters::classic::harris_profile_table", |c| Ok(classic::harris_profile_table(&c.harris_profiles))),
        bench("kernel5_historical.md", "05_unroll_last_warp.md", "book::chapters::classic::historical_kernel5", |_, r| classic::historical_kernel5(r)),
        bench("kernel7_large.md", "07_multiple_elements.md", "book::chapters::classic::kernel7_large", classic::kernel7_large),
        bench("resident.md", "07_multiple_elements.md", "book::chapters::classic::resident_fixed_cost", classic::resident_fixed_cost),
    ]);
    for (n, cache) in harris::HARRIS_TABLES {
        m.push(bench(harris::harris_file_name(n, cache), "harris_table.md", "book::chapters::harris::harris_table", move |m, r| harris::harris_table(m, r, n, cache)));
    }
    m.extend([
        bench("speedup_split.md", "harris_table.md", "book::chapters::harris::speedup_split", |_, r| harris::speedup_split(r)),
        bench("harris_reading.md", "harris_table.md", "book::chapters::harris::harris_reading", harris::harris_reading),
    ]);
    // To the memory limit.
    for (kernel, previous) in modern::MODERN_STEPS {
        m.push(bench(format!("{kernel}.md"), modern_chapter(kernel), "book::chapters::modern::modern_step_table", move |m, r| modern::modern_step_table(m, r, kernel, previous)));
    }
    m.extend([
        bench("reduce8_vs_reduce7.md", "08_warp_shuffle.md", "book::chapters::modern::reduce8_vs_reduce7", |_, r| modern::reduce8_vs_reduce7(r)),
        bench("little.md", "09_vectorized.md", "book::chapters::modern::bytes_in_flight", modern::bytes_in_flight),
        md("single_pass.md", "10_single_pass.md", "book::chapters::modern::single_pass_sentence", |c| Ok(modern::single_pass_sentence(&c.book()?.1, c.experiments.as_deref()))),
        md("finish_cost.md", "10_single_pass.md", "book::chapters::modern::finish_cost", |c| Ok(modern::finish_cost(c.experiments.as_deref()))),
        md("redux.md", "11_cooperative_groups.md", "book::chapters::modern::redux_sentence", |c| Ok(modern::redux_sentence(&c.book()?.1, &c.sass, c.experiments.as_deref()))),
        drawn("book/generated/types.md", "09_vectorized.md", "book::chapters::modern::types_table", |c| Ok(c.types.as_ref().map(|(m, r)| modern::types_table(m, r)))),
        bench("modern.md", "12_cub.md", "book::chapters::modern::modern_table", modern::modern_table),
        bench("best.md", "benchmark.md", "book::chapters::benchmark::best_table", benchmark::best_table),
        bench("ceiling.md", "benchmark.md", "book::chapters::benchmark::ceiling_table", benchmark::ceiling_table),
        bench("pace.md", "benchmark.md", "book::chapters::benchmark::copy_pace", benchmark::copy_pace),
        bench("working_set.md", "benchmark.md", "book::chapters::benchmark::working_set", benchmark::working_set),
        md("ceiling_shapes.md", "benchmark.md", "book::chapters::benchmark::ceiling_shapes", |c| Ok(benchmark::ceiling_shapes(&c.book()?.1, c.read_only_shapes.as_deref()))),
        bench("entry_point.md", "benchmark.md", "book::chapters::entry::entry_table", entry::entry_table),
        md("entry_twins.md", "benchmark.md", "book::chapters::entry::entry_twins", |c| {
            let (machine, rows) = c.book()?;
            let file = c.data_dir.join("experiments/bench-repeat").join(format!("{}.csv", crate::records::slug(&machine.gpu)));
            let repeat = if file.is_file() { Some(crate::records::bench::read_csv(&file)?) } else { None };
            Ok(entry::entry_twins(rows, repeat.as_ref().map(|(m, r)| (m, r.as_slice()))))
        }),
        md("entry_scratch.md", "benchmark.md", "book::chapters::entry_scratch::entry_scratch", |c| entry_scratch::entry_scratch(&c.data_dir, &c.book()?.0.gpu)),
        bench("host_visible.md", "benchmark.md", "book::chapters::entry::host_visible_table", entry::host_visible_table),
        md("host_result.md", "benchmark.md", "book::chapters::entry::host_result", |c| Ok(entry::host_result(c.experiments.as_deref()))),
        md("entry_ncu.md", "benchmark.md", "book::chapters::entry_ncu::entry_ncu", |c| Ok(entry_ncu::entry_ncu(&c.ncu, &c.book()?.1))),
        md("dispatch_bands.md", "skeleton.md", "book::chapters::entry::dispatch_bands", |c| Ok(entry::dispatch_bands(&c.sass))),
        md("vec_tail.md", "skeleton.md", "book::chapters::vec_switches::vec_tail_table", |c| vec_switches::vec_tail_table(&c.data_dir, &vec_switches::VEC_TAIL_IN_FLIGHT)),
        md("vec_pred.md", "skeleton.md", "book::chapters::vec_switches::vec_tail_table", |c| vec_switches::vec_tail_table(&c.data_dir, &vec_switches::VEC_TAIL_PREDICATED)),
        md("vec_k12_pred.md", "skeleton.md", "book::chapters::vec_switches::vec_tail_table", |c| vec_switches::vec_tail_table(&c.data_dir, &vec_switches::REDUCE12_PREDICATED)),
        md("vec_k12_pred_branch.md", "skeleton.md", "book::chapters::vec_switches::vec_tail_table", |c| vec_switches::vec_tail_table(&c.data_dir, &vec_switches::REDUCE12_PREDICATED_BRANCH)),
        md("vec_k12_plain.md", "skeleton.md", "book::chapters::vec_switches::vec_tail_table", |c| vec_switches::vec_tail_table(&c.data_dir, &vec_switches::REDUCE12_PLAIN)),
    ]);
    for name in charts::BENCHMARK_CHARTS {
        m.push(drawn(format!("plots/{name}"), "benchmark.md", "book::draw::charts::benchmark_chart", move |c| charts::benchmark_chart(name, &c.gpus, c.book()?).map(Some)));
    }
    // What deep learning reduces.
    m.extend([
        md("accuracy.md", "accuracy.md", "book::chapters::accuracy::sizes_markdown", |c| Ok(accuracy::sizes_markdown(c))),
        drawn("plots/accuracy.svg", "accuracy.md", "book::chapters::accuracy::sizes_chart", |c| accuracy::sizes_chart(c).map(Some)),
        md("accuracy_conditioning.md", "accuracy.md", "book::chapters::accuracy::conditioning_markdown", |c| Ok(accuracy::conditioning_markdown(c))),
        drawn("plots/accuracy_conditioning.svg", "accuracy.md", "book::chapters::accuracy::conditioning_chart_svg", |c| accuracy::conditioning_chart_svg(c).map(Some)),
        md("accuracy_cascade.md", "accuracy.md", "book::chapters::accuracy::cascade_markdown", |c| Ok(accuracy::cascade_markdown(c))),
        md("determinism.md", "determinism.md", "book::chapters::determinism::levels_markdown", determinism::levels_markdown),
        md("reproducible_goal.md", "determinism.md", "book::chapters::determinism::goal_markdown", determinism::goal_markdown),
        md("reproducible_ncu.md", "determinism.md", "book::chapters::determinism::ncu_table", |c| Ok(determinism::ncu_table(&c.ncu))),
        md("rows.md", "rows.md", "book::chapters::rows::table_markdown", rows::table_markdown),
        md("rows_chart.md", "rows.md", "book::chapters::rows::chart_markdown", rows::chart_markdown),
        drawn("plots/rows.svg", "rows.md", "book::chapters::rows::chart", rows::chart),
        md("rows_half.md", "rows.md", "book::chapters::rows::half_markdown", rows::half_markdown),
        md("rows_few.md", "rows.md", "book::chapters::rows::few_markdown", rows::few_markdown),
        md("rows_short.md", "rows.md", "book::chapters::rows_short::markdown", rows_short::markdown),
        md("operators_source.md", "operators.md", "book::chapters::operators::source_markdown", operators::source_markdown),
        md("operators_broken.md", "operators.md", "book::chapters::operators::broken_markdown", operators::broken_markdown),
        md("operators_accuracy.md", "operators.md", "book::chapters::operators::accuracy_markdown", operators::accuracy_markdown),
        md("operators_goal.md", "operators.md", "book::chapters::operators::goal_markdown", operators::goal_markdown),
        drawn("plots/operators.svg", "operators.md", "book::chapters::operators::chart", operators::chart),
        drawn("plots/operators_rows.svg", "operators.md", "book::chapters::operators::rows_chart", operators::rows_chart),
        md("operators_peers.md", "operators.md", "book::chapters::operators::peers_markdown", operators::peers_markdown),
        md("operators_sum.md", "operators.md", "book::chapters::operators::sum_markdown", operators::sum_markdown),
        md("operators_walks.md", "operators.md", "book::chapters::operators::walks_markdown", operators::walks_markdown),
        md("operators_ncu.md", "operators.md", "book::chapters::operators::ncu_markdown", operators::ncu_markdown),
        md("tile_lines.md", "tile_languages.md", "book::chapters::tile::lines_markdown", tile::lines_markdown),
        md("tile_generated.md", "tile_languages.md", "book::chapters::tile::generated_markdown", tile::generated_markdown),
        md("tile_rows.md", "tile_languages.md", "book::chapters::tile::rows_markdown", tile::rows_markdown),
        md("tile_sums.md", "tile_languages.md", "book::chapters::tile::sums_markdown", tile::sums_markdown),
    ]);
    // The deep-learning reductions.
    m.extend([
        md("dl_three_ways.md", "dl_softmax.md", "book::chapters::dl::three_ways", |c| dl::from_results(c, dl::three_ways)),
        md("dl_demos.md", "dl_softmax.md", "book::chapters::dl::demos_markdown", dl::demos_markdown),
        md("dl_fusion.md", "dl_softmax.md", "book::chapters::dl::fusion_markdown", dl::fusion_markdown),
        md("dl_cluster_exchange.md", "dl_softmax.md", "book::chapters::dl_limits::cluster_exchange_markdown", dl_limits::cluster_exchange_markdown),
        md("dl_untested_packs.md", "dl_softmax.md", "book::chapters::dl_limits::untested_packs_markdown", dl_limits::untested_packs_markdown),
        md("dl_exp_fma.md", "dl_softmax.md", "book::chapters::dl_limits::exp_fma_markdown", dl_limits::exp_fma_markdown),
        md("dl_ce_mean.md", "dl_norms.md", "book::chapters::dl_limits::ce_mean_markdown", dl_limits::ce_mean_markdown),
        md("dl_columns_wave.md", "dl_norms.md", "book::chapters::dl_limits::columns_wave_markdown", dl_limits::columns_wave_markdown),
        md("dl_columns_shared.md", "dl_norms.md", "book::chapters::dl_limits::columns_shared_markdown", dl_limits::columns_shared_markdown),
        md("dl_norms_experiments.md", "dl_norms.md", "book::chapters::dl_norms::norms_experiments_markdown", dl_norms::norms_experiments_markdown),
        md("dl_norms_ahead.md", "dl_norms.md", "book::chapters::dl_norms::switches::norms_ahead_markdown", dl_norms::norms_ahead_markdown),
        md("dl_norms_clusters.md", "dl_norms.md", "book::chapters::dl_norms::switches::norms_clusters_markdown", dl_norms::norms_clusters_markdown),
        md("dl_staged_blocks.md", "dl_norms.md", "book::chapters::dl_norms::staged_blocks_markdown", dl_norms::staged_blocks_markdown),
        md("dl_norms_cluster_staged.md", "dl_norms.md", "book::chapters::dl_norms::switches::norms_cluster_staged_markdown", dl_norms::norms_cluster_staged_markdown),
        md("dl_norms_lanes.md", "dl_softmax.md", "book::chapters::dl_norms::lanes::norms_lanes_markdown", dl_norms::norms_lanes_markdown),
        md("dl_long_rows.md", "dl_softmax.md", "book::chapters::dl::long_rows", |c| dl::from_results(c, dl::long_rows)),
        md("dl_ceilings.md", "dl_softmax.md", "book::chapters::dl_limits::ceilings", |c| dl::from_results(c, dl_limits::ceilings)),
        md("dl_copy_shapes.md", "dl_softmax.md", "book::chapters::dl_limits::copy_shapes_markdown", dl_limits::copy_shapes_markdown),
        md("dl_forward.md", "dl_softmax.md", "book::chapters::dl::forward_markdown", |c| dl::from_results(c, dl::forward_markdown)),
        md("dl_chart.md", "dl_softmax.md", "book::chapters::dl::chart_markdown", dl::chart_markdown),
        drawn("plots/dl.svg", "dl_softmax.md", "book::chapters::dl::chart", dl::chart),
        md("dl_goal.md", "dl_softmax.md", "book::chapters::dl_goal::goal", |c| dl::from_results(c, dl_goal::goal)),
        md("dl_ncu.md", "dl_softmax.md", "book::chapters::dl_limits::ncu_markdown", dl_limits::ncu_markdown),
        md("dl_lanes_bound.md", "dl_softmax.md", "book::chapters::dl_norms::switches::lanes_bound_markdown", dl_norms::lanes_bound_markdown),
        md("dl_norms_instructions.md", "dl_norms.md", "book::chapters::dl_norms::norms_instructions_markdown", dl_norms::norms_instructions_markdown),
        md("dl_backward.md", "dl_norms.md", "book::chapters::dl::backward_markdown", |c| dl::from_results(c, dl::backward_markdown)),
        md("dl_columns.md", "dl_norms.md", "book::chapters::dl::columns", |c| dl::from_results(c, dl::columns)),
    ]);
    // When it goes wrong.
    m.push(md("mistakes.md", mistakes::OVERVIEW, "book::chapters::mistakes::table_markdown", |c| Ok(mistakes::table_of(c))));
    for mistake in broken::all() {
        m.push(md(format!("mistakes/{}.md", mistake.name), mistakes::chapter_of(mistake), "book::chapters::mistakes::sentence_markdown", move |c| Ok(mistakes::sentence_of(c, mistake))));
    }
    m.push(md("sanitizer_coverage.md", "sanitizers.md", "book::chapters::sanitizers::coverage_table", |c| Ok(sanitizers::coverage_table(&c.sanitizer_logs))));
    m.push(md("sanitizer_runs.md", "sanitizers.md", "book::chapters::sanitizers::runs_table", |c| Ok(sanitizers::runs_table(&c.sanitizer_logs))));
    for (index, (name, _)) in c.sanitizer_logs.iter().enumerate().filter(|(_, (name, _))| !sanitizers::is_suite_log(name)) {
        m.push(md(format!("sanitizer/{name}.md"), sanitizers::chapter_of(name), "book::chapters::sanitizers::sanitizer_sentence", move |c| {
            let (name, text) = &c.sanitizer_logs[index];
            Ok(sanitizers::sanitizer_sentence(&format!("{name}\n{text}")))
        }));
    }
    // Beyond one GPU.
    m.extend([
        md("nccl.md", "multigpu.md", "book::chapters::multigpu::table_markdown", |c| Ok(multigpu::table_markdown(c))),
        drawn("plots/nccl.svg", "multigpu.md", "book::chapters::multigpu::chart", multigpu::chart),
        md("nccl_model.md", "multigpu.md", "book::chapters::multigpu::model_markdown", |c| Ok(multigpu::model_markdown(c))),
        drawn("plots/nccl_model.svg", "multigpu.md", "book::chapters::multigpu::model_chart", multigpu::model_chart),
        md("nccl_published.md", "multigpu.md", "book::chapters::multigpu::published_markdown", |c| Ok(multigpu::published_markdown(c))),
        md("nccl_ranks.md", "multigpu.md", "book::chapters::multigpu::ranks_markdown", |c| Ok(multigpu::ranks_markdown(c))),
    ]);
    // The pictures drawn from the host's arithmetic.
    for scheme in diagrams::Scheme::ALL {
        let chapter = CLASSIC_CHAPTERS[crate::kernels::find(scheme.kernel()).map_or(1, |k| k.chapter as usize) - 1];
        m.push(drawn(format!("plots/diagrams/{}.svg", scheme.name()), chapter, "book::draw::diagrams::tree_diagram", move |_| diagrams::tree_diagram(scheme).map(Some)));
    }
    for (index, (name, _)) in figures::figures().into_iter().enumerate() {
        m.push(drawn(format!("plots/diagrams/{name}"), figures::chapter_of(&name), "book::draw::figures::figures", move |_| (figures::figures().swap_remove(index).1)().map(Some)));
    }
    // What only a GPU can write: the "Run it" outputs, the snippets' outputs, the exercises' tally.
    for run in super::runs::RUNS {
        m.push(program(format!("runs/{}.txt", run.slug), run.chapter, "src/cli/book_runs.rs", "cargo run --release -- book-runs (on the GPU host)"));
    }
    for name in &c.snippet_outputs {
        let chapter = super::runs::snippet_chapter(name);
        m.push(program(format!("snippets/{name}"), &chapter, "tests/snippets.rs", "SNIPPETS_RECORD=book/generated/snippets cargo test --release --test snippets (on the GPU host)"));
    }
    m.push(program("exercises.md", "exercises.md", "tests/exercises.rs", "EXERCISES_RECORD=book/generated/exercises.md cargo test --release --test exercises (on the GPU host)"));
    // Written by the command line after the book's files (the exercises' catalogue is an
    // experiment's, which the book does not import): the exercises that recorded run did not check.
    m.push(program("exercises_unchecked.md", "exercises.md", "src/exercises/catalogue.rs", "cargo run -- bench --plot-only (exercises::catalogue::write_unchecked_sentence)"));
    m
}

/// What a committed generated file may say where a measurement is missing: (file, phrase, why
/// the gap is known and accepted). Anything else that says "not measured" is a stale or
/// misspelt lookup, or data that was never committed, and fails the test below.
pub const NOT_MEASURED_ALLOWED: &[(&str, &str, &str)] = &[
    (
        "book/generated/types.md",
        "is not yet measured on this GPU",
        "the f64/f16/bf16 sweep (`bench --dtype f64,f16,bf16 --out plots/data/types`) was measured before the read-only kernel existed; its next run adds the ceiling",
    ),
    (
        "book/generated/runs/multigpu_sum.txt",
        crate::book::runs::NOT_YET_RECORDED,
        "issue 24: a Run it added after the last GPU round (runs::NOT_YET_RECORDED_RUNS); the next `tests/gpu-host.sh book` on a host of several GPUs writes its output",
    ),
    (
        "book/generated/entry_scratch.md",
        "where this is not yet measured",
        "issue 25: the scratch experiment ran on an H100 in session 52, the only GPU the device tool served that session; `tests/gpu-host.sh scratch` on the H200 adds its folder",
    ),
    (
        "book/generated/sanitizer_coverage.md",
        "`reduce15_neumaier_two_pass` (racecheck)",
        "issue 25: under racecheck, test-gpu's trials of the two-launch kernels did not finish in 150 s (twice, on 2026-12-02, with three trials selected at 4 test threads; earlier at 16 threads the tool stopped with 'failure to track a kernel launch'); one `reduction sum` of each of the other two under racecheck reported 0 hazards (plots/data/sanitizer/racecheck-*-sum.log, which the coverage table now credits); this one has no such run yet, and why the test binary stalls is not yet found",
    ),
    (
        "book/generated/nccl_model.md",
        "are not measured on a host with that many GPUs (none was lent)",
        "issue 26: hosts of 4 and 8 H200s are withheld; the rows are the model's predictions, marked so, until `bash tests/gpu-host.sh multigpu` runs on one",
    ),
    (
        "book/generated/nccl_published.md",
        "NVLS is not measured: NVLink multicast stays off",
        "the workplace forbids NVLink multicast (NCCL_NVLS_ENABLE=0 is forced by src/multigpu/nccl.rs): NVLS will never be measured here",
    ),
    (
        "book/generated/nccl_ranks.md",
        "On GPUs these totals are not measured yet: no host has run",
        "issue 26: `reduction multigpu determinism` was written after the last GPU call; the totals are the CPU's until a host runs it",
    ),
];

/// The phrases a generated file says where a measurement is missing (the generators', and the
/// placeholder of a "Run it" output the GPU host has not written yet).
pub const NOT_MEASURED_PHRASES: &[&str] = &[
    "not measured", "not yet measured", "not yet profiled", "not both measured", "not every kernel is measured", "not in this run",
    "not yet run", "has not been run", "is not computed", "not computed for", "no chart yet", "not yet recorded",
    // The fallbacks of the profile-, SASS- and experiment-backed sentences (issue 24).
    "not profiled", "not been profiled", "not been timed", "not been measured", "has not run", "is not in `plots/data/", "is not there",
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    fn context() -> Context {
        Context::load(&crate::records::repo_root()).unwrap()
    }

    /// The generated files `text` (a file under `dir`) includes, from the repository's root:
    /// `generated/…` and `../plots/….svg` (not `plots/data/`, which is data, not generated).
    fn generated_includes(text: &str, dir: &str) -> Vec<String> {
        let mut out = Vec::new();
        for piece in text.split("{{#include ").skip(1) {
            let target = piece.split("}}").next().unwrap_or("").split(':').next().unwrap_or("").trim();
            let mut path: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
            for part in target.split('/') {
                match part {
                    ".." => {
                        path.pop();
                    }
                    part => path.push(part),
                }
            }
            let path = path.join("/");
            let generated = path.starts_with("book/generated/") || (path.starts_with("plots/") && !path.starts_with("plots/data/") && path.ends_with(".svg"));
            if generated {
                out.push(path);
            }
        }
        out
    }

    /// chapter file → the generated files it includes, directly or through generated files.
    fn includes() -> BTreeMap<String, BTreeSet<String>> {
        let root = crate::records::repo_root();
        let mut out = BTreeMap::new();
        for entry in std::fs::read_dir(root.join("book")).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if !name.ends_with(".md") {
                continue;
            }
            let mut found = BTreeSet::new();
            let mut todo = generated_includes(&std::fs::read_to_string(entry.path()).unwrap(), "book");
            while let Some(file) = todo.pop() {
                if found.insert(file.clone()) && file.ends_with(".md") {
                    let text = std::fs::read_to_string(root.join(&file)).unwrap_or_default();
                    todo.extend(generated_includes(&text, "book/generated"));
                }
            }
            out.insert(name, found);
        }
        out
    }

    #[test]
    fn every_include_of_a_generated_file_has_exactly_one_entry() {
        let c = context();
        let entries = manifest(&c);
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for e in &entries {
            *count.entry(e.file.as_str()).or_default() += 1;
        }
        let twice: Vec<_> = count.iter().filter(|(_, n)| **n > 1).collect();
        assert!(twice.is_empty(), "files with more than one entry: {twice:?}");
        for (chapter, files) in includes() {
            for file in files {
                assert_eq!(count.get(file.as_str()), Some(&1), "book/{chapter} includes {file}, which has no entry in the manifest");
            }
        }
    }

    #[test]
    fn every_entry_is_included_by_its_chapter() {
        let includes = includes();
        for e in manifest(&context()) {
            let by_chapter = includes.get(&e.chapter).unwrap_or_else(|| panic!("{}: no chapter book/{}", e.file, e.chapter));
            assert!(by_chapter.contains(&e.file), "{} is not included by book/{}, its chapter in the manifest", e.file, e.chapter);
        }
    }

    #[test]
    fn every_generated_file_has_an_entry_and_every_generator_exists() {
        let root = crate::records::repo_root();
        let c = context();
        let entries = manifest(&c);
        let listed: BTreeSet<&str> = entries.iter().map(|e| e.file.as_str()).collect();
        let mut on_disk = Vec::new();
        let mut todo = vec![root.join("book/generated")];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                if entry.path().is_dir() {
                    todo.push(entry.path());
                } else {
                    on_disk.push(entry.path());
                }
            }
        }
        for dir in ["plots", "plots/diagrams"] {
            on_disk.extend(std::fs::read_dir(root.join(dir)).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "svg")));
        }
        for path in on_disk {
            let file = path.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
            assert!(listed.contains(file.as_str()), "{file} is generated but not in the manifest (nor written by render)");
        }
        for e in &entries {
            match &e.source {
                // `book::chapters::classic::chapter_table` is `fn chapter_table` in src/book/chapters/classic.rs.
                Source::Drawn(_) => {
                    let (module, function) = e.generator.rsplit_once("::").unwrap();
                    let file = root.join("src").join(format!("{}.rs", module.replace("::", "/")));
                    let file = if file.is_file() { file } else { root.join("src").join(module.replace("::", "/")).join("mod.rs") };
                    let text = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("{}: no {}", e.file, file.display()));
                    assert!(text.contains(&format!("fn {function}(")), "{}: {} has no fn {function}", e.file, file.display());
                }
                Source::Program(_) => assert!(root.join(e.generator).is_file(), "{}: no {}", e.file, e.generator),
            }
        }
    }

    #[test]
    fn the_committed_text_says_not_measured_only_where_allowed() {
        let root = crate::records::repo_root();
        let says_not_measured = |text: &str| -> Vec<String> {
            text.lines().filter(|l| NOT_MEASURED_PHRASES.iter().any(|p| l.to_lowercase().contains(p))).map(str::to_string).collect()
        };
        // The check can fail: a planted note is found.
        assert_eq!(says_not_measured("| a | b |\n*Kernel 7 is not measured at 2^30 `f32` on this GPU.*\n").len(), 1);
        assert_eq!(says_not_measured(&format!("$ reduction bench --quick\n{}\n", crate::book::runs::NOT_YET_RECORDED)).len(), 1);
        // And so is every fallback of the profile-, SASS-, experiment- and log-backed sentences.
        let (none, c) = (std::collections::BTreeMap::new(), context());
        let (machine, rows) = c.book().unwrap();
        for fallback in [
            classic::kernel4_limit(machine, &[], &none), classic::kernel4_limit(machine, rows, &none), classic::harris_profile_table(&none),
            classic::sass_tree_sentence(&BTreeMap::new()), modern::reduce8_vs_reduce7(&[]), modern::single_pass_sentence(rows, None),
            modern::redux_sentence(rows, &BTreeMap::new(), None), benchmark::ceiling_shapes(&[], None), accuracy::accuracy_cascade(None),
            sanitizers::coverage_table(&[]),
        ] {
            assert!(!says_not_measured(&fallback).is_empty(), "a fallback the check does not see:\n{fallback}");
        }
        let mut found = Vec::new();
        // Every file under book/generated/: drawn here, or written by a program on the GPU host.
        for e in manifest(&context()).iter().filter(|e| e.file.starts_with("book/generated/")) {
            let text = std::fs::read_to_string(root.join(&e.file)).unwrap_or_default();
            for line in says_not_measured(&text) {
                let allowed = NOT_MEASURED_ALLOWED.iter().any(|(file, phrase, _)| *file == e.file && line.contains(phrase));
                if !allowed {
                    found.push(format!("{}: {line}", e.file));
                }
            }
        }
        assert!(found.is_empty(), "generated text says something is not measured (measure it, fix the lookup, or allow it with the reason):\n{}", found.join("\n"));
        // Every allowance is still needed.
        for (file, phrase, _) in NOT_MEASURED_ALLOWED {
            assert!(std::fs::read_to_string(root.join(file)).unwrap().contains(phrase), "{file} no longer says {phrase:?}: drop its allowance");
        }
    }
}
