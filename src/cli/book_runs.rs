//! `reduction book-runs`: run every command of the chapters' "Run it" sections
//! ([`reduction::book::runs::RUNS`]) as a child process of this program and write what it
//! printed, stdout and stderr together as a terminal shows them, under `book/generated/runs/`.

use super::Outcome;
use clap::Args;
use reduction::book::runs::{Run, RUNS};
use std::path::PathBuf;
use std::process::{Command, ExitCode};

#[derive(Args)]
pub struct BookRunsArgs {
    /// Where the outputs go
    #[arg(long, default_value = reduction::book::runs::DIR)]
    out: PathBuf,
    /// Only the runs whose slug contains this
    #[arg(long)]
    only: Option<String>,
}

pub fn run(args: BookRunsArgs) -> Outcome {
    std::fs::create_dir_all(&args.out)?;
    let exe = std::env::current_exe()?;
    for r in RUNS.iter().filter(|r| args.only.as_ref().is_none_or(|o| r.slug.contains(o.as_str()))) {
        let output = capture(&exe, r)?;
        let path = args.out.join(format!("{}.txt", r.slug));
        std::fs::write(&path, format!("{}\n{output}", r.header()))?;
        println!("wrote {} ({} lines)", path.display(), output.lines().count());
    }
    Ok(ExitCode::SUCCESS)
}

/// Run one command through `sh` with stderr on stdout (the order a terminal shows), `reduction`
/// being this program; a command that fails says so, and its output is kept.
fn capture(exe: &std::path::Path, r: &Run) -> Result<String, Box<dyn std::error::Error>> {
    let line: Vec<String> = r.command.split_whitespace()
        .map(|w| if w == "reduction" { exe.display().to_string() } else { w.to_string() })
        .collect();
    let out = Command::new("sh").arg("-c").arg(format!("{} 2>&1", line.join(" "))).output()?;
    let mut text = String::from_utf8_lossy(&out.stdout).replace(&exe.display().to_string(), "reduction");
    if !out.status.success() {
        text += &format!("(exit status {})\n", out.status.code().map_or("killed".to_string(), |c| c.to_string()));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::super::Cli;
    use clap::Parser;

    #[test]
    fn every_run_is_a_command_line_that_parses() {
        for r in reduction::book::runs::RUNS {
            let args = r.reduction_args();
            if let Err(e) = Cli::try_parse_from(std::iter::once("reduction").chain(args.iter().copied())) {
                panic!("{}: {e}", r.command);
            }
        }
    }
}
