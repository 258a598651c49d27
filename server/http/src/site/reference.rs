//! `GET /api/reference`: the JSON API's reference as an HTML page, rendered
//! on the server from the same OpenAPI document `/api/openapi.json` serves
//! (so it cannot drift from it), with no script: every operation by tag
//! with its parameters, body and answers, then every schema with its
//! fields. Types that name a schema link to it.

use super::{Nav, SiteResult, Viewer, render};
use askama::Template;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One piece of a rendered type: text, linked to a schema when it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypePart {
    /// What is shown.
    pub text: String,
    /// `#schema-NAME` for a schema reference.
    pub href: Option<String>,
}

/// A rendered type, e.g. `integer (int64, 1 – 500)` or `Bot[]`.
type TypeText = Vec<TypePart>;

/// Text of the document (descriptions, summaries), shown HTML-escaped with
/// its Markdown code spans (`` `name: value` ``) as `<code>` elements.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prose(pub String);

impl Prose {
    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Writes `text` HTML-escaped.
fn escaped(out: &mut std::fmt::Formatter<'_>, text: &str) -> std::fmt::Result {
    for c in text.chars() {
        match c {
            '&' => out.write_str("&amp;")?,
            '<' => out.write_str("&lt;")?,
            '>' => out.write_str("&gt;")?,
            '"' => out.write_str("&quot;")?,
            '\'' => out.write_str("&#39;")?,
            c => out.write_char(c)?,
        }
    }
    Ok(())
}

impl std::fmt::Display for Prose {
    /// A run of backticks opens a code span that the next run of as many
    /// closes (as in CommonMark); a run that nothing closes is text.
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut rest = self.0.as_str();
        while let Some(start) = rest.find('`') {
            escaped(out, &rest[..start])?;
            let ticks = rest[start..].len() - rest[start..].trim_start_matches('`').len();
            let after = &rest[start + ticks..];
            let fence = &rest[start..start + ticks];
            // A run of exactly as many backticks (not part of a longer run).
            let close = after
                .match_indices(fence)
                .map(|(i, _)| i)
                .find(|&i| !after[i + ticks..].starts_with('`') && !after[..i].ends_with('`'));
            match close {
                Some(end) => {
                    out.write_str("<code>")?;
                    escaped(out, after[..end].trim_matches(' '))?;
                    out.write_str("</code>")?;
                    rest = &after[end + ticks..];
                }
                None => {
                    escaped(out, fence)?;
                    rest = after;
                }
            }
        }
        escaped(out, rest)
    }
}

// `Prose` escapes its text itself: askama must not escape it again.
impl askama::filters::HtmlSafe for Prose {}

/// A parameter or a schema field.
struct Field {
    name: String,
    /// `path`, `query`, `header`, `cookie`; empty for schema fields.
    place: String,
    required: bool,
    ty: TypeText,
    description: Prose,
}

/// A request body or an answer's content.
struct Body {
    content_type: String,
    ty: TypeText,
}

/// One answer of an operation.
struct Answer {
    status: String,
    description: Prose,
    bodies: Vec<Body>,
}

/// One operation.
struct Operation {
    anchor: String,
    method: String,
    path: String,
    summary: Prose,
    description: Prose,
    auth: String,
    parameters: Vec<Field>,
    request: Vec<Body>,
    request_required: bool,
    answers: Vec<Answer>,
}

/// The operations under one tag.
struct Tag {
    name: String,
    anchor: String,
    operations: Vec<Operation>,
}

/// One schema of `components`.
struct Schema {
    name: String,
    anchor: String,
    description: Prose,
    ty: TypeText,
    fields: Vec<Field>,
}

#[derive(Template)]
#[template(path = "api_reference.html", config = "../../web/askama.toml")]
struct ReferencePage {
    nav: Nav,
    title: String,
    version: String,
    description: Prose,
    auth: Vec<(String, Prose)>,
    tags: Vec<Tag>,
    schemas: Vec<Schema>,
}

/// `GET /api/reference`.
pub async fn reference(viewer: Viewer) -> SiteResult {
    let doc = crate::api::openapi::document();
    let info = &doc["info"];
    Ok(render(&ReferencePage {
        nav: viewer.nav("api"),
        title: "API reference".into(),
        version: text(&info["version"]),
        description: prose(&info["description"]),
        auth: auth_schemes(doc),
        tags: tags(doc),
        schemas: schemas(doc),
    }))
}

/// A string field, or "".
fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// A string field as [`Prose`], or empty.
fn prose(value: &Value) -> Prose {
    Prose(text(value))
}

/// The anchor of a schema's section.
fn schema_anchor(name: &str) -> String {
    format!("schema-{}", slug(name))
}

/// `text` with each run of characters other than ASCII letters and digits
/// turned into one `-`, none at either end: an id attribute's value.
fn slug(text: &str) -> String {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// The ways to sign in: (name, how).
fn auth_schemes(doc: &Value) -> Vec<(String, Prose)> {
    let Some(schemes) = doc["components"]["securitySchemes"].as_object() else {
        return Vec::new();
    };
    schemes
        .iter()
        .map(|(name, scheme)| {
            let how = match (scheme["type"].as_str(), scheme["scheme"].as_str()) {
                (Some("http"), Some("bearer")) => "header Authorization: Bearer TOKEN".to_owned(),
                (Some("apiKey"), _) => format!("{} {}", text(&scheme["in"]), text(&scheme["name"])),
                _ => text(&scheme["type"]),
            };
            let description = text(&scheme["description"]);
            let how = if description.is_empty() {
                how
            } else {
                format!("{how} ({description})")
            };
            (name.clone(), Prose(how))
        })
        .collect()
}

/// Every operation, grouped by its first tag (tags sorted; untagged last
/// under "other"), in path order within a tag.
fn tags(doc: &Value) -> Vec<Tag> {
    let mut by_tag: BTreeMap<String, Vec<Operation>> = BTreeMap::new();
    let Some(paths) = doc["paths"].as_object() else {
        return Vec::new();
    };
    for (path, item) in paths {
        for method in ["get", "put", "post", "delete", "patch", "head", "options"] {
            let operation = &item[method];
            if !operation.is_object() {
                continue;
            }
            let tag = operation["tags"][0].as_str().unwrap_or("other").to_owned();
            by_tag
                .entry(tag)
                .or_default()
                .push(self::operation(doc, path, method, operation, item));
        }
    }
    by_tag
        .into_iter()
        .map(|(name, operations)| Tag {
            anchor: format!("tag-{}", slug(&name)),
            name,
            operations,
        })
        .collect()
}

/// One operation, its shared `$ref` answers resolved.
fn operation(doc: &Value, path: &str, method: &str, operation: &Value, item: &Value) -> Operation {
    let mut parameters: Vec<Field> = Vec::new();
    for parameter in item["parameters"]
        .as_array()
        .into_iter()
        .chain(operation["parameters"].as_array())
        .flatten()
    {
        let parameter = resolve(doc, parameter);
        parameters.push(Field {
            name: text(&parameter["name"]),
            place: text(&parameter["in"]),
            required: parameter["required"].as_bool().unwrap_or(false),
            ty: type_text(&parameter["schema"]),
            description: prose(&parameter["description"]),
        });
    }
    let request_body = resolve(doc, &operation["requestBody"]);
    let answers = operation["responses"]
        .as_object()
        .map(|answers| {
            answers
                .iter()
                .map(|(status, answer)| {
                    let answer = resolve(doc, answer);
                    Answer {
                        status: status.clone(),
                        description: prose(&answer["description"]),
                        bodies: bodies(&answer["content"]),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let auth = match operation["security"].as_array() {
        None => String::new(),
        Some(ways) => {
            let names: Vec<String> = ways
                .iter()
                .filter_map(|way| way.as_object())
                .map(|way| {
                    if way.is_empty() {
                        "none".to_owned()
                    } else {
                        way.keys().cloned().collect::<Vec<_>>().join(" + ")
                    }
                })
                .collect();
            names.join(" or ")
        }
    };
    let method = method.to_ascii_uppercase();
    Operation {
        anchor: format!("op-{}-{}", method.to_ascii_lowercase(), slug(path)),
        summary: prose(&operation["summary"]),
        description: prose(&operation["description"]),
        auth,
        parameters,
        request: bodies(&request_body["content"]),
        request_required: request_body["required"].as_bool().unwrap_or(false),
        answers,
        method,
        path: path.to_owned(),
    }
}

/// The content of a body or an answer: one entry per media type.
fn bodies(content: &Value) -> Vec<Body> {
    content
        .as_object()
        .map(|content| {
            content
                .iter()
                .map(|(content_type, media)| Body {
                    content_type: content_type.clone(),
                    ty: if media["schema"].is_null() {
                        Vec::new()
                    } else {
                        type_text(&media["schema"])
                    },
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `value` with a local `$ref` (`#/components/...`) followed, once.
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value["$ref"].as_str().and_then(|r| r.strip_prefix('#')) {
        Some(pointer) => doc.pointer(pointer).unwrap_or(value),
        None => value,
    }
}

/// A schema as text: references as links, arrays as `T[]`, unions with
/// `|`, enums as their values, limits and formats in brackets.
pub fn type_text(schema: &Value) -> Vec<TypePart> {
    let plain = |text: String| TypePart { text, href: None };
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        return vec![TypePart {
            text: name.to_owned(),
            href: Some(format!("#{}", schema_anchor(name))),
        }];
    }
    for union in ["oneOf", "anyOf", "allOf"] {
        if let Some(members) = schema[union].as_array() {
            let joint = if union == "allOf" { " & " } else { " | " };
            let mut parts = Vec::new();
            for (i, member) in members.iter().enumerate() {
                if i > 0 {
                    parts.push(plain(joint.to_owned()));
                }
                parts.extend(type_text(member));
            }
            return parts;
        }
    }
    if let Some(values) = schema["enum"].as_array() {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        return vec![plain(format!("one of {}", values.join(", ")))];
    }
    if let Some(value) = schema.get("const") {
        return vec![plain(format!("always {value}"))];
    }
    let kinds: Vec<String> = match &schema["type"] {
        Value::String(kind) => vec![kind.clone()],
        Value::Array(kinds) => kinds.iter().filter_map(|k| k.as_str().map(str::to_owned)).collect(),
        _ => Vec::new(),
    };
    let mut parts = Vec::new();
    let shown: Vec<&String> = kinds.iter().filter(|k| *k != "null").collect();
    if shown.is_empty() && kinds.is_empty() {
        parts.push(plain(
            if schema.is_object() && schema.as_object().is_some_and(|o| o.is_empty()) {
                "any".to_owned()
            } else {
                "object".to_owned()
            },
        ));
    }
    for (i, kind) in shown.iter().enumerate() {
        if i > 0 {
            parts.push(plain(" | ".to_owned()));
        }
        if kind.as_str() == "array" {
            let items = type_text(&schema["items"]);
            let wrap = items.len() > 1;
            if wrap {
                parts.push(plain("(".to_owned()));
            }
            parts.extend(items);
            parts.push(plain(if wrap { ")[]" } else { "[]" }.to_owned()));
        } else {
            parts.push(plain((*kind).clone()));
        }
    }
    let mut notes = Vec::new();
    if let Some(format) = schema["format"].as_str() {
        notes.push(format.to_owned());
    }
    match (schema.get("minimum"), schema.get("maximum")) {
        (Some(min), Some(max)) => notes.push(format!("{min} – {max}")),
        (Some(min), None) => notes.push(format!("≥ {min}")),
        (None, Some(max)) => notes.push(format!("≤ {max}")),
        (None, None) => {}
    }
    for (key, label) in [
        ("minLength", "length ≥"),
        ("maxLength", "length ≤"),
        ("maxItems", "items ≤"),
    ] {
        if let Some(n) = schema.get(key) {
            notes.push(format!("{label} {n}"));
        }
    }
    if let Some(default) = schema.get("default") {
        notes.push(format!("default {default}"));
    }
    if !notes.is_empty() {
        parts.push(plain(format!(" ({})", notes.join(", "))));
    }
    if kinds.iter().any(|k| k == "null") {
        parts.push(plain(" or null".to_owned()));
    }
    parts
}

/// Every schema of `components`, by name, with its fields.
fn schemas(doc: &Value) -> Vec<Schema> {
    let Some(schemas) = doc["components"]["schemas"].as_object() else {
        return Vec::new();
    };
    schemas
        .iter()
        .map(|(name, schema)| {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let fields = schema["properties"]
                .as_object()
                .map(|properties| {
                    properties
                        .iter()
                        .map(|(field, property)| Field {
                            name: field.clone(),
                            place: String::new(),
                            required: required.contains(&field.as_str()),
                            ty: type_text(property),
                            description: prose(&property["description"]),
                        })
                        .collect()
                })
                .unwrap_or_default();
            Schema {
                anchor: schema_anchor(name),
                name: name.clone(),
                description: prose(&schema["description"]),
                ty: type_text(schema),
                fields,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(parts: &[TypePart]) -> String {
        parts.iter().map(|p| p.text.as_str()).collect()
    }

    #[test]
    fn code_spans_are_code_and_the_rest_is_escaped() {
        let shown = |text: &str| Prose(text.to_owned()).to_string();
        assert_eq!(
            shown("each `name: value` <b>"),
            "each <code>name: value</code> &lt;b&gt;"
        );
        assert_eq!(
            shown("``a`b`` and `<x>`"),
            "<code>a`b</code> and <code>&lt;x&gt;</code>"
        );
        assert_eq!(shown("a lone ` stays"), "a lone ` stays");
        assert_eq!(shown("`true`."), "<code>true</code>.");
        assert_eq!(shown(""), "");
    }

    #[test]
    fn anchors_are_plain_words_joined_by_dashes() {
        assert_eq!(
            slug("/api/ladders/{ladder}/leaderboard"),
            "api-ladders-ladder-leaderboard"
        );
        assert_eq!(schema_anchor("Bot"), "schema-Bot");
    }

    #[test]
    fn types_read_as_people_write_them() {
        assert_eq!(
            shown(&type_text(
                &json!({"type": "integer", "format": "int64", "minimum": 1, "maximum": 500})
            )),
            "integer (int64, 1 – 500)"
        );
        assert_eq!(
            shown(&type_text(&json!({"type": ["string", "null"]}))),
            "string or null"
        );
        let list = type_text(&json!({"type": "array", "items": {"$ref": "#/components/schemas/Bot"}}));
        assert_eq!(shown(&list), "Bot[]");
        assert_eq!(list[0].href.as_deref(), Some("#schema-Bot"));
        assert_eq!(
            shown(&type_text(&json!({"type": "string", "enum": ["a", "b"]}))),
            "one of \"a\", \"b\""
        );
        assert_eq!(
            shown(&type_text(
                &json!({"oneOf": [{"$ref": "#/components/schemas/A"}, {"type": "boolean"}]})
            )),
            "A | boolean"
        );
        assert_eq!(shown(&type_text(&json!({}))), "any");
    }

    #[test]
    fn the_whole_document_is_on_the_page() {
        let doc = crate::api::openapi::document();
        let tags = tags(doc);
        let operations: usize = tags.iter().map(|t| t.operations.len()).sum();
        let in_doc: usize = doc["paths"]
            .as_object()
            .expect("paths")
            .values()
            .map(|item| {
                item.as_object()
                    .expect("an item")
                    .keys()
                    .filter(|k| *k != "parameters")
                    .count()
            })
            .sum();
        assert_eq!(operations, in_doc);
        let schemas = schemas(doc);
        assert_eq!(
            schemas.len(),
            doc["components"]["schemas"].as_object().expect("schemas").len()
        );
        // Every link to a schema has its section on the page.
        let anchors: Vec<&str> = schemas.iter().map(|s| s.anchor.as_str()).collect();
        let links = tags
            .iter()
            .flat_map(|t| &t.operations)
            .flat_map(|o| o.answers.iter().flat_map(|a| &a.bodies).chain(&o.request))
            .flat_map(|b| &b.ty)
            .chain(schemas.iter().flat_map(|s| s.fields.iter().flat_map(|f| &f.ty)))
            .filter_map(|p| p.href.as_deref());
        for link in links {
            assert!(anchors.contains(&&link[1..]), "{link} has no section");
        }
        // Shared answers are resolved, not shown as references.
        let upload = tags
            .iter()
            .flat_map(|t| &t.operations)
            .find(|o| o.method == "POST" && o.path == "/api/bots")
            .expect("the upload operation");
        assert!(
            upload
                .answers
                .iter()
                .any(|a| a.status == "400" && !a.description.is_empty())
        );
    }
}
