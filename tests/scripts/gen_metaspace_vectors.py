#!/usr/bin/env python3
"""Generate picobpe's reference data for SentencePiece-style `tokenizer.json` files that split
words with a `Metaspace` pre-tokenizer, made and run by the real Hugging Face `tokenizers` (and
`transformers`' T5 converter over a real `sentencepiece` model); never with picobpe.

Usage (from the repository root; about 30 s):

    pip install sentencepiece==0.2.3 protobuf==7.36.2 tokenizers==0.22.2
    pip install --no-deps transformers==4.57.6      # only for convert_slow_tokenizer
    pip install "huggingface-hub>=0.34,<1.0" numpy pyyaml safetensors regex  # checked at its import
    python3 tests/scripts/gen_metaspace_vectors.py [--only STEM,...]

With --only, just those models are made again (their files and vectors); the others and their
MANIFEST entries stay as committed.

It (re)writes, under tests/fixtures/metaspace/:

    models/ms-unigram.tokenizer.json   Tokenizer(models.Unigram()) + pre_tokenizers.Metaspace()
                                       (prepend_scheme "always", split true: the library's
                                       defaults) + decoders.Metaspace(), trained by tokenizers'
                                       UnigramTrainer
    models/ms-unigram-whole.tokenizer.json  Unigram + Metaspace(split=False), trained so: the
                                       trainer sees whole sentences and learns pieces that hold
                                       a "▁" after other characters ("▁of▁the")
    models/ms-unigram-cut.tokenizer.json    that vocabulary with Metaspace() (split true): such
                                       pieces never match, as words are segmented apart
    models/ms-bpe-first.tokenizer.json Tokenizer(models.BPE(unk_token="<unk>")) +
                                       Metaspace(prepend_scheme="first"), trained by BpeTrainer
    models/ms-t5.tokenizer.json        transformers' T5Converter over a Unigram model trained here
                                       by sentencepiece (identity rule, so no Precompiled step):
                                       Strip(right) + Replace(Regex(" {2,}"), "▁") + Metaspace
    models/ms-bpe-nfkc.tokenizer.json  tokenizers' own SentencePieceBPETokenizer (NFKC +
                                       Metaspace), trained by its train_from_iterator
    models/ms-unigram-nfd.tokenizer.json  Unigram with an NFD normalizer + Metaspace(), trained
    models/ms-unigram-nmt.tokenizer.json  tokenizers' own SentencePieceUnigramTokenizer (Nmt +
                                       NFKC + Replace(Regex(" {2,}"), " ") + Metaspace), trained
                                       by its train_from_iterator
    models/ms-t5-nfkc.tokenizer.json   T5Converter over tests/fixtures/sp_norm/models/nfkc-bpe.model
                                       (sentencepiece BPE, nmt_nfkc): Precompiled +
                                       Strip(right) + Replace(Regex(" {2,}"), "▁") + Metaspace
    models/ms-t5-cf.tokenizer.json     T5Converter over tests/fixtures/sp_norm/models/nfkc-ug.model
                                       (sentencepiece Unigram, nmt_nfkc_cf): the same steps
    models/ms-t5-tsv.tokenizer.json    T5Converter over tests/fixtures/sp_norm/models/nfkc-tsv.model
                                       (sentencepiece BPE, custom TSV rules): the same steps
    models/ms-t5-ws.tokenizer.json     ms-t5-nfkc's file in the shape of the T5 files published
                                       with the models: normalizer Precompiled alone,
                                       Sequence[WhitespaceSplit, Metaspace] with the old
                                       `"str_rep"` and `"add_prefix_space": true` form
                                       (pre-tokenizer and decoder)
    models/ms-t5-ws-cf.tokenizer.json  ms-t5-cf's with Precompiled + Replace(Regex(" {2,}"), " ")
                                       and Sequence[WhitespaceSplit, Metaspace(always, split)]
                                       (the shape of later converters' T5 files)
    models/ms-ws.tokenizer.json        ms-t5's vocabulary, no normalizer (so U+2581 reaches the
                                       pre-tokenizer: a Precompiled map makes it a space),
                                       Sequence[WhitespaceSplit, Metaspace(always, split)]
    models/ms-ws-never.tokenizer.json  the same with Metaspace(prepend_scheme never)
    models/ms-albert.tokenizer.json    transformers' AlbertConverter (keep_accents False,
                                       do_lower_case True: ALBERT's defaults) over
                                       tests/fixtures/sp_norm/models/nfkc-ug.model: Replace("``")
                                       + Replace("''") + NFKD + StripAccents + Lowercase +
                                       Precompiled + Replace(Regex(" {2,}"), " ") + Metaspace
    models/ms-xlnet.tokenizer.json     XLNetConverter (do_lower_case False, XLNet's default) over
                                       tests/fixtures/sp_norm/models/nfkc-bpe.model: the same
                                       steps without Lowercase
    models/ms-albert-ws.tokenizer.json ms-albert's file with the WhitespaceSplit + Metaspace
                                       (old `add_prefix_space` form) pre-tokenizer of the ALBERT
                                       files published with the models
    models/ms-unigram-lower.tokenizer.json  Unigram with Sequence[NFD, Lowercase, StripAccents]
                                       (the tokenizers guides' normalizer) + Metaspace(), trained here
    models/ms-unigram-nfkc-lower.tokenizer.json  Unigram with Sequence[NFKC, Lowercase] +
                                       Metaspace(), trained here
    models/ms-bpe-nfkc-lower.tokenizer.json  SentencePieceBPETokenizer with its NFKC normalizer
                                       made Sequence[NFKC, Lowercase] before training
    models/ms-unigram-punct, ms-unigram-words, ms-unigram-digits-never,
    ms-bpe-wsplit-punct-digits (.tokenizer.json)  trained here with Punctuation, Whitespace,
                                       Digits (prepend scheme never), and WhitespaceSplit +
                                       Punctuation(contiguous) + Digits(individual) after NFKC,
                                       before a Metaspace that splits (PRE_SPLIT)
    models/ms-unigram-nodec, ms-sp4096-nodec (.tokenizer.json)  ms-unigram's file and
                                       tests/fixtures/sentencepiece/models/sp4096.tokenizer.json
                                       (Prepend + Replace, byte fallback) with no decoder: ids
                                       decode as the pieces joined by spaces
    models/ms-bpe-quicktour, ms-unigram-wsplit-digits (.tokenizer.json)  no Metaspace and no
                                       decoder: the BPE of tokenizers' quick tour (Whitespace,
                                       [UNK]), and Unigram with WhitespaceSplit +
                                       Digits(individual) after NFKC + Lowercase
    models/ms-xlmr.tokenizer.json      transformers' XLMRobertaConverter over
                                       tests/fixtures/sp_norm/models/nfkc-ug.model, `<mask>`
                                       registered with lstrip as XLMRobertaTokenizerFast does
    models/ms-xlmr-strips.tokenizer.json  the same with `<s>` rstrip and `</s>` lstrip and
                                       rstrip, and Precompiled + Replace(" {2,}", " ") as its
                                       normalizer (made up: no Strip hides what strips take)
    models/ms-deberta.tokenizer.json   transformers' DebertaV2Converter (do_lower_case and
                                       split_by_punct False, deberta-v3's settings) over
                                       tests/fixtures/sp_norm/models/nfkc-ug.model: Strip(both)
                                       + Precompiled + Replace(" {2,}", " "), Metaspace
    (The converters' post-processors name [CLS]/<cls> pieces these vocabularies lack: the
    files keep none.)
    inputs/added_edge.jsonl            added tokens that take whitespace next to whitespace of
                                       every kind (vectors for the ms-xlmr models)
    inputs/strip_edge.jsonl            whitespace of every kind, and characters the map makes
                                       spaces or drops, at the ends of texts and of the texts
                                       between added tokens (vectors for ms-deberta and ms-t5-cf)
    inputs/split_edge.jsonl            digits, punctuation, word and other characters, U+2581
                                       and whitespace side by side (vectors for PRE_SPLIT only)
    inputs/ws_edge.jsonl               whitespace of every kind next to U+2581 (vectors for the
                                       WhitespaceSplit models and ms-unigram-nmt only)
    inputs/grapheme_edge.jsonl         where tokenizers' Precompiled rule (a grapheme cluster at a
                                       time, shortest key) differs from sentencepiece's (vectors
                                       for the Precompiled models only)
    inputs/ms_edge.jsonl               whitespace, U+2581 and added-token edge cases
    inputs/nfkc_edge.jsonl             text the Unicode forms change (vectors for the two
                                       normalizing models only)
    inputs/steps_edge.jsonl            quote pairs, case and accents (vectors for the models with
                                       StripAccents or Lowercase only)
    steps_scalars.json.gz              tokenizers' Lowercase and StripAccents (the Python wheel)
                                       on every Unicode scalar value alone: the ones they change
    vectors/<stem>/<set>.jsonl.gz      tokenizers' ids and decodings (`decode(ids,
                                       skip_special_tokens=False)`; record format of
                                       tests/fixtures/sentencepiece; "ids" are tokenizers' here);
                                       the corpus set for ms-unigram and ms-t5 only (size)
    MANIFEST.json                      versions, options, counts, sha256 of every file

Invalid UTF-8: `tokenizers` takes only `str`. picobpe reads each byte outside a well-formed
sequence as U+FFFD (sentencepiece's rule), so the reference for such an input is `tokenizers`
run on that text (fffd_text below).

Training text: the first 300,000 bytes of tests/fixtures/train/english-1mb.txt (public domain),
one sentence per non-empty line. Characters outside it (most of the multilingual inputs) meet
`<unk>`. tokenizers' UnigramTrainer is not deterministic (two runs, even on one thread, give
slightly different scores), so a rerun rewrites the three ms-unigram* models and their vectors
with another, equally valid, vocabulary; the BPE and T5 files come out byte-identical.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import json
import sys
from pathlib import Path

import sentencepiece as spm
import tokenizers
from tokenizers import (AddedToken, SentencePieceBPETokenizer, SentencePieceUnigramTokenizer, Tokenizer,
                        decoders, models, normalizers, pre_tokenizers, trainers)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_sp_vectors import fffd_text, load_set, sha256, write_jsonl  # noqa: E402
from gen_unigram_vectors import SETS as UNIGRAM_SETS, SUBSET, tokenizer_json  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures"
OUT = FIXTURES / "metaspace"
CORPUS = FIXTURES / "train/english-1mb.txt"
SAMPLE_BYTES = 300_000
SPECIALS = ["<unk>", "<s>", "</s>"]

# The Unigram sets (every k-th record of the large ones, by SUBSET), and this script's own.
SETS = {
    **UNIGRAM_SETS,
    "ms_edge": "metaspace/inputs/ms_edge.jsonl",
    "nfkc_edge": "metaspace/inputs/nfkc_edge.jsonl",
    "grapheme_edge": "metaspace/inputs/grapheme_edge.jsonl",
    "ws_edge": "metaspace/inputs/ws_edge.jsonl",
    "steps_edge": "metaspace/inputs/steps_edge.jsonl",
    "strip_edge": "metaspace/inputs/strip_edge.jsonl",
    "added_edge": "metaspace/inputs/added_edge.jsonl",
    "split_edge": "metaspace/inputs/split_edge.jsonl",
}
PRECOMPILED = {"ms-t5-nfkc": "nfkc-bpe", "ms-t5-cf": "nfkc-ug", "ms-t5-tsv": "nfkc-tsv"}
# WhitespaceSplit + Metaspace models: (stem, the stem whose file they are made from, shape).
WHITESPACE = {"ms-t5-ws": ("ms-t5-nfkc", "published"), "ms-t5-ws-cf": ("ms-t5-cf", "squeeze"),
              "ms-ws": ("ms-t5", "identity"), "ms-ws-never": ("ms-t5", "never")}
# ALBERT / XLNet converter files: (the converter, the sentencepiece model, do_lower_case).
STEPS_CONVERTED = {"ms-albert": ("AlbertConverter", "nfkc-ug", True),
                   "ms-xlnet": ("XLNetConverter", "nfkc-bpe", False)}
# DeBERTa-v2/v3 converter files (DebertaV2Converter, do_lower_case False, split_by_punct False:
# deberta-v3's and mdeberta-v3's settings): Strip(left, right) + Precompiled + Replace(" {2,}",
# " "), Sequence[Metaspace]. The sentencepiece model for each.
DEBERTA = {"ms-deberta": "nfkc-ug"}
# XLM-RoBERTa files (XLMRobertaConverter over the model, then `<mask>` registered with
# lstrip=True as XLMRobertaTokenizerFast registers it): "ms-xlmr"; and the same file with
# `<s>` taking the whitespace after it and `</s>` the whitespace on both sides
# ("ms-xlmr-strips", made up to cover rstrip).
XLMR = {"ms-xlmr": "nfkc-ug", "ms-xlmr-strips": "nfkc-ug"}
# Pre-tokenizer steps before a Metaspace that splits, trained here: (model, the steps,
# Metaspace's prepend scheme or None for no Metaspace and no decoder, normalizer or None).
# "ms-bpe-quicktour" is the BPE of tokenizers' quick tour (its trainer's special tokens too).
PRE_SPLIT = {"ms-unigram-punct": ("unigram", "punct", "always", None),
             "ms-unigram-words": ("unigram", "whitespace", "always", None),
             "ms-unigram-digits-never": ("unigram", "digits", "never", None),
             "ms-bpe-wsplit-punct-digits": ("bpe", "wsplit-punct-digits", "always", "NFKC"),
             "ms-bpe-quicktour": ("quicktour", "whitespace", None, None),
             "ms-unigram-wsplit-digits": ("unigram", "wsplit-digits", None, "NFKC-lower")}
# Files with their decoder removed (tokenizers then decodes the pieces joined by spaces):
# stem -> the file it is made from.
NO_DECODER = {"ms-unigram-nodec": "metaspace/models/ms-unigram.tokenizer.json",
              "ms-sp4096-nodec": "sentencepiece/models/sp4096.tokenizer.json"}
STEPS = {*STEPS_CONVERTED, "ms-albert-ws", "ms-unigram-lower", "ms-unigram-nfkc-lower",
         "ms-bpe-nfkc-lower"}
PRECOMPILED_ALL = {*PRECOMPILED, "ms-t5-ws", "ms-t5-ws-cf", "ms-albert", "ms-xlnet",
                   "ms-albert-ws", *DEBERTA}
NORMALIZING = {"ms-bpe-nfkc", "ms-unigram-nfd", "ms-unigram-nmt", *PRECOMPILED_ALL, *STEPS}
CORPUS_MODELS = {"ms-unigram", "ms-t5", "ms-t5-nfkc", "ms-t5-ws", "ms-albert", *DEBERTA}

EDGE = [
    "a", " a", "  a", "a ", "a  ", "a   b", " a  b  ", "\u2581a", " \u2581a", "a\u2581", "a \u2581 b",
    "\u2581\u2581", "   ", " ", "", "\t", "a\tb", "a\nb", "a \n b", "a\n", "a \n", "a\u3000", "a \u3000 b",
    "a\u00a0b ", "a\u2028", "a\u0085", "\u200bb", "a\u1680 \u2000b", "a\r\n", "<s>", " <s> ", "a<s>b",
    "a <s> b", "a  <s>  b", "<s>a</s>", "</s> a", "a</s>", "<s><s>", "<s> </s>", "x <unk> y",
    "the  cat\u2581sat", "The quick  brown fox.  ", "Hello, world!  \n", "  leading and trailing  ",
    "\u2581\u2581the", "a \u2581", "\u2581 ", "日本 語", "e\u0301 x", "📦 ok",
]


# WhitespaceSplit drops every White_Space character (U+0085, U+00A0, U+1680, U+2000-U+200A,
# U+2028/9, U+202F, U+205F, U+3000 and the ASCII ones) and a word that starts with U+2581 gets
# no second one; U+200B, U+180E and U+FEFF are not whitespace.
WS_EDGE = [
    "a \u2581b", " \u2581a", "\u2581 \u2581", "\u2581", "a\t\u2581 b", "x\u2581\u2581y z", "a\u200bb c",
    "a\u180eb", "\ufeff a", "a\u0085b\u00a0c", "a\u1680b\u2000c\u200ad", "a\u2028b\u2029c", "a\u202fb\u205fc",
    "a\u3000\u2581b", "\x0b\x0c\x1c\x1d\x1e\x1f a", "a\x1cb", "\u2581\u2581 \u2581a\u2581 b\u2581",
    " \t\n ", "a <s>b", "a<s> b", "\u2581<s>\u2581", "<s> \u2581x", "word" * 80 + " x",
]


# What NFKC / NFD change: full- and half-width forms, ligatures, super- and subscripts, circled
# numbers, compatibility jamo and ideographs, decomposed and precomposed letters, marks out of
# order, wave dash, ideographic, no-break and zero-width spaces, BOM, controls, final sigma,
# sharp s, dotted I, Hangul, Indic, emoji with modifiers, spaces NFKC makes (U+00A0, U+3000).
NFKC_EDGE = [
    "ＡＢＣ ａｂｃ １２３", "ｶﾀｶﾅ ﾊﾟﾋﾟ", "ﬁne ﬂow ﬀ", "x² H₂O ⁴⁵", "① ⑩ ⑳ ㉑", "ㄱㄴㄷ ㅏ", "㈜ ㍿ ㎏ ㎞",
    "e\u0301 a\u0308 o\u0302\u0323", "é ä ộ", "a\u0323\u0302 a\u0302\u0323", "～〜~", "a\u3000b\u3000\u3000c",
    "\u3000lead", "a\u00a0b \u00a0 c", "zero\u200bwidth", "\ufeffbom", "tab\tnew\nline\r", "ΣΊΣΥΦΟΣ σς",
    "Straße ß", "İstanbul ı", "한국어 한글", "\u1100\u1161\u11a8", "हिन्दी क्षत्रिय", "👍🏽 👨\u200d👩\u200d👧",
    "Å Å Ω Ω", "¨ ´ ¸ ˜", "\u00a8a", "  ＡＢＣ  ", "ｱ ｲ ｳ\u3000ｴ", "ℌℍ ℕ ℙ ℚ ℝ ℤ", "½ ¼ ⅞", "ⅰⅱⅲ Ⅳ Ⅴ",
    "¹²³ ⁰ ₀₁", "ﾟﾞ", "\u0344", "\u0f73 \u0f75", "ᄀ" * 5 + "ᅡ" * 5, "a" + "\u0301" * 300, "\u3000" * 40,
    "<s>ＡＢＣ</s> ①", "\u2581①", " ﬁ", "Ａ" * 200,
]


# Where tokenizers' Precompiled rule acts: a cluster under 6 bytes whose first character is a
# key loses the rest (a full-width letter with an accent, CR LF, a circled digit with a mark),
# a longer one is mapped character by character; Indic conjuncts (GB9c), emoji sequences
# (GB11), flags (GB12/13), Prepend, Hangul jamo, marks on spaces and controls, and what the
# map turns into spaces next to the whitespace steps.
GRAPHEME_EDGE = [
    "Ａ\u0301", "Ａ\u0301\u0301", "xＡ\u0301 y", "\r\n", "a\r\nb", "a \r\n b", "\n\u0301", "ｶﾞ",
    "ｶﾞ\u0301", "①\u0301", "ﬁ\u0301", "e\u0301", "e\u0301\u0301", "é\u0301", "\u0958\u0301",
    "क्\u0958\u0301", "क्\u200d\u0958\u0301", "a\u0958\u0301", "\u0600Ａ", "\u0600Ａ\u0301",
    "Ａ\u200d\u0301", "ᄀＡ", "\u1100\u1161\u0301", "가\u0301", "🇯🇵 🇯🇵🇯", "👍\u200d👍", "©\u200d©",
    "µ\u0301", "½\u0301", "¨\u0301", "\u00a0\u0301", " \u0301", "\t\u0301", "\u3000\u0301",
    "a\u3000\u3000b", "a\u3000 \u3000b", "\u3000a", "a\u3000", "a \u3000", "\ufeffa", "\u200ba\u200b",
    "a\u0085b", "a\u2028", "ＡＢ\u0301Ｃ\u0308", "Ａ" + "\u0301" * 40, "\u0301" * 3, "<s>Ａ\u0301</s>",
    "Ａ\u0301<s>", "\u2581Ａ\u0301", "Ａ\u0301\u2581", "\x7f\u0301", "x\ufffd\u0301",
]


# What the character steps act on: ALBERT's quote pairs (leftmost, non-overlapping: odd runs,
# mixed), case (dotted I, final sigma, sharp s, titlecase digraphs, Kelvin, Greek, Cyrillic,
# Armenian, Deseret, Turkish), accents precomposed and combining, marks alone and on spaces,
# the steps meeting Precompiled (full-width capitals with accents, ligatures, circled letters).
STEPS_EDGE = [
    "``quoted''", "```", "''''", "'''", "`'`'", "``a``b''c''", "it''s ``x'' y", "` `", "'' ''",
    "``\u0301", "''\u0301x", "Don't", "rock 'n' roll", "İstanbul İ", "I\u0307", "ΣΊΣΥΦΟΣ σς Σ",
    "STRASSE Straße ẞ", "ǅ ǈ ǋ ǲ", "\u212a \u212b \u2126", "ÀÉÎÕÜ àéîõü", "E\u0301 e\u0301",
    "Ǆemal", "ПРИВЕТ Мир", "ԱԲԳ", "\U00010400\U00010428", "Ａ\u0301 Ｂ\u0308", "ﬁ ﬂ ﬃ", "Ⓐ Ⓩ ⓐ",
    "ＡＢＣ\u3000ａｂｃ", "\u0301\u0301 a", " \u0301 ", "x\u20dd", "Ⅻ ⅻ", "㎒ ㍱", "ᾈ ᾼ ῌ",
    "Ǎ\u0328", "\u0345", "ΐ ΰ", "ß\u0301", "ı\u0307", "TITLE Case lower", "`Hello` 'World'",
    "<s>``A''</s>", "Ａ" * 40, "``" * 60,
]


def steps_scalars() -> dict:
    """tokenizers' Lowercase and StripAccents on every scalar value alone: the ones they change."""
    lower, strip = normalizers.Lowercase(), normalizers.StripAccents()
    lowered, stripped = {}, []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        low = lower.normalize_str(c)
        if low != c:
            lowered[f"{cp:X}"] = low
        if strip.normalize_str(c) != c:
            stripped.append(cp)
    return {"lowercase": lowered, "strip_accents": stripped}


def sentences() -> list[str]:
    data = CORPUS.read_bytes()[:SAMPLE_BYTES]
    data = data[: data.rfind(b"\n") + 1]
    return [line for line in data.decode("utf-8").split("\n") if line.strip()]


def unigram(lines: list[str], split: bool) -> Tokenizer:
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(split=split)
    tok.decoder = decoders.Metaspace(split=split)
    trainer = trainers.UnigramTrainer(vocab_size=1500, special_tokens=SPECIALS, unk_token="<unk>",
                                      show_progress=False)
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


def bpe_first(lines: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))  # fuse_unk false: one <unk> per character
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    tok.decoder = decoders.Metaspace(prepend_scheme="first")
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


def t5(lines: list[str], work: Path) -> str:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=model, model_type="unigram", vocab_size=1000,
        normalization_rule_name="identity", add_dummy_prefix=True, remove_extra_whitespaces=True,
        pad_id=0, eos_id=1, unk_id=2, bos_id=-1, character_coverage=1.0, input_sentence_size=0,
        shuffle_input_sentence=False, num_threads=1, minloglevel=2)
    path = work / "ms-t5.model"
    path.write_bytes(model.getvalue())
    try:
        return tokenizer_json(path, "T5Converter")
    finally:
        path.unlink()


def metaspace_unigram(lines: list[str], normalizer) -> Tokenizer:
    """A Unigram trained here with `normalizer` before a default `Metaspace` (and its
    decoder)."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=1500, special_tokens=SPECIALS,
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


def pre_split_model(lines: list[str], kind: str, steps: str, scheme: str,
                    norm: str | None) -> Tokenizer:
    """A model trained here with pre-tokenizer `steps` before a `Metaspace` that splits (with
    `scheme` None: no Metaspace and no decoder)."""
    parts = {
        "punct": [pre_tokenizers.Punctuation()],
        "whitespace": [pre_tokenizers.Whitespace()],
        "digits": [pre_tokenizers.Digits(individual_digits=False)],
        "wsplit-punct-digits": [pre_tokenizers.WhitespaceSplit(),
                                pre_tokenizers.Punctuation(behavior="contiguous"),
                                pre_tokenizers.Digits(individual_digits=True)],
        "wsplit-digits": [pre_tokenizers.WhitespaceSplit(),
                          pre_tokenizers.Digits(individual_digits=True)],
    }[steps]
    if kind == "unigram":
        tok = Tokenizer(models.Unigram())
        trainer = trainers.UnigramTrainer(vocab_size=1500, special_tokens=SPECIALS,
                                          unk_token="<unk>", show_progress=False)
    elif kind == "quicktour":
        tok = Tokenizer(models.BPE(unk_token="[UNK]"))
        trainer = trainers.BpeTrainer(
            vocab_size=1500, show_progress=False,
            special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"])
    else:
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=SPECIALS,
                                      show_progress=False)
    if norm == "NFKC-lower":
        tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    elif norm:
        tok.normalizer = getattr(normalizers, norm)()
    if scheme is None:
        tok.pre_tokenizer = parts[0] if len(parts) == 1 else pre_tokenizers.Sequence(parts)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            parts + [pre_tokenizers.Metaspace(prepend_scheme=scheme)])
        tok.decoder = decoders.Metaspace(prepend_scheme=scheme)
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


# What `Strip(left, right)` acts on (DeBERTa): whitespace of every kind, and characters the map
# turns into spaces or drops, at both ends of the text and of the texts between added tokens.
STRIP_WS = [" ", "  ", "\t", "\n", "\r\n", "\u0085", "\u00a0", "\u1680", "\u2028", "\u3000",
            "\u200b", "\u180e", "\ufeff", " \u0085 ", "\u3000a\u3000"]
# Added tokens that take whitespace (`<mask>`'s lstrip, and made-up rstrips on `<s>`/`</s>`)
# next to whitespace of every kind, other added tokens and text.
ADDED_EDGE = [form.format(w=w, t=t) for t in ("<mask>", "<s>", "</s>") for w in STRIP_WS[:12]
              for form in ("a{w}{t}{w}b", "{w}{t}", "{t}{w}", "{w}{t}{w}{t}{w}", "a{t}{w}<mask>b",
                           "x{w}{w}{t}y")]
STRIP_EDGE = [form.format(w=w) for w in STRIP_WS
              for form in ("{w}", "{w}a", "a{w}", "<s>{w}a", "a{w}<s>", "<s>{w}</s>", "{w}<s>{w}",
                           "a{w}<s>{w}b{w}", "{w}\u2581{w}", "x{w}{w}y")]

# What the pre-tokenizer steps before a Metaspace cut at (PRE_SPLIT models): digits of every
# script, punctuation (ASCII, Unicode P*, symbols that are not P*), word and non-word
# characters, `▁` itself, whitespace of every kind, marks, added tokens, and runs of them.
SPLIT_PARTS = ["a", "Z", "_", "é", "e\u0301", "中", "Я", "0", "7", "12", "٣", "१", "７", "Ⅻ", "½",
               "²", ".", ",", "!?", "...", "-", "—", "«", "»", "「", "」", "¿", "、", "$", "+",
               "€", "©", "`", "'", "\"", "@", "#", "\u2581", "\u2581\u2581", " ", "  ", "\t", "\n",
               "\u3000", "\u00a0", "\u200b", "\u0301", "<s>", "</s>", "<unk>", "\U0001f600",
               "\ufffd"]
PRE_SPLIT_EDGE = (
    ["", " ", "a1b2", "abc 123 def", "3.14", "1,000,000", "x=1+2", "Hello, world!", "don't",
     "e.g. (this)", "a \u2581b", "\u2581a,\u2581", "a__b", "word\u2581\u2581word", "  a  ,  b  ",
     "٣٤٥ ١٢٣ ７８", "¿Qué? ¡Sí!", "«quote» 「日本」", "a\u3000,\u3000b", "<s>1,2</s>", "a<s>,",
     "1<unk>2", "end." * 30]
    + [a + b for a in SPLIT_PARTS for b in SPLIT_PARTS if (len(a) + len(b)) % 3 == 0]
    + [a + b + c for a in SPLIT_PARTS[::5] for b in SPLIT_PARTS[1::4] for c in SPLIT_PARTS[2::3]]
)


def main() -> None:
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="", help="comma-separated model stems to remake")
    only = {s for s in parser.parse_args().only.split(",") if s}
    old = json.loads((OUT / "MANIFEST.json").read_text()) if only else {}
    (OUT / "models").mkdir(parents=True, exist_ok=True)
    (OUT / "inputs").mkdir(parents=True, exist_ok=True)
    write_jsonl(OUT / "inputs/ms_edge.jsonl", None,
                [{"name": f"ms-edge-{i}", "text": t} for i, t in enumerate(EDGE)])
    write_jsonl(OUT / "inputs/nfkc_edge.jsonl", None,
                [{"name": f"nfkc-edge-{i}", "text": t} for i, t in enumerate(NFKC_EDGE)])
    write_jsonl(OUT / "inputs/ws_edge.jsonl", None,
                [{"name": f"ws-edge-{i}", "text": t} for i, t in enumerate(WS_EDGE)])
    write_jsonl(OUT / "inputs/grapheme_edge.jsonl", None,
                [{"name": f"grapheme-edge-{i}", "text": t} for i, t in enumerate(GRAPHEME_EDGE)])
    write_jsonl(OUT / "inputs/steps_edge.jsonl", None,
                [{"name": f"steps-edge-{i}", "text": t} for i, t in enumerate(STEPS_EDGE)])
    write_jsonl(OUT / "inputs/added_edge.jsonl", None,
                [{"name": f"added-edge-{i}", "text": t} for i, t in enumerate(ADDED_EDGE)])
    write_jsonl(OUT / "inputs/split_edge.jsonl", None,
                [{"name": f"split-edge-{i}", "text": t} for i, t in enumerate(PRE_SPLIT_EDGE)])
    write_jsonl(OUT / "inputs/strip_edge.jsonl", None,
                [{"name": f"strip-edge-{i}", "text": t} for i, t in enumerate(STRIP_EDGE)])
    scalars = json.dumps(steps_scalars(), sort_keys=True, ensure_ascii=False).encode("utf-8")
    with gzip.GzipFile(OUT / "steps_scalars.json.gz", "wb", mtime=0) as f:
        f.write(scalars)
    lines = sentences()
    files = {}
    wanted = lambda *stems: not only or any(s in only for s in stems)  # noqa: E731
    if wanted("ms-unigram"):
        files["ms-unigram"] = unigram(lines, True).to_str()
    if wanted("ms-unigram-whole", "ms-unigram-cut"):
        assert not only or {"ms-unigram-whole", "ms-unigram-cut"} <= only, "one vocabulary"
        whole = unigram(lines, False)
        files["ms-unigram-whole"] = whole.to_str()
        whole.pre_tokenizer = pre_tokenizers.Metaspace()
        whole.decoder = decoders.Metaspace()
        files["ms-unigram-cut"] = whole.to_str()
    if wanted("ms-bpe-first"):
        files["ms-bpe-first"] = bpe_first(lines).to_str()
    if wanted("ms-t5"):
        files["ms-t5"] = t5(lines, OUT / "models")
    if wanted("ms-bpe-nfkc"):
        sp_bpe = SentencePieceBPETokenizer()
        sp_bpe.train_from_iterator(lines, vocab_size=1500, special_tokens=SPECIALS,
                                   show_progress=False)
        files["ms-bpe-nfkc"] = sp_bpe.to_str()
    if wanted("ms-unigram-nfd"):
        files["ms-unigram-nfd"] = metaspace_unigram(lines, normalizers.NFD()).to_str()
    if wanted("ms-unigram-nmt"):
        sp_ug = SentencePieceUnigramTokenizer()
        sp_ug.train_from_iterator(lines, vocab_size=1500, special_tokens=SPECIALS,
                                  unk_token="<unk>", show_progress=False)
        files["ms-unigram-nmt"] = sp_ug.to_str()
    for stem, source in PRECOMPILED.items():
        if wanted(stem):
            model = ROOT / f"tests/fixtures/sp_norm/models/{source}.model"
            files[stem] = tokenizer_json(model, "T5Converter").rstrip("\n")
    for stem, (source, shape) in WHITESPACE.items():
        if wanted(stem):
            base = files.get(source) or (OUT / f"models/{source}.tokenizer.json").read_text()
            files[stem] = whitespace_split(base, shape)
    for stem, (converter, source, lower) in STEPS_CONVERTED.items():
        if wanted(stem):
            model = ROOT / f"tests/fixtures/sp_norm/models/{source}.model"
            files[stem] = converted_steps(model, converter, lower)
    for stem, source in DEBERTA.items():
        if wanted(stem):
            model = ROOT / f"tests/fixtures/sp_norm/models/{source}.model"
            files[stem] = converted_steps(model, "DebertaV2Converter", False)
    for stem, source in XLMR.items():
        if wanted(stem):
            model = ROOT / f"tests/fixtures/sp_norm/models/{source}.model"
            files[stem] = xlmr(model, stem == "ms-xlmr-strips")
    if wanted("ms-albert-ws"):
        base = files.get("ms-albert") or (OUT / "models/ms-albert.tokenizer.json").read_text()
        files["ms-albert-ws"] = whitespace_split(base, "published-steps")
    if wanted("ms-unigram-lower"):
        low = normalizers.Sequence(
            [normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()])
        files["ms-unigram-lower"] = metaspace_unigram(lines, low).to_str()
    if wanted("ms-unigram-nfkc-lower"):
        low = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
        files["ms-unigram-nfkc-lower"] = metaspace_unigram(lines, low).to_str()
    if wanted("ms-bpe-nfkc-lower"):
        sp_bpe = SentencePieceBPETokenizer()
        sp_bpe.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
        sp_bpe.train_from_iterator(lines, vocab_size=1500, special_tokens=SPECIALS,
                                   show_progress=False)
        files["ms-bpe-nfkc-lower"] = sp_bpe.to_str()
    for stem, source in NO_DECODER.items():
        if wanted(stem):
            js = json.loads((FIXTURES / source).read_text(encoding="utf-8"))
            js["decoder"] = None
            files[stem] = json.dumps(js, ensure_ascii=False)
    for stem, (kind, steps, scheme, norm) in PRE_SPLIT.items():
        if wanted(stem):
            files[stem] = pre_split_model(lines, kind, steps, scheme, norm).to_str()
    hfs = {}
    manifest = {
        "made_by": {"tokenizers": tokenizers.__version__, "sentencepiece": spm.__version__,
                    "script": "tests/scripts/gen_metaspace_vectors.py"},
        "training_text": f"first {SAMPLE_BYTES} bytes of tests/fixtures/train/english-1mb.txt, "
                         f"{len(lines)} non-empty lines",
        "models": dict(old.get("models", {})), "sets": json.loads(json.dumps(old.get("sets", {}))),
    }
    for stem, js in files.items():
        path = OUT / f"models/{stem}.tokenizer.json"
        path.write_text(js + "\n", encoding="utf-8")
        hfs[stem] = Tokenizer.from_file(str(path))
        raw = json.loads(js)
        manifest["models"][stem] = {
            "file": f"models/{stem}.tokenizer.json", "sha256": sha256(path),
            "model": raw["model"]["type"], "vocab": hfs[stem].get_vocab_size(),
            "normalizer": without_maps(raw["normalizer"]), "pre_tokenizer": raw["pre_tokenizer"],
            "decoder": raw["decoder"],
        }
    for set_name, rel in SETS.items():
        records = load_set(FIXTURES, rel)
        k = SUBSET.get(set_name, 1)
        for stem, hf in hfs.items():
            if set_name == "corpus" and stem not in CORPUS_MODELS:
                continue
            if set_name == "nfkc_edge" and stem not in NORMALIZING:
                continue
            if set_name == "grapheme_edge" and stem not in PRECOMPILED_ALL:
                continue
            if set_name == "ws_edge" and stem not in {*WHITESPACE, "ms-unigram-nmt", *STEPS,
                                                      *DEBERTA, *PRE_SPLIT}:
                continue
            if set_name == "steps_edge" and stem not in STEPS:
                continue
            if set_name == "strip_edge" and stem not in {*DEBERTA, "ms-t5-cf"}:
                continue
            if set_name == "added_edge" and stem not in XLMR:
                continue
            if set_name == "split_edge" and stem not in PRE_SPLIT:
                continue
            recs = []
            n_ids = 0
            for i, (name, data, _is_text) in enumerate(records):
                if i % k:
                    continue
                text = fffd_text(data)
                ids = hf.encode(text, add_special_tokens=False).ids
                dec = hf.decode(ids, skip_special_tokens=False).encode("utf-8")
                rec = {"name": name, "ids": ids}
                if dec != text.encode("utf-8"):
                    rec["decoded_b64"] = base64.b64encode(dec).decode("ascii")
                recs.append(rec)
                n_ids += len(ids)
            header = {"model": stem, "set": set_name, "inputs": rel, "count": len(recs),
                      "reference": "tokenizers"}
            vdir = OUT / "vectors" / stem
            vdir.mkdir(parents=True, exist_ok=True)
            write_jsonl(vdir / f"{set_name}.jsonl.gz", header, recs)
            manifest["sets"].setdefault(set_name, {})[stem] = {"records": len(recs), "ids": n_ids}
    manifest["sha256"] = {}
    for p in sorted(OUT.rglob("*")):
        if p.is_file() and p.name != "MANIFEST.json":
            manifest["sha256"][str(p.relative_to(OUT))] = sha256(p)
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(manifest["sets"], indent=None))


def converted_steps(model: Path, converter: str, lower: bool) -> str:
    """`transformers`' ALBERT, XLNet or DeBERTa-v2 converter over a sentencepiece model, with
    the slow tokenizer's keep_accents False, do_lower_case `lower` and split_by_punct False,
    and no post-processor."""
    import importlib

    from gen_unigram_vectors import _SlowShim

    shim = _SlowShim(model)
    shim.keep_accents, shim.do_lower_case, shim.split_by_punct = False, lower, False
    cst = importlib.import_module("transformers.convert_slow_tokenizer")
    raw = json.loads(getattr(cst, converter)(shim).converted().to_str(pretty=False))
    raw["post_processor"] = None
    js = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
    Tokenizer.from_str(js)
    return js


def xlmr(model: Path, strips: bool) -> str:
    """`transformers`' XLMRobertaConverter over a sentencepiece model, `<mask>` registered as
    XLMRobertaTokenizerFast registers it (special, lstrip), no post-processor; with `strips`,
    `<s>` rstrip and `</s>` lstrip and rstrip too, and `Replace(Regex(" {2,}"), " ")` in place
    of `Strip(right)` + `Replace(Regex(" {2,}"), "▁")` after the map (so that what the strips
    take would otherwise stay)."""
    import importlib

    from gen_unigram_vectors import _SlowShim

    cst = importlib.import_module("transformers.convert_slow_tokenizer")
    tok = cst.XLMRobertaConverter(_SlowShim(model)).converted()
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False,
                                       special=True)])
    raw = json.loads(tok.to_str(pretty=False))
    raw["post_processor"] = None
    if strips:
        # Without `Strip(right)`, which would drop the whitespace an lstrip takes anyway.
        squeeze = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}
        steps = raw["normalizer"]["normalizers"]
        raw["normalizer"]["normalizers"] = [steps[0], squeeze]
        for t in raw["added_tokens"]:
            if t["content"] == "<s>":
                t["rstrip"] = True
            if t["content"] == "</s>":
                t["lstrip"] = t["rstrip"] = True
    js = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
    Tokenizer.from_str(js)
    return js


def whitespace_split(js: str, shape: str) -> str:
    """The file `js` (a T5Converter file) with `Sequence[WhitespaceSplit, Metaspace]` in the
    shape named: "published" (Precompiled alone, old `add_prefix_space` Metaspace, as the T5
    files published with the models have), "squeeze" (Precompiled + Replace(" {2,}", " "),
    today's Metaspace form), "published-steps" (the normalizer kept, old Metaspace form: the
    ALBERT files published with the models), "identity" (no normalizer), "never" (no
    normalizer, prepend scheme never)."""
    raw = json.loads(js)
    steps = raw["normalizer"]["normalizers"] if raw["normalizer"] else []
    precompiled = [s for s in steps if s["type"] == "Precompiled"]
    meta = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    if shape == "published":
        raw["normalizer"] = precompiled[0]
        meta = {"type": "Metaspace", "replacement": "\u2581", "str_rep": "\u2581",
                "add_prefix_space": True}
    elif shape == "published-steps":
        # The normalizer as it is; the old Metaspace form.
        meta = {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}
    elif shape == "squeeze":
        squeeze = {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}
        raw["normalizer"] = {"type": "Sequence", "normalizers": [precompiled[0], squeeze]}
    else:
        assert shape in ("identity", "never"), shape
        raw["normalizer"] = None
        if shape == "never":
            meta = {**meta, "prepend_scheme": "never"}
    raw["pre_tokenizer"] = {"type": "Sequence",
                            "pretokenizers": [{"type": "WhitespaceSplit"}, meta]}
    raw["decoder"] = dict(meta)
    js = json.dumps(raw, ensure_ascii=False, separators=(",", ":"))
    Tokenizer.from_str(js)  # tokenizers reads it
    return js


def without_maps(normalizer):
    """The normalizer for the manifest, each Precompiled map by its size and sha256."""
    if isinstance(normalizer, dict):
        out = {k: without_maps(v) for k, v in normalizer.items()}
        if "precompiled_charsmap" in out:
            blob = base64.b64decode(normalizer["precompiled_charsmap"])
            out["precompiled_charsmap"] = {"bytes": len(blob),
                                           "sha256": hashlib.sha256(blob).hexdigest()}
        return out
    if isinstance(normalizer, list):
        return [without_maps(v) for v in normalizer]
    return normalizer


if __name__ == "__main__":
    main()
