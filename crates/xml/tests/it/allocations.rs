//! Memory per record: once its buffers have grown to the largest values,
//! reading a record allocates nothing, in every row form and with field
//! paths (predicates, ancestor attributes, text).
//!
//! The test binary's allocator counts the allocations of each thread, so
//! that the tests running beside this one do not disturb its count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ringpipe_pipeline::{Row, Source};
use ringpipe_xml::{XmlConfig, XmlSource};

/// [`System`], counting allocations per thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // A constant-initialised `Cell` needs no allocation and no destructor,
    // so this is safe inside the allocator; `try_with` only fails while
    // the thread is being torn down, when nothing is counted.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded to `System` with the caller's arguments
// unchanged; counting touches only a thread-local `Cell`.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller's contract for `alloc` is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout` (every allocation
        // here does).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as for `dealloc`; `new_size` is the caller's, checked by
        // the caller's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Allocations while reading records `warm + 1 ..= warm + counted` of
/// `xml` (the first `warm` records grow the buffers).
fn allocations_per_records(xml: String, config: XmlConfig, warm: usize, counted: usize) -> u64 {
    let columns = config.columns().len();
    let mut source = XmlSource::from_reader("t.xml", std::io::Cursor::new(xml), config).unwrap();
    let mut row = Row::with_columns(columns);
    for _ in 0..warm {
        assert!(source.next_row(&mut row).unwrap());
    }
    let before = allocations();
    for _ in 0..counted {
        assert!(source.next_row(&mut row).unwrap());
    }
    allocations() - before
}

/// `records` nodes of the same shape, values of one length.
fn osm(records: usize) -> String {
    let mut xml = String::from("<osm>\n<group type=\"city\">\n");
    for i in 0..records {
        xml.push_str(&format!(
            "<node id=\"{:06}\" lat=\"52.52\"><tag k=\"name\" v=\"Berlin {:06}\"/>\
             <tag k=\"place\" v=\"city\"/><note>n&amp;{:06}</note></node>\n",
            i, i, i
        ));
    }
    xml.push_str("</group>\n</osm>\n");
    xml
}

#[test]
fn a_record_allocates_nothing_once_the_buffers_have_grown() {
    let xml = osm(1200);
    let plain = XmlConfig::new("node", ["id", "lat", "note"]);
    assert_eq!(allocations_per_records(xml.clone(), plain, 100, 1000), 0);
    let paths = XmlConfig::new("node", ["id", "name", "kind", "note"])
        .field("name", "tag[@k='name']/@v")
        .field("kind", "../@type")
        .field("note", "note/text()");
    assert_eq!(allocations_per_records(xml, paths, 100, 1000), 0);
    // The mysqldump form: `<field name="…">` names are expanded into a
    // reused buffer.
    let mut dump = String::from("<mysqldump><database><table_data name=\"t\">\n");
    for i in 0..1200 {
        dump.push_str(&format!(
            "<row><field name=\"id\">{i:06}</field><field name=\"note\">x&lt;{i:06}</field></row>\n"
        ));
    }
    dump.push_str("</table_data></database></mysqldump>\n");
    let fields = XmlConfig::new("row", ["id", "note"]);
    assert_eq!(allocations_per_records(dump, fields, 100, 1000), 0);
}
