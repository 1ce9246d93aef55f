//! Unguessable ids: 128 bits from the kernel's random source, written in hex. Session
//! ids, task ids, generated tokens and result handles are made here, so a caller that
//! sees some of them cannot guess another's.

use sha2::{Digest, Sha256};

/// 128 bits from the kernel's random source, as 32 lowercase hex digits.
pub fn hex128() -> String {
    let mut bytes = [0u8; 16];
    // SAFETY: the buffer is ours and its length is given.
    let got = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if got != bytes.len() as isize {
        // No kernel randomness: a hash of what differs between calls.
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seed = format!(
            "{:?} {} {}",
            std::time::SystemTime::now(),
            std::process::id(),
            CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        bytes.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_hex_digits_and_differ() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| hex128()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }
}
