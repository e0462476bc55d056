//! `reduction mistake NAME` (one mistake, in this process) and `reduction mistakes` (every one,
//! each in a child process of this program under a deadline).

use super::{command_line, parse_seconds, parse_seed, parse_size, Outcome};
use clap::Args;
use reduction::child::{Deadline, DEADLINE_ENV, STARTUP_ENV};
use reduction::limits::{count_in_words as words, Need};
use reduction::mistakes::{self, Class, Observation, Records, RunOptions};
use reduction::records::Machine;
use reduction::Gpu;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// What each run of a mistake sums.
#[derive(Args)]
pub struct RunArgs {
    /// Values per run
    #[arg(long, default_value_t = RunOptions::default().n, value_parser = parse_size)]
    n: usize,
    /// Runs, each of a fresh input
    #[arg(long, default_value_t = RunOptions::default().runs, value_parser = parse_size)]
    runs: usize,
    /// The first run's seed (then seed + 1, ...)
    #[arg(long, default_value_t = RunOptions::default().seed, value_parser = parse_seed)]
    seed: u64,
}

impl RunArgs {
    /// The run options, refused here if they cannot run (or do not fit on the host).
    fn options(&self) -> Result<RunOptions, String> {
        let options = RunOptions { n: self.n, runs: self.runs, seed: self.seed };
        options.check()?;
        input(&options).check_host().map_err(|e| e.to_string())?;
        Ok(options)
    }
}

/// One run's input of a mistake: n 4-byte values (i32 or f32), on the host and on the GPU.
fn input(options: &RunOptions) -> Need {
    Need::elements(format!("{} 4-byte values", words(options.n)), options.n, 4)
}

#[derive(Args)]
pub struct MistakeArgs {
    /// The mistake (`reduction mistakes --list` shows them)
    name: Option<String>,
    #[command(flatten)]
    run: RunArgs,
    /// Run a mistake that hangs by design (nothing here stops it: kill it yourself)
    #[arg(long)]
    allow_hang: bool,
}

/// `reduction mistake NAME`: one mistake in this process, no guard. For compute-sanitizer,
/// which must see the kernel run in the process it wraps.
pub fn one(args: MistakeArgs) -> Outcome {
    let name = args.name.as_deref().ok_or("name a mistake: `reduction mistake NAME` (`reduction mistakes --list` shows them)")?;
    let m = mistakes::find(name).ok_or_else(|| mistakes::unknown(name))?;
    let options = args.run.options()?;
    if m.asserted == Some(Class::Hang) && !args.allow_hang {
        return Err(format!(
            "{} hangs by design, and nothing here would stop it: run it under the guard \
             (`reduction mistakes --only {}`), or pass --allow-hang and kill it yourself",
            m.name, m.name
        )
        .into());
    }
    let gpu = Gpu::open()?;
    input(&options).check_device(&gpu)?;
    let started = std::time::Instant::now();
    let report = mistakes::run_in_process(&gpu, m, &options, || {})?;
    let observed = Observation { report, startup: None, run_time: started.elapsed(), stderr_tail: String::new() };
    println!("mistake {} ({}): {}", m.number, m.name, mistakes::what_it_did(m, &observed.record(m)));
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct MistakesArgs {
    #[command(flatten)]
    run: RunArgs,
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, help = seconds_help("a child may run after it is ready", DEADLINE_ENV, Deadline::DEFAULT_RUN))]
    deadline: Option<Duration>,
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds, help = seconds_help("a child may take to start (open the GPU, compile)", STARTUP_ENV, Deadline::DEFAULT_STARTUP))]
    startup: Option<Duration>,
    /// Only these mistakes
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    only: Option<Vec<String>>,
    /// Record what each did in this folder (e.g. plots/data/mistakes/)
    #[arg(long, value_name = "DIR")]
    record: Option<PathBuf>,
    /// The mistakes, and what each is expected to do
    #[arg(long)]
    list: bool,
    /// Redraw the chapter's mistakes tables from plots/data; no GPU
    #[arg(long)]
    table_only: bool,
}

/// A deadline's help, with its default: the variable's value where set, else the guard's own.
fn seconds_help(what: &str, variable: &str, default: Duration) -> String {
    format!("Seconds {what} [default: ${variable}, or {}]", default.as_secs_f64())
}

/// `reduction mistakes`: every mistake (or `--only` some) in a child process of this program
/// under a deadline, a table of what each did, and a check that this process's own GPU context
/// still works. Fails when a mistake did not do what the book says it does.
pub fn all(args: MistakesArgs) -> Outcome {
    if args.list {
        for m in mistakes::all() {
            let expected = m.asserted.map(|c| c.name()).unwrap_or("(recorded only)");
            println!("{:>2}  {:<26} {:<16} {}; caught by {}", m.number, m.name, expected, m.title.replace('`', ""), m.caught_by.replace('`', ""));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.table_only {
        for path in reduction::book::chapters::mistakes::write_mistakes_table(Path::new("plots/data"), Path::new("book/generated"))? {
            println!("drew {}", path.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut deadline = Deadline::from_env()?;
    deadline.run = args.deadline.unwrap_or(deadline.run);
    deadline.startup = args.startup.unwrap_or(deadline.startup);
    let options = args.run.options()?;
    let mut selected = mistakes::run_order();
    if let Some(list) = &args.only {
        let wanted: Vec<&str> = list.iter().map(|w| w.trim()).collect();
        if let Some(bad) = wanted.iter().find(|w| mistakes::find(w).is_none()) {
            return Err(mistakes::unknown(bad).into());
        }
        selected.retain(|m| wanted.contains(&m.name));
    }
    let record = args.record.clone().or_else(|| std::env::var_os(mistakes::RECORD_ENV).map(PathBuf::from));

    // This process's own context: for the record's header and the last check. No broken
    // kernel is ever loaded into it; each mistake runs in a child process of its own.
    let gpu = Gpu::open()?;
    // Each child opens the same GPU; this process holds almost nothing on it meanwhile.
    input(&options).check_device(&gpu)?;
    let exe = std::env::current_exe()?;
    println!("{}", gpu.info().name);
    println!("{} mistakes, each in a child process: {} runs of n = {}, deadline {:.1} s after start-up ({:.0} s to start)\n",
        selected.len(), options.runs, options.n, deadline.run.as_secs_f64(), deadline.startup.as_secs_f64());
    println!("{:>2}  {:<26} {:<13} what it did", "#", "mistake", "outcome");
    let (mut rows, mut unexpected) = (Vec::new(), Vec::new());
    for m in selected {
        let observed = mistakes::run_guarded(&exe, m, &options, deadline)?;
        let recorded = observed.record(m);
        println!("{:>2}  {:<26} {:<13} {}", m.number, m.name, recorded.outcome.name(), mistakes::what_it_did(m, &recorded));
        if let Err(why) = m.verdict(&observed, deadline) {
            println!("    UNEXPECTED: {why}");
            unexpected.push(m.name);
        }
        rows.push(recorded);
    }
    rows.sort_by_key(|r| r.number);
    if let Some(target) = record {
        let path = mistakes::record_path(&target, &gpu.info().name);
        let header = mistakes::header(&Machine::of(&gpu, command_line()), options.n, options.runs, options.seed, deadline.run);
        mistakes::write_records(&path, &Records { header, rows })?;
        println!("\nrecorded in {}", path.display());
    }

    match reduction::mistakes::parent_still_sums(&gpu) {
        Ok(()) => println!("\nthis process's own GPU context still sums correctly"),
        Err(why) => {
            println!("\nthis process's own GPU context no longer sums: {why}");
            unexpected.push("(the parent process)");
        }
    }
    if unexpected.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(format!("not what the book says: {}", unexpected.join(", ")).into())
    }
}

