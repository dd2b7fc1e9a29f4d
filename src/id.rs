//! Fresh random ids, made in this one place with the `uuid` crate (a version 4 UUID: 122 bits from
//! the kernel's random source through `getrandom`, which needs no `/dev` on Linux). Callers keep
//! the formats their ids already have; only the digits come from here.

use uuid::Uuid;

/// 32 lower-case hex digits: a v4 UUID in its simple form (no dashes, so it fits any id field).
pub fn hex128() -> String {
    Uuid::new_v4().simple().to_string()
}

/// 16 lower-case hex digits, all 64 of their bits random: the two halves of a v4 UUID XORed. The
/// version and variant bits sit at different places in the two halves (bits 12–15 of the first,
/// 62–63 of the second), so each bit of the result has a random bit in it.
pub fn hex64() -> String {
    let (high, low) = Uuid::new_v4().as_u64_pair();
    format!("{:016x}", high ^ low)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower_hex(id: &str) -> bool {
        id.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    }

    #[test]
    fn ids_have_their_length_in_lower_case_hex_and_differ() {
        let (a, b) = (hex128(), hex128());
        assert_eq!(a.len(), 32, "{a}");
        assert!(lower_hex(&a), "{a}");
        assert_ne!(a, b);
        let (a, b) = (hex64(), hex64());
        assert_eq!(a.len(), 16, "{a}");
        assert!(lower_hex(&a), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn no_digit_of_the_short_id_is_fixed() {
        // A UUID's version digit would be '4' every time; XORed with the other half it is not.
        let ids: Vec<String> = (0..64).map(|_| hex64()).collect();
        for position in 0..16 {
            let first = ids[0].as_bytes()[position];
            assert!(
                ids.iter().any(|id| id.as_bytes()[position] != first),
                "digit {position} is always {}",
                first as char
            );
        }
    }
}
