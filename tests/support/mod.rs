//! Helpers shared by the integration tests (and, by path, the benchmarks).

pub mod redis;
