//! The text NVRTC compiles for a kernel file: its headers spliced in, once each, with `#line`
//! directives that keep compiler errors and compute-sanitizer reports pointing into the real
//! files; and the options a file needs. What [`crate::gpu::KernelSource`] asks of a registry entry.

use super::KernelSpec;
use crate::arch::Arch;
use crate::error::Result;

/// Headers that kernel files include; spliced into the source before NVRTC sees it.
pub const HEADERS: &[(&str, &str)] = &[
    ("common.cuh", include_str!("../../kernels/common.cuh")),
    ("unrolled_tree.cuh", include_str!("../../kernels/unrolled_tree.cuh")),
    ("warp_reduce.cuh", include_str!("../../kernels/warp_reduce.cuh")),
    ("vector_load.cuh", include_str!("../../kernels/vector_load.cuh")),
    ("operators.cuh", include_str!("../../kernels/operators.cuh")),
    ("dl_rows.cuh", include_str!("../../kernels/dl_rows.cuh")),
];

impl KernelSpec {
    /// NVRTC options this kernel needs beyond the base ones: the CUDA include path, if it
    /// includes CUDA headers.
    pub fn compile_options(&self) -> Result<Vec<String>> {
        if self.needs_cuda_headers {
            Ok(crate::nvrtc::include_options(&crate::nvrtc::cuda_include_dir()?))
        } else {
            Ok(Vec::new())
        }
    }

    /// The source as NVRTC receives it ([`spliced_source`]).
    pub fn full_source(&self) -> String {
        spliced_source(self.file, self.source)
    }
}

/// The text of `source` (named `file`) as NVRTC receives it: each `#include "header"` of a
/// registered header replaced by the header's text (once), so no include path is needed.
/// `#line` directives keep the original file names and line numbers, so compiler errors and
/// compute-sanitizer reports point into the real files.
pub fn spliced_source(file: &str, source: &str) -> String {
    let mut included = Vec::new();
    let mut out = String::new();
    splice(file, source, &mut included, &mut out);
    out
}

fn splice(name: &str, source: &str, included: &mut Vec<&'static str>, out: &mut String) {
    out.push_str(&format!("#line 1 \"{name}\"\n"));
    for (index, line) in source.lines().enumerate() {
        let header = line.trim().strip_prefix("#include \"").and_then(|rest| rest.split('"').next());
        match header.and_then(|h| HEADERS.iter().find(|(header_name, _)| *header_name == h)) {
            Some((header_name, text)) => {
                if !included.contains(header_name) {
                    included.push(header_name);
                    splice(header_name, text, included, out);
                }
                out.push_str(&format!("#line {} \"{name}\"\n", index + 2));
            }
            None if line.trim() == "#pragma once" => out.push('\n'),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
}

/// What the runtime needs to compile a kernel file: its name, its text, its options.
impl crate::gpu::KernelSource for KernelSpec {
    fn file(&self) -> &'static str {
        self.file
    }
    fn text(&self) -> String {
        self.full_source()
    }
    fn options(&self) -> Result<Vec<String>> {
        self.compile_options()
    }
    fn min_arch(&self) -> Arch {
        self.min_arch
    }
}

#[cfg(test)]
mod tests {
    use super::super::find;

    #[test]
    fn full_source_splices_each_header_once_and_drops_the_include_lines() {
        let src = find("reduce7").unwrap().full_source();
        assert!(!src.lines().any(|l| l.trim_start().starts_with("#include \"")), "an include was left for NVRTC");
        assert_eq!(src.matches("#define INSTANTIATE(body)").count(), 1);
        assert_eq!(src.matches("__device__ __forceinline__ void block_tree").count(), 1);
        assert!(src.contains("__device__ void reduce7"));
    }

    #[test]
    fn line_directives_map_back_to_the_real_files() {
        let src = find("reduce7").unwrap().full_source();
        let lines: Vec<&str> = src.lines().collect();
        // Find the kernel's own first line after the splice and check the directive before
        // the resumed text names the right file and line.
        let resume = lines.iter().rposition(|l| l.starts_with("#line") && l.contains("07_multiple_elements.cu")).unwrap();
        let line_no: usize = lines[resume].split_whitespace().nth(1).unwrap().parse().unwrap();
        let original: Vec<&str> = find("reduce7").unwrap().source.lines().collect();
        assert_eq!(lines[resume + 1], original[line_no - 1]);
    }
}
