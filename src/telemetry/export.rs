//! How spans and metrics leave: [`Queue`], the span processor (a bounded queue and a
//! thread that sends batches, so a call never waits on the collector), [`Counted`], the
//! metric exporter that counts what failed, and [`Drops`], the count, said once in the
//! log.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::metrics::Temporality;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::trace::{SpanData, SpanExporter, SpanProcessor};

/// The most spans waiting to be sent; one more is dropped and counted.
pub const QUEUE_SPANS: usize = 4096;

/// The most spans in one export.
const BATCH_SPANS: usize = 512;

/// How long a span waits for others before its batch goes.
const BATCH_DELAY: Duration = Duration::from_millis(500);

/// The log target of what export says (not exported itself).
const LOG_TARGET: &str = "structs_console::telemetry";

/// The spans and metric exports dropped, for the log and `/health`.
#[derive(Debug)]
pub struct Drops {
    endpoint: String,
    spans: AtomicU64,
    metric_exports: AtomicU64,
    /// Whether a dropped span was said, and a failed metric export.
    said: AtomicBool,
    said_metrics: AtomicBool,
}

impl Drops {
    pub fn new(endpoint: String) -> Drops {
        Drops {
            endpoint,
            spans: AtomicU64::new(0),
            metric_exports: AtomicU64::new(0),
            said: AtomicBool::new(false),
            said_metrics: AtomicBool::new(false),
        }
    }

    /// Spans dropped so far.
    pub fn spans(&self) -> u64 {
        self.spans.load(Ordering::Relaxed)
    }

    /// Metric exports that failed so far.
    pub fn metric_exports(&self) -> u64 {
        self.metric_exports.load(Ordering::Relaxed)
    }

    fn spans_dropped(&self, n: u64, why: &str) {
        self.spans.fetch_add(n, Ordering::Relaxed);
        if !self.said.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: LOG_TARGET,
                endpoint = %self.endpoint,
                "traces cannot be sent ({why}); spans are dropped and counted from now on, \
                 and this is said once"
            );
        }
    }

    /// A failed metric export: said once (a trace backend such as Phoenix takes no
    /// metrics, and says so with every export).
    fn metrics_dropped(&self, why: &str) {
        self.metric_exports.fetch_add(1, Ordering::Relaxed);
        if !self.said_metrics.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: LOG_TARGET,
                "metrics cannot be sent ({why}); they are dropped and counted from now on, \
                 and this is said once"
            );
        }
    }

    /// Says the totals, when anything was dropped.
    pub fn say_total(&self) {
        let (spans, metrics) = (self.spans(), self.metric_exports());
        if spans > 0 || metrics > 0 {
            tracing::warn!(
                target: LOG_TARGET,
                endpoint = %self.endpoint,
                spans, metric_exports = metrics, "telemetry dropped in all"
            );
        }
    }
}

/// What runs an exporter's future: a plain wait, or, for gRPC, the runtime the exporter
/// was built in entered at each poll (its client needs the runtime's timers).
#[derive(Clone)]
pub struct Driver {
    grpc: Option<tokio::runtime::Handle>,
}

impl Driver {
    pub fn new(grpc: Option<tokio::runtime::Handle>) -> Driver {
        Driver { grpc }
    }

    /// `future` with the runtime entered at each poll, when there is one.
    fn entered<F: Future>(&self, future: F) -> Entered<F> {
        Entered {
            handle: self.grpc.clone(),
            future: Box::pin(future),
        }
    }

    /// Waits for `future` on this thread (never a runtime's).
    fn wait<F: Future>(&self, future: F) -> F::Output {
        block_on(std::pin::pin!(self.entered(future)))
    }
}

/// A future polled with a runtime entered.
struct Entered<F> {
    handle: Option<tokio::runtime::Handle>,
    future: Pin<Box<F>>,
}

impl<F: Future> Future for Entered<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _entered = self.handle.as_ref().map(tokio::runtime::Handle::enter);
        self.future.as_mut().poll(cx)
    }
}

struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` to its end on this thread, parking between wakes.
fn block_on<F: Future>(mut future: Pin<&mut F>) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    loop {
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

/// What the sending thread is asked, beside the spans.
#[derive(Default)]
struct Buffer {
    spans: Vec<SpanData>,
    /// Flushes asked for: each answered once what was queued before it is sent.
    flushes: Vec<SyncSender<OTelSdkResult>>,
    /// A shutdown asked for: answered once the rest is sent and the exporter shut.
    stop: Option<SyncSender<OTelSdkResult>>,
}

/// The buffer and the bell the sending thread waits on.
#[derive(Default)]
struct Shared {
    buffer: Mutex<Buffer>,
    bell: Condvar,
    /// Spans the thread has taken and not yet sent (or counted as failed).
    sending: AtomicU64,
    /// Set when the exit stopped waiting: what is still being sent was counted then.
    gave_up: AtomicBool,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The span processor: a span that ends is put in a buffer (never waited on, and no
/// thread woken for it) and a thread sends what is there every [`BATCH_DELAY`], at
/// once when [`BATCH_SPANS`] wait, in batches of that many at most. Past
/// [`QUEUE_SPANS`] waiting a span is dropped and counted.
pub struct Queue {
    shared: Arc<Shared>,
    drops: Arc<Drops>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queue")
    }
}

impl Queue {
    /// Starts the sending thread over `exporter`.
    ///
    /// # Errors
    ///
    /// When the thread cannot be started.
    pub fn spawn<E: SpanExporter + 'static>(
        exporter: E,
        driver: Driver,
        drops: Arc<Drops>,
    ) -> std::io::Result<Queue> {
        let shared = Arc::new(Shared::default());
        let thread = std::thread::Builder::new()
            .name("otlp-spans".into())
            .spawn({
                let (shared, drops) = (shared.clone(), drops.clone());
                move || send_loop(&exporter, &driver, &shared, &drops)
            })?;
        Ok(Queue {
            shared,
            drops,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Asks the thread (`ask` files the answer's sender) and waits `wait` for its answer.
    fn ask(
        &self,
        ask: impl FnOnce(&mut Buffer, SyncSender<OTelSdkResult>),
        wait: Duration,
    ) -> OTelSdkResult {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        ask(&mut self.shared.lock(), tx);
        self.shared.bell.notify_one();
        match rx.recv_timeout(wait) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Timeout) => Err(OTelSdkError::Timeout(wait)),
            Err(RecvTimeoutError::Disconnected) => Err(OTelSdkError::AlreadyShutdown),
        }
    }
}

impl SpanProcessor for Queue {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        let mut buffer = self.shared.lock();
        if buffer.spans.len() >= QUEUE_SPANS {
            drop(buffer);
            self.drops
                .spans_dropped(1, &format!("{QUEUE_SPANS} spans wait already"));
            return;
        }
        buffer.spans.push(span);
        let full = buffer.spans.len() == BATCH_SPANS;
        drop(buffer);
        if full {
            self.shared.bell.notify_one();
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.ask(|b, tx| b.flushes.push(tx), Duration::from_secs(30))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let answer = self.ask(|b, tx| b.stop = Some(tx), timeout);
        if matches!(answer, Err(OTelSdkError::Timeout(_))) {
            // What the collector did not take in time, waiting or on its way, is
            // dropped with the process.
            self.shared.gave_up.store(true, Ordering::SeqCst);
            let waiting = std::mem::take(&mut self.shared.lock().spans).len() as u64;
            let left = waiting + self.shared.sending.swap(0, Ordering::SeqCst);
            if left > 0 {
                self.drops
                    .spans_dropped(left, "the collector did not take them before exit");
            }
        }
        if answer.is_ok()
            && let Some(thread) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take()
        {
            let _ = thread.join();
        }
        answer
    }
}

/// The sending thread: takes what waits every [`BATCH_DELAY`] (or when rung) and sends
/// it in batches, counting a failed one as dropped; answers flushes and the shutdown.
fn send_loop<E: SpanExporter>(exporter: &E, driver: &Driver, shared: &Shared, drops: &Drops) {
    loop {
        let (spans, flushes, stop) = {
            let mut buffer = shared.lock();
            let idle = buffer.spans.len() < BATCH_SPANS
                && buffer.flushes.is_empty()
                && buffer.stop.is_none();
            if idle {
                buffer = shared
                    .bell
                    .wait_timeout(buffer, BATCH_DELAY)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            (
                std::mem::take(&mut buffer.spans),
                std::mem::take(&mut buffer.flushes),
                buffer.stop.take(),
            )
        };
        let mut failed: Option<String> = None;
        let mut spans = spans;
        shared.sending.store(spans.len() as u64, Ordering::SeqCst);
        while !spans.is_empty() {
            let rest = spans.split_off(spans.len().min(BATCH_SPANS));
            let n = spans.len() as u64;
            let result = driver.wait(exporter.export(spans));
            let _ = shared
                .sending
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |s| {
                    Some(s.saturating_sub(n))
                });
            if let Err(e) = &result {
                if !shared.gave_up.load(Ordering::SeqCst) {
                    drops.spans_dropped(n, &e.to_string());
                }
                failed = Some(e.to_string());
            }
            spans = rest;
        }
        let answer = || match &failed {
            None => Ok(()),
            Some(why) => Err(OTelSdkError::InternalFailure(why.clone())),
        };
        for flush in flushes {
            let _ = flush.send(answer());
        }
        if let Some(stop) = stop {
            let _ = exporter.shutdown();
            let _ = stop.send(answer());
            return;
        }
    }
}

/// A metric exporter that runs the inner one's exports with the [`Driver`]'s runtime
/// entered and counts each that fails.
pub struct Counted<E> {
    inner: E,
    driver: Driver,
    drops: Arc<Drops>,
}

impl<E> Counted<E> {
    pub fn new(inner: E, driver: Driver, drops: Arc<Drops>) -> Counted<E> {
        Counted {
            inner,
            driver,
            drops,
        }
    }
}

impl<E: PushMetricExporter> PushMetricExporter for Counted<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let result = self.driver.entered(self.inner.export(metrics)).await;
        if let Err(e) = &result {
            self.drops.metrics_dropped(&e.to_string());
        }
        result
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::{Span as _, Tracer as _, TracerProvider as _};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use std::sync::atomic::AtomicUsize;

    /// An exporter that waits for its gate to open, then fails or keeps the spans.
    #[derive(Debug, Clone)]
    struct Fake {
        fail: bool,
        gate: Arc<(Mutex<bool>, std::sync::Condvar)>,
        kept: Arc<AtomicUsize>,
        /// Exports begun.
        begun: Arc<AtomicUsize>,
    }

    impl Fake {
        fn new(fail: bool, open: bool) -> Fake {
            Fake {
                fail,
                gate: Arc::new((Mutex::new(open), std::sync::Condvar::new())),
                kept: Arc::default(),
                begun: Arc::default(),
            }
        }

        fn open(&self) {
            *self.gate.0.lock().unwrap() = true;
            self.gate.1.notify_all();
        }
    }

    impl SpanExporter for Fake {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            self.begun.fetch_add(1, Ordering::SeqCst);
            let mut open = self.gate.0.lock().unwrap();
            while !*open {
                open = self.gate.1.wait(open).unwrap();
            }
            if self.fail {
                return Err(OTelSdkError::InternalFailure("connection refused".into()));
            }
            self.kept.fetch_add(batch.len(), Ordering::Relaxed);
            Ok(())
        }
    }

    fn provider(fake: &Fake, drops: &Arc<Drops>) -> SdkTracerProvider {
        let queue = Queue::spawn(fake.clone(), Driver::new(None), drops.clone()).unwrap();
        SdkTracerProvider::builder()
            .with_span_processor(queue)
            .build()
    }

    #[test]
    fn spans_are_sent_in_batches_and_all_arrive_at_a_flush() {
        let fake = Fake::new(false, true);
        let drops = Arc::new(Drops::new("x".into()));
        let p = provider(&fake, &drops);
        let tracer = p.tracer("t");
        for _ in 0..1500 {
            tracer.start("s").end();
        }
        p.force_flush().unwrap();
        assert_eq!(fake.kept.load(Ordering::Relaxed), 1500);
        assert_eq!(drops.spans(), 0);
        p.shutdown().unwrap();
    }

    #[test]
    fn a_collector_that_stalls_and_fails_never_holds_a_span_up_and_every_drop_is_counted() {
        // The exporter is stuck until the spans are all ended: were a span's end to wait
        // on it, this test would never get past the loop.
        let fake = Fake::new(true, false);
        let drops = Arc::new(Drops::new("x".into()));
        let p = provider(&fake, &drops);
        let tracer = p.tracer("t");
        let n = QUEUE_SPANS * 3;
        for _ in 0..n {
            tracer.start("s").end();
        }
        // At most a buffer taken by the thread and a buffer waiting.
        let queued_at_most = (2 * QUEUE_SPANS) as u64;
        assert!(
            drops.spans() >= n as u64 - queued_at_most,
            "{}",
            drops.spans()
        );
        assert!(drops.said.load(Ordering::Relaxed), "said at the first drop");
        fake.open();
        let _ = p.force_flush();
        assert_eq!(drops.spans(), n as u64, "every span dropped is counted");
        assert_eq!(fake.kept.load(Ordering::Relaxed), 0);
        let _ = p.shutdown();
    }

    #[test]
    fn at_an_exit_the_collector_never_answers_every_span_it_held_is_counted_once() {
        let fake = Fake::new(true, false);
        let drops = Arc::new(Drops::new("x".into()));
        let p = provider(&fake, &drops);
        let tracer = p.tracer("t");
        // A full batch wakes the thread, which takes it and is stuck sending it.
        for _ in 0..BATCH_SPANS {
            tracer.start("s").end();
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while fake.begun.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        for _ in 0..10 {
            tracer.start("s").end();
        }
        let answer = p.shutdown_with_timeout(Duration::from_millis(200));
        assert!(answer.is_err(), "the exit did not wait past its time");
        assert_eq!(
            drops.spans(),
            BATCH_SPANS as u64 + 10,
            "on its way and waiting"
        );
        // The stuck export fails later: it was counted already.
        fake.open();
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(drops.spans(), BATCH_SPANS as u64 + 10);
    }
}
