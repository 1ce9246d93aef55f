//! The reference-doc figures, printed with their targets, on the game's own
//! documentation (`../shared/corpus/structs-ai/`, or `STRUCTS_DOCS_CORPUS`) when it is
//! there, else on the project's embedded docs:
//!
//! - a full index build of every document (target under 1 s), median of 5;
//! - search latency p50 and p99 over the question set and a list of short keyword
//!   queries (target p50 under 2 ms), through `structs_docs_search`;
//! - `structs_docs_get` with `include_related` for every doc (target p50 under 1 ms);
//! - search quality: for each question in `benches/data/docs-questions.json` (written
//!   for that corpus, each with the doc that answers it), whether that doc is in the
//!   top 3; the misses are listed with what came first.
//!
//! Run with `cargo bench --bench docs`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};
use structs_console::docs::{self, Docs, Root};
use structs_console::source::sim::SimSource;

#[derive(Deserialize)]
struct Question {
    question: String,
    answer: String,
    #[serde(default)]
    also: Vec<String>,
}

const KEYWORDS: &[&str] = &[
    "ore extractor",
    "power capacity",
    "raid",
    "planetary shield",
    "guild",
    "proof of work difficulty",
    "fleet move",
    "alpha matter",
    "substation allocation",
    "struct build",
    "nats streaming",
    "error codes",
];

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = std::env::var_os("STRUCTS_DOCS_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../shared/corpus/structs-ai"));
    let (root, on_corpus) = if corpus.is_dir() {
        (Root::Dir(std::fs::canonicalize(&corpus).unwrap()), true)
    } else {
        println!(
            "corpus {} not found: figures are for the embedded docs, and search quality is skipped",
            corpus.display()
        );
        (Root::Embedded, false)
    };
    println!("docs root: {}", root.describe());

    // Full build, median of 5.
    let mut builds = Vec::new();
    let mut snap = None;
    for _ in 0..5 {
        let start = Instant::now();
        let s = docs::build(&root);
        builds.push(start.elapsed());
        snap = Some(s);
    }
    builds.sort();
    let snap = snap.unwrap();
    println!(
        "index build: {} docs, {} explicit + {} inferred links, {} warnings: median {:.1} ms (target < 1000 ms)",
        snap.docs().len(),
        snap.graph().count(docs::links::Origin::Explicit),
        snap.graph().count(docs::links::Origin::Inferred),
        snap.warnings().count(),
        ms(builds[2]),
    );

    let docs = Arc::new(match &root {
        Root::Dir(p) => Docs::dir(p).unwrap(),
        Root::Embedded => Docs::embedded(),
    });
    let core = structs_console::assembly::builder(Arc::new(SimSource::demo()))
        .docs(Arc::clone(&docs))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = |tool: &str, args: Value| -> (Duration, Value) {
        let start = Instant::now();
        let v = rt
            .block_on(core.call(tool, args))
            .expect("the call succeeds");
        (start.elapsed(), v)
    };
    // The first call builds the index.
    call("structs_docs_search", json!({"query": "warm up"}));

    let questions: Vec<Question> = serde_json::from_str(
        &std::fs::read_to_string(manifest.join("benches/data/docs-questions.json")).unwrap(),
    )
    .unwrap();
    let mut queries: Vec<String> = questions.iter().map(|q| q.question.clone()).collect();
    queries.extend(KEYWORDS.iter().map(|k| k.to_string()));
    let mut times = Vec::new();
    for _ in 0..20 {
        for q in &queries {
            times.push(call("structs_docs_search", json!({"query": q, "limit": 10})).0);
        }
    }
    times.sort();
    println!(
        "search ({} queries x 20): p50 {:.3} ms, p99 {:.3} ms (target p50 < 2 ms)",
        queries.len(),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
    );

    // The same queries on the snapshot directly: the search without the tool layer.
    let mut direct = Vec::new();
    for q in &queries {
        let start = Instant::now();
        snap.search(q, None, None, 10).unwrap();
        direct.push(start.elapsed());
    }
    direct.sort();
    println!(
        "  the same queries on the snapshot, without the tool layer (one pass): p50 {:.3} ms",
        ms(percentile(&direct, 0.5))
    );

    let ids: Vec<String> = snap.docs().keys().cloned().collect();
    let mut times = Vec::new();
    for _ in 0..5 {
        for id in &ids {
            times.push(
                call(
                    "structs_docs_get",
                    json!({"doc_id": id, "include_related": true}),
                )
                .0,
            );
        }
    }
    times.sort();
    println!(
        "get with related ({} docs x 5): p50 {:.3} ms, p99 {:.3} ms (target p50 < 1 ms)",
        ids.len(),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
    );

    if !on_corpus {
        return;
    }
    let mut top3 = 0;
    let mut top3_any = 0;
    let mut top1 = 0;
    let mut reciprocal = 0.0;
    let mut misses = Vec::new();
    for q in &questions {
        let (_, r) = call(
            "structs_docs_search",
            json!({"query": q.question, "limit": 10}),
        );
        let hits: Vec<&str> = r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["doc_id"].as_str().unwrap())
            .collect();
        let rank = hits.iter().position(|h| *h == q.answer);
        if rank == Some(0) {
            top1 += 1;
        }
        if let Some(r) = rank {
            reciprocal += 1.0 / (r as f64 + 1.0);
        }
        if rank.is_some_and(|r| r < 3) {
            top3 += 1;
        } else {
            misses.push((
                q,
                hits.iter()
                    .take(3)
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>(),
                rank,
            ));
        }
        if hits
            .iter()
            .take(3)
            .any(|h| *h == q.answer || q.also.iter().any(|a| a == h))
        {
            top3_any += 1;
        }
    }
    let n = questions.len();
    println!(
        "search quality ({n} questions): answer in top 3 {top3}/{n} ({:.0} %), top 1 {top1}/{n}, \
         MRR@10 {:.2}; the answer or another doc that answers it in top 3 {top3_any}/{n} ({:.0} %)",
        100.0 * top3 as f64 / n as f64,
        reciprocal / n as f64,
        100.0 * top3_any as f64 / n as f64,
    );
    for (q, got, rank) in misses {
        println!(
            "  miss: {:?}\n        wanted {} (rank {}), got {:?}",
            q.question,
            q.answer,
            rank.map_or("-".to_string(), |r| (r + 1).to_string()),
            got
        );
    }
}
