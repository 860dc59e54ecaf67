//! Texts built into the firmware.

/// What the demo tokenizes: English, accents, an emoji, digits, a contraction and the special
/// token `<|endoftext|>` (the CS336 special-token fixture's shape).
pub const DEMO: &str = "Hello from a Cortex-M3! picobpe can't allocate, so it encodes \
into your buffer (0 bytes of heap). Héllò hôw are ü? 🙃<|endoftext|>";

/// Held-out English text (8 KB, `sample/bench.txt`) for the speed and stack figures.
pub static BENCH: &[u8] = include_bytes!("../sample/bench.txt");
