//! Calling the core's tools from a test: awaited inside a `#[tokio::test]`, or from a
//! plain `#[test]` through [`blocking`].

use serde_json::Value;
use structs_console::Core;

/// The answer of a call that must succeed; a failure panics naming the tool, its
/// arguments and the error.
pub async fn ok(core: &Core, tool: &str, args: Value) -> Value {
    core.call_json(tool, args.clone())
        .await
        .unwrap_or_else(|e| panic!("{tool} {args} failed: {e}"))
}

/// The same calls from a plain `#[test]`, each on a runtime of its own.
pub mod blocking {
    use serde_json::Value;
    use structs_console::Core;

    /// Runs `f` to its end on a fresh current-thread runtime: the sim answers without
    /// I/O, so one thread is enough.
    pub fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    /// A call's answer, or its error object.
    pub fn call(core: &Core, tool: &str, args: Value) -> Result<Value, Value> {
        run(core.call_json(tool, args))
    }

    /// The answer of a call that must succeed; a failure panics naming the tool, its
    /// arguments and the error.
    pub fn ok(core: &Core, tool: &str, args: Value) -> Value {
        call(core, tool, args.clone()).unwrap_or_else(|e| panic!("{tool} {args} failed: {e}"))
    }
}
