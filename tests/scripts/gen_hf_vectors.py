#!/usr/bin/env python3
"""Generate picobpe's reference data for byte-level BPE models in Hugging Face `tokenizer.json`
form (Llama 3 and Qwen2 layouts), with the real Hugging Face `tokenizers` library (never with
picobpe).

Usage (from the repository root; about a minute on 2 cores):

    pip install tokenizers==0.22.2 regex tiktoken==0.14.0
    python3 tests/scripts/gen_hf_vectors.py [--shared ../shared/data] [--fixtures tests/fixtures]

It trains two byte-level BPE models (vocab 8192 each) with `tokenizers`' BpeTrainer on a
deterministic ~10 MB sample of <shared>/corpus (never multi/ar.txt), gives them the structure
of Meta Llama 3's and Qwen2's published tokenizer.json, and (re)writes, under
tests/fixtures/hf_bpe/:

    <model>/tokenizer.json        the trained model (llama3-8k, qwen2-8k)
    <model>/<set>.jsonl.gz        HF's ids for the shared inputs of tests/fixtures/vectors/inputs
                                  (sets fixtures, corpus, random; same record format as the
                                  tiktoken vectors)
    MANIFEST.json                 versions, trainer settings, sample files with sha256, counts,
                                  findings, sha256 of every file

The output is a pure function of the inputs: running the script twice gives byte-identical
files. See tests/fixtures/hf_bpe/PROVENANCE.md for the format and the findings.
"""

from __future__ import annotations

import os

# At most 2 threads (tokenizers uses rayon; read when the library starts its pool).
os.environ["RAYON_NUM_THREADS"] = "2"
os.environ["TOKENIZERS_PARALLELISM"] = "true"

import argparse  # noqa: E402
import base64  # noqa: E402
import gzip  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import unicodedata  # noqa: E402
from pathlib import Path  # noqa: E402

import regex  # noqa: E402  the `regex` package: \p{..}, possessive quantifiers (reference splitter)
import tiktoken  # noqa: E402  only for the cross-check "ranks = ids", see PROVENANCE.md
import tokenizers  # noqa: E402
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers  # noqa: E402
from tokenizers import pre_tokenizers, trainers  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from patterns import ISSUE_PATTERNS  # noqa: E402  (tiktoken's cl100k_base pattern)

# --------------------------------------------------------------------------------------------
# The two layouts
# --------------------------------------------------------------------------------------------

# Meta Llama 3 (tokenizer.json of Meta-Llama-3-8B; also transformers' TikTokenConverter default).
LLAMA3 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
# Qwen2 (tokenizer.json of Qwen2-7B; also transformers' Qwen2Converter): single digits.
QWEN2 = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
CL100K = ISSUE_PATTERNS["cl100k_base"]  # character for character tiktoken 0.14's

VOCAB_SIZE = 8192  # ordinary tokens (256 bytes + 7936 merged); the specials follow them

MODELS = {
    "llama3-8k": {
        "pattern": LLAMA3,
        "normalizer": None,
        "ignore_merges": True,
        # Llama 3: <|begin_of_text|> 128000, <|end_of_text|> 128001, <|eot_id|> 128009 (plus 253
        # reserved ones). Here they follow the 8192 ordinary ids, with <|endoftext|> (the
        # special the shared inputs use) added.
        "specials": ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|endoftext|>"],
        "merges_form": "strings",  # Meta's file: "Ġ Ġ" (written before tokenizers 0.20)
    },
    "qwen2-8k": {
        "pattern": QWEN2,
        "normalizer": "NFC",
        "ignore_merges": False,
        # Qwen2: <|endoftext|> 151643, <|im_start|> 151644, <|im_end|> 151645, right after the
        # ordinary ids, as here.
        "specials": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        "merges_form": "pairs",  # what tokenizers >= 0.20 writes (Qwen2's file has strings)
    },
}

SETS = ["fixtures", "corpus", "random"]  # invalid_utf8: HF takes str only; double_special: see below
DOUBLE = "<|endoftext|><|endoftext|>"  # gen_vectors.py's second special (checked in memory only)

# --------------------------------------------------------------------------------------------
# Training sample: a deterministic ~10 MB of ../shared/data/corpus (never multi/ar.txt)
# --------------------------------------------------------------------------------------------

ENGLISH_BYTES = 4_000_000  # the first 4 MB of english.txt, cut at a document end
MULTI = ["de", "fr", "ru", "el", "zh", "ja", "ko", "indic", "code-python", "code-rust",
         "emoji-mixed", "whitespace-heavy"]
MULTI_BYTES = 500_000  # the first 500 KB of each, cut at a line end
CHUNK_BYTES = 16_384  # multi files are cut into sequences of whole lines of at most this size
EOT_LINE = "\n<|endoftext|>\n"


def training_sample(shared: Path) -> tuple[list[str], list[dict]]:
    """Training sequences, in order, with newlines kept (the patterns give newlines their own
    pieces, so the sample must have them): the English documents (split at their
    `<|endoftext|>` lines, which are left out), then each multi file cut into runs of whole
    lines of at most CHUNK_BYTES bytes."""
    corpus = shared / "corpus"
    seqs: list[str] = []
    used = []
    data = (corpus / "english.txt").read_bytes()
    cut = data.find(EOT_LINE.encode(), ENGLISH_BYTES)
    data = data[: cut + len(EOT_LINE)]
    docs = [d for d in data.decode("utf-8").split(EOT_LINE) if d]
    seqs += docs
    used.append({"file": "english.txt", "bytes": len(data), "sequences": len(docs),
                 "sha256": hashlib.sha256(data).hexdigest(),
                 "file_sha256": sha256(corpus / "english.txt"),
                 "how": f"first {len(data)} bytes (document end after byte {ENGLISH_BYTES}), split at "
                        "the <|endoftext|> lines (left out)"})
    for m in MULTI:
        rel = f"multi/{m}.txt"
        assert "ar.txt" not in rel
        data = (corpus / rel).read_bytes()
        if len(data) > MULTI_BYTES:
            data = data[: data.rfind(b"\n", 0, MULTI_BYTES) + 1]
        lines = _lines(data.decode("utf-8"))
        chunks, cur, size = [], [], 0
        for line in lines:
            n = len(line.encode("utf-8"))
            if cur and size + n > CHUNK_BYTES:
                chunks.append("".join(cur))
                cur, size = [], 0
            cur.append(line)
            size += n
        if cur:
            chunks.append("".join(cur))
        assert "".join(chunks).encode("utf-8") == data
        seqs += chunks
        used.append({"file": rel, "bytes": len(data), "sequences": len(chunks),
                     "sha256": hashlib.sha256(data).hexdigest(), "file_sha256": sha256(corpus / rel),
                     "how": f"first {len(data)} bytes (line end before byte {MULTI_BYTES}), whole lines "
                            f"in sequences of at most {CHUNK_BYTES} bytes"})
    return seqs, used


def _lines(text: str) -> list[str]:
    """Split after each "\\n" only (a "\\r" stays inside its line; str.splitlines would also
    split at \\r, \\x0b, \\x0c, \\x1c.., U+2028 ...)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------

TRAINER = dict(
    vocab_size=VOCAB_SIZE,
    min_frequency=0,
    show_progress=False,
    special_tokens=[],  # added after training, so they follow the ordinary ids
    limit_alphabet=None,
    initial_alphabet="pre_tokenizers.ByteLevel.alphabet()",  # all 256 byte characters
    continuing_subword_prefix=None,
    end_of_word_suffix=None,
    max_token_length=None,
)


def pipeline(tok: Tokenizer, cfg: dict) -> None:
    tok.normalizer = normalizers.NFC() if cfg["normalizer"] == "NFC" else None
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(cfg["pattern"]), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=cfg["normalizer"] is None,
                                 use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()


def train(cfg: dict, sample: list[str]) -> Tokenizer:
    tok = Tokenizer(models.BPE(ignore_merges=cfg["ignore_merges"]))
    pipeline(tok, cfg)
    # Options left at None are the trainer's defaults (its constructor refuses None for some).
    opts = {k: v for k, v in TRAINER.items() if k != "initial_alphabet" and v is not None}
    trainer = trainers.BpeTrainer(initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), **opts)
    tok.train_from_iterator(sample, trainer=trainer, length=len(sample))
    assert tok.get_vocab_size(with_added_tokens=False) == VOCAB_SIZE, tok.get_vocab_size()
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in cfg["specials"]])
    return tok


def llama3_post_processor(bos_id: int) -> dict:
    """Llama 3's post-processor, as transformers' Llama3Converter builds it."""
    bos = "<|begin_of_text|>"
    return {
        "type": "Sequence",
        "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                      {"Sequence": {"id": "A", "type_id": 0}},
                      {"SpecialToken": {"id": bos, "type_id": 1}},
                      {"Sequence": {"id": "B", "type_id": 1}}],
             "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}}},
        ],
    }


def expected_layout(name: str, specials: dict[str, int]) -> dict:
    """Everything of the published file's layout except the vocabulary and merges: key names,
    key order and values, with our ids for the specials. Llama 3: Meta-Llama-3-8B's
    tokenizer.json (= transformers' TikTokenConverter + Llama3Converter). Qwen2: Qwen2-7B's
    tokenizer.json (Qwen2Converter gives the same pipeline; the published decoder and
    post-processor spell out add_prefix_space/use_regex false)."""
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for s, i in specials.items()]
    split = {"type": "Split", "pattern": {"Regex": MODELS[name]["pattern"]},
             "behavior": "Isolated", "invert": False}
    if name == "llama3-8k":
        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                split,
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
            ]},
            "post_processor": llama3_post_processor(specials["<|begin_of_text|>"]),
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                      "vocab": "...", "merges": "..."},
        }
    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [split, dict(bl)]},
        "post_processor": dict(bl),
        "decoder": dict(bl),
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": "", "end_of_word_suffix": "",
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": "...", "merges": "..."},
    }


def finish_json(name: str, tok: Tokenizer) -> tuple[str, dict]:
    """The tokenizer.json text to commit: tokenizers' own serialization, with the parts its
    Python API cannot express set as in the published file (checked to load and to behave the
    same), in the published key order."""
    cfg = MODELS[name]
    js = json.loads(tok.to_str())
    specials = {t["content"]: t["id"] for t in js["added_tokens"]}
    assert list(specials) == cfg["specials"] and sorted(specials.values()) == list(
        range(VOCAB_SIZE, VOCAB_SIZE + len(specials)))
    if name == "llama3-8k":
        js["post_processor"] = llama3_post_processor(specials["<|begin_of_text|>"])
    else:
        bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
        js["post_processor"] = dict(bl)
        js["decoder"] = dict(bl)  # decoders.ByteLevel() takes no options in Python
        js["model"]["continuing_subword_prefix"] = ""  # the trainer resets these to null
        js["model"]["end_of_word_suffix"] = ""
    merges = js["model"]["merges"]
    assert all(isinstance(m, list) and len(m) == 2 and " " not in m[0] + m[1] for m in merges)
    if cfg["merges_form"] == "strings":
        js["model"]["merges"] = [f"{a} {b}" for a, b in merges]
    want = expected_layout(name, specials)
    # Same key order as the published file, at every level we describe.
    js = _reorder(js, want)
    check = {k: v for k, v in js.items()}
    check["model"] = {k: ("..." if k in ("vocab", "merges") else v) for k, v in js["model"].items()}
    assert json.dumps(check) == json.dumps(want), (name, check, want)
    # Compact, as `Tokenizer.save(path, pretty=False)` writes it (the Hub files are indented;
    # the indentation would add ~40% to the checkout).
    text = json.dumps(js, ensure_ascii=False, separators=(",", ":")) + "\n"
    return text, specials


def _reorder(obj, like):
    if isinstance(obj, dict) and isinstance(like, dict):
        assert set(obj) == set(like), (sorted(obj), sorted(like))
        return {k: _reorder(obj[k], like[k]) for k in like}
    return obj


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def load_set(fixtures: Path, set_name: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(name, text) of every record of tests/fixtures/vectors/inputs/<set>.jsonl that is valid
    UTF-8 text, and the names of the records skipped (not valid UTF-8)."""
    vectors = fixtures / "vectors"
    out, skipped = [], []
    for line in (vectors / "inputs" / f"{set_name}.jsonl").read_text("utf-8").split("\n"):
        if not line:
            continue
        r = json.loads(line)
        if "text" in r:
            data = r["text"].encode("utf-8", "surrogatepass")  # a lone surrogate: not UTF-8
        elif "file" in r:
            data = (vectors / r["file"]).read_bytes()
        else:
            data = base64.b64decode(r["text_b64"])
        try:
            out.append((r["name"], data.decode("utf-8")))
        except UnicodeDecodeError:
            skipped.append(r["name"])
    return out, skipped


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


# --------------------------------------------------------------------------------------------
# Reference splitting and BPE (the script's own, for cross-checks)
# --------------------------------------------------------------------------------------------


def special_splitter(specials) -> re.Pattern:
    """Leftmost match, longest special first among those starting at the same position."""
    alts = sorted(specials, key=lambda s: (-len(s), s))
    return re.compile("|".join(re.escape(s) for s in alts))


def split_specials(text: str, rx: re.Pattern):
    """Yield ("text", segment) and ("special", name) parts, in order."""
    pos = 0
    for m in rx.finditer(text):
        if m.start() > pos:
            yield "text", text[pos:m.start()]
        yield "special", m.group(0)
        pos = m.end()
    if pos < len(text):
        yield "text", text[pos:]


def rx_module(pattern: str) -> regex.Pattern:
    # `$` in the `regex` module also matches before a final newline; tiktoken (fancy-regex)
    # means end of text.
    return regex.compile(pattern.replace("$", r"\Z"))


def spans(rx: regex.Pattern, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in rx.finditer(text)]


def byte_level_map() -> dict[str, int]:
    """GPT-2's bytes_to_unicode, inverted: byte-level character -> byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(
        range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def token_bytes(tok_str: str, dec: dict[str, int]) -> bytes:
    return bytes(dec[c] for c in tok_str)


def merge_bpe(symbols: list[str], ranks: dict[tuple[str, str], int]) -> list[str]:
    """HF's BPE without ignore_merges: merge the adjacent pair of lowest merge rank, leftmost
    first, until no pair is a merge."""
    symbols = list(symbols)
    while len(symbols) > 1:
        best = min(range(len(symbols) - 1),
                   key=lambda i: (ranks.get((symbols[i], symbols[i + 1]), 1 << 62), i))
        if (symbols[best], symbols[best + 1]) not in ranks:
            break
        symbols[best:best + 2] = [symbols[best] + symbols[best + 1]]
    return symbols


def merge_structure(js: dict, dec: dict[str, int], plain: Tokenizer) -> dict:
    """Facts about the merges: products in id order, duplicates, and whether every token is
    what merges-only BPE makes of the token's own text (then ignore_merges cannot change any
    id). Checked for every token with `merge_bpe`, and for the tokens that are valid UTF-8
    also with HF itself (`plain`: the same model, ignore_merges=False, no normalizer, plain
    byte-level pre-tokenizer, no added tokens)."""
    vocab = js["model"]["vocab"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in js["model"]["merges"]]
    ranks = {m: i for i, m in enumerate(merges)}
    prod = [vocab[a + b] for a, b in merges]
    misses, hf_checked = [], 0
    for tok_str, i in sorted(vocab.items(), key=lambda x: x[1]):
        got = merge_bpe(list(tok_str), ranks)
        if got != [tok_str]:
            misses.append({"id": i, "token": tok_str, "merges_give": got})
        raw = token_bytes(tok_str, dec)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        hf_checked += 1
        assert plain.encode(text, add_special_tokens=False).ids == [vocab[g] for g in got], tok_str
    return {
        "merges": len(merges),
        "merge_products_in_id_order": prod == sorted(prod),
        "merge_product_ids": [min(prod), max(prod)],
        "merge_products_duplicated": len(prod) - len(set(prod)),
        "tokens_not_made_by_their_own_merges": len(misses),
        "examples": misses[:10],
        "tokens_checked_with_hf_too": hf_checked,
        "longest_token_bytes": max(len(token_bytes(t, dec)) for t in vocab),
    }


# CJK Unified Ideographs Extension J, new in Unicode 17.0: letters to the `regex` module
# (Unicode 17), unassigned to HF's Oniguruma and to picobpe's tables (Unicode 16.0).
UNICODE17_LETTERS = [(0x323B0, 0x3347F)]


def without_unicode17(text: str) -> str:
    """`text` with each Unicode-17-only letter replaced by a private-use character (class
    Other, as an unassigned code point is to a Unicode 16 engine)."""
    return "".join("\ue000" if any(lo <= ord(c) <= hi for lo, hi in UNICODE17_LETTERS) else c
                   for c in text)


# --------------------------------------------------------------------------------------------
# Pattern comparison: LLAMA3 against tiktoken's cl100k_base
# --------------------------------------------------------------------------------------------

# Inputs where the two regexes split differently (asserted), and inputs where they agree
# although the spelling differs (asserted too).
PATTERN_DIFFERENT = ["a\n ", "a\n\t", "x \n  ", "a\r\n \r\n  ", "<|endoftext|> \n ", "x.\n \n "]
PATTERN_SAME = ["a \n", "a  ", "a\n", "a\n\nb", "a  \n  b", "'S 'LL 'ſ", "1234567", "!!\n\n",
                " \n \n b", "a\t\tb", "a \u00a0b", "<|endoftext|>\n\n  ", "x.\n  ", "\t1", " \t!"]


def llama3_ends_in_two_space_pieces(pieces: list[str]) -> bool:
    """The only difference: cl100k_base's `\\s++$` takes the whitespace at the very end of the
    text as one piece, where LLAMA3 (no such alternative) cuts it after its last line break
    (`\\s*[\\r\\n]+`) and gives the rest its own piece (`\\s+(?!\\S)`). So the two split a text
    differently exactly when LLAMA3's last two pieces are both whitespace."""
    return len(pieces) >= 2 and all(regex.fullmatch(r"\s+", p) for p in pieces[-2:])


def compare_patterns() -> dict:
    ll, cl, qw = rx_module(LLAMA3), rx_module(CL100K), rx_module(QWEN2)
    out = {"llama3": LLAMA3, "cl100k_base": CL100K, "qwen2": QWEN2,
           "llama3_alternatives": LLAMA3.split("|"), "cl100k_base_alternatives": CL100K.split("|"),
           "split_differently": [], "split_the_same": []}
    for t in PATTERN_DIFFERENT:
        a, b = [m.group(0) for m in ll.finditer(t)], [m.group(0) for m in cl.finditer(t)]
        assert a != b and llama3_ends_in_two_space_pieces(a), (t, a, b)
        out["split_differently"].append({"text": t, "llama3": a, "cl100k_base": b})
    for t in PATTERN_SAME:
        a, b = [m.group(0) for m in ll.finditer(t)], [m.group(0) for m in cl.finditer(t)]
        assert a == b and not llama3_ends_in_two_space_pieces(a), (t, a, b)
        out["split_the_same"].append({"text": t, "pieces": a})
    t = "in 2024: 1234567"
    out["qwen2_vs_llama3"] = {"text": t, "llama3": [m.group(0) for m in ll.finditer(t)],
                              "qwen2": [m.group(0) for m in qw.finditer(t)]}
    return out


# --------------------------------------------------------------------------------------------
# Output helpers (same conventions as gen_vectors.py)
# --------------------------------------------------------------------------------------------


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(path: Path, header: dict | None, records: list[dict]) -> None:
    lines = ([dumps(header)] if header is not None else []) + [dumps(r) for r in records]
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if path.suffix == ".gz":
        # Deterministic gzip: no file name, mtime 0.
        with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                                   compresslevel=9) as f:
            f.write(data)
    else:
        path.write_bytes(data)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def esc(s: str, n: int = 24) -> str:
    """A short escaped excerpt for the manifest."""
    return s[:n].encode("unicode_escape").decode("ascii")


# --------------------------------------------------------------------------------------------
# Vectors of one model for one set
# --------------------------------------------------------------------------------------------


def encode_set(tok: Tokenizer, cfg: dict, records: list[tuple[str, str]]):
    """HF's ids (`all`: specials recognised; `ordinary`: `encode_special_tokens = True`), with
    the round-trip and special-splitting checks. Returns (rows, counts, ordinary id lists)."""
    texts = [t for _, t in records]
    specials = {s: tok.token_to_id(s) for s in cfg["specials"]}
    splitter = special_splitter(specials)
    is_nfc = cfg["normalizer"] == "NFC"
    norm = nfc if is_nfc else (lambda s: s)

    tok.encode_special_tokens = False
    all_enc = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    tok.encode_special_tokens = True
    ord_enc = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    # Each text segment between specials on its own (specials as text: there are none in it).
    segments = sorted({p for t in texts for k, p in split_specials(t, splitter) if k == "text"})
    seg_ids = dict(zip(segments, (e.ids for e in tok.encode_batch(segments, add_special_tokens=False))))
    tok.encode_special_tokens = False

    c = {"records": len(records), "ids_all": 0, "ids_ordinary": 0, "ordinary_differs": 0,
         "nfc_changed": 0, "nfc_changed_names": []}
    rows = []
    for (name, text), all_ids, ordinary in zip(records, all_enc, ord_enc):
        # HF's added-token matching is the project's rule: leftmost, longest first, each text
        # segment normalized and encoded on its own.
        ref = []
        for k, p in split_specials(text, splitter):
            ref += [specials[p]] if k == "special" else seg_ids[p]
        assert ref == all_ids, (cfg["pattern"][:10], name)
        # Round trips: the input itself, or (NFC models) its NFC form; per-segment NFC equals
        # NFC of the whole text on every input here (a special's last character never composes
        # with what follows it in these inputs), so one flag says it all.
        d_all = tok.decode(all_ids, skip_special_tokens=False)
        d_ord = tok.decode(ordinary, skip_special_tokens=False)
        assert d_all == d_ord == norm(text), name
        row = {"name": name, "all": all_ids}
        if ordinary != all_ids:
            row["ordinary"] = ordinary
            c["ordinary_differs"] += 1
        if is_nfc and nfc(text) != text:
            row["nfc_changed"] = True
            c["nfc_changed"] += 1
            c["nfc_changed_names"].append(name)
        c["ids_all"] += len(all_ids)
        c["ids_ordinary"] += len(ordinary)
        rows.append(row)
    c["nfc_changed_names"] = c["nfc_changed_names"][:30]
    return rows, c, ord_enc


def hf_pieces_vs_regex(tok: Tokenizer, cfg: dict, records, dec) -> dict:
    """HF's own pre-tokenizer (Oniguruma) against the `regex` module on the same pattern, on
    the normalized text; every difference must come from the Unicode 17 letters."""
    rx = rx_module(cfg["pattern"])
    norm = nfc if cfg["normalizer"] == "NFC" else (lambda s: s)
    differ = []
    for name, text in records:
        t = norm(text)
        # Piece lengths in characters (the replacement below keeps character counts).
        hf = [len(token_bytes(p, dec).decode("utf-8")) for p, _ in tok.pre_tokenizer.pre_tokenize_str(t)]
        rr = [len(m.group(0)) for m in rx.finditer(t)]
        # The pattern matches every character: no text between matches ("isolated" would make
        # pieces of it too).
        assert sum(rr) == len(t) and sum(hf) == len(t), name
        if hf != rr:
            differ.append(name)
            # Explained by Unicode 17: same splits once those letters are class Other.
            rr16 = [len(m.group(0)) for m in rx.finditer(without_unicode17(t))]
            assert rr16 == hf, name
    return {"records": len(records), "split_differently": len(differ), "names": differ[:30]}


def nfc_kinds(records) -> dict:
    """How NFC changes the inputs: records with a character that NFC changes on its own
    (singleton decompositions such as U+212B ANGSTROM SIGN -> U+00C5, CJK compatibility
    ideographs, composition exclusions such as U+0958 -> U+0915 U+093C), and records changed
    only by composing or reordering a sequence (e + U+0301 -> é)."""
    single, seq, examples = 0, 0, {}
    chars: dict[str, int] = {}
    for name, text in records:
        if nfc(text) == text:
            continue
        own = sorted({c for c in text if nfc(c) != c})
        if own:
            single += 1
            for ch in own:
                chars[ch] = chars.get(ch, 0) + 1
        else:
            seq += 1
        if len(examples) < 6:
            i = next(i for i, (a, b) in enumerate(zip(text, nfc(text) + "\0")) if a != b)
            piece = text[max(0, i - 2):i + 4]
            examples[name] = {"input": esc(piece, 12), "nfc": esc(nfc(piece), 12)}
    top = sorted(chars.items(), key=lambda x: (-x[1], x[0]))[:15]
    return {"records_changed": single + seq, "with_a_character_nfc_changes_alone": single,
            "only_sequences_composed_or_reordered": seq,
            "most_frequent_self_changing_characters": [
                {"char": f"U+{ord(ch):04X}", "name": unicodedata.name(ch, "?"),
                 "nfc": " ".join(f"U+{ord(x):04X}" for x in nfc(ch)), "records": n} for ch, n in top],
            "examples": examples}


# --------------------------------------------------------------------------------------------


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=repo.parent / "shared" / "data")
    ap.add_argument("--fixtures", type=Path, default=repo / "tests" / "fixtures")
    args = ap.parse_args()
    shared: Path = args.shared
    fixtures: Path = args.fixtures
    out = fixtures / "hf_bpe"

    # The committed bytes were made with exactly this version (others may well agree).
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    versions = {"python": sys.version.split()[0], "tokenizers": tokenizers.__version__,
                "regex": regex.__version__, "tiktoken": tiktoken.__version__,
                "unicodedata": unicodedata.unidata_version}

    # Fresh output (PROVENANCE.md is written by hand and kept).
    for name in MODELS:
        if (out / name).exists():
            shutil.rmtree(out / name)
        (out / name).mkdir(parents=True)

    # 1. Train, and write the tokenizer.json files.
    sample, sample_files = training_sample(shared)
    sample_info = {"sequences": len(sample), "bytes": sum(len(s.encode("utf-8")) for s in sample),
                   "files": sample_files}
    dec = byte_level_map()
    assert sorted(dec) == sorted(pre_tokenizers.ByteLevel.alphabet())
    toks: dict[str, Tokenizer] = {}
    jsons: dict[str, dict] = {}
    manifest_models: dict = {}
    for name, cfg in MODELS.items():
        trained = train(cfg, sample)
        text, specials = finish_json(name, trained)
        path = out / name / "tokenizer.json"
        path.write_text(text, encoding="utf-8")
        toks[name] = Tokenizer.from_file(str(path))  # everything below uses the written file
        # The edits of finish_json change no id: the written file encodes like the trained one.
        probe = sample[::25] + [t for _, t in load_set(fixtures, "fixtures")[0]]
        for a, b in zip(trained.encode_batch(probe, add_special_tokens=False),
                        toks[name].encode_batch(probe, add_special_tokens=False)):
            assert a.ids == b.ids, name
        jsons[name] = json.loads(text)
        plain = json.loads(text)
        plain.update(normalizer=None, added_tokens=[], post_processor=None,
                     pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False,
                                    "trim_offsets": False, "use_regex": False})
        plain["model"]["ignore_merges"] = False
        manifest_models[name] = {
            "file": f"{name}/tokenizer.json",
            "layout_of": "Meta Llama 3 (Meta-Llama-3-8B tokenizer.json)" if name == "llama3-8k"
                         else "Qwen2 (Qwen2-7B tokenizer.json)",
            "pattern": cfg["pattern"],
            "normalizer": cfg["normalizer"],
            "ignore_merges": cfg["ignore_merges"],
            "merges_form": cfg["merges_form"],
            "vocab_size": len(jsons[name]["model"]["vocab"]),
            "specials": specials,
            "trainer": {**TRAINER, "class": "tokenizers.trainers.BpeTrainer",
                        "call": "Tokenizer.train_from_iterator(sample sequences, trainer, length=len)"},
            "merge_structure": merge_structure(jsons[name], dec, Tokenizer.from_str(json.dumps(plain))),
        }

    # 2. Patterns.
    pattern_notes = compare_patterns()
    rxs = {"llama3": rx_module(LLAMA3), "cl100k_base": rx_module(CL100K), "qwen2": rx_module(QWEN2)}

    # 3. Vectors.
    counts: dict = {}
    findings: dict = {name: {"hf_split_vs_regex_module": {}, "ignore_merges": {},
                             "tiktoken_ranks_equal_ids": {}} for name in MODELS}
    pattern_counts: dict = {}
    nfc_notes: dict = {}
    inputs = {}
    for set_name in SETS:
        records, skipped = load_set(fixtures, set_name)
        assert not skipped, (set_name, skipped)  # the Rust reader joins records by position
        inputs[set_name] = records
        differ = []
        for n, t in records:
            same = spans(rxs["llama3"], t) == spans(rxs["cl100k_base"], t)
            pieces = [m.group(0) for m in rxs["llama3"].finditer(t)]
            assert same != llama3_ends_in_two_space_pieces(pieces), (n, t[-40:])
            if not same:
                differ.append(n)
        pattern_counts[set_name] = {
            "records": len(records),
            "llama3_vs_cl100k_base_split_differently": len(differ),
            "names": differ[:20],
            "llama3_vs_qwen2_split_differently": sum(
                spans(rxs["llama3"], t) != spans(rxs["qwen2"], t) for _, t in records),
        }
        nfc_notes[set_name] = nfc_kinds(records)
        for name, cfg in MODELS.items():
            tok = toks[name]
            rows, c, ord_enc = encode_set(tok, cfg, records)
            header = {"encoding": name, "set": set_name, "inputs": f"vectors/inputs/{set_name}.jsonl",
                      "count": len(records), "specials": c_specials(tok, cfg),
                      "tokenizers": tokenizers.__version__,
                      "tokenizer_json": f"hf_bpe/{name}/tokenizer.json"}
            path = out / name / f"{set_name}.jsonl.gz"
            write_jsonl(path, header, rows)
            counts.setdefault(set_name, {})[name] = c
            print(f"{name:10} {set_name:9} {len(records):6} records {c['ids_all']:8} ids "
                  f"{path.stat().st_size:9} bytes", file=sys.stderr)

            # Findings on the same inputs.
            f = findings[name]
            f["hf_split_vs_regex_module"][set_name] = hf_pieces_vs_regex(tok, cfg, records, dec)
            # ignore_merges flipped: does any id change?
            flipped = json.loads(json.dumps(jsons[name]))
            flipped["model"]["ignore_merges"] = not cfg["ignore_merges"]
            other = Tokenizer.from_str(json.dumps(flipped))
            other.encode_special_tokens = True
            flip = [e.ids for e in other.encode_batch([t for _, t in records], add_special_tokens=False)]
            changed = [n for (n, _), a, b in zip(records, flip, ord_enc) if a != b]
            f["ignore_merges"][set_name] = {"flipped_to": not cfg["ignore_merges"],
                                            "records_whose_ids_change": len(changed), "names": changed[:10]}
            # tiktoken semantics (rank = id, whole-piece lookup first) on the same pattern, on
            # the normalized text.
            vocab = jsons[name]["model"]["vocab"]
            enc = tiktoken.Encoding(name=name, pat_str=cfg["pattern"],
                                    mergeable_ranks={token_bytes(t, dec): i for t, i in vocab.items()},
                                    special_tokens=c_specials(tok, cfg))
            norm = nfc if cfg["normalizer"] == "NFC" else (lambda s: s)
            tt = [n for (n, t), ids in zip(records, ord_enc) if enc.encode_ordinary(norm(t)) != ids]
            f["tiktoken_ranks_equal_ids"][set_name] = {"records_that_differ": len(tt), "names": tt[:10]}

    # 4. The second special (gen_vectors.py's DOUBLE), longest first, from HF itself: checked in
    # memory, nothing written (see PROVENANCE.md).
    dbl_records, skipped = load_set(fixtures, "double_special")
    assert not skipped
    for name, cfg in MODELS.items():
        js = json.loads(json.dumps(jsons[name]))
        specials = c_specials(toks[name], cfg)
        dbl_id = max(specials.values()) + 1
        js["added_tokens"].append({"id": dbl_id, "content": DOUBLE, "single_word": False,
                                   "lstrip": False, "rstrip": False, "normalized": False, "special": True})
        dtok = Tokenizer.from_str(json.dumps(js))
        dcfg = dict(cfg, specials=cfg["specials"] + [DOUBLE])
        rows, c, _ = encode_set(dtok, dcfg, dbl_records)  # asserts leftmost-longest = HF
        single = [e.ids for e in toks[name].encode_batch([t for _, t in dbl_records], add_special_tokens=False)]
        findings[name]["double_special_in_memory"] = {
            "records": len(dbl_records), "extra_special": DOUBLE, "id": dbl_id,
            "hf_equals_leftmost_longest_split": len(rows),
            "records_where_the_extra_special_changes_ids": sum(r["all"] != s for r, s in zip(rows, single)),
        }

    # 5. Manifest.
    files = {}
    for p in sorted(out.rglob("*")):
        if p.is_file() and p.name not in ("MANIFEST.json", "PROVENANCE.md", ".gitattributes"):
            files[str(p.relative_to(out))] = {"bytes": p.stat().st_size, "sha256": sha256(p)}
    manifest = {
        "generator": "tests/scripts/gen_hf_vectors.py",
        "versions": versions,
        "sample": sample_info,
        "models": manifest_models,
        "sets": {s: {"inputs": f"vectors/inputs/{s}.jsonl", "counts": counts[s]} for s in SETS},
        "skipped_sets": {
            "invalid_utf8": "HF tokenizers encodes only str (valid Unicode): no reference exists",
            "double_special": "not written (see PROVENANCE.md); checked in memory, see findings",
        },
        "patterns": pattern_notes,
        "pattern_counts": pattern_counts,
        "nfc": nfc_notes,
        "findings": findings,
        "files": files,
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    total = sum(f["bytes"] for f in files.values())
    print(f"wrote {len(files)} files, {total} bytes", file=sys.stderr)
    return 0


def c_specials(tok: Tokenizer, cfg: dict) -> dict[str, int]:
    return {s: tok.token_to_id(s) for s in cfg["specials"]}


if __name__ == "__main__":
    sys.exit(main())
