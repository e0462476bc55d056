//! The one format every results file under `plots/data/` shares: `# key: value` lines that say
//! where the numbers came from (the GPU, the driver, the date, the command), then CSV records
//! read and written by serde. One `Serialize`/`Deserialize` struct per kind of file, the record
//! itself (a column written for a reader and computed again when read, such as a bandwidth, is
//! written by the record's own `Serialize` and skipped when read).

use crate::error::{io_error, Error, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

/// The `# key: value` lines of a results file, in order.
pub type Header = Vec<(String, String)>;

/// The text of a results file: the header lines, then the records as CSV with a column line.
pub fn to_string<R: Serialize>(header: &[(String, String)], records: &[R]) -> Result<String> {
    let mut text = String::new();
    for (key, value) in header {
        text.push_str(&format!("# {key}: {value}\n"));
    }
    let mut writer = csv::Writer::from_writer(Vec::new());
    for record in records {
        writer.serialize(record).map_err(|e| csv_error("<records>", e))?;
    }
    let body = writer.into_inner().map_err(|e| Error::Io { path: "<records>".into(), message: e.to_string() })?;
    text.push_str(&String::from_utf8(body).map_err(|e| Error::Io { path: "<records>".into(), message: e.to_string() })?);
    Ok(text)
}

/// The header lines of a results file's text and where its CSV starts; `origin` names it in
/// errors.
pub fn split_header<'t>(text: &'t str, origin: &str) -> Result<(Header, &'t str)> {
    let mut header = Vec::new();
    let mut body_start = 0;
    for line in text.lines() {
        let Some(meta) = line.strip_prefix("# ") else { break };
        let (key, value) = meta.split_once(": ").ok_or_else(|| Error::Io {
            path: origin.into(),
            message: format!("header line {:?} is not `# key: value`", line),
        })?;
        header.push((key.trim().to_string(), value.trim().to_string()));
        body_start += line.len() + 1;
    }
    Ok((header, &text[body_start.min(text.len())..]))
}

/// Parse the text of a results file; `origin` names it in errors (with the line that is wrong).
pub fn from_str<R: DeserializeOwned>(text: &str, origin: &str) -> Result<(Header, Vec<R>)> {
    let (header, body) = split_header(text, origin)?;
    let mut reader = csv::Reader::from_reader(body.as_bytes());
    let records = reader
        .deserialize()
        .enumerate()
        .map(|(i, record)| {
            record.map_err(|e| Error::Io { path: origin.into(), message: format!("record {}: {e}", i + 1) })
        })
        .collect::<Result<Vec<R>>>()?;
    Ok((header, records))
}

/// Refuse a results file whose column line is not `expected`: `Err` names the line.
pub fn expect_columns(text: &str, expected: &str) -> std::result::Result<(), String> {
    match text.lines().position(|l| !l.starts_with("# ")) {
        Some(i) if text.lines().nth(i) != Some(expected) => Err(format!("line {}: expected the column names {expected}", i + 1)),
        None => Err("no column header".into()),
        Some(_) => Ok(()),
    }
}

/// Write a results file.
pub fn write<R: Serialize>(path: &Path, header: &[(String, String)], records: &[R]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    std::fs::write(path, to_string(header, records)?).map_err(|e| io_error(path, e))
}

/// Read a results file.
pub fn read<R: DeserializeOwned>(path: &Path) -> Result<(Header, Vec<R>)> {
    let text = std::fs::read_to_string(path).map_err(|e| io_error(path, e))?;
    from_str(&text, &path.display().to_string())
}

/// The value of `key` in a header, if it is there.
pub fn value<'a>(header: &'a [(String, String)], key: &str) -> Option<&'a str> {
    header.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// A serde `serialize_with` for measured numbers: three decimals, as the book's files keep them
/// (an absent value is an empty field).
pub fn three_decimals<S: serde::Serializer, X: Into<Option<f64>> + Copy>(x: &X, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&(*x).into().map(|v| format!("{v:.3}")).unwrap_or_default())
}

fn csv_error(origin: &str, e: csv::Error) -> Error {
    Error::Io { path: origin.into(), message: e.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        kernel: String,
        n: usize,
        title: String,
        median_us: f64,
    }

    #[test]
    fn round_trips_the_header_and_records_with_commas_and_quotes_in_fields() {
        let header = vec![("gpu".to_string(), "NVIDIA H200".to_string()), ("command".to_string(), "reduction bench".to_string())];
        let records = vec![
            Sample { kernel: "reduce9".into(), n: 1 << 20, title: "16-byte loads, 4 in flight".into(), median_us: 3.84 },
            Sample { kernel: "copy".into(), n: 3, title: "a \"pace\", not a ceiling".into(), median_us: 0.5 },
        ];
        let text = to_string(&header, &records).unwrap();
        assert!(text.starts_with("# gpu: NVIDIA H200\n# command: reduction bench\nkernel,n,title,median_us\n"), "{text}");
        let (h, back): (Header, Vec<Sample>) = from_str(&text, "sample").unwrap();
        assert_eq!((h, back), (header, records));
        assert_eq!(value(&to_header(), "gpu"), Some("x"));
    }

    fn to_header() -> Header {
        vec![("gpu".into(), "x".into())]
    }

    #[test]
    fn a_malformed_record_names_the_file_and_the_record() {
        let err = from_str::<Sample>("# gpu: x\nkernel,n,title,median_us\nreduce1,notanumber,t,1.0\n", "bad.csv").unwrap_err();
        let message = err.to_string();
        assert!(message.contains("bad.csv") && message.contains("record 1"), "{message}");
    }
}
