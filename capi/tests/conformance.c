/* Conformance of picobpe's C API with tiktoken's reference ids (gpt2).
 *
 * Usage: conformance VECTORS
 *
 * VECTORS is written by tests/c_api.rs from the committed reference vectors: per case, a
 * little-endian u32 byte length and the input bytes, then a u32 count and the ids with special
 * tokens recognized, then a u32 count and the ids with special tokens as text, then a u32 bound
 * on the longest piece and a u32 that is 1 when the bound is exact (0 when the input is not
 * UTF-8 and the bound is its length). For each case this checks, through the C API only:
 *   1. one-shot encode, both ways, equals the reference;
 *   2. encode through a 7-id buffer, draining and resuming from `consumed` (and growing the
 *      buffer to `needed` when one piece asks for more), equals it too;
 *   3. count equals the number of ids;
 *   4. decode of the ids gives the input back, one-shot and through a 5-byte buffer (grown to
 *      `needed` when one token is longer);
 *   5. the stream encoder, fed 3-byte chunks, gives the reference ids: taking ids (through a
 *      5-id buffer) after every push, and taking only when a push accepts less, with specials
 *      recognized and as text. It must when the longest piece plus 64 bytes fits its input
 *      capacity, and must refuse with PICOBPE_STATUS_INPUT_TOO_SMALL (specials as text) when
 *      the longest piece is known not to fit at all; in between either is right;
 *   6. the stream decoder, fed one id at a time and taken through a 4-byte buffer (after every
 *      fifth id, or, every other case, only when a push finds no room), gives the input back;
 *   7. encode with the piece cache (one cache for all cases, so it is warm, every other case
 *      through a misaligned pointer) equals the reference, both ways, and again.
 * Then the arguments the API refuses. Prints one line per failure and a summary; exits 0 only
 * when every check passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "picobpe.h"

static int failures = 0;
/* How often a stream push found the stream full (so the take-then-push-again path ran). */
static size_t encoder_full = 0, decoder_full = 0;

static void fail(size_t index, const char *what) {
    if (failures < 20) {
        fprintf(stderr, "case %zu: %s\n", index, what);
    }
    failures++;
}

static int read_u32(FILE *f, uint32_t *v) {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) {
        return 0;
    }
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 1;
}

static uint32_t *read_ids(FILE *f, uint32_t *n) {
    if (!read_u32(f, n)) {
        return NULL;
    }
    uint32_t *ids = malloc(sizeof(uint32_t) * (*n + 1));
    for (uint32_t i = 0; i < *n; i++) {
        if (!read_u32(f, &ids[i])) {
            free(ids);
            return NULL;
        }
    }
    return ids;
}

/* Encode through a buffer of `cap` ids, resuming after each PICOBPE_OUTPUT_FULL; the ids go to
 * `all` (room for `max` ids). Returns the number of ids, or -1 on any other status. */
static long encode_resumed(const uint8_t *text, size_t len, bool special, size_t cap,
                           uint32_t *all, size_t max) {
    uint32_t *buf = malloc(sizeof(uint32_t) * cap);
    size_t from = 0, total = 0;
    for (;;) {
        PicobpeProgress p;
        PicobpeStatus s = picobpe_encode(text + from, len - from, special, buf, cap, &p);
        if (s == PICOBPE_STATUS_PIECE_TOO_LONG && p.needed > cap) {
            /* One piece needs a larger work area: grow to what it asks for and go on. */
            cap = p.needed;
            buf = realloc(buf, sizeof(uint32_t) * cap);
            from += p.consumed;
            continue;
        }
        if ((s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) || total + p.written > max) {
            free(buf);
            return -1;
        }
        memcpy(all + total, buf, sizeof(uint32_t) * p.written);
        total += p.written;
        if (s == PICOBPE_STATUS_OK) {
            free(buf);
            return (long)total;
        }
        if (p.consumed == 0 && p.written == 0) {
            free(buf);
            return -1; /* no progress */
        }
        from += p.consumed;
    }
}

/* Decode through a buffer of `cap` bytes, resuming; returns the byte count or -1. */
static long decode_resumed(const uint32_t *ids, size_t n, size_t cap, uint8_t *all, size_t max) {
    uint8_t *buf = malloc(cap);
    size_t from = 0, total = 0;
    for (;;) {
        PicobpeProgress p;
        PicobpeStatus s = picobpe_decode(ids + from, n - from, buf, cap, &p);
        if (s == PICOBPE_STATUS_PIECE_TOO_LONG && p.needed > cap && p.written == 0) {
            buf = realloc(buf, cap = p.needed); /* a token longer than the buffer */
            from += p.consumed;
            continue;
        }
        if ((s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) || total + p.written > max ||
            (s == PICOBPE_STATUS_OUTPUT_FULL && p.written == 0)) {
            free(buf);
            return -1;
        }
        memcpy(all + total, buf, p.written);
        total += p.written;
        if (s == PICOBPE_STATUS_OK) {
            free(buf);
            return (long)total;
        }
        from += p.consumed;
    }
}

static int same_ids(const uint32_t *a, long na, const uint32_t *b, uint32_t nb) {
    return na == (long)nb && memcmp(a, b, sizeof(uint32_t) * nb) == 0;
}

/* Take every final id from `enc` through a 5-id buffer into `all` (at `*total`, room for `max`).
 * Returns the status of the take that ended it. */
static PicobpeStatus stream_take(PicobpeStreamEncoder *enc, uint32_t *all, size_t *total,
                                 size_t max) {
    uint32_t buf[5];
    for (;;) {
        PicobpeProgress p;
        PicobpeStatus s = picobpe_stream_encoder_take(enc, buf, 5, &p);
        if (s != PICOBPE_STATUS_OK) {
            return s;
        }
        if (*total + p.written > max) {
            return PICOBPE_STATUS_OUTPUT_FULL;
        }
        memcpy(all + *total, buf, sizeof(uint32_t) * p.written);
        *total += p.written;
        if (p.written < 5) {
            return PICOBPE_STATUS_OK;
        }
    }
}

/* Stream-encode `text` in 3-byte chunks, taking ids after every push (`eager`) or only when a
 * push accepts less; the ids go to `all` (room for `max`). Returns the number of ids, or -1
 * with the failing status in `*status`. */
static long stream_encode(const uint8_t *text, size_t len, bool special, bool eager,
                          uint32_t *all, size_t max, PicobpeStatus *status) {
    PicobpeStreamEncoder enc;
    size_t pos = 0, total = 0;
    *status = picobpe_stream_encoder_init(&enc, special);
    while (*status == PICOBPE_STATUS_OK && pos < len) {
        size_t n = len - pos < 3 ? len - pos : 3;
        PicobpeProgress p;
        PicobpeStatus s = picobpe_stream_encoder_push(&enc, text + pos, n, &p);
        if (s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) {
            *status = s;
            break;
        }
        pos += p.consumed;
        encoder_full += s == PICOBPE_STATUS_OUTPUT_FULL;
        if (eager || s == PICOBPE_STATUS_OUTPUT_FULL) {
            *status = stream_take(&enc, all, &total, max);
        }
    }
    if (*status == PICOBPE_STATUS_OK) {
        *status = picobpe_stream_encoder_finish(&enc);
    }
    if (*status == PICOBPE_STATUS_OK) {
        *status = stream_take(&enc, all, &total, max);
    }
    if (*status == PICOBPE_STATUS_OK && !picobpe_stream_encoder_is_done(&enc)) {
        *status = PICOBPE_STATUS_INVALID_ARGUMENT; /* not done after finish and a full take */
    }
    return *status == PICOBPE_STATUS_OK ? (long)total : -1;
}

/* Take the ready bytes of `dec` through a 4-byte buffer into `all` (at `*total`, room for
 * `max`). Returns 0, or -1 when they do not fit. */
static int stream_take_bytes(PicobpeStreamDecoder *dec, uint8_t *all, size_t *total, size_t max) {
    uint8_t buf[4];
    for (;;) {
        PicobpeProgress p;
        if (picobpe_stream_decoder_take(dec, buf, sizeof buf, &p) != PICOBPE_STATUS_OK ||
            *total + p.written > max) {
            return -1;
        }
        if (p.written == 0) {
            return 0;
        }
        memcpy(all + *total, buf, p.written);
        *total += p.written;
    }
}

/* Stream-decode `ids[0..n]` one id at a time into `all` (room for `max`), taking after every
 * fifth id when `eager` and otherwise only when a push finds no room; returns the byte count
 * or -1. */
static long stream_decode(const uint32_t *ids, size_t n, bool eager, uint8_t *all, size_t max) {
    PicobpeStreamDecoder dec;
    size_t total = 0;
    if (picobpe_stream_decoder_init(&dec) != PICOBPE_STATUS_OK) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        PicobpeStatus s = picobpe_stream_decoder_push(&dec, ids[i]);
        if (s == PICOBPE_STATUS_OUTPUT_FULL) {
            /* No room: take, then the same id fits. */
            decoder_full++;
            if (stream_take_bytes(&dec, all, &total, max) != 0) {
                return -1;
            }
            s = picobpe_stream_decoder_push(&dec, ids[i]);
        }
        if (s != PICOBPE_STATUS_OK) {
            return -1;
        }
        if (eager && i % 5 == 4 && stream_take_bytes(&dec, all, &total, max) != 0) {
            return -1;
        }
    }
    if (picobpe_stream_decoder_finish(&dec) != PICOBPE_STATUS_OK ||
        stream_take_bytes(&dec, all, &total, max) != 0) {
        return -1;
    }
    return (long)total;
}

/* The piece cache every case shares (zeroed: empty), 256 KiB and one line's slack. */
static uint8_t cache[256 * 1024 + PICOBPE_CACHE_LINE_SIZE];

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t cases = 0, streamed = 0, refused = 0;
    uint32_t len;
    while (read_u32(f, &len)) {
        uint8_t *text = malloc(len + 1);
        uint32_t n_all, n_ord, longest, exact;
        if (fread(text, 1, len, f) != len) {
            fprintf(stderr, "truncated vectors\n");
            return 2;
        }
        uint32_t *all = read_ids(f, &n_all);
        uint32_t *ord = read_ids(f, &n_ord);
        if (!all || !ord || !read_u32(f, &longest) || !read_u32(f, &exact)) {
            fprintf(stderr, "truncated vectors\n");
            return 2;
        }
        size_t cap = 3 * (size_t)len + 64; /* a piece's work area: about 2.1 ids per byte */
        uint32_t *out = malloc(sizeof(uint32_t) * cap);
        PicobpeProgress p;

        /* 1. One-shot, both ways. */
        if (picobpe_encode(text, len, true, out, cap, &p) != PICOBPE_STATUS_OK ||
            !same_ids(out, (long)p.written, all, n_all)) {
            fail(cases, "encode (specials recognized) differs from tiktoken");
        }
        if (picobpe_encode(text, len, false, out, cap, &p) != PICOBPE_STATUS_OK ||
            !same_ids(out, (long)p.written, ord, n_ord)) {
            fail(cases, "encode (specials as text) differs from tiktoken");
        }
        /* 2. Resumed through 7 ids. */
        long n = encode_resumed(text, len, true, 7, out, cap);
        if (!same_ids(out, n, all, n_all)) {
            fail(cases, "encode resumed through 7 ids differs");
        }
        /* 3. Count. */
        if (picobpe_count(text, len, true, out, cap, &p) != PICOBPE_STATUS_OK || p.written != n_all) {
            fail(cases, "count differs");
        }
        /* 4. Decode, one-shot and through 5 bytes. */
        uint8_t *back = malloc(len + 64);
        if (picobpe_decode(ord, n_ord, back, len + 64, &p) != PICOBPE_STATUS_OK || p.written != len ||
            memcmp(back, text, len) != 0) {
            fail(cases, "decode does not give the input back");
        }
        long m = decode_resumed(ord, n_ord, 5, back, len + 64);
        if (m != (long)len || memcmp(back, text, len) != 0) {
            fail(cases, "decode resumed through 5 bytes does not give the input back");
        }
        /* 5. The stream encoder, three ways. */
        for (int way = 0; way < 3; way++) {
            bool special = way < 2, eager = way == 0;
            PicobpeStatus status;
            long k = stream_encode(text, len, special, eager, out, cap, &status);
            if (k >= 0) {
                if (!same_ids(out, k, special ? all : ord, special ? n_all : n_ord)) {
                    fail(cases, eager ? "stream encode (taking after every push) differs"
                                      : "stream encode (taking when full) differs");
                }
                if (exact && longest > PICOBPE_STREAM_INPUT_CAPACITY && !special) {
                    fail(cases, "stream encode took a piece longer than its input capacity");
                }
                streamed++;
            } else if (status == PICOBPE_STATUS_INPUT_TOO_SMALL &&
                       longest + 64 > PICOBPE_STREAM_INPUT_CAPACITY) {
                refused++;
            } else {
                fail(cases, "stream encode failed");
            }
        }
        /* 6. The stream decoder. */
        memset(back, 0, len + 64);
        m = stream_decode(all, n_all, cases % 2 == 0, back, len + 64);
        if (m != (long)len || memcmp(back, text, len) != 0) {
            fail(cases, "stream decode does not give the input back");
        }
        /* 7. The piece cache: warm from the cases before, then this one's own pieces. */
        uint8_t *mem = cache + cases % 2;
        size_t mem_bytes = sizeof cache - cases % 2;
        for (int again = 0; again < 2; again++) {
            if (picobpe_encode_cached(text, len, 0, true, mem, mem_bytes, out, cap, &p) !=
                    PICOBPE_STATUS_OK ||
                !same_ids(out, (long)p.written, all, n_all)) {
                fail(cases, "cached encode (specials recognized) differs from tiktoken");
            }
        }
        if (picobpe_encode_cached(text, len, 0, false, mem, mem_bytes, out, cap, &p) !=
                PICOBPE_STATUS_OK ||
            !same_ids(out, (long)p.written, ord, n_ord)) {
            fail(cases, "cached encode (specials as text) differs from tiktoken");
        }
        free(back);
        free(out);
        free(all);
        free(ord);
        free(text);
        cases++;
    }
    fclose(f);

    /* Arguments the API refuses. */
    PicobpeProgress p;
    if (picobpe_encode(NULL, 3, true, NULL, 0, &p) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_encode((const uint8_t *)"abc", 3, true, NULL, 0, NULL) != PICOBPE_STATUS_INVALID_ARGUMENT) {
        fail(cases, "null pointers are not refused");
    }
    uint32_t bad = 4000000000u;
    uint8_t sink[8];
    if (picobpe_decode(&bad, 1, sink, sizeof sink, &p) != PICOBPE_STATUS_UNKNOWN_ID || p.consumed != 0) {
        fail(cases, "an unknown id is not reported");
    }
    /* gpt2's id 15496 is "Hello" and 11 is ",": a 5-byte token does not fit 4 bytes. */
    uint32_t hello[2] = {11, 15496};
    if (picobpe_decode(hello, 2, sink, 4, &p) != PICOBPE_STATUS_OUTPUT_FULL || p.consumed != 1 ||
        p.written != 1 ||
        picobpe_decode(hello + 1, 1, sink, 4, &p) != PICOBPE_STATUS_PIECE_TOO_LONG ||
        p.consumed != 0 || p.written != 0 || p.needed != 5 ||
        picobpe_decode(hello + 1, 1, sink, 5, &p) != PICOBPE_STATUS_OK || p.written != 5 ||
        memcmp(sink, "Hello", 5) != 0) {
        fail(cases, "a token longer than the decode buffer is not reported with its length");
    }
    /* tiktoken's gpt2: byte-level BPE, 50257 ids. */
    if (picobpe_vocab_size() != 50257 || picobpe_model_family() != PICOBPE_FAMILY_BYTE_LEVEL_BPE) {
        fail(cases, "the vocabulary size or family is not gpt2's");
    }
    /* The streams refuse what they must. */
    PicobpeStreamEncoder enc;
    PicobpeStreamDecoder dec;
    memset(&enc, 0, sizeof enc);
    memset(&dec, 0, sizeof dec);
    uint32_t ids[8];
    if (picobpe_stream_encoder_init(NULL, true) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_decoder_init(NULL) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_push(&enc, (const uint8_t *)"a", 1, &p) !=
            PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_take(NULL, ids, 8, &p) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_finish(&enc) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_is_done(&enc) || picobpe_stream_encoder_is_done(NULL) ||
        picobpe_stream_decoder_push(&dec, 1) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_decoder_finish(NULL) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_decoder_take(&dec, sink, sizeof sink, &p) !=
            PICOBPE_STATUS_INVALID_ARGUMENT) {
        fail(cases, "a null or zeroed stream is not refused");
    }
    if (picobpe_stream_encoder_init(&enc, false) != PICOBPE_STATUS_OK ||
        picobpe_stream_encoder_push(&enc, NULL, 1, &p) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_push(&enc, (const uint8_t *)"a", 1, NULL) !=
            PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_take(&enc, ids, 8, NULL) != PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_finish(&enc) != PICOBPE_STATUS_OK ||
        picobpe_stream_encoder_push(&enc, (const uint8_t *)"a", 1, &p) !=
            PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_encoder_take(&enc, ids, 8, &p) != PICOBPE_STATUS_OK || p.written != 0 ||
        !picobpe_stream_encoder_is_done(&enc)) {
        fail(cases, "push after finish is not refused, or an empty stream is not done");
    }
    /* One piece longer than the input capacity: 300 letters. */
    uint8_t letters[300];
    memset(letters, 'a', sizeof letters);
    PicobpeStatus s = picobpe_stream_encoder_init(&enc, false);
    size_t pos = 0;
    while (s == PICOBPE_STATUS_OK && pos < sizeof letters) {
        s = picobpe_stream_encoder_push(&enc, letters + pos, sizeof letters - pos, &p);
        pos += p.consumed;
        if (s == PICOBPE_STATUS_OUTPUT_FULL) {
            s = picobpe_stream_encoder_take(&enc, ids, 8, &p);
        }
    }
    if (s != PICOBPE_STATUS_INPUT_TOO_SMALL || pos != PICOBPE_STREAM_INPUT_CAPACITY) {
        fail(cases, "a piece longer than the stream's input is not refused");
    }
    if (picobpe_stream_decoder_init(&dec) != PICOBPE_STATUS_OK ||
        picobpe_stream_decoder_push(&dec, bad) != PICOBPE_STATUS_UNKNOWN_ID ||
        picobpe_stream_decoder_push(&dec, 0) != PICOBPE_STATUS_OK ||
        picobpe_stream_decoder_take(&dec, sink, sizeof sink, NULL) !=
            PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_stream_decoder_take(&dec, sink, sizeof sink, &p) != PICOBPE_STATUS_OK ||
        p.written != 1) {
        fail(cases, "the stream decoder does not refuse an unknown id");
    }
    if (picobpe_encode_cached((const uint8_t *)"abc", 3, 0, true, NULL, 64, ids, 8, &p) !=
            PICOBPE_STATUS_INVALID_ARGUMENT ||
        picobpe_encode_cached((const uint8_t *)"abc", 3, 0, true, NULL, 0, ids, 8, &p) !=
            PICOBPE_STATUS_OK ||
        picobpe_encode_cached((const uint8_t *)"abc", 3, 0, true, cache, 63, ids, 8, &p) !=
            PICOBPE_STATUS_OK) {
        fail(cases, "the cache arguments are not handled");
    }
    printf("%zu cases, %d failures (vocabulary %zu ids; stream encodes: %zu exact, %zu refused "
           "as too long for %d bytes, %zu pushes found it full; stream decoder: %zu pushes "
           "found it full)\n",
           cases, failures, picobpe_vocab_size(), streamed, refused,
           PICOBPE_STREAM_INPUT_CAPACITY, encoder_full, decoder_full);
    return failures == 0 && cases > 0 ? 0 : 1;
}
