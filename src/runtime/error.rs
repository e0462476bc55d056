//! One error type for everything the library can refuse or fail at. Every variant says what
//! went wrong in words a reader can act on; nothing in the library panics on bad input.

use crate::arch::Arch;
use crate::element::Dtype;
use crate::limits::Memory;
use cudarc::cublas::result::CublasError;
use cudarc::driver::DriverError;
use std::fmt;

/// Everything that can go wrong between a request and a sum: one variant per kind of failure,
/// so that a wrong sum is not called a CUDA error, nor a bad setting a length.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// No usable GPU: the driver library is missing, cuInit failed, or there is no device.
    #[error("no CUDA GPU found: {0}")]
    NoGpu(String),
    /// NVRTC, the run-time compiler, could not be loaded.
    #[error("NVRTC (the CUDA run-time compiler) is not available: {0}")]
    NoNvrtc(String),
    /// A kernel includes CUDA headers (cooperative groups, CUB) and none were found.
    #[error("the CUDA headers this kernel includes were not found: {0}")]
    NoCudaHeaders(String),
    /// A kernel name that the registry does not know.
    #[error("unknown kernel {name:?}; the registered kernels are: {known}")]
    UnknownKernel { name: String, known: String },
    /// A kernel that needs a newer architecture than this GPU's ([`crate::arch::runs_on`]),
    /// refused before it is compiled.
    #[error("{kernel} is not on this GPU: it needs {needs} or newer, and this GPU is {device}")]
    NotOnThisGpu { kernel: String, needs: Arch, device: Arch },
    /// A block size that this kernel cannot take, rejected before any launch.
    #[error("kernel {kernel} cannot run with {block} threads per block: {reason}")]
    InvalidBlockSize { kernel: String, block: u32, reason: String },
    /// The kernel cannot take an input this long (for example a grid that would not fit).
    #[error("kernel {kernel} cannot reduce {n} elements: {reason}")]
    InvalidLength { kernel: String, n: usize, reason: String },
    /// The kernel has no entry point for this element type (`reduce_kahan` takes f32 only).
    #[error("{kernel} takes {takes} (asked for {asked})", takes = dtype_list(supported), asked = dtype.name())]
    UnsupportedDtype { kernel: String, dtype: Dtype, supported: Vec<Dtype> },
    /// An input that would not fit in host or device memory, refused before anything is
    /// allocated (see [`crate::limits`]). `bytes` is wide enough for any size asked for.
    #[error("{what} ({size}) will not fit in {memory} ({room}); nothing was allocated", size = human_bytes_wide(*bytes), room = human_bytes_wide(*available_bytes))]
    TooLarge { what: String, bytes: u128, memory: Memory, available_bytes: u128 },
    /// A device allocation that does not fit in the GPU's free memory.
    #[error("device allocation of {} does not fit: {} free on the GPU", human_bytes(*requested_bytes), human_bytes(*free_bytes))]
    OutOfMemory { requested_bytes: usize, free_bytes: usize },
    /// NVRTC rejected a kernel source; `log` is the compiler's own output.
    #[error("NVRTC could not compile {file}:\n{log}")]
    Compile { file: String, log: String },
    /// A CUDA driver call failed: `during` names the step, `source` is the driver's error, kept
    /// as it came (its code, [`Error::driver_error`], is never read back out of a message).
    #[error("CUDA error while {during}: {source}")]
    Cuda { during: String, source: DriverError },
    /// A CUDA driver call failed, with no step named (`?` on a cudarc call).
    #[error("CUDA error: {0}")]
    Driver(#[from] DriverError),
    /// A cuBLAS call failed: `during` names it, `source` is cuBLAS's status.
    #[error("cuBLAS error while {during}: {source:?}")]
    Cublas { during: String, source: CublasError },
    /// A CUDA graph capture recorded no operation.
    #[error("capturing a graph recorded nothing")]
    EmptyGraph,
    /// A kernel ran and returned a sum that its check rejected: `what` names the sum, `why`
    /// says by how much it is wrong.
    #[error("wrong sum from {what}: {why}")]
    WrongSum { what: String, why: String },
    /// A setting that cannot be used (a run count of 0, a deadline of no time, a shape that
    /// overflows), refused before any work.
    #[error("{setting}: {reason}")]
    Config { setting: String, reason: String },
    /// A worker thread (a rank of the multi-GPU sum, a reference worker) panicked.
    #[error("a thread panicked while {during}: {message}")]
    Thread { during: String, message: String },
    /// NCCL, the collective library the multi-GPU sum uses, could not be loaded.
    #[error("NCCL (the NVIDIA collective communication library) is not available: {0}")]
    NoNccl(String),
    /// An NCCL call failed, or a rank did not finish; `during` names the step.
    #[error("NCCL error while {during}: {message}")]
    Nccl { during: String, message: String },
    /// Reading or writing a results, chart or table file failed, or its contents are malformed.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `f32 only`, `f32 or f64`, `f32, i32 or f64`.
fn dtype_list(supported: &[Dtype]) -> String {
    let names: Vec<&str> = supported.iter().map(|d| d.name()).collect();
    match names.as_slice() {
        [] => "no element type".to_string(),
        [one] => format!("{one} only"),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Attach the step to a driver error: `ctx.synchronize().during("synchronizing")?`.
pub(crate) trait During<T> {
    fn during(self, what: &str) -> Result<T>;
}

impl<T> During<T> for std::result::Result<T, DriverError> {
    fn during(self, what: &str) -> Result<T> {
        self.map_err(|source| Error::Cuda { during: what.to_string(), source })
    }
}

impl Error {
    /// The driver's error, where a CUDA call failed: its code (`e.0`, a `CUresult` such as
    /// `CUDA_ERROR_ILLEGAL_ADDRESS`) as the driver returned it.
    pub fn driver_error(&self) -> Option<DriverError> {
        match self {
            Error::Cuda { source, .. } | Error::Driver(source) => Some(*source),
            _ => None,
        }
    }
}

/// An I/O failure on `path`, as an [`Error::Io`].
pub fn io_error(path: &std::path::Path, e: impl fmt::Display) -> Error {
    Error::Io { path: path.display().to_string(), message: e.to_string() }
}


/// 1536 -> "1.5 KiB"; used in messages and tables.
pub fn human_bytes(bytes: usize) -> String {
    human_bytes_wide(bytes as u128)
}

/// [`human_bytes`] for sizes past what a `usize` holds (2^62 f64 values are 32 EiB).
pub fn human_bytes_wide(bytes: u128) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{value:.1} {}", UNITS[unit]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes_picks_the_largest_unit_below_the_value() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes(4 << 40), "4.0 TiB");
        assert_eq!(human_bytes_wide(1 << 65), "32.0 EiB");
    }

    #[test]
    fn messages_name_the_problem() {
        let e = Error::InvalidBlockSize { kernel: "reduce1".into(), block: 300, reason: "not a power of two".into() };
        assert_eq!(e.to_string(), "kernel reduce1 cannot run with 300 threads per block: not a power of two");
        assert!(Error::NoGpu("no device".into()).to_string().starts_with("no CUDA GPU found: "));
        let oom = Error::OutOfMemory { requested_bytes: 2 << 30, free_bytes: 1 << 30 };
        assert_eq!(oom.to_string(), "device allocation of 2.0 GiB does not fit: 1.0 GiB free on the GPU");
    }

    #[test]
    fn a_driver_error_keeps_its_code_and_its_message() {
        use cudarc::driver::sys::CUresult;
        let e: Result<()> = Err(DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)).during("waiting for the GPU");
        let e = e.unwrap_err();
        assert_eq!(e.driver_error(), Some(DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)));
        assert!(matches!(&e, Error::Cuda { during, .. } if during == "waiting for the GPU"));
        assert!(std::error::Error::source(&e).is_some());
        // (Its message asks the driver for the error's sentence, so it is not printed here,
        // where there may be no driver.)
        let bare: Error = DriverError(CUresult::CUDA_ERROR_NOT_FOUND).into();
        assert_eq!(bare.driver_error().map(|d| d.0), Some(CUresult::CUDA_ERROR_NOT_FOUND));
        assert_eq!(Error::NoGpu("none".into()).driver_error(), None);
    }

    #[test]
    fn an_unsupported_element_type_is_named_not_called_a_length() {
        let e = Error::UnsupportedDtype { kernel: "reduce_kahan".into(), dtype: Dtype::I32, supported: vec![Dtype::F32] };
        assert_eq!(e.to_string(), "reduce_kahan takes f32 only (asked for i32)");
        let e = Error::UnsupportedDtype { kernel: "reduce1".into(), dtype: Dtype::F64, supported: vec![Dtype::F32, Dtype::I32] };
        assert_eq!(e.to_string(), "reduce1 takes f32 or i32 (asked for f64)");
        let e = Error::UnsupportedDtype { kernel: "reduce9".into(), dtype: Dtype::F64, supported: vec![Dtype::F32, Dtype::I32, Dtype::F16] };
        assert_eq!(e.to_string(), "reduce9 takes f32, i32 or f16 (asked for f64)");
    }
}
