//! Drawing pieces several panes share: the bordered area ([`block`]), the box over a
//! pane ([`popup`]) and the tree ([`tree`]).

pub(crate) mod block;
pub(crate) mod popup;
pub(crate) mod tree;

pub(crate) use block::area_block;
pub(crate) use popup::popup;
