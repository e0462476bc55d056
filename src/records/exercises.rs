//! What the exercises' checker did on a GPU, as the book keeps it: `book/generated/exercises.md`,
//! a tally ([`Tally`]) on its first line and a table of every check after it. Written by
//! `tests/exercises.rs` (`EXERCISES_RECORD=book/generated/exercises.md`) on the GPU host, read by
//! the exercises' own test that every check held.

/// Where the note is, from the repository's root.
pub const NOTE: &str = "book/generated/exercises.md";

/// How many of each kind of text the checker ran, and how many went the way they must.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub solutions_passed: usize,
    pub solutions: usize,
    pub stubs_failed: usize,
    pub stubs: usize,
    pub near_misses_failed: usize,
    pub near_misses: usize,
    /// Of the near misses that failed, how many compute-sanitizer found.
    pub found_by_sanitizer: usize,
}

impl Tally {
    /// The note's first line.
    pub fn sentence(&self) -> String {
        format!(
            "{} of {} reference solutions passed; {} of {} untouched stubs failed; {} of {} near misses failed ({} of them found by compute-sanitizer).",
            self.solutions_passed, self.solutions, self.stubs_failed, self.stubs, self.near_misses_failed, self.near_misses, self.found_by_sanitizer
        )
    }

    /// The tally a note's first line states; `Err` says why it is not one.
    pub fn parse(line: &str) -> Result<Tally, String> {
        let numbers: Vec<usize> = line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
        let tally = match numbers[..] {
            [a, b, c, d, e, f, g] => Tally { solutions_passed: a, solutions: b, stubs_failed: c, stubs: d, near_misses_failed: e, near_misses: f, found_by_sanitizer: g },
            _ => return Err(format!("not a tally of the exercises: {line:?}")),
        };
        if tally.sentence() != line.trim_end() {
            return Err(format!("not a tally of the exercises: {line:?}"));
        }
        Ok(tally)
    }

    /// Every check went the way it must: every solution passed, every stub and near miss failed.
    pub fn all_held(&self) -> bool {
        self.solutions_passed == self.solutions && self.stubs_failed == self.stubs && self.near_misses_failed == self.near_misses
    }
}

/// The exercise numbers the note's table names (its first column).
pub fn recorded(note: &str) -> std::collections::BTreeSet<u32> {
    note.lines().filter_map(|l| l.strip_prefix("| ")?.split(" |").next()?.trim().parse().ok()).collect()
}

/// Where the sentence under the note's counts goes: the exercises of the catalogue that the
/// recorded run did not check.
pub const UNCHECKED_NOTE: &str = "book/generated/exercises_unchecked.md";

/// That sentence, for a catalogue of exercises `numbers`: the ones the note does not name (added
/// since the run), or nothing when it names them all.
pub fn unchecked_sentence(note: &str, numbers: &[u32]) -> String {
    let recorded = recorded(note);
    let missing: Vec<String> = numbers.iter().filter(|n| !recorded.contains(n)).map(|n| n.to_string()).collect();
    match missing.as_slice() {
        [] => String::new(),
        [one] => format!("*Exercise {one} was added after that run: it has not been checked on a GPU yet (`OUT=results bash tests/gpu-host.sh book` records it).*\n"),
        many => format!("*Exercises {} were added after that run: they have not been checked on a GPU yet (`OUT=results bash tests/gpu-host.sh book` records them).*\n", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tally_reads_back_from_its_sentence_and_a_failed_check_shows() {
        let tally = Tally { solutions_passed: 10, solutions: 10, stubs_failed: 10, stubs: 10, near_misses_failed: 23, near_misses: 23, found_by_sanitizer: 2 };
        assert_eq!(Tally::parse(&tally.sentence()), Ok(tally));
        assert!(tally.all_held());
        let one_passed = Tally { near_misses_failed: 22, ..tally };
        assert!(!Tally::parse(&one_passed.sentence()).unwrap().all_held());
        assert!(Tally::parse("10 of 10 solutions").is_err());
    }

    #[test]
    fn the_exercises_a_note_does_not_name_are_said_to_be_unchecked() {
        let note = "x\n\n| exercise | checked | verdict | first failing case |\n|---|---|---|---|\n| 1 | solution | passed | — |\n| 2 | stub | failed | n = 1 |\n";
        assert_eq!(recorded(note), [1, 2].into_iter().collect());
        assert_eq!(unchecked_sentence(note, &[1, 2]), "");
        assert!(unchecked_sentence(note, &[1, 2, 3]).starts_with("*Exercise 3 was added"));
        assert!(unchecked_sentence(note, &[1, 2, 3, 4]).starts_with("*Exercises 3, 4 were added"));
    }
}
