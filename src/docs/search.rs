//! Full-text search: an in-memory SQLite FTS5 table over every doc's title, summary,
//! tags, path words and body text, ranked by FTS5's BM25 with more weight on the title
//! and tags. Rebuilt from the docs on every build; the files stay the truth.

use std::sync::Mutex;

use rusqlite::{Connection, params};

/// Column weights for BM25, in the table's column order.
const W_TITLE: f64 = 10.0;
const W_SUMMARY: f64 = 4.0;
const W_TAGS: f64 = 8.0;
const W_PATH: f64 = 3.0;
const W_HEADINGS: f64 = 3.0;
const W_BODY: f64 = 1.0;

/// Words too common to help a ranking; dropped from queries (an all-stopword query
/// keeps them).
const STOPWORDS: &[&str] = &[
    "a", "able", "about", "actually", "after", "again", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "been", "before", "being", "but", "by", "can", "could", "did", "do",
    "does", "doing", "done", "each", "even", "ever", "every", "for", "from", "get", "gets",
    "getting", "give", "gives", "go", "goes", "going", "got", "had", "has", "have", "having", "he",
    "her", "here", "him", "his", "how", "i", "if", "im", "in", "into", "is", "it", "its", "just",
    "know", "let", "like", "ll", "lot", "make", "many", "may", "me", "might", "more", "most",
    "much", "must", "my", "need", "needs", "no", "not", "now", "of", "off", "on", "once", "one",
    "only", "or", "other", "our", "out", "over", "own", "really", "s", "said", "same", "say",
    "see", "she", "should", "so", "some", "still", "such", "sure", "t", "take", "tell", "than",
    "that", "the", "their", "them", "then", "there", "these", "they", "thing", "things", "this",
    "those", "through", "to", "too", "try", "up", "us", "use", "used", "using", "ve", "very",
    "want", "wants", "was", "way", "we", "well", "were", "what", "whats", "when", "where",
    "whether", "which", "while", "who", "why", "will", "with", "work", "works", "would", "yet",
    "you", "your",
];

/// The search index.
pub struct FullText {
    conn: Mutex<Connection>,
    /// Each row's body text and its ASCII-lowercased copy, by rowid - 1 (for snippets).
    texts: Vec<(String, String)>,
    /// Each row's doc id, by rowid - 1. The table is contentless (FTS5 `content=''`):
    /// it keeps only the index, and reading a stored column would cost a seek into the
    /// row's text for every match.
    ids: Vec<String>,
    /// How many docs each query word is in, learnt as queries use them.
    doc_freq: Mutex<std::collections::HashMap<String, usize>>,
    /// Each row's title words, by rowid - 1, stemmed roughly: those of its name (the
    /// title before ` - `) and those of the rest of the title and its tags.
    heads: Vec<(Vec<String>, Vec<String>)>,
}

/// What a query word naming a doc's title adds to its score: BM25 gives a word found
/// in most docs (`build`, `ore`, `power` in a game's docs) almost no weight, yet a
/// doc named by it is what the question is about.
const NAME_BONUS: f64 = 4.0;
/// The same for a word of the rest of the title or of the tags.
const HEAD_BONUS: f64 = 1.5;

/// One ranked match.
#[derive(Debug, Clone)]
pub struct Match {
    pub doc_id: String,
    /// Higher is better (BM25, sign flipped so that it reads as a score).
    pub score: f64,
    /// Body text around the matched words, each match wrapped in `**`.
    pub snippet: String,
}

/// What one doc contributes to the index.
pub struct Row<'a> {
    pub doc_id: &'a str,
    pub title: &'a str,
    pub summary: &'a str,
    pub tags: &'a [String],
    /// The body's headings, one per line.
    pub headings: &'a str,
    pub text: &'a str,
}

impl FullText {
    pub fn build<'a>(rows: impl Iterator<Item = Row<'a>>) -> Result<FullText, String> {
        let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
        conn.execute_batch(
            "CREATE VIRTUAL TABLE fts USING fts5(
                 title, summary, tags, path, headings, body,
                 content = '', tokenize = 'porter unicode61'
             );",
        )
        .map_err(|e| format!("cannot create the search table: {e}"))?;
        let mut texts = Vec::new();
        let mut ids = Vec::new();
        let mut heads = Vec::new();
        {
            let tx = conn.unchecked_transaction().map_err(|e| e.to_string())?;
            {
                let mut insert = tx
                    .prepare(
                        "INSERT INTO fts (rowid, title, summary, tags, path, headings, body)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    )
                    .map_err(|e| e.to_string())?;
                for row in rows {
                    texts.push((row.text.to_string(), row.text.to_ascii_lowercase()));
                    ids.push(row.doc_id.to_string());
                    let (name, rest) = row.title.split_once(" - ").unwrap_or((row.title, ""));
                    let mut more = stems_of(rest);
                    more.extend(row.tags.iter().flat_map(|t| stems_of(t)));
                    heads.push((stems_of(name), more));
                    let path_words = row.doc_id.replace(['/', '-', '_'], " ");
                    insert
                        .execute(params![
                            ids.len() as i64,
                            row.title,
                            row.summary,
                            row.tags.join(" "),
                            path_words,
                            row.headings,
                            row.text,
                        ])
                        .map_err(|e| format!("cannot index {}: {e}", row.doc_id))?;
                }
            }
            tx.commit().map_err(|e| e.to_string())?;
        }
        conn.execute_batch("INSERT INTO fts(fts) VALUES('optimize');")
            .map_err(|e| e.to_string())?;
        Ok(FullText {
            conn: Mutex::new(conn),
            texts,
            ids,
            doc_freq: Mutex::default(),
            heads,
        })
    }

    /// `words` without those in more than half the docs, unless that leaves none.
    /// FTS5's BM25 gives such a word an IDF of almost zero, so it cannot change a
    /// ranking, but it is the costliest to score: every one of its many occurrences is
    /// counted. Document frequencies are asked for once per word and remembered.
    fn useful_words(&self, words: Vec<String>) -> Result<Vec<String>, String> {
        let n = self.texts.len();
        let mut freq = self.doc_freq.lock().unwrap_or_else(|e| e.into_inner());
        let mut kept = Vec::new();
        for w in &words {
            let df = match freq.get(w) {
                Some(df) => *df,
                None => {
                    let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
                    let df: i64 = conn
                        .prepare_cached("SELECT count(*) FROM fts WHERE fts MATCH ?1")
                        .and_then(|mut s| s.query_row(params![format!("\"{w}\"")], |r| r.get(0)))
                        .map_err(|e| e.to_string())?;
                    freq.insert(w.clone(), df as usize);
                    df as usize
                }
            };
            if df * 2 <= n {
                kept.push(w.clone());
            }
        }
        Ok(if kept.is_empty() { words } else { kept })
    }

    /// The best `limit` matches for `query` among the docs `keep` accepts, best first;
    /// ties in doc id order. A query with no searchable word matches nothing.
    ///
    /// The score is FTS5's BM25 over every column with the weights above, plus the BM25
    /// of the title and tags alone: FTS5 sums the weighted hits of all columns before
    /// saturating them, so a word repeated in a short body can otherwise come close to
    /// a title that names it. The second term keeps title and tag matches ahead.
    /// Snippets are cut here from the body text around the query's words.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Result<Vec<Match>, String> {
        let all_words = query_words(query);
        let words = self.useful_words(all_words.clone())?;
        let Some(expr) = match_expression(&words) else {
            return Ok(Vec::new());
        };
        let query_stems: Vec<String> = all_words.iter().map(|w| stem(w)).collect();
        // Two BM25 scores from one pass: every column weighted, and the title and tags
        // alone (zero weight on the rest).
        let sql = format!(
            "SELECT rowid,
                    bm25(fts, {W_TITLE}, {W_SUMMARY}, {W_TAGS}, {W_PATH}, {W_HEADINGS}, {W_BODY}),
                    bm25(fts, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0)
             FROM fts WHERE fts MATCH ?1"
        );
        let conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        let err = |e: rusqlite::Error| e.to_string();
        let mut scored: Vec<(i64, String, f64)> = {
            let mut stmt = conn.prepare_cached(&sql).map_err(err)?;
            let rows = stmt
                .query_map(params![expr], |r| {
                    let all: f64 = r.get(1)?;
                    let heads: f64 = r.get(2)?;
                    Ok((r.get::<_, i64>(0)?, -(all + heads)))
                })
                .map_err(err)?;
            let mut out = Vec::new();
            for row in rows {
                let (rowid, score) = row.map_err(err)?;
                if let Some(id) = usize::try_from(rowid - 1)
                    .ok()
                    .and_then(|i| self.ids.get(i))
                {
                    out.push((rowid, id.clone(), score));
                }
            }
            out
        };
        drop(conn);
        // Docs whose title names the query's words, found or not by the words BM25
        // kept, gain a bonus for each word their title names.
        let bonus = |i: usize| {
            self.heads.get(i).map_or(0.0, |(name, more)| {
                query_stems
                    .iter()
                    .map(|q| {
                        if name.contains(q) {
                            NAME_BONUS
                        } else if more.contains(q) {
                            HEAD_BONUS
                        } else {
                            0.0
                        }
                    })
                    .sum::<f64>()
            })
        };
        let mut found: std::collections::HashSet<i64> = std::collections::HashSet::new();
        for (rowid, _, score) in &mut scored {
            found.insert(*rowid);
            *score += bonus(usize::try_from(*rowid - 1).unwrap_or(usize::MAX));
        }
        for (i, id) in self.ids.iter().enumerate() {
            let rowid = i as i64 + 1;
            if !found.contains(&rowid) {
                let b = bonus(i);
                if b > 0.0 {
                    scored.push((rowid, id.clone(), b));
                }
            }
        }
        scored.retain(|(_, id, _)| keep(id));
        scored.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.1.cmp(&b.1)));
        scored.truncate(limit);
        let matches = scored
            .into_iter()
            .map(|(rowid, doc_id, score)| Match {
                snippet: self
                    .texts
                    .get(usize::try_from(rowid - 1).unwrap_or(usize::MAX))
                    .map(|(t, lower)| snippet(t, lower, &words))
                    .unwrap_or_default(),
                doc_id,
                score,
            })
            .collect();
        Ok(matches)
    }
}

/// The words of `query` (letters and digits), lowercased, stopwords dropped unless that
/// leaves nothing, each once, at most 32.
fn query_words(query: &str) -> Vec<String> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut kept: Vec<String> = words
        .iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .cloned()
        .collect();
    if kept.is_empty() {
        kept = words;
    }
    let mut seen = std::collections::HashSet::new();
    kept.retain(|w| seen.insert(w.clone()));
    kept.truncate(32);
    kept
}

/// The FTS5 query for `words`: each quoted so that nothing in them is FTS5 syntax,
/// joined by OR (BM25 then ranks docs that match more and rarer words higher).
pub fn match_expression(words: &[String]) -> Option<String> {
    if words.is_empty() {
        return None;
    }
    Some(
        words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

/// The rough stems of a title's or tag's words (stopwords left out).
fn stems_of(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// A word's rough stem, owned.
fn stem(word: &str) -> String {
    rough_stem(word).to_string()
}

/// A rough stem for highlighting and title matches (the index itself uses the Porter stemmer):
/// `mining`, `mined`, `miner` and `mine` all become `min`.
fn rough_stem(word: &str) -> &str {
    for suffix in ["ings", "ing", "ers", "er", "ed", "es", "s", "e"] {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.chars().count() >= 3
        {
            return stem;
        }
    }
    word
}

/// Words in a snippet.
const SNIPPET_WORDS: usize = 24;

/// Bytes a cluster of matches may span to count as one place in the text.
const CLUSTER_BYTES: usize = 160;

/// About [`SNIPPET_WORDS`] words of `text` where the most different query words meet,
/// each match wrapped in `**`, `…` where text was cut. `lower` is `text` lowercased in
/// ASCII (same byte offsets). The words are found with substring search, so the cost is
/// a few fast scans of the text, not a walk over every word.
fn snippet(text: &str, lower: &str, words: &[String]) -> String {
    let stems: Vec<String> = words.iter().map(|w| rough_stem(w).to_string()).collect();
    let is_word = |c: char| c.is_alphanumeric();
    let mut hits: Vec<(usize, usize)> = Vec::new();
    for (q, stem) in stems.iter().enumerate() {
        if stem.is_empty() {
            continue;
        }
        for (i, _) in lower.match_indices(stem.as_str()) {
            if lower[..i].chars().next_back().is_some_and(is_word) {
                continue;
            }
            let end = lower[i..]
                .find(|c: char| !is_word(c))
                .map_or(lower.len(), |e| i + e);
            if rough_stem(&lower[i..end]) == stem {
                hits.push((i, q));
            }
        }
    }
    hits.sort_unstable();
    // The cluster of hits within CLUSTER_BYTES with the most distinct words, then the
    // most hits, earliest.
    let mut anchor = 0;
    let mut best = (0usize, 0usize);
    let mut counts = vec![0usize; stems.len()];
    let (mut distinct, mut lo) = (0, 0);
    for hi in 0..hits.len() {
        counts[hits[hi].1] += 1;
        if counts[hits[hi].1] == 1 {
            distinct += 1;
        }
        while hits[hi].0 - hits[lo].0 > CLUSTER_BYTES {
            counts[hits[lo].1] -= 1;
            if counts[hits[lo].1] == 0 {
                distinct -= 1;
            }
            lo += 1;
        }
        if (distinct, hi - lo + 1) > best {
            best = (distinct, hi - lo + 1);
            anchor = hits[lo].0;
        }
    }
    // From a few words before the cluster, SNIPPET_WORDS words on.
    let mut start = anchor;
    let mut back = 0;
    while start > 0 && back < 5 {
        let before = text[..start].trim_end_matches(|c: char| !is_word(c));
        let word_start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !is_word(*c))
            .map_or(0, |(i, c)| i + c.len_utf8());
        if before.is_empty() {
            start = 0;
            break;
        }
        start = word_start;
        back += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    let mut taken = 0;
    let mut word_from = None;
    let rest = text[start..].char_indices().map(|(i, c)| (start + i, c));
    for (i, c) in rest.chain(std::iter::once((text.len(), ' '))) {
        match (is_word(c), word_from) {
            (true, None) => word_from = Some(i),
            (false, Some(s)) => {
                out.push_str(&text[at..s]);
                let hit = stems.iter().any(|q| rough_stem(&lower[s..i]) == q);
                if hit {
                    out.push_str("**");
                }
                out.push_str(&text[s..i]);
                if hit {
                    out.push_str("**");
                }
                at = i;
                word_from = None;
                taken += 1;
                if taken == SNIPPET_WORDS {
                    break;
                }
            }
            _ => {}
        }
    }
    if taken == SNIPPET_WORDS && text[at..].chars().any(is_word) {
        out.push('…');
    } else {
        out.push_str(&text[at..]);
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> FullText {
        let docs = [
            (
                "mechanics/mining",
                "Mining ore",
                "How extractors mine ore.",
                vec!["ore".to_string()],
                "Ore extractors mine ore from a planet. Refineries turn ore into alpha matter.",
            ),
            (
                "mechanics/power",
                "Power",
                "Energy, capacity and load.",
                vec!["energy".to_string()],
                "Reactors give power. Every struct draws power; mining needs it.",
            ),
            (
                "lore/history",
                "History",
                "Where the structs came from.",
                vec![],
                "Long ago, machines woke up.",
            ),
        ];
        FullText::build(docs.iter().map(|(id, t, s, tags, body)| Row {
            doc_id: id,
            title: t,
            summary: s,
            tags,
            headings: "",
            text: body,
        }))
        .unwrap()
    }

    #[test]
    fn bm25_ranks_the_title_match_first() {
        let fts = index();
        let hits = fts.search("how do I mine ore?", 10, |_| true).unwrap();
        assert_eq!(hits[0].doc_id, "mechanics/mining");
        assert!(hits[0].score > 0.0);
        assert!(hits[0].snippet.contains("**"), "{}", hits[0].snippet);
        let hits = fts.search("power", 50, |_| true).unwrap();
        assert_eq!(hits[0].doc_id, "mechanics/power");
        assert_eq!(hits.len(), 1);
        // Stemming: "mining" finds "mine".
        assert!(!fts.search("mining", 50, |_| true).unwrap().is_empty());
    }

    #[test]
    fn queries_are_words_never_syntax() {
        let fts = index();
        for q in [
            "\"",
            "NEAR(",
            "ore*",
            "title:power",
            "a AND",
            "-",
            "'; DROP TABLE fts; --",
            ")(",
        ] {
            fts.search(q, 5, |_| true)
                .unwrap_or_else(|e| panic!("{q:?}: {e}"));
        }
        assert!(fts.search("?!", 50, |_| true).unwrap().is_empty());
        let t = "Miners mine; the mined ore is mining's goal.";
        assert_eq!(
            snippet(t, &t.to_ascii_lowercase(), &["mining".into()]),
            "**Miners** **mine**; the **mined** ore is **mining**'s goal."
        );
        let long = format!("{} needle {}", "hay ".repeat(50), "hay ".repeat(50));
        let s = snippet(&long, &long.to_ascii_lowercase(), &["needle".into()]);
        assert!(
            s.starts_with('…') && s.ends_with('…') && s.contains("**needle**"),
            "{s}"
        );
        assert_eq!(
            match_expression(&query_words("the THE a")),
            Some("\"the\" OR \"a\"".into())
        );
        assert_eq!(
            match_expression(&query_words("Ore ore ORE")),
            Some("\"ore\"".into())
        );
    }
}
