//! Running something that may hang, crash or wreck its CUDA context — a broken kernel — in a
//! child process under a deadline, so that the process that asked is never harmed.
//!
//! The protocol is two lines on the child's stdout:
//!
//! - `MISTAKE-READY` once its set-up is done (GPU opened, kernel compiled), and again before
//!   each run (after the run's input was made on the host). The run deadline counts from the
//!   last one, so that neither a slow cold start (driver, NVRTC) nor a slow host (a debug
//!   build drawing random inputs) is taken for a hang; the start-up deadline bounds the time
//!   until the first.
//! - `MISTAKE-OUTCOME {json}` with what happened: a [`Report`].
//!
//! The parent ([`run_with_deadline`]) drains both pipes on their own threads (a chatty child
//! cannot block on a full pipe), polls the child, kills it by its id when a deadline passes, and
//! never waits unboundedly: not for the child, not for its pipes. [`classify`] turns what came
//! back into an [`Observation`]: the child's report when it gave one, `Hang` when it was killed,
//! `Crashed` when it died without a report.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The line a child prints when its set-up is done and the run deadline should start.
pub const READY: &str = "MISTAKE-READY";
/// The prefix of the line that carries a child's [`Report`].
pub const OUTCOME: &str = "MISTAKE-OUTCOME";
/// Environment variable: seconds a child may run after it said it was ready.
pub const DEADLINE_ENV: &str = "MISTAKE_DEADLINE_S";
/// Environment variable: seconds a child may take to say it is ready.
pub const STARTUP_ENV: &str = "MISTAKE_STARTUP_S";

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
    /// A few seconds to run: every mistake that finishes does so in well under one second of
    /// GPU time, so five seconds without a result is a hang.
    pub const DEFAULT_RUN: Duration = Duration::from_secs(5);
    /// Opening a GPU and compiling a kernel the first time can take seconds on a cold machine.
    pub const DEFAULT_STARTUP: Duration = Duration::from_secs(60);

    /// The defaults, or `MISTAKE_DEADLINE_S` / `MISTAKE_STARTUP_S` (seconds, decimals allowed).
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    let _ = child.kill();
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

/// Print [`READY`] and flush: the child's set-up (or a run's host-side preparation) is done,
/// and the run deadline starts again.
pub fn say_ready() {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{READY}");
    let _ = stdout.flush();
}

/// What happened when something that may be broken ran.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every run gave the right answer: the mistake did not show this time.
    Correct,
    /// At least one run's check failed; the first failing run's value and the expected one.
    WrongResult { got: f64, expected: f64 },
    /// The CUDA driver reported an error at a launch or at the wait after it.
    LaunchError(String),
    /// No result before the deadline: the child was killed `after` that long in `phase`.
    Hang { phase: Phase, after: Duration },
    /// The child died without a report (a panic, a signal, an error before the run), or its
    /// report could not be read.
    Crashed { status: String, message: String },
}

/// The kind of an [`Outcome`], without its data: what tests assert and tables print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Correct,
    WrongResult,
    LaunchError,
    Hang,
    Crashed,
}

impl Class {
    pub const ALL: [Class; 5] = [Class::Correct, Class::WrongResult, Class::LaunchError, Class::Hang, Class::Crashed];

    pub fn name(self) -> &'static str {
        match self {
            Class::Correct => "correct",
            Class::WrongResult => "wrong-result",
            Class::LaunchError => "launch-error",
            Class::Hang => "hang",
            Class::Crashed => "crashed",
        }
    }

    pub fn parse(s: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == s)
    }
}

impl Outcome {
    pub fn class(&self) -> Class {
        match self {
            Outcome::Correct => Class::Correct,
            Outcome::WrongResult { .. } => Class::WrongResult,
            Outcome::LaunchError(_) => Class::LaunchError,
            Outcome::Hang { .. } => Class::Hang,
            Outcome::Crashed { .. } => Class::Crashed,
        }
    }
}

/// What a child reports on its [`OUTCOME`] line.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub outcome: Outcome,
    /// Runs attempted (a launch error ends the runs early).
    pub runs: usize,
    /// Runs whose check failed.
    pub wrong_runs: usize,
    /// Runs the fix got wrong, where the child also ran the fix (must be 0).
    pub fix_wrong_runs: Option<usize>,
    /// Median time of the mistaken code and of the fix, where the mistake is about speed.
    pub mistake_us: Option<f64>,
    pub fix_us: Option<f64>,
    /// A sentence of context: the grid, what a later call in the same context did, ….
    pub detail: String,
}

impl Report {
    pub fn new(outcome: Outcome) -> Report {
        Report { outcome, runs: 0, wrong_runs: 0, fix_wrong_runs: None, mistake_us: None, fix_us: None, detail: String::new() }
    }

    /// The report as one line: `MISTAKE-OUTCOME {"outcome":"wrong-result",...}`.
    pub fn to_line(&self) -> String {
        let mut fields: Vec<(&str, Json)> = vec![("outcome", Json::Str(self.outcome.class().name().into()))];
        match &self.outcome {
            Outcome::Correct => {}
            Outcome::WrongResult { got, expected } => {
                fields.push(("got", Json::number(*got)));
                fields.push(("expected", Json::number(*expected)));
            }
            Outcome::LaunchError(message) => fields.push(("error", Json::Str(message.clone()))),
            Outcome::Hang { phase, after } => {
                fields.push(("phase", Json::Str(phase.name().into())));
                fields.push(("after_s", Json::Num(after.as_secs_f64())));
            }
            Outcome::Crashed { status, message } => {
                fields.push(("status", Json::Str(status.clone())));
                fields.push(("message", Json::Str(message.clone())));
            }
        }
        fields.push(("runs", Json::Num(self.runs as f64)));
        fields.push(("wrong_runs", Json::Num(self.wrong_runs as f64)));
        fields.push(("fix_wrong_runs", self.fix_wrong_runs.map_or(Json::Null, |n| Json::Num(n as f64))));
        fields.push(("mistake_us", self.mistake_us.map_or(Json::Null, Json::number)));
        fields.push(("fix_us", self.fix_us.map_or(Json::Null, Json::number)));
        fields.push(("detail", Json::Str(self.detail.clone())));
        let mut line = format!("{OUTCOME} {{");
        for (i, (key, value)) in fields.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            write_json_string(&mut line, key);
            line.push(':');
            value.write(&mut line);
        }
        line.push('}');
        line
    }

    /// Print the line and flush.
    pub fn print(&self) {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", self.to_line());
        let _ = stdout.flush();
    }

    /// Read a report back from its JSON object (the line without its prefix).
    pub fn parse(json: &str) -> Result<Report, String> {
        let fields = parse_object(json)?;
        let get = |key: &str| fields.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let string = |key: &str| match get(key) {
            Some(Json::Str(s)) => Ok(s.clone()),
            Some(_) => Err(format!("{key:?} is not a string")),
            None => Err(format!("no {key:?}")),
        };
        let number = |key: &str| match get(key) {
            Some(v) => v.as_f64().ok_or(format!("{key:?} is not a number")),
            None => Err(format!("no {key:?}")),
        };
        let optional = |key: &str| match get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or(format!("{key:?} is not a number")),
        };
        let count = |key: &str| -> Result<usize, String> {
            let n = number(key)?;
            if n >= 0.0 && n.fract() == 0.0 { Ok(n as usize) } else { Err(format!("{key:?} is not a count: {n}")) }
        };
        let class = string("outcome")?;
        let outcome = match Class::parse(&class).ok_or(format!("unknown outcome {class:?}"))? {
            Class::Correct => Outcome::Correct,
            Class::WrongResult => Outcome::WrongResult { got: number("got")?, expected: number("expected")? },
            Class::LaunchError => Outcome::LaunchError(string("error")?),
            Class::Hang => {
                let phase = string("phase")?;
                let phase = Phase::parse(&phase).ok_or(format!("unknown phase {phase:?}"))?;
                Outcome::Hang { phase, after: Duration::from_secs_f64(number("after_s")?.max(0.0)) }
            }
            Class::Crashed => Outcome::Crashed { status: string("status")?, message: string("message")? },
        };
        Ok(Report {
            outcome,
            runs: count("runs")?,
            wrong_runs: count("wrong_runs")?,
            fix_wrong_runs: optional("fix_wrong_runs")?.map(|n| n as usize),
            mistake_us: optional("mistake_us")?,
            fix_us: optional("fix_us")?,
            detail: string("detail").unwrap_or_default(),
        })
    }
}

/// What the parent concluded about one child: its report, and how long it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    pub report: Report,
    /// From the spawn to the first [`READY`].
    pub startup: Option<Duration>,
    /// From the last [`READY`] (or the spawn) to the exit or the kill.
    pub run_time: Duration,
    /// The child's last lines of stderr.
    pub stderr_tail: String,
}

impl Observation {
    pub fn outcome(&self) -> &Outcome {
        &self.report.outcome
    }
}

/// Turn what a child did into an [`Observation`]: its report if it printed one (noting an
/// unusual exit after it), `Hang` if the guard killed it, `Crashed` otherwise.
pub fn classify(run: &ChildRun) -> Observation {
    let stderr_tail = run.stderr_tail(12);
    let report = match (&run.ending, run.outcome_json()) {
        (Ending::Killed { phase, reaped }, _) => {
            let mut report = Report::new(Outcome::Hang { phase: *phase, after: run.run_time() });
            report.detail = run.stderr_tail(1);
            if !reaped {
                let _ = write!(report.detail, " (the killed child had not exited {} s later)", REAP_GRACE.as_secs());
            }
            report
        }
        (Ending::Exited { success, status }, Some(json)) => match Report::parse(json) {
            Ok(mut report) => {
                if !success {
                    let _ = write!(report.detail, "{}(after its report the child ended with {status})", if report.detail.is_empty() { "" } else { " " });
                }
                report
            }
            Err(why) => Report::new(Outcome::Crashed {
                status: status.clone(),
                message: format!("unreadable {OUTCOME} line ({why}): {}", json.chars().take(200).collect::<String>()),
            }),
        },
        (Ending::Exited { status, .. }, None) => Report::new(Outcome::Crashed {
            status: status.clone(),
            message: match panic_message(&run.stderr) {
                Some(panic) => panic,
                None if stderr_tail.is_empty() => "no report and no message".into(),
                None => stderr_tail.clone(),
            },
        }),
    };
    Observation { report, startup: run.ready_after, run_time: run.run_time(), stderr_tail }
}

/// A Rust panic's "thread … panicked at file:line:" line and its message, from a child's stderr
/// (a backtrace after it would push it out of the tail).
fn panic_message(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines.iter().rposition(|l| l.contains("panicked at"))?;
    Some(lines[at..].iter().take(2).map(|l| l.trim()).collect::<Vec<_>>().join(" "))
}

// ---- a flat JSON object: strings, numbers, null; enough for one report line ----

#[derive(Clone, Debug, PartialEq)]
enum Json {
    Str(String),
    Num(f64),
    Null,
}

impl Json {
    /// Finite numbers as numbers; NaN and infinities (a poisoned f32 sum) as strings.
    fn number(x: f64) -> Json {
        if x.is_finite() { Json::Num(x) } else { Json::Str(format!("{x}")) }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Num(x) => Some(*x),
            Json::Str(s) => match s.as_str() {
                "NaN" => Some(f64::NAN),
                "inf" => Some(f64::INFINITY),
                "-inf" => Some(f64::NEG_INFINITY),
                _ => None,
            },
            Json::Null => None,
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Str(s) => write_json_string(out, s),
            Json::Num(x) => {
                let _ = write!(out, "{x:?}");
            }
            Json::Null => out.push_str("null"),
        }
    }
}

fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn parse_object(text: &str) -> Result<Vec<(String, Json)>, String> {
    let mut p = Parser { chars: text.trim().chars().collect(), at: 0 };
    p.expect('{')?;
    let mut fields = Vec::new();
    p.skip_space();
    if p.peek() == Some('}') {
        p.at += 1;
    } else {
        loop {
            p.skip_space();
            let key = p.string()?;
            p.skip_space();
            p.expect(':')?;
            p.skip_space();
            let value = p.value()?;
            fields.push((key, value));
            p.skip_space();
            match p.next() {
                Some(',') => continue,
                Some('}') => break,
                other => return Err(format!("expected , or }} at character {}, found {other:?}", p.at)),
            }
        }
    }
    p.skip_space();
    if p.at != p.chars.len() {
        return Err(format!("unexpected text after the object at character {}", p.at));
    }
    Ok(fields)
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += 1;
        c
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        match self.next() {
            Some(found) if found == c => Ok(()),
            found => Err(format!("expected {c:?} at character {}, found {found:?}", self.at - 1)),
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect('"')?;
        let mut s = String::new();
        loop {
            match self.next().ok_or("unterminated string")? {
                '"' => return Ok(s),
                '\\' => match self.next().ok_or("unterminated escape")? {
                    'n' => s.push('\n'),
                    'r' => s.push('\r'),
                    't' => s.push('\t'),
                    'u' => {
                        let hex: String = (0..4).filter_map(|_| self.next()).collect();
                        let code = u32::from_str_radix(&hex, 16).map_err(|_| format!("bad \\u escape {hex:?}"))?;
                        s.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                    }
                    c @ ('"' | '\\' | '/') => s.push(c),
                    c => return Err(format!("unknown escape \\{c}")),
                },
                c => s.push(c),
            }
        }
    }

    fn value(&mut self) -> Result<Json, String> {
        match self.peek() {
            Some('"') => self.string().map(Json::Str),
            Some('n') => {
                let word: String = (0..4).filter_map(|_| self.next()).collect();
                if word == "null" { Ok(Json::Null) } else { Err(format!("unexpected {word:?}")) }
            }
            Some(c) if c == '-' || c.is_ascii_digit() => {
                let start = self.at;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || "+-.eE".contains(c)) {
                    self.at += 1;
                }
                let text: String = self.chars[start..self.at].iter().collect();
                text.parse().map(Json::Num).map_err(|_| format!("bad number {text:?}"))
            }
            other => Err(format!("unexpected {other:?} at character {}", self.at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_report() -> Report {
        Report {
            outcome: Outcome::WrongResult { got: -12.0, expected: 4411.0 },
            runs: 20,
            wrong_runs: 20,
            fix_wrong_runs: Some(0),
            mistake_us: Some(181.25),
            fix_us: None,
            detail: "grid 4097 > 1056 \"resident\", one\nline\\two\ttab \u{1}".into(),
        }
    }

    #[test]
    fn reports_round_trip_through_their_line() {
        let mut reports = vec![full_report(), Report::new(Outcome::Correct)];
        reports.push(Report::new(Outcome::LaunchError("DriverError(CUDA_ERROR_ILLEGAL_ADDRESS, \"an illegal memory access\")".into())));
        reports.push(Report::new(Outcome::Hang { phase: Phase::Run, after: Duration::from_millis(5250) }));
        reports.push(Report::new(Outcome::Crashed { status: "killed by signal 11 (SIGSEGV)".into(), message: "é ünïcode".into() }));
        for report in reports {
            let line = report.to_line();
            assert!(!line.contains('\n'), "{line}");
            let json = line.strip_prefix(OUTCOME).unwrap();
            assert_eq!(Report::parse(json).unwrap(), report, "{line}");
        }
    }

    #[test]
    fn a_nan_sum_survives_the_line() {
        let report = Report::new(Outcome::WrongResult { got: f64::NAN, expected: 1.5 });
        let parsed = Report::parse(report.to_line().strip_prefix(OUTCOME).unwrap()).unwrap();
        match parsed.outcome {
            Outcome::WrongResult { got, expected } => assert!(got.is_nan() && expected == 1.5),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn malformed_lines_are_refused_with_a_reason() {
        for (json, why) in [
            ("{not json", "expected"),
            ("{\"outcome\":\"exploded\",\"runs\":1,\"wrong_runs\":0}", "unknown outcome"),
            ("{\"outcome\":\"wrong-result\",\"runs\":1,\"wrong_runs\":1}", "no \"got\""),
            ("{\"outcome\":\"correct\",\"runs\":-1,\"wrong_runs\":0}", "not a count"),
            ("{\"outcome\":\"correct\",\"runs\":1,\"wrong_runs\":0} trailing", "after the object"),
        ] {
            let err = Report::parse(json).unwrap_err();
            assert!(err.contains(why), "{json}: {err}");
        }
    }

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
        c.push_line("MISTAKE-OUTCOME {}\n");
        let text = c.finish();
        assert!(text.contains("MISTAKE-OUTCOME {}") && text.contains("not kept"));
    }
}
