//! The link model: what may point at a doc (`SourceKind` and a normalised source id),
//! how (`Relation`), and who said so (`Origin`). Everything that reads a link from a file
//! or a tool argument goes through the parsers here, so synonyms and legacy spellings
//! become one canonical form and anything unknown is refused with a reason.

use std::fmt;

use crate::entity::struct_types::{struct_type, struct_types};
use crate::entity::{EntityId, EntityKind};

/// How a source relates to the doc it links to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Relation {
    /// The doc informs the source (what an entity, kind or struct type needs explained).
    Informs,
    /// A neighbouring concept.
    Related,
    /// The doc is the history of the source.
    HistoryOf,
    /// The source builds on the doc: read the doc first.
    DependsOn,
    /// A pointer for further reading.
    SeeAlso,
}

impl Relation {
    pub const ALL: [Relation; 5] = [
        Relation::Informs,
        Relation::Related,
        Relation::HistoryOf,
        Relation::DependsOn,
        Relation::SeeAlso,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Informs => "informs",
            Relation::Related => "related",
            Relation::HistoryOf => "history_of",
            Relation::DependsOn => "depends_on",
            Relation::SeeAlso => "see_also",
        }
    }

    /// The names accepted in arguments and files: the canonical five, in any case, with
    /// `-` or spaces for `_`, camelCase, and the synonyms authors reach for.
    pub fn parse(text: &str) -> Result<Relation, String> {
        let key = canonical_key(text);
        let relation = match key.as_str() {
            "informs" | "inform" | "informed_by" | "informing" | "context" | "explains" => {
                Relation::Informs
            }
            "related" | "relates" | "related_to" | "relates_to" | "relation" | "associated"
            | "associated_with" | "rel" => Relation::Related,
            "history_of" | "history" | "historyof" | "history_for" | "historical"
            | "background_of" => Relation::HistoryOf,
            "depends_on" | "depends" | "dependson" | "dependency" | "requires" | "prerequisite"
            | "prereq" | "needs" | "builds_on" => Relation::DependsOn,
            "see_also" | "see" | "seealso" | "also" | "cf" | "further_reading" => Relation::SeeAlso,
            _ => {
                return Err(format!(
                    "unknown relation {text:?}; use one of informs, related, history_of, \
                     depends_on, see_also"
                ));
            }
        };
        Ok(relation)
    }
}

impl fmt::Display for Relation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lowercase with `_` between words: `dependsOn`, `depends-on` and `Depends On` all
/// become `depends_on`.
pub(crate) fn canonical_key(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    let mut prev_lower = false;
    for c in text.trim().chars() {
        if c == '-' || c == ' ' || c == '_' {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            prev_lower = false;
        } else if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        }
    }
    out.trim_end_matches('_').to_string()
}

/// What a link starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SourceKind {
    /// Another reference doc.
    Doc,
    /// One game entity (`1-11`).
    Entity,
    /// Every entity of a kind (`planet`).
    EntityKind,
    /// Every struct of a type (`14`).
    StructType,
}

impl SourceKind {
    pub const ALL: [SourceKind; 4] = [
        SourceKind::Doc,
        SourceKind::Entity,
        SourceKind::EntityKind,
        SourceKind::StructType,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Doc => "doc",
            SourceKind::Entity => "entity",
            SourceKind::EntityKind => "entity_kind",
            SourceKind::StructType => "struct_type",
        }
    }

    pub fn parse(text: &str) -> Result<SourceKind, String> {
        match canonical_key(text).as_str() {
            "doc" | "docs" | "document" | "reference" | "reference_doc" => Ok(SourceKind::Doc),
            "entity" | "entity_id" => Ok(SourceKind::Entity),
            "entity_kind" | "entitykind" | "kind" => Ok(SourceKind::EntityKind),
            "struct_type" | "structtype" | "struct_type_id" => Ok(SourceKind::StructType),
            _ => Err(format!(
                "unknown source kind {text:?}; use one of doc, entity, entity_kind, struct_type"
            )),
        }
    }

    /// The relation a link from this kind of source gets when nobody names one: an
    /// entity, kind or type is informed by a doc; a doc is related to another.
    pub fn default_relation(self) -> Relation {
        match self {
            SourceKind::Doc => Relation::Related,
            _ => Relation::Informs,
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A link's source with its id in canonical form (`1-11`, `planet`, `14`, a doc id).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    pub kind: SourceKind,
    pub id: String,
}

impl Source {
    /// Checks and normalises `id` for `kind`: an entity id as the chain writes it, an
    /// entity kind by its name (or code), a struct type by its number (or name), a doc
    /// id that stays inside the root.
    pub fn new(kind: SourceKind, id: &str) -> Result<Source, String> {
        let id = match kind {
            SourceKind::Doc => normalize_doc_id(id)?,
            SourceKind::Entity => EntityId::parse(id.trim())
                .map_err(|e| format!("{id:?} is not an entity id: {e}"))?
                .to_string(),
            SourceKind::EntityKind => EntityKind::parse_name_or_code(id)
                .ok_or_else(|| {
                    format!(
                        "{id:?} is not an entity kind; kinds are {}",
                        EntityKind::ALL.map(|k| k.name()).join(", ")
                    )
                })?
                .name()
                .to_string(),
            SourceKind::StructType => struct_type_id(id)?.to_string(),
        };
        Ok(Source { kind, id })
    }

    pub fn doc(id: &str) -> Source {
        Source {
            kind: SourceKind::Doc,
            id: id.to_string(),
        }
    }

    /// How the source reads to a person: `player 1-11`, `entity kind planet`,
    /// `struct type 14 (Ore Extractor)`, `doc guides/console`.
    pub fn label(&self) -> String {
        match self.kind {
            SourceKind::Doc => format!("doc {}", self.id),
            SourceKind::Entity => match EntityId::parse(&self.id) {
                Ok(id) => format!("{} {}", id.kind.name(), self.id),
                Err(_) => format!("entity {}", self.id),
            },
            SourceKind::EntityKind => format!("entity kind {}", self.id),
            SourceKind::StructType => match self.id.parse().ok().and_then(struct_type) {
                Some(t) => format!("struct type {} ({})", self.id, t.name),
                None => format!("struct type {}", self.id),
            },
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.id)
    }
}

/// A struct type given by number (`14`) or by name (`Ore Extractor`, `ore_extractor`).
fn struct_type_id(text: &str) -> Result<u8, String> {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return u8::try_from(n)
            .ok()
            .and_then(struct_type)
            .map(|s| s.id)
            .ok_or_else(|| {
                format!(
                    "struct type {n} does not exist; types are 1-{}",
                    struct_types().len()
                )
            });
    }
    let wanted = canonical_key(t);
    struct_types()
        .iter()
        .find(|s| canonical_key(&s.name) == wanted)
        .map(|s| s.id)
        .ok_or_else(|| format!("{t:?} is neither a struct type number nor a struct type name"))
}

/// Who wrote a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// An author (front matter, a sidecar) or a tool (`structs_docs_upsert_link`).
    Explicit,
    /// Derived by sync, from a Markdown link in a doc's body.
    Inferred,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Explicit => "explicit",
            Origin::Inferred => "inferred",
        }
    }
}

/// Longest doc id accepted.
pub const MAX_DOC_ID: usize = 400;

/// Checks that `text` names a doc inside the root and returns it in canonical form:
/// `/`-separated relative segments without `.md`, `./` or empty parts. Refused: absolute
/// paths, `..`, backslashes, drive letters, control characters, hidden segments.
pub fn normalize_doc_id(text: &str) -> Result<String, String> {
    let t = text.trim();
    let t = t.strip_prefix(super::DOC_URI_PREFIX).unwrap_or(t);
    if t.is_empty() {
        return Err("a doc id cannot be empty".into());
    }
    if t.len() > MAX_DOC_ID {
        return Err(format!(
            "a doc id is at most {MAX_DOC_ID} characters, this one has {}",
            t.len()
        ));
    }
    if t.chars().any(char::is_control) {
        return Err("a doc id cannot contain control characters".into());
    }
    if t.contains("://") {
        return Err(format!(
            "{t:?} is a URL; a doc id is a path inside the docs root"
        ));
    }
    if t.contains('\\') {
        return Err(format!("{t:?}: doc ids use / between folders, never \\"));
    }
    if t.starts_with('/') || t.starts_with('~') || t.as_bytes().get(1) == Some(&b':') {
        return Err(format!(
            "{t:?} is an absolute path; a doc id is a path relative to the docs root"
        ));
    }
    let t = t.strip_suffix(".md").unwrap_or(t);
    let mut parts = Vec::new();
    for part in t.split('/') {
        match part {
            "" | "." => continue,
            ".." => {
                return Err(format!(
                    "{text:?} leaves the docs root (`..`); a doc id is a path inside it"
                ));
            }
            p if p.starts_with('.') => {
                return Err(format!("{text:?} names a hidden file or folder ({p:?})"));
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(format!("{text:?} names no document"));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations_normalise_from_their_spellings_and_synonyms() {
        for (text, want) in [
            ("informs", Relation::Informs),
            ("Informed-By", Relation::Informs),
            ("related", Relation::Related),
            ("relatedTo", Relation::Related),
            ("history", Relation::HistoryOf),
            ("historyOf", Relation::HistoryOf),
            ("HISTORY_OF", Relation::HistoryOf),
            ("depends-on", Relation::DependsOn),
            ("dependsOn", Relation::DependsOn),
            ("requires", Relation::DependsOn),
            ("prerequisite", Relation::DependsOn),
            ("see also", Relation::SeeAlso),
            ("seeAlso", Relation::SeeAlso),
            (" see_also ", Relation::SeeAlso),
        ] {
            assert_eq!(Relation::parse(text), Ok(want), "{text:?}");
        }
        for r in Relation::ALL {
            assert_eq!(Relation::parse(r.as_str()), Ok(r));
        }
    }

    #[test]
    fn unknown_relations_are_refused_with_the_allowed_names() {
        for text in ["", "likes", "contradicts", "inform s"] {
            let e = Relation::parse(text).unwrap_err();
            assert!(e.contains("depends_on") && e.contains("see_also"), "{e}");
        }
    }

    #[test]
    fn sources_normalise_their_ids() {
        assert_eq!(
            Source::new(SourceKind::Entity, " 1-11 ").unwrap().id,
            "1-11"
        );
        assert!(Source::new(SourceKind::Entity, "1-0").is_err());
        assert!(Source::new(SourceKind::Entity, "player").is_err());
        assert_eq!(
            Source::new(SourceKind::EntityKind, "Planets").unwrap().id,
            "planet"
        );
        assert_eq!(
            Source::new(SourceKind::EntityKind, "2").unwrap().id,
            "planet"
        );
        assert!(Source::new(SourceKind::EntityKind, "moon").is_err());
        assert_eq!(Source::new(SourceKind::StructType, "14").unwrap().id, "14");
        let by_name = struct_type(14).unwrap().name.clone();
        assert_eq!(
            Source::new(SourceKind::StructType, &by_name).unwrap().id,
            "14"
        );
        assert_eq!(
            Source::new(
                SourceKind::StructType,
                &by_name.to_lowercase().replace(' ', "_")
            )
            .unwrap()
            .id,
            "14"
        );
        assert!(Source::new(SourceKind::StructType, "0").is_err());
        assert!(Source::new(SourceKind::StructType, "23").is_err());
        assert!(Source::new(SourceKind::StructType, "300").is_err());
        assert_eq!(SourceKind::parse("entityKind"), Ok(SourceKind::EntityKind));
        assert!(SourceKind::parse("scene").is_err());
    }

    #[test]
    fn doc_ids_stay_inside_the_root() {
        assert_eq!(
            normalize_doc_id("knowledge/mechanics/building.md").unwrap(),
            "knowledge/mechanics/building"
        );
        assert_eq!(normalize_doc_id("./a//b/./c").unwrap(), "a/b/c");
        assert_eq!(normalize_doc_id("structs://docs/a/b").unwrap(), "a/b");
        for bad in [
            "../secrets",
            "a/../../b",
            "a/..",
            "/etc/passwd",
            "\\\\server\\share",
            "C:/Windows/win.ini",
            "c:secret",
            "~/notes",
            "a/.git/config",
            "",
            "  ",
            ".",
            "a\0b",
            "a\nb",
            "https://github.com/x/y",
        ] {
            assert!(normalize_doc_id(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(normalize_doc_id(&"a/".repeat(300)).is_err());
    }

    #[test]
    fn canonical_keys_join_words_with_underscores() {
        assert_eq!(canonical_key("relatedDocs"), "related_docs");
        assert_eq!(canonical_key("entity-kinds"), "entity_kinds");
        assert_eq!(canonical_key("Struct Types"), "struct_types");
        assert_eq!(canonical_key("seeAlso"), "see_also");
    }
}
