//! What the index needs from a doc's Markdown body: its plain text (for full-text search
//! and snippets), its first heading (the title when the front matter has none), and the
//! docs its links point to (inferred links).

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// What one pass over a body finds.
#[derive(Debug, Default)]
pub struct Scan {
    /// The text a reader sees, blocks separated by newlines.
    pub text: String,
    /// The first level-1 heading, else the first heading.
    pub heading: Option<String>,
    /// Every heading's text, one per line (indexed on its own: a section's name says
    /// what the section answers).
    pub headings: String,
    /// Every link destination, in order.
    pub links: Vec<String>,
}

pub fn scan(body: &str) -> Scan {
    let mut out = Scan::default();
    let mut heading: Option<(HeadingLevel, String)> = None;
    let mut first_any: Option<String> = None;
    let mut first_h1: Option<String> = None;
    for event in Parser::new_ext(body, options()) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level, String::new())),
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, text)) = heading.take() {
                    let text = text.trim().to_string();
                    if !text.is_empty() {
                        out.headings.push_str(&text);
                        out.headings.push('\n');
                        if level == HeadingLevel::H1 && first_h1.is_none() {
                            first_h1 = Some(text.clone());
                        }
                        first_any.get_or_insert(text);
                    }
                }
                out.text.push('\n');
            }
            Event::Start(Tag::Link { dest_url, .. }) => out.links.push(dest_url.to_string()),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, h)) = heading.as_mut() {
                    h.push_str(&t);
                }
                out.text.push_str(&t);
            }
            Event::SoftBreak | Event::HardBreak => out.text.push(' '),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableRow
                | TagEnd::TableHead
                | TagEnd::BlockQuote(_),
            ) => out.text.push('\n'),
            Event::End(TagEnd::TableCell) => out.text.push_str(" | "),
            _ => {}
        }
    }
    out.heading = first_h1.or(first_any);
    out
}

/// The doc id a relative Markdown link from doc `from` points to, if it points to a
/// Markdown file: `power.md`, `../api/tools.md#errors`, `/guides/console.md` (from
/// the root). `Err` is a link that would leave the root; `Ok(None)` is a link to
/// something else (a web page, an anchor, an image).
pub fn resolve_link(from: &str, dest: &str) -> Result<Option<String>, String> {
    let dest = dest.trim();
    if dest.contains("://") || dest.starts_with("mailto:") || dest.starts_with('#') {
        return Ok(None);
    }
    let path = dest.split(['#', '?']).next().unwrap_or("");
    let path = percent_decode(path);
    let Some(stem) = path.strip_suffix(".md") else {
        return Ok(None);
    };
    let mut parts: Vec<&str> = if stem.starts_with('/') {
        Vec::new()
    } else {
        let mut base: Vec<&str> = from.split('/').collect();
        base.pop();
        base
    };
    for part in stem.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(format!("{dest:?} leaves the docs root"));
                }
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Ok(None);
    }
    super::links::normalize_doc_id(&parts.join("/")).map(Some)
}

/// `%20` and friends back to their bytes; anything malformed is kept as written.
fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(hi * 16 + lo);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_reads_text_heading_and_links() {
        let s = scan(
            "Intro line.\n\n# Mining *ore*\n\nSee [power](power.md) and [web](https://x.y).\n\n\
             | a | b |\n|---|---|\n| 1 | 2 |\n\n[ref]: ../api/tools.md\n\nUse [the tools][ref].\n",
        );
        assert_eq!(s.heading.as_deref(), Some("Mining ore"));
        assert_eq!(s.headings, "Mining ore\n");
        assert_eq!(s.links, ["power.md", "https://x.y", "../api/tools.md"]);
        assert!(s.text.contains("See power and web."), "{}", s.text);
        assert!(s.text.contains("1 | 2"), "{}", s.text);
    }

    #[test]
    fn links_resolve_relative_to_their_doc() {
        let r = |from, dest| resolve_link(from, dest).unwrap();
        assert_eq!(r("a/b/c", "d.md"), Some("a/b/d".into()));
        assert_eq!(r("a/b/c", "../x/y.md#part"), Some("a/x/y".into()));
        assert_eq!(r("a/b/c", "./e.md?x=1"), Some("a/b/e".into()));
        assert_eq!(
            r("a/b/c", "/guides/console.md"),
            Some("guides/console".into())
        );
        assert_eq!(r("top", "my%20notes.md"), Some("my notes".into()));
        assert_eq!(r("a/b", "https://example.com/x.md"), None);
        assert_eq!(r("a/b", "#anchor"), None);
        assert_eq!(r("a/b", "image.png"), None);
        assert!(resolve_link("a/b", "../../outside.md").is_err());
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%é%41"), "%éA");
    }
}
