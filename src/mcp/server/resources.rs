//! Resources: the result handles, the entity and doc templates, the entity schemas,
//! the reference docs and the skills' files; what `resources/list`, `resources/templates/list`
//! and `resources/read` answer, and the resource link of a partial result.

use std::sync::Arc;

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;

use super::{McpServer, skills, stateless, strict};
use crate::context::Principal;
use crate::entity::{ENTITY_URI, EntityId};
use crate::tools::schemas::{self, Schemas};

impl McpServer {
    /// The skills of the docs as they are now.
    pub(super) async fn skill_catalog(&self) -> Result<Arc<skills::Catalog>, McpError> {
        let Some(skills) = &self.skills else {
            return Ok(Arc::default());
        };
        let snap = crate::tools::docs::snapshot(&self.docs)
            .await
            .map_err(|e| McpError::internal_error(e.message.clone(), None))?;
        Ok(skills.of(snap))
    }

    /// `resources/read` of `structs://docs/{doc_id}`: the doc's Markdown body (its
    /// metadata and links come with `structs_docs_get`).
    async fn read_doc(&self, uri: &str, id: &str) -> Result<ReadResourceResult, McpError> {
        let snap = crate::tools::docs::snapshot(&self.docs)
            .await
            .map_err(|e| McpError::internal_error(e.message.clone(), None))?;
        let id = crate::docs::links::normalize_doc_id(id).map_err(|e| {
            McpError::invalid_params(format!("{}: {e}", crate::error::quote(uri)), None)
        })?;
        let Some(doc) = snap.doc(&id) else {
            let e = crate::docs::doc_not_found(&snap, &id, "uri");
            return Err(McpError::resource_not_found(
                e.message.clone(),
                Some(e.to_json(&self.core.timestamp())),
            ));
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(doc.body.clone(), uri.to_string()).with_mime_type(DOC_MIME_TYPE),
        ]))
    }

    /// `resources/read` of `structs://entities/{id}`: the entity in the chain's shape.
    async fn read_entity(&self, uri: &str, id: &str) -> Result<ReadResourceResult, McpError> {
        // Each refusal carries the project's error object as its data, so a client
        // reads the same code (`RESOURCE_NOT_FOUND`, …) a tool call would give.
        let id = crate::error::parse_id(id, "uri", None).map_err(|e| {
            let message = format!(
                "{} does not name an entity: {}",
                crate::error::quote(uri),
                e.message
            );
            McpError::invalid_params(
                message.clone(),
                Some(e.with_message(message).to_json(&self.core.timestamp())),
            )
        })?;
        match self.core.source().get(id).await {
            Ok(Some(v)) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(v.to_string(), uri).with_mime_type("application/json"),
            ])),
            Ok(None) => {
                let e = crate::error::ToolError::not_found(id, Some("uri"))
                    .with_message(format!("{id} does not exist"));
                Err(McpError::resource_not_found(
                    e.message.clone(),
                    Some(e.to_json(&self.core.timestamp())),
                ))
            }
            Err(e) => Err(McpError::internal_error(
                e.to_string(),
                Some(e.to_json(&self.core.timestamp())),
            )),
        }
    }

    pub(super) fn entity_of(uri: &str) -> Result<EntityId, McpError> {
        let rest = uri.strip_prefix(ENTITY_URI).ok_or_else(|| {
            McpError::invalid_params(
                format!(
                    "only entities can be subscribed to: {ENTITY_URI}{{id}}, not {}",
                    crate::error::quote(uri)
                ),
                None,
            )
        })?;
        EntityId::parse(rest).map_err(|e| {
            McpError::invalid_params(
                format!("{} does not name an entity: {e}", crate::error::quote(uri)),
                None,
            )
        })
    }

    /// `resources/list`: the live handles, the entity schemas, the skills' `SKILL.md`
    /// files and the reference docs.
    pub(super) async fn list_all_resources(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let now = self.core.now();
        let live = self.core.handle_store().list(now).await.map_err(|e| {
            McpError::internal_error(e.message.clone(), Some(e.to_json(&self.core.timestamp())))
        })?;
        // A caller lists its own results only (the operator, every caller's).
        let who = self.principal(&context);
        let mut resources: Vec<Resource> = live
            .into_iter()
            .filter(|m| who.owns(m.owner.as_deref()))
            .map(|m| {
                Resource::new(format!("{HANDLE_URI}{}", m.handle), m.handle.clone())
                    .with_mime_type("application/json")
                    .with_size(m.size_bytes as u64)
                    .with_description(format!(
                        "{} result, {} rows, expires in {} s",
                        m.tool,
                        m.rows,
                        (m.expires - now).num_seconds().max(0)
                    ))
            })
            .collect();
        // The JSON Schemas of the entity kinds and their shared formats.
        let schemas = Schemas::global();
        for uri in schemas.uris() {
            let text = schemas.get(uri).unwrap_or_default();
            let (name, description) = match schemas.kind_of(uri) {
                Some(kind) => (
                    format!("{kind} schema"),
                    format!(
                        "JSON Schema (Draft 7) of a {kind} in the chain's REST shape; check data \
                         against it with structs_validate_schema"
                    ),
                ),
                None => (
                    "formats schema".to_string(),
                    "Shared definitions the entity schemas refer to (ids, integer strings, \
                     addresses, grid attributes)"
                        .to_string(),
                ),
            };
            resources.push(
                Resource::new(uri, name)
                    .with_mime_type(schemas::MIME_TYPE)
                    .with_size(text.len() as u64)
                    .with_description(description),
            );
        }
        // The skills' SKILL.md files, where the docs have skills.
        if self.skills.is_some() {
            resources.extend(self.skill_catalog().await?.resources());
        }
        // The reference docs, one resource each.
        let docs = crate::tools::docs::snapshot(&self.docs)
            .await
            .map_err(|e| McpError::internal_error(e.message.clone(), None))?;
        for doc in docs.docs().values() {
            resources.push(
                Resource::new(doc.uri(), doc.title.clone())
                    .with_mime_type(DOC_MIME_TYPE)
                    .with_size(doc.bytes as u64)
                    .with_description(format!("{} doc: {}", doc.doc_type, doc.summary)),
            );
        }
        if let Some(offer) = &self.offer {
            resources.extend(offer.resources());
        }
        // Handles come and go with every call.
        Ok(stateless::hint!(
            &context,
            ListResourcesResult::with_all_items(resources),
            stateless::Hints::Volatile
        ))
    }

    /// `resources/templates/list`.
    pub(super) async fn resource_templates(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let mut all = vec![
            ResourceTemplate::new(format!("{ENTITY_URI}{{id}}"), "entity").with_description(
                "An entity in the chain's JSON shape; subscribe to be told when it changes",
            ),
            ResourceTemplate::new(
                format!("{HANDLE_URI}{{handle}}{{?page,page_size,fields,verbosity}}"),
                "result handle",
            )
            .with_description(
                "A stored result over the 25 KB limit, a page at a time (as structs_handle_fetch)",
            ),
            ResourceTemplate::new(format!("{}{{doc_id}}", crate::docs::DOC_URI_PREFIX), "reference doc")
                .with_mime_type(DOC_MIME_TYPE)
                .with_description(
                    "A reference doc's Markdown body (structs_docs_search finds docs; structs_docs_get adds metadata and links)",
                ),
        ];
        if let Some(offer) = &self.offer {
            all.extend(offer.templates());
        }
        let templates = ListResourceTemplatesResult::with_all_items(all);
        Ok(stateless::hint!(
            &context,
            templates,
            stateless::Hints::Fixed
        ))
    }

    /// `resources/read` of any resource this server has.
    pub(super) async fn read_any(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let context = &context;
        async {
            if let Some(read) = self.offer.as_ref().and_then(|o| o.read(&request.uri)) {
                return Ok(stateless::hint!(context, read?, stateless::Hints::Fixed).into());
            }
            let schemas = Schemas::global();
            if let Some(text) = schemas.get(&request.uri) {
                let read = ReadResourceResult::new(vec![
                    ResourceContents::text(text, request.uri.clone())
                        .with_mime_type(schemas::MIME_TYPE),
                ]);
                return Ok(stateless::hint!(context, read, stateless::Hints::Fixed).into());
            }
            if let Some(id) = request.uri.strip_prefix(ENTITY_URI) {
                let read = self.read_entity(&request.uri, id).await?;
                return Ok(stateless::hint!(context, read, stateless::Hints::Block).into());
            }
            if request.uri.starts_with(skills::SKILL_SCHEME) && self.skills.is_some() {
                let catalog = self.skill_catalog().await?;
                let Some(text) = catalog.file(&request.uri) else {
                    return Err(McpError::resource_not_found(
                        format!("no skill file {}", crate::error::quote(&request.uri)),
                        None,
                    ));
                };
                let read = ReadResourceResult::new(vec![
                    ResourceContents::text(text.to_string(), request.uri.clone())
                        .with_mime_type(DOC_MIME_TYPE),
                ]);
                return Ok(stateless::hint!(context, read, stateless::Hints::Volatile).into());
            }
            if let Some(id) = request.uri.strip_prefix(crate::docs::DOC_URI_PREFIX) {
                let read = self.read_doc(&request.uri, id).await?;
                return Ok(stateless::hint!(context, read, stateless::Hints::Volatile).into());
            }
            if request.uri.starts_with("structs://schemas/") {
                return Err(McpError::resource_not_found(
                    format!(
                        "no schema {}; the schemas are {}",
                        crate::error::quote(&request.uri),
                        schemas.uris().join(", ")
                    ),
                    None,
                ));
            }
            let read = self.read(&request.uri, self.principal(context)).await?;
            Ok(stateless::hint!(context, read, stateless::Hints::Volatile).into())
        }
        .await
        .map_err(|e| strict::bounded("resources/read", with_uri(e, &request.uri)))
    }

    /// `resources/read` of `structs://handles/{handle}[?page=N&page_size=M&fields=..&verbosity=..]`:
    /// one page of the stored result, as `structs_handle_fetch` gives it to `who` (a
    /// result of another caller's is not there for it).
    pub async fn read(&self, uri: &str, who: Principal) -> Result<ReadResourceResult, McpError> {
        let Some(rest) = uri.strip_prefix(HANDLE_URI) else {
            return Err(McpError::resource_not_found(
                format!(
                    "no resource {}; handles are {HANDLE_URI}{{handle}}",
                    crate::error::quote(uri)
                ),
                None,
            ));
        };
        let (handle, query) = rest.split_once('?').unwrap_or((rest, ""));
        let mut args = serde_json::Map::new();
        args.insert("handle".into(), Value::String(handle.to_string()));
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let value = match k {
                "page" | "page_size" => v
                    .parse::<u64>()
                    .map(Value::from)
                    .unwrap_or_else(|_| Value::String(v.to_string())),
                "fields" | "verbosity" => Value::String(v.replace("%2C", ",")),
                _ => {
                    return Err(McpError::invalid_params(
                        format!(
                            "unknown query parameter {}; use page, page_size, fields, verbosity",
                            crate::error::quote(k)
                        ),
                        None,
                    ));
                }
            };
            args.insert(k.to_string(), value);
        }
        let ctx = crate::context::CallContext::new().with_owner(who);
        let fetched = self
            .core
            .call_with("structs_handle_fetch", Value::Object(args), ctx)
            .await
            .map_err(|e| e.to_json(&self.core.timestamp()));
        match fetched {
            Ok(page) => Ok(ReadResourceResult::new(vec![
                ResourceContents::text(page.to_string(), uri).with_mime_type("application/json"),
            ])),
            Err(error) => {
                let message = error["error"]["message"]
                    .as_str()
                    .unwrap_or("cannot read the handle")
                    .to_string();
                // A store that cannot be reached is the server's trouble, not a
                // missing resource.
                if error["error"]["code"] == "RESOURCE_UNAVAILABLE" {
                    Err(McpError::internal_error(message, Some(error)))
                } else {
                    Err(McpError::resource_not_found(message, Some(error)))
                }
            }
        }
    }
}

/// A refused `resources/read` names the resource in its data (`data.uri`, SEP-2164),
/// beside the project's error object.
fn with_uri(mut error: McpError, uri: &str) -> McpError {
    let mut data = match error.data.take() {
        Some(Value::Object(map)) => map,
        Some(other) => {
            let mut map = serde_json::Map::new();
            map.insert("detail".into(), other);
            map
        }
        None => serde_json::Map::new(),
    };
    data.insert("uri".into(), Value::String(uri.to_string()));
    error.data = Some(Value::Object(data));
    error
}

/// The MIME type reference docs are served with.
const DOC_MIME_TYPE: &str = "text/markdown";

pub use crate::handles::HANDLE_URI;

/// The resource link of a partial result, if it is one.
pub(super) fn handle_link(value: &Value) -> Option<Resource> {
    if value.get("status")?.as_str()? != "partial" {
        return None;
    }
    let handle = value.get("result_handle")?.as_str()?;
    let meta = value.get("metadata");
    let mut link = Resource::new(format!("{HANDLE_URI}{handle}"), handle)
        .with_mime_type("application/json")
        .with_description(format!(
            "The whole result of {}, {} pages; read with ?page=N",
            meta.and_then(|m| m["tool_name"].as_str())
                .unwrap_or("the tool"),
            value["page_info"]["total_pages"]
        ));
    if let Some(size) = meta.and_then(|m| m["size_bytes"].as_u64()) {
        link = link.with_size(size);
    }
    Some(link)
}
