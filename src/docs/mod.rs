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
pub mod search;
pub mod suggest;

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
    /// Size of the whole file in bytes.
    pub bytes: usize,
    digest: u64,
}

impl Doc {
    pub fn uri(&self) -> String {
        format!("{DOC_URI_PREFIX}{}", self.id)
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

/// What reading the files gives, before the index is built.
#[derive(Default)]
struct Parsed {
    docs: BTreeMap<String, (Doc, markdown::Scan)>,
    decls: BTreeMap<String, Vec<Decl>>,
    warnings: BTreeMap<String, Vec<Warning>>,
    sidecars: BTreeMap<Source, String>,
    sidecar_files: usize,
}

impl Parsed {
    fn warn(&mut self, file: &str, kind: &'static str, message: impl Into<String>) {
        self.warnings
            .entry(file.to_string())
            .or_default()
            .push(Warning::new(kind, Some(file), message));
    }

    /// Reads one file: a doc (`.md`) or a sidecar (`.meta.yaml`).
    fn file(&mut self, rel: &str, text: Result<String, String>) {
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                self.warn(rel, "unreadable", e);
                return;
            }
        };
        if rel.ends_with(SIDECAR_SUFFIX) {
            self.sidecar(rel, &text);
        } else if let Some(stem) = rel.strip_suffix(".md") {
            self.doc(rel, stem, &text);
        }
    }

    fn sidecar(&mut self, rel: &str, text: &str) {
        self.sidecar_files += 1;
        match front::parse_sidecar(text) {
            Ok(sidecar) => {
                for p in sidecar.problems {
                    self.warn(rel, "sidecar", p);
                }
                if let Some(other) = self.sidecars.get(&sidecar.source) {
                    let message = format!(
                        "{} already has its links in {other}; this file is read too",
                        sidecar.source.label()
                    );
                    self.warn(rel, "sidecar", message);
                } else {
                    self.sidecars
                        .insert(sidecar.source.clone(), rel.to_string());
                }
                let decls = sidecar.links.into_iter().map(|declared| Decl {
                    declared,
                    origin: Origin::Explicit,
                    rank: 0,
                    file: rel.to_string(),
                });
                self.decls.entry(rel.to_string()).or_default().extend(decls);
            }
            Err(e) => self.warn(rel, "sidecar", format!("not read: {e}")),
        }
    }

    fn doc(&mut self, rel: &str, stem: &str, text: &str) {
        let id = match normalize_doc_id(stem) {
            Ok(id) => id,
            Err(e) => {
                self.warn(rel, "unreadable", format!("not indexed: {e}"));
                return;
            }
        };
        if let Some((other, _)) = self.docs.get(&id) {
            let message = format!(
                "names the same doc id {id:?} as {}; only that file is indexed",
                other.path
            );
            self.warn(rel, "duplicate_doc", message);
            return;
        }
        let parts = front::split(text);
        if parts.unclosed {
            self.warn(
                rel,
                "front_matter",
                "the front matter opens with --- but never closes; the whole file is read as the body",
            );
        }
        let meta = match parts.yaml.map(|y| front::parse(y, &id)) {
            None => front::Meta::default(),
            Some(Ok(meta)) => meta,
            Some(Err(e)) => {
                self.warn(
                    rel,
                    "front_matter",
                    format!(
                        "the front matter is not valid YAML ({e}); the doc is indexed without it"
                    ),
                );
                front::Meta::default()
            }
        };
        for p in &meta.problems {
            self.warn(rel, "front_matter", p.clone());
        }
        let scan = markdown::scan(parts.body);
        let mut decls: Vec<Decl> = meta
            .links
            .into_iter()
            .map(|declared| Decl {
                rank: if declared.legacy { 2 } else { 1 },
                declared,
                origin: Origin::Explicit,
                file: rel.to_string(),
            })
            .collect();
        let this = Source::doc(&id);
        for (i, dest) in scan.links.iter().enumerate() {
            match markdown::resolve_link(&id, dest) {
                Ok(Some(target)) => decls.push(Decl {
                    declared: front::Declared {
                        source: this.clone(),
                        target,
                        relation: Relation::Related,
                        field: format!("body link {}", i + 1),
                        legacy: false,
                    },
                    origin: Origin::Inferred,
                    rank: 3,
                    file: rel.to_string(),
                }),
                Ok(None) => {}
                Err(e) => self.warn(rel, "link", format!("body link {}: {e}", i + 1)),
            }
        }
        self.decls.entry(rel.to_string()).or_default().extend(decls);
        let title = meta
            .title
            .or(scan.heading.clone())
            .unwrap_or_else(|| humanise(id.rsplit('/').next().unwrap_or(&id)));
        let summary = meta
            .summary
            .unwrap_or_else(|| first_sentences(&scan.text, &title));
        let (doc_type, type_inferred) = match meta.doc_type {
            Some(t) => (t, false),
            None => (infer_type(&id), true),
        };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut h);
        let doc = Doc {
            id: id.clone(),
            path: rel.to_string(),
            title,
            summary,
            tags: meta.tags,
            doc_type,
            type_inferred,
            body: parts.body.to_string(),
            bytes: text.len(),
            digest: h.finish(),
        };
        self.docs.insert(id, (doc, scan));
    }
}

/// `ore-extractor` → `Ore extractor`.
fn humanise(stem: &str) -> String {
    let words = stem.replace(['-', '_'], " ");
    let mut c = words.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The start of a body's text (after its title), up to about 200 characters, cut at a
/// word.
fn first_sentences(text: &str, title: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut out = String::new();
    for line in lines.by_ref() {
        if line == title || line.chars().all(|c| c == '-' || c == '|' || c == ' ') {
            continue;
        }
        out = line.to_string();
        break;
    }
    if out.chars().count() > 200 {
        let cut: String = out.chars().take(200).collect();
        let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a);
        out = format!("{cut}…");
    }
    out
}

/// A file's path relative to the root, and its text or why it could not be read.
type FileText = (String, Result<String, String>);

/// Reads every doc and sidecar under `root`, in path order.
fn read_files(root: &Root) -> (Vec<FileText>, Vec<Warning>) {
    match root {
        Root::Embedded => (
            EMBEDDED_DOCS
                .iter()
                .map(|(rel, text)| ((*rel).to_string(), Ok((*text).to_string())))
                .collect(),
            Vec::new(),
        ),
        Root::Dir(dir) => {
            let mut files = Vec::new();
            let mut warnings = Vec::new();
            walk_dir(dir, "", 0, &mut files, &mut warnings);
            files.sort_by(|a, b| a.0.cmp(&b.0));
            (files, warnings)
        }
    }
}

fn walk_dir(
    dir: &Path,
    rel: &str,
    depth: usize,
    files: &mut Vec<FileText>,
    warnings: &mut Vec<Warning>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            let file = (!rel.is_empty()).then_some(rel);
            warnings.push(Warning::new(
                if rel.is_empty() { "root" } else { "unreadable" },
                file,
                format!("cannot read the folder {}: {e}", dir.display()),
            ));
            return;
        }
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            warnings.push(Warning::new(
                "unreadable",
                None,
                format!("{}: the name is not UTF-8; skipped", entry.path().display()),
            ));
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let path = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        // `DirEntry::file_type` does not follow symbolic links: a link is never
        // followed, so nothing outside the root is read through one.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                warnings.push(Warning::new(
                    "unreadable",
                    Some(&path),
                    format!("folders deeper than {MAX_DEPTH} levels are not read"),
                ));
            } else {
                walk_dir(&entry.path(), &path, depth + 1, files, warnings);
            }
            continue;
        }
        if !kind.is_file() || !(name.ends_with(".md") || name.ends_with(SIDECAR_SUFFIX)) {
            continue;
        }
        if files.len() == MAX_FILES {
            warnings.push(Warning::new(
                "root",
                None,
                format!("more than {MAX_FILES} files; the rest are not indexed"),
            ));
            return;
        }
        files.push((path, read_text(&entry.path())));
    }
}

fn read_text(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes is over the {MAX_FILE_BYTES}-byte limit for a doc; not read",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text; not read".to_string())
}

/// Reads `root` and builds a snapshot of it.
pub fn build(root: &Root) -> Snapshot {
    let started = Instant::now();
    let (files, root_warnings) = read_files(root);
    let mut parsed = Parsed::default();
    let file_count = files.len();
    for (rel, text) in files {
        parsed.file(&rel, text);
    }
    let fts = FullText::build(parsed.docs.values().map(|(doc, scan)| Row {
        doc_id: &doc.id,
        title: &doc.title,
        summary: &doc.summary,
        tags: &doc.tags,
        headings: &scan.headings,
        text: &scan.text,
    }));
    let docs: BTreeMap<String, Doc> = parsed
        .docs
        .into_iter()
        .map(|(id, (doc, _))| (id, doc))
        .collect();
    let (graph, graph_warnings) =
        Graph::build(parsed.decls.values().flatten(), |id| docs.contains_key(id));
    let stats = BuildStats {
        files: file_count,
        docs: docs.len(),
        sidecars: parsed.sidecar_files,
        build_ms: started.elapsed().as_secs_f64() * 1000.0,
    };
    Snapshot {
        root: root.clone(),
        corpus: Arc::new(Corpus { docs, fts }),
        decls: parsed.decls,
        file_warnings: parsed.warnings,
        root_warnings,
        sidecars: parsed.sidecars,
        graph,
        graph_warnings,
        stats,
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

    /// Creates or updates explicit links from `source` to each target, written through
    /// to the source's file (a doc's front matter, or the source's sidecar) before the
    /// snapshot changes. Every target must be an existing doc; a doc cannot link to
    /// itself. Blocking (file I/O).
    pub fn upsert(
        &self,
        source: &Source,
        changes: &[(String, Relation)],
    ) -> Result<(String, Vec<Upserted>), ToolError> {
        let _w = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let snap = self.snapshot_locked();
        let Root::Dir(root) = &self.root else {
            return Err(ToolError::new(
                ErrorCode::ResourceReadOnly,
                "the embedded docs are read-only: start the server with --docs DIR (for \
                 example the project's docs/ folder) to write links to files",
            ));
        };
        for (target, _) in changes {
            if snap.doc(target).is_none() {
                return Err(doc_not_found(&snap, target, "target_doc_id"));
            }
            if source.kind == SourceKind::Doc && &source.id == target {
                return Err(ToolError::field(
                    ErrorCode::ValidationInvalidValue,
                    "target_doc_id",
                    "a doc cannot link to itself",
                ));
            }
        }
        if source.kind == SourceKind::Doc && snap.doc(&source.id).is_none() {
            return Err(doc_not_found(&snap, &source.id, "source_id"));
        }
        let rel = snap
            .link_file(source)
            .expect("every source kind has a link file once its doc exists");
        refuse_symlinks(root, &rel)?;
        let path = root.join(&rel);
        let old_text = match std::fs::read_to_string(&path) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(&rel, "read", &e)),
        };
        let mut list: Vec<(String, Relation)> = Vec::new();
        let mut push = |target: &str, relation: Relation| {
            if !list.iter().any(|(t, _)| t == target) {
                list.push((target.to_string(), relation));
            }
        };
        match (&old_text, source.kind) {
            (None, SourceKind::Doc) => {
                return Err(ToolError::new(
                    ErrorCode::ResourceNotFound,
                    format!("{rel} is gone from the docs root; run structs_docs_sync"),
                ));
            }
            (None, _) => {}
            (Some(text), SourceKind::Doc) => {
                if let Some(yaml) = front::split(text).yaml {
                    let meta = front::parse(yaml, &source.id).map_err(|e| {
                        ToolError::new(
                            ErrorCode::ValidationError,
                            format!("the front matter of {rel} is not valid YAML ({e}); fix it before writing links"),
                        )
                    })?;
                    if !meta.link_trouble.is_empty() {
                        return Err(rewrite_would_lose(&rel, &meta.link_trouble));
                    }
                    for d in meta.links.iter().filter(|d| &d.source == source) {
                        push(&d.target, d.relation);
                    }
                }
            }
            (Some(text), _) => {
                let sidecar = front::parse_sidecar(text).map_err(|e| {
                    ToolError::new(
                        ErrorCode::ValidationError,
                        format!("{rel} cannot be read ({e}); fix it before writing links"),
                    )
                })?;
                if &sidecar.source != source {
                    return Err(ToolError::new(
                        ErrorCode::ValidationError,
                        format!(
                            "{rel} holds the links of {}, not {}; fix the file first",
                            sidecar.source.label(),
                            source.label()
                        ),
                    ));
                }
                if !sidecar.problems.is_empty() {
                    return Err(rewrite_would_lose(&rel, &sidecar.problems));
                }
                for d in &sidecar.links {
                    push(&d.target, d.relation);
                }
            }
        }
        // A pair declared twice in the file (a legacy field and `links`) keeps the
        // relation the index uses, so a rewrite never flips it.
        for (target, relation) in &mut list {
            if let Some(l) = snap.graph.between(source, target)
                && l.org == Origin::Explicit
                && l.declared_in == rel
            {
                *relation = l.rel;
            }
        }
        let mut outcomes = Vec::new();
        for (target, relation) in changes {
            let before = snap.graph.between(source, target);
            match list.iter_mut().find(|(t, _)| t == target) {
                Some(entry) => entry.1 = *relation,
                None => list.push((target.clone(), *relation)),
            }
            let outcome = match before {
                None => "created",
                Some(l) if l.rel == *relation && l.org == Origin::Explicit => "unchanged",
                Some(_) => "updated",
            };
            outcomes.push(Upserted {
                target_doc_id: target.clone(),
                relation: relation.as_str(),
                outcome,
                previous_relation: before.map(|l| l.relation),
                previous_origin: before.map(|l| l.origin),
            });
        }
        let new_text = match source.kind {
            SourceKind::Doc => {
                front::write_links(old_text.as_deref().unwrap_or(""), &source.id, &list).map_err(
                    |e| {
                        ToolError::new(
                            ErrorCode::ToolExecutionFailed,
                            format!("cannot write the links of {rel}: {e}"),
                        )
                    },
                )?
            }
            _ => front::sidecar_text(source, &list),
        };
        if old_text.as_deref() != Some(new_text.as_str()) {
            write_atomically(&path, &new_text).map_err(|e| io_error(&rel, "write", &e))?;
        }
        self.replace(Arc::new(snap.with_file(&rel, &new_text)));
        Ok((rel, outcomes))
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

fn io_error(rel: &str, what: &str, e: &std::io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::ToolExecutionFailed,
        format!("cannot {what} {rel}: {e}; nothing was changed"),
    )
}

/// Writes `text` to a new temporary file beside `path` (created, never opened through
/// an existing name), flushes it to disk with the old file's permissions, then renames
/// it over `path`: a reader sees the old file or the new one, never half of one.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("doc");
    let unique = format!(
        "{}.{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    );
    let tmp = dir.join(format!(".{name}.{unique}.tmp"));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Refuses a write to `rel` under `root` when any part of the path is a symbolic
/// link: the index never follows them, and a write must not either.
fn refuse_symlinks(root: &Path, rel: &str) -> Result<(), ToolError> {
    let mut at = root.to_path_buf();
    for part in rel.split('/') {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(ToolError::new(
                    ErrorCode::ValidationError,
                    format!(
                        "{rel}: {} is a symbolic link; links are only written to files inside \
                         the docs root",
                        at.strip_prefix(root).unwrap_or(&at).display()
                    ),
                ));
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_error(rel, "check", &e)),
        }
    }
    Ok(())
}

/// The error for a file whose links a rewrite would change beyond the one asked for.
fn rewrite_would_lose(rel: &str, trouble: &[String]) -> ToolError {
    ToolError::new(
        ErrorCode::ValidationError,
        format!(
            "{rel} has link entries a rewrite would lose or change ({}); fix them by hand, \
             then write the link again",
            trouble.join("; ")
        ),
    )
    .with_extra("problems", serde_json::json!(trouble))
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
