//! Shared helpers: the server, a proxy to it, a table that drops itself, a
//! source of rows.

use std::net::{TcpListener, TcpStream};

use postgres::Client;
use ringpipe_pipeline::{RecordPosition, Row, Source};

pub use ringpipe_testdb::{pg_client as client, pg_url as url};

/// A proxy to the test server: each connection made to it is handed to
/// `relay` with a connection of its own to the server. Returns the URL
/// through it.
pub fn proxy(relay: impl Fn(TcpStream, TcpStream) + Send + 'static) -> String {
    let server = url();
    let rest = server.split_once('@').map_or(server.as_str(), |(_, r)| r);
    let (address, database) = rest.split_once('/').unwrap();
    let (user, _) = server
        .trim_start_matches("postgres://")
        .split_once('@')
        .unwrap();
    let address = address.to_owned();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(&address) else {
                return;
            };
            relay(client, server);
        }
    });
    format!("postgres://{user}@127.0.0.1:{port}/{database}")
}

/// A table created by `ddl` (with `{t}` for its name), dropped on drop
/// with its checkpoints.
pub struct Table {
    pub name: String,
    client: Client,
    _guard: ringpipe_testdb::PgTable,
}

impl Table {
    pub fn new(name: &str, ddl: &str) -> Table {
        let guard = ringpipe_testdb::PgTable::fresh(name);
        let mut client = client();
        client.batch_execute(&ddl.replace("{t}", name)).unwrap();
        Table {
            name: name.into(),
            client,
            _guard: guard,
        }
    }

    pub fn exec(&mut self, sql: &str) {
        self.client
            .batch_execute(&sql.replace("{t}", &self.name))
            .unwrap();
    }

    /// Every row as text (`None` for NULL), in the order of `order`.
    pub fn rows(&mut self, columns: &str, order: &str) -> Vec<Vec<Option<String>>> {
        let sql = format!("SELECT {columns} FROM \"{}\" ORDER BY {order}", self.name);
        let rows = self.client.query(&sql, &[]).unwrap();
        rows.iter()
            .map(|row| (0..row.len()).map(|i| row.get(i)).collect())
            .collect()
    }

    /// Row count and a content hash computed by the server.
    pub fn hash(&mut self) -> (i64, String) {
        let sql = format!(
            "SELECT count(*), coalesce(md5(string_agg(t::text, '|' ORDER BY id)), '') FROM \"{}\" t",
            self.name
        );
        let row = self.client.query_one(&sql, &[]).unwrap();
        (row.get(0), row.get(1))
    }

    /// Checkpoint rows of this table not marked complete (an import in
    /// progress or interrupted).
    pub fn checkpoints(&mut self) -> i64 {
        let sql = "SELECT count(*) FROM ringpipe_checkpoint WHERE target_table = $1 \
                   AND NOT complete";
        self.client.query_one(sql, &[&self.name]).unwrap().get(0)
    }

    /// Checkpoint rows of this table marked complete.
    pub fn complete(&mut self) -> i64 {
        let sql = "SELECT count(*) FROM ringpipe_checkpoint WHERE target_table = $1 AND complete";
        self.client.query_one(sql, &[&self.name]).unwrap().get(0)
    }
}

/// One value of a test row.
#[derive(Debug, Clone)]
pub enum Cell {
    Null,
    Text(String),
    Bytes(Vec<u8>),
}

/// A source of fixed rows.
pub struct Rows {
    columns: Vec<String>,
    rows: Vec<Vec<Cell>>,
    next: usize,
}

impl Rows {
    pub fn new(columns: &[&str], rows: Vec<Vec<Cell>>) -> Rows {
        Rows {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
            next: 0,
        }
    }

    /// Rows of text, `None` for NULL.
    pub fn text(columns: &[&str], rows: &[&[Option<&str>]]) -> Rows {
        let rows = rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| v.map_or(Cell::Null, |v| Cell::Text(v.into())))
                    .collect()
            })
            .collect();
        Rows::new(columns, rows)
    }

    /// `n` generated rows `(id, name)`.
    pub fn numbered(n: u64) -> Rows {
        let rows = (1..=n)
            .map(|i| {
                vec![
                    Cell::Text(i.to_string()),
                    Cell::Text(format!("name\t{i}\\'\"")),
                ]
            })
            .collect();
        Rows::new(&["id", "name"], rows)
    }
}

impl Source for Rows {
    type Error = std::io::Error;

    fn columns(&self) -> &[String] {
        &self.columns
    }

    fn next_row(&mut self, row: &mut Row) -> Result<bool, std::io::Error> {
        let Some(cells) = self.rows.get(self.next) else {
            return Ok(false);
        };
        self.next += 1;
        row.clear();
        for (i, cell) in cells.iter().enumerate() {
            match cell {
                Cell::Null => {}
                Cell::Text(text) => row.set(i, text),
                Cell::Bytes(bytes) => row.set_bytes(i, bytes),
            }
        }
        row.set_position(RecordPosition {
            record: self.next as u64,
            line: self.next as u64,
            ..RecordPosition::default()
        });
        Ok(true)
    }
}

/// A type of a test's own: dropped before it is made and when it goes,
/// with the columns of its type.
pub struct Type {
    /// `DOMAIN` or `TYPE`.
    kind: &'static str,
    pub name: &'static str,
}

impl Type {
    /// Drops any `name` left by an earlier run, then runs `create`.
    pub fn new(kind: &'static str, name: &'static str, create: &str) -> Type {
        let made = Type { kind, name };
        drop(Type { kind, name });
        client().batch_execute(create).unwrap();
        made
    }
}

impl Drop for Type {
    fn drop(&mut self) {
        let sql = format!("DROP {} IF EXISTS {} CASCADE", self.kind, self.name);
        let _ = client().batch_execute(&sql);
    }
}
