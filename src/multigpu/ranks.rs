//! The GPUs of a multi-GPU operation, one host thread per GPU ("rank"), as NCCL's
//! one-device-per-thread model has it, and the caller's wait for them, with a deadline.

use super::rendezvous::{Rendezvous, Stop};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};


/// The GPUs a multi-GPU operation runs on, opened once: rank r is GPU r. One operation runs on
/// them at a time (a second waits): two all-reduces queued on the same streams in different
/// orders on different GPUs would wait for each other for ever.
#[derive(Clone)]
pub struct Ranks {
    gpus: Vec<Gpu>,
    visible: usize,
    busy: Arc<Mutex<()>>,
}

impl Ranks {
    /// Every visible GPU (`count: None`), or the first `count` of them.
    pub fn open(count: Option<usize>) -> Result<Ranks> {
        let visible = crate::gpu::probe()?;
        let count = count.unwrap_or(visible);
        if count == 0 {
            return Err(Error::NoGpu("asked for 0 GPUs; a sum needs at least one".into()));
        }
        if count > visible {
            return Err(Error::NoGpu(format!(
                "asked for {count} GPUs, but only {visible} {} visible (CUDA_VISIBLE_DEVICES={})",
                if visible == 1 { "is" } else { "are" },
                std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "unset".into())
            )));
        }
        let gpus = (0..count).map(Gpu::open_ordinal).collect::<Result<Vec<_>>>()?;
        Ok(Ranks { gpus, visible, busy: Arc::new(Mutex::new(())) })
    }

    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// How many GPUs the driver shows this process (the ranks may be fewer).
    pub fn visible(&self) -> usize {
        self.visible
    }

    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// `2 × NVIDIA H200`, or the names one by one where they differ.
    pub fn describe(&self) -> String {
        let names: Vec<&str> = self.gpus.iter().map(|g| g.info().name.as_str()).collect();
        if names.windows(2).all(|w| w[0] == w[1]) {
            format!("{} × {}", names.len(), names[0])
        } else {
            names.join(" + ")
        }
    }

    /// Why there is one rank, said so that a reader of the output knows NCCL crossed no link.
    pub fn note(&self) -> Option<String> {
        match (self.len(), self.visible) {
            (1, 1) => Some("one rank: only one GPU is visible, so NCCL's all-reduce has no other GPU to add from and returns the partial sum itself".into()),
            (1, v) => Some(format!("one rank of the {v} visible GPUs (as asked): NCCL's all-reduce returns the partial sum itself")),
            _ => None,
        }
    }
}

/// Run `work` on one thread per rank and return the ranks' results in rank order, or the first
/// error a rank had of its own. Gives up after `deadline`, leaving stuck threads behind (they
/// end with the process): a rank stuck inside NCCL cannot be stopped from outside.
pub(crate) fn run_ranks<R, F>(ranks: &Ranks, deadline: Duration, work: F) -> Result<Vec<R>>
where
    R: Send + 'static,
    F: Fn(usize, &Gpu, &Rendezvous) -> std::result::Result<R, Stop> + Send + Sync + 'static,
{
    let _one_at_a_time = ranks.busy.lock().unwrap_or_else(|p| p.into_inner());
    run_threads(ranks.gpus(), deadline, work)
}

/// [`run_ranks`] on any per-rank context (a GPU, or nothing in the tests of this file).
fn run_threads<C, R, F>(contexts: &[C], deadline: Duration, work: F) -> Result<Vec<R>>
where
    C: Clone + Send + 'static,
    R: Send + 'static,
    F: Fn(usize, &C, &Rendezvous) -> std::result::Result<R, Stop> + Send + Sync + 'static,
{
    let count = contexts.len();
    let rendezvous = Arc::new(Rendezvous::new(count));
    let work = Arc::new(work);
    let (sender, receiver) = mpsc::channel();
    for (rank, gpu) in contexts.iter().enumerate() {
        let (gpu, meeting, work, sender) = (gpu.clone(), rendezvous.clone(), work.clone(), sender.clone());
        let spawned = std::thread::Builder::new().name(format!("rank-{rank}")).spawn(move || {
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| work(rank, &gpu, &meeting)))
                .unwrap_or_else(|panic| Err(Stop::Own(Error::Thread { during: format!("running rank {rank}"), message: panic_text(&panic) })));
            if let Err(stop) = &outcome {
                let why = match stop {
                    Stop::Own(e) => e.to_string(),
                    Stop::Peer(why) => why.clone(),
                };
                meeting.abandon(rank, &why);
            }
            let _ = sender.send((rank, outcome));
        });
        if let Err(e) = spawned {
            rendezvous.abandon(rank, "its thread could not start");
            return Err(Error::Thread { during: format!("starting the thread of rank {rank}"), message: e.to_string() });
        }
    }
    drop(sender);
    let started = Instant::now();
    let mut outcomes: Vec<Option<std::result::Result<R, Stop>>> = (0..count).map(|_| None).collect();
    while outcomes.iter().any(Option::is_none) {
        let left = deadline.saturating_sub(started.elapsed());
        match receiver.recv_timeout(left) {
            Ok((rank, outcome)) => outcomes[rank] = Some(outcome),
            Err(_) => {
                let missing: Vec<usize> = outcomes.iter().enumerate().filter(|(_, o)| o.is_none()).map(|(r, _)| r).collect();
                return Err(Error::Nccl {
                    during: "waiting for every rank to finish".into(),
                    message: format!(
                        "rank(s) {missing:?} still running after {:.0} s; a rank is probably stuck in NCCL \
                         (NCCL_DEBUG=INFO shows where)",
                        deadline.as_secs_f64()
                    ),
                });
            }
        }
    }
    let outcomes: Vec<std::result::Result<R, Stop>> = outcomes.into_iter().flatten().collect();
    let mut results = Vec::with_capacity(count);
    let mut peer_only = None;
    for outcome in outcomes {
        match outcome {
            Ok(r) => results.push(r),
            Err(Stop::Own(e)) => return Err(e),
            Err(Stop::Peer(why)) => peer_only = peer_only.or(Some(why)),
        }
    }
    match peer_only {
        Some(why) => Err(Error::Nccl { during: "running the ranks".into(), message: why }),
        None => Ok(results),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_else(|| "(no message)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_return_in_order_and_the_first_own_error_wins() {
        let three = [(), (), ()];
        let ok = run_threads(&three, Duration::from_secs(10), |rank, _, rv| {
            rv.all_ready(rank, Ok(())).map_err(Stop::Peer)?;
            Ok(rank * 10)
        });
        assert_eq!(ok.unwrap(), vec![0, 10, 20]);
        // Rank 1 fails before the vote; the others learn it there and stop, none hangs.
        let failed = run_threads(&three, Duration::from_secs(10), |rank, _, rv| {
            let mine = if rank == 1 { Err(Error::NoGpu("rank 1 has no memory".into())) } else { Ok(()) };
            rv.vote(rank, mine)?;
            Ok(rank)
        });
        assert_eq!(failed.unwrap_err(), Error::NoGpu("rank 1 has no memory".into()));
    }

    #[test]
    fn two_four_and_eight_ranks_meet_agree_and_stop_together() {
        for count in [2, 4, 8] {
            let contexts = vec![(); count];
            // Every rank brings its number to every rendezvous; all leave with the largest.
            let ok = run_threads(&contexts, Duration::from_secs(10), |rank, _, rv| {
                rv.all_ready(rank, Ok(())).map_err(Stop::Peer)?;
                let mut seen = Vec::new();
                for round in 0..5 {
                    seen.push(rv.max(rank, (rank * 10 + round) as f64).map_err(Stop::Peer)?);
                }
                Ok(seen)
            });
            let expected: Vec<f64> = (0..5).map(|round| ((count - 1) * 10 + round) as f64).collect();
            assert_eq!(ok.unwrap(), vec![expected; count], "{count} ranks");
            // The last rank fails its step; no rank goes on, and the error is its own.
            let started = Instant::now();
            let failed = run_threads(&contexts, Duration::from_secs(10), move |rank, _, rv| {
                let mine = if rank == count - 1 { Err(Error::NoGpu(format!("rank {rank} has no memory"))) } else { Ok(rank) };
                let got = rv.vote(rank, mine)?;
                rv.max(rank, 0.0).map_err(Stop::Peer)?;
                Ok(got)
            });
            assert_eq!(failed.unwrap_err(), Error::NoGpu(format!("rank {} has no memory", count - 1)), "{count} ranks");
            assert!(started.elapsed() < Duration::from_secs(5), "{count} ranks: someone waited for the deadline");
        }
    }

    #[test]
    fn a_rank_that_panics_releases_the_others() {
        let started = Instant::now();
        let got = run_threads(&[(), ()], Duration::from_secs(30), |rank, _, rv| {
            if rank == 0 {
                panic!("rank 0 is broken");
            }
            rv.all_ready(rank, Ok(())).map_err(Stop::Peer)?;
            Ok(())
        });
        match got.unwrap_err() {
            Error::Thread { during, message } => assert_eq!((during.as_str(), message.as_str()), ("running rank 0", "rank 0 is broken")),
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the other rank waited for the deadline");
    }

    #[test]
    fn a_stuck_rank_is_reported_at_the_deadline() {
        let got = run_threads(&[(), ()], Duration::from_millis(200), |rank, _, _| {
            if rank == 1 {
                std::thread::sleep(Duration::from_secs(3)); // as if inside NCCL
            }
            Ok(())
        });
        let e = got.unwrap_err().to_string();
        assert!(e.contains("rank(s) [1] still running"), "{e}");
    }
}
