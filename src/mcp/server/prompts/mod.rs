//! MCP prompts: the commands an agent's host offers its user, built from what the server
//! already knows. Five are the server's own (a briefing on an entity, a build plan, a
//! proof of work, a diagnosis, the next move); one more per workflow; and, when the
//! docs hold them, one per skill and playbook. Each answer is a user message saying
//! what to do, followed by the resources it relies on: entities embedded as JSON, docs
//! linked (or embedded when the prompt is the doc).
//!
//! The catalog is read again on every `prompts/list`, so a docs sync that adds or
//! removes a skill shows at once; [`McpServer`](super::McpServer) tells its client with
//! `notifications/prompts/list_changed`.

pub use crate::briefing::{Made, goal_names};

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage, Resource, Role,
};
use serde_json::{Map, Value};

use crate::core::Core;
use crate::docs::{Docs, Snapshot};
use crate::entity::EntityKind;

/// What an argument holds, which is also how it is completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// An entity id, of one kind or any.
    Entity(Option<EntityKind>),
    /// A struct type, by id or name.
    StructType,
    /// A result handle this server stored.
    Handle,
    /// One of the decision trees' goals.
    Goal,
    /// A proof-of-work action type.
    PowAction,
    /// A tool name.
    Tool,
    /// A workflow's name.
    Workflow,
    /// Free text.
    Text,
}

/// One argument of a prompt.
#[derive(Debug, Clone)]
pub struct ArgSpec {
    pub name: String,
    pub description: String,
    pub required: bool,
    pub kind: ArgKind,
}

impl ArgSpec {
    fn new(name: &str, kind: ArgKind, required: bool, description: &str) -> ArgSpec {
        ArgSpec {
            name: name.to_string(),
            description: description.to_string(),
            required,
            kind,
        }
    }
}

/// One prompt as listed.
#[derive(Debug, Clone)]
pub struct PromptSpec {
    pub name: String,
    pub title: String,
    pub description: String,
    pub args: Vec<ArgSpec>,
    pub made: Made,
}

impl PromptSpec {
    /// The prompt as `prompts/list` shows it.
    pub fn to_mcp(&self) -> Prompt {
        let args = self
            .args
            .iter()
            .map(|a| {
                PromptArgument::new(&a.name)
                    .with_description(&a.description)
                    .with_required(a.required)
            })
            .collect();
        Prompt::new(&self.name, Some(&self.description), Some(args)).with_title(&self.title)
    }

    pub fn arg(&self, name: &str) -> Option<&ArgSpec> {
        self.args.iter().find(|a| a.name == name)
    }
}

/// The doc types that become prompts of their own.
const PROMPT_DOC_TYPES: [&str; 2] = ["skill", "playbook"];

/// The longest prompt name; a doc whose id would make a longer one is left out.
const MAX_NAME: usize = 64;

/// Every prompt the server offers with these docs, in a stable order: its own five,
/// then the workflows, then the docs'.
///
/// A declarative table: one entry a prompt.
pub fn catalog(docs: Option<&Snapshot>) -> Vec<PromptSpec> {
    use ArgKind::*;
    let mut out = vec![
        PromptSpec {
            name: "brief".into(),
            title: "Brief me on an entity".into(),
            description: "A briefing on a player, planet, guild, fleet or any entity: its state \
                and the entities it references, attached."
                .into(),
            args: vec![ArgSpec::new(
                "entity_id",
                Entity(None),
                true,
                "The entity (1-N a player, 2-N a planet, 0-N a guild, 9-N a fleet, …).",
            )],
            made: Made::Brief,
        },
        PromptSpec {
            name: "plan-build".into(),
            title: "Plan a build on a planet".into(),
            description: "A plan to build a struct type on a planet (or in its owner's fleet), \
                from the game's requirements evaluated now."
                .into(),
            args: vec![
                ArgSpec::new(
                    "planet_id",
                    Entity(Some(EntityKind::Planet)),
                    true,
                    "The planet (2-N).",
                ),
                ArgSpec::new(
                    "struct_type",
                    StructType,
                    true,
                    "The struct type: an id 1-22 or a name (Ore Extractor).",
                ),
                ArgSpec::new(
                    "player_id",
                    Entity(Some(EntityKind::Player)),
                    false,
                    "The builder (1-N); the planet's owner when omitted.",
                ),
            ],
            made: Made::PlanBuild,
        },
        PromptSpec {
            name: "proof-of-work".into(),
            title: "Get a struct's proof of work done".into(),
            description: "Finish a struct's build, mining or refining: the proof's schedule now, \
                and how to compute and submit it."
                .into(),
            args: vec![
                ArgSpec::new(
                    "struct_id",
                    Entity(Some(EntityKind::Struct)),
                    true,
                    "The struct (5-N).",
                ),
                ArgSpec::new(
                    "action_type",
                    PowAction,
                    false,
                    "struct_build_complete, ore_miner_complete or ore_refinery_complete; read from \
                     the struct when omitted.",
                ),
            ],
            made: Made::Pow,
        },
        PromptSpec {
            name: "diagnose".into(),
            title: "Diagnose a failed call or plan".into(),
            description: "Why a tool call or plan failed and how to fix it, from a result \
                handle, or from the failed answer or a line of a session log (--record)."
                .into(),
            args: vec![
                ArgSpec::new(
                    "handle",
                    Handle,
                    false,
                    "A result handle holding the answer or plan report.",
                ),
                ArgSpec::new(
                    "answer",
                    Text,
                    false,
                    "The failed answer as JSON, or a response line of a session log.",
                ),
                ArgSpec::new(
                    "tool",
                    Tool,
                    false,
                    "The tool that was called, when the answer does not say.",
                ),
            ],
            made: Made::Diagnose,
        },
        PromptSpec {
            name: "next".into(),
            title: "What should I do next?".into(),
            description: "The next moves for a player, ranked by the decision trees against the \
                game as it is now."
                .into(),
            args: vec![
                ArgSpec::new(
                    "player_id",
                    Entity(Some(EntityKind::Player)),
                    true,
                    "The player (1-N).",
                ),
                ArgSpec::new("goal", Goal, false, "One goal; every goal when omitted."),
            ],
            made: Made::Next,
        },
        PromptSpec {
            name: "run-workflow".into(),
            title: "Run a workflow".into(),
            description: "Any workflow by name, with its inputs as a JSON object (each \
                workflow-… prompt takes its inputs one by one)."
                .into(),
            args: vec![
                ArgSpec::new("workflow", Workflow, true, "The workflow's name."),
                ArgSpec::new(
                    "inputs",
                    Text,
                    false,
                    "Its inputs as a JSON object, e.g. {\"planet_id\": \"2-1\"}.",
                ),
            ],
            made: Made::RunWorkflow,
        },
    ];
    for wf in crate::plan::workflow::catalog().values() {
        let args = wf
            .inputs
            .iter()
            .map(|i| {
                let kind = input_kind(i);
                ArgSpec::new(&i.name, kind, i.required, &i.description)
            })
            .collect();
        out.push(PromptSpec {
            name: format!("workflow-{}", wf.name),
            title: format!("Run the {} workflow", wf.name),
            description: wf.description.clone(),
            args,
            made: Made::Workflow(wf.name.clone()),
        });
    }
    if let Some(snap) = docs {
        for doc in snap.docs().values() {
            if !PROMPT_DOC_TYPES.contains(&doc.doc_type.as_str()) || is_index(&doc.id) {
                continue;
            }
            let name = doc_prompt_name(&doc.doc_type, &doc.id);
            if name.len() > MAX_NAME || out.iter().any(|p| p.name == name) {
                continue;
            }
            out.push(PromptSpec {
                name,
                title: doc.title.clone(),
                description: format!("Follow the {}: {}", doc.doc_type, doc.summary),
                args: vec![ArgSpec::new(
                    "player_id",
                    Entity(Some(EntityKind::Player)),
                    false,
                    "The player to apply it to (1-N); attached when given.",
                )],
                made: Made::Doc(doc.id.clone()),
            });
        }
    }
    out
}

/// A workflow input's kind: an entity of its example's kind, else free text.
fn input_kind(input: &crate::plan::workflow::Input) -> ArgKind {
    let example = input.example.as_ref().and_then(Value::as_str);
    match example.map(crate::entity::EntityId::parse) {
        Some(Ok(id)) => ArgKind::Entity(Some(id.kind)),
        _ => ArgKind::Text,
    }
}

/// A folder's index page is not a prompt.
fn is_index(id: &str) -> bool {
    id == "index" || id.ends_with("/index")
}

/// `skill-structs-building` for `skills/structs-building/SKILL`, and
/// `playbook-situations-under-attack` for `playbooks/situations/under-attack`: the
/// type, then the id without its type folder or a trailing `SKILL`/`README`, with
/// anything but letters, digits and `-` turned into `-`.
fn doc_prompt_name(doc_type: &str, id: &str) -> String {
    let mut parts: Vec<&str> = id.split('/').collect();
    if parts.len() > 1 && parts[0].to_lowercase().starts_with(doc_type) {
        parts.remove(0);
    }
    if parts.len() > 1
        && parts
            .last()
            .is_some_and(|l| l.eq_ignore_ascii_case("skill") || l.eq_ignore_ascii_case("readme"))
    {
        parts.pop();
    }
    let mut name = format!("{doc_type}-");
    for c in parts.join("-").chars() {
        name.push(if c.is_ascii_alphanumeric() || c == '-' {
            c.to_ascii_lowercase()
        } else {
            '-'
        });
    }
    name
}

/// The prompts of one server: its core and docs.
#[derive(Clone)]
pub struct Prompts {
    core: Core,
    docs: Arc<Docs>,
}

impl Prompts {
    pub fn new(core: Core, docs: Arc<Docs>) -> Prompts {
        Prompts { core, docs }
    }

    async fn snapshot(&self) -> Result<Arc<Snapshot>, McpError> {
        crate::tools::docs::snapshot(&self.docs)
            .await
            .map_err(|e| McpError::internal_error(e.message.clone(), None))
    }

    /// Every prompt, as listed now.
    pub async fn list(&self) -> Result<Vec<PromptSpec>, McpError> {
        let snap = self.snapshot().await?;
        Ok(catalog(Some(&snap)))
    }

    /// The prompt named `name`, or `-32602` naming the prompts there are.
    pub async fn spec(&self, name: &str) -> Result<PromptSpec, McpError> {
        let all = self.list().await?;
        let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
        match all.iter().find(|p| p.name == name) {
            Some(p) => Ok(p.clone()),
            None => Err(McpError::invalid_params(
                format!(
                    "no prompt {}; the prompts are {}",
                    crate::error::quote(name),
                    names.join(", ")
                ),
                Some(serde_json::json!({"prompts": names})),
            )),
        }
    }

    /// `prompts/get`: the arguments checked against the prompt's, then its messages.
    pub async fn get(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<GetPromptResult, McpError> {
        let spec = self.spec(name).await?;
        let args = check_arguments(&spec, arguments.unwrap_or_default())?;
        let snap = self.snapshot().await?;
        let briefing = crate::briefing::render(&self.core, &snap, &spec.made, &args)
            .await
            .map_err(refused)?;
        Ok(messages(briefing))
    }
}

/// A briefing that could not be made, as the protocol's error.
fn refused(r: crate::briefing::Refused) -> McpError {
    if r.arguments {
        McpError::invalid_params(r.message, r.data)
    } else {
        McpError::internal_error(r.message, r.data)
    }
}

/// A briefing as `prompts/get`'s answer: each part a user message.
fn messages(briefing: crate::briefing::Briefing) -> GetPromptResult {
    use crate::briefing::Part;
    let out = briefing
        .parts
        .into_iter()
        .map(|part| match part {
            Part::Text(text) => PromptMessage::new_text(Role::User, text),
            Part::Embedded {
                uri,
                mime_type,
                text,
            } => PromptMessage::new_resource(
                Role::User,
                uri,
                Some(mime_type.into()),
                Some(text),
                None,
                None,
                None,
            ),
            Part::Link(link) => {
                let mut resource = Resource::new(link.uri, link.name);
                if let Some(mime_type) = link.mime_type {
                    resource = resource.with_mime_type(mime_type);
                }
                if let Some(description) = link.description {
                    resource = resource.with_description(description);
                }
                if let Some(size) = link.size {
                    resource = resource.with_size(size);
                }
                PromptMessage::new(Role::User, ContentBlock::resource_link(resource))
            }
        })
        .collect();
    GetPromptResult::new(out).with_description(briefing.description)
}

/// The arguments as text, each one the prompt takes, every required one present.
fn check_arguments(
    spec: &PromptSpec,
    given: Map<String, Value>,
) -> Result<Map<String, Value>, McpError> {
    let mut out = Map::new();
    for (k, v) in given {
        if spec.arg(&k).is_none() {
            let names: Vec<&str> = spec.args.iter().map(|a| a.name.as_str()).collect();
            return Err(McpError::invalid_params(
                format!(
                    "prompt {} takes no argument {}; its arguments are {}",
                    spec.name,
                    crate::error::quote(&k),
                    names.join(", ")
                ),
                None,
            ));
        }
        let text = match v {
            Value::Null => continue,
            Value::String(s) if s.trim().is_empty() => continue,
            Value::String(s) => s.trim().to_string(),
            // Prompt arguments are strings; a number or flag a client sends as JSON is
            // taken as its text.
            Value::Number(_) | Value::Bool(_) => v.to_string(),
            other => other.to_string(),
        };
        out.insert(k, Value::String(text));
    }
    for a in spec.args.iter().filter(|a| a.required) {
        if !out.contains_key(&a.name) {
            return Err(McpError::invalid_params(
                format!(
                    "prompt {} needs the argument {:?}: {}",
                    spec.name, a.name, a.description
                ),
                None,
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_prompt_names_are_short_and_plain() {
        assert_eq!(
            doc_prompt_name("skill", "skills/structs-building/SKILL"),
            "skill-structs-building"
        );
        assert_eq!(
            doc_prompt_name("playbook", "playbooks/situations/under-attack"),
            "playbook-situations-under-attack"
        );
        assert_eq!(doc_prompt_name("skill", "skills/a b.c"), "skill-a-b-c");
    }

    #[test]
    fn the_catalog_without_docs_has_the_five_and_each_workflow() {
        let names: Vec<String> = catalog(None).into_iter().map(|p| p.name).collect();
        for want in [
            "brief",
            "plan-build",
            "proof-of-work",
            "diagnose",
            "next",
            "run-workflow",
        ] {
            assert!(names.contains(&want.to_string()), "{names:?}");
        }
        for wf in crate::plan::workflow::catalog().keys() {
            assert!(names.contains(&format!("workflow-{wf}")), "{names:?}");
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "names are unique: {names:?}");
    }

    #[test]
    fn arguments_are_checked() {
        let spec = catalog(None)
            .into_iter()
            .find(|p| p.name == "brief")
            .unwrap();
        let e = check_arguments(&spec, Map::new()).unwrap_err();
        assert_eq!(e.code.0, -32602);
        assert!(e.message.contains("entity_id"), "{}", e.message);
        let mut extra = Map::new();
        extra.insert("entity_id".into(), "1-1".into());
        extra.insert("colour".into(), "red".into());
        let e = check_arguments(&spec, extra).unwrap_err();
        assert!(e.message.contains("colour"), "{}", e.message);
        let mut ok = Map::new();
        ok.insert("entity_id".into(), " 1-1 ".into());
        assert_eq!(check_arguments(&spec, ok).unwrap()["entity_id"], "1-1");
    }
}
