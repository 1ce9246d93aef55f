//! Reading a docs root into a snapshot: the files (bounded in size, count and depth,
//! no symlinks out), their front matter and the link sidecars, every problem a warning.

use super::*;

/// What reading the files gives, before the index is built.
#[derive(Default)]
pub(super) struct Parsed {
    pub(super) docs: BTreeMap<String, (Doc, markdown::Scan)>,
    pub(super) decls: BTreeMap<String, Vec<Decl>>,
    pub(super) warnings: BTreeMap<String, Vec<Warning>>,
    pub(super) sidecars: BTreeMap<Source, String>,
    pub(super) sidecar_files: usize,
}

impl Parsed {
    pub(super) fn warn(&mut self, file: &str, kind: &'static str, message: impl Into<String>) {
        self.warnings
            .entry(file.to_string())
            .or_default()
            .push(Warning::new(kind, Some(file), message));
    }

    /// Reads one file: a doc (`.md`) or a sidecar (`.meta.yaml`).
    pub(super) fn file(&mut self, rel: &str, text: Result<String, String>) {
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

    pub(super) fn sidecar(&mut self, rel: &str, text: &str) {
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

    pub(super) fn doc(&mut self, rel: &str, stem: &str, text: &str) {
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
            head: text[..text.len() - parts.body.len()].to_string(),
            bytes: text.len(),
            digest: h.finish(),
        };
        self.docs.insert(id, (doc, scan));
    }
}

/// `ore-extractor` → `Ore extractor`.
pub(super) fn humanise(stem: &str) -> String {
    let words = stem.replace(['-', '_'], " ");
    let mut c = words.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The start of a body's text (after its title), up to about 200 characters, cut at a
/// word.
pub(super) fn first_sentences(text: &str, title: &str) -> String {
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
pub(super) fn read_files(root: &Root) -> (Vec<FileText>, Vec<Warning>) {
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

pub(super) fn walk_dir(
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

pub(super) fn read_text(path: &Path) -> Result<String, String> {
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
