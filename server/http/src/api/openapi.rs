//! The OpenAPI 3.1 document of the JSON API, served at `/api/openapi.json`:
//! derived from the routes themselves ([`super::documented`]), their
//! `#[utoipa::path]` attributes and the typed bodies, so it cannot drift
//! from what the server answers.

use crate::server::AppState;
use axum::Json;
use serde_json::Value;
use std::sync::OnceLock;
use utoipa::openapi::schema::{AdditionalProperties, Schema};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ComponentsBuilder, InfoBuilder, OpenApi, OpenApiVersion, Paths, Ref, RefOr};
use utoipa::{PartialSchema, ToResponse};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(serve))
}

/// `GET /api/openapi.json`.
#[utoipa::path(get, path = "/openapi.json", tag = "operations", summary = "This document",
    responses(
        (status = 200, description = "the OpenAPI 3.1 document", content_type = "application/json", body = Object),
    ))]
async fn serve() -> Json<Value> {
    Json(document().clone())
}

/// What any operation may answer with the `Error` envelope, so no
/// operation lists them: a malformed request (400), a token or session
/// that is sent and not valid (401), something that does not exist (404),
/// a rate limit (429), header fields over
/// [`crate::middleware::MAX_HEADER_BYTES`] (431), storage unavailable
/// (503). Operations declare their success and their own refusals (403,
/// 409, 413, …).
const SHARED_REFUSALS: [u16; 6] = [400, 401, 404, 429, 431, 503];

/// The document's description: the envelope of refusals and the rules
/// every operation keeps.
fn description() -> String {
    format!(
        "The ladder for game-playing bots. Every refusal is {{\"ok\": false, \"error\": \"...\"}} with the fitting status. \
         What this document does not allow is refused with a 400: a body property an operation does not list \
         (every body schema is `additionalProperties: false`), a query parameter it does not list, a number outside \
         its minimum and maximum, a word outside its enum. A request whose header fields take more than {} KiB \
         together (each counted as `name: value` and its line end) is refused with a 431.",
        crate::middleware::MAX_HEADER_BYTES / 1024
    )
}

/// The document, built once from the routes.
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| serde_json::to_value(openapi()).unwrap_or_default())
}

/// The media type of server-sent events.
const EVENT_STREAM: &str = "text/event-stream";

/// The document as utoipa builds it: the operations of
/// [`super::documented`] under `/api`, the `Error` schema and response,
/// and the two ways to sign in.
pub fn openapi() -> OpenApi {
    // The body limit is a layer: it changes nothing in the document.
    let (_, mut doc) = super::documented(usize::MAX).split_for_parts();
    doc.openapi = OpenApiVersion::Version31;
    doc.info = InfoBuilder::new()
        .title("Arbiter")
        .version(env!("CARGO_PKG_VERSION"))
        .description(Some(description()))
        .build();
    let mut paths = Paths::new();
    for (path, mut item) in std::mem::take(&mut doc.paths.paths) {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for operation in operations.into_iter().flatten() {
            // A stream of server-sent events is no JSON value and no one
            // string: its media type is documented without a schema, its
            // events in the operation's description.
            for response in operation.responses.responses.values_mut() {
                if let RefOr::T(response) = response
                    && let Some(RefOr::T(stream)) = response.content.get_mut(EVENT_STREAM)
                {
                    stream.schema = None;
                }
            }
            for status in SHARED_REFUSALS {
                let error = RefOr::Ref(Ref::from_response_name("Error"));
                operation.responses.responses.entry(status.to_string()).or_insert(error);
            }
        }
        paths.paths.insert(format!("/api{path}"), item);
    }
    doc.paths = paths;
    let (name, response) = crate::api::ErrorResponse::response();
    let mut components = doc
        .components
        .take()
        .unwrap_or_else(|| ComponentsBuilder::new().build());
    components.schemas.insert("Error".into(), crate::api::Refusal::schema());
    // Named only by parameters, which do not register their schemas.
    components.schemas.insert(
        "AnyLadderName".into(),
        <crate::api::ladders::AnyLadderName as utoipa::PartialSchema>::schema(),
    );
    // Each action of the agent API is a closed object too (utoipa leaves
    // an internally tagged enum's alternatives open).
    if let Some(RefOr::T(Schema::OneOf(actions))) = components.schemas.get_mut("AgentRequest") {
        for action in &mut actions.items {
            if let RefOr::T(Schema::Object(object)) = action {
                object.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
            }
        }
    }
    components.responses.insert(name.into(), response);
    components.add_security_scheme(
        "bearer",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some("an API token from POST /api/tokens"))
                .build(),
        ),
    );
    components.add_security_scheme(
        "bot_token",
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .description(Some(
                    "an agent bot's token from POST /api/bots/{name}/token, for /api/agent and /api/agent/stream only",
                ))
                .build(),
        ),
    );
    components.add_security_scheme(
        "session",
        SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new("arbiter_session"))),
    );
    doc.components = Some(components);
    doc
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    /// Every `$ref` of the document, with where it is.
    fn refs<'a>(value: &'a Value, at: &str, out: &mut Vec<(String, &'a str)>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    if key == "$ref"
                        && let Some(target) = inner.as_str()
                    {
                        out.push((at.to_owned(), target));
                    }
                    refs(inner, &format!("{at}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    refs(inner, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_reference_resolves() {
        let document = super::document();
        let mut found = Vec::new();
        refs(document, "", &mut found);
        assert!(found.len() > 20, "the document uses references");
        for (at, target) in found {
            let pointer = target.strip_prefix('#').expect("a local reference");
            assert!(document.pointer(pointer).is_some(), "{at}: {target} does not exist");
        }
    }

    /// Every JSON request body refuses properties it does not list, as the
    /// document's description promises; a body schema overwritten by an
    /// answer of the same name (which does not) fails here.
    #[test]
    fn every_json_body_is_closed() {
        let document = super::document();
        let mut bodies = 0;
        for (path, item) in document["paths"].as_object().expect("paths") {
            for (method, operation) in item.as_object().expect("a path item") {
                let schema = &operation["requestBody"]["content"]["application/json"]["schema"];
                let Some(target) = schema["$ref"].as_str() else {
                    continue;
                };
                let pointer = target.strip_prefix('#').expect("a local reference");
                let resolved = document.pointer(pointer).expect("the body schema");
                // One object, or one of several (the agent API's actions).
                let alternatives = match resolved["oneOf"].as_array() {
                    Some(alternatives) => alternatives.iter().collect(),
                    None => vec![resolved],
                };
                for alternative in alternatives {
                    assert_eq!(
                        alternative["additionalProperties"],
                        serde_json::Value::Bool(false),
                        "{method} {path}: {target} is not closed"
                    );
                }
                bodies += 1;
            }
        }
        assert!(bodies >= 5, "only {bodies} JSON bodies found");
    }

    #[test]
    fn the_upload_form_allows_no_null_and_streams_have_no_json_schema() {
        let document = super::document();
        let form = document
            .pointer("/components/schemas/UploadForm/properties")
            .and_then(Value::as_object)
            .expect("the upload form's fields");
        for (name, field) in form {
            // A multipart field is there or not; it cannot be null.
            let types = field["type"].as_array().cloned().unwrap_or_default();
            assert!(
                !types.contains(&Value::from("null")) && field["type"] != "null",
                "{name} allows null: {field}"
            );
        }
        let stream = document
            .pointer("/paths/~1api~1events/get/responses/200/content/text~1event-stream")
            .expect("the events stream's media type");
        assert!(
            stream.get("schema").is_none(),
            "an event stream is not one string: {stream}"
        );
    }
}
