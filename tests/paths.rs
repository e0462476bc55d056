//! Every `src/…` and `kernels/…` path that the code's comments and messages, the chapters, the
//! generated text, the tests and the README name exists: a file that moved leaves no reader
//! looking for it. Paths with placeholders (`kernels/<k>.cu`) are skipped; with a `*` in their
//! last part (`kernels/01_*.cu`), at least one file must match.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    reduction::records::repo_root()
}

/// The files whose text is read: everything a reader of the code or the book reads.
fn texts(root: &Path) -> Vec<PathBuf> {
    let wanted = |p: &Path| {
        let name = p.to_string_lossy();
        ["rs", "cu", "cuh", "py", "md", "txt", "sh", "toml"].iter().any(|e| p.extension().is_some_and(|x| x == *e)) || name.ends_with(".ci/run")
    };
    let mut out = Vec::new();
    let mut todo: Vec<PathBuf> = ["src", "kernels", "book", "tests", "plots"].iter().map(|d| root.join(d)).collect();
    out.extend(["build.rs", "Cargo.toml", "README.md", ".ci/run"].iter().map(|f| root.join(f)).filter(|p| p.is_file()));
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            // plots/data holds measurements and tools' logs, not text written for a reader.
            if path.is_dir() && !path.ends_with("plots/data") && !path.ends_with("__pycache__") {
                todo.push(path);
            } else if path.is_file() && wanted(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every `src/…` or `kernels/…` path in `text`: starting where no path or name goes on to the
/// left, made of the characters of a path, without the punctuation that ends a sentence.
fn named_paths(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let path_char = |c: u8| c.is_ascii_alphanumeric() || b"_./-*<>{}".contains(&c);
    let mut out = Vec::new();
    for prefix in ["src/", "kernels/"] {
        for (at, _) in text.match_indices(prefix) {
            if at > 0 && (path_char(bytes[at - 1]) || bytes[at - 1] == b'/') {
                continue;
            }
            let end = (at..bytes.len()).find(|&i| !path_char(bytes[i])).unwrap_or(bytes.len());
            out.push(text[at..end].trim_end_matches(['.', ',', ':', ';']).to_string());
        }
    }
    out
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head) && (0..=name.len() - head.len()).any(|i| matches(tail, &name[head.len() + i..]))
        }
    }
}

/// Whether the path exists under `root` (for a `*` in its last part: whether a file matches).
fn exists(root: &Path, path: &str) -> bool {
    if !path.contains('*') {
        return root.join(path).exists();
    }
    let (dir, pattern) = path.rsplit_once('/').unwrap_or((".", path));
    std::fs::read_dir(root.join(dir)).map(|d| d.flatten().any(|e| matches(pattern, &e.file_name().to_string_lossy()))).unwrap_or(false)
}

#[test]
fn every_named_path_exists() {
    let root = root();
    let mut missing = Vec::new();
    let mut checked = 0;
    // This file plants missing paths to show the scan finds them.
    for file in texts(&root).into_iter().filter(|f| !f.ends_with("tests/paths.rs")) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for path in named_paths(&text) {
            if path.contains(['<', '>', '{', '}']) || path.ends_with('/') && path.len() <= "kernels/".len() {
                continue;
            }
            checked += 1;
            if !exists(&root, &path) {
                missing.push(format!("{}: {path}", file.strip_prefix(&root).unwrap().display()));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(checked > 100, "only {checked} paths found: is the scan reading the files?");
    assert!(missing.is_empty(), "paths that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_scan_finds_paths_and_a_missing_one_is_missing() {
    let text = "the host (src/kernels/registry.rs), `kernels/01_*.cu`, see src/tables.rs. Not: /usr/src/x, my_src/y.";
    assert_eq!(named_paths(text), ["src/kernels/registry.rs", "src/tables.rs", "kernels/01_*.cu"]);
    let root = root();
    assert!(exists(&root, "src/kernels/registry.rs") && exists(&root, "kernels/01_*.cu"));
    assert!(!exists(&root, "src/tables.rs") && !exists(&root, "kernels/99_*.cu"));
    assert!(matches("01_*.cu", "01_interleaved_divergent.cu") && !matches("01_*.cu", "02_x.cu"));
}
