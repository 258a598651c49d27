//! Bot URLs that point inside the host's network are refused before any
//! connection: a listener on loopback must see nothing.

use std::io::ErrorKind;
use std::net::TcpListener;

use arbiter_remote::{AddressPolicy, RemoteBot, RemoteError, UrlError};

/// Asserts that nothing connected to `listener`.
fn saw_nothing(listener: &TcpListener) {
    listener.set_nonblocking(true).expect("non-blocking");
    match listener.accept() {
        Err(err) if err.kind() == ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("a connection came from {peer}"),
        Err(err) => panic!("accept failed: {err}"),
    }
}

fn refused(url: &str) -> String {
    match RemoteBot::new("probe", url, AddressPolicy::PUBLIC_ONLY) {
        Err(RemoteError::Url(err @ UrlError::NotPublic { .. })) => err.to_string(),
        Err(other) => panic!("{url}: refused for another reason: {other}"),
        Ok(_) => panic!("{url} was accepted"),
    }
}

#[test]
fn loopback_urls_are_refused_without_a_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    for url in [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://0.0.0.0:{port}/"),
        format!("ws://127.0.0.1:{port}/"),
        format!("wss://localhost:{port}/"),
    ] {
        let message = refused(&url);
        assert!(
            message.contains("a bot must be reachable on a public address"),
            "{message}"
        );
        // The server's flag is the operator's business, not a visitor's.
        assert!(!message.contains("--allow-private-bot-urls"), "{message}");
    }
    saw_nothing(&listener);

    if let Ok(listener) = TcpListener::bind("[::1]:0") {
        let port = listener.local_addr().expect("address").port();
        let message = refused(&format!("http://[::1]:{port}/"));
        assert!(message.contains("Loopback"), "{message}");
        saw_nothing(&listener);
    }
}

#[test]
fn private_and_metadata_urls_are_refused_with_what_they_are() {
    for (url, kind) in [
        ("http://10.0.0.1/", "Private-Use"),
        ("http://169.254.169.254/latest/meta-data/", "Link Local"),
        ("http://0.0.0.0/", "This host on this network"),
        ("http://[::ffff:127.0.0.1]/", "Loopback"),
        ("http://[::1]/", "Loopback"),
        ("http://localhost/", "Loopback"),
    ] {
        let message = refused(url);
        assert!(message.contains(kind), "{url}: {message}");
    }
}

#[test]
fn the_allow_flag_lets_a_local_bot_through() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    let bot = RemoteBot::new("local", &format!("http://127.0.0.1:{port}/"), AddressPolicy::ANY);
    assert!(bot.is_ok());
}
