/**
 * Part of `npx tsx scripts/check-layers.ts` (issue 28, item 7): pages read one view model each, and
 * the entry points app/ and the CLI call take `(deps, input)`. Read from the source text (the
 * TypeScript parser, no type checker), so it is fast and says exactly which import or which
 * parameter is wrong.
 *
 * What is checked, precisely:
 * - `page-reads-one-view-model` — an `app/**\/page.tsx` value-imports from `lib/pages/` at most one
 *   binding, and it is named `read…Page`.
 * - `app-imports-reader` — no `.tsx` under `app/` or `components/` (a page, a layout, a server
 *   component) value-imports a lib reader: anything from `lib/db/`, `lib/env.ts` or a `*.repo.ts`
 *   module, or a binding named like a reader (`read…`, `get…`, `list…`, `find…`, `load…`, `fetch…`,
 *   `count…`, `query…`, `search…`, `collect…`) from any lib module outside `lib/pages/`. What a
 *   page shows comes from its `read…Page`; pure helpers (`can`, `isAppError`, a formatter) and
 *   type-only imports are not readers and stay allowed. Route handlers and server actions (`.ts`)
 *   are not pages: they call one use case each, as the action wrapper says.
 * - `entry-point-not-deps-input` — a lib function that a file of `app/` or `scripts/cli/` calls,
 *   and that reaches the database (its first parameter is named `db`/`tx`/`deps`, is a
 *   destructured object, or is typed `Db`/`DbTx`/`T…Deps`), takes `(deps)` or `(deps, input)`:
 *   the database inside a deps object, never as a positional parameter, and at most two parameters.
 *   Every exported function of `lib/pages/` is checked the same way.
 * - `entry-point-takes-actor-id` — no such entry point's input declares an `actorId`: a signed-in
 *   user is passed into lib as `actor: Actor | null` (lib/contract/actor.ts, null = the system),
 *   and the use case records `actorIdOf(actor)`. Each parameter's type is followed through
 *   intersections, unions and the type aliases and interfaces of its own file or of the lib file it
 *   imports them from; a destructured `actorId` counts too. Stores below the use cases (a
 *   `*.repo.ts`, the audit writer) keep their `actorId`: they record an id, and app/ never calls them.
 */
import path from "node:path";
import ts from "typescript";

export type TSourceFile = { path: string; text: string };

const READER_NAME = /^(read|get|list|find|load|fetch|count|query|search|collect)[A-Z]/;
const PAGE_READER_NAME = /^read[A-Z]\w*Page$/;
const READER_MODULE = /^lib\/(db\/|env\.ts$)|\.repo\.ts$/;

type TImportedBinding = { name: string; module: string };

/** lib/ file a module specifier of `fromFile` names, or undefined when it is not in lib/. */
export function resolveLibModule(
  fromFile: string,
  specifier: string,
  exists: (file: string) => boolean,
): string | undefined {
  let base: string;
  if (specifier.startsWith("@/")) base = specifier.slice(2);
  else if (specifier.startsWith("."))
    base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), specifier));
  else return undefined;
  if (!base.startsWith("lib/")) return undefined;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`])
    if (exists(candidate)) return candidate;
  return `${base}.ts`;
}

/** The value bindings (not `import type`, not `type X`) a file imports from lib/, with the lib file each comes from. */
export function libValueImports(file: TSourceFile, exists: (file: string) => boolean): TImportedBinding[] {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX);
  const found: TImportedBinding[] = [];
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const clause = statement.importClause;
    if (!clause || clause.isTypeOnly) continue;
    const libModule = resolveLibModule(file.path, statement.moduleSpecifier.text, exists);
    if (!libModule) continue;
    if (clause.name) found.push({ name: "default", module: libModule });
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) found.push({ name: "*", module: libModule });
    if (bindings && ts.isNamedImports(bindings))
      for (const element of bindings.elements)
        if (!element.isTypeOnly) found.push({ name: (element.propertyName ?? element.name).text, module: libModule });
  }
  return found;
}

/**
 * Problems of the page rules, for the app/ and components/ files given. `pending` lists files not
 * converted yet, each a known debt: their problems are not reported, and a listed file that
 * conforms is (so the list only shrinks).
 */
export function pageProblems(
  files: readonly TSourceFile[],
  exists: (file: string) => boolean,
  pending: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const own = fileProblems(file, exists);
    if (!pending.has(file.path)) problems.push(...own);
    else if (own.length === 0)
      problems.push(
        `page-reads-one-view-model: ${file.path} reads one view model now: remove it from the list of pages not converted yet`,
      );
  }
  return problems;
}

function fileProblems(file: TSourceFile, exists: (file: string) => boolean): string[] {
  const problems: string[] = [];
  if (!/^(app|components)\/.*\.tsx$/.test(file.path)) return problems;
  const isPage = /^app\/(.*\/)?page\.tsx$/.test(file.path);
  const imports = libValueImports(file, exists);
  const fromPages = imports.filter((i) => i.module.startsWith("lib/pages/"));
  if (isPage && (fromPages.length > 1 || fromPages.some((i) => !PAGE_READER_NAME.test(i.name))))
    problems.push(
      `page-reads-one-view-model: ${file.path} imports ${fromPages.map((i) => `${i.name} (${i.module})`).join(", ")} from lib/pages/: a page calls exactly one read…Page(deps, input)`,
    );
  if (!isPage && fromPages.length > 0)
    problems.push(
      `page-reads-one-view-model: ${file.path} imports ${fromPages.map((i) => i.name).join(", ")} from lib/pages/: only a page.tsx reads a view model; hand the data down as props`,
    );
  for (const binding of imports) {
    if (binding.module.startsWith("lib/pages/")) continue;
    if (READER_MODULE.test(binding.module) || READER_NAME.test(binding.name))
      problems.push(
        `app-imports-reader: ${file.path} imports ${binding.name} from ${binding.module}: ${
          isPage
            ? "a page reads its whole view model with one read…Page(deps, input) from lib/pages/"
            : "a component reads nothing; its page's read…Page does"
        } — move the read there`,
      );
  }
  return problems;
}

type TFunctionShape = { name: string; parameters: readonly ts.ParameterDeclaration[]; source: ts.SourceFile };

function exportedFunctions(file: TSourceFile): Map<string, TFunctionShape> {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const functions = new Map<string, TFunctionShape>();
  const isExported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name && isExported(statement))
      functions.set(statement.name.text, { name: statement.name.text, parameters: statement.parameters, source });
    if (ts.isVariableStatement(statement) && isExported(statement))
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (ts.isIdentifier(declaration.name) && init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          functions.set(declaration.name.text, { name: declaration.name.text, parameters: init.parameters, source });
      }
  }
  return functions;
}

const DB_TYPE = /^(Db|DbTx|Db \| DbTx|DbTx \| Db|PrismaClient\b)/;
const DEPS_TYPE = /^(T\w*Deps|TaskRunContext|Pick<TaskRunContext\b|\{[^}]*\bdb\b)/;

/** Why a function is not `(deps, input)`-shaped, or null when it is, or does not reach the database. */
export function entryPointShapeProblem(fn: TFunctionShape, isAlwaysEntryPoint = false): string | null {
  const [first] = fn.parameters;
  if (!first) return isAlwaysEntryPoint ? "takes no deps" : null;
  const name = ts.isIdentifier(first.name) ? first.name.text : null;
  const type = first.type?.getText(fn.source) ?? "";
  const isPositionalDb = name === "db" || name === "tx" || DB_TYPE.test(type);
  const isDeps = name === "deps" || ts.isObjectBindingPattern(first.name) || DEPS_TYPE.test(type);
  if (isPositionalDb) return `takes the database as a positional parameter (${first.getText(fn.source)})`;
  if (!isDeps && !isAlwaysEntryPoint) return null;
  if (!isDeps) return `its first parameter (${first.getText(fn.source)}) is not a deps object`;
  if (fn.parameters.length > 2) return `takes ${fn.parameters.length} parameters`;
  return null;
}

type TLibLookup = { libFiles: ReadonlyMap<string, TSourceFile>; parsed: Map<string, ts.SourceFile> };

function parsedLib(lookup: TLibLookup, file: string): ts.SourceFile | undefined {
  const text = lookup.libFiles.get(file);
  if (!text) return undefined;
  if (!lookup.parsed.has(file))
    lookup.parsed.set(file, ts.createSourceFile(file, text.text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return lookup.parsed.get(file);
}

/** The type alias or interface `name` declares in `source`, or the one it imports under that name from lib/. */
function findTypeDeclaration(
  lookup: TLibLookup,
  source: ts.SourceFile,
  name: string,
): { node: ts.TypeAliasDeclaration | ts.InterfaceDeclaration; source: ts.SourceFile } | undefined {
  for (const statement of source.statements) {
    if ((ts.isTypeAliasDeclaration(statement) || ts.isInterfaceDeclaration(statement)) && statement.name.text === name)
      return { node: statement, source };
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    const element = bindings.elements.find((e) => e.name.text === name);
    if (!element) continue;
    const libModule = resolveLibModule(source.fileName, statement.moduleSpecifier.text, (f) => lookup.libFiles.has(f));
    const imported = libModule ? parsedLib(lookup, libModule) : undefined;
    return imported ? findTypeDeclaration(lookup, imported, (element.propertyName ?? element.name).text) : undefined;
  }
  return undefined;
}

const isActorIdMember = (member: ts.TypeElement) =>
  ts.isPropertySignature(member) &&
  (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)) &&
  member.name.text === "actorId";

/** Whether a type, as far as the source text shows, declares an `actorId` property. */
function typeDeclaresActorId(lookup: TLibLookup, node: ts.TypeNode, source: ts.SourceFile, depth = 0): boolean {
  if (depth > 8) return false;
  if (ts.isTypeLiteralNode(node)) return node.members.some(isActorIdMember);
  if (ts.isIntersectionTypeNode(node) || ts.isUnionTypeNode(node))
    return node.types.some((t) => typeDeclaresActorId(lookup, t, source, depth + 1));
  if (ts.isParenthesizedTypeNode(node)) return typeDeclaresActorId(lookup, node.type, source, depth + 1);
  if (ts.isTypeReferenceNode(node) && ts.isIdentifier(node.typeName)) {
    const found = findTypeDeclaration(lookup, source, node.typeName.text);
    if (!found) return false;
    if (ts.isInterfaceDeclaration(found.node)) return found.node.members.some(isActorIdMember);
    return typeDeclaresActorId(lookup, found.node.type, found.source, depth + 1);
  }
  return false;
}

/**
 * Whether an entry point's parameters carry an `actorId`, by their type or their destructuring: the
 * input (the second parameter) and the first too, which catches a one-object `fn({ db, …, actorId })`.
 */
export function parametersDeclareActorId(fn: TFunctionShape, libFiles: ReadonlyMap<string, TSourceFile>): boolean {
  const lookup: TLibLookup = { libFiles, parsed: new Map() };
  return fn.parameters.some(
    (parameter) =>
      (ts.isObjectBindingPattern(parameter.name) &&
        parameter.name.elements.some((e) => (e.propertyName ?? e.name).getText(fn.source) === "actorId")) ||
      (!!parameter.type && typeDeclaresActorId(lookup, parameter.type, fn.source)),
  );
}

/**
 * Problems of the entry-point rule: each lib function a file of app/ or scripts/cli/ imports, and
 * every export of lib/pages/, must be `(deps)` or `(deps, input)`. There is no list of exceptions:
 * the last ones (the settings store's readers and writer) were converted.
 */
export function entryPointProblems(
  callers: readonly TSourceFile[],
  libFiles: ReadonlyMap<string, TSourceFile>,
): string[] {
  const exists = (file: string) => libFiles.has(file);
  const shapes = new Map<string, TFunctionShape>();
  const exportsOf = new Map<string, Map<string, TFunctionShape>>();
  const functionsOf = (module: string) => {
    if (!exportsOf.has(module))
      exportsOf.set(module, libFiles.has(module) ? exportedFunctions(libFiles.get(module)!) : new Map());
    return exportsOf.get(module)!;
  };
  const callersOf = new Map<string, string>();
  for (const caller of callers) {
    if (!/^(app|scripts\/cli)\//.test(caller.path)) continue;
    for (const binding of libValueImports(caller, exists)) {
      const fn = functionsOf(binding.module).get(binding.name);
      if (!fn) continue;
      const key = `${binding.module}#${binding.name}`;
      shapes.set(key, fn);
      if (!callersOf.has(key)) callersOf.set(key, caller.path);
    }
  }
  const problems: string[] = [];
  const checked = new Set<string>();
  for (const [key, fn] of shapes) {
    checked.add(key);
    const problem = entryPointShapeProblem(fn, key.startsWith("lib/pages/"));
    if (problem)
      problems.push(
        `entry-point-not-deps-input: ${key}, called by ${callersOf.get(key)}, ${problem}: an entry point takes (deps, input)`,
      );
    if (parametersDeclareActorId(fn, libFiles))
      problems.push(
        `entry-point-takes-actor-id: ${key}, called by ${callersOf.get(key)}, has an actorId in its input: a signed-in user is passed as actor: Actor | null (lib/contract/actor.ts) and the use case records actorIdOf(actor)`,
      );
  }
  for (const [file] of libFiles) {
    if (!file.startsWith("lib/pages/") || /\.test\.ts$|\/testing\//.test(file)) continue;
    for (const [name, fn] of functionsOf(file)) {
      const key = `${file}#${name}`;
      if (checked.has(key) || !PAGE_READER_NAME.test(name)) continue;
      const problem = entryPointShapeProblem(fn, true);
      if (problem) problems.push(`entry-point-not-deps-input: ${key} ${problem}: a page's reader takes (deps, input)`);
    }
  }
  return problems;
}
