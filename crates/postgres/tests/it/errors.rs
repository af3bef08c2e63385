//! How the driver's own errors are told apart: a call it refused before
//! sending (a parameter of another type) leaves the connection as it was
//! and is no reason to replay; a closed connection is.

use ringpipe_pipeline::Retryable;
use ringpipe_postgres::PgError;

use crate::common::client;

fn server(source: postgres::Error) -> PgError {
    PgError::Server {
        context: "testing".into(),
        source,
    }
}

#[test]
fn pg_errors_a_refused_parameter_is_not_retried_a_closed_connection_is() {
    let mut conn = client();
    let misuse = conn.query_one("SELECT $1::int4", &[&"text"]).unwrap_err();
    assert!(misuse.as_db_error().is_none(), "{misuse}");
    let misuse = server(misuse);
    assert!(!misuse.is_retryable() && !misuse.is_row_error(), "{misuse}");
    let column = conn.query_one("SELECT 1::int4", &[]).unwrap();
    let wrong = server(column.try_get::<_, String>(0).unwrap_err());
    assert!(!wrong.is_retryable(), "{wrong}");

    let pid: i32 = conn
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    client()
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .unwrap();
    let gone = server(conn.query_one("SELECT 1", &[]).unwrap_err());
    assert!(gone.is_retryable(), "{gone}");
}
