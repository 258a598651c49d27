//! The ladder on the web: `arbiter serve`'s HTTP server.
//!
//! [`server::serve`] runs a ladder [`Core`](arbiter_ladder::core::Core)
//! with its scheduler, checker and workers behind one router: the JSON API
//! ([`api`], described by `GET /api/openapi.json`) and the site ([`site`]:
//! pages that work without JavaScript). Both call the ladder's steps and
//! never each other; what they share — who is calling ([`extract`]), how an
//! error is answered ([`error`]) and how an upload form is read
//! ([`upload_form`]) — lives here.

pub mod api;
pub mod error;
pub mod extract;
pub mod forward;
pub mod middleware;
pub mod router;
pub mod server;
pub mod site;
pub mod upload_form;
