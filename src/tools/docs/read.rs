//! The docs tools that read: search, get, related, the index and a loading strategy.

use super::*;

pub(super) async fn search(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let query = opt_str(&args, "query").unwrap_or_default();
    let limit = whole(&args, "limit", 10);
    // A type as written, or its singular (`schemas` for `schema`, as the tool
    // catalog writes its categories).
    let has_type = |t: &str| snap.docs().values().any(|d| d.doc_type == t);
    let doc_type: Option<String> = opt_str(&args, "type")
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .map(|t| match t.strip_suffix('s') {
            Some(one) if !has_type(&t) && has_type(one) => one.to_string(),
            _ => t,
        });
    let doc_type = doc_type.as_deref();
    if let Some(t) = doc_type
        && !has_type(t)
    {
        let types = snap.categories();
        return Err(bad(
            "type",
            format!(
                "no doc has type {t:?}; types are {}",
                types.keys().copied().collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    let tag = opt_str(&args, "tag")
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let hits = snap.search(query, doc_type, tag, limit).map_err(|e| {
        ToolError::new(
            ErrorCode::ToolExecutionFailed,
            format!("search failed: {e}"),
        )
    })?;
    let hits: Vec<Value> = hits
        .into_iter()
        .map(|h| {
            let mut m = card(h.doc);
            m.insert("uri".into(), json!(h.doc.uri()));
            m.insert("score".into(), json!(round(h.score)));
            m.insert("snippet".into(), json!(h.snippet));
            Value::Object(m)
        })
        .collect();
    let mut out = json!({
        "query": query,
        "count": hits.len(),
        "hits": hits,
        "docs_indexed": snap.docs().len(),
    });
    if out["count"] == 0 {
        out["hint"] = json!(
            "no doc matches these words; try other words, drop the type or tag filter, or \
             browse structs_docs_get_index"
        );
    }
    Ok(out)
}

/// The piece of `text` from character `offset`, at most `max_chars` characters and
/// [`CONTENT_BYTES`] bytes, ending at a line end when one is near.
pub(super) fn piece(
    text: &str,
    offset: usize,
    max_chars: usize,
) -> (String, usize, Option<usize>, usize) {
    let total = text.chars().count();
    let start = text
        .char_indices()
        .nth(offset)
        .map_or(text.len(), |(i, _)| i);
    let rest = &text[start..];
    let end = rest
        .char_indices()
        .enumerate()
        .find(|(n, (i, c))| *n == max_chars || i + c.len_utf8() > CONTENT_BYTES)
        .map_or(rest.len(), |(_, (i, _))| i);
    let mut end = end;
    if end < rest.len() {
        // Back to the last line end in the second half, so a piece ends on a line.
        if let Some(nl) = rest[..end].rfind('\n')
            && nl + 1 >= end / 2
        {
            end = nl + 1;
        }
    }
    let piece = &rest[..end];
    let taken = piece.chars().count();
    let next = (offset + taken < total).then_some(offset + taken);
    (piece.to_string(), offset.min(total) + taken, next, total)
}

pub(super) fn link_json(snap: &Snapshot, l: &Link, other: &str) -> Value {
    json!({
        "doc_id": other,
        "title": snap.doc(other).map(|d| d.title.as_str()),
        "relation": l.relation,
        "origin": l.origin,
        "exists": snap.doc(other).is_some(),
    })
}

pub(super) async fn get(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let doc = doc_arg(
        &snap,
        opt_str(&args, "doc_id").unwrap_or_default(),
        "doc_id",
    )?;
    let offset = whole(&args, "offset", 0);
    let max_chars = whole(&args, "max_chars", 12_000);
    let (content, end, next_offset, total) = piece(&doc.body, offset, max_chars);
    if offset > total {
        return Err(ToolError::field(
            ErrorCode::ValidationOutOfRange,
            "offset",
            format!("the content has {total} characters"),
        ));
    }
    let graph = snap.graph();
    let source = Source::doc(&doc.id);
    let out_links: Vec<&Link> = graph.from(&source).collect();
    let in_links: Vec<&Link> = graph
        .into(&doc.id)
        .filter(|l| l.source.kind == SourceKind::Doc)
        .collect();
    let informs: Vec<Value> = graph
        .into(&doc.id)
        .filter(|l| l.source.kind != SourceKind::Doc)
        .map(|l| {
            json!({"source_kind": l.source_kind, "source_id": l.source_id,
                   "label": l.source.label(), "relation": l.relation, "origin": l.origin})
        })
        .collect();
    let mut m = card(doc);
    m.insert("uri".into(), json!(doc.uri()));
    m.insert("type_inferred".into(), json!(doc.type_inferred));
    m.insert("path".into(), json!(doc.path));
    m.insert("bytes".into(), json!(doc.bytes));
    m.insert("est_tokens".into(), json!(doc.est_tokens()));
    m.insert("content".into(), json!(content));
    m.insert(
        "content_range".into(),
        json!({"offset": offset, "end": end, "total_chars": total, "next_offset": next_offset}),
    );
    m.insert(
        "links".into(),
        json!({
            "out": out_links.iter().take(LINKS_SHOWN).map(|l| link_json(&snap, l, &l.target_doc_id)).collect::<Vec<_>>(),
            "in": in_links.iter().take(LINKS_SHOWN).map(|l| link_json(&snap, l, &l.source_id)).collect::<Vec<_>>(),
            "out_total": out_links.len(),
            "in_total": in_links.len(),
        }),
    );
    m.insert("informs".into(), json!(informs));
    if args.get("include_related") == Some(&Value::Bool(true)) {
        let walk = graph.walk(&doc.id, 1, Direction::Both, LINKS_SHOWN);
        let related: Vec<Value> = walk
            .docs
            .iter()
            .filter_map(|step| related_card(&snap, step, false))
            .collect();
        m.insert("related".into(), json!(related));
        m.insert("related_truncated".into(), json!(walk.truncated));
    }
    let warnings: Vec<_> = snap.warnings_for(&doc.path).take(WARNINGS_SHOWN).collect();
    if !warnings.is_empty() {
        m.insert("warnings".into(), json!(warnings));
    }
    Ok(Value::Object(m))
}

pub(super) async fn get_related(
    docs: Arc<Docs>,
    _env: Env,
    args: Value,
) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let id_text = match (opt_str(&args, "doc_id"), opt_str(&args, "resource_uri")) {
        (Some(id), None) => id.to_string(),
        (None, Some(uri)) => match uri.strip_prefix(DOC_URI_PREFIX) {
            Some(id) => id.to_string(),
            None => {
                return Err(ToolError::field(
                    ErrorCode::ValidationInvalidFormat,
                    "resource_uri",
                    format!("a doc's URI is {DOC_URI_PREFIX}{{doc_id}}"),
                ));
            }
        },
        (Some(_), Some(_)) => {
            return Err(bad("doc_id", "give doc_id or resource_uri, not both"));
        }
        (None, None) => {
            return Err(ToolError::field(
                ErrorCode::ValidationMissingField,
                "doc_id",
                "give doc_id or resource_uri",
            ));
        }
    };
    let field = if args.get("doc_id").is_some() {
        "doc_id"
    } else {
        "resource_uri"
    };
    let doc = doc_arg(&snap, &id_text, field)?;
    let depth = whole(&args, "depth", 1);
    let limit = whole(&args, "limit", 25);
    let direction = match opt_str(&args, "direction").unwrap_or("both") {
        "out" => Direction::Out,
        "in" => Direction::In,
        _ => Direction::Both,
    };
    let walk = snap.graph().walk(&doc.id, depth, direction, limit);
    let related: Vec<Value> = walk
        .docs
        .iter()
        .filter_map(|step| related_card(&snap, step, true))
        .collect();
    Ok(json!({
        "doc_id": doc.id,
        "uri": doc.uri(),
        "depth": depth,
        "direction": opt_str(&args, "direction").unwrap_or("both"),
        "count": related.len(),
        "related": related,
        "truncated": walk.truncated,
    }))
}

pub(super) async fn get_index(docs: Arc<Docs>, _env: Env, args: Value) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let categories = snap.categories();
    match opt_str(&args, "category").map(|c| c.trim().to_lowercase()) {
        Some(category) => {
            // As written, or its singular (`schemas`, as the tool catalog writes it).
            let category = match category.strip_suffix('s') {
                Some(one)
                    if !categories.contains_key(category.as_str())
                        && categories.contains_key(one) =>
                {
                    one.to_string()
                }
                _ => category,
            };
            let Some(docs) = categories.get(category.as_str()) else {
                return Err(bad(
                    "category",
                    format!(
                        "no category {category:?}; categories are {}",
                        categories.keys().copied().collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            Ok(json!({
                "category": category,
                "count": docs.len(),
                "docs": docs.iter().map(|d| Value::Object(card(d))).collect::<Vec<_>>(),
            }))
        }
        None => Ok(json!({
            "root": snap.root().describe(),
            "total_docs": snap.docs().len(),
            "categories": categories.iter().map(|(name, docs)| json!({
                "category": name,
                "count": docs.len(),
                "doc_ids": docs.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })),
    }
}

/// Struct types, entity ids and the link sources the task names.
pub(super) fn named_subjects(task: &str) -> Vec<Source> {
    let lower = task.to_lowercase();
    let mut out = Vec::new();
    for t in struct_types() {
        if lower.contains(&t.name.to_lowercase()) {
            out.push(Source {
                kind: SourceKind::StructType,
                id: t.id.to_string(),
            });
        }
    }
    for word in task.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if word.contains('-')
            && let Ok(id) = EntityId::parse(word)
        {
            out.push(Source {
                kind: SourceKind::Entity,
                id: id.to_string(),
            });
        }
    }
    out
}

/// What each chosen doc depends on is read before it (one hop): added in front of it
/// (while there are fewer than `most`), or moved there when it was chosen for itself
/// but came later.
fn dependencies_first(
    snap: &Snapshot,
    chosen: &mut Vec<(String, String, Option<f64>)>,
    most: usize,
) {
    let mut i = 0;
    while i < chosen.len() {
        let id = chosen[i].0.clone();
        let deps: Vec<String> = snap
            .graph()
            .from(&Source::doc(&id))
            .filter(|l| l.rel == Relation::DependsOn && l.target_exists)
            .map(|l| l.target_doc_id.clone())
            .collect();
        for dep in deps {
            match chosen.iter().position(|(d, _, _)| *d == dep) {
                Some(j) if j < i => {}
                Some(j) => {
                    let entry = chosen.remove(j);
                    chosen.insert(i, entry);
                    i += 1;
                }
                None if chosen.len() < most => {
                    chosen.insert(i, (dep, format!("{id} depends on it"), None));
                    i += 1;
                }
                None => {}
            }
        }
        i += 1;
    }
}

pub(super) async fn loading_strategy(
    docs: Arc<Docs>,
    _env: Env,
    args: Value,
) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let task = opt_str(&args, "task").unwrap_or_default();
    let budget = whole(&args, "max_tokens", 8000);
    let max_docs = whole(&args, "max_docs", 6);
    let hits = snap.search(task, None, None, max_docs * 2).map_err(|e| {
        ToolError::new(
            ErrorCode::ToolExecutionFailed,
            format!("search failed: {e}"),
        )
    })?;
    let best = hits.first().map_or(0.0, |h| h.score);
    // (doc id, reason, score) in the order they should be read.
    let mut chosen: Vec<(String, String, Option<f64>)> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |chosen: &mut Vec<(String, String, Option<f64>)>,
                   id: &str,
                   reason: String,
                   score: Option<f64>| {
        if seen.insert(id.to_string()) {
            chosen.push((id.to_string(), reason, score));
        }
    };
    // Docs linked to what the task names come first: they are about exactly that.
    for subject in named_subjects(task) {
        for link in snap
            .graph()
            .from(&subject)
            .filter(|l| l.target_exists)
            .take(2)
        {
            add(
                &mut chosen,
                &link.target_doc_id,
                format!("{} {}", link.relation, subject.label()),
                None,
            );
        }
    }
    for hit in hits.iter().filter(|h| h.score >= best * 0.4).take(max_docs) {
        add(
            &mut chosen,
            &hit.doc.id,
            "matches the task".to_string(),
            Some(round(hit.score)),
        );
    }
    chosen.truncate(max_docs);
    dependencies_first(&snap, &mut chosen, max_docs * 2);
    let mut load = Vec::new();
    let mut deferred = Vec::new();
    let mut total = 0;
    for (id, reason, score) in chosen {
        let Some(doc) = snap.doc(&id) else { continue };
        let tokens = doc.est_tokens();
        let entry = json!({
            "doc_id": id, "title": doc.title, "reason": reason,
            "est_tokens": tokens, "score": score,
        });
        if total + tokens <= budget {
            total += tokens;
            load.push(entry);
        } else {
            deferred.push(entry);
        }
    }
    for (order, entry) in load.iter_mut().enumerate() {
        entry["order"] = json!(order + 1);
    }
    Ok(json!({
        "task": task,
        "budget_tokens": budget,
        "total_est_tokens": total,
        "load": load,
        "deferred": deferred,
        "note": if load.is_empty() && deferred.is_empty() {
            "no doc matches the task; try other words or browse structs_docs_get_index"
        } else {
            "read them in order with structs_docs_get; deferred ones did not fit the budget"
        },
    }))
}
