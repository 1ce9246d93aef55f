//! The chain node's own definitions (`../shared/reference/structsd/`): where they are,
//! and its `openapi.yml` read as a checker of answers.
//!
//! A test that reads them skips where the folder is absent, and fails under CI.

use std::path::PathBuf;

use serde_json::{Map, Value};

use structs_console::entity::records::NEWER_FIELDS;

/// The reference folder, or `None` (and a line saying why) where it is absent; under
/// CI an absent folder fails the test.
pub fn structsd() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/structsd");
    if dir.join("openapi.yml").is_file() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "{} is missing: CI runs with shared/ beside the clone",
            dir.display()
        );
    }
    eprintln!("skipped: {} is absent", dir.display());
    None
}

/// The node's OpenAPI document (Swagger 2: `paths` and `definitions`).
pub struct OpenApi {
    doc: Value,
}

impl OpenApi {
    pub fn load() -> Option<OpenApi> {
        let dir = structsd()?;
        let text = std::fs::read_to_string(dir.join("openapi.yml")).expect("openapi.yml reads");
        let doc: Value = serde_norway::from_str(&text).expect("openapi.yml is YAML");
        Some(OpenApi { doc })
    }

    /// The GET paths under `/structs/` and `/blockheight`, as templates.
    pub fn query_paths(&self) -> Vec<String> {
        self.doc["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(p, v)| {
                (p.starts_with("/structs/") || p.as_str() == "/blockheight")
                    && v.get("get").is_some()
            })
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// The schema of a `GET template`'s 200 answer, its `$ref`s resolved.
    pub fn answer_schema(&self, template: &str) -> &Value {
        let path = self.doc["paths"]
            .get(template)
            .unwrap_or_else(|| panic!("openapi.yml has no path {template}"));
        self.resolve(&path["get"]["responses"]["200"]["schema"])
    }

    /// A schema with its `$ref` followed (`#/definitions/Name`).
    pub fn resolve<'a>(&'a self, mut schema: &'a Value) -> &'a Value {
        while let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let name = r.rsplit('/').next().unwrap_or(r);
            schema = &self.doc["definitions"][name];
        }
        schema
    }

    /// How `v` differs from `schema`: every property present with its JSON type, and
    /// nothing the schema lacks (bar the [`NEWER_FIELDS`] of a later chain release).
    /// Each problem is `path: what`.
    pub fn check(&self, v: &Value, schema: &Value, at: &str, out: &mut Vec<String>) -> usize {
        let schema = self.resolve(schema);
        let mut checks = 1;
        let ty = schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("object");
        match (ty, v) {
            ("object", Value::Object(obj)) => {
                let props = schema["properties"].as_object();
                let empty = Map::new();
                let props = props.unwrap_or(&empty);
                for (name, sub) in props {
                    match obj.get(name) {
                        Some(value) => {
                            checks += self.check(value, sub, &format!("{at}.{name}"), out);
                        }
                        None => out.push(format!("{at}.{name}: missing")),
                    }
                }
                if props.is_empty() && schema.get("additionalProperties").is_some() {
                    return checks;
                }
                for name in obj.keys() {
                    checks += 1;
                    let newer = NEWER_FIELDS.iter().any(|(message, field)| {
                        field == name
                            && (at.ends_with(&format!(".{message}"))
                                || at.contains(&format!(".{message}[")))
                    });
                    if !props.contains_key(name) && !newer {
                        out.push(format!("{at}.{name}: not in the node's answer"));
                    }
                }
            }
            ("array", Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    checks += self.check(item, &schema["items"], &format!("{at}[{i}]"), out);
                }
            }
            ("string", Value::String(s)) => {
                let format = schema.get("format").and_then(Value::as_str);
                if matches!(format, Some("uint64")) && s.parse::<u64>().is_err() {
                    out.push(format!("{at}: {s:?} is not a uint64"));
                }
                if matches!(format, Some("int64")) && s.parse::<i64>().is_err() {
                    out.push(format!("{at}: {s:?} is not an int64"));
                }
                if matches!(format, Some("byte")) {
                    use base64::Engine as _;
                    if base64::engine::general_purpose::STANDARD.decode(s).is_err() {
                        out.push(format!("{at}: {s:?} is not base64"));
                    }
                }
                if let Some(values) = schema.get("enum").and_then(Value::as_array)
                    && !values.iter().any(|e| e == v)
                {
                    out.push(format!("{at}: {s:?} is not one of {values:?}"));
                }
            }
            // `next_key` is bytes: null when there is no next page.
            ("string", Value::Null) if schema.get("format") == Some(&"byte".into()) => {}
            ("boolean", Value::Bool(_)) => {}
            ("integer" | "number", Value::Number(_)) => {}
            (ty, other) => {
                let text = other.to_string();
                let short: String = text.chars().take(40).collect();
                out.push(format!("{at}: expected {ty}, found {short}"));
            }
        }
        checks
    }
}
