//! The CSV files bulk COPY reads (`load.rs` for the nodes, `edge_csvs.rs` for
//! what resolution finds), written field by field, and how each is split.

/// CSV files being written, field by field: no string per field (a whole
/// ref is millions of them), flushed to disk every 256 KiB, a new file
/// when a part is full (`GraphConfig::copy_part`).
///
/// Why parts: Kuzu holds a whole COPY's rows in its buffer pool until the
/// statement ends, so one COPY of a big ref's edge table (52k files: 2.75M
/// CONTAINS edges) filled a 512 MiB pool and failed; a COPY per part needs a
/// part's worth, whatever the ref's size. Node tables are not split (`load.rs`).
pub(super) struct Csv {
    file: std::fs::File,
    path: std::path::PathBuf,
    /// The parts written before the current one, with their rows.
    done: Vec<(std::path::PathBuf, usize)>,
    /// A part ends at this many rows or bytes, whichever comes first.
    part_rows: usize,
    part_bytes: usize,
    /// Rows before the current part, and its bytes flushed so far.
    rows_before: usize,
    flushed: usize,
    buf: Vec<u8>,
    in_row: bool,
    rows: usize,
    failed: Option<std::io::Error>,
}

impl Csv {
    /// A full build keeps 5 open during the parse and 12 during resolution
    /// (the run's peak): at 4 MiB each the edges' held ~50 MiB of buffers,
    /// for nothing a bigger write gains.
    const FLUSH_AT: usize = 256 << 10;

    /// A quoted text field.
    pub(super) fn text(&mut self, s: &str) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        if s.contains('"') {
            self.buf
                .extend_from_slice(s.replace('"', "\"\"").as_bytes());
        } else {
            self.buf.extend_from_slice(s.as_bytes());
        }
        self.buf.push(b'"');
        self
    }

    /// An integer field.
    pub(super) fn int(&mut self, n: i64) -> &mut Self {
        self.sep();
        if n < 0 {
            self.buf.push(b'-');
        }
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut v = n.unsigned_abs();
        loop {
            at -= 1;
            digits[at] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&digits[at..]);
        self
    }

    /// Ends the row.
    pub(super) fn end(&mut self) {
        self.buf.push(b'\n');
        self.in_row = false;
        self.rows += 1;
        if self.rows - self.rows_before >= self.part_rows
            || self.flushed + self.buf.len() >= self.part_bytes
        {
            self.next_part();
        } else if self.buf.len() >= Self::FLUSH_AT {
            self.flush();
        }
    }

    /// Closes the current part and starts the next (`PATH.1`, `PATH.2`, …).
    fn next_part(&mut self) {
        self.flush();
        let next = self
            .path
            .with_extension(format!("{}.csv", self.done.len() + 1));
        match std::fs::File::create(&next) {
            Ok(file) => {
                let path = std::mem::replace(&mut self.path, next);
                self.done.push((path, self.rows - self.rows_before));
                self.rows_before = self.rows;
                self.flushed = 0;
                self.file = file;
            }
            Err(e) => {
                self.failed.get_or_insert(e);
            }
        }
    }

    fn sep(&mut self) {
        if self.in_row {
            self.buf.push(b',');
        }
        self.in_row = true;
    }

    /// New files at `path` (the first part) and beside it, each ending at
    /// `part_rows` rows or `part_bytes` bytes.
    pub(super) fn create(
        path: &std::path::Path,
        (part_rows, part_bytes): (usize, usize),
    ) -> std::io::Result<Csv> {
        Ok(Csv {
            file: std::fs::File::create(path)?,
            path: path.to_path_buf(),
            done: Vec::new(),
            part_rows: part_rows.max(1),
            part_bytes: part_bytes.max(1),
            rows_before: 0,
            flushed: 0,
            buf: Vec::with_capacity(Csv::FLUSH_AT + (64 << 10)),
            in_row: false,
            rows: 0,
            failed: None,
        })
    }

    /// Writes what is left; the parts that hold rows, each with its row
    /// count, in order (none for no rows), or the first write's error.
    pub(super) fn finish(mut self) -> std::io::Result<Vec<(std::path::PathBuf, usize)>> {
        self.flush();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let last = self.rows - self.rows_before;
        let mut parts = std::mem::take(&mut self.done);
        if last > 0 {
            parts.push((self.path.clone(), last));
        }
        Ok(parts)
    }

    fn flush(&mut self) {
        use std::io::Write;
        if self.failed.is_none()
            && let Err(e) = self.file.write_all(&self.buf)
        {
            self.failed = Some(e);
        }
        self.flushed += self.buf.len();
        self.buf.clear();
    }
}

/// The node tables of `schema/`, each copied whole (see `limits`).
const NODE_TABLES: [&str; 7] = [
    "Repo", "Ref", "File", "Symbol", "Package", "External", "Name",
];

/// The rows and bytes a CSV part of `statement` ends at. A node table is
/// copied whole: Kuzu 0.11.3 lost primary keys from its index when a COPY
/// appended to a node table ("Unable to find primary key value" in the next
/// COPY of edges, a different key each run, checkpointed between parts or
/// not). Edge tables have no such index and go in parts.
fn limits(statement: &str, part: super::CopyPart) -> (usize, usize) {
    let node = NODE_TABLES
        .iter()
        .any(|t| statement.contains(&format!("COPY {t} FROM")));
    match node {
        true => (usize::MAX, usize::MAX),
        false => (part.rows, part.bytes),
    }
}

/// A COPY statement (`{csv}` for the file) and its CSV parts with their rows.
pub(super) struct Written {
    pub statement: String,
    pub parts: Vec<(std::path::PathBuf, usize)>,
}

impl Written {
    /// `csv`'s parts, to be copied with `statement`, or its first write error.
    pub(super) fn of(csv: Csv, statement: &str) -> super::Result<Written> {
        let path = csv.path.clone();
        Ok(Written {
            statement: statement.to_string(),
            parts: csv.finish().map_err(|e| writing(&path, e))?,
        })
    }
}

/// A scratch directory for the CSV files of a load, removed when dropped.
pub(super) fn scratch() -> super::Result<tempfile::TempDir> {
    tempfile::tempdir().map_err(|e| super::GraphError::Kuzu(e.to_string()))
}

/// `dir/name.csv`, for the rows of `statement`, in parts as `limits` says.
pub(super) fn open(
    dir: &std::path::Path,
    name: &str,
    statement: &str,
    part: super::CopyPart,
) -> super::Result<Csv> {
    let path = dir.join(format!("{name}.csv"));
    Csv::create(&path, limits(statement, part)).map_err(|e| writing(&path, e))
}

fn writing(path: &std::path::Path, e: std::io::Error) -> super::GraphError {
    super::GraphError::Kuzu(format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::Csv;

    #[test]
    fn fields_are_written_as_kuzu_reads_them() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("t.csv");
        let mut csv = Csv::create(&path, (usize::MAX, usize::MAX)).expect("create");
        for n in [0, 7, 10, -1, 1234567890, i64::MAX, i64::MIN] {
            csv.int(n);
        }
        csv.end();
        csv.text("plain").text("say \"hi\"").end();
        assert_eq!(csv.finish().expect("finish"), vec![(path.clone(), 2)]);
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(
            text,
            format!(
                "0,7,10,-1,1234567890,{},{}\n\"plain\",\"say \"\"hi\"\"\"\n",
                i64::MAX,
                i64::MIN
            )
        );
    }

    #[test]
    fn rows_are_split_into_parts_of_whole_rows() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("t.csv");
        let mut csv = Csv::create(&path, (2, usize::MAX)).expect("create");
        for n in 0..5 {
            csv.int(n).text("a\nb").end();
        }
        let parts = csv.finish().expect("finish");
        let rows: Vec<usize> = parts.iter().map(|p| p.1).collect();
        assert_eq!(rows, [2, 2, 1]);
        let texts: Vec<String> = parts
            .iter()
            .map(|p| std::fs::read_to_string(&p.0).expect("read"))
            .collect();
        assert_eq!(
            texts,
            [
                "0,\"a\nb\"\n1,\"a\nb\"\n",
                "2,\"a\nb\"\n3,\"a\nb\"\n",
                "4,\"a\nb\"\n"
            ]
        );
        // A row count that fills the last part exactly leaves no empty part.
        let mut csv = Csv::create(&dir.path().join("u.csv"), (2, usize::MAX)).expect("create");
        for n in 0..4 {
            csv.int(n).end();
        }
        assert_eq!(csv.finish().expect("finish").len(), 2);
        // A part ends at its byte bound too, after the row that reached it.
        let mut csv = Csv::create(&dir.path().join("v.csv"), (100, 5)).expect("create");
        for n in [1234, 5, 6, 7890] {
            csv.int(n).end();
        }
        let rows: Vec<usize> = csv.finish().expect("finish").iter().map(|p| p.1).collect();
        assert_eq!(rows, [1, 3]);
    }
}
