//! The book itself: every listing it includes exists, every chapter is reachable, every kernel
//! file is registered (so tested and benchmarked), and `mdbook build` leaves nothing unexpanded.
//! None of this needs a GPU.

mod common;

use libtest_mimic::{Completion, Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    // Under cargo the manifest dir; in the GPU bundle, the directory it is run from.
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if manifest.join("book.toml").exists() { manifest } else { PathBuf::from(".") }
}

fn chapters() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join("book"))
        .expect("book/ exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    out.sort();
    out
}

/// Every `{{#include path[:anchor]}}` in `text`, as (path, anchor).
fn includes(text: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{#include ") {
        let after = &rest[start + "{{#include ".len()..];
        let end = after.find("}}").unwrap_or(after.len());
        let spec = after[..end].trim();
        let (path, anchor) = match spec.split_once(':') {
            Some((p, a)) => (p.to_string(), Some(a.to_string())),
            None => (spec.to_string(), None),
        };
        found.push((path, anchor));
        rest = &after[end..];
    }
    found
}

fn check_includes(chapter: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(chapter)?;
    let mut problems = Vec::new();
    for (path, anchor) in includes(&text) {
        let file = chapter.parent().unwrap().join(&path);
        let Ok(target) = std::fs::read_to_string(&file) else {
            problems.push(format!("includes {path}, which does not exist"));
            continue;
        };
        // Line-number ranges are not used: listings are pulled by anchor so they cannot drift.
        if let Some(anchor) = anchor.filter(|a| !a.chars().next().is_some_and(|c| c.is_ascii_digit())) {
            let has = |marker: &str| target.lines().any(|l| l.trim_start().trim_start_matches("//").trim() == format!("{marker}: {anchor}"));
            if !has("ANCHOR") || !has("ANCHOR_END") {
                problems.push(format!("includes {path}:{anchor}, but that file has no ANCHOR/ANCHOR_END pair named {anchor}"));
            }
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(format!("{}: {}", chapter.display(), problems.join("; ")).into()) }
}

fn summary_links() -> Vec<String> {
    let summary = std::fs::read_to_string(root().join("book/SUMMARY.md")).expect("book/SUMMARY.md");
    summary
        .split("](")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap().to_string())
        .filter(|link| !link.is_empty())
        .collect()
}

fn mdbook_build() -> Result<Completion, Failed> {
    let required = std::env::var("REQUIRE_MDBOOK").is_ok_and(|v| v == "1");
    let version = Command::new("mdbook").arg("--version").output();
    let Ok(version) = version else {
        if required {
            return Err("REQUIRE_MDBOOK=1 but `mdbook` is not on PATH".into());
        }
        return Ok(Completion::ignored_with("`mdbook` is not on PATH (cargo install mdbook --version 0.5.4 --locked)"));
    };
    eprintln!("{}", String::from_utf8_lossy(&version.stdout).trim());
    let dest = std::env::temp_dir().join(format!("reduction-book-test-{}", std::process::id()));
    let output = Command::new("mdbook").arg("build").arg("--dest-dir").arg(&dest).arg(root()).output()?;
    if !output.status.success() {
        return Err(format!("mdbook build failed:\n{}", String::from_utf8_lossy(&output.stderr)).into());
    }
    // mdBook leaves a directive it could not expand in the page and still exits 0.
    let mut unexpanded = Vec::new();
    for page in std::fs::read_dir(&dest)?.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "html")) {
        let html = std::fs::read_to_string(&page)?;
        if html.contains("{{#") {
            unexpanded.push(page.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    let _ = std::fs::remove_dir_all(&dest);
    if unexpanded.is_empty() { Ok(Completion::Completed) } else { Err(format!("unexpanded directives in {unexpanded:?}").into()) }
}

fn main() {
    let mut trials: Vec<Trial> = chapters()
        .into_iter()
        .map(|chapter| {
            let name = format!("includes::{}", chapter.file_name().unwrap().to_string_lossy());
            Trial::test(name, move || check_includes(&chapter))
        })
        .collect();

    trials.push(Trial::test("summary::every_chapter_is_listed_and_every_link_exists", || {
        let links = summary_links();
        let mut problems = Vec::new();
        for link in &links {
            if !root().join("book").join(link).exists() {
                problems.push(format!("SUMMARY.md links {link}, which does not exist"));
            }
        }
        for chapter in chapters() {
            let name = chapter.file_name().unwrap().to_string_lossy().to_string();
            if name != "SUMMARY.md" && !links.contains(&name) {
                problems.push(format!("{name} is not in SUMMARY.md, so no reader can reach it"));
            }
        }
        if problems.is_empty() { Ok(()) } else { Err(problems.join("\n").into()) }
    }));

    trials.push(Trial::test("kernels::every_file_is_registered", || {
        let registered: Vec<&str> = reduction::kernels::files().iter().map(|(f, _)| *f).collect();
        let headers: Vec<&str> = reduction::kernels::HEADERS.iter().map(|(h, _)| *h).collect();
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(root().join("kernels"))?.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            let is_source = name.ends_with(".cu") || name.ends_with(".cuh");
            if is_source && !registered.contains(&name.as_str()) && !headers.contains(&name.as_str()) {
                missing.push(name);
            }
        }
        // The broken kernels of the mistakes chapter have a registry of their own.
        let broken: Vec<&str> = reduction::mistakes::kernel_files().iter().map(|(f, _)| *f).collect();
        for entry in std::fs::read_dir(root().join("kernels/broken"))?.flatten() {
            let name = format!("broken/{}", entry.file_name().to_string_lossy());
            if (name.ends_with(".cu") || name.ends_with(".cuh")) && !broken.contains(&name.as_str()) {
                missing.push(name);
            }
        }
        if missing.is_empty() { Ok(()) } else { Err(format!("not in src/kernels.rs (or, under broken/, src/mistakes.rs), so never compiled or tested: {missing:?}").into()) }
    }));

    trials.push(Trial::ignorable_test("mdbook::build_expands_every_directive", mdbook_build));
    common::run(trials)
}
