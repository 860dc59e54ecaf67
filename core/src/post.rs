//! Post-processing: the special tokens a model adds around the ids of one text when encoding
//! "as the model expects" (`tokenizers`' `encode(text, add_special_tokens=True)`): BOS before
//! it (Llama), `[CLS]` before and `[SEP]` after it (BERT), `</s>` after it (T5). The host
//! reads them from the model's file (`picobpe-model`); the encoders never add them on their
//! own, and [`crate::StreamEncoder::with_template`] adds them to a stream.

/// The ids a model adds before and after the ids of one text (its single-sequence template:
/// `prefix $A suffix`). The default, empty on both sides, adds nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Template<'a> {
    /// Ids before the text's ids (BOS, `[CLS]`).
    pub prefix: &'a [u32],
    /// Ids after the text's ids (EOS, `[SEP]`).
    pub suffix: &'a [u32],
}

impl Template<'_> {
    /// The template that adds nothing.
    pub const NONE: Template<'static> = Template {
        prefix: &[],
        suffix: &[],
    };

    /// The number of ids the template adds.
    pub fn len(&self) -> usize {
        self.prefix.len() + self.suffix.len()
    }

    /// True when the template adds no id.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The ids due once the first `sent` went out: the rest of the prefix, then (once
    /// `text_done`: every id of the text is out) the rest of the suffix.
    pub(crate) fn due(&self, sent: usize, text_done: bool) -> &[u32] {
        match self.prefix.get(sent..) {
            Some(rest) if !rest.is_empty() => rest,
            _ if text_done => {
                let at = sent.saturating_sub(self.prefix.len());
                self.suffix.get(at..).unwrap_or(&[])
            }
            _ => &[],
        }
    }
}
