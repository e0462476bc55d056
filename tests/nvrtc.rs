//! Every kernel file compiles with NVRTC for every architecture from sm_75 (the book's minimum)
//! that the NVRTC in use supports (`nvrtcGetSupportedArchs`): the book's kernels, the broken
//! ones of the mistakes chapter, the planted bugs, and every exercise's stub, solution and near
//! miss. Needs NVRTC, not a GPU: CI installs NVRTC from PyPI so that this runs there. The kernels
//! that include CUDA headers (cooperative groups, CUB) also need those: where NVRTC is here but
//! the headers are not, they are reported ignored with the reason, unless `REQUIRE_NVRTC=1`
//! (CI), where they fail. A kernel whose registry entry names a newer minimum architecture is
//! reported ignored, with that reason, for the architectures below it.
//!
//! Also GPU-free: the integer bf16 rounding that `kernels/14_accuracy.cu` takes before sm_80,
//! compiled for this CPU by the host's C compiler and checked bit for bit against the `half`
//! crate's conversion.

mod common;

use common::{compile_verdict, nvrtc_kernel_trial, nvrtc_trial, Verdict};
use libtest_mimic::{Completion, Failed, Trial};
use reduction::arch::{self, Arch};
use reduction::kernels::KernelSpec;
use reduction::{kernels, nvrtc};

/// The architectures this NVRTC compiles for from the book's minimum on; where NVRTC cannot say
/// (not loadable here, or older than CUDA 11.2), the ones CI's NVRTC 13.0 does, so that the
/// trials exist, and are ignored or failed with the reason.
fn targets() -> Vec<Arch> {
    match nvrtc::supported_archs() {
        Ok(supported) => arch::book_targets(&supported),
        Err(_) => [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121].map(Arch::from_sm_number).to_vec(),
    }
}

/// A compile trial of `spec` (under the name `file`) for `target`: ignored with the reason below
/// the kernel's minimum architecture; otherwise the CUBIN must be an ELF image and, where
/// `no_warnings`, the log free of warnings.
fn compile_trial(name: String, file: String, spec: &'static KernelSpec, source: impl FnOnce() -> Result<String, Failed> + Send + 'static, target: Arch, no_warnings: bool) -> Trial {
    if let Err(why) = arch::runs_on(spec.name, spec.min_arch, target) {
        return Trial::ignorable_test(name, move || Ok(Completion::ignored_with(format!("not compiled for {target}: {why}"))));
    }
    nvrtc_kernel_trial(name, spec.needs_cuda_headers, move || {
        let compiled = nvrtc::compile_cubin(&file, &source()?, &target.sm(), &spec.compile_options()?)?;
        // The CUBIN is an ELF image; an empty or foreign blob would load nowhere.
        if !compiled.cubin.starts_with(b"\x7fELF") {
            return Err(format!("{file}: NVRTC returned {} bytes that are not an ELF CUBIN", compiled.cubin.len()).into());
        }
        if no_warnings && compiled.log.contains("warning") {
            return Err(format!("{file} compiles with warnings for {target}:\n{}", compiled.log).into());
        }
        Ok(())
    })
}

fn main() {
    let targets = targets();
    let mut trials = Vec::new();
    for &target in &targets {
        // The correct kernels, and the broken ones of the mistakes chapter: a broken kernel must
        // still compile, cleanly, or it shows nothing.
        for (file, kernel) in kernels::files().into_iter().chain(reduction::mistakes::kernel_files()) {
            trials.push(compile_trial(format!("compile::{target}::{file}"), file.into(), kernel, move || Ok(kernel.full_source()), target, true));
        }
        // The planted bugs of the mutation tests: each must compile, or it catches nothing.
        for mutant in reduction::mutants::all() {
            let original = mutant.original().expect("planted in a registered kernel");
            trials.push(compile_trial(format!("compile::{target}::planted::{}", mutant.name), mutant.file_name(), original,
                move || Ok(mutant.spec()?.full_source()), target, false));
        }
        // Every text of every exercise: what the reader starts from, the answer, the near misses.
        for e in reduction::exercises::all() {
            let texts = [("stub".to_string(), reduction::exercises::Which::Stub), ("solution".to_string(), reduction::exercises::Which::Solution)]
                .into_iter()
                .chain(e.near_misses.iter().map(|m| (format!("near_miss::{}", m.name), reduction::exercises::Which::NearMiss(m))));
            for (what, which) in texts {
                trials.push(nvrtc_trial(format!("compile::{target}::exercise::{:02}::{what}", e.number), move || {
                    let (file, text) = reduction::exercises::check::source(e, &which)?;
                    match reduction::exercises::compile(&file, &text, &target.sm())? {
                        None => Ok(()),
                        Some(verdict) => Err(format!("for {target}: {}", verdict.render(e, &file)).into()),
                    }
                }));
            }
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
    trials.push(nvrtc_trial("compile::the_books_minimum_is_a_target", || {
        let supported = nvrtc::supported_archs()?;
        let (major, minor) = nvrtc::version()?;
        let names: Vec<String> = supported.iter().map(|a| a.to_string()).collect();
        eprintln!("NVRTC {major}.{minor} compiles for {}", names.join(", "));
        if !supported.contains(&Arch::BOOK_MINIMUM) {
            return Err(format!("NVRTC {major}.{minor} does not compile for {}, the book's minimum (it offers {})", Arch::BOOK_MINIMUM, names.join(", ")).into());
        }
        Ok(())
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
    // The experiment switches, each off by default and set on the GPU host through
    // REDUCTION_NVRTC_OPTIONS by a stage of `tests/gpu-host.sh`: a switch that no longer compiles
    // would cost a GPU session's run. Every one those stages set, read from the script itself, on
    // the files it changes, for the book's minimum and for sm_90 (where the cluster entries exist).
    for (switch, files) in experiment_switches() {
        for target in [Arch::BOOK_MINIMUM, Arch::from_sm_number(90)].into_iter().filter(|t| targets.contains(t)) {
            for &file in files {
                let options: Vec<String> = switch.split_whitespace().map(str::to_string).collect();
                let kernel = kernels::files().into_iter().find(|(f, _)| *f == file).map(|(_, k)| k).expect("a registered kernel file");
                trials.push(nvrtc_kernel_trial(format!("compile::{target}::switch::{}::{file}", options.join("+").replace("-D", "")), kernel.needs_cuda_headers, move || {
                    let options: Vec<String> = kernel.compile_options()?.into_iter().chain(options).collect();
                    let compiled = nvrtc::compile_cubin(file, &kernel.full_source(), &target.sm(), &options)?;
                    if compiled.log.contains("warning") {
                        return Err(format!("{file} with {options:?} compiles with warnings for {target}:\n{}", compiled.log).into());
                    }
                    Ok(())
                }));
            }
        }
    }
    trials.push(registers_trial());
    trials.push(lanes_switches_registers_trial());
    trials.push(Trial::test("registers::lanes_switches_are_the_scripts", lanes_switches_are_the_scripts));
    trials.push(Trial::test("trials::missing_headers_are_ignored_unless_required", headers_rule));
    trials.push(bf16_trial());
    let header_kernels: Vec<&str> = kernels::files().into_iter().filter(|(_, k)| k.needs_cuda_headers).map(|(f, _)| f).collect();
    if let (Ok(()), Err(why), false) = (nvrtc::available(), common::cuda_headers(), common::nvrtc_required()) {
        eprintln!("note: {} are not compiled here: {why} (REQUIRE_NVRTC=1 makes them fail instead)", header_kernels.join(" and "));
    }
    common::run(trials)
}

/// The row kernels' registers and spills at sm_90 are what `plots/data/dl/registers-sm_90.csv`
/// records: a change to the code that costs registers (and so, past a bound, blocks an SM) shows
/// in that file's diff, and the chapter's Nsight Compute table can say which profiles are of an
/// earlier build. `REDUCTION_WRITE_REGISTERS=1` writes the file instead of comparing. Ignored,
/// with the reason, under `REDUCTION_NVRTC_OPTIONS` (an experiment's build is not the record's).
fn registers_trial() -> Trial {
    use reduction::records::registers::{self, DL_ARCH, DL_FILE, DL_KERNEL_FILES};
    let name = format!("registers::{DL_ARCH}::dl_kernels");
    record_trial(name, "the default build", || {
        let path = reduction::records::repo_root().join("plots/data").join(DL_FILE);
        let writing = std::env::var("REDUCTION_WRITE_REGISTERS").is_ok_and(|v| v == "1");
        // Another NVRTC allocates registers its own way: the record is of one version.
        let (header, recorded) = reduction::records::csv::read::<registers::EntryRegisters>(&path)?;
        let recorded_version = reduction::records::csv::value(&header, "nvrtc").unwrap_or("unknown").to_string();
        if !writing && recorded_version != nvrtc::version_text() {
            return Ok(Completion::ignored_with(format!("{DL_FILE} is of NVRTC {recorded_version}; this is NVRTC {}", nvrtc::version_text())));
        }
        let mut now = Vec::new();
        for file in DL_KERNEL_FILES {
            let kernel = kernels::files().into_iter().find(|(f, _)| *f == file).map(|(_, k)| k).ok_or_else(|| format!("{file} is not a registered kernel file"))?;
            let options: Vec<String> = kernel.compile_options()?.into_iter().chain(["--ptxas-options=-v".to_string()]).collect();
            let compiled = nvrtc::compile_cubin(file, &kernel.full_source(), DL_ARCH, &options)?;
            let entries = registers::parse_ptxas_log(file, &compiled.log);
            if entries.is_empty() {
                return Err(format!("{file}: no entry point in ptxas's log:\n{}", compiled.log).into());
            }
            now.extend(entries);
        }
        if writing {
            registers::write(&path, &nvrtc::version_text(), &now)?;
            eprintln!("wrote {} ({} entry points)", path.display(), now.len());
            return Ok(Completion::Completed);
        }
        let changed: Vec<String> = now
            .iter()
            .filter_map(|e| match recorded.iter().find(|r| r.file == e.file && r.entry == e.entry) {
                Some(r) if r == e => None,
                Some(r) => Some(format!("{}: {} registers, {} / {} bytes spilled (recorded: {}, {} / {})", e.entry, e.registers, e.spill_store_bytes, e.spill_load_bytes, r.registers, r.spill_store_bytes, r.spill_load_bytes)),
                None => Some(format!("{}: new ({} registers)", e.entry, e.registers)),
            })
            .chain(recorded.iter().filter(|r| !now.iter().any(|e| e.file == r.file && e.entry == r.entry)).map(|r| format!("{}: recorded, no longer compiled", r.entry)))
            .collect();
        if changed.is_empty() {
            Ok(Completion::Completed)
        } else {
            Err(format!("{} of {} entry points differ from plots/data/{DL_FILE} (NVRTC {}); if the change is meant, run `REDUCTION_WRITE_REGISTERS=1 cargo test --test nvrtc registers` and commit the file:\n{}",
                changed.len(), now.len(), nvrtc::version_text(), changed.join("\n")).into())
        }
    })
}

/// The norms' lanes entries under each lanes switch are what
/// `plots/data/dl/experiments/norms-lanes/registers-sm_90.csv` records (the chapter reads it
/// beside the switches' timings; `lanes_switches_are_the_scripts` holds the switches to the script's).
/// `REDUCTION_WRITE_REGISTERS=1` writes the file; ignored under `REDUCTION_NVRTC_OPTIONS` or
/// another NVRTC than the record's, as `registers_trial`.
fn lanes_switches_registers_trial() -> Trial {
    use reduction::records::registers::{self, SwitchRegisters, DL_ARCH, LANES_SWITCHES, LANES_SWITCHES_FILE, LANES_SWITCHES_KERNEL_FILE};
    let name = format!("registers::{DL_ARCH}::norms_lanes_switches");
    record_trial(name, "the switches alone", || {
        let path = reduction::records::repo_root().join("plots/data").join(LANES_SWITCHES_FILE);
        let writing = std::env::var("REDUCTION_WRITE_REGISTERS").is_ok_and(|v| v == "1");
        let recorded: Vec<SwitchRegisters> = if writing { Vec::new() } else {
            let (header, recorded) = reduction::records::csv::read::<SwitchRegisters>(&path)?;
            let version = reduction::records::csv::value(&header, "nvrtc").unwrap_or("unknown").to_string();
            if version != nvrtc::version_text() {
                return Ok(Completion::ignored_with(format!("{LANES_SWITCHES_FILE} is of NVRTC {version}; this is NVRTC {}", nvrtc::version_text())));
            }
            recorded
        };
        let kernel = kernels::files().into_iter().find(|(f, _)| *f == LANES_SWITCHES_KERNEL_FILE).map(|(_, k)| k).ok_or("18_norms.cu is not a registered kernel file")?;
        let mut now = Vec::new();
        for (variant, options) in LANES_SWITCHES {
            let args: Vec<String> = kernel.compile_options()?.into_iter().chain(options.split_whitespace().map(String::from)).chain(["--ptxas-options=-v".to_string()]).collect();
            let compiled = nvrtc::compile_cubin(LANES_SWITCHES_KERNEL_FILE, &kernel.full_source(), DL_ARCH, &args)?;
            let lanes: Vec<_> = registers::parse_ptxas_log(LANES_SWITCHES_KERNEL_FILE, &compiled.log).into_iter().filter(|e| e.entry.contains("_lanes")).collect();
            if lanes.is_empty() {
                return Err(format!("{variant}: no lanes entry in ptxas's log:\n{}", compiled.log).into());
            }
            now.extend(lanes.into_iter().map(|e| SwitchRegisters {
                variant: variant.to_string(),
                options: options.to_string(),
                entry: e.entry,
                registers: e.registers,
                spill_store_bytes: e.spill_store_bytes,
                spill_load_bytes: e.spill_load_bytes,
            }));
        }
        if writing {
            reduction::records::csv::write(&path, &registers::lanes_switches_header(&nvrtc::version_text()), &now)?;
            eprintln!("wrote {} ({} rows)", path.display(), now.len());
            return Ok(Completion::Completed);
        }
        if now == recorded {
            Ok(Completion::Completed)
        } else {
            let changed: Vec<String> = now.iter().filter(|e| !recorded.contains(e)).map(|e| format!("{} {}: {} registers, {} / {} bytes spilled", e.variant, e.entry, e.registers, e.spill_store_bytes, e.spill_load_bytes)).collect();
            Err(format!("{} rows differ from plots/data/{LANES_SWITCHES_FILE} (NVRTC {}); if meant, run `REDUCTION_WRITE_REGISTERS=1 cargo test --test nvrtc registers` and commit it:\n{}",
                changed.len().max(1), nvrtc::version_text(), changed.join("\n")).into())
        }
    })
}

/// A trial of a record NVRTC writes: ignored, with the reason, under `REDUCTION_NVRTC_OPTIONS`
/// (an experiment's build is not the record's, which is of `what`) and where NVRTC is missing
/// (failed instead under `REQUIRE_NVRTC=1`); otherwise `body`.
fn record_trial(name: String, what: &'static str, body: impl FnOnce() -> Result<Completion, Failed> + Send + 'static) -> Trial {
    if let Ok(options) = std::env::var("REDUCTION_NVRTC_OPTIONS") {
        if !options.trim().is_empty() {
            return Trial::ignorable_test(name, move || Ok(Completion::ignored_with(format!("REDUCTION_NVRTC_OPTIONS={options} is set: the record is of {what}"))));
        }
    }
    Trial::ignorable_test(name, move || match compile_verdict(nvrtc::available().map_err(|e| e.to_string()), None, common::nvrtc_required()) {
        Verdict::Run => body(),
        Verdict::Ignore(why) => Ok(Completion::ignored_with(why)),
        Verdict::Fail(why) => Err(why.into()),
    })
}

/// Each variant of the lanes switches' record is `tests/gpu-host.sh`'s `switch_of` of that name
/// (`<name>*) echo "<options>" ;;`): no NVRTC needed.
fn lanes_switches_are_the_scripts() -> Result<(), Failed> {
    let script = include_str!("gpu-host.sh");
    for (variant, options) in reduction::records::registers::LANES_SWITCHES {
        let line = format!("{variant}*) echo \"{options}\" ;;");
        if !script.lines().any(|l| l.trim() == line) {
            return Err(format!("gpu-host.sh's switch_of lacks `{line}`").into());
        }
    }
    Ok(())
}

/// The experiment switches `tests/gpu-host.sh` sets, with the kernel files each changes: what its
/// `switch_of` gives the norms' variants and its `vec_switch_of` the vec-tail stage's (their
/// `echo "-D..."` lines).
fn experiment_switches() -> Vec<(String, &'static [&'static str])> {
    const NORMS: &[&str] = &["18_norms.cu"];
    const VECTOR_LOADS: &[&str] = &["09_vectorized.cu", "10_single_pass.cu", "11_cooperative_groups.cu", "12_cub_block_reduce.cu"];
    let script = include_str!("gpu-host.sh");
    let options_of = |function: &str, files: &'static [&'static str]| -> Vec<(String, &'static [&'static str])> {
        let start = script.find(&format!("\n{function}() {{")).or_else(|| script.find(&format!(" {function}() {{"))).unwrap_or_else(|| panic!("gpu-host.sh defines {function}"));
        // The first closing brace at the start of a line, indented or not.
        let end = start + 1 + ["\n}", "\n  }"].iter().filter_map(|close| script[start + 1..].find(close)).min().unwrap_or_else(|| panic!("{function} ends"));
        script[start..end].lines().filter_map(|line| line.split("echo \"").nth(1)?.split('"').next()).filter(|o| o.starts_with("-D")).map(|o| (o.to_string(), files)).collect()
    };
    // The lanes' bound changes every row kernel's lanes entries, the clusters' merge every
    // cluster entry: softmax's too.
    let mut switches: Vec<(String, &'static [&'static str])> = options_of("switch_of", NORMS)
        .into_iter()
        .map(|(o, files)| {
            if o.contains("DL_LANES8") || o.contains("DL_CLUSTER_MERGE_32") {
                (o, &["17_softmax.cu", "18_norms.cu"][..])
            } else {
                (o, files)
            }
        })
        .collect();
    assert!(switches.len() >= 3, "switch_of's options not found in gpu-host.sh: {switches:?}");
    let vector = options_of("vec_switch_of", VECTOR_LOADS);
    assert!(vector.len() >= 2, "vec_switch_of's options not found in gpu-host.sh: {vector:?}");
    switches.extend(vector);
    switches
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
    add(kernels::COPY.file, std::iter::once(kernels::entries::COPY_U32.to_string()).chain(kernels::COPY_TILE_SHAPES.iter().map(|s| s.entry_name())).collect());
    let kahan = kernels::find(kernels::names::REDUCE_KAHAN).expect("registered");
    add(kahan.file, [kernels::entries::F64_ACCUMULATOR, kernels::entries::F16_ACCUMULATOR, kernels::entries::BF16_ACCUMULATOR, kernels::entries::BF16_ROUNDING_MISMATCHES].map(String::from).to_vec());
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

// ---------------------------------------------------------------------------------------------
// The bf16 rounding of kernels/14_accuracy.cu below sm_80, on the CPU.

/// Every bf16 value's upper half with each of these lower halves covers every case of the
/// rounding: exactly representable, just below, at and just above the halfway point, and the
/// carries into the exponent and into infinity.
const LOW_HALVES: &[u32] = &[0x0000, 0x0001, 0x3fff, 0x7ffe, 0x7fff, 0x8000, 0x8001, 0x8002, 0xbfff, 0xc000, 0xfffe, 0xffff, 0x1234, 0x9abc];

/// The `bf16_rn` anchor of kernels/14_accuracy.cu, made a C program that reads nothing and writes
/// the bf16 bits of every input of [`LOW_HALVES`] × 2^16 upper halves, as little-endian u16s.
fn bf16_program(function: &str) -> String {
    let lows: Vec<String> = LOW_HALVES.iter().map(|l| format!("{l:#x}u")).collect();
    format!(
        "#include <stdio.h>\n#define __host__\n#define __device__\n#define __forceinline__ static inline\n{function}\n\
         int main(void) {{\n  static const unsigned lows[] = {{{}}};\n\
         for (unsigned hi = 0; hi < 65536u; hi++)\n    for (unsigned j = 0; j < sizeof lows / sizeof lows[0]; j++) {{\n\
         unsigned short b = bf16_bits_rn((hi << 16) | lows[j]);\n      putchar(b & 0xff); putchar(b >> 8);\n    }}\n  return 0;\n}}\n",
        lows.join(", ")
    )
}

/// The C compiler: `$CC`, else `cc` (cargo links with it on Linux, so it is there wherever this
/// test was built).
fn c_compiler() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// Compile and run `program`; its output, or why there is none.
fn run_c(program: &str, tag: &str) -> Result<Vec<u8>, String> {
    let dir = std::env::temp_dir().join(format!("reduction-bf16-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (source, exe) = (dir.join("bf16.c"), dir.join("bf16"));
    std::fs::write(&source, program).map_err(|e| e.to_string())?;
    let compiled = std::process::Command::new(c_compiler()).arg("-O2").arg("-o").arg(&exe).arg(&source).output()
        .map_err(|e| format!("the C compiler `{}` could not be started: {e}", c_compiler()))?;
    if !compiled.status.success() {
        return Err(format!("{} rejected the bf16_rn anchor: {}", c_compiler(), String::from_utf8_lossy(&compiled.stderr)));
    }
    let out = std::process::Command::new(&exe).output().map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(out.stdout)
}

/// The inputs whose bf16 bits from `output` differ from the `half` crate's (NaNs need only stay
/// NaN: the kernel makes every NaN 0x7fff, `half` keeps the payload), at most `limit` of them.
fn bf16_mismatches(output: &[u8], limit: usize) -> Result<Vec<String>, String> {
    let expected_len = 65536 * LOW_HALVES.len() * 2;
    if output.len() != expected_len {
        return Err(format!("the C program wrote {} bytes, not {expected_len}", output.len()));
    }
    let mut wrong = Vec::new();
    let mut got = output.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    for hi in 0..65536u32 {
        for &lo in LOW_HALVES {
            let bits = (hi << 16) | lo;
            let (got, expected) = (got.next().unwrap_or(0), half::bf16::from_f32(f32::from_bits(bits)));
            let both_nan = half::bf16::from_bits(got).is_nan() && expected.is_nan();
            if got != expected.to_bits() && !both_nan && wrong.len() < limit {
                wrong.push(format!("{bits:#010x} ({:e}): {got:#06x}, half gives {:#06x}", f32::from_bits(bits), expected.to_bits()));
            }
        }
    }
    Ok(wrong)
}

fn bf16_trial() -> Trial {
    Trial::ignorable_test("portable::bf16_rounding_below_sm_80_matches_the_half_crate", || {
        let source = kernels::find(kernels::names::REDUCE_KAHAN)?.source;
        let function = source.split("// ANCHOR: bf16_rn\n").nth(1).and_then(|rest| rest.split("// ANCHOR_END: bf16_rn").next())
            .ok_or("kernels/14_accuracy.cu has no bf16_rn anchor")?;
        let output = match run_c(&bf16_program(function), "kernel") {
            Ok(output) => output,
            // A machine that built this test has a C compiler; CI must really run the check.
            Err(why) if common::nvrtc_required() => return Err(why.into()),
            Err(why) => return Ok(Completion::ignored_with(format!("{why} (set CC to a C compiler)"))),
        };
        let wrong = bf16_mismatches(&output, 5)?;
        if !wrong.is_empty() {
            return Err(format!("bf16_bits_rn disagrees with half::bf16::from_f32:\n{}", wrong.join("\n")).into());
        }
        // The check can fail: the same function truncating, or breaking ties away from zero.
        for (bug, find, replace) in [("truncation", "(f + 0x7fffu + ((f >> 16) & 1u)) >> 16", "f >> 16"), ("ties away from zero", "((f >> 16) & 1u)", "1u")] {
            let planted = reduction::mutants::plant_once(function, find, replace).map_err(|n| format!("{bug}: `{find}` occurs {n} times"))?;
            let wrong = bf16_mismatches(&run_c(&bf16_program(&planted), "planted")?, 1)?;
            if wrong.is_empty() {
                return Err(format!("{bug} planted in bf16_bits_rn went unnoticed").into());
            }
        }
        Ok(Completion::Completed)
    })
}
