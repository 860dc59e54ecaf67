//! The Unicode normalizer of a byte-level model, as files and the command line name it.

use picobpe::normalizer::UnicodeForm;

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
