//! NCCL, the library that moves data between GPUs, opened at run time like the driver and
//! NVRTC: the crate builds, and everything that needs no NCCL runs, on a machine without it.
//!
//! cudarc's `nccl` feature supplies the types and the values of NCCL's enums; the loading and
//! the communicator are here, for two reasons found while writing this part. cudarc 0.19 looks
//! for `libnccl.so`, `libnccl.so.13`, `.12`, … and `.1`, but never `libnccl.so.2` — the one name
//! that NCCL's runtime package (`libnccl2`) and its PyPI wheel (`nvidia-nccl-cu13`) install; only
//! the development package adds `libnccl.so`. And its `Comm` panics in `Drop` if an abort fails.
//! So this module opens `libnccl.so.2` first, binds the six calls the book makes, and turns
//! every failure into an [`Error`].
//!
//! NVLink multicast (NVLS) is kept off: see [`keep_multicast_off`].

use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use crate::records::allreduce::Algorithm;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{DevicePtr, DevicePtrMut, DeviceRepr};
use cudarc::nccl::sys::{ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The names tried, in order: the ABI name every NCCL 2 install has, then the development link.
pub const LIBRARY_NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// The variable that switches NCCL's NVLink SHARP / multicast algorithms (NVLS).
pub const NVLS_VAR: &str = "NCCL_NVLS_ENABLE";

// The C signatures of the calls the book makes (nccl.h). Results and enums cross as `int`:
// a value NCCL adds in a later version must not become an invalid Rust enum.
type GetVersion = unsafe extern "C" fn(*mut c_int) -> c_int;
type GetUniqueId = unsafe extern "C" fn(*mut ncclUniqueId) -> c_int;
type CommInitRank = unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> c_int;
type AllReduce = unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, c_int, ncclComm_t, *mut c_void) -> c_int;
type CommFree = unsafe extern "C" fn(ncclComm_t) -> c_int;
type GetErrorString = unsafe extern "C" fn(c_int) -> *const c_char;
type GetLastError = unsafe extern "C" fn(ncclComm_t) -> *const c_char;

const SUM: c_int = ncclRedOp_t::ncclSum as c_int;

/// The NCCL library, loaded once per process.
pub struct Nccl {
    /// Kept loaded for as long as the process runs (the function pointers point into it).
    _library: libloading::Library,
    name: &'static str,
    version: (u32, u32, u32),
    get_unique_id: GetUniqueId,
    comm_init_rank: CommInitRank,
    all_reduce: AllReduce,
    comm_destroy: CommFree,
    comm_abort: CommFree,
    get_error_string: GetErrorString,
    /// Since NCCL 2.13; older libraries only give the error code's string.
    get_last_error: Option<GetLastError>,
}

static NCCL: OnceLock<std::result::Result<Nccl, String>> = OnceLock::new();

/// NCCL, loaded on first use; [`Error::NoNccl`] says why not where it cannot be. Never panics.
pub fn library() -> Result<&'static Nccl> {
    NCCL.get_or_init(load).as_ref().map_err(|why| Error::NoNccl(why.clone()))
}

/// `Ok` where NCCL can be loaded, else why not (for tests that need it).
pub fn available() -> std::result::Result<(), String> {
    library().map(|_| ()).map_err(|e| e.to_string())
}

fn load() -> std::result::Result<Nccl, String> {
    // NCCL reads its environment when it initialises: multicast must be off before that.
    keep_multicast_off();
    let mut tried = Vec::new();
    for name in LIBRARY_NAMES {
        // SAFETY: loading NCCL runs only its own initialisers, which touch no state of ours.
        match unsafe { libloading::Library::new(name) } {
            Ok(library) => return bind(library, name),
            Err(e) => tried.push(dl_error(&e)),
        }
    }
    Err(format!(
        "could not load {} ({}). NCCL's runtime package (libnccl2) or the PyPI wheel nvidia-nccl-cu13 \
         provides libnccl.so.2; put its folder on LD_LIBRARY_PATH",
        LIBRARY_NAMES.join(" or "),
        tried.join("; ")
    ))
}

/// The loader's own words (libloading's `Display` says only "dlopen failed").
fn dl_error(e: &libloading::Error) -> String {
    match e {
        libloading::Error::DlOpen { source } => source.to_string(),
        other => other.to_string(),
    }
}

fn bind(library: libloading::Library, name: &'static str) -> std::result::Result<Nccl, String> {
    fn symbol<F: Copy>(library: &libloading::Library, name: &str, symbol: &str) -> std::result::Result<F, String> {
        // SAFETY: each symbol is looked up with the type of its declaration in nccl.h (the
        // aliases above); the library stays loaded for the life of the process.
        unsafe { library.get::<F>(format!("{symbol}\0").as_bytes()) }
            .map(|s| *s)
            .map_err(|e| format!("{name} has no {symbol}: {e} (is it NCCL 2?)"))
    }
    let get_version: GetVersion = symbol(&library, name, "ncclGetVersion")?;
    let mut code: c_int = 0;
    // SAFETY: one valid out-pointer.
    let result = unsafe { get_version(&mut code) };
    if result != 0 {
        return Err(format!("ncclGetVersion failed with ncclResult_t {result}"));
    }
    let nccl = Nccl {
        name,
        version: decode_version(code),
        get_unique_id: symbol(&library, name, "ncclGetUniqueId")?,
        comm_init_rank: symbol(&library, name, "ncclCommInitRank")?,
        all_reduce: symbol(&library, name, "ncclAllReduce")?,
        comm_destroy: symbol(&library, name, "ncclCommDestroy")?,
        comm_abort: symbol(&library, name, "ncclCommAbort")?,
        get_error_string: symbol(&library, name, "ncclGetErrorString")?,
        get_last_error: symbol(&library, name, "ncclGetLastError").ok(),
        _library: library,
    };
    if nccl.version.0 != 2 {
        return Err(format!("{name} is NCCL {}, not NCCL 2", nccl.version_string()));
    }
    Ok(nccl)
}

/// `NCCL_VERSION_CODE`: `major·10000 + minor·100 + patch` since 2.9, `major·1000 + minor·100 +
/// patch` before.
pub fn decode_version(code: c_int) -> (u32, u32, u32) {
    let code = code.max(0) as u32;
    if code >= 10_000 {
        (code / 10_000, code % 10_000 / 100, code % 100)
    } else {
        (code / 1000, code % 1000 / 100, code % 100)
    }
}

impl Nccl {
    /// (major, minor, patch), as the library reports it.
    pub fn version(&self) -> (u32, u32, u32) {
        self.version
    }

    pub fn version_string(&self) -> String {
        let (a, b, c) = self.version;
        format!("{a}.{b}.{c}")
    }

    /// The name the library was loaded by.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A fresh communicator id: made once, handed to every rank.
    pub fn unique_id(&self) -> Result<UniqueId> {
        let mut id = ncclUniqueId { internal: [0; 128] };
        // SAFETY: one valid out-pointer to a 128-byte id.
        let code = unsafe { (self.get_unique_id)(&mut id) };
        self.check(code, None, || "making a communicator id (ncclGetUniqueId)".into())?;
        Ok(UniqueId(id))
    }

    /// `Ok` for ncclSuccess; otherwise the error string, and NCCL's last message where it has one.
    fn check(&self, code: c_int, comm: Option<ncclComm_t>, during: impl FnOnce() -> String) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString returns a static string for any code.
        let what = unsafe { c_string((self.get_error_string)(code)) }.unwrap_or_else(|| "unknown error".into());
        let last = self
            .get_last_error
            // SAFETY: a communicator of this library, or null (NCCL then reports the thread's last error).
            .and_then(|f| unsafe { c_string(f(comm.unwrap_or(std::ptr::null_mut()))) })
            .filter(|s| !s.is_empty());
        let detail = last.map(|l| format!(": {l}")).unwrap_or_default();
        Err(Error::Nccl { during: during(), message: format!("{what} (ncclResult_t {code}){detail}") })
    }
}

/// Copy a C string NCCL returned, if any.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that lives until this returns.
unsafe fn c_string(p: *const c_char) -> Option<String> {
    // SAFETY: as the caller promises.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// A communicator id: 128 opaque bytes that every rank of one communicator must share.
#[derive(Clone, Copy, Debug)]
pub struct UniqueId(ncclUniqueId);

/// Element types NCCL can add, with NCCL's name for each.
pub trait NcclElement: DeviceRepr + Copy + Send + Sync + 'static {
    const NCCL_TYPE: c_int;
}

impl NcclElement for f32 {
    const NCCL_TYPE: c_int = ncclDataType_t::ncclFloat32 as c_int;
}
impl NcclElement for f64 {
    const NCCL_TYPE: c_int = ncclDataType_t::ncclFloat64 as c_int;
}
impl NcclElement for i32 {
    const NCCL_TYPE: c_int = ncclDataType_t::ncclInt32 as c_int;
}
impl NcclElement for i64 {
    const NCCL_TYPE: c_int = ncclDataType_t::ncclInt64 as c_int;
}

/// One rank of a communicator: one GPU, whose one stream every NCCL call of this rank is queued
/// on, so that an all-reduce is ordered after the kernels that wrote its input and before the
/// copies that read its output, with no event between them.
pub struct Comm {
    nccl: &'static Nccl,
    comm: ncclComm_t,
    gpu: Gpu,
    rank: usize,
    ranks: usize,
    /// False once an operation failed or timed out: the communicator is then aborted, not
    /// destroyed (destroying waits for operations that may never finish).
    healthy: bool,
}

// SAFETY: an NCCL communicator may be used from any thread, one thread at a time; `Comm` is
// not `Sync`, and `&mut self` on every operation keeps it to one thread at a time.
unsafe impl Send for Comm {}

impl Comm {
    /// Join the communicator `id` as `rank` of `ranks`, on `gpu`. Every rank must call this at
    /// about the same time, each from its own thread: it returns when all have joined.
    pub fn init(gpu: &Gpu, id: UniqueId, rank: usize, ranks: usize) -> Result<Comm> {
        let nccl = library()?;
        if rank >= ranks {
            return Err(Error::Nccl { during: "joining a communicator".into(), message: format!("rank {rank} of {ranks} does not exist") });
        }
        // NCCL takes the rank's device from the calling thread's current context.
        gpu.context().bind_to_thread().during("making the GPU current before ncclCommInitRank")?;
        let mut comm: ncclComm_t = std::ptr::null_mut();
        // SAFETY: one valid out-pointer; nranks and rank are in range; the id came from
        // ncclGetUniqueId in this process.
        let code = unsafe { (nccl.comm_init_rank)(&mut comm, ranks as c_int, id.0, rank as c_int) };
        nccl.check(code, None, || format!("joining a communicator of {ranks} as rank {rank} on GPU {} (ncclCommInitRank)", gpu.info().ordinal))?;
        Ok(Comm { nccl, comm, gpu: gpu.clone(), rank, ranks, healthy: true })
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    pub fn ranks(&self) -> usize {
        self.ranks
    }

    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    // ANCHOR: all_reduce
    /// Queue an all-reduce (sum) of the first `count` elements of `send` into `recv` on this
    /// rank's stream; every rank must queue the same call. Returns at once: [`Comm::wait`].
    pub fn all_reduce_sum<W, S, R>(&mut self, send: &S, recv: &mut R, count: usize) -> Result<()>
    where
        W: NcclElement,
        S: DevicePtr<W>,
        R: DevicePtrMut<W>,
    {
        let during = || format!("queueing an all-reduce of {count} values as rank {} of {} (ncclAllReduce)", self.rank, self.ranks);
        if count > send.len() || count > recv.len() {
            return Err(Error::Nccl {
                during: during(),
                message: format!("the buffers hold {} and {} values", send.len(), recv.len()),
            });
        }
        self.gpu.context().bind_to_thread().during("making the GPU current before ncclAllReduce")?;
        let stream = self.gpu.stream().clone();
        let (src, _read) = send.device_ptr(&stream);
        let (dst, _write) = recv.device_ptr_mut(&stream);
        // SAFETY: src and dst are buffers on this rank's GPU holding at least `count` values of
        // W (checked above), and W's layout is the NCCL type named. The operation is queued on
        // the stream the buffers were allocated on, and cudarc frees buffers in that stream's
        // order, so they outlive it.
        let code = unsafe {
            (self.nccl.all_reduce)(src as *const c_void, dst as *mut c_void, count, W::NCCL_TYPE, SUM, self.comm, stream.cu_stream() as *mut c_void)
        };
        let checked = self.nccl.check(code, Some(self.comm), during);
        self.healthy &= checked.is_ok();
        checked
    }
    // ANCHOR_END: all_reduce

    /// Wait until everything queued on this rank's stream has finished, but no longer than
    /// `deadline`: an all-reduce whose peer never joins waits forever, and a test must fail
    /// instead. After a timeout the communicator is aborted when dropped.
    pub fn wait(&mut self, deadline: Duration) -> Result<()> {
        let waited = wait_for_stream(&self.gpu, deadline, &format!("rank {} of {}", self.rank, self.ranks));
        self.healthy &= waited.is_ok();
        waited
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        let (free, what) = if self.healthy { (self.nccl.comm_destroy, "ncclCommDestroy") } else { (self.nccl.comm_abort, "ncclCommAbort") };
        let _ = self.gpu.context().bind_to_thread();
        // SAFETY: a communicator this library made, freed once; destroy only when every
        // operation finished (healthy), abort otherwise.
        let code = unsafe { free(self.comm) };
        if code != 0 {
            // Nothing can be returned from drop, and a panic here would hide the first error.
            eprintln!("warning: {what} on rank {} returned ncclResult_t {code}", self.rank);
        }
    }
}

/// Wait for `gpu`'s stream to drain by polling an event, giving up after `deadline`. Kernel
/// faults surface here as errors, as they would from a blocking synchronize.
pub fn wait_for_stream(gpu: &Gpu, deadline: Duration, who: &str) -> Result<()> {
    let event = gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING)).during("creating an event")?;
    event.record(gpu.stream()).during("recording an event")?;
    let started = Instant::now();
    let mut pause = Duration::from_micros(20);
    loop {
        if event.try_is_complete().during(&format!("waiting for the GPU ({who})"))? {
            return Ok(());
        }
        if started.elapsed() > deadline {
            return Err(Error::Nccl {
                during: format!("waiting for the GPU ({who})"),
                message: format!(
                    "not finished after {:.0} s: an all-reduce is probably waiting for a rank that never \
                     joined it (NCCL_DEBUG=INFO shows where each rank is)",
                    deadline.as_secs_f64()
                ),
            });
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(2));
    }
}

/// What [`keep_multicast_off`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Multicast {
    /// `NCCL_NVLS_ENABLE` was unset; this process set it to 0.
    TurnedOff,
    /// It was already set (to this value) by whoever started the process, and left alone.
    AlreadySet(String),
}

static MULTICAST: OnceLock<Multicast> = OnceLock::new();

/// Set `NCCL_NVLS_ENABLE=0` unless it is already set, before NCCL initialises.
///
/// NVLS is NCCL's use of NVLink SHARP: all-reduce in the NVSwitch, through multicast memory
/// objects (`cuMulticastCreate`). On this project's shared two-GPU host, a program that uses
/// multicast can take the GPUs out of service for everyone, and a one-process sum gains nothing
/// from it, so nothing the project starts may turn it on; nothing in the crate calls
/// `cuMulticastCreate` either. NCCL reads the variable once, when it initialises, which is why
/// the binaries call this first thing in `main`, while they have one thread (setting the
/// environment while other threads read it is a data race in C); loading NCCL calls it too.
pub fn keep_multicast_off() -> Multicast {
    MULTICAST
        .get_or_init(|| match std::env::var(NVLS_VAR) {
            Ok(value) => Multicast::AlreadySet(value),
            Err(_) => {
                std::env::set_var(NVLS_VAR, "0");
                Multicast::TurnedOff
            }
        })
        .clone()
}

/// `NCCL_NVLS_ENABLE=0 (set by this program)`, for output and results files.
pub fn multicast_setting() -> String {
    match keep_multicast_off() {
        Multicast::TurnedOff => format!("{NVLS_VAR}=0 (set by this program)"),
        Multicast::AlreadySet(v) => format!("{NVLS_VAR}={v} (set by the caller)"),
    }
}

/// The variable that picks NCCL's all-reduce algorithm.
pub const ALGO_VAR: &str = "NCCL_ALGO";

/// The algorithm `NCCL_ALGO` asks for, as the results files record it: unset is NCCL's own
/// choice. Anything but one of `Ring` and `Tree` is refused, with the reason: NVLS needs the
/// multicast this project keeps off, and a list (`Ring,Tree`, `^NVLS`) leaves the choice to NCCL
/// without saying which one it made.
pub fn algorithm_setting() -> Result<Algorithm> {
    match std::env::var(ALGO_VAR) {
        Err(_) => Ok(Algorithm::Default),
        Ok(value) => parse_algorithm(&value),
    }
}

/// [`algorithm_setting`] of a value.
pub fn parse_algorithm(value: &str) -> Result<Algorithm> {
    let refuse = |reason: &str| Err(Error::Config { setting: format!("{ALGO_VAR}={value}"), reason: reason.into() });
    if value.to_ascii_lowercase().contains("nvls") {
        return refuse("NVLS needs NVLink multicast, which this project keeps off (NCCL_NVLS_ENABLE=0): on a shared machine it can take the GPUs out of service");
    }
    match Algorithm::parse(value) {
        Some(Algorithm::Default) | None => refuse("the book measures one algorithm per run: Ring or Tree (or leave it unset for NCCL's own choice)"),
        Some(a) => Ok(a),
    }
}

/// Ask NCCL for `algorithm` (set `NCCL_ALGO`, or leave it unset for NCCL's choice) before NCCL
/// initialises. Call it while the process has one thread, before the GPU is opened (setting the
/// environment while another thread reads it is a data race in C). Where the caller already set
/// `NCCL_ALGO`, it must say the same.
pub fn choose_algorithm(algorithm: Algorithm) -> Result<()> {
    let already = algorithm_setting()?;
    match (std::env::var(ALGO_VAR).is_ok(), algorithm.nccl_algo()) {
        (true, _) if already == algorithm => Ok(()),
        (true, _) => Err(Error::Config {
            setting: format!("--algo {}", algorithm.name()),
            reason: format!("{ALGO_VAR}={} is set in the environment; unset it, or ask for the same", std::env::var(ALGO_VAR).unwrap_or_default()),
        }),
        (false, None) => Ok(()),
        (false, Some(value)) => {
            std::env::set_var(ALGO_VAR, value);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ring_and_tree_are_taken_and_nvls_never() {
        assert_eq!(parse_algorithm("Ring").unwrap(), Algorithm::Ring);
        assert_eq!(parse_algorithm("tree").unwrap(), Algorithm::Tree);
        for bad in ["NVLS", "nvlstree", "^NVLS", "Ring,Tree", "CollNet", "default", ""] {
            let e = parse_algorithm(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("NCCL_ALGO={bad}")), "{bad}: {e}");
            assert_eq!(e.contains("multicast"), bad.to_ascii_lowercase().contains("nvls"), "{bad}: {e}");
        }
    }

    #[test]
    fn version_codes_decode_both_ways() {
        assert_eq!(decode_version(23203), (2, 32, 3));
        assert_eq!(decode_version(22703), (2, 27, 3));
        assert_eq!(decode_version(2804), (2, 8, 4));
    }

    #[test]
    fn nccl_enum_values_are_the_abi_ones() {
        // nccl.h has kept these values since NCCL 2.0; a shifted enum would add the wrong type.
        assert_eq!((f32::NCCL_TYPE, f64::NCCL_TYPE, i32::NCCL_TYPE, i64::NCCL_TYPE, SUM), (7, 8, 2, 4, 0));
    }
}
