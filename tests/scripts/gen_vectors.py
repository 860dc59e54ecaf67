#!/usr/bin/env python3
"""Generate picobpe's reference vectors with tiktoken (built offline from local rank files).

Usage (from the repository root; needs tiktoken and regex, e.g. `pip install tiktoken regex`):

    python3 tests/scripts/gen_vectors.py [--shared ../shared/data] [--out tests/fixtures]

Reads the rank files in <shared>/tiktoken, the CS336 fixtures in <shared>/cs336 and the corpora
in <shared>/corpus, and (re)writes:

    <out>/vectors/texts/*.txt                 input texts (CS336 fixtures, corpus slices)
    <out>/vectors/inputs/<set>.jsonl          the inputs of each set, one record a line
    <out>/vectors/<encoding>/<set>.jsonl      tiktoken's ids for those inputs
    <out>/vectors/MANIFEST.json               tool versions, counts, sizes, sha256 of everything
    <out>/models/gpt2.tiktoken, gpt2_vocab.json, gpt2_merges.txt   model inputs for the tests

The output is a pure function of the inputs and the seeds below: running the script twice
gives byte-identical files. See <out>/vectors/PROVENANCE.md for the format and the rules.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import random
import re
import shutil
import sys
import unicodedata
from pathlib import Path

import regex  # the `regex` package: possessive quantifiers, \p{..}, works on lone surrogates
import tiktoken
import tiktoken.load
from tiktoken_ext import openai_public

# --------------------------------------------------------------------------------------------
# Encodings
# --------------------------------------------------------------------------------------------

# The patterns the issues name as the reference, and the encodings (shared with
# scripts/bench_python_peers.py).
from patterns import ENCODINGS, ISSUE_PATTERNS  # noqa: E402

# The extra special registered for the `double_special` set (longest-first matching).
DOUBLE = "<|endoftext|><|endoftext|>"


def tiktoken_ext_pattern(name: str) -> str:
    """The pattern tiktoken itself uses for `name` (read from tiktoken_ext without downloading)."""
    if name == "gpt2":
        return openai_public.r50k_pat_str
    # The constructors download rank files; read the literal pattern from their source instead.
    import inspect

    src = inspect.getsource(getattr(openai_public, name))
    ns: dict = {}
    if name == "cl100k_base":
        m = re.search(r'"pat_str": (r""".*?"""),', src, re.S)
        return eval(m.group(1), ns)  # noqa: S307 - a string literal from tiktoken's own source
    m = re.search(r"pat_str = (\"\|\"\.join\(.*?\]\s*\))", src, re.S)
    return eval(m.group(1), ns)  # noqa: S307


def load_encoding(shared: Path, name: str) -> tuple[tiktoken.Encoding, dict[str, int]]:
    meta = json.loads((shared / "tiktoken" / f"{name}.json").read_text())
    specials = meta["special_tokens"]
    if name == "gpt2":
        assert specials == {"<|endoftext|>": 50256}, specials
    ranks = tiktoken.load.load_tiktoken_bpe(str(shared / "tiktoken" / f"{name}.tiktoken"))
    enc = tiktoken.Encoding(
        name=name,
        pat_str=tiktoken_ext_pattern(name),
        mergeable_ranks=ranks,
        special_tokens=specials,
    )
    return enc, specials


# --------------------------------------------------------------------------------------------
# Reference splitting used where tiktoken cannot be called directly
# --------------------------------------------------------------------------------------------


def special_splitter(specials: list[str]) -> re.Pattern:
    """Leftmost match, longest special first among those starting at the same position."""
    alts = sorted(specials, key=lambda s: (-len(s), s))
    return re.compile("|".join(re.escape(s) for s in alts))


def split_specials(text, specials_re):
    """Yield ("text", segment) and ("special", name) parts, in order (works on str or bytes)."""
    pos = 0
    for m in specials_re.finditer(text):
        if m.start() > pos:
            yield "text", text[pos : m.start()]
        yield "special", m.group(0)
        pos = m.end()
    if pos < len(text):
        yield "text", text[pos:]


def regex_module_pattern(name: str) -> regex.Pattern:
    # `$` in the `regex` module also matches before a final newline; tiktoken (fancy-regex) means
    # end of text. The only `$` is in `\s++$`, where the two agree, but say what we mean.
    return regex.compile(tiktoken_ext_pattern(name).replace("$", r"\Z"))


def surrogate_escape(data: bytes) -> str:
    """Each byte not part of a well-formed UTF-8 sequence becomes one lone surrogate U+DC80+byte."""
    return data.decode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------------------------
# Random inputs
# --------------------------------------------------------------------------------------------

ASCII_WORDS = (
    "the of and to in is was that he it for with as his on be at by I had not are but from or have "
    "an they which one you were her all she there would their we him been has when who will more no "
    "if out so said what up its about into than them can only other new some could time these two "
    "may then do first any my now such like our over man me even most made after also did many "
    "Hello World The THE Don don't I'M HTTPServer iPhone camelCase snake_case XMLHttpRequest ab a x "
    "Z OK e.g i.e U.S.A Mr Mrs St ll ve re s t d m LL VE RE"
).split()
CONTRACTIONS = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'Re", "'rE", "'VE", "'vE", "'M",
    "'LL", "'Ll", "'lL", "'D", "'ſ", "'ſt", "'x", "'", "''", "'''", "’s", "’ll", "'s'", "'ll've",
    "'K", "'K", "'İ", "'ǅ", "'1", "' s", "'\n", "'re'", "'LLamas", "'Sup",
]
LATIN_EXT = (
    "àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿßœŒÆĀāĂăĄąĆćČčĎďĐđĒēĘęĚěĞğĦħĪīİıĲĳĶķĹĺĽľŁłŃńŇňŌōŐőŔŕŘřŚśŞşŠšŢţ"
    "ŤťŪūŮůŰűŲųŴŵŶŷŸŹźŻżŽžſƀƁƂǅǈǋǲȘșȚțɐɑɒʃʒẞẠạẶặỲỳ"
)
GREEK = "αβγδεζηθικλμνξοπρστυφχψωςΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩάέήίόύώϊϋΐΰἀἁἂἃἄἅἆἇὰᾶῆῖῦῶᾈᾉᾳ"
CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯіїєґІЇЄҐ"
ARABIC = "ابتثجحخدذرزسشصضطظعغفقكلمنهويءآأؤإئةى" + "\u064b\u064c\u064d\u064e\u064f\u0650\u0651\u0652"
HEBREW = "אבגדהוזחטיכלמנסעפצקרשתךםןףץ" + "\u05b0\u05b4\u05bc"
DEVANAGARI = "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह" + "ािीुूेैोौंः्ँ"
THAI = "กขคงจฉชซญดตถทนบปผพฟภมยรลวศษสหอฮะาเแโใไ" + "\u0e31\u0e34\u0e35\u0e36\u0e37\u0e38\u0e39\u0e48\u0e49\u0e4a\u0e4b"
KANA = "".join(map(chr, range(0x3041, 0x3097))) + "".join(map(chr, range(0x30A1, 0x30FB))) + "ー々〆ゝゞヽヾ"
MODIFIERS = "ʰʱʲʳʷʸˠˡˢˣˤˆˇˊˋ"  # Lm
COMBINING = "\u0300\u0301\u0302\u0303\u0308\u030a\u0327\u0331\u20dd\u20e3\u0903\u093e\u1ab0\u0489"  # Mn Mc Me
ASTRAL_LETTERS = "𝐀𝐁𝐂𝑎𝑏𝑐𝒜𝓐𝔄𝕬𝖆𝘈𝙰𐐀𐐨𐌰𐌱𐍈𠀀𠀁𪚥𓀀𓀁"  # math alnum, Deseret, Gothic, CJK ext B, hieroglyphs
LETTER_SCRIPTS = [LATIN_EXT, GREEK, CYRILLIC, ARABIC, HEBREW, DEVANAGARI, THAI, KANA, ASTRAL_LETTERS]
NUMBERS_OTHER = "٠١٢٣٤٥٦٧٨٩०१२३४५६७८९０１２３４５６７８９𝟎𝟏𝟐²³¹¼½¾①②⑩ⅠⅡⅢⅣⅫↂ〇〡〢𐄇𐄈"
EMOJI = [
    "🙃", "🌍", "😀", "🎉", "🐞", "🆕", "💄", "🌐", "⌨️", "❤️", "✨", "🔥", "👍", "👍🏽", "👍🏿", "👋🏻",
    "👩‍💻", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🏴‍☠️", "🇺🇸", "🇮🇸", "🇯🇵", "🇩🇪🇫🇷", "1️⃣", "#️⃣", "🧑🏾‍🚀",
    "🫠", "©️", "™", "↩️", "🕵️‍♀️", "🤷🏻‍♂️", "☺", "☺️", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🙃🙃🙃", "\u200d", "\ufe0f",
]
WHITESPACE = [
    " ", " ", " ", " ", "\t", "\n", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\u2029",
    "\u0085", "\x0b", "\x0c", "\u2009", "\u200a", "\u1680", "\u202f", "\u205f", "\u2003",
    "\u180e", "\u200b", "\ufeff", "\x1c", "\x1f",  # not White_Space: count as "other"
]
PUNCT = [
    ".", ",", "!", "?", ";", ":", "-", "--", "—", "–", "...", "…", "“", "”", "‘", "’", "«", "»", "„",
    "¿", "¡", "/", "//", "/*", "*/", "->", "=>", "::", "#", "@", "$", "%", "&&", "||", "<", ">", "|",
    "{", "}", "[", "]", "(", ")", "\\", "`", "```", "~", "^", "_", "__", "+", "=", "==", "*", "**",
    '"', "§", "¶", "€", "£", "¥", "©", "°", "·", "•", "‰", "†", "※", "。", "、", "「", "」", "（",
    "）", "！", "？", "．", "，", "\x00", "\x07", "\x7f", "\ue000", "\U0010fffd", "\ufffd", "\ufffe",
]
SPECIAL_LIKE = [
    "<|endoftext|>", "<|endoftext|>", "<|endoftext", "endoftext|>", "<|endoftext|><|endoftext|>",
    "<|endoftext|>\n", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>",
    "<|im_start|>", "<|", "|>", "<||>", "< |endoftext|>", "<|ENDOFTEXT|>", "<|endoftext|>|>",
    "<<|endoftext|>", "<|endoftext|><|endoftext", "<|endoftext|><|endoftext|><|endoftext|>",
]
CODE = [
    "fn main() {\n    println!(\"{}\", x);\n}\n", "def f(x):\n\treturn x ** 2\n", "if (a && b) { c++; }",
    "let v: Vec<u32> = Vec::new();", "#include <stdio.h>", "x = [1, 2, 3]  # comment", "a/b/c.txt",
    "https://example.com/a?b=c&d=e", "SELECT * FROM t WHERE id = 1;", "\"quoted\"", "0x1F", "1e-10",
    "    ", "\t\t", "});\n", "<div class=\"x\">", "</p>\r\n", "$HOME/.config", "C:\\Windows\\",
]


def rand_scalar(rng: random.Random, assigned_only: bool) -> str:
    while True:
        r = rng.random()
        if r < 0.5:
            cp = rng.randrange(0x80, 0x10000)
        elif r < 0.6:
            cp = rng.randrange(0x00, 0x80)
        else:
            cp = rng.randrange(0x10000, 0x110000)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if assigned_only and unicodedata.category(c) in ("Cn", "Co", "Cs"):
            continue
        return c


def rand_word(rng: random.Random, alphabet: str) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 1, 2, 3, 4, 5, 6, 8, 12])))


def rand_component(rng: random.Random, assigned_only: bool) -> str:
    k = rng.random()
    if k < 0.20:
        w = rng.choice(ASCII_WORDS)
        if rng.random() < 0.2:
            w = w.upper() if rng.random() < 0.5 else w.capitalize()
        return w
    if k < 0.30:
        return rng.choice(CONTRACTIONS)
    if k < 0.42:
        return rand_word(rng, rng.choice(LETTER_SCRIPTS))
    if k < 0.46:
        # CJK ideographs and Hangul syllables
        lo, hi = rng.choice([(0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x3400, 0x4DBF)])
        return "".join(chr(rng.randrange(lo, hi + 1)) for _ in range(rng.randrange(1, 9)))
    if k < 0.49:
        base = rng.choice("aeoAEOnuiзαक")
        return base + "".join(rng.choice(COMBINING) for _ in range(rng.randrange(1, 4)))
    if k < 0.51:
        return rng.choice(MODIFIERS) + rand_word(rng, "abcXYZ")
    if k < 0.57:
        n = rng.choice([1, 1, 2, 3, 3, 4, 5, 6, 7, 9, 12, 16])
        d = "".join(rng.choice("0123456789") for _ in range(n))
        if rng.random() < 0.2:
            d += rng.choice([",", ".", "_", "-", "e", "x", "/"]) + str(rng.randrange(1000))
        return d
    if k < 0.60:
        return "".join(rng.choice(NUMBERS_OTHER) for _ in range(rng.randrange(1, 5)))
    if k < 0.70:
        if rng.random() < 0.1:
            return " " * rng.randrange(2, 70)
        return "".join(rng.choice(WHITESPACE) for _ in range(rng.randrange(1, 7)))
    if k < 0.78:
        return "".join(rng.choice(PUNCT) for _ in range(rng.randrange(1, 4)))
    if k < 0.85:
        return "".join(rng.choice(EMOJI) for _ in range(rng.randrange(1, 3)))
    if k < 0.90:
        return rng.choice(SPECIAL_LIKE)
    if k < 0.94:
        return rng.choice(CODE)
    return "".join(rand_scalar(rng, assigned_only) for _ in range(rng.randrange(1, 4)))


def rand_text(rng: random.Random, assigned_only: bool = False) -> str:
    n = rng.choice([1, 1, 2, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 40])
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.35:
            parts.append(" ")
        elif r < 0.40:
            parts.append(rng.choice(WHITESPACE))
        parts.append(rand_component(rng, assigned_only))
    return "".join(parts)


INVALID_SNIPPETS = [
    b"\x80", b"\xbf", b"\x80\x80", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",
    b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff", b"\xc3", b"\xe4\xb8", b"\xf0\x9f\x98",
    b"\xe2\x82", b"\xf0\x9f", b"\xc2\xc2", b"\xe2\x28\xa1", b"\xf0\x28\x8c\x28",
]


def mutate_invalid(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randrange(1, 5)):
        op = rng.random()
        pos = rng.randrange(len(b) + 1)
        if op < 0.35:
            b[pos:pos] = rng.choice(INVALID_SNIPPETS)
        elif op < 0.55:
            b[pos:pos] = bytes([rng.randrange(0x80, 0x100)])
        elif op < 0.70 and b:
            # cut a multi-byte sequence: drop one byte inside the text
            i = rng.randrange(len(b))
            del b[i]
        elif op < 0.80 and b:
            i = rng.randrange(len(b))
            b[i] = rng.randrange(0x80, 0x100)
        elif op < 0.90:
            # an invalid byte glued to a contraction, a space or a digit
            b[pos:pos] = rng.choice([b"'\xffs", b" \x80", b"\x80 ", b"1\xff2", b"a\xc3", b"\xe4\xb8a"])
        else:
            b[len(b) :] = rng.choice([b"\xc3", b"\xe4\xb8", b"\xf0\x9f\x98", b"\xf0"])
    out = bytes(b)
    try:
        out.decode("utf-8")
    except UnicodeDecodeError:
        return out
    return out + b"\xff"


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def aligned_slice(data: bytes, start: int, size: int) -> bytes:
    """data[start:start+size] moved to line boundaries (never splits a UTF-8 sequence)."""
    if start > 0:
        nl = data.find(b"\n", start)
        start = len(data) if nl < 0 else nl + 1
    end = min(len(data), start + size)
    if end < len(data):
        nl = data.rfind(b"\n", start, end)
        end = nl + 1 if nl >= 0 else end
    piece = data[start:end]
    piece.decode("utf-8")  # whole lines of a UTF-8 file
    return piece


# (corpus file, list of (start, size)): ~1.05 MB in total; `multi/ar.txt` is never used.
CORPUS_SLICES = {
    "english": ("english.txt", [(0, 190_000), (15_000_000, 190_000)]),
    "zh": ("multi/zh.txt", [(0, 30_000), (500_000, 30_000)]),
    "ja": ("multi/ja.txt", [(0, 30_000), (500_000, 30_000)]),
    "ko": ("multi/ko.txt", [(0, 60_000)]),
    "ru": ("multi/ru.txt", [(0, 30_000), (400_000, 30_000)]),
    "de": ("multi/de.txt", [(0, 30_000), (400_000, 30_000)]),
    "fr": ("multi/fr.txt", [(0, 30_000), (400_000, 30_000)]),
    "hi": ("multi/indic.txt", [(0, 28_300)]),  # the Hindi UDHR block only (MIT)
    "el": ("multi/el.txt", [(0, 30_000), (400_000, 30_000)]),
    "code-rust": ("multi/code-rust.txt", [(0, 30_000), (500_000, 30_000)]),
    "code-python": ("multi/code-python.txt", [(0, 30_000), (500_000, 30_000)]),
    "emoji-mixed": ("multi/emoji-mixed.txt", [(0, 30_000), (400_000, 30_000)]),
    "whitespace-heavy": (
        "multi/whitespace-heavy.txt",
        [(o, 7_000) for o in (0, 150_000, 200_000, 340_000, 352_000, 373_000, 385_000, 430_000, 600_000)],
    ),
}


def partial_char_text(shared: Path) -> str:
    """Text around the tokens of cl100k_base and o200k_base that start with a 3-byte character
    and end one or two bytes into another: each such token, its last character completed in
    several ways, then a newline or an ideographic full stop. The encoders' trie walk takes whole characters at a time except
    where these tokens may end (its PARTIAL flags), and only text like this tells the two apart."""
    tokens = set()
    for name in ["cl100k_base", "o200k_base"]:
        ranks = tiktoken.load.load_tiktoken_bpe(str(shared / "tiktoken" / f"{name}.tiktoken"))
        for tok in ranks:
            try:
                if len(tok) < 4 or len(tok[:3].decode("utf-8")) != 1:
                    continue
            except UnicodeDecodeError:
                continue
            for k in (1, 2):
                if 0xE0 <= tok[-k] <= 0xEF:
                    tokens.add(tok)
    pieces = []
    for tok in sorted(tokens):
        tail = 2 if 0xE0 <= tok[-1] <= 0xEF else 1
        for cont in [b"\x80", b"\x81", b"\x8c", b"\x96", b"\xa6", b"\xb8", b"\xbf"]:
            completed = tok + (cont * tail if tail == 2 else cont)
            for more in ["", tok[:3].decode("utf-8")]:
                try:
                    pieces.append(completed.decode("utf-8") + more)
                except UnicodeDecodeError:
                    pass
    # Pieces must start with the 3-byte character for the walk to go by characters: a newline
    # ends the piece before, an ideographic full stop starts the word's piece.
    return "".join(p + ("\n" if i % 2 else "\u3002") for i, p in enumerate(pieces))


def build_inputs(shared: Path, texts_dir: Path) -> dict[str, list[dict]]:
    sets: dict[str, list[dict]] = {}

    # --- fixtures: the named inputs of issue 2, plus edge cases ---
    fixtures = []
    for f in ["address.txt", "german.txt", "tinystories_sample.txt"]:
        data = (shared / "cs336" / f).read_bytes()
        (texts_dir / f"cs336-{f}").write_bytes(data)
        fixtures.append({"name": f, "file": f"texts/cs336-{f}"})
    inline = [
        ("special-mix", "Héllò hôw <|endoftext|><|endoftext|> are ü? 🙃<|endoftext|>"),
        ("sanity", "Hello, 🌍! 你好!"),
        ("empty", ""),
        ("one-char", "a"),
        ("one-char-space", " "),
        ("one-char-newline", "\n"),
        ("one-char-e-acute", "é"),
        ("one-char-han", "中"),
        ("one-emoji", "🙃"),
        ("one-zwj-emoji", "👨‍👩‍👧‍👦"),
        ("only-special", "<|endoftext|>"),
        ("contractions", "I'm, you're, he's, we'll, they've, I'd, don't; I'M YOU'RE HE'S WE'LL 'ſ 'ſt ''s"),
        ("long-spaces", " " * 10_000 + "x"),
        ("long-spaces-end", "x" + " " * 10_000),
        ("long-newlines", "\n" * 5_000),
        ("long-crlf", "\r\n" * 3_000 + "a"),
        ("long-digits", "1234567890" * 500),
        ("long-letters", "a" * 20_000),
        ("long-mixed-letters", "ab" * 7_000),
        ("long-han", "中文" * 4_000),
        ("long-emoji", "🙃" * 3_000),
        ("long-punct", "!?" * 5_000),
        ("long-tabs-nbsp", "\t\u00a0\u3000" * 2_000 + "end"),
        ("long-apostrophes", "'s" * 5_000),
    ]
    # Long single pieces with irregular merge structure (the O(n log n) merge for pieces over
    # 512 bytes); each over 4 KiB so the firmware's vector subset is unchanged.
    rng = random.Random(0x5EED_0004)
    long_alphabets = [
        ("ab", 6_000), ("abc", 8_000), ("etaoinshr", 9_000), ("abcdefghijklmnopqrstuvwxyz", 12_000),
        ("aAbBeEtT", 7_000), ("абвгдежзийклмнопрстуфхцчшщыэюя", 3_000), ("的一是不了人我在有他这为之大来", 2_000),
    ]
    for alphabet, n in long_alphabets:
        inline.append((f"long-random-{len(alphabet)}-{n}", "".join(rng.choice(alphabet) for _ in range(n))))
    inline.append(("long-random-digits", "".join(rng.choice("0123456789") for _ in range(6_000))))
    inline.append(("long-random-punct", "".join(rng.choice("!?=-*#.,:;") for _ in range(6_000))))
    # Words of every length from 1 to 20 bytes with their neighbours (contractions, curly quotes,
    # dashes, the ellipsis), so pieces end at and around the edge of the encoders' 16-byte fast
    # path window; over 4 KiB, so the firmware's vector subset is unchanged.
    edge = []
    for n in range(1, 21):
        word = ("Chillingworth" * 2)[:n]
        for before, after in [(" ", "'s "), ("", "'s "), (" ", "'LL "), (" ", "\u2019s "),
                              (" \u201c", ",\u201d "), (" ", "\u2014x "), ("", ".\u201d\n\n"),
                              (" ", "\u2026 ")]:
            edge.append(before + word + after)
    inline.append(("window-edge-words", "".join(edge) * 3 + " Roger Chillingworth's arrival"))
    inline.append(("partial-char-tokens", partial_char_text(shared)))
    fixtures += [{"name": n, "text": t} for n, t in inline]
    sets["fixtures"] = fixtures

    # --- corpus slices ---
    corpus = []
    for name, (rel, spans) in CORPUS_SLICES.items():
        data = (shared / "corpus" / rel).read_bytes()
        text = b"".join(aligned_slice(data, s, n) for s, n in spans)
        (texts_dir / f"corpus-{name}.txt").write_bytes(text)
        corpus.append({"name": name, "file": f"texts/corpus-{name}.txt"})
    sets["corpus"] = corpus

    # --- random strings ---
    rng = random.Random(0x5EED_0001)
    sets["random"] = [{"name": f"random-{i}", "text": rand_text(rng)} for i in range(12_000)]

    # --- a second special "<|endoftext|><|endoftext|>": longest first must win ---
    rng = random.Random(0x5EED_0002)
    dbl = [
        DOUBLE, DOUBLE + "<|endoftext|>", "<|endoftext|> " + DOUBLE, DOUBLE * 2, "x" + DOUBLE + "y",
        "<|endoftext|> <|endoftext|>", "<|endoftext|><|endoftext", "<|endoftext|><|endoftext|",
        "Héllò hôw <|endoftext|><|endoftext|> are ü? 🙃<|endoftext|>", "<|endoftext|>" * 5,
        "a<|endoftext|><|endoftext|><|endoftext|>b", "<<|endoftext|><|endoftext|>>",
    ]
    for _ in range(300):
        parts = []
        for _ in range(rng.randrange(1, 8)):
            parts.append(rng.choice(SPECIAL_LIKE) if rng.random() < 0.5 else rand_component(rng, False))
        dbl.append("".join(parts))
    sets["double_special"] = [{"name": f"double-{i}", "text": t} for i, t in enumerate(dbl)]

    # --- invalid UTF-8 ---
    rng = random.Random(0x5EED_0003)
    inv = [b"\xff", b"\x80", b"\xc3", b"a\xffb", b"'\xffs", b"\xe4\xb8\xad\xe4", b" \x80 \x80", b"\xed\xa0\x80"]
    while len(inv) < 2_000:
        inv.append(mutate_invalid(rng, rand_text(rng, assigned_only=True).encode("utf-8")))
    sets["invalid_utf8"] = [
        {"name": f"invalid-{i}", "text_b64": base64.b64encode(b).decode("ascii")} for i, b in enumerate(inv)
    ]
    return sets


def input_bytes(rec: dict, vectors_dir: Path) -> bytes:
    if "file" in rec:
        return (vectors_dir / rec["file"]).read_bytes()
    if "text" in rec:
        return rec["text"].encode("utf-8")
    return base64.b64decode(rec["text_b64"])


# --------------------------------------------------------------------------------------------
# Reference ids
# --------------------------------------------------------------------------------------------


class Reference:
    def __init__(self, enc: tiktoken.Encoding, specials: dict[str, int], name: str):
        self.enc = enc
        self.specials = specials
        self.rx = regex_module_pattern(name)
        self.issue_rx = regex.compile(ISSUE_PATTERNS[name])
        self.std_split = special_splitter(list(specials))
        self.checked_pieces = 0

    def pieces(self, text: str) -> list[str]:
        return [m.group(0) for m in self.rx.finditer(text)]

    def encode_pieces(self, text: str) -> list[int]:
        out: list[int] = []
        for p in self.pieces(text):
            out += self.enc._encode_single_piece(p.encode("utf-8", "surrogateescape"))
        return out

    def valid(self, text: str) -> tuple[list[int], list[int]]:
        """(ids with all specials, ordinary ids) straight from tiktoken, cross-checked."""
        all_ids = self.enc.encode(text, allowed_special="all")
        ordinary = self.enc.encode_ordinary(text)
        # Our special splitting (used for the sets tiktoken cannot do) agrees with tiktoken's.
        assert self.split_encode(text, self.std_split, self.specials) == all_ids, repr(text[:200])
        # The `regex`-module pieces (used for the invalid-UTF-8 set) agree with tiktoken's split.
        assert self.encode_pieces(text) == ordinary, repr(text[:200])
        # The issue's spelling of the pattern splits the same way as tiktoken's.
        if self.issue_rx.pattern != self.rx.pattern:
            assert [m.span() for m in self.issue_rx.finditer(text)] == [
                m.span() for m in self.rx.finditer(text)
            ], repr(text[:200])
        return all_ids, ordinary

    def split_encode(self, text: str, splitter, specials: dict[str, int]) -> list[int]:
        out: list[int] = []
        for kind, part in split_specials(text, splitter):
            out += [specials[part]] if kind == "special" else self.enc.encode_ordinary(part)
        return out

    def invalid(self, data: bytes) -> tuple[list[int], list[int]]:
        """Ids for bytes under our rule: each byte outside a well-formed UTF-8 sequence is one
        character of class Other. Pieces from the `regex` module on the surrogate-escaped text,
        ids per piece from tiktoken's `_encode_single_piece`; specials split longest-first."""

        def ordinary(seg: bytes) -> list[int]:
            s = surrogate_escape(seg)
            ids = self.encode_pieces(s)
            # Cross-check the piece boundaries against tiktoken itself: the same text with every
            # escaped byte replaced by a private-use character (class Other, absent from the
            # input) must split the same way and tiktoken must agree with our piecewise ids.
            sub = next(chr(c) for c in range(0xE000, 0xF900) if chr(c) not in s)
            pua = "".join(sub if 0xDC80 <= ord(c) <= 0xDCFF else c for c in s)
            assert [len(p) for p in self.pieces(pua)] == [len(p) for p in self.pieces(s)]
            assert self.encode_pieces(pua) == self.enc.encode_ordinary(pua), repr(seg)
            return ids

        bsplit = re.compile(self.std_split.pattern.encode("utf-8"))
        all_ids: list[int] = []
        for kind, part in split_specials(data, bsplit):
            all_ids += [self.specials[part.decode()]] if kind == "special" else ordinary(part)
        return all_ids, ordinary(data)


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(path: Path, header: dict | None, records: list[dict]) -> None:
    lines = ([dumps(header)] if header is not None else []) + [dumps(r) for r in records]
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if path.suffix == ".gz":
        # Deterministic gzip: no file name, mtime 0.
        with path.open("wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
            f.write(data)
    else:
        path.write_bytes(data)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    repo = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=repo.parent / "shared" / "data")
    ap.add_argument("--out", type=Path, default=repo / "tests" / "fixtures")
    args = ap.parse_args()
    shared: Path = args.shared
    vectors = args.out / "vectors"
    models = args.out / "models"

    # Fresh output: everything under these folders is generated.
    for d in [vectors / "texts", vectors / "inputs"] + [vectors / e for e in ENCODINGS]:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    models.mkdir(parents=True, exist_ok=True)

    # Model inputs the Rust tests import: gpt2 as a plain rank file plus the GPT-2 vocab/merges
    # (second import path); the two large rank files gzip-compressed (deterministic gzip).
    for src in [shared / "tiktoken" / "gpt2.tiktoken", shared / "cs336" / "gpt2_vocab.json",
                shared / "cs336" / "gpt2_merges.txt"] + [shared / "tiktoken" / f"{e}.json" for e in ENCODINGS]:
        shutil.copyfile(src, models / src.name)
    for e in ["cl100k_base", "o200k_base"]:
        data = (shared / "tiktoken" / f"{e}.tiktoken").read_bytes()
        with (models / f"{e}.tiktoken.gz").open("wb") as raw, gzip.GzipFile(
            filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9
        ) as f:
            f.write(data)

    # Patterns: the issues' text vs tiktoken's own.
    pattern_notes = {}
    for name in ENCODINGS:
        ours, theirs = ISSUE_PATTERNS[name], tiktoken_ext_pattern(name)
        pattern_notes[name] = {"issue": ours, "tiktoken_ext": theirs, "identical": ours == theirs}
        if ours != theirs:
            print(f"note: {name}: issue pattern differs textually from tiktoken_ext's "
                  f"(tiktoken's is used):\n  issue:    {ours}\n  tiktoken: {theirs}", file=sys.stderr)

    sets = build_inputs(shared, vectors / "texts")
    for set_name, recs in sets.items():
        write_jsonl(vectors / "inputs" / f"{set_name}.jsonl", None, recs)

    manifest = {
        "generator": "tests/scripts/gen_vectors.py",
        "tiktoken": tiktoken.__version__,
        "regex": regex.__version__,
        "python": sys.version.split()[0],
        "patterns": pattern_notes,
        "rank_files": {e: sha256(shared / "tiktoken" / f"{e}.tiktoken") for e in ENCODINGS},
        "sets": {},
        "files": {},
    }

    for name in ENCODINGS:
        enc, specials = load_encoding(shared, name)
        if name == "gpt2":
            got = enc.encode("Hello, 🌍! 你好!")
            assert got == [15496, 11, 12520, 234, 235, 0, 220, 19526, 254, 25001, 121, 0], got
        ref = Reference(enc, specials, name)
        double_specials = dict(specials)
        double_specials[DOUBLE] = enc.n_vocab  # first free id after the ordinary and special ids
        double_split = special_splitter(list(double_specials))

        for set_name, recs in sets.items():
            header = {
                "encoding": name,
                "set": set_name,
                "inputs": f"inputs/{set_name}.jsonl",
                "count": len(recs),
                "specials": double_specials if set_name == "double_special" else specials,
                "tiktoken": tiktoken.__version__,
            }
            out = []
            n_tokens = 0
            for rec in recs:
                data = input_bytes(rec, vectors)
                if set_name == "invalid_utf8":
                    all_ids, ordinary = ref.invalid(data)
                elif set_name == "double_special":
                    text = data.decode("utf-8")
                    _, ordinary = ref.valid(text)
                    all_ids = ref.split_encode(text, double_split, double_specials)
                else:
                    all_ids, ordinary = ref.valid(data.decode("utf-8"))
                row = {"name": rec["name"], "all": all_ids}
                if ordinary != all_ids:
                    row["ordinary"] = ordinary
                out.append(row)
                n_tokens += len(all_ids)
            path = vectors / name / f"{set_name}.jsonl.gz"
            write_jsonl(path, header, out)
            manifest["sets"].setdefault(set_name, {})[name] = {"records": len(recs), "ids_all": n_tokens}
            print(f"{name:12} {set_name:15} {len(recs):6} records {n_tokens:8} ids "
                  f"{path.stat().st_size:9} bytes", file=sys.stderr)

    for p in sorted(list(vectors.rglob("*")) + list(models.rglob("*"))):
        if p.is_file() and p.name not in ("MANIFEST.json", "PROVENANCE.md", ".gitattributes"):
            manifest["files"][str(p.relative_to(args.out))] = {"bytes": p.stat().st_size, "sha256": sha256(p)}
    (vectors / "MANIFEST.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
