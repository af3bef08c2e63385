//! Evaluating field paths ([`crate::path`]) while the record streams past.
//!
//! Each path is a chain of steps from the record element. An entry
//! `(depth, path, step)` in `active` says: an element at `depth` matched
//! the steps before `step`, so its children may match `step`. Entries are
//! pushed in depth order and popped as elements close, so the state is
//! bounded by the record's nesting times the number of paths. An
//! ancestor's attribute (`../@type`) is kept, per depth, for the open
//! elements outside records only for the attributes some path asks for.

use crate::diagnose::Located;
use crate::namespaces::Namespaces;
use crate::path::{Path, Predicate, Terminal};
use crate::qname::NameTest;
use crate::tag::Tag;
use crate::text::{self, DeclaredEntities};

/// What a path selected, for the record reader to store.
#[derive(Debug)]
pub(crate) enum Hit<'a> {
    /// For `column`, the attribute `name`'s raw value (references
    /// unexpanded), which starts `at` bytes from the tag's `<`.
    Raw {
        column: usize,
        name: &'a str,
        raw: &'a str,
        at: usize,
    },
    /// An ancestor's attribute value for `column`, already expanded: read
    /// it with [`PathEval::ancestor_value`]`(depth_index, slot)` (kept
    /// where it is, not copied per record).
    Ancestor {
        column: usize,
        depth_index: usize,
        slot: usize,
    },
    /// The text of the element `name` at `depth` goes to `column`.
    Text {
        column: usize,
        name: &'a str,
        depth: usize,
    },
}

/// The compiled paths and the streaming state.
#[derive(Debug, Default)]
pub(crate) struct PathEval {
    /// Paths from the record, with their column.
    relative: Vec<(Path, usize)>,
    /// `(levels up, attribute, column)`.
    ancestral: Vec<(usize, NameTest, usize)>,
    /// For each depth outside records (index `depth - 1`), the values of
    /// the `ancestral` attributes on the element open there.
    ancestors: Vec<Vec<Option<String>>>,
    /// `(depth, path, next step)`.
    active: Vec<(usize, usize, usize)>,
    max_attributes: usize,
    /// Reused for attribute values that predicates compare.
    scratch: String,
}

impl PathEval {
    /// The evaluator of `paths` (`(path, column)`).
    pub(crate) fn new(paths: Vec<(Path, usize)>, max_attributes: usize) -> Self {
        let mut eval = PathEval {
            max_attributes,
            ..PathEval::default()
        };
        for (path, column) in paths {
            match path.ancestor_attribute() {
                Some(name) => eval.ancestral.push((path.up, name.clone(), column)),
                None => eval.relative.push((path, column)),
            }
        }
        eval
    }

    /// Whether there are no paths at all (the reader's fast path).
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.relative.is_empty() && self.ancestral.is_empty()
    }

    /// An element outside any record opened at `depth`: keeps the
    /// attributes ancestor paths may ask for.
    pub(crate) fn outside(
        &mut self,
        tag: &Tag<'_>,
        depth: usize,
        scope: &Namespaces,
        declared: &DeclaredEntities,
    ) -> Result<(), Located> {
        if self.ancestral.is_empty() {
            return Ok(());
        }
        self.ancestors
            .resize_with(self.ancestors.len().max(depth), Vec::new);
        let mut values = vec![None; self.ancestral.len()];
        tag.for_each_attribute(self.max_attributes, |attribute, at| {
            for (i, (_, name, _)) in self.ancestral.iter().enumerate() {
                if name.matches(attribute.key, true, scope) {
                    let mut value = String::new();
                    text::push_attribute_value(attribute.value, declared, &mut value).map_err(
                        |(offset, e)| crate::diagnose::ref_fault(attribute.value, offset, at, e),
                    )?;
                    values[i] = Some(value);
                }
            }
            Ok(())
        })?;
        self.ancestors[depth - 1] = values;
        Ok(())
    }

    /// The record element opened at `depth`: its own attributes and text,
    /// and the ancestors' attributes.
    pub(crate) fn record<'a>(
        &mut self,
        tag: &Tag<'a>,
        depth: usize,
        scope: &Namespaces,
        mut hit: impl FnMut(Hit<'a>) -> Result<(), Located>,
    ) -> Result<(), Located> {
        self.active.clear();
        for (slot, (up, _, column)) in self.ancestral.iter().enumerate() {
            let Some(depth_index) = depth.checked_sub(1 + up) else {
                continue;
            };
            if self.ancestor_value(depth_index, slot).is_some() {
                hit(Hit::Ancestor {
                    column: *column,
                    depth_index,
                    slot,
                })?;
            }
        }
        for (index, (path, column)) in self.relative.iter().enumerate() {
            if path.steps.is_empty() {
                select(
                    tag,
                    &path.terminal,
                    *column,
                    depth,
                    scope,
                    self.max_attributes,
                    &mut hit,
                )?;
            } else {
                self.active.push((depth, index, 0));
            }
        }
        Ok(())
    }

    /// The value of the ancestor attribute `slot` kept for the element
    /// open at depth `depth_index + 1`, if it had one.
    pub(crate) fn ancestor_value(&self, depth_index: usize, slot: usize) -> Option<&str> {
        self.ancestors.get(depth_index)?.get(slot)?.as_deref()
    }

    /// An element inside the record opened at `depth`; returns whether a
    /// path took it (so that strict mode does not call it unknown).
    pub(crate) fn element<'a>(
        &mut self,
        tag: &Tag<'a>,
        depth: usize,
        scope: &Namespaces,
        declared: &DeclaredEntities,
        mut hit: impl FnMut(Hit<'a>) -> Result<(), Located>,
    ) -> Result<bool, Located> {
        let mut taken = false;
        let end = self.active.len();
        for i in 0..end {
            let (at_depth, index, step) = self.active[i];
            if at_depth + 1 != depth {
                continue;
            }
            let (path, column) = &self.relative[index];
            let this = &path.steps[step];
            if !this.name.matches(tag.name(), false, scope)
                || !predicates_hold(
                    tag,
                    &this.predicates,
                    (scope, declared),
                    self.max_attributes,
                    &mut self.scratch,
                )?
            {
                continue;
            }
            taken = true;
            if step + 1 < path.steps.len() {
                self.active.push((depth, index, step + 1));
            } else {
                select(
                    tag,
                    &path.terminal,
                    *column,
                    depth,
                    scope,
                    self.max_attributes,
                    &mut hit,
                )?;
            }
        }
        Ok(taken)
    }

    /// The element at `depth` closed.
    #[inline]
    pub(crate) fn close(&mut self, depth: usize) {
        while self.active.last().is_some_and(|(d, _, _)| *d >= depth) {
            self.active.pop();
        }
    }

    /// Whether an attribute of the record element is taken by a path
    /// (`@name` from the record).
    pub(crate) fn takes_record_attribute(&self, key: &str, scope: &Namespaces) -> bool {
        self.relative.iter().any(|(path, _)| {
            path.steps.is_empty()
                && matches!(&path.terminal, Terminal::Attribute(name) if name.matches(key, true, scope))
        })
    }
}

/// Reports what `terminal` selects on the element `tag` at `depth`.
fn select<'a>(
    tag: &Tag<'a>,
    terminal: &Terminal,
    column: usize,
    depth: usize,
    scope: &Namespaces,
    max_attributes: usize,
    hit: &mut impl FnMut(Hit<'a>) -> Result<(), Located>,
) -> Result<(), Located> {
    match terminal {
        Terminal::Text => hit(Hit::Text {
            column,
            name: tag.name(),
            depth,
        }),
        Terminal::Attribute(name) => tag.for_each_attribute(max_attributes, |attribute, at| {
            match name.matches(attribute.key, true, scope) {
                true => hit(Hit::Raw {
                    column,
                    name: attribute.key,
                    raw: attribute.value,
                    at,
                }),
                false => Ok(()),
            }
        }),
    }
}

/// Whether every predicate holds for `tag`'s attributes.
/// `value` is a reused buffer for the attribute values compared.
fn predicates_hold(
    tag: &Tag<'_>,
    predicates: &[Predicate],
    (scope, declared): (&Namespaces, &DeclaredEntities),
    max_attributes: usize,
    value: &mut String,
) -> Result<bool, Located> {
    for predicate in predicates {
        let name = match predicate {
            Predicate::Equals(name, _) | Predicate::Absent(name) => name,
        };
        let mut found: Option<bool> = None;
        tag.for_each_attribute(max_attributes, |attribute, at| {
            if name.matches(attribute.key, true, scope) {
                value.clear();
                text::push_attribute_value(attribute.value, declared, value).map_err(
                    |(offset, e)| crate::diagnose::ref_fault(attribute.value, offset, at, e),
                )?;
                found = Some(match predicate {
                    Predicate::Equals(_, want) => *value == *want,
                    Predicate::Absent(_) => false,
                });
            }
            Ok(())
        })?;
        let holds = match predicate {
            Predicate::Equals(..) => found == Some(true),
            Predicate::Absent(_) => found.is_none(),
        };
        if !holds {
            return Ok(false);
        }
    }
    Ok(true)
}
