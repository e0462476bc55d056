//! `dl_norms_lanes.md`: the norms' short rows (the lanes teams) by turns, call by call, with the
//! instructions Nsight Compute counted and the lanes switches' registers.

use super::super::dl::shape;
use super::super::turns::read_turns;
use super::switches::switches_table;
use crate::book::context::Context;
use crate::element::Dtype;
use crate::error::Result;
use crate::records::bench::Status;
use crate::records::dl as records;
use std::fmt::Write as _;

/// `dl_norms_lanes.md`: the norms' short rows (the lanes teams) with and without the test per pack,
/// and the two switches beside them, by turns (`plots/data/dl/experiments/norms-lanes/<call>/`:
/// `<variant>-<round>.csv` where the call's CSVs came back, `ln-switches.txt` and `ln-ncu.txt` the
/// call's printed summaries), then the instructions Nsight Compute counted in each call's profiles.
pub fn norms_lanes_markdown(c: &Context) -> Result<String> {
    let root = records::results_dir(&c.data_dir).join("experiments/norms-lanes");
    let mut calls: Vec<std::path::PathBuf> = std::fs::read_dir(&root).map(|d| d.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect()).unwrap_or_default();
    calls.sort();
    let mut tables = String::new();
    let mut profiles = Vec::new();
    let mut entries: Vec<String> = Vec::new();
    for dir in &calls {
        let name = dir.file_name().unwrap_or_default().to_string_lossy().to_string();
        let turns = read_turns(dir, |f| Ok(records::read_csv::<records::DlRow>(f)?.1))?;
        // (A call's folder may also hold its planner's and peers' files: the GPU from a turn's.)
        let is_turn = |f: &std::path::PathBuf| f.file_stem().and_then(|s| s.to_str()).and_then(|s| s.rsplit_once('-')).is_some_and(|(_, r)| r.parse::<u32>().is_ok());
        if let Some(first) = crate::records::csv_files(dir).into_iter().find(is_turn) {
            let gpu = records::read_csv::<records::DlRow>(&first)?.0.gpu;
            let mut variants: Vec<&str> = turns.iter().map(|t| t.variant.as_str()).collect();
            variants.sort_by_key(|v| (!v.starts_with("plain"), *v));
            variants.dedup();
            let notes: Vec<String> = variants.iter().map(|v| format!("`{v}`: {}", lanes_variant_note(v, &name))).collect();
            // The lanes switches change only the lanes entries: a row the planner gives a block is
            // shown, not counted.
            let lanes_only = |entry: &str| entry.contains("_lanes");
            let table = switches_table(dir, Some(&lanes_only), &format!(
                "on an {gpu}, the norms' short rows, where the planner takes teams of lanes. {} (`tests/gpu-host.sh ln-switches`)", notes.join("; ")))?;
            if !table.is_empty() {
                tables += &table;
                tables.push('\n');
            }
            for t in &turns {
                for r in t.rows.iter().filter(|r| r.status == Status::Correct) {
                    let e = r.entry().to_string();
                    if e.contains("_lanes") && !entries.contains(&e) {
                        entries.push(e);
                    }
                }
            }
        }
        if let Ok(text) = std::fs::read_to_string(dir.join("ln-ncu.txt")) {
            profiles.extend(ncu_instruction_counts(&text).into_iter().map(|p| (p, name.clone())));
        }
    }
    if tables.is_empty() {
        return Ok("*The norms' lanes are not measured by turns on any GPU (`plots/data/dl/experiments/norms-lanes/`).*\n".into());
    }
    entries.sort();
    let registers = lanes_registers_table(&c.data_dir.join(crate::records::registers::LANES_SWITCHES_FILE), &entries)?;
    Ok(format!("{tables}{}{registers}", instructions_sentence(&profiles)))
}

/// What a variant of the norms-lanes calls was, by its `switch_of` name; `plain` is the default
/// build of the call (`<gpu>-s<session>-call<n>`), which changed twice.
fn lanes_variant_note(variant: &str, call: &str) -> String {
    let session: u32 = call.split("-s").last().and_then(|s| s.split('-').next()?.parse().ok()).unwrap_or(u32::MAX);
    let call_number: u32 = call.rsplit("call").next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let text = match variant.split('-').next().unwrap_or(variant) {
        "plain" if session < 59 => "the build with a test per pack in every team (the default until then)",
        "plain" if session == 59 && call_number == 1 => "the build whose lanes go without the test and load γ and β in every row (the default until then)",
        "plain" => "today's default (LayerNorm's lanes stage γ and β once a block, the indices worked out in each row; RMSNorm's load γ in every row)",
        "untested" => "`-DDL_NORMS_UNTESTED`, no test where a team holds the row exactly (at these lanes entries the machine code of the default that followed)",
        "staged_lanes_untested" => "`-DDL_LANES_STAGED` too, γ and β staged once a block in shared memory, the packs' indices hoisted out of the rows' loop",
        "untested_halves" => "`-DOP_MERGE_EQUAL_HALVES` too, Chan's merge of equal halves without the division",
        "staged_lanes" => "`-DDL_LANES_STAGED`, γ and β of both norms staged once a block, the packs' indices hoisted out of the rows' loop (`DL_LANES_STAGED_ORDER=0`)",
        "staged_lanes_unhoisted" => "the same with the indices worked out in each row (`DL_LANES_STAGED_ORDER=3`; at LayerNorm's lanes the machine code of the default that followed)",
        "unstaged_lanes" => "`-DDL_LANES_UNSTAGED`, γ and β loaded in every row (the default until then)",
        _ => "an experiment switch (`tests/gpu-host.sh`'s `switch_of`)",
    };
    text.to_string()
}

/// The lanes entries' registers a thread under each lanes switch (`registers-sm_90.csv`, written
/// by `tests/nvrtc.rs`), with the blocks of 256 threads an SM that many registers allow.
fn lanes_registers_table(path: &std::path::Path, measured: &[String]) -> Result<String> {
    use crate::records::registers::{SwitchRegisters, LANES_SWITCHES};
    if !path.is_file() {
        return Ok(String::new());
    }
    let (header, rows) = crate::records::csv::read::<SwitchRegisters>(path)?;
    let nvrtc = crate::records::csv::value(&header, "nvrtc").unwrap_or("unknown").to_string();
    let variants: Vec<&str> = LANES_SWITCHES.iter().map(|v| v.0).filter(|v| rows.iter().any(|r| r.variant == *v)).collect();
    let mut out = format!(
        "\n*Registers a thread at sm_90 (ptxas through NVRTC {nvrtc}; `registers-sm_90.csv` in that folder, checked by `tests/nvrtc.rs`), and in brackets the blocks of 256 threads \
        an SM they allow (65,536 registers, allocated 8 a thread at a time), at the lanes entries the calls above ran:*\n\n| entry |");
    for v in &variants {
        write!(out, " {v} |").unwrap();
    }
    out.push_str("\n|---|");
    out.push_str(&"--:|".repeat(variants.len()));
    out.push('\n');
    for entry in measured {
        write!(out, "| `{entry}` |").unwrap();
        for v in &variants {
            match rows.iter().find(|r| r.variant == *v && &r.entry == entry) {
                Some(r) => {
                    let spills = if r.spill_store_bytes + r.spill_load_bytes > 0 { format!(", {} B spilled", r.spill_store_bytes) } else { String::new() };
                    write!(out, " {} ({}{spills}) |", r.registers, blocks_of_256(r.registers)).unwrap();
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    Ok(out)
}

/// Blocks of 256 threads an SM of 65,536 registers holds at `registers` a thread (allocated in
/// units of 8 a thread), at most 8 (2,048 threads).
fn blocks_of_256(registers: u32) -> u32 {
    let per_thread = registers.div_ceil(8).max(1) * 8;
    (65_536 / (per_thread * 256)).min(8)
}

/// One profile of `tests/gpu-host.sh ln-ncu`'s summary: op, type, M, N, variant, warp
/// instructions executed, duration under Nsight Compute (µs).
type Profile = (String, Dtype, usize, usize, String, f64, f64);

/// The profiles of an `ln-ncu` summary (`  <op>_<type>_<M>x<N>-<variant>: ...;Duration us D;...;
/// Executed Instructions inst N;...`); lines without both numbers are left out.
fn ncu_instruction_counts(text: &str) -> Vec<Profile> {
    let number = |rest: &str, key: &str| -> Option<f64> {
        let after = &rest[rest.find(key)? + key.len()..];
        after.split(';').next()?.trim().replace(',', "").parse().ok()
    };
    text.lines()
        .filter_map(|line| {
            let (name, rest) = line.trim().split_once(": ")?;
            let (case, variant) = name.rsplit_once('-')?;
            let (front, shape) = case.rsplit_once('_')?;
            let (op, dtype) = front.rsplit_once('_')?;
            let (m, n) = shape.split_once('x')?;
            let dtype = Dtype::parse(dtype)?;
            Some((op.to_string(), dtype, m.parse().ok()?, n.parse().ok()?, variant.to_string(), number(rest, "Executed Instructions inst")?, number(rest, "Duration us")?))
        })
        .collect()
}

/// Each profiled case's instructions, `plain` first and every other variant against it.
fn instructions_sentence(profiles: &[(Profile, String)]) -> String {
    let mut cases: Vec<(&str, Dtype, usize, usize)> = Vec::new();
    for ((op, dtype, m, n, ..), _) in profiles {
        if !cases.contains(&(op.as_str(), *dtype, *m, *n)) {
            cases.push((op.as_str(), *dtype, *m, *n));
        }
    }
    let mut parts = Vec::new();
    for case in cases {
        let of_case: Vec<&(Profile, String)> = profiles.iter().filter(|((op, d, m, n, ..), _)| (op.as_str(), *d, *m, *n) == case).collect();
        let Some(((.., base, _), _)) = of_case.iter().find(|((.., v, _, _), _)| v == "plain") else { continue };
        let list: Vec<String> = of_case
            .iter()
            .map(|((.., v, count, us), call)| {
                let change = if v == "plain" { String::new() } else { format!(", {:+.1}%", (count / base - 1.0) * 100.0) };
                format!("`{v}` {:.1} million ({us:.1} µs{change}; {call})", count / 1e6)
            })
            .collect();
        parts.push(format!("{} {} {}: {}", case.0, case.1, shape(case.2, case.3), list.join(", ")));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("Warp instructions executed in one launch, as Nsight Compute counted them (its duration under the profiler in brackets; \
        `ln-ncu.txt` of each call): {}.\n", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_set_the_blocks_of_256_an_sm_and_each_call_its_plain() {
        // 65,536 registers: 72 a thread (in units of 8) is 18,432 a block, three blocks; 195 is
        // rounded to 200, one; 56, four; 64, four; 65, three (72 again); 8 and fewer, eight.
        let blocks: Vec<u32> = [72, 195, 56, 64, 65, 8, 1].map(blocks_of_256).to_vec();
        assert_eq!(blocks, [3, 1, 4, 4, 3, 8, 8]);
        assert!(lanes_variant_note("plain", "nvidia-h100-80gb-hbm3-s58-call2").contains("a test per pack"));
        assert!(lanes_variant_note("plain", "nvidia-h100-80gb-hbm3-s59-call1").contains("without the test"));
        assert!(lanes_variant_note("plain", "nvidia-h100-80gb-hbm3-s59-call2").starts_with("today's default"));
        assert!(lanes_variant_note("unstaged_lanes", "x-s59-call2").contains("DL_LANES_UNSTAGED"));
    }

    #[test]
    fn the_lanes_profiles_are_read_from_the_printed_summary_and_set_against_plain() {
        let text = "=== ln-ncu (instructions per SASS line, LayerNorm and RMSNorm)\n  layer_norm_bf16_1048576x256-plain: DRAM Throughput % 86.49;Duration us 365.86;\
            Executed Instructions inst 254,542,384; 1362 SASS lines\n  layer_norm_bf16_1048576x256-untested: Duration us 362.69;Executed Instructions inst 197,132,288; 1778 SASS lines\n\
            tests/gpu-host.sh: line 492: no such file\n  layer_norm_bf16_1048576x256-staged:   SASS lines\n";
        let p = ncu_instruction_counts(text);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[1], ("layer_norm".into(), Dtype::BF16, 1_048_576, 256, "untested".into(), 197_132_288.0, 362.69));
        let s = instructions_sentence(&p.into_iter().map(|x| (x, "call1".to_string())).collect::<Vec<_>>());
        assert!(s.contains("`plain` 254.5 million (365.9 µs; call1), `untested` 197.1 million (362.7 µs, -22.6%; call1)"), "{s}");
        // Without a plain profile there is nothing to set a count against.
        assert_eq!(instructions_sentence(&ncu_instruction_counts(&text.replace("-plain:", "-other:")).into_iter().map(|x| (x, "c".to_string())).collect::<Vec<_>>()), "");
    }
}
