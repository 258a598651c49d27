//! The two schemas are one: the SQLite and the PostgreSQL migrations make
//! the same tables, the same columns and the same indexes (over the same
//! columns), so code that runs on one runs on the other. A migration added
//! to one folder only fails here.

mod support;

use arbiter_ladder::db::Db;
use std::collections::BTreeSet;
use support::{PgDatabase, TEST_PG_URL};

/// Tables, `table.column`s and `index(table: columns)`s of a schema.
#[derive(Debug, Default, PartialEq, Eq)]
struct Schema {
    tables: BTreeSet<String>,
    columns: BTreeSet<String>,
    indexes: BTreeSet<String>,
}

async fn sqlite_schema(db: &Db) -> Schema {
    let pool = &db.pool;
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_master WHERE type = 'table' \
         AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_sqlx%' ORDER BY name",
    )
    .fetch_all(pool)
    .await
    .expect("tables");
    let mut schema = Schema::default();
    for table in &tables {
        let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_table_info($1)")
            .bind(table)
            .fetch_all(pool)
            .await
            .expect("columns");
        schema
            .columns
            .extend(columns.into_iter().map(|c| format!("{table}.{c}")));
    }
    let indexes: Vec<(String, String)> = sqlx::query_as(
        "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'",
    )
    .fetch_all(pool)
    .await
    .expect("indexes");
    for (index, table) in indexes {
        let columns: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_index_info($1) ORDER BY seqno")
            .bind(&index)
            .fetch_all(pool)
            .await
            .expect("index columns");
        schema
            .indexes
            .insert(format!("{index}({table}: {})", columns.join(", ")));
    }
    schema.tables = tables.into_iter().collect();
    schema
}

async fn postgres_schema(db: &Db) -> Schema {
    let pool = &db.pool;
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name NOT LIKE '_sqlx%'",
    )
    .fetch_all(pool)
    .await
    .expect("tables");
    let columns: Vec<(String, String)> = sqlx::query_as(
        "SELECT table_name::text, column_name::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name NOT LIKE '_sqlx%'",
    )
    .fetch_all(pool)
    .await
    .expect("columns");
    // Indexes made by hand: not those behind a primary key or a UNIQUE
    // constraint (SQLite's are its `sqlite_autoindex_*`).
    let index_columns: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT i.relname::text, t.relname::text, a.attname::text \
         FROM pg_index x \
         JOIN pg_class i ON i.oid = x.indexrelid \
         JOIN pg_class t ON t.oid = x.indrelid \
         JOIN pg_namespace n ON n.oid = t.relnamespace \
         CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord) \
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum \
         WHERE n.nspname = current_schema() AND NOT x.indisprimary \
           AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid) \
         ORDER BY i.relname, k.ord",
    )
    .fetch_all(pool)
    .await
    .expect("indexes");
    let mut indexes: Vec<(String, String, Vec<String>)> = Vec::new();
    for (index, table, column) in index_columns {
        match indexes.last_mut() {
            Some((name, _, columns)) if *name == index => columns.push(column),
            _ => indexes.push((index, table, vec![column])),
        }
    }
    Schema {
        tables: tables.into_iter().collect(),
        columns: columns.into_iter().map(|(t, c)| format!("{t}.{c}")).collect(),
        indexes: indexes
            .into_iter()
            .map(|(index, table, columns)| format!("{index}({table}: {})", columns.join(", ")))
            .collect(),
    }
}

#[tokio::test]
async fn sqlite_and_postgres_schemas_have_the_same_tables_columns_and_indexes() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let sqlite = Db::open_sqlite(&dir.path().join("arbiter.db"))
        .await
        .expect("SQLite opens and migrates");
    let sqlite = sqlite_schema(&sqlite).await;
    assert!(
        sqlite.tables.contains("matches") && sqlite.indexes.len() >= 3,
        "{sqlite:#?}"
    );

    if std::env::var_os(TEST_PG_URL).is_none_or(|url| url.is_empty()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must set TEST_PG_URL: the schemas are not compared"
        );
        eprintln!("TEST_PG_URL is not set: only the SQLite schema was read");
        return;
    }
    let database = PgDatabase::create().await;
    let postgres = Db::connect(&database.url)
        .await
        .expect("PostgreSQL connects and migrates");
    let postgres = postgres_schema(&postgres).await;

    let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.difference(b).cloned().collect::<Vec<_>>();
    assert_eq!(
        (
            only(&sqlite.tables, &postgres.tables),
            only(&postgres.tables, &sqlite.tables)
        ),
        (vec![], vec![]),
        "tables only in SQLite, only in PostgreSQL"
    );
    assert_eq!(
        (
            only(&sqlite.columns, &postgres.columns),
            only(&postgres.columns, &sqlite.columns)
        ),
        (vec![], vec![]),
        "columns only in SQLite, only in PostgreSQL"
    );
    assert_eq!(
        (
            only(&sqlite.indexes, &postgres.indexes),
            only(&postgres.indexes, &sqlite.indexes)
        ),
        (vec![], vec![]),
        "indexes only in SQLite, only in PostgreSQL"
    );
    eprintln!(
        "{} tables, {} columns, {} indexes alike",
        sqlite.tables.len(),
        sqlite.columns.len(),
        sqlite.indexes.len()
    );
}
