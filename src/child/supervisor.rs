//! The supervisor: run something that may hang, crash or wreck its CUDA context — a broken
//! kernel, a reader's exercise — in a child process under a deadline, so that the process that
//! asked is never harmed.
//!
//! [`run_with_deadline`] drains both pipes on their own threads (a chatty child cannot block on
//! a full pipe), polls the child, kills it by its id when a deadline passes, and never waits
//! unboundedly: not for the child, not for its pipes. The deadlines count from the child's
//! [`READY`] lines ([`super::protocol`]): the start-up deadline until the first, the run
//! deadline from the last, so that neither a slow cold start (driver, NVRTC) nor a slow host (a
//! debug build drawing random inputs) is taken for a hang.

use super::protocol::{OUTCOME, READY};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Environment variable: seconds a child may run after it said it was ready.
pub const DEADLINE_ENV: &str = "CHILD_DEADLINE_S";
/// Environment variable: seconds a child may take to say it is ready.
pub const STARTUP_ENV: &str = "CHILD_STARTUP_S";

/// How long a killed child gets to be reaped before the guard stops waiting for it.
pub const REAP_GRACE: Duration = Duration::from_secs(3);
/// How often the guard looks at the child.
const POLL: Duration = Duration::from_millis(5);
/// Bytes of each stream kept; past this only protocol lines are kept.
const KEEP_BYTES: usize = 8 << 20;

/// How long a child may take: to start (until [`READY`]), and to run after that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    pub startup: Duration,
    pub run: Duration,
}

impl Deadline {
    /// A few seconds to run (the mistakes' default): every mistake that finishes does so in well under one second of
    /// GPU time, so five seconds without a result is a hang.
    pub const DEFAULT_RUN: Duration = Duration::from_secs(5);
    /// Opening a GPU and compiling a kernel the first time can take seconds on a cold machine.
    pub const DEFAULT_STARTUP: Duration = Duration::from_secs(60);

    /// The defaults, or `CHILD_DEADLINE_S` / `CHILD_STARTUP_S` (seconds, decimals allowed).
    pub fn from_env() -> Result<Deadline, String> {
        Ok(Deadline {
            startup: seconds_from_env(STARTUP_ENV)?.unwrap_or(Deadline::DEFAULT_STARTUP),
            run: seconds_from_env(DEADLINE_ENV)?.unwrap_or(Deadline::DEFAULT_RUN),
        })
    }
}

impl Default for Deadline {
    fn default() -> Self {
        Deadline { startup: Deadline::DEFAULT_STARTUP, run: Deadline::DEFAULT_RUN }
    }
}

fn seconds_from_env(name: &str) -> Result<Option<Duration>, String> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(text) => parse_seconds(&text).map(Some).map_err(|why| format!("{name}={text:?}: {why}")),
    }
}

/// `"5"` or `"0.5"` seconds; positive and at most a day.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text.trim().parse().map_err(|_| "not a number of seconds".to_string())?;
    if !(seconds > 0.0 && seconds <= 86_400.0) {
        return Err("must be more than 0 and at most 86400 seconds".into());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Which deadline a killed child overran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// It never said it was ready.
    Startup,
    /// It said it was ready, then gave no result in time.
    Run,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Startup => "startup",
            Phase::Run => "run",
        }
    }

    pub fn parse(s: &str) -> Option<Phase> {
        [Phase::Startup, Phase::Run].into_iter().find(|p| p.name() == s)
    }
}

/// How a child's life ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// It exited by itself (or was killed by someone else); the status, in words.
    Exited { success: bool, status: String },
    /// The guard killed it when a deadline passed. `reaped` is false when it had still not
    /// exited [`REAP_GRACE`] after the kill (a thread keeps waiting for it).
    Killed { phase: Phase, reaped: bool },
}

/// Everything the parent saw of one child.
#[derive(Clone, Debug)]
pub struct ChildRun {
    /// The child's process id (gone by the time this is returned, unless `reaped` is false).
    pub pid: u32,
    pub ending: Ending,
    /// From the spawn to the first [`READY`] line, if there was one.
    pub ready_after: Option<Duration>,
    /// From the spawn to the last [`READY`] line.
    pub last_ready_after: Option<Duration>,
    /// From the spawn to the exit, or to the kill.
    pub elapsed: Duration,
    pub stdout: String,
    pub stderr: String,
}

impl ChildRun {
    /// From the last [`READY`] (or from the spawn, for a child that never said it) to the end:
    /// the time the run deadline is about.
    pub fn run_time(&self) -> Duration {
        self.elapsed.saturating_sub(self.last_ready_after.unwrap_or(Duration::ZERO))
    }

    /// The last [`OUTCOME`] line, without its prefix.
    pub fn outcome_json(&self) -> Option<&str> {
        self.stdout.lines().rev().find_map(|l| l.strip_prefix(OUTCOME)).map(str::trim)
    }

    /// The last `lines` non-empty lines of stderr, for messages.
    pub fn stderr_tail(&self, lines: usize) -> String {
        tail_lines(&self.stderr, lines)
    }
}

/// Up to the last `lines` non-empty lines of `text`, at most 2000 characters.
pub fn tail_lines(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    let tail = kept[kept.len().saturating_sub(lines)..].join("\n");
    match tail.char_indices().rev().nth(1999) {
        Some((cut, _)) => format!("…{}", &tail[cut..]),
        None => tail,
    }
}

/// What a reader thread has captured so far.
#[derive(Default)]
struct Captured {
    text: String,
    dropped_bytes: usize,
    first_ready: Option<Instant>,
    last_ready: Option<Instant>,
}

impl Captured {
    fn push_line(&mut self, line: &str) {
        let protocol = line.starts_with(READY) || line.starts_with(OUTCOME);
        if protocol || self.text.len() + line.len() < KEEP_BYTES {
            self.text.push_str(line);
        } else {
            self.dropped_bytes += line.len();
        }
    }

    fn finish(&self) -> String {
        if self.dropped_bytes == 0 {
            self.text.clone()
        } else {
            format!("{}\n[guard: {} more bytes of output not kept]\n", self.text, self.dropped_bytes)
        }
    }
}

/// Read a stream line by line into `sink` until it closes; note the time of a READY line.
fn drain(stream: impl Read + Send + 'static, sink: Arc<Mutex<Captured>>, done: mpsc::Sender<()>) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stream);
        let mut buffer = Vec::new();
        loop {
            buffer.clear();
            match reader.read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buffer);
                    let mut captured = sink.lock().unwrap_or_else(|p| p.into_inner());
                    if line.trim_end() == READY {
                        let now = Instant::now();
                        captured.first_ready.get_or_insert(now);
                        captured.last_ready = Some(now);
                    }
                    captured.push_line(&line);
                }
            }
        }
        let _ = done.send(());
    });
}

/// Run `command` as a child process under `deadline`: its stdin closed, its stdout and stderr
/// captured. Returns when it exits, or right after it has been killed for overrunning; never
/// later than the deadline plus [`REAP_GRACE`] and a second for the pipes. `Err` only when it
/// could not be started.
pub fn run_with_deadline(mut command: Command, deadline: Deadline) -> std::io::Result<ChildRun> {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn()?;
    let pid = child.id();
    let out = Arc::new(Mutex::new(Captured::default()));
    let err = Arc::new(Mutex::new(Captured::default()));
    let (done_tx, done_rx) = mpsc::channel();
    drain(child.stdout.take().expect("stdout is piped"), out.clone(), done_tx.clone());
    drain(child.stderr.take().expect("stderr is piped"), err.clone(), done_tx);

    let ready_at = || out.lock().unwrap_or_else(|p| p.into_inner()).last_ready;
    let (ending, ended_at) = loop {
        match child.try_wait() {
            Ok(Some(status)) => break (exited(status), Instant::now()),
            Ok(None) => {}
            Err(e) => {
                // Cannot tell whether it is alive: do not leave it running.
                kill_and_reap(child);
                return Err(e);
            }
        }
        let now = Instant::now();
        let overrun = match ready_at() {
            None if now - started > deadline.startup => Some(Phase::Startup),
            Some(ready) if now - ready > deadline.run => Some(Phase::Run),
            _ => None,
        };
        if let Some(phase) = overrun {
            let reaped = kill_and_reap(child);
            break (Ending::Killed { phase, reaped }, now);
        }
        std::thread::sleep(POLL);
    };

    // The pipes close when the child is gone; wait a little for the readers, never forever.
    let wait_pipes_until = Instant::now() + Duration::from_secs(1);
    for _ in 0..2 {
        let left = wait_pipes_until.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    let (first, last) = {
        let captured = out.lock().unwrap_or_else(|p| p.into_inner());
        (captured.first_ready, captured.last_ready)
    };
    let since_start = |at: Option<Instant>| at.map(|r| r.saturating_duration_since(started));
    let stdout = out.lock().unwrap_or_else(|p| p.into_inner()).finish();
    let stderr = err.lock().unwrap_or_else(|p| p.into_inner()).finish();
    Ok(ChildRun { pid, ending, ready_after: since_start(first), last_ready_after: since_start(last), elapsed: ended_at - started, stdout, stderr })
}

/// Kill the child by its id and wait up to [`REAP_GRACE`] for it to exit. A child that is
/// still not gone (a driver tearing down a hung context can take a while) is handed to a
/// thread that waits for it, so that the caller goes on. True when it was reaped in time.
fn kill_and_reap(mut child: Child) -> bool {
    kill_with_descendants(&mut child);
    let until = Instant::now() + REAP_GRACE;
    while Instant::now() < until {
        match child.try_wait() {
            Ok(Some(_)) => return true,
            Ok(None) => std::thread::sleep(POLL),
            Err(_) => break,
        }
    }
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    false
}

/// SIGKILL to `child` and to every process below it. Its descendants are noted first (once it is
/// gone they are no longer its) and killed after it: a tool that runs the real work in a process
/// of its own (compute-sanitizer's target, torch.compile's workers) would otherwise leave that
/// process running on the GPU.
pub fn kill_with_descendants(child: &mut Child) {
    let left_behind = descendants(child.id());
    let _ = child.kill();
    kill_all(&left_behind);
}

/// Every process below `pid`, from the parent ids in /proc (empty where there is no /proc).
fn descendants(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    // (pid, parent) of every process: /proc/<pid>/stat is "pid (comm) state ppid ...", and comm
    // may hold spaces and parentheses, so the fields are read after the last ')'.
    let parents: Vec<(u32, u32)> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            Some((p, ppid))
        })
        .collect();
    let mut found = vec![pid];
    let mut next = 0;
    while next < found.len() {
        let parent = found[next];
        found.extend(parents.iter().filter(|&&(_, pp)| pp == parent).map(|&(p, _)| p));
        next += 1;
    }
    found.split_off(1)
}

/// SIGKILL to each of `pids` (Linux; elsewhere nothing).
#[cfg(target_os = "linux")]
fn kill_all(pids: &[u32]) {
    for &pid in pids {
        if let Ok(pid) = libc::pid_t::try_from(pid) {
            // SAFETY: kill(2) with a positive pid and SIGKILL has no memory effects; a process
            // gone meanwhile gives ESRCH, which is ignored.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn kill_all(_pids: &[u32]) {}

fn exited(status: ExitStatus) -> Ending {
    Ending::Exited { success: status.success(), status: describe_status(status) }
}

/// "exit code 3", "killed by signal 11 (SIGSEGV)".
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("killed by signal {signal}{name}");
        }
    }
    status.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_are_positive_seconds() {
        assert_eq!(parse_seconds("5").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_seconds(" 0.25 ").unwrap(), Duration::from_millis(250));
        for bad in ["0", "-1", "abc", "NaN", "1e9", ""] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tails_keep_the_last_lines() {
        assert_eq!(tail_lines("a\n\nb\nc\n", 2), "b\nc");
        assert_eq!(tail_lines("", 3), "");
        assert!(tail_lines(&"x".repeat(5000), 1).chars().count() <= 2001);
    }

    #[test]
    fn captured_output_is_capped_but_keeps_protocol_lines() {
        let mut c = Captured::default();
        let big = "y".repeat(KEEP_BYTES);
        c.push_line(&big);
        c.push_line(&format!("{OUTCOME} {{}}\n"));
        let text = c.finish();
        assert!(text.contains(&format!("{OUTCOME} {{}}")) && text.contains("not kept"));
    }
}
