//! The headers every response of the server carries: `nosniff`, `no-store` (run data never
//! sits in a cache), and a content security policy (no framing; on the web page, scripts
//! only with this response's nonce, which the page's own `<script>` tags get here: the page
//! escapes everything it shows, so every `<script>` in it is the server's).
//!
//! An error the framework answers itself (a body over the size limit, a method the route does
//! not take) gets the API's JSON error body like every other error.
//!
//! Owns response headers, and those errors' bodies; what a page contains is `web`'s.

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The largest page rewritten for its nonce; a page is a few kilobytes.
const PAGE_LIMIT: usize = 16 << 20;

const FOR_DATA: &str = "default-src 'none'; frame-ancestors 'none'";

pub(crate) async fn harden(response: Response) -> Response {
    let response = json_error(response).await;
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let mut response = if html { with_nonce(response).await } else { response };
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if !html {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(FOR_DATA));
    }
    response
}

async fn with_nonce(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, PAGE_LIMIT).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let mut raw = [0u8; 16];
    // Without randomness the page goes out with no script allowed at all.
    let nonce = match getrandom::fill(&mut raw) {
        Ok(()) => raw.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        Err(_) => String::new(),
    };
    let text =
        String::from_utf8_lossy(&bytes).replace("<script>", &format!("<script nonce={nonce}>"));
    let scripts = if nonce.is_empty() { "'none'".to_string() } else { format!("'nonce-{nonce}'") };
    let policy = format!(
        "default-src 'none'; script-src {scripts}; style-src 'unsafe-inline'; connect-src 'self'; \
         img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    );
    if let Ok(value) = HeaderValue::from_str(&policy) {
        parts.headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(text))
}

/// An error response whose body is neither JSON nor a page: the API's `{"error": ...}` with
/// what it said (or the status's reason when it said nothing).
async fn json_error(response: Response) -> Response {
    let status = response.status();
    let kind = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let ours =
        kind.is_some_and(|k| k.starts_with("application/json") || k.starts_with("text/html"));
    if !(status.is_client_error() || status.is_server_error()) || ours {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let said = axum::body::to_bytes(body, 64 << 10).await.unwrap_or_default();
    let said = String::from_utf8_lossy(&said).trim().to_string();
    let message = if said.is_empty() {
        status.canonical_reason().unwrap_or("error").to_lowercase()
    } else {
        said
    };
    let body = serde_json::json!({ "error": message }).to_string();
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}
