//! The generated Unicode class tables (`core/src/pretok/unicode_tables.rs`) agree with the
//! classes `regex` / `fancy-regex` use (`\p{Lu}`, …, `\s`) for every Unicode scalar value.

use picobpe::pretok::{char_class, CharClass};

#[test]
fn class_table_matches_regex_for_every_scalar_value() {
    use CharClass::*;
    let classes: [(&str, &[CharClass]); 12] = [
        (r"\p{Lu}", &[UppercaseLetter]),
        (r"\p{Ll}", &[LowercaseLetter]),
        (r"\p{Lt}", &[TitlecaseLetter]),
        (r"\p{Lm}", &[ModifierLetter]),
        (r"\p{Lo}", &[OtherLetter]),
        (r"\p{M}", &[Mark]),
        (r"\p{N}", &[Number]),
        (r"\s", &[WhiteSpace]),
        (
            r"\p{L}",
            &[
                UppercaseLetter,
                LowercaseLetter,
                TitlecaseLetter,
                ModifierLetter,
                OtherLetter,
            ],
        ),
        (r"[^\s\p{L}\p{N}]", &[Other, Mark]),
        (r"[^\r\n\p{L}\p{N}]", &[Other, Mark, WhiteSpace]), // except \r, \n: checked below
        (
            r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]",
            &[
                UppercaseLetter,
                TitlecaseLetter,
                ModifierLetter,
                OtherLetter,
                Mark,
            ],
        ),
    ];
    let mut counts = [0usize; 9];
    for c in (0..=0x10_FFFFu32).filter_map(char::from_u32) {
        counts[char_class(c) as usize] += 1;
    }
    // Every class is populated (a constant table would fail here).
    assert!(counts.iter().all(|&n| n > 0), "{counts:?}");
    for (pat, members) in classes {
        let re = fancy_regex::Regex::new(&format!("^{pat}$")).unwrap();
        let mut buf = [0u8; 4];
        let mut bad = Vec::new();
        for c in (0..=0x10_FFFFu32).filter_map(char::from_u32) {
            let want = re.is_match(c.encode_utf8(&mut buf)).unwrap();
            let mut got = members.contains(&char_class(c));
            if pat.starts_with(r"[^\r\n") && (c == '\r' || c == '\n') {
                got = false;
            }
            if want != got && bad.len() < 10 {
                bad.push(format!(
                    "U+{:04X} ({:?}): regex {want}, table {got}",
                    c as u32,
                    char_class(c)
                ));
            }
        }
        assert!(bad.is_empty(), "{pat}:\n{}", bad.join("\n"));
    }
}
