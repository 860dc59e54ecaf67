/* Conformance of picobpe's C API, built with a SentencePiece or WordPiece model, with
 * sentencepiece's or tokenizers' ids.
 *
 * Usage: sp_conformance VECTORS FAMILY
 *
 * VECTORS is a PBVEC2 file (`xtask/src/firmware/vectors.rs`, made by `cargo xtask
 * capi-models-test` from the committed sentencepiece vectors, never by picobpe): a header
 * (b"PBVEC2\0\0", u32 records, u32 encode buffer in ids, u32 decode buffer in bytes), then per
 * record a u16 name length and name, a u32 text length and text, a u32 count and the ids
 * (`EncodeAsIds`), a u32 count and the ids again (0xFFFFFFFF: the same), and a u32 length and
 * the text `DecodeIds` gives (0xFFFFFFFF: the input; 0xFFFFFFFE: not given). FAMILY is the
 * PicobpeFamily the library must report (1: BPE, 2: Unigram, 3: WordPiece). The second id
 * list is the ids with special-token text read as text (WordPiece's added tokens;
 * SentencePiece has no switch, so its files say "the same").
 *
 * For each record this checks, through the C API only:
 *   1. one-shot encode, special tokens recognized and as text, equals the reference;
 *   2. encode through a 7-id buffer, draining and continuing with picobpe_encode_from at
 *      `consumed` (and growing the buffer to `needed` when one word asks for more), equals it;
 *   3. count equals the number of ids, with the test's work area and with 7 ids grown to
 *      `needed`;
 *   4. encode with a cache (one for all records, so it is warm), one-shot and resumed through
 *      7 ids, equals the reference;
 *   5. decode gives the reference text, one-shot and through a 5-byte buffer continued with
 *      picobpe_decode_from (grown to `needed` when one piece is longer);
 *   6. the stream encoder, fed 3-byte chunks and taken through 5 ids, gives the reference ids;
 *      it may refuse only a text longer than its input capacity less 64 bytes
 *      (INPUT_TOO_SMALL) or one with a word whose work area is more than its id capacity
 *      (PIECE_TOO_LONG, saying so in `needed`), and the ids taken before a refusal must be
 *      the reference's first ids;
 *   7. the stream decoder, fed one id at a time and taken through 4 bytes, gives the text.
 * Prints one line per failure (the first 20) and a summary; exits 0 only when every check
 * passes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "picobpe.h"

#define SAME 0xFFFFFFFFu
#define NOT_GIVEN 0xFFFFFFFEu

static int failures = 0;
static size_t checks = 0;
/* The work area the last stream take that returned PIECE_TOO_LONG asked for. */
static size_t stream_needed = 0;

static void check(int ok, const char *name, const char *what) {
    checks++;
    if (!ok) {
        if (failures < 20) {
            fprintf(stderr, "%s: %s\n", name, what);
        }
        failures++;
    }
}

/* The file in memory, read front to back. */
static const uint8_t *at, *end;

static int take_bytes(const uint8_t **p, size_t n) {
    if ((size_t)(end - at) < n) {
        return 0;
    }
    *p = at;
    at += n;
    return 1;
}

static int take_u32(uint32_t *v) {
    const uint8_t *b;
    if (!take_bytes(&b, 4)) {
        return 0;
    }
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 1;
}

static int take_u16(uint16_t *v) {
    const uint8_t *b;
    if (!take_bytes(&b, 2)) {
        return 0;
    }
    *v = (uint16_t)(b[0] | b[1] << 8);
    return 1;
}

/* `n` little-endian ids at `at`, copied out (the file is not aligned for uint32_t). */
static uint32_t *take_ids(uint32_t n) {
    uint32_t *ids = malloc(sizeof(uint32_t) * ((size_t)n + 1));
    for (uint32_t i = 0; i < n; i++) {
        if (!take_u32(&ids[i])) {
            free(ids);
            return NULL;
        }
    }
    return ids;
}

static int same_ids(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
    return na == nb && memcmp(a, b, sizeof(uint32_t) * nb) == 0;
}

/* Encode `text` through a buffer of `cap` ids, continuing from `consumed` after OUTPUT_FULL and
 * growing to `needed` on PIECE_TOO_LONG; the ids go to `all` (room for `max`). With a cache,
 * through picobpe_encode_cached. Returns the number of ids, or -1. */
static long encode_resumed(const uint8_t *text, size_t len, size_t small, void *cache,
                           size_t cache_bytes, uint32_t *all, size_t max) {
    size_t cap = small;
    uint32_t *buf = malloc(sizeof(uint32_t) * cap);
    size_t from = 0, total = 0;
    for (;;) {
        PicobpeProgress p;
        PicobpeStatus s =
            cache ? picobpe_encode_cached(text, len, from, true, cache, cache_bytes, buf, cap, &p)
                  : picobpe_encode_from(text, len, from, true, buf, cap, &p);
        if (s == PICOBPE_STATUS_PIECE_TOO_LONG && p.needed > cap && p.written == 0 &&
            p.consumed == from) {
            buf = realloc(buf, sizeof(uint32_t) * (cap = p.needed));
            continue;
        }
        cap = small; /* the long word is done: back to the small buffer */
        if ((s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) || total + p.written > max ||
            (s == PICOBPE_STATUS_OUTPUT_FULL && p.consumed <= from && p.written == 0)) {
            free(buf);
            return -1;
        }
        memcpy(all + total, buf, sizeof(uint32_t) * p.written);
        total += p.written;
        if (s == PICOBPE_STATUS_OK) {
            free(buf);
            return (long)total;
        }
        from = p.consumed;
    }
}

/* Decode `ids[0..n]` through a buffer of `cap` bytes, continuing with picobpe_decode_from;
 * the text goes to `all` (room for `max`). Returns its length, or -1. */
static long decode_resumed(const uint32_t *ids, size_t n, size_t small, uint8_t *all,
                           size_t max) {
    size_t cap = small;
    uint8_t *buf = malloc(cap);
    size_t from = 0, total = 0;
    for (;;) {
        PicobpeProgress p;
        PicobpeStatus s = picobpe_decode_from(ids, n, from, buf, cap, &p);
        if (s == PICOBPE_STATUS_PIECE_TOO_LONG && p.needed > cap && p.written == 0 &&
            p.consumed >= from) {
            buf = realloc(buf, cap = p.needed);
            from = p.consumed;
            continue;
        }
        cap = small; /* the long piece is done: back to the small buffer */
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
        from = p.consumed;
    }
}

/* Take every final id from `enc` through a 5-id buffer into `all` (at `*total`, room for
 * `max`). Returns the status of the take that ended it. */
static PicobpeStatus stream_take(PicobpeStreamEncoder *enc, uint32_t *all, size_t *total,
                                 size_t max) {
    uint32_t buf[5];
    for (;;) {
        PicobpeProgress p;
        PicobpeStatus s = picobpe_stream_encoder_take(enc, buf, 5, &p);
        if (s == PICOBPE_STATUS_PIECE_TOO_LONG) {
            stream_needed = p.needed;
        }
        if (s != PICOBPE_STATUS_OK) {
            return s;
        }
        if (*total + p.written > max) {
            return PICOBPE_STATUS_INVALID_ARGUMENT;
        }
        memcpy(all + *total, buf, sizeof(uint32_t) * p.written);
        *total += p.written;
        if (p.written < 5) {
            return PICOBPE_STATUS_OK;
        }
    }
}

/* Stream `text` in 3-byte chunks; the ids go to `all`. Returns the first status that is not
 * OK (or OK), and the number of ids in `*n`. */
static PicobpeStatus stream_encode(const uint8_t *text, size_t len, uint32_t *all, size_t max,
                                   size_t *n) {
    static PicobpeStreamEncoder enc;
    *n = 0;
    if (picobpe_stream_encoder_init(&enc, true) != PICOBPE_STATUS_OK) {
        return PICOBPE_STATUS_INVALID_ARGUMENT;
    }
    for (size_t at = 0; at < len;) {
        size_t chunk = len - at < 3 ? len - at : 3;
        PicobpeProgress p;
        PicobpeStatus s = picobpe_stream_encoder_push(&enc, text + at, chunk, &p);
        if (s != PICOBPE_STATUS_OK && s != PICOBPE_STATUS_OUTPUT_FULL) {
            return s;
        }
        at += p.consumed;
        s = stream_take(&enc, all, n, max);
        if (s != PICOBPE_STATUS_OK) {
            return s;
        }
    }
    picobpe_stream_encoder_finish(&enc);
    PicobpeStatus s = stream_take(&enc, all, n, max);
    if (s == PICOBPE_STATUS_OK && !picobpe_stream_encoder_is_done(&enc)) {
        return PICOBPE_STATUS_INVALID_ARGUMENT;
    }
    return s;
}

/* Stream `ids` into the decoder one at a time, taking through 4 bytes; the text goes to `all`.
 * Returns its length, or -1. */
static long stream_decode(const uint32_t *ids, size_t n, uint8_t *all, size_t max) {
    static PicobpeStreamDecoder dec;
    uint8_t buf[4];
    size_t total = 0;
    if (picobpe_stream_decoder_init(&dec) != PICOBPE_STATUS_OK) {
        return -1;
    }
    for (size_t i = 0; i <= n; i++) {
        if (i == n) {
            picobpe_stream_decoder_finish(&dec);
        } else {
            PicobpeStatus s = picobpe_stream_decoder_push(&dec, ids[i]);
            if (s == PICOBPE_STATUS_OUTPUT_FULL) {
                PicobpeProgress p;
                do {
                    picobpe_stream_decoder_take(&dec, buf, 4, &p);
                    if (total + p.written > max) {
                        return -1;
                    }
                    memcpy(all + total, buf, p.written);
                    total += p.written;
                } while (p.written > 0);
                s = picobpe_stream_decoder_push(&dec, ids[i]);
            }
            if (s != PICOBPE_STATUS_OK) {
                return -1;
            }
        }
        PicobpeProgress p;
        do {
            if (picobpe_stream_decoder_take(&dec, buf, 4, &p) != PICOBPE_STATUS_OK ||
                total + p.written > max) {
                return -1;
            }
            memcpy(all + total, buf, p.written);
            total += p.written;
        } while (p.written > 0);
    }
    return (long)total;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: sp_conformance VECTORS FAMILY\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *file = malloc((size_t)size);
    if (size <= 0 || fread(file, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 2;
    }
    fclose(f);
    at = file;
    end = file + size;
    const uint8_t *magic;
    uint32_t records, work, decode_room;
    if (!take_bytes(&magic, 8) || memcmp(magic, "PBVEC2\0\0", 8) != 0 || !take_u32(&records) ||
        !take_u32(&work) || !take_u32(&decode_room)) {
        fprintf(stderr, "%s: not a PBVEC2 file\n", argv[1]);
        return 2;
    }
    check(picobpe_model_family() == (PicobpeFamily)atoi(argv[2]), "model", "wrong family");

    static uint8_t cache[256 * 1024]; /* zero: empty */
    size_t done = 0, streamed = 0, refused = 0;
    for (uint32_t r = 0; r < records; r++) {
        uint16_t name_len;
        const uint8_t *name_bytes, *text, *decoded;
        uint32_t len, n, m, k;
        if (!take_u16(&name_len) || !take_bytes(&name_bytes, name_len) || !take_u32(&len) ||
            !take_bytes(&text, len) || !take_u32(&n)) {
            fprintf(stderr, "record %u: truncated\n", r);
            return 2;
        }
        uint32_t *ids = take_ids(n);
        if (!ids || !take_u32(&m)) {
            fprintf(stderr, "record %u: truncated\n", r);
            return 2;
        }
        uint32_t *ordinary = ids;
        if (m != SAME) {
            ordinary = take_ids(m);
            if (!ordinary) {
                fprintf(stderr, "record %u: truncated\n", r);
                return 2;
            }
        } else {
            m = n;
        }
        if (!take_u32(&k)) {
            fprintf(stderr, "record %u: truncated\n", r);
            return 2;
        }
        decoded = NULL;
        if (k == SAME) {
            decoded = text;
            k = len;
        } else if (k != NOT_GIVEN && !take_bytes(&decoded, k)) {
            fprintf(stderr, "record %u: truncated\n", r);
            return 2;
        }
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)name_len, (const char *)name_bytes);

        size_t max = (size_t)(n > m ? n : m) + work + 64;
        uint32_t *out = malloc(sizeof(uint32_t) * max);
        PicobpeProgress p;
        /* 1. One-shot, both ways. */
        for (int special = 0; special < 2; special++) {
            PicobpeStatus s = picobpe_encode(text, len, special, out, max, &p);
            check(s == PICOBPE_STATUS_OK &&
                      (special ? same_ids(out, p.written, ids, n)
                               : same_ids(out, p.written, ordinary, m)),
                  name, special ? "encode differs" : "encode (specials as text) differs");
        }
        /* 2. Through 7 ids. */
        long got = encode_resumed(text, len, 7, NULL, 0, out, max);
        check(got >= 0 && same_ids(out, (size_t)got, ids, n), name, "encode resumed differs");
        /* 3. Count, with the test's work area and with 7 ids grown to what a word asks for
         * (counting again from the start). */
        uint32_t *scratch = malloc(sizeof(uint32_t) * work);
        PicobpeStatus s = picobpe_count(text, len, true, scratch, work, &p);
        check(s == PICOBPE_STATUS_OK && p.written == n, name, "count differs");
        size_t scap = 7;
        while ((s = picobpe_count(text, len, true, scratch, scap, &p)) ==
                   PICOBPE_STATUS_PIECE_TOO_LONG &&
               p.consumed == 0 && p.needed > scap && p.needed <= work) {
            scap = p.needed;
        }
        check(s == PICOBPE_STATUS_OK && p.written == n, name, "count through 7 ids differs");
        free(scratch);
        /* 4. Cached, one-shot and through 7 ids. */
        s = picobpe_encode_cached(text, len, 0, true, cache, sizeof cache, out, max, &p);
        check(s == PICOBPE_STATUS_OK && same_ids(out, p.written, ids, n), name,
              "cached encode differs");
        got = encode_resumed(text, len, 7, cache, sizeof cache, out, max);
        check(got >= 0 && same_ids(out, (size_t)got, ids, n), name,
              "cached encode resumed differs");
        free(out);
        /* 5. Decode. */
        if (decoded) {
            size_t room = (size_t)k + 64;
            uint8_t *back = malloc(room);
            s = picobpe_decode(ids, n, back, room, &p);
            check(s == PICOBPE_STATUS_OK && p.written == k && memcmp(back, decoded, k) == 0, name,
                  "decode differs");
            long dl = decode_resumed(ids, n, 5, back, room);
            check(dl == (long)k && memcmp(back, decoded, k) == 0, name,
                  "decode resumed through 5 bytes differs");
            /* 7. Stream decoder. */
            dl = stream_decode(ids, n, back, room);
            check(dl == (long)k && memcmp(back, decoded, k) == 0, name, "stream decode differs");
            free(back);
        }
        /* 6. Stream encoder. */
        uint32_t *streamed_ids = malloc(sizeof(uint32_t) * ((size_t)n + 1));
        size_t sn;
        s = stream_encode(text, len, streamed_ids, n, &sn);
        if ((s == PICOBPE_STATUS_INPUT_TOO_SMALL && len + 64 > PICOBPE_STREAM_INPUT_CAPACITY) ||
            (s == PICOBPE_STATUS_PIECE_TOO_LONG && stream_needed > PICOBPE_STREAM_ID_CAPACITY)) {
            /* Every id taken before the refusal is final and right. */
            check(sn <= n && same_ids(streamed_ids, sn, ids, sn), name,
                  "stream ids before a refusal differ");
            refused++;
        } else {
            check(s == PICOBPE_STATUS_OK && same_ids(streamed_ids, sn, ids, n), name,
                  "stream encode differs");
            streamed++;
        }
        free(streamed_ids);
        if (ordinary != ids) {
            free(ordinary);
        }
        free(ids);
        done++;
    }
    /* Refusals: an unknown id, and a continuation past the end. */
    uint32_t bad = 4000000000u;
    uint8_t sink[8];
    PicobpeProgress p;
    check(picobpe_decode(&bad, 1, sink, sizeof sink, &p) == PICOBPE_STATUS_UNKNOWN_ID &&
              p.consumed == 0,
          "arguments", "an unknown id is not reported");
    uint32_t ids[4];
    check(picobpe_encode((const uint8_t *)"abc", 3, true, ids, 0, &p) ==
                  PICOBPE_STATUS_PIECE_TOO_LONG &&
              p.consumed == 0 && p.written == 0 && p.needed >= 1,
          "arguments", "an empty output buffer does not ask for more");
    check(picobpe_encode_from((const uint8_t *)"abc", 3, 9, true, ids, 4, &p) == PICOBPE_STATUS_OK &&
              p.written == 0,
          "arguments", "an offset past the end does not encode nothing");
    printf("%zu records, %zu checks, %d failures (vocabulary %zu ids; stream encodes: %zu exact, "
           "%zu refused: a word or the text longer than the stream holds)\n",
           done, checks, failures, picobpe_vocab_size(), streamed, refused);
    free(file);
    return failures == 0 && done > 0 ? 0 : 1;
}
