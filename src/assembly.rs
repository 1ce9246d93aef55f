//! Assembly: builds a [`Core`] serving the Structs tool catalog. The catalog's tools
//! are registered here, each capturing what it needs beyond what every tool can reach
//! (the docs, the workflow runs), and the registry is handed to the call pipeline.
//!
//! `build(source)` is the core every face starts from; [`builder`] sets the rest.

use std::sync::Arc;

use crate::clock::WallClock;
use crate::core::Core;
use crate::docs::Docs;
use crate::events::EventFeed;
use crate::handles::HandleConfig;
use crate::plan::workflow::Runs;
use crate::references::ReferenceConfig;
use crate::source::GameSource;
use crate::store::HandleStore;
use crate::tools::{self, Registry};

/// A core over `source` serving the whole tool catalog, stamped by the system clock.
pub fn build(source: Arc<dyn GameSource>) -> Core {
    build_with_clock(source, WallClock::System)
}

/// [`build`] with timestamps from `wall`.
pub fn build_with_clock(source: Arc<dyn GameSource>, wall: WallClock) -> Core {
    builder(source)
        .clock(wall)
        .build()
        .expect("the default settings are valid")
}

/// A catalog core with settings other than the defaults.
pub fn builder(source: Arc<dyn GameSource>) -> Builder {
    Builder {
        source,
        wall: WallClock::System,
        references: ReferenceConfig::default(),
        handles: HandleConfig::default(),
        handle_store: None,
        docs: None,
        feed: None,
        extra: Vec::new(),
    }
}

/// A function that registers tools beside the catalog.
type ExtraTools = Box<dyn FnOnce(&mut Registry)>;

/// Settings of a catalog core; see [`builder`].
pub struct Builder {
    source: Arc<dyn GameSource>,
    wall: WallClock,
    references: ReferenceConfig,
    handles: HandleConfig,
    handle_store: Option<Arc<dyn HandleStore>>,
    docs: Option<Arc<Docs>>,
    feed: Option<Arc<dyn EventFeed>>,
    extra: Vec<ExtraTools>,
}

impl Builder {
    /// Where timestamps come from (the system clock by default).
    pub fn clock(mut self, wall: WallClock) -> Builder {
        self.wall = wall;
        self
    }

    /// The server-wide reference settings.
    pub fn references(mut self, config: ReferenceConfig) -> Builder {
        self.references = config;
        self
    }

    /// Handle settings (TTL, cleanup interval, store).
    pub fn handles(mut self, config: HandleConfig) -> Builder {
        self.handles = config;
        self
    }

    /// Where results over the size limit are kept (in memory unless set).
    pub fn handle_store(mut self, store: Arc<dyn HandleStore>) -> Builder {
        self.handle_store = Some(store);
        self
    }

    /// The reference docs the docs tools read (the embedded project docs unless set).
    pub fn docs(mut self, docs: Arc<Docs>) -> Builder {
        self.docs = Some(docs);
        self
    }

    /// Events from an outside stream (NATS) instead of the source's own bus.
    pub fn event_feed(mut self, feed: Arc<dyn EventFeed>) -> Builder {
        self.feed = Some(feed);
        self
    }

    /// Registers more tools beside the catalog (for embedding and tests).
    pub fn tools(mut self, extra: impl FnOnce(&mut Registry) + 'static) -> Builder {
        self.extra.push(Box::new(extra));
        self
    }

    /// The core; fails when the settings are out of range or the reference settings
    /// name a tool that does not exist or does not carry references.
    pub fn build(self) -> Result<Core, String> {
        let docs = self.docs.unwrap_or_else(|| Arc::new(Docs::embedded()));
        let runs = Arc::new(Runs::default());
        let mut registry = Registry::default();
        tools::register_all(&mut registry, &docs, &runs);
        for extra in self.extra {
            extra(&mut registry);
        }
        let mut core = Core::builder(self.source, registry)
            .clock(self.wall)
            .references(self.references)
            .handles(self.handles);
        if let Some(store) = self.handle_store {
            core = core.handle_store(store);
        }
        if let Some(feed) = self.feed {
            core = core.event_feed(feed);
        }
        core.build()
    }
}
