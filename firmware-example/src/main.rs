//! picobpe demo firmware.
//!
//! Default: tokenize a built-in text with the baked model, print the text, its ids and the
//! decoded text over semihosting, check the round trip, print figures, exit 0 (1 on a mismatch).
//! With the semihosting argument `footprint` (QEMU `-semihosting-config ...,arg=footprint`): print
//! `FIG <key> <value>` lines for `cargo xtask footprint` — table bytes, peak stack of encode and
//! decode, and guest instruction counts (meaningful under `-icount shift=0`).
//!
//! A byte-level BPE model runs through `picobpe::Tokenizer`; a SentencePiece model, BPE or
//! Unigram (`cfg(picobpe_sp)`, set by build.rs from the baked model), through
//! `picobpe::SpTokenizer` (module `sp` below), a WordPiece model (`cfg(picobpe_wp)`) through
//! `picobpe::WpTokenizer` (module `wp`), with the same output.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
use picobpe::Specials;
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
use picobpe_firmware::icount::Counter;
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
use picobpe_firmware::tables::{table_bytes, tokenizer, MODEL_FILE, TABLES};
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
use picobpe_firmware::{stack, texts, MACHINE};
use semihosting::{println, process};

#[cfg(picobpe_sp)]
use sp::{demo, figures};
#[cfg(picobpe_wp)]
use wp::{demo, figures};

#[entry]
fn main() -> ! {
    let footprint = match semihosting::experimental::env::args::<64>() {
        Ok(args) => args.into_iter().any(|a| a == Ok("footprint")),
        Err(_) => false,
    };
    let ok = if footprint { figures() } else { demo() };
    process::exit(if ok { 0 } else { 1 })
}

/// Tokenize the demo text and show everything.
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
fn demo() -> bool {
    let tok = tokenizer();
    println!(
        "picobpe on {MACHINE} (Cortex-M3 under QEMU), model {MODEL_FILE}: {} ids, {:?} pattern",
        TABLES.n_ids(),
        TABLES.pattern
    );
    let text = texts::DEMO.as_bytes();
    println!("text ({} bytes): {}", text.len(), texts::DEMO);
    let ids = cortex_m::singleton!(: [u32; 256] = [0; 256]).unwrap_or_else(|| unreachable());
    let (res, enc_stack) = stack::measure(|| tok.encode(text, ids, Specials::All));
    let n = match res {
        Ok(n) => n,
        Err(e) => {
            println!("encode failed: {e}");
            return false;
        }
    };
    println!("ids ({n}): {:?}", &ids[..n]);
    print_tokens(&tok, &ids[..n]);
    let out = cortex_m::singleton!(: [u8; 1024] = [0; 1024]).unwrap_or_else(|| unreachable());
    let (res, dec_stack) = stack::measure(|| tok.decode(&ids[..n], out));
    let m = match res {
        Ok(m) => m,
        Err(e) => {
            println!("decode failed: {e}");
            return false;
        }
    };
    match core::str::from_utf8(&out[..m]) {
        Ok(s) => println!("decoded: {s}"),
        Err(_) => println!("decoded (not UTF-8): {:?}", &out[..m]),
    }
    let round_trip = &out[..m] == text;
    println!("round trip: {}", if round_trip { "ok" } else { "MISMATCH" });
    let per = text.len() * 100 / n.max(1);
    println!(
        "figures: {n} tokens for {} bytes ({}.{:02} bytes/token); peak stack: encode {enc_stack} B, \
         decode {dec_stack} B; tables: {} B in flash; heap: none",
        text.len(),
        per / 100,
        per % 100,
        table_bytes(&TABLES).total()
    );
    round_trip
}

/// One line with every token's bytes between `|`; bytes that are not whole UTF-8 characters
/// within their token are shown as `\xNN`.
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
fn print_tokens(tok: &picobpe::Tokenizer<'_>, ids: &[u32]) {
    semihosting::print!("tokens: |");
    for &id in ids {
        let mut bytes = tok.token_bytes(id).unwrap_or(&[]);
        while !bytes.is_empty() {
            match core::str::from_utf8(bytes) {
                Ok(s) => {
                    semihosting::print!("{s}");
                    break;
                }
                Err(e) => {
                    let (ok, rest) = bytes.split_at(e.valid_up_to());
                    semihosting::print!("{}", core::str::from_utf8(ok).unwrap_or(""));
                    let bad = e.error_len().unwrap_or(rest.len()).max(1);
                    for b in &rest[..bad] {
                        semihosting::print!("\\x{b:02X}");
                    }
                    bytes = &rest[bad..];
                }
            }
        }
        semihosting::print!("|");
    }
    println!();
}

/// Machine-readable figures for `cargo xtask footprint`.
#[cfg(not(any(picobpe_sp, picobpe_wp)))]
fn figures() -> bool {
    let tb = table_bytes(&TABLES);
    println!("FIG machine {MACHINE}");
    println!("FIG model {MODEL_FILE}");
    println!("FIG n_ids {}", TABLES.n_ids());
    println!("FIG n_merges {}", TABLES.pairs.len());
    println!("FIG n_pieces {}", TABLES.pieces.len());
    println!("FIG table.token_bytes {}", tb.token_bytes);
    println!("FIG table.token_offsets {}", tb.token_offsets);
    println!("FIG table.byte_ids {}", tb.byte_ids);
    println!("FIG table.pairs {}", tb.pairs);
    println!("FIG table.ranks {}", tb.ranks);
    println!("FIG table.pieces {}", tb.pieces);
    println!("FIG table.specials {}", tb.specials);
    println!("FIG table.splits {}", tb.splits);
    println!("FIG table.total {}", tb.total());
    println!("FIG table.outside_flash {}", tb.outside_flash);
    println!("FIG stack_free_at_main {}", stack::free());
    let Some(p) = cortex_m::Peripherals::take() else {
        return false;
    };
    let mut counter = Counter::calibrate(p.SYST);
    println!("FIG calibration_ticks {}", counter.calibration_ticks());
    let text = texts::BENCH;
    println!("FIG bench_bytes {}", text.len());
    // Output buffers are static: the stack figures are the encoder's and decoder's own.
    let ids = cortex_m::singleton!(: [u32; 4096] = [0; 4096]).unwrap_or_else(|| unreachable());
    let out = cortex_m::singleton!(: [u8; 8192] = [0; 8192]).unwrap_or_else(|| unreachable());
    let tok = tokenizer();
    let (r, enc_stack) = stack::measure(|| tok.encode(text, ids, Specials::All));
    let Ok(n) = r else {
        println!("encode failed: {r:?}");
        return false;
    };
    println!("FIG bench_tokens {n}");
    println!("FIG stack_encode {enc_stack}");
    let (r, dec_stack) = stack::measure(|| tok.decode(&ids[..n], out));
    if r != Ok(text.len()) || &out[..text.len()] != text {
        println!("round trip of the bench text failed: {r:?}");
        return false;
    }
    println!("FIG stack_decode {dec_stack}");
    match counter.instructions(|| tok.encode(text, ids, Specials::All)) {
        Some((Ok(_), i)) => println!("FIG instr_encode {i}"),
        _ => return false,
    }
    match counter.instructions(|| tok.decode(&ids[..n], out)) {
        Some((Ok(_), i)) => println!("FIG instr_decode {i}"),
        _ => return false,
    }
    let empty: &[u8] = &[];
    match counter.instructions(|| tok.encode(empty, ids, Specials::All)) {
        Some((Ok(_), i)) => println!("FIG instr_overhead {i}"),
        _ => return false,
    }
    true
}

/// The demo and the figures for a SentencePiece model (BPE or Unigram).
#[cfg(picobpe_sp)]
mod sp {
    use picobpe::sentencepiece::PieceKind;
    use picobpe::SpTokenizer;
    use picobpe_firmware::icount::Counter;
    use picobpe_firmware::tables::{
        algorithm, count_kind, round_trips, table_bytes, tokenizer, MODEL_FILE, TABLES,
    };
    use picobpe_firmware::{stack, texts, MACHINE};
    use semihosting::println;

    use super::unreachable;

    /// Tokenize the demo text and show everything. A model that does not round-trip every
    /// text (no byte fallback, or extra whitespace removed) only has to decode.
    pub fn demo() -> bool {
        let tok = tokenizer();
        println!(
            "picobpe on {MACHINE} (Cortex-M3 under QEMU), SentencePiece {} model {MODEL_FILE}: \
             {} ids, {} byte pieces, {} control, {} user-defined; dummy prefix {}, extra \
             whitespace removed {}",
            algorithm(),
            TABLES.n_ids(),
            TABLES.byte_ids.len(),
            count_kind(PieceKind::Control),
            TABLES.user_defined.len(),
            yes(TABLES.add_dummy_prefix),
            yes(TABLES.remove_extra_whitespaces),
        );
        let text = texts::DEMO.as_bytes();
        println!("text ({} bytes): {}", text.len(), texts::DEMO);
        // Room for the ids and the work area of the longest word (at the far end).
        let ids = cortex_m::singleton!(: [u32; 512] = [0; 512]).unwrap_or_else(|| unreachable());
        let (res, enc_stack) = stack::measure(|| tok.encode(text, ids));
        let n = match res {
            Ok(n) => n,
            Err(e) => {
                println!("encode failed: {e}");
                return false;
            }
        };
        println!("ids ({n}): {:?}", &ids[..n]);
        print_pieces(&tok, &ids[..n]);
        let out = cortex_m::singleton!(: [u8; 1024] = [0; 1024]).unwrap_or_else(|| unreachable());
        let (res, dec_stack) = stack::measure(|| tok.decode(&ids[..n], out));
        let m = match res {
            Ok(m) => m,
            Err(e) => {
                println!("decode failed: {e}");
                return false;
            }
        };
        match core::str::from_utf8(&out[..m]) {
            Ok(s) => println!("decoded: {s}"),
            Err(_) => println!("decoded (not UTF-8): {:?}", &out[..m]),
        }
        let round_trip = &out[..m] == text;
        let verdict = match (round_trip, round_trips()) {
            (true, _) => "ok",
            (false, true) => "MISMATCH",
            (false, false) => "differs, as expected (no byte fallback or extra whitespace removed)",
        };
        println!("round trip: {verdict}");
        let per = text.len() * 100 / n.max(1);
        println!(
            "figures: {n} tokens for {} bytes ({}.{:02} bytes/token); peak stack: encode \
             {enc_stack} B, decode {dec_stack} B; tables: {} B in flash; heap: none",
            text.len(),
            per / 100,
            per % 100,
            table_bytes(&TABLES).total()
        );
        round_trip || !round_trips()
    }

    /// Whether `decoded` is what the bench text should decode to: the text itself for a model
    /// that round-trips, else (ug8000: ` ⁇ ` for each line break, spaces collapsed) some text
    /// of about its length.
    fn bench_decoded(text: &[u8], decoded: Option<&[u8]>) -> bool {
        match decoded {
            Some(d) if round_trips() => d == text,
            Some(d) => d.len() > text.len() / 2,
            None => false,
        }
    }

    fn yes(b: bool) -> &'static str {
        if b {
            "on"
        } else {
            "off"
        }
    }

    /// One line with every id's piece between `|`, as SentencePiece stores it (`▁` for a
    /// space, `<0xHH>` for a byte piece).
    fn print_pieces(tok: &SpTokenizer<'_>, ids: &[u32]) {
        semihosting::print!("tokens: |");
        for &id in ids {
            let piece = tok.tables().piece_bytes(id).unwrap_or(&[]);
            match core::str::from_utf8(piece) {
                Ok(s) => semihosting::print!("{s}|"),
                Err(_) => semihosting::print!("{piece:?}|"),
            }
        }
        println!();
    }

    /// Machine-readable figures for `cargo xtask footprint`.
    pub fn figures() -> bool {
        let tb = table_bytes(&TABLES);
        println!("FIG machine {MACHINE}");
        println!("FIG model {MODEL_FILE}");
        println!("FIG kind sentencepiece");
        println!("FIG algorithm {}", algorithm());
        println!("FIG n_ids {}", TABLES.n_ids());
        println!("FIG n_normal {}", count_kind(PieceKind::Normal));
        println!("FIG n_byte {}", TABLES.byte_ids.len());
        println!("FIG table.token_bytes {}", tb.token_bytes);
        println!("FIG table.token_offsets {}", tb.token_offsets);
        println!("FIG table.kinds {}", tb.kinds);
        println!("FIG table.priorities {}", tb.priorities);
        println!("FIG table.pieces {}", tb.pieces);
        println!("FIG table.filter {}", tb.filter);
        println!("FIG table.other {}", tb.other);
        println!("FIG table.charsmap {}", tb.charsmap);
        println!("FIG table.total {}", tb.total());
        println!("FIG table.outside_flash {}", tb.outside_flash);
        println!("FIG stack_free_at_main {}", stack::free());
        let Some(p) = cortex_m::Peripherals::take() else {
            return false;
        };
        let mut counter = Counter::calibrate(p.SYST);
        println!("FIG calibration_ticks {}", counter.calibration_ticks());
        let text = texts::BENCH;
        println!("FIG bench_bytes {}", text.len());
        // Output buffers are static: the stack figures are the encoder's and decoder's own.
        // The ids buffer also holds the work area of the word being merged (BPE) or the
        // lattice of a long word (Unigram). The decoded bench text can be longer than the text
        // (ug8000: ` ⁇ ` for each line break): 12 KiB.
        let ids = cortex_m::singleton!(: [u32; 4096] = [0; 4096]).unwrap_or_else(|| unreachable());
        let out = cortex_m::singleton!(: [u8; 12288] = [0; 12288]).unwrap_or_else(|| unreachable());
        let tok = tokenizer();
        let (r, enc_stack) = stack::measure(|| tok.encode(text, ids));
        let Ok(n) = r else {
            println!("encode failed: {r:?}");
            return false;
        };
        println!("FIG bench_tokens {n}");
        println!("FIG stack_encode {enc_stack}");
        let (r, dec_stack) = stack::measure(|| tok.decode(&ids[..n], out));
        if !bench_decoded(text, r.ok().and_then(|m| out.get(..m))) {
            println!("round trip of the bench text failed: {r:?}");
            return false;
        }
        println!("FIG decoded_bytes {}", r.unwrap_or(0));
        println!("FIG stack_decode {dec_stack}");
        match counter.instructions(|| tok.encode(text, ids)) {
            Some((Ok(_), i)) => println!("FIG instr_encode {i}"),
            _ => return false,
        }
        match counter.instructions(|| tok.decode(&ids[..n], out)) {
            Some((Ok(_), i)) => println!("FIG instr_decode {i}"),
            _ => return false,
        }
        let empty: &[u8] = &[];
        match counter.instructions(|| tok.encode(empty, ids)) {
            Some((Ok(_), i)) => println!("FIG instr_overhead {i}"),
            _ => return false,
        }
        true
    }
}

/// The demo and the figures for a WordPiece model.
#[cfg(picobpe_wp)]
mod wp {
    use picobpe::{Specials, WpTokenizer};
    use picobpe_firmware::icount::Counter;
    use picobpe_firmware::tables::{n_continuations, table_bytes, tokenizer, MODEL_FILE, TABLES};
    use picobpe_firmware::{stack, texts, MACHINE};
    use semihosting::println;

    use super::unreachable;

    /// Tokenize the demo text and show everything. WordPiece normalizes (and, uncased,
    /// lowercases) the text and drops its spaces, so the decoded text is compared with the
    /// input only for a round trip of the words: printed, not required.
    pub fn demo() -> bool {
        let tok = tokenizer();
        println!(
            "picobpe on {MACHINE} (Cortex-M3 under QEMU), WordPiece model {MODEL_FILE}: {} ids \
             ({} continuation pieces), {}, unknown token {}, {} added tokens",
            TABLES.n_ids(),
            n_continuations(),
            if TABLES.lowercase { "uncased" } else { "cased" },
            TABLES.unk_id,
            TABLES.specials.len(),
        );
        let text = texts::DEMO.as_bytes();
        println!("text ({} bytes): {}", text.len(), texts::DEMO);
        let ids = cortex_m::singleton!(: [u32; 256] = [0; 256]).unwrap_or_else(|| unreachable());
        let (res, enc_stack) = stack::measure(|| tok.encode(text, ids, Specials::All));
        let n = match res {
            Ok(n) => n,
            Err(e) => {
                println!("encode failed: {e}");
                return false;
            }
        };
        println!("ids ({n}): {:?}", &ids[..n]);
        print_pieces(&tok, &ids[..n]);
        let out = cortex_m::singleton!(: [u8; 1024] = [0; 1024]).unwrap_or_else(|| unreachable());
        let (res, dec_stack) = stack::measure(|| tok.decode(&ids[..n], out));
        let m = match res {
            Ok(m) => m,
            Err(e) => {
                println!("decode failed: {e}");
                return false;
            }
        };
        match core::str::from_utf8(&out[..m]) {
            Ok(s) => println!("decoded (unknown words and added tokens skipped): {s}"),
            Err(_) => println!("decoded (not UTF-8): {:?}", &out[..m]),
        }
        let per = text.len() * 100 / n.max(1);
        println!(
            "figures: {n} tokens for {} bytes ({}.{:02} bytes/token); peak stack: encode \
             {enc_stack} B, decode {dec_stack} B; tables: {} B in flash; heap: none",
            text.len(),
            per / 100,
            per % 100,
            table_bytes(&TABLES).total()
        );
        m > 0
    }

    /// One line with every id's vocabulary entry between `|` (`##` marks a continuation).
    fn print_pieces(tok: &WpTokenizer<'_>, ids: &[u32]) {
        semihosting::print!("tokens: |");
        for &id in ids {
            let piece = tok.tables().token_bytes(id).unwrap_or(&[]);
            match core::str::from_utf8(piece) {
                Ok(s) => semihosting::print!("{s}|"),
                Err(_) => semihosting::print!("{piece:?}|"),
            }
        }
        println!();
    }

    /// Machine-readable figures for `cargo xtask footprint`.
    pub fn figures() -> bool {
        let tb = table_bytes(&TABLES);
        println!("FIG machine {MACHINE}");
        println!("FIG model {MODEL_FILE}");
        println!("FIG kind wordpiece");
        println!("FIG n_ids {}", TABLES.n_ids());
        println!("FIG n_continuations {}", n_continuations());
        println!("FIG lowercase {}", u8::from(TABLES.lowercase));
        println!("FIG table.token_bytes {}", tb.token_bytes);
        println!("FIG table.token_offsets {}", tb.token_offsets);
        println!("FIG table.starts {}", tb.starts);
        println!("FIG table.continuations {}", tb.continuations);
        println!("FIG table.other {}", tb.other);
        println!("FIG table.total {}", tb.total());
        println!("FIG table.outside_flash {}", tb.outside_flash);
        println!("FIG stack_free_at_main {}", stack::free());
        let Some(p) = cortex_m::Peripherals::take() else {
            return false;
        };
        let mut counter = Counter::calibrate(p.SYST);
        println!("FIG calibration_ticks {}", counter.calibration_ticks());
        let text = texts::BENCH;
        println!("FIG bench_bytes {}", text.len());
        // Output buffers are static: the stack figures are the encoder's and decoder's own.
        // The decoded bench text is longer than the text (a space between all words,
        // punctuation included): 12 KiB.
        let ids = cortex_m::singleton!(: [u32; 4096] = [0; 4096]).unwrap_or_else(|| unreachable());
        let out = cortex_m::singleton!(: [u8; 12288] = [0; 12288]).unwrap_or_else(|| unreachable());
        let tok = tokenizer();
        let (r, enc_stack) = stack::measure(|| tok.encode(text, ids, Specials::All));
        let Ok(n) = r else {
            println!("encode failed: {r:?}");
            return false;
        };
        println!("FIG bench_tokens {n}");
        println!("FIG stack_encode {enc_stack}");
        // WordPiece's decode is not the text (spaces between words only, normalized words):
        // it must succeed and give about as many bytes.
        let (r, dec_stack) = stack::measure(|| tok.decode(&ids[..n], out));
        match r {
            Ok(m) if m > text.len() / 2 => {}
            _ => {
                println!("decode of the bench ids failed: {r:?}");
                return false;
            }
        }
        println!("FIG stack_decode {dec_stack}");
        match counter.instructions(|| tok.encode(text, ids, Specials::All)) {
            Some((Ok(_), i)) => println!("FIG instr_encode {i}"),
            _ => return false,
        }
        match counter.instructions(|| tok.decode(&ids[..n], out)) {
            Some((Ok(_), i)) => println!("FIG instr_decode {i}"),
            _ => return false,
        }
        let empty: &[u8] = &[];
        match counter.instructions(|| tok.encode(empty, ids, Specials::All)) {
            Some((Ok(_), i)) => println!("FIG instr_overhead {i}"),
            _ => return false,
        }
        true
    }
}

fn unreachable() -> ! {
    println!("singleton taken twice");
    process::exit(1)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    semihosting::eprintln!("panic: {info}");
    process::exit(101)
}
