//! `reduction exercise N`: check the reader's kernel for exercise N on this GPU.

use super::{parse_seconds, parse_seed, Outcome};
use clap::Args;
use reduction::child::Sanitizer;
use reduction::exercises::{self, Options, Verdict, Which};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ExerciseArgs {
    /// The exercise's number (`--list` shows them)
    number: Option<u32>,
    /// The file to check [default: kernels/exercises/<the exercise's file>.cu]
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Check the book's reference solution instead
    #[arg(long, conflicts_with_all = ["file", "near_miss"])]
    solution: bool,
    /// Check one of the near misses (the solution with a classic mistake), to see the report
    #[arg(long, value_name = "NAME", conflicts_with = "file")]
    near_miss: Option<String>,
    /// Run under compute-sanitizer with this tool
    #[arg(long, value_name = "TOOL", value_enum)]
    sanitize: Option<Sanitizer>,
    /// The hidden inputs' seed [default: a fresh one, printed]
    #[arg(long, value_parser = parse_seed)]
    seed: Option<u64>,
    /// Seconds a case may run before the kernel is called hung
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    deadline: Option<std::time::Duration>,
    /// Do not time a solved kernel
    #[arg(long)]
    no_time: bool,
    /// List the exercises and their near misses
    #[arg(long)]
    list: bool,
}

pub fn run(args: ExerciseArgs) -> Outcome {
    if args.list {
        for e in exercises::all() {
            println!("{:>2}  {:<52} {} (chapter {})", e.number, e.title, e.stub_path(), e.chapter);
            for m in e.near_misses {
                println!("      near miss {:<24} {}", m.name, m.mistake);
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let number = args.number.ok_or("name an exercise: `reduction exercise 3` (`reduction exercise --list` shows them)")?;
    let exercise = exercises::find(number)?;
    let which = if args.solution {
        Which::Solution
    } else if let Some(name) = &args.near_miss {
        Which::NearMiss(exercise.near_miss(name).ok_or_else(|| {
            let known: Vec<&str> = exercise.near_misses.iter().map(|m| m.name).collect();
            format!("exercise {number} has no near miss {name:?}; it has: {}", known.join(", "))
        })?)
    } else {
        Which::File(args.file.unwrap_or_else(|| PathBuf::from(exercise.stub_path())))
    };
    let seed = args.seed.unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64 % 1_000_000_007).unwrap_or(1));
    let mut options = Options::new(seed);
    options.time = !args.no_time;
    options.sanitize = args.sanitize;
    if let Some(run) = args.deadline {
        options.deadline.run = run;
    }
    let (file, _) = exercises::check::source(exercise, &which)?;
    eprintln!("checking {file} (hidden inputs: --seed {seed})");
    let verdict = exercises::check(&std::env::current_exe()?, exercise, &which, &options)?;
    println!("{}", verdict.render(exercise, &file));
    Ok(match verdict {
        Verdict::Solved { .. } => ExitCode::SUCCESS,
        _ => ExitCode::from(2),
    })
}
