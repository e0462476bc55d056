//! What compute-sanitizer reported, as the chapters quote it (`sanitizer/<log>.md`): one sentence
//! per log under `plots/data/sanitizer/`, naming the tool and its summary line.

use crate::child::Sanitizer;

/// "compute-sanitizer's racecheck reported 3 hazards displayed (0 errors, 10 warnings)." The
/// tool is the first one named in the text (the log's file name comes first).
pub fn sanitizer_sentence(log: &str) -> String {
    let tool = Sanitizer::ALL
        .into_iter()
        .map(Sanitizer::name)
        .filter_map(|t| log.find(t).map(|at| (at, t)))
        .min()
        .map_or("the sanitizer", |(_, t)| t);
    let summary = log
        .lines()
        .filter_map(|l| l.trim_start_matches('=').trim().strip_prefix("RACECHECK SUMMARY: ").or_else(|| l.trim_start_matches('=').trim().strip_prefix("ERROR SUMMARY: ")))
        .find(|s| !s.contains("not printed"));
    let tests = log.lines().find_map(|l| l.strip_prefix("test result: ok. ")).and_then(|rest| rest.split(" passed").next().map(str::to_string));
    let under = tests.map(|n| format!(" ({n} tests ran under it and passed)")).unwrap_or_default();
    match summary {
        Some(summary) => format!("On the GPU this book was last measured on, compute-sanitizer's {tool} reported **{summary}**{under}.\n"),
        None => match log.lines().find_map(|l| l.strip_prefix("# not yet run: ")) {
            Some(command) => format!("compute-sanitizer's {tool} has not been run here yet (`{command}`).\n"),
            None => format!("The {tool} log has no summary line: the run did not finish.\n"),
        },
    }
}

/// The chapter that shows the sentence of the log `name` (`plots/data/sanitizer/<name>.log`):
/// a mistake's tool run on it in the mistakes chapter, Harris's kernel 5 in its own chapter,
/// everything else in the sanitizer chapter.
pub fn chapter_of(name: &str) -> &'static str {
    let a_mistake = crate::kernels::broken::all()
        .iter()
        .any(|m| crate::kernels::broken::sanitizer_log(m).is_some_and(|log| log == format!("plots/data/sanitizer/{name}.log")));
    if a_mistake {
        "mistakes.md"
    } else if name == "kernel5-racecheck" {
        "05_unroll_last_warp.md"
    } else {
        "sanitizers.md"
    }
}
