//! Beyond one GPU: the input is split into one contiguous shard per GPU, each GPU sums its shard
//! with the book's kernel, and NCCL adds the per-GPU sums across GPUs, leaving the total on
//! every one of them. One host thread per GPU ("rank"), as NCCL's one-device-per-thread model
//! has it: each thread generates and uploads its own shard, so the host work is parallel too.
//!
//! Robust by construction, because a rank that stops early leaves its peers waiting inside NCCL
//! for ever: every step that can fail (opening, allocating, filling, compiling, summing) is done
//! before the communicator exists, and the ranks vote before joining it; a rank that fails or
//! panics releases the others from every later rendezvous; every wait on an NCCL operation has
//! a deadline, after which the communicator is aborted; and the caller waits for the ranks
//! with a deadline of its own.
//!
//! - [`ranks`]: the GPUs, one thread per rank, and [`rendezvous`]: how the ranks agree.
//! - [`shard`](mod@shard): which part of the input each rank sums; [`input`]: the values, made by each rank
//!   from their global indices; [`summable`]: the element types, and the wider type their
//!   partial sums cross GPUs in.
//! - [`sum`](mod@sum): the two-level sum, checked, sharded or gathered ([`Mode`]);
//!   [`simulate`]: both worked out on the CPU for any number of GPUs, and [`determinism`]: the
//!   same measured on 1, 2, 4, 8 GPUs; [`nccl`]: NCCL, opened at run time;
//!   [`allreduce`]: NCCL's all-reduce measured, written as [`crate::records::allreduce`] (the
//!   book draws its table and chart).

pub mod allreduce;
pub mod determinism;
pub mod input;
pub mod nccl;
pub mod ranks;
pub mod rendezvous;
pub mod shard;
pub mod simulate;
pub mod sum;
pub mod summable;

pub use input::{combine, fill, pattern_reference, pattern_sum, pattern_value, Input};
pub use ranks::Ranks;
pub use shard::{chunk_shard, chunk_shards, shard, shards};
pub use sum::{sum, Mode, RankSum, SumOptions, SumReport};
pub use summable::{Summable, Value};
