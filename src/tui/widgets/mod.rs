//! What several panes share, so that no tab reaches into another: the bordered area
//! ([`block`]), the box over a pane ([`popup`]), the tree ([`tree`]) with the nodes of
//! an entity's fields ([`fields`]) and the references tree ([`reference_tree`]), a
//! handle's page ([`page`]), the cursor every list scrolls with ([`cursor`]), text
//! fitted to columns ([`text`]), the tasks MCP servers run ([`tasks`]), the path prompt
//! ([`prompt`]), a text of several lines to edit ([`textarea`]) and calls on a time axis
//! ([`timeline`]).

pub(crate) mod block;
pub(crate) mod cursor;
pub(crate) mod fields;
pub(crate) mod page;
pub(crate) mod popup;
pub(crate) mod prompt;
pub(crate) mod reference_tree;
pub(crate) mod tasks;
pub(crate) mod text;
pub(crate) mod textarea;
pub(crate) mod timeline;
pub(crate) mod tree;

pub(crate) use block::area_block;
pub(crate) use popup::popup;
