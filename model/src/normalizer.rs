//! The Unicode normalizer of a model, as files and the command line name it, and the
//! character steps of a SentencePiece-style `tokenizer.json`'s normalizer `Sequence`.

use picobpe::normalizer::{Folded, Steps, TextNormalizer, UnicodeForm};

/// Every form, in code order (code = index + 1; 0 is "none").
const FORMS: [(UnicodeForm, &str); 5] = [
    (UnicodeForm::Nfc, "nfc"),
    (UnicodeForm::Nfd, "nfd"),
    (UnicodeForm::Nfkc, "nfkc"),
    (UnicodeForm::Nfkd, "nfkd"),
    (UnicodeForm::NmtNfkc, "nmt-nfkc"),
];

/// The byte that stores `normalizer` in model and table files: 0 none, 1 NFC, 2 NFD, 3 NFKC,
/// 4 NFKD, 5 `Nmt` + NFKC.
pub fn code(normalizer: Option<UnicodeForm>) -> u8 {
    normalizer
        .and_then(|n| FORMS.iter().position(|&(f, _)| f == n))
        .map_or(0, |i| i as u8 + 1)
}

/// The normalizer a stored byte names (`None` for an unknown code).
pub fn from_code(code: u8) -> Option<Option<UnicodeForm>> {
    match code {
        0 => Some(None),
        c => FORMS.get(usize::from(c) - 1).map(|&(f, _)| Some(f)),
    }
}

/// The form named `nfc`, `nfd`, `nfkc`, `nfkd` or `nmt-nfkc` (any case).
pub fn parse(name: &str) -> Option<UnicodeForm> {
    let name = name.to_ascii_lowercase();
    FORMS.iter().find(|(_, n)| *n == name).map(|&(f, _)| f)
}

/// The form's name as `tokenizers` spells it (`NFC`, …).
pub fn name(form: UnicodeForm) -> &'static str {
    match form {
        UnicodeForm::Nfc => "NFC",
        UnicodeForm::Nfd => "NFD",
        UnicodeForm::Nfkc => "NFKC",
        UnicodeForm::Nfkd => "NFKD",
        UnicodeForm::NmtNfkc => "Nmt + NFKC",
    }
}

/// The character steps of a `tokenizer.json` normalizer `Sequence` that a SentencePiece-style
/// model holds besides its Unicode form and `Precompiled` (see `picobpe::normalizer::Steps`):
/// ALBERT's and XLNet's quote pairs, `StripAccents`, `Lowercase`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CharSteps {
    /// `Replace("``", "\"")` then `Replace("''", "\"")`, first.
    pub quotes: bool,
    /// `StripAccents` (after the Unicode form, which must then be `NFD` or `NFKD`).
    pub strip_accents: bool,
    /// `Lowercase`.
    pub lowercase: bool,
    /// `Lowercase` comes before `StripAccents`.
    pub lowercase_first: bool,
}

impl CharSteps {
    /// True when there is a step.
    pub fn any(&self) -> bool {
        self.quotes || self.strip_accents || self.lowercase
    }

    /// The four flags as bits 0-3 (quotes, strip_accents, lowercase, lowercase_first).
    pub fn bits(&self) -> u8 {
        u8::from(self.quotes)
            | u8::from(self.strip_accents) << 1
            | u8::from(self.lowercase) << 2
            | u8::from(self.lowercase_first) << 3
    }

    /// The steps [`CharSteps::bits`] stores; `None` for bits it never sets (bits 4-7, or
    /// `lowercase_first` without both steps).
    pub fn from_bits(bits: u8) -> Option<Self> {
        let steps = CharSteps {
            quotes: bits & 1 != 0,
            strip_accents: bits & 2 != 0,
            lowercase: bits & 4 != 0,
            lowercase_first: bits & 8 != 0,
        };
        let order_ok = !steps.lowercase_first || (steps.lowercase && steps.strip_accents);
        (bits < 16 && order_ok).then_some(steps)
    }

    /// The steps as `tokenizers` names them, in order, with `form` before them and, with
    /// `precompiled`, `Precompiled` after: `NFKD + StripAccents + Lowercase + Precompiled`.
    pub fn describe(&self, form: Option<UnicodeForm>, precompiled: bool) -> String {
        let mut names = Vec::new();
        if self.quotes {
            names.push("Replace(\"``\", \"\\\"\") + Replace(\"''\", \"\\\"\")");
        }
        names.extend(form.map(name));
        let (lower, strip) = ("Lowercase", "StripAccents");
        match (self.lowercase, self.strip_accents, self.lowercase_first) {
            (true, true, true) => names.extend([lower, strip]),
            (true, true, false) => names.extend([strip, lower]),
            (true, false, _) => names.push(lower),
            (false, true, _) => names.push(strip),
            (false, false, _) => {}
        }
        if precompiled {
            names.push("Precompiled");
        }
        names.join(" + ")
    }

    /// The core's steps for these with `form` before them and, with `precompiled`, the
    /// character map after them; `None` without a step, or with a form the core cannot apply
    /// a character at a time (only `NFD` or `NFKD`, and only with `StripAccents`).
    pub fn steps(&self, form: Option<UnicodeForm>, precompiled: bool) -> Option<Steps> {
        use picobpe::normalizer::Decompose;
        if !self.any() {
            return None;
        }
        let decompose = match form {
            None => None,
            Some(UnicodeForm::Nfd) => Some(Decompose::Canonical),
            Some(UnicodeForm::Nfkd) => Some(Decompose::Compatibility),
            Some(_) => return None,
        };
        let steps = Steps {
            quotes: self.quotes,
            decompose,
            strip_accents: self.strip_accents,
            lowercase: self.lowercase,
            lowercase_first: self.lowercase_first,
            precompiled,
            fffd_per_subpart: false,
        };
        steps.is_exact().then_some(steps)
    }

    /// `Lowercase` alone after a form that [`CharSteps::steps`] cannot take (`NFC`, `NFKC`,
    /// or `NFD` or `NFKD` without `StripAccents`), as the core's [`Folded`] normalizer: each
    /// unit of the form written whole, then lowercased a character at a time, which is
    /// `tokenizers`' `Sequence[form, Lowercase]`. `None` for any other steps, with
    /// `Precompiled`, or after `Nmt`.
    pub fn folded(&self, form: Option<UnicodeForm>, precompiled: bool) -> Option<Folded> {
        let lowercase_only = self.lowercase && !self.strip_accents && !self.quotes;
        let folded = Folded {
            form,
            lowercase: true,
            collapse_whitespace: false,
        };
        (lowercase_only && !precompiled && form.is_some() && folded.is_exact()).then_some(folded)
    }

    /// The core's normalizer for these steps after `form` (and `Precompiled` after them when
    /// `precompiled`): [`CharSteps::steps`], else [`CharSteps::folded`]; `None` without a
    /// step or for steps the core cannot apply.
    pub fn normalizer(
        &self,
        form: Option<UnicodeForm>,
        precompiled: bool,
    ) -> Option<TextNormalizer> {
        match self.steps(form, precompiled) {
            Some(steps) => Some(TextNormalizer::steps(steps)),
            None => self.folded(form, precompiled).map(TextNormalizer::folded),
        }
    }
}

/// The normalizer a SentencePiece-style model's tables apply: its character steps (with its
/// form and `Precompiled` in them), else `Precompiled`, else its Unicode form. `None` also
/// for steps the core cannot apply (a model's validation refuses those).
pub fn text_normalizer(
    form: Option<UnicodeForm>,
    precompiled: bool,
    char_steps: CharSteps,
) -> Option<TextNormalizer> {
    if char_steps.any() {
        return char_steps.normalizer(form, precompiled);
    }
    if precompiled {
        return Some(TextNormalizer::precompiled());
    }
    form.map(TextNormalizer::new)
}

/// The normalizer a WordPiece model's tables apply besides `BertNormalizer`'s flags: its
/// character steps (with its form before them; a maximal invalid subsequence of bytes is one
/// U+FFFD, as the WordPiece family reads the text), else its
/// Unicode form. `None` also for steps the core cannot apply (validation refuses those).
pub fn wordpiece_normalizer(
    form: Option<UnicodeForm>,
    char_steps: CharSteps,
) -> Option<TextNormalizer> {
    if char_steps.any() {
        return match char_steps.steps(form, false) {
            Some(s) => Some(TextNormalizer::steps(Steps {
                fffd_per_subpart: true,
                ..s
            })),
            // Bytes that are not UTF-8 pass through `Folded` as they are; the WordPiece
            // encoder reads them by its own rule, as after a Unicode form alone.
            None => char_steps.folded(form, false).map(TextNormalizer::folded),
        };
    }
    form.map(TextNormalizer::new)
}
