//! Helpers shared by the integration tests (and, by path, the benchmarks).

// Each test file uses part of the helpers.
#![allow(dead_code)]

pub mod agent;
pub mod calls;
pub mod cluster;
pub mod console;
pub mod daemon;
pub mod docs;
pub mod mcp;
pub mod mcp_http;
pub mod nats;
pub mod otel;
pub mod peers;
pub mod redis;
pub mod reference;
pub mod replay;
pub mod sim;
pub mod standin;
