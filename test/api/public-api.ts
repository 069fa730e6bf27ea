import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * The public API as text: for each entry point of the package (`faultline` and each subpath of
 * package.json `exports`), every exported name with its declaration as the TypeScript compiler sees it
 * (functions' signatures, interfaces' and classes' members, type aliases, constants' types). The
 * snapshot test compares it with the committed test/api/public-api.snapshot.txt, so a change to what
 * users import is made on purpose.
 */
const FLAGS = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;

export function entryPoints(root: string): { name: string; file: string }[] {
  const exportsMap = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).exports as Record<
    string,
    string | { default?: string }
  >;
  return Object.entries(exportsMap).flatMap(([key, target]) => {
    const file = typeof target === 'object' ? target.default : undefined;
    if (!file?.startsWith('./dist/')) return [];
    return [
      {
        name: key === '.' ? 'faultline' : `faultline/${key.slice(2)}`,
        file: join(root, file.slice('./dist/'.length).replace(/\.js$/, '.ts')),
      },
    ];
  });
}

export function describePublicApi(root: string): string {
  const entries = entryPoints(root);
  const program = ts.createProgram(
    entries.map((e) => e.file),
    {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      allowImportingTsExtensions: true,
      types: ['node'],
    },
  );
  const checker = program.getTypeChecker();
  const out: string[] = [];
  for (const entry of entries) {
    const sf = program.getSourceFile(entry.file);
    const mod = sf && checker.getSymbolAtLocation(sf);
    if (!mod) throw new Error(`${entry.file}: not a module`);
    const names = checker.getExportsOfModule(mod).sort((a, b) => a.name.localeCompare(b.name));
    out.push(`// ---- ${entry.name} (${names.length} names)`);
    for (const s of names) out.push(describe(checker, s));
    out.push('');
  }
  return out.join('\n');
}

function describe(checker: ts.TypeChecker, exported: ts.Symbol): string {
  const s = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const name = exported.name;
  const decl = s.declarations?.[0];
  const parts: string[] = [];
  if (s.flags & ts.SymbolFlags.Function && decl) {
    const type = checker.getTypeOfSymbolAtLocation(s, decl);
    for (const sig of type.getCallSignatures())
      parts.push(`function ${name}${checker.signatureToString(sig, undefined, FLAGS)};`);
  }
  if (s.flags & ts.SymbolFlags.Class && decl) {
    const type = checker.getDeclaredTypeOfSymbol(s);
    parts.push(`class ${name} {${members(checker, type, decl)} }`);
  }
  if (s.flags & ts.SymbolFlags.Interface && decl) {
    const type = checker.getDeclaredTypeOfSymbol(s);
    parts.push(`interface ${name} {${members(checker, type, decl)} }`);
  }
  if (s.flags & ts.SymbolFlags.TypeAlias)
    parts.push(
      `type ${name} = ${checker.typeToString(checker.getDeclaredTypeOfSymbol(s), undefined, FLAGS | ts.TypeFormatFlags.InTypeAlias)};`,
    );
  if (s.flags & ts.SymbolFlags.Variable && decl)
    parts.push(
      `const ${name}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(s, decl), undefined, FLAGS)};`,
    );
  if (parts.length === 0) parts.push(`${ts.SymbolFlags[s.flags] ?? s.flags} ${name};`);
  return parts.join('\n');
}

function members(checker: ts.TypeChecker, type: ts.Type, at: ts.Node): string {
  return checker
    .getPropertiesOfType(type)
    .filter((p) => !p.name.startsWith('#') && !isPrivate(p))
    .map((p) => {
      const optional = p.flags & ts.SymbolFlags.Optional ? '?' : '';
      return `\n  ${p.name}${optional}: ${checker.typeToString(checker.getTypeOfSymbolAtLocation(p, at), undefined, FLAGS)};`;
    })
    .join('');
}

function isPrivate(p: ts.Symbol): boolean {
  const mods = p.valueDeclaration ? ts.getCombinedModifierFlags(p.valueDeclaration) : 0;
  return (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0;
}
