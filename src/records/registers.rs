//! What ptxas gave each entry point of a kernel file: registers a thread and bytes spilled, as
//! NVRTC reports them with `--ptxas-options=-v` (no GPU needed). [`DL_FILE`] records the row
//! kernels' at sm_90 for the current code: `tests/nvrtc.rs` compiles them again and fails where
//! the record no longer matches (so that a change which costs registers, and with them blocks
//! an SM, shows in review), and the deep-learning chapter sets Nsight Compute's profiles beside
//! it (a profile of an earlier build says so).

use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The row kernels' record, under `plots/data/`.
pub const DL_FILE: &str = "dl/registers-sm_90.csv";
/// The kernel files it covers.
pub const DL_KERNEL_FILES: [&str; 4] = ["17_softmax.cu", "18_norms.cu", "19_cross_entropy.cu", "20_layer_norm_grad.cu"];
/// The architecture it is for.
pub const DL_ARCH: &str = "sm_90";

/// One entry point's registers and spills.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EntryRegisters {
    pub file: String,
    pub entry: String,
    pub registers: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
}

/// Every entry point ptxas reported in a `--ptxas-options=-v` log of `file`, sorted by name.
/// ptxas writes, per function, `Compiling entry function 'name'`, then its stack frame and
/// spills, then `Used N registers`.
pub fn parse_ptxas_log(file: &str, log: &str) -> Vec<EntryRegisters> {
    let mut out = Vec::new();
    // The entry being compiled, the function whose properties the last lines gave, its spills.
    let (mut entry, mut properties_of, mut spills) = (None::<String>, None::<String>, (0, 0));
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            entry = rest.split('\'').next().map(str::to_string);
            spills = (0, 0);
        }
        if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = Some(rest.trim().to_string());
        }
        // A device function's properties (a call's callee) are not the entry's.
        if let (Some(stores), Some(loads)) = (number_before(line, " bytes spill stores"), number_before(line, " bytes spill loads")) {
            if properties_of.is_some() && properties_of == entry {
                spills = (stores, loads);
            }
        }
        if let Some(registers) = line.split("Used ").nth(1).and_then(|r| r.strip_suffix(" registers").or_else(|| r.split(" registers").next())).and_then(|n| n.trim().parse().ok()) {
            if let Some(name) = entry.take() {
                out.push(EntryRegisters { file: file.to_string(), entry: name, registers, spill_store_bytes: spills.0, spill_load_bytes: spills.1 });
            }
        }
    }
    out.sort();
    out
}

/// The number just before `marker` in `line` (`16 bytes spill stores` → 16).
fn number_before(line: &str, marker: &str) -> Option<u32> {
    let before = &line[..line.find(marker)?];
    before.rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// The record's header: what wrote it.
pub fn header(nvrtc: &str) -> Vec<(String, String)> {
    vec![
        ("what".into(), format!("registers a thread and bytes spilled of every entry point of {}, by ptxas through NVRTC", DL_KERNEL_FILES.join(", "))),
        ("arch".into(), DL_ARCH.into()),
        ("nvrtc".into(), nvrtc.into()),
        ("command".into(), "REDUCTION_WRITE_REGISTERS=1 cargo test --test nvrtc registers (with NVRTC; no GPU)".into()),
    ]
}

/// The norms' lanes entries under each lanes switch of `tests/gpu-host.sh` (its `switch_of` names
/// and options), under `plots/data/`: what the staging of γ and β cost in registers, and what each
/// way of keeping them gave back (`kernels/dl_rows.cuh`'s `LanesParams`).
pub const LANES_SWITCHES_FILE: &str = "dl/experiments/norms-lanes/registers-sm_90.csv";
/// (variant, its NVRTC options): `plain` the default build.
pub const LANES_SWITCHES: [(&str, &str); 6] = [
    ("plain", ""),
    ("unstaged_lanes", "-DDL_LANES_UNSTAGED"),
    ("staged_lanes", "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=0"),
    ("staged_lanes_fenced", "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=1"),
    ("staged_lanes_generic", "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=2"),
    ("staged_lanes_unhoisted", "-DDL_LANES_STAGED -DDL_LANES_STAGED_ORDER=3"),
];
/// The file of the norms the lanes switches change.
pub const LANES_SWITCHES_KERNEL_FILE: &str = "18_norms.cu";

/// One lanes entry's registers and spills under one variant.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SwitchRegisters {
    pub variant: String,
    pub options: String,
    pub entry: String,
    pub registers: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
}

/// The lanes switches' record's header.
pub fn lanes_switches_header(nvrtc: &str) -> Vec<(String, String)> {
    vec![
        ("what".into(), format!("registers a thread and bytes spilled of the lanes entries of {LANES_SWITCHES_KERNEL_FILE} under each lanes switch, by ptxas through NVRTC")),
        ("arch".into(), DL_ARCH.into()),
        ("nvrtc".into(), nvrtc.into()),
        ("command".into(), "REDUCTION_WRITE_REGISTERS=1 cargo test --test nvrtc registers (with NVRTC; no GPU)".into()),
    ]
}

pub fn read(path: &Path) -> Result<Vec<EntryRegisters>> {
    Ok(super::csv::read(path)?.1)
}

pub fn write(path: &Path, nvrtc: &str, entries: &[EntryRegisters]) -> Result<()> {
    super::csv::write(path, &header(nvrtc), entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ptxas_log_gives_each_entry_its_registers_and_spills() {
        let log = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'softmax_lanes8_f32' for 'sm_90'\n\
            ptxas info    : Function properties for softmax_lanes8_f32\n\
            \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Used 80 registers, used 0 barriers, 384 bytes cmem[0]\n\
            ptxas info    : Function properties for a_callee\n\
            \x20   8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n\
            ptxas info    : Compiling entry function 'rms_norm_split8_f32' for 'sm_90'\n\
            ptxas info    : Function properties for rms_norm_split8_f32\n\
            \x20   16 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads\n\
            ptxas info    : Used 110 registers, used 1 barriers, 16 bytes cumulative stack size, 400 bytes cmem[0]\n\
            ptxas info    : Function properties for a_device_function\n\
            \x20   8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n";
        let entries = parse_ptxas_log("17_softmax.cu", log);
        let row = |entry: &str, registers, stores, loads| EntryRegisters { file: "17_softmax.cu".into(), entry: entry.into(), registers, spill_store_bytes: stores, spill_load_bytes: loads };
        assert_eq!(entries, vec![row("rms_norm_split8_f32", 110, 16, 12), row("softmax_lanes8_f32", 80, 0, 0)]);
        let path = std::env::temp_dir().join(format!("registers-{}.csv", std::process::id()));
        write(&path, "13.0", &entries).unwrap();
        assert_eq!(read(&path).unwrap(), entries);
        std::fs::remove_file(&path).unwrap();
    }
}
