//! The handle store as a trace sees it: [`Traced`] wraps a store and makes each read and
//! write a span, by the database conventions for a Redis store (`db.system.name`,
//! `db.operation.name`, `db.collection.name`, `db.namespace`, `server.address`,
//! `server.port`, kind CLIENT). The core wraps its store only when tracing is on, and an
//! operation outside any span (a sweep) is not one.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tracing::Instrument as _;

use super::{HandleMeta, HandleStore, Missing, Stored};
use crate::context::trace;
use crate::error::ToolError;
use crate::source::BoxFuture;

/// A store's database server, as its spans name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// `redis`.
    pub system: &'static str,
    pub address: String,
    pub port: u16,
    /// The database index.
    pub namespace: String,
}

/// A store whose operations are spans.
pub struct Traced {
    inner: Arc<dyn HandleStore>,
    server: Option<Server>,
}

impl Traced {
    pub fn new(inner: Arc<dyn HandleStore>) -> Traced {
        let server = inner.server();
        Traced { inner, server }
    }

    /// The span of `operation` on `collection` (`handles`, `records`, `claims`).
    /// Only inside a traced piece of work: the store's own sweeps start no trace.
    fn span(&self, operation: &'static str, collection: &'static str) -> tracing::Span {
        if tracing::Span::current().is_none() {
            return tracing::Span::none();
        }
        match &self.server {
            Some(s) => tracing::info_span!(
                target: trace::TARGET, "db", otel.name = %format!("{operation} {collection}"),
                otel.kind = "client", db.system.name = s.system, db.operation.name = operation,
                db.collection.name = collection, db.namespace = s.namespace.as_str(),
                server.address = s.address.as_str(), server.port = i64::from(s.port)
            ),
            None => tracing::info_span!(
                target: trace::TARGET, "store", otel.name = %format!("{operation} {collection}"),
                structs.store = self.inner.name(), db.operation.name = operation,
                db.collection.name = collection
            ),
        }
    }

    /// Records what the store holds now in `structs.store.bytes`, off the call's path
    /// (a Redis store is asked in a task of its own, outside the call's trace).
    fn measure(&self) {
        let Some(i) = trace::instruments() else {
            return;
        };
        let inner = Arc::clone(&self.inner);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            if let Ok(Some(held)) = inner.held_bytes().await {
                let store = opentelemetry::KeyValue::new("structs.store", inner.name());
                i.store_bytes.record(held as u64, &[store]);
            }
        });
    }

    fn run<'a, T: 'a>(
        &'a self,
        operation: &'static str,
        collection: &'static str,
        work: impl Future<Output = Result<T, ToolError>> + Send + 'a,
    ) -> BoxFuture<'a, Result<T, ToolError>> {
        let span = self.span(operation, collection);
        Box::pin(
            async move {
                let result = work.await;
                if let Err(e) = &result {
                    let span = tracing::Span::current();
                    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
                    span.set_attribute("error.type", e.code.as_str());
                    span.set_status(opentelemetry::trace::Status::error(e.message.clone()));
                }
                result
            }
            .instrument(span),
        )
    }
}

impl HandleStore for Traced {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn server(&self) -> Option<Server> {
        self.server.clone()
    }

    fn put(&self, meta: HandleMeta, data: Arc<Value>) -> BoxFuture<'_, Result<(), ToolError>> {
        let put = self.run("put", "handles", self.inner.put(meta, data));
        Box::pin(async move {
            put.await?;
            self.measure();
            Ok(())
        })
    }

    fn held_bytes(&self) -> BoxFuture<'_, Result<Option<usize>, ToolError>> {
        self.inner.held_bytes()
    }

    fn get(
        &self,
        handle: &str,
        now: DateTime<Utc>,
    ) -> BoxFuture<'_, Result<Result<Stored, Missing>, ToolError>> {
        self.run("get", "handles", self.inner.get(handle, now))
    }

    fn list(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<Vec<HandleMeta>, ToolError>> {
        self.run("list", "handles", self.inner.list(now))
    }

    fn cleanup(&self, now: DateTime<Utc>) -> BoxFuture<'_, Result<usize, ToolError>> {
        let cleanup = self.run("cleanup", "handles", self.inner.cleanup(now));
        Box::pin(async move {
            let dropped = cleanup.await?;
            if dropped > 0 {
                self.measure();
            }
            Ok(dropped)
        })
    }

    fn put_record(
        &self,
        key: &str,
        value: Value,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<(), ToolError>> {
        self.run("put", "records", self.inner.put_record(key, value, ttl))
    }

    fn get_record(&self, key: &str) -> BoxFuture<'_, Result<Option<Value>, ToolError>> {
        self.run("get", "records", self.inner.get_record(key))
    }

    fn list_records(
        &self,
        prefix: &str,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<(String, Value)>, ToolError>> {
        self.run("list", "records", self.inner.list_records(prefix, limit))
    }

    fn claim(&self, key: &str, ttl: Duration) -> BoxFuture<'_, Result<bool, ToolError>> {
        self.run("claim", "claims", self.inner.claim(key, ttl))
    }
}
