//! What no test on one GPU can see: a last-block kernel that takes its ticket without a fence
//! after writing its partial. On one GPU the write and the ticket are both done and the last
//! block usually reads the right partials, so every hidden case passes; the CUDA memory model
//! does not promise it (another SM may see the ticket before the partial). So the checker also
//! reads the source: the write of the partial, a fence, then the ticket, in that order. Pure
//! text, tested without a GPU.

/// The rule a missing or misplaced fence breaks, as the warning names it.
pub const RULE: &str = "the CUDA C++ memory model orders a block's write of its partial before another block's read of it \
only through a fence (or a release operation) between the write and the atomic that the other block observes: \
`__threadfence()` between `partials[blockIdx.x] = …` and `atomicAdd(ticket, …)` (CUDA C++ Programming Guide, \
\"Memory Fence Functions\", whose example is this very sum)";

/// What the source check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenceOrder {
    /// No write of a partial and ticket in the source: the rule does not apply.
    NotALastBlockKernel,
    /// Partial written, then a fence, then the ticket.
    Fenced,
    /// The ticket is taken with no fence between the partial's write and it; the line numbers
    /// (1-based) of the write and of the ticket.
    Missing { write_line: usize, ticket_line: usize },
    /// The ticket is taken before the partial is written: the last block can count a block
    /// whose partial is not there yet, fence or not.
    TicketFirst { ticket_line: usize, write_line: usize },
}

impl FenceOrder {
    /// The warning the checker prints, if any.
    pub fn warning(&self, file: &str) -> Option<String> {
        match self {
            FenceOrder::Missing { write_line, ticket_line } => Some(format!(
                "{file}:{ticket_line}: the ticket is taken with no fence after the partial's write at line {write_line}. The hidden \
                cases cannot show this on one GPU — they passed — but {RULE}."
            )),
            FenceOrder::TicketFirst { ticket_line, write_line } => Some(format!(
                "{file}:{ticket_line}: the ticket is taken before the partial is written (line {write_line}): the block that draws the \
                last ticket may add a partial that is not written yet. Write the partial, fence, then take the ticket: {RULE}."
            )),
            _ => None,
        }
    }
}

/// The source without comments, line numbers kept (a commented-out fence is no fence).
fn without_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    let (mut in_line, mut in_block, mut in_string) = (false, false, false);
    while let Some(c) = chars.next() {
        if in_line {
            if c == '\n' {
                in_line = false;
                out.push('\n');
            }
            continue;
        }
        if in_block {
            if c == '*' && chars.peek() == Some(&'/') {
                chars.next();
                in_block = false;
            } else if c == '\n' {
                out.push('\n');
            }
            continue;
        }
        if in_string {
            out.push(c);
            if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('/', Some('/')) => in_line = true,
            ('/', Some('*')) => {
                chars.next();
                in_block = true;
            }
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Whether a line writes a partial sum to global memory: `partials[...] =` (not `==`), or a
/// store through a pointer named like one.
fn writes_partial(line: &str) -> bool {
    let Some(at) = line.find("partials[") else { return false };
    let rest = &line[at..];
    let Some(close) = rest.find(']') else { return false };
    let after = rest[close + 1..].trim_start();
    after.starts_with('=') && !after.starts_with("==")
}

fn takes_ticket(line: &str) -> bool {
    ["atomicAdd(ticket", "atomicInc(ticket", "atomicAdd(&ticket", "atomicAdd(counter", "atomicInc(counter"].iter().any(|t| line.replace(' ', "").contains(t))
        || (line.contains("ticket") && (line.contains("fetch_add") || line.contains("atomicAdd_system")))
}

/// A fence, or an atomic whose own ordering releases the write: what makes the partial visible.
fn fences(line: &str) -> bool {
    ["__threadfence(", "__threadfence_system(", "atomic_thread_fence(", "fence.acq_rel", "fence.sc", "memory_order_release", "memory_order_acq_rel", "memory_order_seq_cst"]
        .iter()
        .any(|f| line.contains(f))
}

/// Read `source` for the order of the partial's write, a fence, and the ticket.
pub fn check_fence_order(source: &str) -> FenceOrder {
    let text = without_comments(source);
    let lines: Vec<&str> = text.lines().collect();
    let Some(write) = lines.iter().position(|l| writes_partial(l)) else { return FenceOrder::NotALastBlockKernel };
    let Some(ticket) = lines.iter().enumerate().skip(write).find(|(_, l)| takes_ticket(l)).map(|(i, _)| i) else {
        return match lines.iter().position(|l| takes_ticket(l)) {
            Some(first) => FenceOrder::TicketFirst { ticket_line: first + 1, write_line: write + 1 },
            None => FenceOrder::NotALastBlockKernel,
        };
    };
    // A fence on the ticket's own line counts only if it comes before the atomic there, or is
    // the atomic's own ordering.
    let fenced_between = lines[write + 1..ticket].iter().any(|l| fences(l))
        || lines[ticket].find("__threadfence(").is_some_and(|f| lines[ticket].find("atomic").is_some_and(|a| f < a))
        || (lines[ticket].contains("fetch_add") && fences(lines[ticket]));
    if fenced_between {
        FenceOrder::Fenced
    } else {
        FenceOrder::Missing { write_line: write + 1, ticket_line: ticket + 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FENCED: &str = "if (threadIdx.x == 0) {\n    partials[blockIdx.x] = v;\n    __threadfence();  // visible first\n    last = atomicAdd(ticket, 1u) == gridDim.x - 1;\n}\n";

    #[test]
    fn the_reference_solution_is_fenced() {
        let solution = crate::exercises::find(10).unwrap().solution;
        assert_eq!(check_fence_order(solution), FenceOrder::Fenced);
        assert_eq!(check_fence_order(FENCED), FenceOrder::Fenced);
    }

    #[test]
    fn a_missing_fence_is_found_and_the_warning_names_the_rule() {
        let missing = FENCED.replace("    __threadfence();  // visible first\n", "");
        let found = check_fence_order(&missing);
        assert_eq!(found, FenceOrder::Missing { write_line: 2, ticket_line: 3 });
        let warning = found.warning("my_kernel.cu").unwrap();
        assert!(warning.starts_with("my_kernel.cu:3:") && warning.contains("memory model") && warning.contains("Memory Fence Functions"), "{warning}");
    }

    #[test]
    fn a_commented_out_or_late_fence_is_no_fence() {
        let commented = FENCED.replace("    __threadfence();", "    // __threadfence();");
        assert!(matches!(check_fence_order(&commented), FenceOrder::Missing { .. }));
        let block_comment = FENCED.replace("    __threadfence();", "    /* __threadfence(); */");
        assert!(matches!(check_fence_order(&block_comment), FenceOrder::Missing { .. }));
        // The fence after the ticket orders nothing the last block relies on.
        let late = "partials[blockIdx.x] = v;\nlast = atomicAdd(ticket, 1u) == gridDim.x - 1;\n__threadfence();\n";
        assert!(matches!(check_fence_order(late), FenceOrder::Missing { write_line: 1, ticket_line: 2 }));
    }

    #[test]
    fn a_ticket_taken_before_the_write_is_found() {
        let first = "unsigned t = atomicAdd(ticket, 1u);\n__threadfence();\npartials[blockIdx.x] = v;\n";
        let found = check_fence_order(first);
        assert_eq!(found, FenceOrder::TicketFirst { ticket_line: 1, write_line: 3 });
        assert!(found.warning("k.cu").unwrap().contains("before the partial is written"));
    }

    #[test]
    fn a_release_atomic_counts_and_other_kernels_are_left_alone() {
        let release = "partials[blockIdx.x] = v;\nauto t = cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*ticket).fetch_add(1, cuda::memory_order_acq_rel);\n";
        assert_eq!(check_fence_order(release), FenceOrder::Fenced);
        assert_eq!(check_fence_order("if (tid == 0) out[blockIdx.x] = sdata[0];\n"), FenceOrder::NotALastBlockKernel);
        // A comparison is not a write.
        assert_eq!(check_fence_order("if (partials[0] == 0) atomicAdd(ticket, 1u);\n"), FenceOrder::NotALastBlockKernel);
        for e in crate::exercises::all().iter().filter(|e| e.number != 10) {
            assert_eq!(check_fence_order(e.solution), FenceOrder::NotALastBlockKernel, "{}", e.stem);
        }
    }
}
