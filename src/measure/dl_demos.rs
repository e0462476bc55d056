//! What the deep-learning chapters' planted bugs return on real inputs (`reduction dl-bench`
//! writes them to `plots/data/dl/<gpu>-demos.csv`), beside the correct kernel on f16 inputs near
//! f16's limit.

use crate::check::dl::{self as check, Conditioning};
use crate::element::Dtype;
use crate::error::Result;
use crate::gpu::Gpu;
use crate::kernels::dl::plan::{Choice, Team};
use crate::kernels::dl::runner::DlRunner;
use crate::kernels::dl::DlOp;
use crate::records::dl as records;
use crate::rows::RowLayout;

/// What the chapter's two planted bugs return on real inputs — the merge without the rescale, and
/// e^x without the shift — beside the correct kernel on f16 inputs up to ±6·10^4 (f16's largest
/// is 65504): the rows of `<gpu>-demos.csv`.
pub fn demos(gpu: &Gpu) -> Result<Vec<records::Demo>> {
    use crate::check::dl_mutants::ALL;
    let mut out = Vec::new();
    let cases: [(usize, usize, bool, Choice); 4] = [
        (4096, 1024, false, Choice { team: Team::Lanes(32), vpt: 8, block: 128 }),
        (4096, 1024, false, Choice { team: Team::Block, vpt: 8, block: 128 }),
        (1024, 32768, false, Choice { team: Team::Block, vpt: 8, block: 1024 }),
        (64, 4096, true, Choice { team: Team::Block, vpt: 8, block: 64 }),
    ];
    for name in ["rescale_missing", "shift_missing"] {
        let Some(mutant) = ALL.iter().find(|m| m.name == name) else { continue };
        let planted = mutant.spec()?;
        for &(m, n, huge, choice) in &cases {
            let layout = RowLayout::dense(m, n);
            let mut x: Vec<f32> = check::uniform(m * n, -1.0, 1.0, 77);
            if huge {
                for r in (1..m).step_by(3) {
                    x[r * n..(r + 1) * n].iter_mut().for_each(|v| *v += 1e4);
                }
            }
            let want = check::softmax(&x, layout, false);
            let dev = gpu.upload(&x)?;
            let mut y = gpu.alloc::<f32>(m * n)?;
            gpu.fill(&mut y, f32::NAN)?;
            let mut runner = DlRunner::new(gpu)?.with_choice(Some(choice)).replacing(mutant.original(), planted);
            let launch = runner.softmax(&dev.as_view(), layout, &mut y.as_view_mut(), false)?.expect("a launch");
            let got = gpu.download(&y)?;
            gpu.synchronize()?;
            let rel = got.iter().zip(&want).map(|(&g, &w)| ((g as f64) - w).abs() / w.abs().max(1e-30)).fold(0.0f64, |a, e| if e.is_nan() { a } else { a.max(e) });
            let nan_rows = (0..m).filter(|&r| got[r * n..(r + 1) * n].iter().any(|v| v.is_nan())).count();
            let sums: Vec<f64> = (0..m).map(|r| got[r * n..(r + 1) * n].iter().map(|&v| v as f64).sum()).filter(|s: &f64| !s.is_nan()).collect();
            let note = if sums.is_empty() {
                "every row NaN".to_string()
            } else {
                let (lo, hi) = sums.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &s| (a.min(s), b.max(s)));
                format!("rows of the output sum to {lo:.6} … {hi:.6}")
            };
            out.push(records::Demo { demo: name.into(), kernel: format!("{} ({})", launch.entry(), launch.team), dtype: Dtype::F32, m, n,
                kind: if huge { "every third row shifted by 10^4".into() } else { "uniform in [-1, 1)".into() }, max_rel_error: rel, nan_rows, rows: m, note });
        }
    }
    // f16 inputs up to ±6·10^4, the correct kernel.
    let (m, n) = (256, 4096);
    let layout = RowLayout::dense(m, n);
    let x: Vec<crate::element::f16> = check::uniform(m * n, -6e4, 6e4, 5);
    let want = check::softmax(&x, layout, false);
    let dev = gpu.upload(&x)?;
    let mut y = gpu.alloc::<crate::element::f16>(m * n)?;
    gpu.fill(&mut y, crate::element::f16::NAN)?;
    let mut runner = DlRunner::new(gpu)?;
    let launch = runner.softmax(&dev.as_view(), layout, &mut y.as_view_mut(), false)?.expect("a launch");
    let got: Vec<f64> = gpu.download(&y)?.iter().map(|v| v.to_f64()).collect();
    gpu.synchronize()?;
    let b = check::bound(DlOp::Softmax, "y", Dtype::F16, launch.depth(n as u64), Conditioning { spread: 1.2e5, ..Default::default() });
    let worst = check::worst_ratio(&got, &want, b);
    let nan_rows = (0..m).filter(|&r| got[r * n..(r + 1) * n].iter().any(|v| v.is_nan())).count();
    out.push(records::Demo { demo: "f16_large".into(), kernel: format!("{} ({})", launch.entry(), launch.team), dtype: Dtype::F16, m, n,
        kind: "uniform(-6e4; 6e4)".into(), max_rel_error: worst, nan_rows, rows: m, note: format!("check {}: worst error / bound {worst:.3}", if worst <= 1.0 { "ok" } else { "FAIL" }) });
    Ok(out)
}
