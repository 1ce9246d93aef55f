//! Forms built from a JSON Schema: a tool's input, a prompt's arguments, a resource
//! template's variables, a server's elicitation. Each field is typed as its schema
//! says and checked as it is typed; a field may carry completions the server offered.

use serde_json::{Map, Value};

/// What a form field takes, from its schema.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    Text,
    Integer,
    Number,
    Boolean,
    /// One of these strings.
    Choice(Vec<String>),
    /// Anything else, typed as JSON: `array`, `object`, or `any` (several types or
    /// none given).
    Json(&'static str),
}

impl Kind {
    pub(super) fn of(schema: &Value) -> Kind {
        // A choice of titled values (`oneOf` of `const`s) is a choice of the values.
        if let Some(options) = schema.get("oneOf").and_then(Value::as_array)
            && !options.is_empty()
            && options
                .iter()
                .all(|o| o.get("const").is_some_and(Value::is_string))
        {
            return Kind::Choice(
                options
                    .iter()
                    .filter_map(|o| o["const"].as_str().map(str::to_string))
                    .collect(),
            );
        }
        if let Some(options) = schema.get("enum").and_then(Value::as_array)
            && options.iter().all(Value::is_string)
        {
            return Kind::Choice(
                options
                    .iter()
                    .filter_map(|o| o.as_str().map(str::to_string))
                    .collect(),
            );
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => Kind::Text,
            Some("integer") => Kind::Integer,
            Some("number") => Kind::Number,
            Some("boolean") => Kind::Boolean,
            Some("array") => Kind::Json("array"),
            Some("object") => Kind::Json("object"),
            _ => Kind::Json("any"),
        }
    }

    pub(super) fn label(&self) -> &'static str {
        match self {
            Kind::Text => "string",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Boolean => "boolean",
            Kind::Choice(_) => "choice",
            Kind::Json(label) => label,
        }
    }
}

/// One argument of the form.
#[derive(Debug, Clone)]
pub(super) struct Field {
    pub(super) name: String,
    pub(super) kind: Kind,
    pub(super) required: bool,
    pub(super) description: String,
    /// The schema's default, shown while the field is empty.
    pub(super) default: Option<Value>,
    pub(super) text: String,
}

impl Field {
    /// The name, with `*` when the argument is required.
    pub(super) fn label(&self) -> String {
        format!("{}{}", self.name, if self.required { "*" } else { "" })
    }

    /// The description, with the choices and the default when the schema gives them.
    pub(super) fn about(&self) -> String {
        let mut about = self.description.clone();
        if let Kind::Choice(options) = &self.kind {
            about = format!("{about} [{}]", options.join("|"));
        }
        if let Some(d) = &self.default {
            about = format!("{about} (default {d})");
        }
        about
    }

    /// The field's value, `None` when empty (the argument is left out), or why the
    /// text is not a value of its kind.
    pub(super) fn value(&self) -> Result<Option<Value>, String> {
        let text = self.text.trim();
        if text.is_empty() {
            return Ok(None);
        }
        let value = match &self.kind {
            Kind::Text => Value::String(self.text.clone()),
            Kind::Integer => match text.replace('_', "").parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => match text.parse::<u64>() {
                    Ok(n) => Value::from(n),
                    Err(_) => return Err("not a whole number".into()),
                },
            },
            Kind::Number => match text
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
            {
                Some(n) => Value::Number(n),
                None => return Err("not a number".into()),
            },
            Kind::Boolean => match text.to_ascii_lowercase().as_str() {
                "true" | "yes" | "y" | "1" => Value::Bool(true),
                "false" | "no" | "n" | "0" => Value::Bool(false),
                _ => return Err("true or false".into()),
            },
            Kind::Choice(options) => {
                if !options.iter().any(|o| o == text) {
                    return Err(format!("one of {}", options.join(", ")));
                }
                Value::String(text.to_string())
            }
            Kind::Json(_) => serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?,
        };
        Ok(Some(value))
    }
}

/// The fields of a tool's input schema: the required ones first, each group by name.
pub(super) fn form_fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut fields: Vec<Field> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, prop)| Field {
                    name: name.clone(),
                    kind: Kind::of(prop),
                    required: required.contains(&name.as_str()),
                    description: prop
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    default: prop.get("default").cloned(),
                    text: String::new(),
                })
                .collect()
        })
        .unwrap_or_default();
    fields.sort_by(|a, b| b.required.cmp(&a.required).then(a.name.cmp(&b.name)));
    fields
}

/// The arguments a form makes, or the first field whose text is not a value.
pub(super) fn form_arguments(fields: &[Field]) -> Result<Value, (String, String)> {
    let mut args = Map::new();
    for f in fields {
        match f.value() {
            Ok(Some(v)) => {
                args.insert(f.name.clone(), v);
            }
            Ok(None) => {}
            Err(why) => return Err((f.name.clone(), why)),
        }
    }
    Ok(Value::Object(args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_form_follows_the_schema_and_types_its_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "An id."},
                "depth": {"type": "integer", "default": 1},
                "ratio": {"type": "number"},
                "deep": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["none", "all"]},
                "filter": {"type": "object"}
            },
            "required": ["id"]
        });
        let mut fields = form_fields(&schema);
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["id", "deep", "depth", "filter", "mode", "ratio"]);
        assert!(fields[0].required);
        assert_eq!(fields[2].default, Some(json!(1)));
        assert_eq!(form_arguments(&fields).unwrap(), json!({}));
        let set = |fields: &mut Vec<Field>, name: &str, text: &str| {
            fields.iter_mut().find(|f| f.name == name).unwrap().text = text.into();
        };
        set(&mut fields, "id", "1-1");
        set(&mut fields, "deep", "yes");
        set(&mut fields, "depth", "2");
        set(&mut fields, "filter", r#"{"kind": "player"}"#);
        set(&mut fields, "mode", "all");
        set(&mut fields, "ratio", "0.5");
        assert_eq!(
            form_arguments(&fields).unwrap(),
            json!({"id": "1-1", "deep": true, "depth": 2, "filter": {"kind": "player"},
                   "mode": "all", "ratio": 0.5})
        );
        set(&mut fields, "depth", "two");
        assert_eq!(
            form_arguments(&fields).unwrap_err(),
            ("depth".to_string(), "not a whole number".to_string())
        );
        set(&mut fields, "depth", "");
        set(&mut fields, "mode", "some");
        assert_eq!(form_arguments(&fields).unwrap_err().1, "one of none, all");
        set(&mut fields, "mode", "");
        set(&mut fields, "filter", "{");
        assert!(
            form_arguments(&fields)
                .unwrap_err()
                .1
                .starts_with("not JSON")
        );
    }
}
