//! structs-console: one server core for the Structs tool catalog, with two faces onto
//! it, a ratatui console ([`tui`]) and an MCP server ([`mcp`]).
//!
//! See `ARCHITECTURE.md` for the code map and the invariants each module keeps.

pub mod assembly;
pub mod briefing;
pub mod chain;
pub mod clock;
pub mod config;
pub mod context;
pub mod core;
pub mod docs;
pub mod entity;
pub mod error;
pub mod events;
pub mod game;
pub mod guard;
pub mod handles;
pub mod json;
pub mod mcp;
pub mod nats;
pub mod plan;
pub mod random;
pub mod record;
pub use structs_pow as pow;
pub mod references;
pub mod rest;
pub mod source;
pub mod store;
pub mod telemetry;
pub mod text;
pub mod throttle;
pub mod tools;
pub mod trees;
pub mod tui;

pub use crate::core::Core;
pub use crate::entity::{EntityId, EntityKind};
pub use crate::error::{ErrorCode, ToolError};
