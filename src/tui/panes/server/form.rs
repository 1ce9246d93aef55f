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
    /// Several kinds of value (a type list, an `enum` of strings and others, `oneOf` or
    /// `anyOf`), or any: typed as JSON, and a bare word taken as that string where an
    /// alternative allows it (`all` for `false`/`true`/`"all"`/`"primary"`).
    Mixed(Vec<Alternative>),
}

/// One alternative of a schema that allows several kinds of value.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Alternative {
    /// The JSON types it takes; `None`: any.
    types: Option<Vec<String>>,
    /// The values it takes (`enum`, `const`); `None`: any of its types.
    values: Option<Vec<Value>>,
}

impl Alternative {
    /// The alternatives of `schema`: each of its `oneOf` or `anyOf`, else itself.
    fn of(schema: &Value) -> Vec<Alternative> {
        let branches = schema
            .get("oneOf")
            .or_else(|| schema.get("anyOf"))
            .and_then(Value::as_array)
            .filter(|b| !b.is_empty());
        if let Some(branches) = branches {
            return branches.iter().flat_map(Alternative::of).collect();
        }
        let types = match schema.get("type") {
            Some(Value::String(t)) => Some(vec![t.clone()]),
            Some(Value::Array(list)) => Some(
                list.iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect(),
            ),
            _ => None,
        };
        let values = match (schema.get("const"), schema.get("enum")) {
            (Some(c), _) => Some(vec![c.clone()]),
            (None, Some(Value::Array(list))) => Some(list.clone()),
            _ => None,
        };
        vec![Alternative { types, values }]
    }

    fn takes(&self, v: &Value) -> bool {
        if let Some(values) = &self.values {
            return values.contains(v);
        }
        let Some(types) = &self.types else {
            return true;
        };
        types.iter().any(|t| match t.as_str() {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "null" => v.is_null(),
            "array" => v.is_array(),
            "object" => v.is_object(),
            _ => true,
        })
    }
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
            && !options.is_empty()
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
            Some("array") if !schema.get("enum").is_some_and(Value::is_array) => {
                Kind::Json("array")
            }
            Some("object") if !schema.get("enum").is_some_and(Value::is_array) => {
                Kind::Json("object")
            }
            _ => Kind::Mixed(Alternative::of(schema)),
        }
    }

    /// The values it takes, when it lists them all (`false|true|all|primary`).
    fn listed(&self) -> Option<Vec<String>> {
        match self {
            Kind::Choice(options) => Some(options.clone()),
            Kind::Mixed(alternatives) => {
                let mut listed = Vec::new();
                for a in alternatives {
                    for v in a.values.as_ref()? {
                        listed.push(v.as_str().map_or_else(|| v.to_string(), str::to_string));
                    }
                }
                Some(listed)
            }
            _ => None,
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
            Kind::Mixed(_) if self.listed().is_some() => "choice",
            Kind::Mixed(_) => "any",
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
    /// What a value must also be: its `format`, length and range.
    pub(super) rules: Rules,
}

/// The checks a schema puts on a value besides its kind: MCP's elicitation schemas
/// give strings a `format` (`email`, `uri`, `date`, `date-time`) and lengths, and
/// numbers a range.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Rules {
    format: Option<String>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    minimum: Option<f64>,
    maximum: Option<f64>,
}

impl Rules {
    pub(super) fn of(schema: &Value) -> Rules {
        Rules {
            format: schema
                .get("format")
                .and_then(Value::as_str)
                .map(str::to_string),
            min_length: schema.get("minLength").and_then(Value::as_u64),
            max_length: schema.get("maxLength").and_then(Value::as_u64),
            minimum: schema.get("minimum").and_then(Value::as_f64),
            maximum: schema.get("maximum").and_then(Value::as_f64),
        }
    }

    /// Why `v` breaks a rule, if it does.
    fn check(&self, v: &Value) -> Result<(), String> {
        if let Some(text) = v.as_str() {
            let chars = text.chars().count() as u64;
            if let Some(min) = self.min_length
                && chars < min
            {
                return Err(format!("at least {min} characters"));
            }
            if let Some(max) = self.max_length
                && chars > max
            {
                return Err(format!("at most {max} characters"));
            }
            if let Some(format) = &self.format {
                check_format(format, text)?;
            }
        }
        if let Some(n) = v.as_f64() {
            if let Some(min) = self.minimum
                && n < min
            {
                return Err(format!("at least {min}"));
            }
            if let Some(max) = self.maximum
                && n > max
            {
                return Err(format!("at most {max}"));
            }
        }
        Ok(())
    }
}

/// Whether `text` is of the string `format` (the formats MCP's elicitation allows;
/// others are not checked).
fn check_format(format: &str, text: &str) -> Result<(), String> {
    let ok = match format {
        "email" => {
            let (local, domain) = text.rsplit_once('@').unwrap_or(("", ""));
            !local.is_empty()
                && !text.chars().any(char::is_whitespace)
                && domain.split('.').count() >= 2
                && domain.split('.').all(|part| !part.is_empty())
        }
        "uri" => {
            // RFC 3986: a scheme (a letter, then letters, digits, `+`, `-`, `.`), a
            // colon, and something after it, with no spaces.
            let (scheme, rest) = text.split_once(':').unwrap_or(("", ""));
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !rest.is_empty()
                && !text.chars().any(char::is_whitespace)
        }
        "date" => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").is_ok(),
        "date-time" => chrono::DateTime::parse_from_rfc3339(text).is_ok(),
        _ => true,
    };
    if ok {
        return Ok(());
    }
    Err(match format {
        "email" => "an email address (name@example.com)".into(),
        "uri" => "a URI (https://example.com/…)".into(),
        "date" => "a date (2026-01-31)".into(),
        "date-time" => "a date and time (2026-01-31T12:00:00Z)".into(),
        other => format!("a {other}"),
    })
}

impl Field {
    /// The name, with `*` when the argument is required.
    pub(super) fn label(&self) -> String {
        format!("{}{}", self.name, if self.required { "*" } else { "" })
    }

    /// The description, with the choices and the default when the schema gives them.
    pub(super) fn about(&self) -> String {
        let mut about = self.description.clone();
        if let Some(options) = self.kind.listed() {
            about = format!("{about} [{}]", options.join("|"));
        }
        if let Some(format) = &self.rules.format {
            about = format!("{about} ({format})");
        }
        if let Some(d) = &self.default {
            about = format!("{about} (default {d})");
        }
        about
    }

    /// Takes a typed character. A boolean field holds a whole word, so what it holds
    /// is always plain: `y`, `t` or `1` make it `true`, `n`, `f` or `0` make it
    /// `false`, and Space turns it over (an empty one to `true`). Other fields append.
    pub(super) fn type_char(&mut self, c: char) {
        if self.kind != Kind::Boolean {
            self.text.push(c);
            return;
        }
        let now = self.value().ok().flatten();
        self.text = match c.to_ascii_lowercase() {
            'y' | 't' | '1' => "true".into(),
            'n' | 'f' | '0' => "false".into(),
            ' ' => (now != Some(Value::Bool(true))).to_string(),
            _ => return,
        };
    }

    /// What an empty field the cursor is on says to type, if anything.
    pub(super) fn placeholder(&self) -> Option<&'static str> {
        (self.kind == Kind::Boolean && self.text.is_empty())
            .then_some("y or n (Space turns it over)")
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
            // A whole number stays whole (`19`, not `19.0`): JSON has one number
            // type, and a server may check it as an integer.
            Kind::Number => match serde_json::from_str::<Value>(text) {
                Ok(n @ Value::Number(_)) => n,
                _ => match text
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                {
                    Some(n) => Value::Number(n),
                    None => return Err("not a number".into()),
                },
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
            Kind::Mixed(alternatives) => {
                let takes = |v: &Value| alternatives.iter().any(|a| a.takes(v));
                let word = Value::String(text.to_string());
                match serde_json::from_str::<Value>(text) {
                    Ok(v) if takes(&v) => v,
                    _ if takes(&word) => word,
                    typed => {
                        return Err(match (self.kind.listed(), typed) {
                            (Some(listed), _) => format!("one of {}", listed.join(", ")),
                            (None, Ok(v)) => format!("{v} is not a value this field takes"),
                            (None, Err(e)) => format!("not JSON: {e}"),
                        });
                    }
                }
            }
        };
        self.rules.check(&value)?;
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
                    rules: Rules::of(prop),
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

    fn field(schema: Value, text: &str) -> Result<Option<Value>, String> {
        let mut fields = form_fields(&json!({"type": "object", "properties": {"f": schema}}));
        fields[0].text = text.into();
        fields[0].value()
    }

    #[test]
    fn a_field_of_several_kinds_takes_a_bare_word_its_schema_allows() {
        // The catalog's own `include_references`.
        let include = json!({"enum": [false, true, "all", "primary"]});
        assert_eq!(field(include.clone(), "all"), Ok(Some(json!("all"))));
        assert_eq!(
            field(include.clone(), "\"primary\""),
            Ok(Some(json!("primary")))
        );
        assert_eq!(field(include.clone(), "true"), Ok(Some(json!(true))));
        assert_eq!(
            field(include.clone(), "some"),
            Err("one of false, true, all, primary".into())
        );
        let fields = form_fields(&json!({"properties": {"f": include}}));
        assert_eq!(fields[0].kind.label(), "choice");
        assert!(fields[0].about().ends_with("[false|true|all|primary]"));
        // The same as `anyOf`, and a field with no type at all.
        let any_of = json!({"anyOf": [{"type": "boolean"},
                                      {"type": "string", "enum": ["all", "primary"]}]});
        assert_eq!(field(any_of.clone(), "all"), Ok(Some(json!("all"))));
        assert_eq!(field(any_of.clone(), "false"), Ok(Some(json!(false))));
        assert!(field(any_of, "most").is_err());
        assert_eq!(field(json!({}), "hello"), Ok(Some(json!("hello"))));
        assert_eq!(field(json!({}), "[1, 2]"), Ok(Some(json!([1, 2]))));
        let no_strings = json!({"type": ["integer", "null"]});
        assert_eq!(field(no_strings.clone(), "7"), Ok(Some(json!(7))));
        assert!(
            field(no_strings, "seven")
                .unwrap_err()
                .starts_with("not JSON")
        );
    }

    #[test]
    fn a_boolean_field_holds_a_whole_word() {
        let mut fields = form_fields(&json!({"properties": {"f": {"type": "boolean"}}}));
        let f = &mut fields[0];
        assert_eq!(f.placeholder(), Some("y or n (Space turns it over)"));
        f.type_char(' ');
        assert_eq!(
            (f.text.as_str(), f.value()),
            ("true", Ok(Some(json!(true))))
        );
        f.type_char(' ');
        assert_eq!(
            (f.text.as_str(), f.value()),
            ("false", Ok(Some(json!(false))))
        );
        f.type_char('Y');
        assert_eq!(f.text, "true");
        f.type_char('x');
        assert_eq!(f.text, "true", "a character that means neither is left out");
        f.type_char('n');
        assert_eq!(f.text, "false");
        assert_eq!(f.placeholder(), None);
        let mut text = form_fields(&json!({"properties": {"f": {"type": "string"}}}));
        text[0].type_char('y');
        text[0].type_char(' ');
        assert_eq!(text[0].text, "y ");
        assert_eq!(text[0].placeholder(), None);
    }

    #[test]
    fn a_whole_number_stays_whole() {
        let sent = field(json!({"type": "number"}), "19").unwrap().unwrap();
        assert_eq!(sent.to_string(), "19");
        let sent = field(json!({"type": "number"}), "2.5").unwrap().unwrap();
        assert_eq!(sent.to_string(), "2.5");
        let sent = field(json!({"type": "integer"}), "19").unwrap().unwrap();
        assert_eq!(sent.to_string(), "19");
        assert!(field(json!({"type": "number"}), "nineteen").is_err());
    }

    #[test]
    fn an_elicitation_field_is_checked_against_its_format_length_and_range() {
        let email = json!({"type": "string", "format": "email"});
        assert!(field(email.clone(), "notanemail").is_err());
        assert!(field(email.clone(), "a@b").is_err());
        assert!(field(email.clone(), "a b@example.com").is_err());
        assert_eq!(
            field(email, "ada@example.com"),
            Ok(Some(json!("ada@example.com")))
        );
        let uri = json!({"type": "string", "format": "uri"});
        assert!(field(uri.clone(), "abc").is_err());
        assert!(field(uri.clone(), "1http://x").is_err());
        assert!(field(uri.clone(), "https://example.com/a b").is_err());
        assert!(field(uri.clone(), "https://example.com/a").is_ok());
        assert!(field(uri, "urn:isbn:0451450523").is_ok());
        let date = json!({"type": "string", "format": "date"});
        assert!(field(date.clone(), "2026-02-30").is_err());
        assert!(field(date, "2026-02-28").is_ok());
        let when = json!({"type": "string", "format": "date-time"});
        assert!(field(when.clone(), "tomorrow").is_err());
        assert!(field(when, "2026-02-28T10:00:00Z").is_ok());
        let name = json!({"type": "string", "minLength": 2, "maxLength": 4});
        assert_eq!(
            field(name.clone(), "a"),
            Err("at least 2 characters".into())
        );
        assert_eq!(
            field(name.clone(), "abcde"),
            Err("at most 4 characters".into())
        );
        assert!(field(name, "abc").is_ok());
        let age = json!({"type": "integer", "minimum": 0, "maximum": 150});
        assert_eq!(field(age.clone(), "-1"), Err("at least 0".into()));
        assert_eq!(field(age.clone(), "151"), Err("at most 150".into()));
        assert_eq!(field(age, "42"), Ok(Some(json!(42))));
    }
}
