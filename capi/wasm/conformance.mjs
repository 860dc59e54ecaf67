// Conformance of picobpe's C API compiled to wasm32-unknown-unknown with tiktoken's reference
// ids (gpt2), run by Node (`cargo xtask wasm-test` builds the module and runs this).
//
// Usage: node conformance.mjs PICOBPE_CAPI.wasm [VECTORS_DIR]
//
// VECTORS_DIR is the committed `tests/fixtures/vectors` (the default, found from this file's
// place); the sets are those the C test `tests/c_api.rs` uses (every set whose specials the
// baked gpt2 model has): fixtures, corpus, random, invalid_utf8. The module is instantiated with
// no imports. Its inputs and outputs live in pages this script adds with `memory.grow`, which
// the Rust side never touches (it allocates nothing). On wasm32 `size_t` and pointers are i32,
// `bool` is an i32 0 or 1 and `PicobpeProgress` is three u32 (consumed, written, needed).
//
// For each case this makes the checks tests/conformance.c makes of `picobpe_encode`,
// `picobpe_count` and `picobpe_decode`, through the exported functions only:
//   1. one-shot encode, specials recognized and as text, equals the reference;
//   2. encode through a 7-id buffer, draining and resuming from `consumed` (and growing the
//      buffer to `needed` on PICOBPE_STATUS_PIECE_TOO_LONG), equals it too;
//   3. count equals the number of ids;
//   4. decode of the ids gives the input back, one-shot and through a 5-byte buffer;
//   5. the streaming encoder (state in linear memory), fed 61-byte chunks and taken through 7
//      ids, gives the ids (or, only for a text longer than its window, INPUT_TOO_SMALL);
//   6. the streaming decoder, fed one id at a time and taken through 4 bytes, gives the input;
//   7. encode with a 256 KiB piece cache shared by every case equals the reference;
// then that null pointers and an unknown id are refused. Prints a failure line per failing check
// (the first 20), a summary and a footprint row (module size and sections, encode MB/s of the
// one-shot encodes: informational); exits 0 only when every check passes.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const [wasmPath, vectorsDir = join(here, '../../tests/fixtures/vectors')] = process.argv.slice(2);
if (!wasmPath) {
  console.error('usage: node conformance.mjs PICOBPE_CAPI.wasm [VECTORS_DIR]');
  process.exit(2);
}
const SETS = ['fixtures', 'corpus', 'random', 'invalid_utf8'];
const [OK, OUTPUT_FULL, PIECE_TOO_LONG, UNKNOWN_ID, INVALID_ARGUMENT, INPUT_TOO_SMALL] = [
  0, 1, 2, 3, 4, 5,
];
// From picobpe.h: the stream states' sizes (uint64_t words) and the encoder's input window.
const [ENCODER_BYTES, DECODER_BYTES, STREAM_WINDOW] = [304 * 8, 42 * 8, 256];
const CACHE_BYTES = 256 * 1024;

// The module: no imports wanted.
const wasm = readFileSync(wasmPath);
const module = new WebAssembly.Module(wasm);
const imports = WebAssembly.Module.imports(module);
if (imports.length > 0) {
  const names = imports.map((i) => `${i.module}.${i.name} (${i.kind})`);
  console.error(`the module imports ${names.join(', ')}`);
  process.exit(1);
}
const api = new WebAssembly.Instance(module, {}).exports;
const { memory, picobpe_encode, picobpe_count, picobpe_decode, picobpe_vocab_size } = api;

// A bump arena in pages grown past the module's own memory; views are made afresh because
// growing detaches the old buffer.
const PAGE = 65536;
let top = memory.grow(0) * PAGE;
const alloc = (bytes, align = 4) => {
  const at = Math.ceil(top / align) * align;
  top = at + bytes;
  const short = Math.ceil(top / PAGE) - memory.buffer.byteLength / PAGE;
  if (short > 0) memory.grow(short);
  return at;
};
const u8 = () => new Uint8Array(memory.buffer);
const u32 = () => new Uint32Array(memory.buffer);
const progress = alloc(12);
const prog = () => {
  const [consumed, written, needed] = u32().subarray(progress / 4, progress / 4 + 3);
  return { consumed, written, needed };
};
// Kept across cases: the stream states and the cache (fresh pages are zero: an empty cache).
const encoder = alloc(ENCODER_BYTES, 8);
const decoder = alloc(DECODER_BYTES, 8);
const cache = alloc(CACHE_BYTES, 64);
const caseArena = top;
const putBytes = (bytes) => {
  const at = alloc(bytes.length);
  u8().set(bytes, at);
  return at;
};
const putIds = (ids) => {
  const at = alloc(4 * ids.length);
  u32().set(ids, at / 4);
  return at;
};
const idsAt = (at, n) => Array.from(u32().subarray(at / 4, at / 4 + n));
const sameIds = (a, b) => a !== null && a.length === b.length && a.every((v, i) => v === b[i]);
const sameBytes = (a, b) => a !== null && Buffer.compare(Buffer.from(a), b) === 0;

// The committed vectors, read as tests/src/lib.rs `vectors::load` reads them.
const jsonLines = (bytes) =>
  bytes.toString('utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
function* cases() {
  for (const set of SETS) {
    const gz = readFileSync(join(vectorsDir, 'gpt2', `${set}.jsonl.gz`));
    const [header, ...ids] = jsonLines(gunzipSync(gz));
    const inputs = jsonLines(readFileSync(join(vectorsDir, header.inputs)));
    const count = header.count;
    if (header.encoding !== 'gpt2' || header.set !== set || inputs.length !== count || ids.length !== count) {
      throw new Error(`${set}: header, inputs and ids disagree`);
    }
    for (const [i, input] of inputs.entries()) {
      const { name, all, ordinary = all } = ids[i];
      if (name !== input.name) throw new Error(`${set}: inputs and ids out of step at ${input.name}`);
      const text =
        input.text !== undefined ? Buffer.from(input.text, 'utf8')
        : input.text_b64 !== undefined ? Buffer.from(input.text_b64, 'base64')
        : readFileSync(join(vectorsDir, input.file));
      yield { name: `${set}/${name}`, text, all, ordinary };
    }
  }
}

// Encode `text[0..len]` (at `text`) through a buffer of `cap` ids, resuming; the ids or null.
function encodeResumed(text, len, special, cap) {
  let buf = alloc(4 * cap);
  let from = 0;
  const all = [];
  for (;;) {
    const s = picobpe_encode(text + from, len - from, special, buf, cap, progress);
    const p = prog();
    if (s === PIECE_TOO_LONG && p.needed > cap) {
      cap = p.needed; // one piece needs a larger work area: grow to what it asks for
      buf = alloc(4 * cap);
      from += p.consumed;
      continue;
    }
    if (s !== OK && s !== OUTPUT_FULL) return null;
    all.push(...idsAt(buf, p.written));
    if (s === OK) return all;
    if (p.consumed === 0 && p.written === 0) return null; // no progress
    from += p.consumed;
  }
}

// Decode `n` ids (at `ids`) through a buffer of `cap` bytes, resuming; the bytes or null.
function decodeResumed(ids, n, cap) {
  let buf = alloc(cap);
  let from = 0;
  const out = [];
  for (;;) {
    const s = picobpe_decode(ids + 4 * from, n - from, buf, cap, progress);
    const p = prog();
    if (s === PIECE_TOO_LONG) {
      if (p.needed <= cap || p.written !== 0) return null;
      buf = alloc((cap = p.needed)); // a token longer than the buffer
      from += p.consumed;
      continue;
    }
    if (s !== OK && s !== OUTPUT_FULL) return null;
    if (s === OUTPUT_FULL && p.written === 0) return null; // no progress
    out.push(u8().slice(buf, buf + p.written));
    if (s === OK) return Buffer.concat(out);
    from += p.consumed;
  }
}

// Take the stream encoder's final ids through 7 at a time into `into`; the last status.
function streamTake(into) {
  const buf = alloc(4 * 7);
  for (;;) {
    const s = api.picobpe_stream_encoder_take(encoder, buf, 7, progress);
    if (s !== OK) return s;
    const n = prog().written;
    into.push(...idsAt(buf, n));
    if (n < 7) return OK;
  }
}

// Stream `text[0..len]` in 61-byte chunks; the ids, 'window' for INPUT_TOO_SMALL, or null.
function streamEncode(text, len, special) {
  if (api.picobpe_stream_encoder_init(encoder, special) !== OK) return null;
  const ids = [];
  for (let from = 0; from < len; ) {
    let s = api.picobpe_stream_encoder_push(encoder, text + from, Math.min(61, len - from), progress);
    from += prog().consumed;
    if (s === OK || s === OUTPUT_FULL) s = streamTake(ids);
    if (s === INPUT_TOO_SMALL) return 'window';
    if (s !== OK) return null;
  }
  if (api.picobpe_stream_encoder_finish(encoder) !== OK) return null;
  const s = streamTake(ids);
  if (s === INPUT_TOO_SMALL) return 'window';
  return s === OK && api.picobpe_stream_encoder_is_done(encoder) ? ids : null;
}

// Take the stream decoder's bytes through 4 at a time into `into`; false on an error.
function streamDrain(into, buf) {
  for (;;) {
    if (api.picobpe_stream_decoder_take(decoder, buf, 4, progress) !== OK) return false;
    const n = prog().written;
    if (n === 0) return true;
    into.push(u8().slice(buf, buf + n));
  }
}

// Stream `n` ids (at `ids`) through the decoder one at a time; the bytes or null.
function streamDecode(ids, n) {
  if (api.picobpe_stream_decoder_init(decoder) !== OK) return null;
  const buf = alloc(4);
  const out = [];
  for (let i = 0; i < n; i++) {
    const id = u32()[ids / 4 + i];
    let s = api.picobpe_stream_decoder_push(decoder, id);
    if (s === OUTPUT_FULL) {
      if (!streamDrain(out, buf)) return null;
      s = api.picobpe_stream_decoder_push(decoder, id);
    }
    if (s !== OK || !streamDrain(out, buf)) return null;
  }
  if (api.picobpe_stream_decoder_finish(decoder) !== OK || !streamDrain(out, buf)) return null;
  return Buffer.concat(out);
}

let windowRefusals = 0;
let nCases = 0;
let checks = 0;
let failures = 0;
let where = '';
const check = (ok, what) => {
  checks++;
  if (!ok && failures++ < 20) console.error(`${where}: ${what}`);
};
let encodedBytes = 0;
let encodeMs = 0;

for (const c of cases()) {
  where = c.name;
  top = caseArena;
  const len = c.text.length;
  const text = putBytes(c.text);
  const cap = 3 * len + 64; // a piece's work area: about 2.1 ids per byte
  const out = alloc(4 * cap);
  const ord = putIds(c.ordinary);

  // 1. One-shot, both ways (the first is timed).
  const t0 = performance.now();
  let s = picobpe_encode(text, len, 1, out, cap, progress);
  encodeMs += performance.now() - t0;
  encodedBytes += len;
  check(s === OK && sameIds(idsAt(out, prog().written), c.all), 'encode (specials recognized) differs');
  s = picobpe_encode(text, len, 0, out, cap, progress);
  check(s === OK && sameIds(idsAt(out, prog().written), c.ordinary), 'encode (specials as text) differs');
  // 2. Resumed through 7 ids.
  check(sameIds(encodeResumed(text, len, 1, 7), c.all), 'encode resumed through 7 ids differs');
  // 3. Count.
  const counted = picobpe_count(text, len, 1, out, cap, progress);
  check(counted === OK && prog().written === c.all.length, 'count differs');
  // 4. Decode, one-shot and through 5 bytes.
  const back = alloc(len + 64);
  const decoded = picobpe_decode(ord, c.ordinary.length, back, len + 64, progress);
  const backBytes = u8().subarray(back, back + prog().written);
  check(decoded === OK && sameBytes(backBytes, c.text), 'decode does not give the input back');
  const resumed = decodeResumed(ord, c.ordinary.length, 5);
  check(sameBytes(resumed, c.text), 'decode resumed through 5 bytes does not give the input back');
  // 5. Streaming encoder, both ways.
  for (const [special, ref] of [[1, c.all], [0, c.ordinary]]) {
    const streamed = streamEncode(text, len, special);
    if (streamed === 'window' && len > STREAM_WINDOW) windowRefusals++;
    else check(Array.isArray(streamed) && sameIds(streamed, ref), `stream encode differs (special ${special})`);
  }
  // 6. Streaming decoder.
  check(sameBytes(streamDecode(ord, c.ordinary.length), c.text), 'stream decode does not give the input back');
  // 7. Cached encode, both ways.
  for (const [special, ref] of [[1, c.all], [0, c.ordinary]]) {
    s = api.picobpe_encode_cached(text, len, 0, special, cache, CACHE_BYTES, out, cap, progress);
    check(s === OK && sameIds(idsAt(out, prog().written), ref), `cached encode differs (special ${special})`);
  }
  nCases++;
}

// Arguments the API refuses (0 is the null pointer).
where = 'arguments';
top = caseArena;
const abc = putBytes(Buffer.from('abc'));
const nullText = picobpe_encode(0, 3, 1, 0, 0, progress);
const nullProgress = picobpe_encode(abc, 3, 1, 0, 0, 0);
check(nullText === INVALID_ARGUMENT && nullProgress === INVALID_ARGUMENT, 'null pointers are not refused');
const bad = putIds([4000000000]);
const sink = alloc(8);
const unknown = picobpe_decode(bad, 1, sink, 8, progress);
check(unknown === UNKNOWN_ID && prog().consumed === 0, 'an unknown id is not reported');
// tiktoken's gpt2: byte-level BPE (family 0), 50257 ids.
check(api.picobpe_model_family() === 0 && picobpe_vocab_size() === 50257, 'not gpt2: family or size');

// Summary and footprint row: the module's section sizes from its bytes (id 10 code, 11 data).
const vocab = picobpe_vocab_size();
console.log(
  `${nCases} cases, ${checks} checks, ${failures} failures (vocabulary ${vocab} ids; ` +
    `${windowRefusals} stream encodes refused a run longer than the window)`,
);
const sections = {};
for (let at = 8; at < wasm.length; ) {
  const start = at;
  const id = wasm[at++];
  let size = 0;
  for (let shift = 0, b = 128; b & 128; shift += 7) size += ((b = wasm[at++]) & 127) * 2 ** shift;
  at += size;
  sections[id] = (sections[id] ?? 0) + at - start;
}
const B = (n) => `${(n ?? 0).toLocaleString('en-US')} B`;
const mbs = encodedBytes / 1e6 / (encodeMs / 1e3);
const mb = (encodedBytes / 1e6).toFixed(2);
console.log(
  `| wasm32-unknown-unknown (Node ${process.version}, gpt2) | .wasm | code ` +
    '| data (baked and Unicode tables) | imports | encode |',
);
console.log('|---|---:|---:|---:|---:|---:|');
console.log(
  `| picobpe-capi cdylib (release, -C strip=symbols) | ${B(wasm.length)} | ${B(sections[10])} ` +
    `| ${B(sections[11])} | none | ${mbs.toFixed(1)} MB/s (one-shot, ${mb} MB) |`,
);
process.exit(failures === 0 && nCases > 0 ? 0 : 1);
