//! Child processes: run what may hang, fault or wreck its CUDA context in a child process of this
//! program, under a deadline, and read what it reports. Used by the mistakes chapter (a broken
//! kernel per child) and the exercises (a reader's kernel per child); needs no GPU itself.
//!
//! - [`supervisor`]: a child under a deadline ([`run_with_deadline`]), killed by its id when it
//!   overruns, its pipes drained on their own threads.
//! - [`protocol`]: the two lines a child prints, [`READY`] and [`OUTCOME`] with its report.
//! - [`sanitizer`]: compute-sanitizer's tools, to run a child under one.
//! - [`run_if_asked`]: the hook at the top of `main` of every binary that spawns children: when
//!   the environment names a [`Role`], this process is that child.

pub mod protocol;
pub mod sanitizer;
pub mod supervisor;

pub use protocol::{outcome_line, print_outcome, say_ready, OUTCOME, READY};
pub use sanitizer::Sanitizer;
pub use supervisor::{describe_status, kill_with_descendants, parse_seconds, run_with_deadline, tail_lines, ChildRun, Deadline, Ending, Phase, DEADLINE_ENV, REAP_GRACE, STARTUP_ENV};

/// One kind of child: the environment variable whose value names its task (a mistake's name, an
/// exercise's number), and what the child does with it: run it and print its report
/// ([`print_outcome`]); `Err` says why it could not.
#[derive(Clone, Copy)]
pub struct Role {
    /// What the child is, in messages: `mistake`, `exercise`.
    pub what: &'static str,
    pub env: &'static str,
    pub run: fn(task: &str) -> Result<(), String>,
}

/// Call first thing in `main` (before anything reads the command line or opens a GPU): when the
/// environment names the task of one of `roles`, run it and return the exit code for
/// `std::process::exit` (0 when it reported, 1 when it could not run); `None` for an ordinary
/// run.
pub fn run_if_asked(roles: &[Role]) -> Option<i32> {
    let (role, task) = roles.iter().find_map(|r| std::env::var(r.env).ok().map(|task| (r, task)))?;
    Some(match (role.run)(&task) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("error: {} {task}: {why}", role.what);
            1
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_role_named_in_the_environment_is_an_ordinary_run() {
        let role = Role { what: "test", env: "REDUCTION_CHILD_TEST_NEVER_SET", run: |_| Err("must not run".into()) };
        assert_eq!(run_if_asked(&[role]), None);
    }
}
