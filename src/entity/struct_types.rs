//! The chain's 22 struct types, embedded from `data/struct-types.json` (genesis values).
//! Static facts of the game, the same on every source; no I/O.

use std::sync::OnceLock;

use serde::Deserialize;

/// The fields of a struct type the world and the tools use. The full record stays
/// available as JSON in [`StructType::raw`].
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StructType {
    pub id: u8,
    #[serde(rename = "type")]
    pub name: String,
    /// `fleet` or `planet`: which kind of location it is built in.
    pub category: String,
    pub build_limit: u32,
    pub build_difficulty: u64,
    pub build_draw: u64,
    pub passive_draw: u64,
    pub max_health: u32,
    /// Reach bitmask of the ambits it can be built in (water 2, land 4, air 8, space 16).
    pub possible_ambit: u32,
    #[serde(skip)]
    pub raw: serde_json::Value,
}

impl StructType {
    pub fn is_fleet(&self) -> bool {
        self.category == "fleet"
    }

    /// The ambits it can be built in, in enum order.
    pub fn ambits(&self) -> Vec<Ambit> {
        Ambit::ALL
            .into_iter()
            .filter(|a| self.possible_ambit & a.bit() != 0)
            .collect()
    }
}

/// The four combat ambits, in the chain's enum order (water 1 .. space 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ambit {
    Water,
    Land,
    Air,
    Space,
}

impl Ambit {
    pub const ALL: [Ambit; 4] = [Ambit::Water, Ambit::Land, Ambit::Air, Ambit::Space];

    /// The reach-bitmask bit (`possibleAmbit`, weapon reach).
    pub fn bit(self) -> u32 {
        match self {
            Ambit::Water => 2,
            Ambit::Land => 4,
            Ambit::Air => 8,
            Ambit::Space => 16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Ambit::Water => "water",
            Ambit::Land => "land",
            Ambit::Air => "air",
            Ambit::Space => "space",
        }
    }

    /// Index into a location's slot arrays (`space`, `air`, `land`, `water` order as the
    /// chain's JSON lists them).
    pub fn slot_row(self) -> usize {
        match self {
            Ambit::Space => 0,
            Ambit::Air => 1,
            Ambit::Land => 2,
            Ambit::Water => 3,
        }
    }
}

const STRUCT_TYPES_JSON: &str = include_str!("../../data/struct-types.json");

/// All 22 struct types, indexed by `id - 1`.
pub fn struct_types() -> &'static [StructType] {
    static TYPES: OnceLock<Vec<StructType>> = OnceLock::new();
    TYPES.get_or_init(|| {
        let raw: Vec<serde_json::Value> =
            serde_json::from_str(STRUCT_TYPES_JSON).expect("embedded struct types are valid JSON");
        raw.into_iter()
            .map(|v| {
                let mut t: StructType =
                    serde_json::from_value(v.clone()).expect("embedded struct type has its fields");
                t.raw = v;
                t
            })
            .collect()
    })
}

/// "a" or "an" for a type's name ("an Ore Extractor", "a Tank").
pub fn article(name: &str) -> &'static str {
    match name.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

pub fn struct_type(id: u8) -> Option<&'static StructType> {
    let types = struct_types();
    types.get(usize::from(id).checked_sub(1)?)
}

/// A whole-number field of a struct type's chain record (0 when absent).
pub fn raw_u64(t: &StructType, key: &str) -> u64 {
    field_u64(&t.raw, key)
}

/// The readers of a struct type's chain record (`raw`), where numbers are plain JSON
/// numbers: a whole number (0 when absent), a flag (false when absent), a text (empty
/// when absent).
pub fn field_u64(raw: &serde_json::Value, key: &str) -> u64 {
    raw.get(key)
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0)
}

pub fn field_bool(raw: &serde_json::Value, key: &str) -> bool {
    raw.get(key)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

pub fn field_str<'a>(raw: &'a serde_json::Value, key: &str) -> &'a str {
    raw.get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twenty_two_types_in_id_order() {
        let types = struct_types();
        assert_eq!(types.len(), 22);
        for (i, t) in types.iter().enumerate() {
            assert_eq!(usize::from(t.id), i + 1);
            assert!(!t.ambits().is_empty(), "{} has no ambit", t.name);
        }
        assert_eq!(struct_type(1).unwrap().name, "Command Ship");
        assert_eq!(struct_type(14).unwrap().name, "Ore Extractor");
        assert!(struct_type(0).is_none() && struct_type(23).is_none());
        assert_eq!(types.iter().filter(|t| t.is_fleet()).count(), 13);
    }
}
