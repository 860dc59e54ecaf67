//! picobpe's byte-level core on more targets: Cortex-M0 (`thumbv6m-none-eabi`: no
//! compare-and-swap, no hardware divide) and RISC-V (`riscv32imac-unknown-none-elf`), under QEMU.
//!
//! The run checks every embedded reference record (the vector sets of the Cortex-M3 on-target
//! tests: tiktoken's ids for gpt2, Hugging Face tokenizers' for the small trained model):
//! 1. encode with special tokens recognized and as text, through the largest buffer the machine
//!    has (draining and resuming when a record does not fit), equals the reference ids;
//! 2. encode through a 7-id buffer (growing to `needed` on `PieceTooLong`) equals them too;
//! 3. `count` equals their number;
//! 4. decode, through the buffer, gives the reference text back.
//!
//! Then it prints `FIG <key> <value>` lines for `cargo xtask footprint`: table bytes, the peak
//! stack of encode and decode and, under QEMU `-icount shift=0`, guest instructions to encode
//! and decode an 8 KB English text. Exit status 0 only when every check passes.
#![no_std]
#![no_main]

#[path = "../../firmware-example/src/vectors.rs"]
#[allow(dead_code)]
mod vectors;

#[path = "../../firmware-example/src/stack.rs"]
#[allow(dead_code)]
mod stack;

#[path = "../../firmware-example/src/texts.rs"]
#[allow(dead_code)]
mod texts;

mod instret;

#[allow(clippy::all, missing_docs, dead_code, long_running_const_eval)]
mod baked {
    include!(concat!(env!("OUT_DIR"), "/picobpe_tables.rs"));
}

use picobpe::{DecodeError, EncodeError, Specials, Tokenizer};
use semihosting::{println, process};

/// The QEMU machine this build is for.
const MACHINE: &str = env!("PICOBPE_MACHINE");
/// File name of the baked model.
const MODEL_FILE: &str = env!("PICOBPE_MODEL_FILE");
/// The embedded reference vectors.
static VECTORS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vectors.bin"));

/// Ids in the encode buffer: the micro:bit has 16 KiB of RAM in all.
const IDS: usize = if cfg!(picobpe_small_ram) { 512 } else { 4096 };
/// Bytes in the decode buffer.
const BYTES: usize = 2 * IDS;
/// The smallest encode buffer the resume check starts from.
const SMALL: usize = 7;

static mut IDS_BUF: [u32; IDS] = [0; IDS];
static mut BYTES_BUF: [u8; BYTES] = [0; BYTES];

#[cfg(target_arch = "arm")]
#[cortex_m_rt::entry]
fn main() -> ! {
    process::exit(if run() { 0 } else { 1 })
}

#[cfg(target_arch = "riscv32")]
#[riscv_rt::entry]
fn main() -> ! {
    process::exit(if run() { 0 } else { 1 })
}

/// The core has no reachable panic (`cargo xtask panic-check`); should this program's own
/// code panic, say so and fail the run.
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    println!("panic: {info}");
    process::exit(101)
}

/// The target's name as rustc knows it.
fn target() -> &'static str {
    if cfg!(target_arch = "riscv32") {
        "riscv32imac-unknown-none-elf"
    } else {
        "thumbv6m-none-eabi"
    }
}

fn run() -> bool {
    // SAFETY: `run` is called once, from the entry point; nothing else touches the buffers.
    let (ids, bytes) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(IDS_BUF),
            &mut *core::ptr::addr_of_mut!(BYTES_BUF),
        )
    };
    let tok = Tokenizer::new(&baked::TABLES);
    println!(
        "picobpe on {MACHINE} ({}), model {MODEL_FILE}: {} ids",
        target(),
        baked::TABLES.n_ids()
    );
    let ok = conformance(&tok, ids, bytes);
    figures(&tok, ids, bytes) && ok
}

/// Checks every embedded record; prints failures and a summary.
fn conformance(tok: &Tokenizer<'_>, ids: &mut [u32], bytes: &mut [u8]) -> bool {
    let Some(mut records) = vectors::records(VECTORS) else {
        println!("the embedded vectors are not a PBVEC file");
        return false;
    };
    let (mut n, mut checks, mut failures) = (0usize, 0usize, 0usize);
    let mut fail = |name: &str, what: &str| {
        if failures < 20 {
            println!("FAIL {name}: {what}");
        }
        failures += 1;
    };
    for r in records.by_ref() {
        n += 1;
        let all = r.all();
        let ordinary = r.ordinary();
        if !encode_matches(tok, r.text, Specials::All, ids, ids.len(), all) {
            fail(r.name, "encode (specials recognized)");
        }
        if !encode_matches(tok, r.text, Specials::None, ids, ids.len(), ordinary) {
            fail(r.name, "encode (specials as text)");
        }
        if !encode_matches(tok, r.text, Specials::All, ids, SMALL, all) {
            fail(r.name, "encode resumed through 7 ids");
        }
        if tok.count(r.text, Specials::All, ids) != Ok(all.len()) {
            fail(r.name, "count");
        }
        checks += 4;
        if let Some(expected) = r.decoded() {
            if !decode_matches(tok, all, ids, bytes, expected) {
                fail(r.name, "decode");
            }
            checks += 1;
        }
    }
    if records.malformed {
        println!("the embedded vectors are truncated or corrupt");
        failures += 1;
    }
    println!("{n} records, {checks} checks, {failures} failures");
    failures == 0 && n > 0
}

/// Encodes `text` into `buf[..cap]`, draining after each full buffer and growing it when a
/// piece asks for more, and compares the ids as they come with `expected`.
fn encode_matches(
    tok: &Tokenizer<'_>,
    text: &[u8],
    specials: Specials,
    buf: &mut [u32],
    cap: usize,
    expected: vectors::Ids<'_>,
) -> bool {
    let mut want = expected.iter();
    let (mut at, mut cap) = (0usize, cap.min(buf.len()));
    loop {
        let Some(rest) = text.get(at..) else {
            return false;
        };
        let Some(out) = buf.get_mut(..cap) else {
            return false;
        };
        let (written, consumed, done) = match tok.encode(rest, out, specials) {
            Ok(w) => (w, rest.len(), true),
            Err(EncodeError::OutputFull { consumed, written }) => (written, consumed, false),
            Err(EncodeError::PieceTooLong { needed, .. }) if needed > cap => {
                if needed > buf.len() {
                    return false;
                }
                cap = needed;
                continue;
            }
            Err(EncodeError::PieceTooLong { .. }) => return false,
        };
        if !out.iter().take(written).all(|&id| want.next() == Some(id)) {
            return false;
        }
        if done {
            return want.next().is_none();
        }
        at += consumed;
    }
}

/// Decodes `ids` through `bytes`, copying them into `scratch` chunk by chunk (the ids come
/// from flash, unaligned), and compares the bytes as they come with `expected`.
fn decode_matches(
    tok: &Tokenizer<'_>,
    ids: vectors::Ids<'_>,
    scratch: &mut [u32],
    bytes: &mut [u8],
    expected: &[u8],
) -> bool {
    let mut want = expected.iter();
    let mut source = ids.iter();
    loop {
        let mut n = 0;
        for (slot, id) in scratch.iter_mut().zip(source.by_ref()) {
            *slot = id;
            n += 1;
        }
        if n == 0 {
            return want.next().is_none();
        }
        let mut chunk = &scratch[..n];
        while !chunk.is_empty() {
            let (written, consumed) = match tok.decode(chunk, bytes) {
                Ok(w) => (w, chunk.len()),
                Err(DecodeError::OutputFull { consumed, written }) if consumed > 0 => {
                    (written, consumed)
                }
                Err(_) => return false,
            };
            if !bytes.iter().take(written).all(|b| want.next() == Some(b)) {
                return false;
            }
            chunk = &chunk[consumed..];
        }
    }
}

/// Machine-readable figures for `cargo xtask footprint`.
fn figures(tok: &Tokenizer<'_>, ids: &mut [u32], bytes: &mut [u8]) -> bool {
    println!("FIG machine {MACHINE}");
    println!("FIG target {}", target());
    println!("FIG model {MODEL_FILE}");
    println!("FIG n_ids {}", baked::TABLES.n_ids());
    let text = texts::BENCH;
    println!("FIG bench_bytes {}", text.len());
    let encode = |ids: &mut [u32]| {
        let mut total = 0usize;
        let mut at = 0usize;
        while let Some(rest) = text.get(at..).filter(|r| !r.is_empty()) {
            match tok.encode(rest, ids, Specials::All) {
                Ok(n) => return Some(total + n),
                Err(EncodeError::OutputFull { consumed, written }) if consumed > 0 => {
                    total += written;
                    at += consumed;
                }
                Err(_) => return None,
            }
        }
        Some(total)
    };
    let (r, enc_stack) = stack::measure(|| encode(ids));
    let Some(n) = r else {
        println!("encode of the bench text failed");
        return false;
    };
    println!("FIG bench_tokens {n}");
    println!("FIG stack_encode {enc_stack}");
    // Decode the bench text's first buffer of ids.
    let head = match tok.encode(text, ids, Specials::All) {
        Ok(n) => n,
        Err(EncodeError::OutputFull { written, .. }) => written,
        Err(_) => return false,
    };
    let (r, dec_stack) = stack::measure(|| tok.decode(&ids[..head], bytes));
    if !matches!(r, Ok(_) | Err(DecodeError::OutputFull { .. })) {
        println!("decode of the bench ids failed");
        return false;
    }
    println!("FIG stack_decode {dec_stack}");
    match instret::count(|| encode(ids)) {
        Some((Some(_), i)) => println!("FIG instr_encode {i}"),
        Some((None, _)) => return false,
        None => println!("FIG instr_encode unavailable"),
    }
    true
}
