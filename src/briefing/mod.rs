//! Game briefings: what an agent (or its user) is told to do now, with what it relies
//! on. A briefing on an entity, a build plan, a proof of work, a diagnosis of a failed
//! call, the next moves, a workflow to run, a skill or playbook to follow.
//!
//! A briefing is an instruction followed by its parts: entities embedded as the
//! chain's JSON, docs and entities linked, a doc embedded whole. Nothing here speaks a
//! protocol: the MCP server's prompts turn a [`Briefing`] into `prompts/get`'s
//! messages, and any other face can show one as it is.

mod build;

pub use build::{goal_names, render};

use serde_json::Value;

/// What a briefing is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Made {
    Brief,
    PlanBuild,
    Pow,
    Diagnose,
    Next,
    /// Any workflow, named in its `workflow` argument.
    RunWorkflow,
    /// A workflow, by name.
    Workflow(String),
    /// A skill or playbook doc, by id.
    Doc(String),
}

/// A briefing: what it is, and its parts in order, the instruction first.
#[derive(Debug, Clone, PartialEq)]
pub struct Briefing {
    pub description: String,
    pub parts: Vec<Part>,
}

/// One part of a briefing.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text for the reader: the instruction, or a fact it needs.
    Text(String),
    /// A resource given whole: an entity as JSON, a doc as Markdown.
    Embedded {
        uri: String,
        mime_type: &'static str,
        text: String,
    },
    /// A resource named, to be read when needed.
    Link(Link),
}

/// A resource a briefing points at.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub uri: String,
    pub name: String,
    pub mime_type: Option<&'static str>,
    pub description: Option<String>,
    pub size: Option<u64>,
}

impl Link {
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Link {
        Link {
            uri: uri.into(),
            name: name.into(),
            mime_type: None,
            description: None,
            size: None,
        }
    }

    pub fn with_mime_type(self, mime_type: &'static str) -> Link {
        Link {
            mime_type: Some(mime_type),
            ..self
        }
    }

    pub fn with_description(self, description: String) -> Link {
        Link {
            description: Some(description),
            ..self
        }
    }

    pub fn with_size(self, size: u64) -> Link {
        Link {
            size: Some(size),
            ..self
        }
    }
}

/// Why a briefing could not be made: its arguments were at fault (an id that does
/// not exist, a struct type that is not one), or something on the server's side.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    /// True when the arguments were at fault.
    pub arguments: bool,
    pub message: String,
    /// The tool's error object behind it, when a tool call failed.
    pub data: Option<Value>,
}

impl Refused {
    /// The arguments were at fault.
    pub fn invalid_params(message: impl Into<String>, data: Option<Value>) -> Refused {
        Refused {
            arguments: true,
            message: message.into(),
            data,
        }
    }

    /// Something on the server's side failed.
    pub fn internal_error(message: impl Into<String>, data: Option<Value>) -> Refused {
        Refused {
            arguments: false,
            message: message.into(),
            data,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Map, json};

    use super::*;
    use crate::core::Core;
    use crate::docs::Docs;
    use crate::source::sim::SimSource;
    use crate::tools::Registry;

    fn core(docs: &Arc<Docs>) -> Core {
        let mut r = Registry::default();
        crate::tools::register_all(&mut r, docs, &Arc::default());
        Core::builder(Arc::new(SimSource::demo()), r)
            .build()
            .unwrap()
    }

    fn args(v: serde_json::Value) -> Map<String, serde_json::Value> {
        v.as_object().cloned().unwrap()
    }

    #[tokio::test]
    async fn a_briefing_is_made_without_any_protocol() {
        let docs = Arc::new(Docs::embedded());
        let core = core(&docs);
        let b = render(
            &core,
            &docs.snapshot(),
            &Made::Brief,
            &args(json!({"entity_id": "1-1"})),
        )
        .await
        .unwrap();
        assert_eq!(b.description, "A briefing on player 1-1");
        let Part::Text(instruction) = &b.parts[0] else {
            panic!("the instruction comes first: {:?}", b.parts[0]);
        };
        assert!(
            instruction.starts_with("Brief me on player 1-1"),
            "{instruction}"
        );
        let embedded = b.parts.iter().find_map(|p| match p {
            Part::Embedded {
                uri,
                mime_type,
                text,
            } if uri == "structs://entities/1-1" => Some((*mime_type, text)),
            _ => None,
        });
        let (mime_type, text) = embedded.expect("the player is embedded");
        assert_eq!(mime_type, "application/json");
        let player: serde_json::Value = serde_json::from_str(text).unwrap();
        let record = crate::entity::EntityKind::Player.core_object(&player);
        assert_eq!(record.map(|r| &r["id"]), Some(&json!("1-1")), "{player}");
        assert!(
            b.parts.iter().any(|p| matches!(p, Part::Link(l)
                if l.uri.ends_with("knowledge/entities/player.md")
                    || l.uri.contains("knowledge/entities/player"))),
            "the player's doc is linked: {:?}",
            b.parts
        );
    }

    #[tokio::test]
    async fn arguments_at_fault_are_told_apart_from_a_failure() {
        let docs = Arc::new(Docs::embedded());
        let core = core(&docs);
        let snap = docs.snapshot();
        let e = render(&core, &snap, &Made::Brief, &args(json!({"entity_id": "x"})))
            .await
            .unwrap_err();
        assert!(e.arguments, "{e:?}");
        assert!(e.message.contains("entity_id is not an id"), "{e:?}");
        let e = render(
            &core,
            &snap,
            &Made::Workflow("no-such-workflow".into()),
            &Map::new(),
        )
        .await
        .unwrap_err();
        assert!(!e.arguments, "{e:?}");
    }
}
