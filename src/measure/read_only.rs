//! The ceiling of a sum, measured the way the kernels are: the read-only kernel
//! (`kernels/read_only.cu`) reads every byte once with 16-byte loads and writes one partial value
//! per block, at every shape of [`READ_ONLY_SHAPES`], at every size, with the inputs rotated (and
//! left in L2 at the resident sizes). The fastest shape at each size is the ceiling there, as
//! each sum is measured at the block size that suits the size: the benchmark's `read_only` rows.

use super::bench::{note, BenchConfig, Pool};
use super::{row, Input, Measured};
use crate::runtime::timing::time_graph;
use crate::data::{Checked, Reference};
use crate::element::Element;
use crate::error::{During, Result};
use crate::gpu::Gpu;
use crate::kernels::{ReadOnlyShape, READ_ONLY, READ_ONLY_SHAPES};
use crate::records::bench::{Cache, Row, Status, READ_ONLY_KERNEL};
use crate::runtime::timing::GraphTiming;
use cudarc::driver::{CudaFunction, CudaSlice, CudaView, LaunchConfig, PushKernelArg};
use indicatif::ProgressBar;

/// The title of a shape's row: `read-only sum, 512 threads × 8 loads`.
pub fn shape_title(shape: ReadOnlyShape) -> String {
    shape.title()
}

/// The shape a row of the read-only kernel was measured at, from its title (see
/// [`ReadOnlyShape::from_title`]).
pub fn shape_of(row: &Row) -> Option<ReadOnlyShape> {
    ReadOnlyShape::from_title(&row.title)
}

/// Run the read-only kernel once at `shape` over `input` and return the partial value each block
/// wrote (the buffer poisoned first): what the tests and compute-sanitizer check.
pub fn partials<T: Checked>(gpu: &Gpu, shape: ReadOnlyShape, input: &cudarc::driver::CudaView<'_, T>) -> Result<Vec<T::Acc>> {
    let n = input.len();
    let grid = shape.grid(n, std::mem::size_of::<T>());
    if grid == 0 {
        return Ok(Vec::new());
    }
    let function = gpu.function(&READ_ONLY, &shape.entry_name::<T>())?;
    let mut partials = gpu.alloc::<T::Acc>(grid)?;
    gpu.fill(&mut partials, <T::Acc as Element>::POISON)?;
    let n64 = n as u64;
    let mut launch = gpu.stream().launch_builder(&function);
    launch.arg(input).arg(&mut partials).arg(&n64);
    let launch_config = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (shape.block, 1, 1), shared_mem_bytes: 0 };
    // SAFETY: read_only_b<B>_l<L>_<T>(const In*, Acc*, u64): `input` holds n values of T; the
    // caller's view must start on a 16-byte boundary (the kernel's precondition); `partials`
    // holds `grid` values, one per block; the block is the entry's BLOCK.
    unsafe { launch.launch(launch_config) }.during("launching the read-only kernel")?;
    gpu.download(&partials)
}

/// Whether the partial values the read-only kernel wrote add up to the input's exact sum (the
/// benchmark's inputs are exact by construction: every partial is an integer).
pub fn partials_add_up<A: Element>(partials: &[A], reference: &Reference) -> std::result::Result<(), String> {
    let mut sum = 0i64;
    for (b, p) in partials.iter().enumerate() {
        let v = p.to_f64();
        if !v.is_finite() || v.fract() != 0.0 {
            return Err(format!("block {b} wrote {v}, not an integer (a value not written, or read from outside the input)"));
        }
        sum += v as i64;
    }
    if sum == reference.sum_i64 {
        Ok(())
    } else {
        Err(format!("the partials add up to {sum}, the input to {}", reference.sum_i64))
    }
}

/// Every shape at every size and cache mode of `config`: `(the fastest shape's row at each size,
/// every shape's row)`. A shape whose partials do not add up to the exact sum is reported and not
/// timed, so that the ceiling is never a kernel that skipped some of the input.
pub(crate) fn ceiling<T: Checked>(
    gpu: &Gpu,
    config: &BenchConfig,
    pool: &Pool<T>,
    bar: &ProgressBar,
    reference: &mut dyn FnMut(usize) -> Reference,
) -> Result<(Vec<Row>, Vec<Row>)> {
    let elem = std::mem::size_of::<T>();
    let functions = READ_ONLY_SHAPES
        .iter()
        .map(|shape| Ok((*shape, gpu.function(&READ_ONLY, &shape.entry_name::<T>())?)))
        .collect::<Result<Vec<_>>>()?;
    let measured: Vec<(usize, Cache)> = config.sizes.iter().map(|&n| (n, Cache::Rotated))
        .chain(config.resident_sizes.iter().map(|&n| (n, Cache::Resident)))
        .collect();
    let (mut best_rows, mut shape_rows) = (Vec::new(), Vec::new());
    for (n, cache) in measured {
        bar.set_message(format!("read_only {} n={n} {} ({} shapes)", T::SUFFIX, cache.name(), READ_ONLY_SHAPES.len()));
        bar.inc(1);
        if n == 0 || n > pool.len() {
            continue;
        }
        let mut at_this_size: Vec<Row> = Vec::new();
        let reference = reference(n);
        for (shape, function) in &functions {
            let timing = match check_then_time(gpu, function, *shape, n, config.target_ms, |j| pool.view(n, j, cache), |w| partials_add_up(w, &reference))? {
                Ok(timing) => timing,
                Err(why) => {
                    note(bar, format!("read_only {} {} n={n}: {why}; this shape is not timed there", shape.label(), T::SUFFIX));
                    continue;
                }
            };
            let working_set = pool.working_set(n, timing.ops_per_graph, cache);
            let title = shape_title(*shape);
            let what = Measured { kernel: READ_ONLY_KERNEL, chapter: 0, title: &title, status: Status::Ceiling };
            let input = Input { dtype: T::DTYPE, n, block: shape.block, cache, bytes: n * elem, working_set_bytes: working_set };
            at_this_size.push(row(what, input, &timing));
        }
        if let Some(best) = at_this_size.iter().min_by(|a, b| a.median_us.total_cmp(&b.median_us)) {
            let shape = shape_of(best).expect("a title written by shape_title");
            best_rows.push(Row { title: format!("read-only sum, fastest of {} shapes: {} threads × {} loads", at_this_size.len(), shape.block, shape.loads), ..best.clone() });
        }
        shape_rows.extend(at_this_size);
    }
    Ok((best_rows, shape_rows))
}

/// One shape of the read-only kernel over `n` values at `view(j)`: launched once into a poisoned
/// buffer of one partial per block, its partials judged by `check`, then timed with the operations
/// rotating through `view`; `Ok(Err(why))` where the check refused it (and it was not timed).
fn check_then_time<'a, T: Checked>(
    gpu: &Gpu,
    function: &CudaFunction,
    shape: ReadOnlyShape,
    n: usize,
    target_ms: f64,
    mut view: impl FnMut(usize) -> CudaView<'a, T>,
    check: impl FnOnce(&[T::Acc]) -> std::result::Result<(), String>,
) -> Result<std::result::Result<GraphTiming, String>> {
    let grid = shape.grid(n, std::mem::size_of::<T>());
    // One partial per block: a buffer of exactly the grid, so that poisoning it and reading it
    // back cost what this shape writes, not what the smallest tile would.
    let mut partials: CudaSlice<T::Acc> = gpu.alloc::<T::Acc>(grid.max(1))?;
    let launch_config = LaunchConfig { grid_dim: (grid as u32, 1, 1), block_dim: (shape.block, 1, 1), shared_mem_bytes: 0 };
    let n64 = n as u64;
    let mut sum_once = |j: usize, partials: &mut CudaSlice<T::Acc>| -> Result<()> {
        let source = view(j);
        let mut launch = gpu.stream().launch_builder(function);
        launch.arg(&source).arg(partials).arg(&n64);
        // SAFETY: read_only_b<B>_l<L>_<T>(const In*, Acc*, u64): the callers' views hold n values
        // of T and start on a 16-byte boundary (the benchmark's pool offsets are 1 KiB apart, the
        // others' multiples of 256 values), as the 16-byte loads need; `partials` holds `grid`
        // values, one per block; the block is the entry's BLOCK.
        unsafe { launch.launch(launch_config) }.during("launching the read-only kernel").map(|_| ())
    };
    gpu.fill(&mut partials, <T::Acc as Element>::POISON)?;
    sum_once(0, &mut partials)?;
    let written = gpu.download(&partials)?;
    if let Err(why) = check(&written[..grid]) {
        return Ok(Err(why));
    }
    Ok(Ok(time_graph(gpu, target_ms, |j| sum_once(j, &mut partials))?))
}

/// The read-only kernel as another experiment's yardstick (the operators', the deep-learning
/// reductions'): every shape over `n` values at `view(j)` (operation j of a timing reads there),
/// the fastest shape returned with its timing, as the benchmark's ceiling is the fastest shape at
/// each size. Each shape's partials are checked before it is timed: the buffer is poisoned, so
/// every block must have written one; none may be NaN or infinite; integers must add up to the
/// exact sum, floats to `reference` within the bound of one partial's additions
/// (`tile × 2^-23 × Σ|x|`). That bound is loose for random signs (a lost block can hide in it),
/// which is why the benchmark, whose inputs are exact by construction, checks the same kernel
/// exactly at every shape and size (`ceiling`, in this file); here the check keeps a shape that reads
/// nothing, or reads the wrong type, from becoming anyone's ceiling.
pub fn fastest_shape<'a, T: Checked>(
    gpu: &Gpu,
    n: usize,
    target_ms: f64,
    reference: &Reference,
    mut view: impl FnMut(usize) -> CudaView<'a, T>,
) -> Result<(ReadOnlyShape, GraphTiming)> {
    let elem = std::mem::size_of::<T>();
    let mut best: Option<(ReadOnlyShape, GraphTiming, f64)> = None;
    let mut refused = Vec::new();
    for shape in READ_ONLY_SHAPES {
        let function = gpu.function(&READ_ONLY, &shape.entry_name::<T>())?;
        let timing = match check_then_time(gpu, &function, shape, n, target_ms, &mut view, |w| partials_within(w, reference, shape.tile(elem)))? {
            Ok(timing) => timing,
            Err(why) => {
                refused.push(format!("{}: {why}", shape.label()));
                continue;
            }
        };
        let median = crate::records::summary::median(&timing.per_op_us);
        if best.as_ref().is_none_or(|(_, _, m)| median < *m) {
            best = Some((shape, timing, median));
        }
    }
    best.map(|(shape, timing, _)| (shape, timing)).ok_or_else(|| crate::error::Error::WrongSum {
        what: format!("the read-only kernel on {n} {} values", T::SUFFIX),
        why: format!("no shape's partials passed: {}", refused.join("; ")),
    })
}

/// The check of [`fastest_shape`]: every partial written and finite; integers exact, floats within
/// `tile × 2^-23 × Σ|x|` of the reference.
fn partials_within<A: Element>(partials: &[A], reference: &Reference, tile: usize) -> std::result::Result<(), String> {
    let mut sum = 0f64;
    for (b, p) in partials.iter().enumerate() {
        let v = p.to_f64();
        if *p == A::POISON || !v.is_finite() {
            return Err(format!("block {b} wrote {v} (the poison is {:?})", A::POISON));
        }
        sum += v;
    }
    if !A::IS_FLOAT {
        return if sum == reference.sum_i64 as f64 { Ok(()) } else { Err(format!("the partials add up to {sum}, the input to {}", reference.sum_i64)) };
    }
    let bound = tile as f64 * f32::EPSILON as f64 * reference.abs_sum;
    if (sum - reference.sum_f64).abs() <= bound {
        Ok(())
    } else {
        Err(format!("the partials add up to {sum}, the input to {} (bound {bound:e})", reference.sum_f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Dtype;

    fn row(title: String) -> Row {
        Row {
            kernel: READ_ONLY_KERNEL.into(), chapter: 0, title, status: Status::Ceiling, dtype: Dtype::F32, n: 1 << 20, block: 256,
            cache: Cache::Rotated, median_us: 1.0, min_us: 1.0, max_us: 1.0, bytes: 4 << 20, working_set_bytes: 0, repeats: 15,
            method: String::new(),
        }
    }

    #[test]
    fn a_rows_shape_is_read_back_from_its_title() {
        for shape in READ_ONLY_SHAPES {
            assert_eq!(shape_of(&row(shape_title(shape))), Some(shape));
            let best = format!("read-only sum, fastest of 20 shapes: {} threads × {} loads", shape.block, shape.loads);
            assert_eq!(shape_of(&row(best)), Some(shape));
        }
        assert_eq!(shape_of(&row("read-only sum (every byte read once)".into())), None, "rows of the one-shape kernel have none");
    }

    #[test]
    fn every_shape_has_an_entry_and_a_grid_that_covers_the_input() {
        let names: Vec<String> = READ_ONLY_SHAPES.iter().map(|s| s.entry_name::<f32>()).collect();
        assert!(names.contains(&"read_only_b512_l8_f32".to_string()) && names.contains(&"read_only_b128_l1_f32".to_string()));
        for shape in READ_ONLY_SHAPES {
            assert!(READ_ONLY.source.contains(&format!("READ_ONLY_LOADS_1_TO_16(suffix, In, Acc, {})", shape.block)), "{shape:?}");
            for (n, elem) in [(1usize, 4usize), (4097, 4), (1 << 20, 2), ((1 << 22) + 1, 8)] {
                let grid = shape.grid(n, elem);
                assert!(grid * shape.tile(elem) >= n && (grid - 1) * shape.tile(elem) < n, "{shape:?} n={n}");
            }
        }
    }

    #[test]
    fn partials_that_miss_a_value_or_were_never_written_do_not_add_up() {
        let reference = Reference { n: 4, sum_f64: 10.0, sum_i64: 10, abs_sum: 10.0, exact: true };
        assert!(partials_add_up(&[4.0f32, 6.0], &reference).is_ok());
        assert!(partials_add_up(&[4.0f32, 5.0], &reference).unwrap_err().contains("add up to 9"));
        assert!(partials_add_up(&[4.0f32, f32::NAN], &reference).unwrap_err().contains("block 1"));
        assert!(partials_add_up(&[4i32, 6], &reference).is_ok());
    }
}
