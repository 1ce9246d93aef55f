//! Drawing pieces several panes share: the bordered area ([`block`]), the box over a
//! pane ([`popup`]), the tree ([`tree`]) and a text of several lines to edit
//! ([`textarea`]).

pub(crate) mod block;
pub(crate) mod cursor;
pub(crate) mod popup;
pub(crate) mod prompt;
pub(crate) mod text;
pub(crate) mod textarea;
pub(crate) mod tree;

pub(crate) use block::area_block;
pub(crate) use popup::popup;
