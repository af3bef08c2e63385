//! One token applied to the document and the record: the body of the
//! source's pull loop.

use std::sync::Arc;

use ringpipe_pipeline::Row;

use crate::diagnose::Located;
use crate::document::Document;
use crate::lexer::Token;
use crate::record::{Opened, RecordReader};
use crate::region::{Boundary, Plan};

/// Where a source's input ends.
pub(super) enum RegionEnd {
    /// At the end of the input: the document must be complete.
    Input,
    /// Where the plan's boundary `k` starts the next region (or at the end
    /// of the input, if the plan found no such boundary).
    Planned(Arc<Plan>, usize),
}

impl RegionEnd {
    /// Where the next region starts, for a region that stops there: the
    /// elements that must be open at the end and the records that must
    /// have been read. (A failed plan failed the region's reads before its
    /// end.)
    pub(super) fn next_start(&self) -> Option<Boundary> {
        match self {
            RegionEnd::Input => None,
            RegionEnd::Planned(plan, k) => plan.point(*k).ok().flatten(),
        }
    }
}

/// What one token meant for the caller's loop.
pub(super) enum Step {
    /// Nothing for the caller.
    Continue,
    /// A record's start tag: its position is the current token's.
    RecordStart,
    /// A record's end tag: the row is complete.
    RecordEnd,
    /// A record in one empty-element tag `<row a="1"/>`.
    WholeRecord,
    /// End of input.
    End,
}

/// Applies one token to the document and record state.
#[inline]
pub(super) fn step(
    token: Token<'_>,
    document: &mut Document,
    record: &mut RecordReader,
    row: &mut Row,
    region_end: &RegionEnd,
) -> Result<Step, Located> {
    let result = match token {
        Token::Start(tag) => {
            document.open(&tag)?;
            match record.open(&tag, document.depth(), row, document)? {
                Opened::Record => Step::RecordStart,
                Opened::Other => Step::Continue,
            }
        }
        Token::Empty(tag) => {
            document.open(&tag)?;
            let opened = record.open(&tag, document.depth(), row, document)?;
            let ended = record.close(document.depth(), row)?;
            document.close(tag.name())?;
            debug_assert_eq!(ended, opened == Opened::Record);
            match opened {
                Opened::Record => Step::WholeRecord,
                Opened::Other => Step::Continue,
            }
        }
        Token::End(name) => {
            let depth = document.depth();
            document.close(name)?;
            if record.close(depth, row)? {
                Step::RecordEnd
            } else {
                Step::Continue
            }
        }
        Token::Text { raw, plain, cr } => {
            document.text(raw, "text")?;
            let text = (raw, plain, cr);
            record.content(text, document.depth(), row, &document.declared)?;
            Step::Continue
        }
        Token::CData(cdata) => {
            document.text(cdata, "CDATA")?;
            record.text(cdata, document.depth(), row)?;
            Step::Continue
        }
        Token::Decl(content) => {
            document.declaration(content)?;
            Step::Continue
        }
        Token::DocType(doctype) => {
            document.doctype(doctype)?;
            Step::Continue
        }
        Token::Ignored => Step::Continue,
        Token::Eof => {
            match region_end.next_start() {
                Some(next) => document.end_of_region(&next.open)?,
                None => document.end()?,
            }
            Step::End
        }
    };
    document.event();
    Ok(result)
}
