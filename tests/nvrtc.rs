//! Every kernel file compiles with NVRTC, for sm_80 and sm_90 (the H100/H200). Needs NVRTC, not
//! a GPU: CI installs NVRTC from PyPI so that this runs there. The kernels that include CUDA
//! headers (cooperative groups, CUB) also need those: where NVRTC is here but the headers are
//! not, they are reported ignored with the reason, unless `REQUIRE_NVRTC=1` (CI), where they fail.

mod common;

use common::{compile_verdict, nvrtc_kernel_trial, nvrtc_trial, Verdict};
use libtest_mimic::Trial;
use reduction::{kernels, nvrtc};

/// The architectures every kernel must compile for, with or without a GPU.
const ARCHES: &[&str] = &["sm_80", "sm_90"];

fn main() {
    let mut trials = Vec::new();
    // The correct kernels, and the broken ones of the mistakes chapter: a broken kernel must
    // still compile, cleanly, or it shows nothing.
    for (file, kernel) in kernels::files().into_iter().chain(reduction::mistakes::kernel_files()) {
        for arch in ARCHES {
            trials.push(nvrtc_kernel_trial(format!("compile::{arch}::{file}"), kernel.needs_cuda_headers, move || {
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
    trials.push(Trial::test("trials::missing_headers_are_ignored_unless_required", headers_rule));
    let header_kernels: Vec<&str> = kernels::files().into_iter().filter(|(_, k)| k.needs_cuda_headers).map(|(f, _)| f).collect();
    if let (Ok(()), Err(why), false) = (nvrtc::available(), common::cuda_headers(), common::nvrtc_required()) {
        eprintln!("note: {} are not compiled here: {why} (REQUIRE_NVRTC=1 makes them fail instead)", header_kernels.join(" and "));
    }
    common::run(trials)
}

/// The rule the compile trials follow, for every combination of what a machine may lack: each
/// outcome can happen, and a missing header is never a pass.
fn headers_rule() -> Result<(), libtest_mimic::Failed> {
    let no_nvrtc = || Err("libnvrtc.so could not be loaded".to_string());
    let no_headers = || Some(Err("no cooperative_groups.h".to_string()));
    let cases = [
        // (NVRTC, headers, REQUIRE_NVRTC, what must happen)
        (Ok(()), None, false, "run"),
        (Ok(()), Some(Ok(())), false, "run"),
        (Ok(()), Some(Ok(())), true, "run"),
        (Ok(()), no_headers(), false, "ignore"),
        (Ok(()), no_headers(), true, "fail"),
        (no_nvrtc(), None, false, "ignore"),
        (no_nvrtc(), no_headers(), true, "fail"),
    ];
    for (nvrtc, headers, required, expected) in cases {
        let case = format!("NVRTC {nvrtc:?}, headers {headers:?}, required {required}");
        let verdict = compile_verdict(nvrtc, headers, required);
        let got = match &verdict {
            Verdict::Run => "run",
            Verdict::Ignore(_) => "ignore",
            Verdict::Fail(_) => "fail",
        };
        if got != expected {
            return Err(format!("{case}: {got}, expected {expected}").into());
        }
        // An ignored or failed compile says why, and for missing headers how to get them.
        if let Verdict::Ignore(why) | Verdict::Fail(why) = &verdict {
            let needs = if why.contains("cooperative_groups.h") { vec!["cooperative_groups.h", "CUDA_INCLUDE_DIR"] } else { vec!["libnvrtc"] };
            if let Some(missing) = needs.iter().find(|n| !why.contains(*n)) {
                return Err(format!("{case}: the reason {why:?} does not mention {missing}").into());
            }
        }
    }
    Ok(())
}
