//! The link graph: every declared link merged into one link per (source, target) pair,
//! explicit before inferred, and the bounded, cycle-safe walks over it.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use super::Warning;
use super::front::Declared;
use super::links::{Origin, Relation, Source, SourceKind};

/// A declared link with where it came from and how strongly it holds.
#[derive(Debug, Clone)]
pub struct Decl {
    pub declared: Declared,
    pub origin: Origin,
    /// Lower wins on a pair declared twice: 0 a sidecar, 1 a doc's `links` or entity
    /// fields, 2 a legacy field, 3 a Markdown link in a body.
    pub rank: u8,
    /// The file that declares it, relative to the root.
    pub file: String,
}

/// One link of the index.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub source_kind: &'static str,
    pub source_id: String,
    pub target_doc_id: String,
    pub relation: &'static str,
    pub origin: &'static str,
    /// The file and field that declare it (`guides/console.md` `links[0]`).
    pub declared_in: String,
    pub field: String,
    /// False when no doc of that id exists (the link is kept and reported).
    pub target_exists: bool,
    #[serde(skip)]
    pub source: Source,
    #[serde(skip)]
    pub rel: Relation,
    #[serde(skip)]
    pub org: Origin,
}

/// Every link, indexed by source and by target.
#[derive(Debug, Default)]
pub struct Graph {
    pub links: Vec<Link>,
    by_source: HashMap<Source, Vec<usize>>,
    by_target: HashMap<String, Vec<usize>>,
}

impl Graph {
    /// Merges `decls` into one link per (source, target): lower rank first, then file and
    /// field order, so the result does not depend on the order files were read. A pair
    /// declared again with another relation keeps the first and warns; an inferred link
    /// never replaces an explicit one. Self-links are dropped (with a warning when
    /// written by hand); links to docs that do not exist are kept and warned about.
    pub fn build<'a>(
        decls: impl Iterator<Item = &'a Decl>,
        exists: impl Fn(&str) -> bool,
    ) -> (Graph, Vec<Warning>) {
        let mut decls: Vec<&Decl> = decls.collect();
        decls.sort_by(|a, b| {
            (a.rank, &a.file, field_order(&a.declared.field)).cmp(&(
                b.rank,
                &b.file,
                field_order(&b.declared.field),
            ))
        });
        let mut graph = Graph::default();
        let mut warnings = Vec::new();
        let mut pairs: HashMap<(Source, String), usize> = HashMap::new();
        for d in decls {
            let s = &d.declared;
            if s.source.kind == SourceKind::Doc && s.source.id == s.target {
                if d.origin == Origin::Explicit {
                    warnings.push(Warning::new(
                        "self_link",
                        Some(&d.file),
                        format!("{}: a doc cannot link to itself; ignored", s.field),
                    ));
                }
                continue;
            }
            let key = (s.source.clone(), s.target.clone());
            if let Some(&at) = pairs.get(&key) {
                let kept = &graph.links[at];
                if d.origin == Origin::Explicit && kept.rel != s.relation {
                    warnings.push(Warning::new(
                        "duplicate_link",
                        Some(&d.file),
                        format!(
                            "{}: {} → {} is declared again as {}; kept {} from {} {}",
                            s.field,
                            s.source.label(),
                            s.target,
                            s.relation,
                            kept.relation,
                            kept.declared_in,
                            kept.field
                        ),
                    ));
                }
                continue;
            }
            let target_exists = exists(&s.target);
            if !target_exists {
                warnings.push(Warning::new(
                    "missing_target",
                    Some(&d.file),
                    format!(
                        "{}: {} links to {:?}, which is not a doc under the root",
                        s.field,
                        s.source.label(),
                        s.target
                    ),
                ));
            }
            let index = graph.links.len();
            pairs.insert(key, index);
            graph
                .by_source
                .entry(s.source.clone())
                .or_default()
                .push(index);
            graph
                .by_target
                .entry(s.target.clone())
                .or_default()
                .push(index);
            graph.links.push(Link {
                source_kind: s.source.kind.as_str(),
                source_id: s.source.id.clone(),
                target_doc_id: s.target.clone(),
                relation: s.relation.as_str(),
                origin: d.origin.as_str(),
                declared_in: d.file.clone(),
                field: s.field.clone(),
                target_exists,
                source: s.source.clone(),
                rel: s.relation,
                org: d.origin,
            });
        }
        (graph, warnings)
    }

    /// The links from `source`, in declaration order.
    pub fn from(&self, source: &Source) -> impl Iterator<Item = &Link> {
        self.by_source
            .get(source)
            .into_iter()
            .flatten()
            .map(|&i| &self.links[i])
    }

    /// The links into doc `doc_id`, from any kind of source.
    pub fn into(&self, doc_id: &str) -> impl Iterator<Item = &Link> {
        self.by_target
            .get(doc_id)
            .into_iter()
            .flatten()
            .map(|&i| &self.links[i])
    }

    /// The link from `source` to `target`, if there is one.
    pub fn between(&self, source: &Source, target: &str) -> Option<&Link> {
        self.from(source).find(|l| l.target_doc_id == target)
    }

    pub fn count(&self, origin: Origin) -> usize {
        self.links.iter().filter(|l| l.org == origin).count()
    }

    /// Docs reachable from `start` over doc-to-doc links, breadth first, at most `depth`
    /// hops away, each doc once (the first path found), `start` never. Links to docs
    /// that do not exist are not followed. `max` bounds the answer.
    pub fn walk(&self, start: &str, depth: usize, direction: Direction, max: usize) -> Walk {
        let mut visited: HashSet<&str> = HashSet::from([start]);
        let mut queue: VecDeque<(&str, usize)> = VecDeque::from([(start, 0)]);
        let mut out = Walk::default();
        while let Some((doc, d)) = queue.pop_front() {
            if d == depth {
                continue;
            }
            let here = Source::doc(doc);
            let mut steps: Vec<(&Link, &str, &'static str)> = Vec::new();
            if direction != Direction::In {
                steps.extend(
                    self.from(&here)
                        .filter(|l| l.target_exists)
                        .map(|l| (l, l.target_doc_id.as_str(), "out")),
                );
            }
            if direction != Direction::Out {
                steps.extend(
                    self.into(doc)
                        .filter(|l| l.source.kind == SourceKind::Doc)
                        .map(|l| (l, l.source_id.as_str(), "in")),
                );
            }
            for (link, next, dir) in steps {
                if !visited.insert(next) {
                    continue;
                }
                if out.docs.len() == max {
                    out.truncated = true;
                    return out;
                }
                out.docs.push(Step {
                    doc_id: next.to_string(),
                    via: doc.to_string(),
                    relation: link.relation,
                    origin: link.origin,
                    direction: dir,
                    depth: d + 1,
                });
                queue.push_back((next, d + 1));
            }
        }
        out
    }
}

/// `links[10]` after `links[9]`: the field name, then its index as a number.
fn field_order(field: &str) -> (&str, usize) {
    match field.split_once('[') {
        Some((name, rest)) => (
            name,
            rest.trim_end_matches(']').parse().unwrap_or(usize::MAX),
        ),
        None => (field, 0),
    }
}

/// Which links a walk follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Out,
    In,
    Both,
}

/// One doc reached by a walk.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub doc_id: String,
    /// The doc it was reached from.
    pub via: String,
    pub relation: &'static str,
    pub origin: &'static str,
    /// `out`: `via` links to it; `in`: it links to `via`.
    pub direction: &'static str,
    pub depth: usize,
}

/// The docs a walk reached.
#[derive(Debug, Default)]
pub struct Walk {
    pub docs: Vec<Step>,
    /// True when `max` stopped it before every reachable doc within the depth was seen.
    pub truncated: bool,
}
