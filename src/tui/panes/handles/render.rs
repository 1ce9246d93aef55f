//! Drawing the Handles tab: the list of live handles, a page of one's data, and the
//! field prompt.

use super::*;

impl HandlesPane {
    pub(super) fn render_list(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let focused = self.focus == Area::List;
        let mut title = vec![Span::styled(" Handles", theme.style(Role::Title))];
        let mut footer = String::new();
        if let Some(Ok(listing)) = &self.listing {
            title.push(Span::styled(
                format!(" · {} live · {} store", listing.total, listing.store),
                theme.style(Role::Muted),
            ));
            footer = format!(
                " TTL {} · as of {} ",
                duration(listing.ttl_secs),
                listing.at
            );
        }
        if self.list_request.is_some() && self.listing.is_none() {
            title.push(Span::styled(" · loading…", theme.style(Role::Muted)));
        }
        title.push(Span::styled(" ", theme.style(Role::Title)));
        let block = area_block(ui, "", focused)
            .title(Line::from(title))
            .title_bottom(
                Line::from(Span::styled(footer, theme.style(Role::Muted))).right_aligned(),
            );
        let listing = match &self.listing {
            None => {
                Paragraph::new(Span::styled("loading…", theme.style(Role::Muted)))
                    .block(block)
                    .render(area, buf);
                return;
            }
            Some(Err(message)) => {
                Paragraph::new(Span::styled(message.clone(), theme.style(Role::Error)))
                    .wrap(Wrap { trim: true })
                    .block(block)
                    .render(area, buf);
                return;
            }
            Some(Ok(listing)) => listing,
        };
        if listing.rows.is_empty() {
            let text = format!(
                "No live handles. A result over 25 KB is kept whole for {} under a handle (e.g. \
                 structs_list_structs, page_size 100, include_references: try it in the Server \
                 tab, 7). With --handle-store redis://… every server's are listed.",
                duration(listing.ttl_secs)
            );
            Paragraph::new(Span::styled(text, theme.style(Role::Muted)))
                .wrap(Wrap { trim: true })
                .block(block)
                .render(area, buf);
            return;
        }
        let (titles, body, widths) = handle_columns(&listing.rows, area.width);
        let header = Row::new(titles).style(theme.style(Role::Muted));
        let rows: Vec<Row<'_>> = body
            .into_iter()
            .map(|cells| Row::new(cells).style(theme.style(Role::Text)))
            .collect();
        let highlight = if focused {
            Role::Selected
        } else {
            Role::SelectedInactive
        };
        let table = Table::new(rows, widths)
            .header(header)
            .block(block)
            .column_spacing(2)
            .row_highlight_style(theme.style(highlight))
            .highlight_symbol(SELECTED_MARK)
            .highlight_spacing(HighlightSpacing::Always);
        StatefulWidget::render(table, area, buf, &mut self.table);
    }

    pub(super) fn render_data(&mut self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let focused = self.focus == Area::Data;
        let mut title = Vec::new();
        let mut footer = String::new();
        if let Some(handle) = self.inspected() {
            title.push(Span::styled(
                format!(" {}", cut_handle(handle)),
                theme.style(Role::Title),
            ));
        } else {
            title.push(Span::styled(" Data", theme.style(Role::Title)));
        }
        if let Some(page) = self.loaded_page() {
            title.push(Span::styled(
                format!(
                    " · page {}/{} · rows {}-{} of {}{}",
                    page.current,
                    page.total_pages,
                    page.first_row + 1,
                    page.last_row,
                    page.total_rows,
                    if page.cut { " (a row cut to fit)" } else { "" }
                ),
                theme.style(Role::Muted),
            ));
            let selection = if page.verbosity == "fields" {
                format!("fields {}", self.fields)
            } else {
                page.verbosity.clone()
            };
            footer = format!(
                " {selection} · {} of {} ",
                bytes(page.bytes as u64),
                bytes(page.whole_bytes)
            );
        }
        if let Some(request) = &self.page_request {
            title.push(Span::styled(
                format!(" · loading page {}…", request.page),
                theme.style(Role::Muted),
            ));
        }
        title.push(Span::styled(" ", theme.style(Role::Title)));
        let block = area_block(ui, "", focused)
            .title(Line::from(title))
            .title_bottom(
                Line::from(Span::styled(footer, theme.style(Role::Muted))).right_aligned(),
            );
        if self.page.is_none() {
            let key = ui
                .keymap
                .key_label(Scope::Handles, Command::Inspect)
                .unwrap_or_default();
            let text = if self.page_request.is_some() {
                "loading…".to_string()
            } else if self.rows().is_empty() {
                "Nothing to fetch yet.".to_string()
            } else {
                format!("Select a handle in the list and press {key} to fetch its first page.")
            };
            Paragraph::new(Span::styled(text, theme.style(Role::Muted)))
                .wrap(Wrap { trim: true })
                .block(block)
                .render(area, buf);
            return;
        }
        self.view.render(area, buf, ui, block, focused);
    }

    pub(super) fn render_prompt(&self, area: Rect, buf: &mut Buffer, ui: &Ui<'_>) {
        let theme = ui.theme;
        let accept = ui
            .keymap
            .key_label(Scope::Fields, Command::ApplyFields)
            .unwrap_or_default();
        let cancel = ui
            .keymap
            .key_label(Scope::Fields, Command::DropFields)
            .unwrap_or_default();
        let note = if self.draft.trim().is_empty() {
            format!("   e.g. id,owner,gridAttributes.ore · {accept} with none shows all fields")
        } else {
            format!("   {accept} fetches page 1 with these fields · {cancel} shows all fields")
        };
        Line::from(vec![
            Span::styled(" fields › ", theme.style(Role::Prompt)),
            Span::styled(self.draft.clone(), theme.style(Role::Text)),
            Span::styled("█", theme.style(Role::Prompt)),
            Span::styled(note, theme.style(Role::Muted)),
        ])
        .render(area, buf);
    }
}

/// The handles table's columns at `width`, their cells a row each, and each column's
/// width: wide, handles (their random part cut to 8 digits) and whole tool names;
/// narrower, `player 3f9a1c07` and `list_players`; narrower still, age and hits make
/// way.
fn handle_columns(
    rows: &[HandleRow],
    width: u16,
) -> (Vec<&'static str>, Vec<Vec<String>>, Vec<Constraint>) {
    let wide = width >= WIDE;
    let full = width >= MEDIUM;
    let cells = |r: &HandleRow| -> Vec<String> {
        let mut cells = vec![
            if wide { r.cut() } else { r.short() },
            if wide {
                r.tool.clone()
            } else {
                r.tool.trim_start_matches("structs_").to_string()
            },
            bytes(r.size_bytes),
            r.rows.to_string(),
        ];
        if full {
            cells.push(duration(r.age_sec));
        }
        cells.push(duration(r.expires_in_sec));
        if full {
            cells.push(r.hits.to_string());
        }
        cells
    };
    let mut titles = vec!["handle", "tool", "size", "rows"];
    if full {
        titles.push("age");
    }
    titles.push("expires in");
    if full {
        titles.push("hits");
    }
    let body: Vec<Vec<String>> = rows.iter().map(cells).collect();
    // Each column as wide as its widest cell or title; the last takes the rest.
    let mut widths: Vec<Constraint> = titles
        .iter()
        .enumerate()
        .map(|(i, title)| {
            let widest = body
                .iter()
                .map(|c| c[i].chars().count())
                .chain([title.len()])
                .max()
                .unwrap_or(0);
            Constraint::Length(u16::try_from(widest).unwrap_or(u16::MAX))
        })
        .collect();
    if let Some(last) = widths.last_mut() {
        *last = Constraint::Fill(1);
    }
    (titles, body, widths)
}
