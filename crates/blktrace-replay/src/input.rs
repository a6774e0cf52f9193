//! Transparent decompression and content sniffing of trace inputs.
//!
//! Every reader gets a plain byte stream: gzip (`1f 8b`), bzip2 (`BZh`) and
//! zstd (`28 b5 2f fd`) are recognised by their magic bytes, never by the
//! file name, and decoded on the fly (multi-member gzip and bzip2 streams
//! included), so a compressed trace larger than memory still streams.
//!
//! Sniffing looks at the first [`HEAD_LEN`] bytes of the *decoded* stream
//! and hands the reader a stream that still starts at byte 0.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use crate::error::TraceError;

/// How many leading bytes of the decoded stream sniffing looks at.
pub const HEAD_LEN: usize = 64 * 1024;

/// Read buffer of a trace input.
pub(crate) const BUF_LEN: usize = 256 * 1024;

/// A boxed byte stream.
pub type Input = Box<dyn BufRead + Send>;

/// The compression of an input, as found from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (RFC 1952), possibly several members.
    Gzip,
    /// bzip2, possibly several streams.
    Bzip2,
    /// Zstandard.
    Zstd,
}

impl Compression {
    /// The compression whose magic bytes `head` starts with.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Compression::Bzip2
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// Maps every error of a decoder to `InvalidData`: a corrupt compressed
/// stream is an input error, not a system failure.
struct Corrupt<R> {
    inner: R,
    what: &'static str,
}

impl<R: Read> Read for Corrupt<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            if e.kind() == io::ErrorKind::Interrupted {
                e
            } else {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("corrupt {} data: {e}", self.what),
                )
            }
        })
    }
}

/// Wraps `raw` in the decoder its first bytes call for.
pub fn decompress(mut raw: Input) -> io::Result<(Compression, Input)> {
    let head = raw.fill_buf()?;
    let kind = Compression::sniff(head);
    let decoded: Input = match kind {
        Compression::None => return Ok((kind, raw)),
        Compression::Gzip => Box::new(BufReader::with_capacity(
            BUF_LEN,
            Corrupt {
                inner: flate2::bufread::MultiGzDecoder::new(raw),
                what: "gzip",
            },
        )),
        Compression::Bzip2 => Box::new(BufReader::with_capacity(
            BUF_LEN,
            Corrupt {
                inner: bzip2::bufread::MultiBzDecoder::new(raw),
                what: "bzip2",
            },
        )),
        Compression::Zstd => Box::new(BufReader::with_capacity(
            BUF_LEN,
            Corrupt {
                inner: zstd::stream::read::Decoder::with_buffer(raw)?,
                what: "zstd",
            },
        )),
    };
    Ok((kind, decoded))
}

/// Reads up to [`HEAD_LEN`] bytes from `input` and returns them with a
/// stream that still yields every byte from the start.
pub fn peek(mut input: Input) -> io::Result<(Vec<u8>, Input)> {
    let mut head = Vec::with_capacity(HEAD_LEN.min(8192));
    (&mut input).take(HEAD_LEN as u64).read_to_end(&mut head)?;
    let rest: Input = Box::new(BufReader::with_capacity(
        BUF_LEN,
        Cursor::new(head.clone()).chain(input),
    ));
    Ok((head, rest))
}

/// Opens `path` and decodes it: the decoded stream and its first bytes.
pub fn open_decoded(path: &Path) -> Result<(Vec<u8>, Input), TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    let raw: Input = Box::new(BufReader::with_capacity(BUF_LEN, file));
    decode(raw, path)
}

/// Decodes an already open stream; `path` names it in errors.
pub fn decode(raw: Input, path: &Path) -> Result<(Vec<u8>, Input), TraceError> {
    let (_, decoded) = decompress(raw).map_err(|e| TraceError::io(path, e))?;
    peek(decoded).map_err(|e| TraceError::io(path, e))
}

/// Reads into `buf` until it is full or the input ends; returns the number
/// of bytes read (less than `buf.len()` only at the end of the input).
pub(crate) fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// [`read_full`] for buffered input: when the whole record is already in
/// the buffer (nearly always) it is copied straight out, without a trip
/// through `Read::read` (a tenth of the blktrace reader's instructions).
pub(crate) fn read_full_buffered(input: &mut impl BufRead, buf: &mut [u8]) -> io::Result<usize> {
    let avail = input.fill_buf()?;
    if avail.len() >= buf.len() {
        buf.copy_from_slice(&avail[..buf.len()]);
        input.consume(buf.len());
        return Ok(buf.len());
    }
    read_full(input, buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn roundtrip(data: &[u8], compressed: Vec<u8>, kind: Compression) {
        let raw: Input = Box::new(Cursor::new(compressed));
        let (k, mut r) = decompress(raw).unwrap();
        assert_eq!(k, kind);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn decodes_all_three() {
        let data = b"arrival_ns,completion_ns,op,sector,bytes,device\n".repeat(1000);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&data).unwrap();
        roundtrip(&data, gz.finish().unwrap(), Compression::Gzip);
        let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        bz.write_all(&data).unwrap();
        roundtrip(&data, bz.finish().unwrap(), Compression::Bzip2);
        roundtrip(
            &data,
            zstd::encode_all(&data[..], 1).unwrap(),
            Compression::Zstd,
        );
        roundtrip(&data, data.clone(), Compression::None);
    }

    #[test]
    fn corrupt_gzip_is_invalid_data() {
        let raw: Input = Box::new(Cursor::new(vec![0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7]));
        let (_, mut r) = decompress(raw).unwrap();
        let mut out = Vec::new();
        let e = r.read_to_end(&mut out).unwrap_err();
        assert!(matches!(
            e.kind(),
            io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof
        ));
    }

    #[test]
    fn peek_keeps_every_byte() {
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let (head, mut rest) = peek(Box::new(Cursor::new(data.clone()))).unwrap();
        assert_eq!(head.len(), HEAD_LEN);
        let mut out = Vec::new();
        rest.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }
}
