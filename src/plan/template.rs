//! Step references inside parameter strings: parsing and resolution.
//!
//! A string in a step's `params` may hold references:
//!
//! - `${step[N].path}`: step `N` (0-based position in `steps`);
//! - `${steps.NAME.path}`: the step whose `id` is `NAME`;
//! - `${input.NAME.path}`: the plan's (or workflow's) inputs.
//!
//! A path is dotted fields and bracketed parts: `data.players[0].Player.id`,
//! `data.references["2-1"].owner` (quoted keys for anything a dot would split or that is
//! not a plain name), `[-1]` for the last item, and `.length` on an array for its
//! length. `$${` writes a literal `${`.
//!
//! A string that is exactly one reference becomes the referenced value with its JSON
//! type; references inside a longer string are interpolated (strings as they are,
//! anything else as compact JSON). What a step reference sees is the step's view:
//! `{"success": bool, "data": the tool's result, "error": the error object or null}`.

use std::fmt;

use serde_json::Value;

/// What a reference starts from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Root {
    /// `step[N]`.
    Index(usize),
    /// `steps.NAME`.
    Named(String),
    /// `input.NAME`.
    Input(String),
}

/// One part of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(i64),
}

/// One parsed `${...}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub root: Root,
    pub path: Vec<Seg>,
    /// The text between `${` and `}`, as written.
    pub text: String,
}

/// A parsed string: literal text and references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    Text(String),
    Ref(Reference),
}

/// A parsed parameter string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub parts: Vec<Part>,
}

/// Why a string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset of the `${` that starts the bad reference.
    pub at: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.at, self.message)
    }
}

impl Template {
    /// Parses `s`. `Ok(None)` when it holds no reference and no escape (the common case,
    /// kept as the original string).
    pub fn parse(s: &str) -> Result<Option<Template>, SyntaxError> {
        if !s.contains("${") {
            return Ok(None);
        }
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut rest = s;
        let mut offset = 0;
        while let Some(pos) = rest.find("${") {
            if pos > 0 && rest.as_bytes()[pos - 1] == b'$' {
                // `$${` is a literal `${`: keep everything before the extra `$`.
                text.push_str(&rest[..pos - 1]);
                text.push_str("${");
                rest = &rest[pos + 2..];
                offset += pos + 2;
                continue;
            }
            text.push_str(&rest[..pos]);
            let body_start = pos + 2;
            let Some(len) = closing_brace(&rest[body_start..]) else {
                return Err(SyntaxError {
                    at: offset + pos,
                    message: "a reference is not closed with '}' (write $${ for a literal ${)"
                        .into(),
                });
            };
            let body = &rest[body_start..body_start + len];
            let reference = parse_reference(body).map_err(|message| SyntaxError {
                at: offset + pos,
                message,
            })?;
            if !text.is_empty() {
                parts.push(Part::Text(std::mem::take(&mut text)));
            }
            parts.push(Part::Ref(reference));
            let consumed = body_start + len + 1;
            rest = &rest[consumed..];
            offset += consumed;
        }
        text.push_str(rest);
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Some(Template { parts }))
    }

    /// The references, in order.
    pub fn references(&self) -> impl Iterator<Item = &Reference> {
        self.parts.iter().filter_map(|p| match p {
            Part::Ref(r) => Some(r),
            Part::Text(_) => None,
        })
    }

    /// True when the string is exactly one reference (the value keeps its JSON type).
    pub fn is_whole(&self) -> bool {
        matches!(self.parts.as_slice(), [Part::Ref(_)])
    }
}

/// The length of a reference body up to its `}`, skipping braces inside quoted keys.
fn closing_brace(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '}' => return Some(i),
                _ => {}
            },
        }
    }
    None
}

fn parse_reference(body: &str) -> Result<Reference, String> {
    let text = body.to_string();
    let mut p = PathParser {
        s: body.trim(),
        i: 0,
    };
    let root = if p.eat("step[") {
        let n = p.integer()?;
        p.expect(']')?;
        let n = usize::try_from(n).map_err(|_| format!("step[{n}]: a step index is 0 or more"))?;
        Root::Index(n)
    } else if p.eat("steps.") {
        Root::Named(p.name()?)
    } else if p.eat("steps[") {
        let name = p.quoted()?;
        p.expect(']')?;
        Root::Named(name)
    } else if p.eat("input.") || p.eat("inputs.") {
        Root::Input(p.name()?)
    } else {
        let start: String = p.s.chars().take(24).collect();
        return Err(format!(
            "${{{start}}} is not a reference: use ${{step[N].path}}, ${{steps.NAME.path}} or \
             ${{input.NAME}} (write $${{ for a literal ${{)"
        ));
    };
    let path = p.segments()?;
    Ok(Reference { root, path, text })
}

struct PathParser<'a> {
    s: &'a str,
    i: usize,
}

impl PathParser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.i..]
    }

    fn eat(&mut self, prefix: &str) -> bool {
        if self.rest().starts_with(prefix) {
            self.i += prefix.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.rest().starts_with(c) {
            self.i += c.len_utf8();
            Ok(())
        } else {
            Err(format!(
                "expected '{c}' at {:?} in {:?}",
                self.rest().chars().take(12).collect::<String>(),
                self.s
            ))
        }
    }

    fn integer(&mut self) -> Result<i64, String> {
        let rest = self.rest();
        let len = rest
            .char_indices()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
            .count();
        let digits = &rest[..len];
        let n = digits
            .parse::<i64>()
            .map_err(|_| format!("expected a whole number in brackets in {:?}", self.s))?;
        self.i += len;
        Ok(n)
    }

    /// A plain name: up to the next `.`, `[` or the end.
    fn name(&mut self) -> Result<String, String> {
        let rest = self.rest();
        let len = rest.find(['.', '[', ']']).unwrap_or(rest.len());
        let name = rest[..len].trim().to_string();
        if name.is_empty() {
            return Err(format!("an empty name in {:?}", self.s));
        }
        self.i += len;
        Ok(name)
    }

    fn quoted(&mut self) -> Result<String, String> {
        let rest = self.rest();
        let mut chars = rest.char_indices();
        let q = match chars.next() {
            Some((_, c @ ('"' | '\''))) => c,
            _ => return Err(format!("expected a quoted key in {:?}", self.s)),
        };
        let mut out = String::new();
        let mut escaped = false;
        for (i, c) in chars {
            if escaped {
                out.push(c);
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                self.i += i + 1;
                return Ok(out);
            } else {
                out.push(c);
            }
        }
        Err(format!("a quoted key is not closed in {:?}", self.s))
    }

    fn segments(&mut self) -> Result<Vec<Seg>, String> {
        let mut segs = Vec::new();
        while !self.rest().is_empty() {
            if self.eat(".") {
                segs.push(Seg::Key(self.name()?));
            } else if self.eat("[") {
                if self.rest().starts_with(['"', '\'']) {
                    segs.push(Seg::Key(self.quoted()?));
                } else {
                    segs.push(Seg::Index(self.integer()?));
                }
                self.expect(']')?;
            } else {
                return Err(format!(
                    "expected '.' or '[' at {:?} in {:?}",
                    self.rest().chars().take(12).collect::<String>(),
                    self.s
                ));
            }
        }
        Ok(segs)
    }
}

impl fmt::Display for Seg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Seg::Key(k) if is_plain(k) => write!(f, ".{k}"),
            Seg::Key(k) => write!(f, "[{}]", Value::String(k.clone())),
            Seg::Index(i) => write!(f, "[{i}]"),
        }
    }
}

fn is_plain(k: &str) -> bool {
    !k.is_empty()
        && k.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

impl Root {
    /// How the root is written (`step[0]`, `steps.players`, `input.player_id`).
    pub fn label(&self) -> String {
        match self {
            Root::Index(i) => format!("step[{i}]"),
            Root::Named(n) if is_plain(n) => format!("steps.{n}"),
            Root::Named(n) => format!("steps[{}]", Value::String(n.clone())),
            Root::Input(n) => format!("input.{n}"),
        }
    }
}

impl Reference {
    /// The reference written back up to `upto` path segments (`step[0].data.players`).
    pub fn prefix(&self, upto: usize) -> String {
        let mut s = self.root.label();
        for seg in self.path.iter().take(upto) {
            s.push_str(&seg.to_string());
        }
        s
    }
}

/// Why a path found nothing: the prefix that did exist, the part that did not, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The reference up to and including the part that is missing.
    pub at: String,
    /// The part that was missing (`players`, `[5]`).
    pub part: String,
    pub reason: String,
}

/// Follows `path` from `value`.
///
/// Where the path as written finds nothing but exactly one other reading fits, that
/// reading is taken and described in `readings` (agents' planners write references in
/// these shapes, after the examples they were taught with):
/// - `[N]` on an object holding exactly one array reads that array's item
///   (`data[0]` on a list result is `data.players[0]`);
/// - a field missing from a record wrapped the chain's way (`{"Player": {...},
///   "gridAttributes": {...}}`) is read inside its one wrapper when the wrapper has it
///   (`players[0].id` is `players[0].Player.id`).
///
/// When no reading or more than one fits, the walk fails and says why, as written.
pub fn walk<'a>(
    reference: &Reference,
    value: &'a Value,
    skip: usize,
    readings: &mut Vec<Reading>,
) -> Result<WalkResult<'a>, Missing> {
    let mut at = value;
    // The path as it was actually read, when a reading changed it.
    let mut read = reference.prefix(skip);
    for (n, seg) in reference.path.iter().enumerate().skip(skip) {
        let here = reference.prefix(n);
        let missing = |reason: String| Missing {
            at: reference.prefix(n + 1),
            part: seg.to_string().trim_start_matches('.').to_string(),
            reason,
        };
        match (seg, at) {
            (Seg::Key(k), Value::Object(map)) => match map.get(k) {
                Some(v) => at = v,
                None => {
                    if let Some((wrapper, v)) = in_wrapper(map, k) {
                        readings.push(Reading {
                            written: reference.prefix(n + 1),
                            read: format!("{read}.{wrapper}{seg}"),
                        });
                        read = format!("{read}.{wrapper}");
                        at = v;
                    } else {
                        let mut keys: Vec<&str> = map.keys().map(String::as_str).take(12).collect();
                        keys.sort_unstable();
                        let listed = if keys.is_empty() {
                            "it is an empty object".to_string()
                        } else {
                            format!("its fields are {}", keys.join(", "))
                        };
                        return Err(missing(format!("{here} has no field {k:?}; {listed}")));
                    }
                }
            },
            (Seg::Key(k), Value::Array(items)) if k == "length" => {
                return Ok(WalkResult::Length(items.len(), n + 1));
            }
            (Seg::Index(i), Value::Array(items)) => {
                at = item(items, *i).ok_or_else(|| missing(no_item(&here, *i, items.len())))?;
            }
            (Seg::Index(i), Value::Object(map)) => {
                let mut arrays = map.iter().filter(|(_, v)| v.is_array());
                match (arrays.next(), arrays.next()) {
                    (Some((key, Value::Array(items))), None) => {
                        let field = Seg::Key(key.clone());
                        let there = format!("{here}{field}");
                        at = item(items, *i)
                            .ok_or_else(|| missing(no_item(&there, *i, items.len())))?;
                        readings.push(Reading {
                            written: reference.prefix(n + 1),
                            read: format!("{read}{field}{seg}"),
                        });
                        read.push_str(&field.to_string());
                    }
                    (None, _) => {
                        return Err(missing(format!(
                            "{here} is an object, not an array, so it has no item [{i}]; use .field or [\"key\"]"
                        )));
                    }
                    _ => {
                        let mut lists: Vec<&str> = map
                            .iter()
                            .filter(|(_, v)| v.is_array())
                            .map(|(k, _)| k.as_str())
                            .collect();
                        lists.sort_unstable();
                        return Err(missing(format!(
                            "{here} is an object, not an array, so it has no item [{i}]; it holds several lists ({}), so name one: {here}.{}[{i}]",
                            lists.join(", "),
                            lists[0]
                        )));
                    }
                }
            }
            (Seg::Key(k), Value::Array(items)) => {
                return Err(missing(format!(
                    "{here} is an array of {} items, not an object, so it has no field {k:?}; use [N]",
                    items.len()
                )));
            }
            (_, other) => {
                return Err(missing(format!(
                    "{here} is {}, which has no {}",
                    describe(other),
                    match seg {
                        Seg::Key(k) => format!("field {k:?}"),
                        Seg::Index(i) => format!("item [{i}]"),
                    }
                )));
            }
        }
        read.push_str(&seg.to_string());
    }
    Ok(WalkResult::Value(at))
}

/// A path read another way than it was written (see [`walk`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The reference up to the part read another way (`step[0].data[0]`).
    pub written: String,
    /// How that part was read (`step[0].data.players[0]`).
    pub read: String,
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} read as {}", self.written, self.read)
    }
}

/// Item `i` of `items` (negative from the end).
fn item(items: &[Value], i: i64) -> Option<&Value> {
    let len = items.len() as i64;
    let idx = if i < 0 { len + i } else { i };
    (0..len).contains(&idx).then(|| &items[idx as usize])
}

fn no_item(here: &str, i: i64, len: usize) -> String {
    let span = if len == 0 {
        "it is empty".to_string()
    } else {
        format!("it has {len} items (0 to {}, or -{len} to -1)", len - 1)
    };
    format!("{here} has no item [{i}]: {span}")
}

/// `k` inside the record's one chain wrapper (`Player`, `Planet`, …), when the record
/// has exactly one and the wrapper has `k`.
fn in_wrapper<'a>(
    map: &'a serde_json::Map<String, Value>,
    k: &str,
) -> Option<(&'a str, &'a Value)> {
    let mut wrappers = map.iter().filter(|(key, v)| {
        v.is_object() && crate::entity::EntityKind::from_rest_key(key).is_some()
    });
    let (wrapper, inner) = wrappers.next()?;
    if wrappers.next().is_some() {
        return None;
    }
    Some((wrapper.as_str(), inner.get(k)?))
}

/// Where a walk ended.
pub enum WalkResult<'a> {
    Value(&'a Value),
    /// `.length` of an array, and the number of segments used (a path may not go on
    /// after it).
    Length(usize, usize),
}

/// `null`, `a string`, `a number` … for messages.
pub fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value as it reads inside a longer string.
pub fn interpolate(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Reference {
        let t = Template::parse(s).unwrap().unwrap();
        assert!(t.is_whole(), "{s}");
        t.references().next().unwrap().clone()
    }

    #[test]
    fn plain_strings_are_not_templates() {
        assert_eq!(Template::parse("5-12").unwrap(), None);
        assert_eq!(Template::parse("costs $5 {not a ref}").unwrap(), None);
    }

    #[test]
    fn the_three_roots_and_every_path_form_parse() {
        let r = one("${step[0].data[0].id}");
        assert_eq!(r.root, Root::Index(0));
        assert_eq!(
            r.path,
            vec![
                Seg::Key("data".into()),
                Seg::Index(0),
                Seg::Key("id".into())
            ]
        );
        let r = one("${steps.players.data.references[\"2-1\"].owner}");
        assert_eq!(r.root, Root::Named("players".into()));
        assert_eq!(r.path[2], Seg::Key("2-1".into()));
        assert_eq!(r.path[3], Seg::Key("owner".into()));
        let r = one("${step[3].data.items[-1]}");
        assert_eq!(r.path[2], Seg::Index(-1));
        let r = one("${input.player_id}");
        assert_eq!(r.root, Root::Input("player_id".into()));
        assert!(r.path.is_empty());
        let r = one("${steps['odd name'].data['a}b']}");
        assert_eq!(r.root, Root::Named("odd name".into()));
        assert_eq!(r.path[1], Seg::Key("a}b".into()));
        assert_eq!(r.prefix(2), "steps[\"odd name\"].data[\"a}b\"]");
    }

    #[test]
    fn escapes_and_interpolation_split_into_parts() {
        let t = Template::parse("cost $${x} for ${step[1].data.n} of $${step[0]}")
            .unwrap()
            .unwrap();
        assert_eq!(t.parts.len(), 3);
        assert_eq!(t.parts[0], Part::Text("cost ${x} for ".into()));
        assert!(matches!(&t.parts[1], Part::Ref(r) if r.root == Root::Index(1)));
        assert_eq!(t.parts[2], Part::Text(" of ${step[0]}".into()));
        assert!(!t.is_whole());
        // Only an escape: a template of one literal part.
        let t = Template::parse("$${step[0].data}").unwrap().unwrap();
        assert_eq!(t.parts, vec![Part::Text("${step[0].data}".into())]);
    }

    #[test]
    fn bad_references_are_syntax_errors_with_a_position() {
        for (s, needle) in [
            ("${step[0].data", "not closed"),
            ("id ${HOME}", "is not a reference"),
            ("${step[x].data}", "whole number"),
            ("${step[-1].data}", "0 or more"),
            ("${steps.}", "empty name"),
            ("${step[0].data[\"2-1}", "not closed"),
            ("${step[0]data}", "expected '.' or '['"),
        ] {
            let e = Template::parse(s).unwrap_err();
            assert!(e.message.contains(needle), "{s}: {}", e.message);
        }
        assert_eq!(Template::parse("ab ${HOME}").unwrap_err().at, 3);
    }

    #[test]
    fn walking_names_the_missing_part() {
        let v = serde_json::json!({"data": {"players": [{"id": "1-1"}, {"id": "1-2"}], "n": 3}});
        let r = one("${step[0].data.players[-1].id}");
        assert!(matches!(walk(&r, &v, 0), Ok(WalkResult::Value(x)) if x == "1-2"));
        let r = one("${step[0].data.players[2].id}");
        let m = walk(&r, &v, 0).err().unwrap();
        assert_eq!(m.part, "[2]");
        assert_eq!(m.at, "step[0].data.players[2]");
        assert!(m.reason.contains("has 2 items"), "{}", m.reason);
        let r = one("${step[0].data.player}");
        let m = walk(&r, &v, 0).err().unwrap();
        assert_eq!(m.part, "player");
        assert!(m.reason.contains("n, players"), "{}", m.reason);
        let r = one("${step[0].data.n.x}");
        assert!(walk(&r, &v, 0).err().unwrap().reason.contains("a number"));
        let r = one("${step[0].data.players.length}");
        assert!(matches!(walk(&r, &v, 0), Ok(WalkResult::Length(2, 3))));
        let r = one("${step[0].data.n[0]}");
        assert!(walk(&r, &v, 0).err().unwrap().reason.contains("a number"));
    }

    fn walk<'a>(r: &Reference, v: &'a Value, skip: usize) -> Result<WalkResult<'a>, Missing> {
        super::walk(r, v, skip, &mut Vec::new())
    }

    #[test]
    fn the_shapes_agents_write_are_read_where_only_one_reading_fits() {
        let v = serde_json::json!({"data": {
            "entity_type": "player",
            "players": [
                {"Player": {"id": "1-1", "guildId": "0-1"}, "gridAttributes": {"ore": "5"}},
                {"Player": {"id": "1-2"}, "gridAttributes": {}}
            ],
            "pagination": {"next_key": null},
        }});
        let mut readings = Vec::new();
        let r = one("${step[0].data[0].id}");
        let got = super::walk(&r, &v, 0, &mut readings);
        assert!(matches!(got, Ok(WalkResult::Value(x)) if x == "1-1"));
        let said: Vec<String> = readings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "step[0].data[0] read as step[0].data.players[0]",
                "step[0].data[0].id read as step[0].data.players[0].Player.id",
            ]
        );
        // Negative indexes and the true length in a miss.
        let r = one("${step[0].data[-1].id}");
        assert!(matches!(walk(&r, &v, 0), Ok(WalkResult::Value(x)) if x == "1-2"));
        let m = walk(&one("${step[0].data[5]}"), &v, 0).err().unwrap();
        assert!(
            m.reason
                .contains("step[0].data.players has no item [5]: it has 2 items"),
            "{}",
            m.reason
        );
        // A field neither the record nor its wrapper has is still missing.
        let m = walk(&one("${step[0].data.players[0].nope}"), &v, 0)
            .err()
            .unwrap();
        assert!(m.reason.contains("has no field \"nope\""), "{}", m.reason);
        // A field outside the wrapper is not looked for in it.
        let r = one("${step[0].data.players[0].gridAttributes.ore}");
        assert!(matches!(walk(&r, &v, 0), Ok(WalkResult::Value(x)) if x == "5"));

        // Two lists: no reading fits, and the message says which lists there are.
        let two = serde_json::json!({"data": {"a": [1], "b": [2]}});
        let m = walk(&one("${step[0].data[0]}"), &two, 0).err().unwrap();
        assert!(m.reason.contains("several lists (a, b)"), "{}", m.reason);
        // No list at all.
        let none = serde_json::json!({"data": {"a": 1}});
        let m = walk(&one("${step[0].data[0]}"), &none, 0).err().unwrap();
        assert!(m.reason.contains("not an array"), "{}", m.reason);
        // Two wrappers: which one is meant is not known.
        let both = serde_json::json!({"Player": {"id": "1-1"}, "Planet": {"id": "2-1"}});
        let m = walk(&one("${step[0].id}"), &both, 0).err().unwrap();
        assert!(m.reason.contains("has no field \"id\""), "{}", m.reason);
    }
}
