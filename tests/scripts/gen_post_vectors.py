#!/usr/bin/env python3
"""Reference ids of "encode as the model expects" (add_special_tokens=True) for the committed
model files, from the real `tokenizers`, `transformers` and `sentencepiece` packages (never from
picobpe). host-trainer/tests/cli_add_special_tokens.rs imports each file with `host-trainer
import` and checks `encode --add-special-tokens` (and `encode` without it) against them.

Usage (from the repository root; the versions of tests/scripts/gen_sp_vectors.py):

    pip install sentencepiece==0.2.3 protobuf==7.36.2 tokenizers==0.22.2
    pip install --no-deps transformers==4.57.6
    pip install "huggingface-hub>=0.34,<1.0" numpy pyyaml safetensors regex
    python3 tests/scripts/gen_post_vectors.py

(transformers 5.x's `LlamaTokenizer(vocab_file=...)` is a `tokenizers` backend that gives no
ids for these files; 4.57.6 still has the sentencepiece-based one.) It writes
tests/fixtures/post/vectors.json, deterministic, in a second.

What each reference is:

- tokenizer.json: `tokenizers.Tokenizer.from_file(f)` (padding and truncation off),
  `encode(text, add_special_tokens=True/False).ids`. The committed files have a
  `TemplateProcessing` (Llama 3 `<|begin_of_text|> $A`, BERT `[CLS] $A [SEP]`), a `ByteLevel`
  post-processor (Qwen2: nothing added) or none (sp32000). `BertProcessing`,
  `RobertaProcessing`, a template with a two-id special token and a `Sequence` of `ByteLevel`
  and `RobertaProcessing` are set here with `tokenizers` itself on a committed file; the case keeps the
  resulting `post_processor` JSON, which the test puts into a copy of that file.
- tokenizer.model: transformers' `LlamaTokenizer(vocab_file=f, legacy=True,
  split_special_tokens=True)`, whose defaults are add_bos_token=True, add_eos_token=False.
  `split_special_tokens=True` makes it read `<s>` in the text as text, as sentencepiece (and
  picobpe) do; with it the ids equal `SentencePieceProcessor.encode(text, add_bos=True)`
  exactly, which is asserted. ug8000.model (T5-style Unigram) has no BOS (bos_id = -1):
  LlamaTokenizer refuses it ("BOS token is not defined as a control symbol"), so its
  reference is sentencepiece's `encode(text)` with nothing added (T5Tokenizer's appended
  `</s>` is out of scope).
- vocab.txt: transformers' `BertTokenizer(vocab_file=f, do_lower_case=...)` (True for the
  uncased MiniLM vocabulary, False for bert-cased-8k), `encode(text)`, which adds
  `[CLS] ... [SEP]`; without specials, `add_special_tokens=False`.

The empty text is included: tokenizers and BertTokenizer give the template alone
(`[CLS] [SEP]`, `<|begin_of_text|>`), LlamaTokenizer gives `[BOS]`.
"""

import json
from pathlib import Path

import sentencepiece as spm
import tokenizers
import transformers
from tokenizers import Tokenizer, processors
from transformers import BertTokenizer, LlamaTokenizer

ROOT = Path(__file__).resolve().parents[2]
FIX = "tests/fixtures"
OUT = ROOT / FIX / "post" / "vectors.json"

TEXTS = [
    "",
    " ",
    "  ",
    "\n",
    "a",
    "Hello world",
    "Hello, world!",
    " leading space",
    "trailing space ",
    "  two  spaces  ",
    "line one\nline two\n",
    "tab\tseparated\tvalues",
    "Numbers 1234567 and 3.14159",
    "héllo naïve café",
    "Ünïcödé ÀÉÎÕÜ",
    "日本語のテキスト",
    "中文文本，标点。",
    "한국어 텍스트",
    "Привет, мир",
    "emoji 🙂🚀 done",
    "don't can't won't",
    "UPPER lower MiXeD",
    "<s>",
    "</s> end",
    "[CLS] text [SEP]",
    "<|begin_of_text|>hi",
    "<|endoftext|>",
    "a<|im_start|>b<|im_end|>c",
    "x" * 200,
    "The quick brown fox jumps over the lazy dog. " * 3,
]


def tokenizer_json(path: str, post_processor=None) -> tuple[list, list, dict | None]:
    tok = Tokenizer.from_file(str(ROOT / path))
    tok.no_padding()
    tok.no_truncation()
    replaced = None
    if post_processor is not None:
        tok.post_processor = post_processor
        replaced = json.loads(tok.to_str())["post_processor"]
    with_ = [tok.encode(t, add_special_tokens=True).ids for t in TEXTS]
    plain = [tok.encode(t, add_special_tokens=False).ids for t in TEXTS]
    return with_, plain, replaced


def sentencepiece_model(path: str) -> tuple[list, list]:
    sp = spm.SentencePieceProcessor(model_file=str(ROOT / path))
    plain = [sp.encode(t) for t in TEXTS]
    if sp.bos_id() < 0:
        return plain, plain
    tok = LlamaTokenizer(vocab_file=str(ROOT / path), legacy=True, split_special_tokens=True)
    assert tok.add_bos_token and not tok.add_eos_token
    with_ = [tok.encode(t) for t in TEXTS]
    assert with_ == [sp.encode(t, add_bos=True) for t in TEXTS], path
    return with_, plain


def vocab_txt(path: str, lowercase: bool) -> tuple[list, list]:
    tok = BertTokenizer(vocab_file=str(ROOT / path), do_lower_case=lowercase)
    with_ = [tok.encode(t) for t in TEXTS]
    plain = [tok.encode(t, add_special_tokens=False) for t in TEXTS]
    return with_, plain


def main() -> None:
    cases = []

    def add(name, args, result):
        with_, plain = result[0], result[1]
        case = {"name": name, "import": args, "with_specials": with_, "plain": plain}
        if len(result) > 2 and result[2] is not None:
            case["post_processor"] = result[2]
        cases.append(case)

    llama3 = f"{FIX}/hf_bpe/llama3-8k/tokenizer.json"
    qwen2 = f"{FIX}/hf_bpe/qwen2-8k/tokenizer.json"
    bert_cased = f"{FIX}/wordpiece/bert-cased-8k/tokenizer.json"
    minilm = f"{FIX}/wordpiece/minilm-uncased/tokenizer.json"
    sp32000 = f"{FIX}/sentencepiece/models/sp32000.tokenizer.json"
    add("llama3-8k", ["--tokenizer-json", llama3], tokenizer_json(llama3))
    qwen_args = ["--tokenizer-json", qwen2]
    add("qwen2-8k", qwen_args, tokenizer_json(qwen2))
    add("bert-cased-8k", ["--tokenizer-json", bert_cased], tokenizer_json(bert_cased))
    add("minilm-uncased", ["--tokenizer-json", minilm], tokenizer_json(minilm))
    add("sp32000.tokenizer.json", ["--tokenizer-json", sp32000], tokenizer_json(sp32000))

    # Post-processors no committed file has, set with tokenizers on a committed file.
    roberta = processors.RobertaProcessing(sep=("<|im_end|>", 8194), cls=("<|im_start|>", 8193))
    add("qwen2-8k+roberta", qwen_args, tokenizer_json(qwen2, roberta))
    two_ids = processors.TemplateProcessing(
        single="<|im_start|> $A <|im_end|> <|endoftext|>",
        special_tokens=[
            {"id": "<|im_start|>", "ids": [8193, 8192], "tokens": ["<|im_start|>", "<|endoftext|>"]},
            ("<|im_end|>", 8194),
            ("<|endoftext|>", 8192),
        ],
    )
    add("qwen2-8k+template", qwen_args, tokenizer_json(qwen2, two_ids))
    # A Sequence with one step that adds ids. (With two, tokenizers gives the second the
    # first's pieces as separate sequences, a pair for RobertaProcessing: picobpe refuses it.)
    nested = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.RobertaProcessing(sep=("<|im_end|>", 8194), cls=("<|endoftext|>", 8192)),
        ]
    )
    add("qwen2-8k+sequence", qwen_args, tokenizer_json(qwen2, nested))
    bert = processors.BertProcessing(sep=("[SEP]", 3), cls=("[CLS]", 2))
    add("bert-cased-8k+bert", ["--tokenizer-json", bert_cased], tokenizer_json(bert_cased, bert))

    for path in [f"{FIX}/sentencepiece/models/sp32000.model", f"{FIX}/unigram/models/ug8000.model"]:
        add(Path(path).name, ["--sentencepiece", path], sentencepiece_model(path))
    minilm_vocab = f"{FIX}/wordpiece/minilm-uncased/vocab.txt"
    cased_vocab = f"{FIX}/wordpiece/bert-cased-8k/vocab.txt"
    add("minilm-uncased/vocab.txt", ["--wordpiece-vocab", minilm_vocab], vocab_txt(minilm_vocab, True))
    add(
        "bert-cased-8k/vocab.txt",
        ["--wordpiece-vocab", cased_vocab, "--cased"],
        vocab_txt(cased_vocab, False),
    )

    doc = {
        "generator": "tests/scripts/gen_post_vectors.py",
        "versions": {
            "tokenizers": tokenizers.__version__,
            "transformers": transformers.__version__,
            "sentencepiece": spm.__version__,
        },
        "texts": TEXTS,
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(cases)} cases x {len(TEXTS)} texts")


if __name__ == "__main__":
    main()
