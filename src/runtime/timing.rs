//! GPU time, measured one way everywhere: CUDA events recorded on the GPU's stream around the
//! work ([`EventTimer`]), and, for work that is short next to the host's launch overhead,
//! back-to-back operations captured into a CUDA graph and replayed between two events
//! ([`time_graph`]). What the times are summarised by (median, extremes) is
//! `records::summary`'s.

use crate::error::{During, Error, Result};
use crate::gpu::Gpu;
use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaGraph};

/// Two CUDA events on a GPU's stream: what was queued between [`EventTimer::start`] and
/// [`EventTimer::stop`] took [`EventTimer::elapsed_ms`] of GPU time.
pub struct EventTimer {
    gpu: Gpu,
    start: CudaEvent,
    end: CudaEvent,
}

impl EventTimer {
    pub fn new(gpu: &Gpu) -> Result<EventTimer> {
        let event = || gpu.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).during("creating an event");
        Ok(EventTimer { gpu: gpu.clone(), start: event()?, end: event()? })
    }

    /// Record the start on the stream: it fires when everything queued before it has run.
    pub fn start(&self) -> Result<()> {
        self.start.record(self.gpu.stream()).during("recording an event")
    }

    /// Record the end on the stream, after the work queued since [`EventTimer::start`].
    pub fn stop(&self) -> Result<()> {
        self.end.record(self.gpu.stream()).during("recording an event")
    }

    /// Wait for the end event, and the GPU time from the start to it, in milliseconds.
    pub fn elapsed_ms(&self) -> Result<f64> {
        self.end.synchronize().during("waiting for an event")?;
        Ok(self.start.elapsed_ms(&self.end).during("reading an event")? as f64)
    }

    /// The GPU time of what `work` queues, in milliseconds (waits for it).
    pub fn time_ms(&self, work: impl FnOnce() -> Result<()>) -> Result<f64> {
        self.start()?;
        work()?;
        self.stop()?;
        self.elapsed_ms()
    }

    /// `warmups` untimed runs of `work`, then the GPU time of each of `repeats` timed ones, in
    /// microseconds.
    pub fn repeat_us(&self, warmups: usize, repeats: usize, mut work: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
        for _ in 0..warmups {
            work()?;
        }
        self.gpu.synchronize()?;
        (0..repeats).map(|_| self.time_ms(&mut work).map(|ms| ms * 1e3)).collect()
    }
}

/// Sums captured per graph at most, and repeats of the graph at least and at most.
pub const MAX_OPS_PER_GRAPH: usize = 1000;
pub const MIN_REPEATS: usize = 15;
pub const MAX_REPEATS: usize = 51;

/// Per-operation GPU times of one graph measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphTiming {
    /// One per replay of the graph: its time over the operations it holds, in microseconds.
    pub per_op_us: Vec<f64>,
    /// Operations captured in the graph.
    pub ops_per_graph: usize,
}

impl GraphTiming {
    /// How the times were taken, for a results file's `method` column.
    pub fn method(&self) -> String {
        format!("graph of {} back-to-back, CUDA events", self.ops_per_graph)
    }
}

/// Capture back-to-back operations (operation j enqueued by `enqueue(j)`) into a CUDA graph
/// and time replays of it with CUDA events: GPU time per operation, free of the host's launch
/// overhead. One untimed replay first warms up; the graph size and the repeat count are chosen
/// so that the measurement takes about `target_ms` of GPU time.
pub fn time_graph(gpu: &Gpu, target_ms: f64, mut enqueue: impl FnMut(usize) -> Result<()>) -> Result<GraphTiming> {
    let timer = EventTimer::new(gpu)?;
    // Estimate one operation's time from a small graph, then size the real one.
    let mut ops = 4;
    let mut graph = capture(gpu, ops, &mut enqueue)?;
    graph.launch().during("replaying a graph")?;
    let estimate_ms = (timer.time_ms(|| graph.launch().during("replaying a graph"))? / ops as f64).max(1e-4);
    let wanted = ((target_ms / 4.0) / estimate_ms).ceil() as usize;
    if wanted > ops {
        ops = wanted.min(MAX_OPS_PER_GRAPH);
        graph = capture(gpu, ops, &mut enqueue)?;
        graph.launch().during("replaying a graph")?;
    }
    let graph_ms = estimate_ms * ops as f64;
    let repeats = ((target_ms / graph_ms).ceil() as usize).clamp(MIN_REPEATS, MAX_REPEATS);
    let per_op_us = timer.repeat_us(0, repeats, || graph.launch().during("replaying a graph"))?.into_iter().map(|us| us / ops as f64).collect();
    Ok(GraphTiming { per_op_us, ops_per_graph: ops })
}

/// Capture `ops` operations into a graph; the capture is ended whatever happened, so that the
/// stream is usable again.
fn capture(gpu: &Gpu, ops: usize, enqueue: &mut impl FnMut(usize) -> Result<()>) -> Result<CudaGraph> {
    let stream = gpu.stream();
    stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).during("starting a graph capture")?;
    let queued = (0..ops).try_for_each(&mut *enqueue);
    let graph = stream.end_capture(CUgraphInstantiate_flags(0)).during("finishing a graph capture");
    queued?;
    graph?.ok_or(Error::EmptyGraph)
}

/// One call as a caller who reads its result waits for it, by the host's clock: `call(j)`
/// (which must wait for the GPU, as reading a result does) ten times untimed, five to estimate,
/// then enough timed calls for about 4 × `target_ms` (31 to 401), in microseconds each. The
/// times come back as a [`GraphTiming`] of one operation per "graph", so that rows summarise
/// them the same way; their `method` is [`host_method`]'s.
pub fn time_calls(target_ms: f64, mut call: impl FnMut(usize) -> Result<()>) -> Result<GraphTiming> {
    for j in 0..10 {
        call(j)?;
    }
    let started = std::time::Instant::now();
    for j in 10..15 {
        call(j)?;
    }
    let estimate_ms = (started.elapsed().as_secs_f64() * 1e3 / 5.0).max(1e-3);
    let calls = ((target_ms * 4.0 / estimate_ms).ceil() as usize).clamp(31, 401);
    let mut per_op_us = Vec::with_capacity(calls);
    for j in 0..calls {
        let started = std::time::Instant::now();
        call(15 + j)?;
        per_op_us.push(started.elapsed().as_secs_f64() * 1e6);
    }
    Ok(GraphTiming { per_op_us, ops_per_graph: 1 })
}

/// The `method` of a host-visible row.
pub fn host_method(calls: usize) -> String {
    format!("host-visible: one call + its result in a host variable, host clock, median of {calls}")
}

/// Time `enqueue(j)` as a graph of back-to-back launches; where a graph cannot be captured (a
/// cooperative launch on an older driver), as batches of back-to-back launches between events.
pub fn time_graph_or_batches(gpu: &Gpu, target_ms: f64, mut enqueue: impl FnMut(usize) -> Result<()>) -> Result<GraphTiming> {
    match time_graph(gpu, target_ms, &mut enqueue) {
        Ok(t) => Ok(t),
        Err(graph_error) => {
            let timer = EventTimer::new(gpu)?;
            let one = timer.time_ms(|| enqueue(0))?.max(1e-3);
            let batch = ((target_ms / 8.0) / one).ceil().clamp(1.0, 1000.0) as usize;
            let mut j = 0;
            let times = timer.repeat_us(1, 15, || {
                for _ in 0..batch {
                    enqueue(j)?;
                    j += 1;
                }
                Ok(())
            })?;
            eprintln!("  (no graph: {graph_error}; timed as {batch} back-to-back launches)");
            Ok(GraphTiming { per_op_us: times.into_iter().map(|t| t / batch as f64).collect(), ops_per_graph: batch })
        }
    }
}
