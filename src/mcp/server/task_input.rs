//! A task waiting on its client's input (SEP-2663 with SEP-2322): the questions a
//! task's tool asks ([`CallContext::ask_client`](crate::context::CallContext::ask_client))
//! park it `input_required`, with each question under its key in `inputRequests` on
//! `tasks/get`; `tasks/update` delivers the answers, a few at a time if the client
//! likes, and the tool goes on with each as it comes. The task stays `input_required`
//! while any question is still open, listing only those.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{InputRequest, InputRequests, InputResponses};
use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot, watch};

use super::ask::rounds::{is_result, may_ask};
use crate::context::{ClientAsk, Unasked};

/// How long a task's question waits for its answer (a task's own lifetime): then the
/// tool is told it was not answered, and the task goes on or ends as the tool decides.
pub const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(600);

/// One open question: what was asked, and where its answer goes.
struct Open {
    request: Value,
    answer: oneshot::Sender<Value>,
}

/// The questions one task has open.
#[derive(Default)]
pub struct Waiting {
    open: Mutex<BTreeMap<String, Open>>,
    /// Told when a question opens or is answered: the task's record is written then.
    changed: Notify,
    /// How many changes there were, and how many the task's record shows.
    made: Mutex<u64>,
    written: Option<watch::Sender<u64>>,
}

impl Waiting {
    pub fn new() -> Arc<Waiting> {
        Arc::new(Waiting {
            written: Some(watch::channel(0).0),
            ..Waiting::default()
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Open>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A change made: the next record written shows it.
    fn change(&self) -> u64 {
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        *made += 1;
        self.changed.notify_one();
        *made
    }

    /// How the task's tool asks: a question parks the task until `tasks/update` answers
    /// it (or the task is cancelled). Only under a capability in `declared`.
    pub fn asker(self: &Arc<Self>, declared: Vec<&'static str>) -> ClientAsk {
        let me = self.clone();
        let allowed = declared.clone();
        let ask = Arc::new(move |key: String, method: &'static str, params: Value| {
            let me = me.clone();
            let checked = may_ask(method, &allowed);
            Box::pin(async move {
                checked?;
                let (tx, rx) = oneshot::channel();
                {
                    let mut open = me.open();
                    // A question whose asker stopped waiting is no longer open.
                    if open.get(&key).is_some_and(|o| !o.answer.is_closed()) {
                        return Err(Unasked::Failed(format!(
                            "the question {key} is already open"
                        )));
                    }
                    let request = json!({"method": method, "params": params});
                    open.insert(
                        key.clone(),
                        Open {
                            request,
                            answer: tx,
                        },
                    );
                }
                me.change();
                match tokio::time::timeout(ANSWER_WITHIN, rx).await {
                    Ok(answer) => answer.map_err(|_| {
                        Unasked::Failed(format!("{key}: the task ended before it was answered"))
                    }),
                    Err(_) => {
                        me.open().remove(&key);
                        me.change();
                        Err(Unasked::Failed(format!(
                            "{key} was not answered within {} s",
                            ANSWER_WITHIN.as_secs()
                        )))
                    }
                }
            }) as std::pin::Pin<Box<dyn Future<Output = Result<Value, Unasked>> + Send>>
        });
        ClientAsk { ask, declared }
    }

    /// The open questions, as `tasks/get` lists them; `None` when none is open.
    pub fn requests(&self) -> Option<InputRequests> {
        let open = self.open();
        let requests: InputRequests = open
            .iter()
            .filter(|(_, o)| !o.answer.is_closed())
            .filter_map(|(key, o)| {
                let request: InputRequest = serde_json::from_value(o.request.clone()).ok()?;
                Some((key.clone(), request))
            })
            .collect();
        (!requests.is_empty()).then_some(requests)
    }

    /// The keys of the open questions.
    pub fn keys(&self) -> Vec<String> {
        self.open()
            .iter()
            .filter(|(_, o)| !o.answer.is_closed())
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// Gives each open question its answer among `responses`; answers to questions not
    /// open, and answers that are not their question's result, are left (the question
    /// stays open). The change it made, if any: [`Waiting::shown`] waits for it.
    pub fn answer(&self, responses: &InputResponses) -> Option<u64> {
        let mut given = Vec::new();
        {
            let mut open = self.open();
            for (key, answer) in responses {
                let fits = open.get(key).is_some_and(|o| {
                    is_result(o.request["method"].as_str().unwrap_or_default(), answer)
                });
                if fits && let Some(o) = open.remove(key) {
                    given.push((o.answer, answer.clone()));
                }
            }
        }
        if given.is_empty() {
            return None;
        }
        for (to, answer) in given {
            let _ = to.send(answer);
        }
        Some(self.change())
    }

    /// Waits until a change is told.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }

    /// The change the task's record is being written for.
    pub fn current(&self) -> u64 {
        *self.made.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The task's record shows change `made`.
    pub fn written(&self, made: u64) {
        if let Some(w) = &self.written {
            w.send_if_modified(|at| {
                let later = made > *at;
                if later {
                    *at = made;
                }
                later
            });
        }
    }

    /// Waits (at most `within`) until the task's record shows change `made`.
    pub async fn shown(&self, made: u64, within: std::time::Duration) {
        let Some(w) = &self.written else { return };
        let mut rx = w.subscribe();
        let _ = tokio::time::timeout(within, rx.wait_for(|at| *at >= made)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn questions_park_until_answered_one_at_a_time() {
        let waiting = Waiting::new();
        let ask = waiting.asker(vec!["elicitation"]);
        let form =
            json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}});
        let a = tokio::spawn((ask.ask)("a".into(), "elicitation/create", form.clone()));
        let b = tokio::spawn((ask.ask)("b".into(), "elicitation/create", form));
        while waiting.keys().len() < 2 {
            tokio::task::yield_now().await;
        }
        assert_eq!(waiting.requests().unwrap().len(), 2);
        let yes = json!({"action": "accept", "content": {"name": "x"}});
        // An answer to a question not open, and one that is no result, are left.
        let stray: InputResponses = serde_json::from_value(json!({"c": yes, "a": 5})).unwrap();
        assert_eq!(waiting.answer(&stray), None);
        let one: InputResponses = serde_json::from_value(json!({"a": yes})).unwrap();
        assert!(waiting.answer(&one).is_some());
        assert_eq!(a.await.unwrap(), Ok(yes.clone()));
        assert_eq!(waiting.keys(), vec!["b".to_string()]);
        let two: InputResponses = serde_json::from_value(json!({"b": yes})).unwrap();
        waiting.answer(&two).unwrap();
        assert_eq!(b.await.unwrap(), Ok(yes));
        assert!(waiting.requests().is_none());
        // A capability not declared is not asked.
        let roots = (ask.ask)("r".into(), "roots/list", json!({})).await;
        assert_eq!(roots, Err(Unasked::Undeclared("roots")));
    }
}
