//! The panes behind the tabs, one each: a file, or a folder (`mod.rs` with the state
//! and keys, beside the drawing or another part) where one file would run long. A tab
//! never imports another tab; what two share is in `tui::widgets`, and what one asks of
//! another goes through the app as a `pane::Event`.

pub(crate) mod docs;
pub(crate) mod entities;
pub(crate) mod handles;
pub(crate) mod live;
pub(crate) mod plans;
pub(crate) mod pow;
pub(crate) mod replay;
pub(crate) mod server;
