//! compute-sanitizer's tools, by the class of bug each finds: memcheck (out-of-bounds and
//! misaligned accesses), racecheck (shared-memory races), synccheck (barriers in divergent code),
//! initcheck (reads of uninitialised global memory). A child can be run under one.

use std::path::Path;
use std::process::Command;

/// One compute-sanitizer tool. On the command line (`--sanitize racecheck`) and in file names
/// each is written as its [`Sanitizer::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sanitizer {
    Memcheck,
    Racecheck,
    Synccheck,
    Initcheck,
}

impl Sanitizer {
    pub const ALL: [Sanitizer; 4] = [Sanitizer::Memcheck, Sanitizer::Racecheck, Sanitizer::Synccheck, Sanitizer::Initcheck];

    /// `memcheck`: what `compute-sanitizer --tool` takes.
    pub fn name(self) -> &'static str {
        match self {
            Sanitizer::Memcheck => "memcheck",
            Sanitizer::Racecheck => "racecheck",
            Sanitizer::Synccheck => "synccheck",
            Sanitizer::Initcheck => "initcheck",
        }
    }

    /// `compute-sanitizer --tool <name> --error-exitcode 99 --print-limit 10 <exe>`: `exe` run
    /// under this tool, exiting with 99 where it found errors.
    pub fn command(self, exe: &Path) -> Command {
        let mut command = Command::new("compute-sanitizer");
        command.args(["--tool", self.name(), "--error-exitcode", "99", "--print-limit", "10"]).arg(exe);
        command
    }
}

impl std::fmt::Display for Sanitizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_names_are_the_tools_names() {
        use clap::ValueEnum;
        assert_eq!(Sanitizer::value_variants(), Sanitizer::ALL);
        for tool in Sanitizer::ALL {
            assert_eq!(tool.to_possible_value().unwrap().get_name(), tool.name());
            assert_eq!(serde_json::to_string(&tool).unwrap(), format!("\"{tool}\""));
        }
        // A misspelt tool is refused when parsed, not run and reported as a crash.
        assert!(Sanitizer::from_str("racechek", false).is_err());
        let command = Sanitizer::Racecheck.command(Path::new("/bin/reduction"));
        let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(args, ["--tool", "racecheck", "--error-exitcode", "99", "--print-limit", "10", "/bin/reduction"]);
    }
}
