//! The multipart form an upload arrives in (the API's `POST /api/bots` and
//! the site's `POST /upload`), read into the ladder's [`Upload`].

use crate::error::{ApiError, ApiResult};
use arbiter_ladder::error::Error;
use arbiter_ladder::uploads::Upload;
use axum::extract::Multipart;
use axum::http::StatusCode;

/// Room for the form's other fields and boundaries on top of the module.
pub const FORM_OVERHEAD: usize = 64 * 1024;

/// The 413 of an upload body over `limit` bytes of module (plus
/// [`FORM_OVERHEAD`]).
pub fn upload_too_large(limit: usize) -> ApiError {
    ApiError(Error::TooLarge(format!(
        "the upload is larger than {} MiB",
        limit.div_ceil(1024 * 1024)
    )))
}

/// An upload form as sent: the upload and the session's CSRF token.
#[derive(Debug, Default)]
pub struct UploadForm {
    /// What is uploaded.
    pub upload: Upload,
    /// The `csrf` field, if any.
    pub csrf: Option<String>,
}

/// Reads a multipart upload form (`name`, `ladders` or `ladder` — repeated or
/// separated by commas or spaces —, `module`, a remote bot's `url` or `agent`,
/// `csrf`): 413 over `limit`
/// bytes of module, 400 for a malformed form or an unknown field.
pub async fn read_upload(mut form: Multipart, limit: usize) -> ApiResult<UploadForm> {
    let mut read = UploadForm::default();
    let upload = &mut read.upload;
    let body_error = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            upload_too_large(limit)
        } else {
            ApiError(Error::Invalid(format!("malformed multipart form: {}", e.body_text())))
        }
    };
    while let Some(field) = form.next_field().await.map_err(body_error)? {
        let field_name = field.name().unwrap_or("").to_string();
        match field_name.as_str() {
            "module" => {
                let bytes = field.bytes().await.map_err(body_error)?;
                if bytes.len() > limit {
                    return Err(ApiError(Error::TooLarge(format!(
                        "the module is {} bytes; the limit is {limit}",
                        bytes.len()
                    ))));
                }
                upload.module = Some(bytes.to_vec());
            }
            "name" | "ladders" | "ladder" | "csrf" | "url" | "agent" => {
                let text = field.text().await.map_err(body_error)?;
                match field_name.as_str() {
                    "name" => upload.name = Some(text.trim().to_string()),
                    "url" => upload.url = Some(text.trim().to_string()).filter(|url| !url.is_empty()),
                    "csrf" => read.csrf = Some(text),
                    "agent" => upload.agent = parse_flag(&text)?,
                    _ => upload.ladders.extend(
                        text.split([',', ' '])
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .map(String::from),
                    ),
                }
            }
            other => return Err(ApiError(Error::Invalid(format!("unexpected form field {other:?}")))),
        }
    }
    Ok(read)
}

/// A form's yes/no field: `true`, `1`, `on` (a ticked box) or `yes`;
/// `false`, `0`, `off`, `no` or nothing. Anything else is a 400.
fn parse_flag(text: &str) -> ApiResult<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Ok(true),
        "false" | "0" | "off" | "no" | "" => Ok(false),
        other => Err(ApiError(Error::Invalid(format!(
            "the `agent` field is true or false, not {other:?}"
        )))),
    }
}
