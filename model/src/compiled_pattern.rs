//! [`compile_pattern`]: a pre-tokenization regex (as `fancy-regex` reads it) compiled into the
//! automaton [`picobpe::pretok::CompiledPattern`] walks on the target.
//!
//! The regex's top-level alternatives become the patterns of one anchored, leftmost-first DFA
//! built by `regex-automata` (whose leftmost-first semantics are a backtracker's: the first
//! alternative that matches, each quantifier greedy), then copied state by state into picobpe's
//! own flat layout (the core's module docs), which the core checks in one pass and walks
//! without `regex-automata`, allocation or panics.
//!
//! What a DFA cannot express is refused with a message that names it, except the one
//! look-around real tokenizer patterns use: a final `(?!C)` after a greedy run of one class `X`
//! that contains every character `C` does not (`\s+(?!\S)`), compiled as `X+(?:[^C]|\z)` and
//! flagged so that the walker gives the look-ahead character back. Refused: other
//! look-arounds, back-references and possessive or atomic groups (`regex-syntax` does not
//! parse them), `^`, `\b` and multi-line anchors (a piece starts mid-text), top-level inline
//! flags such as `(?i)` (they would reach across alternatives), alternatives that can match
//! the empty string, and automata over 65,536 states.

use picobpe::pretok::compiled::{LOOK_AHEAD, MAGIC, SETTLED};
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::nfa::thompson;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};
use regex_syntax::hir::{Class, Hir, HirKind, Look, LookSet};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// Why a regex cannot be compiled for the core.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatternCompileError {
    /// The regex is malformed, or uses syntax the DFA cannot run (the message says which).
    #[error("pattern {alternative:?}: {reason}")]
    Unsupported {
        /// The top-level alternative at fault.
        alternative: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The automaton has more states than the layout's 16-bit state numbers allow.
    #[error("pattern compiles to {0} states; at most 65,536 fit")]
    TooLarge(usize),
    /// `regex-automata` refused to build the automaton.
    #[error("pattern does not compile: {0}")]
    Build(String),
}

/// Bytes `regex-automata` may use for the automaton and for building it.
const BUILD_LIMIT: usize = 64 << 20;

/// Compile `regex` into the words of a [`picobpe::pretok::CompiledPattern`].
pub fn compile_pattern(regex: &str) -> Result<Vec<u32>, PatternCompileError> {
    compile_with_rule(regex, picobpe::pretok::SplitRule::ISOLATED)
}

/// [`compile_pattern`] of a `Split`'s regex, with its rule in the layout's header (how the
/// core makes pieces of the matches: [`picobpe::pretok::SplitRule`]).
pub fn compile_split(split: &crate::Split) -> Result<Vec<u32>, PatternCompileError> {
    compile_with_rule(&split.regex, split.rule)
}

/// The compiled words of `regex`, with `rule`.
fn compile_with_rule(
    regex: &str,
    rule: picobpe::pretok::SplitRule,
) -> Result<Vec<u32>, PatternCompileError> {
    let mut hirs = Vec::new();
    let mut flags = Vec::new();
    for alternative in top_level_alternatives(regex)? {
        let (hir, flag) = alternative_hir(alternative)?;
        hirs.push(hir);
        flags.push(flag);
    }
    let nfa = thompson::Compiler::new()
        .build_many_from_hir(&hirs)
        .map_err(|e| PatternCompileError::Build(e.to_string()))?;
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::LeftmostFirst)
                .start_kind(StartKind::Anchored)
                // A hostile regex cannot make the host build a huge automaton: the states the
                // layout can hold cost far less than this.
                .dfa_size_limit(Some(BUILD_LIMIT))
                .determinize_size_limit(Some(BUILD_LIMIT)),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| PatternCompileError::Build(e.to_string()))?;
    let mut words = flatten(&dfa, &flags)?;
    // The number of patterns' word carries the rule in its high byte.
    if flags.len() >= 1 << 24 {
        return Err(PatternCompileError::Build(
            "more than 2^24 alternatives".into(),
        ));
    }
    if let Some(w) = words.get_mut(3) {
        *w |= rule.bits() << 24;
    }
    Ok(words)
}

/// The automaton's states in breadth-first order from the anchored start (dead state first),
/// in the core's layout.
fn flatten(dfa: &dense::DFA<Vec<u32>>, flags: &[u32]) -> Result<Vec<u32>, PatternCompileError> {
    let build = |e: &dyn std::fmt::Display| PatternCompileError::Build(e.to_string());
    let start = dfa
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .map_err(|e| build(&e))?;
    let mut index: FxHashMap<StateID, u32> = FxHashMap::default();
    let mut order: Vec<StateID> = Vec::new();
    let mut queue = VecDeque::new();
    // State 0 is the dead state: no transitions, no match.
    let mut intern = |id: StateID, order: &mut Vec<StateID>, queue: &mut VecDeque<StateID>| {
        if dfa.is_dead_state(id) {
            return 0;
        }
        *index.entry(id).or_insert_with(|| {
            order.push(id);
            queue.push_back(id);
            order.len() as u32
        })
    };
    let start_index = intern(start, &mut order, &mut queue);
    // Per state (dead state first): the next state of every byte, and its match and
    // end-of-input words.
    let mut nexts: Vec<[u16; 256]> = vec![[0; 256]];
    let mut records: Vec<[u32; 2]> = vec![[0, 0]];
    let pattern_of = |id: StateID| -> u32 {
        if dfa.is_match_state(id) {
            dfa.match_pattern(id, 0).as_u32() + 1
        } else {
            0
        }
    };
    while let Some(id) = queue.pop_front() {
        if dfa.is_quit_state(id) {
            return Err(build(
                &"the automaton gives up on some input (a quit state)",
            ));
        }
        let mut next = [0u16; 256];
        for byte in 0..=255u8 {
            let n = intern(dfa.next_state(id, byte), &mut order, &mut queue);
            if n >= 1 << 16 {
                return Err(PatternCompileError::TooLarge(order.len() + 1));
            }
            next[usize::from(byte)] = n as u16;
        }
        nexts.push(next);
        let eoi = pattern_of(dfa.next_eoi_state(id));
        // Settled: every byte reports the end-of-input match here, then the walk is over.
        let ends_walk = |t: StateID| {
            (0..=255u8).all(|b| dfa.is_dead_state(dfa.next_state(t, b)))
                && pattern_of(dfa.next_eoi_state(t)) == 0
        };
        let settled = eoi != 0
            && flags.get(eoi as usize - 1) == Some(&0)
            && (0..=255u8).all(|b| {
                let t = dfa.next_state(id, b);
                pattern_of(t) == eoi && ends_walk(t)
            });
        records.push([
            pattern_of(id) << 16,
            eoi | if settled { SETTLED } else { 0 },
        ]);
    }
    // A state that reads some ASCII byte (one at a character boundary), or that would need
    // more than `MAX_RANGES` ranges, gets a row; the byte classes are the bytes whose column
    // (next state in every such state) is the same.
    let has_row: Vec<bool> = nexts
        .iter()
        .map(|n| n[..128].iter().any(|&n| n != 0) || ranges(n).len() > MAX_RANGES)
        .collect();
    let mut class_of = [0u8; 256];
    let mut columns: Vec<Vec<u16>> = Vec::new();
    let mut first_byte: Vec<usize> = Vec::new();
    for b in 0..256 {
        let column: Vec<u16> = nexts
            .iter()
            .zip(&has_row)
            .filter(|(_, &row)| row)
            .map(|(n, _)| n[b])
            .collect();
        let class = match columns.iter().position(|c| *c == column) {
            Some(c) => c,
            None => {
                columns.push(column);
                first_byte.push(b);
                columns.len() - 1
            }
        };
        class_of[b] = class as u8;
    }
    let n_classes = columns.len();
    let row_words = n_classes.div_ceil(2);
    let mut rows: Vec<u32> = Vec::new();
    let mut transitions: Vec<u32> = Vec::new();
    let mut states: Vec<u32> = Vec::with_capacity(nexts.len() * 4);
    for ((next, &[word, eoi]), &with_row) in nexts.iter().zip(&records).zip(&has_row) {
        let first = transitions.len() as u32;
        let row = if with_row {
            let mut row = vec![0u32; row_words];
            for (c, &b) in first_byte.iter().enumerate() {
                row[c / 2] |= u32::from(next[b]) << (c % 2 * 16);
            }
            rows.extend(row);
            (rows.len() / row_words) as u32
        } else {
            // Inside a character: continuation bytes only, as ranges.
            transitions.extend(ranges(next));
            0
        };
        let count = transitions.len() as u32 - first;
        states.extend([first, count | word, eoi, row]);
    }
    let n_rows = rows.len() / row_words;
    let mut words = vec![
        MAGIC,
        nexts.len() as u32,
        start_index,
        flags.len() as u32,
        n_classes as u32,
        n_rows as u32,
    ];
    words.extend(
        class_of
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
    words.extend_from_slice(flags);
    words.extend(states);
    words.extend(rows);
    words.extend(transitions);
    Ok(words)
}

/// States inside a character with more ranges than this get a row (a binary search over
/// more costs more than the two reads of a row).
const MAX_RANGES: usize = 16;

/// The runs of equal, live next states over bytes `0x80..=0xFF`, as the core's transitions
/// (`lo | hi << 8 | next << 16`).
fn ranges(next: &[u16; 256]) -> Vec<u32> {
    let mut out = Vec::new();
    let mut run: Option<(u32, u32, u32)> = None; // (lo, hi, next)
    for b in 0x80..=0xFFu32 {
        let n = u32::from(next[b as usize]);
        run = match run {
            Some((lo, hi, m)) if m == n && hi + 1 == b => Some((lo, b, m)),
            other => {
                out.extend(
                    other
                        .filter(|r| r.2 != 0)
                        .map(|(lo, hi, m)| lo | hi << 8 | m << 16),
                );
                Some((b, b, n))
            }
        };
    }
    out.extend(
        run.filter(|r| r.2 != 0)
            .map(|(lo, hi, m)| lo | hi << 8 | m << 16),
    );
    out
}

/// One alternative as the HIR to compile and its pattern flag.
fn alternative_hir(alternative: &str) -> Result<(Hir, u32), PatternCompileError> {
    let unsupported = |reason: String| PatternCompileError::Unsupported {
        alternative: alternative.to_string(),
        reason,
    };
    let (hir, flag) = match trailing_negative_look_ahead(alternative) {
        Some((body, look)) => (look_ahead_hir(body, look).map_err(unsupported)?, LOOK_AHEAD),
        None => (parse(alternative).map_err(unsupported)?, 0),
    };
    let props = hir.properties();
    if props.look_set().remove(Look::End) != LookSet::empty() {
        return Err(unsupported(
            "anchors other than `$`/`\\z` (`^`, `\\b`, multi-line) depend on what precedes a piece"
                .into(),
        ));
    }
    if props.minimum_len() == Some(0) {
        return Err(unsupported("it can match the empty string".into()));
    }
    Ok((hir, flag))
}

/// `X+(?!C)` as `X+(?:[^C]|\z)`, after checking the shape that makes the rewrite exact.
fn look_ahead_hir(body: &str, look: &str) -> Result<Hir, String> {
    let body_hir = parse(body)?;
    let run_class = match body_hir.kind() {
        HirKind::Repetition(rep) if rep.greedy && rep.max.is_none() && rep.min >= 1 => {
            match rep.sub.kind() {
                HirKind::Class(Class::Unicode(class)) => Some(class.clone()),
                _ => None,
            }
        }
        _ => None,
    };
    let shape = "a negative look-ahead is supported only as `X+(?!C)` at the end of a top-level \
                 alternative, with `X` one class that holds every character outside `C`";
    let run_class = run_class.ok_or_else(|| shape.to_string())?;
    let mut allowed = match parse(look)?.kind() {
        HirKind::Class(Class::Unicode(class)) => class.clone(),
        _ => return Err(shape.to_string()),
    };
    allowed.negate();
    let mut outside = allowed.clone();
    outside.difference(&run_class);
    if !outside.ranges().is_empty() {
        return Err(shape.to_string());
    }
    Ok(Hir::concat(vec![
        body_hir,
        Hir::alternation(vec![
            Hir::class(Class::Unicode(allowed)),
            Hir::look(Look::End),
        ]),
    ]))
}

/// `regex-syntax` with `fancy-regex`'s defaults (Unicode, UTF-8, no flags set).
fn parse(re: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(re)
        .map_err(|e| match e {
            regex_syntax::Error::Parse(p) => format!(
                "{} (look-arounds other than a final `X+(?!C)`, back-references and possessive \
                 or atomic groups are not supported)",
                p.kind()
            ),
            other => other.to_string(),
        })
}

/// `(body, look)` when `alternative` ends with a group `(?!look)`.
fn trailing_negative_look_ahead(alternative: &str) -> Option<(&str, &str)> {
    let open = last_top_level_group(alternative)?;
    let group = &alternative[open..];
    let look = group.strip_prefix("(?!")?.strip_suffix(')')?;
    Some((&alternative[..open], look))
}

/// What one character of regex text is, to [`Scan`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// Anything the callers do not act on.
    Plain,
    /// A `|`, `(` or `)` at group depth 0 (for `(` and `)`: the group that opens or closes
    /// there is a top-level one).
    Top,
    /// A quantifier: `?`, `*`, `+` or the `}` that closes `{n,m}`, outside classes.
    Quantifier,
}

/// Scanner state over regex text: escapes (with `\p{…}`-style braces), (nested) classes,
/// repetition braces and group depth.
struct Scan {
    depth: usize,
    class: usize,
    /// Characters since the current class opened (`]` first in a class is literal).
    class_len: usize,
    /// The current class began with `^`.
    caret: bool,
    escaped: bool,
    /// The previous character was an escape letter that may take braces (`\p`, `\P`, `\x`).
    escape_letter: bool,
    /// Inside the braces of such an escape.
    escape_braces: bool,
    /// Inside `{n,m}`.
    repetition: bool,
}

impl Scan {
    fn new() -> Scan {
        Scan {
            depth: 0,
            class: 0,
            class_len: 0,
            caret: false,
            escaped: false,
            escape_letter: false,
            escape_braces: false,
            repetition: false,
        }
    }

    /// Advance over `c` and say what it is.
    fn step(&mut self, c: char) -> Tok {
        if self.escape_braces {
            self.escape_braces = c != '}';
            return Tok::Plain;
        }
        if std::mem::take(&mut self.escape_letter) && c == '{' {
            self.escape_braces = true;
            return Tok::Plain;
        }
        if self.escaped {
            self.escaped = false;
            self.class_len += 1;
            self.escape_letter = matches!(c, 'p' | 'P' | 'x');
            return Tok::Plain;
        }
        if c == '\\' {
            self.escaped = true;
            return Tok::Plain;
        }
        if self.class > 0 {
            match c {
                '^' if self.class_len == 0 && !self.caret => {
                    self.caret = true;
                    return Tok::Plain;
                }
                // `]` first in a class is a literal.
                ']' if self.class_len == 0 => {}
                ']' => self.class -= 1,
                '[' => {
                    self.class += 1;
                    self.class_len = 0;
                    self.caret = false;
                    return Tok::Plain;
                }
                _ => {}
            }
            self.class_len += 1;
            return Tok::Plain;
        }
        if self.repetition {
            self.repetition = c != '}';
            return if c == '}' {
                Tok::Quantifier
            } else {
                Tok::Plain
            };
        }
        let top = |yes: bool| if yes { Tok::Top } else { Tok::Plain };
        match c {
            '[' => {
                self.class = 1;
                self.class_len = 0;
                self.caret = false;
                Tok::Plain
            }
            '{' => {
                self.repetition = true;
                Tok::Plain
            }
            '?' | '*' | '+' => Tok::Quantifier,
            '(' => {
                self.depth += 1;
                top(self.depth == 1)
            }
            ')' => {
                let at_top = self.depth == 1;
                self.depth = self.depth.saturating_sub(1);
                top(at_top)
            }
            '|' => top(self.depth == 0),
            _ => Tok::Plain,
        }
    }
}

/// The regex's `|`-separated top-level alternatives. Refuses a top-level inline flag group
/// (`(?i)`), which would apply across the alternatives that follow it.
fn top_level_alternatives(regex: &str) -> Result<Vec<&str>, PatternCompileError> {
    let mut scan = Scan::new();
    let mut parts = Vec::new();
    let mut from = 0;
    let mut previous = Tok::Plain;
    for (i, c) in regex.char_indices() {
        let tok = scan.step(c);
        // `(?` opens a group: its `?` is no quantifier.
        let opens_group = c == '?' && regex[..i].ends_with('(');
        if tok == Tok::Quantifier && c == '+' && previous == Tok::Quantifier {
            return Err(PatternCompileError::Unsupported {
                alternative: regex.to_string(),
                reason: format!(
                    "possessive quantifier at byte {i} (a DFA has no backtracking to forbid)"
                ),
            });
        }
        previous = if opens_group { Tok::Plain } else { tok };
        if tok != Tok::Top {
            continue;
        }
        match c {
            '|' => {
                parts.push(&regex[from..i]);
                from = i + 1;
            }
            '(' => {
                let rest = &regex[i..];
                let flags_only = rest
                    .strip_prefix("(?")
                    .and_then(|r| r.split_once(')'))
                    .is_some_and(|(f, _)| {
                        !f.is_empty() && f.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
                    });
                if flags_only {
                    return Err(PatternCompileError::Unsupported {
                        alternative: regex.to_string(),
                        reason: "inline flags at the top level (write `(?i:…)` instead)".into(),
                    });
                }
            }
            _ => {}
        }
    }
    parts.push(&regex[from..]);
    Ok(parts)
}

/// The byte offset of the `(` that opens the group ending `alternative`, when it ends with a
/// top-level group.
fn last_top_level_group(alternative: &str) -> Option<usize> {
    if !alternative.ends_with(')') {
        return None;
    }
    let mut scan = Scan::new();
    let mut open = None;
    let mut closed_at_end = false;
    for (i, c) in alternative.char_indices() {
        if scan.step(c) == Tok::Top {
            match c {
                '(' => open = Some(i),
                ')' => closed_at_end = i + 1 == alternative.len(),
                _ => {}
            }
        }
    }
    open.filter(|_| closed_at_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternatives_split_at_top_level_only() {
        let alts = top_level_alternatives(r"a|(b|c)|[|\]]|\||[^]|]x").unwrap();
        assert_eq!(alts, vec!["a", "(b|c)", r"[|\]]", r"\|", "[^]|]x"]);
        assert!(top_level_alternatives("(?i)a|b").is_err());
        assert_eq!(
            top_level_alternatives("(?i:a)|b").unwrap(),
            vec!["(?i:a)", "b"]
        );
    }

    #[test]
    fn look_ahead_shapes() {
        assert_eq!(
            trailing_negative_look_ahead(r"\s+(?!\S)"),
            Some((r"\s+", r"\S"))
        );
        assert!(compile_pattern(r"\s+(?!\S)|\s+").is_ok());
        // The look-ahead class must not allow what the run cannot take.
        assert!(compile_pattern(r"a+(?!b)").is_err());
        assert!(compile_pattern(r"\s+(?=\S)").is_err());
        assert!(compile_pattern(r"^a").is_err());
        assert!(compile_pattern(r"a*").is_err());
    }

    /// A regex whose automaton explodes is refused, quickly and without a huge allocation.
    #[test]
    fn exploding_automata_are_refused() {
        let err = compile_pattern(r"(?:a|b)*a(?:a|b){20}")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("states; at most 65,536") || err.contains("limit"),
            "{err}"
        );
    }
}
