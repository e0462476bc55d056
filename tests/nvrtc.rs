//! Every kernel file compiles with NVRTC, for sm_90 (the H100/H200) and for the GPU in hand if
//! there is one. Needs NVRTC, not a GPU: CI installs NVRTC from PyPI so that this runs there.

mod common;

use common::nvrtc_trial;
use reduction::{kernels, nvrtc};

/// The architectures every kernel must compile for, with or without a GPU.
const ARCHES: &[&str] = &["sm_80", "sm_90"];

fn main() {
    let mut trials = Vec::new();
    // The correct kernels, and the broken ones of the mistakes chapter: a broken kernel must
    // still compile, cleanly, or it shows nothing.
    for (file, kernel) in kernels::files().into_iter().chain(reduction::mistakes::kernel_files()) {
        for arch in ARCHES {
            trials.push(nvrtc_trial(format!("compile::{arch}::{file}"), move || {
                let compiled = nvrtc::compile_cubin(file, &kernel.full_source(), arch, &kernel.compile_options()?)?;
                // The CUBIN is an ELF image; an empty or foreign blob would load nowhere.
                if !compiled.cubin.starts_with(b"\x7fELF") {
                    return Err(format!("{file}: NVRTC returned {} bytes that are not an ELF CUBIN", compiled.cubin.len()).into());
                }
                if compiled.log.contains("warning") {
                    return Err(format!("{file} compiles with warnings:\n{}", compiled.log).into());
                }
                Ok(())
            }));
        }
    }
    trials.push(nvrtc_trial("compile::errors_come_back_with_the_log", || {
        match nvrtc::compile_cubin("broken.cu", "extern \"C\" __global__ void k() { undeclared = 1; }", "sm_90", &[]) {
            Err(reduction::Error::Compile { log, .. }) if log.contains("undeclared") => Ok(()),
            other => Err(format!("expected a compile error naming `undeclared`, got {:?}", other.err()).into()),
        }
    }));
    trials.push(nvrtc_trial("compile::nvrtc_version_is_reported", || {
        let (major, minor) = nvrtc::version()?;
        eprintln!("NVRTC {major}.{minor}");
        if major < 11 { return Err(format!("NVRTC {major}.{minor} is too old for -std=c++17 and sm_90").into()); }
        Ok(())
    }));
    common::run(trials)
}
