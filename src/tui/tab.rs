//! The console's tabs. The keymap names them (a tab's number key shows it) and the
//! app shows them, so they live apart from both.

/// The console's tabs, in the order the tab bar shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tab {
    Entities,
    Handles,
    Plans,
    Pow,
    Docs,
    Replay,
    Server,
    Live,
}

impl Tab {
    /// Every tab, left to right.
    pub const ALL: [Tab; 8] = [
        Tab::Entities,
        Tab::Handles,
        Tab::Plans,
        Tab::Pow,
        Tab::Docs,
        Tab::Replay,
        Tab::Server,
        Tab::Live,
    ];

    /// The tab bar title.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Entities => "Entities",
            Tab::Handles => "Handles",
            Tab::Plans => "Plans",
            Tab::Pow => "PoW",
            Tab::Docs => "Docs",
            Tab::Replay => "Replay",
            Tab::Server => "Server",
            Tab::Live => "Live",
        }
    }

    /// The tab's position, from 1; its number key shows it.
    pub fn number(self) -> u8 {
        match self {
            Tab::Entities => 1,
            Tab::Handles => 2,
            Tab::Plans => 3,
            Tab::Pow => 4,
            Tab::Docs => 5,
            Tab::Replay => 6,
            Tab::Server => 7,
            Tab::Live => 8,
        }
    }
}
