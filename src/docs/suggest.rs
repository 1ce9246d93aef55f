//! Suggested links: the docs a source's related things already link to, scored by how
//! many of them do.
//!
//! For planet `2-1`, the related things are the entities it references (its owner, its
//! fleet, the structs on it), each linking to docs directly (entity `1-11`), through its
//! kind (entity kind `player`) or through its struct type (struct type `14`). A doc
//! scores one point for every related thing that links to it by any of those routes;
//! docs the source already links to explicitly are left out. For a doc, the related
//! things are the docs it links to or is linked from.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Snapshot;
use super::links::{Origin, Source};

/// A thing related to the source, and the link sources it can link to docs through.
#[derive(Debug, Clone)]
pub struct Related {
    /// `player 1-11`, `struct 5-3`, `doc guides/console`.
    pub label: String,
    /// The entity itself first, then its kind and its struct type.
    pub via: Vec<Source>,
}

/// Why a related thing counts for a doc.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Attribution {
    /// The related thing.
    pub related: String,
    /// The link source that links to the doc (the thing itself, its kind or its type).
    pub through: String,
    pub relation: &'static str,
}

/// A suggested doc.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Candidate {
    pub doc_id: String,
    pub title: String,
    /// How many related things link to it.
    pub score: usize,
    pub attribution: Vec<Attribution>,
}

/// The candidates for `source`, best first (score, then doc id): every existing doc
/// that at least one related thing links to, except the docs `source` already links to
/// explicitly and, for a doc, itself.
pub fn suggest(snap: &Snapshot, source: &Source, related: &[Related]) -> Vec<Candidate> {
    let graph = snap.graph();
    let mut by_doc: BTreeMap<&str, Vec<Attribution>> = BTreeMap::new();
    for thing in related {
        // Each related thing counts once per doc: by the first route that links to it.
        let mut counted: Vec<&str> = Vec::new();
        for via in &thing.via {
            for link in graph.from(via) {
                let doc = link.target_doc_id.as_str();
                if !link.target_exists || counted.contains(&doc) {
                    continue;
                }
                counted.push(doc);
                by_doc.entry(doc).or_default().push(Attribution {
                    related: thing.label.clone(),
                    through: via.label(),
                    relation: link.relation,
                });
            }
        }
    }
    let linked: Vec<&str> = graph
        .from(source)
        .filter(|l| l.org == Origin::Explicit)
        .map(|l| l.target_doc_id.as_str())
        .collect();
    let mut out: Vec<Candidate> = by_doc
        .into_iter()
        .filter(|(doc, _)| !linked.contains(doc))
        .filter(|(doc, _)| !(source.kind == super::links::SourceKind::Doc && *doc == source.id))
        .filter_map(|(doc, attribution)| {
            Some(Candidate {
                doc_id: doc.to_string(),
                title: snap.doc(doc)?.title.clone(),
                score: attribution.len(),
                attribution,
            })
        })
        .collect();
    out.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.doc_id.cmp(&b.doc_id)));
    out
}
