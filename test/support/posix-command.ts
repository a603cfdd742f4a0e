import { createRequire } from 'node:module';

/**
 * A POSIX shell parser (mvdan/sh, the parser behind shfmt) used to check that a
 * command built from event text is what it claims: one simple command whose
 * words are literal, with no expansion, substitution, list, pipe or redirection.
 */

interface ShNode {
  [key: string]: unknown;
}
interface ShSyntax {
  NewParser(...opts: unknown[]): { Parse(src: string, name: string): ShNode };
  Variant(lang: unknown): unknown;
  LangPOSIX: unknown;
  NodeType(n: ShNode): string;
}

const { syntax } = createRequire(import.meta.url)('mvdan-sh') as { syntax: ShSyntax };

/** PLACEHOLDER matches the placeholders shellArg writes (`<pod>`): a shell reads them as redirections, so they are read as words here. */
const PLACEHOLDER = /<([a-z]+)>/g;

/**
 * simpleCommandWords parses `command` as POSIX sh and returns its words, each
 * placeholder `<pod>` read back as itself; it throws unless the command is one
 * simple command made only of literal and single- or double-quoted literal text.
 */
export function simpleCommandWords(command: string): string[] {
  const marked = command.replace(PLACEHOLDER, 'PLACEHOLDER_$1_');
  const file = syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(`${marked}\n`, 'command');
  const stmts = file.Stmts as ShNode[];
  if (stmts.length !== 1) throw new Error(`${stmts.length} statements in ${JSON.stringify(command)}`);
  const stmt = stmts[0]!;
  if (stmt.Negated || stmt.Background || stmt.Coprocess) throw new Error(`not a plain statement: ${JSON.stringify(command)}`);
  if ((stmt.Redirs as ShNode[]).length > 0) throw new Error(`a redirection in ${JSON.stringify(command)}`);
  const cmd = stmt.Cmd as ShNode;
  if (syntax.NodeType(cmd) !== 'CallExpr') throw new Error(`${syntax.NodeType(cmd)}, not a simple command: ${JSON.stringify(command)}`);
  if ((cmd.Assigns as ShNode[]).length > 0) throw new Error(`an assignment in ${JSON.stringify(command)}`);
  return (cmd.Args as ShNode[]).map((w) => literal(w.Parts as ShNode[], command).replace(/PLACEHOLDER_([a-z]+)_/g, '<$1>'));
}

function literal(parts: readonly ShNode[], command: string): string {
  let out = '';
  for (const p of parts) {
    const type = syntax.NodeType(p);
    if (type === 'Lit') out += unescapeLit(p.Value as string);
    else if (type === 'SglQuoted' && !p.Dollar) out += p.Value as string;
    else if (type === 'DblQuoted' && !p.Dollar) out += literal(p.Parts as ShNode[], command);
    else throw new Error(`${type} (an expansion or substitution) in ${JSON.stringify(command)}`);
  }
  return out;
}

/** unescapeLit reads a bare word's backslash escapes, as the shell does. */
function unescapeLit(s: string): string {
  return s.replace(/\\(.)/gs, '$1');
}
