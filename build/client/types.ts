import ts from 'typescript';
import { dirname, join } from 'node:path';

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  types: [],
  strict: true,
  skipLibCheck: true,
  allowImportingTsExtensions: true,
  declaration: true,
  emitDeclarationOnly: true,
  noEmitOnError: true,
};

const PRINT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;

const propertyName = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : `'${name}'`);

const docOf = (checker: ts.TypeChecker, symbol: ts.Symbol, indent = '') => {
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim();
  return text ? `${indent}/** ${text.split('\n').join(`\n${indent} * `)} */\n` : '';
};

/**
 * The client's types.d.ts: every type src/client/types.ts exports, written out in full (object types member by
 * member), so that it names no zod type and imports nothing. A printed type that still names a type of its own
 * module (`typeof X`, a reference) would not resolve in the package; the consumer's type-check in
 * test/client/package.test.ts reads the file without skipLibCheck and fails on it.
 */
function plainTypes(program: ts.Program, typesFile: string): string {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(typesFile);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error(`${typesFile} is not a module of the program`);
  const out = ['// Generated from src/client/types.ts by build/client/types.ts: the data types of the service, written out.', ''];
  for (const exported of checker.getExportsOfModule(module)) {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    let text: string;
    if (type.flags & ts.TypeFlags.Object && !checker.isArrayType(type)) {
      const members = checker.getPropertiesOfType(type).map((p) => {
        const optional = p.flags & ts.SymbolFlags.Optional ? '?' : '';
        return `${docOf(checker, p, '  ')}  ${propertyName(p.name)}${optional}: ${checker.typeToString(checker.getTypeOfSymbol(p), undefined, PRINT)};`;
      });
      text = `{\n${members.join('\n')}\n}`;
    } else {
      text = checker.typeToString(type, undefined, PRINT);
    }
    out.push(`${docOf(checker, exported) || docOf(checker, symbol)}export type ${exported.name} = ${text};`, '');
  }
  return out.join('\n');
}

/**
 * index.d.ts and types.d.ts of the client package. index.d.ts is TypeScript's own declaration output for the entry,
 * which must import only its types module (./types.js); types.d.ts is that module's types written out.
 */
export async function clientDeclarations(entry: string): Promise<Record<'index.d.ts' | 'types.d.ts', string>> {
  const program = ts.createProgram([entry], COMPILER_OPTIONS);
  const emitted = new Map<string, string>();
  const result = program.emit(undefined, (file, text) => emitted.set(file, text), undefined, true);
  const problems = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (problems.length > 0) throw new Error(ts.formatDiagnostics(problems, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dirname(entry), getNewLine: () => '\n' }));
  const index = emitted.get(entry.replace(/\.ts$/, '.d.ts'));
  if (!index) throw new Error(`no declarations were emitted for ${entry}`);
  const indexDts = index.replaceAll("'./types.ts'", "'./types.js'");
  const foreign = ts.preProcessFile(indexDts, true, true).importedFiles.map((f) => f.fileName).filter((spec) => spec !== './types.js');
  if (foreign.length > 0) throw new Error(`index.d.ts may import only ./types.js (plain types), but it imports ${foreign.join(', ')}`);
  return { 'index.d.ts': indexDts, 'types.d.ts': plainTypes(program, join(dirname(entry), 'types.ts')) };
}
