//! Reading one plain file as several regions, each its own source, that
//! can be parsed in parallel.

use std::io;
use std::path::Path;
use std::sync::Arc;

use ringpipe_pipeline::{Row, Source};

use crate::config::{XmlConfig, TOKEN_SLACK};
use crate::document::Document;
use crate::error::{ErrorPosition, XmlError};
use crate::input::Counting;
use crate::lexer::Lexer;
use crate::region::{self, PendingRegion, RegionReader};
use crate::window::Window;
use ringpipe_pipeline::ColumnUsage;

use super::step::RegionEnd;
use super::{check_config, XmlSource};

impl XmlSource {
    /// Splits the plain file at `path` into at most `regions` regions that
    /// can be parsed in parallel, one source each, in file order.
    ///
    /// Each region starts at a record's start tag, at or after an equal
    /// share of the file's bytes; its rows carry the positions and record
    /// numbers of the whole file. The split points are found on a thread of
    /// their own, by a scan of the file with the lexer alone, while the
    /// first region already reads; a later region starts on its first
    /// `next_row` once its split point is known. For progress, the first
    /// source reports the whole file's size as its total and the others
    /// none, so the sum of the sources' readings is the file's.
    ///
    /// Gzip, stdin, pipes and input in another encoding than UTF-8 come
    /// back as one source. When the records run out before a split point (or the markup
    /// before it is malformed), the regions from there on emit nothing and
    /// the one before them reads on to the end of the file.
    ///
    /// # Errors
    ///
    /// As for [`XmlSource::open`].
    ///
    /// # Examples
    ///
    /// ```
    /// use ringpipe_pipeline::{Row, Source};
    /// use ringpipe_xml::{XmlConfig, XmlSource};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("rows.xml");
    /// let rows: String = (1..=100).map(|i| format!("<row><id>{i}</id></row>\n")).collect();
    /// std::fs::write(&path, format!("<rows>\n{rows}</rows>\n"))?;
    ///
    /// let regions = XmlSource::open_regions(&path, XmlConfig::new("row", ["id"]), 2)?;
    /// assert_eq!(regions.len(), 2);
    /// let mut ids = Vec::new();
    /// for mut source in regions {
    ///     let mut row = Row::with_columns(1);
    ///     while source.next_row(&mut row)? {
    ///         ids.push(row.text(0).unwrap().parse::<u32>()?);
    ///     }
    /// }
    /// assert_eq!(ids, (1..=100).collect::<Vec<_>>());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_regions(
        path: impl AsRef<Path>,
        config: XmlConfig,
        regions: usize,
    ) -> Result<Vec<Self>, XmlError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        check_config(&name, &config)?;
        let io_error = |source| XmlError::Io {
            position: ErrorPosition::input_only(&name),
            source,
        };
        // Only a regular file can be read from several places: a pipe
        // (stdin, `<(zcat …)`) would lose what a look at it consumed.
        let file = path.as_os_str() != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file());
        if regions <= 1 || !file || !region::splittable(path).map_err(io_error)? {
            return Ok(vec![Self::open(path, config)?]);
        }
        let size = std::fs::metadata(path).map_err(io_error)?.len();
        let plan = region::plan(path, size, &config, regions).map_err(io_error)?;
        let usage = ColumnUsage::new(config.columns());
        let whole = || Some(Box::new((path.to_owned(), config.clone())));
        let mut first = Self::first_region(path, size, &config, &usage, &plan)?;
        first.whole = whole();
        let mut sources = vec![first];
        for index in 1..regions {
            let mut source = Self::build(
                name.clone(),
                Box::new(io::empty()),
                false,
                None,
                config.clone(),
                usage.clone(),
            )?;
            source.whole = whole();
            source.pending = Some(PendingRegion {
                path: path.to_owned(),
                plan: Arc::clone(&plan),
                index,
                regions,
                config: config.clone(),
            });
            sources.push(source);
        }
        Ok(sources)
    }

    /// The fault a region stopped at, as one source reading the whole
    /// input reports it.
    ///
    /// A region reads from a split point to the next, which the plan found
    /// by passing over records' content without checking it. In a
    /// well-formed document the two agree, and a fault inside a region is
    /// where one source finds it. In a malformed one the plan may misread
    /// the fault's surroundings and put a split point where the parser
    /// sees none: the region then fails at its end (the input ending inside
    /// a token, or another state or record count than the plan's), where
    /// one source would have named the fault itself. So a region's fault
    /// in the document is checked against one source's read of the whole
    /// input, and that source's first fault is the one reported (only on
    /// this error path does the input get read twice). A fault of reading
    /// (I/O) or of the configuration stays as it is, and so does the
    /// region's own when the whole input reads without a fault (a fault of
    /// the plan, which the region's message names).
    pub(super) fn fault_as_one_source(&mut self, fault: XmlError) -> XmlError {
        if matches!(fault, XmlError::Io { .. } | XmlError::Config { .. }) {
            return fault;
        }
        let Some(whole) = self.whole.take() else {
            return fault;
        };
        let (path, config) = *whole;
        let Ok(mut source) = Self::open(&path, config) else {
            return fault;
        };
        let mut row = Row::with_columns(source.columns().len());
        loop {
            match source.next_row(&mut row) {
                Ok(true) => {}
                Ok(false) | Err(XmlError::Io { .. }) => return fault,
                Err(first) => return first,
            }
        }
    }

    /// The first region of the `size`-byte file at `path`, which ends
    /// where `plan`'s first split point starts the second.
    fn first_region(
        path: &Path,
        size: u64,
        config: &XmlConfig,
        usage: &ColumnUsage,
        plan: &Arc<region::Plan>,
    ) -> Result<Self, XmlError> {
        let name = path.display().to_string();
        let head = RegionReader::new(path, 0, Some((Arc::clone(plan), 0))).map_err(|source| {
            XmlError::Io {
                position: ErrorPosition::input_only(&name),
                source,
            }
        })?;
        let mut first = Self::build(
            name,
            Box::new(head),
            false,
            Some(size),
            config.clone(),
            usage.clone(),
        )?;
        first.region_end = RegionEnd::Planned(Arc::clone(plan), 0);
        Ok(first)
    }

    /// Starts a later region once the plan knows where: `Ok(false)` when
    /// the plan found fewer regions (this one is then empty).
    pub(super) fn start_region(&mut self, pending: PendingRegion) -> Result<bool, XmlError> {
        let PendingRegion {
            path,
            plan,
            index,
            regions,
            config,
        } = pending;
        let point = plan.point(index - 1).map_err(|source| XmlError::Io {
            position: ErrorPosition::input_only(&self.name),
            source,
        })?;
        let Some(boundary) = point else {
            return Ok(false);
        };
        let next = (index + 1 < regions).then(|| (Arc::clone(&plan), index));
        let reader = RegionReader::new(&path, boundary.at.offset(), next).map_err(|source| {
            XmlError::Io {
                position: ErrorPosition::input_only(&self.name),
                source,
            }
        })?;
        let raw_bytes = Arc::clone(&self.raw_bytes);
        let counted = Box::new(Counting::new(reader, raw_bytes));
        let limits = config.limits();
        let window = Window::starting_at(
            counted,
            boundary.at,
            limits.max_value_bytes + TOKEN_SLACK,
            limits.max_value_bytes as u64,
        );
        self.lexer = Lexer::new(window);
        self.document = Document::resumed(
            limits.max_depth,
            limits.max_attributes,
            &boundary.open,
            boundary.declared,
            boundary.namespaces,
        );
        if boundary
            .open
            .first()
            .is_some_and(|root| root == "mysqldump")
        {
            self.record.keep_line_ends();
        }
        self.records = boundary.records_before;
        self.first_record = boundary.records_before;
        if index + 1 < regions {
            self.region_end = RegionEnd::Planned(plan, index);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use ringpipe_pipeline::{Row, Source};

    use super::*;
    use crate::region::{Boundary, Plan};

    /// The first region of `path` read against a plan whose split point
    /// is the real one with `records_before` moved by `shift`: its rows,
    /// and how it ended.
    fn read_against(path: &Path, shift: i64) -> (u64, Result<(), XmlError>) {
        let config = XmlConfig::new("row", ["id"]);
        let size = std::fs::metadata(path).unwrap().len();
        let real = region::plan(path, size, &config, 2).unwrap();
        let real = real.point(0).unwrap().expect("a split point");
        let doctored = Boundary {
            records_before: real.records_before.checked_add_signed(shift).unwrap(),
            ..real
        };
        let plan =
            Plan::start(io::empty(), size, 0, 2, move |_, _, found| found(doctored)).unwrap();
        let usage = ColumnUsage::new(config.columns());
        let mut first = XmlSource::first_region(path, size, &config, &usage, &plan).unwrap();
        let (mut rows, mut row) = (0, Row::with_columns(1));
        loop {
            match first.next_row(&mut row) {
                Ok(true) => rows += 1,
                Ok(false) => return (rows, Ok(())),
                Err(error) => return (rows, Err(error)),
            }
        }
    }

    #[test]
    fn a_region_must_end_after_the_records_the_plan_counted_before_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.xml");
        let rows: String = (1..=100)
            .map(|i| format!("<row><id>{i}</id></row>\n"))
            .collect();
        std::fs::write(&path, format!("<rows>\n{rows}</rows>\n")).unwrap();

        let (read, ended) = read_against(&path, 0);
        assert!(ended.is_ok(), "{ended:?}");
        assert!((1..100).contains(&read), "{read}");
        for shift in [-1, 1] {
            let (_, ended) = read_against(&path, shift);
            let error = ended.unwrap_err().to_string();
            assert!(
                error.contains(&format!("the split plan counted {}", read as i64 + shift)),
                "{error}"
            );
        }
    }
}
