/**
 * Languages the chunker knows: how a path maps to a language, and per language the tree-sitter grammar
 * and which syntax nodes are definitions (functions, methods, classes, interfaces, structs, impls, enums,
 * modules) with how to read their names. Everything language-specific lives in the one `LANGUAGES` table.
 */
import type { Node } from "web-tree-sitter";
import { separateSignatures } from "./reparse.js";

/** Reads the name of a definition node as symbol-path segments, or undefined when the node is not one. */
export type NameReader = (node: Node) => string[] | undefined;

export interface LanguageSpec {
  /** Language id, as stored in a chunk's `language`. */
  readonly id: string;
  /** File name of the WASM grammar in `tree-sitter-wasms/out/`; none: chunked without a syntax tree. */
  readonly grammar?: string;
  /** Lower-case extensions, with the dot. */
  readonly extensions: readonly string[];
  /** Node type → name reader: the node types that are definitions. */
  readonly definitions: Readonly<Record<string, NameReader>>;
  /**
   * Definition node types that declare a shape only (interfaces, type aliases, structs, enums, typedefs,
   * signatures without a body): a chunk lists them in `declares`, the definitions of code in `defines`.
   */
  readonly declarations: readonly string[];
  /** Node types that wrap one definition (`export …`, decorators, `template <…>`) and are named by it. */
  readonly wrappers: readonly string[];
  /** Node types that glue to the syntax node right below them, besides every `*comment*` type. */
  readonly attached: readonly string[];
  /** A rewrite of the text (same length and lines, src/index/chunk/reparse.ts) tried when a parse has errors. */
  readonly reparse?: (text: string) => string | undefined;
}

// ---------------------------------------------------------------------------------------------------
// Name readers

function field(node: Node, name: string): Node | null {
  return node.childForFieldName(name);
}

/** The first named child of one of `types` (a grammar without field names, such as Kotlin's, names none). */
function childOfType(node: Node, types: readonly string[]): Node | undefined {
  return node.namedChildren.find((child) => child !== null && types.includes(child.type)) ?? undefined;
}

function clean(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The `name` field's text. */
const byName: NameReader = (node) => {
  const name = field(node, "name");
  const text = name ? clean(name.text) : "";
  return text ? [text] : undefined;
};

/** The `name` field, only when the node has a body (a definition, not a forward declaration or use). */
const byNameWithBody: NameReader = (node) => (field(node, "body") ? byName(node) : undefined);

/** `module "name"` in TypeScript: the name without quotes. */
const quotedName: NameReader = (node) => {
  const name = field(node, "name");
  const text = name ? clean(name.text).replace(/^["'`]|["'`]$/g, "") : "";
  return text ? [text] : undefined;
};

/** A type written in the source, reduced to its base name: `*pkg.Stack[T]` → `Stack`, `a::B<T>` → `B`. */
function baseTypeName(text: string): string {
  // trimEnd, not `\s+$`: that read a run of blanks inside the text again from each of them
  const head = text
    .replace(/[<[(].*$/s, "")
    .replace(/^[\s*&]+/, "")
    .trimEnd();
  const parts = head.split(/::|\./);
  return (parts[parts.length - 1] ?? head).replace(/^(?:mut|const|dyn)\s+/, "").trim();
}

/** Go method: `func (s *Server) Start()` → Server > Start. */
const goMethod: NameReader = (node) => {
  const name = byName(node);
  if (!name) return undefined;
  const receiver = field(node, "receiver");
  const parameter = receiver ? childOfType(receiver, ["parameter_declaration"]) : undefined;
  const type = parameter ? field(parameter, "type") : null;
  const owner = type ? baseTypeName(type.text) : "";
  return owner ? [owner, ...name] : name;
};

/** The one node of a list (`a, b := …`), undefined when it holds none or several. */
function only(nodes: readonly (Node | null)[]): Node | undefined {
  return nodes.length === 1 ? (nodes[0] ?? undefined) : undefined;
}

/** Go `var handler = func(…) {…}` and `worker := func(…) {…}`: one name given a function literal. */
const goFunctionVariable: NameReader = (node) => {
  const short = node.type === "short_var_declaration";
  const value = only(field(node, short ? "right" : "value")?.namedChildren ?? []);
  if (value?.type !== "func_literal") return undefined;
  const name = only(short ? (field(node, "left")?.namedChildren ?? []) : node.childrenForFieldName("name"));
  return name?.type === "identifier" ? [name.text] : undefined;
};

/** C++ `auto scale = [](double v) {…};`: a variable given a lambda. */
const cppLambda: NameReader = (node) => {
  const declarator = only(node.childrenForFieldName("declarator"));
  if (declarator?.type !== "init_declarator" || field(declarator, "value")?.type !== "lambda_expression") {
    return undefined;
  }
  const name = field(declarator, "declarator");
  return name?.type === "identifier" ? [name.text] : undefined;
};

/** Ruby `define_method(:checkout) do … end`: a method made at run time, named by its symbol. */
const rubyDefineMethod: NameReader = (node) => {
  const method = field(node, "method")?.text;
  if ((method !== "define_method" && method !== "define_singleton_method") || !field(node, "block")) {
    return undefined;
  }
  const first = field(node, "arguments")?.namedChild(0);
  return first?.type === "simple_symbol" ? [first.text.slice(1)] : undefined;
};

const PYTHON_METHOD_WRAPPERS = new Set(["staticmethod", "classmethod"]);

/** Python `parse = lambda text: …`, `self.on_error = lambda e: …`, in a class `key = staticmethod(lambda …)`. */
const pythonLambda: NameReader = (node) => {
  let value = field(node, "right");
  if (value?.type === "call" && PYTHON_METHOD_WRAPPERS.has(field(value, "function")?.text ?? "")) {
    value = only(field(value, "arguments")?.namedChildren ?? []) ?? null;
  }
  if (value?.type !== "lambda") return undefined;
  const left = field(node, "left");
  if (left?.type === "identifier") return [left.text];
  const attribute = left?.type === "attribute" ? field(left, "attribute") : null;
  return attribute ? [attribute.text] : undefined;
};

/** Ruby `SQUARE = ->(x) { … }`, `check = lambda do … end`, `HANDLER = proc { … }`, `Proc.new { … }`. */
const rubyLambda: NameReader = (node) => {
  const value = field(node, "right");
  const made =
    value?.type === "lambda" ||
    (value?.type === "call" &&
      field(value, "block") !== null &&
      (["lambda", "proc"].includes(field(value, "method")?.text ?? "") ||
        (field(value, "receiver")?.text === "Proc" && field(value, "method")?.text === "new")));
  const left = field(node, "left");
  return made && (left?.type === "identifier" || left?.type === "constant") ? [left.text] : undefined;
};

/** PHP `$handler = function (…) {…};` and `$double = fn($x) => …;`: a variable given a closure. */
const phpClosure: NameReader = (node) => {
  const value = field(node, "right")?.type ?? "";
  if (!["anonymous_function_creation_expression", "anonymous_function", "arrow_function"].includes(value)) {
    return undefined;
  }
  const left = field(node, "left");
  const name = left?.type === "variable_name" ? left.namedChild(0)?.text : undefined;
  return name ? [name] : undefined;
};

/** Java `Comparator<Item> byName = (a, b) -> …;`, a field or a local: one variable given a lambda. */
const javaLambda: NameReader = (node) => {
  const declarator = only(node.childrenForFieldName("declarator"));
  if (!declarator || field(declarator, "value")?.type !== "lambda_expression") return undefined;
  const name = field(declarator, "name");
  return name ? [name.text] : undefined;
};

/** C# `Func<int, int> Square = x => x * x;`, a field or a local: one variable given a lambda or delegate. */
const csharpLambda: NameReader = (node) => {
  const declaration = childOfType(node, ["variable_declaration"]);
  const declarator = only(
    declaration?.namedChildren.filter((child) => child?.type === "variable_declarator") ?? [],
  );
  if (!declarator) return undefined;
  const value = childOfType(declarator, ["equals_value_clause"])?.namedChild(0);
  if (value?.type !== "lambda_expression" && value?.type !== "anonymous_method_expression") return undefined;
  const name = childOfType(declarator, ["identifier"]);
  return name ? [name.text] : undefined;
};

/** Rust `let add = |a, b| …;` and `const SQUARE: fn(i32) -> i32 = |x| …;`: a name given a closure. */
const rustClosure: NameReader = (node) => {
  if (field(node, "value")?.type !== "closure_expression") return undefined;
  const name = field(node, node.type === "let_declaration" ? "pattern" : "name");
  return name?.type === "identifier" ? [name.text] : undefined;
};

/** Rust `impl Trait for Type` / `impl Type` → the type's base name. */
const rustImpl: NameReader = (node) => {
  const type = field(node, "type");
  const text = type ? baseTypeName(type.text) : "";
  return text ? [text] : undefined;
};

/** C/C++ function: the name inside the declarator chain; `Shape::area` → Shape > area. */
const cFunction: NameReader = (node) => {
  let declarator = field(node, "declarator");
  for (let depth = 0; declarator && depth < 8; depth++) {
    if (declarator.type === "function_declarator") {
      const inner = field(declarator, "declarator");
      if (!inner) return undefined;
      const text = clean(inner.text).replace(/<[^<>]*>/g, "");
      const parts = text
        .split("::")
        .map((part) => part.trim())
        .filter((part) => part.length > 0);
      return parts.length > 0 ? parts : undefined;
    }
    declarator = field(declarator, "declarator");
  }
  return undefined;
};

/** C `typedef struct {…} Name;` → Name, only when it defines a body. */
const cTypedef: NameReader = (node) => {
  const type = field(node, "type");
  if (!type || !field(type, "body")) return undefined;
  const declarator = field(node, "declarator");
  const text = declarator ? clean(declarator.text).replace(/^\*+/, "") : "";
  return text ? [text] : undefined;
};

const FUNCTION_VALUES = new Set([
  "arrow_function",
  "function",
  "function_expression",
  "generator_function",
  "class",
  "class_expression",
]);

/** Wrappers around a value that leave it the same function: `(…)`, `… as T`, `… satisfies T`, `…!`, `<T>…`. */
const VALUE_WRAPPERS = new Set([
  "parenthesized_expression",
  "as_expression",
  "satisfies_expression",
  "non_null_expression",
  "type_assertion",
]);

/** The function or class a value is, through type assertions and parentheses; undefined when it is none. */
function functionValue(value: Node | null): Node | undefined {
  let node = value;
  for (let depth = 0; node && depth < 8 && VALUE_WRAPPERS.has(node.type); depth++) node = node.namedChild(0);
  return node && FUNCTION_VALUES.has(node.type) ? node : undefined;
}

/** Methods that take a callback and give back data, not a function: `items.map((x) => …)` makes no symbol. */
const DATA_METHODS = new Set(
  "map flatMap filter reduce reduceRight find findLast findIndex some every forEach sort toSorted then catch finally".split(
    " ",
  ),
);

/**
 * A module-level value made by a call given a function: `export const Button = forwardRef((props) => …)`,
 * `export const GET = withAuth(async (req) => …)`. Inside functions such calls are ordinary statements
 * (`const doubled = items.map((x) => …)`), so only module-level ones count, and never a call of an
 * array or promise method (`const evens = list.filter((x) => …)` is data).
 */
function wrappedFunction(value: Node | null, declaration: Node): boolean {
  const scope =
    declaration.parent?.type === "export_statement" ? declaration.parent.parent : declaration.parent;
  if (value?.type !== "call_expression" || scope?.type !== "program") return false;
  const callee = field(value, "function");
  if (callee?.type === "member_expression" && DATA_METHODS.has(field(callee, "property")?.text ?? "")) {
    return false;
  }
  const args = field(value, "arguments");
  return args?.namedChildren.some((arg) => functionValue(arg) !== undefined) ?? false;
}

/** An object literal holding at least one method or function-valued property: a namespace of functions. */
function functionObject(value: Node | null): boolean {
  if (value?.type !== "object") return false;
  return value.namedChildren.some(
    (member) =>
      member?.type === "method_definition" ||
      (member?.type === "pair" && functionValue(field(member, "value")) !== undefined),
  );
}

/**
 * `const f = () => {…}`, `let C = class {…}`, `const g = (function () {…}) as G`, module-level
 * `const h = wrap(() => {…})`, and `const router = { match() {…} }` (its functions are router > match):
 * a declaration of one variable whose value is a function or an object of functions.
 */
const jsVariable: NameReader = (node) => {
  const declarators = node.namedChildren.filter((child) => child?.type === "variable_declarator");
  if (declarators.length !== 1 || !declarators[0]) return undefined;
  const value = field(declarators[0], "value");
  if (!functionValue(value) && !wrappedFunction(value, node) && !functionObject(value)) return undefined;
  const name = field(declarators[0], "name");
  return name && name.type === "identifier" ? [name.text] : undefined;
};

/** A class field or object property whose value is a function: `handler = () => {…}`, `key: function…`. */
function jsProperty(nameField: string): NameReader {
  return (node) => {
    if (!functionValue(field(node, "value"))) return undefined;
    const name = field(node, nameField);
    const text = name ? clean(name.text).replace(/^["'`]|["'`]$/g, "") : "";
    return text ? [text] : undefined;
  };
}

/**
 * A function assigned to a name or property: `exports.parse = function …`, `module.exports.run = () => …`,
 * `Parser.prototype.next = function …` (Parser > next), `handler = () => …`.
 */
const jsAssignment: NameReader = (node) => {
  if (!functionValue(field(node, "right"))) return undefined;
  const left = field(node, "left");
  if (left?.type === "identifier") return [left.text];
  if (left?.type !== "member_expression") return undefined;
  const name = field(left, "property")?.text;
  if (!name) return undefined;
  const object = field(left, "object");
  if (object?.type === "member_expression" && field(object, "property")?.text === "prototype") {
    const owner = field(object, "object");
    if (owner?.type === "identifier") return [owner.text, name];
  }
  return [name];
};

const JS_DEFINITIONS: Record<string, NameReader> = {
  function_declaration: byName,
  generator_function_declaration: byName,
  class_declaration: byName,
  method_definition: byName,
  lexical_declaration: jsVariable,
  variable_declaration: jsVariable,
  field_definition: jsProperty("property"),
  pair: jsProperty("key"),
  assignment_expression: jsAssignment,
};

const TS_DEFINITIONS: Record<string, NameReader> = {
  ...JS_DEFINITIONS,
  abstract_class_declaration: byName,
  interface_declaration: byName,
  type_alias_declaration: byName,
  enum_declaration: byName,
  internal_module: byName,
  module: quotedName,
  public_field_definition: jsProperty("name"),
};

/** Kotlin classes, objects and type aliases: their type name. */
const kotlinType: NameReader = (node) => {
  const name = childOfType(node, ["type_identifier"]);
  return name ? [name.text] : undefined;
};

/** Kotlin `fun total()`, and an extension `fun String.words()` → String > words. */
const kotlinFunction: NameReader = (node) => {
  const name = childOfType(node, ["simple_identifier"]);
  if (!name) return undefined;
  const receiver = childOfType(node, ["user_type", "nullable_type"]);
  return receiver && receiver.startIndex < name.startIndex
    ? [baseTypeName(receiver.text.replace(/\?$/, "")), name.text]
    : [name.text];
};

/** Kotlin `val double = { x: Int -> x * 2 }` or `= fun(x: Int) = …`: a property given a function. */
const kotlinLambda: NameReader = (node) => {
  if (!childOfType(node, ["lambda_literal", "anonymous_function"])) return undefined;
  const name = childOfType(childOfType(node, ["variable_declaration"]) ?? node, ["simple_identifier"]);
  return name ? [name.text] : undefined;
};

/** Swift `init`, `deinit`, `subscript`: named by their keyword. */
const keyword =
  (name: string): NameReader =>
  () => [name];

/** Swift `var total: Int { … }` and `let double = { $0 * 2 }`: a computed property or one given a closure. */
const swiftProperty: NameReader = (node) => {
  if (!field(node, "computed_value") && field(node, "value")?.type !== "lambda_literal") return undefined;
  const name = field(field(node, "name") ?? node, "bound_identifier");
  return name ? [name.text] : undefined;
};

const JS_WRAPPERS = ["export_statement", "expression_statement"];
const TS_WRAPPERS = ["export_statement", "ambient_declaration", "expression_statement"];
const TS_DECLARATIONS = ["interface_declaration", "type_alias_declaration", "enum_declaration"];
const C_DECLARATIONS = ["struct_specifier", "union_specifier", "enum_specifier", "type_definition"];

// ---------------------------------------------------------------------------------------------------
// The table

export const LANGUAGES: readonly LanguageSpec[] = [
  {
    id: "typescript",
    grammar: "tree-sitter-typescript.wasm",
    extensions: [".ts", ".mts", ".cts"],
    definitions: TS_DEFINITIONS,
    declarations: TS_DECLARATIONS,
    wrappers: TS_WRAPPERS,
    attached: ["decorator"],
    reparse: separateSignatures,
  },
  {
    id: "tsx",
    grammar: "tree-sitter-tsx.wasm",
    extensions: [".tsx"],
    definitions: TS_DEFINITIONS,
    declarations: TS_DECLARATIONS,
    wrappers: TS_WRAPPERS,
    attached: ["decorator"],
    reparse: separateSignatures,
  },
  {
    id: "javascript",
    grammar: "tree-sitter-javascript.wasm",
    extensions: [".js", ".mjs", ".cjs", ".jsx"],
    definitions: JS_DEFINITIONS,
    declarations: [],
    wrappers: JS_WRAPPERS,
    attached: ["decorator"],
  },
  {
    id: "python",
    grammar: "tree-sitter-python.wasm",
    extensions: [".py", ".pyi", ".pyw"],
    definitions: { function_definition: byName, class_definition: byName, assignment: pythonLambda },
    declarations: [],
    wrappers: ["decorated_definition", "expression_statement"],
    attached: [],
  },
  {
    id: "go",
    grammar: "tree-sitter-go.wasm",
    extensions: [".go"],
    definitions: {
      function_declaration: byName,
      method_declaration: goMethod,
      type_spec: byName,
      var_spec: goFunctionVariable,
      short_var_declaration: goFunctionVariable,
    },
    declarations: ["type_spec"],
    wrappers: ["type_declaration", "var_declaration"],
    attached: [],
  },
  {
    id: "rust",
    grammar: "tree-sitter-rust.wasm",
    extensions: [".rs"],
    definitions: {
      function_item: byName,
      function_signature_item: byName,
      struct_item: byName,
      enum_item: byName,
      union_item: byName,
      trait_item: byName,
      impl_item: rustImpl,
      mod_item: byName,
      macro_definition: byName,
      let_declaration: rustClosure,
      const_item: rustClosure,
      static_item: rustClosure,
    },
    declarations: ["struct_item", "enum_item", "union_item", "trait_item", "function_signature_item"],
    wrappers: [],
    attached: ["attribute_item"],
  },
  {
    id: "java",
    grammar: "tree-sitter-java.wasm",
    extensions: [".java"],
    definitions: {
      class_declaration: byName,
      interface_declaration: byName,
      enum_declaration: byName,
      record_declaration: byName,
      annotation_type_declaration: byName,
      method_declaration: byName,
      constructor_declaration: byName,
      field_declaration: javaLambda,
      local_variable_declaration: javaLambda,
    },
    declarations: [
      "interface_declaration",
      "enum_declaration",
      "record_declaration",
      "annotation_type_declaration",
    ],
    wrappers: [],
    attached: [],
  },
  {
    id: "c",
    grammar: "tree-sitter-c.wasm",
    extensions: [".c", ".h"],
    definitions: {
      function_definition: cFunction,
      struct_specifier: byNameWithBody,
      union_specifier: byNameWithBody,
      enum_specifier: byNameWithBody,
      type_definition: cTypedef,
    },
    declarations: C_DECLARATIONS,
    wrappers: [],
    attached: [],
  },
  {
    id: "cpp",
    grammar: "tree-sitter-cpp.wasm",
    extensions: [".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp"],
    definitions: {
      function_definition: cFunction,
      class_specifier: byNameWithBody,
      struct_specifier: byNameWithBody,
      union_specifier: byNameWithBody,
      enum_specifier: byNameWithBody,
      namespace_definition: byName,
      type_definition: cTypedef,
      declaration: cppLambda,
    },
    declarations: C_DECLARATIONS,
    wrappers: ["template_declaration"],
    attached: [],
  },
  {
    id: "csharp",
    grammar: "tree-sitter-c_sharp.wasm",
    extensions: [".cs", ".csx"],
    definitions: {
      namespace_declaration: byName,
      file_scoped_namespace_declaration: byName,
      class_declaration: byName,
      struct_declaration: byName,
      interface_declaration: byName,
      enum_declaration: byName,
      record_declaration: byName,
      record_struct_declaration: byName,
      method_declaration: byName,
      constructor_declaration: byName,
      destructor_declaration: byName,
      property_declaration: byName,
      local_function_statement: byName,
      field_declaration: csharpLambda,
      local_declaration_statement: csharpLambda,
    },
    declarations: ["interface_declaration", "enum_declaration"],
    wrappers: [],
    attached: [],
  },
  {
    id: "ruby",
    grammar: "tree-sitter-ruby.wasm",
    extensions: [".rb", ".rake", ".gemspec", ".ru"],
    definitions: {
      method: byName,
      singleton_method: byName,
      class: byName,
      module: byName,
      call: rubyDefineMethod,
      assignment: rubyLambda,
    },
    // `class << self … end` holding one method is named by it; holding several, its methods are Class > m
    declarations: [],
    wrappers: ["singleton_class"],
    attached: [],
  },
  {
    id: "php",
    grammar: "tree-sitter-php.wasm",
    extensions: [".php", ".phtml"],
    definitions: {
      function_definition: byName,
      class_declaration: byName,
      interface_declaration: byName,
      trait_declaration: byName,
      enum_declaration: byName,
      method_declaration: byName,
      namespace_definition: byNameWithBody,
      assignment_expression: phpClosure,
    },
    declarations: ["interface_declaration", "enum_declaration"],
    wrappers: ["expression_statement"],
    attached: ["attribute_list"],
  },
  {
    id: "kotlin",
    grammar: "tree-sitter-kotlin.wasm",
    extensions: [".kt", ".kts"],
    definitions: {
      class_declaration: kotlinType,
      object_declaration: kotlinType,
      type_alias: kotlinType,
      function_declaration: kotlinFunction,
      property_declaration: kotlinLambda,
    },
    declarations: ["type_alias"],
    wrappers: [],
    attached: [],
  },
  {
    id: "swift",
    grammar: "tree-sitter-swift.wasm",
    extensions: [".swift"],
    definitions: {
      class_declaration: byName,
      protocol_declaration: byName,
      function_declaration: byName,
      protocol_function_declaration: byName,
      init_declaration: keyword("init"),
      deinit_declaration: keyword("deinit"),
      subscript_declaration: keyword("subscript"),
      property_declaration: swiftProperty,
      typealias_declaration: byName,
    },
    declarations: ["protocol_declaration", "protocol_function_declaration", "typealias_declaration"],
    wrappers: [],
    attached: [],
  },
  {
    id: "markdown",
    extensions: [".md", ".markdown", ".mdx", ".mdown", ".mkd"],
    definitions: {},
    declarations: [],
    wrappers: [],
    attached: [],
  },
  { id: "text", extensions: [], definitions: {}, declarations: [], wrappers: [], attached: [] },
];

/** Every language id `detectLanguage` can return. */
export const SUPPORTED_LANGUAGES: readonly string[] = LANGUAGES.map((spec) => spec.id);

const BY_ID = new Map(LANGUAGES.map((spec) => [spec.id, spec]));
const BY_EXTENSION = new Map<string, string>();
for (const spec of LANGUAGES) for (const extension of spec.extensions) BY_EXTENSION.set(extension, spec.id);

export function languageSpec(id: string): LanguageSpec | undefined {
  return BY_ID.get(id);
}

/** Files that are generated or machine data: never chunked. */
const NEVER_NAMES = new Set([
  "package-lock.json",
  "npm-shrinkwrap.json",
  "yarn.lock",
  "pnpm-lock.yaml",
  "bun.lockb",
  "bun.lock",
  "cargo.lock",
  "poetry.lock",
  "pipfile.lock",
  "uv.lock",
  "composer.lock",
  "gemfile.lock",
  "go.sum",
  "flake.lock",
  "packages.lock.json",
  "podfile.lock",
  "mix.lock",
  "pubspec.lock",
  ".ds_store",
]);
const NEVER_SUFFIXES = [".min.js", ".min.mjs", ".min.css", ".map", ".lock", ".snap"];
/** Extensions of files that are not text (in case one reaches the chunker). */
const BINARY_EXTENSIONS = new Set(
  (
    ".png .jpg .jpeg .gif .bmp .ico .webp .avif .tif .tiff .psd .pdf .zip .gz .tgz .bz2 .xz .zst .7z .rar .jar " +
    ".war .class .o .a .so .dylib .dll .exe .bin .obj .pyc .pyo .wasm .woff .woff2 .ttf .otf .eot .mp3 .mp4 " +
    ".wav .ogg .flac .mov .avi .mkv .webm .sqlite .db .dat .pack .idx .node"
  ).split(" "),
);

/**
 * The language of a file by its name: a grammar-backed language, "markdown", "text" for any other text
 * file (configuration, prose, files without an extension), or undefined for files never to be chunked
 * (lock files, minified bundles, source maps, binaries).
 */
export function detectLanguage(path: string): string | undefined {
  const name = (path.split(/[\\/]/).pop() ?? path).toLowerCase();
  if (name === "") return undefined;
  if (NEVER_NAMES.has(name)) return undefined;
  if (NEVER_SUFFIXES.some((suffix) => name.endsWith(suffix))) return undefined;
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return "text"; // no extension, or a dotfile such as .gitignore; Makefile, Dockerfile
  const extension = name.slice(dot);
  if (BINARY_EXTENSIONS.has(extension)) return undefined;
  return BY_EXTENSION.get(extension) ?? "text";
}
