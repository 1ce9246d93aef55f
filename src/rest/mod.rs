//! The chain's REST API served: [`server`] serves the embedded world over the chain's
//! paths and JSON shapes (`structs-console serve-rest`), and [`faults`] makes that
//! server slow or failing on purpose. The wire rules it shares with the REST client
//! (list order, page keys, error bodies) live in [`crate::source::rest::wire`].

pub mod faults;
pub mod server;
