/* picobpe's C firmware example: conformance of the C API with the reference libraries on a
 * Cortex-M3.
 *
 * Bare metal on QEMU's mps2-an385, built by `cargo xtask c-firmware-test` with
 * arm-none-eabi-gcc against the C API's static library (libpicobpe_capi.a, a model's tables
 * baked into it: gpt2, or minilm's WordPiece) and nothing else: no C library, no heap. start.c
 * boots and exits, vectors.S embeds the reference vectors (PBVEC1: tiktoken's gpt2 ids;
 * PBVEC2: tokenizers' WordPiece ids with the text its decode gives; see
 * xtask/src/firmware/vectors.rs). PICOBPE_FAMILY and PICOBPE_VOCAB (compiler definitions) are
 * the family and vocabulary size the library must report.
 *
 * For every record, through the C API only (picobpe.h), with specials recognized ("all" ids)
 * and as text ("ordinary" ids) each:
 *   1. one-shot encode equals the reference ids;
 *   2. encode through a 7-id buffer, draining and resuming from `consumed` (growing the buffer
 *      to `needed` on PICOBPE_STATUS_PIECE_TOO_LONG), equals them too;
 *   3. count equals the number of ids;
 *   4. decode of the ids gives the reference's text (gpt2: the input), one-shot and through a
 *      5-byte buffer continued with picobpe_decode_from;
 *   5. the streaming encoder, fed 61-byte chunks and taken through 7 ids, gives the ids too
 *      (or, only for a text longer than its window, refuses with INPUT_TOO_SMALL);
 *   6. the streaming decoder, fed one id at a time and taken through 4 bytes, gives it too;
 *   7. encode with a piece cache (64 KiB, shared by every record, so it is warm) gives the ids.
 * Then null pointers and an unknown id must be refused. Prints one line per failure (the first
 * 20), a summary "N records, M checks, F failures" and the SysTick figures of the one-shot
 * encodes (instructions per byte under QEMU's -icount); exits 0 only when every check passes. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "board.h"
#include "picobpe.h"

#ifndef PICOBPE_FAMILY
#define PICOBPE_FAMILY PICOBPE_FAMILY_BYTE_LEVEL_BPE
#endif
#ifndef PICOBPE_VOCAB
#define PICOBPE_VOCAB 50257u
#endif
/* A PBVEC2 count meaning "the same" (ordinary ids: the "all" ids; decoded text: the input),
 * and a decoded-text length meaning "not given by the reference". */
#define SAME 0xFFFFFFFFu
#define NOT_GIVEN 0xFFFFFFFEu

/* The embedded vectors (vectors.S). */
extern const uint8_t pbvec_start[], pbvec_end[];

/* Largest text a record may have (the vectors keep fixtures of at most 4 KiB). */
#define MAX_TEXT 8192u
/* A one-shot encode's buffer: 3 ids per byte covers the ids and a long piece's work area
 * (about 2.1 ids per byte). */
#define MAX_IDS (3u * MAX_TEXT + 64u)
/* Largest buffer the resumed decode grows to (for a token longer than 5 bytes). */
#define MAX_DECODE_CHUNK 256u
#define MAX_SHOWN 20

static uint32_t ref_all[MAX_TEXT], ref_ord[MAX_TEXT]; /* reference ids, aligned */
static uint32_t ids[MAX_IDS];                         /* one-shot output, count scratch */
static uint32_t resumed[MAX_IDS];                     /* ids gathered from resumed calls */
static uint32_t work[MAX_IDS];                        /* the resumed encode's buffer */
static uint8_t text_out[MAX_TEXT + 64u];
static uint8_t chunk[MAX_DECODE_CHUNK];

static uint32_t checks, failures, grown, window_refusals;

/* Caller-provided state of the streaming encoder and decoder, and the piece cache (static:
 * zeroed at reset, so the cache starts empty). */
static PicobpeStreamEncoder stream_enc;
static PicobpeStreamDecoder stream_dec;
static uint8_t cache[64u * 1024u];

/* ---- output ---- */

static char line[200];
static size_t line_len;

static void add(const char *s) {
    while (*s && line_len + 1 < sizeof line) {
        line[line_len++] = *s++;
    }
}

/* Appends `n` bytes, printable ASCII as is and anything else as '?'. */
static void add_bytes(const uint8_t *p, size_t n) {
    for (size_t i = 0; i < n && line_len + 1 < sizeof line; i++) {
        line[line_len++] = (p[i] >= 0x20 && p[i] < 0x7f) ? (char)p[i] : '?';
    }
}

static void add_u(uint32_t v) {
    char digits[10];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    while (n && line_len + 1 < sizeof line) {
        line[line_len++] = digits[--n];
    }
}

static void flush(void) {
    line[line_len++] = '\n';
    line[line_len] = '\0';
    board_puts(line);
    line_len = 0;
}

/* ---- PBVEC1 ---- */

struct reader {
    const uint8_t *p, *end;
    bool ok;
};

/* The next `n` bytes, or NULL (and `ok` false) past the end. */
static const uint8_t *take(struct reader *r, size_t n) {
    if (!r->ok || (size_t)(r->end - r->p) < n) {
        r->ok = false;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    return p;
}

static uint32_t le(const uint8_t *p, size_t n) {
    uint32_t v = 0;
    for (size_t i = n; i > 0; i--) {
        v = v << 8 | p[i - 1];
    }
    return v;
}

static uint32_t take_u16(struct reader *r) {
    const uint8_t *p = take(r, 2);
    return p ? le(p, 2) : 0;
}

static uint32_t take_u32(struct reader *r) {
    const uint8_t *p = take(r, 4);
    return p ? le(p, 4) : 0;
}

/* Reads a u32 count and that many little-endian ids into `out` (room for MAX_TEXT). */
static uint32_t take_ids(struct reader *r, uint32_t *out) {
    uint32_t n = take_u32(r);
    if (n == SAME && out == ref_ord) {
        return SAME; /* PBVEC2: the "all" ids again; the caller uses ref_all */
    }
    const uint8_t *p = n <= MAX_TEXT ? take(r, 4u * (size_t)n) : NULL;
    if (!p) {
        r->ok = false;
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) {
        out[i] = le(p + 4u * i, 4);
    }
    return n;
}

struct record {
    const uint8_t *name, *text;
    uint32_t name_len, len, n_all, n_ord;
    /* The text the "all" ids decode to, and the "ordinary" ids (NULL: not given). */
    const uint8_t *decoded_all, *decoded_ord;
    uint32_t decoded_len;
};

/* Reads a record's decoded text (PBVEC2) into `rec`; PBVEC1 records decode to their input. */
static void take_decoded(struct reader *r, bool v2, struct record *rec, bool ord_same) {
    rec->decoded_all = rec->text;
    rec->decoded_len = rec->len;
    if (v2) {
        uint32_t k = take_u32(r);
        if (k == NOT_GIVEN) {
            rec->decoded_all = NULL;
        } else if (k != SAME) {
            rec->decoded_all = take(r, k);
            rec->decoded_len = k;
        }
    }
    /* The ordinary ids decode to the same text only where they are the same ids (PBVEC1:
     * tiktoken's ids of the input always decode to it). */
    rec->decoded_ord = v2 && !ord_same ? NULL : rec->decoded_all;
}

/* ---- checks ---- */

static const struct record *current;

static void check(bool ok, const char *what) {
    checks++;
    if (ok) {
        return;
    }
    failures++;
    if (failures <= MAX_SHOWN) {
        add("FAIL ");
        if (current) {
            add_bytes(current->name, current->name_len);
            add(": ");
        }
        add(what);
        flush();
    }
}

static bool same_ids(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
    if (na != nb) {
        return false;
    }
    for (size_t i = 0; i < na; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

static bool same_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
    if (na != nb) {
        return false;
    }
    for (size_t i = 0; i < na; i++) {
        if (a[i] != b[i]) {
            return false;
        }
    }
    return true;
}

/* Encodes through a buffer of 7 ids, resuming after each PICOBPE_STATUS_OUTPUT_FULL and growing
 * the buffer to `needed` on PICOBPE_STATUS_PIECE_TOO_LONG; the ids go to `resumed`. Returns
 * their number, or -1 on any other status. */
static long encode_resumed(const uint8_t *text, size_t len, bool special) {
    size_t cap = 7, from = 0, total = 0;
    for (;;) {
        PicobpeProgress p;
        PicobpeStatus s = picobpe_encode(text + from, len - from, special, work, cap, &p);
        if (s == PICOBPE_STATUS_PIECE_TOO_LONG) {
            if (p.needed <= cap || p.needed > MAX_IDS) {
                return -1;
            }
            cap = p.needed; /* the piece at `from + p.consumed` needs more room */
            from += p.consumed;
            grown++;
            continue;
        }
        if ((s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) ||
            p.written > MAX_IDS - total) {
            return -1;
        }
        for (size_t i = 0; i < p.written; i++) {
            resumed[total + i] = work[i];
        }
        total += p.written;
        if (s == PICOBPE_STATUS_OK) {
            return (long)total;
        }
        if (p.consumed == 0 && p.written == 0) {
            return -1; /* no progress */
        }
        from += p.consumed;
    }
}

/* Decodes through a buffer of 5 bytes (grown to `needed` when one token is longer), resuming
 * after each PICOBPE_STATUS_OUTPUT_FULL; the bytes go to `text_out`. Returns their number or
 * -1. */
static long decode_resumed(const uint32_t *in, size_t n) {
    size_t cap = 5, from = 0, total = 0;
    for (;;) {
        PicobpeProgress p;
        /* Continued with picobpe_decode_from: what came before decides a leading space
         * (SentencePiece, WordPiece). */
        PicobpeStatus s = picobpe_decode_from(in, n, from, chunk, cap, &p);
        if (s == PICOBPE_STATUS_PIECE_TOO_LONG) {
            if (p.needed <= cap || p.needed > sizeof chunk || p.written != 0) {
                return -1;
            }
            cap = p.needed; /* one token longer than the buffer */
            from = p.consumed;
            continue;
        }
        if ((s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) ||
            p.written > sizeof text_out - total) {
            return -1;
        }
        for (size_t i = 0; i < p.written; i++) {
            text_out[total + i] = chunk[i];
        }
        total += p.written;
        if (s == PICOBPE_STATUS_OK) {
            return (long)total;
        }
        if (p.consumed <= from) {
            return -1; /* OUTPUT_FULL must have made progress */
        }
        from = p.consumed;
    }
}

/* Takes the streaming encoder's final ids through a 7-id buffer into `resumed[*total..]`.
 * Returns the last status (OK when everything final was taken). */
static PicobpeStatus stream_take(size_t *total) {
    PicobpeProgress p;
    uint32_t out[7];
    for (;;) {
        PicobpeStatus s = picobpe_stream_encoder_take(&stream_enc, out, 7, &p);
        if (s != PICOBPE_STATUS_OK || p.written > MAX_IDS - *total) {
            return s == PICOBPE_STATUS_OK ? PICOBPE_STATUS_OUTPUT_FULL : s;
        }
        for (size_t i = 0; i < p.written; i++) {
            resumed[*total + i] = out[i];
        }
        *total += p.written;
        if (p.written < 7) {
            return PICOBPE_STATUS_OK;
        }
    }
}

/* Streams `text` through the encoder in 61-byte chunks; the ids go to `resumed`. Returns
 * their number, -2 for INPUT_TOO_SMALL (a run longer than the window), -1 otherwise. */
static long stream_encode(const uint8_t *text, size_t len, bool special) {
    size_t from = 0, total = 0;
    if (picobpe_stream_encoder_init(&stream_enc, special) != PICOBPE_STATUS_OK) {
        return -1;
    }
    while (from < len) {
        size_t n = len - from < 61 ? len - from : 61;
        PicobpeProgress p;
        PicobpeStatus s = picobpe_stream_encoder_push(&stream_enc, text + from, n, &p);
        from += p.consumed;
        if (s == PICOBPE_STATUS_OUTPUT_FULL || s == PICOBPE_STATUS_OK) {
            s = stream_take(&total);
        }
        if (s == PICOBPE_STATUS_INPUT_TOO_SMALL) {
            return -2;
        }
        if (s != PICOBPE_STATUS_OK) {
            return -1;
        }
    }
    if (picobpe_stream_encoder_finish(&stream_enc) != PICOBPE_STATUS_OK) {
        return -1;
    }
    PicobpeStatus s = stream_take(&total);
    if (s == PICOBPE_STATUS_INPUT_TOO_SMALL) {
        return -2;
    }
    return s == PICOBPE_STATUS_OK && picobpe_stream_encoder_is_done(&stream_enc) ? (long)total
                                                                                 : -1;
}

/* Takes the streaming decoder's bytes through a 4-byte buffer into `text_out[*total..]`. */
static bool stream_drain(size_t *total) {
    PicobpeProgress p;
    uint8_t out[4];
    do {
        if (picobpe_stream_decoder_take(&stream_dec, out, 4, &p) != PICOBPE_STATUS_OK ||
            p.written > sizeof text_out - *total) {
            return false;
        }
        for (size_t i = 0; i < p.written; i++) {
            text_out[*total + i] = out[i];
        }
        *total += p.written;
    } while (p.written > 0);
    return true;
}

/* Streams `in[0..n]` through the decoder one id at a time; the bytes go to `text_out`.
 * Returns their number or -1. */
static long stream_decode(const uint32_t *in, size_t n) {
    size_t total = 0;
    if (picobpe_stream_decoder_init(&stream_dec) != PICOBPE_STATUS_OK) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        PicobpeStatus s = picobpe_stream_decoder_push(&stream_dec, in[i]);
        if (s == PICOBPE_STATUS_OUTPUT_FULL) {
            if (!stream_drain(&total)) {
                return -1;
            }
            s = picobpe_stream_decoder_push(&stream_dec, in[i]);
        }
        if (s != PICOBPE_STATUS_OK || !stream_drain(&total)) {
            return -1;
        }
    }
    if (picobpe_stream_decoder_finish(&stream_dec) != PICOBPE_STATUS_OK ||
        !stream_drain(&total)) {
        return -1;
    }
    return (long)total;
}

/* Every check of one record, one way (specials recognized or as text). */
static void check_way(const struct record *r, bool special, const uint32_t *ref, size_t n) {
    PicobpeProgress p;
    const uint8_t *decoded = special ? r->decoded_all : r->decoded_ord;
    size_t cap = 3u * r->len + 64u;

    PicobpeStatus s = picobpe_encode(r->text, r->len, special, ids, cap, &p);
    check(s == PICOBPE_STATUS_OK && same_ids(ids, p.written, ref, n),
          special ? "encode (specials recognized) differs from the reference"
                  : "encode (specials as text) differs from the reference");

    long m = encode_resumed(r->text, r->len, special);
    check(m >= 0 && same_ids(resumed, (size_t)m, ref, n),
          special ? "encode resumed through 7 ids differs (specials recognized)"
                  : "encode resumed through 7 ids differs (specials as text)");

    s = picobpe_count(r->text, r->len, special, ids, cap, &p);
    check(s == PICOBPE_STATUS_OK && p.written == n,
          special ? "count differs (specials recognized)" : "count differs (specials as text)");

    if (decoded) {
        s = picobpe_decode(ref, n, text_out, sizeof text_out, &p);
        check(s == PICOBPE_STATUS_OK && same_bytes(text_out, p.written, decoded, r->decoded_len),
              special ? "decode of the \"all\" ids differs from the reference"
                      : "decode of the \"ordinary\" ids differs from the reference");

        m = decode_resumed(ref, n);
        check(m >= 0 && same_bytes(text_out, (size_t)m, decoded, r->decoded_len),
              special ? "decode of the \"all\" ids through 5 bytes differs from the reference"
                      : "decode of the \"ordinary\" ids through 5 bytes differs from the "
                        "reference");
    }

    m = stream_encode(r->text, r->len, special);
    if (m == -2 && r->len > PICOBPE_STREAM_INPUT_CAPACITY) {
        window_refusals++; /* a run longer than the window: refused, as documented */
    } else {
        check(m >= 0 && same_ids(resumed, (size_t)m, ref, n),
              special ? "stream encode differs (specials recognized)"
                      : "stream encode differs (specials as text)");
    }

    if (decoded) {
        m = stream_decode(ref, n);
        check(m >= 0 && same_bytes(text_out, (size_t)m, decoded, r->decoded_len),
              "stream decode differs from the reference");
    }

    s = picobpe_encode_cached(r->text, r->len, 0, special, cache, sizeof cache, ids, cap, &p);
    check(s == PICOBPE_STATUS_OK && same_ids(ids, p.written, ref, n),
          special ? "cached encode differs (specials recognized)"
                  : "cached encode differs (specials as text)");
}

/* The arguments the API must refuse. */
static void check_refusals(void) {
    PicobpeProgress p;
    static const uint8_t abc[] = {'a', 'b', 'c'};
    check(picobpe_encode(NULL, 3, true, ids, MAX_IDS, &p) == PICOBPE_STATUS_INVALID_ARGUMENT,
          "a null text is not refused");
    check(picobpe_encode(abc, 3, true, ids, MAX_IDS, NULL) == PICOBPE_STATUS_INVALID_ARGUMENT,
          "a null progress is not refused");
    check(picobpe_model_family() == PICOBPE_FAMILY && picobpe_vocab_size() == PICOBPE_VOCAB,
          "the model is not of the expected family and size");
    uint32_t bad[2] = {0, (uint32_t)picobpe_vocab_size()};
    check(picobpe_decode(bad, 2, text_out, sizeof text_out, &p) == PICOBPE_STATUS_UNKNOWN_ID &&
              p.consumed == 1,
          "an unknown id is not reported");
}

int main(void) {
    struct reader r = {pbvec_start, pbvec_end, true};
    static const uint8_t magic[6] = {'P', 'B', 'V', 'E', 'C', 0};
    const uint8_t *m = take(&r, 8);
    if (!m || !same_bytes(m, 5, magic, 5) || (m[5] != '1' && m[5] != '2') || m[6] || m[7]) {
        board_puts("FAIL: the embedded vectors are not PBVEC1 or PBVEC2\n");
        return 2;
    }
    bool v2 = m[5] == '2';
    uint32_t count = take_u32(&r);
    if (v2) {
        /* The buffer sizes the records were chosen for: this program's own are larger. */
        (void)take_u32(&r);
        (void)take_u32(&r);
    }
    /* Where each record starts, for the timing pass. */
    const uint8_t *first = r.p;

    uint32_t records = 0;
    for (; records < count; records++) {
        struct record rec;
        rec.name_len = take_u16(&r);
        rec.name = take(&r, rec.name_len);
        rec.len = take_u32(&r);
        rec.text = rec.len <= MAX_TEXT ? take(&r, rec.len) : NULL;
        rec.n_all = rec.text ? take_ids(&r, ref_all) : 0;
        rec.n_ord = rec.text ? take_ids(&r, ref_ord) : 0;
        bool ord_same = rec.n_ord == SAME;
        if (ord_same) {
            rec.n_ord = rec.n_all;
        }
        take_decoded(&r, v2, &rec, ord_same);
        if (!r.ok || !rec.text) {
            current = NULL;
            check(false, "a record is truncated or larger than the buffers");
            break;
        }
        current = &rec;
        check_way(&rec, true, ref_all, rec.n_all);
        check_way(&rec, false, ord_same ? ref_all : ref_ord, rec.n_ord);
    }
    current = NULL;
    check(records == count && r.p == pbvec_end, "the vectors do not end after the last record");
    check_refusals();

    if (failures > MAX_SHOWN) {
        add("(");
        add_u(failures - MAX_SHOWN);
        add(" more failures not shown)");
        flush();
    }
    add_u(records);
    add(" records, ");
    add_u(checks);
    add(" checks, ");
    add_u(failures);
    add(" failures (vocabulary ");
    add_u((uint32_t)picobpe_vocab_size());
    add(" ids; the 7-id buffer grew ");
    add_u(grown);
    add(" times; ");
    add_u(window_refusals);
    add(" stream encodes refused a run longer than the window)");
    flush();

    /* Timing: SysTick across each one-shot encode (specials recognized) of every record. */
    board_systick_start();
    uint32_t calibration = board_calibrate();
    uint32_t ticks = 0, bytes = 0;
    r.p = first;
    r.ok = true;
    for (uint32_t i = 0; i < records; i++) {
        PicobpeProgress p;
        (void)take(&r, take_u16(&r));
        uint32_t len = take_u32(&r);
        const uint8_t *text = take(&r, len);
        (void)take_ids(&r, ref_all);
        struct record skipped;
        skipped.text = text;
        skipped.len = len;
        take_decoded(&r, v2, &skipped, take_ids(&r, ref_ord) == SAME);
        uint32_t t0 = board_systick();
        (void)picobpe_encode(text, len, true, ids, 3u * len + 64u, &p);
        uint32_t t1 = board_systick();
        ticks += (t0 - t1) & 0x00FFFFFFu;
        bytes += len;
    }
    add("speed: ");
    add_u(ticks);
    add(" SysTick ticks to encode ");
    add_u(bytes);
    add(" bytes; ");
    add_u(calibration);
    add(" ticks per ");
    add_u(2u * BOARD_CALIBRATION_ITERS);
    add(" instructions");
    flush();

    return failures == 0 && records > 0 ? 0 : 1;
}
