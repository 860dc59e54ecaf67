//! Medians, one progress line per row, and the final Markdown table.

use crate::peers::Mode;

/// One table cell.
pub enum Cell {
    /// Median MB/s.
    Mbs(f64),
    /// The tokenizer's ids differ from picobpe's at this index (not timed).
    Differs(usize),
    /// The tokenizer has no such encoding / mode.
    Absent(&'static str),
    /// Checked, not yet timed (never printed).
    Pending,
}

impl Cell {
    fn mbs(&self) -> Option<f64> {
        match self {
            Cell::Mbs(v) => Some(*v),
            _ => None,
        }
    }

    fn text(&self) -> String {
        match self {
            Cell::Mbs(v) => format!("{v:.1}"),
            Cell::Differs(i) => format!("ids differ at {i}"),
            Cell::Absent(why) => format!("n/a ({why})"),
            Cell::Pending => "?".into(),
        }
    }
}

/// One encoding × corpus row; `cells` follow `columns`.
pub struct Row {
    /// Encoding name.
    pub encoding: &'static str,
    /// Corpus name.
    pub corpus: String,
    /// Input size in bytes.
    pub bytes: usize,
    /// The column names ([`crate::peers::column_names`]).
    pub columns: Vec<&'static str>,
    /// One cell per column.
    pub cells: Vec<Cell>,
    /// `--first-use`: the whole `host-trainer encode` process on the corpus file, as MB/s of
    /// the file (`None` in the other modes).
    pub cli: Option<Cell>,
}

impl Row {
    /// The faster picobpe column's MB/s over the fastest timed peer's, and that peer's name.
    fn ratio(&self) -> Option<(f64, &'static str)> {
        let timed = || {
            self.cells
                .iter()
                .zip(&self.columns)
                .filter_map(|(c, n)| c.mbs().map(|v| (v, *n)))
        };
        let ours = timed()
            .filter(|(_, n)| n.starts_with("picobpe"))
            .map(|(v, _)| v)
            .max_by(f64::total_cmp)?;
        let (best, name) = timed()
            .filter(|(_, n)| !n.starts_with("picobpe"))
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        Some((ours / best, name))
    }

    fn ratio_text(&self) -> String {
        match self.ratio() {
            Some((r, name)) => format!("{r:.2}x ({name})"),
            None => "-".into(),
        }
    }
}

/// Median of `v` (sorts it; the upper median for even lengths).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `/proc/loadavg`'s first three fields, or `?`.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// A progress line for a finished row.
pub fn print_row(row: &Row) {
    let mut cells: Vec<String> = row
        .columns
        .iter()
        .zip(&row.cells)
        .map(|(n, c)| format!("{n} {}", c.text()))
        .collect();
    if let Some(cli) = &row.cli {
        cells.push(format!("{CLI_COLUMN} {}", cli.text()));
    }
    println!(
        "{:<12} {:<18} {:>10} B | {} | picobpe/best peer {}",
        row.encoding,
        row.corpus,
        row.bytes,
        cells.join(" | "),
        row.ratio_text()
    );
}

/// The Markdown table of all rows.
pub fn print_markdown(rows: &[Row], runs: usize, mode: Mode, cold: bool) {
    println!(
        "MB/s, single thread, median of {runs} runs, {} encoding{}:\n",
        match mode {
            Mode::Ordinary => "ordinary (specials as text)",
            Mode::All => "all specials recognized",
        },
        if cold {
            ", peer caches emptied before each run"
        } else {
            ""
        }
    );
    let Some(first) = rows.first() else {
        return;
    };
    let mut head = vec!["encoding", "corpus", "MB"];
    head.extend(&first.columns);
    head.push("picobpe / best peer");
    print_head(&head, 2);
    for r in rows {
        let mut cells = vec![
            r.encoding.to_string(),
            r.corpus.clone(),
            format!("{:.1}", r.bytes as f64 / 1e6),
        ];
        cells.extend(r.cells.iter().map(Cell::text));
        cells.push(r.ratio_text());
        println!("| {} |", cells.join(" | "));
    }
}

/// The `--first-use` column of the whole `host-trainer encode` process.
pub const CLI_COLUMN: &str = "host-trainer encode (whole process)";

/// Seconds for `bytes` at `mbs` MB/s.
fn seconds(bytes: usize, mbs: f64) -> f64 {
    bytes as f64 / 1e6 / mbs
}

/// `--first-use`: the whole CLI process next to every in-process encode call, in seconds, with
/// each call's time over the CLI's (> 1: the CLI, loading and writing included, is faster).
pub fn print_cli_markdown(rows: &[Row], runs: usize, command: &str) {
    let Some(first) = rows.iter().find(|r| r.cli.is_some()) else {
        return;
    };
    println!(
        "Whole process vs encode call, seconds, median of {runs} runs: `{command}` (wall time \
         from spawn to exit: load the model, read the file, encode, write the ids) next to each \
         encode call of the whole text alone, in this process, on a fresh instance; \
         (x) = that call's time / the CLI's (> 1: the CLI is faster):\n"
    );
    let mut head = vec!["encoding", "corpus", "MB", CLI_COLUMN];
    head.extend(&first.columns);
    print_head(&head, 2);
    for r in rows {
        let Some(cli) = &r.cli else { continue };
        let cli_s = cli.mbs().map(|v| seconds(r.bytes, v));
        let mut cells = vec![
            r.encoding.to_string(),
            r.corpus.clone(),
            format!("{:.1}", r.bytes as f64 / 1e6),
            cli_s.map_or_else(|| cli.text(), |s| format!("{s:.3}")),
        ];
        for c in &r.cells {
            cells.push(match (c.mbs(), cli_s) {
                (Some(v), Some(cli_s)) => {
                    let s = seconds(r.bytes, v);
                    format!("{s:.3} ({:.2}x)", s / cli_s)
                }
                (Some(v), None) => format!("{:.3}", seconds(r.bytes, v)),
                (None, _) => c.text(),
            });
        }
        println!("| {} |", cells.join(" | "));
    }
}

/// Print a Markdown table's header row and alignment row: the first `text_columns` columns
/// left-aligned, the figures after them right-aligned.
pub fn print_head(head: &[&str], text_columns: usize) {
    println!("| {} |", head.join(" | "));
    let align: Vec<&str> = (0..head.len())
        .map(|i| if i < text_columns { "---" } else { "---:" })
        .collect();
    println!("|{}|", align.join("|"));
}
