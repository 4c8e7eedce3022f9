//! The composer: libyaml events become a graph of untyped nodes, as PyYAML's C composer
//! (`yaml._yaml.CParser`) builds it.
//!
//! Nodes live in an arena and are named by index; an alias is the index of its anchor's node,
//! so aliased content is shared exactly as PyYAML shares one `Node` object. Tags are resolved
//! here, as the C composer does: an absent tag or the non-specific `!` goes through the
//! implicit resolver with libyaml's `plain_implicit` flag.
//!
//! An alias to a node that is still open (its own ancestor) makes a cycle. PyYAML builds a
//! self-referencing Python object from it; tack's [`crate::Value`] is a tree, so the composer
//! refuses it by name instead of looping.
//!
//! This module does not build values; see `construct`.

use std::collections::HashMap;
use std::io::BufReader;

use libyaml_safer::{Event, EventData, Mark, Parser};

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
    /// tack's own refusal (recursive alias, nesting too deep).
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
}

/// libyaml reads its input in chunks of this size and checks each chunk's characters before
/// scanning it, which decides whether a stray control character or a syntax error is reported
/// first.
const READ_CHUNK: usize = 16_384;

pub(crate) struct Composer<'a> {
    parser: Parser<BufReader<&'a [u8]>>,
    /// An event read ahead (PyYAML's `check_event`).
    peeked: Option<Event>,
}

/// What follows in the stream: a document, its end, or a document start after the first.
pub(crate) enum Next {
    Document(Box<Document>),
    End,
}

struct DocBuilder {
    nodes: Vec<CNode>,
    anchors: HashMap<String, NodeId>,
    /// Nodes whose content is still being read; an alias to one of them is a cycle.
    open: Vec<bool>,
}

impl<'a> Composer<'a> {
    pub(crate) fn new(text: &'a str) -> Composer<'a> {
        let mut parser = Parser::new();
        parser.set_input(BufReader::with_capacity(READ_CHUNK, text.as_bytes()));
        Composer { parser, peeked: None }
    }

    fn next_event(&mut self) -> Result<Event, ComposeError> {
        match self.peeked.take() {
            Some(event) => Ok(event),
            None => Ok(self.parser.parse()?),
        }
    }

    fn peek(&mut self) -> Result<&Event, ComposeError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.parser.parse()?);
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
        let mut doc = DocBuilder { nodes: Vec::new(), anchors: HashMap::new(), open: Vec::new() };
        let root = self.compose_node(&mut doc, 0)?;
        self.next_event()?; // DOCUMENT-END
        Ok(Next::Document(Box::new(Document { nodes: doc.nodes, root })))
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
        let (anchor, id) = match event.data {
            EventData::Alias { anchor } => {
                let Some(&id) = doc.anchors.get(&anchor) else {
                    return Err(ComposeError::Composer {
                        context: None,
                        problem: "found undefined alias".into(),
                        mark: start,
                    });
                };
                if doc.open[id] {
                    return Err(ComposeError::Unsupported {
                        message: format!(
                            "tack does not support recursive YAML aliases: '*{anchor}' refers \
                             to a node that contains it."
                        ),
                        mark: start,
                    });
                }
                return Ok(id);
            }
            EventData::Scalar { anchor, tag, value, plain_implicit, .. } => {
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
