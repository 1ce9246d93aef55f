//! Readers of JSON values shared by every layer.

use serde_json::Value;

/// `value` with every object's keys sorted, all the way down: the same JSON however a
/// writer ordered its keys, for comparing or sealing it.
pub fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// A whole-number argument. JSON Schema counts `2.0` as an integer, so a schema that
/// says `"type": "integer"` lets it through; this reads it as the integer it is.
pub fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
            .map(|f| f as u64)
    })
}

/// An integer as the chain writes it: a string (`"120000"`), or a plain JSON number
/// (GRASS rows, some examples).
pub fn chain_int(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// A chain integer (a string in REST JSON) at `path`.
pub fn chain_u64(v: &Value, path: &[&str]) -> Option<u64> {
    let mut at = v;
    for p in path {
        at = at.get(p)?;
    }
    chain_int(at)
}

/// A string at `path`.
pub fn chain_str<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut at = v;
    for p in path {
        at = at.get(p)?;
    }
    at.as_str()
}

/// How many bytes `v` takes as compact JSON, counted as it is written out, with nothing
/// kept: the size checks (the response limit, a page's budget) run on every answer.
pub fn encoded_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, v) {
        Ok(()) => count.0,
        // Only a map with keys that are not strings fails, which a Value never has.
        Err(_) => usize::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_len_is_the_length_of_the_json_text() {
        let v = serde_json::json!({"a": [1, 2.5, null, true], "quote\"d": "line\nbreak ✓",
                                   "nested": {"deep": [{"x": "\u{1}"}]}});
        assert_eq!(encoded_len(&v), serde_json::to_vec(&v).unwrap().len());
        assert_eq!(encoded_len(&Value::Null), 4);
    }
}
