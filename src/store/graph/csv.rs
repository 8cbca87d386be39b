//! The CSV files bulk COPY reads (`load.rs`, and the call graph's tables in
//! `sites.rs`), written field by field.

/// A CSV file being written, field by field: no string per field (a whole
/// ref is millions of them), flushed to disk every few megabytes.
pub(super) struct Csv {
    file: std::fs::File,
    buf: Vec<u8>,
    in_row: bool,
    rows: usize,
    failed: Option<std::io::Error>,
}

impl Csv {
    const FLUSH_AT: usize = 4 << 20;

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
        if self.buf.len() >= Self::FLUSH_AT {
            self.flush();
        }
    }

    fn sep(&mut self) {
        if self.in_row {
            self.buf.push(b',');
        }
        self.in_row = true;
    }

    /// A new file at `path`.
    pub(super) fn create(path: &std::path::Path) -> std::io::Result<Csv> {
        Ok(Csv {
            file: std::fs::File::create(path)?,
            buf: Vec::with_capacity(Csv::FLUSH_AT + (64 << 10)),
            in_row: false,
            rows: 0,
            failed: None,
        })
    }

    /// Writes what is left; the number of rows, or the first write's error.
    pub(super) fn finish(mut self) -> std::io::Result<usize> {
        self.flush();
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(self.rows),
        }
    }

    fn flush(&mut self) {
        use std::io::Write;
        if self.failed.is_none()
            && let Err(e) = self.file.write_all(&self.buf)
        {
            self.failed = Some(e);
        }
        self.buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::Csv;

    #[test]
    fn fields_are_written_as_kuzu_reads_them() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("t.csv");
        let mut csv = Csv::create(&path).expect("create");
        for n in [0, 7, 10, -1, 1234567890, i64::MAX, i64::MIN] {
            csv.int(n);
        }
        csv.end();
        csv.text("plain").text("say \"hi\"").end();
        assert_eq!(csv.finish().expect("finish"), 2);
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
}
