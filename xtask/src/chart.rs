//! `cargo xtask chart [--title TEXT] [IN.tsv [OUT.svg]]`: a bar chart of encode speed.
//!
//! Reads a table of results, one per line, tab-separated: `encoding`, `corpus`, `tokenizer`,
//! `MB/s` (lines starting with `#`, blank lines and the `encoding` header are skipped), and
//! writes an SVG: one panel per encoding, one group of bars per corpus, one bar per tokenizer,
//! all panels on the same MB/s scale. picobpe's columns (tokenizers whose name starts with
//! `picobpe`) are drawn in warm colours, the peers in cool ones; above each group, picobpe's
//! fastest column over the fastest peer's. Default paths:
//! `docs/figures/speed.tsv` and the same path with `.svg`.
//!
//! `scripts/bench_side_by_side.py` writes the table (exact tokenizers only) and calls this.

use std::path::{Path, PathBuf};

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One measurement: encoding, corpus, tokenizer, MB/s.
struct Row {
    encoding: String,
    corpus: String,
    tokenizer: String,
    mb_s: f64,
}

/// Entry point.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut title = None;
    let mut paths = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--title" => title = Some(it.next().ok_or("--title needs a value")?.clone()),
            "-h" | "--help" => {
                println!("usage: cargo xtask chart [--title TEXT] [IN.tsv [OUT.svg]]");
                return Ok(());
            }
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            _ => paths.push(PathBuf::from(a)),
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?;
    let input = paths
        .first()
        .cloned()
        .unwrap_or_else(|| root.join("docs/figures/speed.tsv"));
    let output = paths
        .get(1)
        .cloned()
        .unwrap_or_else(|| input.with_extension("svg"));
    if paths.len() > 2 {
        return Err("expected at most two paths: IN.tsv OUT.svg".into());
    }
    let text = std::fs::read_to_string(&input)
        .map_err(|e| format!("cannot read {}: {e}", input.display()))?;
    let rows = parse(&text).map_err(|e| format!("{}: {e}", input.display()))?;
    let title = title.unwrap_or_else(|| {
        "Encode speed, MB/s on one thread (higher is better): picobpe and its exact peers".into()
    });
    draw(&rows, &title, &output).map_err(|e| format!("{}: {e}", output.display()))?;
    println!("wrote {}", output.display());
    Ok(())
}

/// The rows of a results table.
fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') || line.starts_with("encoding\t") {
            continue;
        }
        let cells: Vec<&str> = line.split('\t').collect();
        let [encoding, corpus, tokenizer, mb_s] = cells[..] else {
            return Err(format!(
                "line {}: expected 4 tab-separated cells, found {}",
                i + 1,
                cells.len()
            ));
        };
        let mb_s: f64 = mb_s
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("line {}: `{mb_s}` is not a speed in MB/s", i + 1))?;
        rows.push(Row {
            encoding: encoding.trim().into(),
            corpus: corpus.trim().into(),
            tokenizer: tokenizer.trim().into(),
            mb_s,
        });
    }
    if rows.is_empty() {
        return Err("no results in the table".into());
    }
    Ok(rows)
}

/// `items` without repeats, in order of first appearance.
fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for s in items {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The tokenizers the benchmarks measure, in the charts' order, each with its colour (warm for
/// picobpe's columns, cool and grey for the peers), so a tokenizer looks the same in every
/// chart. Others follow in the order the table lists them, in the spare colours.
const KNOWN: [(&str, RGBColor); 10] = [
    ("picobpe", RGBColor(253, 174, 97)),
    ("picobpe + 16 MiB cache", RGBColor(244, 109, 67)),
    ("picobpe + 64 MiB cache", RGBColor(215, 48, 39)),
    ("tiktoken-rs", RGBColor(116, 173, 209)),
    ("bpe-openai", RGBColor(69, 117, 180)),
    ("tiktoken (Rust)", RGBColor(49, 54, 149)),
    ("toktok-rs", RGBColor(102, 189, 99)),
    ("tiktoken (py)", RGBColor(26, 152, 80)),
    ("fastokens", RGBColor(153, 112, 171)),
    ("tokie", RGBColor(150, 150, 150)),
];
const SPARE_OURS: [RGBColor; 2] = [RGBColor(165, 0, 38), RGBColor(254, 224, 144)];
const SPARE_PEERS: [RGBColor; 4] = [
    RGBColor(90, 90, 90),
    RGBColor(171, 217, 233),
    RGBColor(194, 165, 207),
    RGBColor(0, 104, 55),
];

/// Every tokenizer once: the known ones in [`KNOWN`]'s order, then the others in the order
/// the table lists them (picobpe's first).
fn series_order(rows: &[Row]) -> Vec<&str> {
    let found = distinct(rows.iter().map(|r| r.tokenizer.as_str()));
    let mut order: Vec<&str> = KNOWN
        .iter()
        .map(|k| k.0)
        .filter(|k| found.contains(k))
        .collect();
    let others = found.iter().filter(|s| !KNOWN.iter().any(|k| k.0 == **s));
    let (ours, peers): (Vec<&str>, Vec<&str>) = others.partition(|s| s.starts_with("picobpe"));
    order.extend(ours);
    order.extend(peers);
    order
}

/// The colour of each series.
fn colours(series: &[&str]) -> Vec<RGBColor> {
    let (mut o, mut p) = (0, 0);
    series
        .iter()
        .map(|s| match KNOWN.iter().find(|k| k.0 == *s) {
            Some(k) => k.1,
            None if s.starts_with("picobpe") => {
                o += 1;
                SPARE_OURS[(o - 1) % SPARE_OURS.len()]
            }
            None => {
                p += 1;
                SPARE_PEERS[(p - 1) % SPARE_PEERS.len()]
            }
        })
        .collect()
}

/// A round number just above `max` for the top of the MB/s axis.
fn axis_top(max: f64) -> f64 {
    let step = if max > 200.0 { 50.0 } else { 10.0 };
    ((max * 1.04) / step).ceil().max(1.0) * step
}

/// A corpus name on up to two lines (long names break after a hyphen).
fn label_lines(corpus: &str) -> Vec<String> {
    match corpus.split_once('-') {
        Some((a, b)) if corpus.len() > 10 => vec![format!("{a}-"), b.to_string()],
        _ => vec![corpus.to_string()],
    }
}

const WIDTH: u32 = 1400;
const PANEL_HEIGHT: u32 = 340;
const FONT: &str = "sans-serif";

fn draw(rows: &[Row], title: &str, output: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let encodings = distinct(rows.iter().map(|r| r.encoding.as_str()));
    let series = series_order(rows);
    let colour = colours(&series);
    let per_group = encodings
        .iter()
        .flat_map(|e| {
            distinct(
                rows.iter()
                    .filter(|r| r.encoding == *e)
                    .map(|r| r.corpus.as_str()),
            )
            .into_iter()
            .map(move |c| (*e, c))
        })
        .map(|(e, c)| {
            rows.iter()
                .filter(|r| r.encoding == e && r.corpus == c)
                .count()
        })
        .max()
        .unwrap_or(1);
    let top = axis_top(rows.iter().map(|r| r.mb_s).fold(0.0, f64::max));

    // Header: the title, then the legend in rows of up to six entries.
    let per_line = 6usize;
    let legend_lines = series.len().div_ceil(per_line) as u32;
    let header = 48 + 26 * legend_lines;
    let height = header + PANEL_HEIGHT * encodings.len() as u32;
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let root = SVGBackend::new(output, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    root.draw(&Text::new(
        title.to_string(),
        (WIDTH as i32 / 2, 14),
        (FONT, 22)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    let slot = (WIDTH as i32 - 120) / per_line as i32;
    for (k, (name, c)) in series.iter().zip(&colour).enumerate() {
        let x = 80 + slot * (k % per_line) as i32;
        let y = 52 + 26 * (k / per_line) as i32;
        root.draw(&Rectangle::new([(x, y), (x + 16, y + 16)], c.filled()))?;
        root.draw(&Text::new(
            name.to_string(),
            (x + 22, y + 8),
            (FONT, 16)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }

    let (_, body) = root.split_vertically(header);
    let panels = body.split_evenly((encodings.len(), 1));
    for (panel, enc) in panels.iter().zip(&encodings) {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.encoding == *enc).collect();
        let corpora = distinct(mine.iter().map(|r| r.corpus.as_str()));
        let mut chart = ChartBuilder::on(panel)
            .caption(*enc, (FONT, 20).into_font().style(FontStyle::Bold))
            .margin_left(10)
            .margin_right(20)
            .x_label_area_size(50)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..corpora.len() as f64, 0f64..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_labels(6)
            .y_desc("MB/s")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 16))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()?;
        let bar = 0.86 / per_group as f64;
        for (i, corpus) in corpora.iter().enumerate() {
            let group: Vec<&&Row> = series
                .iter()
                .filter_map(|s| {
                    mine.iter()
                        .find(|r| r.corpus == *corpus && r.tokenizer == *s)
                })
                .collect();
            let start = i as f64 + 0.5 - bar * group.len() as f64 / 2.0;
            chart.draw_series(group.iter().enumerate().map(|(j, r)| {
                let k = series.iter().position(|s| *s == r.tokenizer).unwrap_or(0);
                let x0 = start + bar * j as f64;
                Rectangle::new(
                    [(x0 + bar * 0.08, 0.0), (x0 + bar * 0.92, r.mb_s)],
                    colour[k].filled(),
                )
            }))?;
            // Above the group: picobpe's fastest column over the fastest peer's.
            let fastest = |ours: bool| {
                group
                    .iter()
                    .filter(|r| r.tokenizer.starts_with("picobpe") == ours)
                    .map(|r| r.mb_s)
                    .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            };
            if let (Some(ours), Some(peer)) = (fastest(true), fastest(false)) {
                if peer > 0.0 {
                    let (x, y) = chart.backend_coord(&(i as f64 + 0.5, ours.max(peer)));
                    root.draw(&Text::new(
                        format!("{:.2}×", ours / peer),
                        (x, y - 4),
                        (FONT, 14)
                            .into_font()
                            .color(&RGBColor(60, 60, 60))
                            .pos(Pos::new(HPos::Center, VPos::Bottom)),
                    ))?;
                }
            }
            let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            for (l, line) in label_lines(corpus).into_iter().enumerate() {
                root.draw(&Text::new(
                    line,
                    (x, y + 8 + 18 * l as i32),
                    (FONT, 16)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Top)),
                ))?;
            }
        }
    }
    root.present()?;
    Ok(())
}
