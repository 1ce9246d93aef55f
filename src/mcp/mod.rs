//! MCP, in four rooms around one shared module:
//!
//! - [`server`]: this project's MCP server over the core (stdio and HTTP);
//! - [`client`]: the console as an MCP client of any server (`--connect`, `client`);
//! - [`proxy`]: the tap between an agent's host and its server (`proxy`);
//! - [`control`]: the live feed of a session log that the tap and the server publish
//!   and the Live tab and `watch` read;
//! - [`wire`]: what every room speaks: JSON-RPC framing and its limits, request ids,
//!   refusals, and the HTTP plumbing both HTTP faces share.
//!
//! A room uses another only through its public face (the proxy runs the server in its
//! process and publishes on a control endpoint); `tests/layers.rs` holds the rule.

pub mod client;
pub mod control;
pub mod proxy;
pub mod server;
pub mod wire;
