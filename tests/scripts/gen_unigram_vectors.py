#!/usr/bin/env python3
"""Generate picobpe's SentencePiece-Unigram reference data with the real `sentencepiece` and
Hugging Face `tokenizers` libraries (never with picobpe).

Usage (from the repository root; the same installs as gen_sp_vectors.py):

    pip install sentencepiece==0.2.3 protobuf==7.36.2 tokenizers==0.22.2
    pip install --no-deps transformers==4.57.6      # only for convert_slow_tokenizer
    pip install "huggingface-hub>=0.34,<1.0" numpy pyyaml safetensors regex  # checked at its import
    python3 tests/scripts/gen_unigram_vectors.py [--shared ../shared/data]

(About 5 minutes on 2 cores: the two Unigram trainings take 1.5-2.5 min each; with
--keep-models the committed models are reused and only the rest is rewritten, about 40 s.)

It (re)writes, under tests/fixtures/unigram/:

    models/ug8000.model, ug4096-bytes.model
                                  trained here with the sentencepiece trainer (model_type=unigram)
                                  on the sample of gen_sp_vectors.py ("all"; never multi/ar.txt)
    models/<stem>.tokenizer.json  HF tokenizers files made by transformers' converters
                                  (T5Converter for ug8000, LlamaConverter for ug4096-bytes)
    vectors/<stem>/<set>.jsonl.gz ids (+ decodings, + HF ids where they differ), in the record
                                  format of tests/fixtures/sentencepiece (see its PROVENANCE.md)
    MANIFEST.json                 versions, trainer options, counts, facts, sha256 of every file

The input sets are not copied: the vectors name tests/fixtures/vectors/inputs/*.jsonl and
tests/fixtures/sentencepiece/inputs/sp_edge.jsonl.

The script also carries a Python port of sentencepiece 0.2.3's `unigram::Model::EncodeOptimized`
(float32 arithmetic, see PROVENANCE.md) and asserts that it gives sentencepiece's ids on every
record; variants of it (double arithmetic, no score reset, ">=" ties, Viterbi cut before each
U+2581 with or without carrying the float32 score across the cut) are run on every record and
their disagreements are counted in MANIFEST.json.

The output is a pure function of the inputs: running the script twice gives byte-identical
files (the trainer is deterministic with num_threads=2, checked).
"""

from __future__ import annotations

import argparse
import base64
import bisect
import collections
import io
import json
import shutil
import struct
import sys
from pathlib import Path

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as sp_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_sp_vectors import MULTI_ALL, corpus_lines, fffd_text, load_set, sha256, spec_dict, write_jsonl  # noqa: E402

# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------

COMMON = dict(
    model_type="unigram",
    normalization_rule_name="identity",  # no NFKC: precompiled_charsmap is empty
    input_sentence_size=0,  # use every sentence (no sampling)
    shuffle_input_sentence=False,
    max_sentence_length=131072,  # longer than the longest line of the sample (74,399 bytes)
    num_threads=2,  # deterministic: two runs give byte-identical models (checked)
    minloglevel=2,
)

# Both on gen_sp_vectors.py's sample "all" (english.txt's first 6 MB + 12 multi/ files).
# character_coverage: as sp4096/sp4096-unk there (0.995): 0.9995 would need > 4,500 of the
# vocabulary for single characters.
MODELS = {
    # T5-like: no byte fallback (unknown characters are <unk>), whitespace collapsed, T5's ids.
    "ug8000": dict(vocab_size=8000, add_dummy_prefix=True, remove_extra_whitespaces=True,
                   byte_fallback=False, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                   character_coverage=0.995),
    # Byte fallback, digits split, one user-defined symbol, whitespace kept.
    "ug4096-bytes": dict(vocab_size=4096, add_dummy_prefix=True, remove_extra_whitespaces=False,
                         byte_fallback=True, split_digits=True, user_defined_symbols=["<tool>"],
                         character_coverage=0.995),
}

# The transformers converter used for each model's tokenizer.json (see PROVENANCE.md).
CONVERTERS = {"ug8000": "T5Converter", "ug4096-bytes": "LlamaConverter"}

SETS = {
    "fixtures": "vectors/inputs/fixtures.jsonl",
    "corpus": "vectors/inputs/corpus.jsonl",
    "random": "vectors/inputs/random.jsonl",
    "invalid_utf8": "vectors/inputs/invalid_utf8.jsonl",
    "sp_edge": "sentencepiece/inputs/sp_edge.jsonl",
}

# To keep the folder near 3 MB, only part of these sets is stored (see main()).
SUBSET = {"random": 6, "invalid_utf8": 4}

# Piece types of sentencepiece_model.proto.
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
META = "\u2581".encode()  # U+2581, the escaped space

# --------------------------------------------------------------------------------------------
# HF tokenizer.json via transformers' converters
# --------------------------------------------------------------------------------------------


class _SlowShim:
    """What the converters read from a slow T5Tokenizer / LlamaTokenizer."""

    def __init__(self, model_file: Path):
        self.vocab_file = str(model_file)
        self._sp = spm.SentencePieceProcessor(model_file=str(model_file))
        self.legacy = True  # the default of both slow tokenizers
        self.add_prefix_space = True
        self._extra_ids = 0  # T5Converter: no <extra_id_N> appended (ids = sentencepiece's)

    def convert_ids_to_tokens(self, i: int) -> str:
        return self._sp.IdToPiece(i)

    def convert_tokens_to_ids(self, t: str) -> int:
        return self._sp.PieceToId(t)


def tokenizer_json(model_file: Path, converter: str) -> str:
    import importlib

    cst = importlib.import_module("transformers.convert_slow_tokenizer")
    tok = getattr(cst, converter)(_SlowShim(model_file)).converted()
    return tok.to_str(pretty=False) + "\n"


# --------------------------------------------------------------------------------------------
# A Python port of sentencepiece 0.2.3 unigram::Model::EncodeOptimized (unigram_model.cc
# 796-943) and of the id post-processing of SentencePieceProcessor::EncodeOptimized
# (sentencepiece_processor.cc 1318-1384), with switches for the variants counted in the facts.
# --------------------------------------------------------------------------------------------

_F32 = struct.Struct("<f")


def f32(x: float) -> float:
    """Round a double to the nearest float32 (a float32 sum computed in double and rounded
    once is the float32 sum: 53 >= 2*24+2 bits)."""
    return _F32.unpack(_F32.pack(x))[0]


def one_char_len(b: int) -> int:
    """string_util::OneCharLen: the length of a UTF-8 sequence from its lead byte."""
    return (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)[b >> 4]


class UnigramPort:
    def __init__(self, proto):
        # Trie over the UTF-8 bytes of NORMAL, USER_DEFINED and UNUSED pieces (the `pieces_`
        # of ModelInterface::InitializePieces); CONTROL, UNKNOWN and BYTE pieces are not in it.
        self.trie: dict = {}
        normal_scores = []
        self.unk_id = -1
        self.byte_ids = {}
        for i, p in enumerate(proto.pieces):
            if p.type == UNKNOWN:
                self.unk_id = i
            elif p.type == BYTE:
                self.byte_ids[int(p.piece[3:5], 16)] = i
            if p.type not in (NORMAL, USER_DEFINED, UNUSED):
                continue
            if p.type == NORMAL:
                normal_scores.append(p.score)
            node = self.trie
            for b in p.piece.encode():
                node = node.setdefault(b, [{}, None])
                last = node
                node = node[0]
            last[1] = (i, p.type, p.score)
        self.min_score = min(normal_scores)  # over NORMAL pieces only (unigram_model.cc 727-736)
        self.unk_score = f32(self.min_score - 10.0)  # kUnkPenalty = 10 (line 44, 862)
        self.byte_fallback = proto.trainer_spec.byte_fallback

    def lattice(self, norm: bytes) -> list:
        """Per character start: (start, mblen, has_single_node, [(end, id, score)])."""
        out = []
        size = len(norm)
        s = 0
        trie = self.trie
        while s < size:
            mblen = min(one_char_len(norm[s]), size - s)
            edges = []
            has_single = False
            children = trie
            k = s
            while k < size:
                node = children.get(norm[k])
                if node is None:
                    break
                k += 1
                children, val = node
                if val is not None:
                    pid, ptype, score = val
                    if ptype == UNUSED:
                        continue
                    if ptype == USER_DEFINED:
                        score = f32(0.1 * (k - s - 1))  # GetUserDefinedScore(length in BYTES)
                    edges.append((k, pid, score))
                    if k - s == mblen:
                        has_single = True
            out.append((s, mblen, has_single, edges))
            s += mblen
        return out

    def viterbi(self, lat: list, lo: int, hi: int, *, single: bool = True, reset: bool = True,
                ge: bool = False, init: float = 0.0, stats: dict | None = None) -> list:
        """Best path over [lo, hi): `lat` holds the lattice entries starting in [lo, hi) (edges
        ending past hi are ignored).
        Returns [(start, end, id)]. `stats` gets the largest |best_path_score_till_here| seen
        and how often the score reset fired."""
        rnd = f32 if single else (lambda x: x)
        n = hi - lo
        score = [0.0] * (n + 1)
        score[0] = init
        start = [-1] * (n + 1)
        ids = [-1] * (n + 1)
        max_frontier = 0
        unk_score = self.unk_score
        for s, mblen, has_single, edges in lat:
            s -= lo
            till = score[s]
            if stats is not None:
                stats["max_abs"] = max(stats.get("max_abs", 0.0), abs(till))
                if till < -100000.0 or till > 100000.0:
                    stats["resets"] = stats.get("resets", 0) + 1
            if reset and (till < -100000.0 or till > 100000.0):  # kScoreResetThreshold
                offset = till
                for i in range(s, max_frontier + 1):
                    if i == s or start[i] != -1:
                        score[i] = rnd(score[i] - offset)
                till = 0.0
            for e, pid, sc in edges:
                e -= lo
                if e > n:
                    break
                if e > max_frontier:
                    max_frontier = e
                cand = rnd(sc + till)
                if start[e] == -1 or cand > score[e] or (ge and cand == score[e]):
                    score[e], start[e], ids[e] = cand, s, pid
            if not has_single:
                e = s + mblen
                if e > max_frontier:
                    max_frontier = e
                cand = rnd(unk_score + till)
                if start[e] == -1 or cand > score[e] or (ge and cand == score[e]):
                    score[e], start[e], ids[e] = cand, s, self.unk_id
        if stats is not None:
            stats["end_score"] = score[n]
        path = []
        e = n
        while e > 0:
            path.append((start[e] + lo, e + lo, ids[e]))
            e = start[e]
        path.reverse()
        return path

    def ids(self, norm: bytes, path: list) -> list:
        """SentencePieceProcessor::EncodeOptimized: an unknown piece becomes its UTF-8 bytes'
        byte pieces with byte fallback, else a run of unknown pieces becomes ONE unk id."""
        out = []
        prev_unk = False
        for s, e, pid in path:
            unk = pid == self.unk_id
            if unk and self.byte_fallback:
                out.extend(self.byte_ids[b] for b in norm[s:e])
            elif not (unk and prev_unk):
                out.append(pid)
            prev_unk = unk
        return out


def meta_cuts(norm: bytes) -> list[int]:
    """Byte offsets of every U+2581 in the normalized text, plus 0 and len."""
    cuts = {0, len(norm)}
    i = norm.find(META)
    while i != -1:
        cuts.add(i)
        i = norm.find(META, i + 1)
    return sorted(cuts)


# --------------------------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------------------------


def inventory(proto) -> dict:
    T = sp_pb2.ModelProto.SentencePiece.Type.Name
    types = collections.Counter(T(p.type) for p in proto.pieces)
    normal = [p for p in proto.pieces if p.type == NORMAL]
    text_pieces = [p.piece for p in proto.pieces if p.type in (NORMAL, USER_DEFINED)]
    # ModelInterface::has_internal_space_symbol_ (model_interface.cc 147-157): a U+2581 after
    # the first one, in any piece but CONTROL, UNKNOWN and BYTE.
    internal = [p.piece for p in proto.pieces if p.type not in (CONTROL, UNKNOWN, BYTE)
                and "\u2581" in (p.piece[1:] if p.piece.startswith("\u2581") else p.piece)]
    longest = max(text_pieces, key=lambda x: (len(x.encode()), x))
    longest_chars = max(text_pieces, key=lambda x: (len(x), x))
    scores = collections.Counter(p.score for p in normal)
    lo = min(normal, key=lambda p: p.score)
    hi = max(normal, key=lambda p: p.score)
    return {
        "types": dict(sorted(types.items())),
        "user_defined": types.get("USER_DEFINED", 0),
        "control": types.get("CONTROL", 0),
        "byte": types.get("BYTE", 0),
        "unknown": types.get("UNKNOWN", 0),
        "unused": types.get("UNUSED", 0),
        "normal": types.get("NORMAL", 0),
        "pieces_with_meta_not_first": len(internal),
        "examples_meta_not_first": internal[:10],
        "has_internal_space_symbol": bool(internal),
        "pieces_that_are_only_meta": [p for p in text_pieces if set(p) == {"\u2581"}],
        "min_normal_score": lo.score, "min_normal_score_piece": lo.piece,
        "max_normal_score": hi.score, "max_normal_score_piece": hi.piece,
        "min_normal_score_f32_bits": struct.pack(">f", lo.score).hex(),
        "unk_score_min_minus_10": f32(lo.score - 10.0),
        "scores_of_non_normal_pieces": sorted({p.score for p in proto.pieces if p.type != NORMAL}),
        "normal_scores_shared_by_2_or_more_pieces": sum(1 for v in scores.values() if v > 1),
        "longest_piece": longest, "longest_piece_bytes": len(longest.encode()),
        "longest_piece_chars": len(longest_chars), "longest_piece_by_chars": longest_chars,
        "user_defined_scores_in_encode": {p.piece: f32(0.1 * (len(p.piece.encode()) - 1))
                                          for p in proto.pieces if p.type == USER_DEFINED},
    }


def hf_diff_kinds(sp, ids: list, hids: list) -> set:
    """What kinds of difference HF's ids show, by region: "segmentation" where both sides spell
    the same text with other normal pieces; "special_piece_from_text" where they spell the same
    text but HF used a CONTROL, UNKNOWN or BYTE piece for it (sentencepiece never matches those
    in text); "text" where the pieces spell different text (normalization, stripped
    whitespace, added tokens' prefix). A linear walk: each region runs until both sides have
    spelled the same number of characters again (after a "text" region the rest may be
    misaligned and is then counted as "text" too: a summary, not a diff)."""
    special = lambda i: sp.IsControl(i) or sp.IsUnknown(i) or sp.IsByte(i)  # noqa: E731
    kinds = set()
    i = j = 0
    while i < len(ids) or j < len(hids):
        if i < len(ids) and j < len(hids) and ids[i] == hids[j]:
            i += 1
            j += 1
            continue
        sa = sb = ""
        ra, rb = [], []
        while True:
            if i < len(ids) and (len(sa) <= len(sb) or j >= len(hids)):
                ra.append(ids[i])
                sa += sp.IdToPiece(ids[i])
                i += 1
            elif j < len(hids):
                rb.append(hids[j])
                sb += sp.IdToPiece(hids[j])
                j += 1
            else:
                break
            if sa and sb and len(sa) == len(sb):
                break
        if sa != sb or any(sp.IsUnknown(x) for x in ra):
            kinds.add("text")
        elif any(special(x) for x in ra + rb):
            kinds.add("special_piece_from_text")
        else:
            kinds.add("segmentation")
    return kinds


def pieces(sp, ids):
    return [sp.IdToPiece(i) for i in ids]


def check_facts(sps: dict) -> dict:
    """Behaviours asserted here (described in PROVENANCE.md)."""
    ug, ub = sps["ug8000"], sps["ug4096-bytes"]
    P = pieces
    facts: dict = {}
    # Unknown characters, no byte fallback: one <unk> (id 2) per RUN of unknown characters,
    # and the run ends at a known character or a U+2581.
    two_unknown = "\U0001F600\U0001F601"
    assert ug.EncodeAsIds(two_unknown) == [ug.PieceToId("\u2581"), 2]
    assert ug.EncodeAsIds("a\n\nb").count(2) == 1 and ug.EncodeAsIds("\U0001F600 \U0001F601").count(2) == 2
    # Byte fallback: every unknown character becomes the byte pieces of its UTF-8 bytes.
    B = lambda b: ub.PieceToId("<0x%02X>" % b)  # noqa: E731
    assert ub.EncodeAsIds(two_unknown)[1:] == [B(b) for b in two_unknown.encode()]
    # The user-defined symbol is matched inside words and the dummy prefix stays its own piece.
    assert P(ub, ub.EncodeAsIds("<tool>")) == ["\u2581", "<tool>"]
    assert "<tool>" in P(ub, ub.EncodeAsIds("a<tool>b"))
    # Control/unknown/byte pieces are not in the trie: spelled out.
    for t in ["<s>", "</s>", "<unk>", "<0x41>"]:
        assert ub.PieceToId(t) not in ub.EncodeAsIds(t), t
    for t in ["<pad>", "</s>", "<unk>"]:
        assert ug.PieceToId(t) not in ug.EncodeAsIds(t), t
    # Decoding an unknown id gives " ⁇ ".
    assert ug.DecodeIds([2]) == " \u2047 "
    facts["examples"] = {
        "ug8000 '😀😁'": P(ug, ug.EncodeAsIds(two_unknown)),
        "ug8000 'a\\n\\nb'": P(ug, ug.EncodeAsIds("a\n\nb")),
        "ug8000 'a\\n\\nb' decoded": ug.DecodeIds(ug.EncodeAsIds("a\n\nb")),
        "ug8000 '😀 😁'": P(ug, ug.EncodeAsIds("\U0001F600 \U0001F601")),
        "ug4096-bytes '😀😁'": P(ub, ub.EncodeAsIds(two_unknown)),
        "ug4096-bytes '<tool>'": P(ub, ub.EncodeAsIds("<tool>")),
        "ug4096-bytes 'a<tool>b'": P(ub, ub.EncodeAsIds("a<tool>b")),
        "ug4096-bytes '<tool><tool>'": P(ub, ub.EncodeAsIds("<tool><tool>")),
        "ug4096-bytes '2024'": P(ub, ub.EncodeAsIds("2024")),
        "ug4096-bytes 'a  b'": P(ub, ub.EncodeAsIds("a  b")),
        "ug8000 '  a  b  '": P(ug, ug.EncodeAsIds("  a  b  ")),
        "ug8000 '2024'": P(ug, ug.EncodeAsIds("2024")),
    }
    return facts


# --------------------------------------------------------------------------------------------


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=repo.parent / "shared" / "data")
    ap.add_argument("--fixtures", type=Path, default=repo / "tests" / "fixtures")
    ap.add_argument("--keep-models", action="store_true",
                    help="reuse the committed models/*.model instead of training (vectors only)")
    args = ap.parse_args()
    shared: Path = args.shared
    fixtures: Path = args.fixtures
    out = fixtures / "unigram"
    models_dir = out / "models"
    import tokenizers
    import transformers
    from tokenizers import Tokenizer

    versions = {"python": sys.version.split()[0], "sentencepiece": spm.__version__,
                "tokenizers": tokenizers.__version__, "transformers": transformers.__version__,
                "protobuf": __import__("google.protobuf").protobuf.__version__}
    # The committed bytes were made with exactly these (other versions may well agree).
    assert spm.__version__ == "0.2.3", spm.__version__
    assert tokenizers.__version__ == "0.22.2", tokenizers.__version__
    assert transformers.__version__ == "4.57.6", transformers.__version__

    kept = {}
    if args.keep_models:
        kept = {stem: (models_dir / f"{stem}.model").read_bytes() for stem in MODELS}
    for d in [models_dir, out / "vectors"]:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)

    # 1. Train.
    lines, used = corpus_lines(shared, MULTI_ALL)
    manifest_models: dict = {}
    protos: dict = {}
    for stem, cfg in MODELS.items():
        opts = {**COMMON, **cfg}
        w = io.BytesIO()
        if stem in kept:
            w.write(kept[stem])
        else:
            spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=w, **opts)
        (models_dir / f"{stem}.model").write_bytes(w.getvalue())
        m = sp_pb2.ModelProto()
        m.ParseFromString(w.getvalue())
        assert len(m.pieces) == cfg["vocab_size"]
        assert m.trainer_spec.model_type == sp_pb2.TrainerSpec.UNIGRAM
        assert m.normalizer_spec.precompiled_charsmap == b""
        protos[stem] = m
        manifest_models[stem] = {
            "source": "trained here: sentencepiece.SentencePieceTrainer.train(sentence_iterator=<sample lines>, **trainer_options)",
            "trainer_options": {k: v for k, v in opts.items() if k != "minloglevel"},
            "sample": {"name": "all (gen_sp_vectors.py)", "sentences": len(lines),
                       "bytes": sum(len(x.encode()) + 1 for x in lines), "files": used},
            "trainer_spec_in_file": spec_dict(m.trainer_spec),
            "file": f"models/{stem}.model",
            "vocab_size": len(m.pieces),
            "normalizer_spec": {"name": m.normalizer_spec.name,
                                "add_dummy_prefix": m.normalizer_spec.add_dummy_prefix,
                                "remove_extra_whitespaces": m.normalizer_spec.remove_extra_whitespaces,
                                "escape_whitespaces": m.normalizer_spec.escape_whitespaces,
                                "precompiled_charsmap_bytes": len(m.normalizer_spec.precompiled_charsmap)},
            "special_ids": {"unk": m.trainer_spec.unk_id, "bos": m.trainer_spec.bos_id,
                            "eos": m.trainer_spec.eos_id, "pad": m.trainer_spec.pad_id},
            "byte_fallback": m.trainer_spec.byte_fallback,
            "unk_surface": m.trainer_spec.unk_surface,
            "pieces": inventory(m),
        }
    sps = {s: spm.SentencePieceProcessor(model_file=str(models_dir / f"{s}.model")) for s in MODELS}
    ports = {}
    for s, m in protos.items():
        ports[s] = UnigramPort(m)

    # 2. HF tokenizer.json files.
    hfs = {}
    for stem in MODELS:
        js = tokenizer_json(models_dir / f"{stem}.model", CONVERTERS[stem])
        path = models_dir / f"{stem}.tokenizer.json"
        path.write_text(js, encoding="utf-8")
        hfs[stem] = Tokenizer.from_file(str(path))
        manifest_models[stem]["tokenizer_json"] = f"models/{stem}.tokenizer.json"
        manifest_models[stem]["tokenizer_json_made_by"] = (
            f"transformers {transformers.__version__} convert_slow_tokenizer.{CONVERTERS[stem]} "
            f"(legacy=True, add_prefix_space=True, _extra_ids=0), tokenizers {tokenizers.__version__}")

    # 3. Facts checked by experiment.
    facts = check_facts(sps)

    # 4. Vectors (+ the EncodeOptimized port and its variants on every record).
    for stem, m in protos.items():
        # The cut variants below are only meaningful if no piece can span a U+2581 that is not
        # its first character.
        assert not manifest_models[stem]["pieces"]["has_internal_space_symbol"], stem
    counts: dict = {}
    ws_facts: dict = {}
    variants = {"double_arithmetic": dict(single=False), "no_score_reset": dict(reset=False),
                "ties_to_later_start": dict(ge=True)}
    for set_name, inputs_rel in SETS.items():
        records = load_set(fixtures, inputs_rel)
        per_model: dict = {}
        # Indices where a variant of the port disagrees, or HF segments the same text otherwise.
        interesting: set = set()
        for stem, sp in sps.items():
            hf, port = hfs[stem], ports[stem]
            tool_id = sp.PieceToId("<tool>") if stem == "ug4096-bytes" else None
            recs = []
            n_ids = n_hf = n_dec = 0
            hf_diff_names = []
            hf_kinds = collections.Counter()
            var_diff = {k: [] for k in list(variants) + ["cut_before_each_meta",
                                                         "cut_before_each_meta_carrying_score"]}
            longest_seg = (0, None)
            longest_run = (0, None)
            longest_norm = (0, None)
            worst_score = (0.0, None)
            reset_records = []
            tool_mismatch = []
            for idx, (name, data, is_text) in enumerate(records):
                if is_text:
                    text = data.decode("utf-8")
                    ids = sp.EncodeAsIds(text)
                    assert sp.encode(data) == ids  # bytes in, same ids
                else:
                    ids = sp.encode(data)  # raw bytes straight to the C++ normalizer
                    # The invalid-UTF-8 rule: one U+FFFD per byte outside a well-formed sequence.
                    assert ids == sp.EncodeAsIds(fffd_text(data)), (stem, name)
                # The port, on the normalized text (sentencepiece's own normalizer).
                norm = sp.normalize(data)
                assert isinstance(norm, bytes)
                lat = port.lattice(norm)
                st: dict = {}
                mine = port.ids(norm, port.viterbi(lat, 0, len(norm), stats=st))
                assert mine == ids, (stem, set_name, name)
                for vname, kw in variants.items():
                    if port.ids(norm, port.viterbi(lat, 0, len(norm), **kw)) != ids:
                        var_diff[vname].append(name)
                        interesting.add(idx)
                # Cut before each U+2581: each segment from score 0, or from the float32 best
                # score carried over from the end of the previous segment.
                cuts = meta_cuts(norm)
                starts = [x[0] for x in lat]
                for vname, carry in [("cut_before_each_meta", False),
                                     ("cut_before_each_meta_carrying_score", True)]:
                    path = []
                    init = 0.0
                    for a, b in zip(cuts, cuts[1:]):
                        i, j = bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)
                        seg_stats: dict = {}
                        path += port.viterbi(lat[i:j], a, b, init=init if carry else 0.0,
                                             stats=seg_stats)
                        init = seg_stats["end_score"]
                    if port.ids(norm, path) != ids:
                        var_diff[vname].append(name)
                        interesting.add(idx)
                seg = max((b - a for a, b in zip(cuts, cuts[1:])), default=0)
                run = max((b - a - (3 if norm[a:a + 3] == META else 0)
                           for a, b in zip(cuts, cuts[1:])), default=0)
                if seg > longest_seg[0]:
                    longest_seg = (seg, name)
                if run > longest_run[0]:
                    longest_run = (run, name)
                if len(norm) > longest_norm[0]:
                    longest_norm = (len(norm), name)
                worst, resets = st.get("max_abs", 0.0), st.get("resets", 0)
                if worst > worst_score[0]:
                    worst_score = (worst, name)
                if resets:
                    reset_records.append(name)
                if tool_id is not None and is_text and text.count("<tool>") != ids.count(tool_id):
                    tool_mismatch.append(name)

                dec = sp.DecodeIds(ids).encode("utf-8")
                rec = {"name": name, "ids": ids}
                # Omitted when the decoding is the input itself (after the U+FFFD rule).
                if dec != fffd_text(data).encode("utf-8"):
                    rec["decoded_b64"] = base64.b64encode(dec).decode("ascii")
                    n_dec += 1
                if is_text:
                    hids = hf.encode(text, add_special_tokens=False).ids
                    if hids != ids:
                        rec["hf"] = hids
                        n_hf += 1
                        hf_diff_names.append(name)
                        kinds = hf_diff_kinds(sp, ids, hids)
                        hf_kinds.update(kinds)
                        if "segmentation" in kinds:
                            interesting.add(idx)
                n_ids += len(ids)
                recs.append(rec)
            per_model[stem] = recs
            c = {"records": len(records), "ids": n_ids, "decoded_differs": n_dec}
            if set_name == "invalid_utf8":
                c["hf_differs"] = None
                c["hf_note"] = "not compared: HF tokenizers takes only valid UTF-8 (str)"
            else:
                c["hf_differs"] = n_hf
                c["hf_difference_kinds"] = dict(sorted(hf_kinds.items()))
                c["hf_differs_names"] = hf_diff_names[:60]
            counts.setdefault(set_name, {})[stem] = c
            ws_facts.setdefault(set_name, {})[stem] = {
                "port_equals_sentencepiece": len(records),
                "variants_differ": {k: {"records": len(v), "names": v[:20]} for k, v in var_diff.items()},
                "longest_segment_cut_before_each_meta_bytes": longest_seg[0],
                "longest_segment_record": longest_seg[1],
                "longest_run_between_metas_bytes": longest_run[0],
                "longest_run_record": longest_run[1],
                "longest_normalized_bytes": longest_norm[0],
                "longest_normalized_record": longest_norm[1],
                "max_abs_best_path_score_till_here": worst_score[0],
                "max_abs_best_path_score_record": worst_score[1],
                "records_where_score_reset_fires": len(reset_records),
                "score_reset_records": reset_records[:20],
                **({"tool_count_mismatch": tool_mismatch} if tool_id is not None else {}),
            }
        # Stored: every record, or for the large sets every k-th record plus every record where
        # a variant of the port disagrees or HF segments the same text otherwise (for either
        # model); the counts above are over all records.
        k = SUBSET.get(set_name, 1)
        keep = [i for i in range(len(records)) if i % k == 0 or i in interesting]
        for stem in sps:
            header = {"model": stem, "set": set_name, "inputs": inputs_rel, "count": len(keep),
                      "sentencepiece": spm.__version__, "tokenizers": tokenizers.__version__,
                      "tokenizer_json": f"unigram/models/{stem}.tokenizer.json"}
            if k > 1:
                header["subset"] = (f"records i with i % {k} == 0, plus those where a variant of "
                                    "the EncodeOptimized port disagrees or HF tokenizers segments "
                                    "the same text otherwise")
            (out / "vectors" / stem).mkdir(exist_ok=True)
            write_jsonl(out / "vectors" / stem / f"{set_name}.jsonl.gz", header,
                        [per_model[stem][i] for i in keep])
            counts[set_name][stem]["stored_records"] = len(keep)
            counts[set_name][stem]["stored_ids"] = sum(len(per_model[stem][i]["ids"]) for i in keep)
    facts["per_set"] = ws_facts

    # 5. Manifest.
    files = {}
    for p in sorted(out.rglob("*")):
        # Generated files only (PROVENANCE.md and .gitattributes are written by hand).
        if p.is_file() and p.name not in ("MANIFEST.json", "PROVENANCE.md", ".gitattributes"):
            files[str(p.relative_to(out))] = {"bytes": p.stat().st_size, "sha256": sha256(p)}
    manifest = {
        "generator": "tests/scripts/gen_unigram_vectors.py",
        "versions": versions,
        "models": manifest_models,
        "sets": {s: {"inputs": r, "counts": counts[s]} for s, r in SETS.items()},
        "facts": facts,
        "files": files,
    }
    (out / "MANIFEST.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    total = sum(f["bytes"] for f in files.values())
    print(f"wrote {len(files)} files, {total} bytes")
    for s in SETS:
        print(s, {k: (v["ids"], v["decoded_differs"], v.get("hf_differs")) for k, v in counts[s].items()})
        print("  ", {k: {vn: vv["records"] for vn, vv in v["variants_differ"].items()}
                     for k, v in ws_facts[s].items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
