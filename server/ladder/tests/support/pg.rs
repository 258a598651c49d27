//! A PostgreSQL database of its own for one test, on the server that
//! `TEST_PG_URL` names (CI sets it to
//! `postgres://postgres@127.0.0.1:55432/postgres`): created fresh as
//! `arbiter_test_<random>` and dropped (`WITH (FORCE)`) when the
//! [`PgDatabase`] is.
//!
//! Shared by the test harnesses of `arbiter-ladder` (`server/ladder/tests`) and of
//! the `arbiter` binary (`cli/tests`), which includes this file with
//! `#[path = "../../../server/ladder/tests/support/pg.rs"] mod pg;`. It needs
//! `sqlx` (with `postgres`), `tokio` and `getrandom`, which both crates
//! have.

/// The environment variable naming a PostgreSQL server for tests: a URL
/// whose user may create and drop databases.
pub const TEST_PG_URL: &str = "TEST_PG_URL";

/// `TEST_PG_URL`, unless it is unset or empty (then PostgreSQL tests are
/// skipped; CI always sets it).
pub fn test_pg_url() -> Option<String> {
    std::env::var(TEST_PG_URL).ok().filter(|url| !url.is_empty())
}

/// A database of its own on the `TEST_PG_URL` server, dropped with it.
pub struct PgDatabase {
    admin_url: String,
    name: String,
    /// Its connection URL.
    pub url: String,
}

impl PgDatabase {
    /// Creates a fresh database on the `TEST_PG_URL` server (panics without
    /// one, or when the server refuses).
    pub async fn create() -> PgDatabase {
        use sqlx::Connection;
        let admin_url = test_pg_url().expect("a PostgreSQL test needs TEST_PG_URL");
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("randomness");
        let name = format!(
            "arbiter_test_{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let mut admin = sqlx::PgConnection::connect(&admin_url)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to TEST_PG_URL: {e}"));
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut admin)
            .await
            .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
        let _ = admin.close().await;
        let url = with_database(&admin_url, &name);
        PgDatabase { admin_url, name, url }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop may run inside the test's runtime, where blocking on another
        // future is not allowed: a runtime of our own on a thread of our own.
        let dropped = std::thread::spawn(move || {
            use sqlx::Connection;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let mut admin = sqlx::PgConnection::connect(&admin_url).await.ok()?;
                let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&mut admin).await.ok()?;
                admin.close().await.ok()
            })
        });
        let _ = dropped.join();
    }
}

/// `url` with its database (the path) replaced by `name`, keeping any
/// query string: `postgres://u@h:5432/postgres?x=1` → `postgres://u@h:5432/NAME?x=1`.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let authority_end = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{name}", &base[..authority_end]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}
