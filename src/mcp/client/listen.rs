//! Watching a resource on a 2026-07-28 server: the revision removed
//! `resources/subscribe`, and a client opens a `subscriptions/listen` stream whose
//! filter names the resource instead. The stream stays open, its notifications read
//! (they reach the connection's record of messages, where `client subscribe` and the
//! Server tab see them), until the resource is unwatched or the connection closes.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::Remote;
use super::traffic::lock;
use crate::error::{ErrorCode, ToolError};

impl Remote {
    /// Opens (`on`) or closes the listen stream that watches `uri`.
    ///
    /// # Errors
    ///
    /// The server's refusal of the stream; `RESOURCE_NOT_FOUND` when it acknowledges
    /// a filter without the resource (it serves no updates of it).
    pub(super) async fn listen_to(&self, uri: &str, on: bool) -> Result<Value, ToolError> {
        if !on {
            return Ok(match lock(&self.listens).remove(uri) {
                Some(stop) => {
                    stop.cancel();
                    json!({})
                }
                None => json!({"note": format!("{uri} was not watched")}),
            });
        }
        let mut filter = rmcp::model::SubscriptionFilter::new();
        filter.resource_subscriptions = Some(vec![uri.to_string()]);
        let mut stream = self
            .service
            .peer()
            .listen(filter)
            .await
            .map_err(|e| self.unreachable("subscriptions/listen", &e))?;
        let acknowledged = serde_json::to_value(stream.acknowledged()).unwrap_or_default();
        let id = serde_json::to_value(stream.id()).unwrap_or_default();
        let taken = acknowledged["resourceSubscriptions"]
            .as_array()
            .is_some_and(|uris| uris.iter().any(|u| u == uri));
        if !taken {
            let _ = stream.cancel().await;
            return Err(ToolError::new(
                ErrorCode::ResourceNotFound,
                format!(
                    "{} opened the listen stream but does not send updates of {uri}: it \
                     acknowledged {acknowledged}",
                    self.server_name()
                ),
            ));
        }
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stopped.cancelled() => {
                        let _ = stream.cancel().await;
                        return;
                    }
                    next = stream.next() => {
                        if !matches!(next, Ok(Some(_))) {
                            return;
                        }
                    }
                }
            }
        });
        if let Some(old) = lock(&self.listens).insert(uri.to_string(), stop) {
            old.cancel();
        }
        Ok(json!({"subscriptionId": id, "acknowledged": acknowledged}))
    }
}
