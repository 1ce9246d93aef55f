//! `completion/complete`: what a prompt argument or a resource template variable being
//! typed can become. Entity ids come from the source (by kind and prefix, without
//! reading the entities), doc ids from the docs, handles from the store, and struct
//! types, goals and tools from the catalog. Values are ranked (a prefix match before a
//! match inside, then shorter first) and capped at the protocol's 100, with `total`
//! and `hasMore` saying how many there are.

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteRequestParams, CompletionInfo, Reference};

use super::prompts::{ArgKind, Prompts};
use crate::core::Core;
use crate::docs::Docs;
use crate::entity::{ENTITY_URI, EntityKind};

/// The most values one answer carries (the protocol's limit).
pub const MAX_VALUES: usize = CompletionInfo::MAX_VALUES;

/// The proof-of-work actions a struct's prompt takes.
const POW_ACTIONS: [&str; 3] = [
    "struct_build_complete",
    "ore_miner_complete",
    "ore_refinery_complete",
];

/// The handle template's `verbosity` values.
const VERBOSITY: [&str; 3] = ["minimal", "standard", "full"];

/// Answers one `completion/complete`.
pub async fn complete(
    core: &Core,
    docs: &std::sync::Arc<Docs>,
    prompts: &Prompts,
    request: &CompleteRequestParams,
    who: &crate::context::Principal,
) -> Result<CompletionInfo, McpError> {
    let value = request.argument.value.as_str();
    let name = request.argument.name.as_str();
    // A prompt, argument or template this server does not have has nothing to offer:
    // the answer is empty rather than an error, because a host asks while its user is
    // still typing (and the conformance suite asks about a prompt of its own).
    let kind = match &request.r#ref {
        Reference::Prompt(p) => match prompts.spec(&p.name).await {
            Ok(spec) => match spec.arg(name) {
                Some(a) => Kind::Arg(a.kind),
                None => return Ok(info(Vec::new(), 0)),
            },
            Err(_) => return Ok(info(Vec::new(), 0)),
        },
        Reference::Resource(r) => match template_kind(&r.uri, name) {
            Some(kind) => kind,
            None => return Ok(info(Vec::new(), 0)),
        },
        _ => return Ok(info(Vec::new(), 0)),
    };
    match kind {
        Kind::Arg(ArgKind::Entity(k)) => entity_ids(core, k, value).await,
        Kind::Arg(ArgKind::StructType) => Ok(struct_types(value)),
        Kind::Arg(ArgKind::Handle) => {
            let live = core
                .handle_store()
                .list(core.now())
                .await
                .map_err(|e| McpError::internal_error(e.message.clone(), None))?;
            // Only the caller's own handles are offered (the operator, every one).
            let own = live.into_iter().filter(|m| who.owns(m.owner.as_deref()));
            Ok(ranked(own.map(|m| m.handle), value))
        }
        Kind::Arg(ArgKind::Goal) => Ok(ranked(super::prompts::goal_names(core), value)),
        Kind::Arg(ArgKind::PowAction) => Ok(ranked(POW_ACTIONS.map(String::from), value)),
        Kind::Arg(ArgKind::Tool) => Ok(ranked(core.tool_names().map(String::from), value)),
        Kind::Arg(ArgKind::Workflow) => Ok(ranked(
            crate::plan::workflow::catalog().keys().cloned(),
            value,
        )),
        Kind::Arg(ArgKind::Text) => Ok(ranked(Vec::<String>::new(), value)),
        Kind::DocId => {
            let snap = crate::tools::docs::snapshot(docs)
                .await
                .map_err(|e| McpError::internal_error(e.message.clone(), None))?;
            Ok(ranked(snap.docs().keys().cloned(), value))
        }
        Kind::Verbosity => Ok(ranked(VERBOSITY.map(String::from), value)),
    }
}

/// What a variable completes to.
enum Kind {
    Arg(ArgKind),
    DocId,
    Verbosity,
}

/// The variable `name` of one of the server's resource templates.
fn template_kind(uri: &str, name: &str) -> Option<Kind> {
    if uri.starts_with(ENTITY_URI) {
        return (name == "id").then_some(Kind::Arg(ArgKind::Entity(None)));
    }
    if uri.starts_with(super::HANDLE_URI) {
        return match name {
            "handle" => Some(Kind::Arg(ArgKind::Handle)),
            "verbosity" => Some(Kind::Verbosity),
            // Numbers and field lists have nothing to offer.
            "page" | "page_size" | "fields" => Some(Kind::Arg(ArgKind::Text)),
            _ => None,
        };
    }
    if uri.starts_with(crate::docs::DOC_URI_PREFIX) {
        return (name == "doc_id").then_some(Kind::DocId);
    }
    None
}

/// Entity ids starting with `value`. With the kind known, `12` means `N-12`; with any
/// kind, text before the `-` completes to the kinds' `N-` prefixes.
async fn entity_ids(
    core: &Core,
    kind: Option<EntityKind>,
    value: &str,
) -> Result<CompletionInfo, McpError> {
    let value = value.trim();
    let (kind, prefix) = match kind {
        Some(k) if value.contains('-') || value.is_empty() => (k, value.to_string()),
        Some(k) => (k, format!("{}-{value}", k.code())),
        None => match value.split_once('-') {
            Some((code, _)) => match code.parse::<u64>().ok().and_then(EntityKind::from_code) {
                Some(k) => (k, value.to_string()),
                None => return Ok(info(Vec::new(), 0)),
            },
            None => {
                let kinds = EntityKind::ALL
                    .iter()
                    .map(|k| format!("{}-", k.code()))
                    .filter(|p| p.starts_with(value));
                return Ok(ranked(kinds, ""));
            }
        },
    };
    let found = core
        .source()
        .ids_with_prefix(kind, prefix, MAX_VALUES)
        .await
        .map_err(|e| McpError::internal_error(e.message.clone(), None))?;
    let values = found.ids.iter().map(ToString::to_string).collect();
    Ok(info(values, found.total))
}

/// Struct types by number (ids starting with the digits) or by name (names whose
/// squashed form starts with, then contains, the squashed text), as names.
fn struct_types(value: &str) -> CompletionInfo {
    let types = crate::entity::struct_types::struct_types();
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let ids = types.iter().map(|t| t.id.to_string());
        return ranked(ids, value);
    }
    // Names compared as the tools read them: `ore_extractor` is `Ore Extractor`.
    let squash = crate::game::squash;
    let want = squash(value);
    let mut hits: Vec<(bool, usize, &str)> = types
        .iter()
        .filter_map(|t| {
            let name = squash(&t.name);
            let at = name.find(&want)?;
            Some((at != 0, t.id as usize, t.name.as_str()))
        })
        .collect();
    hits.sort();
    let total = hits.len() as u64;
    info(
        hits.into_iter().map(|(_, _, n)| n.to_string()).collect(),
        total,
    )
}

/// `candidates` that start with `value` (case-insensitive), then those that contain it,
/// each group shortest first, then by text.
fn ranked(candidates: impl IntoIterator<Item = String>, value: &str) -> CompletionInfo {
    let want = value.trim().to_lowercase();
    let mut hits: Vec<(u8, usize, String)> = candidates
        .into_iter()
        .filter_map(|c| {
            let lower = c.to_lowercase();
            let rank = if lower.starts_with(&want) {
                0
            } else if lower.contains(&want) {
                1
            } else {
                return None;
            };
            Some((rank, c.len(), c))
        })
        .collect();
    hits.sort();
    let total = hits.len() as u64;
    info(hits.into_iter().map(|(_, _, c)| c).collect(), total)
}

/// At most [`MAX_VALUES`] of `values`, with the total and whether there are more.
/// Every value a prompt's argument may take, when the completions list them all (an
/// entity id has too many to list, free text none).
pub async fn choices(
    core: &Core,
    docs: &std::sync::Arc<Docs>,
    prompts: &Prompts,
    prompt: &str,
    argument: &str,
) -> Option<Vec<String>> {
    let request = CompleteRequestParams::new(
        Reference::Prompt(rmcp::model::PromptReference::new(prompt)),
        rmcp::model::ArgumentInfo::new(argument, ""),
    );
    // No prompt takes a handle, so no one's handles are offered.
    let nobody = crate::context::Principal::anonymous();
    let info = complete(core, docs, prompts, &request, &nobody)
        .await
        .ok()?;
    (info.has_more != Some(true) && !info.values.is_empty()).then_some(info.values)
}

fn info(mut values: Vec<String>, total: u64) -> CompletionInfo {
    values.truncate(MAX_VALUES);
    let has_more = total > values.len() as u64;
    let total = u32::try_from(total).unwrap_or(u32::MAX);
    CompletionInfo::with_pagination(values, Some(total), has_more)
        .unwrap_or_else(|_| CompletionInfo::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranking_puts_prefixes_first_then_shorter() {
        let got = ranked(
            [
                "guides/plans",
                "api/tools",
                "guides/pow",
                "knowledge/guides",
            ]
            .map(String::from),
            "guides",
        );
        assert_eq!(
            got.values,
            ["guides/pow", "guides/plans", "knowledge/guides"]
        );
        assert_eq!(got.total, Some(3));
        assert_eq!(got.has_more, Some(false));
    }

    #[test]
    fn struct_types_complete_by_name_or_number() {
        let by_name = struct_types("ore");
        assert!(
            by_name.values.iter().any(|v| v == "Ore Extractor"),
            "{by_name:?}"
        );
        assert!(
            by_name
                .values
                .iter()
                .all(|v| v.to_lowercase().replace(' ', "").contains("ore"))
        );
        let by_number = struct_types("1");
        assert_eq!(by_number.values.first().map(String::as_str), Some("1"));
        assert!(
            by_number.values.contains(&"14".to_string()),
            "{by_number:?}"
        );
        assert!(!by_number.values.contains(&"2".to_string()));
    }

    #[test]
    fn answers_are_capped_with_the_total() {
        let many = (0..250).map(|i| format!("x{i}"));
        let got = ranked(many, "x");
        assert_eq!(got.values.len(), MAX_VALUES);
        assert_eq!(got.total, Some(250));
        assert_eq!(got.has_more, Some(true));
    }
}
