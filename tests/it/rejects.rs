//! Bad records across a resume: `--max-bad` holds for the import, not for
//! each run (the records earlier runs set aside count), and an import
//! stopped by it and resumed with a larger budget ends with every bad
//! record in the reject file once (the first run's included) and every
//! other record in the table, into MariaDB and PostgreSQL alike.

use crate::common::{import_into, key_value_table, ringpipe, stderr, Server};

/// Records 5, 25 and 35 hold a value too long for `v varchar(10)`.
fn csv() -> String {
    let mut text = String::from("id,v\n");
    for id in 1..=40 {
        let v = if [5, 25, 35].contains(&id) {
            "much too long"
        } else {
            "ok"
        };
        text.push_str(&format!("{id},{v}\n"));
    }
    text
}

fn keeps_the_first_runs_rejects(server: Server, name: &'static str) {
    let _table = key_value_table(server, name);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("values.csv");
    std::fs::write(&file, csv()).unwrap();
    let rejects = dir.path().join("rejects.tsv");
    let reject_file = rejects.to_str().unwrap();
    let run = |max_bad: &str, more: &[&str]| {
        let args = [
            &["--shards", "1", "--batch-rows", "10", "--max-bad", max_bad][..],
            &["--reject-file", reject_file],
            more,
        ]
        .concat();
        import_into(&file, &server.url(), name, &args)
    };
    // Record 5's batch commits with it diverted; record 25 is one too many.
    let stopped = run("1", &[]);
    assert_eq!(stopped.status.code(), Some(4), "{}", stderr(&stopped));
    assert!(
        stderr(&stopped).contains("record 25"),
        "{}",
        stderr(&stopped)
    );
    let status = ringpipe(&["status", "--url", &server.url(), "--table", name, "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["parts"][0]["diverted"], 1, "{status}");
    let text = ringpipe(&["status", "--url", &server.url(), "--table", name]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(
            "20 records committed by 1 shards (1 of them set aside as bad), not complete"
        ),
        "{text}"
    );
    // Two in all: record 25 fits beside record 5, record 35 does not.
    let again = run("2", &["--resume"]);
    assert_eq!(again.status.code(), Some(4), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("more than 2 bad records (1 of them before the resume); record 35"),
        "{}",
        stderr(&again)
    );
    let resumed = run("3", &["--resume"]);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let text = std::fs::read_to_string(&rejects).unwrap();
    let records: Vec<&str> = text
        .lines()
        .map(|line| line.split('\t').next().unwrap())
        .collect();
    assert_eq!(records, ["5", "25", "35"], "{text}");
    assert_eq!(server.count(name), 37);
}

#[test]
fn mariadb_keeps_the_first_runs_rejects_across_a_resume() {
    keeps_the_first_runs_rejects(Server::Mariadb, "rp_rejects_resume_my");
}

#[test]
fn postgres_keeps_the_first_runs_rejects_across_a_resume() {
    keeps_the_first_runs_rejects(Server::Postgres, "rp_rejects_resume_pg");
}
