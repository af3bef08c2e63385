//! A CSV header's fields mapped onto the columns.

use crate::names::{Named, Names};
use crate::{TextConfig, TextError};

/// Which column each header field fills; every column must be named, and
/// a field that names a column only when case is ignored is refused (see
/// [`crate::names`]).
pub(crate) fn map_header(
    header: &[String],
    config: &TextConfig,
    input: &str,
) -> Result<Vec<Option<usize>>, TextError> {
    let mapping = |why: String| TextError::Mapping {
        input: input.to_owned(),
        why,
    };
    let names = Names::new(&config.columns);
    let mut fill = Vec::with_capacity(header.len());
    for (index, name) in header.iter().enumerate() {
        let field = index + 1;
        let column = match names.find(name) {
            Named::Column(column) => Some(column),
            Named::Resembles(column) => {
                let column = names.name(column);
                return Err(mapping(match header.iter().any(|h| h == column) {
                    true => format!(
                        "the header names {column:?} and {name:?} (field {field}), one \
                         column to MySQL, whose column names ignore case"
                    ),
                    false => format!(
                        "the header's {name:?} (field {field}) is not a column: it differs \
                         from the column {column:?} only in case (fields are matched exactly)"
                    ),
                }));
            }
            Named::Nothing if config.strict => {
                return Err(mapping(format!(
                    "the header's {name:?} (field {field}) is not a column"
                )));
            }
            Named::Nothing => None,
        };
        if column.is_some() && fill.contains(&column) {
            return Err(mapping(format!("the header names {name:?} twice")));
        }
        fill.push(column);
    }
    let missing: Vec<&String> = (config.columns.iter().enumerate())
        .filter(|(i, _)| !fill.contains(&Some(*i)))
        .map(|(_, c)| c)
        .collect();
    if !missing.is_empty() {
        return Err(mapping(format!(
            "the header names no field for the column(s) {missing:?}; its fields are \
             {header:?} (choose the columns with --columns / TextConfig::new)"
        )));
    }
    Ok(fill)
}
