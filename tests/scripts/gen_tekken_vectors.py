#!/usr/bin/env python3
"""Generate picobpe's reference vectors for Mistral's `tekken.json` with `mistral-common`'s own
`Tekkenizer` (never with picobpe).

Usage (from the repository root; `pip install mistral-common`; about a minute):

    python3 tests/scripts/gen_tekken_vectors.py

Copies `mistral_common/data/tekken_240718.json` (Mistral NeMo's tokenizer, Apache-2.0; see
tests/fixtures/tekken/PROVENANCE.md) to tests/fixtures/tekken/tekken_240718.json.gz, and
(re)writes, in the record format of tests/fixtures/sentencepiece (`ids`: `Tekkenizer.encode(text,
bos=False, eos=False)`; records whose input is not UTF-8 are skipped, the Tekkenizer takes `str`):

    tests/fixtures/tekken/vectors/tekken/<set>.jsonl.gz      the published file
    tests/fixtures/tekken/vectors/tekken-v13/<set>.jsonl.gz  the variant below
    tests/fixtures/tekken/inputs/edge.jsonl                  the edge inputs (EDGE below)
    tests/fixtures/tekken/tekken-8k.tokenizer.json           the tokenizer.json below
    tests/fixtures/tekken/vectors/tekken-8k/<set>.jsonl.gz   its `tokenizers` ids
    tests/fixtures/tekken/MANIFEST.json                      versions, ids of BOS/EOS, the variant

The published file is a v3 file without a `special_tokens` list (the Tekkenizer gives ids 0-19
its deprecated defaults and fills the rest of the 1,000 with `<SPECIAL_i>`). Newer files (v7 and
later) list their special tokens and may cut the vocabulary shorter; no such file ships in the
package, so the variant is the published file with `version`, `special_tokens` and
`default_vocab_size` replaced as MANIFEST.json's `variant` says (the test builds the same file).

Models on the Hugging Face hub ship Tekken as a `tokenizer.json` too (`transformers`'
`TikTokenConverter` layout: `Split` with the Tekken pattern, then `ByteLevel`, `ignore_merges`).
`tekken-8k.tokenizer.json` is that conversion of the file cut to its first 8,192 ranks (what
the Tekkenizer does with `default_vocab_size` = 9,192), ids `1000 + rank`, the 1,000 special
tokens at ids 0-999 as added tokens: its vectors are `tokenizers`' ids
(`encode(text, add_special_tokens=False)`), checked equal to the cut Tekkenizer's here.
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

import mistral_common
from mistral_common.tokens.tokenizers.tekken import Tekkenizer
from tokenizers import Tokenizer
from transformers.convert_slow_tokenizer import TikTokenConverter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_sp_vectors import load_set, sha256, write_jsonl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests/fixtures"
OUT = FIXTURES / "tekken"
SOURCE = Path(mistral_common.__file__).parent / "data" / "tekken_240718.json"
SETS = {
    "fixtures": "vectors/inputs/fixtures.jsonl",
    "random": "vectors/inputs/random.jsonl",
    "corpus": "vectors/inputs/corpus.jsonl",
    "edge": "tekken/inputs/edge.jsonl",
}
SUBSET = {"random": 3}
# What sets Tekken's pattern apart (contractions are punctuation, numbers one at a time), text
# that looks like its special tokens (the Tekkenizer reads it as text), and the cases o200k's
# splitter handles by backtracking (marks, title case, modifier letters).
EDGE = [
    ("digits", "12345 1,000,000 3.14159 ①②③ ١٢٣ ０１２ 2024-12-06"),
    ("contractions", "don't I'M we'll they've she'd YOU'RE it's 'tis o'clock"),
    ("specials_as_text", "[INST] hello [/INST]<s></s><unk><pad>[TOOL_CALLS]<SPECIAL_42>"),
    ("camel", "HelloWorld getHTTPResponseCode XMLHttpRequest ǅemal ǈubljana"),
    ("marks", "e\u0301te\u0301 n\u0303 \u0301a A\u0301B ȧ̈ ֳ עִבְרִית"),
    ("slashes", "a/b\n/\n//\r\n x /\n\n  y"),
    ("whitespace", "a  b\t\tc \n\n  d   \u3000e\u00a0f\u2009g   "),
    ("code", "fn main() {\n    let x: Vec<u8> = vec![1, 2, 3];\n    println!(\"{x:?}\");\n}\n"),
    ("html", "<div class=\"a\"><s>struck</s> <b>bold</b> &amp; &lt;</div>"),
    ("mixed", "Ceci n'est pas une pipe. Это не трубка. これはパイプではありません。这不是烟斗。"),
    ("emoji", "👍🏽 👨‍👩‍👧 🇫🇷 ✈️ ☕"),
    ("long_number", "9" * 300),
    ("long_word", "a" * 500 + "B" * 300),
    ("empty", ""),
]
# The variant: a v13-style file with its own special-token list and a shorter vocabulary.
VARIANT = {
    "version": "v13",
    "special_tokens": ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
                       "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]",
                       "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
                       "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
                       "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]"],
    "default_vocab_size": 1000 + 32768,
}


def variant_json(published: dict) -> dict:
    """The published file with MANIFEST's variant applied (the test does the same)."""
    d = dict(published)
    d["config"] = dict(published["config"], version=VARIANT["version"],
                       default_vocab_size=VARIANT["default_vocab_size"])
    d["special_tokens"] = [{"rank": i, "token_str": t, "is_control": True}
                           for i, t in enumerate(VARIANT["special_tokens"])]
    return d


HF_RANKS = 8192


def tekken_8k_json(published: dict, specials: list[str]) -> str:
    """The `TikTokenConverter` conversion of the first HF_RANKS ranks (ids 1000 + rank), with
    the specials as added tokens at ids 0-999."""
    n_special = published["config"]["default_num_special_tokens"]
    with tempfile.TemporaryDirectory() as tmp:
        ranks = Path(tmp) / "tekken-8k.tiktoken"
        ranks.write_text("".join(f"{v['token_bytes']} {v['rank'] + n_special}\n"
                                 for v in published["vocab"][:HF_RANKS]), "ascii")
        tok = TikTokenConverter(vocab_file=str(ranks), pattern=published["config"]["pattern"],
                                additional_special_tokens=[]).converted()
    d = json.loads(tok.to_str())
    d["added_tokens"] = [{"id": i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for i, t in enumerate(specials)]
    return json.dumps(d, ensure_ascii=False)


def write_edge() -> None:
    path = OUT / "inputs" / "edge.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"name": n, "text": t}, ensure_ascii=False) + "\n"
                            for n, t in EDGE), "utf-8")


def write_sets(stem: str, sets: dict, encode, header: dict | None = None,
               specials: list[str] | None = None) -> dict:
    """Write `encode(text)`'s ids for every text record of `sets` (every SUBSET-th one) to
    vectors/<stem>/<set>.jsonl.gz, with `header` added to each file's header. With `specials`,
    also list the records whose text holds a special token's text: the Tekkenizer reads it as
    text, picobpe's `Specials::All` as the special (the on-target tests leave them out)."""
    out = {}
    for set_name, rel in sets.items():
        records = []
        special_text = []
        k = SUBSET.get(set_name, 1)
        for i, (name, data, is_text) in enumerate(load_set(FIXTURES, rel)):
            if i % k or not is_text:
                continue
            text = data.decode("utf-8")
            records.append({"name": name, "ids": encode(name, text, data)})
            if specials is not None and any(sp in text for sp in specials):
                special_text.append(name)
        path = OUT / "vectors" / stem / f"{set_name}.jsonl.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(path, {"model": stem, "set": set_name, "inputs": rel,
                           "count": len(records), **(header or {})}, records)
        out[set_name] = {"records": len(records), "sha256": sha256(path)}
        if specials is not None:
            out[set_name]["special_text"] = special_text
    return out


def vectors(tok: Tekkenizer, stem: str, sets: dict) -> dict:
    """The Tekkenizer's ids, checked to decode to the text and to sit between BOS and EOS."""
    def encode(name: str, text: str, data: bytes) -> list[int]:
        ids = tok.encode(text, bos=False, eos=False)
        assert tok.decode(ids).encode("utf-8") == data, name
        assert tok.encode(text, bos=True, eos=True) == [tok.bos_id, *ids, tok.eos_id], name
        return ids
    return write_sets(stem, sets, encode,
                      specials=[t["token_str"] for t in tok._all_special_tokens])


def hf_vectors(hf: Tokenizer, cut: Tekkenizer, sets: dict) -> dict:
    """`tokenizers`' ids for the sets, checked equal to the cut Tekkenizer's."""
    def encode(name: str, text: str, _data: bytes) -> list[int]:
        ids = hf.encode(text, add_special_tokens=False).ids
        assert ids == cut.encode(text, bos=False, eos=False), name
        return ids
    return write_sets("tekken-8k", sets, encode, header={"reference": "tokenizers"})


def main() -> None:
    raw = SOURCE.read_bytes()
    committed = OUT / "tekken_240718.json.gz"
    with committed.open("wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0,
                                                  compresslevel=9) as g:
        g.write(raw)
    write_edge()
    tok = Tekkenizer.from_file(SOURCE)
    manifest = {
        "made_by": {"mistral_common": mistral_common.__version__,
                    "script": "tests/scripts/gen_tekken_vectors.py"},
        "file": {"name": SOURCE.name, "sha256_uncompressed": sha256(SOURCE),
                 "version": tok.version.value, "n_words": tok.n_words,
                 "num_special_tokens": tok.num_special_tokens, "bos_id": tok.bos_id,
                 "eos_id": tok.eos_id},
        "variant": VARIANT,
        "sets": {"tekken": vectors(tok, "tekken", SETS)},
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tekken_variant.json"
        path.write_text(json.dumps(variant_json(json.loads(raw))), "utf-8")
        var = Tekkenizer.from_file(path)
        assert var.n_words == VARIANT["default_vocab_size"]
        manifest["variant"]["bos_id"] = var.bos_id
        manifest["sets"]["tekken-v13"] = vectors(var, "tekken-v13",
                                                 {k: SETS[k] for k in ("fixtures", "edge")})
    published = json.loads(raw)
    specials = [t["token_str"] for t in tok._all_special_tokens]
    hf_json = tekken_8k_json(published, specials)
    (OUT / "tekken-8k.tokenizer.json").write_text(hf_json, "utf-8")
    hf = Tokenizer.from_str(hf_json)
    # Special-token text is text, as for the Tekkenizer.
    hf.encode_special_tokens = True
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tekken_cut.json"
        cut = dict(published, config=dict(published["config"],
                                          default_vocab_size=tok.num_special_tokens + HF_RANKS))
        path.write_text(json.dumps(cut), "utf-8")
        cut_tok = Tekkenizer.from_file(path)
    manifest["tokenizer_json"] = {
        "file": "tekken-8k.tokenizer.json", "ranks": HF_RANKS,
        "tokenizers": __import__("tokenizers").__version__,
        "transformers": __import__("transformers").__version__,
        "sha256": sha256(OUT / "tekken-8k.tokenizer.json")}
    manifest["sets"]["tekken-8k"] = hf_vectors(hf, cut_tok, {k: SETS[k] for k in SETS})
    (OUT / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest["sets"], indent=1))


if __name__ == "__main__":
    main()
