//! The panes behind the tabs, one file each, or a directory (`mod.rs` with the state
//! and keys, beside the drawing or another part) where one file would run long.

pub(crate) mod actions;
pub(crate) mod docs;
pub(crate) mod entities;
pub(crate) mod entity_list;
pub(crate) mod entity_tree;
pub(crate) mod event_log;
pub(crate) mod handles;
pub(crate) mod live;
pub(crate) mod plans;
pub(crate) mod pow;
pub(crate) mod reference_tree;
pub(crate) mod replay;
pub(crate) mod server;
pub(crate) mod source;
