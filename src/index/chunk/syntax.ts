/**
 * A tree-sitter syntax tree presented as sections (see sections.ts): each node is a line range, a
 * definition when the language table says so, and opens into its children only when the splitter asks.
 */
import type { Node } from "web-tree-sitter";
import type { LanguageSpec } from "./languages.js";
import type { Section } from "./sections.js";

/** The rows a node occupies; a node ending at column 0 ends on the row before. */
function rows(node: Node): { start: number; end: number } {
  const start = node.startPosition.row;
  let end = node.endPosition.row;
  if (end > start && node.endPosition.column === 0) end--;
  return { start, end };
}

interface Definition {
  name: string[];
  /** The definition node itself (inside any wrappers). */
  node: Node;
}

function definitionOf(spec: LanguageSpec, node: Node, depth = 0): Definition | undefined {
  // own keys only: Kotlin's grammar has a `constructor` token, which Object.prototype would answer
  const reader = Object.hasOwn(spec.definitions, node.type) ? spec.definitions[node.type] : undefined;
  if (reader) {
    const name = reader(node);
    return name && name.length > 0 ? { name, node } : undefined;
  }
  if (depth < 3 && spec.wrappers.includes(node.type)) {
    let found: Definition | undefined;
    // A wrapper with a body (Ruby's `class << self … end`) wraps what its body holds.
    const body = node.childForFieldName("body");
    const children = body ? [...node.namedChildren, ...body.namedChildren] : node.namedChildren;
    for (const child of children) {
      if (!child || child.id === body?.id) continue;
      const definition = definitionOf(spec, child, depth + 1);
      if (!definition) continue;
      if (found) return undefined; // wraps several definitions: a plain container
      found = definition;
    }
    return found;
  }
  return undefined;
}

/** The body of a definition: its `body` field, or that of the function or class it is assigned. */
function bodyOf(node: Node, depth = 0): Node | undefined {
  const body = node.childForFieldName("body");
  if (body) return body;
  if (depth >= 3) return undefined;
  const value = node.childForFieldName("value");
  if (value) return bodyOf(value, depth + 1);
  for (const child of node.namedChildren) {
    if (child?.type === "variable_declarator") return bodyOf(child, depth + 1);
  }
  return undefined;
}

function signatureOf(definition: Node): { start: number; end: number } {
  const start = definition.startPosition.row;
  const body = bodyOf(definition);
  if (!body) return { start, end: start };
  const first = body.firstNamedChild;
  const content = first ? first.startPosition.row : body.endPosition.row;
  return { start, end: Math.max(start, content - 1) };
}

/** Children of a wrapper with the wrapped definition's own children spliced in its place. */
function flatChildren(node: Node, inner: Node): Node[] {
  const out: Node[] = [];
  for (const child of node.children) {
    if (!child) continue;
    if (child.id === inner.id) {
      for (const grandchild of inner.children) if (grandchild) out.push(grandchild);
    } else if (
      child.startIndex <= inner.startIndex &&
      child.endIndex >= inner.endIndex &&
      child.childCount > 0
    ) {
      out.push(...flatChildren(child, inner));
    } else {
      out.push(child);
    }
  }
  return out;
}

function isAttached(spec: LanguageSpec, node: Node): boolean {
  return node.type.includes("comment") || spec.attached.includes(node.type);
}

export function syntaxSection(spec: LanguageSpec, node: Node): Section {
  const { start, end } = rows(node);
  const definition = definitionOf(spec, node);
  const children = (): Node[] => {
    if (definition && definition.node.id !== node.id) return flatChildren(node, definition.node);
    const out: Node[] = [];
    for (const child of node.children) if (child) out.push(child);
    return out;
  };
  return {
    start,
    end,
    attached: isAttached(spec, node),
    ...(definition ? { name: definition.name } : {}),
    kids: () => children().map((child) => syntaxSection(spec, child)),
    signature: () => (definition ? signatureOf(definition.node) : undefined),
  };
}

/** The root of a syntax tree: never a definition itself, always opened into its children. */
export function syntaxRoot(spec: LanguageSpec, root: Node, lastRow: number): Section {
  const section = syntaxSection(spec, root);
  return {
    start: 0,
    end: lastRow,
    attached: false,
    kids: section.kids,
    signature: () => undefined,
  };
}

/** A definition found anywhere in a tree: the row its node starts on and its full symbol path. */
export interface DefinitionStart {
  row: number;
  path: string[];
  /** It declares a shape only (an interface, a type alias, a struct: `LanguageSpec.declarations`). */
  declaration: boolean;
}

/**
 * Every definition of a syntax tree, in file order, each with the row it starts on and its symbol path
 * (the names of the definitions around it, then its own): what the chunks that hold those rows define,
 * whether or not the splitter ever opens them. The nodes of the definition types are found by the
 * grammar's own walk (one call), the definitions around each by their byte ranges.
 */
export function definitionStarts(spec: LanguageSpec, root: Node): DefinitionStart[] {
  const types = Object.keys(spec.definitions);
  if (types.length === 0) return [];
  const out: DefinitionStart[] = [];
  const declarations = new Set(spec.declarations);
  /** The definitions around the current node, outermost first. */
  const around: { end: number; path: string[] }[] = [];
  for (const node of root.descendantsOfType(types)) {
    if (!node) continue;
    const reader = spec.definitions[node.type];
    const name = reader?.(node);
    if (!name || name.length === 0) continue;
    while ((around[around.length - 1]?.end ?? Number.POSITIVE_INFINITY) <= node.startIndex) around.pop();
    const path = [...(around[around.length - 1]?.path ?? []), ...name];
    out.push({ row: node.startPosition.row, path, declaration: declarations.has(node.type) });
    around.push({ end: node.endIndex, path });
  }
  return out;
}
