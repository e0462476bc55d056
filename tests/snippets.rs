//! The book's ```rust blocks compiled into this binary ahead of time (build.rs), so that a GPU
//! host without a Rust toolchain runs every chapter's code. Snippets marked `gpu` follow the
//! GPU rules of every other test: ignored with the reason where there is no GPU.

mod common;

use libtest_mimic::{Completion, Failed, Trial};

/// A generated snippet: where it is in the book, and its `main`.
pub struct Snippet {
    pub name: &'static str,
    pub chapter: &'static str,
    pub line: usize,
    pub gpu: bool,
    /// Needs NCCL as well (the multi-GPU chapter): ignored with the reason where it is missing.
    pub nccl: bool,
    pub no_run: bool,
    pub ignore: bool,
    pub main: fn() -> Result<(), String>,
}

/// Snippets' `main` returns `()` or a `Result`; both become a test outcome.
pub trait SnippetResult {
    fn into_result(self) -> Result<(), String>;
}

impl SnippetResult for () {
    fn into_result(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: std::fmt::Debug> SnippetResult for Result<(), E> {
    fn into_result(self) -> Result<(), String> {
        self.map_err(|e| format!("{e:?}"))
    }
}

include!(concat!(env!("OUT_DIR"), "/snippets.rs"));

/// A child of this binary runs the one snippet this names, so that its output can be captured.
const CHILD_ENV: &str = "REDUCTION_SNIPPET";
/// `SNIPPETS_RECORD=DIR`: write each captured output to DIR instead of comparing it.
const RECORD_ENV: &str = "SNIPPETS_RECORD";
/// Where the chapters include the outputs from.
const OUTPUTS: &str = "book/generated/snippets";
/// The chapters that show their snippets' outputs, one `{{#include}}` under each snippet.
const SHOWN_IN: &[&str] = &[
    "introduction.md", "01_interleaved_divergent.md", "03_sequential.md", "04_first_add_during_load.md",
    "06_complete_unroll.md", "07_multiple_elements.md", "skeleton.md",
];

fn root() -> std::path::PathBuf {
    // The manifest dir when it holds the book, else the working directory (the GPU bundle).
    reduction::records::repo_root()
}

fn chapter_file(s: &Snippet) -> String {
    std::path::Path::new(s.chapter).file_name().map(|f| f.to_string_lossy().to_string()).unwrap_or_default()
}

/// `01_interleaved_divergent_2`: the chapter and the snippet's place in it (1-based), which,
/// unlike its line, does not change when text above it does.
fn output_key(s: &Snippet) -> String {
    let k = SNIPPETS.iter().filter(|o| o.chapter == s.chapter && o.line <= s.line).count();
    format!("{}_{k}", chapter_file(s).trim_end_matches(".md"))
}

/// Whether a snippet's output is shown: it runs, on one GPU, in a chapter that shows outputs.
fn shown(s: &Snippet) -> bool {
    !s.no_run && !s.ignore && !s.nccl && SHOWN_IN.contains(&chapter_file(s).as_str())
}

/// The text with every number replaced by `#`: what a snippet prints, up to measured values.
fn masked(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        let numeric = c.is_ascii_digit() || (in_number && matches!(c, '.' | 'e' | 'E' | '-' | '+'));
        if numeric {
            if !in_number {
                out.push('#');
            }
        } else {
            out.push(c);
        }
        in_number = numeric;
    }
    out.lines().map(str::trim_end).collect::<Vec<_>>().join("\n")
}

/// Run one snippet in a child of this binary and compare what it printed with the committed
/// output (numbers masked), or record it.
fn output_trial(s: &'static Snippet) -> Trial {
    common::gpu_trial(format!("output::{}", output_key(s)), move |_| {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let out = std::process::Command::new(exe).env(CHILD_ENV, s.name).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("{}:{}: the snippet failed: {}", s.chapter, s.line, String::from_utf8_lossy(&out.stderr)).into());
        }
        let printed = String::from_utf8_lossy(&out.stdout).to_string();
        if let Ok(dir) = std::env::var(RECORD_ENV) {
            let path = std::path::Path::new(&dir).join(format!("{}.txt", output_key(s)));
            std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, &printed)).map_err(|e| e.to_string())?;
            return Ok(());
        }
        let path = root().join(OUTPUTS).join(format!("{}.txt", output_key(s)));
        let committed = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e} (record it: {RECORD_ENV}={OUTPUTS})", path.display()))?;
        if masked(&committed) != masked(&printed) {
            return Err(format!("{}:{}: prints\n{printed}\nbut the book shows ({}):\n{committed}", s.chapter, s.line, path.display()).into());
        }
        Ok(())
    })
}

/// Every shown snippet has its output file and its include right under it, and every output
/// file belongs to a shown snippet.
fn outputs_are_shown_under_their_snippets() -> Result<(), Failed> {
    let mut problems = Vec::new();
    for s in SNIPPETS.iter().filter(|s| shown(s)) {
        let key = output_key(s);
        let include = format!("{{{{#include generated/snippets/{key}.txt}}}}");
        let text = std::fs::read_to_string(root().join("book").join(chapter_file(s))).map_err(|e| e.to_string())?;
        // The include must come after the snippet and before the next one.
        let after: String = text.lines().skip(s.line).collect::<Vec<_>>().join("\n");
        let next_snippet = after.find("```rust").unwrap_or(after.len());
        if !after[..next_snippet].contains(&include) {
            problems.push(format!("{}:{}: no `{include}` under the snippet", s.chapter, s.line));
        }
        if !root().join(OUTPUTS).join(format!("{key}.txt")).is_file() {
            problems.push(format!("{OUTPUTS}/{key}.txt is missing"));
        }
    }
    let keys: Vec<String> = SNIPPETS.iter().filter(|s| shown(s)).map(output_key).collect();
    for entry in std::fs::read_dir(root().join(OUTPUTS)).into_iter().flatten().flatten() {
        let stem = entry.path().file_stem().map(|f| f.to_string_lossy().to_string()).unwrap_or_default();
        if !keys.contains(&stem) {
            problems.push(format!("{OUTPUTS}/{stem}.txt belongs to no shown snippet"));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
}

fn main() {
    // Before any thread starts: NCCL must never turn NVLink multicast on (reduction::multigpu::nccl).
    reduction::multigpu::nccl::keep_multicast_off();
    if let Ok(name) = std::env::var(CHILD_ENV) {
        let code = match SNIPPETS.iter().find(|s| s.name == name).map(|s| (s.main)()) {
            Some(Ok(())) => 0,
            Some(Err(e)) => {
                eprintln!("{name}: {e}");
                1
            }
            None => {
                eprintln!("no snippet {name}");
                2
            }
        };
        std::process::exit(code);
    }
    let mut trials: Vec<Trial> = SNIPPETS
        .iter()
        .map(|s| {
            let run = move || (s.main)().map_err(|e| Failed::from(format!("{}:{}: {e}", s.chapter, s.line)));
            let trial = if s.no_run {
                // Compiled into this binary, but not run: say so rather than pass.
                Trial::ignorable_test(s.name, || Ok(Completion::ignored_with("no_run: compiled, not run")))
            } else if s.nccl {
                common::nccl_trial(s.name, move |_| run())
            } else if s.gpu {
                common::gpu_trial(s.name, move |_| run())
            } else {
                Trial::test(s.name, run)
            };
            trial.with_ignored_flag(s.ignore)
        })
        .collect();
    trials.extend(SNIPPETS.iter().filter(|s| shown(s)).map(output_trial));
    trials.push(Trial::test("outputs::shown_under_their_snippets", outputs_are_shown_under_their_snippets));
    trials.push(Trial::test("outputs::numbers_are_masked", || {
        let same = masked("GPU 12, CPU 12\nerror 1.5e-7  ") == masked("GPU 345, CPU 345\nerror 2.25e-12");
        let different = masked("GPU 12, CPU 12") != masked("GPU 12 CPU 12");
        if same && different { Ok(()) } else { Err("masking compares numbers, or ignores words".into()) }
    }));
    common::run(trials)
}
