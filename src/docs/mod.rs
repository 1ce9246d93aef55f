//! Reference documents: Markdown files under a docs root, indexed for full-text search,
//! with explicit links (doc → doc, and entity, entity kind or struct type → doc) as the
//! source of truth for what relates to what.
//!
//! The files are the truth. A [`Snapshot`] is everything read from them at one time
//! (docs, declared links, the merged link [`graph::Graph`], the search index, and what
//! was wrong); [`Docs`] holds the current snapshot, builds it on first use, replaces it
//! on [`Docs::sync`], and writes links through to the files ([`Docs::upsert`]) before it
//! updates the snapshot, so an index rebuilt from the files has them.

pub mod front;
pub mod graph;
pub mod links;
pub mod markdown;
mod read;
pub mod search;
pub mod suggest;
mod write;

pub use read::build;
use read::*;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use serde::Serialize;

use crate::error::{ErrorCode, ToolError};
use graph::{Decl, Graph};
use links::{Origin, Relation, Source, SourceKind, normalize_doc_id};
use search::{FullText, Match, Row};

/// Docs as MCP resources: `structs://docs/{doc_id}`.
pub const DOC_URI_PREFIX: &str = "structs://docs/";

/// Where tool-written links of sources that are not docs are kept, under the root:
/// `_links/{source_kind}/{source_id}.meta.yaml`.
pub const SIDECAR_DIR: &str = "_links";
const SIDECAR_SUFFIX: &str = ".meta.yaml";

/// Files larger than this are not read (reported instead).
const MAX_FILE_BYTES: u64 = 4 << 20;
/// Files read from one root at most; a root with more is indexed up to this many.
const MAX_FILES: usize = 20_000;
/// Folders deeper than this are not entered.
const MAX_DEPTH: usize = 24;

// `EMBEDDED_DOCS`: the project's `docs/` folder, (relative path, text), written by build.rs.
include!(concat!(env!("OUT_DIR"), "/embedded_docs.rs"));

/// The folder a doc's type is inferred from when its front matter names none: the
/// longest matching prefix of its id wins.
const TYPE_BY_FOLDER: &[(&str, &str)] = &[
    ("schemas/", "schema"),
    ("api/", "api"),
    ("knowledge/mechanics/", "mechanics"),
    ("knowledge/entities/", "entity"),
    ("knowledge/economy/", "economy"),
    ("knowledge/infrastructure/", "infrastructure"),
    ("knowledge/lore/", "lore"),
    ("knowledge/", "knowledge"),
    ("lore/", "lore"),
    ("guides/", "guide"),
    ("play/", "guide"),
    ("playbooks/", "playbook"),
    ("strategy/", "strategy"),
    ("skills/", "skill"),
    ("reference/", "reference"),
    ("examples/", "example"),
    ("troubleshooting/", "troubleshooting"),
    ("protocols/", "protocol"),
    ("patterns/", "pattern"),
    ("develop/", "development"),
    ("identity/", "identity"),
    ("awareness/", "awareness"),
    ("memory/", "memory"),
    ("visuals/", "visual"),
    ("config/", "config"),
    ("scripts/", "script"),
];

/// A doc's type from its folder: the table above, else its top folder's name, else
/// `general` for a doc at the root.
pub fn infer_type(doc_id: &str) -> String {
    if let Some((_, t)) = TYPE_BY_FOLDER
        .iter()
        .filter(|(prefix, _)| doc_id.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
    {
        return (*t).to_string();
    }
    match doc_id.split_once('/') {
        Some((top, _)) => top.to_lowercase(),
        None => "general".to_string(),
    }
}

/// Where the docs come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Root {
    /// The project's own docs, built into the binary; read-only.
    Embedded,
    /// A folder of Markdown; links are written through to its files.
    Dir(PathBuf),
}

impl Root {
    pub fn describe(&self) -> String {
        match self {
            Root::Embedded => "embedded (the project's own docs)".to_string(),
            Root::Dir(p) => p.display().to_string(),
        }
    }
}

/// Something in the files that was skipped or kept with a problem.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    /// `front_matter`, `link`, `missing_target`, `duplicate_link`, `self_link`,
    /// `sidecar`, `unreadable`, `root`.
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub message: String,
}

impl Warning {
    pub fn new(kind: &'static str, file: Option<&str>, message: impl Into<String>) -> Warning {
        Warning {
            kind,
            file: file.map(str::to_string),
            message: message.into(),
        }
    }
}

/// One reference doc.
#[derive(Debug, Clone)]
pub struct Doc {
    pub id: String,
    /// Its file, relative to the root.
    pub path: String,
    pub title: String,
    /// From the front matter, else the start of the body's first paragraph.
    pub summary: String,
    pub tags: Vec<String>,
    pub doc_type: String,
    /// True when the type came from the folder rather than the front matter.
    pub type_inferred: bool,
    /// The Markdown after the front matter.
    pub body: String,
    /// What comes before the body (the front matter and its fences): the file is
    /// `head` then `body`, byte for byte.
    pub head: String,
    /// Size of the whole file in bytes.
    pub bytes: usize,
    digest: u64,
}

impl Doc {
    pub fn uri(&self) -> String {
        format!("{DOC_URI_PREFIX}{}", self.id)
    }

    /// The file's text as it was read.
    pub fn text(&self) -> String {
        format!("{}{}", self.head, self.body)
    }

    /// About how many tokens the doc costs in a model's context (4 bytes a token).
    pub fn est_tokens(&self) -> usize {
        self.bytes.div_ceil(4)
    }
}

/// The docs and their search index: replaced only by a sync.
struct Corpus {
    docs: BTreeMap<String, Doc>,
    fts: Result<FullText, String>,
}

/// Figures of one build.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct BuildStats {
    pub files: usize,
    pub docs: usize,
    pub sidecars: usize,
    pub build_ms: f64,
}

/// Everything read from the files at one time.
pub struct Snapshot {
    root: Root,
    corpus: Arc<Corpus>,
    /// Declared links, by the file that declares them.
    decls: BTreeMap<String, Vec<Decl>>,
    /// Problems of each file (front matter, links), by file.
    file_warnings: BTreeMap<String, Vec<Warning>>,
    /// Problems with the root as a whole.
    root_warnings: Vec<Warning>,
    /// The sidecar file of each source that has one.
    sidecars: BTreeMap<Source, String>,
    graph: Graph,
    graph_warnings: Vec<Warning>,
    pub stats: BuildStats,
}

/// One search hit.
pub struct Hit<'a> {
    pub doc: &'a Doc,
    pub score: f64,
    pub snippet: String,
}

impl Snapshot {
    pub fn root(&self) -> &Root {
        &self.root
    }

    pub fn docs(&self) -> &BTreeMap<String, Doc> {
        &self.corpus.docs
    }

    pub fn doc(&self, id: &str) -> Option<&Doc> {
        self.corpus.docs.get(id)
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Every warning: the root's, each file's, then the link graph's.
    pub fn warnings(&self) -> impl Iterator<Item = &Warning> {
        self.root_warnings
            .iter()
            .chain(self.file_warnings.values().flatten())
            .chain(self.graph_warnings.iter())
    }

    /// The warnings about one file.
    pub fn warnings_for(&self, file: &str) -> impl Iterator<Item = &Warning> {
        self.file_warnings.get(file).into_iter().flatten().chain(
            self.graph_warnings
                .iter()
                .filter(move |w| w.file.as_deref() == Some(file)),
        )
    }

    /// Full-text search, best first; `doc_type` and `tag` filter the hits.
    pub fn search(
        &self,
        query: &str,
        doc_type: Option<&str>,
        tag: Option<&str>,
        limit: usize,
    ) -> Result<Vec<Hit<'_>>, String> {
        let fts = self.corpus.fts.as_ref().map_err(Clone::clone)?;
        let doc_type = doc_type.map(str::to_lowercase);
        let tag = tag.map(str::to_lowercase);
        let keep = |doc_id: &str| {
            self.doc(doc_id).is_some_and(|doc| {
                doc_type.as_ref().is_none_or(|t| &doc.doc_type == t)
                    && tag.as_ref().is_none_or(|t| doc.tags.contains(t))
            })
        };
        let matches = fts.search(query, limit, keep)?;
        Ok(matches
            .into_iter()
            .filter_map(|m: Match| {
                Some(Hit {
                    doc: self.doc(&m.doc_id)?,
                    score: m.score,
                    snippet: m.snippet,
                })
            })
            .collect())
    }

    /// Up to five doc ids close to `id`, nearest first: by edit distance of the whole
    /// id or of its last segment, within a third of its length (at least 2).
    pub fn similar_ids(&self, id: &str) -> Vec<String> {
        let id = id.to_lowercase();
        let last = id.rsplit('/').next().unwrap_or(&id).to_string();
        let limit = (id.chars().count() / 3).max(2);
        let mut close: Vec<(usize, &String)> = self
            .corpus
            .docs
            .keys()
            .filter_map(|k| {
                let lower = k.to_lowercase();
                let k_last = lower.rsplit('/').next().unwrap_or(&lower);
                let d = crate::text::edit_distance(&id, &lower)
                    .min(crate::text::edit_distance(&last, k_last));
                let contains = last.chars().count() >= 4 && lower.contains(&last);
                (d <= limit || contains).then_some((if contains { d.min(1) } else { d }, k))
            })
            .collect();
        close.sort();
        close.into_iter().take(5).map(|(_, k)| k.clone()).collect()
    }

    /// The categories (doc types) with their docs, in id order.
    pub fn categories(&self) -> BTreeMap<&str, Vec<&Doc>> {
        let mut out: BTreeMap<&str, Vec<&Doc>> = BTreeMap::new();
        for doc in self.corpus.docs.values() {
            out.entry(doc.doc_type.as_str()).or_default().push(doc);
        }
        out
    }

    /// The file holding the explicit links of `source`: a doc's own file, or its
    /// sidecar (the one found on the last read, else the conventional path).
    pub fn link_file(&self, source: &Source) -> Option<String> {
        match source.kind {
            SourceKind::Doc => self.doc(&source.id).map(|d| d.path.clone()),
            _ => Some(self.sidecars.get(source).cloned().unwrap_or_else(|| {
                format!(
                    "{SIDECAR_DIR}/{}/{}{SIDECAR_SUFFIX}",
                    source.kind, source.id
                )
            })),
        }
    }

    /// This snapshot with one file's declarations read again from `text` (after a
    /// write-through); the docs and the search index are shared.
    fn with_file(&self, rel: &str, text: &str) -> Snapshot {
        let mut decls = self.decls.clone();
        let mut file_warnings = self.file_warnings.clone();
        let mut sidecars = self.sidecars.clone();
        let mut parsed = Parsed::default();
        parsed.file(rel, Ok(text.to_string()));
        decls.remove(rel);
        file_warnings.remove(rel);
        sidecars.retain(|_, f| f != rel);
        decls.extend(parsed.decls);
        file_warnings.extend(parsed.warnings);
        sidecars.extend(parsed.sidecars);
        let corpus = Arc::clone(&self.corpus);
        let (graph, graph_warnings) =
            Graph::build(decls.values().flatten(), |id| corpus.docs.contains_key(id));
        Snapshot {
            root: self.root.clone(),
            corpus,
            decls,
            file_warnings,
            root_warnings: self.root_warnings.clone(),
            sidecars,
            graph,
            graph_warnings,
            stats: self.stats,
        }
    }
}

/// What a sync changed.
#[derive(Debug, Clone, Serialize)]
pub struct SyncReport {
    pub root: String,
    pub docs: usize,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    pub explicit_links: usize,
    pub inferred_links: usize,
    pub links_before: usize,
    pub sidecars: usize,
    pub warnings: Vec<Warning>,
    pub build_ms: f64,
}

/// The outcome for one link of an upsert.
#[derive(Debug, Clone, Serialize)]
pub struct Upserted {
    pub target_doc_id: String,
    pub relation: &'static str,
    /// `created`, `updated` (another relation, or an inferred link made explicit) or
    /// `unchanged`.
    pub outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_relation: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_origin: Option<&'static str>,
}

/// The docs the core serves: a root and its current snapshot.
pub struct Docs {
    root: Root,
    current: RwLock<Option<Arc<Snapshot>>>,
    /// Held by whoever builds or writes, so that two writes never interleave.
    writer: Mutex<()>,
    /// Counts snapshot replacements, for whoever shows something built from the docs.
    changes: tokio::sync::watch::Sender<u64>,
}

impl Docs {
    /// The project's own docs, built into the binary (read-only).
    pub fn embedded() -> Docs {
        Docs::with_root(Root::Embedded)
    }

    /// A folder of Markdown; it must exist.
    pub fn dir(path: impl AsRef<Path>) -> Result<Docs, String> {
        let path = path.as_ref();
        let canonical = std::fs::canonicalize(path)
            .map_err(|e| format!("docs root {}: {e}", path.display()))?;
        if !canonical.is_dir() {
            return Err(format!("docs root {} is not a folder", path.display()));
        }
        Ok(Docs::with_root(Root::Dir(canonical)))
    }

    fn with_root(root: Root) -> Docs {
        Docs {
            root,
            current: RwLock::new(None),
            writer: Mutex::new(()),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// The current snapshot if one has been built.
    pub fn current(&self) -> Option<Arc<Snapshot>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The current snapshot, built from the files on first use (blocking: call it
    /// off the async workers when it may build).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        if let Some(s) = self.current() {
            return s;
        }
        let _w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        self.snapshot_locked()
    }

    fn snapshot_locked(&self) -> Arc<Snapshot> {
        if let Some(s) = self.current() {
            return s;
        }
        let s = Arc::new(build(&self.root));
        self.replace(Arc::clone(&s));
        s
    }

    fn replace(&self, s: Arc<Snapshot>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Some(s);
        self.changes.send_modify(|n| *n += 1);
    }

    /// Told each time the snapshot is replaced (built, synced or written).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Reads the root again and replaces the snapshot. Idempotent: a second sync of
    /// unchanged files reports no change and the same links.
    pub fn sync(&self) -> (Arc<Snapshot>, SyncReport) {
        let _w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let before = self.current();
        let after = Arc::new(build(&self.root));
        let (mut added, mut removed, mut changed) = (Vec::new(), Vec::new(), Vec::new());
        let links_before = before.as_ref().map_or(0, |b| b.graph.links.len());
        if let Some(before) = &before {
            for (id, doc) in after.docs() {
                match before.doc(id) {
                    None => added.push(id.clone()),
                    Some(old) if old.digest != doc.digest => changed.push(id.clone()),
                    Some(_) => {}
                }
            }
            removed = before
                .docs()
                .keys()
                .filter(|id| after.doc(id).is_none())
                .cloned()
                .collect();
        } else {
            added = after.docs().keys().cloned().collect();
        }
        let report = SyncReport {
            root: self.root.describe(),
            docs: after.docs().len(),
            added,
            removed,
            changed,
            explicit_links: after.graph.count(Origin::Explicit),
            inferred_links: after.graph.count(Origin::Inferred),
            links_before,
            sidecars: after.stats.sidecars,
            warnings: after.warnings().cloned().collect(),
            build_ms: after.stats.build_ms,
        };
        self.replace(Arc::clone(&after));
        (after, report)
    }
}

/// `RESOURCE_NOT_FOUND` for a doc id, with the ids that look like it.
pub fn doc_not_found(snap: &Snapshot, id: &str, field: &str) -> ToolError {
    let mut e = ToolError::field(
        ErrorCode::ResourceNotFound,
        field,
        format!("no doc {id:?} under the docs root"),
    )
    .with_message(format!("doc {id:?} not found"))
    .with_resource_uri(format!("{DOC_URI_PREFIX}{id}"));
    e.extra.insert(
        "suggestions".into(),
        serde_json::json!(snap.similar_ids(id)),
    );
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_come_from_the_longest_matching_folder() {
        assert_eq!(infer_type("schemas/entities/player"), "schema");
        assert_eq!(infer_type("api/queries/planet"), "api");
        assert_eq!(infer_type("knowledge/mechanics/building"), "mechanics");
        assert_eq!(infer_type("knowledge/entities/planet"), "entity");
        assert_eq!(infer_type("knowledge/glossary"), "knowledge");
        assert_eq!(infer_type("guides/console"), "guide");
        assert_eq!(infer_type("Unusual/thing"), "unusual");
        assert_eq!(infer_type("README"), "general");
    }

    #[test]
    fn summaries_fall_back_to_the_first_paragraph() {
        assert_eq!(
            first_sentences("Title\n\nFirst words here.\nMore.", "Title"),
            "First words here."
        );
        let long = "word ".repeat(100);
        let s = first_sentences(&long, "x");
        assert!(s.ends_with('…') && s.chars().count() <= 201, "{s}");
        assert_eq!(humanise("ore-extractor"), "Ore extractor");
    }

    #[test]
    fn the_embedded_docs_build_without_warnings() {
        let snap = build(&Root::Embedded);
        assert!(snap.docs().len() >= 10, "{} docs", snap.docs().len());
        let warnings: Vec<&Warning> = snap.warnings().collect();
        assert!(warnings.is_empty(), "{warnings:#?}");
        assert!(snap.graph().count(Origin::Explicit) > 0);
    }
}
