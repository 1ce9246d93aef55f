//! The docs tools that list, write, suggest and sync links.

use super::*;

/// A struct's type number, read through the source.
pub(super) async fn struct_type_of(env: &Env, id: EntityId) -> Option<String> {
    let v = env.source().get(id).await.ok()??;
    chain_u64(&v, &["Struct", "type"]).map(|t| t.to_string())
}

pub(super) async fn list_references(
    docs: Arc<Docs>,
    env: Env,
    args: Value,
) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let source = source_arg(&args)?;
    let mut sources = vec![(source.clone(), None::<String>)];
    if args.get("include_kind_links") == Some(&Value::Bool(true))
        && source.kind == SourceKind::Entity
        && let Ok(id) = EntityId::parse(&source.id)
    {
        // The more specific first: a struct's type, then the kind.
        if id.kind == EntityKind::Struct
            && let Some(t) = struct_type_of(&env, id).await
        {
            let s = Source {
                kind: SourceKind::StructType,
                id: t,
            };
            let label = s.label();
            sources.push((s, Some(format!("its {label}"))));
        }
        sources.push((
            Source {
                kind: SourceKind::EntityKind,
                id: id.kind.name().to_string(),
            },
            Some(format!("its kind {}", id.kind.name())),
        ));
    }
    let mut references = Vec::new();
    let mut seen = BTreeSet::new();
    for (s, via) in &sources {
        for l in snap.graph().from(s) {
            if !seen.insert(l.target_doc_id.clone()) {
                continue;
            }
            let mut r = json!({
                "target_doc_id": l.target_doc_id,
                "title": snap.doc(&l.target_doc_id).map(|d| d.title.as_str()),
                "relation": l.relation,
                "origin": l.origin,
                "declared_in": l.declared_in,
                "target_exists": l.target_exists,
            });
            if let Some(via) = via {
                r["via"] = json!(via);
            }
            references.push(r);
        }
    }
    Ok(json!({
        "source": source_json(&source),
        "count": references.len(),
        "references": references,
    }))
}

/// Writes links through [`Docs::upsert`] off the async workers.
pub(super) async fn write_links(
    docs: &Arc<Docs>,
    source: Source,
    changes: Vec<(String, Relation)>,
) -> Result<(String, Vec<crate::docs::Upserted>), ToolError> {
    let docs = Arc::clone(docs);
    tokio::task::spawn_blocking(move || docs.upsert(&source, &changes))
        .await
        .map_err(|e| {
            ToolError::new(
                ErrorCode::ToolExecutionFailed,
                format!("writing links failed: {e}"),
            )
        })?
}

pub(super) async fn upsert_link(
    docs: Arc<Docs>,
    _env: Env,
    args: Value,
) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let source = source_arg(&args)?;
    let target = doc_arg(
        &snap,
        opt_str(&args, "target_doc_id").unwrap_or_default(),
        "target_doc_id",
    )?
    .id
    .clone();
    let relation = relation_arg(&args, source.kind.default_relation())?;
    let (file, mut outcomes) = write_links(&docs, source.clone(), vec![(target, relation)]).await?;
    let outcome = outcomes.pop().map(|o| json!(o)).unwrap_or(Value::Null);
    Ok(json!({
        "source": source_json(&source),
        "link": outcome,
        "written_to": file,
        "origin": Origin::Explicit.as_str(),
    }))
}

/// The things related to `source` that suggestions count.
pub(super) async fn related_of(
    env: &Env,
    snap: &Snapshot,
    source: &Source,
) -> Result<Vec<Related>, ToolError> {
    match source.kind {
        SourceKind::Entity => {
            let id = EntityId::parse(&source.id).map_err(|e| {
                ToolError::field(
                    ErrorCode::ValidationInvalidFormat,
                    "source_id",
                    e.to_string(),
                )
            })?;
            let entity = crate::tools::fetch(env, id, "source_id").await?;
            let mut found = Extraction::default();
            found.walk_entity(id, &entity);
            let mut related = Vec::new();
            let mut seen = BTreeSet::new();
            for c in found.candidates {
                if c.id == id || !seen.insert(c.id) || related.len() == 100 {
                    continue;
                }
                let mut via = vec![
                    Source {
                        kind: SourceKind::Entity,
                        id: c.id.to_string(),
                    },
                    Source {
                        kind: SourceKind::EntityKind,
                        id: c.id.kind.name().to_string(),
                    },
                ];
                if c.id.kind == EntityKind::Struct
                    && let Some(t) = struct_type_of(env, c.id).await
                {
                    via.push(Source {
                        kind: SourceKind::StructType,
                        id: t,
                    });
                }
                related.push(Related {
                    label: format!("{} {}", c.id.kind.name(), c.id),
                    via,
                });
            }
            Ok(related)
        }
        SourceKind::Doc => {
            if snap.doc(&source.id).is_none() {
                return Err(doc_not_found(snap, &source.id, "source_id"));
            }
            Ok(snap
                .graph()
                .walk(&source.id, 1, Direction::Both, 200)
                .docs
                .into_iter()
                .map(|step| Related {
                    label: format!("doc {}", step.doc_id),
                    via: vec![Source::doc(&step.doc_id)],
                })
                .collect())
        }
        SourceKind::EntityKind | SourceKind::StructType => Err(bad(
            "source_kind",
            "suggestions work from an entity (its related entities) or a doc (its linked docs); \
             link kinds and struct types with structs_docs_upsert_link",
        )),
    }
}

pub(super) async fn suggest_references(
    docs: Arc<Docs>,
    env: Env,
    args: Value,
) -> Result<Value, ToolError> {
    let snap = snapshot(&docs).await?;
    let source = source_arg(&args)?;
    let related = related_of(&env, &snap, &source).await?;
    let min_score = whole(&args, "min_score", 1);
    let limit = whole(&args, "limit", 20);
    let candidates: Vec<suggest::Candidate> = suggest::suggest(&snap, &source, &related)
        .into_iter()
        .filter(|c| c.score >= min_score)
        .collect();
    let mode = opt_str(&args, "mode").unwrap_or("preview");
    let mut out = json!({
        "source": source_json(&source),
        "mode": mode,
        "related": related.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(),
        "min_score": min_score,
        "candidate_count": candidates.len(),
        "candidates": candidates.iter().take(limit).collect::<Vec<_>>(),
    });
    if mode != "apply" {
        return Ok(out);
    }
    let relation = relation_arg(&args, source.kind.default_relation())?;
    let max_apply = whole(&args, "max_apply", 10);
    let mut not_applied = Vec::new();
    let chosen: Vec<&suggest::Candidate> = match args
        .get("selected_doc_ids")
        .and_then(Value::as_array)
    {
        Some(selected) => {
            let mut wanted = Vec::new();
            for s in selected.iter().filter_map(Value::as_str) {
                let id = normalize_doc_id(s).unwrap_or_else(|_| s.to_string());
                if wanted.contains(&id) {
                    continue;
                }
                if !candidates.iter().any(|c| c.doc_id == id) {
                    not_applied.push(json!({"doc_id": id, "reason": "not a candidate (no related thing links to it, it is already linked, or its score is under min_score)"}));
                }
                wanted.push(id);
            }
            candidates
                .iter()
                .filter(|c| wanted.contains(&c.doc_id))
                .collect()
        }
        None => candidates.iter().collect(),
    };
    for c in chosen.iter().skip(max_apply) {
        not_applied
            .push(json!({"doc_id": c.doc_id, "reason": format!("over max_apply ({max_apply})")}));
    }
    let changes: Vec<(String, Relation)> = chosen
        .iter()
        .take(max_apply)
        .map(|c| (c.doc_id.clone(), relation))
        .collect();
    if changes.is_empty() {
        out["applied"] = json!([]);
        out["not_applied"] = json!(not_applied);
        return Ok(out);
    }
    let (file, outcomes) = write_links(&docs, source, changes).await?;
    out["applied"] = json!(outcomes);
    out["not_applied"] = json!(not_applied);
    out["written_to"] = json!(file);
    Ok(out)
}

pub(super) async fn sync(docs: Arc<Docs>, _env: Env, _args: Value) -> Result<Value, ToolError> {
    let docs = Arc::clone(&docs);
    let (_, report) = tokio::task::spawn_blocking(move || docs.sync())
        .await
        .map_err(|e| ToolError::new(ErrorCode::ToolExecutionFailed, format!("sync failed: {e}")))?;
    let mut out = json!(report);
    let total = report.warnings.len();
    out["warnings"] = json!(
        report
            .warnings
            .iter()
            .take(WARNINGS_SHOWN)
            .collect::<Vec<_>>()
    );
    out["warnings_total"] = json!(total);
    for list in ["added", "removed", "changed"] {
        if let Some(items) = out[list].as_array_mut() {
            let n = items.len();
            items.truncate(200);
            out[format!("{list}_total")] = json!(n);
        }
    }
    Ok(out)
}
