//! A measuring probe for the end-to-end benchmark, not an importer: what
//! MariaDB gives a client whose bulk inserts cost it next to nothing.
//!
//! Each TSV file (LOAD DATA's default format, as `xml_to_tsv` writes it)
//! is loaded on a connection of its own, all at once, as
//! `COM_STMT_BULK_EXECUTE` packets built straight from the file's bytes: no
//! driver, no owned value per field, and with `DEPTH` statements sent ahead
//! of the server's replies (0: wait for each reply, as the `mysql` crate
//! does). It commits every 4,000 rows and runs with `autocommit=0`, so a
//! pipelined statement never commits on its own. It speaks only what the
//! benchmark's server needs: plain TCP, a user without a password
//! (`mysql_native_password`), a MariaDB server with bulk operations; any
//! error ends it.
//!
//! Run: `cargo run --release -p ringpipe-tools --bin bulk_wire_probe -- mysql://root@127.0.0.1:3306/test TABLE COL1,COL2,... DEPTH A.tsv [B.tsv ...]`

use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

use ringpipe_mysql::Ident;

type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

/// Rows per bulk statement, as the importer's default statement cap.
const ROWS_PER_STATEMENT: usize = 2_000;
/// Statements per transaction.
const STATEMENTS_PER_COMMIT: usize = 2;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, table, columns, depth, files @ ..] = args.as_slice() else {
        return Err(
            "usage: bulk_wire_probe URL TABLE COL1,COL2,... DEPTH A.tsv [B.tsv ...]".into(),
        );
    };
    let target = Target::parse(url, table, columns)?;
    let depth: usize = depth.parse()?;
    std::thread::scope(|scope| {
        let loads: Vec<_> = files
            .iter()
            .map(|file| scope.spawn(|| load(&target, depth, file)))
            .collect();
        loads
            .into_iter()
            .try_for_each(|load| load.join().map_err(|_| "a load panicked")?)
    })
}

/// Where to connect and what to insert.
struct Target {
    address: String,
    user: String,
    database: String,
    insert: String,
    columns: usize,
}

impl Target {
    fn parse(url: &str, table: &str, columns: &str) -> Result<Target> {
        let opts = mysql::Opts::from_url(url)?;
        if opts.get_pass().is_some_and(|p| !p.is_empty()) {
            return Err("the probe sends no password: use a user without one".into());
        }
        let names = columns
            .split(',')
            .map(|name| Ident::new(name).map(|id| id.quoted().to_owned()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let marks = vec!["?"; names.len()].join(",");
        Ok(Target {
            address: format!("{}:{}", opts.get_ip_or_hostname(), opts.get_tcp_port()),
            user: opts.get_user().unwrap_or("root").to_owned(),
            database: opts.get_db_name().unwrap_or("test").to_owned(),
            insert: format!(
                "INSERT INTO {} ({}) VALUES ({marks})",
                Ident::new(table)?,
                names.join(",")
            ),
            columns: names.len(),
        })
    }
}

/// Loads one TSV file on a connection of its own.
fn load(target: &Target, depth: usize, file: &str) -> Result<()> {
    let mut wire = Wire::connect(target)?;
    wire.query("SET autocommit=0")?;
    let statement = wire.prepare(&target.insert, target.columns)?;
    let mut input = BufReader::with_capacity(1 << 20, std::fs::File::open(file)?);
    let mut line = Vec::new();
    let mut body = Vec::new();
    // Statements sent since the last COMMIT.
    let (mut in_flight, mut uncommitted, mut done) = (0, 0, false);
    while !done {
        body.clear();
        body.push(0xFA); // COM_STMT_BULK_EXECUTE
        body.extend_from_slice(&statement.to_le_bytes());
        body.extend_from_slice(&128u16.to_le_bytes()); // types follow
        (0..target.columns).for_each(|_| body.extend_from_slice(&[253, 0])); // VAR_STRING
        let mut rows = 0;
        while rows < ROWS_PER_STATEMENT {
            line.clear();
            if input.read_until(b'\n', &mut line)? == 0 {
                done = true;
                break;
            }
            let fields = line.strip_suffix(b"\n").unwrap_or(&line);
            let mut count = 0;
            for field in fields.split(|&b| b == b'\t') {
                push_field(&mut body, field);
                count += 1;
            }
            if count != target.columns {
                return Err(format!("{file}: a line with {count} fields").into());
            }
            rows += 1;
        }
        if rows > 0 {
            wire.command(&body)?;
            in_flight += 1;
            uncommitted += 1;
        }
        // At the end even when the input ended with a full statement.
        if uncommitted == STATEMENTS_PER_COMMIT || (done && uncommitted > 0) {
            wire.command(b"\x03COMMIT")?;
            in_flight += 1;
            uncommitted = 0;
        }
        while in_flight > depth || (done && in_flight > 0) {
            wire.expect_ok()?;
            in_flight -= 1;
        }
    }
    Ok(())
}

/// One field of the bulk packet: NULL indicator, or a length-encoded string
/// with LOAD DATA's escapes undone.
fn push_field(out: &mut Vec<u8>, field: &[u8]) {
    if field == b"\\N" {
        out.push(1);
        return;
    }
    out.push(0);
    if !field.contains(&b'\\') {
        push_length(out, field.len());
        out.extend_from_slice(field);
        return;
    }
    let mut value = Vec::with_capacity(field.len());
    let mut bytes = field.iter();
    while let Some(&b) = bytes.next() {
        value.push(match (b, bytes.clone().next()) {
            (b'\\', Some(&escaped)) => {
                bytes.next();
                match escaped {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'0' => 0,
                    b'Z' => 0x1A,
                    other => other,
                }
            }
            _ => b,
        });
    }
    push_length(out, value.len());
    out.extend_from_slice(&value);
}

/// A length-encoded integer.
fn push_length(out: &mut Vec<u8>, n: usize) {
    match n {
        0..=250 => out.push(n as u8),
        251..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        _ => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
    }
}

/// Packets over one connection.
struct Wire {
    stream: TcpStream,
    sequence: u8,
    out: Vec<u8>,
}

impl Wire {
    fn connect(target: &Target) -> Result<Wire> {
        let stream = TcpStream::connect(&target.address)?;
        stream.set_nodelay(true)?;
        let mut wire = Wire {
            stream,
            sequence: 0,
            out: Vec::new(),
        };
        let greeting = wire.read()?;
        // Protocol 10: version NUL, thread id (4), scramble (8), NUL,
        // capabilities low (2), collation, status (2), capabilities high (2).
        let at = 1 + greeting[1..]
            .iter()
            .position(|&b| b == 0)
            .ok_or("bad greeting")?;
        let field = |i: usize| greeting.get(at + i).copied().ok_or("short greeting");
        let server = u32::from_le_bytes([field(14)?, field(15)?, field(19)?, field(20)?]);
        const LONG_FLAG_PROTOCOL_41: u32 = 0x200;
        const TRANSACTIONS: u32 = 0x2000;
        const SECURE_CONNECTION: u32 = 0x8000;
        const CONNECT_WITH_DB: u32 = 0x8;
        const PLUGIN_AUTH: u32 = 0x8_0000;
        let wanted = LONG_FLAG_PROTOCOL_41
            | TRANSACTIONS
            | SECURE_CONNECTION
            | CONNECT_WITH_DB
            | PLUGIN_AUTH;
        let mut reply = (wanted & server).to_le_bytes().to_vec();
        reply.extend_from_slice(&(16u32 << 20).to_le_bytes()); // max packet
        reply.push(45); // utf8mb4_general_ci
        reply.extend_from_slice(&[0; 19]);
        reply.extend_from_slice(&4u32.to_le_bytes()); // MARIADB_CLIENT_STMT_BULK_OPERATIONS
        for text in [&target.user, "", &target.database, "mysql_native_password"] {
            reply.extend_from_slice(text.as_bytes());
            reply.push(0); // NUL-ended; the empty auth response is its length, 0
        }
        wire.sequence = 1;
        wire.write(&reply, false)?;
        wire.expect_ok()?;
        Ok(wire)
    }

    /// Sends a command without waiting for its reply.
    fn command(&mut self, body: &[u8]) -> Result<()> {
        self.write(body, true)
    }

    fn write(&mut self, body: &[u8], new_command: bool) -> Result<()> {
        if new_command {
            self.sequence = 0;
        }
        self.out.clear();
        let mut rest = body;
        loop {
            let n = rest.len().min(0xFF_FFFF);
            let len = (n as u32).to_le_bytes();
            self.out
                .extend_from_slice(&[len[0], len[1], len[2], self.sequence]);
            self.sequence = self.sequence.wrapping_add(1);
            self.out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if n < 0xFF_FFFF {
                break;
            }
        }
        Ok(self.stream.write_all(&self.out)?)
    }

    fn read(&mut self) -> Result<Vec<u8>> {
        let mut header = [0; 4];
        self.stream.read_exact(&mut header)?;
        let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        self.sequence = header[3].wrapping_add(1);
        let mut packet = vec![0; len];
        self.stream.read_exact(&mut packet)?;
        Ok(packet)
    }

    fn expect_ok(&mut self) -> Result<()> {
        let packet = self.read()?;
        match packet.first() {
            Some(0) => Ok(()),
            Some(0xFF) if packet.len() > 3 => {
                let code = u16::from_le_bytes([packet[1], packet[2]]);
                Err(format!(
                    "server error {code}: {}",
                    String::from_utf8_lossy(&packet[3..])
                )
                .into())
            }
            _ => Err("unexpected reply (an authentication switch, or a result set)".into()),
        }
    }

    fn query(&mut self, sql: &str) -> Result<()> {
        self.command(&[b"\x03", sql.as_bytes()].concat())?;
        self.expect_ok()
    }

    /// Prepares `sql` of `params` placeholders; the statement id.
    fn prepare(&mut self, sql: &str, params: usize) -> Result<u32> {
        self.command(&[b"\x16", sql.as_bytes()].concat())?;
        let reply = self.read()?;
        if reply.first() != Some(&0) || reply.len() < 9 {
            return Err(format!("preparing failed: {}", String::from_utf8_lossy(&reply)).into());
        }
        let id = u32::from_le_bytes([reply[1], reply[2], reply[3], reply[4]]);
        let declared = u16::from_le_bytes([reply[7], reply[8]]) as usize;
        if declared != params {
            return Err(format!("the statement has {declared} placeholders, not {params}").into());
        }
        for _ in 0..=params {
            self.read()?; // each parameter's definition, then EOF
        }
        Ok(id)
    }
}
