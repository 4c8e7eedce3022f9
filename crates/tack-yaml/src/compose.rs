//! The composer: libyaml events become a graph of untyped nodes, as PyYAML's C composer
//! (`yaml._yaml.CParser`) builds it.
//!
//! Nodes live in an arena and are named by index; an alias is the index of its anchor's node,
//! so aliased content is shared exactly as PyYAML shares one `Node` object. Tags are resolved
//! here, as the C composer does: an absent tag or the non-specific `!` goes through the
//! implicit resolver with libyaml's `plain_implicit` flag.
//!
//! An alias to a node that is still open (its own ancestor) makes a cycle, as in PyYAML's
//! graph: the document says so (`Document::cyclic`), and `construct` unrolls it (tack's
//! [`crate::Value`] is a tree).
//!
//! This module does not build values; see `construct`.

use std::collections::HashMap;
use std::io::{BufReader, Read};

use libyaml_safer::{Event, EventData, Mark, Parser, ScalarStyle};

use crate::resolve::{Tag, resolve_scalar};

pub(crate) type NodeId = usize;

/// Deeper nesting than this is refused (PyYAML would hit Python's recursion limit near here).
const MAX_DEPTH: usize = 500;

#[derive(Debug)]
pub(crate) struct CNode {
    pub tag: Tag,
    pub start: Mark,
    pub kind: Kind,
}

#[derive(Debug)]
pub(crate) enum Kind {
    Scalar(String),
    Seq(Vec<NodeId>),
    Map(Vec<(NodeId, NodeId)>),
}

impl Kind {
    /// PyYAML's `node.id`, used in its error messages.
    pub(crate) fn id(&self) -> &'static str {
        match self {
            Kind::Scalar(_) => "scalar",
            Kind::Seq(_) => "sequence",
            Kind::Map(_) => "mapping",
        }
    }
}

/// Why composing stopped. Parser errors come from libyaml; the others are the composer's own
/// findings, worded as PyYAML words them (`context`, `problem`).
#[derive(Debug)]
pub(crate) enum ComposeError {
    Parser(libyaml_safer::Error),
    Composer {
        context: Option<&'static str>,
        problem: String,
        mark: Mark,
    },
    /// tack's own refusal (nesting too deep).
    Unsupported {
        message: String,
        mark: Mark,
    },
}

impl From<libyaml_safer::Error> for ComposeError {
    fn from(err: libyaml_safer::Error) -> ComposeError {
        ComposeError::Parser(err)
    }
}

/// The node arena of one document.
#[derive(Debug, Default)]
pub(crate) struct Document {
    pub nodes: Vec<CNode>,
    pub root: NodeId,
    /// An alias names a node it is inside (a cycle `construct` unrolls).
    pub cyclic: bool,
}

/// libyaml reads its input in chunks of this size and checks each chunk's characters before
/// scanning it, which decides whether a stray control character or a syntax error is reported
/// first.
const READ_CHUNK: usize = 16_384;

pub(crate) struct Composer<'a> {
    parser: Parser<BufReader<std::io::Chain<&'a [u8], &'static [u8]>>>,
    /// An event read ahead (PyYAML's `check_event`).
    peeked: Option<Event>,
    /// Where the text ends, when it ends without a line break and the parser reads one
    /// added after it (see [`Composer::new`]).
    padded_at: Option<u64>,
    /// Where the last event ended: where a parser that gave up stopped reading.
    last_mark: Mark,
}

/// What follows in the stream: a document, its end, or a document start after the first.
pub(crate) enum Next {
    Document(Box<Document>),
    End,
}

struct DocBuilder {
    nodes: Vec<CNode>,
    anchors: HashMap<String, NodeId>,
    /// Nodes whose content is still being read: an alias to one of them is a cycle.
    open: Vec<bool>,
    cyclic: bool,
}

impl<'a> Composer<'a> {
    /// A text that ends inside a block scalar without a line break makes libyaml-safer's
    /// scanner panic (`unexpected end of input`; PyYAML reads it). The parser is given a line
    /// break after such a text, and the block scalar that reaches it loses the one it gained
    /// (PyYAML keeps no final break where the text has none).
    pub(crate) fn new(text: &'a str) -> Composer<'a> {
        let ends_open = !text.is_empty() && !text.ends_with(['\n', '\r']);
        let tail: &'static [u8] = if ends_open { b"\n" } else { b"" };
        let mut parser = Parser::new();
        parser.set_input(BufReader::with_capacity(READ_CHUNK, text.as_bytes().chain(tail)));
        let padded_at = ends_open.then_some(text.len() as u64);
        Composer { parser, peeked: None, padded_at, last_mark: Mark::default() }
    }

    fn next_event(&mut self) -> Result<Event, ComposeError> {
        if let Some(event) = self.peeked.take() {
            return Ok(event);
        }
        // libyaml-safer panics on some inputs it has no error for (a tag followed by `,` in a
        // flow collection: its `TODO`); that is this file's error, not the run's end.
        let parser = &mut self.parser;
        let parsed = quiet::guarded(|| parser.parse());
        match parsed {
            Ok(result) => {
                let event = result?;
                self.last_mark = event.end_mark;
                Ok(event)
            }
            Err(said) => Err(ComposeError::Unsupported {
                message: format!(
                    "YAML parsing failed: tack's YAML parser cannot read what follows ({said})."
                ),
                mark: self.last_mark,
            }),
        }
    }

    fn peek(&mut self) -> Result<&Event, ComposeError> {
        if self.peeked.is_none() {
            let event = self.next_event()?;
            self.peeked = Some(event);
        }
        // Filled just above.
        Ok(self.peeked.as_ref().expect("peeked event present"))
    }

    /// Consumes STREAM-START.
    pub(crate) fn start(&mut self) -> Result<(), ComposeError> {
        self.next_event()?;
        Ok(())
    }

    /// The start mark of the next event, and whether it ends the stream.
    pub(crate) fn peek_stream_end(&mut self) -> Result<(bool, Mark), ComposeError> {
        let event = self.peek()?;
        Ok((matches!(event.data, EventData::StreamEnd), event.start_mark))
    }

    /// Composes the next document, or reports the end of the stream.
    pub(crate) fn next_document(&mut self) -> Result<Next, ComposeError> {
        let start = self.next_event()?;
        if matches!(start.data, EventData::StreamEnd) {
            return Ok(Next::End);
        }
        let mut doc = DocBuilder {
            nodes: Vec::new(),
            anchors: HashMap::new(),
            open: Vec::new(),
            cyclic: false,
        };
        let root = self.compose_node(&mut doc, 0)?;
        self.next_event()?; // DOCUMENT-END
        let cyclic = doc.cyclic;
        Ok(Next::Document(Box::new(Document { nodes: doc.nodes, root, cyclic })))
    }

    fn compose_node(&mut self, doc: &mut DocBuilder, depth: usize) -> Result<NodeId, ComposeError> {
        let event = self.next_event()?;
        if depth > MAX_DEPTH {
            return Err(ComposeError::Unsupported {
                message: format!("tack does not load YAML nested deeper than {MAX_DEPTH} levels."),
                mark: event.start_mark,
            });
        }
        let start = event.start_mark;
        let event_end = event.end_mark.index;
        let (anchor, id) = match event.data {
            EventData::Alias { anchor } => {
                let Some(&id) = doc.anchors.get(&anchor) else {
                    return Err(ComposeError::Composer {
                        context: None,
                        problem: "found undefined alias".into(),
                        mark: start,
                    });
                };
                doc.cyclic |= doc.open[id];
                return Ok(id);
            }
            EventData::Scalar { anchor, tag, mut value, plain_implicit, style, .. } => {
                let block = matches!(style, ScalarStyle::Literal | ScalarStyle::Folded);
                if block
                    && self.padded_at.is_some_and(|end| event_end > end)
                    && value.ends_with('\n')
                {
                    value.pop();
                }
                let tag = match tag.as_deref() {
                    None | Some("!") if plain_implicit => resolve_scalar(&value),
                    None | Some("!") => Tag::Str,
                    Some(t) => Tag::from_event(t),
                };
                let id = self.check_anchor(doc, anchor.as_deref(), start)?;
                doc.push(CNode { tag, start, kind: Kind::Scalar(value) });
                (anchor, id)
            }
            EventData::SequenceStart { anchor, tag, .. } => {
                let tag = container_tag(tag.as_deref(), Tag::Seq);
                let id = self.check_anchor(doc, anchor.as_deref(), start)?;
                doc.push(CNode { tag, start, kind: Kind::Seq(Vec::new()) });
                doc.register(anchor.as_deref(), id);
                doc.open[id] = true;
                let mut items = Vec::new();
                while !matches!(self.peek()?.data, EventData::SequenceEnd) {
                    items.push(self.compose_node(doc, depth + 1)?);
                }
                self.next_event()?;
                doc.nodes[id].kind = Kind::Seq(items);
                doc.open[id] = false;
                return Ok(id);
            }
            EventData::MappingStart { anchor, tag, .. } => {
                let tag = container_tag(tag.as_deref(), Tag::Map);
                let id = self.check_anchor(doc, anchor.as_deref(), start)?;
                doc.push(CNode { tag, start, kind: Kind::Map(Vec::new()) });
                doc.register(anchor.as_deref(), id);
                doc.open[id] = true;
                let mut pairs = Vec::new();
                while !matches!(self.peek()?.data, EventData::MappingEnd) {
                    let key = self.compose_node(doc, depth + 1)?;
                    let value = self.compose_node(doc, depth + 1)?;
                    pairs.push((key, value));
                }
                self.next_event()?;
                doc.nodes[id].kind = Kind::Map(pairs);
                doc.open[id] = false;
                return Ok(id);
            }
            other => return Err(unexpected_event(&other, start)),
        };
        doc.register(anchor.as_deref(), id);
        Ok(id)
    }

    /// PyYAML refuses an anchor name used twice in one document.
    fn check_anchor(
        &self,
        doc: &DocBuilder,
        anchor: Option<&str>,
        mark: Mark,
    ) -> Result<NodeId, ComposeError> {
        if let Some(name) = anchor
            && doc.anchors.contains_key(name)
        {
            return Err(ComposeError::Composer {
                context: Some("found duplicate anchor; first occurrence"),
                problem: "second occurrence".into(),
                mark,
            });
        }
        Ok(doc.nodes.len())
    }
}

/// libyaml only emits node events where a node is expected; anything else means the event
/// stream broke its own grammar.
fn unexpected_event(data: &EventData, mark: Mark) -> ComposeError {
    ComposeError::Unsupported {
        message: format!("unexpected YAML event {data:?} where a node was expected."),
        mark,
    }
}

fn container_tag(tag: Option<&str>, default: Tag) -> Tag {
    match tag {
        None | Some("!") => default,
        Some(t) => Tag::from_event(t),
    }
}

impl DocBuilder {
    fn push(&mut self, node: CNode) {
        self.nodes.push(node);
        self.open.push(false);
    }

    fn register(&mut self, anchor: Option<&str>, id: NodeId) {
        if let Some(name) = anchor {
            self.anchors.insert(name.to_string(), id);
        }
    }
}

/// A panic of the YAML parser caught as the file's error, said nothing of on stderr.
mod quiet {
    use std::cell::Cell;

    thread_local! {
        static PARSING: Cell<u32> = const { Cell::new(0) };
    }

    /// Runs `parse`; a panic inside it is returned as what it said.
    pub(super) fn guarded<T>(parse: impl FnOnce() -> T) -> Result<T, String> {
        static HOOK: std::sync::Once = std::sync::Once::new();
        HOOK.call_once(|| {
            let before = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if PARSING.with(Cell::get) == 0 {
                    before(info);
                }
            }));
        });
        PARSING.with(|p| p.set(p.get() + 1));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(parse));
        PARSING.with(|p| p.set(p.get().saturating_sub(1)));
        result.map_err(|payload| {
            payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default()
        })
    }
}
