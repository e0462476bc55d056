//! The machine code NVRTC writes, as `plots/sass.py` lists it (`plots/data/sass/<arch>/<entry>.sass`,
//! from `cuobjdump -sass`): one [`Instruction`] per line, and the counts the chapters read from
//! it (a tree loop's length, the instructions of a modulo, the step between two barriers).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The architecture whose SASS is committed.
pub const ARCH: &str = "sm_90";

/// `data_dir/sass/<arch>`: one listing per entry point.
pub fn sass_dir(data_dir: &Path, arch: &str) -> PathBuf {
    data_dir.join("sass").join(arch)
}

/// One instruction of a SASS listing: its address and its text (predicate and opcode first).
#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub address: u32,
    pub text: String,
}

impl Instruction {
    /// The opcode with its modifiers (`BAR.SYNC.DEFER_BLOCKING`), the predicate left out.
    pub fn opcode(&self) -> &str {
        let mut words = self.text.split_whitespace();
        let first = words.next().unwrap_or_default();
        if first.starts_with('@') { words.next().unwrap_or_default() } else { first }
    }

    /// The target of a branch (`BRA 0x190`), if this is one.
    fn branch_target(&self) -> Option<u32> {
        if !self.opcode().starts_with("BRA") {
            return None;
        }
        let target = self.text.split_whitespace().last()?.trim_end_matches(';');
        u32::from_str_radix(target.trim_start_matches("0x"), 16).ok()
    }
}

/// Parse the listing `plots/sass.py` writes (`/*0190*/  @!P1 BRA 0x190 ;`); `NOP`s are left out.
pub fn parse(text: &str) -> Vec<Instruction> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("/*")?;
            let (address, text) = rest.split_once("*/")?;
            Some(Instruction { address: u32::from_str_radix(address, 16).ok()?, text: text.trim().trim_end_matches(';').trim().to_string() })
        })
        .filter(|i| i.opcode() != "NOP")
        .collect()
}

/// The SASS of every entry point under `dir` (`<entry>.sass`), by entry name; empty where `dir`
/// does not exist.
pub fn load(dir: &Path) -> crate::error::Result<BTreeMap<String, Vec<Instruction>>> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(out) };
    for path in entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "sass")) {
        let text = std::fs::read_to_string(&path).map_err(|e| crate::error::io_error(&path, e))?;
        let stem = path.file_stem().unwrap_or_default().to_string_lossy().to_string();
        out.insert(stem, parse(&text));
    }
    Ok(out)
}

/// The instructions of the tree's loop: the first backward branch whose body holds a barrier.
pub fn tree_loop(code: &[Instruction]) -> Option<&[Instruction]> {
    code.iter().enumerate().find_map(|(end, i)| {
        let target = i.branch_target().filter(|t| *t < i.address)?;
        let start = code.iter().position(|j| j.address == target)?;
        let body = &code[start..=end];
        body.iter().any(|j| j.opcode().starts_with("BAR")).then_some(body)
    })
}

/// The instructions of the unsigned division `%` compiles to, in a loop body: from the
/// conversion to float (`I2F.U32.RP`) to the last fix-up before the test of the remainder.
pub fn modulo_instructions(body: &[Instruction]) -> usize {
    let Some(start) = body.iter().position(|i| i.opcode().starts_with("I2F")) else { return 0 };
    let end = body.iter().rposition(|i| i.opcode().starts_with("LOP3")).unwrap_or(start);
    end + 1 - start
}

/// The instructions between the first two block barriers: one unrolled step.
pub fn straight_step(code: &[Instruction]) -> Option<usize> {
    let bars: Vec<usize> = code.iter().enumerate().filter(|(_, i)| i.opcode().starts_with("BAR")).map(|(k, _)| k).collect();
    Some(bars.get(1)? - bars.first()?)
}

/// How many instructions of `code` have an opcode starting with `opcode` (`REDUX`, `SHFL`).
pub fn count(code: &[Instruction], opcode: &str) -> usize {
    code.iter().filter(|i| i.opcode().starts_with(opcode)).count()
}

/// The registers an instruction's text names (`R12`, and `R4.64` as R4; not `RZ`).
fn registers(text: &str) -> Vec<u32> {
    text.split(|c: char| !c.is_ascii_alphanumeric()).filter_map(|w| w.strip_prefix('R')?.parse().ok()).collect()
}

/// A 16-byte global load (`LDG.E.EF.128 R4, desc[UR10][R4.64]`): the four registers it fills.
fn wide_load_registers(i: &Instruction) -> Option<std::ops::Range<u32>> {
    let op = i.opcode();
    if !(op.starts_with("LDG") && op.ends_with(".128")) {
        return None;
    }
    let operands = i.text.split_once(op)?.1;
    let first = *registers(operands.split(',').next()?).first()?;
    Some(first..first + 4)
}

/// The loops of a listing (backward branches) whose bodies hold 16-byte loads, in address order:
/// for each, the 16-byte loads in its body, and how many of them are issued before the first
/// instruction that reads or overwrites a register one of them fills: as many as the body holds
/// where every load is in flight before any is waited for, fewer where the loop waits for a load
/// before it issues the next.
pub fn wide_load_loops(code: &[Instruction]) -> Vec<(usize, usize)> {
    let mut loops = Vec::new();
    for (end, branch) in code.iter().enumerate() {
        let Some(target) = branch.branch_target().filter(|t| *t < branch.address) else { continue };
        let Some(start) = code.iter().position(|j| j.address == target) else { continue };
        let body = &code[start..=end];
        let loads = body.iter().filter(|i| wide_load_registers(i).is_some()).count();
        if loads == 0 {
            continue;
        }
        let mut pending: Vec<u32> = Vec::new();
        let mut issued = 0;
        for i in body {
            if let Some(filled) = wide_load_registers(i) {
                pending.extend(filled);
                issued += 1;
            } else if registers(&i.text).iter().any(|r| pending.contains(r)) {
                break;
            }
        }
        loops.push((loads, issued));
    }
    loops
}

/// A listing of four 16-byte loads, then their adds, then a single-load loop that adds before it
/// loops (a plain walk's leftovers, one at a time): for tests of what reads such code.
#[cfg(test)]
pub(crate) fn four_then_one_at_a_time() -> String {
    let line = |address: u32, text: &str| format!("        /*{address:04x}*/   {text} ;\n");
    [
        line(0x10, "LDG.E.EF.128 R4, desc[UR10][R4.64]"),
        line(0x20, "LDG.E.EF.128 R8, desc[UR10][R8.64]"),
        line(0x30, "LDG.E.EF.128 R12, desc[UR10][R12.64]"),
        line(0x40, "LDG.E.EF.128 R16, desc[UR10][R22.64]"),
        line(0x50, "FADD R26, R4, R5"),
        line(0x60, "@!P0 BRA 0x10"),
        line(0x70, "LDG.E.EF.128 R4, desc[UR10][R4.64]"),
        line(0x80, "FADD R9, R4, R5"),
        line(0x90, "@!P0 BRA 0x70"),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sass_listings_are_parsed_and_the_tree_loops_found() {
        let listing = "# header\n        /*0190*/                   USHF.L.U32 UR6, UR5, 0x1, URZ ;\n        /*01a0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;\n        /*01b0*/              @!P1 BRA 0x190 ;\n        /*01c0*/                   NOP;\n";
        let code = parse(listing);
        assert_eq!(code.len(), 3, "NOPs are not instructions");
        assert_eq!(code[2].opcode(), "BRA");
        assert_eq!(tree_loop(&code).map(|b| b.len()), Some(3));
        // A forward branch is no loop.
        assert!(tree_loop(&parse("/*0190*/ BAR.SYNC 0x0 ;\n/*01a0*/ @P0 BRA 0x1c0 ;\n")).is_none());
        // The committed SASS: kernel 1's step is longer than kernel 2's by its modulo; kernel 6 has no tree loop.
        let sass = load(&sass_dir(&crate::records::repo_root().join("plots/data"), ARCH)).unwrap();
        let k1 = tree_loop(&sass["reduce1_i32"]).unwrap();
        let k2 = tree_loop(&sass["reduce2_i32"]).unwrap();
        assert!(k1.len() > k2.len() + 10 && modulo_instructions(k1) >= 10, "{} {} {}", k1.len(), k2.len(), modulo_instructions(k1));
        assert!(tree_loop(&sass["reduce6_b256_i32"]).is_none());
        assert_eq!(count(&sass["reduce11_i32"], "REDUX"), 2);
        assert_eq!(count(&sass["reduce9_i32"], "REDUX"), 0);
    }

    #[test]
    fn the_wide_loads_of_a_loop_are_counted_until_one_is_waited_for() {
        let listing = four_then_one_at_a_time();
        assert_eq!(wide_load_loops(&parse(&listing)), vec![(4, 4), (1, 1)]);
        // The fourth load after an add of the first's registers: three in flight, not four.
        let waits = listing.replace("/*0040*/   LDG.E.EF.128 R16, desc[UR10][R22.64]", "/*0040*/   FADD R20, R4, R5").replace("/*0050*/   FADD R26, R4, R5", "/*0050*/   LDG.E.EF.128 R16, desc[UR10][R22.64]");
        assert_eq!(wide_load_loops(&parse(&waits))[0], (4, 3));
        // An address register that is not a loaded one does not count as a use.
        assert_eq!(registers("LDG.E.EF.128 R16, desc[UR10][R22.64]"), vec![16, 22], "UR10 is a uniform register");
        // The committed SASS: kernel 12's unrolled loop with its 4 loads in flight and no loop of
        // one after it (its leftovers are one predicated round); kernel 9's loop of one is still there.
        let sass = load(&sass_dir(&crate::records::repo_root().join("plots/data"), ARCH)).unwrap();
        assert_eq!(wide_load_loops(&sass["reduce12_b256_f32"]), vec![(4, 4)]);
        assert_eq!(wide_load_loops(&sass["reduce9_f32"]).last(), Some(&(1, 1)));
    }
}
