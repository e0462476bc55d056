//! How the rank threads agree: a reusable meeting point where every rank arrives with a vote
//! and leaves with all of them, which a rank that stops early breaks instead of leaving the
//! others waiting.

use crate::error::{Error, Result};
use std::sync::{Condvar, Mutex};


/// Why a rank stopped.
pub(crate) enum Stop {
    /// Its own error.
    Own(Error),
    /// Another rank failed, and this one stopped at the next rendezvous.
    Peer(String),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Own(e)
    }
}

/// What one rank brings to a rendezvous.
#[derive(Clone, Debug, Default)]
pub(crate) struct Vote {
    /// Why this rank cannot go on, if it cannot.
    pub failure: Option<String>,
    pub number: f64,
}

/// A reusable meeting point for the rank threads: every rank arrives with a [`Vote`] and leaves
/// with all of them. Unlike `std::sync::Barrier` it can be broken: a rank that stops early
/// releases the others with an error instead of leaving them waiting for ever.
pub(crate) struct Rendezvous {
    ranks: usize,
    state: Mutex<RendezvousState>,
    arrived: Condvar,
}

struct RendezvousState {
    round: u64,
    waiting: usize,
    votes: Vec<Vote>,
    last: Vec<Vote>,
    broken: Option<String>,
}

impl Rendezvous {
    pub(crate) fn new(ranks: usize) -> Rendezvous {
        let state = RendezvousState { round: 0, waiting: 0, votes: vec![Vote::default(); ranks], last: Vec::new(), broken: None };
        Rendezvous { ranks, state: Mutex::new(state), arrived: Condvar::new() }
    }

    /// Wait for every rank; all votes, in rank order, or why the meeting was broken.
    pub(crate) fn meet(&self, rank: usize, vote: Vote) -> std::result::Result<Vec<Vote>, String> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = &s.broken {
            return Err(why.clone());
        }
        let round = s.round;
        s.votes[rank] = vote;
        s.waiting += 1;
        if s.waiting == self.ranks {
            s.last = std::mem::replace(&mut s.votes, vec![Vote::default(); self.ranks]);
            s.waiting = 0;
            s.round += 1;
            self.arrived.notify_all();
            return Ok(s.last.clone());
        }
        while s.round == round && s.broken.is_none() {
            s = self.arrived.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        // The round completed (its votes stay in `last` until the next one can complete, which
        // needs this rank), or a rank stopped before arriving.
        if s.round != round { Ok(s.last.clone()) } else { Err(s.broken.clone().unwrap_or_default()) }
    }

    /// All ranks agree to go on, or every rank learns which failed and why.
    pub(crate) fn all_ready(&self, rank: usize, mine: std::result::Result<(), String>) -> std::result::Result<(), String> {
        let votes = self.meet(rank, Vote { failure: mine.err(), number: 0.0 })?;
        let failed: Vec<String> = votes.iter().enumerate().filter_map(|(r, v)| v.failure.as_ref().map(|f| format!("rank {r}: {f}"))).collect();
        if failed.is_empty() { Ok(()) } else { Err(failed.join("; ")) }
    }

    // ANCHOR: vote
    /// Every rank says whether its step succeeded, and all go on or none does: a rank missing
    /// from the next step (a communicator, an all-reduce) would leave the others waiting inside
    /// NCCL for ever. This rank's value when every rank is ready; else why this rank stops: its
    /// own error, or the failures of its peers.
    pub(crate) fn vote<T>(&self, rank: usize, mine: Result<T>) -> std::result::Result<T, Stop> {
        let ready = mine.as_ref().map(|_| ()).map_err(|e| e.to_string());
        if let Err(why) = self.all_ready(rank, ready) {
            return Err(match mine {
                Err(own) => Stop::Own(own),
                Ok(_) => Stop::Peer(why),
            });
        }
        mine.map_err(Stop::Own)
    }
    // ANCHOR_END: vote

    /// The largest of the ranks' numbers: the same on every rank, so all decide alike.
    pub(crate) fn max(&self, rank: usize, number: f64) -> std::result::Result<f64, String> {
        Ok(self.meet(rank, Vote { failure: None, number })?.iter().map(|v| v.number).fold(f64::NEG_INFINITY, f64::max))
    }

    /// Release every rank waiting now or later: `rank` will not arrive.
    pub(crate) fn abandon(&self, rank: usize, why: &str) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.broken.is_none() {
            s.broken = Some(format!("rank {rank} stopped: {why}"));
        }
        self.arrived.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn a_broken_rendezvous_releases_the_waiting_ranks() {
        let r = Arc::new(Rendezvous::new(3));
        let waiter = { let r = r.clone(); std::thread::spawn(move || r.all_ready(0, Ok(()))) };
        std::thread::sleep(Duration::from_millis(20));
        r.abandon(2, "it failed");
        let got = waiter.join().unwrap();
        assert!(got.unwrap_err().contains("rank 2 stopped: it failed"));
        assert!(r.max(1, 1.0).is_err(), "later meetings are broken too");
    }

    #[test]
    fn rendezvous_rounds_share_the_votes() {
        let r = Arc::new(Rendezvous::new(2));
        let other = { let r = r.clone(); std::thread::spawn(move || (r.max(1, 7.0), r.all_ready(1, Err("no memory".into())))) };
        assert_eq!(r.max(0, 3.0), Ok(7.0));
        let mine = r.all_ready(0, Ok(()));
        let (theirs_max, theirs_ready) = other.join().unwrap();
        assert_eq!(theirs_max, Ok(7.0));
        assert_eq!(mine.unwrap_err(), "rank 1: no memory");
        assert_eq!(theirs_ready.unwrap_err(), "rank 1: no memory");
    }

    #[test]
    fn a_vote_stops_every_rank_when_one_fails() {
        let r = Arc::new(Rendezvous::new(2));
        let other = { let r = r.clone(); std::thread::spawn(move || r.vote(1, Err::<u32, _>(Error::NoGpu("rank 1 has no memory".into())))) };
        match r.vote(0, Ok(7u32)) {
            Err(Stop::Peer(why)) => assert!(why.contains("rank 1: no CUDA GPU found: rank 1 has no memory"), "{why}"),
            _ => panic!("rank 0 went on alone"),
        }
        assert!(matches!(other.join().unwrap(), Err(Stop::Own(Error::NoGpu(_)))));
    }
}
