//! What a recording never holds: secrets, found by rules on keys and on values.
//!
//! A rule on keys is a regular expression matched against an object's key, anywhere in
//! a line's payload: the key's whole value is replaced by a note of its size
//! (`"[redacted: 64 bytes]"`). A rule on values is one matched against every string: the
//! part that matches (or, when the expression has a group, the group's part) is replaced
//! by such a note. Each replaced value's dotted path is listed, so that a reader knows
//! what it does not have (a replay does not run a call whose arguments were hidden).
//!
//! The standard rules, on unless a configuration says `defaults = false`:
//! - keys: [`STANDARD_KEYS`] (signed transactions, tokens, passwords, API keys,
//!   mnemonics, private keys, authorization headers, cookies);
//! - values: a bearer token after `Bearer`; a JSON Web Token; a PEM or armored private
//!   key; a hex private key written after `private_key`/`privkey`; and a mnemonic, a run
//!   of 12 to 24 words of BIP-39's English list, one space apart, nothing glued to
//!   either end (prose has words the list lacks: `the`, `and`, `which`).
//!
//! The configuration adds its own (`[redact]`, [`RedactConfig`]). The recorder and the
//! tap apply the rules before a line is written; `diff`, `report` and `serve-recording`
//! apply them again to what they show or serve, so a log written before a rule existed
//! shows no more than one written after. A note is never redacted again: the rules
//! applied twice give what they gave once.

use std::sync::{Arc, LazyLock};

use regex::{Regex, RegexSet};
use serde::Deserialize;
use serde_json::Value;

/// Keys whose values a recording never holds, matched whole and without regard to case
/// (`-` and `_` alike).
pub const STANDARD_KEYS: &str = r"(?i)^(?:tx[-_]?bytes|(?:auth|access|refresh|id|bearer|api)?[-_]?token|api[-_]?key|x-api-key|passwords?|passphrase|passwd|(?:client[-_]?)?secret|mnemonic|seed[-_]?phrase|recovery[-_]?phrase|private[-_]?key|priv[-_]?key|privkey|secret[-_]?key|signing[-_]?key|(?:proxy-)?authorization|cookie|set-cookie)$";

/// Values (parts of strings) a recording never holds; where a pattern has a group, the
/// group is what is hidden.
pub const STANDARD_VALUES: &[&str] = &[
    // A bearer token, in a header or in text: the word stays, the token goes.
    r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)",
    // A JSON Web Token anywhere.
    r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}",
    // A PEM or armored private key (OpenSSH, Tendermint/Cosmos armor).
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    // A hex key written after its name, in text (`"private_key": "…"`, `privkey=…`).
    r#"(?i)priv(?:ate)?[-_]?key["']?\s*[:=]\s*["']?(?:0x)?([0-9a-f]{64})"#,
];

/// The note a hidden value is replaced by.
fn note(bytes: usize) -> String {
    format!("[redacted: {bytes} bytes]")
}

/// True for a note written by [`note`]: it is never redacted again.
fn is_note(s: &str) -> bool {
    s.starts_with("[redacted: ") && s.ends_with(" bytes]")
}

/// The `[redact]` table of the configuration file.
///
/// ```toml
/// [redact]
/// defaults = true                       # the standard rules (false: these rules alone)
/// keys = ["(?i)^x-session-key$"]        # a key matching: its whole value is hidden
/// values = ['sk-live-[0-9A-Za-z]{24}']  # the part of any string matching (or its group)
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedactConfig {
    pub defaults: bool,
    pub keys: Vec<String>,
    pub values: Vec<String>,
}

impl Default for RedactConfig {
    fn default() -> RedactConfig {
        RedactConfig {
            defaults: true,
            keys: Vec::new(),
            values: Vec::new(),
        }
    }
}

impl RedactConfig {
    /// Checks that every rule compiles; the error names the rule.
    ///
    /// # Errors
    ///
    /// The first rule that is not a regular expression.
    pub fn validate(&self) -> Result<(), String> {
        Redaction::from_config(self).map(|_| ())
    }
}

/// The rules, compiled.
#[derive(Debug)]
pub struct Redaction {
    keys: Option<RegexSet>,
    values: Vec<Regex>,
    any_value: Option<RegexSet>,
    mnemonics: bool,
}

/// The rules as a configuration made none: the standard ones.
static STANDARD: LazyLock<Arc<Redaction>> = LazyLock::new(|| {
    Arc::new(
        Redaction::from_config(&RedactConfig::default())
            .unwrap_or_else(|e| panic!("the standard redaction rules compile: {e}")),
    )
});

/// A mnemonic's candidates: runs of twelve lowercase words or more.
static WORD_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[a-z]+(?: [a-z]+){11,}")
        .unwrap_or_else(|e| panic!("the mnemonic pattern compiles: {e}"))
});

/// The fewest and the most words of a mnemonic.
const MNEMONIC_WORDS: std::ops::RangeInclusive<usize> = 12..=24;

impl Redaction {
    /// The standard rules ([`STANDARD_KEYS`], [`STANDARD_VALUES`] and mnemonics).
    pub fn standard() -> Arc<Redaction> {
        STANDARD.clone()
    }

    /// The rules a configuration asks for.
    ///
    /// # Errors
    ///
    /// A rule that is not a regular expression, named with what is wrong with it.
    pub fn from_config(config: &RedactConfig) -> Result<Redaction, String> {
        let compile = |what: &str, p: &str| {
            Regex::new(p).map_err(|e| format!("[redact] {what} rule {p:?}: {e}"))
        };
        let mut keys: Vec<String> = Vec::new();
        let mut values: Vec<Regex> = Vec::new();
        if config.defaults {
            keys.push(STANDARD_KEYS.to_string());
            for p in STANDARD_VALUES {
                values.push(compile("values", p)?);
            }
        }
        for p in &config.keys {
            compile("keys", p)?;
            keys.push(p.clone());
        }
        for p in &config.values {
            let r = compile("values", p)?;
            if r.is_match("") {
                return Err(format!(
                    "[redact] values rule {p:?} matches an empty string, so it would hide nothing and everything"
                ));
            }
            values.push(r);
        }
        let set = |patterns: Vec<&str>| {
            (!patterns.is_empty())
                .then(|| RegexSet::new(patterns).map_err(|e| format!("[redact]: {e}")))
                .transpose()
        };
        let any_value = set(values.iter().map(Regex::as_str).collect())?;
        Ok(Redaction {
            keys: set(keys.iter().map(String::as_str).collect())?,
            values,
            any_value,
            mnemonics: config.defaults,
        })
    }

    /// True when `key`'s value is hidden whole.
    pub fn hides_key(&self, key: &str) -> bool {
        self.keys.as_ref().is_some_and(|k| k.is_match(key))
    }

    /// Hides, anywhere in `v` (what a client sent: arguments, params, `_meta`, answers
    /// to a server's questions), what the rules find; lists the dotted path (under
    /// `path`) of each value changed. A key rule hides its key's whole value.
    pub fn apply(&self, v: &mut Value, path: &str, hidden: &mut Vec<String>) {
        self.walk(v, path, hidden, true);
    }

    /// As [`Redaction::apply`], for what a server sent (a result, an error, a question,
    /// a notification): a key rule hides a string or a number only, so that a tool's
    /// input schema (whose properties are named as the arguments are, `token`,
    /// `password`) and a flag (`"secret": true`) stay what they are.
    pub fn apply_answer(&self, v: &mut Value, path: &str, hidden: &mut Vec<String>) {
        self.walk(v, path, hidden, false);
    }

    /// `v` (what a server sent) with what the rules find hidden.
    pub fn applied_answer(&self, v: &Value) -> Value {
        let mut v = v.clone();
        self.apply_answer(&mut v, "", &mut Vec::new());
        v
    }

    fn walk(&self, v: &mut Value, path: &str, hidden: &mut Vec<String>, whole: bool) {
        match v {
            Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    let at = join(path, key);
                    let hides = match &*value {
                        Value::Null => false,
                        Value::String(_) | Value::Number(_) => self.hides_key(key),
                        _ => whole && self.hides_key(key),
                    };
                    if hides {
                        let bytes = match &*value {
                            Value::String(s) if is_note(s) => continue,
                            Value::String(s) => s.len(),
                            other => other.to_string().len(),
                        };
                        *value = Value::String(note(bytes));
                        hidden.push(at);
                    } else {
                        self.walk(value, &at, hidden, whole);
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.walk(item, &join(path, &i.to_string()), hidden, whole);
                }
            }
            Value::String(s) => {
                if let Some(shown) = self.text(s) {
                    *s = shown;
                    hidden.push(path.to_string());
                }
            }
            _ => {}
        }
    }

    /// `v` with what the rules find hidden.
    pub fn applied(&self, v: &Value) -> Value {
        let mut v = v.clone();
        self.apply(&mut v, "", &mut Vec::new());
        v
    }

    /// `s` with what the value rules find hidden; `None` when they find nothing.
    pub fn text(&self, s: &str) -> Option<String> {
        let mut out: Option<String> = None;
        if let Some(set) = &self.any_value {
            let hits = set.matches(s);
            if hits.matched_any() {
                let mut current = s.to_string();
                for i in hits.iter() {
                    current = hide(&self.values[i], &current);
                }
                out = Some(current);
            }
        }
        if self.mnemonics {
            let now = out.as_deref().unwrap_or(s);
            if let Some(hidden) = hide_mnemonics(now) {
                out = Some(hidden);
            }
        }
        out.filter(|o| o != s)
    }

    /// `v` as two requests are matched by a recording: the rules applied, and each note
    /// made one (`[redacted]`), so a secret matches any other secret in its place.
    pub fn blurred(&self, v: &Value) -> Value {
        let mut v = self.applied(v);
        blur(&mut v);
        v
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `s` with each match of `rule` (or of its first group) replaced by a note; notes
/// already there are left alone.
fn hide(rule: &Regex, s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for caps in rule.captures_iter(s) {
        let Some(m) = caps.get(1).or_else(|| caps.get(0)) else {
            continue;
        };
        if m.start() < last || m.as_str().is_empty() || is_note(m.as_str()) {
            continue;
        }
        out.push_str(&s[last..m.start()]);
        out.push_str(&note(m.len()));
        last = m.end();
    }
    out.push_str(&s[last..]);
    out
}

/// `s` with each mnemonic hidden: a run of 12 to 24 words of BIP-39's English list, one
/// space apart, with no letter, digit or `_` glued to either end.
fn hide_mnemonics(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let wordish = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let english = bip39::Language::English;
    // Where each run of listed words begins and ends.
    let mut found: Vec<(usize, usize)> = Vec::new();
    for run in WORD_RUN.find_iter(s) {
        let mut group: Option<(usize, usize, usize)> = None; // start, end, words
        let mut close = |g: Option<(usize, usize, usize)>| {
            if let Some((start, end, words)) = g {
                let before = start.checked_sub(1).map(|i| bytes[i]);
                let after = bytes.get(end).copied();
                if MNEMONIC_WORDS.contains(&words)
                    && !before.is_some_and(wordish)
                    && !after.is_some_and(wordish)
                {
                    found.push((start, end));
                }
            }
        };
        let mut at = run.start();
        for word in run.as_str().split(' ') {
            let end = at + word.len();
            if english.find_word(word).is_some() {
                group = Some(match group {
                    Some((start, _, n)) => (start, end, n + 1),
                    None => (at, end, 1),
                });
            } else {
                close(group.take());
            }
            at = end + 1;
        }
        close(group);
    }
    if found.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (start, end) in found {
        out.push_str(&s[last..start]);
        out.push_str(&note(end - start));
        last = end;
    }
    out.push_str(&s[last..]);
    Some(out)
}

/// Every note in `v` made `[redacted]`, whatever the size it says.
fn blur(v: &mut Value) {
    static NOTE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\[redacted: \d+ bytes\]").unwrap_or_else(|e| panic!("compiles: {e}"))
    });
    match v {
        Value::String(s) if s.contains("[redacted: ") => {
            *s = NOTE.replace_all(s, "[redacted]").into_owned();
        }
        Value::Array(items) => items.iter_mut().for_each(blur),
        Value::Object(map) => map.values_mut().for_each(blur),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PHRASE: &str =
        "abandon ability able about above absent absorb abstract absurd abuse access accident";

    fn hidden(r: &Redaction, v: Value) -> (Value, Vec<String>) {
        let mut v = v;
        let mut h = Vec::new();
        r.apply(&mut v, "", &mut h);
        (v, h)
    }

    #[test]
    fn the_standard_keys_hide_whole_values_anywhere() {
        let r = Redaction::standard();
        let (v, h) = hidden(
            &r,
            json!({"tx_bytes": "0a8f", "nested": [{"Password": "hunter2"}], "mode": "sync",
                   "Authorization": "Basic abc", "X-Api-Key": 7, "private_key": null}),
        );
        assert_eq!(v["tx_bytes"], "[redacted: 4 bytes]");
        assert_eq!(v["nested"][0]["Password"], "[redacted: 7 bytes]");
        assert_eq!(v["Authorization"], "[redacted: 9 bytes]");
        assert_eq!(v["X-Api-Key"], "[redacted: 1 bytes]");
        assert_eq!(v["mode"], "sync");
        assert!(v["private_key"].is_null(), "nothing to hide in a null");
        assert_eq!(
            h,
            [
                "tx_bytes",
                "nested.0.Password",
                "Authorization",
                "X-Api-Key"
            ]
        );
        // A world's seed or a player's id is no secret.
        assert!(!r.hides_key("seed") && !r.hides_key("player_id") && !r.hides_key("tokens_left"));
    }

    #[test]
    fn an_answer_keeps_its_schemas_and_flags_and_loses_its_secrets() {
        let r = Redaction::standard();
        let schema = json!({"tools": [{"name": "login", "inputSchema": {"type": "object",
            "properties": {"token": {"type": "string"}, "password": {"type": "string"}}},
            "annotations": {"secret": true}}], "token": "t0k3n-value", "api_key": 42});
        let mut answer = schema.clone();
        let mut h = Vec::new();
        r.apply_answer(&mut answer, "result", &mut h);
        assert_eq!(answer["tools"], schema["tools"], "schemas and flags stay");
        assert_eq!(answer["token"], "[redacted: 11 bytes]");
        assert_eq!(answer["api_key"], "[redacted: 2 bytes]");
        assert_eq!(h, ["result.token", "result.api_key"]);
        // What a client sends loses the whole value.
        assert_eq!(
            r.applied(&json!({"secret": {"a": 1}}))["secret"],
            "[redacted: 7 bytes]"
        );
    }

    #[test]
    fn the_standard_values_hide_tokens_keys_and_mnemonics_in_text() {
        let r = Redaction::standard();
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
        let pem = "-----BEGIN TENDERMINT PRIVATE KEY-----\nkdf: bcrypt\n\nAbCd==\n-----END TENDERMINT PRIVATE KEY-----";
        let hex = "9f".repeat(32);
        let text = format!(
            "header Authorization: Bearer s3cr3t-t0ken-value; jwt {jwt}; key {pem}; \
             {{\"private_key\": \"{hex}\"}}; saved \"{PHRASE}\" ok"
        );
        let shown = r.text(&text).expect("found");
        for secret in [
            "s3cr3t",
            "eyJhbGci",
            "AbCd==",
            "kdf: bcrypt",
            &hex,
            "abandon",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        assert!(shown.contains("Bearer [redacted: 18 bytes]"), "{shown}");
        assert!(
            shown.contains("\"private_key\": \"[redacted: 64 bytes]\""),
            "{shown}"
        );
        assert!(
            shown.contains("saved \"[redacted: 84 bytes]\" ok"),
            "{shown}"
        );
        // Applied again, nothing more is found.
        assert_eq!(r.text(&shown), None);
    }

    #[test]
    fn a_mnemonic_is_a_run_of_listed_words_and_prose_is_not() {
        let r = Redaction::standard();
        let phrase24 = format!("{PHRASE} {PHRASE}");
        assert_eq!(
            r.text(&format!("seed: {phrase24}\n")).as_deref(),
            Some("seed: [redacted: 169 bytes]\n")
        );
        // Eleven words, or words glued to a digit: not a phrase.
        let eleven = PHRASE.rsplit_once(' ').unwrap().0;
        assert_eq!(r.text(eleven), None);
        assert_eq!(r.text(&format!("{PHRASE}9")), None);
        // Twelve words of prose, none shorter than three letters: words the list lacks.
        assert_eq!(
            r.text("which runs the step alone after all earlier steps and before any"),
            None
        );
        assert_eq!(
            r.text("The fleet moved to the planet and mined ore for the guild today."),
            None
        );
        assert_eq!(r.text("player 1-18 has 240 ore; tx 7F3A"), None);
    }

    /// Every page of the docs an agent reads (and the book) passes the standard rules
    /// untouched but for the bearer tokens of its examples: prose and code are not
    /// secrets.
    #[test]
    fn the_standard_rules_hide_nothing_in_the_docs() {
        let r = Redaction::standard();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut pages = Vec::new();
        let mut dirs = vec![root.join("docs"), root.join("book/src")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|e| e == "md") {
                    pages.push(p);
                }
            }
        }
        assert!(pages.len() > 20, "{pages:?}");
        for page in pages {
            let text = std::fs::read_to_string(&page).unwrap();
            let Some(shown) = r.text(&text) else { continue };
            // A bearer token in a host's example is one to hide; nothing else is.
            for (at, _) in shown.match_indices("[redacted: ") {
                let before = shown[..at].to_ascii_lowercase();
                assert!(
                    before.ends_with("bearer "),
                    "{} loses text to the rules: …{}…",
                    page.display(),
                    &shown[at.saturating_sub(80)..(at + 80).min(shown.len())]
                );
            }
        }
    }

    #[test]
    fn configured_rules_add_to_the_standard_or_stand_alone() {
        let config = RedactConfig {
            defaults: true,
            keys: vec!["(?i)^session_key$".into()],
            values: vec!["sk-live-[0-9A-Za-z]{8}".into(), "code=(\\d{6})".into()],
        };
        let r = Redaction::from_config(&config).unwrap();
        let (v, h) = hidden(
            &r,
            json!({"Session_Key": "abc", "note": "use sk-live-AbCd1234 with code=123456", "token": "t"}),
        );
        assert_eq!(v["Session_Key"], "[redacted: 3 bytes]");
        assert_eq!(
            v["note"],
            "use [redacted: 16 bytes] with code=[redacted: 6 bytes]"
        );
        assert_eq!(v["token"], "[redacted: 1 bytes]");
        assert_eq!(h, ["Session_Key", "note", "token"]);
        let alone = Redaction::from_config(&RedactConfig {
            defaults: false,
            ..config
        })
        .unwrap();
        let (v, _) = hidden(&alone, json!({"token": "t", "m": PHRASE}));
        assert_eq!(v["token"], "t", "the standard rules are off");
        assert_eq!(v["m"], PHRASE);
    }

    #[test]
    fn a_rule_that_does_not_compile_or_matches_nothing_is_refused_by_name() {
        let bad = |values: &[&str], keys: &[&str]| {
            Redaction::from_config(&RedactConfig {
                defaults: true,
                keys: keys.iter().map(|s| s.to_string()).collect(),
                values: values.iter().map(|s| s.to_string()).collect(),
            })
            .unwrap_err()
        };
        let e = bad(&["(unclosed"], &[]);
        assert!(e.contains("values rule \"(unclosed\""), "{e}");
        let e = bad(&[], &["[z-a]"]);
        assert!(e.contains("keys rule \"[z-a]\""), "{e}");
        let e = bad(&["x*"], &[]);
        assert!(e.contains("empty string"), "{e}");
    }

    #[test]
    fn blurred_values_match_whatever_secret_stood_there() {
        let r = Redaction::standard();
        let a = r.blurred(&json!({"id": "1-1", "token": "short", "h": "Bearer abcdefgh123"}));
        let b = r.blurred(&json!({"id": "1-1", "token": "[redacted: 40 bytes]", "h": "Bearer zzzzzzzzzzzzzzzzzz"}));
        assert_eq!(a, b);
        let c = r.blurred(&json!({"id": "1-2", "token": "short", "h": "Bearer abcdefgh123"}));
        assert_ne!(a, c);
    }
}
