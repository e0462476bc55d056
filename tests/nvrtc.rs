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
    // Every entry point the host loads by name is in the CUBIN NVRTC makes of its file: a
    // misnamed entry, or a block size or element type the file never instantiates, shows here
    // rather than only as a failed load on a GPU.
    for (file, names) in entry_points() {
        let kernel = kernels::files().into_iter().chain(reduction::mistakes::kernel_files()).find(|(f, _)| *f == file).map(|(_, k)| k).expect("a registered file");
        trials.push(nvrtc_kernel_trial(format!("entries::{file}"), kernel.needs_cuda_headers, move || {
            let compiled = nvrtc::compile_cubin(file, &kernel.full_source(), "sm_90", &kernel.compile_options()?)?;
            let missing: Vec<&String> = names.iter().filter(|name| !has_entry(&compiled.cubin, name)).collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("{file}: the CUBIN has no entry point {missing:?} (of the {} the host loads)", names.len()).into())
            }
        }));
    }
    trials.push(nvrtc_trial("entries::a_name_the_file_does_not_define_is_missing", || {
        let kernel = kernels::find(kernels::names::REDUCE1)?;
        let compiled = nvrtc::compile_cubin(kernel.file, &kernel.full_source(), "sm_90", &[])?;
        match (has_entry(&compiled.cubin, "reduce1_f32"), has_entry(&compiled.cubin, "reduce1_f3"), has_entry(&compiled.cubin, "reduce1_f64")) {
            (true, false, false) => Ok(()),
            other => Err(format!("reduce1_f32, reduce1_f3 and reduce1_f64 found: {other:?}; expected only the first").into()),
        }
    }));
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

/// Every entry point the host loads, by kernel file: the registry's kernels at every element
/// type, accumulator type and block size in the name; the read-only kernel at every shape; the
/// copy, the accuracy experiment's and the row kernels' own names; the broken kernels at the
/// block their mistake launches.
fn entry_points() -> Vec<(&'static str, Vec<String>)> {
    let mut by_file: Vec<(&'static str, Vec<String>)> = Vec::new();
    let mut add = |file: &'static str, names: Vec<String>| match by_file.iter_mut().find(|(f, _)| *f == file) {
        Some((_, all)) => all.extend(names),
        None => by_file.push((file, names)),
    };
    for k in kernels::all() {
        add(k.file, k.entry_names());
    }
    // The read-only kernel: one entry per launch shape and element type, named as the benchmark
    // loads them (`read_only_b512_l8_f32`); it writes one partial per block, no second pass.
    let read_only = kernels::READ_ONLY_SHAPES
        .iter()
        .flat_map(|shape| kernels::READ_ONLY.dtypes.iter().map(move |&d| reduction::with_dtype!(d, T => shape.entry_name::<T>())))
        .collect();
    add(kernels::READ_ONLY.file, read_only);
    add(kernels::COPY.file, vec![kernels::entries::COPY_U32.to_string()]);
    let kahan = kernels::find(kernels::names::REDUCE_KAHAN).expect("registered");
    add(kahan.file, [kernels::entries::F64_ACCUMULATOR, kernels::entries::F16_ACCUMULATOR, kernels::entries::BF16_ACCUMULATOR].map(String::from).to_vec());
    let rows: Vec<String> = reduction::rows::DTYPES.iter().flat_map(|&d| reduction::rows::Strategy::ALL.map(|s| s.entry_name(d))).collect();
    add(kernels::ROWS.file, rows);
    for m in reduction::mistakes::all() {
        let (kernel, block) = match m.kind {
            reduction::mistakes::Kind::Passes { kernel, block, .. }
            | reduction::mistakes::Kind::GridBarrier { kernel, block }
            | reduction::mistakes::Kind::FloatEquality { kernel, block }
            | reduction::mistakes::Kind::HostRoundTrips { kernel, block } => (kernel, block),
        };
        let spec = reduction::mistakes::kernel_spec(kernel).expect("catalogued");
        let dtype = if matches!(m.kind, reduction::mistakes::Kind::FloatEquality { .. }) { reduction::Dtype::F32 } else { reduction::Dtype::I32 };
        add(spec.file, vec![spec.entry_name_of(dtype, block)]);
    }
    by_file
}

/// Whether the ELF CUBIN `cubin` defines the symbol `name`: the name, NUL-terminated, right
/// after another string's NUL in a string table (so `reduce1_f3` is not found in `reduce1_f32`,
/// nor `f32` in `.text.reduce1_f32`).
fn has_entry(cubin: &[u8], name: &str) -> bool {
    let wanted = [b"\0", name.as_bytes(), b"\0"].concat();
    cubin.windows(wanted.len()).any(|w| w == wanted.as_slice())
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
