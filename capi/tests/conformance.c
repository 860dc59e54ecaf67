/* Conformance of picobpe's C API with tiktoken's reference ids (gpt2).
 *
 * Usage: conformance VECTORS
 *
 * VECTORS is written by tests/c_api.rs from the committed reference vectors: per case, a
 * little-endian u32 byte length and the input bytes, then a u32 count and the ids with special
 * tokens recognized, then a u32 count and the ids with special tokens as text. For each case
 * this checks, through the C API only:
 *   1. one-shot encode, both ways, equals the reference;
 *   2. encode through a 7-id buffer, draining and resuming from `consumed` (and growing the
 *      buffer to `needed` when one piece asks for more), equals it too;
 *   3. count equals the number of ids;
 *   4. decode of the ids gives the input back, one-shot and through a 5-byte buffer.
 * Prints one line per failure and a summary; exits 0 only when every check passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "picobpe.h"

static int failures = 0;

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
        if ((s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) || total + p.written > max) {
            free(buf);
            return -1;
        }
        memcpy(all + total, buf, p.written);
        total += p.written;
        if (s == PICOBPE_STATUS_OK) {
            free(buf);
            return (long)total;
        }
        if (p.consumed == 0 && p.written == 0) {
            buf = realloc(buf, cap *= 2); /* a token longer than the buffer */
            continue;
        }
        from += p.consumed;
    }
}

static int same_ids(const uint32_t *a, long na, const uint32_t *b, uint32_t nb) {
    return na == (long)nb && memcmp(a, b, sizeof(uint32_t) * nb) == 0;
}

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
    size_t cases = 0;
    uint32_t len;
    while (read_u32(f, &len)) {
        uint8_t *text = malloc(len + 1);
        uint32_t n_all, n_ord;
        if (fread(text, 1, len, f) != len) {
            fprintf(stderr, "truncated vectors\n");
            return 2;
        }
        uint32_t *all = read_ids(f, &n_all);
        uint32_t *ord = read_ids(f, &n_ord);
        if (!all || !ord) {
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
    printf("%zu cases, %d failures (vocabulary %zu ids)\n", cases, failures,
           picobpe_vocab_size());
    return failures == 0 && cases > 0 ? 0 : 1;
}
