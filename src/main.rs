//! `reduction`: the book's command line. The options and the code behind each subcommand are in
//! `src/cli/`; `reduction --help` lists them.

mod cli;

use clap::Parser;
use cli::{Cli, Command};
use reduction::multigpu::nccl;
use std::process::ExitCode;

fn main() -> ExitCode {
    // First, while this process has one thread: NCCL must never turn NVLink multicast on (see
    // reduction::multigpu::nccl::keep_multicast_off), and it reads the setting when it starts.
    if let nccl::Multicast::AlreadySet(v) = nccl::keep_multicast_off() {
        if v != "0" {
            eprintln!(
                "warning: {}={v} was set by the caller and is left alone: NCCL may use NVLink multicast, \
                 which can take a shared machine's GPUs out of service; unset it or set it to 0",
                nccl::NVLS_VAR
            );
        }
    }
    // A child process of `reduction mistakes` or `reduction exercise`: run what its environment
    // names, report, and exit, before anything else (and without ever returning to the code
    // below).
    if let Some(code) = reduction::child::run_if_asked(&[reduction::mistakes::CHILD, reduction::exercises::CHILD]) {
        std::process::exit(code);
    }
    let outcome = match Cli::parse().command {
        Command::Info => cli::sum::info(),
        Command::Sum(args) => cli::sum::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::Accuracy(args) => cli::accuracy::run(args),
        Command::Determinism(args) => cli::determinism::run(args),
        Command::Rows(args) => cli::rows::one(args),
        Command::RowsBench(args) => cli::rows::bench(args),
        Command::Op(args) => cli::ops::one(args),
        Command::OpsBench(args) => cli::ops::bench(args),
        Command::Mistake(args) => cli::mistakes::one(args),
        Command::Mistakes(args) => cli::mistakes::all(args),
        Command::Multigpu(command) => cli::multigpu::run(command),
        Command::Exercise(args) => cli::exercise::run(args),
        Command::BookRuns(args) => cli::book_runs::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
