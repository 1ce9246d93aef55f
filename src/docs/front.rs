//! YAML front matter: splitting it from the body, reading the fields a doc may carry
//! (with their legacy spellings), and writing a doc's links back into it without
//! disturbing anything else an author wrote.
//!
//! ```yaml
//! ---
//! title: Mining and refining ore
//! summary: What a doc answers, shown in search hits (or `description`).
//! tags: [mining, ore]
//! type: mechanics                 # optional; inferred from the folder otherwise
//! links:                          # this doc → other docs
//!   - doc: knowledge/mechanics/power
//!     relation: depends_on
//! entities: ["1-11"]              # entities, kinds and struct types this doc informs
//! entity_kinds: [planet]
//! struct_types: [14]
//! ---
//! ```

use serde_norway::{Mapping, Value};

use super::links::{Relation, Source, SourceKind, canonical_key, normalize_doc_id};

/// A file split at its front matter.
#[derive(Debug, Clone, PartialEq)]
pub struct Split<'a> {
    /// The YAML between the fences, when the file has a complete front matter block.
    pub yaml: Option<&'a str>,
    /// Everything after the closing fence (the whole text when there is no block).
    pub body: &'a str,
    /// Byte range of the YAML text within the file.
    pub yaml_range: Option<std::ops::Range<usize>>,
    /// A block that opens but never closes.
    pub unclosed: bool,
}

/// Splits `text` at a front matter block: a first line `---`, then YAML, then a line
/// `---` (or `...`). A byte-order mark and CRLF line ends are accepted.
pub fn split(text: &str) -> Split<'_> {
    let start = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = &text[start..];
    let first_end = match rest.find('\n') {
        Some(i) => i,
        None => {
            return Split {
                yaml: None,
                body: text,
                yaml_range: None,
                unclosed: false,
            };
        }
    };
    if rest[..first_end].trim_end() != "---" {
        return Split {
            yaml: None,
            body: text,
            yaml_range: None,
            unclosed: false,
        };
    }
    let yaml_start = start + first_end + 1;
    let mut pos = yaml_start;
    while pos <= text.len() {
        let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = text[pos..line_end].trim_end();
        if line == "---" || line == "..." {
            let body_start = (line_end + 1).min(text.len());
            return Split {
                yaml: Some(&text[yaml_start..pos]),
                body: &text[body_start..],
                yaml_range: Some(yaml_start..pos),
                unclosed: false,
            };
        }
        if line_end == text.len() {
            break;
        }
        pos = line_end + 1;
    }
    Split {
        yaml: None,
        body: text,
        yaml_range: None,
        unclosed: true,
    }
}

/// One link a file declares, before the index checks its target.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    pub source: Source,
    pub target: String,
    pub relation: Relation,
    /// Where in the file: `links[2]`, `related[0]`, `entity_kinds[1]`.
    pub field: String,
    /// True when the field is a legacy spelling (merged into `links` on the next write).
    pub legacy: bool,
}

/// What a doc's front matter says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    pub title: Option<String>,
    pub summary: Option<String>,
    pub tags: Vec<String>,
    pub doc_type: Option<String>,
    /// Links this doc declares: to other docs (the doc is the source) and from entities,
    /// kinds and struct types (the doc is the target).
    pub links: Vec<Declared>,
    /// Problems that dropped a value or a link but kept the rest.
    pub problems: Vec<String>,
    /// What a rewrite of the links would lose: entries that did not parse, and keys of
    /// an entry other than its target and relation. A tool refuses to rewrite the links
    /// while there is any, so nothing an author wrote disappears.
    pub link_trouble: Vec<String>,
}

/// Fields that list doc ids under a relation named by the field: older spellings of
/// `links`. Merged into `links` (and removed) when a tool writes the doc's links.
const LEGACY_DOC_FIELDS: [(&str, Relation); 10] = [
    ("related", Relation::Related),
    ("related_docs", Relation::Related),
    ("related_references", Relation::Related),
    ("related_doc_ids", Relation::Related),
    ("references", Relation::Related),
    ("see_also", Relation::SeeAlso),
    ("depends_on", Relation::DependsOn),
    ("requires", Relation::DependsOn),
    ("history_of", Relation::HistoryOf),
    ("reference_links", Relation::Related),
];

/// Fields naming what a doc informs, by source kind.
const ENTITY_FIELDS: [(&str, SourceKind); 6] = [
    ("entities", SourceKind::Entity),
    ("linked_entities", SourceKind::Entity),
    ("entity_ids", SourceKind::Entity),
    ("entity_kinds", SourceKind::EntityKind),
    ("kinds", SourceKind::EntityKind),
    ("struct_types", SourceKind::StructType),
];

/// True when `key` (in any spelling) is a legacy form of `links`.
pub fn is_legacy_link_key(key: &str) -> bool {
    let k = canonical_key(key);
    LEGACY_DOC_FIELDS.iter().any(|(name, _)| *name == k)
}

/// Parses front matter YAML for the doc `doc_id`. `Err` is a YAML syntax error or a
/// block that is not a mapping: the doc is then read without metadata.
pub fn parse(yaml: &str, doc_id: &str) -> Result<Meta, String> {
    let value: Value = if yaml.trim().is_empty() {
        Value::Mapping(Mapping::new())
    } else {
        serde_norway::from_str(yaml).map_err(|e| e.to_string())?
    };
    let map = match value {
        Value::Mapping(m) => m,
        Value::Null => Mapping::new(),
        other => {
            return Err(format!(
                "front matter must be a mapping of fields, found {}",
                kind_name(&other)
            ));
        }
    };
    let mut meta = Meta::default();
    let this = Source::doc(doc_id);
    // Canonical `links` first, then the legacy spellings, so that on a pair named twice
    // the canonical entry wins.
    let mut legacy = Vec::new();
    let mut summaries: [Option<String>; 3] = [None, None, None];
    for (k, v) in &map {
        let Some(key) = k.as_str() else { continue };
        let canon = canonical_key(key);
        match canon.as_str() {
            "title" => meta.title = scalar(v, key, &mut meta.problems),
            // `summary`, else `description`, else `meta_description`.
            "summary" => summaries[0] = scalar(v, key, &mut meta.problems),
            "description" => summaries[1] = scalar(v, key, &mut meta.problems),
            "meta_description" => summaries[2] = scalar(v, key, &mut meta.problems),
            "tags" | "keywords" => {
                for t in strings(v, key, &mut meta.problems) {
                    let t = t.trim().to_lowercase();
                    if !t.is_empty() && !meta.tags.contains(&t) {
                        meta.tags.push(t);
                    }
                }
            }
            "type" | "doc_type" => {
                meta.doc_type = scalar(v, key, &mut meta.problems).map(|t| t.to_lowercase());
            }
            "links" => doc_links(v, key, &this, None, false, &mut meta),
            other => {
                if let Some((_, relation)) = LEGACY_DOC_FIELDS.iter().find(|(n, _)| *n == other) {
                    legacy.push((key.to_string(), v.clone(), *relation));
                } else if let Some((_, kind)) = ENTITY_FIELDS.iter().find(|(n, _)| *n == other) {
                    for (i, id) in strings(v, key, &mut meta.problems).iter().enumerate() {
                        match Source::new(*kind, id) {
                            Ok(source) => meta.links.push(Declared {
                                source,
                                target: doc_id.to_string(),
                                relation: Relation::Informs,
                                field: format!("{key}[{i}]"),
                                legacy: false,
                            }),
                            Err(e) => meta.problems.push(format!("{key}[{i}]: {e}")),
                        }
                    }
                }
            }
        }
    }
    meta.summary = summaries.into_iter().flatten().next();
    for (key, v, relation) in legacy {
        doc_links(&v, &key, &this, Some(relation), true, &mut meta);
    }
    Ok(meta)
}

/// Reads a list of doc links: entries are a doc id, or a mapping with the target
/// (`doc`, `target`, `target_doc_id` or `id`) and a `relation`.
fn doc_links(
    v: &Value,
    key: &str,
    this: &Source,
    field_relation: Option<Relation>,
    legacy: bool,
    meta: &mut Meta,
) {
    let items: Vec<&Value> = match v {
        Value::Sequence(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        single => vec![single],
    };
    for (i, item) in items.into_iter().enumerate() {
        let field = format!("{key}[{i}]");
        let problems_before = meta.problems.len();
        doc_link(item, &field, this, field_relation, legacy, meta);
        let new: Vec<String> = meta.problems[problems_before..].to_vec();
        meta.link_trouble.extend(new);
    }
}

/// One entry of a list of doc links.
fn doc_link(
    item: &Value,
    field: &str,
    this: &Source,
    field_relation: Option<Relation>,
    legacy: bool,
    meta: &mut Meta,
) {
    let field = field.to_string();
    let (target, relation) = match item {
        Value::String(s) => (s.clone(), None),
        Value::Mapping(m) => {
            let extra: Vec<String> = m
                .keys()
                .filter_map(|k| k.as_str())
                .filter(|k| {
                    !matches!(
                        canonical_key(k).as_str(),
                        "doc" | "target" | "target_doc_id" | "doc_id" | "id" | "relation" | "rel"
                    )
                })
                .map(str::to_string)
                .collect();
            if !extra.is_empty() {
                meta.link_trouble.push(format!(
                    "{field}: keys a rewrite would not keep ({})",
                    extra.join(", ")
                ));
            }
            let get = |names: &[&str]| {
                m.iter().find_map(|(k, v)| {
                    let k = canonical_key(k.as_str()?);
                    names
                        .contains(&k.as_str())
                        .then(|| v.as_str().map(str::to_string))
                        .flatten()
                })
            };
            let Some(target) = get(&["doc", "target", "target_doc_id", "doc_id", "id"]) else {
                meta.problems
                    .push(format!("{field}: a link needs a `doc` naming its target"));
                return;
            };
            (target, get(&["relation", "rel"]))
        }
        other => {
            meta.problems.push(format!(
                "{field}: a link is a doc id or a mapping, found {}",
                kind_name(other)
            ));
            return;
        }
    };
    let relation = match relation {
        Some(text) => match Relation::parse(&text) {
            Ok(r) => r,
            Err(e) => {
                meta.problems.push(format!("{field}: {e}"));
                return;
            }
        },
        None => field_relation.unwrap_or(Relation::Related),
    };
    match normalize_doc_id(&target) {
        Ok(target) => meta.links.push(Declared {
            source: this.clone(),
            target,
            relation,
            field,
            legacy,
        }),
        Err(e) => meta.problems.push(format!("{field}: {e}")),
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A scalar field as text (numbers and booleans too), or a problem.
fn scalar(v: &Value, key: &str, problems: &mut Vec<String>) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => None,
        other => {
            problems.push(format!("{key}: expected text, found {}", kind_name(other)));
            None
        }
    }
}

/// A list of scalars, or one scalar (a comma-separated string counts as a list).
fn strings(v: &Value, key: &str, problems: &mut Vec<String>) -> Vec<String> {
    match v {
        Value::Sequence(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| scalar(item, &format!("{key}[{i}]"), problems))
            .collect(),
        Value::String(s) => s
            .split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect(),
        other => scalar(other, key, problems).into_iter().collect(),
    }
}

/// The canonical `links:` block for `links` (target, relation), in the order given.
pub fn links_block(links: &[(String, Relation)]) -> String {
    if links.is_empty() {
        return "links: []\n".to_string();
    }
    let mut out = String::from("links:\n");
    for (target, relation) in links {
        out.push_str(&format!(
            "  - doc: {}\n    relation: {}\n",
            yaml_scalar(target),
            relation
        ));
    }
    out
}

/// `text` as a YAML scalar, quoted when plain style could read it as something else.
fn yaml_scalar(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
        && !text.starts_with(['-', '.'])
        && serde_norway::from_str::<Value>(text).ok() == Some(Value::String(text.to_string()));
    if plain {
        text.to_string()
    } else {
        serde_json::to_string(text).unwrap_or_else(|_| format!("{text:?}"))
    }
}

/// Rewrites `text` so that its front matter's `links` field is `links` and no legacy
/// spelling of it remains; every other line of the file is kept as written. A file
/// without front matter gains a block. The result is checked by parsing it again: when
/// the other fields would read differently (YAML this line-based edit cannot follow),
/// nothing is written and the error says why.
pub fn write_links(
    text: &str,
    doc_id: &str,
    links: &[(String, Relation)],
) -> Result<String, String> {
    let block = links_block(links);
    let parts = split(text);
    let Some(range) = parts.yaml_range.clone() else {
        if parts.unclosed {
            return Err(
                "its front matter opens with --- but never closes; fix the file first".into(),
            );
        }
        return Ok(format!("---\n{block}---\n\n{text}"));
    };
    let yaml = &text[range.clone()];
    let before = parse_mapping(yaml)?;
    let edited = replace_top_level(yaml, &block);
    // The other fields must read exactly as before; YAML this line edit cannot follow
    // (a flow collection continued at column 0, say) is refused rather than written
    // out again, which could change how values are spelled.
    let rebuilt = match parse_mapping(&edited) {
        Ok(after) if same_except_links(&before, &after) => edited,
        _ => {
            return Err(
                "its front matter is laid out in a way the link editor cannot rewrite \
                 safely (a link field that continues at the start of a line?); write the \
                 link by hand"
                    .into(),
            );
        }
    };
    let check = parse(&rebuilt, doc_id)?;
    let written: Vec<(String, Relation)> = check
        .links
        .iter()
        .filter(|d| d.source.kind == SourceKind::Doc)
        .map(|d| (d.target.clone(), d.relation))
        .collect();
    if written != links {
        return Err(format!(
            "the rewritten front matter reads back as {written:?}, not the links asked for"
        ));
    }
    Ok(format!(
        "{}{}{}",
        &text[..range.start],
        rebuilt,
        &text[range.end..]
    ))
}

fn is_link_key(key: &str) -> bool {
    canonical_key(key) == "links" || is_legacy_link_key(key)
}

fn parse_mapping(yaml: &str) -> Result<Mapping, String> {
    if yaml.trim().is_empty() {
        return Ok(Mapping::new());
    }
    match serde_norway::from_str::<Value>(yaml).map_err(|e| e.to_string())? {
        Value::Mapping(m) => Ok(m),
        Value::Null => Ok(Mapping::new()),
        _ => Err("front matter is not a mapping of fields".into()),
    }
}

fn same_except_links(a: &Mapping, b: &Mapping) -> bool {
    let strip = |m: &Mapping| {
        let mut m = m.clone();
        m.retain(|k, _| !k.as_str().is_some_and(is_link_key));
        m
    };
    strip(a) == strip(b)
}

/// Replaces the top-level `links` entry (or the first link field, legacy ones
/// included) with `block`, drops the other link fields, appends `block` when there
/// was none. A top-level entry is a line starting a key at column 0 and every
/// following line that is blank, indented, or a `- ` item of a sequence at column 0.
fn replace_top_level(yaml: &str, block: &str) -> String {
    let mut out = String::with_capacity(yaml.len() + block.len());
    let mut placed = false;
    let mut skipping = false;
    for line in yaml.split_inclusive('\n') {
        let starts_entry = line
            .chars()
            .next()
            .is_some_and(|c| !c.is_whitespace() && c != '-' && c != '#');
        if starts_entry {
            let key = line
                .split(':')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\'']);
            skipping = line.contains(':') && is_link_key(key);
            if skipping && !placed {
                out.push_str(block);
                placed = true;
            }
        } else if skipping && line.starts_with('#') {
            skipping = false;
        }
        if !skipping {
            out.push_str(line);
        }
    }
    if !placed {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(block);
    }
    out
}

/// A sidecar file (`*.meta.yaml`): the explicit links of one source that is not a doc,
/// written by `structs_docs_upsert_link`.
///
/// ```yaml
/// source_kind: entity
/// source_id: 1-11
/// links:
///   - doc: knowledge/mechanics/power
///     relation: informs
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Sidecar {
    pub source: Source,
    pub links: Vec<Declared>,
    pub problems: Vec<String>,
}

pub fn parse_sidecar(yaml: &str) -> Result<Sidecar, String> {
    let map = parse_mapping(yaml)?;
    let field = |name: &str| {
        map.iter().find_map(|(k, v)| {
            (canonical_key(k.as_str()?) == name)
                .then(|| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .flatten()
        })
    };
    let kind = field("source_kind").ok_or("a sidecar needs `source_kind`")?;
    let id = field("source_id").ok_or("a sidecar needs `source_id`")?;
    let kind = SourceKind::parse(&kind)?;
    if kind == SourceKind::Doc {
        return Err("a doc keeps its links in its own front matter, not in a sidecar".into());
    }
    let source = Source::new(kind, &id)?;
    let mut meta = Meta::default();
    for k in map.keys().filter_map(|k| k.as_str()) {
        if !matches!(
            canonical_key(k).as_str(),
            "source_kind" | "source_id" | "links"
        ) {
            meta.problems
                .push(format!("unknown key {k:?} (a rewrite would not keep it)"));
        }
    }
    if let Some((k, v)) = map
        .iter()
        .find(|(k, _)| k.as_str().is_some_and(|k| canonical_key(k) == "links"))
    {
        doc_links(
            v,
            k.as_str().unwrap_or("links"),
            &source,
            Some(kind.default_relation()),
            false,
            &mut meta,
        );
    }
    meta.problems.extend(meta.link_trouble.iter().cloned());
    meta.problems.dedup();
    Ok(Sidecar {
        source,
        links: meta.links,
        problems: meta.problems,
    })
}

/// The text of the sidecar holding `links` for `source`.
pub fn sidecar_text(source: &Source, links: &[(String, Relation)]) -> String {
    format!(
        "# Reference links of {}, kept by structs-console (structs_docs_upsert_link).\n\
         # The docs index reads this file on every sync. Edit it by hand or through the\n\
         # tool; the tool writes the whole file again (comments included).\n\
         source_kind: {}\nsource_id: {}\n{}",
        source.label(),
        source.kind,
        yaml_scalar(&source.id),
        links_block(links)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_finds_the_block_and_the_body() {
        let s = split("---\ntitle: A\n---\n# Body\n");
        assert_eq!(s.yaml, Some("title: A\n"));
        assert_eq!(s.body, "# Body\n");
        let s = split("\u{feff}---\r\ntitle: A\r\n---\r\nbody");
        assert_eq!(s.yaml, Some("title: A\r\n"));
        assert_eq!(s.body, "body");
        let s = split("# No front matter\n---\n");
        assert_eq!(s.yaml, None);
        assert!(!s.unclosed);
        let s = split("---\ntitle: never closed\n# Body\n");
        assert_eq!(s.yaml, None);
        assert!(s.unclosed);
        assert_eq!(split("---\n---\nx").yaml, Some(""));
    }

    #[test]
    fn fields_and_their_other_spellings_are_read() {
        let m = parse(
            "title: Power\ndescription: How power works.\ntags: [Energy, power, energy]\n\
             type: Mechanics\nlinks:\n  - doc: a/b\n    relation: dependsOn\n  - c\n\
             seeAlso: [d.md]\nentityKinds: [planet, Player]\nstruct_types: [14, \"Ore Refinery\"]\n\
             entities: [\"1-11\"]\n",
            "x/power",
        )
        .unwrap();
        assert_eq!(m.title.as_deref(), Some("Power"));
        assert_eq!(m.summary.as_deref(), Some("How power works."));
        assert_eq!(m.tags, ["energy", "power"]);
        assert_eq!(m.doc_type.as_deref(), Some("mechanics"));
        let got: Vec<(String, String, Relation, bool)> = m
            .links
            .iter()
            .map(|d| (d.source.to_string(), d.target.clone(), d.relation, d.legacy))
            .collect();
        assert!(got.contains(&(
            "doc:x/power".into(),
            "a/b".into(),
            Relation::DependsOn,
            false
        )));
        assert!(got.contains(&("doc:x/power".into(), "c".into(), Relation::Related, false)));
        assert!(got.contains(&("doc:x/power".into(), "d".into(), Relation::SeeAlso, true)));
        assert!(got.contains(&(
            "entity_kind:planet".into(),
            "x/power".into(),
            Relation::Informs,
            false
        )));
        assert!(got.contains(&(
            "entity_kind:player".into(),
            "x/power".into(),
            Relation::Informs,
            false
        )));
        assert!(got.contains(&(
            "struct_type:14".into(),
            "x/power".into(),
            Relation::Informs,
            false
        )));
        assert!(got.contains(&(
            "entity:1-11".into(),
            "x/power".into(),
            Relation::Informs,
            false
        )));
        assert_eq!(got.len(), 8, "{got:?}");
        // Legacy entries come after the canonical ones.
        assert!(m.links.last().unwrap().legacy);
        assert!(m.problems.is_empty(), "{:?}", m.problems);
    }

    #[test]
    fn bad_entries_are_problems_and_the_rest_is_kept() {
        let m = parse(
            "title: T\nlinks:\n  - doc: ../../etc/passwd\n  - doc: ok\n    relation: loves\n  - doc: fine\n\
             entity_kinds: [moon]\ntags: {a: 1}\n",
            "t",
        )
        .unwrap();
        assert_eq!(m.title.as_deref(), Some("T"));
        assert_eq!(m.links.len(), 1);
        assert_eq!(m.links[0].target, "fine");
        assert_eq!(m.problems.len(), 4, "{:?}", m.problems);
        assert!(
            m.problems
                .iter()
                .any(|p| p.contains("leaves the docs root"))
        );
        assert!(m.problems.iter().any(|p| p.contains("unknown relation")));
    }

    #[test]
    fn malformed_yaml_is_an_error_not_a_panic() {
        assert!(parse("title: [unclosed\n", "x").is_err());
        assert!(parse("- just\n- a list\n", "x").is_err());
        assert!(parse("", "x").unwrap().title.is_none());
    }

    #[test]
    fn writing_links_keeps_everything_else_as_written() {
        let text = "---\n# a comment the author wrote\ntitle: Power   # inline\nrelated:\n  - old/one\nlinks:\n- doc: a\n  relation: see_also\ntags: [x]\nseeAlso: [b]\n---\n# Body\n\nText.\n";
        let links = vec![
            ("a".to_string(), Relation::SeeAlso),
            ("old/one".to_string(), Relation::Related),
            ("b".to_string(), Relation::SeeAlso),
            ("new".to_string(), Relation::DependsOn),
        ];
        let out = write_links(text, "p", &links).unwrap();
        assert!(
            out.contains("# a comment the author wrote\ntitle: Power   # inline\n"),
            "{out}"
        );
        assert!(out.ends_with("---\n# Body\n\nText.\n"), "{out}");
        assert!(
            !out.contains("related:") && !out.contains("seeAlso"),
            "{out}"
        );
        let m = parse(split(&out).yaml.unwrap(), "p").unwrap();
        assert_eq!(m.tags, ["x"]);
        let got: Vec<(String, Relation)> = m
            .links
            .iter()
            .map(|d| (d.target.clone(), d.relation))
            .collect();
        assert_eq!(got, links);
        assert!(m.links.iter().all(|d| !d.legacy));
    }

    #[test]
    fn a_file_without_front_matter_gains_a_block() {
        let out = write_links("# Title\n", "t", &[("x/y".into(), Relation::Related)]).unwrap();
        assert_eq!(
            out,
            "---\nlinks:\n  - doc: x/y\n    relation: related\n---\n\n# Title\n"
        );
        assert!(write_links("---\ntitle: x\n# no end\n", "t", &[]).is_err());
    }

    #[test]
    fn yaml_the_line_edit_cannot_follow_is_refused() {
        // A flow sequence continued at column 0: the line-based edit cannot follow it,
        // and writing the mapping afresh could respell values (1.10 as 1.1).
        let text = "---\ntitle: T\nversion: 1.10\nlinks: [a,\nb]\nsummary: S\n---\nbody";
        let e = write_links(text, "t", &[("b".into(), Relation::Informs)]).unwrap_err();
        assert!(e.contains("by hand"), "{e}");
    }

    #[test]
    fn what_a_rewrite_would_lose_is_noted() {
        let m = parse(
            "links:\n  - doc: a\n    relation: contradicts\n  - doc: b\n    note: keep me\n  - c\n",
            "x",
        )
        .unwrap();
        assert_eq!(m.link_trouble.len(), 2, "{:?}", m.link_trouble);
        assert!(m.link_trouble[0].contains("unknown relation"));
        assert!(m.link_trouble[1].contains("note"));
        let m = parse("references: [\"https://example.com/x\"]\n", "x").unwrap();
        assert!(m.links.is_empty());
        assert_eq!(m.link_trouble.len(), 1, "{:?}", m.link_trouble);
    }

    #[test]
    fn sidecars_round_trip() {
        let source = Source::new(SourceKind::Entity, "1-11").unwrap();
        let links = vec![
            ("a/b".to_string(), Relation::Informs),
            ("c".to_string(), Relation::SeeAlso),
        ];
        let text = sidecar_text(&source, &links);
        let back = parse_sidecar(&text).unwrap();
        assert_eq!(back.source, source);
        let got: Vec<(String, Relation)> = back
            .links
            .iter()
            .map(|d| (d.target.clone(), d.relation))
            .collect();
        assert_eq!(got, links);
        assert!(back.links.iter().all(|d| d.source == source));
        // A struct type's id is a number in YAML; a missing relation is `informs`.
        let s = parse_sidecar("source_kind: struct_type\nsource_id: 14\nlinks: [x]\n").unwrap();
        assert_eq!(s.source.id, "14");
        assert_eq!(s.links[0].relation, Relation::Informs);
        assert!(parse_sidecar("links: []\n").is_err());
        assert!(parse_sidecar("source_kind: scene\nsource_id: 1\n").is_err());
        assert!(parse_sidecar("source_kind: doc\nsource_id: a\n").is_err());
        let odd = parse_sidecar("source_kind: entity\nsource_id: 1-1\nnotes: x\n").unwrap();
        assert_eq!(odd.problems.len(), 1);
    }

    #[test]
    fn odd_targets_are_quoted() {
        assert_eq!(yaml_scalar("a/b-c"), "a/b-c");
        assert_eq!(yaml_scalar("true"), "\"true\"");
        assert_eq!(yaml_scalar("12"), "\"12\"");
        assert_eq!(yaml_scalar("a: b"), "\"a: b\"");
    }
}
