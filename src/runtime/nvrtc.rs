//! Run-time compilation of the kernels with NVRTC, straight to CUBIN for the GPU in hand.
//!
//! CUBIN (machine code for one `sm_XY`) rather than PTX: a PTX file written by an NVRTC newer
//! than the driver carries a PTX version the driver cannot load, while CUBIN for the device's
//! own architecture needs no JIT step at all.

use crate::arch::Arch;
use crate::error::{Error, Result};
use cudarc::nvrtc::{result, sys};
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

/// Options every kernel is compiled with. `-lineinfo` lets compute-sanitizer and ncu name the
/// source line of a report; it does not change the generated code.
pub const BASE_OPTIONS: &[&str] = &["-std=c++17", "-lineinfo"];

/// Can NVRTC be loaded here? `Err` carries the reason, for test reports and error messages.
pub fn available() -> Result<()> {
    // SAFETY: only tries to dlopen the library by its candidate names.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::NoNvrtc(
            "libnvrtc.so could not be loaded (install the CUDA toolkit, or `pip install \
             nvidia-cuda-nvrtc==13.0.88` and put its nvidia/cu13/lib on LD_LIBRARY_PATH)"
                .into(),
        ))
    }
}

/// Where the CUDA headers are, for kernels that include cooperative groups or CUB: the folder
/// named by `CUDA_INCLUDE_DIR`, else the toolkit's `/usr/local/cuda/include`, else the
/// `include` folder beside a pip-installed NVRTC on `LD_LIBRARY_PATH` (`pip install
/// nvidia-cuda-runtime nvidia-cuda-cccl` puts the headers there).
pub fn cuda_include_dir() -> Result<PathBuf> {
    let has_headers = |dir: &Path| dir.join("cooperative_groups.h").is_file();
    if let Some(dir) = std::env::var_os("CUDA_INCLUDE_DIR").map(PathBuf::from) {
        return if has_headers(&dir) {
            Ok(dir)
        } else {
            Err(Error::NoCudaHeaders(format!("CUDA_INCLUDE_DIR={} has no cooperative_groups.h", dir.display())))
        };
    }
    let beside_libraries = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let candidates = std::iter::once(PathBuf::from("/usr/local/cuda/include"))
        .chain(beside_libraries.split(':').filter(|d| !d.is_empty()).map(|lib| Path::new(lib).join("../include")));
    for dir in candidates {
        if has_headers(&dir) {
            return Ok(dir);
        }
    }
    Err(Error::NoCudaHeaders(
        "no cooperative_groups.h in $CUDA_INCLUDE_DIR, /usr/local/cuda/include, or beside libnvrtc on LD_LIBRARY_PATH \
         (install the CUDA toolkit, or `pip install nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85`)"
            .into(),
    ))
}

/// NVRTC options that put the CUDA headers, and CCCL's (CUB), on the include path.
pub fn include_options(dir: &Path) -> Vec<String> {
    vec![format!("--include-path={}", dir.display()), format!("--include-path={}", dir.join("cccl").display())]
}

/// NVRTC's version as (major, minor).
pub fn version() -> Result<(i32, i32)> {
    available()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: both pointers are valid for the call.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::NoNvrtc(format!("nvrtcVersion failed: {e:?}")))?;
    Ok((major, minor))
}

/// Every architecture this NVRTC can compile for, oldest first (`nvrtcGetSupportedArchs`,
/// NVRTC 11.2 and later). The symbols are looked up in the loaded library first: cudarc's
/// binding panics on a missing symbol, and an older NVRTC gets an error instead.
pub fn supported_archs() -> Result<Vec<Arch>> {
    available()?;
    let missing = |symbol: &str| Error::NoNvrtc(format!("this libnvrtc has no {symbol} (it is older than CUDA 11.2)"));
    for symbol in ["nvrtcGetNumSupportedArchs", "nvrtcGetSupportedArchs"] {
        // SAFETY: `available()` has just loaded the library; looking a symbol up calls nothing.
        let found = unsafe { sys::culib().get::<unsafe extern "C" fn()>(symbol.as_bytes()) }.is_ok();
        if !found {
            return Err(missing(symbol));
        }
    }
    let mut count = 0;
    // SAFETY: one valid out-pointer; the symbol exists (checked above).
    unsafe { sys::nvrtcGetNumSupportedArchs(&mut count) }
        .result()
        .map_err(|e| Error::NoNvrtc(format!("nvrtcGetNumSupportedArchs failed: {e:?}")))?;
    let mut numbers = vec![0 as std::ffi::c_int; count.max(0) as usize];
    if !numbers.is_empty() {
        // SAFETY: `numbers` holds exactly the count NVRTC reported.
        unsafe { sys::nvrtcGetSupportedArchs(numbers.as_mut_ptr()) }
            .result()
            .map_err(|e| Error::NoNvrtc(format!("nvrtcGetSupportedArchs failed: {e:?}")))?;
    }
    let mut archs: Vec<Arch> = numbers.into_iter().filter(|n| *n > 0).map(|n| Arch::from_sm_number(n as u32)).collect();
    archs.sort_unstable();
    archs.dedup();
    Ok(archs)
}

/// NVRTC's version as results files write it (`13.0`), or `unknown` where it cannot be loaded.
pub fn version_text() -> String {
    version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_else(|_| "unknown".into())
}

/// The options of the developer's knob for experiments, `REDUCTION_NVRTC_OPTIONS` (e.g.
/// `-DVEC_UNROLL=8`), added to every compile; results files name them in their header.
pub fn experiment_options() -> Vec<String> {
    std::env::var("REDUCTION_NVRTC_OPTIONS").map(|more| more.split_whitespace().map(str::to_string).collect()).unwrap_or_default()
}

/// What NVRTC produced for one source file.
pub struct Compiled {
    pub cubin: Vec<u8>,
    /// The compiler's log: warnings, and with `--ptxas-options=-v` the registers and spills.
    pub log: String,
}

/// Compile `source` (named `file` in messages) to CUBIN for `arch` (for example `"sm_90"`).
pub fn compile_cubin(file: &str, source: &str, arch: &str, extra_options: &[String]) -> Result<Compiled> {
    available()?;
    let src = CString::new(source).map_err(|_| Error::Compile { file: file.into(), log: "source contains a NUL byte".into() })?;
    let name = CString::new(file).unwrap_or_else(|_| CString::new("kernel.cu").unwrap());
    let program = result::create_program(&src, Some(&name))
        .map_err(|e| Error::Compile { file: file.into(), log: format!("nvrtcCreateProgram failed: {e:?}") })?;
    let program = Program(program);

    let mut options: Vec<String> = BASE_OPTIONS.iter().map(|s| s.to_string()).collect();
    options.push(format!("--gpu-architecture={arch}"));
    options.extend(extra_options.iter().cloned());
    options.extend(experiment_options());

    // SAFETY: the program handle is live; options are owned strings converted by cudarc.
    let compiled = unsafe { result::compile_program(program.0, &options) };
    let log = program.log();
    if let Err(e) = compiled {
        return Err(Error::Compile { file: file.into(), log: format!("{e:?} with options {options:?}\n{log}") });
    }

    let mut size = 0usize;
    // SAFETY: the program compiled; NVRTC writes the CUBIN size into `size`.
    unsafe { sys::nvrtcGetCUBINSize(program.0, &mut size) }
        .result()
        .map_err(|e| Error::Compile { file: file.into(), log: format!("nvrtcGetCUBINSize failed: {e:?}") })?;
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has exactly the size NVRTC asked for.
    unsafe { sys::nvrtcGetCUBIN(program.0, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| Error::Compile { file: file.into(), log: format!("nvrtcGetCUBIN failed: {e:?}") })?;
    Ok(Compiled { cubin, log })
}

/// Owns an NVRTC program so that every exit path destroys it.
struct Program(sys::nvrtcProgram);

impl Program {
    fn log(&self) -> String {
        // SAFETY: the handle is live for the lifetime of self.
        match unsafe { result::get_program_log(self.0) } {
            Ok(raw) => unsafe { CStr::from_ptr(raw.as_ptr()) }.to_string_lossy().trim().to_string(),
            Err(e) => format!("(no log: {e:?})"),
        }
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: destroyed once, here; a failure leaks a host-side handle and nothing else.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}
