//! GPT-2's reversible byte ↔ Unicode mapping (`bytes_to_unicode` in OpenAI's `encoder.py`),
//! used by HF `vocab.json` / `merges.txt` files to spell arbitrary bytes as printable text.
//!
//! The printable bytes `!`..=`~`, `¡`..=`¬` and `®`..=`ÿ` map to the code point of the same
//! value; the other 68 bytes, in increasing order, map to U+0100, U+0101, ….

/// The character that stands for each byte.
pub fn byte_to_char() -> [char; 256] {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..=255u8 {
        table[b as usize] = if printable(b) {
            char::from(b)
        } else {
            let c = char::from_u32(next).unwrap_or('\0');
            next += 1;
            c
        };
    }
    table
}

/// The inverse mapping: the byte a character stands for, if any.
pub struct ByteDecoder {
    /// Indexed by code point; only code points below 512 are used by the mapping.
    table: [Option<u8>; 512],
}

impl ByteDecoder {
    /// Build the inverse of [`byte_to_char`].
    pub fn new() -> Self {
        let mut table = [None; 512];
        for (b, c) in byte_to_char().iter().enumerate() {
            table[*c as usize] = Some(b as u8);
        }
        ByteDecoder { table }
    }

    /// Decode a vocab string to bytes; `None` if some character is not in the mapping.
    pub fn decode(&self, text: &str) -> Option<Vec<u8>> {
        text.chars()
            .map(|c| self.table.get(c as usize).copied().flatten())
            .collect()
    }
}

impl Default for ByteDecoder {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values_and_bijection() {
        let table = byte_to_char();
        assert_eq!(table[b' ' as usize], 'Ġ');
        assert_eq!(table[b'\n' as usize], 'Ċ');
        assert_eq!(table[0], 'Ā');
        assert_eq!(table[b'A' as usize], 'A');
        assert_eq!(table[0xAD], 'Ń');
        let decoder = ByteDecoder::new();
        let all: String = table.iter().collect();
        assert_eq!(decoder.decode(&all), Some((0..=255u8).collect()));
        assert_eq!(decoder.decode("a b"), None);
    }
}
