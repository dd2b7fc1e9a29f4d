//! The front door of the stdio server: every line from the client passes here before rmcp sees
//! it.
//!
//! rmcp's stdio transport drops a line that is not JSON and a line over its size limit without a
//! word (so that a peer echoing errors back cannot start an error storm), which leaves a client
//! that sent a broken request waiting forever. JSON-RPC 2.0 asks for an answer instead: a
//! `-32700` parse error with `id: null`. So the filter reads the client's lines itself, answers
//! those two kinds of line on its own, and forwards every other line unchanged to rmcp through an
//! in-memory pipe. A request whose params rmcp could not type (not an object, a cursor that is
//! not a string) is answered here too, with its id ([`super::request_check`], which HTTP shares).
//!
//! Answers reach stdout from two places (rmcp's responses and the filter's errors), so one task
//! owns stdout and writes whole lines only: rmcp's output is read back line by line from a second
//! in-memory pipe and interleaved with the filter's errors at line boundaries, never inside a
//! message.

use super::request_check::{self, PARSE_ERROR, Verdict};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest line (one JSON-RPC message) the server reads: rmcp's own limit, so a message
/// acceptable over HTTP is acceptable here. A longer line is answered with an error and skipped
/// without being held in memory.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The in-memory pipes between the filter and rmcp hold this much before a writer waits.
const PIPE_BYTES: usize = 64 * 1024;

/// The running filter: its two tasks.
pub struct Filter {
    input: JoinHandle<()>,
    output: JoinHandle<()>,
}

impl Filter {
    /// After rmcp has finished: stop reading the client and wait until everything written has
    /// reached stdout.
    pub async fn finish(self) {
        self.input.abort();
        let _ = self.input.await;
        let _ = self.output.await;
    }
}

/// Starts the filter between `input`/`output` (the client) and the returned pair, which rmcp
/// reads and writes as its transport.
pub fn splice<R, W>(input: R, output: W) -> ((DuplexStream, DuplexStream), Filter)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE_BYTES);
    let (errors_tx, errors_rx) = mpsc::channel(16);
    let input = tokio::spawn(pump_input(input, to_rmcp, errors_tx, MAX_LINE_BYTES));
    let output = tokio::spawn(pump_output(from_rmcp, errors_rx, output));
    ((rmcp_reads, rmcp_writes), Filter { input, output })
}

/// One line read from the client.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A whole line is in the buffer (without its `\n`); the last one may lack it.
    Read,
    /// The line was longer than the limit: this many bytes were skipped, newline excluded.
    TooLong(usize),
    Eof,
}

/// Reads one line into `line` (cleared first), never holding more than `max` bytes of it.
async fn read_line<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    line.clear();
    let mut skipped: Option<usize> = None;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match skipped {
                Some(n) => Line::TooLong(n),
                None if line.is_empty() => Line::Eof,
                None => Line::Read,
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let take = newline.unwrap_or(available.len());
        match skipped.as_mut() {
            Some(n) => *n += take,
            None if line.len() + take > max => skipped = Some(line.len() + take),
            None => line.extend_from_slice(&available[..take]),
        }
        if skipped.is_some() {
            line.clear();
        }
        reader.consume(take + usize::from(newline.is_some()));
        if newline.is_some() {
            return Ok(match skipped {
                Some(n) => Line::TooLong(n),
                None => Line::Read,
            });
        }
    }
}

/// A JSON-RPC error response without an id (the request's id could not be read), as one line.
fn error_line(code: i64, message: String, data: Value) -> Vec<u8> {
    response_line(&request_check::error_response(
        Value::Null,
        code,
        message,
        data,
    ))
}

fn response_line(response: &Value) -> Vec<u8> {
    let mut line = response.to_string().into_bytes();
    line.push(b'\n');
    line
}

/// What to do with one line from the client: forward it, skip it, or answer it with this error.
/// A line that is JSON passes [`request_check::check`] (params of the wrong shape are answered
/// here, with the request's id).
fn judge(line: &[u8]) -> Result<bool, Vec<u8>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        // Blank lines separate nothing and ask nothing.
        return Ok(false);
    }
    match request_check::check(line) {
        Verdict::Forward => Ok(true),
        Verdict::Drop => Ok(false),
        Verdict::Answer(answer) => Err(response_line(&answer)),
    }
}

/// Reads the client's lines: forwards JSON to rmcp, answers the rest through `errors`.
async fn pump_input<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    errors: mpsc::Sender<Vec<u8>>,
    max: usize,
) {
    let mut reader = BufReader::with_capacity(PIPE_BYTES, input);
    let mut line = Vec::new();
    loop {
        let answer = match read_line(&mut reader, &mut line, max).await {
            Ok(Line::Eof) => break,
            Err(e) => {
                tracing::warn!(error = %e, "reading stdin failed");
                break;
            }
            Ok(Line::TooLong(length)) => {
                tracing::warn!(
                    length,
                    limit = max,
                    "MCP message over the size limit skipped"
                );
                error_line(
                    PARSE_ERROR,
                    format!(
                        "Parse error: the line is {length} bytes long, over the limit of {max} bytes for one message; it was skipped unread"
                    ),
                    json!({ "length": length, "limit": max }),
                )
            }
            Ok(Line::Read) => match judge(&line) {
                Ok(false) => continue,
                Ok(true) => {
                    line.push(b'\n');
                    if to_rmcp.write_all(&line).await.is_err() {
                        // rmcp has stopped: nobody is left to answer.
                        break;
                    }
                    continue;
                }
                Err(answer) => answer,
            },
        };
        if errors.send(answer).await.is_err() {
            break;
        }
    }
    // Dropping `to_rmcp` tells rmcp the client is gone.
}

/// Owns stdout: writes rmcp's lines and the filter's errors, each whole, until both are done.
async fn pump_output<W: AsyncWrite + Unpin>(
    from_rmcp: DuplexStream,
    mut errors: mpsc::Receiver<Vec<u8>>,
    mut output: W,
) {
    let mut from_rmcp = BufReader::with_capacity(PIPE_BYTES, from_rmcp);
    // `read_until` keeps what it has read in `line` when the other branch wins, so a message
    // is never split by an error written in its middle.
    let mut line = Vec::new();
    let mut rmcp_open = true;
    let mut errors_open = true;
    while rmcp_open || errors_open {
        let chunk = tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => match read {
                Ok(0) | Err(_) => {
                    rmcp_open = false;
                    std::mem::take(&mut line)
                }
                Ok(_) if line.ends_with(b"\n") => std::mem::take(&mut line),
                // End of stream in the middle of a line: written on the next round.
                Ok(_) => continue,
            },
            error = errors.recv(), if errors_open => match error {
                Some(error) => error,
                None => {
                    errors_open = false;
                    continue;
                }
            },
        };
        if chunk.is_empty() {
            continue;
        }
        let written = async {
            output.write_all(&chunk).await?;
            output.flush().await
        };
        if let Err(e) = written.await {
            // The client closed stdout; dropping `from_rmcp` stops rmcp's writes too.
            tracing::debug!(error = %e, "writing stdout failed");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn lines_of(input: &[u8], max: usize) -> Vec<Result<String, usize>> {
        let mut reader = BufReader::with_capacity(7, input);
        let mut line = Vec::new();
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader, &mut line, max).await.unwrap() {
                Line::Eof => return out,
                Line::Read => out.push(Ok(String::from_utf8(line.clone()).unwrap())),
                Line::TooLong(n) => out.push(Err(n)),
            }
        }
    }

    #[tokio::test]
    async fn lines_are_split_and_long_ones_skipped_without_being_kept() {
        let input = b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxxxxxxx\n\n{}\nlast";
        assert_eq!(
            lines_of(input, 10).await,
            vec![
                Ok("{\"a\":1}".to_string()),
                Err(25),
                Ok(String::new()),
                Ok("{}".to_string()),
                Ok("last".to_string()),
            ]
        );
        // A long last line without a newline is still reported.
        assert_eq!(
            lines_of(b"{}\nyyyyyyyyyyyy", 10).await,
            vec![Ok("{}".into()), Err(12)]
        );
    }

    #[test]
    fn json_is_forwarded_blank_skipped_and_the_rest_answered() {
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Ok(true)
        );
        assert_eq!(judge(b"{\"x\": [1, 2]}\r"), Ok(true));
        assert_eq!(judge(b"  \r"), Ok(false));
        for bad in [&b"not json"[..], b"{\"id\":1", b"\xff\xfe"] {
            let answer = judge(bad).unwrap_err();
            let value: Value = serde_json::from_slice(&answer).unwrap();
            assert_eq!(value["error"]["code"], -32700, "{value}");
            assert_eq!(value["id"], Value::Null);
            assert!(answer.ends_with(b"\n"));
        }
    }

    #[tokio::test]
    async fn errors_and_rmcp_output_reach_stdout_as_whole_lines() {
        let (client_in, mut client_writes) = tokio::io::duplex(1024);
        let (mut client_reads, client_out) = tokio::io::duplex(1 << 20);
        let ((mut rmcp_reads, mut rmcp_writes), filter) = splice(client_in, client_out);
        client_writes
            .write_all(b"{\"id\":1}\nnope\n{\"id\":2}\n")
            .await
            .unwrap();
        drop(client_writes);
        let mut forwarded = String::new();
        rmcp_reads.read_to_string(&mut forwarded).await.unwrap();
        assert_eq!(forwarded, "{\"id\":1}\n{\"id\":2}\n");
        // rmcp answers in pieces; the filter's error may come at any time but never inside.
        let big = "r".repeat(200_000);
        rmcp_writes.write_all(b"{\"result\":\"").await.unwrap();
        rmcp_writes.write_all(big.as_bytes()).await.unwrap();
        rmcp_writes.write_all(b"\"}\n").await.unwrap();
        drop(rmcp_writes);
        drop(rmcp_reads);
        filter.finish().await;
        let mut written = String::new();
        client_reads.read_to_string(&mut written).await.unwrap();
        let lines: Vec<Value> = written
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{written:.200}");
        assert!(lines.iter().any(|l| l["error"]["code"] == -32700));
        assert!(
            lines
                .iter()
                .any(|l| l["result"].as_str() == Some(big.as_str()))
        );
    }
}
