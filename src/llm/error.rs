//! What can go wrong talking to a provider, worded so a person knows what to do next.

use serde_json::Value;
use std::time::Duration;

/// Longest provider error message quoted in an [`LlmError`], in characters.
const MAX_QUOTED_MESSAGE: usize = 400;

/// A failed call to a provider. Each `Display` is one sentence a person can act on, with the
/// provider's request id when it is known.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The HTTP client or the request could not be built (a TLS setup failure, a control
    /// character in the API key).
    #[error(
        "vaultchat could not prepare the HTTP request ({0}); check the API key and base URL for stray characters"
    )]
    Setup(String),
    /// The configured base URL is not a URL.
    #[error(
        "the provider base URL {url:?} is not a valid URL ({message}); fix --base-url or base_url in the [provider] config"
    )]
    BadBaseUrl {
        /// The URL as configured.
        url: String,
        /// Why it does not parse.
        message: String,
    },
    /// The provider answered with a redirect, which is never followed (`config::http`).
    #[error("{0}")]
    Redirected(crate::config::http::RedirectRefused),
    /// The request could not be encoded as JSON (a tool input or schema that JSON cannot hold).
    #[error("vaultchat could not encode the request as JSON: {0}")]
    Encode(String),
    /// No connection could be made (or it broke before the response headers arrived).
    #[error(
        "could not reach the provider at {url} ({message}){}; check the base URL and the network",
        after_retries(*.retries)
    )]
    Unreachable {
        /// The endpoint.
        url: String,
        /// The transport error.
        message: String,
        /// How many retries were made before giving up.
        retries: u32,
    },
    /// The provider sent no response headers within the idle timeout.
    #[error("no answer from the provider at {url} for {}{}", seconds(*.idle), after_retries(*.retries))]
    NoAnswer {
        /// The endpoint.
        url: String,
        /// The idle timeout that passed.
        idle: Duration,
        /// How many retries were made before giving up.
        retries: u32,
    },
    /// The provider answered with an HTTP error status.
    #[error(
        "{}",
        status_sentence(*.status, .error_type.as_deref(), .code.as_deref(), .message, .request_id.as_deref(), *.retries)
    )]
    Status {
        /// The HTTP status.
        status: u16,
        /// The provider's error type (`authentication_error`, `invalid_request_error`, …).
        error_type: Option<String>,
        /// The provider's error code when it sends one (`context_length_exceeded`,
        /// `enforced_spend_limit_reached`, a number from OpenRouter, …).
        code: Option<String>,
        /// The provider's message (HTML bodies reduced to their title).
        message: String,
        /// The provider's request id.
        request_id: Option<String>,
        /// How many retries were made before giving up.
        retries: u32,
    },
    /// The stream carried an error after HTTP 200. Never retried: the generation already ran.
    #[error("the provider reported an error mid-stream: {error_type}: {message}{}", request_note(.request_id.as_deref()))]
    MidStream {
        /// The provider's error type (`overloaded_error`, `server_error`, …).
        error_type: String,
        /// The provider's message.
        message: String,
        /// The provider's request id.
        request_id: Option<String>,
    },
    /// The stream carried events but ended without its final one. Seen when a server fails
    /// mid-generation and closes the connection instead of sending an error event.
    #[error(
        "the stream stopped before the response was complete (it ended without {expected}); this usually means the server failed while generating the reply, and its log says why{}",
        request_note(.request_id.as_deref())
    )]
    Incomplete {
        /// What the stream should have ended with (`message_stop`, a `finish_reason` or `[DONE]`).
        expected: &'static str,
        /// The id to quote: the server's, or else the `X-Client-Request-Id` vaultchat sent.
        request_id: Option<String>,
    },
    /// HTTP 200 and an event stream, then no event at all before the connection closed.
    /// llama.cpp-based servers do this when their chat template cannot take the request (or when
    /// they cannot stream tool calls): the error is only in the server's log.
    #[error(
        "the provider accepted the request but sent an empty stream; this usually means the server failed while building the prompt (its log says why; some servers cannot stream tool calls){}",
        request_note(.request_id.as_deref())
    )]
    EmptyStream {
        /// The id to quote: the server's, or else the `X-Client-Request-Id` vaultchat sent.
        request_id: Option<String>,
    },
    /// Reading the stream failed at the transport level.
    #[error("the connection to the provider broke mid-response ({message}){}", request_note(.request_id.as_deref()))]
    Broken {
        /// The transport error.
        message: String,
        /// The provider's request id.
        request_id: Option<String>,
    },
    /// The stream went silent for longer than the idle timeout.
    #[error("no data from the provider for {}{}", seconds(*.idle), request_note(.request_id.as_deref()))]
    Idle {
        /// The idle timeout that passed.
        idle: Duration,
        /// The provider's request id.
        request_id: Option<String>,
    },
    /// The provider sent something that is not the protocol (bad JSON, a tool call whose input
    /// is not JSON, a non-stream body).
    #[error("the provider sent a response vaultchat cannot read: {message}{}", request_note(.request_id.as_deref()))]
    Malformed {
        /// What was wrong.
        message: String,
        /// The provider's request id.
        request_id: Option<String>,
    },
}

impl LlmError {
    /// An HTTP 400 saying the prompt does not fit the model's context window. (A stream that stops
    /// with `model_context_window_exceeded` is not an error but a [`super::StopReason`].)
    pub fn is_context_overflow(&self) -> bool {
        match self {
            Self::Status {
                status: 400,
                error_type,
                code,
                message,
                ..
            } => mentions_context_overflow(error_type.as_deref(), code.as_deref(), message),
            _ => false,
        }
    }

    /// An HTTP 400 `invalid_request_error`: the provider refused the request as built, which when
    /// resuming usually means it refuses the stored history; the agent then starts a fresh upstream
    /// conversation. OpenAI-compatible servers that send no error type count too.
    pub fn is_rejected_history(&self) -> bool {
        match self {
            Self::Status {
                status: 400,
                error_type,
                ..
            } => matches!(
                error_type.as_deref(),
                None | Some("invalid_request_error" | "BadRequestError")
            ),
            _ => false,
        }
    }

    /// The provider's request id, when the failure got far enough to have one.
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Self::Status { request_id, .. }
            | Self::MidStream { request_id, .. }
            | Self::Incomplete { request_id, .. }
            | Self::EmptyStream { request_id }
            | Self::Broken { request_id, .. }
            | Self::Idle { request_id, .. }
            | Self::Malformed { request_id, .. } => request_id.as_deref(),
            _ => None,
        }
    }
}

/// `120 s`, or `300 ms` below a second (tests and impatient settings).
fn seconds(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{} s", duration.as_secs())
    }
}

fn after_retries(retries: u32) -> String {
    match retries {
        0 => String::new(),
        1 => " and still after 1 retry".to_string(),
        n => format!(" and still after {n} retries"),
    }
}

fn request_note(request_id: Option<&str>) -> String {
    request_id.map_or_else(String::new, |id| format!(" (request {id})"))
}

fn mentions_context_overflow(error_type: Option<&str>, code: Option<&str>, message: &str) -> bool {
    let message = message.to_lowercase();
    let labelled = [error_type, code]
        .into_iter()
        .flatten()
        .any(|label| label.contains("context_length") || label.contains("context_size"));
    let about_context = message.contains("context")
        && ["exceed", "too long", "length", "window", "limit", "size"]
            .iter()
            .any(|word| message.contains(word));
    labelled || about_context || message.contains("prompt is too long")
}

fn status_sentence(
    status: u16,
    error_type: Option<&str>,
    code: Option<&str>,
    message: &str,
    request_id: Option<&str>,
    retries: u32,
) -> String {
    let mut detail = format!("HTTP {status}");
    if let Some(kind) = error_type {
        detail.push(' ');
        detail.push_str(kind);
    }
    if !message.is_empty() {
        detail.push_str(": ");
        detail.push_str(message);
    }
    if let Some(id) = request_id {
        detail.push_str("; request ");
        detail.push_str(id);
    }
    let still = match retries {
        0 => String::new(),
        1 => " and still was after 1 retry".to_string(),
        n => format!(" and still was after {n} retries"),
    };
    if status == 400 && mentions_context_overflow(error_type, code, message) {
        return format!(
            "the conversation is longer than the model's context window; start a new session (/new in the app, or `vaultchat ask` without --continue and --session) ({detail})"
        );
    }
    let spend_limit = code == Some("enforced_spend_limit_reached");
    match status {
        401 => format!("the provider rejected the API key ({detail})"),
        402 => format!(
            "the provider refused the request for billing reasons; check the account's credit ({detail})"
        ),
        403 => format!(
            "the provider does not allow this API key to use this model or feature ({detail})"
        ),
        404 => format!(
            "the provider does not know this model or endpoint ({detail}); check --model and --base-url (an OpenAI-compatible base URL ends in /v1)"
        ),
        413 => format!(
            "the request is too large for the provider ({detail}); remove large attachments or start a new session"
        ),
        429 if spend_limit => format!(
            "the spend limit for this API key is reached ({detail}); raise the limit or wait for it to reset"
        ),
        429 => format!(
            "the provider's rate limit was exceeded ({detail}){still}; wait a minute and try again"
        ),
        529 => format!("the provider is overloaded ({detail}){still}; try again shortly"),
        _ if error_type == Some("overloaded_error") => {
            format!("the provider is overloaded ({detail}){still}; try again shortly")
        }
        408 | 504 => format!("the provider timed out ({detail}){still}; try again shortly"),
        500.. => format!("the provider had an internal error ({detail}){still}; try again shortly"),
        400 => format!("the provider rejected the request ({detail})"),
        _ => format!("the provider answered with an error ({detail}){still}"),
    }
}

/// The parts of a provider error body vaultchat uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ErrorBody {
    pub error_type: Option<String>,
    pub code: Option<String>,
    pub message: String,
    pub request_id: Option<String>,
}

/// Read an error body of any provider: Anthropic `{"type":"error","error":{type,message},
/// "request_id"}`, OpenAI `{"error":{message,type,param,code}}`, OpenRouter (numeric code), vLLM
/// `{"object":"error",message,type,code}`, Ollama's `{"error":"…"}`; or no JSON at all (a proxy's
/// HTML page for 413), reduced to its `<title>` or first line.
pub(crate) fn parse_error_body(body: &str) -> ErrorBody {
    match serde_json::from_str::<Value>(body) {
        Ok(value) if value.is_object() => error_from_value(&value),
        _ => ErrorBody {
            message: plain_text_message(body),
            ..ErrorBody::default()
        },
    }
}

/// [`parse_error_body`] for an already parsed JSON value (a mid-stream error event).
pub(crate) fn error_from_value(value: &Value) -> ErrorBody {
    let (inner, message) = match value.get("error") {
        Some(Value::String(text)) => (value, Some(text.clone())),
        Some(inner @ Value::Object(_)) => (inner, None),
        _ => (value, None),
    };
    let text_of = |field: &str| match inner.get(field) {
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Number(number)) => Some(number.to_string()),
        _ => None,
    };
    // Anthropic's top-level `"type":"error"` names the envelope, not the error.
    let error_type = text_of("type").filter(|kind| kind != "error" || !std::ptr::eq(inner, value));
    let spend_limit = value.to_string().contains("enforced_spend_limit_reached");
    let code = if spend_limit {
        Some("enforced_spend_limit_reached".to_string())
    } else {
        text_of("code")
    };
    let message = message.or_else(|| text_of("message")).unwrap_or_default();
    ErrorBody {
        error_type,
        code,
        message: shorten(message.trim()),
        request_id: value
            .get("request_id")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

fn plain_text_message(body: &str) -> String {
    let trimmed = body.trim();
    if trimmed.starts_with('<') {
        let lower = trimmed.to_lowercase();
        let title = lower
            .find("<title>")
            .zip(lower.find("</title>"))
            .and_then(|(start, end)| trimmed.get(start + "<title>".len()..end));
        return title.map(|t| shorten(t.trim())).unwrap_or_default();
    }
    shorten(trimmed.lines().next().unwrap_or_default().trim())
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_QUOTED_MESSAGE {
        return text.to_string();
    }
    let mut short: String = text.chars().take(MAX_QUOTED_MESSAGE).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status_error(status: u16, body: &str, retries: u32) -> LlmError {
        let parsed = parse_error_body(body);
        LlmError::Status {
            status,
            error_type: parsed.error_type,
            code: parsed.code,
            message: parsed.message,
            request_id: parsed.request_id,
            retries,
        }
    }

    #[test]
    fn anthropic_401_names_the_key_and_the_request() {
        let error = status_error(
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_1"}"#,
            0,
        );
        assert_eq!(
            error.to_string(),
            "the provider rejected the API key (HTTP 401 authentication_error: invalid x-api-key; request req_1)"
        );
        assert_eq!(error.request_id(), Some("req_1"));
        assert!(!error.is_rejected_history());
    }

    #[test]
    fn overload_after_retries_says_so() {
        let error = status_error(529, "", 2);
        assert_eq!(
            error.to_string(),
            "the provider is overloaded (HTTP 529) and still was after 2 retries; try again shortly"
        );
    }

    #[test]
    fn prompt_too_long_is_a_context_overflow() {
        let error = status_error(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
            0,
        );
        assert!(error.is_context_overflow());
        assert!(error.to_string().starts_with(
            "the conversation is longer than the model's context window; start a new session (/new in the app, or `vaultchat ask` without --continue and --session) (HTTP 400"
        ));
    }

    #[test]
    fn openai_context_length_code_is_a_context_overflow() {
        let error = status_error(
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            0,
        );
        assert!(error.is_context_overflow());
        assert!(error.is_rejected_history());
    }

    #[test]
    fn an_ordinary_400_is_rejected_history_but_no_overflow() {
        let error = status_error(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1: tool_use ids must be unique"}}"#,
            0,
        );
        assert!(!error.is_context_overflow());
        assert!(error.is_rejected_history());
        assert_eq!(
            error.to_string(),
            "the provider rejected the request (HTTP 400 invalid_request_error: messages.1: tool_use ids must be unique)"
        );
        let auth = status_error(
            400,
            r#"{"type":"error","error":{"type":"permission_error","message":"x"}}"#,
            0,
        );
        assert!(!auth.is_rejected_history());
    }

    #[test]
    fn an_html_413_is_reduced_to_its_title() {
        let error = status_error(
            413,
            "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>cloudflare</body></html>",
            0,
        );
        assert_eq!(
            error.to_string(),
            "the request is too large for the provider (HTTP 413: 413 Request Entity Too Large); remove large attachments or start a new session"
        );
    }

    #[test]
    fn other_error_shapes_are_read() {
        assert_eq!(
            parse_error_body(r#"{"error":"model 'x' not found"}"#),
            ErrorBody {
                message: "model 'x' not found".into(),
                ..ErrorBody::default()
            }
        );
        assert_eq!(
            parse_error_body(
                r#"{"object":"error","message":"bad","type":"BadRequestError","code":400}"#
            ),
            ErrorBody {
                error_type: Some("BadRequestError".into()),
                code: Some("400".into()),
                message: "bad".into(),
                request_id: None,
            }
        );
        assert_eq!(
            parse_error_body(r#"{"error":{"code":429,"message":"slow down","metadata":{}}}"#).code,
            Some("429".into())
        );
        assert_eq!(
            parse_error_body("plain failure\nsecond line").message,
            "plain failure"
        );
    }

    #[test]
    fn a_spend_limit_429_is_named() {
        let error = status_error(
            429,
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"spend cap","details":{"error_code":"enforced_spend_limit_reached"}}}"#,
            0,
        );
        assert!(
            error
                .to_string()
                .starts_with("the spend limit for this API key is reached")
        );
    }

    #[test]
    fn long_messages_are_shortened() {
        let body = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(1000));
        let message = parse_error_body(&body).message;
        assert_eq!(message.chars().count(), MAX_QUOTED_MESSAGE + 1);
        assert!(message.ends_with('…'));
    }

    #[test]
    fn stream_errors_read_as_one_sentence() {
        let error = LlmError::MidStream {
            error_type: "overloaded_error".into(),
            message: "Overloaded".into(),
            request_id: Some("req_9".into()),
        };
        assert_eq!(
            error.to_string(),
            "the provider reported an error mid-stream: overloaded_error: Overloaded (request req_9)"
        );
        let idle = LlmError::Idle {
            idle: Duration::from_secs(120),
            request_id: None,
        };
        assert_eq!(idle.to_string(), "no data from the provider for 120 s");
        assert_eq!(
            LlmError::Incomplete {
                expected: "message_stop",
                request_id: Some("req_7".into())
            }
            .to_string(),
            "the stream stopped before the response was complete (it ended without message_stop); this usually means the server failed while generating the reply, and its log says why (request req_7)"
        );
        let empty = LlmError::EmptyStream {
            request_id: Some("9fd730e80bb64c4f9a9fa8dc8649b593".into()),
        };
        assert_eq!(
            empty.to_string(),
            "the provider accepted the request but sent an empty stream; this usually means the server failed while building the prompt (its log says why; some servers cannot stream tool calls) (request 9fd730e80bb64c4f9a9fa8dc8649b593)"
        );
        assert_eq!(empty.request_id(), Some("9fd730e80bb64c4f9a9fa8dc8649b593"));
    }
}
