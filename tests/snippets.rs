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

fn main() {
    // Before any thread starts: NCCL must never turn NVLink multicast on (reduction::nccl).
    reduction::nccl::keep_multicast_off();
    let trials = SNIPPETS
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
    common::run(trials)
}
