//! The layers of `src/`, checked from the code: every path a file names (`crate::x`, and
//! `reduction::x` in the command line) is an edge from its folder to folder `x`, and every edge
//! must point down the list below. So no two folders import each other, directly or through a
//! third, and the book and the experiments meet only in `records`: neither imports the other.
//! Comments are left out (a doc link is no import); code under `#[cfg(test)]` counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The folders of `src/`, lowest first. A folder may use the folders of lower rank only.
const LAYERS: &[(&str, u32)] = &[
    ("runtime", 0),
    ("child", 0),
    ("records", 1),
    ("kernels", 2),
    ("check", 3),
    ("measure", 4),
    ("mistakes", 4),
    ("multigpu", 4),
    ("exercises", 4),
    ("book", 5),
    ("cli", 6),
];

/// The experiments: they write records, and the book reads them.
const EXPERIMENTS: [&str; 4] = ["measure", "mistakes", "multigpu", "exercises"];

/// The short paths of `src/lib.rs` (`pub use ...`), and the folder each one is in.
const ROOT_PATHS: &[(&str, &str)] = &[
    ("data", "check"), ("mutants", "check"),
    ("plan", "kernels"), ("reducer", "kernels"), ("rows", "kernels"), ("Reducer", "kernels"),
    ("element", "runtime"), ("error", "runtime"), ("gpu", "runtime"), ("limits", "runtime"), ("nvrtc", "runtime"),
    ("timing", "runtime"), ("Dtype", "runtime"), ("Element", "runtime"), ("Error", "runtime"), ("Result", "runtime"),
    ("DeviceInfo", "runtime"), ("Gpu", "runtime"), ("with_dtype", "runtime"),
];

fn root() -> PathBuf {
    reduction::records::repo_root()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text of a Rust file without its comments (`//` to the end of a line, outside strings).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut in_string = false;
            let bytes = line.as_bytes();
            for i in 0..bytes.len() {
                match bytes[i] {
                    b'"' if i == 0 || bytes[i - 1] != b'\\' => in_string = !in_string,
                    b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
                    _ => {}
                }
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The folder of `src/` that `name` (the first segment after `crate::`) is in, if any.
fn folder_of(name: &str) -> Option<&'static str> {
    LAYERS.iter().map(|(f, _)| *f).find(|f| *f == name).or_else(|| ROOT_PATHS.iter().find(|(p, _)| *p == name).map(|(_, f)| *f))
}

/// Every path of `text` that starts with `prefix` (`crate::`), as the folder it names; and, for
/// `use crate::{a, b::c}`, each of the braced names.
fn named_folders(text: &str, prefix: &str) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices(prefix) {
        if at > 0 && matches!(text.as_bytes()[at - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'$') {
            continue; // `$crate::` in a macro, or a longer name
        }
        let rest = &text[at + prefix.len()..];
        if let Some(braced) = rest.strip_prefix('{') {
            let inner = &braced[..braced.find('}').unwrap_or(braced.len())];
            for item in inner.split(',') {
                let first = item.trim().split("::").next().unwrap_or("").trim();
                out.extend(folder_of(first));
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            out.extend(folder_of(&name));
        }
    }
    out
}

/// folder → the folders it names, and one file that names each.
fn edges() -> BTreeMap<&'static str, BTreeMap<&'static str, PathBuf>> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut edges: BTreeMap<&'static str, BTreeMap<&'static str, PathBuf>> = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let Some(top) = relative.components().next().and_then(|c| folder_of(&c.as_os_str().to_string_lossy())) else { continue };
        let text = without_comments(&std::fs::read_to_string(&file).unwrap());
        let prefix = if top == "cli" { "reduction::" } else { "crate::" };
        for to in named_folders(&text, prefix) {
            if to != top {
                edges.entry(top).or_default().entry(to).or_insert_with(|| relative.to_path_buf());
            }
        }
    }
    edges
}

fn rank(folder: &str) -> u32 {
    LAYERS.iter().find(|(f, _)| *f == folder).map(|(_, r)| *r).unwrap()
}

#[test]
fn every_folder_of_src_is_a_layer() {
    let src = root().join("src");
    for entry in std::fs::read_dir(&src).unwrap().flatten().filter(|e| e.path().is_dir()) {
        let name = entry.file_name().to_string_lossy().to_string();
        assert!(folder_of(&name).is_some_and(|f| f == name), "src/{name}/ is not in LAYERS");
    }
}

#[test]
fn every_import_points_down_the_layers() {
    let mut wrong = Vec::new();
    for (from, tos) in edges() {
        for (to, file) in tos {
            if rank(to) >= rank(from) {
                wrong.push(format!("{from} -> {to} (src/{})", file.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "imports up or across the layers:\n{}", wrong.join("\n"));
}

#[test]
fn no_folders_import_each_other_directly_or_through_others() {
    let edges = edges();
    // Depth-first search for a path back to the start.
    fn reaches(edges: &BTreeMap<&str, BTreeMap<&str, PathBuf>>, from: &str, target: &str, seen: &mut BTreeSet<String>) -> bool {
        edges.get(from).into_iter().flat_map(|t| t.keys()).any(|&to| to == target || (seen.insert(to.to_string()) && reaches(edges, to, target, seen)))
    }
    for &(folder, _) in LAYERS {
        assert!(!reaches(&edges, folder, folder, &mut BTreeSet::new()), "{folder} imports itself through other folders: {edges:?}");
    }
}

#[test]
fn the_book_and_the_experiments_meet_only_in_the_records() {
    let edges = edges();
    for experiment in EXPERIMENTS {
        for (from, to) in [("book", experiment), (experiment, "book")] {
            let file = edges.get(from).and_then(|t| t.get(to));
            assert!(file.is_none(), "{from} imports {to} (src/{})", file.unwrap().display());
        }
    }
    // And the check can fail: an import of an experiment is found where one is written.
    let planted = named_folders("use crate::measure::bench; fn f() { crate::records::slug(\"\"); }", "crate::");
    assert_eq!(planted, BTreeSet::from(["measure", "records"]));
    assert_eq!(named_folders("use crate::{data, mistakes::find}; // crate::book::x", "crate::"), BTreeSet::from(["check", "mistakes", "book"]));
    assert!(named_folders(&without_comments("// crate::book::x\n/// [`crate::book`]"), "crate::").is_empty());
}
