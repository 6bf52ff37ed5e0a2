/**
 * The descriptions of a zod schema's keys, read from the JSDoc comments in its source: the keys of
 * a `z.object({...})` literal, followed through method chains (`.strict()`, `.default()`,
 * `.extend({...})`) and through identifiers to the schemas they name, in the same file or an
 * imported one. The result maps a dotted key path (relative to the schema) to its comment.
 * Only the syntax is read (no type checking), so it is quick and needs no build.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const sources = new Map<string, ts.SourceFile>();

function sourceOf(file: string): ts.SourceFile {
  let sf = sources.get(file);
  if (!sf) {
    sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    sources.set(file, sf);
  }
  return sf;
}

/** The comment of a property, as one line of text. */
function jsDocOf(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  return docs
    .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '')
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Where an identifier used in `file` is declared: a top-level `const` there, or the one an import names. */
function resolveIdentifier(file: string, name: string): { file: string; init: ts.Expression; doc: string } | undefined {
  const sf = sourceOf(file);
  for (const stmt of sf.statements) {
    if (ts.isVariableStatement(stmt)) {
      for (const decl of stmt.declarationList.declarations) {
        if (ts.isIdentifier(decl.name) && decl.name.text === name && decl.initializer)
          return { file, init: decl.initializer, doc: jsDocOf(stmt) };
      }
    }
    if (ts.isImportDeclaration(stmt) && ts.isStringLiteral(stmt.moduleSpecifier)) {
      const spec = stmt.moduleSpecifier.text;
      const bindings = stmt.importClause?.namedBindings;
      if (!spec.startsWith('.') || !bindings || !ts.isNamedImports(bindings)) continue;
      const element = bindings.elements.find((e) => e.name.text === name);
      if (element)
        return resolveIdentifier(path.resolve(path.dirname(file), spec), (element.propertyName ?? element.name).text);
    }
  }
  return undefined;
}

/** The object literals whose keys make up the schema an expression builds. */
function objectLiterals(
  file: string,
  expr: ts.Expression,
  seen = new Set<ts.Node>(),
): { file: string; literal: ts.ObjectLiteralExpression }[] {
  if (seen.has(expr)) return [];
  seen.add(expr);
  if (ts.isParenthesizedExpression(expr) || ts.isAsExpression(expr) || ts.isSatisfiesExpression(expr))
    return objectLiterals(file, expr.expression, seen);
  if (ts.isObjectLiteralExpression(expr)) return [{ file, literal: expr }];
  if (ts.isIdentifier(expr)) {
    const found = resolveIdentifier(file, expr.text);
    return found ? objectLiterals(found.file, found.init, seen) : [];
  }
  if (ts.isCallExpression(expr) && ts.isPropertyAccessExpression(expr.expression)) {
    const method = expr.expression.name.text;
    const receiver = expr.expression.expression;
    const first = expr.arguments[0];
    // z.object({...}), z.strictObject({...}), z.looseObject({...})
    if (ts.isIdentifier(receiver) && receiver.text === 'z') {
      return first && /object$/i.test(method) ? objectLiterals(file, first, seen) : [];
    }
    const own = method === 'extend' && first && ts.isObjectLiteralExpression(first) ? [{ file, literal: first }] : [];
    return [...objectLiterals(file, receiver, seen), ...own];
  }
  return [];
}

/** Every described key of the schema `expr` (in `file`) builds, by dotted path. */
export function commentsOf(file: string, expr: ts.Expression, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const { file: at, literal } of objectLiterals(file, expr)) {
    for (const prop of literal.properties) {
      if (ts.isSpreadAssignment(prop)) {
        for (const [k, v] of commentsOf(at, prop.expression, prefix)) if (!out.has(k)) out.set(k, v);
        continue;
      }
      if (!ts.isPropertyAssignment(prop)) continue;
      const key = ts.isIdentifier(prop.name) || ts.isStringLiteral(prop.name) ? prop.name.text : undefined;
      if (!key) continue;
      const dotted = prefix ? `${prefix}.${key}` : key;
      const doc = jsDocOf(prop);
      if (doc) out.set(dotted, doc);
      for (const [k, v] of commentsOf(at, prop.initializer, dotted)) if (!out.has(k)) out.set(k, v);
    }
  }
  return out;
}

/** The identifier a schema expression starts from (`RunSchema` of `RunSchema.default({})`), if any. */
function headIdentifier(expr: ts.Expression): ts.Identifier | undefined {
  if (ts.isIdentifier(expr)) return expr;
  if (ts.isCallExpression(expr) && ts.isPropertyAccessExpression(expr.expression))
    return headIdentifier(expr.expression.expression);
  if (ts.isPropertyAccessExpression(expr)) return headIdentifier(expr.expression);
  return undefined;
}

/**
 * The comments on the declarations of the schemas a schema's keys are made of, by key: what
 * `/** How the run is carried out… *\/ const RunSchema` says, for the key `run: RunSchema…`.
 */
export function sectionComments(file: string, name: string): Map<string, string> {
  const out = new Map<string, string>();
  const found = resolveIdentifier(file, name);
  if (!found) throw new Error(`${file}: no declaration of ${name}`);
  for (const { file: at, literal } of objectLiterals(found.file, found.init)) {
    for (const prop of literal.properties) {
      if (!ts.isPropertyAssignment(prop) || !ts.isIdentifier(prop.name)) continue;
      const head = headIdentifier(prop.initializer);
      const doc = head && head.text !== 'z' ? resolveIdentifier(at, head.text)?.doc : undefined;
      if (doc) out.set(prop.name.text, doc);
    }
  }
  return out;
}

/** The descriptions of the schema declared as `const name = …` in `file`. */
export function commentsOfDeclaration(file: string, name: string): Map<string, string> {
  const found = resolveIdentifier(file, name);
  if (!found) throw new Error(`${file}: no declaration of ${name}`);
  return commentsOf(found.file, found.init);
}

/** A registration found in the source: the name it registers and the schema expression of its options. */
export interface Registration {
  name: string;
  file: string;
  schema: ts.Expression;
}

function stringProperty(literal: ts.ObjectLiteralExpression, key: string): string | undefined {
  for (const p of literal.properties) {
    if (
      ts.isPropertyAssignment(p) &&
      ts.isIdentifier(p.name) &&
      p.name.text === key &&
      ts.isStringLiteral(p.initializer)
    )
      return p.initializer.text;
  }
  return undefined;
}

/**
 * The env and backend registrations of the source files: an object literal with a `name` and an
 * `optionsSchema` (`registerEnv({ name, optionsSchema })`), or a call that passes a literal with a
 * `name` and a `defaultModel` and then the options schema (the agent backends' factories).
 */
export function registrations(files: string[]): Registration[] {
  const out: Registration[] = [];
  for (const file of files) {
    const visit = (node: ts.Node) => {
      if (ts.isObjectLiteralExpression(node)) {
        const name = stringProperty(node, 'name');
        const schema = node.properties.find(
          (p): p is ts.PropertyAssignment =>
            ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'optionsSchema',
        );
        if (name && schema) out.push({ name, file, schema: schema.initializer });
      }
      if (ts.isCallExpression(node)) {
        const [first, second] = node.arguments;
        if (first && second && ts.isObjectLiteralExpression(first) && ts.isIdentifier(second)) {
          const name = stringProperty(first, 'name');
          if (name && stringProperty(first, 'defaultModel') !== undefined) out.push({ name, file, schema: second });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sourceOf(file));
  }
  return out;
}
